/* test_controls.c -- the recording controls of the C core (issue 12):
 * sps_pause / sps_resume (nothing recorded while paused, the session stays
 * live, a new session starts unpaused), sps_open_calls and, across
 * threads, sps_open_calls_all (what pause refuses on), the environment's
 * settings (sps_env_read: SPANSCOPE_* over SCOPE_PROFILER_*, bad values
 * named) and sps_setup_from_env, and the region attributes written to
 * /rank_region_index (source, tags, per-call metadata, kept only when its
 * length matches the calls written), and the task table a binding hands
 * over (sps_tasks_set) in /task_table, the /metadata strings it adds
 * (sps_metadata_set). */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Row r of string column `col` of /rank_region_index, malloc'd ("" absent). */
static char *index_str(const char *path, const char *col, long r) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char p[128];
    snprintf(p, sizeof p, "/rank_region_index/%s", col);
    hid_t d = H5Dopen2(f, p, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(s, &n, NULL);
    char **raw = calloc(n ? n : 1, sizeof *raw);
    hid_t mt = tu_h5_strtype();
    char *out = NULL;
    if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0 && (hsize_t)r < n)
        out = strdup(raw[r] ? raw[r] : "");
    H5Dvlen_reclaim(mt, s, H5P_DEFAULT, raw);
    free(raw);
    H5Tclose(mt);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return out;
}

static void calls_of(sps_region_t r, uint64_t *n) {
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    *n = st.num_calls;
}

static void test_pause_records_nothing_until_resume(void **state) {
    (void)state;
    assert_int_equal(sps_pause(), SPS_ENOSESSION);
    assert_int_equal(sps_resume(), SPS_ENOSESSION);
    assert_int_equal(sps_is_paused(), 0);
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("ctl.A");
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_pause(), 0);
    assert_int_equal(sps_pause(), 0); /* twice: harmless */
    assert_int_equal(sps_is_paused(), 1);
    assert_true(sps_is_active()); /* the session stays live */
    for (int i = 0; i < 100; i++) {
        sps_begin(A);
        sps_end(A);
        sps__begin(A); /* the out-of-line halves too (bindings) */
        sps__end(A);
    }
    uint64_t n;
    calls_of(A, &n);
    assert_int_equal(n, 1);
    assert_int_equal(sps_resume(), 0);
    assert_int_equal(sps_is_paused(), 0);
    sps_begin(A);
    sps_end(A);
    calls_of(A, &n);
    assert_int_equal(n, 2);
    assert_int_equal(sps_misuse_count(), 0);
    /* paused across a session's end: the next one records */
    assert_int_equal(sps_pause(), 0);
    sps_shutdown();
    assert_int_equal(sps_is_paused(), 0);
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_is_paused(), 0);
    sps_begin(A);
    sps_end(A);
    calls_of(A, &n);
    assert_int_equal(n, 1);
    sps_shutdown();
}

static void test_open_calls_of_this_thread(void **state) {
    (void)state;
    assert_int_equal(sps_open_calls(NULL, 0), 0);
    for (int agg = 0; agg < 2; agg++) {
        sps_config_t c = SPS_CONFIG_INIT;
        c.aggregate = agg;
        assert_int_equal(sps_setup(&c), 0);
        sps_region_t A = sps_region("ctl.outer"), B = sps_region("ctl.inner");
        assert_int_equal(sps_open_calls(NULL, 0), 0);
        sps_begin(A);
        sps_begin(B);
        sps_region_t v[4] = {0};
        assert_int_equal(sps_open_calls(v, 4), 2);
        assert_int_equal(v[0], A);
        assert_int_equal(v[1], B);
        assert_int_equal(sps_open_calls(v, 1), 2); /* the count of all */
        sps_end(B);
        assert_int_equal(sps_open_calls(v, 4), 1);
        sps_end(A);
        assert_int_equal(sps_open_calls(v, 4), 0);
        sps_shutdown();
    }
}

/* A worker for test_open_calls_of_every_thread: opens B > C, says so,
 * waits, closes them, says so, waits, then opens D and exits with it open;
 * or (churn) begins and ends E many times while the main thread asks. */
