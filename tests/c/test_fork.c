/* test_fork.c -- a profiled program forks under SPANSCOPE_FORK=off
 * (sps_fork_policy(0), the behaviour of earlier versions): the child never
 * writes into the parent's files (its copy of the session is off:
 * sps_finalize gives SPS_ENOSESSION), may start a session of its own, and
 * the parent's file and spill file come out intact.  The default, children
 * with sessions of their own, is tests/c/test_fork_child.c's.
 *
 * Files left in $SPS_TEST_TMP for tests/python/test_c_h5.py:
 *   fork_parent.h5, fork_child.h5 */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"
#include "sps_int.h" /* sps__g: to see that the parent spilled before fork */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PARENT_CALLS 100000

/* sps__g.spill_end, read under the session lock (other threads spill) */
static int64_t spill_end(void) {
    pthread_mutex_lock(&sps__g.lock);
    int64_t v = sps__g.spill_end;
    pthread_mutex_unlock(&sps__g.lock);
    return v;
}
static atomic_int g_stop;
static atomic_long g_bg_calls;
static sps_region_t g_bg;

static void *bg_worker(void *arg) {
    (void)arg;
    while (!atomic_load(&g_stop)) {
        sps_begin(g_bg);
        tu_spin_ns(2000);
        sps_end(g_bg);
        atomic_fetch_add(&g_bg_calls, 1);
    }
    return NULL;
}

/* Exit codes of the child, one per failed check. */
enum {
    C_OK = 0, C_ACTIVE = 10, C_FIN, C_FIN_TO, C_PARENT_FILE, C_SETUP, C_STATS,
    C_FIN_OWN, C_OWN_FILE, C_SETPATH
};

static int child_main(const char *parent_path, const char *child_path,
                      sps_region_t P) {
    /* the inherited session is off here */
    if (sps_is_active()) return C_ACTIVE;
    sps_region_t C = sps_region("fork.child.only");
    for (int i = 0; i < 1000; i++) { /* recorded nowhere */
        sps_begin(C);
        sps_end(C);
        sps_begin(P);
        sps_end(P);
    }
    if (sps_finalize() != SPS_ENOSESSION) return C_FIN;
    if (sps_finalize_to(parent_path) != SPS_ENOSESSION) return C_FIN_TO;
    if (sps_set_file_path(parent_path) != SPS_ENOSESSION) return C_SETPATH;
    if (access(parent_path, F_OK) == 0) return C_PARENT_FILE;
    /* a session of its own, spilling too */
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = child_path;
    cfg.chunk_size = 4096;
    cfg.memory_limit = 8192;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    if (sps_setup(&cfg) != 0) return C_SETUP;
    for (int i = 0; i < 50000; i++) {
        sps_begin(C);
        sps_end(C);
    }
    sps_stats_t st;
    if (sps_region_stats(C, &st) != 0 || st.num_calls != 50000) return C_STATS;
    if (sps_region_stats(P, &st) != 0 || st.num_calls != 0) return C_STATS;
    if (sps_finalize() != 0) return C_FIN_OWN;
    tu_h5_t *h = tu_h5_load(child_path);
    int ok = h && h->ok && tu_h5_count(h, "fork.child.only") == 50000 &&
             tu_h5_count(h, "fork.parent") == 0 && h->nev == 50000;
    tu_h5_free(h);
    if (!ok) return C_OWN_FILE;
    sps_shutdown();
    return C_OK;
}

