/*
 * inspect.c -- what a recording holds (api.h, sps__inspect_write): the
 * view behind `spanscope inspect FILE`.  The file's size and format; for
 * an HDF5 file its schema, layout, regions, index rows, events and every
 * /metadata attribute (the one reader of /metadata: sps__h5r_metadata);
 * then, from the timeline readers (any format), its processes (ranks),
 * threads with their span counts, and the time the spans cover.
 */
#include "api/api.h"
#include "formats/h5_read.h"
#include "formats/merge.h"
#include "formats/timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Columns a name or value from the file may take on one line: whatever
 * the file holds (a 1 MiB value), the listing stays readable. */
#define TEXT_COLS 120

/* One /metadata attribute as "  name value[, value...]".  Names and
 * values are the file's data: printed cleaned and cut (sps__utf8_put_text),
 * so that no escape sequence in them reaches the terminal. */
static void put_attr(FILE *fp, const sps_meta_attr_t *a) {
    fputs("  ", fp);
    size_t w = sps__utf8_width(a->name);
    sps__utf8_put_text(fp, a->name, TEXT_COLS);
    fprintf(fp, "%*s ", (int)(w < 24 ? 24 - w : 0), "");
    size_t n = a->n > 8 ? 8 : a->n;
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", fp);
        if (a->kind == SPS_META_INT) fprintf(fp, "%" PRId64, a->ints[i]);
        else if (a->kind == SPS_META_FLOAT) fprintf(fp, "%.17g", a->floats[i]);
        else sps__utf8_put_text(fp, a->texts[i], TEXT_COLS);
    }
    if (a->n > n) fprintf(fp, ", ... (%zu values)", a->n);
    fputc('\n', fp);
}

/* The HDF5 part: schema, layout, sizes, metadata.  *aggregate gets
 * whether the file has no per-call data.  0 or a code (message set). */
static int inspect_h5(FILE *fp, const char *path, int *aggregate) {
    sps__h5r_t *r;
    int rc = sps__h5r_open_index(&r, path);
    if (rc) return rc;
    *aggregate = r->aggregate;
    fprintf(fp, "schema     %d (%s)\nregions    %zu\nrows       %zu (rank, region)\n"
                "events     %" PRIu64 "\n", r->schema,
            r->aggregate ? "aggregate: statistics only" : "columnar",
            r->nnames, r->nrows, r->nevents);
    fprintf(fp, "metadata   %zu attribute%s\n", r->meta.nattrs, r->meta.nattrs == 1 ? "" : "s");
    for (size_t i = 0; i < r->meta.nattrs; i++) put_attr(fp, &r->meta.attrs[i]);
    sps__h5r_free(r);
    return 0;
}

/* The timeline part: ranks, threads (spans each), names, time covered.
 * 0 or a code (message set). */
static int inspect_timeline(FILE *fp, const char *path, sps__tl_format_t fmt) {
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, fmt);
    if (rc) return rc;
    const sps__tl_header_t *h = sps__tlr_header(r);
    uint64_t *per = calloc(h->nthreads ? h->nthreads : 1, sizeof *per), n = 0;
    if (!per) {
        sps__tlr_free(r);
        return SPS_ENOMEM;
    }
    int64_t t0 = 0, t1 = 0;
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if (s.thread < h->nthreads) per[s.thread]++;
        if (!n || s.start_ns < t0) t0 = s.start_ns;
        if (!n || s.end_ns > t1) t1 = s.end_ns;
        n++;
    }
    if (!rc) {
        fprintf(fp, "span names %zu\nspans      %" PRIu64 "\n", h->nnames, n);
        if (n) fprintf(fp, "covers     %.6f s\n", (double)(t1 - t0) / 1e9);
        fprintf(fp, "counters   %zu samples\nflows      %zu points\n", h->ncounters, h->nflows);
        fprintf(fp, "processes  %zu\n", h->nprocs);
        for (size_t p = 0; p < h->nprocs; p++) {
            char rank[24] = "-";
            if (h->procs[p].rank >= 0) snprintf(rank, sizeof rank, "%" PRId64, h->procs[p].rank);
            fprintf(fp, "  pid %-8" PRId64 " rank %-6s ", h->procs[p].pid, rank);
            sps__utf8_put_text(fp, h->procs[p].name ? h->procs[p].name : "", TEXT_COLS);
            fputc('\n', fp);
        }
        fprintf(fp, "threads    %zu\n", h->nthreads);
        for (size_t t = 0; t < h->nthreads; t++) {
            fprintf(fp, "  pid %-8" PRId64 " tid %-10" PRId64 " %10" PRIu64 " spans  ",
                    h->threads[t].pid, h->threads[t].tid, per[t]);
            sps__utf8_put_text(fp, h->threads[t].name ? h->threads[t].name : "", TEXT_COLS);
            fputc('\n', fp);
        }
    }
    free(per);
    sps__tlr_free(r);
    return rc;
}

int sps__inspect_write(FILE *fp, const char *path) {
    if (!fp || !path) return sps__err_fail(SPS_EINVAL, "no file or output");
    sps__tl_format_t fmt = sps__tl_format_of(path);
    if (fmt == SPS__TL_UNKNOWN)
        return sps__err_fail(SPS_EINVAL, "%s: unknown format (.h5, .json, .json.gz, .pftrace)", path);
    struct stat st;
    if (stat(path, &st) != 0) return sps__err_fail(SPS_EIO, "%s: cannot open", path);
    static const char *const kinds[] = {"?", "HDF5", "Chrome trace JSON",
                                        "Chrome trace JSON (gzip)", "Perfetto protobuf"};
    fprintf(fp, "file       %s\nformat     %s\nsize       %lld bytes\n", path, kinds[fmt],
            (long long)st.st_size);
    int aggregate = 0, rc = 0;
    if (fmt == SPS__TL_H5) rc = inspect_h5(fp, path, &aggregate);
    if (!rc && fmt == SPS__TL_H5) rc = sps__mpi_clock_print(fp, path); /* docs/mpi.md */
    if (!rc && !aggregate) rc = inspect_timeline(fp, path, fmt);
    if (!rc && (fflush(fp) != 0 || ferror(fp))) rc = sps__err_fail(SPS_EIO, "writing failed");
    return rc;
}
