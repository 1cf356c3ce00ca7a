/* test_cupti.c -- the CUDA activity collector's own logic (src/ext/cupti.c;
 * issue 38 part 5), without a GPU: activity buffers built here from
 * CUPTI's own record structs (cupti_activity.h) and fed to the collector
 * as CUPTI would hand them over, checking the parse (kernels of several
 * struct versions, copies of every kind, sets, runtime and driver API
 * records, a record of a kind not kept, an unknown kind, a truncated
 * buffer), the correlation join and device time per span, the clock map
 * (fitted with a known skew, and identity), the buffer pool's recycling,
 * and the loader's errors (no libcupti; libcupti but no driver).  The
 * run-time half (start, CUPTI's callbacks, stop) runs against a stand-in
 * libcupti (fake_cupti.c): another subscriber, a refused kind, kernels
 * joined to pushed spans on the identity clock and on a fitted one.  Built
 * without CUPTI's headers, it checks that the parser and the loader say
 * so and runs the parts that need no header. */
#include "testutil.h"
#include "ext/cupti.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_CUPTI_HEADERS
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#endif

/* ---- header-independent parts ---------------------------------------------- */

/* A fitted map recovers a known linear skew (20 ppm, an offset of seconds,
 * CUPTI's epoch-based clock against CLOCK_MONOTONIC) from pairs with a
 * few tens of ns of jitter, and extrapolates past them. */
static void test_clock_fit(void **state) {
    (void)state;
    const uint64_t t0 = 1796582197975172063ull, h0 = 5123456789ull;
    const double skew = 1.0 + 20e-6;
    uint64_t ct[16], ht[16];
    uint64_t seed = 7;
    for (int i = 0; i < 16; i++) {
        /* 8 pairs at "start", 8 at "stop" 10 s later, as the collector takes them */
        uint64_t dt = i < 8 ? (uint64_t)i * 1000 : 10000000000ull + (uint64_t)(i - 8) * 1000;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int64_t jitter = (int64_t)((seed >> 33) % 61) - 30;
        ct[i] = t0 + dt;
        ht[i] = (uint64_t)((int64_t)h0 + 777 + (int64_t)llround((double)dt * skew) + jitter);
    }
    sps__clockmap_t m;
    assert_int_equal(sps__clockmap_fit(&m, ct, ht, 16), 0);
    assert_false(m.identity);
    assert_true(fabs(m.slope - skew) < 1e-8);
    for (uint64_t dt = 0; dt <= 20000000000ull; dt += 2500000000ull) {
        uint64_t want = h0 + 777 + (uint64_t)llround((double)dt * skew);
        int64_t err = (int64_t)(sps__clockmap_apply(&m, t0 + dt) - want);
        assert_true(err > -40 && err < 40);
    }
    /* a timestamp before the first pair maps back as well */
    int64_t err = (int64_t)(sps__clockmap_apply(&m, t0 - 1000000) -
                            (h0 + 777 - (uint64_t)llround(1000000 * skew)));
    assert_true(err > -40 && err < 40);
    /* one pair: slope 1 through it */
    assert_int_equal(sps__clockmap_fit(&m, ct, ht, 1), 0);
    assert_true(m.slope == 1.0);
    assert_int_equal(sps__clockmap_apply(&m, ct[0] + 500), ht[0] + 500);
    /* no pairs, or CUPTI's clock standing still: refused */
    assert_int_equal(sps__clockmap_fit(&m, ct, ht, 0), SPS_EINVAL);
    uint64_t same[3] = {5, 5, 5};
    assert_int_equal(sps__clockmap_fit(&m, same, ht, 3), SPS_EINVAL);
    assert_non_null(strstr(sps__err_msg(), "all equal"));
    /* identity: the timestamp callback returned our clock */
    sps__clockmap_identity(&m);
    assert_int_equal(sps__clockmap_apply(&m, 123456789), 123456789);
    uint64_t a = sps__cupti_host_ns(), b = sps__cupti_host_ns();
    assert_true(b >= a && a > 0);
}

/* Names are interned once, whatever their number. */
static void test_intern(void **state) {
    (void)state;
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 130001, 0), 0);
    assert_int_equal(c.pool.buf_size, 4u << 20);
    uint32_t first[3000];
    char s[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(s, sizeof s, "kernel_%d", i);
        assert_int_equal(sps__cupti_intern(&c, s, &first[i]), 0);
        assert_int_equal(first[i], (uint32_t)i);
    }
    for (int i = 2999; i >= 0; i -= 7) {
        uint32_t k;
        snprintf(s, sizeof s, "kernel_%d", i);
        assert_int_equal(sps__cupti_intern(&c, s, &k), 0);
        assert_int_equal(k, first[i]);
        assert_string_equal(sps__cupti_name(&c, k), s);
    }
    assert_int_equal(c.n_names, 3000);
    assert_string_equal(sps__cupti_name(&c, 3000), "");
    sps__cupti_free(&c);
}

