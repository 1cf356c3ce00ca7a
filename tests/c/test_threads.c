/* test_threads.c -- many threads, nothing lost: exact counts in the
 * statistics and in the file (read back with the HDF5 C API); threads that
 * exit before finalize keep their events; recording goes on while another
 * thread finalizes (checkpoints) and queries.
 *
 * Files left in $SPS_TEST_TMP for tests/python/test_c_h5.py: threads.h5 */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHR 16
#define NCALLS 100000
#define KID_EVERY 10

static pthread_barrier_t g_bar;
static sps_region_t g_all;
static sps_region_t g_kid[NTHR];

static void *worker16(void *arg) {
    int k = (int)(intptr_t)arg;
    pthread_barrier_wait(&g_bar);
    for (int i = 0; i < NCALLS; i++) {
        sps_begin(g_all);
        if (i % KID_EVERY == 0) {
            sps_begin(g_kid[k]);
            sps_end(g_kid[k]);
        }
        sps_end(g_all);
    }
    return NULL;
}

typedef struct idst {
    int64_t id, start, thread;
} idst_t;

static int idst_cmp(const void *a, const void *b) {
    const idst_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Call ids number the begins of all threads in (start, thread) order: the
 * merged pass's order, which its shortcut for leaf calls keeps. */
static void check_id_order(const tu_h5_t *h) {
    int64_t *st = tu_h5_all_starts(h);
    idst_t *v = malloc((h->nev ? h->nev : 1) * sizeof *v);
    assert_non_null(st);
    assert_non_null(v);
    for (size_t e = 0; e < h->nev; e++) v[e] = (idst_t){h->call_ids[e], st[e], h->thread_ids[e]};
    qsort(v, h->nev, sizeof *v, idst_cmp);
    for (size_t e = 1; e < h->nev; e++) {
        assert_true(v[e].start >= v[e - 1].start);
        if (v[e].start == v[e - 1].start && v[e].thread != v[e - 1].thread) {
            assert_true(v[e].thread > v[e - 1].thread);
        }
    }
    free(v);
    free(st);
}

/* 16 threads x 10^5 calls: every call in the stats and in the file. */
static void test_16_threads(void **state) {
    (void)state;
    const char *path = tu_path("threads.h5");
    unlink(path);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    g_all = sps_region("thr.all");
    for (int k = 0; k < NTHR; k++) {
        char name[32];
        snprintf(name, sizeof name, "thr.t%02d", k);
        g_kid[k] = sps_region(name);
    }
    pthread_barrier_init(&g_bar, NULL, NTHR);
    pthread_t th[NTHR];
    for (int k = 0; k < NTHR; k++)
        assert_int_equal(pthread_create(&th[k], NULL, worker16, (void *)(intptr_t)k), 0);
    for (int k = 0; k < NTHR; k++) pthread_join(th[k], NULL);
    pthread_barrier_destroy(&g_bar);
    /* every thread has exited: their events stay */
    sps_stats_t sa, sk;
    assert_int_equal(sps_region_stats(g_all, &sa), 0);
    assert_int_equal(sa.num_calls, (uint64_t)NTHR * NCALLS);
    int64_t kid_total = 0;
    for (int k = 0; k < NTHR; k++) {
        assert_int_equal(sps_region_stats(g_kid[k], &sk), 0);
        assert_int_equal(sk.num_calls, NCALLS / KID_EVERY);
        kid_total += sk.total_ns;
    }
    TU_ASSERT_NEAR(sa.self_ns, sa.total_ns - kid_total, 1e-6, 50);
    assert_int_equal(sps_misuse_count(), 0);
    assert_int_equal(sps_region_durations(g_all, NULL, 0), (size_t)NTHR * NCALLS);
    assert_int_equal(sps_finalize(), 0);

    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "thr.all"), (uint64_t)NTHR * NCALLS);
    assert_int_equal(h->nev, (size_t)NTHR * NCALLS * (KID_EVERY + 1) / KID_EVERY);
    int seen[NTHR] = {0};
    for (int k = 0; k < NTHR; k++) {
        char name[32];
        snprintf(name, sizeof name, "thr.t%02d", k);
        long r = tu_h5_row(h, name);
        assert_true(r >= 0);
        assert_int_equal(h->counts[r], NCALLS / KID_EVERY);
        /* one thread per kid region, a different one for each */
        int64_t t = h->thread_ids[h->offsets[r]];
        assert_true(t >= 0 && t < NTHR);
        assert_int_equal(seen[t], 0);
        seen[t] = 1;
        for (uint64_t e = 0; e < h->counts[r]; e++)
            assert_int_equal(h->thread_ids[h->offsets[r] + e], t);
    }
    /* per thread, thr.all events: NCALLS each */
    long ra = tu_h5_row(h, "thr.all");
    uint64_t per[NTHR] = {0};
    for (uint64_t e = 0; e < h->counts[ra]; e++) {
        int64_t t = h->thread_ids[h->offsets[ra] + e];
        assert_true(t >= 0 && t < NTHR);
        per[t]++;
        assert_int_equal(h->parent_ids[h->offsets[ra] + e], -1);
    }
    for (int t = 0; t < NTHR; t++) assert_int_equal(per[t], NCALLS);
    TU_CHECK_TREE(h);
    check_id_order(h);
    /* every kid has a parent */
    for (int k = 0; k < NTHR; k++) {
        char name[32];
        snprintf(name, sizeof name, "thr.t%02d", k);
        long r = tu_h5_row(h, name);
        for (uint64_t e = 0; e < h->counts[r]; e++)
            assert_true(h->parent_ids[h->offsets[r] + e] >= 0);
    }
    tu_h5_free(h);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "threads", -1), NTHR);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "dropped_events", -1), 0);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "misuse_count", -1), 0);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */

