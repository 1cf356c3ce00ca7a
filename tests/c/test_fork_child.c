/* test_fork_child.c -- forked children record into profiles of their own
 * (src/api/fork.c, docs/process-trees.md): a child of a one-thread and of
 * a four-thread recording program writes DIR/STEM.pid<PID>.EXT with
 * exactly its calls, the parent's file keeps exactly the parent's; the
 * calls open at the fork balance in both; /metadata names pid, ppid, the
 * parent's output and the open calls; grandchildren; SPANSCOPE_FORK=off
 * and sps_fork_policy(0) (no child file); aggregate mode; a child that
 * finalizes twice; a child that ends with exit() under
 * SPANSCOPE_AUTO_FINALIZE; a paused parent; a session without a file.
 *
 * Children report a failed check by their exit status (one code per
 * check); the parent reads every file back with the HDF5 C API
 * (tu_h5.h) and the reader's sps_metadata_read. */
#include "testutil.h"
#include "tu_h5.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

/* The child's path of parent path p (static buffer per slot, as tu_path). */
static const char *child_path(const char *p, pid_t pid) {
    static char buf[4][512];
    static int slot;
    char *b = buf[slot++ % 4];
    size_t n = sps_fork_child_path(p, pid, b, sizeof buf[0]);
    assert_true(n > 0 && n < sizeof buf[0]);
    return b;
}

/* Waits for pid; fails the test with the child's failed check. */
static void wait_ok(pid_t pid) {
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status)) fail_msg("child %d did not exit (status %#x)", (int)pid, status);
    if (WEXITSTATUS(status) != 0) fail_msg("child %d failed check %d", (int)pid,
                                           WEXITSTATUS(status));
}

/* The text of /metadata attribute name of path ("" when absent or not
 * text; "<int>" written as a number for an integer). */
static void meta_text(const char *path, const char *name, char *out, size_t cap) {
    sps_meta_attr_t *a = NULL;
    size_t n = 0;
    char err[256];
    out[0] = 0;
    assert_int_equal(sps_metadata_read(path, &a, &n, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a[i].name, name) != 0 || a[i].n < 1) continue;
        if (a[i].kind == SPS_META_TEXT) snprintf(out, cap, "%s", a[i].texts[0]);
        else if (a[i].kind == SPS_META_INT) snprintf(out, cap, "%lld", (long long)a[i].ints[0]);
    }
    sps_metadata_free(a, n);
}

