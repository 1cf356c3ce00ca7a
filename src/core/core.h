/*
 * core.h -- the core layer's internal interface (src/core/): clock,
 * records, per-thread buffers, the region registry, the session's
 * lifecycle and snapshots, counters, native stacks and steps.
 *
 * Nothing here is public.  Every non-static symbol is prefixed sps__ and
 * marked SPS__HIDDEN (like Lua's LUAI_FUNC) so it does not leak from the .so.
 * Core uses only util (src/util/util.h) and libc: what a recording means
 * is the model's (src/model/model.h), which core never calls by name; where
 * it hands work up it holds function pointers the layers above fill in
 * (sps__agg_ops, sps__reset_fn, sps__snap_merge_fn).  docs/design.md,
 * "Layers".
 */
#ifndef SPS_CORE_H
#define SPS_CORE_H

#include "spanscope.h"
#include "util/util.h" /* the base layer: SPS__HIDDEN, heap, hash, ... */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Types of the layers above that core stores but never looks into: a
 * snapshot carries the model's statistics (model.h defines them). */
typedef struct sps__acc sps__acc_t;

/* ======================================================================== */
/* core: clock (src/core/clock.c)                                            */
/* ======================================================================== */

/* Raw timestamps ("ticks") come from rdtsc where the TSC is invariant, else
 * from CLOCK_MONOTONIC (then ticks are ns).  They are converted to
 * CLOCK_MONOTONIC ns only when read back, through anchors: pairs (ticks, ns)
 * taken at setup, now and then while recording, and at every query. */
typedef struct sps__anchor {
    uint64_t ticks;
    int64_t ns;
} sps__anchor_t;

SPS__HIDDEN extern int sps__use_tsc; /* read on the hot path */

static inline uint64_t sps__ticks(void);
SPS__HIDDEN uint64_t sps__mono_ns(void);

/* Once per process: picks the counter (env SPANSCOPE_CLOCK=tsc|monotonic
 * overrides) and measures its rate. */
SPS__HIDDEN void sps__clock_init(void);
/* A fresh anchor (best of a few reads). */
SPS__HIDDEN sps__anchor_t sps__anchor_now(void);

/* Piecewise-linear map ticks -> ns over a growing array of anchors. */
typedef struct sps__timemap {
    sps__anchor_t *a;
    double *k;      /* k[i]: ns per tick from anchor i to i+1 */
    uint64_t *q;    /* q[i]: k[i] in units of 2^-SPS__TM_FRAC ns per tick: the
                       readers convert every record with it, and an integer
                       multiply is a third of the latency of the double
                       conversions (finalize's hottest instructions) */
    size_t n, cap;
} sps__timemap_t;
#define SPS__TM_FRAC 48 /* error <= ticks * 2^-49 ns: 0.3 ns over a day */
SPS__HIDDEN int sps__timemap_add(sps__timemap_t *m, sps__anchor_t a);
/* Under the lock, just after an anchor was added to sps__g.tm: what every
 * thread of the session retired so far lies before it, so the background
 * analysis may read it (bg_ready_seq; buffer.c). */
SPS__HIDDEN void sps__retired_before_anchor(void);
SPS__HIDDEN int64_t sps__timemap_ns(const sps__timemap_t *m, uint64_t ticks);
SPS__HIDDEN int64_t sps__timemap_ns_search(const sps__timemap_t *m,
                                           uint64_t ticks, size_t *hint);
/* A reader's place in a timemap, for ticks read in increasing order: the
 * segment of the last conversion, kept as the reader's own (lo, span, ns0,
 * q), so that a record costs a compare, a multiply and an add (the readers
 * convert every record, and finalize's speed is theirs).  Zero it to start;
 * sps__tmcur_ns converts with map m (NULL: records hold ns), exactly as
 * sps__timemap_ns does, to the bit. */
typedef struct sps__tmcur {
    uint64_t lo, span; /* ticks in [lo, lo + span) are in the segment */
    uint64_t q;        /* its slope, as timemap_t's q */
    int64_t ns0;       /* ns at lo */
    size_t hint;       /* its anchor's index */
} sps__tmcur_t;
SPS__HIDDEN int64_t sps__tmcur_ns_slow(sps__tmcur_t *c, const sps__timemap_t *m,
                                       uint64_t ticks);
static inline int64_t sps__tmcur_ns(sps__tmcur_t *c, const sps__timemap_t *m,
                                    uint64_t ticks) {
    uint64_t d = ticks - c->lo; /* below lo: wraps, beyond any span */
    if (SPS__LIKELY(d < c->span)) {
        unsigned __int128 p = (unsigned __int128)d * c->q;
        return c->ns0 +
               (int64_t)((p + ((unsigned __int128)1 << (SPS__TM_FRAC - 1))) >> SPS__TM_FRAC);
    }
    return sps__tmcur_ns_slow(c, m, ticks);
}
/* ns per tick near the last anchor (1.0 with the monotonic clock). */
SPS__HIDDEN double sps__timemap_scale(const sps__timemap_t *m);
SPS__HIDDEN void sps__timemap_free(sps__timemap_t *m);

#if defined(__x86_64__) || defined(__i386__)
#  include <x86intrin.h>
static inline uint64_t sps__ticks(void) {
    if (SPS__LIKELY(sps__use_tsc)) return __rdtsc();
    return sps__mono_ns();
}
#else
static inline uint64_t sps__ticks(void) { return sps__mono_ns(); }
#endif

/* ======================================================================== */
/* core: records                                                             */
/* ======================================================================== */

/* One 8-byte record per sps_begin / sps_end:
 *   bits 63..33  region id (31 bits)
 *   bit  32      1 = end, 0 = begin
 *   bits 31..0   low 32 bits of the timestamp
 * A HI record (upper half all ones) carries the upper 32 bits of the
 * timestamp in its low half; every chunk starts with one and the hot path
 * writes one whenever the upper half changes. */
#define SPS__REC_HI_TAG 0xFFFFFFFFu
#define SPS__REGION_MAX 0x7FFFFFFEu

static inline uint64_t sps__rec_hi(uint32_t hi) {
    return ((uint64_t)SPS__REC_HI_TAG << 32) | hi;
}

/* A value group (sps_config_t.track) is written before the record it
 * belongs to: a marker word, upper half SPS__REC_VAL_TAG and the number n
 * of values in the lower half, then n raw 64-bit words, then the begin or
 * end record; the hot path publishes all of them with the record's one
 * release store, so a reader never sees a group without its record.
 * Values are cumulative counts below 2^63 (never a word whose upper half
 * is a tag). */
#define SPS__REC_VAL_TAG 0xFFFFFFFEu
#define SPS__VAL_MAX 24u /* values per record: 5 memory + 19 counters */

/* ======================================================================== */
/* core: values per span (src/core/values.c)                                 */
/* ======================================================================== */

/* The calling thread's memory counters (sps_mem_alloc / sps_mem_free). */
typedef struct sps__memtls {
    uint64_t alloc_bytes, free_bytes, allocs, frees;
    int64_t live;          /* allocated minus freed on this thread */
    int64_t peak;          /* highest live since the last reading */
    int64_t live_at_read;  /* live at the last reading */
    int dirty;             /* changed since the last reading */
} sps__memtls_t;
SPS__HIDDEN extern __thread sps__memtls_t sps__mem_tls
    __attribute__((tls_model("initial-exec")));