typedef struct job {
    sps_region_t r;
    int n;
} job_t;

static void *run_job(void *arg) {
    job_t *j = arg;
    for (int i = 0; i < j->n; i++) {
        sps_begin(j->r);
        sps_end(j->r);
    }
    return NULL;
}

/* Threads that exit before a checkpoint keep their events, and appear in
 * that checkpoint's file only. */
static void test_exited_threads(void **state) {
    (void)state;
    const char *p1 = tu_path("thr_exit1.h5"), *p2 = tu_path("thr_exit2.h5");
    assert_int_equal(sps_setup(NULL), 0);
    job_t a = {sps_region("thr.exit.a"), 500}, b = {sps_region("thr.exit.b"), 300};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_job, &a), 0);
    pthread_join(th, NULL);
    assert_int_equal(sps_finalize_to(p1), 0);
    assert_int_equal(pthread_create(&th, NULL, run_job, &b), 0);
    pthread_join(th, NULL);
    /* a second thread, joined and exited, then a third one using a again */
    job_t a2 = {a.r, 7};
    assert_int_equal(pthread_create(&th, NULL, run_job, &a2), 0);
    pthread_join(th, NULL);
    assert_int_equal(sps_finalize_to(p2), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(a.r, &st), 0);
    assert_int_equal(st.num_calls, 507);
    assert_int_equal(sps_region_stats(b.r, &st), 0);
    assert_int_equal(st.num_calls, 300);
    tu_h5_t *h1 = tu_h5_load(p1), *h2 = tu_h5_load(p2);
    assert_non_null(h1);
    assert_non_null(h2);
    assert_true(h1->ok && h2->ok);
    assert_int_equal(tu_h5_count(h1, "thr.exit.a"), 500);
    assert_int_equal(tu_h5_count(h1, "thr.exit.b"), 0);
    assert_int_equal(tu_h5_count(h2, "thr.exit.a"), 7);
    assert_int_equal(tu_h5_count(h2, "thr.exit.b"), 300);
    TU_CHECK_TREE(h1);
    TU_CHECK_TREE(h2);
    tu_h5_free(h1);
    tu_h5_free(h2);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */

#define CP_THR 3
#define CP_FINALIZES 25
#define CP_MAX_CALLS 400000
static atomic_int g_stop;
static sps_region_t g_outer, g_inner, g_main;

/* Records nested calls until told to stop; returns how many. */
static void *cp_worker(void *arg) {
    uint64_t *n = arg;
    while (!atomic_load(&g_stop)) {
        sps_begin(g_outer);
        sps_begin(g_inner);
        sps_end(g_inner);
        tu_spin_ns(3000);
        sps_end(g_outer);
        if (++*n == CP_MAX_CALLS) /* bounded work, also in slow builds */
            while (!atomic_load(&g_stop)) usleep(1000);
    }
    return NULL;
}

