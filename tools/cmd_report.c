/*
 * cmd_report.c -- spanscope report FILE: the summary table of an HDF5
 * profile (call tree, flat view, per-rank view, counters).
 */
#include "sps_int.h"
#include "formats/h5_read.h"

#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char report_help[] =
    "usage: spanscope report FILE [--sort KEY] [--top N] [--tree | --flat]\n"
    "                        [--ranks | --no-ranks]\n"
    "\n"
    "Prints the summary table of an HDF5 profile written by spanscope or by\n"
    "scope-profiler (schema 2 or 3): a call tree (children by total time)\n"
    "and a flat per-region view.  A file of several ranks (e.g. from\n"
    "spanscope merge) also gets a per-rank view: for each region the min,\n"
    "mean and max over the ranks of its total time (a rank with no calls of\n"
    "the region counts as 0), the slowest rank, and the imbalance\n"
    "(max - mean) / max, sorted by imbalance.\n"
    "\n"
    "options:\n"
    "  --sort KEY   order of the flat view: self (default), total, calls,\n"
    "               mean, max, name\n"
    "               (--sort total also orders the per-rank view by total)\n"
    "  --top N      show only the first N regions of the flat and per-rank\n"
    "               views\n"
    "  --tree       print only the call tree\n"
    "  --flat       print only the flat view (and the per-rank view)\n"
    "  --ranks      print the per-rank view, even for one rank or with --tree\n"
    "  --no-ranks   do not print the per-rank view (default: printed when the\n"
    "               file holds 2 or more ranks and the flat view is shown)\n"
    "  -h, --help   show this help and exit\n"
    "\n"
    "Reading gives up after 20 s plus 1 s per 4 MiB of input (a corrupt file\n"
    "can make the HDF5 library loop); SPANSCOPE_READ_TIMEOUT=SECONDS sets\n"
    "another limit, 0 none.\n";

/* Options of report. */
typedef struct report_opts {
    const char *file;
    sps__table_opts_t t;
    int ranks; /* per-rank view: -1 auto (2+ ranks, flat view), 0 no, 1 yes */
} report_opts_t;

/* Parses a sort key into *out.  Returns 0 or -1. */
static int parse_sort(const char *s, sps__sort_t *out) {
    static const char *const keys[] = {"self", "total", "calls", "mean",
                                       "max", "name"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(s, keys[i]) == 0) {
            *out = (sps__sort_t)i;
            return 0;
        }
    return -1;
}

/* Parses one option of report at argv[*i] into o.  Returns 0, 1 for
 * --help, or EXIT_USAGE after printing the error. */
static int report_opt(int argc, char **argv, int *i, report_opts_t *o) {
    const char *a = argv[*i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (!strcmp(a, "--tree")) { o->t.tree = 1; o->t.flat = 0; return 0; }
    if (!strcmp(a, "--flat")) { o->t.flat = 1; o->t.tree = 0; return 0; }
    if (!strcmp(a, "--ranks")) { o->ranks = 1; return 0; }
    if (!strcmp(a, "--no-ranks")) { o->ranks = 0; return 0; }
    if (cli_is_opt(a, "--sort")) {
        if (!(v = cli_opt_value(argc, argv, i, "--sort")))
            return die(EXIT_USAGE, "report: --sort needs a key");
        if (parse_sort(v, &o->t.sort) < 0)
            return die(EXIT_USAGE, "report: unknown sort key '%s' (self, "
                       "total, calls, mean, max, name)", v);
        return 0;
    }
    if (cli_is_opt(a, "--top")) {
        if (!(v = cli_opt_value(argc, argv, i, "--top")))
            return die(EXIT_USAGE, "report: --top needs a number");
        unsigned long long n;
        if (cli_parse_count(v, SIZE_MAX, &n) < 0)
            return die(EXIT_USAGE, "report: --top needs a number, got '%s'",
                       v);
        o->t.top = (size_t)n;
        return 0;
    }
    return die(EXIT_USAGE, "report: unknown option '%s' (see spanscope "
               "report --help)", a);
}

/* Parses report's arguments into o.  Returns 0, 1 for --help, or
 * EXIT_USAGE after printing the error. */
static int report_args(int argc, char **argv, report_opts_t *o) {
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!opts_done && !strcmp(a, "--")) { opts_done = 1; continue; }
        if (!opts_done && a[0] == '-' && a[1]) {
            if ((rc = report_opt(argc, argv, &i, o))) return rc;
            continue;
        }
        if (o->file)
            return die(EXIT_USAGE, "report: one FILE only (got '%s' and "
                       "'%s')", o->file, a);
        o->file = a;
    }
    if (!o->file) return die(EXIT_USAGE, "report: missing FILE (see "
                             "spanscope report --help)");
    return 0;
}

