/*
 * table.c -- the summary table: a call tree and a flat per-region view.
 *
 *   Call tree (session 1.204 s; children by total time)
 *   region                    calls  % session     total      self ...
 *   ------------------------------------------------------------ ...
 *   main                          1     100.0%   1.204 s  10.05 ms ...
 *     solve                      10      95.1%   1.145 s   1.145 s ...
 *   ------------------------------------------------------------ ...
 *   TOTAL                        11     100.0%   1.204 s   1.204 s
 *
 * Input comes from a live session or from a file someone else wrote, so
 * nothing here trusts it: parent links may point anywhere or form cycles,
 * names may hold control bytes, numbers may be negative.  The output stays
 * well formed whatever comes in.
 */
#include "formats/formats.h"

#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MIN 6       /* "region" */
#define NAME_MAX_W 60    /* widest region column */
#define INDENT_MAX 24    /* deepest indentation shown, in levels */
#define TIME_W 10
#define CALLS_W 10
#define PCT_W 10

/* ------------------------------------------------------------------------ */
/* Cells                                                                     */
/* ------------------------------------------------------------------------ */

/* Formats ns with a human unit into buf: "812 ns", "12.35 us", "4.20 ms",
 * "1.204 s".  Fits in 16 bytes for any int64. */
static void fmt_time(char *buf, size_t cap, int64_t ns) {
    double v = (double)ns, a = v < 0 ? -v : v;
    if (a < 1e3) snprintf(buf, cap, "%lld ns", (long long)ns);
    else if (a < 1e6) snprintf(buf, cap, "%.2f us", v / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%.2f ms", v / 1e6);
    else if (a < 1e13) snprintf(buf, cap, "%.3f s", v / 1e9);
    else snprintf(buf, cap, "%.3g s", v / 1e9);
}

/* A double as int64 ns, clamped (NaN gives 0): casting an out-of-range
 * double is undefined. */
static int64_t dbl_ns(double v) {
    if (v != v) return 0;
    if (v >= 9.2e18) return INT64_MAX;
    if (v <= -9.2e18) return INT64_MIN;
    return (int64_t)v;
}

/* Formats part as a percentage of whole into buf ("-" without a whole). */
static void fmt_pct(char *buf, size_t cap, int64_t part, int64_t whole) {
    if (whole <= 0) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.1f%%", 100.0 * (double)part / (double)whole);
}

/* The name to show: "(empty)" for "", "(null)" for NULL. */
static const char *shown_name(const char *s) {
    return !s ? "(null)" : !*s ? "(empty)" : s;
}

/* One row's numbers. */
typedef struct cells {
    uint64_t calls;
    int64_t total, self, min, max;
    double mean;
    int has_minmax; /* min/max/mean meaningful */
    uint32_t lanes; /* threads that ran it (0: 1) */
} cells_t;

/* Prints the numeric columns of one row and the newline.  "% session":
 * the row's total over the session time of the threads that ran it. */
static void put_cells(FILE *fp, const cells_t *c, int64_t session) {
    char pct[32], t[5][32];
    int64_t lanes = c->lanes > 1 ? c->lanes : 1;
    fmt_pct(pct, sizeof pct, c->total,
            session > 0 && session <= INT64_MAX / lanes ? session * lanes : session);
    fmt_time(t[0], sizeof t[0], c->total);
    fmt_time(t[1], sizeof t[1], c->self);
    fmt_time(t[2], sizeof t[2], dbl_ns(c->mean));
    fmt_time(t[3], sizeof t[3], c->min);
    fmt_time(t[4], sizeof t[4], c->max);
    if (!c->has_minmax)
        for (int i = 2; i < 5; i++) snprintf(t[i], sizeof t[i], "-");
    fprintf(fp, " %*llu %*s %*s %*s %*s %*s %*s\n", CALLS_W,
            (unsigned long long)c->calls, PCT_W, pct, TIME_W, t[0], TIME_W,
            t[1], TIME_W, t[2], TIME_W, t[3], TIME_W, t[4]);
}

/* Prints the column header line. */
static void put_header(FILE *fp, size_t name_w) {
    sps__utf8_put_cell(fp, 0, "region", name_w);
    fprintf(fp, " %*s %*s %*s %*s %*s %*s %*s\n", CALLS_W, "calls", PCT_W,
            "% session", TIME_W, "total", TIME_W, "self", TIME_W, "mean",
            TIME_W, "min", TIME_W, "max");
}

/* Prints a rule as wide as the table. */
static void put_rule(FILE *fp, size_t name_w) {
    size_t w = name_w + 1 + CALLS_W + 1 + PCT_W + 5 * (1 + TIME_W);
    for (size_t i = 0; i < w; i++) fputc('-', fp);
    fputc('\n', fp);
}

/* ------------------------------------------------------------------------ */
/* Tree view                                                                 */
/* ------------------------------------------------------------------------ */

/* A child reference, sortable without context. */
typedef struct kid {
    int64_t total;
    const char *name;
    int32_t idx;
} kid_t;

/* qsort order: total descending, then name, then index. */
static int kid_cmp(const void *a, const void *b) {
    const kid_t *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    int c = strcmp(shown_name(x->name), shown_name(y->name));
    if (c) return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The tree in CSR form: node i's children are kids[first[i] ..
 * first[i + 1]); the roots (nodes with no valid parent) are
 * kids[first[n] .. first[n + 1]). */
typedef struct tree {
    const sps__tree_row_t *nodes;
    size_t n;
    size_t *first;  /* n + 2 */
    kid_t *kids;    /* n */
    unsigned char *seen;
} tree_t;

/* The parent slot of node i: its parent's index, or n for a root (no
 * parent, or one out of range, or itself). */
static size_t parent_slot(const sps__tree_row_t *nodes, size_t n, size_t i) {
    int32_t p = nodes[i].parent;
    if (p < 0 || (size_t)p >= n || (size_t)p == i) return n;
    return (size_t)p;
}

/* Builds t's child lists (sorted) from nodes.  Returns 0 or SPS_ENOMEM. */
static int tree_build(tree_t *t, const sps__tree_row_t *nodes, size_t n) {
    t->nodes = nodes;
    t->n = n;
    t->first = calloc(n + 2, sizeof *t->first);
    t->kids = malloc((n ? n : 1) * sizeof *t->kids);
    t->seen = calloc(n ? n : 1, 1);
    if (!t->first || !t->kids || !t->seen) return SPS_ENOMEM;
    for (size_t i = 0; i < n; i++) t->first[parent_slot(nodes, n, i) + 1]++;
    for (size_t s = 0; s <= n; s++) t->first[s + 1] += t->first[s];
    size_t *fill = malloc((n + 1) * sizeof *fill);
    if (!fill) return SPS_ENOMEM;
    memcpy(fill, t->first, (n + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        t->kids[fill[parent_slot(nodes, n, i)]++] =
            (kid_t){nodes[i].total_ns, nodes[i].name, (int32_t)i};
    free(fill);
    for (size_t s = 0; s <= n; s++)
        qsort(t->kids + t->first[s], t->first[s + 1] - t->first[s],
              sizeof *t->kids, kid_cmp);
    return 0;
}

/* Frees what tree_build allocated. */
static void tree_free(tree_t *t) {
    free(t->first);
    free(t->kids);
    free(t->seen);
}

/* The widest name column the tree needs (indent + name), clamped. */
static size_t tree_name_width(const tree_t *t, const int32_t *depth) {
    size_t w = NAME_MIN;
    for (size_t i = 0; i < t->n; i++) {
        size_t d = depth[i] < INDENT_MAX ? (size_t)depth[i] : INDENT_MAX;
        size_t x = 2 * d + sps__utf8_width(shown_name(t->nodes[i].name));
        if (x > w) w = x;
    }
    return w > NAME_MAX_W ? NAME_MAX_W : w;
}

/* A pending node of the depth-first walk. */
typedef struct visit {
    int32_t idx;
    int32_t depth;
} visit_t;

/* Walks the tree depth first from root, children in sorted order, each
 * node once (seen marks break cycles): appends every node reached to
 * order[*norder...] and sets its depth[].  stack has room for n entries. */
static void tree_walk(tree_t *t, int32_t root, visit_t *stack,
                      int32_t *order, size_t *norder, int32_t *depth) {
    size_t top = 0;
    stack[top++] = (visit_t){root, 0};
    t->seen[root] = 1;
    while (top) {
        visit_t v = stack[--top];
        order[(*norder)++] = v.idx;
        depth[v.idx] = v.depth;
        size_t a = t->first[v.idx], b = t->first[v.idx + 1];
        for (size_t k = b; k > a; k--) {
            int32_t c = t->kids[k - 1].idx;
            if (t->seen[c]) continue;
            t->seen[c] = 1;
            stack[top++] = (visit_t){c, v.depth + 1};
        }
    }
}

/* Orders every node for printing: the true roots by total, then each node
 * left unreached (it sits on a cycle of parent links) as a root of its own.
 * Fills order[0..n) and depth[].  Returns 0 or SPS_ENOMEM. */
static int tree_order(tree_t *t, int32_t *order, int32_t *depth) {
    visit_t *stack = malloc((t->n ? t->n : 1) * sizeof *stack);
    size_t norder = 0;
    if (!stack) return SPS_ENOMEM;
    for (size_t k = t->first[t->n]; k < t->first[t->n + 1]; k++)
        tree_walk(t, t->kids[k].idx, stack, order, &norder, depth);
    kid_t *rest = malloc((t->n ? t->n : 1) * sizeof *rest);
    size_t nrest = 0;
    for (size_t i = 0; rest && i < t->n; i++)
        if (!t->seen[i])
            rest[nrest++] = (kid_t){t->nodes[i].total_ns, t->nodes[i].name,
                                    (int32_t)i};
    if (rest) qsort(rest, nrest, sizeof *rest, kid_cmp);
    for (size_t k = 0; rest && k < nrest; k++)
        if (!t->seen[rest[k].idx])
            tree_walk(t, rest[k].idx, stack, order, &norder, depth);
    free(stack);
    int rc = rest ? 0 : SPS_ENOMEM;
    free(rest);
    return rc;
}

/* The cells of tree node x. */
static cells_t node_cells(const sps__tree_row_t *x) {
    cells_t c = {x->calls, x->total_ns, x->self_ns, x->min_ns, x->max_ns,
                 x->calls ? (double)x->total_ns / (double)x->calls : 0.0,
                 x->calls > 0, 0};
    return c;
}

/* Prints the rows of the tree in order, then the TOTAL row. */
static void tree_rows(FILE *fp, const tree_t *t, const int32_t *order,
                      const int32_t *depth, size_t name_w, int64_t session,
                      const sps__table_lanes_t *lanes) {
    cells_t tot = {0, 0, 0, 0, 0, 0.0, 0, lanes ? lanes->total : 0};
    if (t->n == 0) fprintf(fp, "(no calls recorded)\n");
    for (size_t k = 0; k < t->n; k++) {
        const sps__tree_row_t *x = &t->nodes[order[k]];
        int32_t d = depth[order[k]];
        cells_t c = node_cells(x);
        if (lanes && lanes->nodes) c.lanes = lanes->nodes[order[k]];
        sps__utf8_put_cell(fp, 2 * (size_t)(d < INDENT_MAX ? d : INDENT_MAX),
                           shown_name(x->name), name_w);
        put_cells(fp, &c, session);
        tot.calls += x->calls;
        tot.self += x->self_ns;
        if (d == 0) tot.total += x->total_ns;
    }
    put_rule(fp, name_w);
    sps__utf8_put_cell(fp, 0, "TOTAL", name_w);
    put_cells(fp, &tot, session);
}

/* Prints the tree view.  Returns 0 or SPS_ENOMEM. */
static int tree_print(FILE *fp, const sps__tree_row_t *nodes, size_t n,
                      int64_t session, const sps__table_lanes_t *lanes) {
    tree_t t = {0};
    int32_t *order = malloc((n ? n : 1) * sizeof *order);
    int32_t *depth = malloc((n ? n : 1) * sizeof *depth);
    int rc = order && depth ? tree_build(&t, nodes, n) : SPS_ENOMEM;
    if (rc == 0) rc = tree_order(&t, order, depth);
    if (rc == 0) {
        char s[32];
        size_t name_w = tree_name_width(&t, depth);
        fmt_time(s, sizeof s, session);
        fprintf(fp, "Call tree (session %s%s; children by total time)\n",
                session > 0 ? s : "unknown",
                lanes && lanes->total > 1 ? ", % of the time of the threads running "
                                            "each region" : "");
        put_header(fp, name_w);
        put_rule(fp, name_w);
        tree_rows(fp, &t, order, depth, name_w, session, lanes);
    }
    tree_free(&t);
    free(order);
    free(depth);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Flat view                                                                 */
/* ------------------------------------------------------------------------ */

/* A flat row with the order it sorts by. */
typedef struct frow {
    const sps__tflat_t *f;
    size_t idx;
    sps__sort_t by;
} frow_t;

/* The sort key of f under `by` (larger first), as a double; a NaN mean
 * sorts last, so the order stays consistent for qsort. */
static double flat_key(const sps__tflat_t *f, sps__sort_t by) {
    switch (by) {
    case SPS__SORT_TOTAL: return (double)f->total_ns;
    case SPS__SORT_CALLS: return (double)f->calls;
    case SPS__SORT_MEAN: return f->mean_ns == f->mean_ns ? f->mean_ns
                                                         : -DBL_MAX;
    case SPS__SORT_MAX: return (double)f->max_ns;
    case SPS__SORT_NAME: return 0.0;
    case SPS__SORT_SELF: default: return (double)f->self_ns;
    }
}

/* qsort order: key descending (name ascending for SPS__SORT_NAME), then
 * name, then input order. */
static int frow_cmp(const void *a, const void *b) {
    const frow_t *x = a, *y = b;
    double kx = flat_key(x->f, x->by), ky = flat_key(y->f, y->by);
    if (kx != ky) return kx > ky ? -1 : 1;
    int c = strcmp(shown_name(x->f->name), shown_name(y->f->name));
    if (c) return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The sort keys' names, by sps__sort_t. */
static const char *const k_sort_names[] = {"self", "total", "calls", "mean",
                                           "max", "name"};

const char *sps__sort_name(sps__sort_t by) {
    size_t n = sizeof k_sort_names / sizeof *k_sort_names;
    return (unsigned)by < n ? k_sort_names[by] : "self";
}

int sps__sort_parse(const char *s, sps__sort_t *out) {
    if (!s) s = "self";
    for (size_t i = 0; i < sizeof k_sort_names / sizeof *k_sort_names; i++)
        if (strcmp(s, k_sort_names[i]) == 0) {
            *out = (sps__sort_t)i;
            return 0;
        }
    return SPS_EINVAL;
}

/* The rows of the flat view, for the text and the CSV alike: flat[0..n)
 * sorted by opt->sort (*by: the key used, SPS__SORT_SELF for an unknown
 * one), of which the first *shown are shown (opt->top; all when 0).
 * Returns the malloc'd array of n rows (caller frees; they point into
 * flat), or NULL when out of memory. */
static frow_t *flat_rows(const sps__tflat_t *flat, size_t n,
                         const sps__table_opts_t *opt, sps__sort_t *by,
                         size_t *shown) {
    frow_t *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return NULL;
    *by = (unsigned)opt->sort <= SPS__SORT_NAME ? opt->sort : SPS__SORT_SELF;
    for (size_t i = 0; i < n; i++) r[i] = (frow_t){&flat[i], i, *by};
    qsort(r, n, sizeof *r, frow_cmp);
    *shown = opt->top && opt->top < n ? opt->top : n;
    return r;
}

/* Prints the flat view: rows sorted by opt->sort, the first opt->top of
 * them (all when 0).  Returns 0 or SPS_ENOMEM. */
static int flat_print(FILE *fp, const sps__tflat_t *flat, size_t n,
                      const sps__table_opts_t *opt, const sps__table_lanes_t *lanes) {
    sps__sort_t by;
    size_t shown;
    frow_t *r = flat_rows(flat, n, opt, &by, &shown);
    if (!r) return SPS_ENOMEM;
    size_t name_w = NAME_MIN;
    for (size_t i = 0; i < shown; i++) {
        size_t w = sps__utf8_width(shown_name(r[i].f->name));
        if (w > name_w) name_w = w;
    }
    if (name_w > NAME_MAX_W) name_w = NAME_MAX_W;
    fprintf(fp, "Regions (by %s; %zu of %zu)\n", sps__sort_name(by), shown, n);
    put_header(fp, name_w);
    put_rule(fp, name_w);
    if (n == 0) fprintf(fp, "(no regions)\n");
    for (size_t i = 0; i < shown; i++) {
        const sps__tflat_t *f = r[i].f;
        cells_t c = {f->calls, f->total_ns, f->self_ns, f->min_ns, f->max_ns,
                     f->mean_ns, f->calls > 0,
                     lanes && lanes->flat ? lanes->flat[f - flat] : 0};
        sps__utf8_put_cell(fp, 0, shown_name(f->name), name_w);
        put_cells(fp, &c, opt->session_ns);
    }
    free(r);
    return 0;
}

/* Prints the tree view of nodes[0..nnodes) (opt->tree) and the flat view of
 * flat[0..nflat) (opt->flat) to fp, a blank line between them.  Nodes may
 * come in any order; children are sorted by total, and nodes whose parent
 * links are invalid or form a cycle are printed as roots.  Arrays are only
 * read.  opt NULL means both views, sorted by self time, all rows, no
 * session time (the "% session" column shows "-").
 * Returns 0, SPS_EINVAL (fp NULL, or an array NULL with its count > 0),
 * SPS_ENOMEM or SPS_EIO (a write to fp failed). */
int sps__table_print(FILE *fp, const sps__tree_row_t *nodes, size_t nnodes,
                     const sps__tflat_t *flat, size_t nflat,
                     const sps__table_opts_t *opt) {
    return sps__table_print_lanes(fp, nodes, nnodes, flat, nflat, opt, NULL);
}

/* sps__table_print with each row's threads (formats.h). */
int sps__table_print_lanes(FILE *fp, const sps__tree_row_t *nodes, size_t nnodes,
                           const sps__tflat_t *flat, size_t nflat,
                           const sps__table_opts_t *opt, const sps__table_lanes_t *lanes) {
    static const sps__table_opts_t defaults = {1, 1, SPS__SORT_SELF, 0, 0};
    int rc = 0;
    if (!fp || (nnodes && !nodes) || (nflat && !flat)) return SPS_EINVAL;
    if (nnodes > (size_t)INT32_MAX) return SPS_EINVAL;
    if (!opt) opt = &defaults;
    if (opt->tree) rc = tree_print(fp, nodes, nnodes, opt->session_ns, lanes);
    if (rc == 0 && opt->tree && opt->flat) fputc('\n', fp);
    if (rc == 0 && opt->flat) rc = flat_print(fp, flat, nflat, opt, lanes);
    if (rc == 0 && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Per-rank view                                                             */
/* ------------------------------------------------------------------------ */

#define RANK_W 10

/* A region's spread over the ranks, with the order it sorts by. */
typedef struct rrow {
    const char *name;
    size_t idx;
    int64_t min, max;
    double mean, sum;
    uint32_t slowest;
    double imb;     /* percent; -1 when max <= 0 (no imbalance to speak of) */
    int by_total;
} rrow_t;

/* The time a region's imbalance costs: max - mean over the ranks (ns),
 * what the other ranks wait for the slowest, on average. */
static double rrow_lost(const rrow_t *x) { return (double)x->max - x->mean; }

/* qsort order: time lost to imbalance (or sum over ranks) descending, then
 * name, then input order.  Not by the ratio: a 1 us region 90 % imbalanced
 * matters less than a 10 s one 10 % imbalanced (issue 12). */
static int rrow_cmp(const void *a, const void *b) {
    const rrow_t *x = a, *y = b;
    double kx = x->by_total ? x->sum : rrow_lost(x);
    double ky = y->by_total ? y->sum : rrow_lost(y);
    if (kx != ky) return kx > ky ? -1 : 1;
    int c = strcmp(shown_name(x->name), shown_name(y->name));
    if (c) return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The spread of region g: min / mean / max of its totals over the ranks,
 * the slowest rank (the lowest of equals) and the imbalance. */
static rrow_t rank_row(const char *const *names, size_t g,
                       const uint32_t *ranks, size_t nranks,
                       const int64_t *totals, int by_total) {
    const int64_t *t = totals + g * nranks;
    rrow_t x = {names[g], g, t[0], t[0], 0.0, 0.0, ranks[0], -1.0, by_total};
    for (size_t k = 0; k < nranks; k++) {
        if (t[k] < x.min) x.min = t[k];
        if (t[k] > x.max) {
            x.max = t[k];
            x.slowest = ranks[k];
        }
        x.sum += (double)t[k];
    }
    x.mean = x.sum / (double)nranks;
    if (x.max > 0) x.imb = 100.0 * ((double)x.max - x.mean) / (double)x.max;
    return x;
}

/* Prints the per-rank view (see sps_int.h).  Returns 0, SPS_EINVAL,
 * SPS_ENOMEM or SPS_EIO. */
int sps__rank_table_print(FILE *fp, const char *const *names, size_t nregions,
                          const uint32_t *ranks, size_t nranks,
                          const int64_t *totals, sps__sort_t sort,
                          size_t top) {
    if (!fp || (nregions && (!names || !totals || !nranks)) ||
        (nranks && !ranks))
        return SPS_EINVAL;
    rrow_t *r = malloc((nregions ? nregions : 1) * sizeof *r);
    if (!r) return SPS_ENOMEM;
    int by_total = sort == SPS__SORT_TOTAL;
    for (size_t g = 0; g < nregions; g++)
        r[g] = rank_row(names, g, ranks, nranks, totals, by_total);
    qsort(r, nregions, sizeof *r, rrow_cmp);
    size_t shown = top && top < nregions ? top : nregions;
    size_t name_w = NAME_MIN;
    for (size_t i = 0; i < shown; i++) {
        size_t w = sps__utf8_width(shown_name(r[i].name));
        if (w > name_w) name_w = w;
    }
    if (name_w > NAME_MAX_W) name_w = NAME_MAX_W;
    fprintf(fp, "Per rank (%zu rank%s; a region's total time on each rank, "
            "0 where a rank has no calls of it; by %s; %zu of %zu)\n",
            nranks, nranks == 1 ? "" : "s",
            by_total ? "total" : "time lost to imbalance",
            shown, nregions);
    sps__utf8_put_cell(fp, 0, "region", name_w);
    fprintf(fp, " %*s %*s %*s %*s %*s %*s\n", TIME_W, "min", TIME_W, "mean",
            TIME_W, "max", RANK_W, "slowest", PCT_W, "imbalance", TIME_W, "lost");
    size_t rule = name_w + 3 * (1 + TIME_W) + 1 + RANK_W + 1 + PCT_W + 1 + TIME_W;
    for (size_t i = 0; i < rule; i++) fputc('-', fp);
    fputc('\n', fp);
    if (nregions == 0) fprintf(fp, "(no regions)\n");
    for (size_t i = 0; i < shown; i++) {
        char t[4][32], pct[32];
        fmt_time(t[0], sizeof t[0], r[i].min);
        fmt_time(t[1], sizeof t[1], dbl_ns(r[i].mean));
        fmt_time(t[2], sizeof t[2], r[i].max);
        fmt_time(t[3], sizeof t[3], dbl_ns(rrow_lost(&r[i])));
        if (r[i].imb < 0) snprintf(pct, sizeof pct, "-");
        else snprintf(pct, sizeof pct, "%.1f%%", r[i].imb);
        sps__utf8_put_cell(fp, 0, shown_name(r[i].name), name_w);
        fprintf(fp, " %*s %*s %*s %*lu %*s %*s\n", TIME_W, t[0], TIME_W, t[1],
                TIME_W, t[2], RANK_W, (unsigned long)r[i].slowest, PCT_W,
                pct, TIME_W, t[3]);
    }
    free(r);
    return fflush(fp) != 0 || ferror(fp) ? SPS_EIO : 0;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */
/* ------------------------------------------------------------------------ */

/* Writes s as one CSV field (RFC 4180: quoted when it holds a comma, a
 * quote or a line break, quotes doubled). */
static void csv_field(FILE *fp, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"') fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

/* The tree as CSV rows in print order: the path of region names from the
 * root, joined by ';', and the node's numbers. */
static int tree_csv(FILE *fp, const sps__tree_row_t *nodes, size_t n) {
    tree_t t = {0};
    int32_t *order = malloc((n ? n : 1) * sizeof *order);
    int32_t *depth = malloc((n ? n : 1) * sizeof *depth);
    const sps__tree_row_t **path = malloc((n + 1) * sizeof *path);
    int rc = order && depth && path ? tree_build(&t, nodes, n) : SPS_ENOMEM;
    if (!rc) rc = tree_order(&t, order, depth);
    fputs("path,depth,calls,total_ns,self_ns,mean_ns,min_ns,max_ns\n", fp);
    for (size_t k = 0; !rc && k < n; k++) {
        const sps__tree_row_t *x = &nodes[order[k]];
        int32_t d = depth[order[k]];
        path[d] = x;
        size_t len = 1;
        for (int32_t i = 0; i <= d; i++) len += strlen(shown_name(path[i]->name)) + 1;
        char *p = malloc(len);
        if (!p) { rc = SPS_ENOMEM; break; }
        p[0] = 0;
        for (int32_t i = 0; i <= d; i++) {
            if (i) strcat(p, ";");
            strcat(p, shown_name(path[i]->name));
        }
        csv_field(fp, p);
        free(p);
        fprintf(fp, ",%d,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%.3f,%" PRId64 ",%" PRId64 "\n",
                (int)d, x->calls, x->total_ns, x->self_ns,
                x->calls ? (double)x->total_ns / (double)x->calls : 0.0,
                x->min_ns, x->max_ns);
    }
    tree_free(&t);
    free(order);
    free(depth);
    free(path);
    return rc;
}

/* The flat view as CSV rows, sorted and cut like flat_print. */
static int flat_csv(FILE *fp, const sps__tflat_t *flat, size_t n,
                    const sps__table_opts_t *opt) {
    sps__sort_t by;
    size_t shown;
    frow_t *r = flat_rows(flat, n, opt, &by, &shown);
    if (!r) return SPS_ENOMEM;
    fputs("region,calls,total_ns,self_ns,mean_ns,min_ns,max_ns\n", fp);
    for (size_t i = 0; i < shown; i++) {
        const sps__tflat_t *f = r[i].f;
        csv_field(fp, shown_name(f->name));
        fprintf(fp, ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%.3f,%" PRId64 ",%" PRId64 "\n",
                f->calls, f->total_ns, f->self_ns, f->mean_ns, f->min_ns, f->max_ns);
    }
    free(r);
    return 0;
}

int sps__table_csv(FILE *fp, const sps__tree_row_t *nodes, size_t nnodes,
                   const sps__tflat_t *flat, size_t nflat,
                   const sps__table_opts_t *opt) {
    if (!fp || !opt || (!nodes && nnodes) || (!flat && nflat)) return SPS_EINVAL;
    int rc = opt->tree ? tree_csv(fp, nodes, nnodes) : flat_csv(fp, flat, nflat, opt);
    if (!rc && ferror(fp)) rc = SPS_EIO;
    return rc;
}
