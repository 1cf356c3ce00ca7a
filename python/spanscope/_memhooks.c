/* _memhooks.c -- memory sources of the per-span values (issue 33, part 1;
 * docs/memory.md): every allocation Python's allocators and numpy's array
 * data make reaches sps_mem_alloc / sps_mem_free, credited to the thread
 * that made it (the core's thread-local counters, src/core/values.c).  Off
 * until mem_hooks_install() is called.
 *
 * Python's allocators.  PyMem_SetAllocator on the RAW, MEM and OBJ
 * domains, each hook chaining the allocator that was there before
 * (PyMem_GetAllocator first; tracemalloc or another hook installed later
 * chains ours in turn).  A free has no size, so the hooks keep the size of
 * every block they saw allocated in a table keyed by the block's address
 * (as tracemalloc and memray do; a size header cannot work: blocks
 * allocated before the hooks were installed are freed after).  A free of an
 * address that is not in the table -- a block from before the
 * installation -- is passed on and not counted.
 *   The table is sharded: 64 open-addressing tables (linear probing,
 * backward-shift deletion, no tombstones), the shard chosen by a hash of
 * the address, each behind its own spin lock.  The MEM and OBJ domains run
 * with the GIL held, but RAW runs without it (and since 3.12 isolated
 * subinterpreters run MEM/OBJ under GILs of their own), so every access
 * locks its shard: one uncontended atomic exchange, rarely contended with
 * 64 shards.  The table's memory comes from mmap, never from an allocator
 * we hook (nor from malloc, which libspanscope_malloc may count).
 *   A free removes its entry BEFORE the block is released, and a realloc
 * removes the old block's entry before calling the allocator (re-adding it
 * if the realloc fails): after the release another thread may be handed
 * the same address and add it to the table, which a late removal would
 * then undo.
 *   Nested calls are not counted twice: pymalloc hands requests above 512
 * bytes to PyMem_RawMalloc, and a hook of one domain calls the RAW one
 * that way; a thread-local flag set around the call to the previous
 * allocator makes the nested hook pass the call on untouched (tracemalloc
 * does the same).  Bytes counted are the sizes asked for.
 *   When malloc already feeds the counters (libspanscope_malloc
 * preloaded: mem_hooks_install says so, "malloc_counted"), a block the
 * previous allocator took from malloc is left to the preload (its
 * allocation and its free), and the hooks count the others (pymalloc's
 * blocks): each block is counted once.
 *   Hooks stack: each restores, when it goes, what it found when it came.
 * So installing is refused while tracemalloc traces (its stop would take
 * ours away too); tracemalloc started after ours chains ours and gives
 * them back when it stops.
 *   Uninstalling restores the previous allocators (refused, changing
 * nothing, when another hook was installed over ours since: stop that one
 * first).  Blocks still in the table are then dropped from it: the
 * previous allocator frees them later without us, so their bytes stay
 * counted as allocated and not freed; mem_hooks_uninstall() returns how
 * many blocks and bytes that is.  A later installation starts an empty
 * table.
 *   Free-threaded builds (3.13t, Py_GIL_DISABLED) are refused: there the
 * OBJ domain must stay mimalloc's, whose heaps the GC walks, and the
 * allocators may be swapped under running threads without a GIL to order
 * them; the hooks are not known to be safe there.
 *
 * numpy's array data (NEP 49).  numpy's PyDataMem_Handler struct is
 * declared here as NEP 49 documents it, and numpy's functions are read
 * from its C-API capsule _ARRAY_API: building needs no numpy headers and
 * running needs no numpy.  numpy keeps the current handler in a
 * contextvars.ContextVar whose default is its default handler; a thread
 * started later runs in a fresh context, so a handler set the documented
 * way (PyDataMem_SetHandler) covers only the context -- the thread, or the
 * task -- that set it.  So, by default ("all threads"), where the
 * installing context uses numpy's default handler and that handler's
 * struct lies in writable memory (it does: numpy defines it as plain
 * static data), its four functions are patched in place to ours, which
 * chain copies of the originals: every thread and context that uses the
 * default handler is counted, each allocation on its own thread.
 * Uninstall writes the originals back and drops the table (blocks then
 * still live are freed later by the originals, uncounted, as Python's).
 * Otherwise, or with numpy="context", our own handler, chaining the
 * current one, is set with PyDataMem_SetHandler in the calling context
 * ("this context"); arrays keep a reference to the handler that allocated
 * them and are freed through it, so their frees are counted even after
 * uninstall, which puts the previous handler back in that context.
 *   A handler's free receives the size, but its realloc does not receive
 * the old one: both modes keep a table of their blocks (the context
 * mode's is never emptied).

 * The functions are registered in _ext.c's method table. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "spanscope.h"

/* ======================================================================== */
/* The address -> size table                                                 */
/* ======================================================================== */

