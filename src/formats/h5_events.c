/* h5_events.c -- the event columns of an HDF5 file, assembled chunk by
 * chunk in memory and compressed on worker threads.
 *
 * The writer's callers (finalize's merged pass, merge) write rows region by
 * region in time order, so writes land all over /events; each region's rows
 * come in order, though, so only a few chunks are ever partly written at
 * once.  Every chunk (ch rows of each of the ncols columns) is assembled in
 * a buffer; the moment its last row and last pending duration are in, it
 * goes to a worker thread, which does HDF5's shuffle + deflate itself
 * (deflate.c), and the writing thread stores the result with
 * H5Dwrite_chunk.  Each chunk is compressed once, by one of the cores, and
 * nothing is written twice.
 *
 * Memory is bounded: at most `bufs_max` chunk buffers exist (open,
 * compressing or waiting to be written).  When a write needs a chunk and
 * none is free, the writer waits for the workers; when every buffer is
 * held by an open chunk (many regions interleaved, or calls that stay open
 * long), the new chunk is staged instead: its rows go with pwrite to an
 * unlinked staging file next to the output (chunk-major, so a chunk is one
 * range), and when it is complete it is read back, compressed and written
 * like the others.  The staging file is sparse: only staged chunks use it.
 *
 * Datasets stored contiguously (small ones, or compression switched off)
 * take the same path with "chunks" of rows that are written with H5Dwrite
 * as they complete, without workers.
 *
 * Threads: only the thread that calls sps__evcols_* uses HDF5; workers
 * touch only the buffers of their jobs. */
#include "formats/formats.h"
#include "formats/h5_read.h"

#include <hdf5.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_WORKERS 4
#define OPEN_BUFS_MAX 8 /* chunk buffers for open chunks, besides those in flight */

#define PARK_BUDGET (8u << 20) /* bytes of parked duration columns */

enum { S_EMPTY, S_OPEN, S_STAGED, S_PARKED, S_DONE };

/* A chunk whose rows are all in but some durations are not (calls still
 * running: an outer call, a thread preempted inside one).  Its other
 * columns are written; its duration column waits here compactly
 * (sps__coder_park), with the durations that came since. */
typedef struct park {
    unsigned char *blob;
    size_t len;
    uint32_t n, cap;  /* durations received, expected */
    uint32_t *row;
    int64_t *dur;
} park_t;

typedef struct slot {
    int64_t *buf;        /* S_OPEN: ncols x ch elements */
    park_t *park;        /* S_PARKED */
    uint32_t rows_left;  /* rows not yet written */
    uint32_t pending;    /* rows written with their duration still to come */
    uint8_t state;
} slot_t;

typedef struct job {
    uint64_t k;                 /* chunk index */
    unsigned mask;              /* columns to compress and write */
    int64_t *buf;               /* owned until written */
    unsigned char *z[SPS__EV_MAX];
    size_t zlen[SPS__EV_MAX];
    int rc;
    struct job *next;
} job_t;

struct sps__evcols {
    hid_t ds[SPS__EV_MAX];      /* borrowed */
    int ncols, compressed, dur_col;
    uint64_t n, ch, nchunks;
    slot_t *slot;
    /* chunk buffers */
    int64_t **free_bufs;
    size_t nfree, bufs_live, bufs_max;
    /* staging */
    int stage_fd;
    char *dir;
    /* workers */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    job_t *todo, *todo_tail, *finished;
    size_t inflight; /* jobs submitted and not yet written */
    pthread_t th[MAX_WORKERS];
    int nworkers, stop, mu_ok;
    int queue;           /* a complete chunk may wait for a busy worker */
    sps__coder_t *coder; /* the writing thread's, for inline or helping */
    int err;
    sps__h5res_t *res;          /* disk space reserved ahead (h5.c), or NULL */
    uint64_t *open_k;           /* the open chunks, nopen of them */
    size_t nopen;
    size_t parked_bytes;
    uint64_t nstaged, nevicted, nparked, nwritten; /* chunks (tests, benchmarks) */
};

