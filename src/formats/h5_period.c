/* h5_period.c -- the HDF5 sink of the merged pass: writes every call of a
 * finalized period as rows of /events, region by region.  It keeps a small
 * ring of not-yet-written calls per region and writes full rings as row
 * ranges; a duration that completes after its row was written (a long outer
 * call) is patched in at the end.  Memory is bounded by regions, never by
 * the number of events. */
#include "formats/formats.h"
#include "model/pass.h" /* the pass inline: h5_begin and h5_end inline into it */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LATE_BATCH 256 /* late durations written together */

/* ------------------------------------------------------------------------ */
/* Sink: HDF5 rows                                                           */
/* ------------------------------------------------------------------------ */

/* Calls of one region not yet written, by ordinal from base. */
typedef struct ring {
    uint64_t base;     /* ordinal of slot 0 */
    size_t n, cap;
    int64_t *start, *dur, *id, *parent, *thread;
    int64_t prev_start; /* ns of the last written start (for deltas) */
} ring_t;

typedef struct h5sink {
    sps__h5w_t *w;
    const uint32_t *file_region; /* region id -> file row, UINT32_MAX none */
    const sps__row_t *rows;
    ring_t *rings;     /* by file row */
    size_t ring_cap;   /* slots per ring */
    uint64_t *late_pos;
    int64_t *late_dur;
    size_t nlate;      /* of LATE_BATCH */
    int64_t *scratch;  /* start deltas being written */
    sps__carried_t *carried;
    sps__vtot_t *vt;                 /* NULL: no values */
    const sps__progress_t *progress; /* or NULL */
    uint64_t done, total;            /* calls completed, calls in all */
} h5sink_t;

static int ring_alloc(ring_t *g, size_t cap) {
    int64_t **cols[] = {&g->start, &g->dur, &g->id, &g->parent, &g->thread};
    for (size_t i = 0; i < 5; i++)
        if (!(*cols[i] = malloc(cap * sizeof(int64_t)))) return SPS_ENOMEM;
    g->cap = cap;
    return 0;
}

static void ring_free(ring_t *g) {
    free(g->start);
    free(g->dur);
    free(g->id);
    free(g->parent);
    free(g->thread);
}

/* Writes the oldest k slots of ring g (file row fr); a duration still
 * pending goes as -1, which the writer holds its chunk open for (the
 * call's end brings it, through the late list). */
static int ring_flush(h5sink_t *h, uint32_t fr, size_t k) {
    ring_t *g = &h->rings[fr];
    for (size_t i = 0; i < k; i++) {
        h->scratch[i] = g->start[i] - g->prev_start;
        g->prev_start = g->start[i];
    }
    int rc = sps__h5w_rows(h->w, h->rows[fr].offset + g->base, k, h->scratch,
                           g->dur, g->id, g->parent, g->thread);
    size_t rest = g->n - k;
    int64_t *cols[] = {g->start, g->dur, g->id, g->parent, g->thread};
    for (size_t i = 0; i < 5; i++) memmove(cols[i], cols[i] + k, rest * sizeof(int64_t));
    g->n = rest;
    g->base += k;
    return rc;
}

SPS__INLINE int h5_begin(void *ctx, const sps__call_t *c) {
    h5sink_t *h = ctx;
    uint32_t fr = h->file_region[c->region];
    ring_t *g = &h->rings[fr];
    if (!g->cap) {
        size_t cap = h->rows[fr].count < h->ring_cap ? (size_t)h->rows[fr].count : h->ring_cap;
        if (ring_alloc(g, cap ? cap : 1)) return SPS_ENOMEM;
    }
    if (g->n == g->cap) {
        /* the rows whose calls have ended; the open ones (other threads'
         * calls of the region, a long call) stay unless they are most of
         * the ring: a late duration holds its chunk in memory */
        size_t k = 0;
        while (k < g->n && g->dur[k] >= 0) k++;
        int rc = ring_flush(h, fr, k >= g->n / 2 ? k : g->n);
        if (rc) return rc;
    }
    size_t i = g->n++;
    g->start[i] = (int64_t)c->start;
    g->dur[i] = -1;
    g->id[i] = c->call_id;
    g->parent[i] = c->parent_id;
    g->thread[i] = c->thread;
    return 0;
}

