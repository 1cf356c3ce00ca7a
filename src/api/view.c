/* view.c -- the view object behind `spanscope view` (view.h): one or more
 * recordings, each through its level-of-detail index (formats/viewidx.h),
 * and the answers to the page's API (docs/view.md).
 *
 * Several files are shown side by side: their processes, threads, counter
 * series are numbered one after the other (file 0's first), their names
 * merged by text (a name's id is where it first appears), and times are
 * relative to the earliest span of any of them. */
#include "api/view.h"
#include "formats/html.h"
#include "formats/viewidx.h"
#include "api/api.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct vfile {
    char *path, *ixpath;
    sps__vix_t *x;
    const sps__vix_info_t *in;
    int built;
    uint32_t thread0, proc0, series0;
    uint32_t *gname;  /* local name -> view name */
} vfile_t;

struct sps__view {
    vfile_t *f;
    size_t nf;
    int64_t t0, t1;   /* absolute: earliest start, latest end */
    uint64_t nspans;
    char **names;     /* borrowed from the files' infos */
    size_t nnames, capnames;
    sps__htab_t name_ix;
    char (*colors)[8];
    uint32_t nthreads, nprocs, nseries, nlevels;
};

/* ------------------------------------------------------------------------ */
/* A growing text buffer                                                    */
/* ------------------------------------------------------------------------ */

/* util's byte buffer (sps__bytes_t), kept NUL-terminated: the bodies
 * are text but for /api/tiles. */
typedef sps__bytes_t sb_t;
#define sb_room sps__bytes_room
static void sb_put(sb_t *b, const void *p, size_t n) {
    sps__bytes_put(b, p, n);
    if (!b->oom && b->p) b->p[b->n] = 0;
}
static void sb_puts(sb_t *b, const char *s) { sb_put(b, s, strlen(s)); }
SPS__PRINTF(2, 3) static void sb_printf(sb_t *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sb_put(b, tmp, (size_t)n);
        return;
    }
    if (sb_room(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf((char *)b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}
static void sb_sink(void *ctx, const char *p, size_t n) { sb_put(ctx, p, n); }
/* s as a quoted JSON string, by the library's escaper. */
static void sb_json(sb_t *b, const char *s) {
    sb_put(b, "\"", 1);
    sps__json_escape(s, strlen(s), 0, sb_sink, b);
    sb_put(b, "\"", 1);
}
static void sb_i64(sb_t *b, int64_t v) { sb_printf(b, "%lld", (long long)v); }

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

/* "<dir>/<base>.<hash of the real path>.spsview", malloc'd. */
static char *cache_name(const char *dir, const char *path) {
    char *real = realpath(path, NULL);
    const char *key = real ? real : path;
    uint64_t h = sps__hash_bytes(key, strlen(key));
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(dir) + strlen(base) + 40;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s.%016llx.spsview", dir, base, (unsigned long long)h);
    free(real);
    return out;
}

/* mkdir -p of dir (a few levels); 0 or -1. */
static int make_dirs(const char *dir) {
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) && errno != EEXIST) return -1;
            buf[i] = c;
        }
    return 0;
}

/* The user's cache directory for indexes, malloc'd (NULL: none). */
static char *cache_dir(void) {
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char buf[4096];
    if (x && x[0] == '/') snprintf(buf, sizeof buf, "%s/spanscope", x);
    else if (home && home[0]) snprintf(buf, sizeof buf, "%s/.cache/spanscope", home);
    else return NULL;
    if (make_dirs(buf)) return NULL;
    return strdup(buf);
}

/* Where the index of path goes: beside it when its directory is
 * writable, else in the cache directory; in opts' directory when given. */
