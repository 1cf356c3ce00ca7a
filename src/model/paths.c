/* paths.c -- a period's calls pooled by call path, as scope-profiler's
 * region table shows them (its summary.region_rows): one entry per path
 * of region names from a root, adjacent repeats of a name collapsed (so a
 * self-recursive region is one "name ↻" entry), with what the table's
 * cheap columns need: calls, the total of the outermost calls of a
 * recursion, the sum of every call's duration (for the mean), the self
 * time, min/max, the first and the last call, and the wall-clock coverage
 * (the union of the path's calls, overlaps once, over all threads).
 *
 * It is a sink of the merged pass (period.c), so it sees the calls the
 * finalize writes, in the pass's time order, and costs O(threads + paths)
 * memory: Python's finalize(verbose=True) prints the table from it instead
 * of reading the file back (O(calls) in Python).  Nesting is the pass's
 * per thread, which for a begin/end recording is what scope-profiler's
 * interval rule per thread finds in the file; self times are the one
 * fold's, plus, for a call carried across a checkpoint, the time its
 * children spent in earlier files (those are not in this file, so the
 * interval rule over it does not subtract them). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

/* An open call of a thread: its call id and path. */
typedef struct open_call {
    int64_t id;
    int32_t path;
} open_call_t;

typedef struct thread_stack {
    open_call_t *v;
    size_t n, cap;
} thread_stack_t;

typedef struct paths_ctx {
    sps__tree_t index;     /* (parent path, region) -> path (only the index used) */
    sps__path_t *v;        /* by path */
    size_t cap;
    thread_stack_t *threads; /* by thread index */
    uint32_t nthreads;
} paths_ctx_t;

/* The path of a call of region under parent path (-1: a root): the parent
 * itself when it is of the same region (recursion collapses), else its
 * child, made when new.  -1 on ENOMEM. */
static int32_t path_of(paths_ctx_t *p, int32_t parent, uint32_t region) {
    if (parent >= 0 && p->v[parent].region == region) return parent;
    size_t before = p->index.len;
    int32_t i = sps__tree_node(&p->index, parent, region);
    if (i < 0) return -1;
    if ((size_t)i < before) return i;
    if ((size_t)i >= p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        sps__path_t *v = realloc(p->v, cap * sizeof *v);
        if (!v) return -1;
        memset(v + p->cap, 0, (cap - p->cap) * sizeof *v);
        p->v = v;
        p->cap = cap;
    }
    p->v[i].parent = parent; /* new: the rest is zero */
    p->v[i].region = region;
    return i;
}

/* The stack of thread t, grown to exist.  NULL on ENOMEM. */
static thread_stack_t *stack_of(paths_ctx_t *p, uint32_t t) {
    if (t >= p->nthreads) {
        uint32_t n = p->nthreads ? p->nthreads : 8;
        while (n <= t) n *= 2;
        thread_stack_t *v = realloc(p->threads, n * sizeof *v);
        if (!v) return NULL;
        memset(v + p->nthreads, 0, (n - p->nthreads) * sizeof *v);
        p->threads = v;
        p->nthreads = n;
    }
    return &p->threads[t];
}

/* A begin: the call's path from its parent's (the open call c names),
 * pushed on its thread's stack; the path's coverage block opens when it
 * had no call running. */
static int paths_begin(void *ctx, const sps__call_t *c) {
    paths_ctx_t *p = ctx;
    thread_stack_t *st = stack_of(p, c->thread);
    if (!st) return SPS_ENOMEM;
    int32_t parent = -1;
    for (size_t k = st->n; c->parent_id >= 0 && k-- > 0;)
        if (st->v[k].id == c->parent_id) {
            parent = st->v[k].path;
            break;
        }
    int32_t path = path_of(p, parent, c->region);
    if (path < 0 || sps__grow((void **)&st->v, &st->cap, st->n, sizeof *st->v))
        return SPS_ENOMEM;
    st->v[st->n++] = (open_call_t){c->call_id, path};
    sps__path_t *x = &p->v[path];
    if (x->active++ == 0) x->block_start = (int64_t)c->start;
    return 0;
}

/* Folds an ended call into its path (the entry its begin pushed). */
static void path_add(sps__path_t *x, const sps__call_t *c, int nested) {
    int64_t start = (int64_t)c->start, end = (int64_t)c->end;
    int64_t d = end > start ? end - start : 0; /* as the file stores it */
    if (end < start) end = start;
    if (x->calls == 0 || d < x->min_ns) x->min_ns = d;
    if (x->calls == 0 || d > x->max_ns) x->max_ns = d;
    /* the table's first: the earliest start, the longer call on a tie (the
     * renderer's order); its last: the latest end, the earlier start */
    if (x->calls == 0 || start < x->first_start_ns ||
        (start == x->first_start_ns && d > x->first_ns)) {
        x->first_start_ns = start;
        x->first_ns = d;
    }
    if (x->calls == 0 || end > x->last_end_ns ||
        (end == x->last_end_ns && end - d < x->last_end_ns - x->last_ns)) {
        x->last_end_ns = end;
        x->last_ns = d;
    }
    x->calls++;
    x->duration_sum_ns += d;
    if (!nested) x->total_ns += d;
    else x->recursive = 1;
    x->self_ns += (int64_t)(c->self + c->prior_child);
    if (--x->active == 0 && end > x->block_start) x->coverage_ns += end - x->block_start;
}

/* An end: the call leaves its thread's stack (searched from the top: a
 * repaired nesting closes several frames at one time). */
static int paths_end(void *ctx, const sps__call_t *c) {
    paths_ctx_t *p = ctx;
    thread_stack_t *st = stack_of(p, c->thread);
    if (!st) return SPS_ENOMEM;
    size_t k = st->n;
    while (k > 0 && st->v[k - 1].id != c->call_id) k--;
    if (k == 0) return 0; /* its begin was not seen: not a call of this period */
    int32_t path = st->v[k - 1].path;
    memmove(&st->v[k - 1], &st->v[k], (st->n - k) * sizeof *st->v);
    st->n--;
    /* nested in itself: its parent (the open call below it) is of its
     * region, which collapsed into the same path */
    int nested = 0;
    for (size_t j = k - 1; c->parent_id >= 0 && j-- > 0;)
        if (st->v[j].id == c->parent_id) {
            nested = st->v[j].path == path;
            break;
        }
    path_add(&p->v[path], c, nested);
    return 0;
}

int sps__paths_pass(const sps__snap_t *s, sps__path_t **out, size_t *n) {
    paths_ctx_t p = {0};
    sps__pass_cb_t cb = {&p, paths_begin, paths_end};
    int rc = sps__pass_run(s, &cb, NULL);
    for (uint32_t t = 0; t < p.nthreads; t++) free(p.threads[t].v);
    free(p.threads);
    *n = rc ? 0 : p.index.len;
    sps__tree_free(&p.index);
    if (rc) {
        free(p.v);
        p.v = NULL;
    }
    *out = p.v;
    return rc;
}