/* The memory values in the order sps__mem_read writes them. */
enum { SPS__MEM_ALLOC_BYTES, SPS__MEM_FREE_BYTES, SPS__MEM_ALLOCS, SPS__MEM_FREES,
       SPS__MEM_EXCESS, SPS__MEM_NVALS };
/* Writes the calling thread's SPS__MEM_NVALS memory values (cumulative,
 * but the last: the rise of live bytes since the last reading) and starts
 * a new segment for the peak (and clears dirty). */
SPS__HIDDEN void sps__mem_read(uint64_t *out);
/* Memory without counters or stacks (values.c, "delta groups"): the state
 * stays SPS__EVENTS, so a record costs what it costs without memory, and
 * a value group is written only where the readings changed: an
 * allocation marks the thread dirty and lowers its end (t->mem_low), so
 * that its next record takes the out-of-line path, which writes the
 * group (sps__mem_record, without the lock); the slow path writes one
 * with every record it handles, so every chunk starts with one.  Readers
 * carry the last group forward (model/stream.c). */
SPS__HIDDEN extern int sps__mem_delta;
struct sps__thr;
/* The out-of-line path of a record of a dirty thread: 1 when it wrote the
 * group and the record (and raised the thread's end again), 0 when the
 * slow path must (no room, a new timestamp half, the session moved on). */
SPS__HIDDEN int sps__mem_record(struct sps__thr *t, uint32_t payload, uint64_t now);
/* The slow path wrote a record (with a group): raises t's end again, and
 * lowers it anew if the library allocated meanwhile.  Under the lock. */
SPS__HIDDEN void sps__mem_slow_done(struct sps__thr *t);
/* The session's values per record for cfg.track (session setup, under the
 * lock): the memory values, then the counters'.  0 when track is 0. */
SPS__HIDDEN uint32_t sps__values_open(int track);
SPS__HIDDEN void sps__values_close(void);
/* On the recording thread: writes the session's sps__g.nvals values. */
SPS__HIDDEN void sps__values_read(uint64_t *out);
/* The name of value i of the session ("alloc_bytes", ..., a counter's
 * name), NULL past the last; valid until the session ends. */
SPS__HIDDEN const char *sps__values_name(uint32_t i);
/* SPS__VAL_SUM: a cumulative count (a span's own value is end minus
 * begin); SPS__VAL_EXCESS: the rise of live bytes since the previous
 * record (the model makes each span's peak from it, model/values.c). */
enum { SPS__VAL_SUM = 0, SPS__VAL_EXCESS = 1 };
SPS__HIDDEN int sps__values_kind(uint32_t i);
/* The perf_event counters (src/core/perfev.c, perfev.h): the number of
 * values the session reads (the sps_set_counters choice, frozen), their
 * names, the calling thread's cumulative counts, the session's end. */
SPS__HIDDEN uint32_t sps__perf_session_open(void);
SPS__HIDDEN const char *sps__perf_name(uint32_t i);
SPS__HIDDEN void sps__perf_read(uint64_t *out);
SPS__HIDDEN void sps__perf_session_close(void);
/* The session's fork handlers call these, after taking the session lock
 * (one lock order): perfev.c's lock held across fork, the child's events
 * reopened at its first read. */
SPS__HIDDEN void sps__perf_atfork_prepare(void);
SPS__HIDDEN void sps__perf_atfork_parent(void);
SPS__HIDDEN void sps__perf_atfork_child(void);

/* ======================================================================== */
/* core: the spill file's record format (src/core/pack.c)                    */
/* ======================================================================== */

/* A spilled chunk is a header and frames of SPS__PACK_FRAME records, each
 * packed (about 1/3 byte per record for a regular loop) or, where packing
 * would not be smaller, raw.  Any stream of 64-bit words round-trips
 * exactly; the worst case is 8 bytes per record + 4 per frame + the header.
 * The layout is described at the top of pack.c. */
#define SPS__PACK_FRAME 2048u /* records per frame: the reader's block */
#define SPS__PACK_GROUP 32u   /* records per group inside a frame */
#define SPS__PACK_HDR 24u     /* bytes of a chunk header */
#define SPS__PACK_HDR_NEXT 16u /* offset of its next field */
#define SPS__PACK_SLACK 512u  /* scratch past a frame's raw size */
#define SPS__PACK_MAGIC 0x314B5053u /* "SPK1" */

/* A chunk header.  next: file offset of the next chunk of the same run of
 * spilled chunks (buffer.c merges a thread's consecutive spilled chunks
 * into one descriptor), 0 when it follows right after this one. */
typedef struct sps__pack_hdr {
    uint32_t magic, n, bytes; /* n records; bytes of frames after the header */
    uint32_t flags;           /* 0 */
    int64_t next;
} sps__pack_hdr_t;

/* Most bytes sps__pack writes for n records. */
SPS__HIDDEN size_t sps__pack_bound(uint32_t n);
/* Packs rec[0, n) (n > 0) into out (sps__pack_bound(n) bytes of room):
 * header (next = 0) and frames.  Returns the bytes written.  Pure: no
 * state, any thread. */
SPS__HIDDEN size_t sps__pack(const uint64_t *rec, uint32_t n, uint8_t *out);
/* Writes h at out (SPS__PACK_HDR bytes); reads it back and checks it
 * (0 or SPS_EIO). */
SPS__HIDDEN void sps__pack_hdr_put(uint8_t *out, const sps__pack_hdr_t *h);
SPS__HIDDEN int sps__pack_hdr_get(const uint8_t *in, sps__pack_hdr_t *h);
/* The bytes of the frame at in (its header included), from its header;
 * decodes the frame at in (avail bytes readable) holding m records
 * (1..SPS__PACK_FRAME) into out[0, m); *used: the frame's bytes.  0, or
 * SPS_EIO if it is malformed or truncated (never reads past avail). */
SPS__HIDDEN size_t sps__pack_frame_bytes(const uint8_t *in); /* 4 readable */
SPS__HIDDEN int sps__unpack_frame(const uint8_t *in, size_t avail, uint32_t m,
                                  uint64_t *out, size_t *used);
/* Decodes a whole chunk of n records (header included, len bytes) into
 * out[0, n).  0 or SPS_EIO. */
SPS__HIDDEN int sps__unpack(const uint8_t *in, size_t len, uint64_t *out, uint32_t n);

/* ======================================================================== */
/* core: chunks and threads (src/core/buffer.c)                              */
/* ======================================================================== */

struct sps__thr;

/* Where a retired chunk is with the spill writer (spill.c). */
enum { SPS__CH_IDLE = 0, SPS__CH_QUEUED, SPS__CH_BUSY };

/* A chunk descriptor.  Its records live in memory (rec != NULL) or in the
 * spill file from file_off: a run of packed chunks (pack.c), since the
 * writer merges a thread's consecutive spilled chunks into one descriptor
 * (so n may exceed cap there). */
