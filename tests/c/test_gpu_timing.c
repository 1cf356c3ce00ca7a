/* test_gpu_timing.c -- CUDA-event timing per region call (issue 38 parts 4
 * and 5; src/ext/gpu_timing.c), without a GPU.
 *
 * Most tests load tests/c/fake_cudart.c's stand-in libcudart through
 * SPANSCOPE_CUDART_LIB (CMake passes its path as SPS_FAKE_CUDART): its
 * events are stamped by a fake device whose clock and queue the test
 * drives (fake_cudart_work / _advance), so every pair's device time is
 * known.  They check: a pair per region call with the device time of the
 * work queued inside it, nesting, two threads, the pool (events reused,
 * created == destroyed at the end), lazy resolution (nothing waits until
 * the take; cudaEventQuery resolves what is complete), gpu_sync_on_exit,
 * no pair while paused or without a session, a failed record, and the
 * clear errors: no library, a library that is not libcudart, no device,
 * and on this machine (libcudart without a driver) the real answer. */
#include "testutil.h"
#include "core/core.h"
#include "ext/gpu_timing.h"

#include <dlfcn.h>
#include <hdf5.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SPS_FAKE_CUDART
#error "SPS_FAKE_CUDART: the stand-in libcudart's path (tests/c/CMakeLists.txt)"
#endif

static void (*f_reset)(void);
static void (*f_work)(uint64_t);
static void (*f_advance)(uint64_t);
static void (*f_devices)(int, int);
static void (*f_fail_records)(long);
static long (*f_count)(int);
static void *g_fake; /* the test's own handle on the stand-in (kept while checking) */
enum { C_MADE, C_DESTROYED, C_LIVE, C_RECORDS, C_QUERIES, C_SYNCS };

#define FN(var, name)                                   \
    do {                                                \
        void *s_ = dlsym(h, name);                      \
        assert_non_null(s_);                            \
        memcpy(&(var), &s_, sizeof s_);                 \
    } while (0)

/* The stand-in loaded by gpu_timing (SPANSCOPE_CUDART_LIB), its controls
 * looked up in the same copy of it, reset. */
static void use_fake(void) {
    assert_int_equal(sps__gpu_timing_unload(), 0);
    setenv("SPANSCOPE_CUDART_LIB", SPS_FAKE_CUDART, 1);
    assert_int_equal(sps__gpu_timing_load(), 0);
    assert_string_equal(sps__gpu_timing_lib_path(), SPS_FAKE_CUDART);
    void *h = g_fake = dlopen(SPS_FAKE_CUDART, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    FN(f_reset, "fake_cudart_reset");
    FN(f_work, "fake_cudart_work");
    FN(f_advance, "fake_cudart_advance");
    FN(f_devices, "fake_cudart_devices");
    FN(f_fail_records, "fake_cudart_fail_records");
    FN(f_count, "fake_cudart_count");
    f_reset();
}

/* Unloads (every event destroyed) and checks nothing leaked. */
static void done_fake(void) {
    sps__gpu_stats_t s;
    assert_int_equal(sps__gpu_timing_unload(), 0);
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.created, s.destroyed);
    assert_int_equal(s.pooled, 0);
    assert_int_equal(s.pending, 0);
    assert_int_equal(f_count(C_LIVE), 0); /* the stand-in agrees: no event left */
    dlclose(g_fake);
    g_fake = NULL;
    unsetenv("SPANSCOPE_CUDART_LIB");
}

static void session(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
}

static int32_t my_tid(void) { return (int32_t)syscall(SYS_gettid); }

