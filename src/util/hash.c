/* hash.c -- the string hash and the open-addressing index (util.h). */
#include "util/util.h"

#include <stdlib.h>

uint64_t sps__hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return sps__hash_u64(h);
}

/* Rebuilds t with cap slots (a power of two, room for its items). */
static int rehash(sps__htab_t *t, size_t cap) {
    /* digests are 32 bits: beyond 2^32 slots they no longer place items */
    if ((uint64_t)cap > ((uint64_t)1 << 32) || cap > SIZE_MAX / sizeof *t->slot)
        return -1;
    sps__hslot_t *s = calloc(cap, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slot[i].idx1) continue;
        size_t j = t->slot[i].digest & (cap - 1);
        while (s[j].idx1) j = (j + 1) & (cap - 1);
        s[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = s;
    t->cap = cap;
    return 0;
}

int sps__htab_reserve(sps__htab_t *t, size_t n) {
    size_t cap = t->cap ? t->cap : 64;
    while (n > cap / 2) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    return cap == t->cap ? 0 : rehash(t, cap);
}

int sps__htab_grow_probe(sps__htab_t *t, sps__hprobe_t *p) {
    if (t->n == SIZE_MAX || sps__htab_reserve(t, t->n + 1)) return -1;
    /* walk the grown table to the first empty slot: nothing on the way is
     * equal to the item (the probe before the growth said so) */
    size_t mask = t->cap - 1, i = p->digest & mask;
    while (t->slot[i].idx1) i = (i + 1) & mask;
    p->i = i;
    return 0;
}

void sps__htab_free(sps__htab_t *t) {
    free(t->slot);
    t->slot = NULL;
    t->cap = t->n = 0;
}
