/* test_emit_nvtx.c -- NVTX emission (issue 38 parts 1 and 5), without a GPU.
 *
 * Two CTest entries run this program:
 * - test_emit_nvtx: NVTX_INJECTION64_PATH names tests/c/nvtx_inject.c's
 *   library (a test NVTX tool that records what it receives; read here
 *   through its nvtx_inject_* functions): names, nesting order, the domain
 *   "spanscope", one registered string per region, several threads, on
 *   and off at run time, with and without a session (recording, paused,
 *   aggregate, capture-stacks switched, cfg.emit), a fork's child;
 * - test_emit_nvtx_notool: no tool attached: emission is a no-op and the
 *   session records exactly as without it.
 * Both check the public API's errors and that sps__active (the hot path's
 * state) leaves and comes back to the fast path's value. */
#include "testutil.h"
#include "core/core.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* the tool's functions (nvtx_inject.c) */
static int (*inj_initialized)(void);
static int (*inj_count)(void);
static int (*inj_lost)(void);
static int (*inj_event)(int, char *, long *, char *, char *, size_t);
static int (*inj_domains)(const char *);
static int (*inj_registrations)(const char *, const char *);
static void (*inj_reset)(void);

static int g_tool; /* 1: NVTX_INJECTION64_PATH is set (test_emit_nvtx) */

typedef struct ev {
    char kind;
    long tid;
    char domain[96], name[96];
} ev_t;

static long my_tid(void) { return (long)syscall(SYS_gettid); }

static int hot(void) { return __atomic_load_n(&sps__active, __ATOMIC_RELAXED); }

static int nvtx_built(void) { return (sps_emit_available() & SPS_EMIT_NVTX) != 0; }

/* The tool's events, in order; *n of them (malloc'd). */
static ev_t *events(int *n) {
    *n = inj_count();
    ev_t *v = calloc((size_t)*n + 1, sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < *n; i++)
        assert_int_equal(inj_event(i, &v[i].kind, &v[i].tid, v[i].domain, v[i].name,
                                   sizeof v[i].name), 0);
    assert_int_equal(inj_lost(), 0);
    return v;
}

static void expect(const ev_t *e, char kind, const char *name) {
    assert_int_equal(e->kind, kind);
    assert_string_equal(e->domain, "spanscope");
    if (name) assert_string_equal(e->name, name);
}

static int setup_each(void **state) {
    (void)state;
    sps_shutdown();
    if (nvtx_built()) sps_emit_set(SPS_EMIT_NVTX, 0);
    if (g_tool) inj_reset();
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Both modes                                                                */
/* ------------------------------------------------------------------------ */

static void test_errors(void **state) {
    (void)state;
    assert_int_equal(sps_emit_set(0, 1), SPS_EINVAL);
    assert_int_equal(sps_emit_set(1u << 7, 1), SPS_EINVAL);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX | (1u << 9), 1), SPS_EINVAL);
    assert_int_equal(sps_emit_active(), 0);
    if (!(sps_emit_available() & SPS_EMIT_ITT)) {
        /* not built: a clear error, and nothing turned on, NVTX included */
        assert_int_equal(sps_emit_set(SPS_EMIT_ITT, 1), SPS_ENOTSUP);
        assert_int_equal(sps_emit_set(SPS_EMIT_ITT | SPS_EMIT_NVTX, 1), SPS_ENOTSUP);
        assert_int_equal(sps_emit_active(), 0);
    }
    /* the config field: unknown bits and the padding */
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.emit = 1u << 6;
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
    cfg.emit = 0;
    cfg.reserved2_ = 1;
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
    assert_false(sps_is_active());
    if (!nvtx_built()) {
        assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), SPS_ENOTSUP);
        cfg = (sps_config_t)SPS_CONFIG_INIT;
        cfg.emit = SPS_EMIT_NVTX;
        assert_int_equal(sps_setup(&cfg), SPS_ENOTSUP);
        assert_int_equal(hot(), SPS__OFF);
        return;
    }
    /* on twice, off twice: harmless, no count */
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(sps_emit_active(), SPS_EMIT_NVTX);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(sps_emit_active(), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(sps_emit_active(), 0);
    assert_int_equal(hot(), SPS__OFF);
}

