/* h5_timeline.c -- an HDF5 recording as a timeline (processes per rank,
 * threads, spans in start order), read through the validating reader.
 *
 * Limitation: the events are held in memory (the reader loads them, about
 * 56 bytes per call); a streaming read of /events is not implemented yet. */
#include "formats/timeline.h"
#include "formats/h5_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lane {
    int64_t *ends; /* stack of open span ends */
    size_t n, cap;
} lane_t;

typedef struct h5tl {
    sps__tlr_vt_t vt; /* first: see timeline.h */
    sps__h5r_t *r;
    sps__tl_header_t h;
    const char **names;
    sps__tl_proc_t *procs;
    sps__tl_thread_t *threads;
    char (*labels)[32];    /* process and thread names */
    uint32_t *ev_thread;   /* thread index of each event */
    uint64_t *order;       /* event indices in timeline order */
    uint64_t n, i;
    lane_t *lanes;
    uint64_t dropped;      /* spans that overlap a sibling partially */
} h5tl_t;

static const sps__tl_header_t *h5tl_header(void *p) { return &((h5tl_t *)p)->h; }

static void h5tl_free(void *p) {
    h5tl_t *t = p;
    if (!t) return;
    for (size_t k = 0; t->lanes && k < t->h.nthreads; k++) free(t->lanes[k].ends);
    free(t->lanes);
    free(t->order);
    free(t->ev_thread);
    free(t->labels);
    free(t->threads);
    free(t->procs);
    free(t->names);
    sps__h5r_free(t->r);
    free(t);
}

/* Order of events: start, then longer first (an enclosing call before what
 * it contains), then thread. */
static int ev_cmp(const void *a, const void *b, void *ctx) {
    const h5tl_t *t = ctx;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    int64_t sx = t->r->start[x], sy = t->r->start[y];
    if (sx != sy) return sx < sy ? -1 : 1;
    int64_t dx = t->r->dur[x], dy = t->r->dur[y];
    if (dx != dy) return dx > dy ? -1 : 1;
    return t->ev_thread[x] < t->ev_thread[y] ? -1 : t->ev_thread[x] > t->ev_thread[y];
}

/* Index of (rank, tid) in the thread table, added if new.  Linear probing
 * over a small open-addressing table kept in *slots. */
typedef struct tkey {
    uint32_t rank;
    int64_t tid;
} tkey_t;

static int threads_build(h5tl_t *t) {
    const sps__h5r_t *r = t->r;
    size_t cap = 64, n = 0, nslots = 256;
    tkey_t *keys = malloc(cap * sizeof *keys);
    int32_t *slots = malloc(nslots * sizeof *slots);
    t->ev_thread = malloc((r->nevents ? r->nevents : 1) * sizeof *t->ev_thread);
    if (!keys || !slots || !t->ev_thread) goto nomem;
    memset(slots, -1, nslots * sizeof *slots);
    for (uint64_t e = 0; e < r->nevents; e++) {
        if (r->row[e] == UINT32_MAX) {
            t->ev_thread[e] = UINT32_MAX; /* no row covers it: skipped */
            continue;
        }
        tkey_t k = {r->rows[r->row[e]].rank,
                    r->thread_ids && r->thread_ids[e] >= 0 ? r->thread_ids[e] : 0};
        size_t h = (size_t)(((uint64_t)k.rank * 0x9E3779B97F4A7C15ull) ^
                            ((uint64_t)k.tid * 0xC2B2AE3D27D4EB4Full)) & (nslots - 1);
        while (slots[h] >= 0 && !(keys[slots[h]].rank == k.rank && keys[slots[h]].tid == k.tid))
            h = (h + 1) & (nslots - 1);
        if (slots[h] < 0) {
            if (n == cap) {
                tkey_t *nk = realloc(keys, (cap *= 2) * sizeof *nk);
                if (!nk) goto nomem;
                keys = nk;
            }
            keys[n] = k;
            slots[h] = (int32_t)n++;
            if (n * 2 > nslots) { /* grow and rehash */
                size_t ns = nslots * 2;
                int32_t *s2 = malloc(ns * sizeof *s2);
                if (!s2) goto nomem;
                memset(s2, -1, ns * sizeof *s2);
                for (size_t j = 0; j < n; j++) {
                    size_t g = (size_t)(((uint64_t)keys[j].rank * 0x9E3779B97F4A7C15ull) ^
                                        ((uint64_t)keys[j].tid * 0xC2B2AE3D27D4EB4Full)) & (ns - 1);
                    while (s2[g] >= 0) g = (g + 1) & (ns - 1);
                    s2[g] = (int32_t)j;
                }
                free(slots);
                slots = s2;
                nslots = ns;
                h = (size_t)-1;
            }
        }
        if (h == (size_t)-1) { /* find again after a rehash */
            h = (size_t)(((uint64_t)k.rank * 0x9E3779B97F4A7C15ull) ^
                         ((uint64_t)k.tid * 0xC2B2AE3D27D4EB4Full)) & (nslots - 1);
            while (!(keys[slots[h]].rank == k.rank && keys[slots[h]].tid == k.tid))
                h = (h + 1) & (nslots - 1);
        }
        t->ev_thread[e] = (uint32_t)slots[h];
    }
    /* processes: one per rank seen, in rank order */
    uint32_t maxrank = 0;
    for (size_t j = 0; j < n; j++) if (keys[j].rank > maxrank) maxrank = keys[j].rank;
    int multi = 0;
    for (size_t j = 0; j < n; j++) if (keys[j].rank != keys[0].rank) multi = 1;
    t->threads = calloc(n + 1, sizeof *t->threads);
    t->procs = calloc(n + 1, sizeof *t->procs);
    t->labels = calloc(2 * n + 1, sizeof *t->labels);
    if (!t->threads || !t->procs || !t->labels) goto nomem;
    size_t np = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t pid = keys[j].rank;
        size_t p = 0;
        while (p < np && t->procs[p].pid != pid) p++;
        if (p == np) {
            char *lab = t->labels[n + np];
            if (multi || keys[j].rank > 0) snprintf(lab, 32, "rank %u", keys[j].rank);
            else snprintf(lab, 32, "spanscope");
            t->procs[np++] = (sps__tl_proc_t){pid, (multi || keys[j].rank > 0) ? pid : -1, lab};
        }
        snprintf(t->labels[j], 32, "thread %lld", (long long)keys[j].tid);
        t->threads[j] = (sps__tl_thread_t){pid, keys[j].tid, t->labels[j]};
    }
    t->h.nthreads = n;
    t->h.threads = t->threads;
    t->h.nprocs = np;
    t->h.procs = t->procs;
    free(keys);
    free(slots);
    return 0;
