/* cfg.spill_limit: past it the SPILL policy drops and counts instead of
 * growing memory or filling the disk; a finalize frees the room again. */
#include "testutil.h"
#include "sps_int.h"

static void test_spill_limit_drops_and_counts(void **state) {
    (void)state;
    sps_config_t c = SPS_CONFIG_INIT;
    c.chunk_size = 4096;            /* 512 records: 256 calls per chunk */
    c.memory_limit = 2 * 4096;
    c.spill_limit = 4 * 4096;       /* room for 4 spilled chunks */
    assert_int_equal(sps_setup(&c), 0);
    sps_region_t r = sps_region("limited");
    for (int i = 0; i < 100000; i++) {
        sps_begin(r);
        sps_end(r);
    }
    uint64_t dropped = sps_dropped();
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_true(dropped > 0);
    /* every attempted record is either kept (in a call) or dropped; a call
     * cut by the drop leaves at most one unmatched record */
    assert_true(2 * st.num_calls + dropped >= 200000 - 2);
    assert_true(2 * st.num_calls + dropped <= 200000);
    assert_true(st.num_calls < 100000);
    pthread_mutex_lock(&sps__g.lock); /* the spill writer updates these */
    int64_t end = sps__g.spill_end;
    size_t chunks = sps__g.mem_chunks;
    pthread_mutex_unlock(&sps__g.lock);
    assert_true(end <= (int64_t)c.spill_limit);
    assert_true(chunks <= 3); /* memory did not grow instead */
    /* after a finalize the spill file is empty again and recording resumes */
    assert_int_equal(sps_finalize_to(tu_path("spill_limit.h5")), 0);
    uint64_t before = st.num_calls;
    for (int i = 0; i < 100; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(st.num_calls, before + 100);
    sps_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_limit_drops_and_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
