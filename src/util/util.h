/*
 * util.h -- the base layer: small helpers that every layer above uses
 * (core, model, formats, the faces).  It includes only libc and knows
 * nothing of regions, sessions or files: one heap, one hash (and one
 * open-addressing index), one temp-file I/O helper, one JSON string
 * escaper, one UTF-8 checker (and the one table cell printer built on
 * it), one thread-local error message.
 *
 * Everything here is internal: sps__ prefix, SPS__HIDDEN.  Errors are
 * reported libc-style (-1, errno set where it says so), since this layer
 * sits below the SPS_E* codes of spanscope.h; callers turn them into codes.
 *
 * Files (one job each): array.c, heap.c, hash.c, tmpio.c, json.c, xml.c, utf8.c,
 * error.c, isolate.c.
 */
#ifndef SPS_UTIL_H
#define SPS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#if defined(__GNUC__)
#  define SPS__HIDDEN __attribute__((visibility("hidden")))
#  define SPS__LIKELY(x) __builtin_expect(!!(x), 1)
#  define SPS__UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define SPS__PRINTF(f, a) __attribute__((format(printf, f, a)))
#  define SPS__INLINE static inline __attribute__((always_inline))
#else
#  define SPS__HIDDEN
#  define SPS__LIKELY(x) (x)
#  define SPS__UNLIKELY(x) (x)
#  define SPS__PRINTF(f, a)
#  define SPS__INLINE static inline
#endif

/* ======================================================================== */
/* array.c: growing arrays                                                  */
/* ======================================================================== */

/* Makes room in *arr (elements of sz bytes, *cap of them allocated) for
 * element n: when n == *cap, doubles the capacity (16 at first).  0, or -1
 * when out of memory or the size would overflow (*arr and *cap
 * unchanged).  Call as sps__grow((void **)&v, &cap, n, sizeof *v). */
SPS__HIDDEN int sps__grow(void **arr, size_t *cap, size_t n, size_t sz);

/* A growing byte buffer: p[0..n) written, cap bytes allocated.  Zero-
 * initialise it; the owner frees p.  After a failed allocation oom is set
 * and stays set, and appends do nothing: a writer appends freely and
 * checks oom once at the end. */
typedef struct sps__bytes {
    unsigned char *p;
    size_t n, cap;
    int oom;
} sps__bytes_t;

/* Makes room for more bytes after n, plus one spare byte (so that a text
 * can be NUL-terminated at p[n]), doubling the capacity (256 at first).
 * 0, or -1 when out of memory (oom set, b otherwise unchanged). */
SPS__HIDDEN int sps__bytes_room(sps__bytes_t *b, size_t more);
/* Appends p[0..n) to b (nothing once oom is set). */
SPS__HIDDEN void sps__bytes_put(sps__bytes_t *b, const void *p, size_t n);

/* ======================================================================== */
/* heap.c: a binary min-heap of (key, index) pairs                          */
/* ======================================================================== */

/* The k-way merges of the library (the merged pass over threads, the
 * external sort's runs, the timeline merges over rows and inputs) and the
 * Perfetto writer's pending ends all pop the smallest of a few "heads".
 * The heap holds each head's 64-bit key next to its index, so most
 * comparisons touch only the heap array; equal keys go to the caller's
 * tie-breaker (when given), then to the smaller index, so the order is
 * total and the output deterministic.
 *
 * Keys compare as unsigned; sps__heap_key_i64 maps an int64 to a key of
 * the same order.  A caller whose order is not a function of one number
 * (the sort's comparator) gives every entry key 0 and decides in tie. */
typedef struct sps__heap_ent {
    uint64_t key;
    uint32_t idx;
} sps__heap_ent_t;

/* Orders two entries of equal key by their indexes: < 0 when a goes
 * first, > 0 when b does, 0 to fall back on the index order. */
typedef int (*sps__heap_tie_fn)(void *ctx, uint32_t a, uint32_t b);

typedef struct sps__heap {
    sps__heap_ent_t *v; /* owned; v[0] is the smallest */
    size_t n, cap;
    sps__heap_tie_fn tie; /* NULL: equal keys by index */
    void *ctx;            /* tie's first argument */
} sps__heap_t;

/* Starts an empty heap (no memory yet). */
SPS__HIDDEN void sps__heap_init(sps__heap_t *h, sps__heap_tie_fn tie,
                                void *ctx);
