/* samples.c -- a finalize's stack samples (the sampler: src/ext/sampler.c,
 * reached through sps__sample_ops): taken with the period under the
 * session lock, put in the merged pass's order, attributed by it (each to
 * the innermost span open on its thread at its time: model/pass.h),
 * written as /samples, and the deferred ones given back.
 * docs/sampling.md. */
#include "api/api.h"
#include "formats/h5_read.h"

#include <stdlib.h>
#include <string.h>

void sps__samples_take(sps__snap_t *s) {
    const sps__sample_ops_t *ops = sps__sample_ops;
    if (!ops || s->aggregate) return;
    /* the period ends at its last anchor (finalize's analysis just added
     * it): a later sample is the next period's */
    uint64_t upto = sps__g.tm.n ? sps__g.tm.a[sps__g.tm.n - 1].ticks : UINT64_MAX;
    sps__sample_t *v = NULL;
    size_t n = 0;
    int hz = 0;
    uint64_t lost = 0;
    if (ops->take(upto, &v, &n, &hz, &lost)) return; /* nothing moved: next time */
    if (hz) s->sample_hz = hz;
    s->samples_lost += lost;
    if (!n) return;
    if (!s->nsamples) {
        free(s->samples);
        s->samples = v;
        s->nsamples = n;
        return;
    }
    sps__sample_t *all = realloc(s->samples, (s->nsamples + n) * sizeof *all);
    if (!all) {
        ops->put_back(v, n);
        free(v);
        return;
    }
    memcpy(all + s->nsamples, v, n * sizeof *v);
    s->samples = all;
    s->nsamples += n;
    free(v);
}

static int by_thread_time(const void *a, const void *b) {
    const sps__sample_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->ns != y->ns) return x->ns < y->ns ? -1 : 1;
    return (x->stack > y->stack) - (x->stack < y->stack);
}

void sps__samples_prepare(sps__snap_t *s) {
    for (size_t i = 0; i < s->nsamples; i++) {
        sps__sample_t *x = &s->samples[i];
        x->ns = sps__timemap_ns(&s->tm, x->ticks);
        x->thread = UINT32_MAX;
        for (uint32_t t = 0; t < s->nthreads; t++)
            if (s->threads[t].native_id == x->tid) x->thread = t;
        x->call_id = -1;
        x->region = 0;
        x->flags = 0;
    }
    if (s->nsamples > 1) qsort(s->samples, s->nsamples, sizeof *s->samples, by_thread_time);
}

/* The file's stack table: the sampler's ids in order of first use, as
 * 0-based indexes into ids (*ids malloc'd).  Returns the index of each
 * sample's stack in *idx.  0 or SPS_ENOMEM. */
static int stack_table(const sps__sample_t *v, size_t n, uint32_t **ids, size_t *nids,
                       int64_t *idx) {
    sps__htab_t t = {0};
    uint32_t *u = malloc((n ? n : 1) * sizeof *u);
    size_t k = 0;
    int rc = u ? 0 : SPS_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        uint32_t id = v[i].stack;
        sps__hprobe_t p = sps__htab_probe(&t, sps__hash_pair(id, 0));
        int64_t at = -1;
        for (uint32_t j; at < 0 && sps__htab_next(&t, &p, &j);)
            if (u[j] == id) at = j;
        if (at < 0) {
            if (sps__htab_make_room(&t, &p)) {
                rc = SPS_ENOMEM;
                break;
            }
            sps__htab_put(&t, &p, (uint32_t)k);
            u[k] = id;
            at = (int64_t)k++;
        }
        idx[i] = at;
    }
    sps__htab_free(&t);
    if (rc) free(u);
    *ids = rc ? NULL : u;
    *nids = rc ? 0 : k;
    return rc;
}

