/* hash.c -- the string hash and the open-addressing index (util.h). */
#include "util/util.h"

#include <stdlib.h>

uint64_t sps__hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return sps__hash_u64(h);
}

int sps__htab_grow(sps__htab_t *t) {
    size_t cap = t->cap ? t->cap * 2 : 64;
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

void sps__htab_free(sps__htab_t *t) {
    free(t->slot);
    t->slot = NULL;
    t->cap = t->n = 0;
}