typedef struct {
    uintptr_t key; /* 0: empty */
    size_t size;
} mh_slot_t;

typedef struct {
    atomic_int lock;
    size_t cap;   /* slots, a power of two; 0 before the first insert */
    size_t count; /* used slots */
    mh_slot_t *slots;
    char pad[64 - sizeof(atomic_int) - 2 * sizeof(size_t) - sizeof(void *)];
} mh_shard_t;

#define MH_SHARD_BITS 6
#define MH_SHARDS (1u << MH_SHARD_BITS)
#define MH_FIRST_CAP 1024u

/* two tables: the Python hooks' (emptied at uninstall) and the numpy
 * handler's (never emptied: arrays made through our handler are freed
 * through it whenever that happens) */
static mh_shard_t mh_py[MH_SHARDS] __attribute__((aligned(64)));
static mh_shard_t mh_np[MH_SHARDS] __attribute__((aligned(64)));
/* and numpy's default handler's while we patch it (emptied at uninstall:
 * its blocks are then freed by the original functions, without us) */
static mh_shard_t mh_npdt[MH_SHARDS] __attribute__((aligned(64)));
/* inserts that failed because the table could not grow (mmap failed): such
 * an allocation is neither counted nor tracked */
static atomic_size_t mh_untracked;

static inline uint64_t mh_hash(uintptr_t p) { /* murmur3's finaliser */
    uint64_t h = (uint64_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline void mh_lock(mh_shard_t *s) {
    for (;;) {
        if (!atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)) return;
        for (int i = 0; atomic_load_explicit(&s->lock, memory_order_relaxed); i++) {
            if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield(); /* the holder may have been preempted */
            }
        }
    }
}

static inline void mh_unlock(mh_shard_t *s) {
    atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static mh_slot_t *mh_map(size_t cap) {
    void *p = mmap(NULL, cap * sizeof(mh_slot_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : (mh_slot_t *)p;
}

static void mh_unmap(mh_slot_t *slots, size_t cap) {
    if (slots) munmap(slots, cap * sizeof(mh_slot_t));
}

/* (shard locked) place key in the table, replacing an entry of the same
 * key (a block whose free we missed: its address was handed out again) */
static void mh_place(mh_slot_t *slots, size_t mask, uint64_t h, uintptr_t key, size_t size,
                     size_t *count) {
    size_t i = (size_t)(h >> MH_SHARD_BITS) & mask;
    while (slots[i].key && slots[i].key != key) i = (i + 1) & mask;
    if (!slots[i].key) ++*count;
    slots[i].key = key;
    slots[i].size = size;
}

/* (shard locked) double the table; 0 or -1 when mmap failed */
static int mh_grow(mh_shard_t *s) {
    size_t ncap = s->cap ? 2 * s->cap : MH_FIRST_CAP;
    mh_slot_t *n = mh_map(ncap);
    if (!n) return -1;
    size_t count = 0;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].key)
            mh_place(n, ncap - 1, mh_hash(s->slots[i].key), s->slots[i].key,
                     s->slots[i].size, &count);
    mh_unmap(s->slots, s->cap);
    s->slots = n;
    s->cap = ncap;
    s->count = count;
    return 0;
}

/* Track block p of size bytes; 0, or -1 when the table could not grow. */
static int mh_add(mh_shard_t *tab, void *p, size_t size) {
    uintptr_t key = (uintptr_t)p;
    uint64_t h = mh_hash(key);
    mh_shard_t *s = &tab[h & (MH_SHARDS - 1)];
    mh_lock(s);
    if (2 * (s->count + 1) > s->cap && mh_grow(s) < 0) {
        mh_unlock(s);
        atomic_fetch_add_explicit(&mh_untracked, 1, memory_order_relaxed);
        return -1;
    }
    mh_place(s->slots, s->cap - 1, h, key, size, &s->count);
    mh_unlock(s);
    return 0;
}

/* Untrack block p: 1 and its size in *size when it was tracked, else 0. */
static int mh_remove(mh_shard_t *tab, void *p, size_t *size) {
    uintptr_t key = (uintptr_t)p;
    uint64_t h = mh_hash(key);
    mh_shard_t *s = &tab[h & (MH_SHARDS - 1)];
    mh_lock(s);
    if (!s->cap) {
        mh_unlock(s);
        return 0;
    }
    size_t mask = s->cap - 1;
    size_t i = (size_t)(h >> MH_SHARD_BITS) & mask;
    while (s->slots[i].key != key) {
        if (!s->slots[i].key) {
            mh_unlock(s);
            return 0;
        }
        i = (i + 1) & mask;
    }
    *size = s->slots[i].size;
    /* backward-shift deletion: move later members of the probe run into
     * the hole when their home slot does not lie cyclically in (hole, j] */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!s->slots[j].key) break;
        size_t home = (size_t)(mh_hash(s->slots[j].key) >> MH_SHARD_BITS) & mask;
        int in_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_between) {
            s->slots[hole] = s->slots[j];
            hole = j;
        }
    }
    s->slots[hole].key = 0;
    s->count--;
    mh_unlock(s);
    return 1;
}

