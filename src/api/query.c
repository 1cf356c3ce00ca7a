/* query.c -- the public queries of a live session: statistics, per-call
 * arrays, the summary table and the torch-style face's spans.  Each brings
 * the model's analysis up to date under the session lock, so a statistics
 * query costs time proportional to the events recorded since the previous
 * one; the per-call arrays come from the model's collector (collect.c),
 * which keeps the calls of the regions asked for and reads only the new
 * records too. */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under the lock: a fresh anchor, and the analysis up to it (every
 * analyzed timestamp lies before the last anchor and converts stably). */
static void refresh(void) { sps__analyze_all(); }

int sps_region_stats(sps_region_t r, sps_stats_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&sps__g.lock);
    int rc = 0;
    if (!sps__session_live()) rc = SPS_ENOSESSION;
    else if (r == 0 || r >= sps__registry_count()) rc = SPS_ENOREGION;
    else {
        refresh();
        sps__acc_t a = sps__cum_acc(r);
        sps__acc_stats(&a, out);
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

uint64_t sps_misuse_count(void) {
    pthread_mutex_lock(&sps__g.lock);
    if (sps__g.mode == SPS__EVENTS && sps__session_live()) sps__analyze_all();
    uint64_t n = __atomic_load_n(&sps__g.misuse, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

static size_t list_regions(sps_region_t *out, size_t cap, int recorded) {
    size_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    uint32_t count = sps__session_live() ? sps__registry_count() : 0;
    sps_region_t *all = count ? malloc(count * sizeof *all) : NULL;
    if (all) {
        refresh();
        for (sps_region_t r = 1; r < count; r++) {
            int reg = sps__region_registered(r);
            int rec = sps__cum_acc(r).count > 0;
            if (recorded ? rec : (reg || rec)) all[n++] = r;
        }
        sps__regions_sort(all, n); /* the session's order, before any cut */
        if (out) memcpy(out, all, (n < cap ? n : cap) * sizeof *out);
    }
    pthread_mutex_unlock(&sps__g.lock);
    free(all);
    return n;
}

size_t sps_regions_registered(sps_region_t *out, size_t cap) { return list_regions(out, cap, 0); }
size_t sps_regions_recorded(sps_region_t *out, size_t cap) { return list_regions(out, cap, 1); }

/* ------------------------------------------------------------------------ */
/* Per-call queries                                                          */
/* ------------------------------------------------------------------------ */

/* Under the lock: r's calls since the last finalize by a merged pass over
 * the period (and the pending one first), what the collector keeps up to
 * date incrementally; the fallback when the collector runs out of memory. */
static size_t calls_by_pass(sps_region_t r, int64_t *starts, int64_t *durations,
                            size_t cap) {
    size_t n = 0;
    sps__snap_t *s = sps__snap_build(0);
    if (!s) return 0;
    sps__snap_t *p = sps__g.pending;
    if (p) { /* pending calls come first */
        sps__g.pending = NULL;
        n = sps__collect_calls(p, r, starts, durations, cap);
        sps__g.pending = p;
        if (starts) starts += n < cap ? n : cap;
        if (durations) durations += n < cap ? n : cap;
        cap = n < cap ? cap - n : 0;
    }
    n += sps__collect_calls(s, r, starts, durations, cap);
    sps__snap_free(s);
    return n;
}

size_t sps_region_calls(sps_region_t r, int64_t *starts, int64_t *durations,
                        size_t cap) {
    size_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    if (sps__session_live() && sps__g.mode == SPS__EVENTS && r > 0 &&
        r < sps__registry_count()) {
        sps__bg_wait(); /* which may let go of the lock: before the mark */
        sps__collect_mark(); /* before the anchor: see collect.c */
        refresh();
        if (sps__collect_region(r, starts, durations, cap, &n))
            n = calls_by_pass(r, starts, durations, cap);
    }
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

void sps_query_info(sps_query_info_t *out) {
    if (!out) return;
    pthread_mutex_lock(&sps__g.lock);
    sps__collect_info(out);
    pthread_mutex_unlock(&sps__g.lock);
}

size_t sps_region_durations(sps_region_t r, int64_t *out, size_t cap) {
    return sps_region_calls(r, NULL, out, cap);
}

int sps_print_summary(void *file) {
    FILE *fp = file ? (FILE *)file : stderr;
    pthread_mutex_lock(&sps__g.lock);
    if (!sps__session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_ENOSESSION;
    }
    refresh();
    uint32_t n = sps__registry_count();
    sps__acc_t *acc = calloc(n, sizeof *acc);
    size_t nn = sps__an.tree.len;
    sps__acc_t *nodes = calloc(nn + 1, sizeof *nodes);
    int32_t *par = calloc(nn + 1, sizeof *par);
    uint32_t *reg = calloc(nn + 1, sizeof *reg);
    uint32_t *lanes = calloc(n + 1, sizeof *lanes), *node_lanes = calloc(nn + 1, sizeof *node_lanes);
    int rc = acc && nodes && par && reg && lanes && node_lanes ? 0 : SPS_ENOMEM;
    int agg = sps__g.mode == SPS__AGGREGATE; /* no analysis: threads unknown */
    for (uint32_t r = 1; !rc && r < n; r++) {
        acc[r] = sps__cum_acc(r);
        lanes[r] = r < sps__an.acc_cap ? sps__an.lanes_cum[r] : 0;
    }
    for (size_t i = 0; !rc && i < nn; i++) {
        nodes[i] = sps__node_cum(i);
        par[i] = sps__an.tree.n[i].parent;
        reg[i] = sps__an.tree.n[i].region;
        node_lanes[i] = sps__an.tree.n[i].lanes_cum;
    }
    sps__acc_lanes_t ln = {lanes, node_lanes, sps__an.threads_cum};
    int64_t span = sps__g.tm.a[sps__g.tm.n - 1].ns - sps__g.start_ns;
    pthread_mutex_unlock(&sps__g.lock);
    if (!rc) rc = sps__print_accs(fp, acc, n, nodes, par, reg, nn, span, agg ? NULL : &ln);
    free(lanes);
    free(node_lanes);
    free(acc);
    free(nodes);
    free(par);
    free(reg);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Spans (the torch-style face's view of a session)                          */
/* ------------------------------------------------------------------------ */

/* A span's values, by its identity (thread, seq of its begin). */
typedef struct span_vals {
    uint64_t thread, seq;
    size_t at;           /* its own values at vals[at], self at [at + nv] */
} span_vals_t;

typedef struct spans_sink {
    sps_span_t *v;
    int64_t *ids, *pids; /* call ids and parent call ids, beside v */
    size_t n, cap;
    int64_t from, to;
    int stacks;          /* look native stacks up (capture was ever on) */
    uint32_t nv;         /* values kept per span (sps_spans_values), 0 none */
    span_vals_t *vk;     /* [nvk], in the order the pass ended them */
    uint64_t *vals;      /* [nvk * 2 * nv] */
    size_t nvk, capvk;
} spans_sink_t;

/* Keeps call c's values (k->nv of them, own then self). */
static int spans_keep_values(spans_sink_t *k, const sps__call_t *c) {
    if (k->nvk == k->capvk) {
        size_t cap = k->capvk ? k->capvk * 2 : 1024;
        span_vals_t *vk = realloc(k->vk, cap * sizeof *vk);
        if (vk) k->vk = vk;
        uint64_t *v = realloc(k->vals, cap * 2 * k->nv * sizeof *v);
        if (v) k->vals = v;
        if (!vk || !v) return SPS_ENOMEM;
        k->capvk = cap;
    }
    size_t at = k->nvk * 2 * k->nv;
    uint32_t m = c->nvals < k->nv ? c->nvals : k->nv;
    memset(k->vals + at, 0, 2 * k->nv * sizeof *k->vals);
    memcpy(k->vals + at, c->vown, m * sizeof *k->vals);
    memcpy(k->vals + at + k->nv, c->vself, m * sizeof *k->vals);
    k->vk[k->nvk++] = (span_vals_t){c->thread, c->seq, at};
    return 0;
}

static int spans_grow(spans_sink_t *k) {
    size_t cap = k->cap ? k->cap * 2 : 1024;
    sps_span_t *v = realloc(k->v, cap * sizeof *v);
    if (v) k->v = v;
    int64_t *a = realloc(k->ids, cap * sizeof *a);
    if (a) k->ids = a;
    int64_t *b = realloc(k->pids, cap * sizeof *b);
    if (b) k->pids = b;
    if (!v || !a || !b) return SPS_ENOMEM;
    k->cap = cap;
    return 0;
}

/* Pass sink: keeps the calls that lie inside the window. */
static int spans_end(void *ctx, const sps__call_t *c) {
    spans_sink_t *k = ctx;
    if ((int64_t)c->start < k->from || (int64_t)c->end > k->to) return 0;
    if (k->n == k->cap && spans_grow(k)) return SPS_ENOMEM;
    uint32_t stack = k->stacks ? sps__stack_lookup(c->thread, sps__g.epoch, c->seq) : 0;
    k->v[k->n] = (sps_span_t){(int64_t)c->start, (int64_t)c->end, (int64_t)c->self,
                              -1, c->region, c->thread, c->depth, stack, c->seq};
    k->ids[k->n] = c->call_id;
    k->pids[k->n] = c->parent_id;
    k->n++;
    return k->nv && c->nvals ? spans_keep_values(k, c) : 0;
}

typedef struct { int64_t id; size_t i; } id_ix_t;
static int id_ix_cmp(const void *a, const void *b) {
    const id_ix_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts k's spans from index first on by call id (start order) and turns
 * parent call ids into indexes.  Ends arrive in end order; ids are start
 * order, so one sort puts every parent before its children. */
static int spans_order(spans_sink_t *k, size_t first) {
    size_t m = k->n - first;
    id_ix_t *ix = malloc((m ? m : 1) * sizeof *ix);
    sps_span_t *tmp = malloc((m ? m : 1) * sizeof *tmp);
    int64_t *pid = malloc((m ? m : 1) * sizeof *pid);
    if (!ix || !tmp || !pid) {
        free(ix), free(tmp), free(pid);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < m; i++) ix[i] = (id_ix_t){k->ids[first + i], first + i};
    qsort(ix, m, sizeof *ix, id_ix_cmp);
    for (size_t i = 0; i < m; i++) {
        tmp[i] = k->v[ix[i].i];
        pid[i] = k->pids[ix[i].i];
    }
    for (size_t i = 0; i < m; i++) {
        k->v[first + i] = tmp[i];
        k->ids[first + i] = ix[i].id;
    }
    for (size_t i = 0; i < m; i++) {
        id_ix_t key = {pid[i], 0};
        id_ix_t *hit = pid[i] < 0 ? NULL : bsearch(&key, ix, m, sizeof *ix, id_ix_cmp);
        k->v[first + i].parent = hit ? (int64_t)(first + (size_t)(hit - ix)) : -1;
    }
    free(ix), free(tmp), free(pid);
    return 0;
}

static int spans_of(const sps__snap_t *s, spans_sink_t *k) {
    size_t first = k->n;
    sps__pass_cb_t cb = {k, NULL, spans_end};
    int rc = sps__pass_run(s, &cb, NULL);
    return rc ? rc : spans_order(k, first);
}

/* Without the lock: names the steps "ProfilerStep#N" (interned, like any
 * region name) and nests them among k's spans (src/model/fold.c). */
static int spans_add_steps(spans_sink_t *k, sps__step_span_t *steps, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char name[48]; /* "ProfilerStep#" and up to 19 digits */
        snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)steps[i].step);
        if (!(steps[i].region = sps__registry_intern(name))) return SPS_ENOMEM;
    }
    return sps__steps_nest(&k->v, &k->n, steps, n);
}

static int vk_cmp(const void *a, const void *b) {
    const span_vals_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The values of k's spans in their final order (steps nested in): a
 * malloc'd [n * 2 * nv] array, zeros for spans without values (steps,
 * calls carried in from an earlier period).  NULL: out of memory. */
static uint64_t *spans_values_out(spans_sink_t *k) {
    size_t row = 2 * (size_t)k->nv;
    uint64_t *out = calloc(k->n ? k->n * row : 1, sizeof *out);
    if (!out) return NULL;
    qsort(k->vk, k->nvk, sizeof *k->vk, vk_cmp);
    for (size_t i = 0; i < k->n; i++) {
        span_vals_t key = {k->v[i].thread, k->v[i].seq, 0};
        const span_vals_t *hit = k->v[i].seq == SPS_SEQ_NONE ? NULL
            : bsearch(&key, k->vk, k->nvk, sizeof *k->vk, vk_cmp);
        if (hit) memcpy(out + i * row, k->vals + hit->at, row * sizeof *out);
    }
    return out;
}

static int spans_collect(int64_t from_ns, int64_t to_ns, sps_span_t **out, size_t *n,
                         uint64_t **vals, uint32_t *nvals);

int sps_spans(int64_t from_ns, int64_t to_ns, sps_span_t **out, size_t *n) {
    return spans_collect(from_ns, to_ns, out, n, NULL, NULL);
}

int sps_spans_values(int64_t from_ns, int64_t to_ns, sps_span_t **out, size_t *n,
                     uint64_t **vals, uint32_t *nvals) {
    if (!vals || !nvals) return SPS_EINVAL;
    return spans_collect(from_ns, to_ns, out, n, vals, nvals);
}

const char *sps_value_name(uint32_t i) {
    pthread_mutex_lock(&sps__g.lock);
    const char *name = sps__session_live() && i < sps__g.nvals ? sps__values_name(i) : NULL;
    pthread_mutex_unlock(&sps__g.lock);
    return name;
}

int sps_region_values(sps_region_t r, uint64_t *own, uint64_t *self, size_t cap,
                      uint64_t *calls) {
    sps_span_t *v = NULL;
    uint64_t *vals = NULL;
    size_t n = 0;
    uint32_t nv = 0;
    int rc = spans_collect(0, INT64_MAX, &v, &n, &vals, &nv);
    if (rc) return rc;
    size_t m = cap < nv ? cap : nv;
    if (own) memset(own, 0, m * sizeof *own);
    if (self) memset(self, 0, m * sizeof *self);
    uint64_t count = 0;
    for (size_t k = 0; k < n && nv; k++) {
        if (v[k].region != r || v[k].seq == SPS_SEQ_NONE) continue;
        const uint64_t *o = vals + k * 2 * nv, *s = o + nv;
        count++;
        for (size_t i = 0; i < m; i++) {
            int peak = sps__values_kind((uint32_t)i) == SPS__VAL_EXCESS;
            if (own) own[i] = peak ? (o[i] > own[i] ? o[i] : own[i]) : own[i] + o[i];
            if (self) self[i] = peak ? (s[i] > self[i] ? s[i] : self[i]) : self[i] + s[i];
        }
    }
    free(v);
    free(vals);
    if (calls) *calls = count;
    return (int)nv;
}

static int spans_collect(int64_t from_ns, int64_t to_ns, sps_span_t **out, size_t *n,
                         uint64_t **vals, uint32_t *nvals) {
    if (!out || !n) return SPS_EINVAL;
    *out = NULL;
    *n = 0;
    if (vals) {
        *vals = NULL;
        *nvals = 0;
    }
    spans_sink_t k = {.from = from_ns, .to = to_ns};
    sps__step_span_t *steps = NULL;
    size_t nsteps = 0;
    int rc = 0;
    pthread_mutex_lock(&sps__g.lock);
    /* without any capture every lookup would be two lock pairs for nothing */
    k.stacks = sps__stacks_used();
    if (vals && sps__session_live()) k.nv = sps__g.nvals;
    if (!sps__session_live()) rc = SPS_ENOSESSION;
    else if (sps__g.mode != SPS__EVENTS) rc = SPS_EMODE;
    else if (from_ns <= to_ns) { /* an empty window only probes the mode */
        refresh();
        sps__snap_t *s = sps__snap_build(0);
        if (!s) rc = SPS_ENOMEM;
        if (!rc && sps__g.pending) rc = spans_of(sps__g.pending, &k); /* older first */
        if (!rc) rc = spans_of(s, &k);
        if (!rc) rc = sps__steps_window(from_ns, to_ns, &steps, &nsteps);
        sps__snap_free(s);
    }
    pthread_mutex_unlock(&sps__g.lock);
    free(k.ids);
    free(k.pids);
    if (!rc && nsteps) rc = spans_add_steps(&k, steps, nsteps);
    free(steps);
    uint64_t *v = NULL;
    if (!rc && vals && k.nv && !(v = spans_values_out(&k))) rc = SPS_ENOMEM;
    free(k.vk);
    free(k.vals);
    if (rc) {
        free(k.v);
        return rc;
    }
    *out = k.v;
    *n = k.n;
    if (vals) {
        *vals = v;
        *nvals = k.nv;
    }
    return 0;
}


/* ------------------------------------------------------------------------ */
/* Open calls of the calling thread                                          */
/* ------------------------------------------------------------------------ */

size_t sps_open_calls(sps_region_t *out, size_t cap) {
    size_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    sps__thr_t *t = sps__tls;
    if (sps__session_live() && t != &sps__dummy_thr && t->epoch == sps__g.epoch) {
        /* events: the analyzer's stack at its cursor, brought up to now;
         * aggregate: the recorder's own stack */
        const sps__stack_t *s = &t->agg_stack;
        if (sps__g.mode != SPS__AGGREGATE) {
            sps__analyze_thread(t);
            s = &t->stack;
        }
        n = s->n;
        for (size_t i = 0; out && i < n && i < cap; i++) out[i] = s->f[i].region;
    }
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

/* The calls open on every thread of the session (sps_open_calls_all):
 * under the lock, the analysis of every thread up to now, then each
 * session thread's stack at its cursor. */
int64_t sps_open_calls_all(sps_open_call_t *out, size_t cap) {
    int64_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    if (!sps__session_live()) {
        n = 0;
    } else if (sps__g.mode == SPS__AGGREGATE) {
        n = SPS_EMODE;
    } else {
        refresh();
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
            if (t->epoch != sps__g.epoch) continue;
            for (size_t d = 0; d < t->stack.n; d++, n++)
                if (out && (size_t)n < cap)
                    out[n] = (sps_open_call_t){t->stack.f[d].region, (uint32_t)d,
                                               (int64_t)t->index};
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}
