/* mh_threads.c -- under LD_PRELOAD=libspanscope_malloc.so, each thread's
 * allocations land in its own counters: 4 threads allocate known blocks at
 * the same time and each checks its own counts exactly; a thread that
 * holds 8 MiB never shows in the main thread's counters; a block
 * allocated on one thread and freed on another counts as a free on the
 * freeing thread. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <string.h>

#include "mh_common.h"

#define NT 4
#define ROUNDS 2000

static pthread_barrier_t start;

typedef struct {
    int id;
    long long failures;
} worker_t;

static void *worker(void *arg) {
    worker_t *w = arg;
    mh_expect_t e = {0, 0, 0, 0};
    sps_mem_counts_t c0, c1;
    void *keep[64];
    pthread_barrier_wait(&start);
    sps_mem_thread_counts(&c0);
    for (int r = 0; r < ROUNDS; r++) {
        int slot = r % 64;
        if (r >= 64) {
            e.free_bytes += malloc_usable_size(keep[slot]);
            e.frees++;
            free(keep[slot]);
        }
        keep[slot] = malloc((size_t)(16 + (r * 13 + w->id * 101) % 4000));
        e.alloc_bytes += malloc_usable_size(keep[slot]);
        e.allocs++;
    }
    for (int s = 0; s < 64; s++) {
        e.free_bytes += malloc_usable_size(keep[s]);
        e.frees++;
        free(keep[s]);
    }
    sps_mem_thread_counts(&c1);
    int before = mh_failures;
    char what[64];
    snprintf(what, sizeof what, "thread %d", w->id);
    mh_check(what, &e, mh_diff(&c0, &c1));
    w->failures = mh_failures - before;
    return NULL;
}

static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_state; /* 1: the block is allocated, 2: main has read */
static void *held;

static void *holder(void *arg) {
    (void)arg;
    held = malloc(8 << 20);
    memset(held, 1, 8 << 20);
    pthread_mutex_lock(&hold_mu);
    hold_state = 1;
    pthread_cond_broadcast(&hold_cv);
    while (hold_state != 2) pthread_cond_wait(&hold_cv, &hold_mu);
    pthread_mutex_unlock(&hold_mu);
    return NULL; /* main frees it */
}

int main(void) {
    /* four workers at once, each exact on its own thread */
    pthread_t t[NT];
    worker_t w[NT];
    pthread_barrier_init(&start, NULL, NT);
    for (int i = 0; i < NT; i++) {
        w[i] = (worker_t){i, 0};
        if (pthread_create(&t[i], NULL, worker, &w[i])) return 2;
    }
    for (int i = 0; i < NT; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    /* thread B's 8 MiB never in A's (main's) counters */
    sps_mem_counts_t c0, c1;
    pthread_t h;
    sps_mem_thread_counts(&c0);
    if (pthread_create(&h, NULL, holder, NULL)) return 2;
    pthread_mutex_lock(&hold_mu);
    while (hold_state != 1) pthread_cond_wait(&hold_cv, &hold_mu);
    sps_mem_thread_counts(&c1);
    hold_state = 2;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    pthread_join(h, NULL);
    mh_delta_t d = mh_diff(&c0, &c1);
    /* main made pthread_create's own small allocations at most */
    if (d.alloc_bytes >= (8 << 20)) MH_EQ("thread B's block not in main's counters", 0, d.alloc_bytes);
    /* freed here: a free of the block's size on this thread */
    size_t hs = malloc_usable_size(held);
    sps_mem_thread_counts(&c0);
    free(held);
    sps_mem_thread_counts(&c1);
    d = mh_diff(&c0, &c1);
    MH_EQ("cross-thread free: frees", 1, d.frees);
    MH_EQ("cross-thread free: free_bytes", (long long)hs, d.free_bytes);
    MH_EQ("cross-thread free: allocs", 0, d.allocs);
    for (int i = 0; i < NT; i++)
        if (w[i].failures) fprintf(stderr, "thread %d: %lld failures\n", i, w[i].failures);
    if (mh_failures) return 1;
    printf("mh_threads: ok\n");
    return 0;
}
