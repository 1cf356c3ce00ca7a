/* mh_exact.c -- exact counts of known malloc-family sequences under
 * LD_PRELOAD=libspanscope_malloc.so, read back with sps_mem_thread_counts.
 *
 *   mh_exact preloaded   every call counted: its block's usable size
 *   mh_exact plain       not preloaded: nothing counted at all
 *
 * No I/O between the readings (stdio allocates its buffers). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "mh_common.h"

/* keep the compiler from eliding a malloc/free pair */
static void *volatile sink;

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "preloaded") && strcmp(argv[1], "plain"))) {
        fprintf(stderr, "usage: mh_exact preloaded|plain\n");
        return 2;
    }
    int on = !strcmp(argv[1], "preloaded");
    mh_expect_t e = {0, 0, 0, 0};
    sps_mem_counts_t c0, c1;
#define ALLOC(p)                                  \
    do {                                          \
        e.alloc_bytes += malloc_usable_size(p);   \
        e.allocs++;                               \
    } while (0)
#define FREE(p)                                   \
    do {                                          \
        e.free_bytes += malloc_usable_size(p);    \
        e.frees++;                                \
    } while (0)
    sps_mem_thread_counts(&c0);
    char *a = malloc(100);
    ALLOC(a);
    memset(a, 1, 100);
    int *b = calloc(10, 30);
    ALLOC(b);
    FREE(a); /* realloc: the old block freed, the new one allocated */
    a = realloc(a, 5000);
    ALLOC(a);
    MH_EQ("realloc kept the contents", 1, a[99]);
    char *c = realloc(NULL, 64); /* realloc of NULL: a malloc */
    ALLOC(c);
    FREE(c);
    c = reallocarray(c, 100, 40);
    ALLOC(c);
    void *d = NULL;
    MH_EQ("posix_memalign", 0, posix_memalign(&d, 256, 1000));
    ALLOC(d);
    if ((uintptr_t)d % 256) MH_EQ("posix_memalign aligned", 0, (long long)((uintptr_t)d % 256));
    void *f = aligned_alloc(64, 640);
    ALLOC(f);
    void *g = memalign(128, 300);
    ALLOC(g);
    void *h = valloc(10);
    ALLOC(h);
    void *k = pvalloc(10);
    ALLOC(k);
    sink = h;
    /* a failed reallocarray (overflow) changes nothing */
    errno = 0;
    void *(*volatile ra)(void *, size_t, size_t) = reallocarray; /* opaque to the compiler */
    void *bad = ra(c, SIZE_MAX / 2, 4);
    MH_EQ("reallocarray overflow fails", 0, (long long)(uintptr_t)bad);
    MH_EQ("reallocarray overflow errno", ENOMEM, errno);
    free(NULL); /* nothing */
    sps_mem_thread_counts(&c1);
    mh_expect_t none = {0, 0, 0, 0};
    mh_check("after the allocations", on ? &e : &none, mh_diff(&c0, &c1));
    FREE(a);
    free(a);
    FREE(b);
    free(b);
    FREE(c);
    free(c);
    FREE(d);
    free(d);
    FREE(f);
    free(f);
    FREE(g);
    free(g);
    FREE(h);
    free(h);
    FREE(k);
    free(k);
    sps_mem_thread_counts(&c1);
    mh_check("after the frees", on ? &e : &none, mh_diff(&c0, &c1));
    if (on) MH_EQ("live bytes back to where they were", c0.live_bytes, c1.live_bytes);
    /* many blocks of known sizes */
    mh_expect_t e2 = {0, 0, 0, 0};
    void *blocks[1000];
    sps_mem_thread_counts(&c0);
    for (int i = 0; i < 1000; i++) {
        blocks[i] = malloc((size_t)(i * 37 + 1));
        e2.alloc_bytes += malloc_usable_size(blocks[i]);
        e2.allocs++;
    }
    for (int i = 0; i < 1000; i++) {
        e2.free_bytes += malloc_usable_size(blocks[i]);
        e2.frees++;
        free(blocks[i]);
    }
    sps_mem_thread_counts(&c1);
    mh_check("1000 blocks", on ? &e2 : &none, mh_diff(&c0, &c1));
    if (on && e.alloc_bytes < 100 + 300 + 5000 + 4000 + 1000 + 640 + 300 + 10 + 10)
        MH_EQ("at least the bytes asked for", 1, 0);
    if (mh_failures) return 1;
    printf("mh_exact %s: ok (%lld bytes in %lld allocations)\n", argv[1], e.alloc_bytes,
           e.allocs);
    return 0;
}
