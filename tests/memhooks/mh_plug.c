/* mh_plug.c -- a library that mh_dlopen loads with dlopen: its mallocs
 * must be counted like the program's (a dlopen'ed object binds to the
 * preloaded malloc too). */
#include <stdlib.h>
#include <string.h>

/* n blocks of size bytes each, kept in out[0..n) */
void mh_plug_alloc(void **out, int n, size_t size) {
    for (int i = 0; i < n; i++) {
        out[i] = malloc(size);
        if (out[i]) memset(out[i], 7, size);
    }
}

void mh_plug_free(void **blocks, int n) {
    for (int i = 0; i < n; i++) free(blocks[i]);
}

/* one calloc'ed block grown with realloc */
void *mh_plug_grow(size_t first, size_t then) {
    void *p = calloc(1, first);
    return p ? realloc(p, then) : NULL;
}