typedef struct sps__chunk {
    struct sps__chunk *next; /* thread's retired list, or a free list */
    uint64_t *rec;           /* chunk memory, or NULL when spilled */
    int64_t file_off;        /* spill file offset, -1 when in memory */
    uint32_t n;              /* records written (set when retired) */
    uint32_t cap;            /* records the memory holds */
    uint32_t consumed;       /* records [0, consumed) already written out */
    uint64_t seq0;           /* per-thread sequence number of rec[0] */
    /* the spill writer's, under the session lock (spill.c) */
    struct sps__thr *thr;    /* the thread whose retired list holds it; NULL
                                once a snapshot took it (or in the pool) */
    struct sps__chunk *qprev, *qnext; /* the spill queue */
    int64_t last_off;        /* spilled: header offset of the run's last chunk */
    int64_t file_end;        /* spilled: one past the run's last chunk */
    uint8_t spill;           /* SPS__CH_* */
    uint8_t release_pending; /* released while BUSY: the writer releases it */
    uint8_t mapped;          /* rec is an mmap'd region (crash.c), not malloc's */
    int64_t live_off;        /* crash safety: rec maps this offset of the live
                                chunks file (crash.c); -1: private memory */
    uint64_t live_gen;       /* the crash generation of that mapping */
} sps__chunk_t;

/* A frame: one open call on a lane's stack (the fold, model/fold.c).  Times
 * are in the stream's unit: ticks while the core analyzes live records, ns
 * once decoded. */
typedef struct sps__frame {
    uint32_t region;
    int32_t node;        /* call-tree node (model), -1 if none */
    uint64_t start;      /* ns (ticks on an aggregate-mode thread's stack) */
    uint64_t child;      /* time spent in direct children, same unit */
    uint64_t seq;        /* record sequence number of the begin (interval
                            streams: the caller's key of the span) */
    int64_t id;          /* merged pass: call id, -1 if not written */
    uint64_t ord;        /* merged pass: ordinal within its region */
    uint64_t end;        /* interval streams: the span's end; else 0 */
    uint64_t prior;      /* merged pass: of child, the time spent in children
                            written with earlier periods (a call carried
                            across a checkpoint); else 0 */
} sps__frame_t;

/* A stack of frames (core/frames.c: a plain container). */
typedef struct sps__stack {
    sps__frame_t *f;
    size_t n, cap;
} sps__stack_t;
/* Room for one more frame (the slow path of sps__stack_push, which takes
 * no frame: a frame passed by value to a function of its own is built on
 * the stack and read back 16 bytes at a time before its 8-byte stores
 * have landed, a store-forwarding stall on every push); 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__stack_grow(sps__stack_t *s);
/* Appends f; 0 or SPS_ENOMEM (s unchanged). */
static inline int sps__stack_push(sps__stack_t *s, sps__frame_t f) {
    if (s->n == s->cap && sps__stack_grow(s)) return SPS_ENOMEM;
    s->f[s->n++] = f;
    return 0;
}
SPS__HIDDEN void sps__stack_free(sps__stack_t *s);
/* Makes dst a copy of src (dst's memory reused); 0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__stack_copy(sps__stack_t *dst, const sps__stack_t *src);

/* Per-thread state.  pos/end/hi are the hot fields. */
typedef struct sps__thr {
    _Atomic(uint64_t *) pos; /* next free record in cur */
    _Atomic(uint64_t *) end; /* one past the last usable record (atomic:
                                a session's end lowers it from another
                                thread to send the owner to the slow path) */
    uint32_t hi;             /* upper timestamp half last written */
    uint32_t index;          /* 0, 1, ... in order of first use */
    uint64_t epoch;          /* session epoch this state belongs to */
    sps__chunk_t *cur;       /* chunk being written */
    sps__chunk_t *head, *tail; /* retired chunks, oldest first */
    uint64_t dropped;        /* events dropped under SPS_OVERFLOW_DROP */
    int dropping;
    int exited;
    uint64_t seq_next;       /* while dropping: sequence number of the next
                                record (numbering never restarts in a
                                session; stacks and carried calls use it) */
    pid_t tid;
    char name[32];
    int64_t first_ns, last_ns; /* first/last use, CLOCK_MONOTONIC ns */
    /* aggregate mode (owner thread writes, readers use relaxed loads) */
    void *agg_acc;           /* the model's accumulators (model/aggregate.c) */
    size_t agg_bytes;        /* allocated, zero-filled */
    uint32_t agg_seq;        /* seqlock over agg_acc: odd while updating */
    sps__stack_t agg_stack;  /* open calls (ticks) */
    /* analyzer cursor (under the session lock): records [0, an_pos) of
     * an_chunk are analyzed, and every chunk before it */
    sps__chunk_t *an_chunk;
    uint32_t an_pos;
    /* the timestamp's upper half at the cursor, valid while the record
     * there is sequence number an_hi_seq (the analyzer then resumes at the
     * cursor instead of walking the chunk from its first record) */
    uint32_t an_hi;
    uint64_t an_hi_seq;
    /* an_chunk spilled: when an_off >= 0, the file offset of the packed
     * chunk at which its record an_off_pos (<= an_pos) starts, so that a
     * run the writer keeps extending is not walked from its start for each
     * background step (spill.c keeps it; -1: from an_chunk->file_off) */
    int64_t an_off;
    uint32_t an_off_pos;
    /* cur's write position just before the anchor of the analysis now
     * under way (model/analyze.c): the analysis stops there, so that every
     * record it converts lies before an anchor and converts as the merged
     * pass will convert it */
    uint64_t *an_mark;
    /* the end of cur's records, and the end a dirty memory reading
     * lowered t->end to (values.c: raised again by compare-and-swap, so
     * that a session's end lowering it meanwhile is never undone) */
    uint64_t *true_end, *mem_low;
    /* sequence number past the last retired chunk, and its value when the
     * session's last anchor was added (sps__retired_before_anchor): the
     * background analysis reads records before bg_ready_seq only (they
     * convert as finalize will convert them) */
    uint64_t retired_seq, bg_ready_seq;
    /* by region id (index 0: any region) and by tree node, whether this
     * thread ran it in the period (bit 0) and in the session (bit 1): the
     * tables' "% session" is over the threads that ran a row (model/analyze.c) */
    uint8_t *an_seen, *an_seen_node;
    uint32_t an_seen_cap, an_seen_node_cap;
    sps__stack_t stack;      /* open calls as of the analyzer cursor */
    sps__stack_t carried;    /* open calls at the last finalize */
    sps__chunk_t *spill_run; /* the last spilled descriptor of the retired
                                list, which the writer may extend (spill.c) */
    struct sps__thr *next_all;
} sps__thr_t;

/* ======================================================================== */
/* core: registry (src/core/registry.c)                                      */
/* ======================================================================== */

/* Process-wide name interning.  Ids start at 1; 0 is SPS_REGION_INVALID. */
SPS__HIDDEN sps_region_t sps__registry_intern(const char *name);
SPS__HIDDEN uint32_t sps__registry_count(void); /* ids are 1..count-1... */
/* Display name (valid UTF-8, never NULL for ids < count; "(invalid)" for 0). */
SPS__HIDDEN const char *sps__registry_name(sps_region_t r);

