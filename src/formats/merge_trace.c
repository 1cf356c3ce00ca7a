/*
 * merge_trace.c -- sps_merge's trace output (.json / .json.gz / .pftrace,
 * merge.h): a k-way merge over the inputs' timeline readers (sps__tlr_*,
 * any mix of .h5, .json, .json.gz and .pftrace) into one timeline writer.
 *
 * Spans leave in global start order and memory stays at O(inputs +
 * threads + names) beyond what each reader holds.  Names are interned by
 * string, pids are ranks, threads are per (rank, tid).  JSON gets a
 * top-level "spanscope" key saying, per rank, how its clock was aligned,
 * given to the writer as a header extra (sps__tlw_extra), so .json.gz is
 * compressed as it is written.  Counter samples and flow points of every
 * input go along (held in memory: they are few), shifted like its spans,
 * counters on its process, flow ids remapped so that inputs never share
 * one (remap_flow_id).  Stack samples of every .h5 input (its /samples
 * through the one checked reader, sps__h5r_samples) go along too, shifted
 * like its spans, each on the output row of its thread (export.h:
 * sps__tl_samples_place; a thread with samples but no spans gets a row of
 * its own in its rank), written by the writer's sample call (Chrome
 * JSON: tensorplay's instant events; Perfetto: PerfSample packets).
 * Samples of trace inputs are not read back (a trace reader yields
 * spans, counters and flows only).
 *
 * Which rank each input is and how far its times move come from
 * model/align.c; this file reads the facts and applies the shifts.
 */
#include "formats/export.h"
#include "formats/h5_read.h"
#include "formats/merge.h"
#include "formats/timeline.h"
#include "model/align.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Name interning (merge.h; the .h5 merge uses it too)                       */
/* ------------------------------------------------------------------------ */

int64_t sps__strtab_id(sps__strtab_t *t, const char *s) {
    sps__hprobe_t p = sps__htab_probe(&t->index, sps__hash_bytes(s, strlen(s)));
    for (uint32_t id; sps__htab_next(&t->index, &p, &id);)
        if (!strcmp(t->v[id], s)) return id;
    if (t->n >= UINT32_MAX - 1 || sps__htab_make_room(&t->index, &p)) return -1;
    if (sps__grow((void **)&t->v, &t->cap, t->n, sizeof *t->v)) return -1;
    sps__htab_put(&t->index, &p, (uint32_t)t->n);
    t->v[t->n] = s;
    return (int64_t)t->n++;
}

