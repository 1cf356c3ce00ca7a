/* test_spill_pack.c -- spilled chunks are packed (core/pack.c) and written
 * by the spill writer thread (core/spill.c):
 *   - every consumer gets identical events whether a chunk is in memory or
 *     spilled: the merged pass (what the file is written from), the
 *     analyzer's statistics, and the file itself;
 *   - a regular loop spills at most 2 bytes per call, into a handful of
 *     run descriptors;
 *   - a full disk (RLIMIT_FSIZE) or an unusable spill directory drops and
 *     counts, never loses a kept call, and spilling resumes after a
 *     finalize;
 *   - the writer in the recording thread (SPANSCOPE_SPILL_THREAD=0) writes
 *     the same format;
 *   - finalize while threads record and spill, sps_shutdown/sps_setup
 *     while threads record, and fork while the writer is busy. */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"
#include "sps_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define TU_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define TU_SANITIZED 1
#  endif
#endif
#ifndef TU_SANITIZED
#  define TU_SANITIZED 0
#endif

static sps_config_t spill_cfg(const char *path, size_t chunk, size_t mem) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.chunk_size = chunk;
    cfg.memory_limit = mem;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    return cfg;
}

/* sps__g's spill counters, read under the lock (the writer updates them). */
typedef struct spill_view {
    uint64_t bytes, records, waits;
    int64_t end;
    size_t live;
    int err;
} spill_view_t;

static spill_view_t spill_view(void) {
    pthread_mutex_lock(&sps__g.lock);
    spill_view_t v = {sps__g.sp.bytes, sps__g.sp.records, sps__g.sp.waits,
                      sps__g.spill_end, sps__g.spilled_live, sps__g.sp.err};
    pthread_mutex_unlock(&sps__g.lock);
    return v;
}

/* ------------------------------------------------------------------------ */
/* The same records, in memory and spilled                                   */
/* ------------------------------------------------------------------------ */

typedef struct calls {
    sps__call_t *c;
    size_t n, cap;
} calls_t;

static int calls_add(void *ctx, const sps__call_t *c) {
    calls_t *v = ctx;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 4096;
        v->c = realloc(v->c, v->cap * sizeof *v->c);
        assert_non_null(v->c);
    }
    v->c[v->n++] = *c;
    return 0;
}

static int by_call_id(const void *a, const void *b) {
    int64_t x = ((const sps__call_t *)a)->call_id, y = ((const sps__call_t *)b)->call_id;
    return x < y ? -1 : x > y;
}

/* Under the lock: the merged pass over the session's records as they are
 * now (in memory or spilled), every completed call, by call id. */
static calls_t pass_now(void) {
    calls_t v = {0};
    sps__snap_t *s = sps__snap_build(0);
    assert_non_null(s);
    sps__pass_cb_t cb = {&v, NULL, calls_add};
    uint64_t misuse = 0;
    assert_int_equal(sps__pass_run(s, &cb, &misuse), 0);
    assert_int_equal(misuse, 0);
    sps__snap_free(s);
    qsort(v.c, v.n, sizeof *v.c, by_call_id);
    return v;
}

static void assert_same_calls(const calls_t *a, const calls_t *b) {
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const sps__call_t *x = &a->c[i], *y = &b->c[i];
        if (x->region != y->region || x->thread != y->thread || x->start != y->start ||
            x->end != y->end || x->self != y->self || x->call_id != y->call_id ||
            x->parent_id != y->parent_id || x->depth != y->depth ||
            x->ordinal != y->ordinal || x->seq != y->seq)
            fail_msg("call %zu differs: region %u/%u start %llu/%llu end %llu/%llu "
                     "parent %lld/%lld", i, x->region, y->region,
                     (unsigned long long)x->start, (unsigned long long)y->start,
                     (unsigned long long)x->end, (unsigned long long)y->end,
                     (long long)x->parent_id, (long long)y->parent_id);
    }
}

static sps_region_t g_ra, g_rb, g_rc;

/* A 3-level tree with varied work, so that deltas and tags are irregular. */
static void *tree_worker(void *arg) {
    int seed = (int)(intptr_t)arg;
    for (int i = 0; i < 30000; i++) {
        sps_begin(g_ra);
        for (int k = 0; k < (i + seed) % 5; k++) {
            sps_begin(g_rb);
            if (k % 2) {
                sps_begin(g_rc);
                tu_spin_ns((i * 7 + k) % 300);
                sps_end(g_rc);
            }
            sps_end(g_rb);
        }
        sps_end(g_ra);
    }
    return NULL;
}

