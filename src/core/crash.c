/* crash.c -- crash safety: what a session records reaches the kernel as it
 * is recorded, so that a SIGKILL, a segfault or an OOM kill loses (almost)
 * nothing; `spanscope recover PATH` (src/api/recover.c) reads it back.
 *
 * The live directory PATH.live-<pid> (PATH: the session's output) holds:
 *   chunks  the chunk memory itself: every chunk of the pool is a
 *           MAP_SHARED mapping of a slot of this file, so a record is in
 *           the page cache the moment the hot path stores it -- the hot
 *           path is unchanged (no extra store, no syscall);
 *   spill   the spill file (spill.c), named instead of unlinked;
 *   slots   which slot of "chunks" holds which thread's records from
 *           which sequence number (sps__crash_slot_t): a shared mapping the
 *           recording thread writes with plain stores when it takes a chunk
 *           (a log entry, one write(2) a chunk, cost it 0.4-0.8 ns a pair);
 *   log     an append-only log of what the records need to be read: the
 *           session's settings (with the names of the values a record's
 *           group holds), region names, threads, clock anchors, the slots
 *           the table cannot hold (it could not grow), which records were
 *           spilled where, and how far each thread's records were written
 *           out by a finalize;
 *   samples the stack samples, appended by the sampler's thread at each
 *           drain (sps__crash_sample), each stack's frames as text the
 *           first time the directory sees it (crash_samples.h).
 *
 * A slot is zero-filled before a thread gets it (a fresh slot of the file
 * is zero; a recycled one is cleared when it goes back to the pool, by
 * the spill writer or the finalize, never by the recording thread), and no
 * record is ever the zero word (a begin or an end names a region >= 1, a
 * HI record has its tag), so a reader finds how far a slot is filled: up
 * to its first zero word (a value group, which may hold zeros, is skipped
 * by its length; a group whose record is missing was being written).
 * What can be lost: a record whose store had not reached memory (the one
 * in flight), records of threads that run on after a failed write of the
 * log or the spill file (reported on stderr), and what happened after the
 * process left the library's control (nothing: there is no buffering).
 *
 * Each log entry is one write(2) on an O_APPEND descriptor (atomic among
 * the threads that append) with a checksum, so a torn entry is detected
 * and ends the log.  The log is written at a thread's first record, at
 * each anchor, region name, spill and finalize: a few hundred bytes per MiB
 * recorded.
 *
 * A session that is shut down, or whose records were all written by a
 * finalize when the process exits, removes the directory.  Aggregate-mode
 * sessions keep their statistics in private memory: they are not covered.
 * A forked child never writes into its parent's files: its copies of the
 * mappings are replaced by private memory (sps__crash_atfork_child). */
#include "core/crash_samples.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static struct {
    int on;             /* this session is crash-safe */
    int log_fd, chunks_fd;
    int64_t chunks_end; /* bytes of the chunks file */
    uint64_t gen;       /* session generation the mappings belong to */
    char *dir;
    int warned, map_warned; /* log (under g_log_lock), chunks (session lock) */
    int want;           /* sps_crash_safe: -1 default (env), 0 off, 1 on */
    char *spill_path;   /* the named spill file: in cfg.spill_dir when set */
    int forked;         /* the next session is the one a fork child inherits
                           (api/fork.c opens it in the fork handler; see wanted) */
    int slots_fd;
    sps__crash_slot_t *slots; /* the table's mapping, NULL: none yet (the log) */
    uint64_t slots_cap;       /* entries the file and the mapping hold (session lock) */
} g_crash = {.log_fd = -1, .chunks_fd = -1, .want = -1, .slots_fd = -1};

/* The slot table's largest size: 2^20 slots (64 GiB of 64 KiB chunks). */
#define SLOTS_MAX_BYTES ((uint64_t)16 << 20)

/* The samples file (crash_samples.h): its descriptor, the batch being
 * gathered, which stacks this directory has described (the generation it
 * was described in, by stack id).  Under g_smp_lock: the sampler's drains
 * (under the sampler's lock), a finalize's DONE (under the session lock)
 * and the session's open and close of the file; innermost. */
static struct {
    int fd;
    uint64_t gen;            /* the directory fd writes to: one more each */
    char dir[PATH_MAX];      /* its path (for the messages) */
    uint8_t *buf;            /* [entry header + SPS__CSMP_ENTRY_MAX + checksum] */
    uint32_t n;              /* samples gathered in buf */
    uint64_t *seen;          /* by stack id: the gen it was described in */
    size_t cap_seen;
    char rt[1024];           /* the walker's runtime object ("" none) */
    const void *rt_fn;       /* the function rt was found from */
    int warned;
} g_smp = {.fd = -1};
static pthread_mutex_t g_smp_lock = PTHREAD_MUTEX_INITIALIZER;
static void smp_consumed(const sps__snap_t *s);
static int open_in(const char *name, int flags);
#define open_in_dir open_in

