/* test_query.c -- the per-call queries (sps_region_calls) stay cheap and
 * exact.  Cheap: a query decodes the records written since the previous
 * one, no more (sps_query_info's records_read, counted, never timed).
 * Exact: a query returns what a merged pass over the whole period returns
 * (sps__collect_calls over a snapshot: the algorithm the queries used
 * before they kept anything, called here as the reference), and what the
 * next finalize writes -- on random recordings of several threads with
 * misuse, recursion, calls carried across checkpoints, failed writes and
 * spilled chunks, on a clock mapping that steps back, and while other
 * threads record. */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"
#include "sps_int.h" /* the reference pass, the session lock, the time map */

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static sps_query_info_t qinfo(void) {
    sps_query_info_t q;
    sps_query_info(&q);
    return q;
}

/* The reference: r's calls since the last finalize by one merged pass over
 * the pending period and one over the current period, as sps_region_calls
 * computed them before the collector (the caller has made the analysis
 * current with a query, and nothing records meanwhile).  *s, *d malloc'd. */
static size_t ref_calls(sps_region_t r, int64_t **s, int64_t **d) {
    pthread_mutex_lock(&sps__g.lock);
    sps__snap_t *snap = sps__snap_build(0);
    assert_non_null(snap);
    sps__snap_t *p = sps__g.pending;
    size_t np = p ? sps__collect_calls(p, r, NULL, NULL, 0) : 0;
    size_t nc = sps__collect_calls(snap, r, NULL, NULL, 0);
    *s = calloc(np + nc + 1, sizeof **s);
    *d = calloc(np + nc + 1, sizeof **d);
    if (p) sps__collect_calls(p, r, *s, *d, np);
    sps__collect_calls(snap, r, *s + np, *d + np, nc);
    sps__snap_free(snap);
    pthread_mutex_unlock(&sps__g.lock);
    return np + nc;
}

/* r's calls by the public query (sized, then copied). */
static size_t got_calls(sps_region_t r, int64_t **s, int64_t **d) {
    size_t n = sps_region_calls(r, NULL, NULL, 0);
    *s = calloc(n + 1, sizeof **s);
    *d = calloc(n + 1, sizeof **d);
    assert_int_equal(sps_region_calls(r, *s, *d, n), n);
    return n;
}

/* Queries r and checks the answer against the reference; returns the count. */
static size_t check_region(sps_region_t r) {
    int64_t *gs, *gd, *rs, *rd;
    size_t n = got_calls(r, &gs, &gd);
    size_t m = ref_calls(r, &rs, &rd);
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++) {
        if (gs[i] != rs[i] || gd[i] != rd[i])
            fail_msg("region %u call %zu of %zu: query (%lld, %lld), pass (%lld, %lld)",
                     (unsigned)r, i, n, (long long)gs[i], (long long)gd[i],
                     (long long)rs[i], (long long)rd[i]);
    }
    /* a partial copy is the answer's prefix, durations alone too */
    if (n > 2) {
        int64_t *d2 = calloc(n, sizeof *d2);
        assert_int_equal(sps_region_durations(r, d2, n / 2), n);
        assert_memory_equal(d2, gd, (n / 2) * sizeof *d2);
        free(d2);
    }
    free(gs), free(gd), free(rs), free(rd);
    return n;
}

/* Checks that the file's row of region `name` holds exactly starts/durs. */
static void check_file_row(const tu_h5_t *h, const char *name, const int64_t *s,
                           const int64_t *d, size_t n) {
    long row = tu_h5_row(h, name);
    if (n == 0) {
        assert_true(row < 0 || h->counts[row] == 0);
        return;
    }
    assert_true(row >= 0);
    assert_int_equal(h->counts[row], n);
    int64_t *fs = calloc(n, sizeof *fs);
    tu_h5_starts(h, row, fs);
    for (size_t i = 0; i < n; i++) {
        if (fs[i] != s[i] || h->durations[h->offsets[row] + i] != d[i])
            fail_msg("%s call %zu: query (%lld, %lld), file (%lld, %lld)", name, i,
                     (long long)s[i], (long long)d[i], (long long)fs[i],
                     (long long)h->durations[h->offsets[row] + i]);
    }
    free(fs);
}

