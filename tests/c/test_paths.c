/* test_paths.c -- a period pooled by call path (sps_finalize_paths,
 * model/paths.c) and a read file pooled the same way (sps_file_paths,
 * api/file_paths.c), as scope-profiler's region table pools calls:
 * adjacent repeats of a region collapsed, the outermost calls' total of a
 * recursion, self times, first/last, and the wall-clock coverage over
 * threads; both give the same numbers for the same calls. */
#include "testutil.h"
#include "tu_core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPIN_NS 2000000 /* 2 ms in each thread's loop call */

static sps_region_t g_loop;
static pthread_barrier_t g_both_in;

/* Both threads are inside the loop region before either leaves it: their
 * calls overlap whatever the scheduler does. */
static void *loop_worker(void *arg) {
    (void)arg;
    sps_begin(g_loop);
    pthread_barrier_wait(&g_both_in);
    tu_spin_ns(SPIN_NS);
    sps_end(g_loop);
    return NULL;
}

/* The recording both tests pool: A > B x3, R > R > R, L on two threads
 * at once, and a region never called. */
static void record(void) {
    sps_region_t A = sps_region("p.A"), B = sps_region("p.B"), R = sps_region("p.R");
    g_loop = sps_region("p.L");
    (void)sps_region("p.never");
    sps_begin(A);
    for (int i = 0; i < 3; i++) sps_begin(B), tu_spin_ns(10000), sps_end(B);
    sps_end(A);
    sps_begin(R), sps_begin(R), sps_begin(R);
    tu_spin_ns(10000);
    sps_end(R), sps_end(R), sps_end(R);
    pthread_t th[2];
    assert_int_equal(pthread_barrier_init(&g_both_in, NULL, 2), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, loop_worker, NULL), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_both_in);
}

/* The path named name (by its last name) whose parent path is named
 * parent (NULL: a root), or -1. */
static long find(const sps_period_paths_t *pp, const char *parent, const char *name) {
    for (size_t i = 0; i < pp->npaths; i++) {
        const sps_call_path_t *x = &pp->paths[i];
        if (strcmp(pp->names[x->name], name) != 0) continue;
        if (!parent && x->parent < 0) return (long)i;
        if (parent && x->parent >= 0 &&
            strcmp(pp->names[pp->paths[x->parent].name], parent) == 0)
            return (long)i;
    }
    return -1;
}