/* Orders the log's writers (any thread: a region named, the spill writer)
 * with the session's open and close of the files: a write never goes to a
 * descriptor closed, or reused, meanwhile.  Innermost: nothing is called
 * under it but write(2) and close(2). */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

int sps_crash_safe(int on) {
    if (on < -1 || on > 1) return SPS_EINVAL;
    __atomic_store_n(&g_crash.want, on, __ATOMIC_RELAXED);
    return 0;
}

int sps__crash_want(void) { return __atomic_load_n(&g_crash.want, __ATOMIC_RELAXED); }
int sps__crash_on(void) { return __atomic_load_n(&g_crash.on, __ATOMIC_RELAXED); }
uint64_t sps__crash_gen(void) { return g_crash.gen; }
const char *sps__crash_dir(void) { return g_crash.on ? g_crash.dir : NULL; }

/* ------------------------------------------------------------------------ */
/* The log                                                                   */
/* ------------------------------------------------------------------------ */

/* Appends one entry: {u32 len, u32 type}, len bytes, u32 checksum of all
 * before it.  One write(2); a failure turns crash safety off (said once). */
static void log_put(uint32_t type, const void *payload, size_t len) {
    uint8_t buf[SPS__CRASH_ENTRY_MAX];
    if (len > sizeof buf - 12) return;
    uint32_t h[2] = {(uint32_t)len, type};
    memcpy(buf, h, 8);
    memcpy(buf + 8, payload, len);
    uint32_t sum = (uint32_t)sps__hash_bytes(buf, 8 + len);
    memcpy(buf + 8 + len, &sum, 4);
    ssize_t w = 0;
    int err = 0;
    pthread_mutex_lock(&g_log_lock);
    if (g_crash.log_fd < 0) {
        pthread_mutex_unlock(&g_log_lock);
        return;
    }
    do w = write(g_crash.log_fd, buf, 12 + len);
    while (w < 0 && (err = errno) == EINTR);
    int warn = w != (ssize_t)(12 + len) && !g_crash.warned;
    if (warn) g_crash.warned = 1;
    pthread_mutex_unlock(&g_log_lock);
    if (warn)
        fprintf(stderr, "spanscope: crash safety: writing the log of %s failed (%s); a crash "
                "now loses what follows\n", sps__g.file_path ? sps__g.file_path : "the session",
                w < 0 ? strerror(err) : "short write");
}

/* A string field: u32 length, bytes (cut at max, at most 4000). */
static size_t put_str(uint8_t *p, const char *s, size_t max) {
    uint32_t n = s ? (uint32_t)strnlen(s, max < 4000 ? max : 4000) : 0;
    memcpy(p, &n, 4);
    if (n) memcpy(p + 4, s, n);
    return 4 + n;
}

void sps__crash_region(uint32_t id, const char *name) {
    if (!sps__crash_on()) return;
    uint8_t b[4100];
    memcpy(b, &id, 4);
    log_put(SPS__CRASH_REGION, b, 4 + put_str(b + 4, name, 4000));
}

void sps__crash_thread(const sps__thr_t *t) {
    if (!g_crash.on) return;
    uint8_t b[64];
    int32_t tid = t->tid;
    memcpy(b, &t->index, 4);
    memcpy(b + 4, &tid, 4);
    char name[sizeof t->name + 1];
    memcpy(name, t->name, sizeof t->name);
    name[sizeof t->name] = 0;
    log_put(SPS__CRASH_THREAD, b, 8 + put_str(b + 8, name, sizeof name));
}

void sps__crash_anchor(sps__anchor_t a) {
    if (!g_crash.on) return;
    log_put(SPS__CRASH_ANCHOR, &a, sizeof a);
}

/* Under the session lock, in the recording thread taking chunk c: its
 * slot's entry in the table (the check word last, so that a death between
 * the stores leaves an entry that does not count: the slot was cleared
 * before it was handed out, and no record is stored in it before this
 * returns), else a log entry. */
void sps__crash_install(const sps__thr_t *t, const sps__chunk_t *c) {
    if (!g_crash.on || c->live_off < 0 || c->live_gen != g_crash.gen) return;
    uint64_t slot = (uint64_t)c->live_off / ((uint64_t)sps__g.chunk_recs * sizeof(uint64_t));
    if (g_crash.slots && slot < g_crash.slots_cap) {
        sps__crash_slot_t *e = &g_crash.slots[slot];
        __atomic_store_n(&e->check, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->thread, t->index, __ATOMIC_RELAXED);
        __atomic_store_n(&e->seq0, c->seq0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->check, sps__crash_slot_check(slot, t->index, c->seq0),
                         __ATOMIC_RELEASE);
        return;
    }
    sps__crash_install_t e = {c->live_off, t->index, 0, c->seq0};
    log_put(SPS__CRASH_INSTALL, &e, sizeof e);
}

