/* test_device.c -- device activity in a recording (issue 38 parts 3 and 5;
 * src/api/device.c, src/ext/cupti_device.c; docs/device.md), without a
 * GPU: the public sps_device_* functions on this machine (no driver: said
 * clearly), and a whole recording through the stand-in libcupti
 * (fake_cupti.c, loaded with SPANSCOPE_CUPTI_LIB and SPANSCOPE_CUDA_LIB):
 * two threads launching kernels and a copy from nested spans (a region
 * inside itself too) and a launch outside any span; the .h5 read back
 * with plain HDF5: /device's rows and attributes, each activity on the
 * innermost span of its region (not the parent), /events/gpu_durations
 * per event and gpu_count / gpu_total per region; a checkpoint with a
 * span open (its launch waits for the file that writes the span, nothing
 * doubled); the stop's flush; start twice and another CUPTI subscriber
 * (SPS_EACTIVE).  And the per-call hook gpu_timing hands its CUDA-event
 * pairs through (sps__device_pairs_add), and a file without any device
 * collector has neither /device nor gpu_durations. */
#include "testutil.h"
#include "tu_h5.h"
#include "api/device.h"
#include "ext/cupti.h"
#include "formats/h5_device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The /device part of a file, read with plain HDF5. */
typedef struct dev {
    int present;
    size_t n;
    int64_t *c[SPS__DEVC_N];
    size_t nnames;
    char **names;
    char collector[32], clock[32];
    int64_t dropped, version;
    int64_t *gpu; /* /events/gpu_durations, NULL when absent */
    size_t ngpu;
} dev_t_;

static void dev_load(const char *path, dev_t_ *d) {
    memset(d, 0, sizeof *d);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    d->present = H5Lexists(f, "/device", H5P_DEFAULT) > 0;
    d->gpu = tu_h5_col(f, "/events/gpu_durations", H5T_NATIVE_INT64, 8, &d->ngpu);
    if (d->present) {
        char p[128];
        for (int i = 0; i < SPS__DEVC_N; i++) {
            size_t n = 0;
            snprintf(p, sizeof p, "/device/%s", sps__h5_device_cols[i]);
            d->c[i] = tu_h5_col(f, p, H5T_NATIVE_INT64, 8, &n);
            assert_non_null(d->c[i]);
            if (i == 0) d->n = n;
            assert_int_equal(n, d->n);
        }
        hid_t ds = H5Dopen2(f, "/device/names", H5P_DEFAULT);
        assert_true(ds >= 0);
        hid_t sp = H5Dget_space(ds);
        hsize_t dim = 0;
        H5Sget_simple_extent_dims(sp, &dim, NULL);
        d->nnames = (size_t)dim;
        d->names = calloc(dim + 1, sizeof *d->names);
        hid_t mt = tu_h5_strtype();
        if (dim) assert_true(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->names) >= 0);
        H5Tclose(mt);
        H5Sclose(sp);
        H5Dclose(ds);
        assert_int_equal(tu_h5_attr_str(f, "/device", "collector", d->collector,
                                        sizeof d->collector), 0);
        assert_int_equal(tu_h5_attr_str(f, "/device", "clock", d->clock, sizeof d->clock), 0);
    }
    H5Fclose(f);
    if (d->present) {
        d->dropped = tu_h5_attr_i64(path, "/device", "dropped", -99);
        d->version = tu_h5_attr_i64(path, "/device", "cupti_version", -99);
    }
}

static void dev_free(dev_t_ *d) {
    for (int i = 0; i < SPS__DEVC_N; i++) free(d->c[i]);
    for (size_t i = 0; i < d->nnames; i++) H5free_memory(d->names[i]);
    free(d->names);
    free(d->gpu);
}

#define COL(d, k) ((d)->c[SPS__DEVC_##k])

/* The row of /device named name of kind kind on OS thread tid (-1 any);
 * asserts there is exactly one. */
static size_t dev_row(const dev_t_ *d, const char *name, int kind, int64_t tid) {
    size_t at = (size_t)-1, hits = 0;
    for (size_t i = 0; i < d->n; i++) {
        int64_t k = COL(d, NAMES_IDX)[i];
        assert_true(k >= 0 && (size_t)k < d->nnames);
        if (strcmp(d->names[k], name) == 0 && COL(d, KINDS)[i] == kind &&
            (tid < 0 || COL(d, TIDS)[i] == tid))
            at = i, hits++;
    }
    if (hits != 1) fail_msg("%zu rows named %s (kind %d, tid %lld)", hits, name, kind,
                            (long long)tid);
    return at;
}

