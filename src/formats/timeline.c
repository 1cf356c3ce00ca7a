/* timeline.c -- format dispatch for timeline writers and readers. */
#include "formats/timeline.h"
#include "formats/export.h" /* the writers' sample calls */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when s ends with suffix, ignoring ASCII case. */
static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    if (k > n) return 0;
    for (size_t i = 0; i < k; i++) {
        char a = s[n - k + i], b = suffix[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != b) return 0;
    }
    return 1;
}

sps__tl_format_t sps__tl_format_of(const char *path) {
    if (!path) return SPS__TL_UNKNOWN;
    if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) return SPS__TL_H5;
    if (ends_with(path, ".json.gz")) return SPS__TL_JSON_GZ;
    if (ends_with(path, ".json")) return SPS__TL_JSON;
    if (ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace") ||
        ends_with(path, ".pb"))
        return SPS__TL_PFTRACE;
    return SPS__TL_UNKNOWN;
}

/* ------------------------------------------------------------------------ */
/* Writers                                                                   */
/* ------------------------------------------------------------------------ */

struct sps__tlw {
    sps__tl_format_t fmt;
    void *impl;
};

int sps__tlw_open(sps__tlw_t **out, const char *path, sps__tl_format_t fmt,
                  const sps__tl_header_t *h) {
    *out = NULL;
    sps__tlw_t *w = calloc(1, sizeof *w);
    if (!w) return SPS_ENOMEM;
    w->fmt = fmt;
    int rc;
    switch (fmt) {
    case SPS__TL_JSON:
    case SPS__TL_JSON_GZ:
        rc = sps__cjw_open((sps__cjw_t **)&w->impl, path, fmt == SPS__TL_JSON_GZ, h);
        break;
    case SPS__TL_PFTRACE:
        rc = sps__pfw_open((sps__pfw_t **)&w->impl, path, h);
        break;
    default:
        rc = SPS_ENOTSUP; /* HDF5 output goes through the session writer */
    }
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int sps__tlw_span(sps__tlw_t *w, const sps__tl_span_t *s) {
    return w->fmt == SPS__TL_PFTRACE ? sps__pfw_span(w->impl, s)
                                     : sps__cjw_span(w->impl, s);
}

int sps__tlw_extra(sps__tlw_t *w, const char *members) {
    if (!w || !members) return SPS_EINVAL;
    return w->fmt == SPS__TL_PFTRACE ? 0 : sps__cjw_extra(w->impl, members);
}

int sps__tlw_samples(sps__tlw_t *w, const sps__tl_samples_t *s) {
    if (!w || !s) return SPS_EINVAL;
    return w->fmt == SPS__TL_PFTRACE ? sps__pfw_samples(w->impl, s)
                                     : sps__cjw_samples(w->impl, s);
}

int sps__tlw_device(sps__tlw_t *w, sps__tl_device_t *d) {
    if (!w || !d) return SPS_EINVAL;
    return w->fmt == SPS__TL_PFTRACE ? sps__pfw_device(w->impl, d)
                                     : sps__cjw_device(w->impl, d);
}

int sps__tlw_close(sps__tlw_t *w) {
    int rc = w->fmt == SPS__TL_PFTRACE ? sps__pfw_close(w->impl)
                                       : sps__cjw_close(w->impl);
    free(w);
    return rc;
}

void sps__tlw_abort(sps__tlw_t *w) {
    if (!w) return;
    if (w->fmt == SPS__TL_PFTRACE) sps__pfw_abort(w->impl);
    else sps__cjw_abort(w->impl);
    free(w);
}

/* ------------------------------------------------------------------------ */
/* Readers                                                                   */
/* ------------------------------------------------------------------------ */

struct sps__tlr {
    void *impl; /* starts with a sps__tlr_vt_t */
};

int sps__tlr_open(sps__tlr_t **out, const char *path, sps__tl_format_t fmt) {
    *out = NULL;
    sps__err_clear();
    void *impl = NULL;
    int rc;
    switch (fmt) {
    case SPS__TL_H5: rc = sps__h5tl_open(&impl, path); break;
    case SPS__TL_JSON: rc = sps__cjr_open(&impl, path, 0); break;
    case SPS__TL_JSON_GZ: rc = sps__cjr_open(&impl, path, 1); break;
    case SPS__TL_PFTRACE: rc = sps__pfr_open(&impl, path); break;
    default:
        sps__err_set("%s: unknown format (use .h5, .json, .json.gz or .pftrace)",
                           path ? path : "(null)");
        return SPS_EINVAL;
    }
    if (rc) return rc;
    sps__tlr_t *r = malloc(sizeof *r);
    if (!r) {
        ((const sps__tlr_vt_t *)impl)->free(impl);
        return SPS_ENOMEM;
    }
    r->impl = impl;
    *out = r;
    return 0;
}

const sps__tl_header_t *sps__tlr_header(const sps__tlr_t *r) {
    return ((const sps__tlr_vt_t *)r->impl)->header(r->impl);
}

int sps__tlr_next(sps__tlr_t *r, sps__tl_span_t *s) {
    return ((const sps__tlr_vt_t *)r->impl)->next(r->impl, s);
}

void sps__tlr_free(sps__tlr_t *r) {
    if (!r) return;
    ((const sps__tlr_vt_t *)r->impl)->free(r->impl);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* Counters and flows                                                        */
/* ------------------------------------------------------------------------ */

/* 1 when ts - base fits int64. */
static int rel_ok(int64_t ts, int64_t base) {
    int64_t d;
    return !__builtin_sub_overflow(ts, base, &d);
}

int sps__tl_check_extras(const sps__tl_header_t *h) {
    if ((h->ncounters && !h->counters) || (h->nflows && !h->flows))
        return SPS_EINVAL;
    for (size_t i = 0; i < h->ncounters; i++) {
        const sps__tl_counter_t *c = &h->counters[i];
        if (c->name >= h->nnames || c->proc >= h->nprocs ||
            !rel_ok(c->ts_ns, h->base_ns))
            return SPS_EINVAL;
    }
    for (size_t i = 0; i < h->nflows; i++) {
        const sps__tl_flow_t *f = &h->flows[i];
        if (f->name >= h->nnames || f->thread >= h->nthreads ||
            (f->phase != 's' && f->phase != 't' && f->phase != 'f') ||
            !rel_ok(f->ts_ns, h->base_ns))
            return SPS_EINVAL;
    }
    return 0;
}

/* The time key of record i of base. */
static int64_t key_at(const char *base, size_t i, size_t sz, size_t off) {
    int64_t t;
    memcpy(&t, base + i * sz + off, sizeof t);
    return t;
}

/* Merges the sorted runs [lo, mid) and [mid, hi) of a into t (stable). */
static void merge_runs(const char *a, char *t, size_t lo, size_t mid,
                       size_t hi, size_t sz, size_t off) {
    size_t i = lo, j = mid, k = lo;
    while (i < mid || j < hi) {
        int left = j >= hi || (i < mid && key_at(a, i, sz, off) <=
                                              key_at(a, j, sz, off));
        memcpy(t + k++ * sz, a + (left ? i++ : j++) * sz, sz);
    }
}

int sps__tl_sort_by_time(void *base, size_t n, size_t sz, size_t ts_off) {
    size_t i = 1;
    while (i < n && key_at(base, i - 1, sz, ts_off) <= key_at(base, i, sz, ts_off))
        i++;
    if (i >= n) return 0; /* already in order: the common case */
    char *a = base, *t = malloc(n * sz);
    if (!t) return SPS_ENOMEM;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            merge_runs(a, t, lo, mid, hi, sz, ts_off);
        }
        char *x = a; a = t; t = x;
    }
    if (a != base) {
        memcpy(base, a, n * sz);
        t = a;
    }
    free(t);
    return 0;
}

size_t sps__tl_fmt_double(char *buf, size_t cap, double v) {
    if (!isfinite(v) || cap < 32) return 0;
    int n = snprintf(buf, cap, "%.17g", v);
    if (n <= 0 || (size_t)n >= cap) return 0;
    for (int i = 0; i < n; i++)
        if (buf[i] == ',') buf[i] = '.'; /* a locale's decimal comma */
    return (size_t)n;
}
