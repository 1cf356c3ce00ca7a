/* report.c -- the sections of a report after its tables (src/api/report.c
 * puts the report together): per counter of a file its samples, min,
 * mean, max and latest value; the values per region; and where the time
 * went by the stack samples (per region its self samples by leaf
 * function, through the views of folded.h). */
#include "formats/formats.h"
#include "formats/h5_read.h"
#include "formats/folded.h"

#include <stdlib.h>
#include <string.h>

/* One counter's summary over all its samples (all ranks). */
typedef struct csum {
    uint64_t n;
    double min, max, sum, last;
    int64_t last_t;
} csum_t;

/* Prints the counters of the file at path (nothing when it has none):
 * per counter its samples, min, mean, max and the latest value.  Returns
 * 0 or the reader's code (message: sps__err_msg()). */
int sps__counters_print(FILE *fp, const char *path) {
    sps__h5r_counters_t k;
    int rc = sps__h5r_counters(path, &k);
    if (rc || !k.n) {
        sps__h5r_counters_free(&k);
        return rc;
    }
    csum_t *s = calloc(k.nnames, sizeof *s);
    if (!s) {
        sps__h5r_counters_free(&k);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < k.n; i++) {
        csum_t *c = &s[k.series[i]];
        double v = k.values[i];
        if (!c->n || v < c->min) c->min = v;
        if (!c->n || v > c->max) c->max = v;
        if (!c->n || k.times[i] >= c->last_t) c->last = v, c->last_t = k.times[i];
        c->sum += v;
        c->n++;
    }
    size_t w = 7; /* columns of the name column: the widest name, at most 40 */
    for (size_t g = 0; g < k.nnames; g++) {
        size_t len = sps__utf8_width(k.names[g]);
        if (len > w) w = len < 40 ? len : 40;
    }
    fprintf(fp, "\nCounters (%zu; %zu samples%s)\n", k.nnames, k.n,
            k.dropped ? ", some dropped by the recording's cap" : "");
    fprintf(fp, "%-*s  %8s  %12s  %12s  %12s  %12s\n", (int)w, "counter", "samples", "min",
            "mean", "max", "last");
    for (size_t g = 0; g < k.nnames; g++) {
        const csum_t *c = &s[g];
        if (!c->n) continue;
        /* the table's one name cell: cut by columns, controls cleaned */
        sps__utf8_put_cell(fp, 0, k.names[g], w);
        fprintf(fp, "  %8llu  %12.6g  %12.6g  %12.6g  %12.6g\n", (unsigned long long)c->n,
                c->min, c->sum / (double)c->n, c->max, c->last);
    }
    free(s);
    sps__h5r_counters_free(&k);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Values per region (/values)                                              */
/* ------------------------------------------------------------------------ */

/* n as a byte count: "123 B", "1.5 KiB", ... */
static void bytes_cell(char *buf, size_t cap, int64_t n) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while ((v >= 1024.0 || v <= -1024.0) && u < 4) v /= 1024.0, u++;
    if (u == 0) snprintf(buf, cap, "%lld B", (long long)n);
    else snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

static int is_bytes(const char *name) { return strstr(name, "bytes") != NULL; }

/* The value names shown: every one but the counts of allocations and
 * frees, which the alloc/free byte columns stand for (all of them when
 * the file has no memory values). */
static int value_shown(const char *name) {
    return strcmp(name, "allocs") != 0 && strcmp(name, "frees") != 0;
}

/* Ratios the report derives from counters where both are there: IPC, and
 * cache and branch miss rates (own values). */
static const struct { const char *head, *num, *den; double scale; } k_ratios[] = {
    {"IPC", "instructions", "cycles", 1.0},
    {"cache miss %", "cache-misses", "cache-references", 100.0},
    {"branch miss %", "branch-misses", "branches", 100.0},
};

static long value_index(const sps__h5r_values_t *v, const char *name) {
    for (size_t k = 0; k < v->nnames; k++)
        if (!strcmp(v->names[k], name)) return (long)k;
    return -1;
}

int sps__values_print(FILE *fp, const char *path) {
    sps__h5r_values_t v;
    int rc = sps__h5r_values(path, &v);
    if (rc || !v.n) {
        sps__h5r_values_free(&v);
        return rc;
    }
    size_t w = 6;
    for (size_t i = 0; i < v.n; i++) {
        size_t len = sps__utf8_width(v.regions[i]);
        if (len > w) w = len < 40 ? len : 40;
    }
    fprintf(fp, "\nValues per region (own, and self outside the children; peak_bytes: the "
                "highest live bytes above the span's start)\n");
    fprintf(fp, "%-*s  %4s  %10s", (int)w, "region", "rank", "calls");
    for (size_t k = 0; k < v.nnames; k++)
        if (value_shown(v.names[k]))
            fprintf(fp, "  %14.14s  %14.14s", v.names[k], "self");
    long num[3], den[3];
    for (int q = 0; q < 3; q++) {
        num[q] = value_index(&v, k_ratios[q].num);
        den[q] = value_index(&v, k_ratios[q].den);
        if (num[q] >= 0 && den[q] >= 0) fprintf(fp, "  %13s", k_ratios[q].head);
    }
    fputc('\n', fp);
    for (size_t i = 0; i < v.n; i++) {
        sps__utf8_put_cell(fp, 0, v.regions[i], w);
        fprintf(fp, "  %4lld  %10lld", (long long)v.ranks[i], (long long)v.calls[i]);
        for (size_t k = 0; k < v.nnames; k++) {
            if (!value_shown(v.names[k])) continue;
            int64_t own = v.own[i * v.nnames + k], self = v.self[i * v.nnames + k];
            char a[32], b[32];
            if (is_bytes(v.names[k])) {
                bytes_cell(a, sizeof a, own);
                bytes_cell(b, sizeof b, self);
            } else {
                snprintf(a, sizeof a, "%lld", (long long)own);
                snprintf(b, sizeof b, "%lld", (long long)self);
            }
            fprintf(fp, "  %14s  %14s", a, b);
        }
        for (int q = 0; q < 3; q++) {
            if (num[q] < 0 || den[q] < 0) continue;
            int64_t d = v.own[i * v.nnames + (size_t)den[q]];
            if (d > 0)
                fprintf(fp, "  %13.3f", k_ratios[q].scale *
                        (double)v.own[i * v.nnames + (size_t)num[q]] / (double)d);
            else
                fprintf(fp, "  %13s", "-");
        }
        fputc('\n', fp);
    }
    sps__h5r_values_free(&v);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Where the time went (/samples)                                           */
/* ------------------------------------------------------------------------ */

/* One row of the table: weight, CPU ms, share of of, the label. */
static void leaf_row(FILE *fp, uint64_t w, uint64_t of, int64_t hz, const char *label) {
    fprintf(fp, "  %10llu", (unsigned long long)w);
    if (hz > 0) fprintf(fp, "  %12.1f", (double)w * 1000.0 / (double)hz);
    else fprintf(fp, "  %12s", "-");
    fprintf(fp, "  %6.1f%%  ", of ? 100.0 * (double)w / (double)of : 0.0);
    sps__utf8_put_text(fp, label, 120);
    fputc('\n', fp);
}

int sps__samples_print(FILE *fp, const char *path, size_t top) {
    sps__h5r_samples_t s;
    int rc = sps__h5r_samples(path, &s);
    if (rc || !s.n) {
        if (!rc) sps__h5r_samples_free(&s);
        return rc;
    }
    sps__folded_t f;
    sps__smp_regions_t g = {0};
    rc = sps__folded_build(&s, NULL, 0, 1, &f);
    if (!rc) rc = sps__smp_regions(&f, &g);
    if (!rc) {
        fprintf(fp, "\nWhere the time went (samples)\n%llu samples", (unsigned long long)f.total);
        if (s.hz > 0)
            fprintf(fp, " at %lld Hz (%.3g ms of CPU each), %.1f ms in all", (long long)s.hz,
                    1000.0 / (double)s.hz, (double)f.total * 1000.0 / (double)s.hz);
        if (s.lost) fprintf(fp, ", %lld lost (full rings)", (long long)s.lost);
        fprintf(fp, "; per region its self samples (taken in it, not in a region it "
                    "called) by leaf function\n");
        for (size_t i = 0; i < g.n; i++) {
            const sps__smp_region_t *r = &g.r[i];
            fputc('\n', fp);
            if (r->region >= 0) sps__utf8_put_text(fp, s.names[r->region], 80);
            else fputs("(outside every span)", fp);
            fprintf(fp, ": %llu samples", (unsigned long long)r->weight);
            if (s.hz > 0) fprintf(fp, ", %.1f ms", (double)r->weight * 1000.0 / (double)s.hz);
            fprintf(fp, ", %.1f%% of all\n", 100.0 * (double)r->weight / (double)f.total);
            fprintf(fp, "  %10s  %12s  %7s  %s\n", "samples", "CPU ms", "%", "function");
            size_t shown = top && r->nleaves > top ? top : r->nleaves;
            uint64_t rest = 0;
            for (size_t k = 0; k < shown; k++)
                leaf_row(fp, r->leaves[k].weight, r->weight, s.hz,
                         f.labels.text[r->leaves[k].label]);
            for (size_t k = shown; k < r->nleaves; k++) rest += r->leaves[k].weight;
            if (shown < r->nleaves) {
                char more[64];
                snprintf(more, sizeof more, "(%zu more functions)", r->nleaves - shown);
                leaf_row(fp, rest, r->weight, s.hz, more);
            }
        }
    }
    sps__smp_regions_free(&g);
    sps__folded_free(&f);
    sps__h5r_samples_free(&s);
    return rc;
}
