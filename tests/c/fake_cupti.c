/* fake_cupti.c -- a stand-in for libcupti (and for libcuda.so.1's
 * presence) that test_cupti loads through SPANSCOPE_CUPTI_LIB and
 * SPANSCOPE_CUDA_LIB, so that the collector's run-time half (src/ext/
 * cupti.c: start, the buffer callbacks, cuptiActivityGetNextRecord, the
 * timestamp callback or the fitted clock, external correlation, the
 * dropped count, the flush at stop) runs without a GPU.
 *
 * It implements the CUPTI functions the collector calls, with CUPTI's own
 * prototypes (cupti_activity.h), and one of its own:
 * fake_cupti_launch(name, dur_ns) plays a cudaLaunchKernel: a runtime API
 * record, an external correlation record when the thread has an id pushed,
 * and a CUpti_ActivityKernel10 record, each kept until a flush hands them
 * to the collector in buffers it asked for; fake_cupti_memcpy(bytes,
 * dur_ns) a cudaMemcpyAsync host -> device the same way (Memcpy6).  The
 * API records name the thread as CUPTI does, by (uint32_t)pthread_self().  Timestamps come from the
 * registered timestamp callback, else from a clock of its own: CLOCK_
 * MONOTONIC run 50 ppm fast from an epoch-sized origin.
 *
 * Behaviour switches (read at each call): FAKE_CUPTI_SUBSCRIBERS=1 (another
 * subscriber: cuptiSubscribe fails), FAKE_CUPTI_NO_TS_CB=1 (no timestamp
 * callback), FAKE_CUPTI_ENABLE_FAIL=1 (enabling kernels fails),
 * FAKE_CUPTI_DROPPED=N (N records dropped, reported once). */
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>

#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default"))) /* as every function here */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc g_req;
static CUpti_BuffersCallbackCompleteFunc g_done;
static CUpti_TimestampCallbackFunc g_ts;
static unsigned g_enabled; /* bit per kind below 32; external correlation: bit 31 */
static uint32_t g_corr;
static uint8_t *g_pend;
static size_t g_pend_n, g_pend_cap;
static int g_dropped_told;
static __thread uint64_t t_ext[16];
static __thread int t_ext_n;

static int env_on(const char *k) {
    const char *v = getenv(k);
    return v && *v && *v != '0';
}

static uint64_t mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* the fake's own clock: 50 ppm fast, from 1.7e18 */
static uint64_t own_clock(void) {
    uint64_t m = mono();
    return 1700000000000000000ull + m + m / 20000;
}

static uint64_t now(void) { return g_ts ? g_ts() : own_clock(); }

static unsigned kind_bit(CUpti_ActivityKind k) {
    return k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION ? 1u << 31 : (k < 31 ? 1u << k : 0);
}