/* core: region attributes of the session (src/core/region_info.c): a
 * finalize's copy of what sps_region_set_source / _tags / _event_metadata
 * set for one region.  Strings are malloc'd copies (NULL: not set); line
 * is -1 when unknown; md is the JSON list of md_calls per-call metadata
 * dicts, md_gen its number (0: none). */
typedef struct sps__rinfo {
    char *file, *text, *tags, *md;
    int64_t line;
    uint64_t md_calls, md_gen;
} sps__rinfo_t;
/* Fills *out with copies of r's attributes (an unknown r: none).  0 or
 * SPS_ENOMEM (then *out holds none). */
SPS__HIDDEN int sps__rinfo_copy(sps_region_t r, sps__rinfo_t *out);
/* Frees the copies and empties *i. */
SPS__HIDDEN void sps__rinfo_free(sps__rinfo_t *i);
/* After a file holding r's metadata blob md_gen was written: that blob is
 * consumed (unless a newer one was set meanwhile). */
SPS__HIDDEN void sps__rinfo_written(sps_region_t r, uint64_t md_gen);
/* Forgets every attribute (sps_setup: a new session). */
SPS__HIDDEN void sps__rinfo_reset(void);

/* core: the session's task table (src/core/tasks.c).  copy: a deep copy
 * of what sps_tasks_set last set (*out NULL when none), freed with
 * sps__tasks_free; 0 or SPS_ENOMEM (then *n is 0).  reset: forget it
 * (a new session). */
SPS__HIDDEN int sps__tasks_copy(sps_task_t **out, size_t *n);
SPS__HIDDEN void sps__tasks_free(sps_task_t *t, size_t n);
SPS__HIDDEN void sps__tasks_reset(void);
/* A copy of the steps sps_task_steps_set last set (*out NULL when none),
 * freed with free(); 0 or SPS_ENOMEM (then *n is 0). */
SPS__HIDDEN int sps__task_steps_copy(sps_task_step_t **out, size_t *n);

/* core: the /metadata strings a binding added (src/core/run_meta.c).
 * copy: deep copies of the n keys and values (NULL when none), freed with
 * sps__meta_free; 0 or SPS_ENOMEM (then none).  reset: forget them. */
SPS__HIDDEN int sps__meta_copy(char ***keys, char ***values, size_t *n);
SPS__HIDDEN void sps__meta_free(char **keys, char **values, size_t n);
SPS__HIDDEN void sps__meta_reset(void);

/* ======================================================================== */
/* core: snapshots, native stacks, steps                                     */
/* ======================================================================== */

/* A stretch of one thread's records: chunk memory or a spill-file range.
 * Records [0, skip) only update the timestamp's upper half. */
typedef struct sps__seg {
    uint32_t thread;
    const uint64_t *rec; /* NULL: read n records at file_off from spill fd */
    int64_t file_off;
    uint32_t n, skip;
    uint64_t seq0;
} sps__seg_t;

typedef struct sps__thread_info {
    int64_t index, ident, native_id;
    int64_t start_ns, end_ns, cpu_ns;
    const char *name;
} sps__thread_info_t;

/* Native stacks (stacks.c).  note: called by the recording thread t right
 * after it wrote the begin record number seq (state SPS__EVENTS_EXTRA);
 * caller is the user's call site (sps__begin's return address), where the
 * stack is cut, or NULL; lookup: the stack id of that begin in session epoch, 0 if none. */
SPS__HIDDEN void sps__stack_note(const sps__thr_t *t, uint64_t seq, void *caller);
SPS__HIDDEN uint32_t sps__stack_lookup(uint32_t thread, uint64_t epoch, uint64_t seq);
/* Non-zero once capture was switched on in this process (sps_spans skips
 * the lookups otherwise). */
SPS__HIDDEN int sps__stacks_used(void);
/* In a fork child: re-initialises the locks of stacks.c. */
SPS__HIDDEN void sps__stacks_atfork_child(void);
/* In a fork child: each re-initialises its module's lock, which a parent
 * thread may have held at the fork (registry.c, region_info.c, tasks.c,
 * run_meta.c); session.c's atfork_child calls them before the child's
 * session opens. */
SPS__HIDDEN void sps__registry_atfork_child(void);
SPS__HIDDEN void sps__rinfo_atfork_child(void);
SPS__HIDDEN void sps__tasks_atfork_child(void);
SPS__HIDDEN void sps__meta_atfork_child(void);
/* Around a fork: lock (1, atfork_prepare) or unlock (0, atfork_parent)
 * the same modules' locks, so that the child never inherits a structure a
 * parent thread was changing (a child re-initialises them unlocked).  Leaf
 * locks, taken after the session's in this order: rinfo, tasks, meta,
 * registry.  Not the crash log's: the api layer's fork prepare handler,
 * which runs after core's, analyzes and so may log an anchor (a child
 * closes the log and re-initialises its lock: crash.c). */
SPS__HIDDEN void sps__rinfo_fork_lock(int lock);
SPS__HIDDEN void sps__tasks_fork_lock(int lock);
SPS__HIDDEN void sps__meta_fork_lock(int lock);
SPS__HIDDEN void sps__registry_fork_lock(int lock);

/* Steps (schedule.c, model/fold.c).  A completed step of the session: thread
 * index, CLOCK_MONOTONIC ns, its number, and (set by sps_spans before
 * sps__steps_nest) the region id of its name "ProfilerStep#N". */
typedef struct sps__step_span {
    int64_t start_ns, end_ns, step;
    uint32_t thread, region;
} sps__step_span_t;
/* Under the session lock: the steps that ended in the periods sps_spans
 * returns (the pending one and the current one) and lie inside
 * [from_ns, to_ns], as a malloc'd array (*out NULL when *n is 0).  Needs
 * the time map refreshed (every mark before its last anchor).  Returns 0
 * or SPS_ENOMEM. */
SPS__HIDDEN int sps__steps_window(int64_t from_ns, int64_t to_ns,
                                  sps__step_span_t **out, size_t *n);
/* buffer.c: joins the calling thread to the running events session if it
 * has not recorded in it yet (as its first record would) and returns its
 * index, or SPS_ENOSESSION, SPS_EMODE (aggregate) or SPS_ENOMEM.  Takes
 * the session lock unless the thread has joined already. */
SPS__HIDDEN int64_t sps__thread_join(void);

/* ======================================================================== */
/* core: crash safety (src/core/crash.c; docs/crash-recovery.md)             */
/* ======================================================================== */

/* The live directory's log: entries {u32 len, u32 type, payload, u32
 * checksum} (crash.c).  The payloads, native byte order: */
