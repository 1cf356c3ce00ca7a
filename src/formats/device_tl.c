/* device_tl.c -- an .h5's device activity (/device: sps__h5r_device)
 * placed on a timeline header for the trace writers (export.h, "Device
 * activity on a timeline"): the launching thread's row (as the samples'
 * are placed, export_sel.c), the launching region among the header's
 * names, a GPU process per (host process, device), each device row's API
 * row by correlation, and the launching span claimed while the spans
 * stream by.  Memory: O(activities + header names). */
#include "formats/export.h"
#include "formats/h5_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The header process of rank (as sps__tl_samples_place finds it): the one
 * whose rank it is, else the one without a rank whose pid it is; -1 none. */
static int64_t dev_rank_proc(const sps__tl_header_t *h, int64_t rank) {
    for (size_t p = 0; p < h->nprocs; p++)
        if (h->procs[p].rank == rank) return (int64_t)p;
    for (size_t p = 0; p < h->nprocs; p++)
        if (h->procs[p].rank < 0 && h->procs[p].pid == rank) return (int64_t)p;
    return -1;
}

static int64_t dev_thread_at(const sps__tl_device_t *d, size_t n, int64_t pid, int64_t tid) {
    for (size_t t = 0; t < n; t++)
        if (d->threads[t].pid == pid && d->threads[t].tid == tid) return (int64_t)t;
    return -1;
}

/* The row of activity i's launching thread on process pid: the header's,
 * else an added one (found or made; *cap its room).  -1 on ENOMEM. */
static int64_t dev_thread(sps__tl_device_t *d, size_t nh, size_t *cap, size_t i, int64_t pid,
                          int by_tid) {
    const sps__h5r_device_t *x = d->x;
    int64_t t = by_tid ? dev_thread_at(d, nh, pid, x->tids[i])
                : x->threads[i] >= 0 ? dev_thread_at(d, nh, pid, x->threads[i]) : -1;
    if (t >= 0) return t;
    char want[48];
    snprintf(want, sizeof want, "thread %lld (CUDA)", (long long)x->tids[i]);
    for (size_t a = 0; a < d->nadded; a++)
        if (d->threads[nh + a].pid == pid && !strcmp(d->label[a], want)) return (int64_t)(nh + a);
    if (nh + d->nadded + 1 > *cap) {
        size_t nc = *cap * 2 + 8;
        sps__tl_thread_t *th = realloc(d->threads, nc * sizeof *th);
        if (!th) return -1;
        d->threads = th;
        char (*lb)[48] = realloc(d->label, nc * sizeof *lb);
        if (!lb) return -1;
        d->label = lb;
        for (size_t a = 0; a < d->nadded; a++) d->threads[nh + a].name = d->label[a];
        *cap = nc;
    }
    int64_t tid = !by_tid && x->threads[i] >= 0 ? x->threads[i] : x->tids[i];
    if (tid < 0 || tid > INT32_MAX || dev_thread_at(d, nh + d->nadded, pid, tid) >= 0) {
        int64_t hi = -1; /* taken (or no int32): past the process's highest */
        for (size_t k = 0; k < nh + d->nadded; k++)
            if (d->threads[k].pid == pid && d->threads[k].tid > hi) hi = d->threads[k].tid;
        tid = hi >= 0 && hi < INT32_MAX ? hi + 1 : 0;
        while (dev_thread_at(d, nh + d->nadded, pid, tid) >= 0) tid++;
    }
    size_t a = d->nadded++;
    memcpy(d->label[a], want, sizeof want);
    d->threads[nh + a] = (sps__tl_thread_t){pid, tid, d->label[a]};
    return (int64_t)(nh + a);
}

/* Names gp "GPU N", or "GPU N (HOST)" with host (cut to whole characters). */
static void gpu_name(sps__tl_gpu_t *gp, const char *host) {
    if (!host) {
        snprintf(gp->name, sizeof gp->name, "GPU %lld", (long long)gp->device);
        return;
    }
    char hn[40];
    size_t len = strnlen(host, sizeof hn - 1);
    if (host[len]) len = sps__utf8_cut(host, len);
    memcpy(hn, host, len);
    hn[len] = 0;
    snprintf(gp->name, sizeof gp->name, "GPU %lld (%s)", (long long)gp->device, hn);
}