/* Makes room for cap entries in all.  0, or -1 when out of memory. */
SPS__HIDDEN int sps__heap_reserve(sps__heap_t *h, size_t cap);
/* Adds (key, idx), growing the array.  0, or -1 when out of memory (the
 * heap is unchanged). */
SPS__HIDDEN int sps__heap_push(sps__heap_t *h, uint64_t key, uint32_t idx);
/* Removes the smallest entry (the heap must not be empty). */
SPS__HIDDEN void sps__heap_pop(sps__heap_t *h);
/* Restores the order after the smallest entry's key changed (the slow
 * half of sps__heap_update_top). */
SPS__HIDDEN void sps__heap_sift_top(sps__heap_t *h);
/* Frees the array; the heap is empty and may be used again. */
SPS__HIDDEN void sps__heap_free(sps__heap_t *h);

/* Gives the smallest entry a new key (its head moved on) and restores the
 * order: the step of a k-way merge, one sift instead of a pop and a push.
 * Inline, because most steps of a merge leave the same head first (one
 * lane, or a lane whose next event is still the earliest): then it costs
 * two compares and no call.  The heap must not be empty. */
static inline void sps__heap_update_top(sps__heap_t *h, uint64_t key) {
    sps__heap_ent_t *v = h->v;
    v[0].key = key;
    if (h->n < 2 || (key < v[1].key && (h->n < 3 || key < v[2].key))) return;
    sps__heap_sift_top(h);
}

/* 1 when the smallest entry, given the new key `key`, would still be the
 * smallest (sps__heap_update_top would leave it on top): a merge may then
 * take its head's next item at once.  Equal keys under a tie function
 * count as "not sure" (0).  The heap must not be empty. */
static inline int sps__heap_keeps_top(const sps__heap_t *h, uint64_t key) {
    const sps__heap_ent_t *v = h->v;
    for (size_t i = 1; i < 3 && i < h->n; i++)
        if (key > v[i].key || (key == v[i].key && (h->tie || v[0].idx > v[i].idx)))
            return 0;
    return 1;
}

/* The smallest entry; the heap must not be empty. */
static inline sps__heap_ent_t sps__heap_top(const sps__heap_t *h) {
    return h->v[0];
}

/* A key that orders as the int64 v does. */
static inline uint64_t sps__heap_key_i64(int64_t v) {
    return (uint64_t)v ^ ((uint64_t)1 << 63);
}

/* ======================================================================== */
/* hash.c: hash functions and an open-addressing index                      */
/* ======================================================================== */

/* FNV-1a 64 over n bytes, then the splitmix64 finalizer (FNV's low bits
 * alone index a power-of-two table badly).  The one string hash. */
SPS__HIDDEN uint64_t sps__hash_bytes(const void *p, size_t n);

/* The splitmix64 finalizer: a bijection of 64-bit values whose every
 * output bit depends on every input bit.  The one integer hash. */
static inline uint64_t sps__hash_u64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A hash of the pair (a, b) (order matters). */
static inline uint64_t sps__hash_pair(uint64_t a, uint64_t b) {
    return sps__hash_u64(sps__hash_u64(a) ^ (b + 0x9E3779B97F4A7C15ull));
}

/* A hash of a pair of 32-bit values: one mix of both packed. */
static inline uint64_t sps__hash_pair32(uint32_t a, uint32_t b) {
    return sps__hash_u64((uint64_t)a << 32 | b);
}

/* An index of items that live in the caller's array: slots hold an item's
 * index and a 32-bit digest of its hash (linear probing, load at most one
 * half, a power-of-two size).  The table never looks at the items: the
 * caller probes with a hash, is shown each item whose digest matches and
 * says which is equal.  The digest also rehashes without the items.
 *
 *     sps__hprobe_t p = sps__htab_probe(&t, h);
 *     for (uint32_t i; sps__htab_next(&t, &p, &i);)
 *         if (equal(items[i], key)) return i;
 *     if (sps__htab_make_room(&t, &p)) return -1;    // no memory
 *     sps__htab_put(&t, &p, nitems);                  // where p stopped
 *     items[nitems] = key;
 *
 * An empty table (all zero) finds nothing.  Items cannot be removed. */
typedef struct sps__hslot {
    uint32_t idx1;   /* item index + 1; 0: empty */
    uint32_t digest; /* sps__htab_digest of the item's hash */
} sps__hslot_t;