void sps__crash_spilled(uint32_t thread, uint64_t seq0, uint32_t n, int64_t off, uint64_t len) {
    if (!sps__crash_on()) return;
    sps__crash_spill_t e = {thread, n, seq0, off, len};
    log_put(SPS__CRASH_SPILL, &e, sizeof e);
}

void sps__crash_consumed(const sps__snap_t *s) {
    if (!g_crash.on) return;
    smp_consumed(s);
    for (size_t i = 0; i < s->nsegs; i++) {
        const sps__seg_t *g = &s->segs[i];
        if (i + 1 < s->nsegs && s->segs[i + 1].thread == g->thread) continue;
        sps__crash_consumed_t e = {g->thread, 0, g->seq0 + g->n};
        log_put(SPS__CRASH_CONSUMED, &e, sizeof e);
    }
}

/* ------------------------------------------------------------------------ */
/* Stack samples (crash_samples.h)                                           */
/* ------------------------------------------------------------------------ */

/* Under g_smp_lock: frames b (8 bytes of room before the payload, 4
 * after it) as one entry and appends it; a failure closes the file (a
 * torn piece ends the reader there anyway) and says so once. */
static void smp_write(uint8_t *b, uint32_t type, size_t len) {
    if (g_smp.fd < 0) return;
    uint32_t h[2] = {(uint32_t)len, type};
    memcpy(b, h, 8);
    uint32_t sum = (uint32_t)sps__hash_bytes(b, 8 + len);
    memcpy(b + 8 + len, &sum, 4);
    size_t off = 0, all = 12 + len;
    int err = 0;
    while (off < all) {
        ssize_t w = write(g_smp.fd, b + off, all - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            err = w < 0 ? errno : ENOSPC;
            break;
        }
        off += (size_t)w;
    }
    if (off == all) return;
    close(g_smp.fd);
    g_smp.fd = -1;
    if (!g_smp.warned)
        fprintf(stderr, "spanscope: crash safety: writing %s/samples failed (%s); a crash now "
                "loses the stack samples that follow\n", g_smp.dir, strerror(err));
    g_smp.warned = 1;
}

/* Under g_smp_lock: writes the gathered batch. */
static void smp_flush(int hz, uint64_t lost) {
    if (g_smp.fd < 0 || !g_smp.buf || (!g_smp.n && !lost)) return;
    uint32_t head[2] = {g_smp.n, hz > 0 ? (uint32_t)hz : 0};
    memcpy(g_smp.buf + 8, head, 8);
    memcpy(g_smp.buf + 16, &lost, 8);
    smp_write(g_smp.buf, SPS__CSMP_BATCH, 16 + (size_t)g_smp.n * sizeof(sps__csmp_rec_t));
    g_smp.n = 0;
}

/* Frame field writers for smp_stack: p advances. */
static uint8_t *put_i64(uint8_t *p, int64_t v) {
    memcpy(p, &v, 8);
    return p + 8;
}

static uint8_t *put_fstr(uint8_t *p, const char *s) {
    return p + put_str(p, s ? s : "", SPS__CSMP_STR_MAX);
}

/* Under g_smp_lock: describes stack id (words w: nn native, nr runtime)
 * as the sampler's ops_describe does -- native frames up to the
 * runtime's own object, then the runtime's -- and appends it.  0, or -1
 * when it could not (out of memory: the stack's samples are dropped). */
