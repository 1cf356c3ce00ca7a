/* tu_core.h -- small helpers shared by the core tests (header-only). */
#ifndef SPS_TU_CORE_H
#define SPS_TU_CORE_H

#include <stdint.h>
#include <time.h>
#include "spanscope.h"

/* CLOCK_MONOTONIC now, in ns (the profiler's timeline). */
static inline int64_t tu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* cmocka per-test setup/teardown: no session is left over from a test that
 * failed half-way. */
static inline int tu_fresh(void **state) {
    (void)state;
    sps_shutdown();
    return 0;
}

/* |a - b| <= rel * |b| + abs_ns */
static inline int tu_near(double a, double b, double rel, double abs_ns) {
    double d = a - b, m = b < 0 ? -b : b;
    if (d < 0) d = -d;
    return d <= rel * m + abs_ns;
}

#define TU_TEST(f) cmocka_unit_test_setup_teardown(f, tu_fresh, tu_fresh)

/* assert_true with the two values printed on failure */
#define TU_ASSERT_NEAR(a, b, rel, abs_ns)                                      \
    do {                                                                       \
        double tu_a_ = (double)(a), tu_b_ = (double)(b);                       \
        if (!tu_near(tu_a_, tu_b_, (rel), (abs_ns)))                          \
            fail_msg("%s = %.1f not near %s = %.1f (rel %g, abs %g)", #a,       \
                     tu_a_, #b, tu_b_, (double)(rel), (double)(abs_ns));       \
    } while (0)
#endif
