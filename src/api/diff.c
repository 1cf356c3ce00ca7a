/*
 * diff.c -- the comparison of two recordings (api.h, sps__diff_write):
 * what got slower or faster, region by region; the analysis and the table
 * behind `spanscope diff A B`.
 *
 * Each file (any format the timeline readers know: .h5, .json, .json.gz,
 * .pftrace) is read as a stream of spans.  Regions are matched by name.
 * Per region and file the one fold (model/fold.c: sps__fold_tl) gives the
 * call count, the total, the mean and the variance of the per-call
 * durations and the self time, in one pass, O(regions + threads x depth)
 * memory, and a histogram of the per-call durations (model/hist.c, a few
 * KiB a region and file).  The verdict on a region compares the per-call
 * *medians*, tested twice: Mann-Whitney's rank test on the histograms,
 * and the medians' difference over their standard errors from each run's
 * drift (the batch-medians method: a run's calls in start order cut into
 * up to 16 batches, the spread of the batches' medians; warm-up, drift
 * and bursts of interference make neighbouring calls alike, so a run's
 * median wanders further than its calls' spread says).  Both |z| > 3 and
 * a change of the median of at least threshold percent give "slower" or
 * "faster", anything else "~" (within the spread or the drift, or too
 * small to matter).
 *
 * Why not the means (Welch's t, before issue 12): per-call durations are
 * heavy-tailed and their outliers (interrupts, page faults, preemption)
 * come in bursts, so two runs of one workload have means further apart
 * than their standard errors say; identical LULESH runs read TimeIncrement
 * 165 -> 129 ns, t = -4.5, "faster".  A few outliers move the median and
 * the ranks by a few calls' worth, however long they are.  The table
 * still shows the totals (dtotal, dself) every call counts in.

 */
#include "api/api.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |z| above this is a significant difference of the per-call durations
 * (Mann-Whitney's normal score, and the medians' difference over their
 * batch-medians standard errors). */
#define Z_SIGNIFICANT 3.0
/* Batches of a run's calls for its drift (rstat_t). */
#define BATCHES_MAX 16

/* The sort keys, indexed by sps__diff_sort_t. */
static const char *const k_diff_keys[] = {"total", "per-call", "name"};

int sps__diff_sort_parse(const char *key, sps__diff_sort_t *out) {
    for (size_t i = 0; key && i < sizeof k_diff_keys / sizeof *k_diff_keys; i++)
        if (strcmp(key, k_diff_keys[i]) == 0) {
            *out = (sps__diff_sort_t)i;
            return 0;
        }
    return SPS_EINVAL;
}

/* One region's statistics in one file: the fold's accumulator, and what
 * the table reads of it (stat_fill). */
typedef struct rstat {
    sps__acc_t acc;
    uint64_t n;        /* calls */
    double mean, m2;   /* mean and sum of squared deviations (ns) */
    int64_t total;     /* ns */
    int64_t self;      /* ns */
    sps__hist_t hist;  /* per-call durations */
    double median;     /* ns, NaN without calls */
    /* The run's drift (batch medians): its calls in start order cut into
     * batches of bsize calls, at most BATCHES_MAX (two neighbours merge
     * when full, bsize doubles), each batch's histogram. */
    sps__hist_t batch[BATCHES_MAX];
    uint32_t nbatch;
    uint64_t bsize;
    double drift_se;   /* standard error of the median from the batches' spread */
} rstat_t;

/* A region (by name) and its statistics in A and B. */
typedef struct region {
    char *name;
    rstat_t st[2];
} region_t;

/* The regions of both files, in the order first seen, with an index by
 * name (util.h: items are indexes into v). */
typedef struct regions {
    region_t *v;
    size_t n, cap;
    sps__htab_t index;
} regions_t;

/* ------------------------------------------------------------------------ */
/* Arithmetic                                                                */
/* ------------------------------------------------------------------------ */

/* Adds a call of d ns to s's batches (batch_add's doubling).  0 or
 * SPS_ENOMEM. */