static const sps__gpu_pair_t *find(const sps__gpu_pair_t *p, size_t n, uint32_t region,
                                   size_t nth) {
    for (size_t i = 0; i < n; i++)
        if (p[i].region == region && nth-- == 0) return &p[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */

static void test_pairs_and_nesting(void **state) {
    (void)state;
    use_fake();
    session();
    sps_region_t outer = sps_region("gt outer"), inner = sps_region("gt inner");
    assert_int_equal(sps__gpu_timing_start(0), 0);
    assert_true(sps__gpu_timing_running());
    sps_begin(outer);
    f_work(1000000); /* 1 ms queued */
    sps_begin(inner);
    f_work(500000);
    sps_end(inner);
    f_work(250000);
    sps_end(outer);
    sps_begin(inner); /* a second call of inner, alone */
    f_work(125000);
    sps_end(inner);
    sps__gpu_stats_t s;
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.open, 0);
    assert_int_equal(s.pending, 3);
    assert_int_equal(s.results, 0); /* nothing resolved: the device is behind */
    assert_int_equal(f_count(C_RECORDS), 6);
    assert_int_equal(f_count(C_SYNCS), 0);
    sps__gpu_pair_t *p;
    size_t n;
    assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(f_count(C_SYNCS), 3);
    const sps__gpu_pair_t *o = find(p, n, outer, 0), *i1 = find(p, n, inner, 0),
                          *i2 = find(p, n, inner, 1);
    assert_non_null(o);
    assert_non_null(i1);
    assert_non_null(i2);
    assert_int_equal(o->device_ns, 1750000);
    assert_int_equal(i1->device_ns, 500000);
    assert_int_equal(i2->device_ns, 125000);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(p[k].tid, my_tid());
        assert_true(p[k].host_begin_ns <= p[k].host_end_ns);
    }
    /* the host times bracket the spans the session recorded */
    assert_true(o->host_begin_ns <= i1->host_begin_ns && i1->host_end_ns <= o->host_end_ns);
    assert_true(o->host_end_ns <= i2->host_begin_ns);
    sps_span_t *sp;
    size_t ns;
    assert_int_equal(sps_spans(0, INT64_MAX, &sp, &ns), 0);
    assert_int_equal(ns, 3);
    for (size_t k = 0; k < ns; k++) {
        const sps__gpu_pair_t *q =
            find(p, n, sp[k].region, sp[k].region == inner && k == 2 ? 1 : 0);
        assert_non_null(q);
        assert_true((int64_t)q->host_begin_ns <= sp[k].start_ns);
        assert_true(sp[k].end_ns <= (int64_t)q->host_end_ns);
    }
    sps_free(sp);
    free(p);
    assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0); /* taken once */
    assert_int_equal(n, 0);
    assert_null(p);
    assert_int_equal(sps__gpu_timing_stop(), 0);
    assert_false(sps__gpu_timing_running());
    sps_begin(outer); /* stopped: no pair */
    sps_end(outer);
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.pending, 0);
    sps_shutdown();
    done_fake();
}

typedef struct worker {
    sps_region_t r;
    int calls;
    int32_t tid;
} worker_t;

static void *work_thread(void *arg) {
    worker_t *w = arg;
    w->tid = my_tid();
    for (int i = 0; i < w->calls; i++) {
        sps_begin(w->r);
        f_work(1000);
        sps_end(w->r);
    }
    return NULL;
}

static void test_two_threads(void **state) {
    (void)state;
    use_fake();
    session();
    assert_int_equal(sps__gpu_timing_start(0), 0);
    worker_t w[2] = {{sps_region("gt thread a"), 300, 0}, {sps_region("gt thread b"), 200, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, work_thread, &w[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    sps__gpu_pair_t *p;
    size_t n;
    assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0);
    assert_int_equal(n, 500);
    int per[2] = {0, 0};
    for (size_t k = 0; k < n; k++) {
        int which = p[k].region == w[0].r ? 0 : 1;
        assert_int_equal(p[k].region, w[which].r);
        assert_int_equal(p[k].tid, w[which].tid);
        assert_true(p[k].device_ns >= 1000); /* its own work, maybe the other thread's too */
        per[which]++;
    }
    assert_int_equal(per[0], 300);
    assert_int_equal(per[1], 200);
    free(p);
    sps__gpu_stats_t s;
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.open, 0); /* the threads' exits gave nothing back: nothing open */
    sps_shutdown();
    done_fake();
}

/* Events are reused: with the device keeping up, lazy resolution hands
 * them back and a long run makes few. */
static void test_pool_and_lazy(void **state) {
    (void)state;
    use_fake();
    session();
    sps_region_t r = sps_region("gt pooled");
    sps__gpu_stats_t s0; /* the counts run on over the tests: deltas */
    sps__gpu_timing_stats(&s0);
    assert_int_equal(s0.created, s0.destroyed);
    assert_int_equal(sps__gpu_timing_start(0), 0);
    /* the device is behind: 200 calls, nothing complete, nothing resolved */
    for (int i = 0; i < 200; i++) {
        sps_begin(r);
        f_work(1000);
        sps_end(r);
    }
    sps__gpu_stats_t s;
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.pending, 200);
    assert_int_equal(s.results, 0);
    /* one query per lazy round (every 64 ends): the oldest, not ready */
    assert_int_equal(s.queries - s0.queries, 3);
    assert_int_equal(s.created - s0.created, 400);
    assert_int_equal(f_count(C_SYNCS), 0);
    /* the device catches up: the next lazy round resolves them all */
    f_advance(1000000000);
    for (int i = 0; i < 64; i++) {
        sps_begin(r);
        f_work(1000);
        f_advance(1000); /* this call's work is done at once */
        sps_end(r);
    }
    sps__gpu_timing_stats(&s);
    assert_true(s.results >= 200);
    assert_true(s.pending < 64);
    assert_int_equal(f_count(C_SYNCS), 0); /* no wait: cudaEventQuery only */
    /* steady state: 10000 more calls make no new event */
    uint64_t made = s.created;
    for (int i = 0; i < 10000; i++) {
        sps_begin(r);
        f_work(100);
        f_advance(100);
        sps_end(r);
    }
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.created, made);
    assert_true(s.pooled + 2 * s.pending == s.created - s.destroyed);
    sps__gpu_pair_t *p;
    size_t n;
    assert_int_equal(sps__gpu_timing_take(0, &p, &n), 0); /* no wait: all complete */
    assert_int_equal(n, 10264);
    for (size_t k = 0; k < 200; k++) assert_int_equal(p[k].device_ns, 1000);
    for (size_t k = 264; k < n; k++) assert_int_equal(p[k].device_ns, 100);
    free(p);
    assert_int_equal(f_count(C_SYNCS), 0);
    sps_shutdown();
    done_fake();
}

