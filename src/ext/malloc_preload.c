/* malloc_preload.c -- libspanscope_malloc: every allocation of the C/C++
 * malloc family of a whole program credited to the thread that made it,
 * through the core's per-thread memory counters (sps_mem_alloc /
 * sps_mem_free; docs/memory.md, issue 33 part 1).  Opt-in: it does
 * something only when preloaded,
 *
 *     LD_PRELOAD=/path/to/libspanscope_malloc.so ./program
 *
 * (SPANSCOPE_MALLOC=0 in the environment leaves it inert: every call goes
 * straight to the real allocator).  A library of its own, an integration
 * of the fifth layer over the public API only.
 *
 *   - It does not link libspanscope: a preloaded library's dependencies
 *     join the program's global symbol scope, and libspanscope's HDF5
 *     there would capture the HDF5 calls of a library that bundles its own
 *     (h5py's wheels do: "Not a datatype").  Its constructor finds
 *     sps_mem_alloc / sps_mem_free in the program (linked with
 *     libspanscope), else opens libspanscope itself, RTLD_LOCAL, from its
 *     own folder ($ORIGIN) -- the one instance that the Python extension
 *     or a later dlopen then shares (same soname).  Allocations made
 *     before that constructor runs (other libraries' constructors) are not
 *     counted; a free of one of them later is (usable size, no table).
 *
 *   - It defines malloc, calloc, realloc, reallocarray, free,
 *     posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
 *     malloc_usable_size; each calls the next definition in the lookup
 *     order (glibc's, or another preloaded allocator's), found with
 *     dlsym(RTLD_NEXT) at the first call.  dlsym itself may allocate
 *     (dlerror's buffer): while a thread resolves, its allocations come
 *     from a static bootstrap buffer, which is never given back (free and
 *     realloc recognise its blocks by their address).
 *   - Preloaded, it comes first for every object, the program and every
 *     library loaded with it or later with dlopen: a dlopen'ed library's
 *     calls bind to these definitions like everyone else's, with nothing
 *     to patch.  (Patching the GOT/PLT of objects already loaded, as
 *     memray does to attach to a running program, is not done: this
 *     library must be preloaded.)
 *   - Bytes are the blocks' usable sizes (malloc_usable_size of the next
 *     allocator) on both sides, so that a free, which has no size
 *     argument, subtracts exactly what its allocation added: allocs and
 *     frees balance, and a thread's live bytes are what it holds.  A
 *     realloc counts a free of the old block and an allocation of the new.
 *   - A per-thread guard: a call made while the thread is already inside
 *     one of these functions (an allocator that calls malloc itself) goes
 *     to the next allocator uncounted.
 *   - A block freed by another thread than the one that allocated it
 *     lowers the freeing thread's live bytes (sps_mem_free's rule).
 *   - Cost: the next allocator's, plus malloc_usable_size and a few
 *     thread-local stores (bench/bench_memhooks.py).
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef SPS_LIBSPANSCOPE_SONAME
#define SPS_LIBSPANSCOPE_SONAME "libspanscope.so.1"
#endif

#define SPS_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------ */
/* The next allocator                                                        */
/* ------------------------------------------------------------------------ */

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef size_t (*usable_fn)(void *);

static struct {
    malloc_fn malloc;
    calloc_fn calloc;
    realloc_fn realloc;
    free_fn free;
    posix_memalign_fn posix_memalign;
    memalign_fn aligned_alloc;
    memalign_fn memalign;
    malloc_fn valloc;
    malloc_fn pvalloc;
    usable_fn usable;
} next;
static atomic_int next_ready; /* 1 once next is filled */
static int counting = 1;      /* 0: SPANSCOPE_MALLOC=0 */

/* libspanscope's sps_mem_alloc / sps_mem_free, set by the constructor:
 * until then (or without libspanscope) nothing is counted */
typedef void (*count_fn)(size_t);
static count_fn count_alloc, count_free;

/* per thread: inside one of our functions (the guard), resolving */
static __thread int in_hook __attribute__((tls_model("initial-exec")));
static __thread int resolving __attribute__((tls_model("initial-exec")));