enum {
    SPS__CRASH_HDR = 1,      /* sps__crash_hdr_t, then file_path, label, spill_path,
                                value names (a line each) */
    SPS__CRASH_REGION = 2,   /* u32 id, string name */
    SPS__CRASH_THREAD = 3,   /* u32 index, i32 tid, string name */
    SPS__CRASH_ANCHOR = 4,   /* sps__anchor_t */
    SPS__CRASH_INSTALL = 5,  /* sps__crash_install_t */
    SPS__CRASH_SPILL = 6,    /* sps__crash_spill_t */
    SPS__CRASH_CONSUMED = 7  /* sps__crash_consumed_t */
};
/* strings: u32 length, bytes (no NUL) */
#define SPS__CRASH_MAGIC 0x3145564C53505355ull /* "USPSLVE1" */
#define SPS__CRASH_VERSION 1u
#define SPS__CRASH_ENTRY_MAX 8400u /* bytes of the largest entry */
typedef struct sps__crash_hdr {
    uint64_t magic;
    uint32_t version, chunk_recs;
    int32_t pid, ppid;
    double ns_per_tick;
    int64_t wall_anchor_ns, mono_anchor_ns;
    int32_t rank, size;
    uint32_t track, reserved;
} sps__crash_hdr_t;
typedef struct sps__crash_install { /* slot at off now holds thread's records from seq0 */
    int64_t off;
    uint32_t thread, pad;
    uint64_t seq0;
} sps__crash_install_t;
/* The live directory's "slots" file: entry i says who holds slot i of
 * "chunks" (offset i * chunk bytes) -- what an SPS__CRASH_INSTALL entry of
 * the log says, written by plain stores into a shared mapping instead of a
 * write(2) per chunk taken (crash.c).  An entry counts only when check is
 * sps__crash_slot_check of its slot and fields (0: never written; another
 * value: the process died between the stores). */
typedef struct sps__crash_slot {
    uint64_t seq0;
    uint32_t thread, check;
} sps__crash_slot_t;
/* The check word of slot's entry {thread, seq0}: never 0. */
static inline uint32_t sps__crash_slot_check(uint64_t slot, uint32_t thread, uint64_t seq0) {
    uint64_t h = (slot + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    h ^= ((uint64_t)thread + 1) * 0x94D049BB133111EBull;
    h ^= seq0 * 0xD6E8FEB86659FD93ull;
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) | 1u;
}
typedef struct sps__crash_spill { /* n records from seq0 packed at off (len bytes) */
    uint32_t thread, n;
    uint64_t seq0;
    int64_t off;
    uint64_t len;
} sps__crash_spill_t;
typedef struct sps__crash_consumed { /* a finalize wrote thread's records < seq */
    uint32_t thread, pad;
    uint64_t seq;
} sps__crash_consumed_t;

/* Under the session lock, at session open (after the first anchor): makes
 * the session crash-safe when it should be (sps_crash_safe, env
 * SPANSCOPE_CRASH_SAFE, an events session with a file); 1 if it is.  A
 * directory that cannot be made is said on stderr (the session goes on). */
SPS__HIDDEN int sps__crash_open(void);
/* Under the lock, at session close or process exit: removes the directory
 * when everything was written (or force_remove), else keeps it and says
 * so on stderr. */
SPS__HIDDEN void sps__crash_close(int force_remove);
SPS__HIDDEN int sps__crash_on(void);
SPS__HIDDEN int sps__crash_want(void); /* sps_crash_safe's setting */
SPS__HIDDEN uint64_t sps__crash_gen(void);
SPS__HIDDEN const char *sps__crash_dir(void); /* NULL when off */
/* Once per process (atexit). */
SPS__HIDDEN void sps__crash_process_init(void);
/* Takes the session lock: after a signal's final write (api/signals.c),
 * removes the live directory now -- the process is about to die without
 * running its exit handlers, and a recover would replace the file that
 * write made with the few calls recorded after it.  The session records
 * on, no longer crash-safe. */
SPS__HIDDEN void sps__crash_release(void);
/* Chunk memory: a new zero-filled shared slot (*off its offset), NULL when
 * crash safety is off or the file cannot grow (then use private memory);
 * clear: zero a mapped chunk going back to the pool; mem_free: unmap or
 * free c->rec. */
SPS__HIDDEN uint64_t *sps__crash_chunk_map(int64_t *off);
SPS__HIDDEN void sps__crash_chunk_clear(sps__chunk_t *c);
SPS__HIDDEN void sps__chunk_mem_free(sps__chunk_t *c);
/* The named spill file of the live directory (an fd), or -1. */
SPS__HIDDEN int sps__crash_spill_open(void);
/* Log entries (no-ops when off); any thread. */
SPS__HIDDEN void sps__crash_region(uint32_t id, const char *name);
SPS__HIDDEN void sps__crash_thread(const sps__thr_t *t);
SPS__HIDDEN void sps__crash_anchor(sps__anchor_t a);
SPS__HIDDEN void sps__crash_install(const sps__thr_t *t, const sps__chunk_t *c);
SPS__HIDDEN void sps__crash_spilled(uint32_t thread, uint64_t seq0, uint32_t n, int64_t off,
                                    uint64_t len);
struct sps__snap;
SPS__HIDDEN void sps__crash_consumed(const struct sps__snap *s);
/* In a fork child (atfork_child, first). */
SPS__HIDDEN void sps__crash_atfork_child(void);

/* Recovery (src/api/recover.c): the running session (a fresh events
 * session, overflow SPS_OVERFLOW_GROW) takes a dead process's clock
 * anchors (ticks ascending; replaces its time map) and its threads, each
 * as an exited thread holding rec[0, n) (the first a HI record; no value
 * groups).  0 or SPS_ENOMEM / SPS_ENOSESSION. */
SPS__HIDDEN int sps__adopt_clock(const sps__anchor_t *a, size_t n, int64_t wall_anchor_ns,
                                 int64_t mono_anchor_ns);
SPS__HIDDEN int sps__adopt_thread(int32_t tid, const char *name, const uint64_t *rec,
                                  size_t n);

/* ======================================================================== */
/* core: session state (src/core/session.c, buffer.c)                        */
/* ======================================================================== */

/* SPS__EVENTS_EXTRA: events, plus what the session takes beside each
 * record: a native stack per begin (sps__g.stacks_on, stacks.c) and/or
 * the thread's values (sps__g.nvals, values.c); the hot path only knows
 * SPS__EVENTS, so this state takes the out-of-line path. */
/* SPS__EMITTING: sps__active's value (never sps__state's) while an emitter
 * is on (core/emit.c, emit.h): every begin and end takes the out-of-line
 * path, which calls the emitters and then records as sps__state (and the
 * pause) say -- also with no session. */
enum { SPS__OFF = 0, SPS__EVENTS = 1, SPS__AGGREGATE = 2, SPS__EVENTS_EXTRA = 3,
       SPS__EMITTING = 4 };

/* Read on every sps_begin/sps_end; on its own cache line. */
/* sps__active (spanscope.h) holds SPS__OFF / SPS__EVENTS / SPS__AGGREGATE
 * (/ SPS__EVENTS_EXTRA / SPS__EMITTING: the out-of-line path);
 * always accessed with __atomic builtins (it is a plain int in the public
 * header so that C++ can include it). */
/* Accessed through the GOT even inside the library: an executable that
 * reads sps__active inline gets a copy relocation, and the library must
 * write that copy, not its own. */
