/*
 * h5_from_trace.c -- a timeline (any source the timeline readers know:
 * .json, .json.gz, .pftrace, or an .h5) written as a scope-profiler
 * schema-3 HDF5 file (formats.h: sps__h5_from_timeline), for `spanscope
 * convert TRACE OUT.h5` and `spanscope merge -o OUT.h5 TRACES...`.
 *
 * Two passes over the source (it is opened twice): the first counts the
 * calls of every row -- a (rank, region) pair, a rank being a process
 * (its own rank, or its index when it has none) -- so that every dataset
 * is created at its final size; the second folds the spans with the one
 * fold (sps__fold_tl, one lane per thread, one "region" per row, so its
 * accumulators are the rows' statistics and self times) and writes each
 * call into its row: start gaps, durations, call ids (start order within
 * the rank, the meaning of scope-profiler's call_ids), parent ids (the
 * call below it on the fold's stack) and thread ids.  Each row buffers a
 * block of calls and writes it when full.  Memory: O(rows x block +
 * threads x depth), never O(calls).
 */
#include "formats/formats.h"
#include "formats/timeline.h"

#include <stdlib.h>
#include <string.h>

/* Calls buffered per row, and the most all rows' buffers may take. */
#define BLOCK_MAX 4096
#define BUFFER_BYTES ((size_t)64 << 20)

/* One row being written: its buffered calls. */
typedef struct orow {
    uint64_t written, n;       /* calls written, calls in the buffer */
    int64_t prev_start;        /* start of the row's previous call */
    int64_t *col[5];           /* start gaps, durations, call, parent, thread ids */
} orow_t;

/* The conversion's state. */
typedef struct conv {
    const char *in;
    sps__tl_format_t fmt;
    size_t nnames, nranks;
    int64_t *rank_of_thread;   /* per header thread: its rank's index */
    int64_t *rank_value;       /* per rank index: the rank number */
    int64_t *row_of;           /* [rank index * nnames + name]: row, or -1 */
    sps__row_t *rows;
    size_t nrows;
    uint64_t nevents;
    int64_t first_ns, last_ns;
    orow_t *out;
    size_t block;
    int64_t *next_call;        /* per rank index: the next call id */
    sps__thread_info_t *threads; /* names owned (the first reader's go) */
    size_t nthreads;
    const sps__h5_run_t *run;  /* the caller's facts, or NULL */
    sps__rinfo_t *info;        /* per header name, from run (borrowed strings) */
} conv_t;

/* Frees everything c owns. */
static void conv_free(conv_t *c) {
    for (size_t i = 0; c->out && i < c->nrows; i++)
        for (int k = 0; k < 5; k++) free(c->out[i].col[k]);
    free(c->out);
    free(c->rank_of_thread);
    free(c->rank_value);
    free(c->row_of);
    free(c->rows);
    free(c->next_call);
    for (size_t t = 0; c->threads && t < c->nthreads; t++) free((char *)c->threads[t].name);
    free(c->threads);
    free(c->info);
}

/* The ranks of h: each process is a rank (its own number, or its index
 * when it has none); threads map to their process's rank index.  0 or
 * SPS_ENOMEM. */
static int ranks_of(conv_t *c, const sps__tl_header_t *h) {
    size_t np = h->nprocs ? h->nprocs : 1;
    c->rank_of_thread = calloc(h->nthreads ? h->nthreads : 1, sizeof *c->rank_of_thread);
    c->rank_value = calloc(np, sizeof *c->rank_value);
    if (!c->rank_of_thread || !c->rank_value) return SPS_ENOMEM;
    c->nranks = np;
    for (size_t p = 0; p < h->nprocs; p++)
        c->rank_value[p] = h->procs[p].rank >= 0 ? h->procs[p].rank : (int64_t)p;
    for (size_t t = 0; t < h->nthreads; t++)
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == h->threads[t].pid) c->rank_of_thread[t] = (int64_t)p;
    return 0;
}