typedef struct oc_worker {
    sps_region_t B, C, D, E;
    sem_t opened, go, closed, leave;
    int64_t index;  /* its sps_thread_current */
    int churn;
} oc_worker_t;

static void *oc_worker(void *arg) {
    oc_worker_t *w = arg;
    if (w->churn) {
        for (int i = 0; i < 20000; i++) {
            sps_begin(w->E);
            sps_end(w->E);
        }
        return NULL;
    }
    sps_begin(w->B);
    sps_begin(w->C);
    w->index = sps_thread_current();
    sem_post(&w->opened);
    sem_wait(&w->go);
    sps_end(w->C);
    sps_end(w->B);
    sem_post(&w->closed);
    sem_wait(&w->leave);
    sps_begin(w->D); /* left open: the thread's state outlives it */
    return NULL;
}

/* The entry of out[0..n) on thread at depth, or NULL. */
static const sps_open_call_t *oc_find(const sps_open_call_t *out, int64_t n, int64_t thread,
                                      uint32_t depth) {
    for (int64_t i = 0; i < n; i++)
        if (out[i].thread == thread && out[i].depth == depth) return &out[i];
    return NULL;
}

static void test_open_calls_of_every_thread(void **state) {
    (void)state;
    assert_int_equal(sps_open_calls_all(NULL, 0), 0); /* no session */
    assert_int_equal(sps_setup(NULL), 0);
    oc_worker_t w = {.B = sps_region("oc.B"), .C = sps_region("oc.C"),
                     .D = sps_region("oc.D"), .E = sps_region("oc.E")};
    sps_region_t A = sps_region("oc.A");
    sem_init(&w.opened, 0, 0);
    sem_init(&w.go, 0, 0);
    sem_init(&w.closed, 0, 0);
    sem_init(&w.leave, 0, 0);
    assert_int_equal(sps_open_calls_all(NULL, 0), 0);
    sps_begin(A);
    int64_t me = sps_thread_current();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, oc_worker, &w), 0);
    sem_wait(&w.opened);
    sps_open_call_t v[8];
    int64_t n = sps_open_calls_all(v, 8);
    assert_int_equal(n, 3);
    assert_true(w.index >= 0 && w.index != me);
    const sps_open_call_t *a = oc_find(v, n, me, 0), *b = oc_find(v, n, w.index, 0),
                          *c = oc_find(v, n, w.index, 1);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_int_equal(a->region, A);
    assert_int_equal(b->region, w.B);
    assert_int_equal(c->region, w.C);
    assert_int_equal(sps_open_calls_all(v, 1), 3);     /* the count of all */
    assert_int_equal(sps_open_calls(NULL, 0), 1);       /* this thread's: A */
    sps_end(A);
    assert_int_equal(sps_open_calls_all(v, 8), 2);
    sem_post(&w.go);
    sem_wait(&w.closed);
    assert_int_equal(sps_open_calls_all(v, 8), 0);
    sem_post(&w.leave);
    pthread_join(th, NULL);
    n = sps_open_calls_all(v, 8); /* an exited thread's call stays open */
    assert_int_equal(n, 1);
    assert_int_equal(v[0].region, w.D);
    assert_int_equal(v[0].thread, w.index);
    assert_int_equal(sps_pause(), 0);  /* the query works paused too */
    assert_int_equal(sps_open_calls_all(v, 8), 1);
    assert_int_equal(sps_resume(), 0);
    sps_shutdown();

    /* asked while another thread records (the TSan build checks the
     * reads): never more than the one call it may have open */
    assert_int_equal(sps_setup(NULL), 0);
    w.churn = 1;
    assert_int_equal(pthread_create(&th, NULL, oc_worker, &w), 0);
    for (int i = 0; i < 200; i++) {
        n = sps_open_calls_all(v, 8);
        assert_true(n == 0 || (n == 1 && v[0].region == w.E && v[0].depth == 0));
    }
    pthread_join(th, NULL);
    assert_int_equal(sps_open_calls_all(v, 8), 0);
    sps_shutdown();

    sps_config_t cfg = SPS_CONFIG_INIT;  /* aggregate: not known, said so */
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_open_calls_all(v, 8), SPS_EMODE);
    sps_shutdown();
    assert_int_equal(sps_open_calls_all(v, 8), 0);
    sem_destroy(&w.opened);
    sem_destroy(&w.go);
    sem_destroy(&w.closed);
    sem_destroy(&w.leave);
}