/* Recording goes on in 3 threads while the main thread writes checkpoints
 * and queries: every finalize succeeds, each file is consistent, and the
 * files together hold every call exactly once.
 *
 * Regression test for a library bug (it failed before the fix): sps_finalize_to
 * takes the period statistics (analyze_all) and then the snapshot
 * (snap_build -> snap_thread reads t->pos again) at two different moments
 * while other threads keep appending records; calls recorded in between
 * are in the snapshot but not in the row counts, so the writer overflows a
 * row: SPS_EINVAL from sps__h5w_rows, or, silently, events written into the
 * next region's rows (duplicate call ids) and unfilled rows in the next
 * file. */
static void test_concurrent_checkpoints(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    g_outer = sps_region("thr.cp.outer");
    g_inner = sps_region("thr.cp.inner");
    g_main = sps_region("thr.cp.main"); /* the last row of every file */
    uint64_t nmain = 0;
    atomic_store(&g_stop, 0);
    pthread_t th[CP_THR];
    uint64_t calls[CP_THR] = {0}, expect = 0;
    for (int k = 0; k < CP_THR; k++)
        assert_int_equal(pthread_create(&th[k], NULL, cp_worker, &calls[k]), 0);
    int nfiles = 0, nfin = 0, nbad = 0, first_bad_rc = 0;
    uint64_t last = 0;
    char paths[64][64];
    while (nfin < CP_FINALIZES) {
        for (int i = 0; i < 500; i++, nmain++) {
            sps_begin(g_main);
            sps_end(g_main);
        }
        snprintf(paths[nfiles], sizeof paths[0], "thr_cp_%02d.h5", nfiles);
        int rc = sps_finalize_to(tu_path(paths[nfiles]));
        nfin++;
        if (rc == 0) nfiles++;
        else if (!nbad++) first_bad_rc = rc;
        sps_stats_t st;
        assert_int_equal(sps_region_stats(g_outer, &st), 0);
        assert_true(st.num_calls >= last); /* never goes back */
        last = st.num_calls;
        (void)sps_region_durations(g_inner, NULL, 0);
        usleep(2000);
    }
    atomic_store(&g_stop, 1);
    for (int k = 0; k < CP_THR; k++) {
        pthread_join(th[k], NULL);
        expect += calls[k];
    }
    snprintf(paths[nfiles], sizeof paths[0], "thr_cp_%02d.h5", nfiles);
    int rc = sps_finalize_to(tu_path(paths[nfiles]));
    nfin++;
    if (rc == 0) nfiles++;
    else if (!nbad++) first_bad_rc = rc;
    sps_stats_t so, si;
    assert_int_equal(sps_region_stats(g_outer, &so), 0);
    assert_int_equal(sps_region_stats(g_inner, &si), 0);
    assert_int_equal(so.num_calls, expect);
    assert_int_equal(si.num_calls, expect);
    assert_int_equal(sps_misuse_count(), 0);
    uint64_t fo = 0, fi = 0, fm = 0;
    int ntree_bad = 0, nmain_bad = 0;
    char first_tree_msg[512] = "";
    int first_tree_file = -1;
    for (int i = 0; i < nfiles; i++) {
        const char *p = tu_path(paths[i]);
        tu_h5_t *h = tu_h5_load(p);
        assert_non_null(h);
        assert_true(h->ok);
        fo += tu_h5_count(h, "thr.cp.outer");
        fi += tu_h5_count(h, "thr.cp.inner");
        fm += tu_h5_count(h, "thr.cp.main");
        long rm = tu_h5_row(h, "thr.cp.main");
        for (uint64_t e = 1; rm >= 0 && e < h->counts[rm]; e++)
            if (h->thread_ids[h->offsets[rm] + e] != h->thread_ids[h->offsets[rm]]) {
                nmain_bad++; /* another thread's events in main's row */
                break;
            }
        char msg[512];
        if (tu_h5_check_tree(h, msg, sizeof msg) && !ntree_bad++) {
            memcpy(first_tree_msg, msg, sizeof msg);
            first_tree_file = i;
        }
        tu_h5_free(h);
        unlink(p);
    }
    print_message("%d finalizes, %d files, %llu calls\n", nfin, nfiles,
                  (unsigned long long)expect);
    if (nbad || ntree_bad || nmain_bad || fo != expect || fi != expect ||
        fm != nmain)
        fail_msg("REGRESSION (finalize snapshot race): %d of %d concurrent "
                 "finalizes failed (first: %s); %d files inconsistent (first: "
                 "file %d: %s); %d files with other threads' events in the "
                 "main thread's row; files hold %llu/%llu/%llu calls of "
                 "outer/inner/main, expected %llu/%llu/%llu",
                 nbad, nfin, sps_err_name(first_bad_rc), ntree_bad,
                 first_tree_file, first_tree_msg, nmain_bad,
                 (unsigned long long)fo, (unsigned long long)fi,
                 (unsigned long long)fm, (unsigned long long)expect,
                 (unsigned long long)expect, (unsigned long long)nmain);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Thread names: sps_thread_set_name and the namer                           */
/* ------------------------------------------------------------------------ */

/* The name thread index i has in the running session. */
static void thread_name_of(uint32_t i, char out[32]) {
    sps_thread_t ti;
    assert_int_equal(sps_thread_info(i, &ti), 0);
    memcpy(out, ti.name, 32);
}

typedef struct named_job {
    const char *set;     /* sps_thread_set_name before recording (NULL: none) */
    const char *set_after; /* ... and after its first record (NULL: none) */
    sps_region_t r;
    int64_t index;       /* out: its session index */
} named_job_t;

static void *run_named(void *arg) {
    named_job_t *j = arg;
    pthread_setname_np(pthread_self(), "pthread-nm");
    if (j->set) assert_int_equal(sps_thread_set_name(j->set), 0);
    sps_begin(j->r);
    sps_end(j->r);
    if (j->set_after) assert_int_equal(sps_thread_set_name(j->set_after), 0);
    j->index = sps_thread_current();
    return NULL;
}

static atomic_int g_namer_calls;
static void namer(void) {
    atomic_fetch_add(&g_namer_calls, 1);
    sps_thread_set_name("from-namer");
}

static void test_thread_names(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t r = sps_region("thr.named");
    named_job_t jobs[4] = {
        {NULL, NULL, r, -1},                 /* the pthread name */
        {"solver-0", NULL, r, -1},           /* named before its first record */
        {NULL, "late-name", r, -1},          /* renamed while registered */
        /* 40 bytes of 2-byte characters: cut to 31 bytes, between characters */
        {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
         "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
         NULL, r, -1},
    };
    for (int k = 0; k < 4; k++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, run_named, &jobs[k]), 0);
        pthread_join(th, NULL);
        assert_true(jobs[k].index >= 0);
    }
    char name[32];
    thread_name_of((uint32_t)jobs[0].index, name);
    assert_string_equal(name, "pthread-nm");
    thread_name_of((uint32_t)jobs[1].index, name);
    assert_string_equal(name, "solver-0");
    thread_name_of((uint32_t)jobs[2].index, name);
    assert_string_equal(name, "late-name");
    thread_name_of((uint32_t)jobs[3].index, name);
    assert_int_equal(strlen(name), 30); /* 15 whole characters of 2 bytes */
    assert_memory_equal(name, jobs[3].set, 30);
    assert_int_equal(sps_thread_set_name(NULL), SPS_EINVAL);

    /* the namer: asked once by a thread's first record, not by a named one */
    atomic_store(&g_namer_calls, 0);
    sps_set_thread_namer(namer);
    named_job_t asked = {NULL, NULL, r, -1}, preset = {"mine", NULL, r, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_named, &asked), 0);
    pthread_join(th, NULL);
    assert_int_equal(pthread_create(&th, NULL, run_named, &preset), 0);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&g_namer_calls), 1);
    thread_name_of((uint32_t)asked.index, name);
    assert_string_equal(name, "from-namer");
    thread_name_of((uint32_t)preset.index, name);
    assert_string_equal(name, "mine");
    sps_set_thread_namer(NULL);

    /* the file's thread table carries the names */
    const char *p = tu_path("thr_names.h5");
    assert_int_equal(sps_finalize_to(p), 0);
    sps_shutdown();
    const sps_file_t *f = NULL;
    assert_int_equal(sps_file_open(p, &f, NULL, 0), 0);
    const sps_file_column_t *col = NULL;
    for (size_t c = 0; c < f->thread_table.ncols; c++)
        if (strcmp(f->thread_table.cols[c].name, "name") == 0) col = &f->thread_table.cols[c];
    assert_non_null(col);
    assert_true(col->is_text);
    int found = 0;
    for (size_t i = 0; i < f->thread_table.nrows; i++)
        found += strcmp(col->texts[i], "solver-0") == 0 || strcmp(col->texts[i], "from-namer") == 0;
    assert_int_equal(found, 2);
    sps_file_close(f);
    unlink(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_16_threads),
        TU_TEST(test_exited_threads),
        TU_TEST(test_concurrent_checkpoints),
        TU_TEST(test_thread_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
