/* cupti.c -- the CUDA activity collector's foundation (issue 38 part 3;
 * docs/device.md; the interface in cupti.h).
 *
 * libcupti is loaded at run time (dlopen): the build needs CUPTI's headers
 * only (CMake finds cupti_activity.h and defines SPS_HAVE_CUPTI_HEADERS),
 * never the library, the driver or a GPU.  Without the headers the parser
 * and the loader are stubs that answer SPS_ENOTSUP ("built without CUPTI
 * headers"); the collector's own bookkeeping (pool, names, join, clock
 * map) is built either way.
 *
 * Records: CUPTI writes, for each activity kind, the newest struct version
 * of the library (CUpti_ActivityKernel5 .. 10, Memcpy3 .. 6, Memset2 .. 4
 * over CUDA 11.0 .. 13; CUpti_ActivityAPI and
 * CUpti_ActivityExternalCorrelation never changed).  Every field read here
 * lies at the same offset in all of those versions (asserted below against
 * the header's structs), so a record is read through the oldest struct of
 * its kind, whatever version the library wrote; the versions differ in
 * size only, which matters to the built-in walker (sps__cupti_walk: the
 * tests' buffers) and not to libcupti's own cuptiActivityGetNextRecord,
 * which the running collector uses.
 *
 * Not wired yet: nothing calls sps__cupti_start or sps__cupti_push; the
 * writers and the Python faces will read the activities and the join. */
#include "ext/cupti.h"

#include "spanscope.h"

#include <dlfcn.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SPS_HAVE_CUPTI_HEADERS
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>
#include <cupti_runtime_cbid.h>
#include <cupti_version.h>
#endif

enum { DEFAULT_BUF = 4u << 20, CBID_CACHE = 4096 };

/* ======================================================================== */
/* the clock                                                                */

uint64_t sps__cupti_host_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sps__clockmap_identity(sps__clockmap_t *m) {
    memset(m, 0, sizeof *m);
    m->identity = 1;
    m->slope = 1.0;
}

int sps__clockmap_fit(sps__clockmap_t *m, const uint64_t *cupti, const uint64_t *host,
                      size_t n) {
    if (!m || !cupti || !host || n == 0)
        return sps__err_fail(SPS_EINVAL, "clock map: no (CUPTI, host) timestamp pairs");
    memset(m, 0, sizeof *m);
    m->x0 = cupti[0];
    m->y0 = host[0];
    /* relative to the first pair, in long double: the sums stay exact */
    long double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += (long double)(int64_t)(cupti[i] - m->x0);
        my += (long double)(int64_t)(host[i] - m->y0);
    }
    mx /= (long double)n;
    my /= (long double)n;
    long double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        long double dx = (long double)(int64_t)(cupti[i] - m->x0) - mx;
        long double dy = (long double)(int64_t)(host[i] - m->y0) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    long double b = 1.0L;
    if (n > 1) {
        if (sxx == 0)
            return sps__err_fail(SPS_EINVAL,
                                 "clock map: the %zu CUPTI timestamps are all equal", n);
        b = sxy / sxx;
    }
    m->slope = (double)b;
    m->offset = (double)(my - b * mx);
    return 0;
}

uint64_t sps__clockmap_apply(const sps__clockmap_t *m, uint64_t t) {
    if (m->identity) return t;
    long double d = (long double)(int64_t)(t - m->x0);
    long double y = (long double)m->offset + (long double)m->slope * d;
    long long r = llroundl(y);
    return m->y0 + (uint64_t)(int64_t)r;
}

/* ======================================================================== */
/* the collector's bookkeeping                                              */

int sps__cupti_init(sps__cupti_t *c, uint32_t api_version, size_t buf_size) {
    memset(c, 0, sizeof *c);
    if (pthread_mutex_init(&c->lock, NULL) != 0)
        return sps__err_fail(SPS_ENOMEM, "CUPTI collector: cannot make its lock");
    c->api_version = api_version;
    c->ext_kind = 3; /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 */
    if (buf_size == 0) buf_size = DEFAULT_BUF;
    c->pool.buf_size = (buf_size + 7) & ~(size_t)7;
    sps__clockmap_identity(&c->clock);
    return 0;
}

void sps__cupti_free(sps__cupti_t *c) {
    for (size_t i = 0; i < c->pool.n_free; i++) free(c->pool.free_list[i]);
    free(c->pool.free_list);
    free(c->acts);
    free(c->arena);
    free(c->name_off);
    free(c->name_hash);
    free(c->corr_key);
    free(c->corr_val);
    free(c->spans);
    free(c->cbid_name[0]);
    free(c->cbid_name[1]);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
}

int sps__cupti_buffer_request(sps__cupti_t *c, uint8_t **buf, size_t *size) {
    *buf = NULL;
    *size = 0;
    pthread_mutex_lock(&c->lock);
    sps__cupti_pool_t *p = &c->pool;
    uint8_t *b = NULL;
    if (p->n_free > 0) {
        b = p->free_list[--p->n_free];
    } else {
        /* a new buffer; its slot in the free list is made now, so that
         * giving it back never allocates */
        if (sps__grow((void **)&p->free_list, &p->cap_free, p->allocated, sizeof *p->free_list) != 0 ||
            posix_memalign((void **)&b, 8, p->buf_size) != 0) {
            b = NULL;
        } else {
            p->allocated++;
        }
    }
    if (b) p->handed++;
    pthread_mutex_unlock(&c->lock);
    if (!b) return sps__err_fail(SPS_ENOMEM, "CUPTI collector: no memory for a %zu-byte buffer",
                                 p->buf_size);
    *buf = b;
    *size = p->buf_size;
    return 0;
}

