/*
 * timeline_samples.c -- sps_timeline_write and sps_timeline_write_samples:
 * spans held by a caller
 * (sps_timeline_t, the torch-style Python face's EventList) and the stack
 * samples it holds (sps_samples_t, filled by the caller), written as a
 * Chrome trace or a Perfetto trace through the writers every other
 * timeline uses, the samples placed by the one rule of the trace exports
 * (formats/export.h: sps__tl_samples_place) and written by the writers'
 * sample calls (Chrome JSON instants, Perfetto PerfSample packets).
 *
 * The caller's samples are untrusted: every index is checked as the
 * file reader checks a file's (h5_read.c, /samples), before anything is
 * written, and a bad one is SPS_EINVAL with a message naming it.  A
 * sample's row is the timeline thread whose thread_ids entry is its tid;
 * a tid that is no thread of the timeline gets a row of its own, "thread
 * TID (samples)" as sps__tl_samples_place names a file's thread without
 * spans, tid that tid (free: no thread has it).  Any int64 is a tid
 * here (the Python face hashes a tid that is no int), hence this
 * placement by tid rather than sps__tl_samples_place's by a file's
 * (rank, thread index); its result is the same sps__tl_samples_t.
 */
#include "api/api.h"
#include "formats/export.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Checks the spans and counters against the name and thread tables (the
 * rules of sps_timeline_write).  0 or SPS_EINVAL (message set). */
static int check_timeline(const sps_timeline_t *t) {
    if ((t->nnames && !t->names) || (t->nthreads && !t->thread_ids) ||
        (t->nspans && !t->spans) || (t->ncounters && !t->counters))
        return sps__err_fail(SPS_EINVAL, "timeline: a table with entries is NULL");
    for (size_t i = 0; i < t->ncounters; i++)
        if (t->counters[i].counter >= t->nnames ||
            (i && t->counters[i].t_ns < t->counters[i - 1].t_ns))
            return sps__err_fail(SPS_EINVAL, "timeline: counters[%zu] names no name or "
                                 "is out of time order", i);
    for (size_t i = 0; i < t->nspans; i++) {
        const sps_span_t *s = &t->spans[i];
        if (s->region >= t->nnames || s->thread >= t->nthreads ||
            s->end_ns < s->start_ns || (i && s->start_ns < t->spans[i - 1].start_ns))
            return sps__err_fail(SPS_EINVAL, "timeline: spans[%zu] names no region or "
                                 "thread, ends before it starts or is out of order", i);
    }
    return 0;
}

/* Every value of v[0..n) in [lo, hi]; else SPS_EINVAL naming the column
 * and the entry. */
static int smp_range(const char *name, const int64_t *v, size_t n, int64_t lo, int64_t hi) {
    for (size_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi)
            return sps__err_fail(SPS_EINVAL, "samples: %s[%zu] = %lld is outside [%lld, %lld]",
                                 name, i, (long long)v[i], (long long)lo, (long long)hi);
    return 0;
}

/* Every string of v[0..n) (NULL entries allowed) valid UTF-8; else
 * SPS_EINVAL naming it. */
static int smp_utf8(const char *name, const char *const *v, size_t n) {
    for (size_t i = 0; v && i < n; i++)
        if (v[i] && !sps__utf8_valid(v[i], strlen(v[i])))
            return sps__err_fail(SPS_EINVAL, "samples: %s[%zu] is not valid UTF-8", name, i);
    return 0;
}

/* Checks the caller's samples as the file reader checks a file's: the
 * columns present, stacks, stack offsets, frames, regions, weights and
 * kinds in range, strings valid UTF-8.  threads, ranks and call_ids are
 * not read (the rows come from tids; any tid is one).  0 or SPS_EINVAL
 * (message set). */