/* Drop every entry (uninstall): their count and bytes in *blocks, *bytes.
 * The shards' memory is released; a straggling hook that still runs on
 * another thread finds an empty shard and starts a new one. */
static void mh_clear(mh_shard_t *tab, size_t *blocks, size_t *bytes) {
    *blocks = *bytes = 0;
    for (unsigned k = 0; k < MH_SHARDS; k++) {
        mh_shard_t *s = &tab[k];
        mh_lock(s);
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i].key) {
                ++*blocks;
                *bytes += s->slots[i].size;
            }
        mh_unmap(s->slots, s->cap);
        s->slots = NULL;
        s->cap = s->count = 0;
        mh_unlock(s);
    }
}

/* fork: no shard lock may be held by a thread that does not exist in the
 * child */
static void mh_prefork(void) {
    for (unsigned k = 0; k < MH_SHARDS; k++) mh_lock(&mh_py[k]);
    for (unsigned k = 0; k < MH_SHARDS; k++) mh_lock(&mh_np[k]);
    for (unsigned k = 0; k < MH_SHARDS; k++) mh_lock(&mh_npdt[k]);
}
static void mh_postfork(void) {
    for (unsigned k = MH_SHARDS; k-- > 0;) mh_unlock(&mh_npdt[k]);
    for (unsigned k = MH_SHARDS; k-- > 0;) mh_unlock(&mh_np[k]);
    for (unsigned k = MH_SHARDS; k-- > 0;) mh_unlock(&mh_py[k]);
}

/* ======================================================================== */
/* Python's allocators                                                       */
/* ======================================================================== */

/* set while this thread is inside a hook's call to the previous allocator:
 * a nested hook (pymalloc -> PyMem_RawMalloc) passes the call on */
static __thread int mh_busy __attribute__((tls_model("initial-exec")));

static PyMemAllocatorEx mh_prev[3]; /* RAW, MEM, OBJ: what ours chain */
static int mh_python_on;
static int mh_atfork_done;

/* Set at install when malloc itself already feeds the counters
 * (libspanscope_malloc preloaded): then a block that the previous
 * allocator took from malloc -- the calling thread's allocation count rose
 * during the call -- is the preload's to count (allocation and free), and
 * the hook leaves it alone; the hooks count what malloc does not see
 * (pymalloc's blocks, carved from mmap'ed arenas; numpy's data when its
 * handler does not use malloc).  One count per block either way. */
static int mh_below;

static inline uint64_t mh_allocs(void) {
    if (!mh_below) return 0;
    sps_mem_counts_t c;
    sps_mem_thread_counts(&c);
    return c.allocs;
}

/* Does a malloc reach the counters?  (At install, before our hooks.) */
static int mh_detect_below(void) {
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    sps_mem_counts_t a, b;
    sps_mem_thread_counts(&a);
    void *p = m(64);
    sps_mem_thread_counts(&b);
    f(p);
    return b.allocs != a.allocs;
}

/* The hooks proper, given the allocator they chain (the per-domain entry
 * points below pass it). */
static inline void *mh_malloc(PyMemAllocatorEx *prev, size_t n) {
    if (mh_busy) return prev->malloc(prev->ctx, n);
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *p = prev->malloc(prev->ctx, n);
    mh_busy = 0;
    if (p && mh_allocs() == a0 && mh_add(mh_py, p, n) == 0) sps_mem_alloc(n);
    return p;
}

static inline void *mh_calloc(PyMemAllocatorEx *prev, size_t nelem, size_t elsize) {
    if (mh_busy) return prev->calloc(prev->ctx, nelem, elsize);
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *p = prev->calloc(prev->ctx, nelem, elsize);
    mh_busy = 0;
    /* a non-NULL result means nelem * elsize did not overflow */
    if (p && mh_allocs() == a0 && mh_add(mh_py, p, nelem * elsize) == 0)
        sps_mem_alloc(nelem * elsize);
    return p;
}