/* The bootstrap buffer: bump allocation, 16-byte header with the size. */
#define BOOT_SIZE (64 * 1024)
static _Alignas(64) unsigned char boot[BOOT_SIZE];
static atomic_size_t boot_used;

static int in_boot(const void *p) {
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_SIZE;
}

static void *boot_alloc(size_t n, size_t align) {
    if (align < 16) align = 16;
    if (n > BOOT_SIZE || align > 4096) return NULL;
    size_t need = n + 16 + align;
    size_t at = atomic_fetch_add(&boot_used, need);
    if (at + need > BOOT_SIZE) return NULL;
    uintptr_t base = (uintptr_t)(boot + at) + 16;
    uintptr_t p = (base + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void *)(p - sizeof(size_t)), &n, sizeof n);
    return (void *)p; /* zeroed: the buffer is static and never reused */
}

static size_t boot_size(const void *p) {
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof n, sizeof n);
    return n;
}

static void die(const char *what) {
    static const char msg[] = "libspanscope_malloc: dlsym(RTLD_NEXT) found no ";
    ssize_t w = write(2, msg, sizeof msg - 1);
    w = write(2, what, strlen(what));
    w = write(2, "\n", 1);
    (void)w;
    abort();
}

/* dlsym returns the functions as void *; POSIX guarantees the conversion */
#define RESOLVE(field, name, required)                               \
    do {                                                             \
        void *sym_ = dlsym(RTLD_NEXT, name);                         \
        if (!sym_ && (required)) die(name);                          \
        memcpy(&next.field, &sym_, sizeof next.field);               \
    } while (0)

static void resolve(void) {
    resolving = 1;
    RESOLVE(malloc, "malloc", 1);
    RESOLVE(calloc, "calloc", 1);
    RESOLVE(realloc, "realloc", 1);
    RESOLVE(free, "free", 1);
    RESOLVE(usable, "malloc_usable_size", 1);
    RESOLVE(posix_memalign, "posix_memalign", 0);
    RESOLVE(aligned_alloc, "aligned_alloc", 0);
    RESOLVE(memalign, "memalign", 0);
    RESOLVE(valloc, "valloc", 0);
    RESOLVE(pvalloc, "pvalloc", 0);
    const char *e = getenv("SPANSCOPE_MALLOC");
    if (e && (!strcmp(e, "0") || !strcasecmp(e, "false") || !strcasecmp(e, "off") ||
              !strcasecmp(e, "no")))
        counting = 0;
    resolving = 0;
    atomic_store_explicit(&next_ready, 1, memory_order_release);
}

/* 1 when the caller should use the bootstrap buffer */
static inline int ensure(void) {
    if (__builtin_expect(atomic_load_explicit(&next_ready, memory_order_acquire), 1)) return 0;
    if (resolving) return 1;
    resolve();
    return 0;
}

/* find libspanscope's counters: in the global scope (the program links
 * it), else open it (RTLD_LOCAL: its HDF5 stays out of the global scope) */
static void attach(void) {
    void *a = dlsym(RTLD_DEFAULT, "sps_mem_alloc");
    void *f = dlsym(RTLD_DEFAULT, "sps_mem_free");
    if (!a || !f) {
        void *lib = dlopen(SPS_LIBSPANSCOPE_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            static const char msg[] = "libspanscope_malloc: cannot load " SPS_LIBSPANSCOPE_SONAME
                                      " (nothing will be counted): ";
            const char *e = dlerror();
            ssize_t w = write(2, msg, sizeof msg - 1);
            if (e) w = write(2, e, strlen(e));
            w = write(2, "\n", 1);
            (void)w;
            return;
        }
        a = dlsym(lib, "sps_mem_alloc");
        f = dlsym(lib, "sps_mem_free");
        if (!a || !f) return;
    }
    memcpy(&count_free, &f, sizeof f); /* the free first: skip() reads count_alloc */
    memcpy(&count_alloc, &a, sizeof a);
}