static const char *const env_names[] = {
    "SPANSCOPE_OUTPUT", "SCOPE_PROFILER_OUTPUT", "SPANSCOPE_RECURSIVE",
    "SCOPE_PROFILER_RECURSIVE", "SPANSCOPE_AUTO_FINALIZE", "SCOPE_PROFILER_AUTO_FINALIZE",
    "SPANSCOPE_LABEL", "SPANSCOPE_CONFIG", "SCOPE_PROFILER_CONFIG",
    "SPANSCOPE_DEACTIVATE_PROFILING", "SPANSCOPE_AGGREGATION_MODE",
    "SPANSCOPE_MEMORY_LIMIT", "SPANSCOPE_ENABLE_TAGS", "SCOPE_PROFILER_ENABLE_TAGS"};

static void env_clear(void) {
    for (size_t i = 0; i < sizeof env_names / sizeof *env_names; i++) unsetenv(env_names[i]);
}

static void test_env_read(void **state) {
    (void)state;
    env_clear();
    sps_env_t e;
    char err[256];
    assert_int_equal(sps_env_read(&e, err, sizeof err), 0);
    assert_false(e.has_output);
    assert_int_equal(e.recursive, -1);
    assert_int_equal(e.auto_finalize, -1);
    assert_null(e.config_path);
    setenv("SCOPE_PROFILER_OUTPUT", "alias.h5", 1);
    setenv("SCOPE_PROFILER_RECURSIVE", "TRUE", 1);
    setenv("SCOPE_PROFILER_ENABLE_TAGS", "a,b", 1);
    setenv("SPANSCOPE_AGGREGATION_MODE", "on", 1);
    setenv("SPANSCOPE_MEMORY_LIMIT", "1048576", 1);
    assert_int_equal(sps_env_read(&e, err, sizeof err), 0);
    assert_true(e.has_output);
    assert_string_equal(e.cfg.file_path, "alias.h5");
    assert_int_equal(e.recursive, 1);
    assert_string_equal(e.enable_tags, "a,b");
    assert_int_equal(e.cfg.aggregate, 1);
    assert_int_equal(e.cfg.memory_limit, 1048576);
    setenv("SPANSCOPE_OUTPUT", "none", 1); /* SPANSCOPE_ wins; "none": no file */
    setenv("SPANSCOPE_RECURSIVE", "off", 1);
    assert_int_equal(sps_env_read(&e, err, sizeof err), 0);
    assert_true(e.has_output);
    assert_null(e.cfg.file_path);
    assert_int_equal(e.recursive, 0);
    setenv("SPANSCOPE_AUTO_FINALIZE", "maybe", 1);
    assert_int_equal(sps_env_read(&e, err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "SPANSCOPE_AUTO_FINALIZE=maybe"));
    unsetenv("SPANSCOPE_AUTO_FINALIZE");
    setenv("SPANSCOPE_MEMORY_LIMIT", "-5", 1);
    assert_int_equal(sps_env_read(&e, err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "SPANSCOPE_MEMORY_LIMIT"));
    assert_int_equal(sps_env_read(NULL, NULL, 0), SPS_EINVAL);
    env_clear();
}

/* The /metadata label of the file at path ("" when it has none). */
static const char *label_of(const char *path) {
    static char buf[256];
    buf[0] = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return buf;
    tu_h5_attr_str(f, "/metadata", "label", buf, sizeof buf);
    H5Fclose(f);
    return buf;
}