void sps__strtab_free(sps__strtab_t *t) {
    free(t->v);
    sps__htab_free(&t->index);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */
/* ------------------------------------------------------------------------ */

/* One input and its state during the merge. */
typedef struct tin {
    const char *path;
    sps__tl_format_t fmt;
    sps__tlr_t *r;
    sps__h5r_meta_t m;     /* an .h5's /metadata (owned; zero for traces) */
    int64_t *held;         /* its rank facts' held ranks (owned) */
    int64_t rank, offset;  /* from the alignment (write) */
    sps__align_t al;       /* the whole alignment: offset and drift (write) */
    uint32_t *name_map;    /* input name id -> output name id */
    uint32_t *thread_map;  /* input thread index -> output thread index */
    sps__tl_span_t cur;    /* its next span, shifted and mapped */
    uint32_t proc_out;     /* its process in the output header */
    sps__h5r_samples_t smp; /* an .h5's /samples (owned; none for traces) */
    sps__tl_samples_t in_smp;  /* them on its own header's threads */
    sps__tl_samples_t out_smp; /* them on the output's threads (thread owned) */
    sps__h5r_device_t dev;  /* an .h5's /device (owned; none for traces) */
    sps__tl_device_t dpl;   /* it on its own header, then on the output's */
} tin_t;

/* The merge: its inputs and everything it builds besides them. */
typedef struct tmerge {
    tin_t *in;
    size_t n;
    const char *out;       /* the output's name (messages) */
    sps__strtab_t names;
    sps__tl_proc_t *procs;
    sps__tl_thread_t *threads;
    size_t nthreads;
    char **labels;         /* owned strings: proc and thread names */
    size_t nlabels;
    sps__heap_t heap;      /* inputs by their next span (span_tie) */
    sps__tl_counter_t *counters; /* every input's, shifted and mapped */
    size_t ncounters;
    sps__tl_flow_t *flows;
    size_t nflows;
} tmerge_t;

/* Frees what the inputs hold and the merged tables (not m itself). */
static void tmerge_clear(tmerge_t *m) {
    for (size_t i = 0; m->in && i < m->n; i++) {
        tin_t *x = &m->in[i];
        sps__tlr_free(x->r);
        sps__h5r_meta_free(&x->m);
        free(x->held);
        free(x->name_map);
        free(x->thread_map);
        free(x->out_smp.thread);
        sps__tl_samples_free(&x->in_smp);
        sps__h5r_samples_free(&x->smp);
        sps__tl_device_free(&x->dpl);
        sps__h5r_device_free(&x->dev);
    }
    free(m->in);
    sps__strtab_free(&m->names);
    free(m->procs);
    free(m->threads);
    for (size_t i = 0; i < m->nlabels; i++) free(m->labels[i]);
    free(m->labels);
    sps__heap_free(&m->heap);
    free(m->counters);
    free(m->flows);
}

/* The kind's free: closes every input, frees st (a tmerge_t). */
static void trace_free(void *st) {
    if (!st) return;
    tmerge_clear(st);
    free(st);
}

/* The kind's create: a tmerge_t for n inputs in *st.  0 or SPS_ENOMEM. */
static int trace_create(void **st, size_t n, sps__merge_opts_t *opts) {
    (void)opts; /* nothing a trace merge reads */
    tmerge_t *m = calloc(1, sizeof *m);
    if (m) m->in = calloc(n, sizeof *m->in);
    if (!m || !m->in) {
        free(m);
        *st = NULL;
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    }
    m->n = n;
    *st = m;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Opening an input: its reader and its facts                                */
/* ------------------------------------------------------------------------ */

/* Fills f's rank facts from x's header h: for an .h5, its /metadata rank
 * and the ranks of its processes (each pid is a rank, align.h); for a
 * trace, distributedInfo.rank and its processes' "rank N" labels.
 * Returns 0 or SPS_ENOMEM (message set). */
static int rank_facts(tin_t *x, const sps__tl_header_t *h, sps__rank_facts_t *f) {
    if (!(x->held = malloc((h->nprocs + 1) * sizeof *x->held)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    int h5 = x->fmt == SPS__TL_H5;
    for (size_t p = 0; p < h->nprocs; p++)
        x->held[p] = h5 ? h->procs[p].pid : h->procs[p].rank;
    f->named = h5 ? (x->m.has_rank ? x->m.rank : -1) : (h->rank >= 0 ? h->rank : -1);
    f->held = x->held;
    f->nheld = h->nprocs;
    f->labels = !h5;
    return 0;
}

/* Fills f's clock facts: an .h5's from its /metadata (sps__h5r_metadata),
 * a trace's anchor and host from its header (it has no MPI offset). */
static void clock_facts(const tin_t *x, const sps__tl_header_t *h,
                        sps__clock_facts_t *f) {
    memset(f, 0, sizeof *f);
    f->hostname = "";
    if (x->fmt == SPS__TL_H5) {
        const sps__h5r_meta_t *m = &x->m;
        f->has_anchor = m->has_anchor;
        f->wall_anchor_ns = m->wall_anchor_ns;
        f->mono_anchor_ns = m->mono_anchor_ns;
        f->hostname = m->hostname ? m->hostname : "";
        f->has_offset = m->has_clock_offset;
        f->offset_ns = m->clock_offset_ns;
        f->has_offset_error = m->has_clock_offset_error;
        f->offset_error_ns = m->clock_offset_error_ns;
        sps__h5_clock_drift(x->path, f); /* /clock_sync: the offset as a line */
    } else if (h->wall_anchor_ns > 0) {
        f->has_anchor = 1;
        f->wall_anchor_ns = h->wall_anchor_ns;
        f->mono_anchor_ns = h->mono_anchor_ns;
        f->hostname = h->hostname ? h->hostname : ""; /* lives as long as x->r */
    }
}

/* The kind's open: input i's timeline reader (an .h5 has its /metadata
 * read first: the reader then holds the file open) and its facts.  The
 * timeline reader refuses aggregate files.  0 or a code (message set). */
static int trace_open(void *st, size_t i, const char *path,
                      sps__tl_format_t fmt, sps__align_in_t *facts) {
    tin_t *x = &((tmerge_t *)st)->in[i];
    x->path = path;
    x->fmt = fmt;
    /* a file the metadata reader cannot open is the timeline reader's to
     * explain: it validates the whole file */
    if (fmt == SPS__TL_H5 && sps__h5r_metadata(path, &x->m) == SPS_ENOMEM)
        return SPS_ENOMEM;
    int rc = sps__tlr_open(&x->r, path, fmt);
    if (rc) return rc;
    /* its stack samples: a bad /samples fails the merge (message set) */
    if (fmt == SPS__TL_H5 && (rc = sps__h5r_samples(path, &x->smp))) return rc;
    /* its device activity: a bad /device fails the merge (message set) */
    if (fmt == SPS__TL_H5 && (rc = sps__h5r_device(path, &x->dev))) return rc;
    const sps__tl_header_t *h = sps__tlr_header(x->r);
    clock_facts(x, h, &facts->clock);
    return rank_facts(x, h, &facts->rank);
}

/* ------------------------------------------------------------------------ */
/* The merged header                                                         */
/* ------------------------------------------------------------------------ */

/* A copy of the formatted string, kept in m->labels.  NULL: no memory. */
static const char *label(tmerge_t *m, const char *fmt, const char *a,
                         const char *b) {
    char *s = NULL;
    if (asprintf(&s, fmt, a, b) < 0) return NULL;
    m->labels[m->nlabels++] = s;
    return s;
}

/* qsort order of input pointers: by rank. */
static int by_rank(const void *a, const void *b) {
    const tin_t *x = *(tin_t *const *)a, *y = *(tin_t *const *)b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Whether the output already has thread (pid, tid). */
static int out_thread_taken(const tmerge_t *m, int64_t pid, int64_t tid) {
    for (size_t t = 0; t < m->nthreads; t++)
        if (m->threads[t].pid == pid && m->threads[t].tid == tid) return 1;
    return 0;
}

/* Adds the rows input x's samples need beyond its spans' threads (of
 * header h: x->in_smp's added threads, in x's output process with a tid
 * not yet taken there) and fills x->out_smp: its samples on the output's
 * threads, shifted by x's offset.  Returns 0 or SPS_ENOMEM. */
static int tmerge_sample_threads(tmerge_t *m, tin_t *x, const sps__tl_header_t *h) {
    const sps__tl_samples_t *in = &x->in_smp;
    size_t n = x->smp.n;
    x->out_smp = *in;
    x->out_smp.thread = malloc((n ? n : 1) * sizeof *x->out_smp.thread);
    uint32_t *added = malloc((in->nadded + 1) * sizeof *added);
    if (!x->out_smp.thread || !added) {
        free(added);
        return SPS_ENOMEM;
    }
    for (size_t a = 0; a < in->nadded; a++) {
        int64_t tid = in->threads[h->nthreads + a].tid;
        while (out_thread_taken(m, x->rank, tid) && tid < INT32_MAX) tid++;
        m->threads[m->nthreads] = (sps__tl_thread_t){x->rank, tid, in->label[a]};
        added[a] = (uint32_t)m->nthreads++;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t t = in->thread[i];
        x->out_smp.thread[i] = t == UINT32_MAX ? UINT32_MAX
                               : t < h->nthreads ? x->thread_map[t]
                                                 : added[t - h->nthreads];
    }
    free(added);
    x->out_smp.threads = NULL; /* the output's are m->threads */
    x->out_smp.nthreads = 0;
    x->out_smp.nadded = 0;
    x->out_smp.label = NULL;
    x->out_smp.shift_ns = x->offset;
    /* a drifting clock is a line, not one shift: the times themselves are
     * mapped (x->smp is this merge's own); a time that would leave int64
     * leaves its sample out */
    if (x->al.drift != 0) {
        for (size_t i = 0; i < x->smp.n; i++)
            if (sps__shift_at(&x->smp.times_ns[i], &x->al)) x->out_smp.thread[i] = UINT32_MAX;
        x->out_smp.shift_ns = 0;
    }
    return 0;
}

/* Moves input x's device activity (x->dpl, placed on its header h) onto
 * the output: the rows of API calls on threads without spans (in x's
 * output process, a tid not yet taken there), its names, its GPUs under
 * x's process, its times shifted by x's offset (a drifting clock: the
 * times themselves mapped; one that would leave int64 leaves its row
 * out), its flow ids apart from the other inputs'.  0 or SPS_ENOMEM. */
static int tmerge_device_threads(tmerge_t *m, tin_t *x, const sps__tl_header_t *h) {
    sps__tl_device_t *d = &x->dpl;
    if (!d->x) return 0;
    uint32_t *map = malloc((d->nthreads + 1) * sizeof *map);
    if (!map) return SPS_ENOMEM;
    for (size_t t = 0; t < h->nthreads; t++) map[t] = x->thread_map[t];
    for (size_t a = 0; a < d->nadded; a++) {
        int64_t tid = d->threads[h->nthreads + a].tid;
        while (out_thread_taken(m, x->rank, tid) && tid < INT32_MAX) tid++;
        m->threads[m->nthreads] = (sps__tl_thread_t){x->rank, tid, d->label[a]};
        map[h->nthreads + a] = (uint32_t)m->nthreads++;
    }
    d->shift_ns = x->offset;
    if (x->al.drift != 0) {
        sps__h5r_device_t *v = &x->dev;
        for (size_t i = 0; i < v->n; i++)
            if (sps__shift_at(&v->starts_ns[i], &x->al) || sps__shift_at(&v->ends_ns[i], &x->al) ||
                v->ends_ns[i] < v->starts_ns[i])
                d->thread[i] = UINT32_MAX;
        d->shift_ns = 0;
    }
    d->flow_base = x->rank >= 0 && x->rank < ((int64_t)1 << 23) ? (uint64_t)x->rank << 40
                                                                : sps__hash_u64((uint64_t)x->rank);
    const char *pname = m->procs[x->proc_out].name;
    int rc = sps__tl_device_remap(d, map, d->nthreads, x->name_map, h->nnames, x->proc_out,
                                  m->n > 1 ? pname : NULL);
    free(map);
    return rc;
}

/* Adds input x's threads to m->threads and fills x->thread_map.  Threads
 * of the input's first process keep their tids (unique within it); those
 * of any other process get fresh tids above the input's largest, and
 * their process's name in theirs.  Returns 0 or SPS_ENOMEM. */
static int tmerge_threads(tmerge_t *m, tin_t *x, const sps__tl_header_t *h) {
    int64_t fresh = INT64_MIN;
    for (size_t j = 0; j < h->nthreads; j++)
        if (h->threads[j].tid > fresh) fresh = h->threads[j].tid;
    fresh = fresh < 0 ? 0 : fresh == INT64_MAX ? fresh : fresh + 1;
    int64_t first = h->nprocs ? h->procs[0].pid : 0;
    for (size_t j = 0; j < h->nthreads; j++) {
        const sps__tl_thread_t *t = &h->threads[j];
        sps__tl_thread_t *o = &m->threads[m->nthreads];
        o->pid = x->rank;
        o->tid = t->tid;
        o->name = t->name ? t->name : "";
        if (t->pid != first) {
            const char *pn = "";
            for (size_t p = 0; p < h->nprocs; p++)
                if (h->procs[p].pid == t->pid && h->procs[p].name)
                    pn = h->procs[p].name;
            o->tid = fresh < INT64_MAX ? fresh++ : fresh;
            if (!(o->name = label(m, "%s: %s", pn, o->name))) return SPS_ENOMEM;
        }
        x->thread_map[j] = (uint32_t)m->nthreads++;
    }
    int rc = tmerge_sample_threads(m, x, h);
    return rc ? rc : tmerge_device_threads(m, x, h);
}

/* Adds input x (the k-th in rank order) to the merged header: its process
 * "rank N", its names and its threads.  Returns 0 or SPS_ENOMEM. */
static int tmerge_input(tmerge_t *m, tin_t *x, size_t k) {
    const sps__tl_header_t *h = sps__tlr_header(x->r);
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)x->rank);
    const char *pname = label(m, "rank %s%s", num, "");
    x->name_map = malloc((h->nnames + 1) * sizeof *x->name_map);
    x->thread_map = malloc((h->nthreads + 1) * sizeof *x->thread_map);
    if (!pname || !x->name_map || !x->thread_map) return SPS_ENOMEM;
    m->procs[k] = (sps__tl_proc_t){x->rank, x->rank, pname};
    x->proc_out = (uint32_t)k;
    for (size_t j = 0; j < h->nnames; j++) {
        int64_t id = sps__strtab_id(&m->names, h->names[j]);
        if (id < 0) return SPS_ENOMEM;
        x->name_map[j] = (uint32_t)id;
    }
    return tmerge_threads(m, x, h);
}

/* The order of the inputs' next spans beyond their start (the heap's key):
 * the longer (enclosing) first, then input order (the heap's last
 * resort: index i is input i).  ctx: the inputs. */
static int span_tie(void *ctx, uint32_t a, uint32_t b) {
    const tin_t *in = ctx;
    int64_t ea = in[a].cur.end_ns, eb = in[b].cur.end_ns;
    return ea != eb ? (ea > eb ? -1 : 1) : 0;
}

/* Builds the merged header's names, processes (in rank order) and threads
 * from the inputs' headers.  Returns 0 or SPS_ENOMEM (message set). */
static int tmerge_header(tmerge_t *m) {
    size_t n = m->n, nthr = 0;
    for (size_t i = 0; i < n; i++) {
        tin_t *x = &m->in[i];
        if (sps__tl_samples_place(&x->in_smp, &x->smp, sps__tlr_header(x->r)))
            return sps__err_fail(SPS_ENOMEM, "out of memory");
        nthr += x->in_smp.nthreads; /* its threads and its sample-only ones */
        if (x->dev.n && sps__tl_device_place(&x->dpl, &x->dev, sps__tlr_header(x->r)))
            return sps__err_fail(SPS_ENOMEM, "out of memory");
        nthr += x->dpl.nadded; /* its CUDA-only ones */
    }
    tin_t **order = malloc(n * sizeof *order);
    m->procs = calloc(n, sizeof *m->procs);
    m->threads = calloc(nthr + 1, sizeof *m->threads);
    m->labels = calloc(n + nthr + 1, sizeof *m->labels);
    sps__heap_init(&m->heap, span_tie, m->in);
    int rc = !order || !m->procs || !m->threads || !m->labels ||
             sps__heap_reserve(&m->heap, n) ? SPS_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) order[i] = &m->in[i];
    if (rc == 0) qsort(order, n, sizeof *order, by_rank);
    for (size_t k = 0; rc == 0 && k < n; k++) rc = tmerge_input(m, order[k], k);
    free(order);
    return rc ? sps__err_fail(rc, "out of memory") : 0;
}

/* ------------------------------------------------------------------------ */
/* Counters and flows                                                        */
/* ------------------------------------------------------------------------ */

/* The output id of flow id of the input of rank rank: (rank << 40) | id
 * when id < 2^40 and 0 <= rank < 2^23, else a 64-bit hash of (rank, id)
 * with the top bit set, so that the two kinds never meet and different
 * inputs never share an id (but for a hash collision, ~n^2 / 2^64). */
static uint64_t remap_flow_id(int64_t rank, uint64_t id) {
    if (id < ((uint64_t)1 << 40) && rank >= 0 && rank < ((int64_t)1 << 23))
        return ((uint64_t)rank << 40) | id;
    uint64_t x = id ^ ((uint64_t)rank * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < 2; i++) x = sps__hash_u64(x) + (uint64_t)rank;
    return x | ((uint64_t)1 << 63);
}

/* The message for a time of input x that leaves int64 once shifted;
 * returns SPS_EFORMAT. */
static int out_of_range(const tin_t *x) {
    return sps__err_fail(SPS_EFORMAT, "%s: a time leaves the 64-bit range "
                         "after clock alignment", x->path);
}

/* Appends input x's counter samples and flow points to m: names, process
 * and threads mapped, times shifted, flow ids remapped.  Returns 0 or
 * SPS_EFORMAT (message set). */
static int tmerge_extras_one(tmerge_t *m, const tin_t *x) {
    const sps__tl_header_t *h = sps__tlr_header(x->r);
    for (size_t i = 0; i < h->ncounters; i++) {
        sps__tl_counter_t o = h->counters[i];
        if (o.name >= h->nnames || o.proc >= h->nprocs) continue;
        if (sps__shift_at(&o.ts_ns, &x->al)) return out_of_range(x);
        o.name = x->name_map[o.name];
        o.proc = x->proc_out;
        m->counters[m->ncounters++] = o;
    }
    for (size_t i = 0; i < h->nflows; i++) {
        sps__tl_flow_t o = h->flows[i];
        if (o.name >= h->nnames || o.thread >= h->nthreads) continue;
        if (sps__shift_at(&o.ts_ns, &x->al)) return out_of_range(x);
        o.name = x->name_map[o.name];
        o.thread = x->thread_map[o.thread];
        o.id = remap_flow_id(x->rank, o.id);
        m->flows[m->nflows++] = o;
    }
    return 0;
}

/* Gathers every input's counter samples and flow points into m, in time
 * order.  Returns 0 or a code (message set). */
static int tmerge_extras(tmerge_t *m) {
    size_t nc = 0, nf = 0;
    for (size_t i = 0; i < m->n; i++) {
        nc += sps__tlr_header(m->in[i].r)->ncounters;
        nf += sps__tlr_header(m->in[i].r)->nflows;
    }
    m->counters = malloc((nc + 1) * sizeof *m->counters);
    m->flows = malloc((nf + 1) * sizeof *m->flows);
    if (!m->counters || !m->flows) return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n; i++) {
        int rc = tmerge_extras_one(m, &m->in[i]);
        if (rc) return rc;
    }
    if (sps__tl_sort_by_time(m->counters, m->ncounters, sizeof *m->counters,
                             offsetof(sps__tl_counter_t, ts_ns)) ||
        sps__tl_sort_by_time(m->flows, m->nflows, sizeof *m->flows,
                             offsetof(sps__tl_flow_t, ts_ns)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Spans                                                                     */
/* ------------------------------------------------------------------------ */

/* Reads input x's next span into x->cur, shifted and mapped.  Returns 1,
 * 0 at its end, or a negative code (message set). */
static int advance(tin_t *x) {
    sps__tl_span_t s;
    int rc = sps__tlr_next(x->r, &s);
    if (rc < 0)
        return rc == SPS_EFORMAT ? rc : sps__err_fail(rc, "%s", sps_strerror(rc));
    if (rc == 0) return 0;
    if (sps__shift_at(&s.start_ns, &x->al) || sps__shift_at(&s.end_ns, &x->al))
        return out_of_range(x);
    x->cur = (sps__tl_span_t){x->name_map[s.name], x->thread_map[s.thread],
                              s.start_ns, s.end_ns, s.prior_ns};
    return 1;
}

/* Writes the merged spans of every input to w (k-way merge).  Returns 0
 * or a negative code (message set). */
static int tmerge_spans(tmerge_t *m, sps__tlw_t *w) {
    while (m->heap.n) {
        tin_t *x = &m->in[sps__heap_top(&m->heap).idx];
        int rc = sps__tlw_span(w, &x->cur);
        if (rc) return sps__err_fail(rc, "%s: %s", m->out, sps_strerror(rc));
        rc = advance(x);
        if (rc < 0) return rc;
        if (rc == 0) sps__heap_pop(&m->heap);
        else sps__heap_update_top(&m->heap, sps__heap_key_i64(x->cur.start_ns));
    }
    return 0;
}

/* Primes each input's first span into the heap and fills the output
 * header h (the reference input ref's anchor, -1 none).  Returns 0 or a
 * code (message set). */
static int tmerge_prime(tmerge_t *m, int ref, sps__tl_header_t *h) {
    int64_t base = INT64_MAX;
    uint64_t nspans = 0;
    int known = 1;
    for (size_t i = 0; i < m->n; i++) {
        tin_t *x = &m->in[i];
        const sps__tl_header_t *ih = sps__tlr_header(x->r);
        int64_t b = ih->base_ns;
        if (!sps__shift_at(&b, &x->al) && b < base) base = b;
        if (ih->nspans == 0) known = 0;
        nspans += ih->nspans;
        int rc = advance(x);
        if (rc < 0) return rc;
        if (rc == 0) continue;
        if (x->cur.start_ns < base) base = x->cur.start_ns;
        sps__heap_push(&m->heap, sps__heap_key_i64(x->cur.start_ns), (uint32_t)i); /* reserved */
    }
    const char *slash = strrchr(m->out, '/');
    memset(h, 0, sizeof *h);
    h->nnames = m->names.n;
    h->names = m->names.v;
    h->nprocs = m->n;
    h->procs = m->procs;
    h->nthreads = m->nthreads;
    h->threads = m->threads;
    h->base_ns = base == INT64_MAX ? 0 : base;
    h->trace_name = slash ? slash + 1 : m->out;
    h->rank = -1;
    h->world_size = (int64_t)m->n;
    h->kineto = 1; /* JSON for torch's tools (TensorBoard, HTA): chrome_json.c */
    h->nspans = known ? nspans : 0;
    h->ncounters = m->ncounters;
    h->counters = m->counters;
    h->nflows = m->nflows;
    h->flows = m->flows;
    if (ref >= 0) {
        sps__clock_facts_t f;
        clock_facts(&m->in[ref], sps__tlr_header(m->in[ref].r), &f);
        if (f.has_anchor) {
            h->wall_anchor_ns = f.wall_anchor_ns;
            h->mono_anchor_ns = f.mono_anchor_ns;
            h->hostname = f.hostname;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

/* Writes the "spanscope" member describing the merge to fp: the reference
 * and, per input, its rank, source and clock alignment (docs/merge.md). */
static void merge_key(FILE *fp, const tmerge_t *m, const sps__align_t *al,
                      int ref) {
    fputs("\"spanscope\":{\"merge\":{\"reference\":", fp);
    if (ref >= 0) {
        fputc('"', fp);
        sps__json_fputs(fp, m->in[ref].path, 0);
        fputc('"', fp);
    } else {
        fputs("null", fp);
    }
    fputs(",\"ranks\":[", fp);
    for (size_t i = 0; i < m->n; i++) {
        fprintf(fp, "%s{\"rank\":%lld,\"source\":\"", i ? "," : "",
                (long long)al[i].rank);
        sps__json_fputs(fp, m->in[i].path, 0);
        fprintf(fp, "\",\"clock_aligned\":%s,\"clock\":\"%s\","
                "\"offset_ns\":%lld",
                al[i].how != SPS__CLOCK_NONE ? "true" : "false",
                sps__clock_name(al[i].how), (long long)al[i].offset);
        if (al[i].offset_error >= 0)
            fprintf(fp, ",\"offset_error_ns\":%lld", (long long)al[i].offset_error);
        if (al[i].drift != 0) /* offset_ns is then the shift at drift_t0_ns */
            fprintf(fp, ",\"drift_ppm\":%.6f,\"drift_t0_ns\":%lld", al[i].drift * 1e6,
                    (long long)al[i].drift_t0);
        fputc('}', fp);
    }
    fputs("]}}", fp);
}

/* Gives the JSON writer w the "spanscope" member (Perfetto has no place
 * for it).  Returns 0 or a code (message set). */
static int add_merge_key(tmerge_t *m, sps__tlw_t *w, const sps__align_t *al,
                         int ref) {
    if (sps__tl_format_of(m->out) == SPS__TL_PFTRACE) return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    if (!fp) return sps__err_fail(SPS_ENOMEM, "out of memory");
    merge_key(fp, m, al, ref);
    int bad = ferror(fp);
    bad |= fclose(fp) != 0;
    int rc = bad ? SPS_ENOMEM : sps__tlw_extra(w, text);
    free(text);
    return rc ? sps__err_fail(rc, "%s: %s", m->out, sps_strerror(rc)) : 0;
}

/* Writes the merged trace to tmp in the format out names (.json.gz
 * compressed by the writer as it goes); the writer removes its file on
 * failure.  Returns 0 or a code (message set). */
static int trace_write_file(tmerge_t *m, const sps__tl_header_t *h,
                            const char *tmp, const sps__align_t *al, int ref) {
    sps__tlw_t *w;
    int rc = sps__tlw_open(&w, tmp, sps__tl_format_of(m->out), h);
    if (rc) return sps__err_fail(rc, "%s: %s", m->out, sps_strerror(rc));
    rc = add_merge_key(m, w, al, ref);
    for (size_t i = 0; rc == 0 && i < m->n; i++) /* each input's device activity */
        if (m->in[i].dpl.nplaced && (rc = sps__tlw_device(w, &m->in[i].dpl)))
            rc = sps__err_fail(rc, rc == SPS_EINVAL
                               ? "%s: a device activity of %s leaves the output's time range"
                               : "%s: %s", m->out,
                               rc == SPS_EINVAL ? m->in[i].path : sps_strerror(rc));
    if (rc == 0) rc = tmerge_spans(m, w);
    for (size_t i = 0; rc == 0 && i < m->n; i++) /* each input's samples, shifted */
        if (m->in[i].out_smp.nplaced && (rc = sps__tlw_samples(w, &m->in[i].out_smp)))
            rc = sps__err_fail(rc, rc == SPS_EINVAL
                               ? "%s: a stack sample of %s leaves the output's time range"
                               : "%s: %s", m->out,
                               rc == SPS_EINVAL ? m->in[i].path : sps_strerror(rc));
    if (rc) {
        sps__tlw_abort(w);
        return rc;
    }
    rc = sps__tlw_close(w);
    return rc ? sps__err_fail(rc, "%s: %s", m->out, sps_strerror(rc)) : 0;
}

/* The kind's write: takes the inputs' ranks and shifts from al, builds
 * the merged header and writes the trace to tmp.  0 or a code (message
 * set). */
static int trace_write(void *st, const char *out, const char *tmp,
                       const sps__align_t *al, int ref, sps__merge_opts_t *opts) {
    tmerge_t *m = st;
    (void)opts; /* the .h5 kind's */
    m->out = out;
    for (size_t i = 0; i < m->n; i++) {
        m->in[i].rank = al[i].rank;
        m->in[i].offset = al[i].offset;
        m->in[i].al = al[i];
    }
    sps__tl_header_t h;
    int rc = tmerge_header(m);
    if (rc == 0) rc = tmerge_extras(m);
    if (rc == 0) rc = tmerge_prime(m, ref, &h);
    if (rc == 0) rc = trace_write_file(m, &h, tmp, al, ref);
    return rc;
}

const sps__merge_kind_t sps__merge_to_trace = {
    trace_create, trace_open, trace_write, trace_free,
};