/* Under c->lock: buf back to the pool (never allocates: see request). */
static void pool_give_back(sps__cupti_t *c, uint8_t *buf) {
    sps__cupti_pool_t *p = &c->pool;
    if (p->n_free < p->cap_free) {
        p->free_list[p->n_free++] = buf;
    } else {
        free(buf); /* not one of ours: CUPTI's contract was broken */
    }
    if (p->handed) p->handed--;
}

int sps__cupti_buffer_complete(sps__cupti_t *c, uint8_t *buf, size_t valid,
                               sps__cupti_next_fn next, void *next_ctx) {
    if (!buf) return 0;
    int rc = valid ? sps__cupti_parse(c, buf, valid, next, next_ctx) : 0;
    pthread_mutex_lock(&c->lock);
    pool_give_back(c, buf);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* ---- names --------------------------------------------------------------- */

const char *sps__cupti_name(const sps__cupti_t *c, uint32_t i) {
    if (i >= c->n_names) return "";
    return c->arena + c->name_off[i];
}

static int names_rehash(sps__cupti_t *c, size_t cap) {
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return -1;
    for (size_t i = 0; i < c->n_names; i++) {
        const char *s = c->arena + c->name_off[i];
        size_t j = (size_t)sps__hash_bytes(s, strlen(s)) & (cap - 1);
        while (h[j]) j = (j + 1) & (cap - 1);
        h[j] = (uint32_t)i + 1;
    }
    free(c->name_hash);
    c->name_hash = h;
    c->hash_cap = cap;
    return 0;
}

int sps__cupti_intern(sps__cupti_t *c, const char *s, uint32_t *idx) {
    size_t len = strlen(s);
    if ((c->n_names + 1) * 2 > c->hash_cap &&
        names_rehash(c, c->hash_cap ? c->hash_cap * 2 : 64) != 0)
        goto oom;
    size_t j = (size_t)sps__hash_bytes(s, len) & (c->hash_cap - 1);
    for (; c->name_hash[j]; j = (j + 1) & (c->hash_cap - 1)) {
        uint32_t i = c->name_hash[j] - 1;
        if (strcmp(c->arena + c->name_off[i], s) == 0) {
            *idx = i;
            return 0;
        }
    }
    if (c->n_names >= UINT32_MAX - 1 || c->arena_n + len + 1 > UINT32_MAX) goto oom;
    if (sps__grow((void **)&c->name_off, &c->cap_names, c->n_names, sizeof *c->name_off) != 0)
        goto oom;
    while (c->arena_n + len + 1 > c->arena_cap) {
        size_t cap = c->arena_cap ? c->arena_cap * 2 : 4096;
        char *a = realloc(c->arena, cap);
        if (!a) goto oom;
        c->arena = a;
        c->arena_cap = cap;
    }
    memcpy(c->arena + c->arena_n, s, len + 1);
    c->name_off[c->n_names] = (uint32_t)c->arena_n;
    c->arena_n += len + 1;
    c->name_hash[j] = (uint32_t)c->n_names + 1;
    *idx = (uint32_t)c->n_names++;
    return 0;
oom:
    c->oom = 1;
    return sps__err_fail(SPS_ENOMEM, "CUPTI collector: no memory for a name");
}

/* ---- correlation id -> external id ---------------------------------------- */

static size_t corr_slot(const uint32_t *keys, size_t cap, uint32_t k) {
    size_t j = ((size_t)k * 0x9E3779B1u) & (cap - 1);
    while (keys[j] && keys[j] != k) j = (j + 1) & (cap - 1);
    return j;
}

int sps__cupti_corr_put(sps__cupti_t *c, uint32_t corr, uint64_t ext) {
    if (corr == 0) return 0; /* CUPTI's correlation ids start at 1 */
    if ((c->corr_n + 1) * 2 > c->corr_cap) {
        size_t cap = c->corr_cap ? c->corr_cap * 2 : 256;
        uint32_t *k = calloc(cap, sizeof *k);
        uint64_t *v = calloc(cap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            c->oom = 1;
            return sps__err_fail(SPS_ENOMEM, "CUPTI collector: no memory for correlations");
        }
        for (size_t i = 0; i < c->corr_cap; i++)
            if (c->corr_key[i]) {
                size_t j = corr_slot(k, cap, c->corr_key[i]);
                k[j] = c->corr_key[i];
                v[j] = c->corr_val[i];
            }
        free(c->corr_key);
        free(c->corr_val);
        c->corr_key = k;
        c->corr_val = v;
        c->corr_cap = cap;
    }
    size_t j = corr_slot(c->corr_key, c->corr_cap, corr);
    if (!c->corr_key[j]) c->corr_n++;
    c->corr_key[j] = corr;
    c->corr_val[j] = ext;
    return 0;
}

void sps__cupti_corr_prune(sps__cupti_t *c, uint32_t below) {
    /* in place: take each kept entry out and put it back (linear probing
     * needs its chain rebuilt, so every entry is re-placed) */
    size_t cap = c->corr_cap;
    uint32_t *k = c->corr_key;
    uint64_t *v = c->corr_val;
    if (!cap) return;
    uint32_t *nk = calloc(cap, sizeof *nk);
    uint64_t *nv = calloc(cap, sizeof *nv);
    if (!nk || !nv) { /* keep everything: a later prune tries again */
        free(nk);
        free(nv);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < cap; i++)
        if (k[i] && k[i] >= below) {
            size_t j = corr_slot(nk, cap, k[i]);
            nk[j] = k[i];
            nv[j] = v[i];
            n++;
        }
    free(k);
    free(v);
    c->corr_key = nk;
    c->corr_val = nv;
    c->corr_n = n;
}

uint64_t sps__cupti_corr_span(const sps__cupti_t *c, uint32_t corr) {
    if (!c->corr_cap || corr == 0) return 0;
    size_t j = corr_slot(c->corr_key, c->corr_cap, corr);
    return c->corr_key[j] ? c->corr_val[j] : 0;
}

/* ---- the join -------------------------------------------------------------- */

static int span_cmp(const void *a, const void *b) {
    uint64_t x = ((const sps__dev_span_t *)a)->span, y = ((const sps__dev_span_t *)b)->span;
    return x < y ? -1 : x > y;
}

int sps__cupti_join(sps__cupti_t *c) {
    pthread_mutex_lock(&c->lock);
    size_t n_dev = 0;
    for (size_t i = 0; i < c->n_acts; i++) {
        sps__dev_act_t *a = &c->acts[i];
        a->span = sps__cupti_corr_span(c, a->correlation);
        if (a->span && a->kind <= SPS__DEV_MEMSET) n_dev++;
    }
    free(c->spans);
    c->spans = NULL;
    c->n_spans = 0;
    int rc = 0;
    if (n_dev) {
        sps__dev_span_t *s = malloc(n_dev * sizeof *s);
        if (!s) {
            c->oom = 1;
            rc = sps__err_fail(SPS_ENOMEM, "CUPTI collector: no memory for the join");
        } else {
            size_t k = 0;
            for (size_t i = 0; i < c->n_acts; i++) {
                const sps__dev_act_t *a = &c->acts[i];
                if (!a->span || a->kind > SPS__DEV_MEMSET) continue;
                s[k].span = a->span;
                s[k].device_ns = a->end > a->start ? a->end - a->start : 0;
                s[k].count = 1;
                s[k].pad_ = 0;
                k++;
            }
            qsort(s, k, sizeof *s, span_cmp);
            size_t m = 0;
            for (size_t i = 0; i < k; i++) {
                if (m && s[m - 1].span == s[i].span) {
                    s[m - 1].device_ns += s[i].device_ns;
                    s[m - 1].count++;
                } else {
                    s[m++] = s[i];
                }
            }
            c->spans = s;
            c->n_spans = m;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

const sps__dev_span_t *sps__cupti_spans(const sps__cupti_t *c, size_t *n) {
    *n = c->n_spans;
    return c->spans;
}

uint64_t sps__cupti_span_device_ns(const sps__cupti_t *c, uint64_t span, uint32_t *count) {
    size_t lo = 0, hi = c->n_spans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->spans[mid].span < span) lo = mid + 1;
        else hi = mid;
    }
    if (lo < c->n_spans && c->spans[lo].span == span) {
        if (count) *count = c->spans[lo].count;
        return c->spans[lo].device_ns;
    }
    if (count) *count = 0;
    return 0;
}

const sps__dev_act_t *sps__cupti_acts(const sps__cupti_t *c, size_t *n) {
    *n = c->n_acts;
    return c->acts;
}

/* ======================================================================== */
/* parsing (CUPTI's record structs)                                         */

#ifdef SPS_HAVE_CUPTI_HEADERS

/* The fields read, at one offset in every version (see the file's top). */
#define SAME_OFF(A, B, f) \
    _Static_assert(offsetof(A, f) == offsetof(B, f), #A "." #f " moved in " #B)
#define KERNEL_SAME(B)                                                         \
    SAME_OFF(CUpti_ActivityKernel4, B, start);                                 \
    SAME_OFF(CUpti_ActivityKernel4, B, end);                                   \
    SAME_OFF(CUpti_ActivityKernel4, B, deviceId);                              \
    SAME_OFF(CUpti_ActivityKernel4, B, contextId);                             \
    SAME_OFF(CUpti_ActivityKernel4, B, streamId);                              \
    SAME_OFF(CUpti_ActivityKernel4, B, gridX);                                 \
    SAME_OFF(CUpti_ActivityKernel4, B, gridZ);                                 \
    SAME_OFF(CUpti_ActivityKernel4, B, blockX);                                \
    SAME_OFF(CUpti_ActivityKernel4, B, blockZ);                                \
    SAME_OFF(CUpti_ActivityKernel4, B, correlationId);                         \
    SAME_OFF(CUpti_ActivityKernel4, B, name)
#define COPY_SAME(A, B)                                                        \
    SAME_OFF(A, B, bytes);                                                     \
    SAME_OFF(A, B, start);                                                     \
    SAME_OFF(A, B, end);                                                       \
    SAME_OFF(A, B, deviceId);                                                  \
    SAME_OFF(A, B, contextId);                                                 \
    SAME_OFF(A, B, streamId);                                                  \
    SAME_OFF(A, B, correlationId)
#define SIZE_IS(T, n) _Static_assert(sizeof(T) == (n), "sizeof " #T)

/* The header of CUDA 13 (CUPTI API 130000 on) has every version. */
#if CUPTI_API_VERSION >= 130000
KERNEL_SAME(CUpti_ActivityKernel5);
KERNEL_SAME(CUpti_ActivityKernel6);
KERNEL_SAME(CUpti_ActivityKernel7);
KERNEL_SAME(CUpti_ActivityKernel8);
KERNEL_SAME(CUpti_ActivityKernel9);
KERNEL_SAME(CUpti_ActivityKernel10);
COPY_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy3);
COPY_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy4);
COPY_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy5);
COPY_SAME(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6);
SAME_OFF(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, copyKind);
SAME_OFF(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, srcKind);
SAME_OFF(CUpti_ActivityMemcpy, CUpti_ActivityMemcpy6, dstKind);
COPY_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset2);
COPY_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset3);
COPY_SAME(CUpti_ActivityMemset, CUpti_ActivityMemset4);
SAME_OFF(CUpti_ActivityMemset, CUpti_ActivityMemset4, memoryKind);
/* the walker's sizes below are the header's */
SIZE_IS(CUpti_ActivityKernel5, 160);
SIZE_IS(CUpti_ActivityKernel6, 168);
SIZE_IS(CUpti_ActivityKernel7, 176);
SIZE_IS(CUpti_ActivityKernel8, 200);
SIZE_IS(CUpti_ActivityKernel9, 208);
SIZE_IS(CUpti_ActivityKernel10, 216);
SIZE_IS(CUpti_ActivityMemcpy3, 72);
SIZE_IS(CUpti_ActivityMemcpy4, 80);
SIZE_IS(CUpti_ActivityMemcpy5, 88);
SIZE_IS(CUpti_ActivityMemcpy6, 96);
SIZE_IS(CUpti_ActivityMemset2, 72);
SIZE_IS(CUpti_ActivityMemset3, 80);
SIZE_IS(CUpti_ActivityMemset4, 88);
#endif
SIZE_IS(CUpti_ActivityAPI, 40);
SIZE_IS(CUpti_ActivityExternalCorrelation, 24);
SIZE_IS(CUpti_ActivityName, 32);