static void assert_meta(const char *path, const char *name, const char *want) {
    char got[1024];
    meta_text(path, name, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("%s: /metadata %s is '%s', expected '%s'", path, name, got, want);
}

static void assert_meta_int(const char *path, const char *name, long long want) {
    char w[32];
    snprintf(w, sizeof w, "%lld", want);
    assert_meta(path, name, w);
}

/* The one call of region name in h (fails unless there is exactly one):
 * its index in the event arrays. */
static uint64_t only_call(const tu_h5_t *h, const char *name) {
    long r = tu_h5_row(h, name);
    assert_true(r >= 0);
    assert_int_equal(h->counts[r], 1);
    return h->offsets[r];
}

/* Calls of region name in an aggregate file (0 when it has no row). */
static uint64_t agg_count(const tu_h5_t *h, const char *name) {
    long r = tu_h5_row(h, name);
    return r < 0 || !h->agg_counts ? 0 : h->agg_counts[r];
}

static void record(sps_region_t r, int n) {
    for (int i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
}

/* In a child: return (CHECK) or exit (XCHECK) with code when cond fails. */
#define CHECK(cond, code)                                                      \
    do {                                                                       \
        if (!(cond)) return (code);                                            \
    } while (0)
#define XCHECK(cond, code)                                                     \
    do {                                                                       \
        if (!(cond)) _exit(code);                                              \
    } while (0)

static sps_config_t config(const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    return cfg;
}

/* ---- the path ----------------------------------------------------------- */

static void test_child_path(void **state) {
    (void)state;
    char b[64];
    static const struct { const char *in, *out; } cases[] = {
        {"p.h5", "p.pid42.h5"},
        {"out/run", "out/run.pid42"},
        {"a.b/c.v2.h5", "a.b/c.v2.pid42.h5"},
        {"/t/x.pid7.h5", "/t/x.pid7.pid42.h5"},
        {".h5", ".h5.pid42"},
        {"d/.hidden", "d/.hidden.pid42"},
        {"x.", "x..pid42"},
        {"dir.d/", "dir.d/.pid42"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n = sps_fork_child_path(cases[i].in, 42, b, sizeof b);
        assert_string_equal(b, cases[i].out);
        assert_int_equal(n, strlen(cases[i].out));
        assert_int_equal(sps_fork_child_path(cases[i].in, 42, NULL, 0), n);
    }
    /* too small: nothing but the NUL, the length still */
    assert_int_equal(sps_fork_child_path("p.h5", 42, b, 5), 10);
    assert_string_equal(b, "");
    assert_int_equal(sps_fork_child_path("p.h5", 42, b, 10), 10);
    assert_string_equal(b, "");
    assert_int_equal(sps_fork_child_path("p.h5", 42, b, 11), 10);
    assert_string_equal(b, "p.pid42.h5");
    /* no file, no pid */
    b[0] = 'x';
    assert_int_equal(sps_fork_child_path(NULL, 42, b, sizeof b), 0);
    assert_string_equal(b, "");
    assert_int_equal(sps_fork_child_path("", 42, b, sizeof b), 0);
    assert_int_equal(sps_fork_child_path("p.h5", 0, b, sizeof b), 0);
    assert_int_equal(sps_fork_child_path("p.h5", -3, b, sizeof b), 0);
}

/* ---- SPANSCOPE_FORK (before any sps_fork_policy call: it wins) ---------- */

/* SPANSCOPE_FORK=off: the child records nothing, writes no file. */
static void test_env_off(void **state) {
    (void)state;
    const char *pp = tu_path("fc_envoff.h5");
    unlink(pp);
    setenv("SPANSCOPE_FORK", "OFF", 1);
    assert_int_equal(sps_fork_policy(-1), 0);
    sps_config_t cfg = config(pp);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fc.envoff");
    record(P, 10);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        XCHECK(!sps_is_active(), 10); /* the old behaviour */
        record(P, 10);
        if (sps_finalize() != SPS_ENOSESSION) _exit(11);
        _exit(0);
    }
    wait_ok(pid);
    assert_int_equal(access(child_path(pp, pid), F_OK), -1);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "fc.envoff"), 10);
    tu_h5_free(h);
    sps_shutdown();

    /* a value that is neither: an error to ask, children record as by default */
    setenv("SPANSCOPE_FORK", "sometimes", 1);
    assert_int_equal(sps_fork_policy(-1), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "SPANSCOPE_FORK=sometimes"));
    setenv("SPANSCOPE_FORK", "own", 1);
    assert_int_equal(sps_fork_policy(-1), 1);
    unsetenv("SPANSCOPE_FORK");
    assert_int_equal(sps_fork_policy(-1), 1);
}

/* ---- one thread --------------------------------------------------------- */

#define M_CALLS 3000
#define N_CALLS 2000

static int child_one(sps_region_t O, sps_region_t I, sps_region_t P, sps_region_t U) {
    CHECK(sps_is_active(), 20);
    /* the parent's registered regions are the child's, in its order */
    sps_region_t reg[8];
    CHECK(sps_regions_registered(reg, 8) == 4 && reg[0] == P && reg[1] == O &&
              reg[2] == I && reg[3] == U, 28);
    sps_region_t C = sps_region("fc.child");
    record(C, N_CALLS);
    /* the calls open at the fork are open here: they balance */
    sps_region_t open[4];
    CHECK(sps_open_calls(open, 4) == 2 && open[0] == O && open[1] == I, 21);
    sps_end(I);
    sps_end(O);
    CHECK(sps_open_calls(NULL, 0) == 0, 22);
    CHECK(sps_misuse_count() == 0, 23);
    sps_stats_t st;
    CHECK(sps_region_stats(P, &st) == 0 && st.num_calls == 0, 24);
    CHECK(sps_region_stats(C, &st) == 0 && st.num_calls == N_CALLS, 25);
    CHECK(sps_setup(NULL) == SPS_EACTIVE, 26);
    CHECK(sps_finalize() == 0, 27);
    return 0;
}