static void test_sync_on_exit(void **state) {
    (void)state;
    use_fake();
    session();
    sps_region_t r = sps_region("gt sync");
    assert_int_equal(sps__gpu_timing_start(SPS__GPU_SYNC_ON_EXIT), 0);
    assert_int_equal(sps__gpu_timing_start(0), SPS_EACTIVE); /* other settings */
    assert_non_null(strstr(sps_last_error(), "already running"));
    assert_int_equal(sps__gpu_timing_start(SPS__GPU_SYNC_ON_EXIT), 0); /* the same: fine */
    assert_int_equal(sps__gpu_timing_start(8u), SPS_EINVAL);
    for (int i = 0; i < 10; i++) {
        sps_begin(r);
        f_work(2000);
        sps_end(r);
        /* the end waited for the device: resolved already */
        sps__gpu_stats_t s;
        sps__gpu_timing_stats(&s);
        assert_int_equal(s.pending, 0);
        assert_int_equal(s.results, (uint64_t)i + 1);
    }
    assert_int_equal(f_count(C_SYNCS), 10);
    sps__gpu_pair_t *p;
    size_t n;
    assert_int_equal(sps__gpu_timing_take(0, &p, &n), 0);
    assert_int_equal(n, 10);
    for (size_t k = 0; k < n; k++) assert_int_equal(p[k].device_ns, 2000);
    free(p);
    assert_int_equal(sps__gpu_timing_stop(), 0);
    sps_shutdown();
    done_fake();
}

/* No pair without a session, while paused, or for a call begun before the
 * start; a failed record is counted and gives no result. */
static void test_not_recorded_and_errors(void **state) {
    (void)state;
    use_fake();
    sps_region_t r = sps_region("gt cases"), q = sps_region("gt other");
    assert_int_equal(sps__gpu_timing_start(0), 0);
    sps_begin(r); /* no session */
    sps_end(r);
    session();
    assert_int_equal(sps_pause(), 0);
    sps_begin(r);
    sps_end(r);
    assert_int_equal(sps_resume(), 0);
    assert_int_equal(sps__gpu_timing_stop(), 0);
    sps_begin(q); /* begun before the start */
    assert_int_equal(sps__gpu_timing_start(0), 0);
    sps_begin(r);
    f_work(10);
    sps_end(r);
    sps_end(q); /* not timed: no pair of q */
    f_fail_records(1);
    sps_begin(r); /* its start event fails */
    sps_end(r);
    sps__gpu_stats_t s;
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.errors, 1);
    assert_int_equal(s.open, 0);
    sps__gpu_pair_t *p;
    size_t n;
    assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].region, r);
    assert_int_equal(p[0].device_ns, 10);
    free(p);
    /* a pair left open at a stop is dropped at the thread's next begin
     * after a new start: its events go back to the pool */
    sps_begin(r);
    assert_int_equal(sps__gpu_timing_stop(), 0);
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.open, 1);
    assert_int_equal(sps__gpu_timing_unload(), SPS_EACTIVE);
    assert_int_equal(sps__gpu_timing_start(0), 0);
    sps_begin(q);
    sps__gpu_timing_stats(&s);
    assert_int_equal(s.open, 1); /* q's only */
    sps_end(q);
    sps_end(r); /* r's pair was dropped: nothing */
    assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].region, q);
    free(p);
    assert_int_equal(sps__gpu_timing_stop(), 0);
    sps_shutdown();
    done_fake();
}