static int batch_add(rstat_t *s, uint64_t d) {
    if (!s->bsize) s->bsize = 1;
    if (!s->nbatch || s->batch[s->nbatch - 1].n >= s->bsize) {
        if (s->nbatch == BATCHES_MAX) { /* neighbours merge: half as many, twice as long */
            for (uint32_t i = 0; i < BATCHES_MAX / 2; i++) {
                sps__hist_t *x = &s->batch[2 * i], *y = &s->batch[2 * i + 1];
                if (sps__hist_merge(x, y)) return SPS_ENOMEM;
                sps__hist_free(y);
                if (i != 2 * i) {
                    s->batch[i] = *x;
                    memset(x, 0, sizeof *x);
                }
            }
            s->nbatch = BATCHES_MAX / 2;
            s->bsize *= 2;
        }
        if (s->nbatch == 0 || s->batch[s->nbatch - 1].n >= s->bsize) s->nbatch++;
    }
    return sps__hist_add(&s->batch[s->nbatch - 1], d);
}

/* The standard error of s's median from the spread of its batches'
 * medians (the batch-medians method: calls of one run are not
 * independent -- warm-up, drift, bursts of interference -- so their own
 * spread understates how far a run's median wanders; batches of
 * neighbouring calls carry that wandering).  A last batch under half
 * full is left out.  0 with fewer than 2 batches. */
static double batch_se(const rstat_t *s) {
    double med[BATCHES_MAX], sum = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nbatch; i++)
        if (i + 1 < s->nbatch || 2 * s->batch[i].n >= s->bsize) {
            med[k] = sps__hist_quantile(&s->batch[i], 0.5);
            sum += med[k++];
        }
    if (k < 2) return 0;
    double mean = sum / k, ss = 0;
    for (uint32_t i = 0; i < k; i++) ss += (med[i] - mean) * (med[i] - mean);
    return sqrt(ss / (k - 1) / k);
}

/* Fills what the table reads of s from its accumulator. */
static void stat_fill(rstat_t *s) {
    s->n = s->acc.count;
    sps__acc_moments(&s->acc, &s->mean, &s->m2);
    s->total = s->acc.total > INT64_MAX ? INT64_MAX : (int64_t)s->acc.total;
    s->self = s->acc.self > INT64_MAX ? INT64_MAX : (int64_t)s->acc.self;
    s->median = sps__hist_quantile(&s->hist, 0.5);
    s->drift_se = batch_se(s);
}


/* ------------------------------------------------------------------------ */
/* Regions by name                                                           */
/* ------------------------------------------------------------------------ */

/* The index of the region called name in t, added if new.  Returns the
 * index or -1 (out of memory). */
static int64_t regions_intern(regions_t *t, const char *name) {
    sps__hprobe_t p = sps__htab_probe(&t->index, sps__hash_bytes(name, strlen(name)));
    for (uint32_t i; sps__htab_next(&t->index, &p, &i);)
        if (!strcmp(t->v[i].name, name)) return i;
    if (t->n >= UINT32_MAX - 1) return -1; /* the reader keeps index + 1 */
    if (sps__grow((void **)&t->v, &t->cap, t->n, sizeof *t->v) ||
        sps__htab_make_room(&t->index, &p))
        return -1;
    region_t *r = &t->v[t->n];
    memset(r, 0, sizeof *r);
    if (!(r->name = strdup(name))) return -1;
    sps__htab_put(&t->index, &p, (uint32_t)t->n);
    return (int64_t)t->n++;
}

/* Frees everything t owns. */
static void regions_free(regions_t *t) {
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        for (int side = 0; side < 2; side++) {
            sps__hist_free(&t->v[i].st[side].hist);
            for (uint32_t b = 0; b < BATCHES_MAX; b++) sps__hist_free(&t->v[i].st[side].batch[b]);
        }
    }
    free(t->v);
    sps__htab_free(&t->index);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

/* The state of reading one file. */
typedef struct reader {
    regions_t *t;
    int side;              /* 0: A, 1: B */
    const sps__tl_header_t *h;
    uint32_t *reg_of;      /* header name id -> region index + 1, 0 unseen */
    sps__fold_tl_t fold;   /* per header name and thread */
    uint64_t spans;
    int bad;               /* a span the reader let through is invalid */
} reader_t;