/* The API row sharing device row i's correlation id. */
static size_t api_of(const dev_t_ *d, size_t i) {
    for (size_t j = 0; j < d->n; j++)
        if (j != i && COL(d, CORRELATIONS)[j] == COL(d, CORRELATIONS)[i]) {
            assert_int_equal(COL(d, KINDS)[j], 4);
            return j;
        }
    fail_msg("no API row for correlation %lld", (long long)COL(d, CORRELATIONS)[i]);
    return 0;
}

/* The event index of call id cid in h, -1 none. */
static int64_t event_of(const tu_h5_t *h, int64_t cid) {
    for (size_t e = 0; e < h->nev; e++)
        if (h->call_ids[e] == cid) return (int64_t)e;
    return -1;
}

/* The file region id of the event e (its index row). */
static int64_t region_of_event(const tu_h5_t *h, int64_t e) {
    for (size_t r = 0; r < h->nrows; r++)
        if ((uint64_t)e >= h->offsets[r] && (uint64_t)e < h->offsets[r] + h->counts[r])
            return h->region_ids[r];
    return -1;
}

static int64_t file_region(const tu_h5_t *h, const char *name) {
    for (size_t i = 0; i < h->nnames; i++)
        if (strcmp(h->names[i], name) == 0) return (int64_t)i;
    return -1;
}

static const tu_sum_t *sum_of(const tu_h5_t *h, const char *name) {
    int64_t fr = file_region(h, name);
    for (size_t r = 0; r < h->nrows; r++)
        if ((int64_t)h->region_ids[r] == fr) return &h->sum[r];
    return NULL;
}

/* ---- this machine: no driver ------------------------------------------------ */

static void test_public_errors(void **state) {
    (void)state;
    assert_int_equal(sps_device_available(0), SPS_EINVAL);
    assert_int_equal(sps_device_available(8), SPS_EINVAL);
    assert_int_equal(sps_device_start(0), SPS_EINVAL);
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI | 16), SPS_EINVAL);
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), SPS_EINVAL); /* not on */
    assert_non_null(strstr(sps_last_error(), "not on"));
    assert_int_equal(sps_device_stop(0), SPS_EINVAL);
}

/* Without the stand-in: libcupti absent, or present without a driver (the
 * CI machines), or built without CUPTI's headers: SPS_ENOTSUP, one line
 * saying which.  On a machine with a GPU it may start. */
static void test_machine(void **state) {
    (void)state;
    unsetenv("SPANSCOPE_CUPTI_LIB");
    unsetenv("SPANSCOPE_CUDA_LIB");
    assert_int_equal(sps__cupti_unload(), 0);
    int rc = sps_device_available(SPS_DEVICE_CUPTI);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (rc == 0) {
        assert_non_null(cuda); /* available means a driver is there */
        printf("# a GPU driver here: the CUPTI collector can start\n");
    } else {
        assert_int_equal(rc, SPS_ENOTSUP);
        const char *m = sps_last_error();
        printf("# sps_device_available(SPS_DEVICE_CUPTI): %s\n", m);
        assert_true(strstr(m, "no NVIDIA driver") || strstr(m, "libcupti not found") ||
                    strstr(m, "built without"));
        assert_null(strchr(m, '\n'));
        if (!cuda) {
            assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), SPS_ENOTSUP);
            assert_string_equal(sps_last_error(), m);
        }
    }
    if (cuda) dlclose(cuda);
}

/* SPANSCOPE_DEVICE's values; a collector that cannot start is a warning,
 * a bad value an error naming it. */
static void test_env_value(void **state) {
    (void)state;
    unsigned b = 99;
    assert_int_equal(sps__device_env_parse("cupti", &b), 0);
    assert_int_equal(b, SPS_DEVICE_CUPTI);
    assert_int_equal(sps__device_env_parse("events", &b), 0);
    assert_int_equal(b, SPS_DEVICE_EVENTS);
    assert_int_equal(sps__device_env_parse(" events, cupti ", &b), 0);
    assert_int_equal(b, SPS_DEVICE_CUPTI | SPS_DEVICE_EVENTS);
    assert_int_equal(sps__device_env_parse("none", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(sps__device_env_parse("", &b), 0);
    assert_int_equal(b, 0);
    assert_int_equal(sps__device_env_parse("cupti,nvml", &b), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "unknown collector 'nvml'"));
    assert_int_equal(sps__device_env_start("gpu"), SPS_EINVAL);
    /* without the stand-in here: no driver, a warning, the session goes on */
    unsetenv("SPANSCOPE_CUPTI_LIB");
    unsetenv("SPANSCOPE_CUDA_LIB"); /* test_machine loaded this machine's libcupti */
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        assert_int_equal(sps__device_env_start("cupti"), 0);
        assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), SPS_EINVAL); /* not on */
    } else {
        dlclose(cuda);
    }
}

