/* report.c -- the counters section of a report (src/api/report.c puts
 * the report together): per counter of a file its samples, min, mean, max
 * and latest value. */
#include "formats/formats.h"
#include "formats/h5_read.h"

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
