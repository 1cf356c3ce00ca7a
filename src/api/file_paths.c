/* file_paths.c -- sps_file_paths: a file's calls pooled by call path per
 * rank, what scope-profiler's region table (its summary.region_rows, and
 * Python's print_summary) shows, so that the Python face pools in C what it
 * would otherwise group per call in numpy.
 *
 * The rule is the table's, not the reader's parents: per rank, the calls of
 * the kept regions in the table's order (region by region in the file's
 * name order, each row's calls in file order), sorted by start (longer
 * first, then that order), nested by the one fold's interval rule per
 * lane (a call's task when it ran in one, else its thread; the whole rank
 * when the file has no thread ids).  A path is the names from a root with
 * adjacent repeats collapsed.  Self times are the same fold's over every
 * region of the rank (hidden children still take their parent's time). */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

/* One rank's calls in the table's order ("positions"). */
typedef struct rank_calls {
    size_t n;
    uint64_t *event;   /* file-wide event index */
    int64_t *start, *end;
    uint32_t *name;    /* index into f->names */
} rank_calls_t;

static void rank_calls_free(rank_calls_t *c) {
    free(c->event);
    free(c->start);
    free(c->end);
    free(c->name);
    memset(c, 0, sizeof *c);
}

/* The calls of one rank's rows (row_of_name: the rank's row of each name,
 * SIZE_MAX none) whose region keep selects (NULL: all), in the table's
 * order.  0 or SPS_ENOMEM. */
static int rank_calls(const sps_file_t *f, const unsigned char *keep,
                      const size_t *row_of_name, rank_calls_t *c) {
    size_t n = 0;
    for (size_t g = 0; g < f->nnames; g++)
        if (row_of_name[g] != SIZE_MAX && (!keep || keep[g])) n += f->rows[row_of_name[g]].count;
    c->n = n;
    c->event = malloc((n + 1) * sizeof *c->event);
    c->start = malloc((n + 1) * sizeof *c->start);
    c->end = malloc((n + 1) * sizeof *c->end);
    c->name = malloc((n + 1) * sizeof *c->name);
    if (!c->event || !c->start || !c->end || !c->name) return SPS_ENOMEM;
    size_t k = 0;
    for (size_t g = 0; g < f->nnames; g++) {
        if (row_of_name[g] == SIZE_MAX || (keep && !keep[g])) continue;
        const sps_file_row_t *row = &f->rows[row_of_name[g]];
        for (uint64_t e = row->first; e < row->first + row->count; e++, k++) {
            c->event[k] = e;
            c->start[k] = f->start_ns[e];
            c->end[k] = f->start_ns[e] + f->dur_ns[e];
            c->name[k] = (uint32_t)g;
        }
    }
    return 0;
}

/* The lane of event e: its task when it ran in one, else -2 - its thread
 * (scope-profiler's lane ids); 0 when the file has no thread ids. */
static int64_t lane_of(const sps_file_t *f, uint64_t e) {
    if (!f->thread_ids) return 0;
    if (f->task_ids && f->task_ids[e] >= 0) return f->task_ids[e];
    return -2 - f->thread_ids[e];
}

/* Folds c by the interval rule per lane: parent (a position, -1 a root)
 * and self per position.  1 when the calls do not nest (a partial overlap
 * or an end before a start: no call tree), 0, or SPS_ENOMEM. */
static int fold_calls(const sps_file_t *f, const rank_calls_t *c, int64_t *parent,
                      int64_t *self) {
    for (size_t i = 0; i < c->n; i++)
        if (c->end[i] < c->start[i]) return 1;
    sps__ival_t *v = malloc((c->n + 1) * sizeof *v);
    sps__fold_out_t *out = malloc((c->n + 1) * sizeof *out);
    int rc = v && out ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < c->n; i++)
        v[i] = (sps__ival_t){c->start[i], c->end[i], 0, 0, lane_of(f, c->event[i]), 0};
    uint64_t overlaps = 0;
    if (!rc && c->n && sps__fold_ivals(v, c->n, out, &overlaps)) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < c->n; i++) {
        if (parent) parent[i] = out[i].parent;
        self[i] = out[i].self;
    }
    free(v);
    free(out);
    return rc ? rc : overlaps ? 1 : 0;
}

/* (start, longer first, position): the table's sort of two positions. */
static int before(const rank_calls_t *c, uint32_t a, uint32_t b) {
    if (c->start[a] != c->start[b]) return c->start[a] < c->start[b];
    if (c->end[a] != c->end[b]) return c->end[a] > c->end[b];
    return a < b;
}

/* order[0..n) sorted by `before`: a natural merge sort (the table's order
 * is each region's calls, each nearly sorted already: few runs, few
 * passes).  0 or SPS_ENOMEM. */