static void test_one_thread(void **state) {
    (void)state;
    const char *pp = tu_path("fc_one.h5");
    unlink(pp);
    assert_int_equal(sps_fork_policy(1), 1); /* the default before */
    sps_config_t cfg = config(pp);
    cfg.label = "fc-one";
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_metadata_set("experiment", "forks"), 0);
    sps_region_t P = sps_region("fc.parent");
    sps_region_t O = sps_region("fc.outer"), I = sps_region("fc.inner");
    sps_region_t U = sps_region("fc.unused");
    assert_int_equal(sps_region_set_tags(U, "[\"t\"]"), 0);
    record(P, M_CALLS);
    sps_begin(O);
    sps_begin(I);
    int64_t before = sps_now_ns();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_one(O, I, P, U));
    record(P, M_CALLS);
    sps_end(I);
    sps_end(O);
    wait_ok(pid);
    int64_t after = sps_now_ns();
    assert_int_equal(sps_finalize(), 0);

    /* the parent's file: its calls only, the open ones whole */
    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fc.parent"), 2 * M_CALLS);
    assert_int_equal(tu_h5_count(h, "fc.child"), 0);
    assert_int_equal(h->nev, 2 * M_CALLS + 2);
    uint64_t po = only_call(h, "fc.outer");
    assert_true(h->durations[po] >= after - before - 1000000000); /* spans the child */
    tu_h5_free(h);
    assert_meta(pp, "ppid", "");
    assert_meta(pp, "fork_open_calls", "");

    /* the child's file */
    const char *cp = child_path(pp, pid);
    h = tu_h5_load(cp);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fc.child"), N_CALLS);
    assert_int_equal(tu_h5_count(h, "fc.parent"), 0);
    assert_int_equal(h->nev, N_CALLS + 2);
    uint64_t o = only_call(h, "fc.outer"), in = only_call(h, "fc.inner");
    assert_int_equal(h->parent_ids[o], -1);
    assert_int_equal(h->parent_ids[in], h->call_ids[o]);
    /* the open calls begin at the child's start: before its own calls */
    long rc = tu_h5_row(h, "fc.child");
    int64_t *starts = tu_h5_all_starts(h);
    for (uint64_t e = 0; e < h->counts[rc]; e++) {
        assert_int_equal(h->parent_ids[h->offsets[rc] + e], h->call_ids[in]);
        assert_true(starts[h->offsets[rc] + e] >= starts[in]);
    }
    assert_true(starts[in] >= starts[o]);
    free(starts);
    /* the regions with calls, in the order the parent registered them */
    assert_int_equal(h->nnames, 3);
    assert_string_equal(h->names[0], "fc.outer");
    assert_string_equal(h->names[1], "fc.inner");
    assert_string_equal(h->names[2], "fc.child");
    tu_h5_free(h);
    assert_meta_int(cp, "pid", pid);
    assert_meta_int(cp, "threads", 1);
    assert_meta_int(cp, "misuse_count", 0);
    assert_meta_int(cp, "open_calls", 0);
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%d", (int)getpid());
    assert_meta(cp, "ppid", ppid);
    assert_meta(cp, "parent_output", pp);
    assert_meta(cp, "fork_open_calls", "[\"fc.outer\",\"fc.inner\"]");
    assert_meta(cp, "label", "fc-one");
    assert_meta(cp, "experiment", "forks"); /* the parent's added metadata */
    /* its timeline starts at the fork */
    int64_t start = tu_h5_attr_i64(cp, "/metadata", "start_time_ns", -1);
    assert_true(start >= before && start <= after);
    sps_shutdown();
}