static int check_samples(const sps_samples_t *x) {
    if (x->n && (!x->times_ns || !x->tids || !x->stacks))
        return sps__err_fail(SPS_EINVAL, "samples: times_ns, tids and stacks are needed "
                             "for %zu samples", x->n);
    if (!x->stack_offsets) {
        if (x->n || x->nstacks)
            return sps__err_fail(SPS_EINVAL, "samples: stack_offsets is NULL (it has "
                                 "nstacks + 1 entries, 0 first)");
        return 0; /* no samples, no stacks */
    }
    if (x->nstacks && x->stack_offsets[x->nstacks] && !x->stack_frames)
        return sps__err_fail(SPS_EINVAL, "samples: stack_frames is NULL");
    if (x->nframes && (!x->functions || !x->lines || !x->kinds))
        return sps__err_fail(SPS_EINVAL, "samples: functions, lines and kinds are needed "
                             "for %zu frames", x->nframes);
    if (x->nregion_names && !x->region_names)
        return sps__err_fail(SPS_EINVAL, "samples: region_names is NULL");
    if (x->nstacks >= (size_t)INT64_MAX || x->nframes >= (size_t)INT64_MAX)
        return sps__err_fail(SPS_EINVAL, "samples: too many stacks or frames");
    int rc = smp_range("stacks", x->stacks, x->n, 0, (int64_t)x->nstacks - 1);
    if (!rc && x->regions)
        rc = smp_range("regions", x->regions, x->n, -1, (int64_t)x->nregion_names - 1);
    if (!rc && x->weights) rc = smp_range("weights", x->weights, x->n, 1, INT32_MAX);
    if (!rc && x->stack_offsets[0] != 0)
        rc = sps__err_fail(SPS_EINVAL, "samples: stack_offsets[0] = %lld, not 0",
                           (long long)x->stack_offsets[0]);
    for (size_t k = 1; !rc && k <= x->nstacks; k++)
        if (x->stack_offsets[k] < x->stack_offsets[k - 1])
            rc = sps__err_fail(SPS_EINVAL, "samples: stack_offsets fall at %zu", k);
    size_t nst = (size_t)x->stack_offsets[x->nstacks];
    if (!rc) rc = smp_range("stack_frames", x->stack_frames, nst, 0, (int64_t)x->nframes - 1);
    if (!rc) rc = smp_range("kinds", x->kinds, x->nframes, 0, 1);
    if (!rc) rc = smp_utf8("functions", x->functions, x->nframes);
    if (!rc) rc = smp_utf8("files", x->files, x->nframes);
    if (!rc) rc = smp_utf8("modules", x->modules, x->nframes);
    if (!rc) rc = smp_utf8("region_names", x->region_names, x->nregion_names);
    return rc;
}

/* The caller's samples as the writers read them (the reader's struct),
 * with what the caller may leave out filled in: weights 1 and regions -1
 * where NULL, NULL strings "", a missing address 0 (threads, ranks and
 * call ids: the writers do not read them).  The caller's arrays are
 * borrowed; those made here are owned. */
typedef struct view {
    sps__h5r_samples_t x;
    void *own[6];
} view_t;

static void view_free(view_t *v) {
    for (size_t i = 0; i < sizeof v->own / sizeof v->own[0]; i++) free(v->own[i]);
    memset(v, 0, sizeof *v);
}

/* A copy of the n strings of v (NULL: all ""), NULL entries as "". */
static char **strs_or_empty(const char *const *v, size_t n) {
    char **out = malloc((n ? n : 1) * sizeof *out);
    for (size_t i = 0; out && i < n; i++) out[i] = (char *)(v && v[i] ? v[i] : "");
    return out;
}

static int view_make(view_t *v, const sps_samples_t *s) {
    memset(v, 0, sizeof *v);
    size_t n = s->n ? s->n : 1, nf = s->nframes ? s->nframes : 1;
    int64_t *cols = malloc(2 * n * sizeof *cols); /* weights, regions */
    int64_t *addr = s->addresses ? NULL : calloc(nf, sizeof *addr);
    char **fn = strs_or_empty(s->functions, s->nframes);
    char **fi = strs_or_empty(s->files, s->nframes);
    char **mo = strs_or_empty(s->modules, s->nframes);
    char **rn = strs_or_empty(s->region_names, s->nregion_names);
    void *own[6] = {cols, addr, fn, fi, mo, rn};
    memcpy(v->own, own, sizeof own);
    if (!cols || (!s->addresses && !addr) || !fn || !fi || !mo || !rn) {
        view_free(v);
        return SPS_ENOMEM;
    }
    int64_t *weights = cols, *regions = cols + n;
    for (size_t i = 0; i < s->n; i++) {
        weights[i] = s->weights ? s->weights[i] : 1;
        regions[i] = s->regions ? s->regions[i] : -1;
    }
    sps__h5r_samples_t *x = &v->x;
    /* the writers only read: the casts drop the caller's const, nothing more */
    x->n = s->n;
    x->times_ns = (int64_t *)s->times_ns;
    x->threads = NULL; /* not read by the trace writers: the rows are placed here */
    x->tids = (int64_t *)s->tids;
    x->ranks = NULL;
    x->regions = regions;
    x->call_ids = NULL;
    x->stacks = (int64_t *)s->stacks;
    x->weights = weights;
    x->nstacks = s->nstacks;
    x->stack_offsets = (int64_t *)s->stack_offsets;
    x->stack_frames = (int64_t *)s->stack_frames;
    x->nframes = s->nframes;
    x->functions = fn;
    x->files = fi;
    x->modules = mo;
    x->lines = (int64_t *)s->lines;
    x->kinds = (int64_t *)s->kinds;
    x->addresses = s->addresses ? (int64_t *)s->addresses : addr;
    x->nnames = s->nregion_names;
    x->names = rn;
    x->hz = s->hz;
    x->lost = s->lost;
    return 0;
}