static int sort_positions(const rank_calls_t *c, uint32_t *order) {
    size_t n = c->n;
    uint32_t *tmp = malloc((n + 1) * sizeof *tmp);
    if (!tmp) return SPS_ENOMEM;
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    uint32_t *src = order, *dst = tmp;
    for (;;) {
        size_t runs = 0, i = 0;
        while (i < n) {
            size_t a = i, m = i + 1;
            while (m < n && before(c, src[m - 1], src[m])) m++;
            size_t b = m, e = m < n ? m + 1 : m;
            while (e < n && before(c, src[e - 1], src[e])) e++;
            size_t x = a, y = b, k = a;
            while (x < m && y < e) dst[k++] = before(c, src[y], src[x]) ? src[y++] : src[x++];
            while (x < m) dst[k++] = src[x++];
            while (y < e) dst[k++] = src[y++];
            runs++;
            i = e;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1) break;
    }
    if (src != order) memcpy(order, src, n * sizeof *order);
    free(tmp);
    return 0;
}

/* The growing output, the paths' index, and per entry the union's
 * current block (start, reach) while its rank is pooled. */
typedef struct pool {
    sps__tree_t index;       /* (parent path, name) -> path */
    sps_file_paths_t *out;
    size_t cap_paths, cap_entries, cap_bad;
    int64_t *entry_of;       /* path -> entry of the current rank, -1 none */
    int64_t (*block)[2];     /* by entry */
} pool_t;

/* The path of a call of name under parent path (-1 a root): the parent
 * itself when of the same name, else its child, made when new.  -1 on
 * ENOMEM. */
static int32_t pool_path(pool_t *p, int32_t parent, uint32_t name) {
    sps_file_paths_t *o = p->out;
    if (parent >= 0 && o->name[parent] == name) return parent;
    size_t before_len = p->index.len;
    int32_t i = sps__tree_node(&p->index, parent, name);
    if (i < 0 || (size_t)i < before_len) return i;
    if (o->npaths == p->cap_paths) {
        size_t cap = p->cap_paths ? 2 * p->cap_paths : 64;
        int32_t *pa = realloc(o->parent, cap * sizeof *pa);
        if (pa) o->parent = pa;
        uint32_t *na = pa ? realloc(o->name, cap * sizeof *na) : NULL;
        if (na) o->name = na;
        int64_t *eo = na ? realloc(p->entry_of, cap * sizeof *eo) : NULL;
        if (!eo) return -1;
        p->entry_of = eo;
        p->cap_paths = cap;
    }
    o->parent[o->npaths] = parent; /* the index's node i is path npaths */
    o->name[o->npaths] = name;
    p->entry_of[o->npaths] = -1;
    o->npaths++;
    return i;
}

/* The entry of path on rank (made when new, pos: the position of its
 * first call in the rank's start order).  NULL on ENOMEM. */
static sps_file_path_rank_t *pool_entry(pool_t *p, int32_t path, uint32_t rank,
                                        uint64_t pos, int64_t **block) {
    sps_file_paths_t *o = p->out;
    if (p->entry_of[path] < 0) {
        if (o->nentries == p->cap_entries) {
            size_t cap = p->cap_entries ? 2 * p->cap_entries : 64;
            sps_file_path_rank_t *v = realloc(o->entries, cap * sizeof *v);
            if (v) o->entries = v;
            int64_t (*b)[2] = v ? realloc(p->block, cap * sizeof *b) : NULL;
            if (!b) return NULL;
            p->block = b;
            p->cap_entries = cap;
        }
        sps_file_path_rank_t *x = &o->entries[o->nentries];
        memset(x, 0, sizeof *x);
        x->path = (uint32_t)path;
        x->rank = rank;
        x->first_pos = pos;
        p->entry_of[path] = (int64_t)o->nentries++;
    }
    *block = p->block[p->entry_of[path]];
    return &o->entries[p->entry_of[path]];
}

/* Adds a call (start s, end e, its self time) to entry x in start
 * order: the first call seen is the path's first; the union of intervals
 * grows by blocks (blk: start, reach; touching calls merge, as in
 * scope-profiler). */
static void entry_add(sps_file_path_rank_t *x, int64_t *blk, int64_t s, int64_t e,
                      int64_t self, int nested) {
    int64_t d = e - s;
    if (x->calls == 0) {
        x->first_start_ns = s;
        x->first_ns = d;
        x->min_ns = x->max_ns = d;
        x->last_end_ns = e;
        x->last_ns = d;
        blk[0] = s;
        blk[1] = e;
    } else {
        if (d < x->min_ns) x->min_ns = d;
        if (d > x->max_ns) x->max_ns = d;
        if (e > x->last_end_ns) { /* the first of the latest ends */
            x->last_end_ns = e;
            x->last_ns = d;
        }
        if (s > blk[1]) {
            x->coverage_ns += blk[1] - blk[0];
            blk[0] = s;
            blk[1] = e;
        } else if (e > blk[1]) {
            blk[1] = e;
        }
    }
    x->calls++;
    x->duration_sum_ns += d;
    x->self_ns += self;
    if (nested) x->recursive = 1;
    else x->total_ns += d;
}

/* Pools one rank (see sps_file_paths): its entries appended to p's
 * output, or, when its calls do not nest, the rank in bad_ranks and no
 * entries.  0, SPS_ENOMEM or SPS_EINVAL (a parent after its child in the
 * sort: cannot happen with the fold's rule, checked all the same). */