static inline void *mh_realloc(PyMemAllocatorEx *prev, void *ptr, size_t n) {
    if (mh_busy) return prev->realloc(prev->ctx, ptr, n);
    size_t old = 0;
    int tracked = ptr ? mh_remove(mh_py, ptr, &old) : 0;
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *q = prev->realloc(prev->ctx, ptr, n);
    mh_busy = 0;
    if (!q) { /* failed: the old block is still there */
        if (tracked) mh_add(mh_py, ptr, old);
        return NULL;
    }
    if (tracked) sps_mem_free(old);
    if (mh_allocs() == a0 && mh_add(mh_py, q, n) == 0) sps_mem_alloc(n);
    return q;
}

static inline void mh_free(PyMemAllocatorEx *prev, void *ptr) {
    if (mh_busy || !ptr) {
        prev->free(prev->ctx, ptr);
        return;
    }
    size_t size;
    int tracked = mh_remove(mh_py, ptr, &size);
    mh_busy = 1;
    prev->free(prev->ctx, ptr);
    mh_busy = 0;
    if (tracked) sps_mem_free(size);
}

static const PyMemAllocatorDomain mh_domains[3] = {PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM,
                                                   PYMEM_DOMAIN_OBJ};
static const char *const mh_domain_names[3] = {"RAW", "MEM", "OBJ"};

/* One set of entry points per domain, each bound to its domain's previous
 * allocator, so that they need no ctx: ours carries the previous
 * allocator's own ctx.  PyMem_SetAllocator copies the five fields while
 * threads without the GIL may be calling the RAW domain; a torn read then
 * pairs ours or the previous functions with the previous ctx -- both
 * right -- never a function with a ctx it does not expect. */
#define MH_ENTRY_POINTS(D)                                                                \
    static void *mh_malloc_##D(void *ctx, size_t n) {                                     \
        (void)ctx;                                                                        \
        return mh_malloc(&mh_prev[D], n);                                                 \
    }                                                                                     \
    static void *mh_calloc_##D(void *ctx, size_t nelem, size_t elsize) {                  \
        (void)ctx;                                                                        \
        return mh_calloc(&mh_prev[D], nelem, elsize);                                     \
    }                                                                                     \
    static void *mh_realloc_##D(void *ctx, void *ptr, size_t n) {                         \
        (void)ctx;                                                                        \
        return mh_realloc(&mh_prev[D], ptr, n);                                           \
    }                                                                                     \
    static void mh_free_##D(void *ctx, void *ptr) {                                       \
        (void)ctx;                                                                        \
        mh_free(&mh_prev[D], ptr);                                                        \
    }
MH_ENTRY_POINTS(0)
MH_ENTRY_POINTS(1)
MH_ENTRY_POINTS(2)

static void mh_ours(int d, PyMemAllocatorEx *a) {
    switch (d) {
    case 0:
        *a = (PyMemAllocatorEx){mh_prev[0].ctx, mh_malloc_0, mh_calloc_0, mh_realloc_0, mh_free_0};
        break;
    case 1:
        *a = (PyMemAllocatorEx){mh_prev[1].ctx, mh_malloc_1, mh_calloc_1, mh_realloc_1, mh_free_1};
        break;
    default:
        *a = (PyMemAllocatorEx){mh_prev[2].ctx, mh_malloc_2, mh_calloc_2, mh_realloc_2, mh_free_2};
        break;
    }
}

/* ======================================================================== */
/* numpy's array data (NEP 49)                                               */
/* ======================================================================== */

/* The structs as NEP 49 documents them (numpy/ndarraytypes.h, version 1). */
typedef struct {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} mh_np_allocator_t;

typedef struct {
    char name[127];
    uint8_t version;
    mh_np_allocator_t allocator;
} mh_np_handler_t;

#define MH_NP_CAPSULE "mem_handler" /* numpy's MEM_HANDLER_CAPSULE_NAME */
#define MH_NP_SET 304               /* PyDataMem_SetHandler in PyArray_API */
#define MH_NP_GET 305               /* PyDataMem_GetHandler */

/* The handler ours chains: a copy of the previous one's allocator, and a
 * reference to its capsule (kept while ours may be in use: for ever, as
 * arrays made through ours keep ours alive and free through it). */
typedef struct {
    mh_np_allocator_t prev;
    PyObject *prev_capsule;
} mh_np_ctx_t;