#ifdef SPS_HAVE_CUPTI_HEADERS

/* ---- a buffer as CUPTI lays it out ------------------------------------------ */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} bb_t;

/* Appends one record of sz bytes, padded to 8 as CUPTI aligns them. */
static void bb_add(bb_t *b, const void *rec, size_t sz) {
    size_t need = b->n + ((sz + 7) & ~(size_t)7);
    if (need > b->cap) {
        b->cap = need * 2 + 256;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memset(b->p + b->n, 0, (sz + 7) & ~(size_t)7);
    memcpy(b->p + b->n, rec, sz);
    b->n = need;
}

#define KERNEL(T, var, nm, corr, t0, t1, strm)                                 \
    T var;                                                                     \
    memset(&var, 0, sizeof var);                                               \
    var.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;                          \
    var.name = (nm);                                                           \
    var.correlationId = (corr);                                                \
    var.start = (t0);                                                          \
    var.end = (t1);                                                            \
    var.deviceId = 1;                                                          \
    var.contextId = 2;                                                         \
    var.streamId = (strm);                                                     \
    var.gridX = 64;                                                            \
    var.gridY = 2;                                                             \
    var.gridZ = 1;                                                             \
    var.blockX = 256;                                                          \
    var.blockY = 1;                                                            \
    var.blockZ = 1

static void add_ext(bb_t *b, uint32_t kind, uint32_t corr, uint64_t ext) {
    CUpti_ActivityExternalCorrelation e;
    memset(&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = (CUpti_ExternalCorrelationKind)kind;
    e.correlationId = corr;
    e.externalId = ext;
    bb_add(b, &e, sizeof e);
}

static void add_api(bb_t *b, int runtime, uint32_t cbid, uint32_t corr, uint64_t t0,
                    uint64_t t1) {
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = (CUpti_CallbackId)cbid;
    a.correlationId = corr;
    a.start = t0;
    a.end = t1;
    a.processId = 11;
    a.threadId = 4242;
    bb_add(b, &a, sizeof a);
}

/* Parses b as one completed buffer of c (built-in walker). */
static int feed(sps__cupti_t *c, bb_t *b, size_t valid) {
    uint8_t *buf;
    size_t size;
    assert_int_equal(sps__cupti_buffer_request(c, &buf, &size), 0);
    assert_true(size >= valid);
    assert_int_equal((uintptr_t)buf % 8, 0);
    memcpy(buf, b->p, valid);
    return sps__cupti_buffer_complete(c, buf, valid, NULL, NULL);
}

/* Kernels in the struct versions of CUDA 13 (Kernel10), 12.x (Kernel9)
 * and 11.6 (Kernel7): each read with its version's size, names interned
 * once, grid, block, stream and correlation kept. */
static void check_kernels(uint32_t ver, const void *k1, const void *k2, const void *k3,
                          size_t sz) {
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, ver, 1 << 16), 0);
    assert_int_equal(sps__cupti_record_size(ver, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), sz);
    bb_t b = {0};
    bb_add(&b, k1, sz);
    bb_add(&b, k2, sz);
    bb_add(&b, k3, sz);
    assert_int_equal(feed(&c, &b, b.n), 3);
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(&c, &n);
    assert_int_equal(n, 3);
    assert_int_equal(a[0].kind, SPS__DEV_KERNEL);
    assert_string_equal(sps__cupti_name(&c, a[0].name), "_Z6saxpyifPfS_");
    assert_string_equal(sps__cupti_name(&c, a[1].name), "gemm_kernel");
    assert_int_equal(a[2].name, a[0].name); /* the same kernel: one name */
    assert_int_equal(c.n_names, 2);
    assert_int_equal(a[0].start, 1000);
    assert_int_equal(a[0].end, 3000);
    assert_int_equal(a[1].stream, 7);
    assert_int_equal(a[0].stream, 13);
    assert_int_equal(a[1].correlation, 2);
    assert_int_equal(a[0].device, 1);
    assert_int_equal(a[0].context, 2);
    assert_int_equal(a[0].grid[0], 64);
    assert_int_equal(a[0].grid[1], 2);
    assert_int_equal(a[0].block[0], 256);
    assert_int_equal(a[0].bytes, 0);
    assert_int_equal(c.records, 3);
    assert_int_equal(c.truncated, 0);
    free(b.p);
    sps__cupti_free(&c);
}