static int pool_rank(pool_t *p, const sps_file_t *f, uint32_t rank, const unsigned char *keep,
                     const size_t *row_of_name) {
    rank_calls_t c = {0}, all = {0};
    int rc = rank_calls(f, keep, row_of_name, &c);
    int64_t *parent = malloc((c.n + 1) * sizeof *parent);
    int64_t *self = malloc((c.n + 1) * sizeof *self);
    uint32_t *order = malloc((c.n + 1) * sizeof *order);
    int32_t *path = malloc((c.n + 1) * sizeof *path);
    if (!rc && (!parent || !self || !order || !path)) rc = SPS_ENOMEM;
    int bad = 0;
    if (!rc) {
        rc = fold_calls(f, &c, parent, self);
        if (rc == 1) bad = 1, rc = 0;
    }
    if (!rc && !bad && keep) { /* self times over every region of the rank */
        rc = rank_calls(f, NULL, row_of_name, &all);
        int64_t *all_self = rc ? NULL : malloc((all.n + 1) * sizeof *all_self);
        if (!rc && !all_self) rc = SPS_ENOMEM;
        if (!rc) {
            rc = fold_calls(f, &all, NULL, all_self);
            if (rc == 1) bad = 1, rc = 0;
        }
        /* both lists are in the table's order, c's a subsequence of all's */
        for (size_t i = 0, j = 0; !rc && !bad && i < c.n; i++) {
            while (all.event[j] != c.event[i]) j++;
            self[i] = all_self[j];
        }
        free(all_self);
    }
    if (!rc && !bad) rc = sort_positions(&c, order);
    size_t first_entry = p->out->nentries;
    for (size_t k = 0; !rc && !bad && k < c.n; k++) path[k] = INT32_MIN;
    for (size_t k = 0; !rc && !bad && k < c.n; k++) {
        uint32_t i = order[k];
        int32_t pp = parent[i] >= 0 ? path[parent[i]] : -1;
        if (pp == INT32_MIN) { /* a parent after its child: not the table's order */
            rc = SPS_EINVAL;
            break;
        }
        int64_t *blk = NULL;
        path[i] = pool_path(p, pp, c.name[i]);
        sps_file_path_rank_t *x = path[i] < 0 ? NULL : pool_entry(p, path[i], rank, k, &blk);
        if (!x) {
            rc = SPS_ENOMEM;
            break;
        }
        entry_add(x, blk, c.start[i], c.end[i], self[i], parent[i] >= 0 && pp == path[i]);
    }
    for (size_t e = first_entry; e < p->out->nentries; e++) { /* close the unions */
        p->out->entries[e].coverage_ns += p->block[e][1] - p->block[e][0];
        p->entry_of[p->out->entries[e].path] = -1;
    }
    if (!rc && bad) { /* no call tree on this rank: its entries go */
        p->out->nentries = first_entry;
        if (sps__grow((void **)&p->out->bad_ranks, &p->cap_bad, p->out->nbad,
                      sizeof *p->out->bad_ranks))
            rc = SPS_ENOMEM;
        else
            p->out->bad_ranks[p->out->nbad++] = rank;
    }
    free(parent), free(self), free(order), free(path);
    rank_calls_free(&c);
    rank_calls_free(&all);
    return rc;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int sps_file_paths(const sps_file_t *f, const unsigned char *keep, sps_file_paths_t *out) {
    memset(out, 0, sizeof *out);
    if (!f || f->aggregate) return SPS_EINVAL;
    uint32_t *ranks = malloc((f->nrows + 1) * sizeof *ranks);
    size_t *row_of_name = malloc((f->nnames + 1) * sizeof *row_of_name);
    if (!ranks || !row_of_name) {
        free(ranks), free(row_of_name);
        return SPS_ENOMEM;
    }
    size_t nr = 0;
    for (size_t i = 0; i < f->nrows; i++) ranks[nr++] = f->rows[i].rank;
    qsort(ranks, nr, sizeof *ranks, cmp_u32);
    pool_t p = {.out = out};
    int rc = 0;
    for (size_t k = 0; !rc && k < nr; k++) {
        if (k && ranks[k] == ranks[k - 1]) continue;
        for (size_t g = 0; g < f->nnames; g++) row_of_name[g] = SIZE_MAX;
        for (size_t i = 0; !rc && i < f->nrows; i++) {
            if (f->rows[i].rank != ranks[k]) continue;
            if (row_of_name[f->rows[i].region] != SIZE_MAX) rc = SPS_EINVAL;
            row_of_name[f->rows[i].region] = i;
        }
        if (!rc) rc = pool_rank(&p, f, ranks[k], keep, row_of_name);
    }
    sps__tree_free(&p.index);
    free(p.entry_of);
    free(p.block);
    free(ranks);
    free(row_of_name);
    if (rc) sps_file_paths_free(out);
    return rc;
}

void sps_file_paths_free(sps_file_paths_t *p) {
    if (!p) return;
    free(p->parent);
    free(p->name);
    free(p->entries);
    free(p->bad_ranks);
    memset(p, 0, sizeof *p);
}