/* The GPU of (host process p, device dev), made on first use.  -1 on
 * ENOMEM, -2 when the pid would not fit an int32. */
static int64_t dev_gpu(sps__tl_device_t *d, const sps__tl_header_t *h, size_t p, int64_t dev) {
    for (size_t g = 0; g < d->ngpus; g++)
        if (d->gpus[g].host_proc == p && d->gpus[g].device == dev) return (int64_t)g;
    if ((int64_t)p >= ((int64_t)INT32_MAX - SPS__TL_GPU_PID0) / 4096 - 1) return -2;
    sps__tl_gpu_t *v = realloc(d->gpus, (d->ngpus + 1) * sizeof *v);
    if (!v) return -1;
    d->gpus = v;
    sps__tl_gpu_t *gp = &v[d->ngpus];
    gp->pid = SPS__TL_GPU_PID0 + (int64_t)p * 4096 + dev;
    gp->device = dev;
    gp->host_proc = (uint32_t)p;
    gpu_name(gp, h->nprocs > 1 ? h->procs[p].name && *h->procs[p].name ? h->procs[p].name
                                                                        : "host"
                               : NULL);
    return (int64_t)d->ngpus++;
}

/* The header name index of each region name of x (UINT32_MAX where the
 * header lacks it), into map[x->nregion_names].  0 or SPS_ENOMEM. */
static int dev_region_map(const sps__h5r_device_t *x, const sps__tl_header_t *h,
                          uint32_t *map) {
    sps__htab_t t = {0};
    int rc = 0;
    for (size_t k = 0; k < h->nnames && !rc; k++) {
        const char *s = h->names[k] ? h->names[k] : "";
        sps__hprobe_t p = sps__htab_probe(&t, sps__hash_bytes(s, strlen(s)));
        int dup = 0;
        for (uint32_t j; !dup && sps__htab_next(&t, &p, &j);)
            dup = !strcmp(h->names[j] ? h->names[j] : "", s);
        if (dup) continue; /* the first of equal names */
        if (sps__htab_make_room(&t, &p)) rc = SPS_ENOMEM;
        else sps__htab_put(&t, &p, (uint32_t)k);
    }
    for (size_t r = 0; r < x->nregion_names && !rc; r++) {
        const char *s = x->region_names[r] ? x->region_names[r] : "";
        sps__hprobe_t p = sps__htab_probe(&t, sps__hash_bytes(s, strlen(s)));
        map[r] = UINT32_MAX;
        for (uint32_t j; map[r] == UINT32_MAX && sps__htab_next(&t, &p, &j);)
            if (!strcmp(h->names[j] ? h->names[j] : "", s)) map[r] = j;
    }
    sps__htab_free(&t);
    return rc;
}

/* A placed row's key for the launching-span search. */
typedef struct okey {
    uint32_t thread, name;
    int64_t launch;
    uint32_t row;
} okey_t;

static int by_launch(const void *a, const void *b) {
    const okey_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->launch != y->launch) return x->launch < y->launch ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* d->order: the placed rows with a name, by (thread, name, launch).  0 or
 * SPS_ENOMEM. */
static int dev_order(sps__tl_device_t *d) {
    const sps__h5r_device_t *x = d->x;
    d->norder = 0;
    for (size_t i = 0; i < x->n; i++)
        if (d->thread[i] != UINT32_MAX && d->name[i] != UINT32_MAX)
            d->order[d->norder++] = (uint32_t)i;
    okey_t *k = malloc((d->norder + 1) * sizeof *k);
    if (!k) return SPS_ENOMEM;
    for (size_t j = 0; j < d->norder; j++) {
        uint32_t i = d->order[j];
        k[j] = (okey_t){d->thread[i], d->name[i], d->launch[i], i};
    }
    qsort(k, d->norder, sizeof *k, by_launch);
    for (size_t j = 0; j < d->norder; j++) d->order[j] = k[j].row;
    free(k);
    return 0;
}