static void test_kernel_versions(void **state) {
    (void)state;
    {
        KERNEL(CUpti_ActivityKernel10, k1, "_Z6saxpyifPfS_", 1, 1000, 3000, 13);
        KERNEL(CUpti_ActivityKernel10, k2, "gemm_kernel", 2, 3500, 9000, 7);
        KERNEL(CUpti_ActivityKernel10, k3, "_Z6saxpyifPfS_", 3, 9100, 9900, 13);
        k1.isDeviceLaunched = 0;
        check_kernels(130001, &k1, &k2, &k3, sizeof k1);
    }
    {
        KERNEL(CUpti_ActivityKernel9, k1, "_Z6saxpyifPfS_", 1, 1000, 3000, 13);
        KERNEL(CUpti_ActivityKernel9, k2, "gemm_kernel", 2, 3500, 9000, 7);
        KERNEL(CUpti_ActivityKernel9, k3, "_Z6saxpyifPfS_", 3, 9100, 9900, 13);
        check_kernels(24, &k1, &k2, &k3, sizeof k1);
    }
    {
        KERNEL(CUpti_ActivityKernel7, k1, "_Z6saxpyifPfS_", 1, 1000, 3000, 13);
        KERNEL(CUpti_ActivityKernel7, k2, "gemm_kernel", 2, 3500, 9000, 7);
        KERNEL(CUpti_ActivityKernel7, k3, "_Z6saxpyifPfS_", 3, 9100, 9900, 13);
        check_kernels(17, &k1, &k2, &k3, sizeof k1);
    }
    /* CUDA 10 and older: no layout known */
    assert_int_equal(sps__cupti_record_size(12, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
}

/* Copies of every kind, named as kineto names them, and sets, in the
 * layouts of CUDA 13 (Memcpy6, Memset4) and 11.1 (Memcpy4, Memset3). */
#define COPY(T, b, ck, sk, dk, corr)                                           \
    do {                                                                       \
        T m_;                                                                  \
        memset(&m_, 0, sizeof m_);                                             \
        m_.kind = CUPTI_ACTIVITY_KIND_MEMCPY;                                  \
        m_.copyKind = (uint8_t)(ck);                                           \
        m_.srcKind = (uint8_t)(sk);                                            \
        m_.dstKind = (uint8_t)(dk);                                            \
        m_.bytes = 1000u * (corr);                                             \
        m_.start = 100u * (corr);                                              \
        m_.end = 100u * (corr) + 40;                                           \
        m_.streamId = 3;                                                       \
        m_.deviceId = 0;                                                       \
        m_.correlationId = (corr);                                             \
        bb_add(b, &m_, sizeof m_);                                             \
    } while (0)
#define SET(T, b, mk, corr)                                                    \
    do {                                                                       \
        T s_;                                                                  \
        memset(&s_, 0, sizeof s_);                                             \
        s_.kind = CUPTI_ACTIVITY_KIND_MEMSET;                                  \
        s_.value = 0;                                                          \
        s_.bytes = 4096;                                                       \
        s_.start = 5000;                                                       \
        s_.end = 5070;                                                         \
        s_.streamId = 9;                                                       \
        s_.correlationId = (corr);                                             \
        s_.memoryKind = (mk);                                                  \
        bb_add(b, &s_, sizeof s_);                                             \
    } while (0)

static const char *const copy_names[] = {
    "Memcpy <unknown> (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)",
    "Memcpy DtoH (Device -> Pinned)",      "Memcpy HtoA (Pageable -> Array)",
    "Memcpy AtoH (Array -> Pageable)",     "Memcpy AtoA (Array -> Array)",
    "Memcpy AtoD (Array -> Device)",       "Memcpy DtoA (Device -> Array)",
    "Memcpy DtoD (Device -> Device)",      "Memcpy HtoH (Pinned -> Pageable)",
    "Memcpy PtoP (Device -> Device)"};

#define ALL_COPIES(T, b)                                                                 \
    do {                                                                                 \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, 1, 3, 1);                         \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1, 3, 2);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 3, 2, 3);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, 1, 4, 4);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, 4, 1, 5);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, 4, 4, 6);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, 4, 3, 7);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, 3, 4, 8);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 3, 3, 9);                            \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, 2, 1, 10);                           \
        COPY(T, b, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 3, 3, 11);                           \
    } while (0)

static void check_copies(sps__cupti_t *c, bb_t *b) {
    assert_int_equal(feed(c, b, b->n), 14);
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(c, &n);
    assert_int_equal(n, 14);
    for (int i = 0; i < 11; i++) {
        assert_int_equal(a[i].kind, SPS__DEV_MEMCPY);
        assert_string_equal(sps__cupti_name(c, a[i].name), copy_names[i]);
        assert_int_equal(a[i].bytes, 1000u * (unsigned)(i + 1));
        assert_int_equal(a[i].copy_kind, i);
        assert_int_equal(a[i].stream, 3);
        assert_int_equal(a[i].end - a[i].start, 40);
    }
    assert_int_equal(a[11].kind, SPS__DEV_MEMSET);
    assert_string_equal(sps__cupti_name(c, a[11].name), "Memset (Device)");
    assert_string_equal(sps__cupti_name(c, a[12].name), "Memset (Managed)");
    assert_string_equal(sps__cupti_name(c, a[13].name), "Memset (Unrecognized)");
    assert_int_equal(a[11].bytes, 4096);
    assert_int_equal(a[11].stream, 9);
    assert_int_equal(a[11].correlation, 21);
}

