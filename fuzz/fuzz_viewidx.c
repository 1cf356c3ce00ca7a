/* fuzz_viewidx.c -- libFuzzer target: the viewer's index reader
 * (formats/viewidx.c) on hostile index files.  The input is opened as an
 * index (without the source check), and every lane is queried the ways
 * the view object does: each level scanned over the whole range and over
 * a window inside it, the window sums, lane lookups, counter samples and
 * counter columns (from the levels and from the samples), and on the
 * device lanes each activity's record and what its launching span
 * launched.
 * Traps when the reader hands out an entry naming no name or call path
 * (the view indexes arrays with them). */
#include "fuzz_util.h"
#include "formats/viewidx.h"

#include <stdlib.h>

typedef struct fz {
    const sps__vix_info_t *in;
    sps__vix_t *x;
    uint32_t level, thread, depth;
    uint64_t n;
} fz_t;

/* A device record as the view hands it out: names and lanes in range. */
static void check_dev(const sps__vix_info_t *in, const sps__vix_dev_t *d) {
    if (d->name >= in->nnames || d->thread >= in->nthreads) __builtin_trap();
    if (d->lthread != UINT32_MAX && (d->lthread >= in->nthreads || d->lname >= in->nnames))
        __builtin_trap();
    if (d->api_name != UINT32_MAX && d->api_name >= in->nnames) __builtin_trap();
    if (d->api_thread != UINT32_MAX && d->api_thread >= in->nthreads) __builtin_trap();
}

/* A device lane's entry (level 0): its record, and what its launching
 * span launched, as the page asks for them (/api/span). */
static void query_dev(fz_t *f, const sps__vix_ent_t *e) {
    sps__vix_dev_t d, out[8];
    if (sps__vix_dev_at(f->x, f->thread, f->depth, e->start, &d) != 0) return;
    check_dev(f->in, &d);
    if (d.lthread == UINT32_MAX) return;
    uint64_t total = 0;
    long k = sps__vix_dev_launched(f->x, d.lthread, d.ldepth, d.lstart, out, 8, &total);
    for (long i = 0; i < k; i++) check_dev(f->in, &out[i]);
}

static int check_ent(void *ctx, const sps__vix_ent_t *e) {
    fz_t *f = ctx;
    if (e->name >= f->in->nnames) __builtin_trap();
    if (f->level == 0 && (e->path >= f->in->npaths || f->in->paths[e->path].name != e->name))
        __builtin_trap();
    if (e->dur < 0) __builtin_trap();
    if (f->level == 0 && f->thread >= f->in->dev_thread0 && f->n < 200) query_dev(f, e);
    return ++f->n > 100000; /* enough of one lane */
}

typedef struct fzc {
    uint64_t n, px;
    int64_t prev;
} fzc_t;

/* A counter column: min <= last <= max (so finite), at most px of them,
 * in time order. */
static int check_point(void *ctx, const sps__vix_cpoint_t *p) {
    fzc_t *c = ctx;
    if (!(p->min <= p->last && p->last <= p->max)) __builtin_trap();
    if (++c->n > c->px || (c->n > 1 && p->t <= c->prev)) __builtin_trap();
    c->prev = p->t;
    return 0;
}

/* libFuzzer's entry point: reads data as an index file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    sps__vix_t *x;
    if (sps__vix_open(&x, path, NULL) != 0) {
        (void)strlen(sps__err_msg());
        close(fd);
        return 0;
    }
    const sps__vix_info_t *in = sps__vix_info(x);
    sps__vix_sum_t *sums = calloc(in->npaths ? in->npaths : 1, sizeof *sums);
    uint8_t *on = calloc(in->npaths ? in->npaths : 1, 1);
    for (size_t p = 0; p < in->npaths; p += 2) on[p] = 1;
    int64_t mid = in->t_min + (in->t_max - in->t_min) / 2;
    for (size_t l = 0; sums && on && l < in->nlanes && l < 64; l++) {
        uint32_t th, d, nl;
        sps__vix_lane(x, l, &th, &d, &nl);
        if (th >= in->nthreads || nl < 1 || nl > in->nlevels) __builtin_trap();
        if (sps__vix_lane_find(x, th, d) != (int64_t)l) __builtin_trap();
        for (uint32_t k = 0; k < nl; k++) {
            fz_t f = {in, x, k, th, d, 0};
            (void)sps__vix_scan(x, l, k, INT64_MIN, INT64_MAX, NULL, check_ent, &f);
            f.n = 0;
            (void)sps__vix_scan(x, l, k, mid, mid + 1000, k ? NULL : on, check_ent, &f);
        }
        (void)sps__vix_window(x, l, INT64_MIN, INT64_MAX, sums);
        (void)sps__vix_window(x, l, mid, in->t_max, sums);
    }
    for (size_t s = 0; s < in->nseries; s++) {
        uint64_t i = sps__vix_sample_lb(x, s, mid);
        if (i > in->series[s].n) __builtin_trap();
        if (i < in->series[s].n) {
            int64_t t;
            double v;
            (void)sps__vix_sample(x, s, i, &t, &v);
        }
        /* the counter columns, from the levels and from the samples */
        for (uint32_t px = 1; px <= 4096; px *= 64)
            for (int lv = 0; lv < 2; lv++) {
                fzc_t c = {0, px, INT64_MIN};
                (void)sps__vix_counter_cols(x, s, in->t_min, in->t_max + 1, px, lv, check_point, &c, NULL);
                c.n = 0;
                (void)sps__vix_counter_cols(x, s, mid - 1000, mid + 1000000, px, lv, check_point, &c, NULL);
            }
    }
    free(sums);
    free(on);
    sps__vix_close(x);
    close(fd);
    return 0;
}