/* The collector's correlation map is pruned per take (cupti_device.c):
 * what is below the floor goes, the rest is found as before. */
static void test_corr_prune(void **state) {
    (void)state;
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 130000, 0), 0);
    for (uint32_t i = 1; i <= 1000; i++) assert_int_equal(sps__cupti_corr_put(&c, i, 7000 + i), 0);
    sps__cupti_corr_prune(&c, 600);
    assert_int_equal(c.corr_n, 401);
    for (uint32_t i = 1; i <= 1000; i++)
        assert_int_equal(sps__cupti_corr_span(&c, i), i < 600 ? 0 : 7000 + i);
    assert_int_equal(sps__cupti_corr_put(&c, 1001, 5), 0);
    assert_int_equal(sps__cupti_corr_span(&c, 1001), 5);
    sps__cupti_free(&c);
}

/* ---- the hook for CUDA-event pairs (gpu_timing) ------------------------------ */

/* A pair lands on the outermost span of its region on its thread inside
 * [t0, t1]; a pair no span takes is counted as dropped. */
static void test_pairs_hook(void **state) {
    (void)state;
    const char *path = tu_path("device_pairs.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("dv.pair"), o = sps_region("dv.pair_other");
    int64_t tid = (int64_t)syscall(SYS_gettid);
    sps__device_pair_t p[3];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 2; i++) {
        int64_t t0 = mono_ns();
        tu_spin_ns(2000);
        sps_begin(r);
        sps_begin(o);
        sps_begin(r); /* inside itself: the pair goes to the outer one */
        tu_spin_ns(5000);
        sps_end(r);
        sps_end(o);
        sps_end(r);
        tu_spin_ns(2000);
        p[i] = (sps__device_pair_t){tid, r, 0, t0, mono_ns(), 1000 * (i + 1)};
    }
    /* a pair whose time holds no call of its region */
    p[2] = (sps__device_pair_t){tid, r, 0, mono_ns(), mono_ns() + 10, 777};
    assert_int_equal(sps__device_pairs_add(p, 3), 0);
    assert_int_equal(sps__device_pairs_add(NULL, 1), SPS_EINVAL);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    dev_t_ d;
    dev_load(path, &d);
    assert_true(d.present);
    assert_string_equal(d.collector, "cuda_events");
    assert_int_equal(d.n, 0);
    assert_int_equal(d.dropped, 1);
    assert_non_null(d.gpu);
    assert_int_equal(d.ngpu, h->nev);
    int64_t fr = file_region(h, "dv.pair");
    int seen = 0;
    for (size_t e = 0; e < h->nev; e++) {
        if (region_of_event(h, (int64_t)e) != fr) {
            assert_int_equal(d.gpu[e], -1);
            continue;
        }
        if (h->parent_ids[e] >= 0) { /* the inner call: nothing */
            assert_int_equal(d.gpu[e], -1);
            continue;
        }
        assert_int_equal(d.gpu[e], 1000 * (seen + 1));
        seen++;
    }
    assert_int_equal(seen, 2);
    const tu_sum_t *s = sum_of(h, "dv.pair");
    assert_non_null(s);
    assert_int_equal(s->gpu_count, 2);
    assert_int_equal(s->gpu_total, 3000);
    assert_int_equal(sum_of(h, "dv.pair_other")->gpu_count, 0);
    dev_free(&d);
    tu_h5_free(h);
}