/* qsort order of rank numbers. */
static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* /metadata mpi_size of the file at path, or 0 when absent or odd. */
static int64_t meta_mpi_size(const char *path) {
    H5E_auto2_t func;
    void *data;
    int saved = H5Eget_auto2(H5E_DEFAULT, &func, &data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int64_t v = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen_by_name(f, "metadata", "mpi_size", H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    if (sp < 0 || H5Sget_simple_extent_npoints(sp) != 1 ||
        H5Aread(a, H5T_NATIVE_INT64, &v) < 0 || v < 0 || v > (1 << 24))
        v = 0;
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
    if (f >= 0) H5Fclose(f);
    if (saved) H5Eset_auto2(H5E_DEFAULT, func, data);
    return v;
}

/* The distinct ranks of r's index, sorted, into *ranks (malloc'd) and
 * *nranks.  When /metadata mpi_size is larger than every rank of the index
 * (an MPI file where some ranks recorded nothing), the ranks are 0 ..
 * mpi_size - 1: a rank without calls counts as 0 in the per-rank view.
 * Returns 0 or SPS_ENOMEM. */
static int index_ranks(const sps__h5r_t *r, const char *path, uint32_t **ranks,
                       size_t *nranks) {
    int64_t world = meta_mpi_size(path);
    size_t cap = r->nrows > (size_t)world ? r->nrows : (size_t)world;
    uint32_t *v = malloc((cap ? cap : 1) * sizeof *v);
    size_t n = 0;
    *ranks = v;
    *nranks = 0;
    if (!v) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++) v[i] = r->rows[i].rank;
    qsort(v, r->nrows, sizeof *v, u32_cmp);
    for (size_t i = 0; i < r->nrows; i++)
        if (n == 0 || v[n - 1] != v[i]) v[n++] = v[i];
    if (n && world > 1 && (int64_t)v[n - 1] < world && (size_t)world > n) {
        for (uint32_t k = 0; k < (uint32_t)world; k++) v[k] = k;
        n = (size_t)world;
    }
    *nranks = n;
    return 0;
}

/* Prints the per-rank view of r: the total time of every region with a
 * row in the index (region id order, as in the flat view) on every rank
 * of the index, 0 where a rank has no row for it.  Returns 0 or an
 * SPS_E* code. */
static int report_ranks(const sps__h5r_t *r, const uint32_t *ranks,
                        size_t nranks, const report_opts_t *o) {
    size_t *slot = malloc((r->nnames ? r->nnames : 1) * sizeof *slot);
    const char **names = malloc((r->nnames ? r->nnames : 1) * sizeof *names);
    int64_t *tot = NULL;
    size_t ng = 0;
    int rc = SPS_ENOMEM;
    if (!slot || !names) goto out;
    for (size_t g = 0; g < r->nnames; g++) slot[g] = SIZE_MAX;
    for (size_t i = 0; i < r->nrows; i++) slot[r->rows[i].file_region] = 0;
    for (size_t g = 0; g < r->nnames; g++)
        if (slot[g] == 0) {
            names[ng] = r->names[g];
            slot[g] = ng++;
        }
    if (nranks && ng > SIZE_MAX / sizeof *tot / nranks) goto out;
    tot = calloc(ng && nranks ? ng * nranks : 1, sizeof *tot);
    if (!tot) goto out;
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *row = &r->rows[i];
        const uint32_t *k = bsearch(&row->rank, ranks, nranks, sizeof *ranks,
                                    u32_cmp);
        uint64_t sum = 0;
        if (!k || row->count == 0) continue;
        if (r->aggregate) sum = (uint64_t)row->s.total;
        else
            for (uint64_t e = row->offset; e < row->offset + row->count; e++)
                sum += (uint64_t)r->dur[e];
        int64_t *cell = &tot[slot[row->file_region] * nranks +
                             (size_t)(k - ranks)];
        *cell = (int64_t)((uint64_t)*cell + sum);
    }
    rc = sps__rank_table_print(stdout, names, ng, ranks, nranks, tot,
                               o->t.sort, o->t.top);
out:
    free(slot);
    free(names);
    free(tot);
    return rc;
}

/* Prints the table of r with the options o.  Returns the exit status. */
static int report_print(const sps__h5r_t *r, report_opts_t *o) {
    sps__tnode_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    int rc = sps__h5r_tree(r, &nodes, &nn);
    if (rc == 0) rc = sps__h5r_flat(r, &flat, &nf);
    if (rc == 0) {
        unsigned long long calls = 0;
        for (size_t i = 0; i < nf; i++) calls += flat[i].calls;
        o->t.session_ns = sps__h5r_session_ns(r);
        printf("%s: schema %d, %s, %zu region%s, %llu call%s\n\n", o->file,
               r->schema, r->aggregate ? "aggregate" : "columnar", nf,
               nf == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
        if (r->aggregate && o->t.tree) {
            printf("(aggregate file: no per-call data, so no call tree)\n");
            if (o->t.flat) printf("\n");
            o->t.tree = 0;
        }
        rc = sps__table_print(stdout, nodes, nn, flat, nf, &o->t);
    }
    uint32_t *ranks = NULL;
    size_t nranks = 0;
    if (rc == 0 && o->ranks != 0) rc = index_ranks(r, o->file, &ranks, &nranks);
    if (rc == 0 && nranks > 0 &&
        (o->ranks == 1 || (nranks >= 2 && o->t.flat))) {
        if (o->t.tree || o->t.flat) printf("\n");
        rc = report_ranks(r, ranks, nranks, o);
    }
    int crc = rc == 0 ? sps__counters_print(stdout, o->file) : 0;
    free(ranks);
    free(nodes);
    free(flat);
    if (rc) return die(EXIT_DATA, "report: %s", sps_strerror(rc));
    if (crc) return die(EXIT_DATA, "report: %s", sps__h5r_error());
    return 0;
}

/* spanscope report: the summary table of a file. */
int cmd_report(int argc, char **argv) {
    report_opts_t o = {NULL, {1, 1, SPS__SORT_SELF, 0, 0}, -1};
    int rc = report_args(argc, argv, &o);
    if (rc == 1) {
        fputs(report_help, stdout);
        return 0;
    }
    if (rc) return rc;
    sps__h5r_t *r;
    input_watchdog(o.file);
    if (sps__h5r_open(&r, o.file) < 0)
        return die(EXIT_DATA, "%s", sps__h5r_error());
    rc = report_print(r, &o);
    sps__h5r_free(r);
    return rc;
}