typedef struct sps__htab {
    sps__hslot_t *slot; /* owned, cap entries */
    size_t cap, n;      /* slots (0 or a power of two), items */
} sps__htab_t;

/* Where a probe is: the slot to look at next, and the digest sought. */
typedef struct sps__hprobe {
    size_t i;
    uint32_t digest;
} sps__hprobe_t;

/* Makes room for n items in all (the table does not grow again before
 * it holds them).  0 or -1 (no memory; t unchanged). */
SPS__HIDDEN int sps__htab_reserve(sps__htab_t *t, size_t n);
/* The slow half of sps__htab_make_room: grows t and moves p to the empty
 * slot where its item goes in the grown table.  0 or -1. */
SPS__HIDDEN int sps__htab_grow_probe(sps__htab_t *t, sps__hprobe_t *p);
/* Frees the slots; t is empty and may be used again. */
SPS__HIDDEN void sps__htab_free(sps__htab_t *t);

/* The 32 bits of a hash that slots keep: both halves folded. */
static inline uint32_t sps__htab_digest(uint64_t h) {
    return (uint32_t)(h ^ (h >> 32));
}

/* Starts a probe for hash h. */
static inline sps__hprobe_t sps__htab_probe(const sps__htab_t *t, uint64_t h) {
    uint32_t d = sps__htab_digest(h);
    return (sps__hprobe_t){t->cap ? d & (t->cap - 1) : 0, d};
}

/* The next item whose digest matches: 1 and *idx set, or 0 when the probe
 * reached an empty slot (where sps__htab_put inserts). */
static inline int sps__htab_next(const sps__htab_t *t, sps__hprobe_t *p,
                                 uint32_t *idx) {
    if (!t->cap) return 0;
    size_t mask = t->cap - 1;
    for (;;) {
        const sps__hslot_t *s = &t->slot[p->i];
        if (!s->idx1) return 0;
        p->i = (p->i + 1) & mask;
        if (s->digest == p->digest) {
            *idx = s->idx1 - 1;
            return 1;
        }
    }
}

/* After a probe that found no equal item (sps__htab_next returned 0):
 * makes room for one more item, keeping p on the empty slot where it goes
 * (another one when the table grew).  0, or -1 when out of memory (t and
 * p unchanged, the item cannot be added). */
static inline int sps__htab_make_room(sps__htab_t *t, sps__hprobe_t *p) {
    return (t->n + 1) * 2 <= t->cap ? 0 : sps__htab_grow_probe(t, p);
}

/* Inserts item idx at the empty slot where probe p stopped (after
 * sps__htab_make_room). */
static inline void sps__htab_put(sps__htab_t *t, const sps__hprobe_t *p,
                                 uint32_t idx) {
    t->slot[p->i] = (sps__hslot_t){idx + 1, p->digest};
    t->n++;
}

/* ======================================================================== */
/* tmpio.c: temporary files and whole-buffer I/O                           */
/* ======================================================================== */

/* $TMPDIR when set and not empty, else "/tmp". */
SPS__HIDDEN const char *sps__tmpdir(void);

/* The name a file is written under before it is renamed into place:
 * "<path>.tmp-<pid><suffix>" (suffix NULL: none), malloc'd (caller
 * frees); NULL when out of memory.  One spelling for every writer (the
 * HDF5 file of a finalize, merge, convert, the HTML page, the timelines),
 * so that a leftover of a crash says what it is whoever wrote it; the pid
 * keeps two processes that write the same path apart. */
SPS__HIDDEN char *sps__tmp_name(const char *path, const char *suffix);

/* Opens a new, already unlinked read-write file in dir (NULL: sps__tmpdir())
 * that disappears with its descriptor: O_TMPFILE where the file system
 * has it, else "<dir>/<stem>XXXXXX" made by mkostemp and unlinked at once.
 * Close-on-exec.  Returns the descriptor, or -1 with errno set. */
SPS__HIDDEN int sps__tmpfile_open(const char *dir, const char *stem);

/* Writes all n bytes of buf at offset off, retrying after EINTR and short
 * writes.  0, or -1 with errno set (EIO when the file takes no more bytes
 * without saying why). */
SPS__HIDDEN int sps__pwrite_all(int fd, const void *buf, size_t n, off_t off);

