/* mh_dlopen.c -- a library opened with dlopen after the program started
 * (mh_plug.c) allocates; under LD_PRELOAD=libspanscope_malloc.so its
 * blocks are counted, exactly, on the calling thread.
 *
 *   mh_dlopen PATH/libmh_plug.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>

#include "mh_common.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: mh_dlopen LIBMH_PLUG\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "mh_dlopen: %s\n", dlerror());
        return 2;
    }
    void (*plug_alloc)(void **, int, size_t);
    void (*plug_free)(void **, int);
    void *(*plug_grow)(size_t, size_t);
    *(void **)&plug_alloc = dlsym(lib, "mh_plug_alloc");
    *(void **)&plug_free = dlsym(lib, "mh_plug_free");
    *(void **)&plug_grow = dlsym(lib, "mh_plug_grow");
    if (!plug_alloc || !plug_free || !plug_grow) {
        fprintf(stderr, "mh_dlopen: the plug's functions are missing\n");
        return 2;
    }
    void *blocks[50];
    mh_expect_t e = {0, 0, 0, 0};
    sps_mem_counts_t c0, c1;
    sps_mem_thread_counts(&c0);
    plug_alloc(blocks, 50, 1000);
    sps_mem_thread_counts(&c1);
    for (int i = 0; i < 50; i++) {
        e.alloc_bytes += malloc_usable_size(blocks[i]);
        e.allocs++;
    }
    mh_check("the plug's 50 mallocs", &e, mh_diff(&c0, &c1));
    if (e.alloc_bytes < 50 * 1000) MH_EQ("at least 50000 bytes", 1, 0);
    for (int i = 0; i < 50; i++) {
        e.free_bytes += malloc_usable_size(blocks[i]);
        e.frees++;
    }
    plug_free(blocks, 50);
    sps_mem_thread_counts(&c1);
    mh_check("and their frees", &e, mh_diff(&c0, &c1));
    /* calloc then realloc inside the plug: two allocations, one free; the
     * block's final size is what stays live */
    sps_mem_thread_counts(&c0);
    char *g = plug_grow(100, 100000);
    sps_mem_thread_counts(&c1);
    mh_delta_t d = mh_diff(&c0, &c1);
    MH_EQ("calloc+realloc: allocs", 2, d.allocs);
    MH_EQ("calloc+realloc: frees", 1, d.frees);
    MH_EQ("calloc+realloc: live", (long long)malloc_usable_size(g), d.live);
    free(g);
    dlclose(lib);
    if (mh_failures) return 1;
    printf("mh_dlopen: ok\n");
    return 0;
}