static void test_period_paths(void **state) {
    (void)state;
    const char *path = tu_path("paths_period.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    record();
    sps_period_paths_t pp;
    assert_int_equal(sps_finalize_paths(path, NULL, &pp), 0);
    assert_true(pp.available);
    assert_int_equal(pp.nnames, 4); /* the file's region table: not p.never (no call) */
    long a = find(&pp, NULL, "p.A"), b = find(&pp, "p.A", "p.B");
    long r = find(&pp, NULL, "p.R"), l = find(&pp, NULL, "p.L");
    assert_true(a >= 0 && b >= 0 && r >= 0 && l >= 0);
    assert_int_equal(pp.npaths, 4); /* R's levels are one path; p.never none */
    const sps_call_path_t *A = &pp.paths[a], *B = &pp.paths[b], *R = &pp.paths[r],
                          *L = &pp.paths[l];
    assert_int_equal(A->calls, 1);
    assert_int_equal(B->calls, 3);
    assert_int_equal(B->total_ns, B->duration_sum_ns);
    assert_int_equal(A->self_ns, A->total_ns - B->total_ns);
    assert_true(B->min_ns >= 10000 && B->min_ns <= B->max_ns);
    assert_int_equal(R->calls, 3);
    assert_true(R->recursive);
    assert_true(!A->recursive && !B->recursive);
    /* the outermost call alone, the levels' durations in the sum */
    assert_int_equal(R->total_ns, R->max_ns);
    assert_true(R->duration_sum_ns > R->total_ns);
    assert_int_equal(R->coverage_ns, R->total_ns);
    /* two threads at once: the union is less than the sum, more than one */
    assert_int_equal(L->calls, 2);
    assert_true(L->coverage_ns < L->total_ns);
    assert_true(L->coverage_ns >= L->max_ns);
    assert_true(L->first_start_ns <= L->last_end_ns - L->last_ns);
    /* the same calls pooled from the file by the interval rule */
    const sps_file_t *f;
    char err[256];
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), 0);
    sps_file_paths_t fp;
    assert_int_equal(sps_file_paths(f, NULL, &fp), 0);
    assert_int_equal(fp.npaths, 4);
    assert_int_equal(fp.nentries, 4);
    assert_int_equal(fp.nbad, 0);
    for (size_t e = 0; e < fp.nentries; e++) {
        const sps_file_path_rank_t *x = &fp.entries[e];
        const char *nm = f->names[fp.name[x->path]];
        int32_t par = fp.parent[x->path];
        long k = find(&pp, par < 0 ? NULL : f->names[fp.name[par]], nm);
        assert_true(k >= 0);
        const sps_call_path_t *y = &pp.paths[k];
        assert_int_equal(x->rank, 0);
        assert_int_equal(x->calls, y->calls);
        assert_int_equal(x->total_ns, y->total_ns);
        assert_int_equal(x->duration_sum_ns, y->duration_sum_ns);
        assert_int_equal(x->self_ns, y->self_ns);
        assert_int_equal(x->min_ns, y->min_ns);
        assert_int_equal(x->max_ns, y->max_ns);
        assert_int_equal(x->first_start_ns, y->first_start_ns);
        assert_int_equal(x->last_ns, y->last_ns);
        assert_int_equal(x->coverage_ns, y->coverage_ns);
        assert_int_equal(x->recursive, y->recursive);
    }
    sps_file_paths_free(&fp);
    /* keep: B hidden; A's self time still has B taken out */
    unsigned char *keep = calloc(f->nnames, 1);
    for (size_t g = 0; g < f->nnames; g++) keep[g] = strcmp(f->names[g], "p.B") != 0;
    assert_int_equal(sps_file_paths(f, keep, &fp), 0);
    assert_int_equal(fp.npaths, 3);
    for (size_t e = 0; e < fp.nentries; e++)
        if (strcmp(f->names[fp.name[fp.entries[e].path]], "p.A") == 0)
            assert_int_equal(fp.entries[e].self_ns, A->self_ns);
    sps_file_paths_free(&fp);
    free(keep);
    sps_file_close(f);
    sps_period_paths_free(&pp);
    sps_period_paths_free(&pp); /* zeroed: again is fine */
    sps_shutdown();
    unlink(path);
}

static void test_checkpoint_and_no_file(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t O = sps_region("c.outer"), I = sps_region("c.inner");
    sps_begin(O);
    sps_begin(I), tu_spin_ns(20000), sps_end(I);
    sps_period_paths_t pp;
    assert_int_equal(sps_finalize_paths(NULL, NULL, &pp), 0); /* no file: pooled all the same */
    assert_true(pp.available);
    assert_int_equal(pp.npaths, 1); /* outer is still open: the next period's */
    assert_string_equal(pp.names[pp.paths[0].name], "c.inner");
    sps_period_paths_free(&pp);
    sps_begin(I), tu_spin_ns(20000), sps_end(I);
    sps_end(O);
    assert_int_equal(sps_finalize_paths(NULL, NULL, &pp), 0);
    long o = find(&pp, NULL, "c.outer"), i = find(&pp, "c.outer", "c.inner");
    assert_true(o >= 0 && i >= 0);
    /* outer's self: its duration minus its children in this period only
     * (what the interval rule over this period's file finds) */
    assert_int_equal(pp.paths[o].self_ns, pp.paths[o].total_ns - pp.paths[i].total_ns);
    sps_period_paths_free(&pp);
    sps_shutdown();
}

static void test_aggregate_is_not_pooled(void **state) {
    (void)state;
    const char *path = tu_path("paths_agg.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t X = sps_region("a.x");
    sps_begin(X), sps_end(X);
    sps_period_paths_t pp;
    assert_int_equal(sps_finalize_paths(path, NULL, &pp), 0);
    assert_false(pp.available);
    assert_int_equal(pp.npaths, 0);
    sps_period_paths_free(&pp);
    const sps_file_t *f;
    char err[256];
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), 0);
    sps_file_paths_t fp;
    assert_int_equal(sps_file_paths(f, NULL, &fp), SPS_EINVAL); /* no calls to pool */
    assert_int_equal(sps_file_paths(NULL, NULL, &fp), SPS_EINVAL);
    sps_file_close(f);
    sps_shutdown();
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_period_paths),
        TU_TEST(test_checkpoint_and_no_file),
        TU_TEST(test_aggregate_is_not_pooled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