static void test_copies_and_sets(void **state) {
    (void)state;
    sps__cupti_t c;
    bb_t b = {0};
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 16), 0);
    ALL_COPIES(CUpti_ActivityMemcpy6, &b);
    SET(CUpti_ActivityMemset4, &b, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 21);
    SET(CUpti_ActivityMemset4, &b, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 22);
    SET(CUpti_ActivityMemset4, &b, 77, 23);
    check_copies(&c, &b);
    sps__cupti_free(&c);
    b.n = 0;
    assert_int_equal(sps__cupti_init(&c, 14, 1 << 16), 0); /* CUDA 11.1 */
    ALL_COPIES(CUpti_ActivityMemcpy4, &b);
    SET(CUpti_ActivityMemset3, &b, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 21);
    SET(CUpti_ActivityMemset3, &b, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 22);
    SET(CUpti_ActivityMemset3, &b, 77, 23);
    check_copies(&c, &b);
    sps__cupti_free(&c);
    free(b.p);
}

/* Runtime and driver API records: host side, named by their callback id. */
static void test_api_records(void **state) {
    (void)state;
    sps__cupti_t c;
    bb_t b = {0};
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 16), 0);
    add_api(&b, 1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5, 100, 180);
    add_api(&b, 1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 6, 200, 230);
    add_api(&b, 0, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 7, 300, 310);
    add_api(&b, 1, 3999, 8, 400, 410);
    add_api(&b, 1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 9, 500, 580);
    assert_int_equal(feed(&c, &b, b.n), 5);
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(&c, &n);
    assert_int_equal(a[0].kind, SPS__DEV_RUNTIME);
    assert_string_equal(sps__cupti_name(&c, a[0].name), "cudaLaunchKernel");
    assert_string_equal(sps__cupti_name(&c, a[1].name), "cudaMemcpyAsync");
    assert_int_equal(a[2].kind, SPS__DEV_DRIVER);
    assert_string_equal(sps__cupti_name(&c, a[2].name), "cuLaunchKernel");
    assert_string_equal(sps__cupti_name(&c, a[3].name), "cuda runtime API 3999");
    assert_int_equal(a[4].name, a[0].name);
    assert_int_equal(a[0].tid, 4242);
    assert_int_equal(a[0].cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    assert_int_equal(a[0].stream, UINT32_MAX);
    assert_int_equal(a[0].correlation, 5);
    free(b.p);
    sps__cupti_free(&c);
}

/* The join: external correlation records (also in a later buffer than
 * the activities they name) give each activity its launching span; device
 * time per span sums its kernels, copies and sets, not its API calls;
 * another external kind is ignored. */
static void test_join(void **state) {
    (void)state;
    sps__cupti_t c;
    bb_t b = {0};
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 16), 0);
    add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1, 100);
    add_api(&b, 1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 10, 20);
    KERNEL(CUpti_ActivityKernel10, k1, "k_a", 1, 1000, 2000, 7);
    bb_add(&b, &k1, sizeof k1);
    COPY(CUpti_ActivityMemcpy6, &b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1, 3, 2); /* 40 ns */
    SET(CUpti_ActivityMemset4, &b, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 3);     /* 70 ns */
    KERNEL(CUpti_ActivityKernel10, k4, "k_b", 4, 3000, 3500, 7);             /* no span */
    bb_add(&b, &k4, sizeof k4);
    KERNEL(CUpti_ActivityKernel10, k5, "k_b", 5, 4000, 4300, 8);
    bb_add(&b, &k5, sizeof k5);
    add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 5, 999); /* not ours */
    assert_int_equal(feed(&c, &b, b.n), 6);
    b.n = 0; /* the rest arrives in a second buffer */
    add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 2, 100);
    add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 3, 200);
    assert_int_equal(feed(&c, &b, b.n), 0);
    assert_int_equal(c.ext_other, 1);
    assert_int_equal(sps__cupti_join(&c), 0);
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(&c, &n);
    assert_int_equal(n, 6);
    assert_int_equal(a[0].span, 100); /* the runtime call */
    assert_int_equal(a[1].span, 100); /* its kernel */
    assert_int_equal(a[2].span, 100);
    assert_int_equal(a[3].span, 200);
    assert_int_equal(a[4].span, 0);
    assert_int_equal(a[5].span, 0);
    uint32_t cnt;
    assert_int_equal(sps__cupti_span_device_ns(&c, 100, &cnt), 1000 + 40);
    assert_int_equal(cnt, 2);
    assert_int_equal(sps__cupti_span_device_ns(&c, 200, &cnt), 70);
    assert_int_equal(cnt, 1);
    assert_int_equal(sps__cupti_span_device_ns(&c, 999, &cnt), 0);
    assert_int_equal(cnt, 0);
    assert_int_equal(sps__cupti_span_device_ns(&c, 0, NULL), 0);
    const sps__dev_span_t *s = sps__cupti_spans(&c, &n);
    assert_int_equal(n, 2);
    assert_int_equal(s[0].span, 100);
    assert_int_equal(s[1].span, 200);
    assert_int_equal(sps__cupti_corr_span(&c, 3), 200);
    assert_int_equal(sps__cupti_corr_span(&c, 4), 0);
    /* joined again after more correlations: redone, not doubled */
    assert_int_equal(sps__cupti_corr_put(&c, 4, 200), 0);
    assert_int_equal(sps__cupti_join(&c), 0);
    assert_int_equal(sps__cupti_span_device_ns(&c, 200, &cnt), 70 + 500);
    assert_int_equal(cnt, 2);
    assert_int_equal(sps__cupti_span_device_ns(&c, 100, NULL), 1040);
    free(b.p);
    sps__cupti_free(&c);
}