/* ------------------------------------------------------------------------ */
/* The public face: sps_device_*(SPS_DEVICE_EVENTS) and the file             */
/* ------------------------------------------------------------------------ */

/* /events/gpu_durations of the file at path: n values into v (malloc'd). */
static int64_t *read_gpu(const char *path, size_t *n) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, "/events/gpu_durations", H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[1] = {0};
    assert_int_equal(H5Sget_simple_extent_ndims(sp), 1);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    int64_t *v = calloc(dims[0] + 1, sizeof *v);
    assert_non_null(v);
    if (dims[0]) assert_true(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    *n = (size_t)dims[0];
    return v;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A watchdog for the tests that go through src/api/device.c: a finalize
 * that never returns (a lock taken twice) ends the program with a line
 * saying so, instead of waiting for CTest's timeout. */
static void watchdog_fired(int sig) {
    (void)sig;
    static const char msg[] = "test_gpu_timing: no answer in 60 s from sps_device_* / "
                              "sps_finalize (a deadlock between device.c's lock and the "
                              "collector's take?)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(124);
}

/* Each region call's pair lands in the file as that call's gpu_durations
 * value, through the device collector's table (src/api/device.c). */
static void test_public_api_to_the_file(void **state) {
    (void)state;
    signal(SIGALRM, watchdog_fired);
    alarm(60);
    use_fake();
    assert_int_equal(sps_device_available(SPS_DEVICE_EVENTS), 0);
    sps_config_t cfg = SPS_CONFIG_INIT;
    const char *path = tu_path("gpu_timing.h5");
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_device_start(SPS_DEVICE_EVENTS), 0);
    assert_int_equal(sps_device_start(SPS_DEVICE_EVENTS), SPS_EACTIVE);
    sps_region_t a = sps_region("gt file a"), b = sps_region("gt file b");
    for (int i = 0; i < 4; i++) {
        sps_begin(a);
        f_work(1000u * (uint64_t)(i + 1));
        sps_begin(b);
        f_work(300);
        sps_end(b);
        sps_end(a);
    }
    assert_int_equal(sps_finalize(), 0); /* the collector stays on: a checkpoint */
    size_t n;
    int64_t *v = read_gpu(path, &n);
    assert_int_equal(n, 8);
    qsort(v, n, sizeof *v, cmp_i64);
    const int64_t want[8] = {300, 300, 300, 300, 1300, 2300, 3300, 4300};
    for (size_t k = 0; k < n; k++) assert_int_equal(v[k], want[k]);
    free(v);
    sps_begin(b); /* the next period's */
    f_work(700);
    sps_end(b);
    assert_int_equal(sps_device_stop(SPS_DEVICE_EVENTS), 0);
    sps_begin(b); /* stopped: no pair, -1 in the file */
    sps_end(b);
    assert_int_equal(sps_finalize(), 0);
    v = read_gpu(path, &n);
    assert_int_equal(n, 2);
    qsort(v, n, sizeof *v, cmp_i64);
    assert_int_equal(v[0], -1);
    assert_int_equal(v[1], 700);
    free(v);
    sps_shutdown();
    done_fake();
    alarm(0);
}

/* On this machine (no driver) the public functions say why in one line. */
static void test_public_api_without_a_device(void **state) {
    (void)state;
    assert_int_equal(sps__gpu_timing_unload(), 0);
    setenv("SPANSCOPE_CUDART_LIB", "/nonexistent/libcudart.so.12", 1);
    assert_int_equal(sps_device_available(SPS_DEVICE_EVENTS), SPS_ENOTSUP);
    assert_non_null(strstr(sps_last_error(), "gpu_timing: cannot load SPANSCOPE_CUDART_LIB"));
    assert_int_equal(sps_device_start(SPS_DEVICE_EVENTS), SPS_ENOTSUP);
    assert_null(strchr(sps_last_error(), '\n'));
    assert_false(sps__gpu_timing_running());
    unsetenv("SPANSCOPE_CUDART_LIB");
    if (sps__gpu_timing_available() != 0) { /* this machine: no GPU */
        assert_int_equal(sps_device_available(SPS_DEVICE_EVENTS), SPS_ENOTSUP);
        print_message("sps_device_available(SPS_DEVICE_EVENTS) here: %s\n", sps_last_error());
        assert_non_null(strstr(sps_last_error(), "gpu_timing: "));
    }
    assert_int_equal(sps__gpu_timing_unload(), 0);
}

/* ------------------------------------------------------------------------ */
/* Clear errors                                                              */
/* ------------------------------------------------------------------------ */