static void test_setup_from_env(void **state) {
    (void)state;
    env_clear();
    const char *path = tu_path("controls_env.h5");
    char err[256];
    setenv("SPANSCOPE_DEACTIVATE_PROFILING", "1", 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_false(sps_is_active()); /* deactivated: no session */
    unsetenv("SPANSCOPE_DEACTIVATE_PROFILING");
    /* SPANSCOPE_CONFIG is read by C too (docs/configuration.md): a file
     * that does not exist is SPS_EIO naming it, and no session */
    setenv("SPANSCOPE_CONFIG", "x.toml", 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), SPS_EIO);
    assert_non_null(strstr(err, "x.toml"));
    assert_false(sps_is_active());
    unsetenv("SPANSCOPE_CONFIG");
    setenv("SCOPE_PROFILER_OUTPUT", path, 1);
    setenv("SPANSCOPE_LABEL", "env-run", 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_true(sps_is_active());
    sps_region_t A = sps_region("ctl.env");
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize(), 0); /* the configured path: the variable's */
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_true(tu_h5_row(h, "ctl.env") >= 0);
    tu_h5_free(h);
    assert_string_equal(label_of(path), "env-run");
    sps_shutdown();
    unlink(path);
    env_clear();

    /* a real TOML file: its [profiling] label reaches /metadata (no
     * SPANSCOPE_LABEL); the output is still the variable's */
    const char *toml = tu_path("controls_env.toml");
    FILE *f = fopen(toml, "w");
    assert_non_null(f);
    fputs("# test_controls\n[profiling]\nlabel = \"from-toml\"\n", f);
    assert_int_equal(fclose(f), 0);
    setenv("SPANSCOPE_CONFIG", toml, 1);
    setenv("SPANSCOPE_OUTPUT", path, 1);
    assert_int_equal(sps_setup_from_env(err, sizeof err), 0);
    assert_true(sps_is_active());
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize(), 0);
    assert_string_equal(label_of(path), "from-toml");
    sps_shutdown();
    unlink(path);

    /* an unknown key is an error naming it (and the file), no session */
    f = fopen(toml, "w");
    assert_non_null(f);
    fputs("[profiling]\nlabell = \"x\"\n", f);
    assert_int_equal(fclose(f), 0);
    err[0] = 0;
    assert_int_equal(sps_setup_from_env(err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "'labell'"));
    assert_non_null(strstr(err, "controls_env.toml"));
    assert_false(sps_is_active());
    unlink(toml);
    env_clear();
}

static void test_region_attributes_reach_the_index(void **state) {
    (void)state;
    const char *path = tu_path("controls_attrs.h5");
    sps_region_t A = sps_region("ctl.src"), B = sps_region("ctl.meta");
    sps_region_t C = sps_region("ctl.short");
    assert_int_equal(sps_region_set_tags(SPS_REGION_INVALID, "[]"), SPS_EINVAL);
    assert_int_equal(sps_region_set_tags(sps_region_count() + 5, "[]"), SPS_EINVAL);
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_region_set_source(A, "app.py", 12, "with r:\n    x()\n"), 0);
    assert_int_equal(sps_region_set_tags(A, "[\"io\"]"), 0);
    for (int i = 0; i < 2; i++) {
        sps_begin(A);
        sps_end(A);
        sps_begin(B);
        sps_end(B);
        sps_begin(C);
        sps_end(C);
    }
    assert_int_equal(sps_region_set_event_metadata(B, "[{\"i\": 0}, {\"i\": 1}]", 2), 0);
    assert_int_equal(sps_region_set_event_metadata(C, "[{\"i\": 0}]", 1), 0); /* 1 of 2 */
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    long ra = tu_h5_row(h, "ctl.src"), rb = tu_h5_row(h, "ctl.meta");
    long rc = tu_h5_row(h, "ctl.short");
    tu_h5_free(h);
    char *s;
    assert_string_equal(s = index_str(path, "source_files", ra), "app.py"), free(s);
    assert_string_equal(s = index_str(path, "source_texts", ra), "with r:\n    x()\n"), free(s);
    assert_string_equal(s = index_str(path, "tags", ra), "[\"io\"]"), free(s);
    assert_string_equal(s = index_str(path, "tags", rb), "[]"), free(s);
    assert_string_equal(s = index_str(path, "source_files", rb), ""), free(s);
    assert_string_equal(s = index_str(path, "event_metadata", rb), "[{\"i\": 0}, {\"i\": 1}]"),
        free(s);
    /* a list of another length than the calls written is left out */
    assert_string_equal(s = index_str(path, "event_metadata", rc), "[]"), free(s);
    /* the next period: the metadata was consumed, source and tags remain */
    sps_begin(B);
    sps_end(B);
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize_to(path), 0);
    h = tu_h5_load(path);
    ra = tu_h5_row(h, "ctl.src");
    rb = tu_h5_row(h, "ctl.meta");
    tu_h5_free(h);
    assert_string_equal(s = index_str(path, "event_metadata", rb), "[]"), free(s);
    assert_string_equal(s = index_str(path, "tags", ra), "[\"io\"]"), free(s);
    /* a new session starts without any */
    sps_shutdown();
    assert_int_equal(sps_setup(NULL), 0);
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize_to(path), 0);
    assert_string_equal(s = index_str(path, "tags", 0), "[]"), free(s);
    assert_string_equal(s = index_str(path, "source_files", 0), ""), free(s);
    sps_shutdown();
    unlink(path);
}