/* Two words, because a session can be paused (sps_pause): sps__state is
 * the session's state (SPS__OFF: none), what every "is there a session"
 * test reads; sps__active is what the hot path reads, the same value
 * except while paused, when it is SPS__OFF so that sps_begin/sps_end
 * cost their one branch and record nothing.  sps__paused survives
 * sps__state_store (a capture-stacks switch keeps the pause) and is
 * cleared by sps__session_open. */
SPS__HIDDEN extern int sps__state;
SPS__HIDDEN extern int sps__paused;
/* The emitters on now, one bit each (core/emit.c); non-zero: sps__active
 * is SPS__EMITTING whatever the session's state.  Written under the
 * session lock, as sps__active is. */
SPS__HIDDEN extern unsigned sps__emit_mask;
static inline int sps__state_load(void) {
    return __atomic_load_n(&sps__state, __ATOMIC_RELAXED);
}
/* The hot path's copy of the state (SPS__OFF while paused). */
static inline int sps__hot_state_load(void) {
    return __atomic_load_n(&sps__active, __ATOMIC_RELAXED);
}
/* Every store of sps__active goes through here (under the session lock,
 * or in a fork's child), so that an emitter's SPS__EMITTING survives a
 * session's open and close, a pause and a capture-stacks switch. */
static inline void sps__state_store(int s) {
    __atomic_store_n(&sps__state, s, __ATOMIC_SEQ_CST);
    int paused = __atomic_load_n(&sps__paused, __ATOMIC_RELAXED);
    int hot = __atomic_load_n(&sps__emit_mask, __ATOMIC_RELAXED) ? SPS__EMITTING
            : paused ? SPS__OFF : s;
    __atomic_store_n(&sps__active, hot, __ATOMIC_SEQ_CST);
}
/* Pauses (on 1) or resumes (on 0) the hot path of the live session; under
 * the session lock (session.c). */
SPS__HIDDEN void sps__pause_set(int on);
SPS__HIDDEN extern __thread sps__thr_t *sps__tls;
SPS__HIDDEN extern sps__thr_t sps__dummy_thr;

typedef struct sps__snap sps__snap_t;

/* What a finalize takes out of the session to write, without the lock. */
/* One stack sample of a thread.  ticks as the records'; the rest is
 * filled at finalize: ns from the period's timemap, thread (the lane, or
 * UINT32_MAX for a thread without records), and by the merged pass
 * (model/pass.h) call_id and region of the innermost span open on that
 * lane at that time (-1 and 0: none), or SPS__SMP_DEFER when that span
 * stays open past the period (its call is written with a later period,
 * and so is the sample). */
typedef struct sps__sample {
    uint64_t ticks;
    int64_t ns;
    int64_t call_id;
    uint32_t stack;   /* the sampler's stack id (>= 1) */
    uint32_t region;
    int32_t tid;
    uint32_t thread;
    uint32_t flags;
    uint32_t weight;  /* the timer periods it stands for (1 + overruns) */
} sps__sample_t;
#define SPS__SMP_DEFER 1u

struct sps__snap {
    uint32_t nthreads;
    sps__seg_t *segs;      /* all segments, grouped by thread, in order */
    size_t nsegs, capsegs;
    sps__chunk_t *owned;   /* in-memory chunks to give back after writing */
    uint64_t **copies;     /* copies of current chunks */
    size_t ncopies, capcopies;
    sps__stack_t *carried; /* [nthreads] open calls at the previous period end */
    sps__stack_t *open;    /* [nthreads] open calls at this period end */
    sps__acc_t *per;       /* [nregions] period statistics (ns) */
    uint32_t nregions;
    sps__acc_t *node_per;  /* [nnodes] period statistics of tree nodes */
    size_t nnodes;
    sps__timemap_t tm;
    int64_t start_ns, end_ns;
    /* finalize's own analysis of the period: its time, and the records
     * the spill writer had analyzed in the background (verbose output) */
    int64_t analysis_ns;
    int analysis_split;      /* it ran on two cores */
    uint64_t bg_records;
    uint64_t bg_trials, bg_allowed; /* the session's trials of analyzing
                                       while the recorders were busy */
    /* copied under the lock for the writer and the table */
    uint32_t *regs;        /* region ids in the file's region table */
    size_t nregs;
    int32_t *node_parent;  /* [nnodes] */
    uint32_t *node_region; /* [nnodes] */
    sps__thread_info_t *threads; /* [nthreads] */
    char (*tnames)[32];
    int aggregate, rank, size;
    long compress_threshold;
    uint64_t dropped, misuse, open_calls;
    int spill_errno;       /* the spill's last failure: its errno (0: none;
                              EFBIG for spill_limit) and its words */
    char spill_error[256];
    int64_t wall_anchor_ns, mono_anchor_ns;
    char *label;
    int has_clock_offset;  /* MPI clock alignment (see sps__layout_t) */
    int64_t clock_offset_ns, clock_offset_error_ns;
    sps_counter_sample_t *counters; /* the period's counter samples */
    size_t ncounters;
    sps__sample_t *samples; /* the period's stack samples (sps__sample_ops) */
    size_t nsamples;
    int sample_hz;          /* their rate (0: not sampling) */
    uint64_t samples_lost;
    uint64_t counters_dropped;
    /* threads that ran each region [nregions] / tree node [nnodes] in the
     * period, and any region (the analysis's; NULL: unknown) */
    uint32_t *lanes, *node_lanes;
    uint32_t lanes_total;
};

/* What a distributed setup found. */
typedef struct sps__dist {
    int on;                  /* 1: sessions are collective over a communicator */
    int rank, size;
    int has_clock_offset;
    int64_t clock_offset_ns;       /* ns to add to put times on rank 0's clock */
    int64_t clock_offset_error_ns; /* half the best round trip */
} sps__dist_t;

/* The spill writer: a thread that takes full chunks from a queue, packs
 * them (pack.c), writes them to the spill file and gives their memory back
 * to the pool, so that the recording threads only hand chunks over.  Under
 * the session lock, except where spill.c says.  docs/design.md, "Spilling". */
/* sps__spiller_t.cause when cfg.spill_limit stopped the spill. */
#define SPS__SPILL_LIMIT (-1)

typedef struct sps__spiller {
    pthread_cond_t work;      /* the writer waits here for chunks */
    pthread_cond_t done;      /* broadcast when chunk memory came free, a
                                 write ended or the writer exited */
    int alive;                /* a writer thread exists (it clears this) */
    int idle;                 /* ... and waits on work */
    uint64_t gen;             /* a writer exits when gen moves past its own */
    int sync;                 /* pack and write in the recording thread
                                 (SPANSCOPE_SPILL_THREAD=0, a forked child,
                                 or no thread could be started) */
    int forked;               /* this process is a fork child */
    int err;                  /* a write failed or spill_limit was reached:
                                 drop until a finalize frees room */
    int cause;                /* why the session's last failed spill failed:
                                 the errno of the failing open or write
                                 (ENOSPC...), SPS__SPILL_LIMIT, 0 none yet;
                                 kept after err is forgiven, so that the
                                 file that counts the drops can say why */
    int waiters;              /* recording threads waiting on done */
    sps__chunk_t *qhead, *qtail; /* chunks to spill, oldest first */
    size_t queued;
    sps__chunk_t *busy;       /* the chunk being packed and written */
    uint8_t *buf;             /* the packing buffer (busy's writer only) */
    size_t buf_cap;
    uint64_t bytes, records;  /* written in this session (tests, bench) */
    uint64_t waits;           /* times a recording thread waited */
    uint64_t bg_records;      /* records the writer's background analysis
                                 read in this session (tests, verbose) */
    uint64_t bg_taken;        /* bg_records at the last finalize */
    uint64_t bg_woken;        /* sps__g.retired (the process's count) when
                                 the session began, then when the writer
                                 was last woken for the background
                                 analysis alone (spill.c, bg_nudge) */
} sps__spiller_t;