/* Writes all n bytes of buf at the file position (pipes, sockets and
 * files opened for appending), retrying as sps__pwrite_all does.  0 or -1
 * with errno set. */
SPS__HIDDEN int sps__write_all(int fd, const void *buf, size_t n);

/* The one stream every text output is written through (the Chrome trace,
 * the exports, the HTML page): creates path (O_WRONLY | O_CREAT | O_TRUNC,
 * close-on-exec, mode 0666 less the umask) and returns a fully buffered
 * FILE (64 KiB) whose bytes reach the file through write(2) by
 * sps__write_all (glibc's own stdio calls an internal write that neither
 * an LD_PRELOAD fault shim nor a wrapper sees), so that a failing write
 * notes its errno (sps__err_os_note) at the call that failed, before any
 * later call can change errno.  fclose flushes, then (sync != 0) fsyncs
 * (EINVAL and EROFS, a file that cannot be synced, are not failures) and
 * closes the descriptor, noting the errno of whichever failed; it returns
 * EOF then.  The caller owns the FILE and closes it with fclose.  NULL
 * with errno set (and noted) when the file cannot be created or memory is
 * short. */
SPS__HIDDEN FILE *sps__out_open(const char *path, int sync);

/* Reads n bytes at offset off into buf, retrying after EINTR and short
 * reads.  Returns how many bytes it read: n, or less only where the file
 * ends; -1 with errno set on an error. */
SPS__HIDDEN ssize_t sps__pread_full(int fd, void *buf, size_t n, off_t off);

/* ======================================================================== */
/* xml.c: the XML text escaper                                              */
/* ======================================================================== */

/* Writes the NUL-terminated s to fp with XML's special characters as
 * entities (& < > " '), so that it is safe as text and in attribute
 * values, in XML (SVG) and in HTML; control characters but tab, newline
 * and carriage return (C0, DEL, C1) and every byte that starts no valid
 * UTF-8 sequence become U+FFFD, so the output is valid UTF-8 and valid
 * XML 1.0 whatever s holds.  0, or -1 when writing fp failed. */
SPS__HIDDEN int sps__xml_fputs(FILE *fp, const char *s);

/* ======================================================================== */
/* json.c: the JSON string escaper                                          */
/* ======================================================================== */

/* Receives escaped text in pieces (n > 0 bytes at p, not terminated). */
typedef void (*sps__json_sink_fn)(void *ctx, const char *p, size_t n);

/* Flags of the escaper (or-ed; 0 for plain JSON). */
enum {
    /* also '<' as \u003c, for JSON text that stands inside an HTML
     * <script> element (the HTML page's data): the HTML parser ends the
     * element at "</script" and changes state at "<!--", both of which
     * need a '<', so text without one cannot end or alter it, whatever the
     * names hold; JSON.parse gives the '<' back.  Only '<' is needed: the
     * script's contents are not HTML, so '&' and '>' stay as they are. */
    SPS__JSON_IN_SCRIPT = 1u
};

/* Writes the n bytes at s (any bytes) as the contents of a JSON string
 * (no quotes) to put: '"' and '\\' escaped with a backslash, control
 * characters (C0 U+0000..U+001F, DEL, C1 U+0080..U+009F) as \u00XX, U+2028 and U+2029 (line
 * ends in JavaScript, not in JSON) as \u2028 and \u2029, other valid
 * UTF-8 copied, and
 * every byte that does not start a valid UTF-8 sequence (overlong forms,
 * surrogates, code points above U+10FFFF, truncated sequences) as \ufffd;
 * with SPS__JSON_IN_SCRIPT in flags, '<' as \u003c too.  The result is
 * valid JSON and pure UTF-8 whatever the input.  Plain runs go to put
 * whole. */
SPS__HIDDEN void sps__json_escape(const char *s, size_t n, unsigned flags,
                                  sps__json_sink_fn put, void *ctx);

/* The NUL-terminated s as a quoted JSON string (flags 0), malloc'd
 * (caller frees); *len (when not NULL) gets its length.  NULL when out of
 * memory. */
SPS__HIDDEN char *sps__json_quote(const char *s, size_t *len);

/* Writes the NUL-terminated s escaped by flags (no quotes) to fp.  0, or
 * -1 when fp is in error. */
SPS__HIDDEN int sps__json_fputs(FILE *fp, const char *s, unsigned flags);