static void test_fork(void **state) {
    (void)state;
    const char *pp = tu_path("fork_parent.h5"), *cp = tu_path("fork_child.h5");
    unlink(pp);
    unlink(cp);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = pp;
    cfg.chunk_size = 4096;
    cfg.memory_limit = 8192;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fork.parent");
    g_bg = sps_region("fork.parent.bg");
    atomic_store(&g_stop, 0);
    atomic_store(&g_bg_calls, 0);
    pthread_t bg;
    assert_int_equal(pthread_create(&bg, NULL, bg_worker, NULL), 0);
    for (int i = 0; i < PARENT_CALLS; i++) {
        sps_begin(P);
        sps_end(P);
    }
    sps_begin(P); /* open across the fork */
    int64_t spill_before = spill_end();
    assert_true(spill_before > 0); /* spilled before the fork */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_main(pp, cp, P));
    /* the parent goes on recording while the child runs */
    for (int i = 0; i < PARENT_CALLS; i++) {
        sps_begin(P);
        sps_end(P);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != C_OK) fail_msg("child failed check %d", WEXITSTATUS(status));
    assert_true(spill_end() >= spill_before);
    sps_end(P);
    atomic_store(&g_stop, 1);
    pthread_join(bg, NULL);
    long nbg = atomic_load(&g_bg_calls);
    assert_int_equal(sps_is_active(), 1);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(P, &st), 0);
    assert_int_equal(st.num_calls, 2 * PARENT_CALLS + 1);
    assert_int_equal(sps_region_stats(g_bg, &st), 0);
    assert_int_equal(st.num_calls, (uint64_t)nbg);
    /* the child's region is not even known here */
    for (uint32_t r = 1; r < sps_region_count(); r++)
        assert_string_not_equal(sps_region_name(r), "fork.child.only");
    assert_int_equal(sps_finalize(), 0);

    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fork.parent"), 2 * PARENT_CALLS + 1);
    assert_int_equal(tu_h5_count(h, "fork.parent.bg"), (uint64_t)nbg);
    assert_int_equal(tu_h5_count(h, "fork.child.only"), 0);
    assert_int_equal(h->nev, 2 * PARENT_CALLS + 1 + (uint64_t)nbg);
    TU_CHECK_TREE(h);
    /* the call open across the fork contains the later calls (as its
     * children, so it lasts at least as long as they do together: not
     * "the longest call", which a preempted short call on a loaded
     * machine can be) */
    long rp = tu_h5_row(h, "fork.parent");
    int inside = 0;
    int64_t open_id = h->call_ids[h->offsets[rp] + PARENT_CALLS], inside_ns = 0;
    for (uint64_t e = 0; e < h->counts[rp]; e++)
        if (h->parent_ids[h->offsets[rp] + e] == open_id) {
            inside++;
            inside_ns += h->durations[h->offsets[rp] + e];
        }
    assert_int_equal(inside, PARENT_CALLS);
    assert_true(h->durations[h->offsets[rp] + PARENT_CALLS] >= inside_ns);
    tu_h5_free(h);
    assert_int_equal(tu_h5_attr_i64(pp, "/metadata", "pid", -1), getpid());
    assert_int_equal(tu_h5_attr_i64(pp, "/metadata", "threads", -1), 2);
    /* the child's own file */
    assert_int_equal(tu_h5_attr_i64(cp, "/metadata", "pid", -1), pid);
    sps_shutdown();
}

/* A child that does nothing with spanscope and exits normally leaves the
 * parent's session as it was. */
static void test_fork_quiet_child(void **state) {
    (void)state;
    const char *pp = tu_path("fork_quiet.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = pp;
    cfg.chunk_size = 4096; /* as test_fork: one chunk size per process */
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fork.quiet");
    for (int i = 0; i < 100; i++) {
        sps_begin(P);
        sps_end(P);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sps_begin(P);
        sps_end(P);
        exit(sps_shutdown() == 0 && !sps_is_active() ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the child's sps_shutdown did not end the parent's session */
    assert_int_equal(sps_is_active(), 1);
    for (int i = 0; i < 100; i++) {
        sps_begin(P);
        sps_end(P);
    }
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "fork.quiet"), 200);
    tu_h5_free(h);
    unlink(pp);
    sps_shutdown();
}

int main(void) {
    /* every fork here is under policy off: the child's inherited session is
     * switched off (the default would open one of its own in the child) */
    sps_fork_policy(0);
    const struct CMUnitTest tests[] = {
        TU_TEST(test_fork),
        TU_TEST(test_fork_quiet_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