typedef struct corr {
    int64_t rank, corr;
    uint32_t row;
} corr_t;

static int by_corr(const void *a, const void *b) {
    const corr_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Each device row's API row: the API row of its rank with its
 * correlation (the first such), into d->api. */
static int dev_link_api(sps__tl_device_t *d) {
    const sps__h5r_device_t *x = d->x;
    corr_t *c = malloc((x->n + 1) * sizeof *c);
    if (!c) return SPS_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->kinds[i] >= SPS__DEV_RUNTIME)
            c[m++] = (corr_t){x->ranks[i], x->correlations[i], (uint32_t)i};
    qsort(c, m, sizeof *c, by_corr);
    for (size_t i = 0; i < x->n; i++) {
        d->api[i] = -1;
        if (x->kinds[i] >= SPS__DEV_RUNTIME || !m) continue;
        corr_t key = {x->ranks[i], x->correlations[i], 0};
        size_t lo = 0, hi = m;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (by_corr(&c[mid], &key) < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < m && c[lo].rank == key.rank && c[lo].corr == key.corr) d->api[i] = c[lo].row;
    }
    free(c);
    return 0;
}

void sps__tl_device_free(sps__tl_device_t *d) {
    if (!d) return;
    free(d->thread), free(d->name), free(d->gpu), free(d->launch), free(d->api);
    free(d->ext), free(d->order), free(d->gpus), free(d->threads), free(d->label);
    memset(d, 0, sizeof *d);
}

static int place(sps__tl_device_t *d, const sps__h5r_device_t *x, const sps__tl_header_t *h,
                 int by_tid) {
    memset(d, 0, sizeof *d);
    d->x = x;
    size_t n = x->n, cap = h->nthreads + 8;
    d->threads = malloc(cap * sizeof *d->threads);
    d->label = malloc(cap * sizeof *d->label);
    d->thread = malloc((n + 1) * sizeof *d->thread);
    d->name = malloc((n + 1) * sizeof *d->name);
    d->gpu = malloc((n + 1) * sizeof *d->gpu);
    d->launch = malloc((n + 1) * sizeof *d->launch);
    d->api = malloc((n + 1) * sizeof *d->api);
    d->ext = calloc(n + 1, sizeof *d->ext);
    d->order = malloc((n + 1) * sizeof *d->order);
    uint32_t *map = malloc((x->nregion_names + 1) * sizeof *map);
    int rc = d->threads && d->label && d->thread && d->name && d->gpu && d->launch &&
             d->api && d->ext && d->order && map ? 0 : SPS_ENOMEM;
    if (!rc && h->nthreads) memcpy(d->threads, h->threads, h->nthreads * sizeof *d->threads);
    if (!rc) rc = dev_region_map(x, h, map);
    if (!rc) rc = dev_link_api(d);
    /* rows come in runs of one thread: the last answer mostly holds */
    int64_t lpid = INT64_MIN, lth = 0, ltid = 0, lt = -1;
    for (size_t i = 0; !rc && i < n; i++) {
        d->thread[i] = d->name[i] = d->gpu[i] = UINT32_MAX;
        int64_t p = dev_rank_proc(h, x->ranks[i]);
        if (p < 0) continue; /* a rank this timeline leaves out */
        int64_t a = x->kinds[i] >= SPS__DEV_RUNTIME ? (int64_t)i : d->api[i];
        d->launch[i] = a >= 0 ? x->starts_ns[a] : x->starts_ns[i];
        /* the launching thread and region: the API row's where there is one */
        size_t src = a >= 0 ? (size_t)a : i;
        int64_t pid = h->procs[p].pid, t = lt;
        if (pid != lpid || x->threads[src] != lth || x->tids[src] != ltid) {
            t = lt = dev_thread(d, h->nthreads, &cap, src, pid, by_tid);
            lpid = pid, lth = x->threads[src], ltid = x->tids[src];
        }
        if (t < 0) rc = SPS_ENOMEM;
        else d->thread[i] = (uint32_t)t;
        int64_t rg = x->regions[i] >= 0 ? x->regions[i] : x->regions[src];
        if (rg >= 0) d->name[i] = map[rg];
        if (!rc && x->kinds[i] <= SPS__DEV_MEMSET) {
            int64_t g = dev_gpu(d, h, (size_t)p, x->devices[i]);
            if (g == -1) rc = SPS_ENOMEM;
            else if (g == -2) d->thread[i] = UINT32_MAX; /* no pid left for it */
            else d->gpu[i] = (uint32_t)g;
        }
        if (!rc && d->thread[i] != UINT32_MAX) d->nplaced++;
    }
    free(map);
    if (rc) {
        sps__tl_device_free(d);
        return rc;
    }
    d->nthreads = h->nthreads + d->nadded;
    if (dev_order(d)) {
        sps__tl_device_free(d);
        return SPS_ENOMEM;
    }
    return 0;
}