static void test_no_library(void **state) {
    (void)state;
    assert_int_equal(sps__gpu_timing_unload(), 0);
    setenv("SPANSCOPE_CUDART_LIB", "/nonexistent/libcudart.so", 1);
    assert_int_equal(sps__gpu_timing_available(), SPS_ENOTSUP);
    assert_non_null(strstr(sps_last_error(),
                           "gpu_timing: cannot load SPANSCOPE_CUDART_LIB=/nonexistent/libcudart.so"));
    assert_int_equal(sps__gpu_timing_start(0), SPS_ENOTSUP);
    assert_false(sps__gpu_timing_running());
    assert_null(strchr(sps_last_error(), '\n'));
    setenv("SPANSCOPE_CUDART_LIB", "libm.so.6", 1);
    assert_int_equal(sps__gpu_timing_load(), SPS_ENOTSUP);
    assert_non_null(strstr(sps_last_error(), "libm.so.6 lacks cudaEventCreateWithFlags"));
    assert_null(sps__gpu_timing_lib_path()); /* a failed load is not kept */
    unsetenv("SPANSCOPE_CUDART_LIB");
}

static void test_no_device(void **state) {
    (void)state;
    use_fake();
    f_devices(0, 0);
    assert_int_equal(sps__gpu_timing_available(), SPS_ENOTSUP);
    assert_string_equal(sps_last_error(), "gpu_timing: no CUDA device: cudaGetDeviceCount: no "
                                          "CUDA-capable device is detected (100)");
    f_devices(0, 35);
    assert_int_equal(sps__gpu_timing_start(0), SPS_ENOTSUP);
    assert_string_equal(sps_last_error(),
                        "gpu_timing: no CUDA device: cudaGetDeviceCount: CUDA driver version is "
                        "insufficient for CUDA runtime version (35)");
    assert_false(sps__gpu_timing_running());
    f_devices(2, 0);
    assert_int_equal(sps__gpu_timing_available(), 0);
    done_fake();
}

/* Without SPANSCOPE_CUDART_LIB: the machine's own answer.  Here (the CI
 * machines) libcudart is installed and there is no driver; where libcudart
 * is absent it says so; where a GPU is present it starts and stops. */
static void test_this_machine(void **state) {
    (void)state;
    assert_int_equal(sps__gpu_timing_unload(), 0);
    unsetenv("SPANSCOPE_CUDART_LIB");
    int rc = sps__gpu_timing_available();
    const char *why = sps_last_error();
    if (rc == 0) {
        print_message("gpu_timing: a CUDA device is present (%s): start/stop\n",
                      sps__gpu_timing_lib_path());
        session();
        assert_int_equal(sps__gpu_timing_start(0), 0);
        sps_region_t r = sps_region("gt real");
        sps_begin(r);
        sps_end(r);
        sps__gpu_pair_t *p;
        size_t n;
        assert_int_equal(sps__gpu_timing_take(1, &p, &n), 0);
        assert_int_equal(n, 1);
        assert_true(p[0].device_ns >= 0);
        free(p);
        sps_shutdown();
    } else {
        assert_int_equal(rc, SPS_ENOTSUP);
        print_message("gpu_timing here: %s\n", why);
        assert_non_null(strstr(why, "gpu_timing: "));
        assert_null(strchr(why, '\n'));
        if (sps__gpu_timing_lib_path())
            assert_non_null(strstr(why, "no CUDA device: cudaGetDeviceCount: "));
        else
            assert_non_null(strstr(why, "libcudart not found"));
    }
    assert_int_equal(sps__gpu_timing_unload(), 0);
}

/* After each test, also a failed one: no session, not running, the
 * stand-in unloaded, so that the next test starts clean. */
static int teardown(void **state) {
    (void)state;
    sps_shutdown();
    sps__gpu_timing_stop();
    sps__gpu_timing_unload();
    if (g_fake) dlclose(g_fake);
    g_fake = NULL;
    unsetenv("SPANSCOPE_CUDART_LIB");
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_pairs_and_nesting, teardown),
        cmocka_unit_test_teardown(test_two_threads, teardown),
        cmocka_unit_test_teardown(test_pool_and_lazy, teardown),
        cmocka_unit_test_teardown(test_sync_on_exit, teardown),
        cmocka_unit_test_teardown(test_not_recorded_and_errors, teardown),
        cmocka_unit_test_teardown(test_public_api_to_the_file, teardown),
        cmocka_unit_test_teardown(test_public_api_without_a_device, teardown),
        cmocka_unit_test_teardown(test_no_library, teardown),
        cmocka_unit_test_teardown(test_no_device, teardown),
        cmocka_unit_test_teardown(test_this_machine, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