/* The handler's work, given the allocator it chains and its table. */
static inline void *mh_np_do_malloc(const mh_np_allocator_t *prev, mh_shard_t *tab, size_t n) {
    int was = mh_busy;
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *p = prev->malloc(prev->ctx, n);
    mh_busy = was;
    if (p && mh_allocs() == a0 && mh_add(tab, p, n) == 0) sps_mem_alloc(n);
    return p;
}

static inline void *mh_np_do_calloc(const mh_np_allocator_t *prev, mh_shard_t *tab,
                                    size_t nelem, size_t elsize) {
    int was = mh_busy;
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *p = prev->calloc(prev->ctx, nelem, elsize);
    mh_busy = was;
    if (p && mh_allocs() == a0 && mh_add(tab, p, nelem * elsize) == 0)
        sps_mem_alloc(nelem * elsize);
    return p;
}

/* NEP 49's realloc hands no old size (numpy reallocs to resize an array's
 * buffer: ndarray.resize, fromiter, fromfile...): the handler's table has
 * it, as it has every block ours allocated */
static inline void *mh_np_do_realloc(const mh_np_allocator_t *prev, mh_shard_t *tab, void *ptr,
                                     size_t n) {
    size_t old = 0;
    int tracked = ptr ? mh_remove(tab, ptr, &old) : 0;
    int was = mh_busy;
    uint64_t a0 = mh_allocs();
    mh_busy = 1;
    void *q = prev->realloc(prev->ctx, ptr, n);
    mh_busy = was;
    if (!q) {
        if (tracked) mh_add(tab, ptr, old);
        return NULL;
    }
    if (tracked) sps_mem_free(old);
    if (mh_allocs() == a0 && mh_add(tab, q, n) == 0) sps_mem_alloc(n);
    return q;
}

/* A block not in the table (allocated before, or left to libspanscope_malloc)
 * is passed on uncounted. */
static inline void mh_np_do_free(const mh_np_allocator_t *prev, mh_shard_t *tab, void *ptr,
                                 size_t size) {
    size_t tracked_size = 0;
    int tracked = ptr ? mh_remove(tab, ptr, &tracked_size) : 0;
    int was = mh_busy;
    mh_busy = 1;
    prev->free(prev->ctx, ptr, size);
    mh_busy = was;
    if (tracked) sps_mem_free(tracked_size);
}

/* "this context": our own handler, its ctx the chained one's copy */
static void *mh_np_malloc(void *ctx, size_t n) {
    return mh_np_do_malloc(&((mh_np_ctx_t *)ctx)->prev, mh_np, n);
}
static void *mh_np_calloc(void *ctx, size_t nelem, size_t elsize) {
    return mh_np_do_calloc(&((mh_np_ctx_t *)ctx)->prev, mh_np, nelem, elsize);
}
static void *mh_np_realloc(void *ctx, void *ptr, size_t n) {
    return mh_np_do_realloc(&((mh_np_ctx_t *)ctx)->prev, mh_np, ptr, n);
}
static void mh_np_free(void *ctx, void *ptr, size_t size) {
    mh_np_do_free(&((mh_np_ctx_t *)ctx)->prev, mh_np, ptr, size);
}

/* "all threads": numpy's default handler patched in place.  Its
 * functions are replaced by these, which chain copies of the originals;
 * its ctx is left as it is and these do not use theirs, so a call that
 * reads the struct while it is being patched (four pointer stores) gets a
 * right pair either way. */
static mh_np_handler_t *mh_npd;       /* numpy's default handler while patched */
static mh_np_allocator_t mh_npd_orig; /* its functions before */

static void *mh_npd_malloc(void *ctx, size_t n) {
    (void)ctx;
    return mh_np_do_malloc(&mh_npd_orig, mh_npdt, n);
}
static void *mh_npd_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    return mh_np_do_calloc(&mh_npd_orig, mh_npdt, nelem, elsize);
}
static void *mh_npd_realloc(void *ctx, void *ptr, size_t n) {
    (void)ctx;
    return mh_np_do_realloc(&mh_npd_orig, mh_npdt, ptr, n);
}
static void mh_npd_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    mh_np_do_free(&mh_npd_orig, mh_npdt, ptr, size);
}

static void mh_npd_store(mh_np_handler_t *h, const mh_np_allocator_t *a) {
    __atomic_store_n(&h->allocator.malloc, a->malloc, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.calloc, a->calloc, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.realloc, a->realloc, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.free, a->free, __ATOMIC_RELEASE);
}