/* Many correlations: the map grows and keeps every one. */
static void test_join_many(void **state) {
    (void)state;
    sps__cupti_t c;
    bb_t b = {0};
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 20), 0);
    for (uint32_t i = 1; i <= 3000; i++) {
        add_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, i, 1 + i % 10);
        KERNEL(CUpti_ActivityKernel10, k, "k", i, 10ull * i, 10ull * i + i % 10 + 1, 1);
        bb_add(&b, &k, sizeof k);
    }
    assert_int_equal(feed(&c, &b, b.n), 3000);
    assert_int_equal(sps__cupti_join(&c), 0);
    size_t n;
    const sps__dev_span_t *s = sps__cupti_spans(&c, &n);
    assert_int_equal(n, 10);
    for (size_t j = 0; j < n; j++) {
        /* span 1 + r gets the 300 kernels with i % 10 == r, each r + 1 ns */
        assert_int_equal(s[j].span, j + 1);
        assert_int_equal(s[j].count, 300);
        assert_int_equal(s[j].device_ns, 300 * (j + 1));
    }
    free(b.p);
    sps__cupti_free(&c);
}

/* A record of a kind not kept is skipped; an unknown kind and a truncated
 * record end the buffer's reading, the records before them kept. */
static void test_skip_and_truncated(void **state) {
    (void)state;
    sps__cupti_t c;
    bb_t b = {0};
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 16), 0);
    KERNEL(CUpti_ActivityKernel10, k1, "k1", 1, 0, 10, 1);
    bb_add(&b, &k1, sizeof k1);
    CUpti_ActivityName nm;
    memset(&nm, 0, sizeof nm);
    nm.kind = CUPTI_ACTIVITY_KIND_NAME;
    nm.name = "a thread";
    bb_add(&b, &nm, sizeof nm);
    KERNEL(CUpti_ActivityKernel10, k2, "k2", 2, 10, 20, 1);
    bb_add(&b, &k2, sizeof k2);
    size_t whole = b.n;
    assert_int_equal(feed(&c, &b, whole), 2);
    assert_int_equal(c.skipped, 1);
    assert_int_equal(c.records, 3);
    assert_int_equal(c.truncated, 0);
    /* the same buffer cut inside its last kernel: the first kept */
    assert_int_equal(feed(&c, &b, whole - 100), 1);
    assert_int_equal(c.truncated, 1);
    /* cut inside the first record's kind */
    assert_int_equal(feed(&c, &b, 2), 0);
    assert_int_equal(c.truncated, 2);
    /* an unknown kind after a kernel */
    b.n = 0;
    bb_add(&b, &k1, sizeof k1);
    uint32_t junk[8] = {0x7fff, 1, 2, 3, 4, 5, 6, 7};
    bb_add(&b, junk, sizeof junk);
    bb_add(&b, &k2, sizeof k2);
    assert_int_equal(feed(&c, &b, b.n), 1);
    assert_int_equal(c.truncated, 3);
    /* an empty buffer */
    assert_int_equal(feed(&c, &b, 0), 0);
    size_t n;
    sps__cupti_acts(&c, &n);
    assert_int_equal(n, 4);
    assert_false(c.oom);
    free(b.p);
    sps__cupti_free(&c);
}

/* Buffers come back to the pool: thousands of buffers, three in flight at
 * a time, make three buffers in all and never grow the free list. */