/* ------------------------------------------------------------------------ */
/* Compression jobs                                                          */
/* ------------------------------------------------------------------------ */

/* Compresses every column of job j's chunk with coder c. */
static void job_run(const sps__evcols_t *e, sps__coder_t *c, job_t *j) {
    j->rc = 0;
    for (int col = 0; col < e->ncols && !j->rc; col++)
        if (j->mask >> col & 1)
            j->rc = sps__coder_column(c, col, j->buf + (uint64_t)col * e->ch,
                                  (size_t)e->ch, &j->z[col], &j->zlen[col]);
}

/* A worker compresses as small as it can (libdeflate's split stream for
 * the columns that vary) while it keeps up; when it falls behind -- a
 * complete chunk is waiting already when it finishes one -- the pass is
 * about to wait for it, so it takes ISA-L level 1 for every column, 2-4 x faster
 * for 10-30 % more bytes, until it has caught up (issue 37 part 4: on two
 * vCPUs the pass and the compression share the cores).  The values are
 * the same either way. */
static void *worker_main(void *arg) {
    sps__evcols_t *e = arg;
    sps__coder_t *c = sps__coder_new((size_t)e->ch * 8);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        /* behind: the chunk was waiting when this worker finished the last
         * one (it did not wait for work), so the writing thread, which
         * lets one chunk wait per worker, soon compresses instead of
         * running the pass */
        int behind = 1;
        while (!e->todo && !e->stop) {
            behind = 0;
            pthread_cond_wait(&e->work, &e->mu);
        }
        if (!e->todo) break;
        job_t *j = e->todo;
        e->todo = j->next;
        if (!e->todo) e->todo_tail = NULL;
        pthread_mutex_unlock(&e->mu);
        if (c) sps__coder_fast_columns(c, behind ? 0xFFu : 1u << e->dur_col);
        if (c) job_run(e, c, j);
        else j->rc = SPS_ENOMEM;
        pthread_mutex_lock(&e->mu);
        j->next = e->finished;
        e->finished = j;
        pthread_cond_broadcast(&e->done);
    }
    pthread_mutex_unlock(&e->mu);
    sps__coder_free(c);
    return NULL;
}

/* The number of worker threads: the online CPUs but one (the writing
 * thread keeps one), at most MAX_WORKERS; SPANSCOPE_WRITE_THREADS=N sets
 * it (0: compress on the writing thread).  None in a forked child of a
 * threaded process, as the spill writer (core/spill.c): some runtimes
 * (ThreadSanitizer's among them) refuse threads there. */
static int workers_wanted(void) {
    const char *env = getenv("SPANSCOPE_WRITE_THREADS");
    long n;
    if (sps__g.sp.forked) return 0;
    if (env && *env) n = strtol(env, NULL, 10);
    else n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
    if (n < 0) n = 0;
    return n > MAX_WORKERS ? MAX_WORKERS : (int)n;
}

static void buf_release(const sps__evcols_t *e, int64_t *b);

/* Gives chunk buffer b back: kept for reuse, or unmapped when it was one
 * taken over the budget. */
static void buf_put(sps__evcols_t *e, int64_t *b) {
    if (e->bufs_live <= e->bufs_max && e->nfree < e->bufs_max) {
        e->free_bufs[e->nfree++] = b;
        return;
    }
    buf_release(e, b);
    e->bufs_live--;
}

/* Stores the compressed columns of job j with H5Dwrite_chunk and gives its
 * buffer back.  Returns 0 or an SPS_E code. */
static int job_write(sps__evcols_t *e, job_t *j) {
    int rc = j->rc;
    hsize_t off = (hsize_t)(j->k * e->ch);
    uint64_t bytes = 4096; /* the chunk index's growth */
    for (int col = 0; col < e->ncols; col++)
        if (j->mask >> col & 1) bytes += j->zlen[col];
    if (!rc && e->res) rc = sps__h5_reserve(e->res, bytes);
    for (int col = 0; col < e->ncols && !rc; col++) {
        if (!(j->mask >> col & 1)) continue;
        errno = 0;
        if (H5Dwrite_chunk(e->ds[col], H5P_DEFAULT, 0, &off, j->zlen[col],
                           j->z[col]) < 0)
            rc = sps__h5_fail();
    }
    for (int col = 0; col < e->ncols; col++) free(j->z[col]);
    buf_put(e, j->buf);
    free(j);
    e->inflight--;
    return rc;
}