/* Which struct version CUPTI API version v writes, by the header's
 * deprecation notes: kernels Kernel5 (11.0, 11.1: v13, v14), Kernel6
 * (11.2 .. 11.5: v15, v16), Kernel7 (11.6, 11.7: v17), Kernel8 (11.8:
 * v18), Kernel9 (12.x: v19 .. v28), Kernel10 (13.x: v130000 on); copies
 * Memcpy3 (11.0), Memcpy4 (11.1 .. 11.5), Memcpy5 (11.6 .. 12.6), Memcpy6
 * (12.8 on: v26); sets Memset2 (11.0), Memset3 (11.1 .. 11.5), Memset4
 * (11.6 on). */
size_t sps__cupti_record_size(uint32_t v, uint32_t kind) {
    if (v < 13) return 0; /* before CUDA 11.0: not supported */
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        if (v >= 130000) return 216;
        if (v >= 19) return 208;
        if (v == 18) return 200;
        if (v == 17) return 176;
        if (v >= 15) return 168;
        return 160;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        if (v >= 26) return 96;
        if (v >= 17) return 88;
        if (v >= 14) return 80;
        return 72;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        if (v >= 17) return 88;
        if (v >= 14) return 80;
        return 72;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_NAME:
        return sizeof(CUpti_ActivityName);
    default:
        return 0;
    }
}