/* Are [p, p + n) mapped writable in this process (/proc/self/maps)?  A
 * handler numpy built const (read-only after relocation) is not patched. */
static int mh_writable(const void *p, size_t n) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    uintptr_t a = (uintptr_t)p, b = a + n;
    char line[512];
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
        if (a >= lo && b <= hi) {
            ok = perms[0] == 'r' && perms[1] == 'w';
            break;
        }
    }
    fclose(f);
    return ok;
}

static PyObject *(*mh_np_set)(PyObject *);
static PyObject *(*mh_np_get)(void);
static PyObject *mh_np_ours;       /* our handler's capsule while installed */
static PyObject *mh_np_restore;    /* the handler to put back at uninstall */

/* numpy's C API table, or NULL with *why set (no exception left set) */
static void **mh_np_api(const char **why) {
    static const char *const mods[] = {"numpy._core._multiarray_umath",
                                       "numpy.core._multiarray_umath",
                                       "numpy.core.multiarray"};
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) {
        PyErr_Clear();
        *why = "numpy is not installed";
        return NULL;
    }
    Py_DECREF(np);
    /* NEP 49 came with numpy 1.22, and with it get_handler_name (numpy 2
     * has it in numpy._core, 1.x in numpy.core) */
    PyObject *ma = PyImport_ImportModule("numpy._core.multiarray");
    if (!ma) {
        PyErr_Clear();
        ma = PyImport_ImportModule("numpy.core.multiarray");
    }
    PyObject *gh = ma ? PyObject_GetAttrString(ma, "get_handler_name") : NULL;
    Py_XDECREF(ma);
    PyErr_Clear();
    if (!gh) {
        *why = "numpy is older than 1.22 (no NEP 49 data-memory handlers)";
        return NULL;
    }
    Py_DECREF(gh);
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++) {
        PyObject *m = PyImport_ImportModule(mods[i]);
        if (!m) {
            PyErr_Clear();
            continue;
        }
        PyObject *cap = PyObject_GetAttrString(m, "_ARRAY_API");
        Py_DECREF(m);
        if (!cap) {
            PyErr_Clear();
            continue;
        }
        void **api = PyCapsule_IsValid(cap, NULL) ? PyCapsule_GetPointer(cap, NULL) : NULL;
        Py_DECREF(cap);
        PyErr_Clear();
        if (api) return api;
    }
    *why = "numpy's C API (_ARRAY_API) was not found";
    return NULL;
}

static void mh_np_capsule_free(PyObject *cap) {
    mh_np_handler_t *h = PyCapsule_GetPointer(cap, MH_NP_CAPSULE);
    if (!h) {
        PyErr_Clear();
        return;
    }
    mh_np_ctx_t *c = h->allocator.ctx;
    Py_XDECREF(c->prev_capsule);
    PyMem_RawFree(c);
    PyMem_RawFree(h);
}

#define MH_NP_DEFAULT 306 /* PyDataMem_DefaultHandler (a PyObject **) */

/* Install: 1 with *scope ("all threads": numpy's default handler patched;
 * "this context": our handler set over the current one), 0 with *why
 * (numpy absent or too old), -1 with an exception.  all_threads: patch
 * the default handler where the current context uses it and it is
 * writable; else, or when not asked, the context's handler. */