static void test_recycling(void **state) {
    (void)state;
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 130001, 4096 + 3), 0);
    assert_int_equal(c.pool.buf_size, 4096 + 8);
    bb_t b = {0};
    KERNEL(CUpti_ActivityKernel10, k, "k", 1, 0, 10, 1);
    bb_add(&b, &k, sizeof k);
    COPY(CUpti_ActivityMemcpy6, &b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 3, 2, 2);
    size_t cap_after_first = 0;
    for (int round = 0; round < 2000; round++) {
        uint8_t *buf[3];
        size_t sz[3];
        for (int i = 0; i < 3; i++) {
            assert_int_equal(sps__cupti_buffer_request(&c, &buf[i], &sz[i]), 0);
            assert_int_equal(sz[i], 4096 + 8);
            memcpy(buf[i], b.p, b.n);
        }
        assert_int_equal(c.pool.handed, 3);
        for (int i = 2; i >= 0; i--)
            assert_int_equal(sps__cupti_buffer_complete(&c, buf[i], b.n, NULL, NULL), 2);
        if (round == 0) cap_after_first = c.pool.cap_free;
        assert_int_equal(c.pool.allocated, 3);
        assert_int_equal(c.pool.cap_free, cap_after_first);
        assert_int_equal(c.pool.handed, 0);
        assert_int_equal(c.pool.n_free, 3);
    }
    size_t n;
    sps__cupti_acts(&c, &n);
    assert_int_equal(n, 2000 * 3 * 2);
    assert_int_equal(c.n_names, 2);
    /* a NULL buffer (CUPTI had none) is nothing */
    assert_int_equal(sps__cupti_buffer_complete(&c, NULL, 0, NULL, NULL), 0);
    free(b.p);
    sps__cupti_free(&c);
}

/* A walker of the libcupti kind (cuptiActivityGetNextRecord's contract)
 * drives the parse as well: here one that hands over a list of records. */
typedef struct {
    const void *recs[4];
    int n, i;
} list_walk_t;

static int list_next(void *ctx, uint8_t *buf, size_t valid, const void **rec) {
    (void)buf;
    (void)valid;
    list_walk_t *w = ctx;
    if (w->i >= w->n) return 1;
    *rec = w->recs[w->i++];
    return 0;
}

static void test_custom_walker(void **state) {
    (void)state;
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 130001, 1 << 12), 0);
    KERNEL(CUpti_ActivityKernel10, k1, "kw", 1, 0, 10, 1);
    CUpti_ActivityExternalCorrelation e;
    memset(&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.correlationId = 1;
    e.externalId = 55;
    list_walk_t w = {{&k1, &e}, 2, 0};
    uint8_t dummy[8] = {0};
    assert_int_equal(sps__cupti_parse(&c, dummy, sizeof dummy, list_next, &w), 1);
    assert_int_equal(sps__cupti_join(&c), 0);
    assert_int_equal(sps__cupti_span_device_ns(&c, 55, NULL), 10);
    sps__cupti_free(&c);
}

/* ---- the loader --------------------------------------------------------------- */

/* SPANSCOPE_CUPTI_LIB naming no file, a file that is no library, and a
 * library without CUPTI's functions: each a clear SPS_ENOTSUP.  Runs first:
 * a successful load is kept for the process. */
static void test_loader_errors(void **state) {
    (void)state;
    setenv("SPANSCOPE_CUPTI_LIB", "/nonexistent/dir/libcupti.so.13", 1);
    assert_int_equal(sps__cupti_load(), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "SPANSCOPE_CUPTI_LIB=/nonexistent/dir/libcupti.so.13"));
    assert_string_equal(sps__cupti_lib_path(), "");
    const char *txt = tu_path("not_a_library.so");
    FILE *f = fopen(txt, "w");
    assert_non_null(f);
    fputs("hello\n", f);
    fclose(f);
    setenv("SPANSCOPE_CUPTI_LIB", txt, 1);
    assert_int_equal(sps__cupti_load(), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "cannot load"));
    setenv("SPANSCOPE_CUPTI_LIB", "libm.so.6", 1);
    assert_int_equal(sps__cupti_load(), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "lacks cuptiGetVersion"));
    unsetenv("SPANSCOPE_CUPTI_LIB");
    /* starting goes through the loader and says the same */
    setenv("SPANSCOPE_CUPTI_LIB", "/nonexistent/libcupti.so", 1);
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 0, 0), 0);
    assert_int_equal(sps__cupti_start(&c), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "/nonexistent/libcupti.so"));
    assert_int_equal(sps__cupti_stop(&c), SPS_EINVAL);
    sps__cupti_free(&c);
    unsetenv("SPANSCOPE_CUPTI_LIB");
    sps__cupti_push(1); /* no collector: no-ops */
    sps__cupti_pop();
}

/* The library as this machine has it: not installed (a clear "not
 * found"), installed without a driver (CUPTI answers CUPTI_ERROR_UNKNOWN
 * to everything there: we say "no NVIDIA driver" first), or a GPU (then
 * a start and a stop with nothing launched). */
static void test_loader_machine(void **state) {
    (void)state;
    int rc = sps__cupti_load();
    if (rc != 0) {
        assert_int_equal(rc, SPS_ENOTSUP);
        assert_non_null(strstr(sps__err_msg(), "libcupti not found"));
        printf("# libcupti not installed here: %s\n", sps__err_msg());
        return;
    }
    printf("# libcupti: %s\n", sps__cupti_lib_path());
    assert_true(strstr(sps__cupti_lib_path(), "libcupti") != NULL);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 0, 0), 0);
    rc = sps__cupti_start(&c);
    if (!cuda) {
        assert_int_equal(rc, SPS_ENOTSUP);
        assert_non_null(strstr(sps__err_msg(), "no NVIDIA driver"));
        printf("# no driver: %s\n", sps__err_msg());
    } else {
        printf("# driver present: start -> %d (%s)\n", rc, rc ? sps__err_msg() : "ok");
        if (rc == 0) {
            assert_true(c.api_version >= 13);
            sps__cupti_push(77);
            sps__cupti_pop();
            assert_int_equal(sps__cupti_stop(&c), 0);
        } else {
            assert_true(rc == SPS_ENOTSUP || rc == SPS_EACTIVE);
            assert_true(strlen(sps__err_msg()) > 10);
        }
        dlclose(cuda);
    }
    sps__cupti_free(&c);
}