typedef struct sps__session {
    pthread_mutex_t lock;
    uint64_t epoch;
    int pid;
    int mode;                 /* SPS__EVENTS or SPS__AGGREGATE */
    sps_config_t cfg;         /* strings below are owned copies */
    char *file_path, *label, *spill_dir;
    uint32_t chunk_recs;
    size_t budget_chunks, mem_chunks;
    sps__chunk_t *free_mem;   /* descriptors holding free chunk memory */
    sps__thr_t *threads;      /* every thread state (all epochs) */
    uint32_t nthreads;        /* threads of this epoch */
    int spill_fd;
    int64_t spill_end;
    size_t spilled_live;
    size_t free_count;        /* descriptors on free_mem */
    sps__spiller_t sp;        /* the spill writer (spill.c) */
    sps__timemap_t tm;
    int64_t start_ns, period_start_ns;
    int64_t wall_anchor_ns, mono_anchor_ns;
    uint32_t *registered;     /* [registered_cap] by region id: 1 + its place
                                 in the session's registration order, 0 none */
    uint32_t registered_cap;
    uint32_t nregistered;     /* regions registered in the session */
    uint64_t misuse;
    sps__snap_t *pending;     /* a period whose write failed */
    sps__dist_t dist;         /* MPI: rank, size, clock offset (ext/mpi.c) */
    int bg_busy;              /* a background step analyzes without the
                                 lock (spill.c's writer; sps__bg_wait) */
    int bg_waiters;           /* threads in sps__bg_wait: the writer starts
                                 no step while there are any */
    uint64_t retired;         /* records in chunks retired (in the process:
                                 paces the writer's anchors, analyze.c) */
    int stacks_on;            /* sps_capture_stacks(1) (state EXTRA) */
    uint32_t nvals;           /* values per record (cfg.track; values.c);
                                 set before the state turns on */
} sps__session_t;

SPS__HIDDEN extern sps__session_t sps__g;

/* ======================================================================== */
/* core: stack samples (the sampler is an integration, src/ext/sampler.c;  */
/* it registers sps__sample_ops, through which setup, finalize and shutdown */
/* reach it: nothing here calls it by name)                                 */
/* ======================================================================== */


/* Stacks as the files store them: for each of nstacks stack ids asked
 * for, offsets[k]..offsets[k+1] index frame_of, the frames innermost
 * first; frames are unique (kind, function, file, line, module,
 * address).  kind: SPS__FRAME_NATIVE (address: the offset in module) or
 * SPS__FRAME_RUNTIME (a language runtime's: file and line). */
#define SPS__FRAME_NATIVE 0
#define SPS__FRAME_RUNTIME 1
typedef struct sps__sframes {
    size_t nstacks, nframes;
    uint64_t *offsets;   /* [nstacks + 1] */
    uint32_t *frame_of;  /* [offsets[nstacks]] */
    char **function, **file, **module; /* [nframes], owned */
    int64_t *line, *kind, *address;    /* [nframes] */
} sps__sframes_t;

typedef struct sps__sample_ops {
    /* sps_setup with cfg.sample_hz: starts sampling (sps_sampling_start) */
    int (*start)(int hz);
    /* under the session lock, at a finalize: moves every sample taken at or
     * before upto_ticks into *out (malloc'd; NULL when none), *n; *hz the
     * rate, *lost the samples lost since the last take.  0 or SPS_ENOMEM
     * (nothing moved). */
    int (*take)(uint64_t upto_ticks, sps__sample_t **out, size_t *n, int *hz,
                uint64_t *lost);
    /* gives samples back for the next period (deferred ones, or a period
     * whose write failed); they keep their ticks */
    void (*put_back)(const sps__sample_t *v, size_t n);
    /* the frames of stack ids[0..n) (any thread, no lock held); 0 or
     * SPS_ENOMEM.  Freed with sframes_free. */
    int (*describe)(const uint32_t *ids, size_t n, sps__sframes_t *out);
    void (*sframes_free)(sps__sframes_t *f);
    /* sps_shutdown: stops sampling and forgets the samples */
    void (*session_end)(void);
} sps__sample_ops_t;
SPS__HIDDEN extern const sps__sample_ops_t *sps__sample_ops;

/* counters.c, under the session lock: moves the period's samples into s
 * (the log starts again); puts them back in front (a failed write); forgets
 * them (session end). */
SPS__HIDDEN void sps__counters_take(sps__snap_t *s);
SPS__HIDDEN void sps__counters_reset(void);
/* buffer.c */
/* vals: n values written before the record as a value group (n == 0:
 * none; see SPS__REC_VAL_TAG). */
SPS__HIDDEN void sps__slow_record(sps__thr_t *t, uint32_t payload,
                                  uint64_t now, const uint64_t *vals, uint32_t n);
/* Aggregate mode's recorder: core hands it each begin and end (ticks);
 * the model's (model/aggregate.c: sps__agg_fold_ops), registered by the
 * api layer at setup, so core calls no statistics code by name. */
typedef struct sps__agg_ops {
    void (*begin)(sps_region_t r, uint64_t now);
    void (*end)(sps_region_t r, uint64_t now);
} sps__agg_ops_t;
SPS__HIDDEN extern const sps__agg_ops_t *sps__agg_ops;
/* The background analysis: the spill writer hands the model's analyzer
 * its idle time (model/analyze.c: sps__bg_analyze_ops, registered by the
 * api layer at setup; NULL: none).  step is called under the session lock
 * when no chunk waits to be spilled; it may release and retake the lock,
 * claiming the analysis with sps__g.bg_busy meanwhile.  It returns 1 when
 * it analyzed anything, 0 when there is nothing to analyze, -1 when there
 * is but not yet (the writer looks again within SPS__BG_RETRY_MS). */
#define SPS__BG_RETRY_MS 10 /* a trial window (bg_trial.c): a trial asked less often goes stale */
typedef struct sps__bg_ops {
    int (*step)(void);
} sps__bg_ops_t;
SPS__HIDDEN extern const sps__bg_ops_t *sps__bg_ops;
/* Under the lock: waits until no background step holds the analysis (every
 * reader or mutator of the analysis, the threads' cursors and stacks, and
 * the chunks' memory calls it first; it may release the lock meanwhile). */