/* The counter tracks' names: track 0 "live bytes" when memory is tracked,
 * then one per counter (values.c's order). */
static const char *track_value(const sps__vtot_t *vt, uint32_t k, uint32_t *index) {
    int mem = sps__values_kind(SPS__MEM_EXCESS) == SPS__VAL_EXCESS && vt->nvals >= SPS__MEM_NVALS;
    if (mem && k == 0) {
        *index = UINT32_MAX;
        return "live bytes";
    }
    *index = (mem ? SPS__MEM_NVALS - 1 : 0) + k;
    return sps__values_name(*index);
}

/* Appends one counter sample of track k of thread th (a new series name
 * on first use); counts it dropped past the cap or out of memory. */
static void track_sample(sps__vtot_t *vt, uint32_t th, uint32_t k, int64_t t, double v) {
    if (th >= vt->nthreads || vt->n >= SPS__VTOT_SAMPLES_MAX) {
        vt->dropped++;
        return;
    }
    int64_t *sid = &vt->track_series[(size_t)th * vt->ntracks + k];
    if (*sid < 0) {
        uint32_t idx;
        const char *name = track_value(vt, k, &idx);
        size_t len = strlen(name ? name : "value") + 32;
        char **nv = realloc(vt->names, (vt->nnames + 1) * sizeof *nv);
        char *s = nv ? malloc(len) : NULL;
        if (nv) vt->names = nv;
        if (!s) {
            vt->dropped++;
            return;
        }
        snprintf(s, len, "%s (thread %u)", name ? name : "value", th);
        vt->names[vt->nnames] = s;
        *sid = (int64_t)vt->nnames++;
    }
    if (vt->n == vt->cap) {
        size_t cap = vt->cap ? vt->cap * 2 : 1024;
        int64_t *a = realloc(vt->sm_series, cap * sizeof *a);
        if (a) vt->sm_series = a;
        int64_t *b = realloc(vt->sm_t, cap * sizeof *b);
        if (b) vt->sm_t = b;
        double *c = realloc(vt->sm_v, cap * sizeof *c);
        if (c) vt->sm_v = c;
        if (!a || !b || !c) {
            vt->dropped++;
            return;
        }
        vt->cap = cap;
    }
    vt->sm_series[vt->n] = *sid;
    vt->sm_t[vt->n] = t;
    vt->sm_v[vt->n++] = v;
}

/* Adds call c's values to row fr's totals (peaks: the maximum), and, for
 * an outermost call, its thread's counter-track samples at its end. */
static void values_add(sps__vtot_t *vt, uint32_t fr, const sps__call_t *c) {
    if (c->depth == 0 && c->vend && vt->ntracks) {
        for (uint32_t k = 0; k < vt->ntracks; k++) {
            uint32_t idx;
            track_value(vt, k, &idx);
            double v = idx == UINT32_MAX
                ? (double)(int64_t)(c->vend[SPS__MEM_ALLOC_BYTES] - c->vend[SPS__MEM_FREE_BYTES])
                : idx < c->nvals ? (double)c->vend[idx] : 0.0;
            track_sample(vt, c->thread, k, (int64_t)c->end, v);
        }
    }
    uint32_t n = c->nvals < vt->nvals ? c->nvals : vt->nvals;
    uint64_t *own = vt->own + (size_t)fr * vt->nvals, *self = vt->self + (size_t)fr * vt->nvals;
    vt->calls[fr]++;
    for (uint32_t i = 0; i < n; i++) {
        if (sps__values_kind(i) == SPS__VAL_EXCESS) {
            if (c->vown[i] > own[i]) own[i] = c->vown[i];
            if (c->vself[i] > self[i]) self[i] = c->vself[i];
        } else {
            own[i] += c->vown[i];
            self[i] += c->vself[i];
        }
    }
}