static char *index_path(const char *path, const sps__view_opts_t *o) {
    if (o && o->index_dir) {
        if (make_dirs(o->index_dir) == 0 || access(o->index_dir, W_OK) == 0)
            return cache_name(o->index_dir, path);
        return NULL;
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (access(dir, W_OK) == 0) {
        size_t n = strlen(path) + 9;
        char *p = malloc(n);
        if (p) snprintf(p, n, "%s.spsview", path);
        return p;
    }
    char *cd = cache_dir();
    if (!cd) return NULL;
    char *p = cache_name(cd, path);
    free(cd);
    return p;
}

/* Opens path's index, building it when missing, stale, corrupt or asked. */
static int open_file(vfile_t *f, const sps__view_opts_t *o) {
    sps__tl_format_t fmt = sps__tl_format_of(f->path);
    if (fmt == SPS__TL_UNKNOWN)
        return sps__err_fail(SPS_EINVAL, "%s: unknown format (use .h5, .json, .json.gz or .pftrace)",
                             f->path);
    sps__vix_src_t src;
    int rc = sps__vix_src_stat(f->path, &src);
    if (rc) return rc;
    if (!(f->ixpath = index_path(f->path, o)))
        return sps__err_fail(SPS_EPATH, "%s: no directory to keep its view index in", f->path);
    if (!(o && o->rebuild)) {
        rc = sps__vix_open(&f->x, f->ixpath, &src);
        if (rc == 0) {
            f->in = sps__vix_info(f->x);
            if (f->in->fmt == (uint32_t)fmt) return 0;
            sps__vix_close(f->x);
            f->x = NULL;
        } else if (rc == SPS_ENOMEM) {
            return rc;
        }
    }
    sps__err_clear();
    rc = sps__vix_build(f->path, fmt, f->ixpath, o ? o->progress : 0);
    if (rc == SPS_EPATH && !(o && o->index_dir)) { /* beside it failed: the cache */
        char *cd = cache_dir();
        char *p = cd ? cache_name(cd, f->path) : NULL;
        free(cd);
        if (p) {
            free(f->ixpath);
            f->ixpath = p;
            sps__err_clear();
            rc = sps__vix_build(f->path, fmt, f->ixpath, o ? o->progress : 0);
        }
    }
    if (rc) return rc;
    if ((rc = sps__vix_open(&f->x, f->ixpath, &src))) return rc;
    f->in = sps__vix_info(f->x);
    f->built = 1;
    return 0;
}

/* The view id of name s (interned). */
static int intern_name(sps__view_t *v, char *s, uint32_t *id) {
    uint64_t h = sps__hash_bytes(s, strlen(s));
    sps__hprobe_t p = sps__htab_probe(&v->name_ix, h);
    for (uint32_t i; sps__htab_next(&v->name_ix, &p, &i);)
        if (!strcmp(v->names[i], s)) {
            *id = i;
            return 0;
        }
    if (v->nnames >= UINT32_MAX - 1 || sps__htab_make_room(&v->name_ix, &p) ||
        sps__grow((void **)&v->names, &v->capnames, v->nnames, sizeof *v->names))
        return SPS_ENOMEM;
    sps__htab_put(&v->name_ix, &p, (uint32_t)v->nnames);
    v->names[v->nnames] = s;
    *id = (uint32_t)v->nnames++;
    return 0;
}

/* Sums of a window per view name. */
typedef struct nsum {
    uint64_t calls;
    int64_t total, self, min, max;
} nsum_t;

static int window_sums(sps__view_t *v, int64_t t0, int64_t t1, const uint8_t *thr_on,
                       sps__vix_sum_t **per_file);

static int by_total_desc(const void *pa, const void *pb, void *ctx) {
    const nsum_t *s = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (s[a].total != s[b].total) return s[a].total > s[b].total ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Colours per name: the static page's slots (by total time, then id). */
static int make_colors(sps__view_t *v) {
    sps__vix_sum_t **pf = calloc(v->nf, sizeof *pf);
    nsum_t *ns = calloc(v->nnames ? v->nnames : 1, sizeof *ns);
    uint32_t *ord = malloc((v->nnames ? v->nnames : 1) * sizeof *ord);
    v->colors = malloc((v->nnames ? v->nnames : 1) * sizeof *v->colors);
    int rc = (!pf || !ns || !ord || !v->colors) ? SPS_ENOMEM : 0;
    if (!rc) rc = window_sums(v, INT64_MIN, INT64_MAX, NULL, pf);
    for (size_t i = 0; !rc && i < v->nf; i++)
        for (size_t p = 0; p < v->f[i].in->npaths; p++) {
            nsum_t *s = &ns[v->f[i].gname[v->f[i].in->paths[p].name]];
            s->calls += pf[i][p].count;
            s->total += pf[i][p].total;
        }
    if (!rc) {
        size_t n = 0;
        for (size_t i = 0; i < v->nnames; i++)
            if (ns[i].calls) ord[n++] = (uint32_t)i;
        qsort_r(ord, n, sizeof *ord, by_total_desc, ns);
        size_t k = n;
        for (size_t i = 0; i < v->nnames; i++)
            if (!ns[i].calls) ord[k++] = (uint32_t)i;
        for (size_t i = 0; i < v->nnames; i++) {
            char buf[8];
            const char *c = sps__html_slot_color(buf, i);
            snprintf(v->colors[ord[i]], 8, "%s", c);
        }
    }
    for (size_t i = 0; pf && i < v->nf; i++) free(pf[i]);
    free(pf);
    free(ns);
    free(ord);
    return rc;
}

int sps__view_open(sps__view_t **out, const char *const *paths, size_t n,
                   const sps__view_opts_t *opts) {
    *out = NULL;
    if (!paths || n == 0) return sps__err_fail(SPS_EINVAL, "view: no file to open");
    sps__view_t *v = calloc(1, sizeof *v);
    if (!v || !(v->f = calloc(n, sizeof *v->f))) {
        free(v);
        return SPS_ENOMEM;
    }
    v->nf = n;
    int rc = 0;
    v->t0 = INT64_MAX;
    v->t1 = INT64_MIN;
    v->nlevels = 1;
    for (size_t i = 0; i < n && !rc; i++) {
        vfile_t *f = &v->f[i];
        if (!paths[i] || !(f->path = strdup(paths[i]))) {
            rc = paths[i] ? SPS_ENOMEM : sps__err_fail(SPS_EINVAL, "view: a NULL path");
            break;
        }
        if ((rc = open_file(f, opts))) break;
        const sps__vix_info_t *in = f->in;
        if ((uint64_t)v->nthreads + in->nthreads > UINT32_MAX / 2 ||
            (uint64_t)v->nprocs + in->nprocs > UINT32_MAX / 2 ||
            (uint64_t)v->nseries + in->nseries > UINT32_MAX / 2) {
            rc = sps__err_fail(SPS_ETOOBIG, "view: too many threads");
            break;
        }
        f->thread0 = v->nthreads;
        f->proc0 = v->nprocs;
        f->series0 = v->nseries;
        v->nthreads += (uint32_t)in->nthreads;
        v->nprocs += (uint32_t)in->nprocs;
        v->nseries += (uint32_t)in->nseries;
        if (in->nlevels > v->nlevels) v->nlevels = in->nlevels;
        v->nspans += in->nspans;
        if (in->nspans || in->ndev) {
            if (in->t_min < v->t0) v->t0 = in->t_min;
            if (in->t_max > v->t1) v->t1 = in->t_max;
        }
        for (size_t s = 0; s < in->nseries; s++) { /* counters widen the range */
            if (!in->series[s].n) continue;
            int64_t a, b;
            double d;
            if (sps__vix_sample(f->x, s, 0, &a, &d) ||
                sps__vix_sample(f->x, s, in->series[s].n - 1, &b, &d))
                continue; /* unreadable: its queries answer 500 */
            if (a < v->t0) v->t0 = a;
            if (b > v->t1) v->t1 = b;
        }
        if (!(f->gname = malloc((in->nnames ? in->nnames : 1) * sizeof *f->gname))) rc = SPS_ENOMEM;
        for (size_t k = 0; !rc && k < in->nnames; k++) rc = intern_name(v, in->names[k], &f->gname[k]);
    }
    if (v->t0 > v->t1) v->t0 = v->t1 = 0;
    if (!rc) rc = make_colors(v);
    if (rc) {
        if (rc == SPS_ENOMEM && !sps__err_msg()[0]) sps__err_set("view: out of memory");
        sps__view_close(v);
        return rc;
    }
    *out = v;
    return 0;
}

void sps__view_close(sps__view_t *v) {
    if (!v) return;
    for (size_t i = 0; i < v->nf; i++) {
        sps__vix_close(v->f[i].x);
        free(v->f[i].path);
        free(v->f[i].ixpath);
        free(v->f[i].gname);
    }
    free(v->f);
    free(v->names);
    sps__htab_free(&v->name_ix);
    free(v->colors);
    free(v);
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The value of key in query, percent-decoded into buf (cap bytes): 1, 0
 * when absent, -1 when too long or not decodable. */
static int qget(const char *query, const char *key, char *buf, size_t cap) {
    if (!query) return 0;
    size_t kn = strlen(key);
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > kn && !strncmp(p, key, kn) && p[kn] == '=') {
            size_t o = 0;
            for (size_t i = kn + 1; i < len; i++) {
                int c = (unsigned char)p[i];
                if (c == '+') c = ' ';
                else if (c == '%') {
                    if (i + 2 >= len) return -1;
                    int a = hexval(p[i + 1]), b = hexval(p[i + 2]);
                    if (a < 0 || b < 0) return -1;
                    c = a * 16 + b;
                    i += 2;
                }
                if (c == 0 || o + 1 >= cap) return -1;
                buf[o++] = (char)c;
            }
            buf[o] = 0;
            return 1;
        }
        if (len == kn && !strncmp(p, key, kn)) {
            buf[0] = 0;
            return 1;
        }
        p += len;
        if (*p == '&') p++;
    }
    return 0;
}

typedef struct req {
    sps__view_t *v;
    const char *query;
    char err[160];
    int64_t t0, t1;  /* absolute */
    uint32_t px;
    uint8_t *thr_on; /* NULL: all */
} req_t;

static int req_fail(req_t *r, const char *fmt, ...) SPS__PRINTF(2, 3);
static int req_fail(req_t *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* A relative time parameter as an absolute ns (floor or ceiling). */
static int get_time(req_t *r, const char *key, int need, int64_t dflt, int up, int64_t *out) {
    char buf[64];
    int g = qget(r->query, key, buf, sizeof buf);
    if (g < 0) return req_fail(r, "bad %s", key);
    if (g == 0) {
        if (need) return req_fail(r, "missing %s", key);
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end == buf || *end || errno == ERANGE || !isfinite(d) || fabs(d) > 4e18)
        return req_fail(r, "bad %s: not a time in ns", key);
    d = up ? ceil(d) : floor(d);
    int64_t rel = (int64_t)d;
    if ((rel > 0 && r->v->t0 > INT64_MAX - rel) || (rel < 0 && r->v->t0 < INT64_MIN - rel))
        return req_fail(r, "bad %s: out of range", key);
    *out = r->v->t0 + rel;
    return 0;
}

static int get_uint(req_t *r, const char *key, int need, long dflt, long lo, long hi, long *out) {
    char buf[32];
    int g = qget(r->query, key, buf, sizeof buf);
    if (g < 0) return req_fail(r, "bad %s", key);
    if (g == 0) {
        if (need) return req_fail(r, "missing %s", key);
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(buf, &end, 10);
    if (end == buf || *end || errno || x < lo || x > hi)
        return req_fail(r, "bad %s: an integer from %ld to %ld", key, lo, hi);
    *out = x;
    return 0;
}

/* threads=i,j,... into r->thr_on (absent: all). */
static int get_threads(req_t *r) {
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    if (!buf) return req_fail(r, "out of memory");
    int g = qget(r->query, "threads", buf, cap);
    if (g <= 0) {
        free(buf);
        return g < 0 ? req_fail(r, "bad threads") : 0;
    }
    r->thr_on = calloc(r->v->nthreads ? r->v->nthreads : 1, 1);
    if (!r->thr_on) {
        free(buf);
        return req_fail(r, "out of memory");
    }
    for (char *p = buf; *p;) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x >= (long)r->v->nthreads || (*end && *end != ',')) {
            free(buf);
            return req_fail(r, "bad threads: thread ids from 0 to %ld, comma-separated",
                            (long)r->v->nthreads - 1);
        }
        r->thr_on[x] = 1;
        p = *end ? end + 1 : end;
    }
    free(buf);
    return 0;
}

/* t0, t1 (required or the whole range), t0 < t1. */
static int get_range(req_t *r, int need) {
    if (get_time(r, "t0", need, r->v->t0, 0, &r->t0) ||
        get_time(r, "t1", need, r->v->t1 + 1, 1, &r->t1))
        return -1;
    if (r->t0 >= r->t1) return req_fail(r, "bad range: t0 must be below t1");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Answers                                                                  */
/* ------------------------------------------------------------------------ */

static const char *fmt_name(uint32_t fmt) {
    switch (fmt) {
    case SPS__TL_H5: return "h5";
    case SPS__TL_JSON: return "json";
    case SPS__TL_JSON_GZ: return "json.gz";
    case SPS__TL_PFTRACE: return "pftrace";
    default: return "unknown";
    }
}

static void put_double(sb_t *b, double d) {
    char buf[40];
    size_t n = sps__tl_fmt_double(buf, sizeof buf, d);
    if (n) sb_put(b, buf, n);
    else sb_puts(b, "null");
}

static int api_meta(sps__view_t *v, sb_t *b) {
    sb_puts(b, "{\"files\":[");
    for (size_t i = 0; i < v->nf; i++) {
        const vfile_t *f = &v->f[i];
        sb_puts(b, i ? ",{\"path\":" : "{\"path\":");
        sb_json(b, f->path);
        sb_printf(b, ",\"format\":\"%s\",\"nspans\":%llu,\"index\":{\"path\":", fmt_name(f->in->fmt),
                  (unsigned long long)f->in->nspans);
        sb_json(b, f->ixpath);
        sb_printf(b, ",\"bytes\":%llu,\"bytes_per_span\":", (unsigned long long)f->in->file_bytes);
        put_double(b, f->in->nspans ? (double)f->in->file_bytes / (double)f->in->nspans : 0.0);
        sb_printf(b, ",\"built\":%s,\"build_s\":", f->built ? "true" : "false");
        put_double(b, f->in->build_s);
        sb_puts(b, "}}");
    }
    sb_puts(b, "],\"t0_ns\":");
    sb_i64(b, v->t0);
    sb_puts(b, ",\"t1_rel_ns\":");
    sb_i64(b, v->t1 - v->t0);
    uint64_t ndev = 0;
    for (size_t i = 0; i < v->nf; i++) ndev += v->f[i].in->ndev;
    sb_printf(b, ",\"nspans\":%llu,\"ndevice\":%llu,\"procs\":[", (unsigned long long)v->nspans,
              (unsigned long long)ndev);
    int first = 1;
    for (size_t i = 0; i < v->nf; i++)
        for (size_t p = 0; p < v->f[i].in->nprocs; p++) {
            const sps__vix_proc_t *pr = &v->f[i].in->procs[p];
            sb_printf(b, "%s{\"id\":%u,\"name\":", first ? "" : ",", v->f[i].proc0 + (unsigned)p);
            sb_json(b, pr->name);
            int gpu = 0; /* a GPU: the process of a device stream */
            for (size_t t = v->f[i].in->dev_thread0; !gpu && t < v->f[i].in->nthreads; t++)
                gpu = v->f[i].in->threads[t].proc == p;
            sb_printf(b, ",\"rank\":%lld,\"pid\":%lld%s}", (long long)pr->rank,
                      (long long)pr->pid, gpu ? ",\"gpu\":true" : "");
            first = 0;
        }
    sb_puts(b, "],\"threads\":[");
    first = 1;
    for (size_t i = 0; i < v->nf; i++)
        for (size_t t = 0; t < v->f[i].in->nthreads; t++) {
            const sps__vix_thread_t *th = &v->f[i].in->threads[t];
            sb_printf(b, "%s{\"id\":%u,\"proc\":%u,\"name\":", first ? "" : ",",
                      v->f[i].thread0 + (unsigned)t, v->f[i].proc0 + th->proc);
            sb_json(b, th->name);
            sb_printf(b, ",\"depths\":%u,\"tid\":%lld%s}", th->depths, (long long)th->tid,
                      t >= v->f[i].in->dev_thread0 ? ",\"stream\":true" : "");
            first = 0;
        }
    sb_puts(b, "],\"names\":[");
    for (size_t i = 0; i < v->nnames; i++) {
        if (i) sb_put(b, ",", 1);
        sb_json(b, v->names[i]);
    }
    sb_puts(b, "],\"colors\":[");
    for (size_t i = 0; i < v->nnames; i++) sb_printf(b, "%s\"%s\"", i ? "," : "", v->colors[i]);
    sb_puts(b, "],\"counters\":[");
    first = 1;
    for (size_t i = 0; i < v->nf; i++)
        for (size_t s = 0; s < v->f[i].in->nseries; s++) {
            const sps__vix_series_t *se = &v->f[i].in->series[s];
            sb_printf(b, "%s{\"id\":%u,\"name\":", first ? "" : ",", v->f[i].series0 + (unsigned)s);
            sb_json(b, v->f[i].in->names[se->name]);
            sb_printf(b, ",\"proc\":%u}", v->f[i].proc0 + se->proc);
            first = 0;
        }
    sb_puts(b, "],\"levels\":[");
    for (uint32_t k = 0; k < v->nlevels; k++)
        sb_printf(b, "%s{\"level\":%u,\"bucket_ns\":%llu}", k ? "," : "", k,
                  (unsigned long long)sps__vix_bucket(k));
    sb_puts(b, "]}");
    return 200;
}

/* The file of view thread t; *local its thread there. */
static vfile_t *file_of_thread(sps__view_t *v, uint32_t t, uint32_t *local) {
    for (size_t i = v->nf; i-- > 0;)
        if (t >= v->f[i].thread0) {
            if (t - v->f[i].thread0 >= v->f[i].in->nthreads) return NULL;
            *local = t - v->f[i].thread0;
            return &v->f[i];
        }
    return NULL;
}

/* The tiles' query-time merge and output of one lane. */
typedef struct tiles {
    sb_t *b;
    int64_t vt0;
    double w;        /* ns per pixel */
    const uint32_t *gname;
    uint32_t n;
    int on;
    sps__vix_ent_t run;
    int64_t run_end;
} tiles_t;

static void tile_put(tiles_t *t, int64_t start, int64_t dur, uint32_t name, uint64_t count) {
    unsigned char rec[24];
    double s = (double)(start - t->vt0), d = (double)dur;
    uint32_t c = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    uint32_t nm = t->gname[name];
    memcpy(rec, &s, 8);
    memcpy(rec + 8, &d, 8);
    memcpy(rec + 16, &nm, 4);
    memcpy(rec + 20, &c, 4);
    sb_put(t->b, rec, 24);
    t->n++;
}

static void tile_flush(tiles_t *t) {
    if (!t->on) return;
    t->on = 0;
    tile_put(t, t->run.start, t->run_end - t->run.start, t->run.name, t->run.count);
}

/* An entry at least a pixel wide is drawn as itself; narrower ones merge
 * while their run fits in a pixel (Tracy's and Perfetto's merging). */
static int tile_ent(void *ctx, const sps__vix_ent_t *e) {
    tiles_t *t = ctx;
    int64_t end = e->start + e->dur;
    if ((double)e->dur >= t->w) {
        tile_flush(t);
        tile_put(t, e->start, e->dur, e->name, e->count);
    } else if (t->on && (double)(end - t->run.start) <= t->w) {
        if (end > t->run_end) t->run_end = end;
        t->run.count += e->count;
        if (e->longest > t->run.longest) {
            t->run.longest = e->longest;
            t->run.name = e->name;
        }
    } else {
        tile_flush(t);
        t->run = *e;
        t->run_end = end;
        t->on = 1;
    }
    return 0;
}

static int index_error(sb_t *b) {
    b->n = 0;
    sb_puts(b, "{\"error\":");
    sb_json(b, sps__err_msg());
    sb_puts(b, "}");
    return 500;
}

static void le32(sb_t *b, uint32_t x) {
    unsigned char p[4] = {(unsigned char)x, (unsigned char)(x >> 8), (unsigned char)(x >> 16),
                          (unsigned char)(x >> 24)};
    sb_put(b, p, 4);
}

static int api_tiles(req_t *r, sb_t *b) {
    sps__view_t *v = r->v;
    long px;
    if (get_range(r, 1) || get_uint(r, "px", 1, 0, 1, 16384, &px) || get_threads(r)) return 400;
    double npp = ((double)r->t1 - (double)r->t0) / (double)px;
    uint32_t level = 0;
    while (level + 1 < v->nlevels && (double)sps__vix_bucket(level + 1) <= npp) level++;
    le32(b, 0x54565053u);
    le32(b, 0);
    uint32_t nlanes = 0;
    for (uint32_t t = 0; t < v->nthreads; t++) {
        if (r->thr_on && !r->thr_on[t]) continue;
        uint32_t lt;
        vfile_t *f = file_of_thread(v, t, &lt);
        if (!f) continue;
        for (uint32_t d = 0; d < f->in->threads[lt].depths; d++) {
            int64_t lane = sps__vix_lane_find(f->x, lt, d);
            if (lane < 0) continue;
            uint32_t th, dp, nl;
            sps__vix_lane(f->x, (size_t)lane, &th, &dp, &nl);
            uint32_t lv = level < nl ? level : nl - 1;
            size_t at = b->n;
            le32(b, t);
            le32(b, d);
            le32(b, 0);
            le32(b, lv);
            tiles_t tt = {b, v->t0, npp, f->gname, 0, 0, {0}, 0};
            int rc = sps__vix_scan(f->x, (size_t)lane, lv, r->t0, r->t1, NULL, tile_ent, &tt);
            if (rc) return index_error(b);
            tile_flush(&tt);
            if (b->oom) return 500;
            if (!tt.n) {
                b->n = at;
                continue;
            }
            memcpy(b->p + at + 8, &tt.n, 4);
            nlanes++;
        }
    }
    if (b->oom) return 500;
    memcpy(b->p + 4, &nlanes, 4);
    return 200;
}

/* Per file, per path sums of the spans starting in [t0, t1) on the threads
 * on (NULL: all); per_file[i] malloc'd. */
static int window_sums(sps__view_t *v, int64_t t0, int64_t t1, const uint8_t *thr_on,
                       sps__vix_sum_t **per_file) {
    for (size_t i = 0; i < v->nf; i++) {
        vfile_t *f = &v->f[i];
        per_file[i] = calloc(f->in->npaths ? f->in->npaths : 1, sizeof **per_file);
        if (!per_file[i]) return SPS_ENOMEM;
        for (size_t l = 0; l < f->in->nlanes; l++) {
            uint32_t th, d, nl;
            sps__vix_lane(f->x, l, &th, &d, &nl);
            if (thr_on && !thr_on[f->thread0 + th]) continue;
            if (th >= f->in->dev_thread0) continue; /* device streams: not regions */
            int rc = sps__vix_window(f->x, l, t0, t1, per_file[i]);
            if (rc) return rc;
        }
    }
    return 0;
}

/* A node of the window's call tree (merged by path of names). */
typedef struct tnode {
    int32_t parent;
    uint32_t name;
    nsum_t s;
    uint32_t first, next; /* children list (UINT32_MAX: none), sorted later */
} tnode_t;

typedef struct tree {
    tnode_t *n;
    size_t len, cap;
    sps__htab_t ix;
} tree_t;

static int32_t tree_node(tree_t *t, int32_t parent, uint32_t name) {
    uint64_t h = sps__hash_pair32((uint32_t)parent, name);
    sps__hprobe_t p = sps__htab_probe(&t->ix, h);
    for (uint32_t i; sps__htab_next(&t->ix, &p, &i);)
        if (t->n[i].parent == parent && t->n[i].name == name) return (int32_t)i;
    if (t->len >= INT32_MAX || sps__htab_make_room(&t->ix, &p) ||
        sps__grow((void **)&t->n, &t->cap, t->len, sizeof *t->n))
        return -1;
    sps__htab_put(&t->ix, &p, (uint32_t)t->len);
    t->n[t->len] = (tnode_t){parent, name, {0, 0, 0, 0, 0}, UINT32_MAX, UINT32_MAX};
    return (int32_t)t->len++;
}

static void nsum_add(nsum_t *a, const sps__vix_sum_t *s) {
    if (!s->count) return;
    if (!a->calls || s->min < a->min) a->min = s->min;
    if (!a->calls || s->max > a->max) a->max = s->max;
    a->calls += s->count;
    a->total += s->total;
    a->self += s->self;
}

static int by_node_total(const void *pa, const void *pb, void *ctx) {
    const tnode_t *n = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (n[a].s.total != n[b].s.total) return n[a].s.total > n[b].s.total ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int by_name_total(const void *pa, const void *pb, void *ctx) {
    const nsum_t *s = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (s[a].total != s[b].total) return s[a].total > s[b].total ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int api_window(req_t *r, sb_t *b) {
    sps__view_t *v = r->v;
    if (get_range(r, 1) || get_threads(r)) return 400;
    sps__vix_sum_t **pf = calloc(v->nf, sizeof *pf);
    nsum_t *ns = calloc(v->nnames ? v->nnames : 1, sizeof *ns);
    tree_t tr = {0};
    int32_t *node = NULL;
    uint8_t *has = NULL;
    uint32_t *ord = NULL, *kids = NULL;
    int status = 200, rc = (!pf || !ns) ? SPS_ENOMEM : 0;
    if (!rc) rc = window_sums(v, r->t0, r->t1, r->thr_on, pf);
    uint64_t calls = 0;
    /* the tree: every path with calls in its subtree, under its view node */
    for (size_t i = 0; !rc && i < v->nf; i++) {
        const vfile_t *f = &v->f[i];
        size_t np = f->in->npaths;
        free(node);
        free(has);
        node = malloc((np ? np : 1) * sizeof *node);
        has = calloc(np ? np : 1, 1);
        if (!node || !has) {
            rc = SPS_ENOMEM;
            break;
        }
        for (size_t p = np; p-- > 0;) /* children have larger ids */
            if (pf[i][p].count || has[p]) {
                has[p] = 1;
                if (f->in->paths[p].parent != UINT32_MAX) has[f->in->paths[p].parent] = 1;
            }
        for (size_t p = 0; p < np && !rc; p++) {
            node[p] = -1;
            if (!has[p]) continue;
            uint32_t par = f->in->paths[p].parent;
            int32_t pn = par == UINT32_MAX ? -1 : node[par];
            uint32_t g = f->gname[f->in->paths[p].name];
            if ((node[p] = tree_node(&tr, pn, g)) < 0) {
                rc = SPS_ENOMEM;
                break;
            }
            nsum_add(&tr.n[node[p]].s, &pf[i][p]);
            nsum_add(&ns[g], &pf[i][p]);
            calls += pf[i][p].count;
        }
    }
    if (rc) {
        status = rc == SPS_ENOMEM ? 500 : index_error(b);
        if (rc == SPS_ENOMEM) {
            b->n = 0;
            sb_puts(b, "{\"error\":\"out of memory\"}");
        }
        goto done;
    }
    sb_puts(b, "{\"t0\":");
    sb_i64(b, r->t0 - v->t0);
    sb_puts(b, ",\"t1\":");
    sb_i64(b, r->t1 - v->t0);
    sb_printf(b, ",\"calls\":%llu,\"table\":[", (unsigned long long)calls);
    ord = malloc((v->nnames ? v->nnames : 1) * sizeof *ord);
    kids = malloc((tr.len ? tr.len : 1) * sizeof *kids);
    if (!ord || !kids) {
        b->n = 0;
        sb_puts(b, "{\"error\":\"out of memory\"}");
        status = 500;
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->nnames; i++)
        if (ns[i].calls) ord[n++] = (uint32_t)i;
    qsort_r(ord, n, sizeof *ord, by_name_total, ns);
    for (size_t i = 0; i < n; i++) {
        const nsum_t *s = &ns[ord[i]];
        sb_printf(b, "%s{\"name\":%u,\"calls\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,"
                     "\"min_ns\":%lld,\"max_ns\":%lld,\"mean_ns\":",
                  i ? "," : "", ord[i], (unsigned long long)s->calls, (long long)s->total,
                  (long long)s->self, (long long)s->min, (long long)s->max);
        put_double(b, (double)s->total / (double)s->calls);
        sb_put(b, "}", 1);
    }
    sb_puts(b, "],\"tree\":{\"name\":-1,\"children\":[");
    /* children lists, sorted by total: kids holds node ids grouped */
    for (size_t i = 0; i < tr.len; i++) kids[i] = (uint32_t)i;
    qsort_r(kids, tr.len, sizeof *kids, by_node_total, tr.n);
    uint32_t root_first = UINT32_MAX, root_last = UINT32_MAX;
    for (size_t i = 0; i < tr.len; i++) tr.n[i].first = tr.n[i].next = UINT32_MAX;
    {
        /* append in sorted order: keep a tail per parent in 'next' scan */
        uint32_t *tail = malloc((tr.len ? tr.len : 1) * sizeof *tail);
        if (!tail) {
            b->n = 0;
            sb_puts(b, "{\"error\":\"out of memory\"}");
            status = 500;
            goto done;
        }
        for (size_t i = 0; i < tr.len; i++) tail[i] = UINT32_MAX;
        for (size_t i = 0; i < tr.len; i++) {
            uint32_t k = kids[i];
            int32_t p = tr.n[k].parent;
            if (p < 0) {
                if (root_last == UINT32_MAX) root_first = k;
                else tr.n[root_last].next = k;
                root_last = k;
            } else {
                if (tail[p] == UINT32_MAX) tr.n[p].first = k;
                else tr.n[tail[p]].next = k;
                tail[p] = k;
            }
        }
        free(tail);
    }
    /* iterative depth-first output */
    uint32_t *stack = NULL;
    size_t sn = 0, scap = 0;
    uint32_t cur = root_first;
    int firstkid = 1;
    for (;;) {
        if (cur != UINT32_MAX) {
            const tnode_t *nd = &tr.n[cur];
            sb_printf(b, "%s{\"name\":%u,\"calls\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,"
                         "\"children\":[",
                      firstkid ? "" : ",", nd->name, (unsigned long long)nd->s.calls,
                      (long long)nd->s.total, (long long)nd->s.self);
            if (sps__grow((void **)&stack, &scap, sn, sizeof *stack)) {
                b->oom = 1;
                break;
            }
            stack[sn++] = cur;
            cur = nd->first;
            firstkid = 1;
            continue;
        }
        if (!sn) break;
        uint32_t up = stack[--sn];
        sb_puts(b, "]}");
        cur = tr.n[up].next;
        firstkid = 0;
    }
    free(stack);
    sb_puts(b, "]}}");
    if (b->oom) status = 500;
done:
    for (size_t i = 0; pf && i < v->nf; i++) free(pf[i]);
    free(pf);
    free(ns);
    free(node);
    free(has);
    free(ord);
    free(kids);
    free(tr.n);
    sps__htab_free(&tr.ix);
    return status;
}

typedef struct spanq {
    int64_t t;
    sps__vix_ent_t e;
    int found;
} spanq_t;

static int span_ent(void *ctx, const sps__vix_ent_t *e) {
    spanq_t *q = ctx;
    if (e->start <= q->t && (e->start + e->dur > q->t || (e->dur == 0 && e->start == q->t))) {
        q->e = *e;
        q->found = 1;
        return 1;
    }
    return 0;
}

/* Most device activities listed for one span (/api/span's "launched"). */
#define SPAN_LAUNCHED_MAX 1000u

/* {"name","thread","depth","start_ns","dur_ns","launch_ns"} of a span or
 * an activity (launch: absolute ns of the launch, the API call's start or
 * the activity's own). */
static void put_place(sps__view_t *v, const vfile_t *f, sb_t *b, uint32_t name, uint32_t thread,
                      uint32_t depth, int64_t start, int64_t end, int64_t launch) {
    sb_printf(b, "{\"name\":%u,\"thread\":%u,\"depth\":%u,\"start_ns\":", f->gname[name],
              f->thread0 + thread, depth);
    sb_i64(b, start - v->t0);
    sb_puts(b, ",\"dur_ns\":");
    sb_i64(b, end - start);
    sb_puts(b, ",\"launch_ns\":");
    sb_i64(b, launch - v->t0);
    sb_put(b, "}", 1);
}

/* A device activity's fields after its span's: "device" (kind, device,
 * stream, correlation, bytes, grid, block), "api" (the runtime/driver call,
 * null when none) and "launch" (its launching span, null when none).
 * 0, or the index's error code. */
static int span_device(sps__view_t *v, const vfile_t *f, uint32_t thread, uint32_t depth,
                       int64_t start, sb_t *b) {
    sps__vix_dev_t d;
    int rc = sps__vix_dev_at(f->x, thread, depth, start, &d);
    if (rc < 0) return rc;
    if (rc) return 0; /* cannot happen for a span of a device lane: no fields */
    static const char *const kinds[] = {"", "kernel", "memcpy", "memset"};
    sb_printf(b, ",\"device\":{\"kind\":\"%s\",\"device\":%lld,\"stream\":%lld,"
                 "\"correlation\":%lld,\"bytes\":%lld,\"grid\":[%u,%u,%u],"
                 "\"block\":[%u,%u,%u]}",
              kinds[d.kind], (long long)d.device, (long long)d.stream,
              (long long)d.correlation, (long long)d.bytes, d.grid[0], d.grid[1], d.grid[2],
              d.block[0], d.block[1], d.block[2]);
    sb_puts(b, ",\"api\":");
    if (d.api_name == UINT32_MAX) sb_puts(b, "null");
    else {
        sb_printf(b, "{\"name\":%u,\"thread\":", f->gname[d.api_name]);
        if (d.api_thread == UINT32_MAX) sb_puts(b, "null");
        else sb_printf(b, "%u", f->thread0 + d.api_thread);
        sb_puts(b, ",\"start_ns\":");
        sb_i64(b, d.api_start - v->t0);
        sb_puts(b, ",\"dur_ns\":");
        sb_i64(b, d.api_end - d.api_start);
        sb_put(b, "}", 1);
    }
    sb_puts(b, ",\"launch\":");
    if (d.lthread == UINT32_MAX) sb_puts(b, "null");
    else
        put_place(v, f, b, d.lname, d.lthread, d.ldepth, d.lstart, d.lend,
                  d.api_name != UINT32_MAX ? d.api_start : d.start);
    return 0;
}

/* A span's "launched": the device activities it launched (at most
 * SPAN_LAUNCHED_MAX, each with "launch_ns": where its launch lies, its API
 * call's start or its own) and "launched_total"; nothing when it launched
 * none.  0 or the index's code. */
static int span_launched(sps__view_t *v, const vfile_t *f, uint32_t thread, uint32_t depth,
                         int64_t start, sb_t *b) {
    if (!f->in->nrev) return 0;
    sps__vix_dev_t *d = malloc(SPAN_LAUNCHED_MAX * sizeof *d);
    if (!d) return SPS_ENOMEM;
    uint64_t total = 0;
    long n = sps__vix_dev_launched(f->x, thread, depth, start, d, SPAN_LAUNCHED_MAX, &total);
    if (n <= 0) { /* an error, or launched nothing: no fields */
        free(d);
        return (int)n;
    }
    sb_puts(b, ",\"launched\":[");
    for (long i = 0; i < n; i++) {
        if (i) sb_put(b, ",", 1);
        put_place(v, f, b, d[i].name, d[i].thread, d[i].depth, d[i].start, d[i].end,
                  d[i].api_name != UINT32_MAX ? d[i].api_start : d[i].start);
    }
    sb_printf(b, "],\"launched_total\":%llu", (unsigned long long)total);
    free(d);
    return 0;
}

static int api_span(req_t *r, sb_t *b) {
    sps__view_t *v = r->v;
    long thread, depth;
    int64_t t;
    if (get_uint(r, "thread", 1, 0, 0, (long)v->nthreads - 1, &thread) ||
        get_uint(r, "depth", 1, 0, 0, INT32_MAX, &depth) || get_time(r, "t", 1, 0, 0, &t))
        return 400;
    uint32_t lt;
    vfile_t *f = file_of_thread(v, (uint32_t)thread, &lt);
    int64_t lane = f ? sps__vix_lane_find(f->x, lt, (uint32_t)depth) : -1;
    spanq_t q = {t, {0}, 0};
    if (lane >= 0) {
        int rc = sps__vix_scan(f->x, (size_t)lane, 0, t, t == INT64_MAX ? t : t + 1, NULL,
                               span_ent, &q);
        if (rc < 0) return index_error(b);
    }
    if (!q.found) {
        sb_puts(b, "{\"error\":\"no span there\"}");
        return 404;
    }
    sb_printf(b, "{\"name\":%u,\"thread\":%ld,\"depth\":%ld,\"start_ns\":", f->gname[q.e.name],
              thread, depth);
    sb_i64(b, q.e.start - v->t0);
    sb_printf(b, ",\"dur_ns\":%lld,\"self_ns\":%lld,\"path\":[", (long long)q.e.dur,
              (long long)q.e.self);
    /* root .. it: collect upwards, print reversed */
    size_t np = f->in->npaths, k = 0;
    uint32_t *chain = malloc(((size_t)depth + 2) * sizeof *chain);
    if (!chain) return 500;
    for (uint32_t p = q.e.path; p != UINT32_MAX && p < np && k <= (size_t)depth + 1;
         p = f->in->paths[p].parent)
        chain[k++] = f->gname[f->in->paths[p].name];
    for (size_t i = k; i-- > 0;) sb_printf(b, "%s%u", i + 1 == k ? "" : ",", chain[i]);
    free(chain);
    sb_put(b, "]", 1);
    int rc = lt >= f->in->dev_thread0 ? span_device(v, f, lt, (uint32_t)depth, q.e.start, b)
                                      : span_launched(v, f, lt, (uint32_t)depth, q.e.start, b);
    if (rc) return index_error(b);
    sb_put(b, "}", 1);
    return 200;
}

typedef struct hit {
    int64_t start, dur;
    uint32_t name, thread, depth;
} hit_t;

typedef struct searchq {
    hit_t *v;
    size_t n, cap;
    size_t lane_n, limit;
    int64_t t0;
    uint32_t thread, depth;
    const uint32_t *gname;
    int oom;
} searchq_t;

static int search_ent(void *ctx, const sps__vix_ent_t *e) {
    searchq_t *q = ctx;
    if (e->start < q->t0) return 0;
    if (sps__grow((void **)&q->v, &q->cap, q->n, sizeof *q->v)) {
        q->oom = 1;
        return 1;
    }
    q->v[q->n++] = (hit_t){e->start, e->dur, q->gname[e->name], q->thread, q->depth};
    return ++q->lane_n >= q->limit ? 1 : 0;
}

static int hit_cmp(const void *pa, const void *pb) {
    const hit_t *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

/* Whether hay contains needle, ASCII case-insensitive. */
static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               (hay[i] == needle[i] ||
                ((unsigned char)hay[i] < 128 && (unsigned char)needle[i] < 128 &&
                 (hay[i] | 0x20) == (needle[i] | 0x20) && ((hay[i] | 0x20) >= 'a') &&
                 ((hay[i] | 0x20) <= 'z'))))
            i++;
        if (i == n) return 1;
    }
    return n == 0;
}

static int api_search(req_t *r, sb_t *b) {
    sps__view_t *v = r->v;
    char q[1024];
    long limit;
    int g = qget(r->query, "q", q, sizeof q);
    if (g <= 0) {
        req_fail(r, g < 0 ? "bad q" : "missing q");
        return 400;
    }
    if (!q[0]) {
        req_fail(r, "bad q: empty");
        return 400;
    }
    if (get_range(r, 0) || get_uint(r, "limit", 0, 100, 1, 10000, &limit)) return 400;
    uint8_t *on = calloc(v->nnames ? v->nnames : 1, 1);
    if (!on) return 500;
    sb_puts(b, "{\"names\":[");
    int any = 0;
    for (size_t i = 0; i < v->nnames; i++)
        if (contains_ci(v->names[i], q)) {
            on[i] = 1;
            sb_printf(b, "%s%zu", any ? "," : "", i);
            any = 1;
        }
    sb_puts(b, "],\"hits\":[");
    searchq_t sq = {0};
    sq.limit = (size_t)limit;
    sq.t0 = r->t0;
    int status = 200;
    for (size_t i = 0; any && i < v->nf && status == 200; i++) {
        vfile_t *f = &v->f[i];
        uint8_t *pon = calloc(f->in->npaths ? f->in->npaths : 1, 1);
        if (!pon) {
            status = 500;
            break;
        }
        int some = 0;
        for (size_t p = 0; p < f->in->npaths; p++)
            if (on[f->gname[f->in->paths[p].name]]) some = pon[p] = 1;
        sq.gname = f->gname;
        for (size_t l = 0; some && l < f->in->nlanes; l++) {
            uint32_t th, d, nl;
            sps__vix_lane(f->x, l, &th, &d, &nl);
            sq.thread = f->thread0 + th;
            sq.depth = d;
            sq.lane_n = 0;
            int rc = sps__vix_scan(f->x, l, 0, r->t0, r->t1, pon, search_ent, &sq);
            if (rc < 0) {
                free(pon);
                free(on);
                free(sq.v);
                return index_error(b);
            }
            if (sq.oom) status = 500;
        }
        free(pon);
    }
    if (status == 200) {
        if (sq.n) qsort(sq.v, sq.n, sizeof *sq.v, hit_cmp);
        for (size_t i = 0; i < sq.n && i < (size_t)limit; i++) {
            sb_printf(b, "%s{\"name\":%u,\"thread\":%u,\"depth\":%u,\"start_ns\":", i ? "," : "",
                      sq.v[i].name, sq.v[i].thread, sq.v[i].depth);
            sb_i64(b, sq.v[i].start - v->t0);
            sb_printf(b, ",\"dur_ns\":%lld}", (long long)sq.v[i].dur);
        }
        sb_puts(b, "]}");
    }
    free(sq.v);
    free(on);
    return status;
}

/* One column of a counter series as [t_rel,min,max,last]. */
typedef struct cpctx {
    sb_t *b;
    int64_t t0;
    int first;
} cpctx_t;

/* v in decimal (no printf: a counter answer has thousands of numbers). */
static void put_int(sb_t *b, int64_t v) {
    char buf[24], *e = buf + sizeof buf, *p = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    sb_put(b, p, (size_t)(e - p));
}

/* A counter value as put_double writes it (%.17g): an integral value
 * below 10^15 in magnitude is its digits there (counters mostly count
 * bytes, calls, items), written without printf. */
static void put_value(sb_t *b, double d) {
    if (d > -1e15 && d < 1e15 && d == (double)(int64_t)d && !(d == 0 && signbit(d)))
        put_int(b, (int64_t)d);
    else
        put_double(b, d);
}

static int counter_point(void *ctx, const sps__vix_cpoint_t *p) {
    cpctx_t *c = ctx;
    sb_puts(c->b, c->first ? "[" : ",[");
    put_int(c->b, p->t - c->t0);
    sb_put(c->b, ",", 1);
    put_value(c->b, p->min);
    sb_put(c->b, ",", 1);
    put_value(c->b, p->max);
    sb_put(c->b, ",", 1);
    put_value(c->b, p->last);
    sb_put(c->b, "]", 1);
    c->first = 0;
    return c->b->oom ? SPS_ENOMEM : 0;
}

/* Per series at most px points (min, max, last per pixel column), from
 * the series' coarsest level of detail whose bucket fits in a column
 * (formats/viewidx.h, sps__vix_counter_cols): O(px) records per series
 * whatever the zoom. */
static int api_counters(req_t *r, sb_t *b) {
    sps__view_t *v = r->v;
    long px;
    if (get_range(r, 1) || get_uint(r, "px", 1, 0, 1, 16384, &px)) return 400;
    sb_puts(b, "{\"series\":[");
    int firsts = 1;
    for (size_t i = 0; i < v->nf; i++) {
        vfile_t *f = &v->f[i];
        for (size_t s = 0; s < f->in->nseries; s++) {
            sb_printf(b, "%s{\"id\":%u,\"points\":[", firsts ? "" : ",", f->series0 + (unsigned)s);
            firsts = 0;
            cpctx_t c = {b, v->t0, 1};
            int rc = sps__vix_counter_cols(f->x, s, r->t0, r->t1, (uint32_t)px, 1, counter_point,
                                           &c, NULL);
            if (rc == SPS_ENOMEM) return 500;
            if (rc) return index_error(b);
            sb_puts(b, "]}");
        }
    }
    sb_puts(b, "]}");
    return b->oom ? 500 : 200;
}

int sps__view_handle(sps__view_t *v, const char *method, const char *path, const char *query,
                     char **body, size_t *len, const char **ctype) {
    sb_t b = {0};
    req_t r = {.v = v, .query = query};
    int status;
    *ctype = "application/json";
    if (!v || !path) {
        status = 400;
        snprintf(r.err, sizeof r.err, "bad request");
    } else if (method && strcmp(method, "GET")) {
        status = 405;
        snprintf(r.err, sizeof r.err, "method not allowed");
    } else if (!strcmp(path, "/api/meta")) {
        status = api_meta(v, &b);
    } else if (!strcmp(path, "/api/tiles")) {
        status = api_tiles(&r, &b);
        if (status == 200) *ctype = "application/octet-stream";
    } else if (!strcmp(path, "/api/window")) {
        status = api_window(&r, &b);
    } else if (!strcmp(path, "/api/span")) {
        status = api_span(&r, &b);
    } else if (!strcmp(path, "/api/search")) {
        status = api_search(&r, &b);
    } else if (!strcmp(path, "/api/counters")) {
        status = api_counters(&r, &b);
    } else {
        status = 404;
        snprintf(r.err, sizeof r.err, "unknown path");
    }
    free(r.thr_on);
    if (b.oom && status == 200) status = 500;
    if (status != 200 && (r.err[0] || b.oom || !b.n)) {
        free(b.p);
        b = (sb_t){0};
        sb_puts(&b, "{\"error\":");
        sb_json(&b, r.err[0] ? r.err : status == 500 ? "out of memory" : "error");
        sb_puts(&b, "}");
        *ctype = "application/json";
    }
    if (b.oom || !b.p) {
        free(b.p);
        static const char k_oom[] = "{\"error\":\"out of memory\"}";
        b.p = malloc(sizeof k_oom);
        if (b.p) memcpy(b.p, k_oom, sizeof k_oom);
        b.n = b.p ? sizeof k_oom - 1 : 0;
        *ctype = "application/json";
        status = 500;
    }
    *body = (char *)b.p;
    *len = b.n;
    return status;
}
