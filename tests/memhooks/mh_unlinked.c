/* mh_unlinked.c -- a program that does not link libspanscope, preloaded
 * with libspanscope_malloc: the library opens libspanscope itself (its
 * HDF5 kept out of the global scope), and that is the instance the
 * program gets when it opens libspanscope later -- the counters it reads
 * hold the allocations made before.
 *
 *   mh_unlinked PATH/libspanscope.so.N */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t alloc_bytes, free_bytes, allocs, frees;
    int64_t live_bytes;
} counts_t; /* sps_mem_counts_t */

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: mh_unlinked LIBSPANSCOPE\n");
        return 2;
    }
    /* libspanscope's HDF5 is not in the global scope */
    if (dlsym(RTLD_DEFAULT, "H5open") || dlsym(RTLD_DEFAULT, "sps_mem_alloc")) {
        fprintf(stderr, "FAIL: libspanscope or its HDF5 is in the global scope\n");
        return 1;
    }
    size_t sizes[3] = {1000, 20000, 300000};
    void *blocks[3];
    size_t usable = 0;
    for (int i = 0; i < 3; i++) {
        blocks[i] = malloc(sizes[i]);
        memset(blocks[i], 1, sizes[i]);
        usable += malloc_usable_size(blocks[i]);
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "mh_unlinked: %s\n", dlerror());
        return 2;
    }
    void (*counts)(counts_t *);
    *(void **)&counts = dlsym(lib, "sps_mem_thread_counts");
    if (!counts) return 2;
    counts_t c;
    counts(&c);
    /* at least the three blocks (and whatever else main allocated) */
    if (c.alloc_bytes < usable || c.allocs < 3 || c.live_bytes < (int64_t)usable) {
        fprintf(stderr, "FAIL: counters %llu bytes in %llu allocations, live %lld; want at "
                "least %zu bytes in 3\n", (unsigned long long)c.alloc_bytes,
                (unsigned long long)c.allocs, (long long)c.live_bytes, usable);
        return 1;
    }
    counts_t d;
    for (int i = 0; i < 3; i++) free(blocks[i]);
    counts(&d);
    if (d.free_bytes - c.free_bytes != usable || d.frees - c.frees != 3) {
        fprintf(stderr, "FAIL: the frees: %llu bytes in %llu, want %zu in 3\n",
                (unsigned long long)(d.free_bytes - c.free_bytes),
                (unsigned long long)(d.frees - c.frees), usable);
        return 1;
    }
    printf("mh_unlinked: ok\n");
    return 0;
}