/* Re-runs the analysis from the first record (under the lock). */
static void reanalyze(void) {
    sps__analysis_reset();
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        if (t->epoch != sps__g.epoch) continue;
        t->an_chunk = t->head ? t->head : t->cur;
        t->an_pos = 0;
        t->stack.n = 0;
    }
    sps__analyze_all();
}

static void test_spilled_equals_memory(void **state) {
    (void)state;
    const char *path = tu_path("spill_pack_same.h5");
    unlink(path);
    sps_config_t cfg = spill_cfg(path, 4096, 256u << 20);
    cfg.overflow = SPS_OVERFLOW_GROW; /* nothing spills by itself */
    assert_int_equal(sps_setup(&cfg), 0);
    g_ra = sps_region("same.a");
    g_rb = sps_region("same.b");
    g_rc = sps_region("same.c");
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, tree_worker, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);

    pthread_mutex_lock(&sps__g.lock);
    /* an anchor after every event: later anchors change no conversion */
    sps__timemap_add(&sps__g.tm, sps__anchor_now());
    sps__analyze_all();
    sps__acc_t mem_acc[3] = {sps__cum_acc(g_ra), sps__cum_acc(g_rb), sps__cum_acc(g_rc)};
    calls_t in_memory = pass_now();
    assert_true(in_memory.n > 100000);
    assert_int_equal(sps__g.spilled_live, 0);

    assert_int_equal(sps__spill_all(), 0);
    size_t retired = 0;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        for (sps__chunk_t *c = t->head; c; c = c->next, retired++) assert_null(c->rec);
    assert_true(retired >= 1);
    /* the writer merged each thread's chunks into one run */
    assert_true(sps__g.spilled_live <= 2);
    assert_true(sps__g.sp.records > 100000);

    calls_t spilled = pass_now();
    assert_same_calls(&in_memory, &spilled);
    reanalyze(); /* the analyzer reads the spilled runs */
    sps__acc_t sp_acc[3] = {sps__cum_acc(g_ra), sps__cum_acc(g_rb), sps__cum_acc(g_rc)};
    for (int r = 0; r < 3; r++)
        if (memcmp(&mem_acc[r], &sp_acc[r], sizeof mem_acc[r]))
            fail_msg("region %d: statistics differ (count %llu/%llu total %llu/%llu)", r,
                     (unsigned long long)mem_acc[r].count, (unsigned long long)sp_acc[r].count,
                     (unsigned long long)mem_acc[r].total, (unsigned long long)sp_acc[r].total);
    pthread_mutex_unlock(&sps__g.lock);

    /* the file, written from the spilled runs, holds the same calls */
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(h->nev, in_memory.n);
    TU_CHECK_TREE(h);
    const sps_region_t regs[3] = {g_ra, g_rb, g_rc};
    for (int r = 0; r < 3; r++) {
        long row = tu_h5_row(h, sps_region_name(regs[r]));
        assert_true(row >= 0);
        uint64_t k = 0;
        for (size_t i = 0; i < in_memory.n; i++) {
            const sps__call_t *c = &in_memory.c[i];
            if (c->region != regs[r]) continue;
            /* a region's rows are in start order, as call ids are */
            size_t e = h->offsets[row] + k++;
            assert_int_equal(h->call_ids[e], c->call_id);
            assert_int_equal(h->parent_ids[e], c->parent_id);
            assert_int_equal(h->durations[e], (int64_t)(c->end - c->start));
        }
        assert_int_equal(k, h->counts[row]);
        assert_int_equal(mem_acc[r].count, h->counts[row]);
    }
    tu_h5_free(h);
    free(in_memory.c);
    free(spilled.c);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Bytes per call, runs                                                      */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* The merged pass's order                                                   */
/* ------------------------------------------------------------------------ */

/* What a sink saw, in the order it saw it. */
typedef struct order_log {
    uint64_t prev_ns, n, out_of_order;
    uint32_t prev_thread;
} order_log_t;