#ifdef SPS_FAKE_CUPTI
/* ---- the run-time half, against a stand-in libcupti (fake_cupti.c) ------------- */

typedef int (*launch_fn)(const char *name, uint64_t dur_ns);

static launch_fn fake_open(void **h) {
    assert_int_equal(sps__cupti_unload(), 0);
    setenv("SPANSCOPE_CUPTI_LIB", SPS_FAKE_CUPTI, 1);
    setenv("SPANSCOPE_CUDA_LIB", SPS_FAKE_CUPTI, 1); /* "the driver is there" */
    *h = dlopen(SPS_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(*h);
    launch_fn f;
    void *p = dlsym(*h, "fake_cupti_launch");
    assert_non_null(p);
    memcpy(&f, &p, sizeof p);
    return f;
}

static void fake_close(void *h) {
    assert_int_equal(sps__cupti_unload(), 0);
    unsetenv("SPANSCOPE_CUPTI_LIB");
    unsetenv("SPANSCOPE_CUDA_LIB");
    unsetenv("FAKE_CUPTI_NO_TS_CB");
    unsetenv("FAKE_CUPTI_DROPPED");
    dlclose(h);
}

/* Another subscriber, and a kind CUPTI refuses: clear errors, nothing left on. */
static void test_fake_refusals(void **state) {
    (void)state;
    void *h;
    fake_open(&h);
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 0, 0), 0);
    setenv("FAKE_CUPTI_SUBSCRIBERS", "1", 1);
    assert_int_equal(sps__cupti_start(&c), SPS_EACTIVE);
    assert_non_null(strstr(sps__err_msg(), "another profiler"));
    assert_non_null(strstr(sps__err_msg(), "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"));
    unsetenv("FAKE_CUPTI_SUBSCRIBERS");
    setenv("FAKE_CUPTI_ENABLE_FAIL", "1", 1);
    assert_int_equal(sps__cupti_start(&c), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "cuptiActivityEnable"));
    assert_non_null(strstr(sps__err_msg(), "CUPTI_ERROR_UNKNOWN"));
    unsetenv("FAKE_CUPTI_ENABLE_FAIL");
    /* nothing was left on: a start now works, and stops */
    assert_int_equal(sps__cupti_start(&c), 0);
    assert_int_equal(sps__cupti_stop(&c), 0);
    assert_string_equal(sps__cupti_lib_path(), SPS_FAKE_CUPTI);
    sps__cupti_free(&c);
    fake_close(h);
}

/* Identity clock (the timestamp callback): kernels launched inside pushed
 * spans come back through CUPTI's callbacks, in several small buffers
 * recycled, joined to their spans, on the host's timeline. */
static void test_fake_identity(void **state) {
    (void)state;
    void *h;
    launch_fn launch = fake_open(&h);
    setenv("FAKE_CUPTI_DROPPED", "3", 1);
    sps__cupti_t c, other;
    assert_int_equal(sps__cupti_init(&c, 0, 1024), 0); /* a few records a buffer */
    assert_int_equal(sps__cupti_init(&other, 0, 0), 0);
    assert_int_equal(sps__cupti_start(&c), 0);
    assert_int_equal(c.api_version, 130001);
    assert_true(c.clock.identity);
    assert_int_equal(sps__cupti_start(&other), SPS_EACTIVE); /* one at a time */
    assert_int_equal(sps__cupti_unload(), SPS_EACTIVE);
    launch("outside", 100); /* no span pushed */
    uint64_t h0 = sps__cupti_host_ns();
    sps__cupti_push(100);
    launch("k_a", 5000);
    sps__cupti_pop();
    uint64_t h1 = sps__cupti_host_ns();
    sps__cupti_push(200);
    for (int i = 0; i < 20; i++) launch("k_b", 100);
    sps__cupti_pop();
    assert_int_equal(sps__cupti_stop(&c), 0);
    assert_int_equal(sps__cupti_stop(&c), SPS_EINVAL); /* not started any more */
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(&c, &n);
    assert_int_equal(n, 2 * 22); /* a runtime call and a kernel per launch */
    assert_int_equal(a[0].kind, SPS__DEV_RUNTIME);
    assert_string_equal(sps__cupti_name(&c, a[0].name), "cudaLaunchKernel");
    assert_int_equal(a[1].kind, SPS__DEV_KERNEL);
    assert_string_equal(sps__cupti_name(&c, a[1].name), "outside");
    assert_int_equal(a[1].span, 0);
    assert_string_equal(sps__cupti_name(&c, a[3].name), "k_a");
    assert_int_equal(a[2].span, 100);
    assert_int_equal(a[3].span, 100);
    assert_int_equal(a[3].stream, 7);
    /* identity: the kernel's times are the host's, inside the push..pop */
    assert_true(a[3].start >= h0 && a[3].start <= h1 + 200);
    assert_int_equal(sps__clockmap_apply(&c.clock, a[3].start), a[3].start);
    uint32_t cnt;
    assert_int_equal(sps__cupti_span_device_ns(&c, 100, &cnt), 5000);
    assert_int_equal(cnt, 1);
    assert_int_equal(sps__cupti_span_device_ns(&c, 200, &cnt), 2000);
    assert_int_equal(cnt, 20);
    assert_int_equal(c.dropped, 3);
    /* 1 KiB buffers: the flush took several, one after another, each back
     * in the pool before the next was asked for: one buffer in all */
    assert_int_equal(c.pool.allocated, 1);
    assert_int_equal(c.pool.handed, 0);
    assert_int_equal(c.pool.n_free, c.pool.allocated);
    assert_int_equal(c.truncated, 0);
    sps__cupti_free(&c);
    sps__cupti_free(&other);
    fake_close(h);
}