/* ---- four threads ------------------------------------------------------- */

static atomic_int g_stop;
static atomic_long g_bg_calls;
static sps_region_t g_bg;
static pthread_t g_th[3];
static int g_nth; /* threads running (teardown joins them) */

static void stop_threads(void) {
    atomic_store(&g_stop, 1);
    for (; g_nth > 0; g_nth--) pthread_join(g_th[g_nth - 1], NULL);
}

static void *bg_worker(void *arg) {
    (void)arg;
    sps_region_t mine = sps_region("fc4.bg.outer");
    sps_begin(mine); /* open on another thread at every fork */
    while (!atomic_load(&g_stop)) {
        sps_begin(g_bg);
        tu_spin_ns(500);
        sps_end(g_bg);
        atomic_fetch_add(&g_bg_calls, 1);
    }
    sps_end(mine);
    return NULL;
}

static int child_four(sps_region_t O, int k) {
    CHECK(sps_is_active(), 30);
    sps_region_t C = sps_region("fc4.child");
    sps_region_t open[4];
    size_t nopen = sps_open_calls(open, 4);
    record(C, N_CALLS + k);
    sps_end(O);
    if (sps_misuse_count() != 0)
        fprintf(stderr, "child: open calls at its start %zu (%u) dropped %llu misuse %llu\n", nopen,
                nopen ? open[0] : 0, (unsigned long long)sps_dropped(),
                (unsigned long long)sps_misuse_count());
    CHECK(sps_misuse_count() == 0, 31);
    sps_stats_t st;
    CHECK(sps_region_stats(g_bg, &st) == 0 && st.num_calls == 0, 32);
    CHECK(sps_finalize() == 0, 33);
    return 0;
}

static void test_four_threads(void **state) {
    (void)state;
    const char *pp = tu_path("fc_four.h5");
    unlink(pp);
    sps_config_t cfg = config(pp);
    cfg.chunk_size = 4096; /* small: chunks retire and spill around the forks */
    cfg.memory_limit = 16384;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fc4.parent"), O = sps_region("fc4.open");
    g_bg = sps_region("fc4.bg");
    atomic_store(&g_stop, 0);
    atomic_store(&g_bg_calls, 0);
    for (; g_nth < 3; g_nth++)
        assert_int_equal(pthread_create(&g_th[g_nth], NULL, bg_worker, NULL), 0);
    enum { KIDS = 3 };
    pid_t kids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        record(P, M_CALLS);
        sps_begin(O);
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) _exit(child_four(O, k));
        sps_end(O);
    }
    for (int k = 0; k < KIDS; k++) wait_ok(kids[k]);
    stop_threads();
    long nbg = atomic_load(&g_bg_calls);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fc4.parent"), KIDS * M_CALLS);
    assert_int_equal(tu_h5_count(h, "fc4.open"), KIDS);
    assert_int_equal(tu_h5_count(h, "fc4.bg"), (uint64_t)nbg);
    assert_int_equal(tu_h5_count(h, "fc4.bg.outer"), 3);
    assert_int_equal(tu_h5_count(h, "fc4.child"), 0);
    tu_h5_free(h);
    assert_meta_int(pp, "threads", 4);
    for (int k = 0; k < KIDS; k++) {
        const char *cp = child_path(pp, kids[k]);
        h = tu_h5_load(cp);
        assert_non_null(h);
        assert_true(h->ok);
        assert_int_equal(tu_h5_count(h, "fc4.child"), N_CALLS + k);
        assert_int_equal(tu_h5_count(h, "fc4.open"), 1);
        /* the other threads do not exist in the child */
        assert_int_equal(tu_h5_count(h, "fc4.bg"), 0);
        assert_int_equal(tu_h5_count(h, "fc4.bg.outer"), 0);
        assert_int_equal(tu_h5_count(h, "fc4.parent"), 0);
        assert_int_equal(h->nev, N_CALLS + k + 1);
        tu_h5_free(h);
        assert_meta_int(cp, "threads", 1);
        assert_meta(cp, "fork_open_calls", "[\"fc4.open\"]");
    }
    sps_shutdown();
}