SPS__INLINE int h5_end(void *ctx, const sps__call_t *c) {
    h5sink_t *h = ctx;
    uint32_t fr = h->file_region[c->region];
    ring_t *g = &h->rings[fr];
    /* 0 when the clock mapping stepped back inside the call, as the
     * statistics and the queries have it */
    int64_t d = c->end > c->start ? (int64_t)(c->end - c->start) : 0;
    if (h->progress && (++h->done & 0xFFFF) == 0)
        h->progress->fn(h->progress->ctx, h->done, h->total);
    if (c->nvals && h->vt) values_add(h->vt, fr, c);
    if (c->prior_child &&
        sps__carried_add(h->carried, (int64_t)(h->rows[fr].offset + c->ordinal),
                         (int64_t)c->prior_child))
        return SPS_ENOMEM;
    if (c->ordinal >= g->base) {
        g->dur[c->ordinal - g->base] = d;
        return 0;
    }
    if (h->nlate == LATE_BATCH) { /* their chunks wait for them: not long */
        int rc = sps__h5w_durations(h->w, h->nlate, h->late_pos, h->late_dur);
        if (rc) return rc;
        h->nlate = 0;
    }
    h->late_pos[h->nlate] = h->rows[fr].offset + c->ordinal;
    h->late_dur[h->nlate++] = d;
    return 0;
}

SPS__PASS_CLOSE(h5_pass_close, h5_end)

/* Writes every call of snap to w.  file_region maps region ids to rows of
 * lay (whose offsets/counts must match the calls the pass will produce). */