int sps__tl_device_place(sps__tl_device_t *d, const sps__h5r_device_t *x,
                         const sps__tl_header_t *h) {
    return place(d, x, h, 0);
}

int sps__tl_device_place_by_tid(sps__tl_device_t *d, const sps__h5r_device_t *x,
                                const sps__tl_header_t *h) {
    return place(d, x, h, 1);
}

int sps__tl_device_remap(sps__tl_device_t *d, const uint32_t *thread_map, size_t nmap,
                         const uint32_t *name_map, size_t nnames, uint32_t proc,
                         const char *proc_name) {
    const sps__h5r_device_t *x = d->x;
    d->nplaced = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (d->thread[i] == UINT32_MAX) continue;
        d->thread[i] = d->thread[i] < nmap ? thread_map[d->thread[i]] : UINT32_MAX;
        if (d->name[i] != UINT32_MAX)
            d->name[i] = d->name[i] < nnames ? name_map[d->name[i]] : UINT32_MAX;
        int64_t a = x->kinds[i] >= SPS__DEV_RUNTIME ? (int64_t)i : d->api[i];
        d->launch[i] = a >= 0 ? x->starts_ns[a] : x->starts_ns[i]; /* times may be mapped */
        d->nplaced += d->thread[i] != UINT32_MAX;
    }
    for (size_t g = 0; g < d->ngpus; g++) {
        sps__tl_gpu_t *gp = &d->gpus[g];
        if ((int64_t)proc >= ((int64_t)INT32_MAX - SPS__TL_GPU_PID0) / 4096 - 1) {
            for (size_t i = 0; i < x->n; i++) /* no pid left for it */
                if (d->gpu[i] == g) d->thread[i] = UINT32_MAX;
            continue;
        }
        gp->pid = SPS__TL_GPU_PID0 + (int64_t)proc * 4096 + gp->device;
        gp->host_proc = proc;
        gpu_name(gp, proc_name);
    }
    return dev_order(d);
}

void sps__tl_device_claim(sps__tl_device_t *d, const sps__tl_span_t *s, uint64_t ext) {
    if (!d->norder) return;
    int64_t lo_t = s->start_ns, hi_t = s->end_ns;
    /* the launch is on the source's clock: the span's, less the shift */
    if (__builtin_sub_overflow(lo_t, d->shift_ns, &lo_t) ||
        __builtin_sub_overflow(hi_t, d->shift_ns, &hi_t))
        return;
    size_t lo = 0, hi = d->norder;
    while (lo < hi) { /* the first (thread, name, launch) >= (s's, lo_t) */
        size_t mid = (lo + hi) / 2;
        uint32_t i = d->order[mid];
        int less = d->thread[i] != s->thread ? d->thread[i] < s->thread
                   : d->name[i] != s->name ? d->name[i] < s->name
                                           : d->launch[i] < lo_t;
        if (less) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < d->norder; lo++) {
        uint32_t i = d->order[lo];
        if (d->thread[i] != s->thread || d->name[i] != s->name || d->launch[i] > hi_t) break;
        d->ext[i] = ext;
    }
}