/* qsort order of rows: region, then rank (the layout's order). */
static int row_cmp(const void *a, const void *b) {
    const sps__row_t *x = a, *y = b;
    if (x->file_region != y->file_region) return x->file_region < y->file_region ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Puts the rows in the layout's order and gives them their offsets in
 * /events; row_of follows.  0 or SPS_ENOMEM. */
static int order_rows(conv_t *c) {
    if (c->nrows) qsort(c->rows, c->nrows, sizeof *c->rows, row_cmp); /* rows NULL when none */
    uint64_t off = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        c->rows[i].offset = off;
        off += c->rows[i].count;
    }
    /* row_of by (rank index, name): find each cell's row again */
    for (size_t k = 0; k < c->nranks; k++)
        for (size_t g = 0; g < c->nnames; g++) {
            int64_t *slot = &c->row_of[k * c->nnames + g];
            if (*slot < 0) continue;
            sps__row_t key = {.file_region = (uint32_t)g, .rank = (uint32_t)c->rank_value[k]};
            sps__row_t *hit = bsearch(&key, c->rows, c->nrows, sizeof *c->rows, row_cmp);
            *slot = hit ? hit - c->rows : -1;
        }
    return 0;
}

/* Pass 1: the rows and their call counts, then their offsets.  0 or a
 * code (message set for a bad source). */
static int count_rows(conv_t *c, sps__tlr_t *r) {
    const sps__tl_header_t *h = sps__tlr_header(r);
    c->nnames = h->nnames;
    int rc = ranks_of(c, h);
    if (rc) return rc;
    size_t cells = c->nranks * (h->nnames ? h->nnames : 1);
    if (c->nranks && cells / c->nranks != (h->nnames ? h->nnames : 1)) return SPS_ENOMEM;
    c->row_of = malloc(cells * sizeof *c->row_of);
    if (!c->row_of) return SPS_ENOMEM;
    for (size_t i = 0; i < cells; i++) c->row_of[i] = -1;
    size_t cap = 0;
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if (s.thread >= h->nthreads || s.name >= h->nnames)
            return sps__err_fail(SPS_EFORMAT, "%s: a span names no thread or region", c->in);
        int64_t *slot = &c->row_of[(size_t)c->rank_of_thread[s.thread] * c->nnames + s.name];
        if (*slot < 0) {
            if (sps__grow((void **)&c->rows, &cap, c->nrows, sizeof *c->rows)) return SPS_ENOMEM;
            memset(&c->rows[c->nrows], 0, sizeof *c->rows);
            c->rows[c->nrows].file_region = s.name;
            c->rows[c->nrows].rank = (uint32_t)c->rank_value[c->rank_of_thread[s.thread]];
            *slot = (int64_t)c->nrows++;
        }
        c->rows[*slot].count++;
        if (!c->nevents || s.start_ns < c->first_ns) c->first_ns = s.start_ns;
        if (!c->nevents || s.end_ns > c->last_ns) c->last_ns = s.end_ns;
        c->nevents++;
    }
    if (rc) return rc;
    return order_rows(c);
}

/* The thread table: every thread of h (its tid as ident and native id),
 * names copied (h goes with the first pass's reader). */
static int thread_table(conv_t *c, const sps__tl_header_t *h) {
    c->threads = calloc(h->nthreads ? h->nthreads : 1, sizeof *c->threads);
    if (!c->threads) return SPS_ENOMEM;
    for (size_t t = 0; t < h->nthreads; t++) {
        char *name = strdup(h->threads[t].name ? h->threads[t].name : "");
        if (!name) return SPS_ENOMEM;
        c->threads[t] = (sps__thread_info_t){(int64_t)t, h->threads[t].tid, h->threads[t].tid,
                                             c->first_ns, c->last_ns, 0, name};
        c->nthreads = t + 1;
    }
    return 0;
}

/* Buffers for every row's calls: BLOCK_MAX each, fewer when the rows are
 * many (BUFFER_BYTES in all), at least 64.  0 or SPS_ENOMEM. */