/* No timestamp callback (CUDA before 11.6): CUPTI's own clock, 50 ppm
 * fast from an epoch-sized origin, mapped back by the fitted line. */
static void test_fake_fitted(void **state) {
    (void)state;
    void *h;
    launch_fn launch = fake_open(&h);
    setenv("FAKE_CUPTI_NO_TS_CB", "1", 1);
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 0, 0), 0);
    assert_int_equal(sps__cupti_start(&c), 0);
    assert_false(c.clock.identity);
    uint64_t h0 = sps__cupti_host_ns();
    sps__cupti_push(300);
    launch("k_fit", 1000000);
    sps__cupti_pop();
    uint64_t h1 = sps__cupti_host_ns();
    tu_spin_ns(100000000); /* 100 ms between the start's pairs and the stop's */
    assert_int_equal(sps__cupti_stop(&c), 0);
    size_t n;
    const sps__dev_act_t *a = sps__cupti_acts(&c, &n);
    assert_int_equal(n, 2);
    assert_true(a[1].start > 1700000000000000000ull); /* CUPTI's clock */
    assert_true(fabs(c.clock.slope - 1.0 / (1.0 + 1.0 / 20000)) < 1e-5);
    uint64_t s = sps__clockmap_apply(&c.clock, a[1].start);
    uint64_t e = sps__clockmap_apply(&c.clock, a[1].end);
    assert_true(s + 2000 >= h0 && s <= h1 + 2000);
    int64_t dur = (int64_t)(e - s);
    assert_true(dur > 1000000 - 20 && dur < 1000000 + 20); /* the skew taken out */
    assert_int_equal(a[1].span, 300);
    sps__cupti_free(&c);
    fake_close(h);
}
#endif /* SPS_FAKE_CUPTI */

#else /* !SPS_HAVE_CUPTI_HEADERS */

/* Built without CUPTI's headers: the parser and the loader say so. */
static void test_no_headers(void **state) {
    (void)state;
    sps__cupti_t c;
    assert_int_equal(sps__cupti_init(&c, 130001, 4096), 0);
    uint8_t *buf;
    size_t size;
    assert_int_equal(sps__cupti_buffer_request(&c, &buf, &size), 0);
    assert_int_equal(sps__cupti_buffer_complete(&c, buf, 16, NULL, NULL), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "built without CUPTI headers"));
    assert_int_equal(c.pool.n_free, 1); /* the buffer came back all the same */
    assert_int_equal(sps__cupti_load(), SPS_ENOTSUP);
    assert_int_equal(sps__cupti_start(&c), SPS_ENOTSUP);
    assert_non_null(strstr(sps__err_msg(), "built without CUPTI headers"));
    sps__cupti_free(&c);
}

#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#ifdef SPS_HAVE_CUPTI_HEADERS
        cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_kernel_versions),
        cmocka_unit_test(test_copies_and_sets),
        cmocka_unit_test(test_api_records),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_join_many),
        cmocka_unit_test(test_skip_and_truncated),
        cmocka_unit_test(test_recycling),
        cmocka_unit_test(test_custom_walker),
#ifdef SPS_FAKE_CUPTI
        cmocka_unit_test(test_fake_refusals),
        cmocka_unit_test(test_fake_identity),
        cmocka_unit_test(test_fake_fitted),
#endif
        cmocka_unit_test(test_loader_machine),
#else
        cmocka_unit_test(test_no_headers),
#endif
        cmocka_unit_test(test_clock_fit),
        cmocka_unit_test(test_intern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
