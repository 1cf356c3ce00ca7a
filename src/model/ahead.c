/* ahead.c -- reading on a helper thread while the caller folds.
 *
 * One thread's records are one stack: its fold cannot be cut in two
 * without the stack at the cut.  What can run beside the fold is the
 * reading -- the spill file's pread, the unpacking, ticks to ns.  A helper
 * calls the reader's fill function to decode events into a ring of
 * AHEAD_BLOCKS blocks of AHEAD_EVENTS, which the caller takes in order.
 * A long analysis of one thread reads this way (analyze.c).  The merged
 * pass over a period one thread recorded was tried too and is not: with
 * the compressing worker there were three busy threads on two cores, and
 * finalize's pass took 4.5 s of 10^8 calls instead of 4.1 s
 * (docs/benchmarks.md, 2026-12-05).
 *
 * The ring is 768 KiB; the helper refills it when half of it is free, so
 * that each side sleeps and wakes once per few blocks, not per block.
 * 10^8 calls of one thread: docs/benchmarks.md. */
#include "model/model.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#  define AHEAD_PAUSE() _mm_pause()
#else
#  define AHEAD_PAUSE() ((void)0)
#endif

#define AHEAD_EVENTS 4096u
#define AHEAD_BLOCKS 8u
/* Polls of an empty ring before the folder sleeps (~20-80 us of pause
 * instructions, about a block's reading): a fold faster than its reader
 * (runs of leaf calls) otherwise slept and was woken for every block. */
#define AHEAD_SPINS 2000

struct sps__ahead {
    pthread_mutex_t mu;
    pthread_cond_t room, ready;  /* for the reader; for the folder */
    pthread_t th;
    sps__ev_t *ev;               /* AHEAD_BLOCKS blocks of AHEAD_EVENTS */
    uint32_t len[AHEAD_BLOCKS];  /* events of each filled block */
    _Atomic uint64_t filled;     /* blocks so far: the reader's (under mu) ... */
    uint64_t taken;              /* ... and the folder's (under mu) */
    _Atomic int done;            /* the reader ended (under mu) */
    int reader_waits, folder_waits, stop, holding;
    int rc;                      /* the reader's last code, once done */
    sps__ahead_fill_fn fill;
    void *ctx;
};

int sps__ahead_allowed(void) {
    static long ncpu;
    if (!ncpu) ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return ncpu > 1 && !sps__g.sp.forked;
}

/* Under a->mu: the next block is filled with n events; wakes the folder. */
static void publish(sps__ahead_t *a, uint32_t n) {
    a->len[a->filled % AHEAD_BLOCKS] = n;
    a->filled++;
    if (a->folder_waits) pthread_cond_signal(&a->ready);
}

/* The helper: fills blocks until the reader ends or the folder stops it. */
static void *ahead_main(void *arg) {
    sps__ahead_t *a = arg;
    int rc = 1;
    while (rc > 0) {
        pthread_mutex_lock(&a->mu);
        if (a->filled - a->taken == AHEAD_BLOCKS && !a->stop) {
            a->reader_waits = 1;
            while (a->filled - a->taken > AHEAD_BLOCKS / 2 && !a->stop)
                pthread_cond_wait(&a->room, &a->mu);
            a->reader_waits = 0;
        }
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) break;
        uint32_t n = 0;
        rc = a->fill(a->ctx, a->ev + (a->filled % AHEAD_BLOCKS) * AHEAD_EVENTS,
                     AHEAD_EVENTS, &n);
        pthread_mutex_lock(&a->mu);
        publish(a, n);
        if (rc <= 0) a->rc = rc;
        pthread_mutex_unlock(&a->mu);
    }
    pthread_mutex_lock(&a->mu);
    a->done = 1;
    pthread_cond_signal(&a->ready);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

sps__ahead_t *sps__ahead_start(sps__ahead_fill_fn fill, void *ctx) {
    sps__ahead_t *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->fill = fill;
    a->ctx = ctx;
    a->rc = 1;
    a->ev = malloc((size_t)AHEAD_BLOCKS * AHEAD_EVENTS * sizeof *a->ev);
    int ok = a->ev && pthread_mutex_init(&a->mu, NULL) == 0;
    int cv = ok && pthread_cond_init(&a->room, NULL) == 0;
    int cv2 = cv && pthread_cond_init(&a->ready, NULL) == 0;
    if (cv2 && pthread_create(&a->th, NULL, ahead_main, a) == 0) return a;
    if (cv2) pthread_cond_destroy(&a->ready);
    if (cv) pthread_cond_destroy(&a->room);
    if (ok) pthread_mutex_destroy(&a->mu);
    free(a->ev);
    free(a);
    return NULL;
}

const sps__ev_t *sps__ahead_take(sps__ahead_t *a, uint32_t *n) {
    pthread_mutex_lock(&a->mu);
    if (a->holding) { /* the block taken before is folded: its room is free */
        a->taken++;
        a->holding = 0;
        if (a->reader_waits && a->filled - a->taken <= AHEAD_BLOCKS / 2)
            pthread_cond_signal(&a->room);
    }
    if (a->filled == a->taken && !a->done) { /* poll a while before sleeping */
        pthread_mutex_unlock(&a->mu);
        for (int i = 0; i < AHEAD_SPINS; i++) {
            if (atomic_load_explicit(&a->filled, memory_order_relaxed) != a->taken ||
                atomic_load_explicit(&a->done, memory_order_relaxed))
                break;
            AHEAD_PAUSE();
        }
        pthread_mutex_lock(&a->mu);
    }
    a->folder_waits = 1;
    while (a->filled == a->taken && !a->done) pthread_cond_wait(&a->ready, &a->mu);
    a->folder_waits = 0;
    const sps__ev_t *blk = NULL;
    if (a->filled != a->taken) {
        *n = a->len[a->taken % AHEAD_BLOCKS];
        blk = a->ev + (a->taken % AHEAD_BLOCKS) * AHEAD_EVENTS;
        a->holding = 1;
    }
    pthread_mutex_unlock(&a->mu);
    return blk;
}

int sps__ahead_end(sps__ahead_t *a) {
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_signal(&a->room);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    int rc = a->rc;
    pthread_cond_destroy(&a->ready);
    pthread_cond_destroy(&a->room);
    pthread_mutex_destroy(&a->mu);
    free(a->ev);
    free(a);
    return rc;
}
