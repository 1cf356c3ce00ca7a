/* fuzz_viewidx.c -- libFuzzer target: the viewer's index reader
 * (formats/viewidx.c) on hostile index files.  The input is opened as an
 * index (without the source check), and every lane is queried the ways
 * the view object does: each level scanned over the whole range and over
 * a window inside it, the window sums, lane lookups, counter samples and
 * counter columns (from the levels and from the samples).
 * Traps when the reader hands out an entry naming no name or call path
 * (the view indexes arrays with them). */
#include "fuzz_util.h"
#include "formats/viewidx.h"

#include <stdlib.h>

typedef struct fz {
    const sps__vix_info_t *in;
    uint32_t level;
    uint64_t n;
} fz_t;

static int check_ent(void *ctx, const sps__vix_ent_t *e) {
    fz_t *f = ctx;
    if (e->name >= f->in->nnames) __builtin_trap();
    if (f->level == 0 && (e->path >= f->in->npaths || f->in->paths[e->path].name != e->name))
        __builtin_trap();
    if (e->dur < 0) __builtin_trap();
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
            fz_t f = {in, k, 0};
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