/* Gives span s to the fold.  Returns 0 or a negative SPS_E* code. */
static int add_span(reader_t *rd, const sps__tl_span_t *s) {
    if (s->name >= rd->h->nnames || s->thread >= rd->h->nthreads ||
        s->end_ns < s->start_ns) {
        rd->bad = 1;
        return SPS_EFORMAT;
    }
    if (!rd->reg_of[s->name]) {
        int64_t k = regions_intern(rd->t, rd->h->names[s->name]);
        if (k < 0) return SPS_ENOMEM;
        rd->reg_of[s->name] = (uint32_t)k + 1;
    }
    int64_t depth = sps__fold_tl_add(&rd->fold, s->thread, s->name, s->start_ns, s->end_ns, s->prior_ns);
    if (depth < 0) return (int)depth;
    rstat_t *st = &rd->t->v[rd->reg_of[s->name] - 1].st[rd->side];
    uint64_t d = (uint64_t)(s->end_ns - s->start_ns);
    if (sps__hist_add(&st->hist, d) || batch_add(st, d)) return SPS_ENOMEM;
    rd->spans++;
    return 0;
}

/* Adds the fold's statistics of every name of the file to side `side` of
 * its region. */
static void take_stats(reader_t *rd) {
    sps__fold_tl_finish(&rd->fold);
    for (size_t i = 0; i < rd->h->nnames; i++)
        if (rd->reg_of[i] && rd->fold.acc[i].count)
            sps__acc_merge(&rd->t->v[rd->reg_of[i] - 1].st[rd->side].acc, &rd->fold.acc[i]);
}

/* Reads every span of path into side `side` of t, calling o's hooks
 * around the reading.  Returns 0 or an SPS_E* code with the one-line
 * reason, naming the file, in the error channel (util.h). */
static int read_file(regions_t *t, int side, const char *path,
                     const sps__diff_opts_t *o) {
    sps__tl_format_t fmt = sps__tl_format_of(path);
    if (fmt == SPS__TL_UNKNOWN)
        return sps__err_fail(SPS_EINVAL, "%s: unknown format (.h5, .json, "
                             ".json.gz, .pftrace)", path);
    if (o->reading) o->reading(path);
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, fmt);
    if (rc) return rc; /* the reader's message names the file */
    if (o->read_done) o->read_done(); /* the rest is bounded work */
    reader_t rd = {.t = t, .side = side, .h = sps__tlr_header(r)};
    rd.reg_of = calloc(rd.h->nnames ? rd.h->nnames : 1, sizeof *rd.reg_of);
    if (!rd.reg_of || sps__fold_tl_init(&rd.fold, rd.h->nthreads, rd.h->nnames, 0))
        rc = SPS_ENOMEM;
    sps__tl_span_t s;
    while (rc == 0 && (rc = sps__tlr_next(r, &s)) > 0) rc = add_span(&rd, &s);
    if (rc == 0) take_stats(&rd);
    if (rd.bad)
        sps__err_set("%s: span %llu: name, thread or interval out of range",
                     path, (unsigned long long)rd.spans);
    else if (rc && rc != SPS_EFORMAT) /* SPS_EFORMAT: the reader's message */
        sps__err_set("%s: %s", path, sps_strerror(rc));
    sps__fold_tl_free(&rd.fold);
    free(rd.reg_of);
    sps__tlr_free(r);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Verdicts                                                                  */
/* ------------------------------------------------------------------------ */

/* One row of the table. */
typedef struct row {
    const region_t *r;
    double dpc;         /* change of the median B vs A, percent (NaN: none) */
    double z;           /* Mann-Whitney's z (B slower > 0), NaN when undefined */
    const char *verdict;
    char note[64];
} row_t;

/* Fills the verdict of row w: the change of the median per-call time,
 * significant by Mann-Whitney's rank test on the two histograms. */
