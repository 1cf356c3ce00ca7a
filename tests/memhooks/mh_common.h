/* mh_common.h -- what the tests of libspanscope_malloc share: reading the
 * calling thread's counters and checking a difference exactly. */
#ifndef MH_COMMON_H
#define MH_COMMON_H
#include <stdio.h>
#include <stdlib.h>

#include "spanscope.h"

static int mh_failures;

/* check: expected == actual, else one line naming what */
#define MH_EQ(what, expected, actual)                                                      \
    do {                                                                                   \
        long long e_ = (long long)(expected), a_ = (long long)(actual);                    \
        if (e_ != a_) {                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: expected %lld, got %lld\n", __FILE__, __LINE__, \
                    what, e_, a_);                                                         \
            mh_failures++;                                                                 \
        }                                                                                  \
    } while (0)

/* the change of each counter between two readings */
typedef struct {
    long long alloc_bytes, free_bytes, allocs, frees, live;
} mh_delta_t;

static inline mh_delta_t mh_diff(const sps_mem_counts_t *a, const sps_mem_counts_t *b) {
    mh_delta_t d = {(long long)(b->alloc_bytes - a->alloc_bytes),
                    (long long)(b->free_bytes - a->free_bytes),
                    (long long)(b->allocs - a->allocs), (long long)(b->frees - a->frees),
                    (long long)(b->live_bytes - a->live_bytes)};
    return d;
}

/* expected counts, added to as the test allocates */
typedef struct {
    long long alloc_bytes, free_bytes, allocs, frees;
} mh_expect_t;

static inline void mh_check(const char *what, const mh_expect_t *e, mh_delta_t d) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s: alloc_bytes", what);
    MH_EQ(buf, e->alloc_bytes, d.alloc_bytes);
    snprintf(buf, sizeof buf, "%s: free_bytes", what);
    MH_EQ(buf, e->free_bytes, d.free_bytes);
    snprintf(buf, sizeof buf, "%s: allocs", what);
    MH_EQ(buf, e->allocs, d.allocs);
    snprintf(buf, sizeof buf, "%s: frees", what);
    MH_EQ(buf, e->frees, d.frees);
    snprintf(buf, sizeof buf, "%s: live", what);
    MH_EQ(buf, e->alloc_bytes - e->free_bytes, d.live);
}
#endif