static int order_see(order_log_t *o, uint64_t ns, uint32_t thread) {
    if (o->n++ && (ns < o->prev_ns || (ns == o->prev_ns && thread < o->prev_thread)))
        o->out_of_order++;
    o->prev_ns = ns;
    o->prev_thread = thread;
    return 0;
}
static int order_begin(void *ctx, const sps__call_t *c) { return order_see(ctx, c->start, c->thread); }
static int order_end(void *ctx, const sps__call_t *c) { return order_see(ctx, c->end, c->thread); }

static atomic_int g_turn; /* whose step it is: 0 or 1 */

static void take_turn(int me) {
    while (atomic_load(&g_turn) != me) {
    }
}

/* Two threads in lockstep: A begins, B begins, A ends, B ends (and, every
 * other round, A's call is a leaf that ends before B begins).  A's leaf
 * call ends after B's begin: a sink must still get B's begin first. */
static void *lockstep(void *arg) {
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < 2000; i++) {
        take_turn(me);
        sps_begin(me ? g_rb : g_ra);
        if (!me && i % 2) sps_end(g_ra); /* a leaf before B's begin */
        atomic_store(&g_turn, 1 - me);
        take_turn(me);
        if (me || !(i % 2)) sps_end(me ? g_rb : g_ra);
        atomic_store(&g_turn, 1 - me);
    }
    return NULL;
}

/* The merged pass hands its sinks every begin and every end in (time,
 * thread) order, across threads, whatever shortcut it takes for leaf
 * calls (pass.h: sps__pass_leaf). */
static void test_pass_order(void **state) {
    (void)state;
    const char *path = tu_path("spill_pack_order.h5");
    unlink(path);
    sps_config_t cfg = spill_cfg(path, 4096, 64u << 20);
    assert_int_equal(sps_setup(&cfg), 0);
    g_ra = sps_region("order.a");
    g_rb = sps_region("order.b");
    atomic_store(&g_turn, 0);
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, lockstep, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    pthread_mutex_lock(&sps__g.lock);
    sps__timemap_add(&sps__g.tm, sps__anchor_now());
    sps__snap_t *snap = sps__snap_build(0);
    assert_non_null(snap);
    order_log_t o = {0};
    sps__pass_cb_t cb = {&o, order_begin, order_end};
    uint64_t misuse = 1;
    assert_int_equal(sps__pass_run(snap, &cb, &misuse), 0);
    sps__snap_free(snap);
    pthread_mutex_unlock(&sps__g.lock);
    assert_int_equal(misuse, 0);
    assert_int_equal(o.n, 2 * 2 * 2000); /* 4000 calls, a begin and an end each */
    assert_int_equal(o.out_of_order, 0);
    assert_int_equal(sps_finalize(), 0);
    sps_shutdown();
}

/* A regular loop through a 1 MiB pool: the writer packs it to at most
 * 2 bytes per call (about 0.7 here) in one run descriptor. */
static void test_bytes_per_call(void **state) {
    (void)state;
    const long calls = 2000000;
    sps_config_t cfg = spill_cfg(NULL, 65536, 1u << 20);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("pack.loop");
    for (long i = 0; i < calls; i++) {
        sps_begin(r);
        sps_end(r);
    }
    spill_view_t v = spill_view();
    assert_true(v.records > (uint64_t)calls); /* most of it went to the file */
    assert_int_equal(v.end, (int64_t)v.bytes);
    double per_call = 2.0 * (double)v.bytes / (double)v.records;
    print_message("spilled %llu records in %llu bytes: %.3f B per call, %llu waits\n",
                  (unsigned long long)v.records, (unsigned long long)v.bytes, per_call,
                  (unsigned long long)v.waits);
    /* instrumented code (sanitizers) has irregular timing: raw at worst */
    if (per_call > (TU_SANITIZED ? 16.0 : 2.0))
        fail_msg("%.3f bytes per spilled call", per_call);
    assert_true(v.live <= 2);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(st.num_calls, (uint64_t)calls);
    assert_int_equal(sps_dropped(), 0);
    assert_int_equal(sps_region_durations(r, NULL, 0), (size_t)calls);
    sps_shutdown();
}

/* Queries while the loop spills: the analyzer's cursor lands inside a
 * run the writer keeps extending, and each query resumes there (stepping
 * over the packed chunks it has read); counts and totals stay exact. */