static int smp_stack(uint32_t id, const uint64_t *w, uint32_t nn, uint32_t nr,
                     const sps_frame_walker_t *walker) {
    if (nn > SPS__CSMP_FRAMES_MAX) nn = SPS__CSMP_FRAMES_MAX;
    if (nr > SPS__CSMP_FRAMES_MAX - nn) nr = SPS__CSMP_FRAMES_MAX - nn;
    if (!walker) nr = 0;
    size_t frame_max = 24 + 3 * (4 + SPS__CSMP_STR_MAX);
    uint8_t *b = malloc(8 + 8 + (size_t)(nn + nr) * frame_max + 4);
    if (!b) return -1;
    if (walker && walker->runtime_fn != g_smp.rt_fn) {
        char f[8];
        g_smp.rt[0] = 0;
        g_smp.rt_fn = walker->runtime_fn;
        if (walker->runtime_fn)
            sps__sym_name((uintptr_t)walker->runtime_fn, 1, f, sizeof f, g_smp.rt,
                          sizeof g_smp.rt, NULL);
    }
    const char *rt = walker && walker->runtime_fn ? g_smp.rt : "";
    uint8_t *p = b + 16;
    uint32_t nf = 0;
    char func[SPS__CSMP_STR_MAX], obj[4096], src[4096];
    for (uint32_t j = 0; j < nn; j++) {
        /* a return address is the instruction after the call: name the call */
        uintptr_t at = j == 0 ? (uintptr_t)w[j] : (uintptr_t)w[j] - 1, off = 0;
        int64_t line = 0;
        sps__sym_name(at, 0, func, sizeof func, obj, sizeof obj, &off);
        if (nr && rt[0] && !strcmp(obj, rt)) break;
        sps__sym_line(at, src, sizeof src, &line);
        p = put_i64(p, SPS__FRAME_NATIVE);
        p = put_i64(p, line);
        p = put_i64(p, (int64_t)off);
        p = put_fstr(p, func);
        p = put_fstr(p, src);
        p = put_fstr(p, obj);
        nf++;
    }
    for (uint32_t j = 0; j < nr; j++) {
        int64_t line = 0;
        if (walker->describe(w[nn + j], func, sizeof func, src, sizeof src, &line) != 0) {
            strcpy(func, "?");
            src[0] = 0;
            line = 0;
        }
        p = put_i64(p, SPS__FRAME_RUNTIME);
        p = put_i64(p, line);
        p = put_i64(p, 0);
        p = put_fstr(p, func);
        p = put_fstr(p, src);
        p = put_fstr(p, "");
        nf++;
    }
    uint32_t head[2] = {id, nf};
    memcpy(b + 8, head, 8);
    smp_write(b, SPS__CSMP_STACK, (size_t)(p - b) - 8);
    free(b);
    return 0;
}

void sps__crash_sample(uint64_t ticks, int32_t tid, uint32_t weight, uint32_t stack,
                       const uint64_t *w, uint32_t nn, uint32_t nr,
                       const struct sps_frame_walker *walker) {
    if (!sps__crash_on() || !stack) return;
    pthread_mutex_lock(&g_smp_lock);
    if (g_smp.fd >= 0) {
        int ok = 1;
        if (stack >= g_smp.cap_seen) {
            size_t cap = g_smp.cap_seen ? g_smp.cap_seen : 1024;
            while (cap <= stack) cap *= 2;
            uint64_t *v = realloc(g_smp.seen, cap * sizeof *v);
            if (v) {
                memset(v + g_smp.cap_seen, 0, (cap - g_smp.cap_seen) * sizeof *v);
                g_smp.seen = v;
                g_smp.cap_seen = cap;
            } else {
                ok = 0;
            }
        }
        if (ok && g_smp.seen[stack] != g_smp.gen) {
            ok = smp_stack(stack, w, nn, nr, walker) == 0;
            if (ok) g_smp.seen[stack] = g_smp.gen;
        }
        if (ok && g_smp.fd >= 0) {
            if (g_smp.n == SPS__CSMP_BATCH_MAX) smp_flush(0, 0);
            sps__csmp_rec_t r = {ticks, tid, stack, weight, 0};
            memcpy(g_smp.buf + 24 + (size_t)g_smp.n * sizeof r, &r, sizeof r);
            g_smp.n++;
        }
    }
    pthread_mutex_unlock(&g_smp_lock);
}

void sps__crash_samples_flush(int hz, uint64_t lost) {
    if (!sps__crash_on()) return;
    pthread_mutex_lock(&g_smp_lock);
    smp_flush(hz, lost);
    pthread_mutex_unlock(&g_smp_lock);
}

/* A finalize wrote the samples of s (under the session lock): DONE at
 * the period's end, then the deferred ones again (they are written with
 * the call they fall in, by a later finalize). */