int sps__cupti_walk(void *ctx, uint8_t *buf, size_t valid, const void **rec) {
    const sps__cupti_t *c = ctx;
    size_t off = 0;
    if (*rec) {
        const uint8_t *r = *rec;
        uint32_t k;
        memcpy(&k, r, sizeof k);
        off = (size_t)(r - buf) + ((sps__cupti_record_size(c->api_version, k) + 7) & ~(size_t)7);
    }
    if (off >= valid) return 1;
    if (valid - off < sizeof(uint32_t)) return -1;
    uint32_t kind;
    memcpy(&kind, buf + off, sizeof kind);
    size_t sz = sps__cupti_record_size(c->api_version, kind);
    if (sz == 0) return -2;              /* a kind whose size we do not know */
    if (sz > valid - off) return -1;     /* truncated */
    *rec = buf + off;
    return 0;
}

/* kineto's names (libkineto's memcpyKindString / memoryKindString) */
static const char *copy_kind_str(unsigned k) {
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "<unknown>";
    }
}

static const char *mem_kind_str(unsigned k) {
    switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN: return "Unknown";
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unrecognized";
    }
}

/* API names: libcupti's cuptiGetCallbackName when loaded, else these (the
 * calls a region most often makes), else "cuda runtime API <cbid>". */