int sps__write_events(const sps__snap_t *snap, sps__h5w_t *w,
                      const sps__layout_t *lay, const uint32_t *file_region,
                      sps__carried_t *carried, sps__vtot_t *vt,
                      const sps__progress_t *progress) {
    h5sink_t h = {w, file_region, lay->rows, NULL, 0, NULL, NULL, 0, NULL, carried,
                  vt && vt->nvals ? vt : NULL, progress, 0, lay->nevents};
    size_t active = lay->nrows ? lay->nrows : 1;
    h.ring_cap = (32u << 20) / 40 / active; /* ~32 MiB of rings in all */
    if (h.ring_cap > 4096) h.ring_cap = 4096;
    if (h.ring_cap < 64) h.ring_cap = 64;
    h.rings = calloc(active, sizeof *h.rings);
    h.scratch = malloc(h.ring_cap * sizeof *h.scratch);
    h.late_pos = malloc(LATE_BATCH * sizeof *h.late_pos);
    h.late_dur = malloc(LATE_BATCH * sizeof *h.late_dur);
    int rc = h.rings && h.scratch && h.late_pos && h.late_dur ? 0 : SPS_ENOMEM;
    sps__pass_t p;
    if (!rc) {
        rc = sps__pass_open(&p, snap, &h);
        p.next_id = lay->first_call_id; /* ids run on across the session's periods */
        if (!rc) sps__pass_loop(&p, h5_begin, h5_pass_close);
        rc = sps__pass_done(&p, rc, NULL);
    }
    for (uint32_t fr = 0; !rc && fr < lay->nrows; fr++)
        if (h.rings[fr].n) rc = ring_flush(&h, fr, h.rings[fr].n);
    if (!rc && h.nlate) rc = sps__h5w_durations(w, h.nlate, h.late_pos, h.late_dur);
    for (size_t i = 0; h.rings && i < active; i++) ring_free(&h.rings[i]);
    free(h.rings);
    free(h.scratch);
    free(h.late_pos);
    free(h.late_dur);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* /carried                                                                  */
/* ------------------------------------------------------------------------ */

int sps__carried_add(sps__carried_t *c, int64_t event, int64_t child_ns) {
    if (sps__grow((void **)&c->v, &c->cap, c->n, sizeof *c->v)) return SPS_ENOMEM;
    c->v[c->n++] = (struct sps__carried_call){event, child_ns};
    return 0;
}

void sps__carried_free(sps__carried_t *c) {
    free(c->v);
    memset(c, 0, sizeof *c);
}

int sps__carried_write(const char *path, const sps__carried_t *c) {
    if (!c->n) return 0;
    static const char *const names[] = {"event", "child_ns"};
    int64_t *col = malloc(2 * c->n * sizeof *col); /* the two columns */
    if (!col) return SPS_ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        col[i] = c->v[i].event;
        col[c->n + i] = c->v[i].child_ns;
    }
    const int64_t *cols[] = {col, col + c->n};
    int rc = sps__h5_add_table(path, "carried",
                               "calls carried across a checkpoint: their row in "
                               "/events and the ns their children spent in "
                               "earlier periods' files (subtract from self time)",
                               c->n, NULL, NULL, 2, names, cols);
    free(col);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* /values                                                                   */
/* ------------------------------------------------------------------------ */

int sps__vtot_init(sps__vtot_t *vt, size_t nrows, uint32_t nthreads) {
    memset(vt, 0, sizeof *vt);
    uint32_t n = sps__g.nvals;
    if (!n || !nrows) return 0;
    int mem = sps__values_kind(SPS__MEM_EXCESS) == SPS__VAL_EXCESS && n >= SPS__MEM_NVALS;
    vt->nthreads = nthreads;
    vt->ntracks = mem ? n - SPS__MEM_NVALS + 1 : n;
    vt->calls = calloc(nrows, sizeof *vt->calls);
    vt->own = calloc(nrows * n, sizeof *vt->own);
    vt->self = calloc(nrows * n, sizeof *vt->self);
    vt->track_series = malloc(((size_t)nthreads * vt->ntracks + 1) * sizeof *vt->track_series);
    if (vt->track_series)
        for (size_t i = 0; i < (size_t)nthreads * vt->ntracks; i++) vt->track_series[i] = -1;
    if (!vt->calls || !vt->own || !vt->self || !vt->track_series) {
        sps__vtot_free(vt);
        return SPS_ENOMEM;
    }
    vt->nvals = n;
    vt->nrows = nrows;
    return 0;
}

void sps__vtot_free(sps__vtot_t *vt) {
    free(vt->calls);
    free(vt->own);
    free(vt->self);
    free(vt->track_series);
    for (size_t i = 0; vt->names && i < vt->nnames; i++) free(vt->names[i]);
    free(vt->names);
    free(vt->sm_series);
    free(vt->sm_t);
    free(vt->sm_v);
    memset(vt, 0, sizeof *vt);
}

int sps__values_write(const char *path, const sps__vtot_t *vt, const sps__layout_t *lay) {
    if (!vt->nvals) return 0;
    size_t n = 0, nv = vt->nvals, ncols = 2 + 2 * nv;
    for (size_t r = 0; r < vt->nrows; r++) n += vt->calls[r] != 0;
    if (!n) return 0;
    int rc = SPS_ENOMEM;
    int64_t *col = malloc(ncols * n * sizeof *col);
    const int64_t **cols = malloc(ncols * sizeof *cols);
    const char **region = malloc(n * sizeof *region);
    char **names = calloc(ncols, sizeof *names);
    if (!col || !cols || !region || !names) goto out;
    names[0] = strdup("calls");
    names[1] = strdup("rank");
    for (size_t i = 0; i < nv; i++) {
        const char *v = sps__values_name((uint32_t)i);
        size_t len = strlen(v ? v : "value") + 6;
        names[2 + 2 * i] = strdup(v ? v : "value");
        if ((names[3 + 2 * i] = malloc(len))) snprintf(names[3 + 2 * i], len, "self_%s", v ? v : "value");
    }
    for (size_t i = 0; i < ncols; i++)
        if (!names[i]) goto out;
    size_t k = 0;
    for (size_t r = 0; r < vt->nrows; r++) {
        if (!vt->calls[r]) continue;
        region[k] = lay->names[lay->rows[r].file_region];
        col[k] = (int64_t)vt->calls[r];
        col[n + k] = (int64_t)lay->rows[r].rank;
        for (size_t i = 0; i < nv; i++) {
            col[(2 + 2 * i) * n + k] = (int64_t)vt->own[r * nv + i];
            col[(3 + 2 * i) * n + k] = (int64_t)vt->self[r * nv + i];
        }
        k++;
    }
    for (size_t i = 0; i < ncols; i++) cols[i] = col + i * n;
    rc = sps__h5_add_table(path, "values",
                           "values per span (cfg.track, docs/values.md) summed per region "
                           "and rank: calls with values, rank, then per value its own sum "
                           "and its self sum (peak_bytes: the largest own and self peak)",
                           n, "region", region, ncols, (const char *const *)names, cols);
out:
    for (size_t i = 0; names && i < ncols; i++) free(names[i]);
    free(names);
    free(region);
    free(cols);
    free(col);
    return rc;
}