static void smp_consumed(const sps__snap_t *s) {
    if (!s->tm.n) return;
    pthread_mutex_lock(&g_smp_lock);
    if (g_smp.fd >= 0) {
        uint8_t b[8 + 8 + 4];
        uint64_t upto = s->tm.a[s->tm.n - 1].ticks;
        memcpy(b + 8, &upto, 8);
        smp_write(b, SPS__CSMP_DONE, 8);
        size_t nd = 0;
        for (size_t i = 0; i < s->nsamples; i++) nd += (s->samples[i].flags & SPS__SMP_DEFER) != 0;
        for (size_t i = 0; nd && i < s->nsamples && g_smp.fd >= 0;) {
            size_t k = nd < SPS__CSMP_BATCH_MAX ? nd : SPS__CSMP_BATCH_MAX;
            uint8_t *d = malloc(24 + k * sizeof(sps__csmp_rec_t) + 4);
            if (!d) break; /* lost at a crash: said in docs/crash-recovery.md */
            uint32_t m = 0;
            for (; i < s->nsamples && m < k; i++) {
                const sps__sample_t *x = &s->samples[i];
                if (!(x->flags & SPS__SMP_DEFER)) continue;
                sps__csmp_rec_t r = {x->ticks, x->tid, x->stack, x->weight, 0};
                memcpy(d + 24 + (size_t)m++ * sizeof r, &r, sizeof r);
            }
            uint32_t head[2] = {m, 0};
            uint64_t zero = 0;
            memcpy(d + 8, head, 8);
            memcpy(d + 16, &zero, 8);
            smp_write(d, SPS__CSMP_BATCH, 16 + (size_t)m * sizeof(sps__csmp_rec_t));
            free(d);
            nd -= m;
        }
    }
    pthread_mutex_unlock(&g_smp_lock);
}

/* Under the session lock: the samples file of a new directory (dir set). */
static void smp_open(void) {
    int fd = open_in_dir("samples", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    int err = errno;
    pthread_mutex_lock(&g_smp_lock);
    if (g_smp.fd >= 0) close(g_smp.fd);
    g_smp.fd = -1;
    g_smp.n = 0;
    g_smp.gen++; /* the stacks described so far are the last directory's */
    snprintf(g_smp.dir, sizeof g_smp.dir, "%s", g_crash.dir);
    g_smp.warned = 0;
    if (!g_smp.buf)
        g_smp.buf = malloc(24 + (size_t)SPS__CSMP_BATCH_MAX * sizeof(sps__csmp_rec_t) + 4);
    if (fd >= 0 && !g_smp.buf) close(fd);
    else g_smp.fd = fd;
    uint8_t b[8 + 16 + 4];
    uint64_t magic = SPS__CSMP_MAGIC;
    uint32_t v[2] = {SPS__CSMP_VERSION, 0};
    memcpy(b + 8, &magic, 8);
    memcpy(b + 16, v, 8);
    smp_write(b, SPS__CSMP_HDR, 16);
    pthread_mutex_unlock(&g_smp_lock);
    if (fd < 0)
        fprintf(stderr, "spanscope: crash safety: cannot create %s/samples (%s); a crash "
                "loses the stack samples\n", g_crash.dir, strerror(err));
}

static void smp_close(void) {
    pthread_mutex_lock(&g_smp_lock);
    if (g_smp.fd >= 0) close(g_smp.fd);
    g_smp.fd = -1;
    g_smp.n = 0;
    pthread_mutex_unlock(&g_smp_lock);
}

/* ------------------------------------------------------------------------ */
/* Chunk memory                                                              */
/* ------------------------------------------------------------------------ */

/* Under the lock (as every install): grows the slot table to hold entry
 * slot, 64 KiB at a time -- the file first, blocks reserved (a store into
 * a hole of a full disk would be a SIGBUS), then its mapping, moved if it
 * must (no reservation up front: a memory profiler such as memray counts
 * mappings).  If it cannot, that slot's owner goes to the log. */
static void slots_cover(uint64_t slot) {
    if (g_crash.slots_fd < 0 || slot < g_crash.slots_cap) return;
    uint64_t have = g_crash.slots_cap * sizeof(sps__crash_slot_t);
    uint64_t need = (slot + 1) * sizeof(sps__crash_slot_t);
    need = (need + 65535) & ~(uint64_t)65535;
    if (need > SLOTS_MAX_BYTES) need = SLOTS_MAX_BYTES;
    if (need <= have || posix_fallocate(g_crash.slots_fd, 0, (off_t)need)) return;
    void *p = g_crash.slots
        ? mremap(g_crash.slots, (size_t)have, (size_t)need, MREMAP_MAYMOVE)
        : mmap(NULL, (size_t)need, PROT_READ | PROT_WRITE, MAP_SHARED, g_crash.slots_fd, 0);
    if (p == MAP_FAILED) return;
    g_crash.slots = p;
    g_crash.slots_cap = need / sizeof(sps__crash_slot_t);
}

/* At open: the slot table's file, empty (it grows as slots are made; if
 * it cannot be made, the slots go to the log). */
static void slots_open(void) {
    g_crash.slots = NULL;
    g_crash.slots_cap = 0;
    g_crash.slots_fd = open_in("slots", O_RDWR | O_CREAT | O_TRUNC);
}

static void slots_close(void) {
    if (g_crash.slots)
        munmap(g_crash.slots, (size_t)(g_crash.slots_cap * sizeof(sps__crash_slot_t)));
    g_crash.slots = NULL;
    g_crash.slots_cap = 0;
    if (g_crash.slots_fd >= 0) close(g_crash.slots_fd);
    g_crash.slots_fd = -1;
}

/* Writes bytes zeros at o of fd (best effort: on failure the mapping's
 * faults bring the pages in, as before).  Why: MAP_POPULATE of blocks
 * posix_fallocate reserved reads every page in through the readahead path
 * (the extents are "unwritten"), 2.1-2.7 us a page here; writing them
 * first puts them in the page cache at 0.8-1.1 us a page, and the mapping
 * then only maps them (a 32 MiB pool, 64 chunks of 512 KiB: 17-22 ms of
 * the recording thread's time, against 7-9 ms).  The zeros are what a
 * fresh slot must hold anyway (see the top). */
static void zero_fill(int fd, int64_t o, size_t bytes) {
    static const char zeros[1 << 16];
    struct iovec iov[16];
    while (bytes) {
        int n = 0;
        size_t len = 0;
        while (n < 16 && len < bytes) {
            size_t k = bytes - len < sizeof zeros ? bytes - len : sizeof zeros;
            iov[n++] = (struct iovec){(void *)zeros, k};
            len += k;
        }
        ssize_t w = pwritev(fd, iov, n, (off_t)o);
        if (w <= 0) return;
        o += w;
        bytes -= (size_t)w;
    }
}

uint64_t *sps__crash_chunk_map(int64_t *off) {
    *off = -1;
    if (!g_crash.on) return NULL;
    size_t bytes = (size_t)sps__g.chunk_recs * sizeof(uint64_t);
    int64_t o = g_crash.chunks_end;
    /* blocks reserved now: a store into a hole of a full disk would be a
     * SIGBUS in the recording thread */
    int rc = posix_fallocate(g_crash.chunks_fd, o, (off_t)bytes);
    if (rc) {
        if (!g_crash.map_warned) {
            g_crash.map_warned = 1;
            fprintf(stderr, "spanscope: crash safety: %s/chunks cannot grow (%s); new chunks "
                    "are private memory\n", g_crash.dir, strerror(rc));
        }
        return NULL;
    }
    zero_fill(g_crash.chunks_fd, o, bytes);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   g_crash.chunks_fd, (off_t)o);
    if (p == MAP_FAILED) return NULL;
    g_crash.chunks_end = o + (int64_t)bytes;
    *off = o;
    slots_cover((uint64_t)o / bytes);
    return p;
}

