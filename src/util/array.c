/* array.c -- growing arrays and byte buffers by doubling (util.h). */
#include "util/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sps__grow(void **arr, size_t *cap, size_t n, size_t sz) {
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 16;
    if (c < *cap || c > SIZE_MAX / sz) return -1;
    void *p = realloc(*arr, c * sz);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}

int sps__bytes_room(sps__bytes_t *b, size_t more) {
    if (b->oom) return -1;
    if (more > SIZE_MAX - 1 - b->n) goto oom;
    size_t need = b->n + more + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) goto oom;
        cap *= 2;
    }
    unsigned char *p = realloc(b->p, cap);
    if (!p) goto oom;
    b->p = p;
    b->cap = cap;
    return 0;
oom:
    b->oom = 1;
    return -1;
}

void sps__bytes_put(sps__bytes_t *b, const void *p, size_t n) {
    if (!n || sps__bytes_room(b, n)) return;
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