SPS__HIDDEN void sps__bg_wait(void);
/* The calling thread's state joined to the session, with at least bytes of
 * zero-filled aggregate storage (t->agg_acc); NULL if impossible
 * (buffer.c; takes the session lock). */
SPS__HIDDEN sps__thr_t *sps__agg_thread(size_t bytes);

/* session.c: process-wide set-up (once), liveness, the config check. */
SPS__HIDDEN void sps__process_init(void);
/* Called last in the fork's child handler, the inherited session off
 * (NULL: nothing); the api layer's src/api/fork.c sets it from a
 * constructor and opens the child's own session there. */
SPS__HIDDEN extern void (*sps__fork_child_hook)(void);
SPS__HIDDEN int sps__session_live(void);
SPS__HIDDEN int sps__config_check(const sps_config_t *cfg);
/* Called under the session lock when a session's recording is forgotten
 * (the model's analysis: sps__analysis_reset). */
typedef void (*sps__reset_fn)(void);
/* Opens a session (cfg checked; dist: what an MPI setup found, zeroed
 * without).  0 or SPS_EACTIVE. */
SPS__HIDDEN int sps__session_open(const sps_config_t *cfg, const sps__dist_t *dist,
                                  sps__reset_fn reset);
/* Closes the session; returns 1 when it was collective (the caller shuts the
 * integration down), else 0. */
SPS__HIDDEN int sps__session_close(sps__reset_fn reset);
/* Snapshots, under the lock.  build: the period's records and stacks (take:
 * move them out of the session; else reference live memory while the lock
 * is held); describe: threads and metadata; stash: keep a period whose
 * write failed as pending (merge merges the model's part, older first);
 * absorb_pending: the pending period into s; release: chunks back to the
 * pool; free: frees s and what it owns. */
typedef void (*sps__snap_merge_fn)(sps__snap_t *s, const sps__snap_t *older);
SPS__HIDDEN sps__snap_t *sps__snap_build(int take);
SPS__HIDDEN int sps__snap_describe(sps__snap_t *s);
/* Under the lock: 1 when r was registered (sps_region) in this session. */
SPS__HIDDEN int sps__region_registered(sps_region_t r);
/* Under the lock: sorts region ids v[0..n) into the session's order (the
 * order of files' region tables and of registered_regions): those
 * registered in the session in the order they were, then the others by id. */
SPS__HIDDEN void sps__regions_sort(sps_region_t *v, size_t n);
SPS__HIDDEN void sps__snap_stash(sps__snap_t *s, sps__snap_merge_fn merge);
SPS__HIDDEN void sps__snap_absorb_pending(sps__snap_t *s, sps__snap_merge_fn merge);
SPS__HIDDEN void sps__snap_release(sps__snap_t *s);
SPS__HIDDEN void sps__snap_free(sps__snap_t *s);

/* Under the lock: release every chunk of every thread (session end). */
SPS__HIDDEN void sps__buffers_reset(void);
/* Under the lock: give a chunk's memory back to the pool. */
SPS__HIDDEN void sps__chunk_release(sps__chunk_t *c);
SPS__HIDDEN void sps__thread_key_init(void);
/* Under the lock: a chunk's memory (c->rec) to the pool's free list, or
 * freed when no session owns the pool (buffer.c). */
SPS__HIDDEN void sps__pool_put(sps__chunk_t *c);

/* The spill writer (spill.c), all under the session lock. */
/* A thread retired c (SPILL policy): queues it for the writer when the
 * pool runs low, and wakes the writer when it has a batch. */
SPS__HIDDEN void sps__spill_retired(sps__chunk_t *c);
/* The pool is spent and t needs a chunk: makes one come free.  Returns
 * SPS__ROOM_RETRY (try the pool again; the lock may have been released
 * while waiting for the writer), SPS__ROOM_GROW (nothing can be spilled:
 * allocate past the budget), SPS__ROOM_DROP (spilling failed: drop and
 * count) or SPS__ROOM_GONE (the session ended while waiting). */
enum { SPS__ROOM_RETRY, SPS__ROOM_GROW, SPS__ROOM_DROP, SPS__ROOM_GONE };
SPS__HIDDEN int sps__spill_make_room(sps__thr_t *t);
/* A snapshot took c (it leaves its thread's list); a release of c: 1 when
 * it is deferred to the writer (c is BUSY), else 0 (c left the queue). */
SPS__HIDDEN void sps__spill_take(sps__chunk_t *c);
SPS__HIDDEN int sps__spill_release(sps__chunk_t *c);
/* Truncates the spill file when nothing in it is live and no write is in
 * flight; forgive (a finalize or a new session freed room): forgets a
 * failed write, so that spilling resumes. */
SPS__HIDDEN void sps__spill_trim(int forgive);
/* Spills every retired in-memory chunk of every thread now, in the calling
 * thread (tests; a run that must hold memory low).  0 or SPS_EIO. */
SPS__HIDDEN int sps__spill_all(void);
/* Session open: waits until an earlier session's writer has exited, and
 * reads SPANSCOPE_SPILL_THREAD.  Session close: tells the writer to exit
 * (it finishes the chunk it is writing).  Fork child: no writer exists,
 * and none is started there (the recording threads spill). */
SPS__HIDDEN void sps__spill_open(void);
/* Under the lock: the session's last spill failure (sps_spill_error's
 * contract, spanscope.h): its errno, 0 when none, and its words in buf. */
SPS__HIDDEN int sps__spill_cause(char *buf, size_t cap);
SPS__HIDDEN void sps__spill_close(void);
SPS__HIDDEN void sps__spill_atfork_child(void);

/* Reading a run of spilled chunks (spill.c), without the lock: the file
 * range belongs to a snapshot or to a reader holding the lock. */
typedef struct sps__spill_rd {
    uint8_t *buf;          /* a window over the file */
    size_t len;            /* valid bytes in buf */
    int64_t buf_off;       /* file offset of buf[0] */
    int64_t chunk_off;     /* header offset of the current packed chunk */
    int64_t frame_off;     /* offset of its next frame */
    sps__pack_hdr_t hdr;   /* the current packed chunk's header */
    uint32_t chunk_done;   /* its records decoded so far */
    uint32_t left;         /* records of the run not decoded yet */
} sps__spill_rd_t;
/* Starts reading the run of n records at off, stepping over its first
 * packed chunks while all their records are among the first skip (only
 * their headers are read: a reader that resumes deep in a long run does
 * not decode it all again); *skipped: the records stepped over.  0,
 * SPS_ENOMEM or SPS_EIO. */
SPS__HIDDEN int sps__spill_rd_open(sps__spill_rd_t *r, int64_t off, uint32_t n,
                                   uint32_t skip, uint32_t *skipped);
/* Decodes the next frame into out (SPS__PACK_FRAME records of room): *m
 * records, 0 at the end of the run.  0 or SPS_EIO. */
SPS__HIDDEN int sps__spill_rd_next(sps__spill_rd_t *r, uint64_t *out, uint32_t *m);
SPS__HIDDEN void sps__spill_rd_free(sps__spill_rd_t *r);

#endif /* SPS_CORE_H */