/* Under the lock: clears a mapped chunk going back to the pool (see top). */
void sps__crash_chunk_clear(sps__chunk_t *c) {
    if (c->live_off >= 0 && c->rec)
        memset(c->rec, 0, (size_t)c->cap * sizeof(uint64_t));
}

void sps__chunk_mem_free(sps__chunk_t *c) {
    if (!c->rec) return;
    if (c->live_off >= 0 || c->mapped)
        munmap(c->rec, (size_t)c->cap * sizeof(uint64_t));
    else
        free(c->rec);
    c->rec = NULL;
}

/* ------------------------------------------------------------------------ */
/* The session                                                               */
/* ------------------------------------------------------------------------ */

/* Whether this session is to be crash-safe: sps_crash_safe, else
 * SPANSCOPE_CRASH_SAFE, for an events session with a file.  The default is
 * on, but for the session a fork child inherits from a recording parent
 * (not one the child sets up itself): a child that execs (fork+exec is most forks)
 * runs no exit handler, and would leave a directory behind each time;
 * SPANSCOPE_CRASH_SAFE=1 (or sps_crash_safe(1)) turns it on there too. */
static int wanted(void) {
    if (!sps__g.file_path || !*sps__g.file_path || sps__g.mode != SPS__EVENTS) return 0;
    int w = __atomic_load_n(&g_crash.want, __ATOMIC_RELAXED);
    if (w >= 0) return w;
    const char *e = getenv("SPANSCOPE_CRASH_SAFE");
    if (e && (!strcmp(e, "0") || !strcasecmp(e, "false") || !strcasecmp(e, "no") ||
              !strcasecmp(e, "off")))
        return 0;
    if (e && (!strcmp(e, "1") || !strcasecmp(e, "true") || !strcasecmp(e, "yes") ||
              !strcasecmp(e, "on")))
        return 1;
    return !g_crash.forked;
}

static int open_in(const char *name, int flags) {
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", g_crash.dir, name) >= (int)sizeof p) return -1;
    return open(p, flags | O_CLOEXEC, 0600);
}