static int mh_np_install(int all_threads, const char **why, const char **scope) {
    void **api = mh_np_api(why);
    if (!api) return 0;
    /* function pointers stored as void * in numpy's table (POSIX allows
     * the conversion; memcpy keeps ISO C quiet about it) */
    memcpy(&mh_np_set, &api[MH_NP_SET], sizeof mh_np_set);
    memcpy(&mh_np_get, &api[MH_NP_GET], sizeof mh_np_get);
    PyObject *cur = mh_np_get();
    if (!cur) return -1;
    mh_np_handler_t *prev = PyCapsule_GetPointer(cur, MH_NP_CAPSULE);
    if (!prev) {
        Py_DECREF(cur);
        return -1;
    }
    if (prev->version != 1) {
        Py_DECREF(cur);
        *why = "numpy's current data-memory handler is not of NEP 49's version 1";
        return 0;
    }
    PyObject *default_cap = *(PyObject **)api[MH_NP_DEFAULT];
    if (all_threads && cur == default_cap && mh_writable(prev, sizeof *prev)) {
        mh_npd_orig = prev->allocator;
        mh_np_allocator_t ours = {prev->allocator.ctx, mh_npd_malloc, mh_npd_calloc,
                                  mh_npd_realloc, mh_npd_free};
        mh_npd = prev;
        mh_npd_store(prev, &ours);
        Py_DECREF(cur); /* numpy's own, alive as long as numpy */
        *scope = "all threads";
        return 1;
    }
    *scope = "this context";
    mh_np_handler_t *h = PyMem_RawCalloc(1, sizeof *h);
    mh_np_ctx_t *c = PyMem_RawCalloc(1, sizeof *c);
    if (!h || !c) {
        PyMem_RawFree(h);
        PyMem_RawFree(c);
        Py_DECREF(cur);
        PyErr_NoMemory();
        return -1;
    }
    c->prev = prev->allocator;
    c->prev_capsule = cur; /* owns the reference */
    /* "spanscope+" then as much of the previous name as fits */
    memcpy(h->name, "spanscope+", 10);
    size_t pl = strnlen(prev->name, sizeof prev->name);
    if (pl > sizeof h->name - 11) pl = sizeof h->name - 11;
    memcpy(h->name + 10, prev->name, pl);
    h->name[10 + pl] = '\0';
    h->version = 1;
    h->allocator = (mh_np_allocator_t){c, mh_np_malloc, mh_np_calloc, mh_np_realloc, mh_np_free};
    PyObject *cap = PyCapsule_New(h, MH_NP_CAPSULE, mh_np_capsule_free);
    if (!cap) {
        Py_DECREF(cur);
        PyMem_RawFree(h);
        PyMem_RawFree(c);
        return -1;
    }
    PyObject *old = mh_np_set(cap);
    if (!old) {
        Py_DECREF(cap);
        return -1;
    }
    mh_np_restore = old;
    mh_np_ours = cap;
    return 1;
}

/* Put the previous handler back: 1, or 0 when the current context's
 * handler is not ours (installed from another thread or context, or
 * replaced since: left as it is); -1 with an exception.  A patched default
 * handler gets its functions back, and the blocks its table still holds
 * are dropped (their count and bytes added to *blocks, *bytes). */
static int mh_np_uninstall(size_t *blocks, size_t *bytes) {
    if (mh_npd) {
        mh_npd_store(mh_npd, &mh_npd_orig);
        mh_npd = NULL;
        mh_clear(mh_npdt, blocks, bytes);
        return 1;
    }
    PyObject *cur = mh_np_get();
    if (!cur) return -1;
    int ours = cur == mh_np_ours;
    Py_DECREF(cur);
    int rc = 0;
    if (ours) {
        PyObject *was = mh_np_set(mh_np_restore);
        if (!was) return -1;
        Py_DECREF(was);
        rc = 1;
    }
    Py_CLEAR(mh_np_restore);
    Py_CLEAR(mh_np_ours); /* arrays still holding it keep it alive */
    return rc;
}

/* ======================================================================== */
/* The module's functions (registered in _ext.c)                             */
/* ======================================================================== */

static int mh_numpy_on;

/* mem_hooks_install(python=True, numpy=True) */
PyObject *sps__py_mem_hooks_install(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"python", "numpy", NULL};
    int python = 1, numpy = 1, all_threads = 1;
    PyObject *np_arg = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|pO:mem_hooks_install", kwlist, &python,
                                     &np_arg))
        return NULL;
    if (np_arg && PyUnicode_Check(np_arg)) {
        if (PyUnicode_CompareWithASCIIString(np_arg, "context") != 0)
            return PyErr_Format(PyExc_ValueError,
                                "mem_hooks_install: numpy must be True, False or 'context', "
                                "not %R",
                                np_arg);
        all_threads = 0;
    } else if (np_arg) {
        numpy = PyObject_IsTrue(np_arg);
        if (numpy < 0) return NULL;
    }
#ifdef Py_GIL_DISABLED
    (void)python;
    (void)numpy;
    return PyErr_Format(PyExc_RuntimeError,
                        "spanscope's memory hooks are not supported on a free-threaded "
                        "CPython (Py_GIL_DISABLED): the object allocator must stay mimalloc's "
                        "there and is swapped under running threads; use a standard build");