/* The index among p->threads[0..n) of tid (all of one process), or -1. */
static int64_t row_of(const sps__tl_samples_t *p, size_t n, int64_t tid) {
    for (size_t t = 0; t < n; t++)
        if (p->threads[t].tid == tid) return (int64_t)t;
    return -1;
}

/* Places x's samples on h's threads (one process) by tid into *p (zeroed
 * here; x and h borrowed): a sample on the thread of its tid, else on a
 * row added for that tid after h's, named "thread TID (samples)", whose
 * tid is TID -- or, with fit32 (Perfetto: a thread's tid is an int32, a
 * PerfSample's a uint32) and a TID outside 0..INT32_MAX or taken by such
 * a row, the highest int32 no row has.
 * 0 or SPS_ENOMEM; free with sps__tl_samples_free. */
static int place_by_tid(sps__tl_samples_t *p, const sps__h5r_samples_t *x,
                        const sps__tl_header_t *h, int fit32) {
    memset(p, 0, sizeof *p);
    p->x = x;
    size_t cap = h->nthreads + 8, nh = h->nthreads;
    int64_t *key = malloc(cap * sizeof *key); /* per added row: its samples' tid */
    p->threads = malloc(cap * sizeof *p->threads);
    p->label = malloc(cap * sizeof *p->label);
    p->thread = malloc((x->n ? x->n : 1) * sizeof *p->thread);
    if (!key || !p->threads || !p->label || !p->thread) goto oom;
    if (nh) memcpy(p->threads, h->threads, nh * sizeof *p->threads);
    int64_t pid = h->nprocs ? h->procs[0].pid : 0, last_tid = 0, last = -1;
    for (size_t i = 0; i < x->n; i++) {
        int64_t tid = x->tids[i];
        if (last < 0 || tid != last_tid) { /* samples come in runs of a thread */
            last_tid = tid;
            last = row_of(p, nh, tid);
            for (size_t a = 0; last < 0 && a < p->nadded; a++)
                if (key[a] == tid) last = (int64_t)(nh + a);
        }
        if (last < 0) { /* a tid of no thread: its own row */
            if (nh + p->nadded + 1 > cap) {
                size_t nc = cap * 2;
                int64_t *k = realloc(key, nc * sizeof *k);
                if (!k) goto oom;
                key = k;
                sps__tl_thread_t *th = realloc(p->threads, nc * sizeof *th);
                if (!th) goto oom;
                p->threads = th;
                char (*lb)[48] = realloc(p->label, nc * sizeof *lb);
                if (!lb) goto oom;
                p->label = lb;
                for (size_t a = 0; a < p->nadded; a++) p->threads[nh + a].name = p->label[a];
                cap = nc;
            }
            size_t a = p->nadded++;
            snprintf(p->label[a], sizeof p->label[a], "thread %lld (samples)", (long long)tid);
            int64_t row_tid = tid;
            if (fit32 && (tid < 0 || tid > INT32_MAX || row_of(p, nh + a, tid) >= 0))
                for (row_tid = INT32_MAX; row_of(p, nh + a, row_tid) >= 0;) row_tid--;
            key[a] = tid;
            p->threads[nh + a] = (sps__tl_thread_t){pid, row_tid, p->label[a]};
            last = (int64_t)(nh + a);
        }
        p->thread[i] = (uint32_t)last;
    }
    free(key);
    p->nplaced = x->n;
    p->nthreads = nh + p->nadded;
    return 0;
oom:
    free(key);
    sps__tl_samples_free(p);
    return SPS_ENOMEM;
}