static const struct {
    uint32_t domain, cbid;
    const char *name;
} api_names[] = {
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize"},
    {1, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize"},
    {0, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD"},
    {0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH"},
    {0, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize"},
};

static const char *lib_callback_name(int runtime, uint32_t cbid);

/* Under c->lock: the name index of API callback cbid (runtime or driver),
 * made once per cbid. */
static int api_name(sps__cupti_t *c, int runtime, uint32_t cbid, uint32_t *idx) {
    uint32_t **cache = &c->cbid_name[runtime ? 1 : 0];
    if (cbid < CBID_CACHE) {
        if (!*cache && !(*cache = calloc(CBID_CACHE, sizeof **cache))) {
            c->oom = 1;
            return sps__err_fail(SPS_ENOMEM, "CUPTI collector: no memory");
        }
        if ((*cache)[cbid]) {
            *idx = (*cache)[cbid] - 1;
            return 0;
        }
    }
    char buf[128];
    const char *s = lib_callback_name(runtime, cbid);
    if (s) {
        /* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" */
        size_t n = strlen(s);
        const char *v = strstr(s, "_v");
        if (v && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
            n = (size_t)(v - s);
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 120 ? n : 120), s);
    } else {
        s = NULL;
        for (size_t i = 0; i < sizeof api_names / sizeof api_names[0]; i++)
            if (api_names[i].domain == (runtime ? 1u : 0u) && api_names[i].cbid == cbid)
                s = api_names[i].name;
        if (s)
            snprintf(buf, sizeof buf, "%s", s);
        else
            snprintf(buf, sizeof buf, "cuda %s API %u", runtime ? "runtime" : "driver", cbid);
    }
    int rc = sps__cupti_intern(c, buf, idx);
    if (rc == 0 && cbid < CBID_CACHE) (*cache)[cbid] = *idx + 1;
    return rc;
}

/* Under c->lock: appends one activity. */
static sps__dev_act_t *act_new(sps__cupti_t *c) {
    if (sps__grow((void **)&c->acts, &c->cap_acts, c->n_acts, sizeof *c->acts) != 0) {
        c->oom = 1;
        sps__err_set("CUPTI collector: no memory for %zu activities", c->n_acts + 1);
        return NULL;
    }
    sps__dev_act_t *a = &c->acts[c->n_acts];
    memset(a, 0, sizeof *a);
    return a;
}

/* Under c->lock: one record.  1 kept, 0 not an activity, <0 out of memory. */
static int parse_one(sps__cupti_t *c, const CUpti_Activity *r) {
    sps__dev_act_t *a;
    char nm[96];
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel4 *k = (const void *)r;
        if (!(a = act_new(c))) return SPS_ENOMEM;
        a->kind = SPS__DEV_KERNEL;
        a->start = k->start;
        a->end = k->end;
        a->device = k->deviceId;
        a->context = k->contextId;
        a->stream = k->streamId;
        a->correlation = k->correlationId;
        a->grid[0] = (uint32_t)k->gridX;
        a->grid[1] = (uint32_t)k->gridY;
        a->grid[2] = (uint32_t)k->gridZ;
        a->block[0] = (uint32_t)k->blockX;
        a->block[1] = (uint32_t)k->blockY;
        a->block[2] = (uint32_t)k->blockZ;
        if (sps__cupti_intern(c, k->name ? k->name : "<unnamed kernel>", &a->name) != 0)
            return SPS_ENOMEM;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy *m = (const void *)r;
        if (!(a = act_new(c))) return SPS_ENOMEM;
        a->kind = SPS__DEV_MEMCPY;
        a->start = m->start;
        a->end = m->end;
        a->bytes = m->bytes;
        a->device = m->deviceId;
        a->context = m->contextId;
        a->stream = m->streamId;
        a->correlation = m->correlationId;
        a->copy_kind = m->copyKind;
        a->src_kind = m->srcKind;
        a->dst_kind = m->dstKind;
        snprintf(nm, sizeof nm, "Memcpy %s (%s -> %s)", copy_kind_str(m->copyKind),
                 mem_kind_str(m->srcKind), mem_kind_str(m->dstKind));
        if (sps__cupti_intern(c, nm, &a->name) != 0) return SPS_ENOMEM;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset *m = (const void *)r;
        if (!(a = act_new(c))) return SPS_ENOMEM;
        a->kind = SPS__DEV_MEMSET;
        a->start = m->start;
        a->end = m->end;
        a->bytes = m->bytes;
        a->device = m->deviceId;
        a->context = m->contextId;
        a->stream = m->streamId;
        a->correlation = m->correlationId;
        a->dst_kind = (uint8_t)m->memoryKind;
        snprintf(nm, sizeof nm, "Memset (%s)", mem_kind_str(m->memoryKind));
        if (sps__cupti_intern(c, nm, &a->name) != 0) return SPS_ENOMEM;
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *p = (const void *)r;
        int rt = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        if (!(a = act_new(c))) return SPS_ENOMEM;
        a->kind = rt ? SPS__DEV_RUNTIME : SPS__DEV_DRIVER;
        a->start = p->start;
        a->end = p->end;
        a->device = a->context = a->stream = UINT32_MAX;
        a->correlation = p->correlationId;
        a->cbid = (uint32_t)p->cbid;
        a->tid = p->threadId;
        if (api_name(c, rt, a->cbid, &a->name) != 0) return SPS_ENOMEM;
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const void *)r;
        if ((uint32_t)e->externalKind != c->ext_kind) {
            c->ext_other++;
            return 0;
        }
        return sps__cupti_corr_put(c, e->correlationId, e->externalId) == 0 ? 0 : SPS_ENOMEM;
    }
    default:
        c->skipped++;
        return 0;
    }
    c->n_acts++;
    return 1;
}

int sps__cupti_parse(sps__cupti_t *c, uint8_t *buf, size_t valid, sps__cupti_next_fn next,
                     void *next_ctx) {
    if (!next) {
        next = sps__cupti_walk;
        next_ctx = c;
    }
    pthread_mutex_lock(&c->lock);
    const void *rec = NULL;
    int kept = 0, rc = 0;
    for (;;) {
        int w = next(next_ctx, buf, valid, &rec);
        if (w == 1) break;
        if (w < 0) {
            c->truncated++;
            break;
        }
        c->records++;
        int r = parse_one(c, rec);
        if (r < 0) {
            rc = r;
            break;
        }
        kept += r;
    }
    pthread_mutex_unlock(&c->lock);
    return rc < 0 ? rc : kept;
}