/* Writes the jobs the workers have finished; with wait, first waits until
 * at least one has finished (when any is in flight).  Returns 0 or the
 * first error. */
static int jobs_collect(sps__evcols_t *e, int wait) {
    if (!e->nworkers) return 0;
    pthread_mutex_lock(&e->mu);
    if (wait && !e->finished && e->todo) { /* help rather than wait */
        job_t *j = e->todo;
        e->todo = j->next;
        if (!e->todo) e->todo_tail = NULL;
        pthread_mutex_unlock(&e->mu);
        job_run(e, e->coder, j);
        pthread_mutex_lock(&e->mu);
        j->next = e->finished;
        e->finished = j;
    }
    while (wait && !e->finished && e->inflight) pthread_cond_wait(&e->done, &e->mu);
    job_t *j = e->finished;
    e->finished = NULL;
    pthread_mutex_unlock(&e->mu);
    int rc = 0;
    while (j) {
        job_t *next = j->next;
        int r = job_write(e, j);
        if (!rc) rc = r;
        j = next;
    }
    return rc;
}

/* Hands chunk k (its buffer b, now owned by the job) to the workers, or
 * compresses and writes it here when there are none.  Returns 0 or an
 * SPS_E code. */
static int job_submit(sps__evcols_t *e, uint64_t k, int64_t *b, unsigned mask) {
    job_t *j = calloc(1, sizeof *j);
    if (!j) {
        buf_put(e, b);
        return SPS_ENOMEM;
    }
    j->k = k;
    j->mask = mask;
    j->buf = b;
    e->inflight++;
    if (!e->nworkers) {
        job_run(e, e->coder, j);
        return job_write(e, j);
    }
    pthread_mutex_lock(&e->mu);
    if (e->todo_tail) e->todo_tail->next = j;
    else e->todo = j;
    e->todo_tail = j;
    pthread_cond_signal(&e->work);
    pthread_mutex_unlock(&e->mu);
    /* one job running per worker, and one waiting where the caller lets
     * it (sps__evcols_queue): more would only hold memory */
    int rc = jobs_collect(e, 0);
    size_t most = (size_t)e->nworkers * (e->queue ? 2 : 1);
    while (!rc && e->inflight > most) rc = jobs_collect(e, 1);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Chunk buffers and the staging file                                        */
/* ------------------------------------------------------------------------ */

/* A chunk buffer holds the ncols columns of ch rows, then a bitmap of the
 * rows written: a chunk flushed before all its rows came (misuse, or a
 * failed write) gets zeros in the others, without zeroing every buffer. */
static size_t bitmap_words(const sps__evcols_t *e) { return (size_t)(e->ch + 63) / 64; }
static size_t buf_bytes(const sps__evcols_t *e) {
    return (size_t)e->ch * (size_t)e->ncols * 8 + bitmap_words(e) * 8;
}
/* Chunk buffers are mapped and unmapped whole: through malloc, a freed
 * buffer raises glibc's mmap threshold and the next ones come from the
 * heap, which keeps freed memory resident. */
static int64_t *buf_alloc(const sps__evcols_t *e) {
    void *p = mmap(NULL, buf_bytes(e), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
static void buf_release(const sps__evcols_t *e, int64_t *b) {
    if (b) munmap(b, buf_bytes(e));
}

static uint64_t *bitmap_of(const sps__evcols_t *e, int64_t *b) {
    return (uint64_t *)(b + e->ch * (uint64_t)e->ncols);
}

/* Marks rows [r, r + m) of buffer b written. */
static void rows_mark(const sps__evcols_t *e, int64_t *b, uint64_t r, size_t m) {
    uint64_t *bm = bitmap_of(e, b);
    for (uint64_t i = r, end = r + m; i < end;) {
        uint64_t w = i / 64, bit = i % 64, take = 64 - bit < end - i ? 64 - bit : end - i;
        bm[w] |= (take == 64 ? ~0ULL : ((1ULL << take) - 1)) << bit;
        i += take;
    }
}

/* Zeroes the rows of b never marked written. */
static void rows_zero_unwritten(const sps__evcols_t *e, int64_t *b) {
    const uint64_t *bm = bitmap_of(e, b);
    for (uint64_t i = 0; i < e->ch; i++)
        if (!(bm[i / 64] >> (i % 64) & 1))
            for (int col = 0; col < e->ncols; col++) b[(uint64_t)col * e->ch + i] = 0;
}

/* A chunk buffer with no row marked written, or NULL when all bufs_max
 * are held by open chunks (or on ENOMEM).  Waits for the workers when
 * they hold one. */
static int64_t *buf_get(sps__evcols_t *e) {
    for (;;) {
        if (e->nfree && e->bufs_live - e->nfree < e->bufs_max) {
            int64_t *b = e->free_bufs[--e->nfree];
            memset(bitmap_of(e, b), 0, bitmap_words(e) * 8);
            return b;
        }
        if (e->bufs_live < e->bufs_max) {
            int64_t *b = buf_alloc(e);
            if (b) {
                e->bufs_live++;
                memset(bitmap_of(e, b), 0, bitmap_words(e) * 8);
            }
            return b;
        }
        if (!e->inflight) return NULL;
        int rc = jobs_collect(e, 1);
        if (rc && !e->err) e->err = rc;
    }
}

static int stage_open(sps__evcols_t *e) {
    if (e->stage_fd >= 0) return 0;
    e->stage_fd = sps__tmpfile_open(e->dir, ".spanscope-stage-");
    return e->stage_fd < 0 ? SPS_EIO : 0;
}

/* The staging file offset of row r (within chunk k) of column col. */
static off_t stage_off(const sps__evcols_t *e, uint64_t k, int col, uint64_t r) {
    return (off_t)((((k * (uint64_t)e->ncols) + (uint64_t)col) * e->ch + r) * 8);
}

/* Reads staged chunk k into b; what was never written reads as zeros. */
static int stage_read(sps__evcols_t *e, uint64_t k, int64_t *b) {
    size_t bytes = (size_t)e->ch * 8;
    for (int col = 0; col < e->ncols; col++) {
        int64_t *dst = b + (uint64_t)col * e->ch;
        ssize_t got = sps__pread_full(e->stage_fd, dst, bytes, stage_off(e, k, col, 0));
        if (got < 0) return SPS_EIO;
        memset((char *)dst + got, 0, bytes - (size_t)got);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Chunks                                                                    */
/* ------------------------------------------------------------------------ */

/* Rows of chunk k (the last one may be short). */
static uint32_t chunk_rows(const sps__evcols_t *e, uint64_t k) {
    uint64_t first = k * e->ch;
    return (uint32_t)(e->n - first < e->ch ? e->n - first : e->ch);
}

/* Writes the uncompressed chunk k from b with H5Dwrite (contiguous
 * datasets) and gives b back. */
static int plain_write(sps__evcols_t *e, uint64_t k, int64_t *b) {
    hsize_t start = (hsize_t)(k * e->ch), count = chunk_rows(e, k);
    int rc = e->res ? sps__h5_reserve(e->res, (uint64_t)count * 8 * (uint64_t)e->ncols + 4096) : 0;
    for (int col = 0; col < e->ncols && !rc; col++) {
        hid_t fs = H5Dget_space(e->ds[col]);
        hid_t ms = H5Screate_simple(1, &count, NULL);
        errno = 0;
        if (fs < 0 || ms < 0 ||
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
            H5Dwrite(e->ds[col], H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT,
                     b + (uint64_t)col * e->ch) < 0)
            rc = sps__h5_fail();
        sps__h5_close(&ms);
        sps__h5_close(&fs);
    }
    buf_put(e, b);
    return rc;
}

/* Drops k from the list of open chunks. */
static void open_forget(sps__evcols_t *e, uint64_t k) {
    for (size_t i = 0; i < e->nopen; i++)
        if (e->open_k[i] == k) {
            e->open_k[i] = e->open_k[--e->nopen];
            return;
        }
}

/* Chunk k is complete (or the writer is finishing): compresses and writes
 * it, reading it back first when it was staged. */
static int chunk_unpark(sps__evcols_t *e, uint64_t k);

static int chunk_flush(sps__evcols_t *e, uint64_t k) {
    slot_t *s = &e->slot[k];
    int64_t *b = s->buf;
    int rc = 0;
    if (s->state == S_PARKED) return chunk_unpark(e, k);
    if (s->state == S_STAGED) {
        b = buf_get(e);
        if (!b) { /* every buffer is in an open chunk: one more, briefly */
            b = buf_alloc(e);
            if (!b) return SPS_ENOMEM;
            e->bufs_live++;
        }
        rc = stage_read(e, k, b);
        if (rc) {
            buf_put(e, b);
            return rc;
        }
    } else if (s->rows_left) { /* flushed early: rows never written are zeros */
        rows_zero_unwritten(e, b);
    }
    uint32_t rows = chunk_rows(e, k);
    if (rows < e->ch) /* the short last chunk: no stale bytes past the end */
        for (int col = 0; col < e->ncols; col++)
            memset(b + (uint64_t)col * e->ch + rows, 0, (size_t)(e->ch - rows) * 8);
    if (s->state == S_OPEN) open_forget(e, k);
    s->state = S_DONE;
    s->buf = NULL;
    e->nwritten++;
    return e->compressed ? job_submit(e, k, b, (1u << e->ncols) - 1) : plain_write(e, k, b);
}

static void park_free(park_t *p) {
    if (!p) return;
    free(p->blob);
    free(p->row);
    free(p->dur);
    free(p);
}

static size_t park_bytes(const park_t *p) {
    return p->len + (size_t)p->cap * (sizeof *p->row + sizeof *p->dur);
}

/* Open chunk k has all its rows but waits for durations: its other
 * columns go to the workers now, its duration column is parked (a few KB
 * instead of a buffer of every column), and the buffer is free again.
 * Beyond PARK_BUDGET the chunk stays open (chunk_evict's, then). */
static int chunk_park(sps__evcols_t *e, uint64_t k) {
    slot_t *s = &e->slot[k];
    if (e->parked_bytes > PARK_BUDGET) return 0;
    park_t *p = calloc(1, sizeof *p);
    if (!p) return SPS_ENOMEM;
    p->cap = s->pending;
    p->row = malloc((size_t)p->cap * sizeof *p->row);
    p->dur = malloc((size_t)p->cap * sizeof *p->dur);
    int rc = p->row && p->dur ? 0 : SPS_ENOMEM;
    if (!rc)
        rc = sps__coder_park(e->coder, s->buf + (uint64_t)e->dur_col * e->ch,
                             (size_t)e->ch, &p->blob, &p->len);
    if (rc) {
        park_free(p);
        return rc;
    }
    e->parked_bytes += park_bytes(p);
    e->nparked++;
    open_forget(e, k);
    int64_t *b = s->buf;
    s->buf = NULL;
    s->park = p;
    s->state = S_PARKED;
    return job_submit(e, k, b, ((1u << e->ncols) - 1) & ~(1u << e->dur_col));
}

/* Parked chunk k has its durations (or the writer is finishing): its
 * duration column, with them, goes to the workers. */
static int chunk_unpark(sps__evcols_t *e, uint64_t k) {
    slot_t *s = &e->slot[k];
    park_t *p = s->park;
    int64_t *b = buf_get(e);
    if (!b) { /* every buffer is in an open chunk: one more, briefly */
        if (!(b = buf_alloc(e))) return SPS_ENOMEM;
        e->bufs_live++;
    }
    int64_t *dur = b + (uint64_t)e->dur_col * e->ch;
    int rc = sps__coder_unpark(e->coder, p->blob, p->len, dur, (size_t)e->ch);
    for (uint32_t i = 0; !rc && i < p->n; i++) dur[p->row[i]] = p->dur[i];
    e->parked_bytes -= park_bytes(p);
    park_free(p);
    s->park = NULL;
    s->state = S_DONE;
    e->nwritten++;
    if (rc) {
        buf_put(e, b);
        return rc;
    }
    return job_submit(e, k, b, 1u << e->dur_col);
}

/* Moves an open chunk whose rows are all written (it waits only for late
 * durations: calls still running, a thread preempted inside one) to the
 * staging file, and returns its buffer for another chunk; NULL when there
 * is none such (or the staging write failed: *rc). */
static int64_t *chunk_evict(sps__evcols_t *e, int *rc) {
    for (size_t i = 0; i < e->nopen; i++) {
        uint64_t k = e->open_k[i];
        slot_t *s = &e->slot[k];
        if (s->rows_left) continue;
        if ((*rc = stage_open(e))) return NULL;
        for (int col = 0; col < e->ncols; col++)
            if (sps__pwrite_all(e->stage_fd, s->buf + (uint64_t)col * e->ch,
                                (size_t)chunk_rows(e, k) * 8, stage_off(e, k, col, 0)) < 0) {
                *rc = SPS_EIO;
                return NULL;
            }
        int64_t *b = s->buf;
        s->buf = NULL;
        s->state = S_STAGED;
        e->open_k[i] = e->open_k[--e->nopen];
        e->nevicted++;
        memset(bitmap_of(e, b), 0, bitmap_words(e) * 8);
        return b;
    }
    return NULL;
}

/* Makes chunk k writable: an open buffer if one can be had (taken from a
 * chunk that waits only for durations, if need be), else staged. */
static int chunk_open(sps__evcols_t *e, uint64_t k) {
    slot_t *s = &e->slot[k];
    int rc = 0;
    s->rows_left = chunk_rows(e, k);
    s->pending = 0;
    s->buf = buf_get(e);
    if (!s->buf) s->buf = chunk_evict(e, &rc);
    if (rc) return rc;
    if (s->buf) {
        s->state = S_OPEN;
        e->open_k[e->nopen++] = k;
        return 0;
    }
    s->state = S_STAGED;
    e->nstaged++;
    return stage_open(e);
}

/* Writes rows [r, r + m) of chunk k from the column arrays (each at their
 * element 0); negative durations are stored as 0 and counted as pending. */
static int chunk_rows_put(sps__evcols_t *e, uint64_t k, uint64_t r, size_t m,
                          const int64_t *const *cols) {
    slot_t *s = &e->slot[k];
    if (s->state == S_EMPTY) {
        int rc = chunk_open(e, k);
        if (rc) return rc;
    }
    if (s->state == S_DONE || m > s->rows_left) return SPS_EINVAL; /* written twice */
    uint32_t late = 0;
    const int64_t *dur = cols[e->dur_col];
    for (size_t i = 0; i < m; i++) late += dur[i] < 0;
    if (s->state == S_OPEN) {
        for (int col = 0; col < e->ncols; col++) {
            int64_t *dst = s->buf + (uint64_t)col * e->ch + r;
            memcpy(dst, cols[col], m * 8);
        }
        rows_mark(e, s->buf, r, m);
        if (late) {
            int64_t *d = s->buf + (uint64_t)e->dur_col * e->ch + r;
            for (size_t i = 0; i < m; i++) if (d[i] < 0) d[i] = 0;
        }
    } else {
        for (int col = 0; col < e->ncols; col++) {
            const int64_t *src = cols[col];
            int64_t *tmp = NULL;
            if (col == e->dur_col && late) {
                if (!(tmp = malloc(m * 8))) return SPS_ENOMEM;
                for (size_t i = 0; i < m; i++) tmp[i] = src[i] < 0 ? 0 : src[i];
                src = tmp;
            }
            int w = sps__pwrite_all(e->stage_fd, src, m * 8, stage_off(e, k, col, r));
            free(tmp);
            if (w < 0) return SPS_EIO;
        }
    }
    s->rows_left -= (uint32_t)m;
    s->pending += late;
    if (s->rows_left) return 0;
    if (!s->pending) return chunk_flush(e, k);
    return s->state == S_OPEN && e->compressed ? chunk_park(e, k) : 0;
}

/* ------------------------------------------------------------------------ */
/* The interface (formats.h)                                                 */
/* ------------------------------------------------------------------------ */

int sps__evcols_open(sps__evcols_t **out, const int64_t *ds, int ncols,
                     int dur_col, uint64_t n, uint64_t ch, int compressed,
                     const char *dir, size_t streams) {
    *out = NULL;
    if (ncols < 1 || ncols > SPS__EV_MAX || !ch || !dir) return SPS_EINVAL;
    sps__evcols_t *e = calloc(1, sizeof *e);
    if (!e) return SPS_ENOMEM;
    for (int i = 0; i < ncols; i++) e->ds[i] = (hid_t)ds[i];
    e->ncols = ncols;
    e->dur_col = dur_col;
    e->n = n;
    e->ch = ch;
    e->nchunks = (n + ch - 1) / ch;
    e->compressed = compressed;
    e->stage_fd = -1;
    e->nworkers = compressed ? workers_wanted() : 0;
    /* a stream of rows (a region's) has one chunk open, two where it meets
     * the next region's: buffers for that many, within OPEN_BUFS_MAX */
    size_t open = streams ? 2 * streams : 1;
    e->bufs_max = (size_t)e->nworkers + 1 + (open < OPEN_BUFS_MAX ? open : OPEN_BUFS_MAX);
    e->slot = calloc(e->nchunks ? e->nchunks : 1, sizeof *e->slot);
    e->free_bufs = calloc(e->bufs_max, sizeof *e->free_bufs);
    e->open_k = calloc(e->bufs_max + 1, sizeof *e->open_k);
    e->dir = strdup(dir);
    int rc = e->slot && e->free_bufs && e->open_k && e->dir ? 0 : SPS_ENOMEM;
    if (!rc && compressed && !(e->coder = sps__coder_new((size_t)ch * 8))) rc = SPS_ENOMEM;
    if (!rc && compressed) sps__coder_fast_columns(e->coder, 1u << dur_col);
    if (!rc && e->nworkers) {
        if (pthread_mutex_init(&e->mu, NULL) || pthread_cond_init(&e->work, NULL) ||
            pthread_cond_init(&e->done, NULL))
            rc = SPS_ENOMEM;
        else e->mu_ok = 1;
        int started = 0;
        for (int i = 0; !rc && i < e->nworkers; i++)
            if (pthread_create(&e->th[i], NULL, worker_main, e) == 0) started++;
        e->nworkers = started; /* none started: compress inline */
    }
    /* With workers, the writing thread compresses only to help them when
     * they fall behind, and then it is what finalize waits for (the merged
     * pass runs on it): it takes ISA-L level 1 for every column, 3-4 x
     * faster than libdeflate's split stream, for what the workers would
     * have written 10-30 % smaller.  The same values either way: only the
     * bytes of the chunks it helped with differ (docs/design.md, "Writing
     * /events"; issue 37 part 4).  Without workers it compresses every
     * chunk, as small as the workers would. */
    if (!rc && e->nworkers) sps__coder_fast_columns(e->coder, 0xFFu);
    if (rc) {
        sps__evcols_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

void sps__evcols_queue(sps__evcols_t *e, int wait) { e->queue = wait != 0; }

int sps__evcols_rows(sps__evcols_t *e, uint64_t first, size_t n,
                     const int64_t *const *cols) {
    if (e->err) return e->err;
    if (first > e->n || n > e->n - first) return SPS_EINVAL;
    const int64_t *c[SPS__EV_MAX];
    for (int col = 0; col < e->ncols; col++) c[col] = cols[col];
    while (n) {
        uint64_t k = first / e->ch, r = first - k * e->ch;
        size_t m = e->ch - r < n ? (size_t)(e->ch - r) : n;
        int rc = chunk_rows_put(e, k, r, m, c);
        if (rc) return e->err = rc;
        for (int col = 0; col < e->ncols; col++) c[col] += m;
        first += m;
        n -= m;
    }
    return 0;
}

int sps__evcols_duration(sps__evcols_t *e, uint64_t pos, int64_t dur) {
    if (e->err) return e->err;
    if (pos >= e->n) return SPS_EINVAL;
    uint64_t k = pos / e->ch, r = pos - k * e->ch;
    slot_t *s = &e->slot[k];
    if (s->state == S_OPEN) {
        s->buf[(uint64_t)e->dur_col * e->ch + r] = dur;
    } else if (s->state == S_STAGED) {
        if (sps__pwrite_all(e->stage_fd, &dur, 8, stage_off(e, k, e->dur_col, r)) < 0)
            return e->err = SPS_EIO;
    } else if (s->state == S_PARKED) {
        park_t *p = s->park;
        if (p->n == p->cap) return SPS_EINVAL; /* more than were announced */
        p->row[p->n] = (uint32_t)r;
        p->dur[p->n++] = dur;
    } else {
        return SPS_EINVAL; /* a row never written, or its chunk written out */
    }
    if (!s->pending) return SPS_EINVAL; /* not announced by a negative duration */
    s->pending--;
    if (!s->rows_left && !s->pending) {
        int rc = chunk_flush(e, k);
        if (rc) e->err = rc;
        return rc;
    }
    return 0;
}

int sps__evcols_finish(sps__evcols_t *e) {
    int rc = e->err;
    for (uint64_t k = 0; !rc && k < e->nchunks; k++)
        if (e->slot[k].state == S_OPEN || e->slot[k].state == S_STAGED ||
            e->slot[k].state == S_PARKED)
            rc = chunk_flush(e, k); /* rows never written are zeros */
    while (!rc && e->inflight) rc = jobs_collect(e, 1);
    if (rc) e->err = rc;
    return rc;
}

void sps__evcols_free(sps__evcols_t *e) {
    if (!e) return;
    if (e->mu_ok) {
        pthread_mutex_lock(&e->mu);
        e->stop = 1;
        pthread_cond_broadcast(&e->work);
        pthread_mutex_unlock(&e->mu);
    }
    for (int i = 0; i < e->nworkers; i++) pthread_join(e->th[i], NULL);
    /* jobs left after a failure: free without writing */
    job_t *lists[] = {e->todo, e->finished};
    for (int l = 0; l < 2; l++)
        for (job_t *j = lists[l], *next; j; j = next) {
            next = j->next;
            for (int col = 0; col < e->ncols; col++) free(j->z[col]);
            buf_release(e, j->buf);
            free(j);
        }
    if (e->mu_ok) {
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->work);
        pthread_cond_destroy(&e->done);
    }
    for (uint64_t k = 0; e->slot && k < e->nchunks; k++) {
        buf_release(e, e->slot[k].buf);
        park_free(e->slot[k].park);
    }
    for (size_t i = 0; i < e->nfree; i++) buf_release(e, e->free_bufs[i]);
    if (e->stage_fd >= 0) close(e->stage_fd);
    sps__coder_free(e->coder);
    free(e->free_bufs);
    free(e->open_k);
    free(e->slot);
    free(e->dir);
    free(e);
}

void sps__evcols_counts(const sps__evcols_t *e, uint64_t *staged,
                        uint64_t *parked, uint64_t *written, int *workers) {
    *staged = e->nstaged + e->nevicted;
    *parked = e->nparked;
    *written = e->nwritten;
    *workers = e->nworkers;
}

void sps__evcols_reserve(sps__evcols_t *e, sps__h5res_t *res) { e->res = res; }