/* ---- grandchildren ------------------------------------------------------ */

static int grandchild(sps_region_t O) {
    CHECK(sps_is_active(), 40);
    sps_region_t G = sps_region("fcg.grandchild");
    record(G, 7);
    sps_end(O);
    CHECK(sps_finalize() == 0, 41);
    return 0;
}

static int child_g(sps_region_t O, pid_t *gpid) {
    CHECK(sps_is_active(), 42);
    sps_region_t C = sps_region("fcg.child");
    record(C, 5);
    pid_t g = fork();
    CHECK(g >= 0, 43);
    if (g == 0) _exit(grandchild(O));
    int status = 0;
    CHECK(waitpid(g, &status, 0) == g, 44);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) return 45 + (WEXITSTATUS(status) ? 1 : 0);
    sps_end(O);
    CHECK(sps_finalize() == 0, 47);
    /* tells the parent the grandchild's pid */
    *gpid = g;
    return 0;
}

static void test_grandchild(void **state) {
    (void)state;
    const char *pp = tu_path("fc_tree.h5");
    unlink(pp);
    sps_config_t cfg = config(pp);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t O = sps_region("fcg.open");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    sps_begin(O);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        pid_t g = 0;
        int rc = child_g(O, &g);
        if (write(fds[1], &g, sizeof g) != sizeof g) rc = 48;
        _exit(rc);
    }
    close(fds[1]);
    sps_end(O);
    wait_ok(pid);
    pid_t g = 0;
    assert_int_equal(read(fds[0], &g, sizeof g), sizeof g);
    close(fds[0]);
    assert_true(g > 0);
    assert_int_equal(sps_finalize(), 0);

    const char *cp = child_path(pp, pid);
    char cpath[512];
    snprintf(cpath, sizeof cpath, "%s", cp);
    const char *gp = child_path(cpath, g); /* STEM.pidC.pidG.h5 */
    tu_h5_t *h = tu_h5_load(cpath);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "fcg.child"), 5);
    assert_int_equal(tu_h5_count(h, "fcg.grandchild"), 0);
    assert_int_equal(tu_h5_count(h, "fcg.open"), 1);
    tu_h5_free(h);
    h = tu_h5_load(gp);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "fcg.grandchild"), 7);
    assert_int_equal(tu_h5_count(h, "fcg.child"), 0);
    assert_int_equal(tu_h5_count(h, "fcg.open"), 1);
    assert_int_equal(h->nev, 8);
    tu_h5_free(h);
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%d", (int)pid);
    assert_meta(gp, "ppid", ppid);
    assert_meta(gp, "parent_output", cpath);
    assert_meta_int(gp, "pid", g);
    h = tu_h5_load(pp);
    assert_non_null(h);
    assert_int_equal(h->nev, 1);
    tu_h5_free(h);
    sps_shutdown();
}

/* ---- policy off --------------------------------------------------------- */

static void test_policy_off(void **state) {
    (void)state;
    const char *pp = tu_path("fc_off.h5");
    unlink(pp);
    assert_int_equal(sps_fork_policy(0), 1);
    assert_int_equal(sps_fork_policy(-1), 0);
    assert_int_equal(sps_fork_policy(2), SPS_EINVAL);
    assert_int_equal(sps_fork_policy(-2), SPS_EINVAL);
    sps_config_t cfg = config(pp);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fc.off");
    sps_begin(P);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        XCHECK(!sps_is_active(), 50);
        sps_end(P);
        record(P, 10);
        if (sps_finalize() != SPS_ENOSESSION) _exit(51);
        /* the child may still set up a session of its own */
        sps_config_t own = config(NULL);
        if (sps_setup(&own) != 0) _exit(52);
        sps_shutdown();
        _exit(0);
    }
    sps_end(P);
    wait_ok(pid);
    assert_int_equal(access(child_path(pp, pid), F_OK), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(sps_finalize(), 0);
    sps_shutdown();
    assert_int_equal(sps_fork_policy(1), 0);
}

