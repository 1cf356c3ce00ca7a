/*
 * report.c -- the report of a recording: the one function behind the
 * tool's `spanscope report`, the public sps_report and the Python
 * extension's file summary (Results.summary).  It reads the file with the
 * HDF5 reader (formats/h5_read.h) and prints with the table writers
 * (formats/table.c, formats/report.c): this file decides what goes in,
 * in which order, and adds up the per-rank totals.
 */
#include "api/api.h"
#include "formats/timeline.h"
#include "formats/h5_read.h"
#include "formats/h5_comm.h"
#include "formats/folded.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Failures go to the error channel (util.h), one line naming the file:
 * the readers' own message where a reader failed, else fail_code's. */

/* Sets the message "<path>: <what rc means>" for a failure that no reader
 * explained (memory, writing), and returns rc. */
static int fail_code(int rc, const char *path) {
    return sps__err_fail(rc, "%s: %s", path, sps_strerror(rc));
}

/* ------------------------------------------------------------------------ */
/* Per-rank view                                                             */
/* ------------------------------------------------------------------------ */

/* qsort order of rank numbers. */
static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* /metadata mpi_size of the file at path (the one /metadata reader), 0
 * when absent or out of range. */
static int64_t meta_mpi_size(const char *path) {
    sps__h5r_meta_t m;
    if (sps__h5r_metadata(path, &m)) return 0;
    int64_t v = m.mpi_size >= 0 && m.mpi_size <= (1 << 24) ? m.mpi_size : 0;
    sps__h5r_meta_free(&m);
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
 * of the index, 0 where a rank has no row for it, to fp.  Returns 0 or an
 * SPS_E* code. */
static int report_ranks(const sps__h5r_t *r, const uint32_t *ranks,
                        size_t nranks, const sps__report_opts_t *o,
                        FILE *fp) {
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
    rc = sps__rank_table_print(fp, names, ng, ranks, nranks, tot, o->sort,
                               o->top);
out:
    free(slot);
    free(names);
    free(tot);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Lanes: the threads (of all ranks) that ran a region                       */
/* ------------------------------------------------------------------------ */

/* "% session" divides a region's total by the session time of the threads
 * that ran it (sps__table_opts_t), so the report counts them: per region
 * of r the distinct (rank, thread id) pairs of its events (its ranks when
 * the file has no thread ids), into lanes[nnames], and over the whole file
 * into *all.  Returns 0 or SPS_ENOMEM. */
typedef struct lane_key {
    uint32_t rank;
    int64_t tid;
} lane_key_t;

static int lane_cmp(const void *a, const void *b) {
    const lane_key_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Sorts v[0..n) and returns how many distinct keys it holds, moved to the
 * front. */
static size_t lane_unique(lane_key_t *v, size_t n) {
    if (n == 0) return 0; /* v may be NULL: qsort's argument must not be */
    qsort(v, n, sizeof *v, lane_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || lane_cmp(&v[k - 1], &v[i])) v[k++] = v[i];
    return k;
}

static int h5_lanes(const sps__h5r_t *r, uint32_t *lanes, uint32_t *all) {
    lane_key_t *seen = NULL, *tmp = NULL;
    size_t nseen = 0, capseen = 0, captmp = 0;
    memset(lanes, 0, (r->nnames ? r->nnames : 1) * sizeof *lanes);
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *row = &r->rows[i];
        int by_thread = r->thread_ids && !r->aggregate;
        size_t n = by_thread ? (size_t)row->count : 1;
        if (n > captmp) {
            lane_key_t *v = realloc(tmp, n * sizeof *v);
            if (!v) goto oom;
            tmp = v;
            captmp = n;
        }
        for (size_t e = 0; e < n; e++)
            tmp[e] = (lane_key_t){row->rank, by_thread ? r->thread_ids[row->offset + e] : 0};
        if (!row->count) continue;
        size_t k = lane_unique(tmp, n);
        lanes[row->file_region] += (uint32_t)k;
        for (size_t e = 0; e < k; e++) {
            if (sps__grow((void **)&seen, &capseen, nseen, sizeof *seen)) goto oom;
            seen[nseen++] = tmp[e];
        }
    }
    *all = (uint32_t)lane_unique(seen, nseen);
    free(seen);
    free(tmp);
    return 0;
oom:
    free(seen);
    free(tmp);
    return SPS_ENOMEM;
}

/* The index of name among r's names (by pointer: the reader's rows point
 * at them), or -1. */
static int64_t name_index(const sps__h5r_t *r, const char *name) {
    for (size_t g = 0; g < r->nnames; g++)
        if (r->names[g] == name) return (int64_t)g;
    for (size_t g = 0; name && g < r->nnames; g++)
        if (!strcmp(r->names[g], name)) return (int64_t)g;
    return -1;
}

/* A node runs on its parent's threads only: caps each node's lanes at its
 * parent's (lanes[] holds its region's), walking up at most depth steps
 * from each node (parent links as the tree gives them; a cycle stops at
 * nn steps). */
static void nodes_within_parents(const sps__tree_row_t *nodes, size_t nn, uint32_t *lanes) {
    for (size_t i = 0; i < nn; i++) {
        size_t steps = 0;
        for (int32_t p = nodes[i].parent; p >= 0 && (size_t)p < nn && steps < nn;
             p = nodes[p].parent, steps++)
            if (lanes[p] && lanes[p] < lanes[i]) lanes[i] = lanes[p];
    }
}

/* The lanes of r's flat rows and tree nodes (a node: its region's, at
 * most its parent's) into *out, arrays malloc'd (free with lanes_free).
 * Returns 0 or SPS_ENOMEM. */
static int set_lanes(const sps__h5r_t *r, const sps__tflat_t *flat, size_t nf,
                     const sps__tree_row_t *nodes, size_t nn, sps__table_lanes_t *out) {
    uint32_t *lanes = malloc((r->nnames ? r->nnames : 1) * sizeof *lanes);
    uint32_t *fl = calloc(nf ? nf : 1, sizeof *fl), *nl = calloc(nn ? nn : 1, sizeof *nl);
    out->flat = fl;
    out->nodes = nl;
    int rc = lanes && fl && nl ? h5_lanes(r, lanes, &out->total) : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < nf; i++) {
        int64_t g = name_index(r, flat[i].name);
        fl[i] = g >= 0 ? lanes[g] : 0;
    }
    for (size_t i = 0; !rc && i < nn; i++) {
        int64_t g = name_index(r, nodes[i].name);
        nl[i] = g >= 0 ? lanes[g] : 0;
    }
    if (!rc) nodes_within_parents(nodes, nn, nl);
    free(lanes);
    return rc;
}

static void lanes_free(sps__table_lanes_t *l) {
    free((void *)l->flat);
    free((void *)l->nodes);
}

/* ------------------------------------------------------------------------ */
/* The report                                                                */
/* ------------------------------------------------------------------------ */

/* Prints the first line: the file, its schema and layout, its regions and
 * calls (over flat[0..nf)). */
static void print_title(FILE *fp, const char *path, const sps__h5r_t *r,
                        const sps__tflat_t *flat, size_t nf) {
    unsigned long long calls = 0;
    for (size_t i = 0; i < nf; i++) calls += flat[i].calls;
    fprintf(fp, "%s: schema %d, %s, %zu region%s, %llu call%s\n\n", path,
            r->schema, r->aggregate ? "aggregate" : "columnar", nf,
            nf == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
}

/* Prints the title, the tree and the flat view of r as o says.  An
 * aggregate file has no tree: a note instead, and o->tree is cleared (so
 * that what follows knows the tree was not printed).  Returns 0 or an
 * SPS_E* code. */
static int print_tables(FILE *fp, const char *path, const sps__h5r_t *r,
                        sps__report_opts_t *o) {
    sps__tree_row_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    sps__table_lanes_t lanes = {0};
    int rc = sps__h5r_tree(r, &nodes, &nn);
    if (rc == 0) rc = sps__h5r_flat(r, &flat, &nf);
    if (rc == 0) rc = set_lanes(r, flat, nf, nodes, nn, &lanes);
    if (rc == 0) {
        print_title(fp, path, r, flat, nf);
        if (r->aggregate && o->tree) {
            fprintf(fp, "(aggregate file: no per-call data, so no call tree)\n");
            if (o->flat) fprintf(fp, "\n");
            o->tree = 0;
        }
        sps__table_opts_t t = {o->tree, o->flat, o->sort, o->top,
                               sps__h5r_session_ns(r)};
        rc = sps__table_print_lanes(fp, nodes, nn, flat, nf, &t, &lanes);
    }
    lanes_free(&lanes);
    free(nodes);
    free(flat);
    return rc;
}

/* Prints the per-rank view of r when o asks for it (o->ranks 1), or by
 * default (-1) when the file holds 2+ ranks and the flat view is shown.
 * Returns 0 or an SPS_E* code. */
static int print_ranks(FILE *fp, const char *path, const sps__h5r_t *r,
                       const sps__report_opts_t *o) {
    uint32_t *ranks = NULL;
    size_t nranks = 0;
    int rc = o->ranks != 0 ? index_ranks(r, path, &ranks, &nranks) : 0;
    if (rc == 0 && nranks > 0 &&
        (o->ranks == 1 || (nranks >= 2 && o->flat))) {
        if (o->tree || o->flat) fprintf(fp, "\n");
        rc = report_ranks(r, ranks, nranks, o, fp);
    }
    free(ranks);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Traces                                                                    */
/* ------------------------------------------------------------------------ */

/* A trace folded: the fold's statistics per span name and per path, and
 * each process's total per name (the per-rank view). */
typedef struct tfold {
    sps__fold_tl_t fold;
    const sps__tl_header_t *h;
    int64_t *proc_total;   /* [nprocs * nnames] ns */
    uint32_t *proc_of;     /* thread -> process index */
    uint64_t spans;
    unsigned char *seen;   /* [nthreads * nnames]: thread ran name (NULL
                            * when too large: lanes stay 0, read as 1) */
    uint32_t *lanes;       /* per name: the threads that ran it */
} tfold_t;

/* Reads every span of r into f.  Returns 0 or an SPS_E* code. */
static int tfold_read(tfold_t *f, sps__tlr_t *r) {
    const sps__tl_header_t *h = f->h = sps__tlr_header(r);
    size_t np = h->nprocs ? h->nprocs : 1, nn = h->nnames ? h->nnames : 1;
    f->proc_total = calloc(np * nn, sizeof *f->proc_total);
    f->proc_of = calloc(h->nthreads ? h->nthreads : 1, sizeof *f->proc_of);
    f->lanes = calloc(nn, sizeof *f->lanes);
    if (h->nthreads && (uint64_t)h->nthreads * nn <= ((uint64_t)1 << 26))
        f->seen = calloc(h->nthreads * nn, 1);
    if (!f->proc_total || !f->proc_of || !f->lanes ||
        sps__fold_tl_init(&f->fold, h->nthreads, h->nnames, 1))
        return SPS_ENOMEM;
    for (size_t t = 0; t < h->nthreads; t++)
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == h->threads[t].pid) f->proc_of[t] = (uint32_t)p;
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if (s.name >= h->nnames || s.thread >= h->nthreads || s.end_ns < s.start_ns)
            return SPS_EFORMAT;
        int64_t d = sps__fold_tl_add(&f->fold, s.thread, s.name, s.start_ns, s.end_ns, s.prior_ns);
        if (d < 0) return (int)d;
        int64_t *pt = &f->proc_total[(size_t)f->proc_of[s.thread] * nn + s.name];
        *pt = (int64_t)((uint64_t)*pt + (uint64_t)(s.end_ns - s.start_ns));
        if (f->seen && !f->seen[(size_t)s.thread * nn + s.name]) {
            f->seen[(size_t)s.thread * nn + s.name] = 1;
            f->lanes[s.name]++;
        }
        f->spans++;
    }
    if (rc == 0) sps__fold_tl_finish(&f->fold);
    return rc;
}

static void tfold_free(tfold_t *f) {
    sps__fold_tl_free(&f->fold);
    free(f->proc_total);
    free(f->proc_of);
    free(f->seen);
    free(f->lanes);
}

/* The table input of f: flat rows for names with calls, tree nodes. */
static int tfold_tables(const tfold_t *f, sps__tflat_t **flat, size_t *nf,
                        sps__tree_row_t **nodes, size_t *nn) {
    const sps__tl_header_t *h = f->h;
    const sps__tree_t *tr = &f->fold.tree;
    *flat = calloc(h->nnames ? h->nnames : 1, sizeof **flat);
    *nodes = calloc(tr->len ? tr->len : 1, sizeof **nodes);
    if (!*flat || !*nodes) return SPS_ENOMEM;
    *nf = 0;
    for (size_t i = 0; i < h->nnames; i++) {
        sps_stats_t st;
        sps__acc_stats(&f->fold.acc[i], &st);
        if (st.num_calls)
            (*flat)[(*nf)++] = (sps__tflat_t){h->names[i], st.num_calls, st.total_ns,
                                              st.self_ns, st.min_ns, st.max_ns, st.mean_ns};
    }
    for (size_t i = 0; i < tr->len; i++) {
        sps_stats_t st;
        sps__acc_stats(&tr->n[i].cum, &st);
        (*nodes)[i] = (sps__tree_row_t){tr->n[i].parent, h->names[tr->n[i].region],
                                     st.num_calls, st.total_ns, st.self_ns,
                                     st.min_ns, st.max_ns};
    }
    *nn = tr->len;
    return 0;
}

/* The lanes of the trace's flat rows (in tfold_tables' order: names with
 * calls) and tree nodes (its region's) into *out (lanes_free).  0 or
 * SPS_ENOMEM. */
static int tfold_lanes(const tfold_t *f, const sps__tflat_t *flat, size_t nf,
                       const sps__tree_row_t *nodes, size_t nn, sps__table_lanes_t *out) {
    const sps__tl_header_t *h = f->h;
    uint32_t *fl = calloc(nf ? nf : 1, sizeof *fl), *nl = calloc(nn ? nn : 1, sizeof *nl);
    out->flat = fl;
    out->nodes = nl;
    if (!fl || !nl) return SPS_ENOMEM;
    (void)flat;
    size_t k = 0;
    for (size_t i = 0; i < h->nnames && k < nf; i++)
        if (f->fold.acc[i].count) fl[k++] = f->lanes[i];
    for (size_t i = 0; i < nn; i++) nl[i] = f->lanes[f->fold.tree.n[i].region];
    nodes_within_parents(nodes, nn, nl);
    for (size_t th = 0; f->seen && th < h->nthreads; th++) /* threads that ran anything */
        for (size_t g = 0; g < h->nnames; g++)
            if (f->seen[th * h->nnames + g]) {
                out->total++;
                break;
            }
    return 0;
}

/* The per-rank view of a trace: one rank per process. */
static int tfold_ranks(FILE *fp, const tfold_t *f, const sps__report_opts_t *o) {
    const sps__tl_header_t *h = f->h;
    size_t np = h->nprocs, nn = h->nnames;
    if (o->ranks == 0 || np == 0 || (o->ranks < 0 && (np < 2 || !o->flat))) return 0;
    uint32_t *ranks = malloc(np * sizeof *ranks);
    int64_t *totals = malloc((nn ? nn : 1) * np * sizeof *totals);
    int rc = ranks && totals ? 0 : SPS_ENOMEM;
    for (size_t p = 0; !rc && p < np; p++)
        ranks[p] = h->procs[p].rank >= 0 ? (uint32_t)h->procs[p].rank : (uint32_t)p;
    for (size_t g = 0; !rc && g < nn; g++)
        for (size_t p = 0; p < np; p++) totals[g * np + p] = f->proc_total[p * nn + g];
    if (!rc) {
        if (o->tree || o->flat) fprintf(fp, "\n");
        rc = sps__rank_table_print(fp, h->names, nn, ranks, np, totals, o->sort, o->top);
    }
    free(ranks);
    free(totals);
    return rc;
}

/* The report of a trace (see sps__report_write). */
static int report_trace(FILE *fp, const char *path, sps__tl_format_t fmt,
                        sps__report_opts_t *o) {
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, fmt);
    if (rc) return rc; /* the reader's message */
    tfold_t f = {0};
    sps__tflat_t *flat = NULL;
    sps__tree_row_t *nodes = NULL;
    size_t nf = 0, nn = 0;
    rc = tfold_read(&f, r);
    int said = rc != 0; /* SPS_EFORMAT: the reader's message */
    if (rc && rc != SPS_EFORMAT) fail_code(rc, path);
    if (!rc) rc = tfold_tables(&f, &flat, &nf, &nodes, &nn);
    if (!rc && o->csv) {
        sps__table_opts_t t = {o->tree && !o->flat, !(o->tree && !o->flat), o->sort, o->top, 0};
        rc = sps__table_csv(fp, nodes, nn, flat, nf, &t);
    } else if (!rc) {
        unsigned long long calls = f.spans;
        int64_t t0 = 0, t1 = 0; /* the spans' extent: 100 % of "% session" */
        int any = 0;
        for (size_t i = 0; i < f.h->nnames; i++) {
            const sps__acc_t *a = &f.fold.acc[i];
            if (!a->count) continue;
            int64_t s0 = (int64_t)a->first_start, e1 = (int64_t)a->end_max;
            if (!any || s0 < t0) t0 = s0;
            if (!any || e1 > t1) t1 = e1;
            any = 1;
        }
        fprintf(fp, "%s: trace, %zu region%s, %llu call%s\n\n", path, nf,
                nf == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
        sps__table_lanes_t lanes = {0};
        rc = tfold_lanes(&f, flat, nf, nodes, nn, &lanes);
        sps__table_opts_t t = {o->tree, o->flat, o->sort, o->top, t1 - t0};
        if (!rc) rc = sps__table_print_lanes(fp, nodes, nn, flat, nf, &t, &lanes);
        lanes_free(&lanes);
        if (!rc) rc = tfold_ranks(fp, &f, o);
    }
    if (rc && !said) fail_code(rc, path);
    free(flat);
    free(nodes);
    tfold_free(&f);
    sps__tlr_free(r);
    return rc;
}

/* The flat view or the tree of an HDF5 file as CSV. */
static int csv_h5(FILE *fp, const sps__h5r_t *r, const sps__report_opts_t *o) {
    sps__tree_row_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    int rc = sps__h5r_tree(r, &nodes, &nn);
    if (rc == 0) rc = sps__h5r_flat(r, &flat, &nf);
    sps__table_opts_t t = {o->tree && !o->flat, !(o->tree && !o->flat), o->sort, o->top, 0};
    if (rc == 0) rc = sps__table_csv(fp, nodes, nn, flat, nf, &t);
    free(nodes);
    free(flat);
    return rc;
}

/* Flushes fp after a report of path.  0, or SPS_EIO with the message. */
static int report_flush(FILE *fp, const char *path) {
    if (fflush(fp) == 0 && !ferror(fp)) return 0;
    return sps__err_fail(SPS_EIO, "%s: writing the report failed", path);
}

/* "Where the time went": the heaviest leaf functions shown per region. */
#define SAMPLES_TOP 10

int sps__report_write(FILE *fp, const char *path,
                      const sps__report_opts_t *opt) {
    if (!fp || !path || !opt)
        return sps__err_fail(SPS_EINVAL, "no file, output or options");
    sps__report_opts_t o = *opt;
    sps__tl_format_t fmt = sps__tl_format_of(path);
    if (fmt != SPS__TL_H5 && fmt != SPS__TL_UNKNOWN) {
        int rc = report_trace(fp, path, fmt, &o);
        return rc ? rc : report_flush(fp, path);
    }
    sps__h5r_t *r = NULL;
    int rc = sps__h5r_open(&r, path);
    if (rc) return rc; /* the reader's message */
    if (o.csv) {
        rc = csv_h5(fp, r, &o);
        sps__h5r_free(r);
        return rc ? fail_code(rc, path) : report_flush(fp, path);
    }
    rc = print_tables(fp, path, r, &o);
    if (rc == 0) rc = print_ranks(fp, path, r, &o);
    sps__h5r_free(r);
    if (rc) return fail_code(rc, path);
    if (o.counters && (rc = sps__counters_print(fp, path)))
        return rc; /* the reader's message */
    if ((rc = sps__values_print(fp, path)))
        return rc; /* the reader's message */
    if ((rc = sps__comm_print(fp, path)))
        return rc == SPS_ENOMEM ? fail_code(rc, path) : rc; /* the reader's message */
    if ((rc = sps__samples_print(fp, path, SAMPLES_TOP)))
        return rc == SPS_ENOMEM ? fail_code(rc, path) : rc; /* the reader's message */
    return report_flush(fp, path);
}

/* ------------------------------------------------------------------------ */
/* Public                                                                    */
/* ------------------------------------------------------------------------ */

int sps_report(const char *path, void *out_file, const char *sort, size_t top,
               char *err, size_t errlen) {
    sps__report_opts_t o = SPS__REPORT_OPTS_INIT;
    int rc;
    if (!path || !out_file)
        rc = sps__err_fail(SPS_EINVAL, "no path or output");
    else if (sps__sort_parse(sort, &o.sort) != 0)
        rc = sps__err_fail(SPS_EINVAL,
                           "unknown sort key '%s' (" SPS__SORT_KEYS ")", sort);
    else {
        o.top = top;
        rc = sps__report_write((FILE *)out_file, path, &o);
    }
    return sps__err_copy(rc, err, errlen);
}

/* Sets the message of a failed write of out: the noted errno's cause, else
 * what rc means.  Returns rc. */
static int write_fail(int rc, const char *out) {
    if (sps__err_os()) return sps__err_os_fail(rc, "writing", out);
    return sps__err_fail(rc, "%s: %s", out, sps_strerror(rc));
}

/* The folded stacks of the samples of the file at in_path, by region when
 * by_region, into out (through a temporary name renamed into place).
 * 0 or a code, the message set. */
static int stacks_write(const char *in, const char *out, int by_region) {
    sps__h5r_samples_t s;
    int rc = sps__h5r_samples(in, &s);
    if (rc) return rc; /* the reader's message */
    sps__folded_t f;
    rc = sps__folded_build(&s, NULL, 0, by_region, &f);
    if (!rc && !f.nsamples)
        rc = sps__err_fail(SPS_EINVAL, "%s: no stack samples (record with sample_hz set, "
                           "or profile(with_samples=True))", in);
    char *tmp = rc ? NULL : sps__tmp_name(out, NULL);
    FILE *fp = NULL;
    if (!rc && !tmp) rc = fail_code(SPS_ENOMEM, in);
    if (!rc && !(fp = sps__out_open(tmp, 1))) rc = write_fail(errno == ENOSPC ||
                                                        errno == EDQUOT || errno == EIO
                                                        ? SPS_EIO : SPS_EPATH, out);
    else if (!rc) {
        rc = sps__folded_write(fp, &f, &s);
        if (fclose(fp) != 0 && !rc) rc = SPS_EIO;
        if (!rc && rename(tmp, out) != 0) {
            sps__err_os_note(errno);
            rc = SPS_EPATH;
        }
        if (rc) {
            unlink(tmp); /* no partial output, no temporary file */
            write_fail(rc, out);
        }
    }
    free(tmp);
    sps__folded_free(&f);
    sps__h5r_samples_free(&s);
    return rc;
}

int sps_export_stacks(const char *h5_path, const char *out_path, int by_region) {
    sps__err_clear();
    if (!h5_path || !out_path) return sps__err_fail(SPS_EINVAL, "no input or output path");
    return stacks_write(h5_path, out_path, by_region);
}

/* /metadata for the bindings (spanscope.h). */
int sps_metadata_read(const char *path, sps_meta_attr_t **out, size_t *n,
                      char *err, size_t errlen) {
    if (out) *out = NULL;
    if (n) *n = 0;
    if (!path || !out || !n)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "no path or output"),
                             err, errlen);
    sps__h5r_meta_t m;
    int rc = sps__h5r_metadata(path, &m);
    if (rc) return sps__err_copy(rc, err, errlen); /* the reader's message */
    *out = m.attrs; /* the caller owns them now; the view is not needed */
    *n = m.nattrs;
    return 0;
}

void sps_metadata_free(sps_meta_attr_t *attrs, size_t n) {
    sps__h5r_attrs_free(attrs, n);
}

int sps_h5_check(const char *path, char *err, size_t errlen) {
    if (!path) return sps__err_copy(sps__err_fail(SPS_EINVAL, "no path"), err, errlen);
    return sps__err_copy(sps__h5_guard(path), err, errlen);
}

void sps_h5_check_stats(uint64_t *checked, uint64_t *refused) {
    sps__h5_guard_stats(checked, refused);
}