static void verdict(row_t *w, double threshold) {
    const rstat_t *a = &w->r->st[0], *b = &w->r->st[1];
    w->z = NAN;
    w->dpc = NAN;
    if (!a->n || !b->n) {
        w->verdict = a->n ? "only in A" : "only in B";
        return;
    }
    if (a->median > 0) w->dpc = 100.0 * (b->median - a->median) / a->median;
    w->verdict = "~";
    if (a->n < 2 || b->n < 2) {
        snprintf(w->note, sizeof w->note, "too few calls to tell");
        return;
    }
    w->z = sps__hist_mann_whitney_z(&a->hist, &b->hist);
    if (!(fabs(w->z) > Z_SIGNIFICANT)) {
        snprintf(w->note, sizeof w->note, "within run-to-run spread (|z|=%.1f)",
                 fabs(w->z));
        return;
    }
    double d = b->median - a->median;
    double se = sqrt(a->drift_se * a->drift_se + b->drift_se * b->drift_se);
    double zd = se > 0 ? d / se : d == 0 ? 0.0 : d > 0 ? INFINITY : -INFINITY;
    if (!(fabs(zd) > Z_SIGNIFICANT)) { /* the runs' medians wander this much */
        snprintf(w->note, sizeof w->note, "within the runs' drift (|z|=%.1f)", fabs(zd));
        return;
    }
    double rel = w->dpc == w->dpc ? fabs(w->dpc) : INFINITY;
    if (rel < threshold || d == 0 || (d > 0) != (w->z > 0)) {
        snprintf(w->note, sizeof w->note, "median within %g%% threshold (z=%+.1f)",
                 threshold, w->z);
        return;
    }
    w->verdict = d > 0 ? "slower" : "faster";
    if (isinf(zd)) snprintf(w->note, sizeof w->note, "z=%+.1f, drift z=%sinf", w->z,
                            d > 0 ? "+" : "-");
    else snprintf(w->note, sizeof w->note, "z=%+.1f, drift z=%+.1f", w->z, zd);
}

/* |total B - total A| of a row, as a double (no overflow). */
static double dtotal(const row_t *w) {
    return fabs((double)w->r->st[1].total - (double)w->r->st[0].total);
}

/* |median B - median A| of a row (a missing side counts as 0). */
static double dmedian(const row_t *w) {
    double a = w->r->st[0].n ? w->r->st[0].median : 0, b = w->r->st[1].n ? w->r->st[1].median : 0;
    return fabs(b - a);
}

/* Orders rows by the sort key (largest change first), then by name
 * (qsort_r; ctx points to the sps__diff_sort_t). */
static int row_cmp(const void *x, const void *y, void *ctx) {
    const row_t *a = x, *b = y;
    sps__diff_sort_t by = *(const sps__diff_sort_t *)ctx;
    double ka = 0, kb = 0;
    if (by == SPS__DIFF_BY_TOTAL) ka = dtotal(a), kb = dtotal(b);
    else if (by == SPS__DIFF_BY_PERCALL) ka = dmedian(a), kb = dmedian(b);
    if (ka != kb) return ka > kb ? -1 : 1;
    return strcmp(a->r->name, b->r->name);
}

/* ------------------------------------------------------------------------ */
/* Printing                                                                  */
/* ------------------------------------------------------------------------ */

/* Formats ns (a double) with a human unit: "812 ns", "12.35 us",
 * "4.20 ms", "1.204 s". */