nomem:
    free(keys);
    free(slots);
    sps__tlr_set_error("out of memory");
    return SPS_ENOMEM;
}

/* The next span: skips events outside every row and spans that partially
 * overlap an open span of their thread (counted in dropped). */
static int h5tl_next(void *p, sps__tl_span_t *s) {
    h5tl_t *t = p;
    while (t->i < t->n) {
        uint64_t e = t->order[t->i++];
        uint32_t th = t->ev_thread[e];
        int64_t st = t->r->start[e], en = st + (t->r->dur[e] > 0 ? t->r->dur[e] : 0);
        lane_t *ln = &t->lanes[th];
        while (ln->n && ln->ends[ln->n - 1] <= st) ln->n--;
        if (ln->n && ln->ends[ln->n - 1] < en) {
            t->dropped++;
            continue;
        }
        if (ln->n == ln->cap) {
            size_t cap = ln->cap ? ln->cap * 2 : 16;
            int64_t *v = realloc(ln->ends, cap * sizeof *v);
            if (!v) return SPS_ENOMEM;
            ln->ends = v;
            ln->cap = cap;
        }
        ln->ends[ln->n++] = en;
        *s = (sps__tl_span_t){t->r->rows[t->r->row[e]].file_region, th, st, en};
        return 1;
    }
    return 0;
}

int sps__h5tl_open(void **out, const char *path) {
    *out = NULL;
    h5tl_t *t = calloc(1, sizeof *t);
    if (!t) return SPS_ENOMEM;
    t->vt = (sps__tlr_vt_t){h5tl_header, h5tl_next, h5tl_free};
    int rc = sps__h5r_open(&t->r, path);
    if (rc) {
        sps__tlr_set_error("%s", sps__h5r_error());
        free(t);
        return rc;
    }
    const sps__h5r_t *r = t->r;
    if (r->aggregate) {
        sps__tlr_set_error("%s: an aggregate-mode file has no per-call events to draw", path);
        h5tl_free(t);
        return SPS_EFORMAT;
    }
    t->names = malloc((r->nnames + 1) * sizeof *t->names);
    rc = t->names ? threads_build(t) : SPS_ENOMEM;
    if (!rc) {
        for (size_t k = 0; k < r->nnames; k++) t->names[k] = r->names[k];
        t->h.nnames = r->nnames;
        t->h.names = t->names;
        t->lanes = calloc(t->h.nthreads + 1, sizeof *t->lanes);
        t->order = malloc((r->nevents ? r->nevents : 1) * sizeof *t->order);
        if (!t->lanes || !t->order) rc = SPS_ENOMEM;
    }
    if (!rc) {
        int64_t minstart = INT64_MAX;
        for (uint64_t e = 0; e < r->nevents; e++) {
            if (t->ev_thread[e] == UINT32_MAX) continue;
            t->order[t->n++] = e;
            if (r->start[e] < minstart) minstart = r->start[e];
        }
        qsort_r(t->order, t->n, sizeof *t->order, ev_cmp, t);
        t->h.base_ns = r->has_times ? r->start_time_ns : (t->n ? minstart : 0);
        const char *slash = strrchr(path, '/');
        t->h.trace_name = slash ? slash + 1 : path;
        t->h.rank = t->h.nprocs > 1 ? 0 : -1;
        t->h.world_size = (int64_t)t->h.nprocs;
        t->h.nspans = t->n;
    }
    if (rc) {
        if (rc == SPS_ENOMEM) sps__tlr_set_error("%s: out of memory", path);
        h5tl_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