/* ---- aggregate mode ----------------------------------------------------- */

static int child_agg(sps_region_t O) {
    CHECK(sps_is_active(), 60);
    sps_region_t C = sps_region("fca.child");
    record(C, N_CALLS);
    sps_end(O);
    sps_stats_t st;
    CHECK(sps_region_stats(C, &st) == 0 && st.num_calls == N_CALLS, 61);
    CHECK(sps_region_stats(O, &st) == 0 && st.num_calls == 1, 62);
    CHECK(sps_misuse_count() == 0, 63);
    CHECK(sps_finalize() == 0, 64);
    return 0;
}

static void test_aggregate(void **state) {
    (void)state;
    const char *pp = tu_path("fc_agg.h5");
    unlink(pp);
    sps_config_t cfg = config(pp);
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("fca.parent"), O = sps_region("fca.open");
    record(P, M_CALLS);
    sps_begin(O);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_agg(O));
    sps_end(O);
    wait_ok(pid);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(pp);
    assert_non_null(h);
    assert_string_equal(h->layout, "aggregate");
    assert_int_equal(agg_count(h, "fca.parent"), M_CALLS);
    assert_int_equal(agg_count(h, "fca.open"), 1);
    assert_int_equal(agg_count(h, "fca.child"), 0);
    tu_h5_free(h);
    const char *cp = child_path(pp, pid);
    h = tu_h5_load(cp);
    assert_non_null(h);
    assert_string_equal(h->layout, "aggregate");
    assert_int_equal(agg_count(h, "fca.child"), N_CALLS);
    assert_int_equal(agg_count(h, "fca.open"), 1);
    assert_int_equal(agg_count(h, "fca.parent"), 0);
    tu_h5_free(h);
    assert_meta(cp, "fork_open_calls", "[\"fca.open\"]");
    sps_shutdown();
}

/* ---- checkpoints in the child -------------------------------------------- */

static int child_twice(const char *cp, sps_region_t O) {
    sps_region_t A = sps_region("fct.first"), B = sps_region("fct.second");
    record(A, 3);
    CHECK(sps_finalize() == 0, 70);
    CHECK(access(cp, F_OK) == 0, 71);
    record(B, 2);
    sps_end(O); /* open across the fork and the first checkpoint */
    CHECK(sps_finalize() == 0, 72);
    CHECK(sps_finalize() == 0, 73); /* an empty period: fine too */
    return 0;
}

/* A child that finalizes more than once: checkpoints, each file its period
 * (as in any session); the call open at the fork is written by the
 * finalize after it ends. */
static void test_finalize_twice(void **state) {
    (void)state;
    const char *pp = tu_path("fc_twice.h5");
    unlink(pp);
    sps_config_t cfg = config(pp);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t O = sps_region("fct.open");
    sps_begin(O);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(child_twice(child_path(pp, getpid()), O));
    sps_end(O);
    wait_ok(pid);
    char cp[512];
    snprintf(cp, sizeof cp, "%s", child_path(pp, pid));
    /* the last checkpoint's period: empty */
    tu_h5_t *h = tu_h5_load(cp);
    assert_non_null(h);
    assert_int_equal(h->nev, 0);
    tu_h5_free(h);
    sps_shutdown();

    /* the same child without the last empty finalize: the second period */
    assert_int_equal(sps_setup(&cfg), 0);
    sps_begin(O);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sps_region_t A = sps_region("fct.first"), B = sps_region("fct.second");
        record(A, 3);
        if (sps_finalize() != 0) _exit(74);
        record(B, 2);
        sps_end(O);
        _exit(sps_finalize() == 0 ? 0 : 75);
    }
    sps_end(O);
    wait_ok(pid);
    snprintf(cp, sizeof cp, "%s", child_path(pp, pid));
    h = tu_h5_load(cp);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fct.first"), 0);
    assert_int_equal(tu_h5_count(h, "fct.second"), 2);
    assert_int_equal(tu_h5_count(h, "fct.open"), 1);
    assert_int_equal(h->nev, 3);
    tu_h5_free(h);
    sps_shutdown();
}