static void fmt_time(char *buf, size_t cap, double v) {
    double a = fabs(v);
    if (a < 1e3) snprintf(buf, cap, "%.0f ns", v);
    else if (a < 1e6) snprintf(buf, cap, "%.2f us", v / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%.2f ms", v / 1e6);
    else if (a < 1e13) snprintf(buf, cap, "%.3f s", v / 1e9);
    else snprintf(buf, cap, "%.3g s", v / 1e9);
}

/* Formats the change from a to b in percent ("-" when a is 0). */
static void fmt_delta(char *buf, size_t cap, double a, double b) {
    if (a <= 0) snprintf(buf, cap, b > 0 ? "new" : "-");
    else snprintf(buf, cap, "%+.1f%%", 100.0 * (b - a) / a);
}

/* Prints one side's calls, total and per-call cells (or dashes). */
static void side_cells(const rstat_t *s, char cells[3][24]) {
    if (!s->n) {
        for (int i = 0; i < 3; i++) snprintf(cells[i], 24, "-");
        return;
    }
    snprintf(cells[0], 24, "%llu", (unsigned long long)s->n);
    fmt_time(cells[1], 24, (double)s->total);
    fmt_time(cells[2], 24, s->median);
}

/* Prints the table of rows w[0..n) to fp. */
static void print_table(FILE *fp, const row_t *w, size_t n, size_t name_w) {
    fprintf(fp, "%-*s %9s %9s %11s %11s %9s %9s %11s %11s %9s  %-9s %s\n",
           (int)name_w, "region", "calls A", "calls B", "total A", "total B",
           "dtotal", "dself", "median A", "median B", "dmedian",
           "verdict", "");
    for (size_t i = 0; i < n; i++) {
        const region_t *r = w[i].r;
        char ca[3][24], cb[3][24], dt[24], ds[24], dp[24];
        side_cells(&r->st[0], ca);
        side_cells(&r->st[1], cb);
        if (r->st[0].n && r->st[1].n) {
            fmt_delta(dt, sizeof dt, (double)r->st[0].total, (double)r->st[1].total);
            fmt_delta(ds, sizeof ds, (double)r->st[0].self, (double)r->st[1].self);
            fmt_delta(dp, sizeof dp, r->st[0].median, r->st[1].median);
        } else {
            snprintf(dt, sizeof dt, "-");
            snprintf(ds, sizeof ds, "-");
            snprintf(dp, sizeof dp, "-");
        }
        /* the name column of the summary table (util.h), so both tables
         * cut and clean names alike */
        sps__utf8_put_cell(fp, 0, *r->name ? r->name : "(empty)", name_w);
        fprintf(fp, " %9s %9s %11s %11s %9s %9s %11s %11s %9s  %-9s %s\n", ca[0],
               cb[0], ca[1], cb[1], dt, ds, ca[2], cb[2], dp, w[i].verdict,
               w[i].note);
    }
}

/* Prints the comparison of the regions in t (files a and b) to fp.
 * Returns 0 or SPS_ENOMEM. */
static int print_diff(FILE *fp, const regions_t *t, const char *a,
                      const char *b, const sps__diff_opts_t *o) {
    row_t *w = calloc(t->n ? t->n : 1, sizeof *w);
    if (!w) return SPS_ENOMEM;
    size_t name_w = 6, nslow = 0, nfast = 0, nonly[2] = {0, 0};
    for (size_t i = 0; i < t->n; i++) {
        w[i].r = &t->v[i];
        verdict(&w[i], o->threshold);
        size_t nw = sps__utf8_width(t->v[i].name);
        if (nw > name_w) name_w = nw;
        nslow += !strcmp(w[i].verdict, "slower");
        nfast += !strcmp(w[i].verdict, "faster");
        if (!t->v[i].st[1].n) nonly[0]++;
        if (!t->v[i].st[0].n) nonly[1]++;
    }
    if (name_w > 40) name_w = 40;
    qsort_r(w, t->n, sizeof *w, row_cmp, (void *)&o->sort);
    size_t shown = o->top && o->top < t->n ? o->top : t->n;
    if (o->nslower) *o->nslower = nslow;
    fprintf(fp, "A: %s\nB: %s\n\n", a, b);
    if (!t->n) fprintf(fp, "(no regions in either file)\n");
    else print_table(fp, w, shown, name_w);
    if (shown < t->n) fprintf(fp, "... %zu more region%s (--top)\n", t->n - shown,
                             t->n - shown == 1 ? "" : "s");
    fprintf(fp, "\n%zu slower, %zu faster, %zu only in A, %zu only in B, %zu "
           "unchanged (~)\n", nslow, nfast, nonly[0], nonly[1],
           t->n - nslow - nfast - nonly[0] - nonly[1]);
    fprintf(fp, "verdict: the median per-call time, tested with Mann-Whitney's rank "
           "test (outliers do not sway it); slower/faster when |z| > %g and "
           "|dmedian| >= %g%%, ~ when the change is within run-to-run spread "
           "or below the threshold.\n", Z_SIGNIFICANT, o->threshold);
    free(w);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Values per region (/values of .h5 inputs)                                 */
/* ------------------------------------------------------------------------ */

/* v's own sum of value `name` for region `region` over its ranks (peaks:
 * the largest); 0 and *found unchanged when it has none. */
static int64_t value_sum(const sps__h5r_values_t *v, const char *region, const char *name,
                         int *found) {
    size_t k = 0;
    while (k < v->nnames && strcmp(v->names[k], name)) k++;
    if (k == v->nnames) return 0;
    int peak = !strcmp(name, "peak_bytes");
    int64_t sum = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->regions[i], region)) continue;
        int64_t x = v->own[i * v->nnames + k];
        sum = peak ? (x > sum ? x : sum) : sum + x;
        *found = 1;
    }
    return sum;
}