#else /* !SPS_HAVE_CUPTI_HEADERS */

#define NO_HEADERS "built without CUPTI headers (cupti_activity.h was not found at configure time)"

size_t sps__cupti_record_size(uint32_t v, uint32_t kind) {
    (void)v;
    (void)kind;
    return 0;
}

int sps__cupti_walk(void *ctx, uint8_t *buf, size_t valid, const void **rec) {
    (void)ctx;
    (void)buf;
    (void)valid;
    (void)rec;
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS);
}

int sps__cupti_parse(sps__cupti_t *c, uint8_t *buf, size_t valid, sps__cupti_next_fn next,
                     void *next_ctx) {
    (void)c;
    (void)buf;
    (void)valid;
    (void)next;
    (void)next_ctx;
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS);
}

#endif /* SPS_HAVE_CUPTI_HEADERS */

/* ======================================================================== */
/* the library                                                              */

#ifdef SPS_HAVE_CUPTI_HEADERS

static struct {
    void *h;
    char path[512];
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*flush)(CUcontext, uint32_t, uint32_t); /* optional */
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*register_ts)(CUpti_TimestampCallbackFunc); /* optional (>= 11.6) */
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **); /* optional */
} L;
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;
static sps__cupti_t *g_active; /* the started collector (acquire/release) */

static const char *const lib_names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                        "libcupti.so.11.8", "libcupti.so.11"};

static const char *lib_callback_name(int runtime, uint32_t cbid) {
    const char *s = NULL;
    if (!L.callback_name) return NULL;
    if (L.callback_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
                        &s) != CUPTI_SUCCESS)
        return NULL;
    return s;
}

static const char *result_str(CUptiResult r) {
    const char *s = NULL;
    if (L.result_string && L.result_string(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

/* dlopen one candidate; on failure the reason goes to why. */
static void *try_open(const char *path, char *why, size_t cap) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        snprintf(L.path, sizeof L.path, "%s", path);
    } else if (why && cap) {
        const char *e = dlerror();
        snprintf(why, cap, "%s", e ? e : path);
    }
    return h;
}

static void *open_in_dir(const char *dir) {
    char p[512];
    for (size_t i = 0; i < sizeof lib_names / sizeof lib_names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, lib_names[i]);
        void *h = try_open(p, NULL, 0);
        if (h) return h;
    }
    return NULL;
}

static void *find_lib(void) {
    for (size_t i = 0; i < sizeof lib_names / sizeof lib_names[0]; i++) {
        void *h = try_open(lib_names[i], NULL, 0);
        if (h) return h;
    }
    char d[512];
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home) home = getenv("CUDA_PATH");
    const char *subs[] = {"lib64", "extras/CUPTI/lib64", "lib", "targets/x86_64-linux/lib"};
    if (home && *home)
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
            snprintf(d, sizeof d, "%s/%s", home, subs[i]);
            void *h = open_in_dir(d);
            if (h) return h;
        }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        snprintf(d, sizeof d, "/usr/local/cuda/%s", subs[i]);
        void *h = open_in_dir(d);
        if (h) return h;
    }
    /* /usr/local/cuda-X.Y/{lib64,lib,...}, the newest first */
    glob_t g;
    void *h = NULL;
    if (glob("/usr/local/cuda-*", GLOB_ONLYDIR, NULL, &g) == 0) {
        for (size_t i = g.gl_pathc; i-- > 0 && !h;)
            for (size_t j = 0; j < sizeof subs / sizeof subs[0] && !h; j++) {
                snprintf(d, sizeof d, "%s/%s", g.gl_pathv[i], subs[j]);
                h = open_in_dir(d);
            }
        globfree(&g);
    }
    return h;
}

#define SYM(field, name, required)                                                  \
    do {                                                                            \
        void *sym_ = dlsym(h, name);                                                \
        memcpy(&L.field, &sym_, sizeof sym_);                                       \
        if (!L.field && (required)) {                                               \
            snprintf(missing, sizeof missing, "%s", name);                          \
            goto bad;                                                               \
        }                                                                           \
    } while (0)