static void test_queries_while_spilling(void **state) {
    (void)state;
    sps_config_t cfg = spill_cfg(tu_path("spill_pack_query.h5"), 4096, 8 * 4096);
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("query.loop"), q = sps_region("query.inner");
    uint64_t calls = 0;
    for (int k = 0; k < 40; k++) {
        for (int i = 0; i < 20000; i++, calls++) {
            sps_begin(r);
            if (i % 16 == 0) {
                sps_begin(q);
                sps_end(q);
            }
            sps_end(r);
        }
        sps_stats_t st;
        assert_int_equal(sps_region_stats(r, &st), 0);
        assert_int_equal(st.num_calls, calls);
    }
    assert_true(spill_view().records > calls);
    sps_stats_t st, sq;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_int_equal(sps_region_stats(q, &sq), 0);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(tu_path("spill_pack_query.h5"));
    assert_non_null(h);
    assert_true(h->ok);
    long row = tu_h5_row(h, "query.loop");
    assert_int_equal(h->counts[row], calls);
    int64_t tot = 0;
    for (uint64_t e = 0; e < h->counts[row]; e++) tot += h->durations[h->offsets[row] + e];
    TU_ASSERT_NEAR(tot, st.total_ns, 0, 0); /* the same ns, read twice */
    assert_int_equal(tu_h5_count(h, "query.inner"), sq.num_calls);
    TU_CHECK_TREE(h);
    tu_h5_free(h);
    sps_shutdown();
}

/* SPANSCOPE_SPILL_THREAD=0: the recording thread packs and writes; the
 * format and the counts are the same. */
static void test_sync_writer(void **state) {
    (void)state;
    setenv("SPANSCOPE_SPILL_THREAD", "0", 1);
    sps_config_t cfg = spill_cfg(tu_path("spill_pack_sync.h5"), 4096, 8192);
    assert_int_equal(sps_setup(&cfg), 0);
    unsetenv("SPANSCOPE_SPILL_THREAD");
    sps_region_t a = sps_region("sync.a"), b = sps_region("sync.b");
    for (int i = 0; i < 300000; i++) {
        sps_begin(a);
        if (i % 3 == 0) {
            sps_begin(b);
            sps_end(b);
        }
        sps_end(a);
    }
    spill_view_t v = spill_view();
    assert_true(v.records > 300000);
    assert_int_equal(v.waits, 0); /* nobody to wait for */
    pthread_mutex_lock(&sps__g.lock);
    assert_int_equal(sps__g.sp.alive, 0);
    pthread_mutex_unlock(&sps__g.lock);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(tu_path("spill_pack_sync.h5"));
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "sync.a"), 300000);
    assert_int_equal(tu_h5_count(h, "sync.b"), 100000);
    TU_CHECK_TREE(h);
    tu_h5_free(h);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Failing disks                                                             */
/* ------------------------------------------------------------------------ */

/* Every attempted record is kept (in a call, or open, or misuse) or
 * dropped and counted. */
static int balanced(uint64_t attempted_records, uint64_t calls, uint64_t dropped) {
    return attempted_records >= 2 * calls + dropped &&
           attempted_records - (2 * calls + dropped) <= 2;
}

enum { D_OK, D_SETUP, D_NODROP, D_BALANCE, D_FIN, D_FILE, D_RESUME, D_ERR };