/* Prints, when either file has /values, each value of each region in A
 * and B (own sums over the ranks) and the change: what a run allocated or
 * counted, beside how long it took.  Files that are not HDF5, or have no
 * values, print nothing.  Returns 0 or SPS_ENOMEM. */
static int print_values_diff(FILE *fp, const char *a, const char *b) {
    sps__h5r_values_t v[2];
    int ok0 = sps__h5r_values(a, &v[0]) == 0, ok1 = sps__h5r_values(b, &v[1]) == 0;
    if (!ok0) memset(&v[0], 0, sizeof v[0]);
    if (!ok1) memset(&v[1], 0, sizeof v[1]);
    if (!v[0].n && !v[1].n) {
        sps__h5r_values_free(&v[0]);
        sps__h5r_values_free(&v[1]);
        return 0;
    }
    fprintf(fp, "\nValues per region (own, summed over ranks; peak_bytes: the largest)\n");
    fprintf(fp, "%-28s  %-16s  %16s  %16s  %9s\n", "region", "value", "A", "B", "change");
    for (int side = 0; side < 2; side++) {
        const sps__h5r_values_t *x = &v[side];
        for (size_t i = 0; i < x->n; i++) {
            int first = 1; /* a region once: at its first row of the first file having it */
            for (size_t j = 0; j < i; j++)
                if (!strcmp(x->regions[j], x->regions[i])) first = 0;
            for (size_t j = 0; side == 1 && first && j < v[0].n; j++)
                if (!strcmp(v[0].regions[j], x->regions[i])) first = 0;
            if (!first) continue;
            for (size_t k = 0; k < x->nnames; k++) {
                const char *name = x->names[k];
                if (!strcmp(name, "allocs") || !strcmp(name, "frees")) continue;
                int fa = 0, fb = 0;
                int64_t va = value_sum(&v[0], x->regions[i], name, &fa);
                int64_t vb = value_sum(&v[1], x->regions[i], name, &fb);
                char ca[24], cb[24], cd[24];
                snprintf(ca, sizeof ca, fa ? "%lld" : "-", (long long)va);
                snprintf(cb, sizeof cb, fb ? "%lld" : "-", (long long)vb);
                fmt_delta(cd, sizeof cd, fa ? (double)va : 0, fb ? (double)vb : 0);
                sps__utf8_put_cell(fp, 0, x->regions[i], 28);
                fprintf(fp, "  %-16.16s  %16s  %16s  %9s\n", name, ca, cb, cd);
            }
        }
    }
    sps__h5r_values_free(&v[0]);
    sps__h5r_values_free(&v[1]);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                            */
/* ------------------------------------------------------------------------ */

int sps__diff_write(FILE *fp, const char *a, const char *b,
                    const sps__diff_opts_t *o) {
    if (!fp || !a || !b || !o)
        return sps__err_fail(SPS_EINVAL, "no files, output or options");
    regions_t t = {0};
    int rc = read_file(&t, 0, a, o);
    if (!rc) rc = read_file(&t, 1, b, o);
    for (size_t i = 0; !rc && i < t.n; i++) {
        stat_fill(&t.v[i].st[0]);
        stat_fill(&t.v[i].st[1]);
    }
    if (!rc && (rc = print_diff(fp, &t, a, b, o)))
        sps__err_set("%s", sps_strerror(rc));
    if (!rc) print_values_diff(fp, a, b);
    regions_free(&t);
    if (!rc && (fflush(fp) != 0 || ferror(fp)))
        rc = sps__err_fail(SPS_EIO, "writing the comparison failed");
    return rc;
}