static void loop_calls(sps_region_t r, int n) {
    for (int i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
}

/* ------------------------------------------------------------------------ */
/* Cost: the records since the previous query                                */
/* ------------------------------------------------------------------------ */

typedef struct burst {
    sps_region_t r;
    int n;
} burst_t;

static void *burst_main(void *arg) {
    burst_t *b = arg;
    loop_calls(b->r, b->n);
    return NULL;
}

static void test_cost_is_new_records(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t R = sps_region("q.cost"), S = sps_region("q.cost.other");
    loop_calls(R, 20000);
    sps_query_info_t a = qinfo();
    assert_int_equal(sps_region_durations(R, NULL, 0), 20000);
    sps_query_info_t b = qinfo();
    assert_int_equal(b.records_read - a.records_read, 40000); /* the period, once */
    assert_int_equal(b.regions, 1);
    assert_true(b.bytes >= 20000 * 16);
    for (int k = 1; k <= 200; k += 17) {
        loop_calls(R, k);
        loop_calls(S, 3);
        a = qinfo();
        size_t n = sps_region_durations(R, NULL, 0);
        b = qinfo();
        /* every new record once: R's and S's (S is not kept, but its
         * records are decoded with the rest) */
        assert_int_equal(b.records_read - a.records_read, 2 * (k + 3));
        assert_int_equal(b.rebuilds, a.rebuilds);
        int64_t *d = calloc(n, sizeof *d);
        a = qinfo();
        assert_int_equal(sps_region_durations(R, d, n), n); /* nothing new */
        assert_int_equal(qinfo().records_read, a.records_read);
        free(d);
    }
    /* threads: the records of each */
    burst_t bs[3] = {{R, 1000}, {S, 2000}, {R, 3000}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++) assert_int_equal(pthread_create(&th[i], NULL, burst_main, &bs[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    a = qinfo();
    check_region(R);
    b = qinfo();
    assert_int_equal(b.records_read - a.records_read, 2 * 6000);
    /* a region asked for the first time reads the period again, once */
    a = qinfo();
    size_t ns = check_region(S);
    b = qinfo();
    assert_int_equal(b.rebuilds, a.rebuilds + 1);
    assert_int_equal(b.regions, 2);
    assert_int_equal(ns, 12 * 3 + 2000);
    a = qinfo();
    check_region(R);
    check_region(S);
    assert_int_equal(qinfo().records_read, a.records_read);
    /* a finalize ends the period: its calls are dropped, the next query
     * reads only what came after */
    uint64_t kept_bytes = qinfo().bytes;
    assert_int_equal(sps_finalize_to(NULL), 0);
    loop_calls(R, 10);
    a = qinfo();
    assert_int_equal(sps_region_durations(R, NULL, 0), 10);
    b = qinfo();
    assert_int_equal(b.records_read - a.records_read, 20);
    assert_int_equal(b.rebuilds, a.rebuilds);
    assert_int_equal(b.regions, 1);
    assert_true(b.bytes < kept_bytes);
    sps_shutdown();
    b = qinfo();
    assert_int_equal(b.regions, 0);
    assert_int_equal(b.bytes, 0);
    assert_int_equal(sps_region_durations(R, NULL, 0), 0);
}

/* ------------------------------------------------------------------------ */
/* Random recordings: the answer is the merged pass's                        */
/* ------------------------------------------------------------------------ */

#define NREG 5
#define NWORK 3
#define MAXOPEN 48

static uint64_t rng(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

typedef struct actor {
    sps_region_t open[MAXOPEN];
    int nopen;
    uint64_t x;
} actor_t;

static sps_region_t g_regs[NREG];

/* ops random operations of a on the calling thread: begins, ends of the
 * innermost call, ends of another region (misuse: closes what is above it,
 * or is ignored), zero-length calls; nests regions in themselves too. */
static void actor_run(actor_t *a, int ops) {
    for (int i = 0; i < ops; i++) {
        uint64_t v = rng(&a->x);
        int what = (int)(v % 100);
        sps_region_t r = g_regs[(v >> 8) % NREG];
        if (what < 46 && a->nopen < MAXOPEN) {
            sps_begin(r);
            a->open[a->nopen++] = r;
        } else if (what < 92 && a->nopen > 0) {
            sps_end(a->open[--a->nopen]);
        } else if (what < 96) {
            sps_end(r);
            int k = a->nopen;
            while (k > 0 && a->open[k - 1] != r) k--;
            if (k > 0) a->nopen = k - 1;
        } else {
            sps_begin(r);
            sps_end(r);
        }
    }
}

typedef struct worker {
    pthread_t th;
    sem_t go, done;
    actor_t a;
    int ops;       /* -1: exit */
} worker_t;

static void *worker_main(void *arg) {
    worker_t *w = arg;
    for (;;) {
        sem_wait(&w->go);
        if (w->ops < 0) break;
        actor_run(&w->a, w->ops);
        sem_post(&w->done);
    }
    return NULL;
}

/* One random session: workers take turns (one records at a time, so each
 * query sees a quiet session and the reference sees the same records);
 * between turns the main thread records, queries a region and checks it,
 * or ends a period (now and then with a write that fails). */
static void random_session(uint64_t seed, size_t chunk_size, size_t memory_limit,
                           int steps, const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.chunk_size = chunk_size;
    cfg.memory_limit = memory_limit;
    assert_int_equal(sps_setup(&cfg), 0);
    char name[32];
    for (int i = 0; i < NREG; i++) {
        snprintf(name, sizeof name, "q.rand.%d", i);
        g_regs[i] = sps_region(name);
    }
    /* on the heap: if a check fails, cmocka leaves this frame with the
     * workers blocked on their semaphores, which must not be the next
     * test's */
    worker_t *w = calloc(NWORK, sizeof *w);
    assert_non_null(w);
    for (int i = 0; i < NWORK; i++) {
        w[i].a.x = seed * 31 + (uint64_t)i + 1;
        sem_init(&w[i].go, 0, 0);
        sem_init(&w[i].done, 0, 0);
        assert_int_equal(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
    }
    actor_t me = {.x = seed};
    uint64_t x = seed ^ 0x9e3779b97f4a7c15ull;
    int failed_write = 0;
    for (int s = 0; s < steps; s++) {
        int what = (int)(rng(&x) % 100);
        if (what < 55) {
            worker_t *k = &w[rng(&x) % NWORK];
            k->ops = (int)(rng(&x) % 8 == 0 ? 1500 + rng(&x) % 3000 : 1 + rng(&x) % 200);
            sem_post(&k->go);
            sem_wait(&k->done);
        } else if (what < 70) {
            actor_run(&me, (int)(1 + rng(&x) % 300));
        } else if (what < 96) {
            check_region(g_regs[rng(&x) % NREG]);
        } else if (what < 98 || failed_write) {
            assert_int_equal(sps_finalize_to(NULL), 0);
            failed_write = 0;
        } else {
            assert_int_equal(sps_finalize_to("/nonexistent-dir/q.h5"), SPS_EPATH);
            failed_write = 1;
        }
    }
    if (failed_write) assert_int_equal(sps_finalize_to(NULL), 0);
    if (memory_limit < 4 * chunk_size) {
        pthread_mutex_lock(&sps__g.lock);
        int64_t spilled = sps__g.spill_end;
        pthread_mutex_unlock(&sps__g.lock);
        assert_true(spilled > 0); /* chunks were read back from the spill file */
    }
    /* the last answers are the file's rows */
    int64_t *s[NREG], *d[NREG];
    size_t n[NREG];
    for (int i = 0; i < NREG; i++) {
        check_region(g_regs[i]);
        n[i] = got_calls(g_regs[i], &s[i], &d[i]);
    }
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    for (int i = 0; i < NREG; i++) {
        snprintf(name, sizeof name, "q.rand.%d", i);
        check_file_row(h, name, s[i], d[i], n[i]);
        free(s[i]);
        free(d[i]);
        assert_int_equal(sps_region_durations(g_regs[i], NULL, 0), 0);
    }
    tu_h5_free(h);
    for (int i = 0; i < NWORK; i++) {
        w[i].ops = -1;
        sem_post(&w[i].go);
        pthread_join(w[i].th, NULL);
        sem_destroy(&w[i].go);
        sem_destroy(&w[i].done);
    }
    free(w);
    sps_shutdown();
}

static void test_random_in_memory(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++)
        random_session(seed, 4096, 64 << 20, 400, tu_path("query_rand_mem.h5"));
}

/* two chunks of memory for four threads: retired chunks go to the spill
 * file at once, and a query resumes inside chunks that were spilled */
static void test_random_spilled(void **state) {
    (void)state;
    for (uint64_t seed = 11; seed <= 12; seed++)
        random_session(seed, 4096, 8192, 400, tu_path("query_rand_spill.h5"));
}

/* ------------------------------------------------------------------------ */
/* A clock mapping that steps back                                           */
/* ------------------------------------------------------------------------ */

/* An anchor whose ns lags the clock: records after it map to times before
 * those of records just before it (what a short segment's rate can do, in
 * a large dose).  The merged pass then takes records in an order that is
 * not start order; the queries must follow it. */
static void step_back_anchor(void) {
    pthread_mutex_lock(&sps__g.lock);
    sps__anchor_t last = sps__g.tm.a[sps__g.tm.n - 1];
    sps__anchor_t a = sps__anchor_now();
    a.ns = last.ns + 1000; /* accepted: not before the last one */
    assert_int_equal(sps__timemap_add(&sps__g.tm, a), 0);
    pthread_mutex_unlock(&sps__g.lock);
}

static void test_clock_steps_back(void **state) {
    (void)state;
    if (strcmp(sps_clock_source(), "tsc") != 0) skip(); /* ticks are ns: no map */
    assert_int_equal(sps_setup(NULL), 0);
    for (int i = 0; i < NREG; i++) {
        char name[32];
        snprintf(name, sizeof name, "q.step.%d", i);
        g_regs[i] = sps_region(name);
    }
    sps_region_t O = g_regs[1];
    worker_t *w = calloc(2, sizeof *w); /* on the heap: see random_session */
    assert_non_null(w);
    for (int i = 0; i < 2; i++) {
        w[i].a.x = (uint64_t)i + 5;
        sem_init(&w[i].go, 0, 0);
        sem_init(&w[i].done, 0, 0);
        assert_int_equal(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
    }
    /* The step: thread A records 20 ms after the session's anchor, then an
     * anchor at that anchor's time + 1 us: what follows maps to times
     * before A's calls until the map has caught up (the next anchor, taken
     * 20 ms later at the earliest).  Then the main thread (at once), A and B
     * record; no query before, it would add a true anchor. */
    sps_begin(O);
    tu_spin_ns(20000000);
    w[0].ops = 200;
    sem_post(&w[0].go), sem_wait(&w[0].done);
    step_back_anchor();
    actor_t me = {.x = 77};
    actor_run(&me, 100);
    w[0].ops = 150;
    sem_post(&w[0].go), sem_wait(&w[0].done);
    w[1].ops = 150;
    sem_post(&w[1].go), sem_wait(&w[1].done);
    sps_end(O);
    tu_spin_ns(20000000);
    int64_t *s, *d;
    size_t n = 0;
    for (int i = 0; i < NREG; i++) check_region(g_regs[i]);
    /* the answer is not in start order: the step is really met */
    int inversions = 0;
    for (int i = 0; i < NREG; i++) {
        n = got_calls(g_regs[i], &s, &d);
        for (size_t k = 1; k < n; k++) inversions += s[k] < s[k - 1];
        free(s), free(d);
    }
    assert_true(inversions > 0);
    /* more of the same, now with queries between the turns */
    for (int t = 0; t < 20; t++) {
        w[t % 2].ops = 50;
        sem_post(&w[t % 2].go), sem_wait(&w[t % 2].done);
        if (t % 5 == 4) step_back_anchor();
        check_region(g_regs[t % NREG]);
    }
    int64_t *ss[NREG], *dd[NREG];
    size_t nn[NREG];
    for (int i = 0; i < NREG; i++) nn[i] = got_calls(g_regs[i], &ss[i], &dd[i]);
    const char *path = tu_path("query_step.h5");
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    for (int i = 0; i < NREG; i++) {
        char name[32];
        snprintf(name, sizeof name, "q.step.%d", i);
        check_file_row(h, name, ss[i], dd[i], nn[i]);
        free(ss[i]), free(dd[i]);
    }
    tu_h5_free(h);
    for (int i = 0; i < 2; i++) {
        w[i].ops = -1;
        sem_post(&w[i].go);
        pthread_join(w[i].th, NULL);
        sem_destroy(&w[i].go);
        sem_destroy(&w[i].done);
    }
    free(w);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Queries while other threads record                                        */
/* ------------------------------------------------------------------------ */

static atomic_int g_run;
static sps_region_t g_outer, g_inner;

static void *rec_main(void *arg) {
    int n = *(int *)arg;
    while (!atomic_load(&g_run)) ;
    for (int i = 0; i < n; i++) {
        sps_begin(g_outer);
        for (int j = 0; j < 4; j++) {
            sps_begin(g_inner);
            sps_end(g_inner);
        }
        sps_end(g_outer);
    }
    return NULL;
}

static void test_queries_while_recording(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.chunk_size = 4096;
    assert_int_equal(sps_setup(&cfg), 0);
    g_outer = sps_region("q.live.outer");
    g_inner = sps_region("q.live.inner");
    int n = 50000;
    pthread_t th[2];
    atomic_store(&g_run, 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, rec_main, &n), 0);
    atomic_store(&g_run, 1);
    size_t last_o = 0, last_i = 0;
    int64_t buf[64];
    for (int q = 0; q < 300; q++) {
        size_t o = sps_region_calls(g_outer, buf, NULL, 64);
        size_t i = sps_region_durations(g_inner, buf, 64);
        assert_true(o >= last_o && i >= last_i); /* calls are never lost */
        for (size_t k = 1; k < (o < 64 ? o : 64); k++) (void)buf[k];
        last_o = o, last_i = i;
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_int_equal(check_region(g_outer), 2 * n);
    assert_int_equal(check_region(g_inner), 8 * n);
    int64_t *s, *d;
    size_t k = got_calls(g_inner, &s, &d);
    const char *path = tu_path("query_live.h5");
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    check_file_row(h, "q.live.inner", s, d, k);
    tu_h5_free(h);
    free(s), free(d);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Failed writes, shutdown, fork                                             */
/* ------------------------------------------------------------------------ */

static void test_pending_and_fork(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t R = sps_region("q.pend");
    loop_calls(R, 100);
    sps_begin(R); /* open across the checkpoint: carried */
    assert_int_equal(check_region(R), 100);
    assert_int_equal(sps_finalize_to("/nonexistent-dir/q.h5"), SPS_EPATH);
    loop_calls(R, 5);
    sps_end(R);
    /* the pending period's calls first, then the current one's */
    assert_int_equal(check_region(R), 106);
    loop_calls(R, 7);
    sps_query_info_t a = qinfo();
    assert_int_equal(check_region(R), 113);
    assert_int_equal(qinfo().records_read - a.records_read, 14);
    /* policy off (SPANSCOPE_FORK=off): the child's copy of the session is
     * switched off, so its queries see nothing of the parent's and a
     * session of its own starts from nothing (the default, own, is
     * test_fork_child.c's) */
    int policy = sps_fork_policy(0);
    pid_t pid = fork();
    sps_fork_policy(policy);
    assert_true(pid >= 0);
    if (pid == 0) {
        /* the child's copy of the session is off, and it may start its own */
        int bad = sps_region_durations(R, NULL, 0) != 0;
        bad |= sps_setup(NULL) != 0;
        sps_region_t C = sps_region("q.pend.child");
        loop_calls(C, 3);
        bad |= sps_region_durations(C, NULL, 0) != 3;
        bad |= sps_region_durations(R, NULL, 0) != 0;
        sps_shutdown();
        _exit(bad);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(check_region(R), 113);
    assert_int_equal(sps_finalize_to(NULL), 0);
    assert_int_equal(check_region(R), 0);
    loop_calls(R, 2);
    assert_int_equal(check_region(R), 2);
    /* a new session starts from nothing */
    sps_shutdown();
    assert_int_equal(sps_setup(NULL), 0);
    loop_calls(R, 4);
    assert_int_equal(check_region(R), 4);
    sps_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_cost_is_new_records),
        TU_TEST(test_random_in_memory),
        TU_TEST(test_random_spilled),
        TU_TEST(test_clock_steps_back),
        TU_TEST(test_queries_while_recording),
        TU_TEST(test_pending_and_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