#else
    if (mh_python_on || mh_numpy_on)
        return PyErr_Format(PyExc_RuntimeError,
                            "spanscope's memory hooks are already installed "
                            "(mem_hooks_uninstall() first)");
    if (!python && !numpy)
        return PyErr_Format(PyExc_ValueError,
                            "mem_hooks_install: nothing to install (python and numpy both false)");
    if (python) {
        /* tracemalloc restores, when it stops, the allocators it found when
         * it started: started before ours, it would take ours with it */
        PyObject *tm = PyImport_ImportModule("tracemalloc");
        PyObject *on = tm ? PyObject_CallMethod(tm, "is_tracing", NULL) : NULL;
        Py_XDECREF(tm);
        if (!on) return NULL;
        int tracing = PyObject_IsTrue(on);
        Py_DECREF(on);
        if (tracing < 0) return NULL;
        if (tracing)
            return PyErr_Format(PyExc_RuntimeError,
                                "tracemalloc is tracing: stopping it would remove spanscope's "
                                "memory hooks too; install spanscope's hooks first "
                                "(tracemalloc then chains them) or stop tracemalloc");
    }
    mh_below = mh_detect_below();
    const char *np_why = NULL, *np_scope = NULL;
    if (numpy) {
        int rc = mh_np_install(all_threads, &np_why, &np_scope);
        if (rc < 0) return NULL;
        mh_numpy_on = rc;
    } else {
        np_why = "not asked";
    }
    if (python) {
        if (!mh_atfork_done) {
            pthread_atfork(mh_prefork, mh_postfork, mh_postfork);
            mh_atfork_done = 1;
        }
        /* the previous allocators first, then ours over all three: a hook
         * must not see a domain whose previous allocator is not yet set */
        for (int d = 0; d < 3; d++) PyMem_GetAllocator(mh_domains[d], &mh_prev[d]);
        for (int d = 0; d < 3; d++) {
            PyMemAllocatorEx a;
            mh_ours(d, &a);
            PyMem_SetAllocator(mh_domains[d], &a);
        }
        mh_python_on = 1;
    }
    PyObject *r = Py_BuildValue("{s:O,s:O,s:s,s:z,s:O}", "python",
                                mh_python_on ? Py_True : Py_False, "numpy",
                                mh_numpy_on ? Py_True : Py_False, "numpy_reason",
                                np_why ? np_why : "installed", "numpy_scope",
                                mh_numpy_on ? np_scope : NULL, "malloc_counted",
                                mh_below ? Py_True : Py_False);
    return r;
#endif
}

/* mem_hooks_uninstall() */
PyObject *sps__py_mem_hooks_uninstall(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    if (!mh_python_on && !mh_numpy_on)
        return PyErr_Format(PyExc_RuntimeError, "spanscope's memory hooks are not installed");
    size_t blocks = 0, bytes = 0;
    if (mh_python_on) {
        for (int d = 0; d < 3; d++) {
            PyMemAllocatorEx cur, ours;
            PyMem_GetAllocator(mh_domains[d], &cur);
            mh_ours(d, &ours);
            if (memcmp(&cur, &ours, sizeof cur) != 0)
                return PyErr_Format(PyExc_RuntimeError,
                                    "another allocator hook (tracemalloc? memray?) was installed "
                                    "over spanscope's on Python's %s domain: stop it first "
                                    "(hooks stop in the reverse order of their start)",
                                    mh_domain_names[d]);
        }
        for (int d = 0; d < 3; d++) PyMem_SetAllocator(mh_domains[d], &mh_prev[d]);
        mh_python_on = 0;
        mh_clear(mh_py, &blocks, &bytes);
    }
    int np_restored = 0;
    size_t np_blocks = 0, np_bytes = 0;
    if (mh_numpy_on) {
        np_restored = mh_np_uninstall(&np_blocks, &np_bytes);
        mh_numpy_on = 0;
        if (np_restored < 0) return NULL;
    }
    return Py_BuildValue("{s:n,s:n,s:O,s:n,s:n,s:n}", "python_blocks_dropped",
                         (Py_ssize_t)blocks, "python_bytes_dropped", (Py_ssize_t)bytes,
                         "numpy_restored", np_restored ? Py_True : Py_False,
                         "numpy_blocks_dropped", (Py_ssize_t)np_blocks, "numpy_bytes_dropped",
                         (Py_ssize_t)np_bytes, "untracked",
                         (Py_ssize_t)atomic_load(&mh_untracked));
}

/* mem_hooks_active() */
PyObject *sps__py_mem_hooks_active(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyBool_FromLong(mh_python_on || mh_numpy_on);
}

/* mem_thread_counts() */
PyObject *sps__py_mem_thread_counts(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    sps_mem_counts_t c;
    sps_mem_thread_counts(&c);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:L}", "alloc_bytes",
                         (unsigned long long)c.alloc_bytes, "free_bytes",
                         (unsigned long long)c.free_bytes, "allocs",
                         (unsigned long long)c.allocs, "frees", (unsigned long long)c.frees,
                         "live_bytes", (long long)c.live_bytes);
}