int sps__cupti_load(void) {
    pthread_mutex_lock(&g_load_lock);
    if (L.h) {
        pthread_mutex_unlock(&g_load_lock);
        return 0;
    }
    char why[512] = "";
    char missing[96] = "";
    void *h;
    const char *env = getenv("SPANSCOPE_CUPTI_LIB");
    if (env && *env) {
        h = try_open(env, why, sizeof why);
        if (!h) {
            pthread_mutex_unlock(&g_load_lock);
            return sps__err_fail(SPS_ENOTSUP, "CUPTI: cannot load SPANSCOPE_CUPTI_LIB=%s: %s", env,
                                 why);
        }
    } else {
        h = find_lib();
        if (!h) {
            pthread_mutex_unlock(&g_load_lock);
            return sps__err_fail(SPS_ENOTSUP,
                                 "CUPTI: libcupti not found (tried libcupti.so, .so.13, .so.12, "
                                 ".so.11 on the loader's path, $CUDA_HOME, /usr/local/cuda and "
                                 "/usr/local/cuda-*); install the CUDA toolkit's CUPTI or set "
                                 "SPANSCOPE_CUPTI_LIB to its path");
        }
    }
    SYM(get_version, "cuptiGetVersion", 1);
    SYM(enable, "cuptiActivityEnable", 1);
    SYM(disable, "cuptiActivityDisable", 1);
    SYM(register_callbacks, "cuptiActivityRegisterCallbacks", 1);
    SYM(flush_all, "cuptiActivityFlushAll", 1);
    SYM(flush, "cuptiActivityFlush", 0);
    SYM(next_record, "cuptiActivityGetNextRecord", 1);
    SYM(dropped, "cuptiActivityGetNumDroppedRecords", 1);
    SYM(push, "cuptiActivityPushExternalCorrelationId", 1);
    SYM(pop, "cuptiActivityPopExternalCorrelationId", 1);
    SYM(timestamp, "cuptiGetTimestamp", 1);
    SYM(register_ts, "cuptiActivityRegisterTimestampCallback", 0);
    SYM(result_string, "cuptiGetResultString", 1);
    SYM(subscribe, "cuptiSubscribe", 1);
    SYM(unsubscribe, "cuptiUnsubscribe", 1);
    SYM(callback_name, "cuptiGetCallbackName", 0);
    L.h = h;
    pthread_mutex_unlock(&g_load_lock);
    return 0;
bad : {
    char path[512];
    snprintf(path, sizeof path, "%s", L.path);
    memset(&L, 0, sizeof L);
    dlclose(h);
    pthread_mutex_unlock(&g_load_lock);
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: %s lacks %s (CUPTI older than CUDA 11?)", path,
                         missing);
}
}

const char *sps__cupti_lib_path(void) { return L.h ? L.path : ""; }

int sps__cupti_unload(void) {
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
        return sps__err_fail(SPS_EACTIVE, "CUPTI: a collector is on: stop it first");
    pthread_mutex_lock(&g_load_lock);
    if (L.h) dlclose(L.h);
    memset(&L, 0, sizeof L);
    pthread_mutex_unlock(&g_load_lock);
    return 0;
}

/* CUPTI's callbacks (its own thread for completed buffers) */
static void CUPTIAPI cb_request(uint8_t **buf, size_t *size, size_t *max_records) {
    sps__cupti_t *c = __atomic_load_n(&g_active, __ATOMIC_ACQUIRE);
    *max_records = 0; /* as many as fit */
    if (!c || sps__cupti_buffer_request(c, buf, size) != 0) {
        *buf = NULL;
        *size = 0;
    }
}

static int lib_next(void *ctx, uint8_t *buf, size_t valid, const void **rec) {
    (void)ctx;
    CUpti_Activity *r = (CUpti_Activity *)*rec;
    CUptiResult e = L.next_record(buf, valid, &r);
    if (e == CUPTI_SUCCESS) {
        *rec = r;
        return 0;
    }
    return e == CUPTI_ERROR_MAX_LIMIT_REACHED ? 1 : -1;
}

static void CUPTIAPI cb_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                 size_t valid) {
    (void)size;
    sps__cupti_t *c = __atomic_load_n(&g_active, __ATOMIC_ACQUIRE);
    if (!c) {
        free(buf);
        return;
    }
    sps__cupti_buffer_complete(c, buf, valid, lib_next, NULL);
    size_t d = 0;
    if (L.dropped(ctx, stream, &d) == CUPTI_SUCCESS && d) {
        pthread_mutex_lock(&c->lock);
        c->dropped += d;
        pthread_mutex_unlock(&c->lock);
    }
}

static uint64_t CUPTIAPI cb_timestamp(void) { return sps__cupti_host_ns(); }

static void CUPTIAPI cb_probe(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id,
                              const void *data) {
    (void)u;
    (void)d;
    (void)id;
    (void)data;
}

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER};
enum { N_KINDS = sizeof kinds / sizeof kinds[0], N_PAIRS = 8, MAX_PAIRS = 2 * N_PAIRS };

static uint64_t g_pair_cupti[MAX_PAIRS], g_pair_host[MAX_PAIRS];
static size_t g_n_pairs;

/* (CUPTI, host) pairs: the host time the midpoint of two reads around
 * CUPTI's, the narrowest of a few tries per pair. */
static void take_pairs(void) {
    if (g_n_pairs + N_PAIRS > MAX_PAIRS) g_n_pairs = N_PAIRS; /* keep the start's, renew the rest */
    for (int i = 0; i < N_PAIRS && g_n_pairs < MAX_PAIRS; i++) {
        uint64_t best_w = UINT64_MAX, bt = 0, bh = 0;
        for (int k = 0; k < 4; k++) {
            uint64_t t = 0, h0 = sps__cupti_host_ns();
            if (L.timestamp(&t) != CUPTI_SUCCESS) return;
            uint64_t h1 = sps__cupti_host_ns();
            if (h1 - h0 < best_w) {
                best_w = h1 - h0;
                bt = t;
                bh = h0 + (h1 - h0) / 2;
            }
        }
        g_pair_cupti[g_n_pairs] = bt;
        g_pair_host[g_n_pairs] = bh;
        g_n_pairs++;
    }
}

/* The driver's library, opened (and kept open: CUPTI loads it too); 0 or
 * SPS_ENOTSUP naming what is missing. */
static int driver_check(void) {
    const char *drv = getenv("SPANSCOPE_CUDA_LIB");
    if (!drv || !*drv) drv = "libcuda.so.1";
    void *cuda = dlopen(drv, RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        const char *e = dlerror();
        return sps__err_fail(SPS_ENOTSUP,
                             "CUPTI: no NVIDIA driver: %s cannot be loaded (%s); CUDA "
                             "activity needs the driver and a GPU",
                             drv, e ? e : "not found");
    }
    return 0;
}