/* ======================================================================== */
/* utf8.c: UTF-8                                                            */
/* ======================================================================== */

/* The length of the valid UTF-8 sequence at s (n > 0 bytes left), or 0 if
 * the bytes there are not one: overlong forms, surrogates, code points
 * above U+10FFFF and truncated sequences are invalid.  The one UTF-8 check
 * of the library. */
SPS__HIDDEN size_t sps__utf8_len(const unsigned char *s, size_t n);
/* 1 when the n bytes at s are valid UTF-8 without NUL bytes, else 0. */
SPS__HIDDEN int sps__utf8_valid(const void *s, size_t n);
/* A malloc'd, NUL-terminated copy of s[0..len) in which every byte that
 * does not start a valid UTF-8 sequence becomes U+FFFD.  NULL on ENOMEM. */
SPS__HIDDEN char *sps__utf8_sanitize(const char *s, size_t len);
/* Display columns of the NUL-terminated UTF-8 string s: one per code point
 * (every byte that is not a continuation byte). */
SPS__HIDDEN size_t sps__utf8_width(const char *s);
/* Bytes of the first cols code points of s (all of s when it has fewer):
 * a cut that never splits a sequence. */
SPS__HIDDEN size_t sps__utf8_prefix(const char *s, size_t cols);
/* Where to cut s to at most n bytes without splitting a sequence: n when
 * s[n] starts one (or is the NUL), else the start of the sequence s[n]
 * continues (backing over continuation bytes).  s[0..n] must be
 * readable.  For byte limits (a region name's, a message buffer's). */
SPS__HIDDEN size_t sps__utf8_cut(const char *s, size_t n);
/* Prints the NUL-terminated UTF-8 string s to fp as one cell of a text
 * table, exactly width columns wide (width <= INT_MAX): indent spaces
 * (cut to width), then s, cut when it is wider than the room left and
 * ending in "..." (fewer dots when the room is under 4 columns; the cut
 * never falls inside a UTF-8 sequence), then spaces to width.  What a
 * terminal could act on -- C0 controls, DEL, C1 controls (U+0080..U+009F)
 * -- is printed as '?' (one column, as it was counted); other bytes are
 * copied, but s is first repaired as sps__utf8_sanitize repairs it
 * (every byte that starts no valid sequence as U+FFFD) when it is not
 * valid UTF-8.  Columns are counted as sps__utf8_width counts them.  The one
 * name column of the summary table, the per-rank view and the comparison
 * of two recordings, so that all three cut and clean names alike. */
SPS__HIDDEN void sps__utf8_put_cell(FILE *fp, size_t indent, const char *s,
                                    size_t width);
/* Prints the NUL-terminated s to fp as text a terminal only shows, by
 * sps__utf8_put_cell's rule (C0, DEL and C1 controls as '?', bytes that
 * are not UTF-8 as U+FFFD), without padding: cut to max_cols columns
 * ending in "..." when wider (max_cols 0: never cut).  For names and
 * values from a file printed outside a table's name column (metadata,
 * thread and process names, counter names). */
SPS__HIDDEN void sps__utf8_put_text(FILE *fp, const char *s, size_t max_cols);

/* ======================================================================== */
/* error.c: the library's one error message                                 */
/* ======================================================================== */

/* One thread-local, one-line message says why the last failing internal
 * call of this thread failed: readers and writers set it (naming the file
 * and what is wrong), the faces (CLI, Python, sps_report) read it after a
 * negative code.  Each set replaces the message; nothing appends.  A
 * caller that wants a clean slate (an open starting over) clears it. */

/* Sets the message (printf format; newlines become spaces; cut to 511
 * bytes).  Arguments may point into the current message. */
SPS__HIDDEN void sps__err_set(const char *fmt, ...) SPS__PRINTF(1, 2);
/* sps__err_set, then returns code (for "return sps__err_fail(...)"). */
SPS__HIDDEN int sps__err_fail(int code, const char *fmt, ...) SPS__PRINTF(2, 3);
/* Empties the message. */
SPS__HIDDEN void sps__err_clear(void);
/* The message: this thread's, static storage, "" when none.  Valid until
 * this thread's next set or clear. */