__attribute__((constructor)) static void spanscope_malloc_init(void) {
    (void)ensure();
    if (counting) {
        in_hook = 1; /* what loading libspanscope allocates is not counted */
        attach();
        in_hook = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* The counted calls                                                         */
/* ------------------------------------------------------------------------ */

static inline int skip(void) { return in_hook || !count_alloc; }

static inline void *counted(void *p) {
    if (p) count_alloc(next.usable(p));
    return p;
}

SPS_EXPORT void *malloc(size_t n) {
    if (ensure()) return boot_alloc(n, 16);
    if (skip()) return next.malloc(n);
    in_hook = 1;
    void *p = counted(next.malloc(n));
    in_hook = 0;
    return p;
}

SPS_EXPORT void *calloc(size_t nmemb, size_t size) {
    if (ensure()) {
        size_t n;
        if (__builtin_mul_overflow(nmemb, size, &n)) return NULL;
        return boot_alloc(n, 16);
    }
    if (skip()) return next.calloc(nmemb, size);
    in_hook = 1;
    void *p = counted(next.calloc(nmemb, size));
    in_hook = 0;
    return p;
}

SPS_EXPORT void free(void *p) {
    if (!p || in_boot(p)) return;
    if (ensure()) return; /* cannot happen: a block not from boot means next is there */
    if (skip()) {
        next.free(p);
        return;
    }
    in_hook = 1;
    count_free(next.usable(p));
    next.free(p);
    in_hook = 0;
}

SPS_EXPORT void *realloc(void *p, size_t n) {
    if (ensure()) {
        void *q = boot_alloc(n, 16);
        if (q && p) {
            size_t old = boot_size(p);
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    if (p && in_boot(p)) { /* a bootstrap block moves to the real heap */
        void *q = malloc(n);
        if (q) {
            size_t old = boot_size(p);
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    if (skip()) return next.realloc(p, n);
    in_hook = 1;
    size_t old = p ? next.usable(p) : 0;
    void *q = next.realloc(p, n);
    if (q || (p && n == 0)) { /* moved, grown, shrunk, or freed (n == 0) */
        if (p) count_free(old);
        if (q) count_alloc(next.usable(q));
    }
    in_hook = 0;
    return q;
}

SPS_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

SPS_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    if (ensure()) {
        void *p = boot_alloc(n, align);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    if (!next.posix_memalign) return ENOMEM;
    if (skip()) return next.posix_memalign(out, align, n);
    in_hook = 1;
    int rc = next.posix_memalign(out, align, n);
    if (rc == 0) counted(*out);
    in_hook = 0;
    return rc;
}

/* aligned_alloc, memalign: (alignment, size) */
static void *aligned_call(memalign_fn fn, size_t align, size_t n) {
    if (!fn) {
        errno = ENOMEM;
        return NULL;
    }
    if (skip()) return fn(align, n);
    in_hook = 1;
    void *p = counted(fn(align, n));
    in_hook = 0;
    return p;
}

SPS_EXPORT void *aligned_alloc(size_t align, size_t n) {
    if (ensure()) return boot_alloc(n, align);
    return aligned_call(next.aligned_alloc, align, n);
}

SPS_EXPORT void *memalign(size_t align, size_t n) {
    if (ensure()) return boot_alloc(n, align);
    return aligned_call(next.memalign, align, n);
}

/* valloc, pvalloc: page-aligned (pvalloc rounds the size up to pages) */
static void *page_call(malloc_fn fn, size_t n) {
    if (!fn) {
        errno = ENOMEM;
        return NULL;
    }
    if (skip()) return fn(n);
    in_hook = 1;
    void *p = counted(fn(n));
    in_hook = 0;
    return p;
}

SPS_EXPORT void *valloc(size_t n) {
    if (ensure()) return boot_alloc(n, 4096);
    return page_call(next.valloc, n);
}

SPS_EXPORT void *pvalloc(size_t n) {
    if (ensure()) return boot_alloc(n, 4096);
    return page_call(next.pvalloc, n);
}

SPS_EXPORT size_t malloc_usable_size(void *p) {
    if (!p) return 0;
    if (in_boot(p)) return boot_size(p);
    if (ensure()) return 0;
    return next.usable(p);
}