static int buffers(conv_t *c) {
    c->block = BLOCK_MAX;
    if (c->nrows && BUFFER_BYTES / (c->nrows * 5 * sizeof(int64_t)) < c->block)
        c->block = BUFFER_BYTES / (c->nrows * 5 * sizeof(int64_t));
    if (c->block < 64) c->block = 64;
    c->out = calloc(c->nrows ? c->nrows : 1, sizeof *c->out);
    c->next_call = calloc(c->nranks ? c->nranks : 1, sizeof *c->next_call);
    if (!c->out || !c->next_call) return SPS_ENOMEM;
    for (size_t i = 0; i < c->nrows; i++) {
        size_t n = c->rows[i].count < c->block ? (size_t)c->rows[i].count : c->block;
        for (int k = 0; k < 5; k++)
            if (!(c->out[i].col[k] = malloc((n ? n : 1) * sizeof(int64_t)))) return SPS_ENOMEM;
    }
    return 0;
}

/* Writes row i's buffered calls.  0 or the writer's code. */
static int flush_row(conv_t *c, sps__h5w_t *w, size_t i) {
    orow_t *o = &c->out[i];
    if (!o->n) return 0;
    int rc = sps__h5w_rows(w, c->rows[i].offset + o->written, (size_t)o->n, o->col[0],
                           o->col[1], o->col[2], o->col[3], o->col[4]);
    o->written += o->n;
    o->n = 0;
    return rc;
}

/* Pass 2: folds and writes every call.  0 or a code. */
static int write_calls(conv_t *c, sps__tlr_t *r, sps__h5w_t *w) {
    const sps__tl_header_t *h = sps__tlr_header(r);
    sps__fold_tl_t fold;
    int rc = sps__fold_tl_init(&fold, h->nthreads, c->nrows, 0);
    if (rc) return rc;
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if (s.thread >= h->nthreads || s.name >= c->nnames) { rc = SPS_EFORMAT; break; }
        int64_t rk = c->rank_of_thread[s.thread], row = c->row_of[(size_t)rk * c->nnames + s.name];
        if (row < 0 || c->out[row].written + c->out[row].n >= c->rows[row].count) {
            rc = sps__err_fail(SPS_EFORMAT, "%s: the file changed while it was read", c->in);
            break;
        }
        int64_t d = sps__fold_tl_add(&fold, s.thread, (uint32_t)row, s.start_ns, s.end_ns, 0);
        if (d < 0) { rc = (int)d; break; }
        sps__stack_t *st = &fold.lanes[s.thread];
        int64_t id = c->next_call[rk]++;
        st->f[d].id = id;
        orow_t *o = &c->out[row];
        size_t j = (size_t)o->n++;
        o->col[0][j] = s.start_ns - (o->written + j ? o->prev_start : 0);
        o->prev_start = s.start_ns;
        o->col[1][j] = s.end_ns - s.start_ns;
        o->col[2][j] = id;
        o->col[3][j] = d > 0 ? st->f[d - 1].id : -1;
        o->col[4][j] = h->threads[s.thread].tid;
        if (o->n == c->block && (rc = flush_row(c, w, (size_t)row))) break;
    }
    for (size_t i = 0; !rc && i < c->nrows; i++) rc = flush_row(c, w, i);
    if (!rc) {
        sps__fold_tl_finish(&fold);
        for (size_t i = 0; i < c->nrows; i++) {
            sps__summary_of(&fold.acc[i], &c->rows[i].s);
            c->rows[i].exclusive_total = (int64_t)fold.acc[i].self;
        }
    }
    sps__fold_tl_free(&fold);
    return rc;
}

/* The layout of the output (borrowing c and h's names). */
/* Orders indices of the run's names (ctx: the names), for qsort_r. */
static int run_name_cmp(const void *a, const void *b, void *ctx) {
    const char *const *names = ctx;
    return strcmp(names[*(const size_t *)a], names[*(const size_t *)b]);
}

/* c->info: the run's attributes of every header name, matched by name
 * (the reader interns names in its own order).  0 or SPS_ENOMEM. */
