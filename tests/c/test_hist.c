/* test_hist.c -- the duration histogram behind diff and check
 * (src/model/hist.c): medians within a bucket's width, exact below 32 ns,
 * a range that grows both ways, and Mann-Whitney's z: 0 for identical
 * samples, its sign for a shift, and unmoved by a burst of outliers. */
#include "testutil.h"
#include "sps_int.h"

#include <math.h>
#include <stdlib.h>

/* A deterministic pseudo-random duration around mean (+-spread). */
static uint64_t draw(uint64_t *seed, uint64_t mean, uint64_t spread) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return mean - spread + (*seed >> 33) % (2 * spread + 1);
}

static void test_quantiles(void **state) {
    (void)state;
    sps__hist_t h = {0};
    assert_true(isnan(sps__hist_quantile(&h, 0.5)));
    for (int i = 0; i < 5; i++) assert_int_equal(sps__hist_add(&h, 0), 0);
    assert_true(sps__hist_quantile(&h, 0.5) == 0.0); /* exact buckets: no interpolation */
    sps__hist_free(&h);
    /* 1000 calls at 10 us, then 1000 at 1 ms far away, then 1 ns: the
     * range grows both ways */
    for (int i = 0; i < 1000; i++) sps__hist_add(&h, 10000);
    for (int i = 0; i < 1100; i++) sps__hist_add(&h, 1000000);
    sps__hist_add(&h, 1);
    assert_int_equal(h.n, 2101);
    double med = sps__hist_quantile(&h, 0.5), p10 = sps__hist_quantile(&h, 0.1);
    assert_true(fabs(med - 1e6) <= 0.023 * 1e6);
    assert_true(fabs(p10 - 1e4) <= 0.023 * 1e4);
    assert_true(sps__hist_quantile(&h, 0.0) <= 2.0);
    sps__hist_free(&h);
    assert_null(h.count);
}

static void test_rank_test(void **state) {
    (void)state;
    sps__hist_t a = {0}, b = {0}, c = {0}, d = {0};
    uint64_t s1 = 1, s2 = 2, s3 = 3, s4 = 4;
    for (int i = 0; i < 20000; i++) {
        sps__hist_add(&a, draw(&s1, 130, 4));
        sps__hist_add(&b, draw(&s2, 130, 4));
        sps__hist_add(&c, draw(&s3, 160, 4));
        /* the same workload as a and b, with a burst of 400 preempted calls */
        sps__hist_add(&d, i >= 5000 && i < 5400 ? 10000 : draw(&s4, 130, 4));
    }
    assert_true(fabs(sps__hist_mann_whitney_z(&a, &a)) < 1e-9);
    assert_true(fabs(sps__hist_mann_whitney_z(&a, &b)) < 3.0);
    assert_true(sps__hist_mann_whitney_z(&a, &c) > 10.0);  /* c slower */
    assert_true(sps__hist_mann_whitney_z(&c, &a) < -10.0); /* a faster */
    /* the outliers move the median by less than a bucket */
    double ma = sps__hist_quantile(&a, 0.5), md = sps__hist_quantile(&d, 0.5);
    assert_true(fabs(md - ma) / ma < 0.05);
    sps__hist_free(&a);
    sps__hist_free(&b);
    sps__hist_free(&c);
    sps__hist_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_rank_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