/* In a child: the file size limit stands for a full disk. */
static int disk_full_child(void) {
    signal(SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG */
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    struct rlimit small = {64u << 10, rl.rlim_max};
    sps_config_t cfg = spill_cfg(NULL, 4096, 8192);
    if (sps_setup(&cfg)) return D_SETUP;
    if (setrlimit(RLIMIT_FSIZE, &small)) return D_SETUP;
    sps_region_t r = sps_region("full.loop");
    const int n = 400000;
    for (int i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
    uint64_t dropped = sps_dropped();
    sps_stats_t st;
    if (sps_region_stats(r, &st)) return D_BALANCE;
    if (dropped == 0) return D_NODROP;
    if (!balanced(2ull * n, st.num_calls, dropped)) return D_BALANCE;
    spill_view_t v = spill_view();
    if (!v.err || v.end > (int64_t)(64u << 10)) return D_ERR;
    setrlimit(RLIMIT_FSIZE, &rl); /* the disk has room again */
    const char *path = tu_path("spill_pack_full.h5");
    if (sps_finalize_to(path)) return D_FIN;
    tu_h5_t *h = tu_h5_load(path);
    int ok = h && h->ok && tu_h5_count(h, "full.loop") == st.num_calls &&
             tu_h5_attr_i64(path, "/metadata", "dropped_events", -1) == (int64_t)dropped;
    tu_h5_free(h);
    if (!ok) return D_FILE;
    /* after the finalize: spilling works again, nothing more is dropped */
    for (int i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
    if (sps_dropped() != dropped || spill_view().err) return D_RESUME;
    if (sps_region_stats(r, &st) || st.num_calls < (uint64_t)n) return D_RESUME;
    sps_shutdown();
    return D_OK;
}

static void test_disk_full(void **state) {
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(disk_full_child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != D_OK) fail_msg("child failed check %d", WEXITSTATUS(status));
}

/* A spill directory that does not exist: nothing can be spilled, events
 * past the pool are dropped and counted, the rest is intact. */
static void test_spill_dir_missing(void **state) {
    (void)state;
    sps_config_t cfg = spill_cfg(tu_path("spill_pack_nodir.h5"), 4096, 8192);
    cfg.spill_dir = "/nonexistent/spanscope-no-such-dir";
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("nodir.loop");
    for (int i = 0; i < 100000; i++) {
        sps_begin(r);
        sps_end(r);
    }
    uint64_t dropped = sps_dropped();
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    assert_true(dropped > 0);
    assert_true(balanced(200000, st.num_calls, dropped));
    assert_int_equal(spill_view().bytes, 0);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(tu_path("spill_pack_nodir.h5"));
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "nodir.loop"), st.num_calls);
    tu_h5_free(h);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Threads, checkpoints, sessions, fork                                      */
/* ------------------------------------------------------------------------ */

static atomic_int g_stop;
static atomic_long g_done_calls[4];
static long g_budget; /* calls per worker, 0: until stopped */
static sps_region_t g_loop;

static void *loop_worker(void *arg) {
    int k = (int)(intptr_t)arg;
    for (long n = 0; !atomic_load(&g_stop) && (!g_budget || n < g_budget); n += 1000) {
        for (int i = 0; i < 1000; i++) {
            sps_begin(g_loop);
            sps_end(g_loop);
        }
        atomic_fetch_add(&g_done_calls[k], 1000);
    }
    return NULL;
}

static void start_workers(pthread_t *th, int n, long budget) {
    atomic_store(&g_stop, 0);
    g_budget = budget;
    for (int k = 0; k < n; k++) {
        atomic_store(&g_done_calls[k], 0);
        assert_int_equal(pthread_create(&th[k], NULL, loop_worker, (void *)(intptr_t)k), 0);
    }
}

static long done_calls(int n) {
    long total = 0;
    for (int k = 0; k < n; k++) total += atomic_load(&g_done_calls[k]);
    return total;
}

static long stop_workers_when_done(pthread_t *th, int n, long budget) {
    for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    assert_int_equal(done_calls(n), n * budget);
    return done_calls(n);
}

static long stop_workers(pthread_t *th, int n) {
    atomic_store(&g_stop, 1);
    for (int k = 0; k < n; k++) pthread_join(th[k], NULL);
    return done_calls(n);
}

/* Checkpoints while 3 threads record through a 64 KiB pool: each file is
 * a valid tree, and the files together hold every call exactly once. */
static void test_finalize_while_spilling(void **state) {
    (void)state;
    const long budget = 400000;
    sps_config_t cfg = spill_cfg(NULL, 4096, 16 * 4096);
    assert_int_equal(sps_setup(&cfg), 0);
    g_loop = sps_region("ckpt.loop");
    pthread_t th[3];
    start_workers(th, 3, budget);
    uint64_t in_files = 0, spilled = 0;
    char name[64];
    for (int f = 0; done_calls(3) < 3 * budget; f++) {
        /* each checkpoint after some spilling (a checkpoint frees the pool,
         * and slow instrumented builds might never spill otherwise) */
        while (spill_view().records == spilled && done_calls(3) < 3 * budget)
            tu_spin_ns(100000);
        spilled = spill_view().records;
        snprintf(name, sizeof name, "spill_pack_ckpt%d.h5", f % 4);
        assert_int_equal(sps_finalize_to(tu_path(name)), 0);
        tu_h5_t *h = tu_h5_load(tu_path(name));
        assert_non_null(h);
        assert_true(h->ok);
        TU_CHECK_TREE(h);
        in_files += tu_h5_count(h, "ckpt.loop");
        tu_h5_free(h);
        unlink(tu_path(name));
    }
    long total = stop_workers(th, 3);
    assert_int_equal(sps_finalize_to(tu_path("spill_pack_ckpt_last.h5")), 0);
    tu_h5_t *h = tu_h5_load(tu_path("spill_pack_ckpt_last.h5"));
    assert_non_null(h);
    in_files += tu_h5_count(h, "ckpt.loop");
    tu_h5_free(h);
    assert_true(spilled > 0);
    assert_int_equal(sps_dropped(), 0);
    assert_int_equal(total, 3 * budget);
    assert_int_equal(in_files, (uint64_t)total);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(g_loop, &st), 0);
    assert_int_equal(st.num_calls, (uint64_t)total);
    sps_shutdown();
}

/* sps_shutdown and sps_setup again while threads record and the writer
 * spills: nothing crashes or hangs, and the last session counts what its
 * threads recorded after it began. */
static void test_sessions_while_spilling(void **state) {
    (void)state;
    sps_config_t cfg = spill_cfg(NULL, 4096, 8 * 4096);
    assert_int_equal(sps_setup(&cfg), 0);
    g_loop = sps_region("cycle.loop");
    pthread_t th[2];
    start_workers(th, 2, 0);
    for (int k = 0; k < 20; k++) {
        while (spill_view().records < 20000) tu_spin_ns(50000);
        sps_shutdown();
        tu_spin_ns(200000);
        assert_int_equal(sps_setup(&cfg), 0);
    }
    stop_workers(th, 2);
    sps_shutdown();
    /* a quiet last session: exact counts */
    assert_int_equal(sps_setup(&cfg), 0);
    start_workers(th, 2, 200000);
    long total = stop_workers_when_done(th, 2, 200000);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(g_loop, &st), 0);
    assert_int_equal(st.num_calls, (uint64_t)total);
    assert_int_equal(sps_dropped(), 0);
    sps_shutdown();
}

