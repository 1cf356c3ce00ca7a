/* array.c -- growing arrays by doubling (util.h). */
#include "util/util.h"

#include <stdlib.h>

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