/* A recording without any device collector: no /device, no gpu_durations. */
static void test_no_device(void **state) {
    (void)state;
    const char *path = tu_path("device_none.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("dv.plain");
    sps_begin(r);
    sps_end(r);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    dev_t_ d;
    dev_load(path, &d);
    assert_false(d.present);
    assert_null(d.gpu);
    dev_free(&d);
    tu_h5_t *h = tu_h5_load(path);
    assert_true(h->ok);
    assert_int_equal(h->sum[0].gpu_count, 0);
    assert_int_equal(h->sum[0].gpu_total, 0);
    tu_h5_free(h);
}

#ifdef SPS_FAKE_CUPTI
/* ---- a recording through the stand-in libcupti -------------------------------- */

typedef int (*launch_fn)(const char *name, uint64_t dur_ns);
typedef int (*memcpy_fn)(uint64_t bytes, uint64_t dur_ns);
static launch_fn launch;
static memcpy_fn copy;
static void *fake_h;

static void fake_open(void) {
    assert_int_equal(sps__cupti_unload(), 0);
    setenv("SPANSCOPE_CUPTI_LIB", SPS_FAKE_CUPTI, 1);
    setenv("SPANSCOPE_CUDA_LIB", SPS_FAKE_CUPTI, 1); /* "the driver is there" */
    fake_h = dlopen(SPS_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake_h);
    void *p = dlsym(fake_h, "fake_cupti_launch");
    void *q = dlsym(fake_h, "fake_cupti_memcpy");
    assert_non_null(p);
    assert_non_null(q);
    memcpy(&launch, &p, sizeof p);
    memcpy(&copy, &q, sizeof q);
}

static void fake_close(void) {
    assert_int_equal(sps__cupti_unload(), 0);
    unsetenv("SPANSCOPE_CUPTI_LIB");
    unsetenv("SPANSCOPE_CUDA_LIB");
    dlclose(fake_h);
}

static sps_region_t r_step, r_solve;
static int64_t worker_tid[2];

/* step > solve > solve, launching from each level */
static void *worker(void *arg) {
    int i = (int)(intptr_t)arg;
    worker_tid[i] = (int64_t)syscall(SYS_gettid);
    sps_begin(r_step);
    launch("k_step", 1000);
    sps_begin(r_solve);
    launch("k_solve", 2000);
    copy(4096, 300);
    sps_begin(r_solve);
    launch("k_inner", 700);
    sps_end(r_solve);
    sps_end(r_solve);
    sps_end(r_step);
    return NULL;
}

/* Device row i (with its API row) sits on the call of region `name` whose
 * parent is a call of region `parent_name` (NULL: a root call), on its
 * thread; returns that event. */
static int64_t check_on(const tu_h5_t *h, const dev_t_ *d, size_t i, const char *name,
                        const char *parent_name) {
    size_t a = api_of(d, i);
    int64_t cid = COL(d, CALL_IDS)[i];
    assert_true(cid >= 0);
    assert_int_equal(COL(d, CALL_IDS)[a], cid);
    assert_int_equal(COL(d, REGIONS)[a], COL(d, REGIONS)[i]);
    assert_int_equal(COL(d, TIDS)[a], COL(d, TIDS)[i]);
    assert_int_equal(COL(d, THREADS)[a], COL(d, THREADS)[i]);
    assert_true(COL(d, STARTS)[a] < COL(d, STARTS)[i]); /* launched, then ran */
    int64_t e = event_of(h, cid);
    assert_true(e >= 0);
    assert_int_equal(region_of_event(h, e), file_region(h, name));
    assert_int_equal(COL(d, REGIONS)[i], file_region(h, name));
    assert_int_equal(h->thread_ids[e], COL(d, THREADS)[i]);
    int64_t pe = h->parent_ids[e] >= 0 ? event_of(h, h->parent_ids[e]) : -1;
    if (parent_name) {
        assert_true(pe >= 0);
        assert_int_equal(region_of_event(h, pe), file_region(h, parent_name));
    } else {
        assert_int_equal(pe, -1);
    }
    return e;
}

/* CUPTI's callback ids of the calls fake_cupti.c plays
 * (cupti_runtime_cbid.h: CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
 * _cudaMemcpyAsync_v3020). */
#define CBID_LAUNCH 211
#define CBID_MEMCPY 41

/* The row of the public reader's d named name of kind kind on OS thread
 * tid (-1 any); asserts there is exactly one. */
static size_t pub_row(const sps_device_t *d, const char *name, int kind, int64_t tid) {
    size_t at = (size_t)-1, hits = 0;
    for (size_t i = 0; i < d->n; i++) {
        assert_true(d->names_idx[i] >= 0 && (size_t)d->names_idx[i] < d->nnames);
        if (strcmp(d->names[d->names_idx[i]], name) == 0 && d->kinds[i] == kind &&
            (tid < 0 || d->tids[i] == tid))
            at = i, hits++;
    }
    if (hits != 1) fail_msg("sps_device_read: %zu rows named %s (kind %d, tid %lld)", hits,
                            name, kind, (long long)tid);
    return at;
}

/* Device row i of d and its API row (the one runtime row of the same
 * correlation): launched by api_name (callback id cbid) from the call
 * call_id of region region (NULL: from no span: -1 and -1), on OS thread
 * tid. */
static void pub_launch(const sps_device_t *d, const int64_t *cbids, size_t i,
                       const char *api_name, int64_t cbid, const char *region,
                       int64_t call_id, int64_t tid) {
    size_t a = (size_t)-1, hits = 0;
    for (size_t j = 0; j < d->n; j++)
        if (j != i && d->correlations[j] == d->correlations[i]) a = j, hits++;
    assert_int_equal(hits, 1);
    assert_int_equal(d->kinds[a], SPS_DEVICE_RUNTIME);
    assert_string_equal(d->names[d->names_idx[a]], api_name);
    assert_int_equal(cbids[a], cbid);
    assert_int_equal(cbids[i], 0); /* a device row has none */
    assert_int_equal(d->devices[a], -1);
    assert_int_equal(d->streams[a], -1);
    for (int k = 0; k < 2; k++) {
        size_t r = k ? a : i;
        assert_int_equal(d->tids[r], tid);
        assert_int_equal(d->ranks[r], 0);
        assert_int_equal(d->call_ids[r], call_id);
        if (region) {
            assert_true(d->regions[r] >= 0 && (size_t)d->regions[r] < d->nregion_names);
            assert_string_equal(d->region_names[d->regions[r]], region);
        } else {
            assert_int_equal(d->regions[r], -1);
        }
    }
    assert_true(d->starts_ns[a] < d->starts_ns[i]); /* launched, then ran */
}

/* File a read back through the public reader (sps_device_read,
 * sps_device_cbids), checked against what test_record launched -- each
 * worker: k_step from its dv.step call, k_solve and a 4096-byte copy from
 * its outer dv.solve call, k_inner from the inner one; k_outside from no
 * span -- and, column by column, against what plain HDF5 reads (d). */
static void check_public_read(const char *path, const tu_h5_t *h, const dev_t_ *d,
                              const int64_t *e_step, const int64_t *e_solve,
                              const int64_t *e_inner) {
    sps_device_t x;
    assert_int_equal(sps_device_read(path, &x), 0);
    assert_int_equal(x.present, 1);
    assert_int_equal(x.n, 18);
    assert_string_equal(x.collector, "cupti");
    assert_string_equal(x.clock, "identity");
    assert_int_equal(x.dropped, 0);
    assert_true(x.cupti_version > 0);
    const int64_t *cb = sps_device_cbids(&x);
    assert_non_null(cb);
    size_t nkind[6] = {0};
    for (size_t i = 0; i < x.n; i++) {
        assert_true(x.kinds[i] >= 1 && x.kinds[i] <= 5);
        nkind[x.kinds[i]]++;
        assert_true(x.ends_ns[i] >= x.starts_ns[i]);
        /* the writer's columns are what the reader hands out */
        const int64_t *pub[SPS__DEVC_N] = {
            x.kinds, x.names_idx, x.devices, x.contexts, x.streams, x.correlations,
            x.starts_ns, x.ends_ns, x.bytes, x.ranks, x.threads, x.tids, x.regions,
            x.call_ids, x.grid_x, x.grid_y, x.grid_z, x.block_x, x.block_y, x.block_z,
            x.copy_kinds, x.src_kinds, x.dst_kinds, cb};
        for (int c = 0; c < SPS__DEVC_N; c++)
            if (pub[c][i] != d->c[c][i])
                fail_msg("sps_device_read: %s[%zu] = %lld, the file has %lld",
                         sps__h5_device_cols[c], i, (long long)pub[c][i],
                         (long long)d->c[c][i]);
    }
    assert_int_equal(nkind[SPS_DEVICE_KERNEL], 7);  /* 2 x (step, solve, inner) + outside */
    assert_int_equal(nkind[SPS_DEVICE_MEMCPY], 2);
    assert_int_equal(nkind[SPS_DEVICE_MEMSET], 0);
    assert_int_equal(nkind[SPS_DEVICE_RUNTIME], 9); /* one call per device row */
    assert_int_equal(nkind[SPS_DEVICE_DRIVER], 0);
    assert_int_equal(x.nregion_names, h->nnames);
    for (int w = 0; w < 2; w++) {
        int64_t tid = worker_tid[w];
        size_t ks = pub_row(&x, "k_step", SPS_DEVICE_KERNEL, tid);
        size_t kv = pub_row(&x, "k_solve", SPS_DEVICE_KERNEL, tid);
        size_t mc = pub_row(&x, "Memcpy HtoD (Pinned -> Device)", SPS_DEVICE_MEMCPY, tid);
        size_t ki = pub_row(&x, "k_inner", SPS_DEVICE_KERNEL, tid);
        pub_launch(&x, cb, ks, "cudaLaunchKernel", CBID_LAUNCH, "dv.step",
                   h->call_ids[e_step[w]], tid);
        pub_launch(&x, cb, kv, "cudaLaunchKernel", CBID_LAUNCH, "dv.solve",
                   h->call_ids[e_solve[w]], tid);
        pub_launch(&x, cb, mc, "cudaMemcpyAsync", CBID_MEMCPY, "dv.solve",
                   h->call_ids[e_solve[w]], tid);
        pub_launch(&x, cb, ki, "cudaLaunchKernel", CBID_LAUNCH, "dv.solve",
                   h->call_ids[e_inner[w]], tid);
        assert_int_equal(x.ends_ns[ks] - x.starts_ns[ks], 1000);
        assert_int_equal(x.ends_ns[kv] - x.starts_ns[kv], 2000);
        assert_int_equal(x.ends_ns[ki] - x.starts_ns[ki], 700);
        assert_int_equal(x.bytes[mc], 4096);
        assert_int_equal(x.copy_kinds[mc], 1); /* HTOD */
        assert_int_equal(x.streams[ks], 7);
        assert_int_equal(x.streams[mc], 8);
        assert_int_equal(x.grid_x[ks], 1);
        assert_int_equal(x.block_x[ks], 128);
    }
    pub_launch(&x, cb, pub_row(&x, "k_outside", SPS_DEVICE_KERNEL, -1), "cudaLaunchKernel",
               CBID_LAUNCH, NULL, -1, (int64_t)syscall(SYS_gettid));
    sps_device_free(&x);
    assert_int_equal(x.n, 0);
    assert_null(x.impl_);
    assert_null(sps_device_cbids(&x));
    assert_null(sps_device_cbids(NULL));
}

/* A file with an empty /device, and one without, through the public
 * reader. */
static void check_public_read_empty(const char *path, int present) {
    sps_device_t x;
    assert_int_equal(sps_device_read(path, &x), 0);
    assert_int_equal(x.present, present);
    assert_int_equal(x.n, 0);
    sps_device_free(&x);
}

static void test_record(void **state) {
    (void)state;
    fake_open();
    const char *pa = tu_path("device_a.h5"), *pb = tu_path("device_b.h5"),
               *pc = tu_path("device_c.h5"), *pd = tu_path("device_d.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = pa;
    assert_int_equal(sps_setup(&cfg), 0);
    r_step = sps_region("dv.step");
    r_solve = sps_region("dv.solve");
    sps_region_t r_main = sps_region("dv.main");
    assert_int_equal(sps_device_available(SPS_DEVICE_CUPTI), 0);
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), 0);
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), SPS_EACTIVE);
    assert_non_null(strstr(sps_last_error(), "on already"));
    launch("k_outside", 500); /* no span open anywhere */
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_int_equal(sps_finalize(), 0); /* a checkpoint: file a */

    /* a span open across the next checkpoint: its launch waits for it */
    sps_begin(r_main);
    launch("k_open", 1500);
    assert_int_equal(sps_finalize_to(pb), 0);
    sps_end(r_main);
    copy(64, 100); /* outside, after the span */
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), 0); /* flushed */
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), SPS_EINVAL);
    sps_begin(r_main);
    launch("k_after_stop", 100); /* not collected */
    sps_end(r_main);
    assert_int_equal(sps_finalize_to(pc), 0);
    sps_begin(r_main);
    sps_end(r_main);
    assert_int_equal(sps_finalize_to(pd), 0);
    assert_int_equal(sps_shutdown(), 0);

    /* ---- file a ---- */
    tu_h5_t *h = tu_h5_load(pa);
    assert_non_null(h);
    assert_true(h->ok);
    dev_t_ d;
    dev_load(pa, &d);
    assert_true(d.present);
    assert_string_equal(d.collector, "cupti");
    assert_string_equal(d.clock, "identity");
    assert_true(d.version > 0);
    assert_int_equal(d.dropped, 0);
    assert_int_equal(d.n, 18); /* 2 x (4 launches: API + device row) + the outside one's 2 */
    for (size_t i = 0; i < d.n; i++) {
        assert_int_equal(COL(&d, RANKS)[i], 0);
        assert_true(COL(&d, ENDS)[i] >= COL(&d, STARTS)[i]);
        if (COL(&d, KINDS)[i] == 4) assert_int_equal(COL(&d, DEVICES)[i], -1);
        if (COL(&d, KINDS)[i] == 4) assert_int_equal(COL(&d, STREAMS)[i], -1);
    }
    size_t out = dev_row(&d, "k_outside", 1, -1);
    assert_int_equal(COL(&d, REGIONS)[out], -1);
    assert_int_equal(COL(&d, CALL_IDS)[out], -1);
    assert_int_equal(COL(&d, CALL_IDS)[api_of(&d, out)], -1);
    assert_int_equal(COL(&d, TIDS)[out], (int64_t)syscall(SYS_gettid));
    int64_t e_step[2], e_solve[2], e_inner[2];
    for (int w = 0; w < 2; w++) {
        int64_t tid = worker_tid[w];
        size_t ks = dev_row(&d, "k_step", 1, tid);
        size_t kv = dev_row(&d, "k_solve", 1, tid);
        size_t mc = dev_row(&d, "Memcpy HtoD (Pinned -> Device)", 2, tid);
        size_t ki = dev_row(&d, "k_inner", 1, tid);
        assert_true(COL(&d, THREADS)[ks] >= 0);
        e_step[w] = check_on(h, &d, ks, "dv.step", NULL);
        e_solve[w] = check_on(h, &d, kv, "dv.solve", "dv.step");
        assert_int_equal(check_on(h, &d, mc, "dv.solve", "dv.step"), e_solve[w]);
        e_inner[w] = check_on(h, &d, ki, "dv.solve", "dv.solve"); /* the innermost */
        assert_true(e_inner[w] != e_solve[w]);
        assert_int_equal(COL(&d, ENDS)[ks] - COL(&d, STARTS)[ks], 1000);
        assert_int_equal(COL(&d, BYTES)[mc], 4096);
        assert_int_equal(COL(&d, STREAMS)[mc], 8);
        assert_int_equal(COL(&d, STREAMS)[ks], 7);
        assert_int_equal(COL(&d, GRID_X)[ks], 1);
        assert_int_equal(COL(&d, BLOCK_X)[ks], 128);
        assert_int_equal(COL(&d, COPY_KINDS)[mc], 1); /* HTOD */
        assert_int_equal(COL(&d, BYTES)[ks], 0);
        size_t a = api_of(&d, ks);
        assert_string_equal(d.names[COL(&d, NAMES_IDX)[a]], "cudaLaunchKernel");
    }
    assert_true(COL(&d, TIDS)[dev_row(&d, "k_step", 1, worker_tid[0])] !=
                COL(&d, TIDS)[dev_row(&d, "k_step", 1, worker_tid[1])]);
    /* device time per event and per region */
    assert_non_null(d.gpu);
    assert_int_equal(d.ngpu, h->nev);
    for (size_t e = 0; e < h->nev; e++) {
        int64_t want = -1;
        for (int w = 0; w < 2; w++) {
            if ((int64_t)e == e_step[w]) want = 1000;
            if ((int64_t)e == e_solve[w]) want = 2300;
            if ((int64_t)e == e_inner[w]) want = 700;
        }
        assert_int_equal(d.gpu[e], want);
    }
    assert_int_equal(sum_of(h, "dv.step")->gpu_count, 2);
    assert_int_equal(sum_of(h, "dv.step")->gpu_total, 2000);
    assert_int_equal(sum_of(h, "dv.solve")->gpu_count, 4);
    assert_int_equal(sum_of(h, "dv.solve")->gpu_total, 6000);
    check_public_read(pa, h, &d, e_step, e_solve, e_inner);
    dev_free(&d);
    tu_h5_free(h);

    /* ---- file b: the checkpoint inside dv.main: nothing of a again, the
     * open span's launch not yet ---- */
    dev_load(pb, &d);
    assert_true(d.present);
    assert_int_equal(d.n, 0);
    assert_null(d.gpu);
    dev_free(&d);
    check_public_read_empty(pb, 1);

    /* ---- file c: the open span's launch, on it; the copy after it ---- */
    h = tu_h5_load(pc);
    assert_true(h->ok);
    dev_load(pc, &d);
    assert_true(d.present);
    assert_int_equal(d.n, 4);
    size_t ko = dev_row(&d, "k_open", 1, -1);
    int64_t e = check_on(h, &d, ko, "dv.main", NULL);
    assert_true(h->call_ids[0] > 0); /* call ids run on across the files */
    size_t mc = dev_row(&d, "Memcpy HtoD (Pinned -> Device)", 2, -1);
    assert_int_equal(COL(&d, CALL_IDS)[mc], -1);
    assert_int_equal(COL(&d, REGIONS)[mc], -1);
    assert_non_null(d.gpu);
    for (size_t k = 0; k < h->nev; k++) assert_int_equal(d.gpu[k], (int64_t)k == e ? 1500 : -1);
    assert_int_equal(sum_of(h, "dv.main")->gpu_count, 1);
    assert_int_equal(sum_of(h, "dv.main")->gpu_total, 1500);
    dev_free(&d);
    tu_h5_free(h);

    /* ---- file d: nothing ran since: no /device ---- */
    dev_load(pd, &d);
    assert_false(d.present);
    assert_null(d.gpu);
    dev_free(&d);
    check_public_read_empty(pd, 0);
    fake_close();
}