/* ---- the caller's device activity (sps_timeline_write_device) ---- */

/* Every value of column name (v[0..n), the rows of kind lo_kind..hi_kind)
 * in [lo, hi]; else SPS_EINVAL naming the column and row. */
static int dev_range(const char *name, const int64_t *v, const int64_t *kinds, size_t n,
                     int64_t lo_kind, int64_t hi_kind, int64_t lo, int64_t hi) {
    for (size_t i = 0; v && i < n; i++)
        if (kinds[i] >= lo_kind && kinds[i] <= hi_kind && (v[i] < lo || v[i] > hi))
            return sps__err_fail(SPS_EINVAL, "device: %s[%zu] = %lld is outside [%lld, %lld]",
                                 name, i, (long long)v[i], (long long)lo, (long long)hi);
    return 0;
}

/* Checks the caller's device activity as the file reader checks a file's
 * /device (h5_read.c): the needed columns present, kinds, names, devices,
 * streams, regions, sizes in range, start <= end, strings valid UTF-8.
 * 0 or SPS_EINVAL (message set). */
static int check_device(const sps_device_t *d) {
    if (d->n && (!d->kinds || !d->names_idx || !d->starts_ns || !d->ends_ns ||
                 !d->correlations || !d->tids || !d->devices || !d->streams))
        return sps__err_fail(SPS_EINVAL, "device: kinds, names_idx, starts_ns, ends_ns, "
                             "correlations, tids, devices and streams are needed for %zu "
                             "activities", d->n);
    if ((d->nnames && !d->names) || (d->nregion_names && !d->region_names))
        return sps__err_fail(SPS_EINVAL, "device: names or region_names is NULL");
    for (size_t k = 0; k < d->nnames; k++)
        if (!d->names[k] || !sps__utf8_valid(d->names[k], strlen(d->names[k])))
            return sps__err_fail(SPS_EINVAL, "device: names[%zu] is NULL or not UTF-8", k);
    for (size_t k = 0; k < d->nregion_names; k++)
        if (d->region_names[k] && !sps__utf8_valid(d->region_names[k], strlen(d->region_names[k])))
            return sps__err_fail(SPS_EINVAL, "device: region_names[%zu] is not UTF-8", k);
    const int64_t *k = d->kinds;
    size_t n = d->n;
    int rc = dev_range("kinds", k, k, n, INT64_MIN, INT64_MAX, 1, 5);
    if (!rc) rc = dev_range("names_idx", d->names_idx, k, n, 1, 5, 0, (int64_t)d->nnames - 1);
    if (!rc) rc = dev_range("devices", d->devices, k, n, 1, 3, 0, SPS__DEV_MAX_DEVICE);
    if (!rc) rc = dev_range("streams", d->streams, k, n, 1, 3, 0, UINT32_MAX);
    if (!rc) rc = dev_range("correlations", d->correlations, k, n, 1, 5, 0, INT64_MAX);
    if (!rc) rc = dev_range("regions", d->regions, k, n, 1, 5, -1, (int64_t)d->nregion_names - 1);
    if (!rc) rc = dev_range("bytes", d->bytes, k, n, 1, 5, 0, INT64_MAX);
    const char *dims[] = {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"};
    const int64_t *dimv[] = {d->grid_x, d->grid_y, d->grid_z, d->block_x, d->block_y, d->block_z};
    for (int j = 0; !rc && j < 6; j++) rc = dev_range(dims[j], dimv[j], k, n, 1, 5, 0, UINT32_MAX);
    for (size_t i = 0; !rc && i < n; i++)
        if (d->ends_ns[i] < d->starts_ns[i])
            rc = sps__err_fail(SPS_EINVAL, "device: activity %zu ends before it starts", i);
    return rc;
}

/* The caller's device activity as the writers read it (the reader's
 * struct): the columns it may leave out 0 (regions -1), every row on the
 * process (ranks: its key), rows placed by tid.  The caller's arrays are
 * borrowed; those made here are owned (own). */
typedef struct dview {
    sps__h5r_device_t x;
    int64_t *own;
} dview_t;

static int dview_make(dview_t *v, const sps_device_t *d, int64_t rank_key) {
    memset(v, 0, sizeof *v);
    size_t n = d->n ? d->n : 1;
    if (!(v->own = calloc(3 * n, sizeof *v->own))) return SPS_ENOMEM;
    int64_t *zero = v->own, *minus = v->own + n, *ranks = v->own + 2 * n;
    for (size_t i = 0; i < d->n; i++) minus[i] = -1, ranks[i] = rank_key;
    sps__h5r_device_t *x = &v->x;
#define DV_COL(c, dflt) x->c = d->c ? (int64_t *)d->c : (dflt)
    x->present = 1;
    x->n = d->n;
    DV_COL(kinds, zero); DV_COL(names_idx, zero); DV_COL(devices, minus);
    DV_COL(contexts, zero); DV_COL(streams, zero); DV_COL(correlations, zero);
    DV_COL(starts_ns, zero); DV_COL(ends_ns, zero); DV_COL(bytes, zero);
    DV_COL(tids, minus); DV_COL(regions, minus); DV_COL(call_ids, minus);
    DV_COL(grid_x, zero); DV_COL(grid_y, zero); DV_COL(grid_z, zero);
    DV_COL(block_x, zero); DV_COL(block_y, zero); DV_COL(block_z, zero);
    DV_COL(copy_kinds, zero); DV_COL(src_kinds, zero); DV_COL(dst_kinds, zero);
#undef DV_COL
    x->cbids = (int64_t *)sps_device_cbids(d); /* NULL: a caller's struct, or none */
    x->ranks = ranks;
    x->threads = minus; /* not read: placed by tid */
    x->nnames = d->nnames;
    x->names = (char **)d->names;
    x->nregion_names = d->nregion_names;
    x->region_names = (char **)d->region_names;
    return 0;
}

/* Writes to tmp, as a JSON (gz: compressed) or Perfetto file: the spans
 * (JSON: with their args), the samples (placed: NULL for none), the
 * device activity (dev: NULL for none), the extra members (JSON). */
static int write_file(const char *tmp, sps__tl_format_t fmt, const sps__tl_header_t *h,
                      const sps_timeline_t *t, const sps__tl_samples_t *placed,
                      sps__tl_device_t *dev) {
    sps__tlw_t *w = NULL;
    sps__cjw_t *cj = NULL;
    int rc = fmt == SPS__TL_PFTRACE ? sps__tlw_open(&w, tmp, fmt, h)
                                    : sps__cjw_open(&cj, tmp, fmt == SPS__TL_JSON_GZ, h);
    if (rc) return rc;
    if (dev && dev->nplaced &&
        (rc = cj ? sps__cjw_device(cj, dev) : sps__tlw_device(w, dev)) == SPS_EINVAL)
        sps__err_fail(rc, "device: an activity's time is too far from the timeline's base_ns");
    for (size_t i = 0; !rc && i < t->nspans; i++) {
        const sps_span_t *s = &t->spans[i];
        sps__tl_span_t x = {s->region, s->thread, s->start_ns, s->end_ns, 0};
        rc = cj ? sps__cjw_span_args(cj, &x, t->args ? t->args[i] : NULL)
                : sps__tlw_span(w, &x);
    }
    if (!rc && placed && placed->nplaced &&
        (rc = cj ? sps__cjw_samples(cj, placed) : sps__tlw_samples(w, placed)) == SPS_EINVAL)
        sps__err_fail(rc, "samples: a sample's time is too far from the timeline's base_ns");
    if (!rc && cj && t->extra) rc = sps__cjw_extra(cj, t->extra);
    if (rc) {
        if (cj) sps__cjw_abort(cj);
        else sps__tlw_abort(w);
        return rc;
    }
    return cj ? sps__cjw_close(cj) : sps__tlw_close(w);
}

int sps_timeline_write_device(const char *path, const sps_timeline_t *t,
                              const sps_samples_t *samples, const sps_device_t *device) {
    sps__err_clear(); /* a cause noted below is this call's */
    if (!path || !t) return sps__err_fail(SPS_EINVAL, "timeline: no path or timeline given");
    sps__tl_format_t fmt = sps__tl_format_of(path);
    if (fmt != SPS__TL_JSON && fmt != SPS__TL_JSON_GZ && fmt != SPS__TL_PFTRACE)
        return sps__err_fail(SPS_EINVAL, "%s: unknown format (use .json, .json.gz or "
                             ".pftrace)", path);
    int rc = check_timeline(t);
    if (!rc && samples) rc = check_samples(samples);
    if (!rc && device) rc = check_device(device);
    if (rc) return rc;
    sps__tl_thread_t *th = calloc(t->nthreads + 1, sizeof *th);
    sps__tl_counter_t *cnt = calloc(t->ncounters + 1, sizeof *cnt);
    char *tmp = sps__tmp_name(path, NULL);
    view_t v;
    memset(&v, 0, sizeof v);
    sps__tl_samples_t placed;
    memset(&placed, 0, sizeof placed);
    dview_t dv;
    memset(&dv, 0, sizeof dv);
    sps__tl_device_t dpl;
    memset(&dpl, 0, sizeof dpl);
    if (!th || !tmp || !cnt) {
        rc = SPS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < t->ncounters; i++)
        cnt[i] = (sps__tl_counter_t){t->counters[i].counter, 0, t->counters[i].t_ns,
                                     t->counters[i].value};
    int64_t pid = t->pid > 0 ? t->pid : (int64_t)getpid();
    for (size_t i = 0; i < t->nthreads; i++)
        th[i] = (sps__tl_thread_t){pid, t->thread_ids[i],
                                   t->thread_names && t->thread_names[i] ? t->thread_names[i] : ""};
    char pname[32];
    snprintf(pname, sizeof pname, "rank %lld", (long long)t->rank);
    sps__tl_proc_t proc = {pid, t->rank >= 0 ? t->rank : -1,
                           t->process_name ? t->process_name : t->rank >= 0 ? pname : "spanscope"};
    sps__tl_header_t h;
    memset(&h, 0, sizeof h);
    h.nnames = t->nnames;
    h.names = t->names;
    h.nprocs = 1;
    h.procs = &proc;
    h.nthreads = t->nthreads;
    h.threads = th;
    h.base_ns = t->base_ns;
    h.trace_name = t->trace_name;
    h.rank = t->rank >= 0 ? t->rank : -1;
    h.world_size = t->world_size;
    h.nspans = t->nspans;
    h.wall_anchor_ns = t->wall_anchor_ns;
    h.mono_anchor_ns = t->mono_anchor_ns;
    h.hostname = t->hostname;
    h.ncounters = t->ncounters;
    h.counters = cnt;
    h.backend = t->backend;
    h.kineto = 1; /* the torch face's traces, for torch's tools: chrome_json.c */
    if (samples && samples->n) {
        if ((rc = view_make(&v, samples)) || (rc = place_by_tid(&placed, &v.x, &h, fmt == SPS__TL_PFTRACE)))
            goto out;
        h.threads = placed.threads; /* the timeline's threads, then the samples' own */
        h.nthreads = placed.nthreads;
    }
    if (device && device->n) {
        if ((rc = dview_make(&dv, device, proc.rank >= 0 ? proc.rank : pid)) ||
            (rc = sps__tl_device_place_by_tid(&dpl, &dv.x, &h)))
            goto out;
        h.threads = dpl.threads; /* ... then the CUDA API calls' own */
        h.nthreads = dpl.nthreads;
    }
    rc = write_file(tmp, fmt, &h, t, samples && samples->n ? &placed : NULL,
                    device && device->n ? &dpl : NULL);
    if (!rc && rename(tmp, path) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EPATH;
    }
    if (rc) unlink(tmp); /* no partial output, no temporary file */
    /* the cause and the output's name (sps_last_error), not the temporary's */
    if ((rc == SPS_EIO || rc == SPS_EPATH) && sps__err_os()) sps__err_os_fail(rc, "writing", path);
out:
    sps__tl_device_free(&dpl);
    free(dv.own);
    sps__tl_samples_free(&placed);
    view_free(&v);
    free(th);
    free(tmp);
    free(cnt);
    return rc;
}

/* The spans and samples: sps_timeline_write_device without device
 * activity. */
int sps_timeline_write_samples(const char *path, const sps_timeline_t *t,
                               const sps_samples_t *samples) {
    return sps_timeline_write_device(path, t, samples, NULL);
}

/* The spans alone: sps_timeline_write_samples without samples (one writer
 * of caller-held timelines). */
int sps_timeline_write(const char *path, const sps_timeline_t *t) {
    return sps_timeline_write_samples(path, t, NULL);
}