int sps__cupti_probe(void) {
    int rc = sps__cupti_load();
    if (!rc) rc = driver_check();
    uint32_t v = 0;
    if (!rc && (L.get_version(&v) != CUPTI_SUCCESS || v < 13))
        rc = sps__err_fail(SPS_ENOTSUP, "CUPTI: %s: API version %u (CUDA 11.0 or newer needed)",
                           L.path, v);
    return rc;
}

int sps__cupti_sync(sps__cupti_t *c) {
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) != c)
        return sps__err_fail(SPS_EINVAL, "CUPTI: this collector was not started");
    CUptiResult e = L.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (e != CUPTI_SUCCESS && L.flush) L.flush(NULL, 0, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (c->clock.identity) return 0;
    take_pairs();
    return sps__clockmap_fit(&c->clock, g_pair_cupti, g_pair_host, g_n_pairs);
}

int sps__cupti_start(sps__cupti_t *c) {
    int rc = sps__cupti_load();
    if (rc) return rc;
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
        return sps__err_fail(SPS_EACTIVE,
                             "CUPTI: another CUDA activity collector of this process is on");
    rc = driver_check();
    if (rc) return rc;
    uint32_t v = 0;
    CUptiResult e = L.get_version(&v);
    if (e != CUPTI_SUCCESS || v < 13)
        return sps__err_fail(SPS_ENOTSUP, "CUPTI: %s: API version %u (CUDA 11.0 or newer needed)",
                             L.path, v);
    c->api_version = v;
    CUpti_SubscriberHandle sub = NULL;
    e = L.subscribe(&sub, cb_probe, NULL);
    if (e == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return sps__err_fail(SPS_EACTIVE,
                             "CUPTI: another profiler (Nsight Systems, torch.profiler, ...) is "
                             "already subscribed to CUPTI in this process, and CUPTI takes one "
                             "subscriber (%s)",
                             result_str(e));
    if (e != CUPTI_SUCCESS)
        return sps__err_fail(SPS_ENOTSUP,
                             "CUPTI: cuptiSubscribe failed: %s (%d): is an NVIDIA GPU visible "
                             "and the driver loaded?",
                             result_str(e), (int)e);
    L.unsubscribe(sub);
    g_n_pairs = 0;
    if (L.register_ts && L.register_ts(cb_timestamp) == CUPTI_SUCCESS) {
        sps__clockmap_identity(&c->clock);
    } else {
        c->clock.identity = 0;
        take_pairs();
    }
    e = L.register_callbacks(cb_request, cb_complete);
    if (e != CUPTI_SUCCESS)
        return sps__err_fail(SPS_ENOTSUP, "CUPTI: cuptiActivityRegisterCallbacks failed: %s",
                             result_str(e));
    __atomic_store_n(&g_active, c, __ATOMIC_RELEASE);
    for (size_t i = 0; i < N_KINDS; i++) {
        e = L.enable(kinds[i]);
        if (e != CUPTI_SUCCESS) {
            for (size_t j = 0; j < i; j++) L.disable(kinds[j]);
            L.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
            __atomic_store_n(&g_active, NULL, __ATOMIC_RELEASE);
            if (e == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
                return sps__err_fail(SPS_EACTIVE,
                                     "CUPTI: another profiler is using CUPTI in this process (%s)",
                                     result_str(e));
            return sps__err_fail(SPS_ENOTSUP,
                                 "CUPTI: cuptiActivityEnable(kind %d) failed: %s (%d): is an "
                                 "NVIDIA GPU visible and the driver loaded?",
                                 (int)kinds[i], result_str(e), (int)e);
        }
    }
    return 0;
}

int sps__cupti_stop(sps__cupti_t *c) {
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE) != c)
        return sps__err_fail(SPS_EINVAL, "CUPTI: this collector was not started");
    for (size_t i = 0; i < N_KINDS; i++) L.disable(kinds[i]);
    CUptiResult e = L.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (e != CUPTI_SUCCESS && L.flush) L.flush(NULL, 0, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    __atomic_store_n(&g_active, NULL, __ATOMIC_RELEASE);
    int rc = 0;
    if (!c->clock.identity) {
        take_pairs();
        rc = sps__clockmap_fit(&c->clock, g_pair_cupti, g_pair_host, g_n_pairs);
    }
    int j = sps__cupti_join(c);
    return rc ? rc : j;
}

void sps__cupti_push(uint64_t span_id) {
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
        L.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, span_id);
}

void sps__cupti_pop(void) {
    uint64_t last;
    if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
        L.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

#else /* !SPS_HAVE_CUPTI_HEADERS */

int sps__cupti_load(void) { return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS); }
const char *sps__cupti_lib_path(void) { return ""; }
int sps__cupti_unload(void) { return 0; }
int sps__cupti_start(sps__cupti_t *c) {
    (void)c;
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS);
}
int sps__cupti_stop(sps__cupti_t *c) {
    (void)c;
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS);
}
void sps__cupti_push(uint64_t span_id) { (void)span_id; }
void sps__cupti_pop(void) {}
int sps__cupti_probe(void) { return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS); }
int sps__cupti_sync(sps__cupti_t *c) {
    (void)c;
    return sps__err_fail(SPS_ENOTSUP, "CUPTI: " NO_HEADERS);
}

#endif /* SPS_HAVE_CUPTI_HEADERS */