int sps__samples_write(const sps__snap_t *s, const char *tmp, const uint32_t *file_region,
                       const sps__row_t *rows, int64_t first_call_id) {
    const sps__sample_ops_t *ops = sps__sample_ops;
    size_t n = 0; /* the deferred are written with a later period */
    for (size_t i = 0; i < s->nsamples; i++) n += !(s->samples[i].flags & SPS__SMP_DEFER);
    if (!ops || (!n && !s->sample_hz && !s->samples_lost)) return 0;
    int64_t *col = malloc((8 * n + 1) * sizeof *col);
    sps__sample_t *v = malloc((n + 1) * sizeof *v);
    if (!col || !v) {
        free(col), free(v);
        return SPS_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < s->nsamples; i++)
        if (!(s->samples[i].flags & SPS__SMP_DEFER)) v[k++] = s->samples[i];
    int64_t *t = col, *th = col + n, *tid = col + 2 * n, *rk = col + 3 * n, *rg = col + 4 * n,
            *cid = col + 5 * n, *st = col + 6 * n, *wt = col + 7 * n;
    uint32_t nregs = sps__registry_count();
    for (size_t i = 0; i < n; i++) {
        t[i] = v[i].ns;
        th[i] = v[i].thread == UINT32_MAX ? -1 : (int64_t)v[i].thread;
        tid[i] = v[i].tid;
        wt[i] = v[i].weight ? v[i].weight : 1;
        rk[i] = s->rank;
        uint32_t fr = v[i].region && v[i].region < nregs ? file_region[v[i].region] : UINT32_MAX;
        rg[i] = fr == UINT32_MAX ? -1 : (int64_t)rows[fr].file_region;
        cid[i] = v[i].call_id >= 0 && rg[i] >= 0 ? first_call_id + v[i].call_id : -1;
    }
    uint32_t *ids = NULL;
    size_t nids = 0;
    sps__sframes_t fr = {0};
    int rc = stack_table(v, n, &ids, &nids, st);
    if (!rc) rc = ops->describe(ids, nids, &fr);
    int64_t *off = NULL, *frames = NULL;
    if (!rc) {
        size_t nf = fr.offsets ? fr.offsets[nids] : 0;
        off = malloc((nids + 1) * sizeof *off);
        frames = malloc((nf + 1) * sizeof *frames);
        if (!off || !frames) rc = SPS_ENOMEM;
        for (size_t i = 0; !rc && i <= nids; i++) off[i] = (int64_t)fr.offsets[i];
        for (size_t i = 0; !rc && i < nf; i++) frames[i] = fr.frame_of[i];
    }
    if (!rc) {
        sps__h5_samples_t x = {
            n, t, th, tid, rk, rg, cid, st, wt, nids, off, frames, fr.nframes,
            (const char *const *)fr.function, (const char *const *)fr.file,
            (const char *const *)fr.module, fr.line, fr.kind, fr.address,
            s->sample_hz, (int64_t)s->samples_lost};
        rc = sps__h5_add_samples(tmp, &x);
    }
    ops->sframes_free(&fr);
    free(off), free(frames), free(ids), free(col), free(v);
    return rc;
}

void sps__samples_defer(const sps__snap_t *s) {
    const sps__sample_ops_t *ops = sps__sample_ops;
    if (!ops) return;
    size_t n = 0;
    for (size_t i = 0; i < s->nsamples; i++) n += (s->samples[i].flags & SPS__SMP_DEFER) != 0;
    if (!n) return;
    sps__sample_t *v = malloc(n * sizeof *v);
    if (!v) return; /* lost: the sampler counts none of them, the file's lost does not either */
    size_t k = 0;
    for (size_t i = 0; i < s->nsamples; i++)
        if (s->samples[i].flags & SPS__SMP_DEFER) v[k++] = s->samples[i];
    ops->put_back(v, n);
    free(v);
}

int sps_samples_read(const char *path, sps_samples_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    if (!path) return SPS_EINVAL;
    sps__h5r_samples_t *x = calloc(1, sizeof *x);
    if (!x) return SPS_ENOMEM;
    int rc = sps__h5r_samples(path, x);
    if (rc) {
        free(x);
        return rc;
    }
    *out = (sps_samples_t){x->n, x->times_ns, x->threads, x->tids, x->ranks, x->regions,
                           x->call_ids, x->stacks, x->weights, x->nstacks, x->stack_offsets,
                           x->stack_frames, x->nframes, (const char *const *)x->functions,
                           (const char *const *)x->files, (const char *const *)x->modules,
                           x->lines, x->kinds, x->addresses, x->nnames,
                           (const char *const *)x->names, x->hz, x->lost, x};
    return 0;
}

void sps_samples_free(sps_samples_t *s) {
    if (!s) return;
    sps__h5r_samples_free(s->impl_);
    free(s->impl_);
    memset(s, 0, sizeof *s);
}
