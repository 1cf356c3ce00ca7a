/* heap.c -- the binary min-heap of (key, index) pairs (util.h). */
#include "util/util.h"

#include <stdlib.h>

void sps__heap_init(sps__heap_t *h, sps__heap_tie_fn tie, void *ctx) {
    *h = (sps__heap_t){NULL, 0, 0, tie, ctx};
}

int sps__heap_reserve(sps__heap_t *h, size_t cap) {
    if (cap <= h->cap) return 0;
    if (cap > SIZE_MAX / sizeof *h->v) return -1;
    sps__heap_ent_t *v = realloc(h->v, cap * sizeof *v);
    if (!v) return -1;
    h->v = v;
    h->cap = cap;
    return 0;
}

void sps__heap_free(sps__heap_t *h) {
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

/* 1 when a goes before b: smaller key, then the tie-breaker, then the
 * smaller index.  Inlined into both sifts, so the common case (keys
 * differ) costs one compare and no call. */
static inline int before(const sps__heap_t *h, const sps__heap_ent_t *a,
                         const sps__heap_ent_t *b) {
    if (a->key != b->key) return a->key < b->key;
    if (h->tie) {
        int c = h->tie(h->ctx, a->idx, b->idx);
        if (c) return c < 0;
    }
    return a->idx < b->idx;
}

/* Moves entry x, meant for slot i, down to its place. */
static void sift_down(sps__heap_t *h, size_t i, sps__heap_ent_t x) {
    sps__heap_ent_t *v = h->v;
    size_t n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(h, &v[c + 1], &v[c])) c++;
        if (!before(h, &v[c], &x)) break;
        v[i] = v[c];
        i = c;
    }
    v[i] = x;
}

/* Moves entry x, meant for slot i, up to its place. */
static void sift_up(sps__heap_t *h, size_t i, sps__heap_ent_t x) {
    sps__heap_ent_t *v = h->v;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(h, &x, &v[p])) break;
        v[i] = v[p];
        i = p;
    }
    v[i] = x;
}

int sps__heap_push(sps__heap_t *h, uint64_t key, uint32_t idx) {
    if (h->n == h->cap && sps__heap_reserve(h, h->cap ? h->cap * 2 : 16))
        return -1;
    sift_up(h, h->n++, (sps__heap_ent_t){key, idx});
    return 0;
}

void sps__heap_pop(sps__heap_t *h) {
    sps__heap_ent_t last = h->v[--h->n];
    if (h->n) sift_down(h, 0, last);
}

void sps__heap_sift_top(sps__heap_t *h) { sift_down(h, 0, h->v[0]); }