static void test_task_table(void **state) {
    (void)state;
    const char *path = tu_path("controls_tasks.h5");
    sps_task_t t[2] = {{0, -1, 100, 900, 3, 50, 700, "task", "Task-1", "main"},
                       {1, -1, 200, -1, 0, 0, 0, "task", NULL, "idle"}};
    assert_int_equal(sps_tasks_set(t, 2), SPS_ENOSESSION);
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_tasks_set(NULL, 1), SPS_EINVAL);
    assert_int_equal(sps_tasks_set(t, 2), 0);
    sps_region_t A = sps_region("ctl.task");
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize_to(path), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t n = 0;
    int64_t *done = tu_h5_col(f, "/task_table/done_ns", H5T_NATIVE_INT64, 8, &n);
    int64_t *susp = tu_h5_col(f, "/task_table/suspended_ns", H5T_NATIVE_INT64, 8, &n);
    assert_int_equal(n, 2);
    assert_int_equal(done[0], 900);
    assert_int_equal(done[1], -1);
    assert_int_equal(susp[0], 700);
    free(done);
    free(susp);
    H5Fclose(f);
    hid_t g = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(g, "/task_table/name", H5P_DEFAULT);
    char *raw[2] = {NULL, NULL};
    hid_t mt = tu_h5_strtype();
    assert_true(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0);
    assert_string_equal(raw[0], "Task-1");
    assert_string_equal(raw[1], ""); /* NULL is "" */
    for (int i = 0; i < 2; i++) H5free_memory(raw[i]);
    H5Tclose(mt);
    H5Dclose(d);
    H5Fclose(g);
    /* a new session has none: no group */
    sps_shutdown();
    assert_int_equal(sps_setup(NULL), 0);
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_finalize_to(path), 0);
    g = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(H5Lexists(g, "/task_table", H5P_DEFAULT) <= 0);
    H5Fclose(g);
    sps_shutdown();
    unlink(path);
}

/* String attribute name of path's /metadata, malloc'd (NULL when absent). */
static char *meta_str(const char *path, const char *name) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    char buf[256];
    int ok = tu_h5_attr_str(f, "/metadata", name, buf, sizeof buf) == 0;
    H5Fclose(f);
    return ok ? strdup(buf) : NULL;
}