/* An aggregate session has no spans: /device's rows keep their region,
 * with no call id, and there is no gpu_durations. */
static void test_aggregate(void **state) {
    (void)state;
    fake_open();
    const char *p = tu_path("device_agg.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = p;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("dv.agg");
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), 0);
    sps_begin(r);
    launch("k_agg", 900);
    sps_end(r);
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), 0);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    tu_h5_t *h = tu_h5_load(p);
    assert_non_null(h);
    dev_t_ d;
    dev_load(p, &d);
    assert_true(d.present);
    assert_int_equal(d.n, 2);
    size_t k = dev_row(&d, "k_agg", 1, (int64_t)syscall(SYS_gettid));
    assert_int_equal(COL(&d, REGIONS)[k], file_region(h, "dv.agg"));
    assert_int_equal(COL(&d, CALL_IDS)[k], -1);
    assert_null(d.gpu);
    dev_free(&d);
    tu_h5_free(h);
    fake_close();
}

/* Another CUPTI subscriber (Nsight Systems, torch.profiler): SPS_EACTIVE,
 * saying so; nothing left on, a later start works. */
static void test_other_subscriber(void **state) {
    (void)state;
    fake_open();
    setenv("FAKE_CUPTI_SUBSCRIBERS", "1", 1);
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), SPS_EACTIVE);
    assert_non_null(strstr(sps_last_error(), "subscribe"));
    unsetenv("FAKE_CUPTI_SUBSCRIBERS");
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), SPS_EINVAL);
    assert_int_equal(sps_device_start(SPS_DEVICE_CUPTI), 0);
    assert_int_equal(sps_device_stop(SPS_DEVICE_CUPTI), 0);
    /* what the stop flushed (nothing) waits for a finalize: take it out */
    const char *p = tu_path("device_sub.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = p;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    fake_close();
}
#endif /* SPS_FAKE_CUPTI */

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_errors),
        cmocka_unit_test(test_no_device),
        cmocka_unit_test(test_corr_prune),
        cmocka_unit_test(test_pairs_hook),
#ifdef SPS_FAKE_CUPTI
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_other_subscriber),
        cmocka_unit_test(test_aggregate),
#endif
        /* last: this machine's libcupti stays loaded to the end (unloaded,
         * CUDA 13.0's leaks 72 KiB it allocated at load: LeakSanitizer) */
        cmocka_unit_test(test_machine),
        cmocka_unit_test(test_env_value),
    };
    const char *only = getenv("SPS_TEST_ONLY"); /* one test, by name (a glob) */
    if (only && *only) cmocka_set_test_filter(only);
    const char *skip = getenv("SPS_TEST_SKIP");
    if (skip && *skip) cmocka_set_skip_filter(skip);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