enum { FK_OK, FK_ACTIVE, FK_SETUP, FK_STATS, FK_FIN };

/* In a child forked while the parent's writer was busy: the inherited
 * session is off; a session of its own spills through a writer of its own. */
static int fork_child(void) {
    if (sps_is_active()) return FK_ACTIVE;
    sps_config_t cfg = spill_cfg(NULL, 4096, 8192);
    if (sps_setup(&cfg)) return FK_SETUP;
    sps_region_t c = sps_region("forkw.child");
    for (int i = 0; i < 100000; i++) {
        sps_begin(c);
        sps_end(c);
    }
    sps_stats_t st;
    if (sps_region_stats(c, &st) || st.num_calls != 100000 || sps_dropped()) return FK_STATS;
    if (spill_view().records == 0) return FK_STATS;
    if (sps_finalize_to(NULL)) return FK_FIN;
    sps_shutdown();
    return FK_OK;
}

static void test_fork_while_writing(void **state) {
    (void)state;
    /* policy off (SPANSCOPE_FORK=off): the child's inherited session is
     * switched off and it sets one up itself, with a spill writer of its
     * own (under the default the child's session is opened in the fork
     * handler: test_fork_child.c) */
    int policy = sps_fork_policy(0);
    sps_config_t cfg = spill_cfg(NULL, 4096, 8192);
    assert_int_equal(sps_setup(&cfg), 0);
    g_loop = sps_region("forkw.loop");
    pthread_t th[1];
    start_workers(th, 1, 0);
    for (int k = 0; k < 4; k++) {
        uint64_t r0 = spill_view().records;
        while (spill_view().records < r0 + 20000) tu_spin_ns(20000);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(fork_child());
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != FK_OK) fail_msg("child failed check %d", WEXITSTATUS(status));
    }
    long total = stop_workers(th, 1);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(g_loop, &st), 0);
    assert_int_equal(st.num_calls, (uint64_t)total);
    assert_int_equal(sps_dropped(), 0);
    assert_int_equal(sps_finalize_to(NULL), 0);
    sps_shutdown();
    sps_fork_policy(policy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_spilled_equals_memory), TU_TEST(test_pass_order),
        TU_TEST(test_bytes_per_call),
        TU_TEST(test_queries_while_spilling),
        TU_TEST(test_sync_writer),           TU_TEST(test_disk_full),
        TU_TEST(test_spill_dir_missing),     TU_TEST(test_finalize_while_spilling),
        TU_TEST(test_sessions_while_spilling), TU_TEST(test_fork_while_writing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