static void test_added_metadata(void **state) {
    (void)state;
    const char *path = tu_path("controls_meta.h5");
    assert_int_equal(sps_metadata_set("user", "x"), SPS_ENOSESSION);
    sps_config_t c = SPS_CONFIG_INIT;
    c.label = "mine";
    assert_int_equal(sps_setup(&c), 0);
    assert_int_equal(sps_metadata_set("", "x"), SPS_EINVAL);
    assert_int_equal(sps_metadata_set("user", "first"), 0);
    assert_int_equal(sps_metadata_set("user", "second"), 0); /* replaces */
    assert_int_equal(sps_metadata_set("gone", "x"), 0);
    assert_int_equal(sps_metadata_set("gone", NULL), 0);      /* removes */
    assert_int_equal(sps_metadata_set("label", "theirs"), 0); /* spanscope's wins */
    assert_int_equal(sps_finalize_to(path), 0);
    char *s;
    assert_string_equal(s = meta_str(path, "user"), "second"), free(s);
    assert_null(meta_str(path, "gone"));
    assert_string_equal(s = meta_str(path, "label"), "mine"), free(s);
    sps_shutdown();
    assert_int_equal(sps_setup(NULL), 0); /* a new session: none */
    assert_int_equal(sps_finalize_to(path), 0);
    assert_null(meta_str(path, "user"));
    sps_shutdown();
    unlink(path);
}

static void test_task_steps_stamp_the_calls(void **state) {
    (void)state;
    const char *path = tu_path("controls_steps.h5");
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("ctl.in_task"), B = sps_region("ctl.no_task");
    int64_t ta = tu_now();
    sps_begin(A);
    tu_spin_ns(400000);
    sps_end(A);
    int64_t tb = tu_now();
    tu_spin_ns(400000); /* B starts well after the task's last step */
    sps_begin(B);
    sps_end(B);
    int64_t tid = (int64_t)gettid();
    /* the task runs at the call's start and at its end, suspended between;
     * the steps reach 100 us past the call on either side, so the answer,
     * dur - ((ta + 50000 - start) + (end - (tb - 50000))) = tb - ta - 100000,
     * holds exactly whatever the clocks' conversion error */
    sps_task_step_t st[] = {{0, tid, ta - 100000, ta + 50000},
                            {0, tid, tb - 50000, tb + 100000}, {1, tid, 1, 2}};
    sps_task_t t[] = {{0, tid, ta - 10, tb, 2, 100010, 0, "task", "T0", "main"},
                      {1, tid, 1, 2, 1, 1, 0, "task", "T1", "other"}};
    sps_task_step_t bad = {0, tid, 5, 4};
    assert_int_equal(sps_task_steps_set(&bad, 1), SPS_EINVAL);
    assert_int_equal(sps_task_steps_set(st, 3), 0);
    assert_int_equal(sps_tasks_set(t, 2), 0);
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    long ra = tu_h5_row(h, "ctl.in_task"), rb = tu_h5_row(h, "ctl.no_task");
    uint64_t ia = h->offsets[ra], ib = h->offsets[rb];
    int64_t dur_a = h->durations[ia];
    tu_h5_free(h);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t n = 0;
    int64_t *task = tu_h5_col(f, "/events/task_ids", H5T_NATIVE_INT64, 8, &n);
    int64_t *wait = tu_h5_col(f, "/events/await_ns", H5T_NATIVE_INT64, 8, &n);
    int64_t *thr = tu_h5_col(f, "/task_table/thread_index", H5T_NATIVE_INT64, 8, &n);
    assert_int_equal(task[ia], 0);
    assert_int_equal(task[ib], -1);
    assert_int_equal(wait[ib], 0);
    /* dur - the task's running time inside the call = tb - ta - 100000 */
    TU_ASSERT_NEAR(wait[ia], tb - ta - 100000, 0, 2);
    assert_true(wait[ia] < dur_a);
    assert_int_equal(thr[0], 0); /* the kernel id became the session index */
    free(task);
    free(wait);
    free(thr);
    H5Fclose(f);
    sps_shutdown();
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_pause_records_nothing_until_resume),
        TU_TEST(test_open_calls_of_this_thread),
        TU_TEST(test_open_calls_of_every_thread),
        TU_TEST(test_env_read),
        TU_TEST(test_setup_from_env),
        TU_TEST(test_region_attributes_reach_the_index),
        TU_TEST(test_task_table),
        TU_TEST(test_added_metadata),
        TU_TEST(test_task_steps_stamp_the_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