/* sps__active through every store of the state while emitting: session
 * open and close, pause and resume, the capture-stacks switch. */
static void test_hot_state(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip(); /* no tool: test_no_tool */
    assert_int_equal(hot(), SPS__OFF);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    assert_int_equal(sps_pause(), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    assert_int_equal(sps_resume(), 0);
    assert_int_equal(sps_capture_stacks(1), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    assert_int_equal(sps_capture_stacks(0), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(hot(), SPS__EVENTS); /* the fast path again */
    assert_int_equal(sps_pause(), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(hot(), SPS__EMITTING);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(hot(), SPS__OFF); /* paused */
    assert_int_equal(sps_resume(), 0);
    assert_int_equal(hot(), SPS__EVENTS);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    sps_shutdown();
    assert_int_equal(hot(), SPS__EMITTING); /* on before setup: stays on */
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(hot(), SPS__OFF);
}

/* While emitting, the session records what it records without (events,
 * paused, aggregate): the emitters' path records as the real state says. */
static void test_records_as_without(void **state) {
    (void)state;
    if (!nvtx_built()) skip();
    sps_region_t r = sps_region("emit rec");
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    for (int i = 0; i < 5; i++) { /* no session: nothing recorded, no crash */
        sps_begin(r);
        sps_end(r);
    }
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    for (int i = 0; i < 100; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_pause(), 0);
    for (int i = 0; i < 50; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_resume(), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(st.num_calls, 100);
    sps_shutdown();
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    for (int i = 0; i < 30; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(st.num_calls, 30);
    sps_shutdown();
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
}

/* ------------------------------------------------------------------------ */
/* With the test tool                                                        */
/* ------------------------------------------------------------------------ */

static void test_names_nesting(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_region_t outer = sps_region("nv outer"), inner = sps_region("nv inner");
    sps_begin(outer); /* emitter off: nothing */
    sps_end(outer);
    assert_int_equal(inj_count(), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0); /* no session */
    for (int k = 0; k < 3; k++) {
        sps_begin(outer);
        sps_begin(inner);
        sps_end(inner);
        sps_end(outer);
    }
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    sps_begin(outer); /* off again: nothing */
    sps_end(outer);
    assert_int_equal(inj_initialized(), 1);
    int n;
    ev_t *e = events(&n);
    assert_int_equal(n, 12);
    for (int k = 0; k < 3; k++) {
        expect(&e[4 * k + 0], 'P', "nv outer");
        expect(&e[4 * k + 1], 'P', "nv inner");
        expect(&e[4 * k + 2], 'O', NULL);
        expect(&e[4 * k + 3], 'O', NULL);
    }
    for (int i = 0; i < n; i++) assert_int_equal(e[i].tid, my_tid());
    free(e);
    assert_int_equal(inj_domains("spanscope"), 1);
    assert_int_equal(inj_registrations("spanscope", "nv outer"), 1);
    assert_int_equal(inj_registrations("spanscope", "nv inner"), 1);
}

/* With a session: recorded and emitted; paused: emitted, not recorded;
 * cfg.emit turns it on for the session only. */
static void test_with_session(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_region_t r = sps_region("nv session");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.emit = SPS_EMIT_NVTX;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_emit_active(), SPS_EMIT_NVTX);
    for (int i = 0; i < 10; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_pause(), 0);
    sps_begin(r);
    sps_end(r);
    assert_int_equal(sps_resume(), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(st.num_calls, 10);
    sps_shutdown();
    assert_int_equal(sps_emit_active(), 0); /* cfg.emit's: off with the session */
    sps_begin(r);
    sps_end(r);
    int n;
    ev_t *e = events(&n);
    assert_int_equal(n, 22);
    for (int i = 0; i < n; i++) expect(&e[i], i % 2 ? 'O' : 'P', i % 2 ? NULL : "nv session");
    free(e);
    assert_int_equal(inj_registrations("spanscope", "nv session"), 1);
}

/* A region open when the emitter turns on: its end pops nothing (the tool
 * never saw its push). */
static void test_on_inside_a_region(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_region_t a = sps_region("nv a"), b = sps_region("nv b");
    sps_begin(a);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    sps_begin(b);
    sps_end(b);
    sps_end(a);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    int n;
    ev_t *e = events(&n);
    assert_int_equal(n, 2);
    expect(&e[0], 'P', "nv b");
    expect(&e[1], 'O', NULL);
    free(e);
}

#define NTHREADS 4
#define NITER 500

typedef struct targ {
    int idx;
    long tid;
} targ_t;

static void *worker(void *p) {
    targ_t *a = p;
    a->tid = my_tid();
    char name[32];
    snprintf(name, sizeof name, "nv thread %d", a->idx);
    sps_region_t mine = sps_region(name), shared = sps_region("nv shared");
    for (int i = 0; i < NITER; i++) {
        sps_begin(mine);
        sps_begin(shared);
        sps_end(shared);
        sps_end(mine);
    }
    return NULL;
}

/* Several threads at once (with a session): each thread's events nest
 * alone, every string is registered once. */
static void test_threads(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    pthread_t th[NTHREADS];
    targ_t args[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        args[i] = (targ_t){i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(sps_region("nv shared"), &st), 0);
    assert_int_equal(st.num_calls, NTHREADS * NITER);
    sps_shutdown();
    int n;
    ev_t *e = events(&n);
    assert_int_equal(n, NTHREADS * NITER * 4);
    for (int t = 0; t < NTHREADS; t++) {
        char name[32];
        snprintf(name, sizeof name, "nv thread %d", t);
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (e[i].tid != args[t].tid) continue;
            switch (k % 4) {
            case 0: expect(&e[i], 'P', name); break;
            case 1: expect(&e[i], 'P', "nv shared"); break;
            default: expect(&e[i], 'O', NULL);
            }
            k++;
        }
        assert_int_equal(k, NITER * 4);
        assert_int_equal(inj_registrations("spanscope", name), 1);
    }
    free(e);
    assert_int_equal(inj_registrations("spanscope", "nv shared"), 1);
    assert_int_equal(inj_domains("spanscope"), 1);
}

/* Threads emit while another turns the emitter on and off: no crash, no
 * pop without its push on any thread, every push named. */
static void *flipper(void *p) {
    volatile int *stop = p;
    while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
        sps_emit_set(SPS_EMIT_NVTX, 1);
        sps_emit_set(SPS_EMIT_NVTX, 0);
    }
    return NULL;
}

static void test_flip_while_emitting(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    int stop = 0;
    pthread_t f, th[2];
    targ_t args[2] = {{10, 0}, {11, 0}};
    assert_int_equal(pthread_create(&f, NULL, flipper, &stop), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(f, NULL);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(sps_region("nv thread 10"), &st), 0);
    assert_int_equal(st.num_calls, NITER); /* recorded whatever the emitter did */
    sps_shutdown();
    int n;
    ev_t *e = events(&n);
    for (int t = 0; t < 2; t++) {
        int depth = 0;
        for (int i = 0; i < n; i++) {
            if (e[i].tid != args[t].tid) continue;
            assert_string_equal(e[i].domain, "spanscope");
            if (e[i].kind == 'P') {
                assert_true(strncmp(e[i].name, "nv ", 3) == 0);
                depth++;
            } else {
                assert_int_equal(e[i].kind, 'O');
                assert_true(depth > 0);
                depth--;
            }
        }
    }
    free(e);
}

/* A fork's child keeps emitting (its state store keeps SPS__EMITTING). */
static void test_fork_child(void **state) {
    (void)state;
    if (!g_tool || !nvtx_built()) skip();
    sps_region_t r = sps_region("nv fork");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        inj_reset();
        int ok = __atomic_load_n(&sps__active, __ATOMIC_RELAXED) == SPS__EMITTING;
        sps_begin(r);
        sps_end(r);
        char kind, dom[96], name[96];
        long tid;
        ok = ok && inj_count() == 2 && inj_event(0, &kind, &tid, dom, name, sizeof name) == 0 &&
             kind == 'P' && strcmp(dom, "spanscope") == 0 && strcmp(name, "nv fork") == 0;
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Without a tool                                                            */
/* ------------------------------------------------------------------------ */

static void test_no_tool(void **state) {
    (void)state;
    if (g_tool || !nvtx_built()) skip();
    sps_region_t r = sps_region("nv notool"), q = sps_region("nv notool inner");
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(sps_emit_active(), SPS_EMIT_NVTX);
    sps_begin(r); /* no session: nothing happens, nothing breaks */
    sps_end(r);
    /* the first begin found no tool: the emitter is idle (emit.h), still on
     * for the API, and the hot path is the fast one again */
    assert_int_equal(sps_emit_active(), SPS_EMIT_NVTX);
    assert_int_equal(hot(), SPS__OFF);
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(hot(), SPS__EVENTS);
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0); /* off and on: idle stays */
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 1), 0);
    assert_int_equal(hot(), SPS__EVENTS);
    for (int i = 0; i < 1000; i++) {
        sps_begin(r);
        sps_begin(q);
        sps_end(q);
        sps_end(r);
    }
    sps_stats_t st, sq;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(sps_region_stats(q, &sq), 0);
    assert_int_equal(st.num_calls, 1000);
    assert_int_equal(sq.num_calls, 1000);
    assert_true(st.total_ns >= sq.total_ns); /* nesting kept */
    sps_shutdown();
    assert_int_equal(sps_emit_set(SPS_EMIT_NVTX, 0), 0);
    assert_int_equal(hot(), SPS__OFF);
}

int main(void) {
    const char *path = getenv("NVTX_INJECTION64_PATH");
    g_tool = path && *path;
    if (g_tool) {
        void *h = dlopen(path, RTLD_NOW);
        if (!h) {
            fprintf(stderr, "test_emit_nvtx: %s\n", dlerror());
            return 1;
        }
        *(void **)&inj_initialized = dlsym(h, "nvtx_inject_initialized");
        *(void **)&inj_count = dlsym(h, "nvtx_inject_count");
        *(void **)&inj_lost = dlsym(h, "nvtx_inject_lost");
        *(void **)&inj_event = dlsym(h, "nvtx_inject_event");
        *(void **)&inj_domains = dlsym(h, "nvtx_inject_domains");
        *(void **)&inj_registrations = dlsym(h, "nvtx_inject_registrations");
        *(void **)&inj_reset = dlsym(h, "nvtx_inject_reset");
        if (!inj_initialized || !inj_count || !inj_lost || !inj_event || !inj_domains ||
            !inj_registrations || !inj_reset) {
            fprintf(stderr, "test_emit_nvtx: %s lacks the nvtx_inject_* functions\n", path);
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_errors, setup_each),
        cmocka_unit_test_setup(test_hot_state, setup_each),
        cmocka_unit_test_setup(test_records_as_without, setup_each),
        cmocka_unit_test_setup(test_names_nesting, setup_each),
        cmocka_unit_test_setup(test_with_session, setup_each),
        cmocka_unit_test_setup(test_on_inside_a_region, setup_each),
        cmocka_unit_test_setup(test_threads, setup_each),
        cmocka_unit_test_setup(test_flip_while_emitting, setup_each),
        cmocka_unit_test_setup(test_fork_child, setup_each),
        cmocka_unit_test_setup(test_no_tool, setup_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