int sps__crash_spill_open(void) {
    if (!g_crash.on || !g_crash.spill_path) return -1;
    return open(g_crash.spill_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* Where the spill file goes: cfg.spill_dir when set (a local scratch disk,
 * say; the log names it), else the live directory. */
static char *spill_path_make(void) {
    char p[PATH_MAX];
    const char *sd = sps__g.spill_dir;
    if (sd && *sd) {
        const char *base = strrchr(g_crash.dir, '/');
        base = base ? base + 1 : g_crash.dir;
        if (snprintf(p, sizeof p, "%s/%s.spill", sd, base) >= (int)sizeof p) return NULL;
    } else if (snprintf(p, sizeof p, "%s/spill", g_crash.dir) >= (int)sizeof p) {
        return NULL;
    }
    return strdup(p);
}

static void remove_dir(void) {
    static const char *const names[] = {"log", "chunks", "samples", "slots"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (snprintf(p, sizeof p, "%s/%s", g_crash.dir, names[i]) < (int)sizeof p) unlink(p);
    if (g_crash.spill_path) unlink(g_crash.spill_path);
    rmdir(g_crash.dir);
}

static void close_fds(void) {
    smp_close();
    pthread_mutex_lock(&g_log_lock);
    if (g_crash.log_fd >= 0) close(g_crash.log_fd);
    g_crash.log_fd = -1;
    pthread_mutex_unlock(&g_log_lock);
    if (g_crash.chunks_fd >= 0) close(g_crash.chunks_fd);
    g_crash.chunks_fd = -1;
    slots_close();
}

/* The header entry: what a reader needs before anything else. */
static void log_header(void) {
    uint8_t b[4 * 4004 + sizeof(sps__crash_hdr_t)]; /* four strings of at most 4000 */
    sps__crash_hdr_t h = {0};
    h.magic = SPS__CRASH_MAGIC;
    h.version = SPS__CRASH_VERSION;
    h.pid = getpid();
    h.ppid = getppid();
    h.chunk_recs = sps__g.chunk_recs;
    h.ns_per_tick = sps__timemap_scale(&sps__g.tm);
    h.wall_anchor_ns = sps__g.wall_anchor_ns;
    h.mono_anchor_ns = sps__g.mono_anchor_ns;
    h.rank = sps__g.cfg.rank;
    h.size = sps__g.cfg.size;
    h.track = (uint32_t)sps__g.cfg.track;
    memcpy(b, &h, sizeof h);
    size_t n = sizeof h;
    n += put_str(b + n, sps__g.file_path, 4000);
    n += put_str(b + n, sps__g.label, 4000);
    n += put_str(b + n, g_crash.spill_path, 4000);
    /* the values each record's group holds (cfg.track), one name a line:
     * recover reads counters' records with the same names */
    char vn[4000];
    size_t k = 0;
    vn[0] = 0;
    for (uint32_t i = 0; i < sps__g.nvals && k < sizeof vn; i++) {
        const char *name = sps__values_name(i);
        int w = snprintf(vn + k, sizeof vn - k, "%s%s", i ? "\n" : "", name ? name : "?");
        if (w < 0 || (size_t)w >= sizeof vn - k) break;
        k += (size_t)w;
    }
    /* within one entry (a longer one is not written): the names are cut */
    size_t room = n + 12 < SPS__CRASH_ENTRY_MAX ? SPS__CRASH_ENTRY_MAX - 12 - n : 0;
    n += put_str(b + n, vn, room > 4004 ? 4000 : room > 4 ? room - 4 : 0);
    log_put(SPS__CRASH_HDR, b, n);
}

int sps__crash_open(void) {
    g_crash.gen++;
    int w = wanted();
    g_crash.forked = 0; /* a later session is the child's own choice */
    if (!w) return 0;
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s.live-%d", sps__g.file_path, (int)getpid()) >=
        (int)sizeof dir)
        return 0;
    free(g_crash.dir);
    g_crash.dir = strdup(dir);
    if (!g_crash.dir) return 0;
    free(g_crash.spill_path);
    g_crash.spill_path = spill_path_make();
    g_crash.map_warned = 0;
    if (mkdir(dir, 0700) && errno != EEXIST) {
        fprintf(stderr, "spanscope: crash safety off: cannot create %s (%s)\n", dir,
                strerror(errno));
        return 0;
    }
    int log_fd = open_in("log", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    pthread_mutex_lock(&g_log_lock);
    g_crash.log_fd = log_fd;
    g_crash.warned = 0;
    pthread_mutex_unlock(&g_log_lock);
    g_crash.chunks_fd = open_in("chunks", O_RDWR | O_CREAT | O_TRUNC);
    if (g_crash.log_fd < 0 || g_crash.chunks_fd < 0) {
        fprintf(stderr, "spanscope: crash safety off: cannot create files in %s (%s)\n", dir,
                strerror(errno));
        close_fds();
        remove_dir();
        return 0;
    }
    g_crash.chunks_end = 0;
    slots_open();
    log_header(); /* first: a reader needs it before anything else */
    smp_open();
    for (size_t i = 0; i < sps__g.tm.n; i++) log_put(SPS__CRASH_ANCHOR, &sps__g.tm.a[i],
                                                     sizeof sps__g.tm.a[i]);
    /* from here names interned by other threads are logged as they come;
     * the earlier ones now (one may be logged twice: readers take either) */
    __atomic_store_n(&g_crash.on, 1, __ATOMIC_RELAXED);
    uint32_t nr = sps__registry_count();
    for (uint32_t r = 1; r < nr; r++) sps__crash_region(r, sps__registry_name(r));
    return 1;
}

/* Whether any thread holds records no finalize has written. */
static int unwritten(void) {
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        if (t->epoch != sps__g.epoch) continue;
        if (t->head) return 1;
        if (t->cur && !t->dropping) {
            const uint64_t *p = atomic_load_explicit(&t->pos, memory_order_acquire);
            /* a chunk holds its HI record and maybe a value group alone */
            if ((uint32_t)(p - t->cur->rec) > t->cur->consumed + 1 + SPS__VAL_MAX + 1)
                return 1;
        }
    }
    return sps__g.pending != NULL;
}

void sps__crash_close(int force_remove) {
    if (!g_crash.on) return;
    /* the spill writer logs without the lock: let its job end first */
    while (sps__g.sp.busy) pthread_cond_wait(&sps__g.sp.done, &sps__g.lock);
    __atomic_store_n(&g_crash.on, 0, __ATOMIC_RELAXED);
    int keep = !force_remove && unwritten();
    close_fds();
    if (!keep) remove_dir();
    else
        fprintf(stderr, "spanscope: the session ended without writing everything it "
                "recorded; `spanscope recover %s` writes it\n", sps__g.file_path);
}

void sps__crash_release(void) {
    pthread_mutex_lock(&sps__g.lock);
    if (g_crash.on && sps__g.pid == getpid()) {
        while (sps__g.sp.busy) pthread_cond_wait(&sps__g.sp.done, &sps__g.lock);
        __atomic_store_n(&g_crash.on, 0, __ATOMIC_RELAXED);
        close_fds();
        remove_dir();
    }
    pthread_mutex_unlock(&sps__g.lock);
}

/* At exit: a session whose records were all written leaves nothing behind;
 * one that was not finalized keeps its directory (and says so). */
static void at_exit(void) {
    pthread_mutex_lock(&sps__g.lock);
    if (g_crash.on && sps__g.pid == getpid()) sps__crash_close(0);
    pthread_mutex_unlock(&sps__g.lock);
}

void sps__crash_process_init(void) { atexit(at_exit); }

/* ------------------------------------------------------------------------ */
/* Fork                                                                      */
/* ------------------------------------------------------------------------ */

/* Replaces the shared mapping of c (if it is one) by private memory with
 * the same bytes, at the same address. */
static void privatize(sps__chunk_t *c) {
    if (!c || !c->rec || c->live_off < 0) return;
    size_t bytes = (size_t)c->cap * sizeof(uint64_t);
    void *tmp = malloc(bytes);
    if (tmp) memcpy(tmp, c->rec, bytes);
    void *p = mmap(c->rec, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED && tmp) memcpy(p, tmp, bytes);
    free(tmp);
    c->live_off = -1;
    c->mapped = 1;
}

/* In a fork child, before anything else runs: the parent's live files are
 * the parent's.  Every chunk the child can reach becomes private memory,
 * and the child's descriptors of the files are closed. */
void sps__crash_atfork_child(void) {
    pthread_mutex_init(&g_log_lock, NULL); /* another thread may have held it */
    pthread_mutex_init(&g_smp_lock, NULL);
    if (g_smp.fd >= 0) close(g_smp.fd);
    g_smp.fd = -1;
    g_smp.n = 0;
    g_crash.forked = sps__state_load() != SPS__OFF; /* the parent recorded */
    if (!g_crash.on && g_crash.log_fd < 0 && g_crash.chunks_fd < 0) return;
    __atomic_store_n(&g_crash.on, 0, __ATOMIC_RELAXED);
    close_fds();
    for (sps__chunk_t *c = sps__g.free_mem; c; c = c->next) privatize(c);
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        privatize(t->cur);
        for (sps__chunk_t *c = t->head; c; c = c->next) privatize(c);
    }
    if (sps__g.pending)
        for (sps__chunk_t *c = sps__g.pending->owned; c; c = c->next) privatize(c);
}