static int run_info(conv_t *c, const sps__tl_header_t *h) {
    const sps__h5_run_t *run = c->run;
    if (!run || !run->info || !run->nnames) return 0;
    size_t *order = malloc(run->nnames * sizeof *order);
    c->info = calloc(h->nnames + 1, sizeof *c->info);
    if (!order || !c->info) {
        free(order);
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < run->nnames; i++) order[i] = i;
    qsort_r(order, run->nnames, sizeof *order, run_name_cmp, (void *)run->names);
    for (size_t j = 0; j < h->nnames; j++) {
        c->info[j].line = -1;
        size_t lo = 0, hi = run->nnames;
        while (lo < hi) { /* the first run name >= h->names[j] */
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(run->names[order[mid]], h->names[j]) < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < run->nnames && !strcmp(run->names[order[lo]], h->names[j]))
            c->info[j] = run->info[order[lo]];
    }
    free(order);
    return 0;
}

static void layout_of(const conv_t *c, const sps__tl_header_t *h, sps__layout_t *lay) {
    memset(lay, 0, sizeof *lay);
    lay->nnames = h->nnames;
    lay->names = h->names;
    lay->nrows = c->nrows;
    lay->rows = c->rows;
    lay->nevents = c->nevents;
    lay->with_tree = 1;
    lay->compress_threshold = 0; /* the writer's default */
    /* the writer's thread table gives every thread one rank (lay->rank):
     * only a one-rank file has one (as merge_h5.c) */
    lay->nthreads = c->nranks > 1 ? 0 : h->nthreads;
    lay->threads = c->threads;
    lay->start_time_ns = c->first_ns;
    lay->finalize_time_ns = c->last_ns;
    lay->wall_anchor_ns = h->wall_anchor_ns;
    lay->mono_anchor_ns = h->mono_anchor_ns;
    /* one rank: its number (a per-rank file of rank 3 says 3, so that merge
     * places it), and a size that holds it; several: rank 0 of all */
    lay->rank = c->nranks == 1 ? (int)c->rank_value[0] : 0;
    lay->size = c->nranks > 1 ? (int)c->nranks : lay->rank + 1;
    if (c->run && c->run->has_times) {
        lay->start_time_ns = c->run->start_time_ns;
        lay->finalize_time_ns = c->run->finalize_time_ns;
    }
    if (c->run) {
        lay->label = c->run->label;
        lay->nextra = c->run->nextra;
        lay->extra_keys = c->run->extra_keys;
        lay->extra_values = c->run->extra_values;
    }
    lay->info = c->info;
}

int sps__h5_from_timeline(const char *in, int fmt, const char *tmp) {
    return sps__h5_from_timeline_ex(in, fmt, tmp, NULL);
}

int sps__h5_from_timeline_ex(const char *in, int fmt_, const char *tmp,
                             const sps__h5_run_t *run) {
    sps__tl_format_t fmt = (sps__tl_format_t)fmt_;
    conv_t c = {.in = in, .fmt = fmt, .run = run};
    sps__tlr_t *r = NULL;
    sps__h5w_t *w = NULL;
    int rc = sps__tlr_open(&r, in, fmt);
    if (!rc) rc = count_rows(&c, r);
    if (!rc) rc = thread_table(&c, sps__tlr_header(r));
    if (!rc) rc = buffers(&c);
    sps__tlr_free(r); /* the second pass reads it again */
    r = NULL;
    if (!rc) rc = sps__tlr_open(&r, in, fmt);
    sps__layout_t lay;
    if (!rc) rc = run_info(&c, sps__tlr_header(r));
    if (!rc) {
        layout_of(&c, sps__tlr_header(r), &lay);
        rc = sps__h5w_open(&w, tmp, &lay);
    }
    if (!rc) rc = write_calls(&c, r, w);
    if (w) {
        if (rc) sps__h5w_abort(w);
        else rc = sps__h5w_close(w);
    }
    sps__tlr_free(r);
    conv_free(&c);
    return rc;
}