SPS__HIDDEN const char *sps__err_msg(void);
/* For the public functions that hand the reason to their caller in a
 * buffer (sps_report, sps_metadata_read): when code is not 0 and buf is
 * not NULL with cap > 0, copies the message into buf (cut to cap - 1
 * bytes, never inside a UTF-8 sequence, NUL-terminated); buf is left
 * alone otherwise.  Returns code (for "return sps__err_copy(rc, ...)"). */
SPS__HIDDEN int sps__err_copy(int code, char *buf, size_t cap);

/* The cause beside the message: a failed write, open, rename or sync
 * notes the operating system's errno (sps__err_os_note, where the call
 * failed: errno is gone a few calls later); sps__err_clear forgets it;
 * the faces read it with sps_last_errno (spanscope.h), so that Python's
 * OSError says ENOSPC, not EIO.  The last note wins; a value <= 0 is
 * ignored. */
SPS__HIDDEN void sps__err_os_note(int os_errno);
/* The errno noted last in this thread since the last clear, or 0. */
SPS__HIDDEN int sps__err_os(void);
/* When an errno is noted: sets the message to its strerror, lower-case,
 * and what was being done to which file ("no space left on device
 * (writing /data/out.h5)"); else leaves the message alone.  Returns code
 * (for "return sps__err_os_fail(rc, "writing", path)"). */
SPS__HIDDEN int sps__err_os_fail(int code, const char *doing, const char *path);
/* The words of that message for os_errno > 0 into buf (cap > 0, cut, NUL
 * terminated): "no space left on device (writing /data/out.h5)" (path
 * NULL: "a file").  For a cause kept beside the thread's message (the
 * spill writer's).  Returns buf. */
SPS__HIDDEN char *sps__os_cause(char *buf, size_t cap, int os_errno, const char *doing,
                                const char *path);


/* ======================================================================== */
/* isolate.c: work that may crash, in a child process                       */
/* ======================================================================== */

/* sps__isolated's result for a child that a signal ended: this plus the
 * signal's number (SIGALRM: it ran past its time limit). */
#define SPS__ISOLATED_SIGNAL 256

/* Runs fn(arg) in a forked child process and waits for it: the child
 * ends with fn's return value (0..255) as its exit status, through
 * _exit (no atexit handlers, no stdio flush).  In the child, timeout_s > 0
 * arms alarm(timeout_s) and mem_limit > 0 caps its address space at its
 * size at the fork plus mem_limit bytes (so an absurd allocation fails
 * instead of exhausting the machine); crash signals have their default
 * action (no handler of the caller's runs there) and no core is dumped;
 * the child dies with the caller (Linux).
 *
 * Only the calling thread exists in the child: fn must not wait for
 * locks another thread of the caller may hold (the library calls it
 * around code that only reads a file).  Memory the child writes is its
 * own: fn hands results back only through its exit status (or files).
 *
 * Returns the child's exit status (0..255), SPS__ISOLATED_SIGNAL + the
 * signal that ended it, or -1 with errno set when fork or waitpid failed. */
/* Set by sps__isolated around its fork(), in the forking thread: the fork
 * handlers of the layers above (a forked child's own session) leave the
 * library's own children alone. */
SPS__HIDDEN extern __thread int sps__internal_fork;
SPS__HIDDEN int sps__isolated(int (*fn)(void *), void *arg, unsigned timeout_s,
                              size_t mem_limit);

/* Native code names (symbols.c; not for signal handlers).  Names the
 * native code address a: the function's name (demangled) into
 * func[0..fcap), the path of its object into obj[0..ocap) (either buffer
 * may be NULL with cap 0), and *off (off may be NULL) the offset of a from
 * its object's load bias.  exact: a is a function's entry (the instrument
 * hooks' case); else any address inside one (a sample's).  Unnamed: func
 * is "object+0xoff" ("0xaddr" outside every object) and it returns 0; 1
 * when a symbol named it.  Thread-safe; reads an object's symbol table
 * once and keeps it. */
SPS__HIDDEN int sps__sym_name(uintptr_t a, int exact, char *func, size_t fcap, char *obj,
                              size_t ocap, uintptr_t *off);
/* The source file and line of the native code address a, from its
 * object's DWARF (libdw, loaded at the first call; symbols.c): 0, or -1
 * when unknown (no libdw, no -g), then file "" and *line 0.  Thread-safe;
 * not for signal handlers. */
SPS__HIDDEN int sps__sym_line(uintptr_t a, char *file, size_t fcap, int64_t *line);

#endif /* SPS_UTIL_H */