static size_t rec_size(uint32_t kind) {
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

/* under g_lock */
static void pend(const void *rec, size_t sz) {
    if (g_pend_n + sz > g_pend_cap) {
        g_pend_cap = (g_pend_n + sz) * 2;
        g_pend = realloc(g_pend, g_pend_cap);
        if (!g_pend) abort();
    }
    memcpy(g_pend + g_pend_n, rec, sz);
    g_pend_n += sz;
}

/* kernel names, as CUPTI keeps them: one copy each, freed at unload */
static char *g_names[64];

/* under g_lock */
static const char *name_keep(const char *s) {
    int i = 0;
    for (; i < 64 && g_names[i]; i++)
        if (strcmp(g_names[i], s) == 0) return g_names[i];
    if (i == 64 || !(g_names[i] = strdup(s))) abort();
    return g_names[i];
}

__attribute__((destructor)) static void names_free(void) {
    for (int i = 0; i < 64; i++) free(g_names[i]);
    free(g_pend);
}

/* under g_lock: the runtime API record of a call at t (CUPTI names the
 * thread by the low 32 bits of pthread_self()) and, when the thread has
 * an id pushed, the external correlation record */
static void pend_api(uint32_t cbid, uint32_t corr, uint64_t t) {
    if (g_enabled & kind_bit(CUPTI_ACTIVITY_KIND_RUNTIME)) {
        CUpti_ActivityAPI a;
        memset(&a, 0, sizeof a);
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = cbid;
        a.start = t;
        a.end = t + 100;
        a.correlationId = corr;
        a.threadId = (uint32_t)(uintptr_t)pthread_self();
        pend(&a, sizeof a);
    }
    if (t_ext_n > 0 && (g_enabled & kind_bit(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))) {
        CUpti_ActivityExternalCorrelation e;
        memset(&e, 0, sizeof e);
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        e.externalId = t_ext[t_ext_n - 1];
        e.correlationId = corr;
        pend(&e, sizeof e);
    }
}

/* Plays a cudaMemcpyAsync host (pinned) -> device of `bytes` bytes taking
 * dur_ns on the device: its runtime record, external correlation, and a
 * CUpti_ActivityMemcpy6 record on stream 8.  Returns the correlation id. */
EXPORT int fake_cupti_memcpy(uint64_t bytes, uint64_t dur_ns) {
    pthread_mutex_lock(&g_lock);
    uint32_t corr = ++g_corr;
    uint64_t t = now();
    pend_api(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, corr, t);
    if (g_enabled & kind_bit(CUPTI_ACTIVITY_KIND_MEMCPY)) {
        CUpti_ActivityMemcpy6 m;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.bytes = bytes;
        m.start = t + 300;
        m.end = t + 300 + (g_ts ? dur_ns : dur_ns + dur_ns / 20000);
        m.streamId = 8;
        m.contextId = 1;
        m.correlationId = corr;
        pend(&m, sizeof m);
    }
    pthread_mutex_unlock(&g_lock);
    return (int)corr;
}

EXPORT int fake_cupti_launch(const char *name, uint64_t dur_ns) {
    pthread_mutex_lock(&g_lock);
    uint32_t corr = ++g_corr;
    uint64_t t = now();
    pend_api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, t);
    if (g_enabled & kind_bit(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.name = name_keep(name);
        k.start = t + 200;
        k.end = t + 200 + (g_ts ? dur_ns : dur_ns + dur_ns / 20000);
        k.streamId = 7;
        k.contextId = 1;
        k.correlationId = corr;
        k.gridX = k.gridY = k.gridZ = 1;
        k.blockX = 128;
        k.blockY = k.blockZ = 1;
        pend(&k, sizeof k);
    }
    pthread_mutex_unlock(&g_lock);
    return (int)corr;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version) {
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && env_on("FAKE_CUPTI_ENABLE_FAIL"))
        return CUPTI_ERROR_UNKNOWN;
    pthread_mutex_lock(&g_lock);
    g_enabled |= kind_bit(kind);
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
    pthread_mutex_lock(&g_lock);
    g_enabled &= ~kind_bit(kind);
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                    CUpti_BuffersCallbackCompleteFunc done) {
    g_req = req;
    g_done = done;
    return CUPTI_SUCCESS;
}

/* Hands every pending record over, in as many buffers as it takes. */
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
    (void)flag;
    pthread_mutex_lock(&g_lock);
    size_t off = 0;
    while (off < g_pend_n) {
        uint8_t *buf = NULL;
        size_t size = 0, max = 0;
        g_req(&buf, &size, &max);
        if (!buf) break; /* dropped */
        size_t valid = 0;
        while (off < g_pend_n) {
            uint32_t k;
            memcpy(&k, g_pend + off, sizeof k);
            size_t sz = rec_size(k);
            if (valid + sz > size) break;
            memcpy(buf + valid, g_pend + off, sz);
            valid += sz;
            off += sz;
        }
        if (valid == 0) abort(); /* a buffer too small for one record */
        g_done(NULL, 0, buf, size, valid);
    }
    g_pend_n = 0;
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext ctx, uint32_t stream, uint32_t flag) {
    (void)ctx;
    (void)stream;
    return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                CUpti_Activity **record) {
    size_t off = 0;
    if (*record) off = (size_t)((uint8_t *)*record - buffer) + rec_size((*record)->kind);
    if (off >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + off);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
                                                       size_t *dropped) {
    (void)ctx;
    (void)stream;
    const char *v = getenv("FAKE_CUPTI_DROPPED");
    *dropped = 0;
    if (v && !g_dropped_told) {
        *dropped = (size_t)strtoul(v, NULL, 10);
        g_dropped_told = 1;
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
    if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || t_ext_n >= 16)
        return CUPTI_ERROR_INVALID_PARAMETER;
    t_ext[t_ext_n++] = id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *last) {
    if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || t_ext_n == 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    *last = t_ext[--t_ext_n];
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) {
    *timestamp = own_clock();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
    if (env_on("FAKE_CUPTI_NO_TS_CB")) {
        g_ts = NULL;
        return CUPTI_ERROR_NOT_SUPPORTED;
    }
    g_ts = f;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **s) {
    switch (r) {
    case CUPTI_SUCCESS: *s = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_UNKNOWN: *s = "CUPTI_ERROR_UNKNOWN"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *s = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb,
                                    void *user) {
    (void)cb;
    (void)user;
    if (env_on("FAKE_CUPTI_SUBSCRIBERS")) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    *sub = (CUpti_SubscriberHandle)&g_lock;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle sub) {
    (void)sub;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid,
                                          const char **name) {
    if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
        *name = "cudaLaunchKernel_v7000";
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}