/* ---- exit() in the child: the parent's atexit handlers write ------------ */

static void test_exit_auto_finalize(void **state) {
    (void)state;
    const char *pp = tu_path("fc_auto.h5");
    unlink(pp);
    setenv("SPANSCOPE_OUTPUT", pp, 1);
    setenv("SPANSCOPE_AUTO_FINALIZE", "1", 1);
    char err[256];
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    unsetenv("SPANSCOPE_OUTPUT");
    unsetenv("SPANSCOPE_AUTO_FINALIZE");
    sps_region_t P = sps_region("fce.parent"), C = sps_region("fce.child");
    record(P, 4);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        record(C, 9);
        exit(0); /* no sps_finalize: the atexit handler writes */
    }
    wait_ok(pid);
    tu_h5_t *h = tu_h5_load(child_path(pp, pid));
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "fce.child"), 9);
    assert_int_equal(tu_h5_count(h, "fce.parent"), 0);
    tu_h5_free(h);
    /* a child that ends with _exit writes nothing */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        record(C, 9);
        _exit(0);
    }
    wait_ok(pid);
    assert_int_equal(access(child_path(pp, pid), F_OK), -1);
    sps_shutdown(); /* and the parent's handler finds nothing to write */
}

/* ---- a paused parent, a session without a file ---------------------------- */

static void test_paused_and_no_file(void **state) {
    (void)state;
    sps_config_t cfg = config(NULL);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t O = sps_region("fcp.open"), C = sps_region("fcp.child");
    sps_begin(O);
    assert_int_equal(sps_pause(), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        XCHECK(sps_is_active() && sps_is_paused(), 80);
        record(C, 5); /* paused: nothing */
        XCHECK(sps_resume() == 0, 81);
        record(C, 6);
        sps_end(O);
        sps_stats_t st;
        XCHECK(sps_region_stats(C, &st) == 0 && st.num_calls == 6, 82);
        XCHECK(sps_region_stats(O, &st) == 0 && st.num_calls == 1, 83);
        XCHECK(sps_misuse_count() == 0, 84);
        XCHECK(sps_finalize() == 0, 85); /* no file: the statistics only */
        _exit(0);
    }
    wait_ok(pid);
    assert_int_equal(sps_resume(), 0);
    sps_end(O);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(C, &st), 0);
    assert_int_equal(st.num_calls, 0);
    assert_int_equal(sps_region_stats(O, &st), 0);
    assert_int_equal(st.num_calls, 1);
    sps_shutdown();
}

/* A failed test leaves no session behind for the next. */
static int teardown(void **state) {
    (void)state;
    stop_threads();
    sps_shutdown();
    return 0;
}

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define FC_TSAN 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__)
#  define FC_TSAN 1
#endif

int main(void) {
    unsetenv("SPANSCOPE_FORK");
#ifdef FC_TSAN
    /* api/signals.c starts its watcher thread at setup unless it has seen
     * the fork, and its fork handler, registered after core's, runs after
     * the child's session opened: ThreadSanitizer kills a child of a
     * multithreaded process that starts a thread (die_after_fork) */
    setenv("SPANSCOPE_SIGNALS", "none", 1);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_child_path, teardown),
        cmocka_unit_test_teardown(test_env_off, teardown), /* first: no sps_fork_policy yet */
        cmocka_unit_test_teardown(test_one_thread, teardown),
        cmocka_unit_test_teardown(test_four_threads, teardown),
        cmocka_unit_test_teardown(test_grandchild, teardown),
        cmocka_unit_test_teardown(test_policy_off, teardown),
        cmocka_unit_test_teardown(test_aggregate, teardown),
        cmocka_unit_test_teardown(test_finalize_twice, teardown),
        cmocka_unit_test_teardown(test_exit_auto_finalize, teardown),
        cmocka_unit_test_teardown(test_paused_and_no_file, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
