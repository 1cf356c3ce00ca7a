/* gpu_timing.c -- a CUDA event pair per region call (issue 38 part 4;
 * scope-profiler's use_gpu_timing; docs/device.md "gpu_timing").  The
 * interface and its rules: gpu_timing.h.
 *
 * libcudart is loaded at run time with dlopen, so the build needs no CUDA;
 * the few types and constants used are declared here with the values of
 * CUDA's driver_types.h (stable since CUDA 4).
 *
 * The emitter (core/emit.h) runs on the recording thread: begin takes two
 * events from its device's pool (one lock), records the first on the
 * stream and pushes the pair on the thread's stack, then reads the host
 * clock (the core's begin timestamp comes just after); end reads the host
 * clock (the core's end timestamp came just before), pops the pair of its
 * region, records the second event and queues the pair as pending.  Every
 * RESOLVE_EVERY ends, the oldest pending pairs are checked with
 * cudaEventQuery and those complete are resolved (cudaEventElapsedTime)
 * into results, their events back in the pool; sps__gpu_timing_take
 * resolves the rest (cudaEventSynchronize) for the finalize.
 *
 * Locks: g_lock guards the pools, the pending queue, the results and the
 * list of thread states; a thread's stack is its own (read by others only
 * for counts).  CUDA calls made under g_lock are the non-blocking ones
 * (cudaEventQuery, cudaEventElapsedTime on a complete pair) and, in take
 * with sync, cudaEventSynchronize: the recording threads wait for the
 * finalize then, as they would for the device. */
#include "ext/gpu_timing.h"

#include "api/device.h"
#include "core/core.h"
#include "core/emit.h"

#include <dlfcn.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- CUDA's runtime API, as far as used (driver_types.h) ----------------- */
typedef int cudart_err_t;           /* cudaError_t */
typedef struct CUevent_st *cu_event_t;   /* cudaEvent_t */
typedef struct CUstream_st *cu_stream_t; /* cudaStream_t */
enum {
    CU_SUCCESS = 0,            /* cudaSuccess */
    CU_ERROR_NOT_READY = 600,  /* cudaErrorNotReady */
    CU_EVENT_DEFAULT = 0       /* cudaEventDefault: timing on, no blocking sync */
};
#define CU_STREAM_PER_THREAD ((cu_stream_t)0x2) /* cudaStreamPerThread */

#define MAX_DEVICES 64
#define RESOLVE_EVERY 64 /* ends between two lazy resolutions */
#define RESOLVE_MAX 256  /* pending pairs one lazy resolution checks at most */

static struct {
    void *h;
    char path[640];
    cudart_err_t (*event_create)(cu_event_t *, unsigned);
    cudart_err_t (*event_record)(cu_event_t, cu_stream_t);
    cudart_err_t (*event_query)(cu_event_t);
    cudart_err_t (*event_sync)(cu_event_t);
    cudart_err_t (*event_elapsed)(float *, cu_event_t, cu_event_t);
    cudart_err_t (*event_destroy)(cu_event_t);
    cudart_err_t (*device_count)(int *);
    const char *(*error_string)(cudart_err_t);
    cudart_err_t (*get_device)(int *); /* optional: device 0 without it */
} L;
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;

/* One region call: its events, its device, its thread and region, the host
 * times around it. */
typedef struct pair {
    cu_event_t a, b; /* a NULL: recording failed (the pair gives no result) */
    int dev;
    int32_t tid;
    uint32_t region;
    uint64_t t0, t1;
} pair_t;

/* A recording thread's state: its stack of open pairs. */
typedef struct thr {
    pair_t *stack;
    size_t n, cap;
    unsigned gen; /* g_gen when its pairs were begun */
    struct thr *next, *prev;
} thr_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_running;          /* acquire/release */
static unsigned g_flags;       /* SPS__GPU_*, set before g_running (atomic) */
static unsigned g_gen = 1;     /* bumped by every start: older open pairs are dropped */
static uint64_t g_ends;        /* ends since the last lazy resolution (atomic) */
/* under g_lock */
static cu_event_t *g_pool[MAX_DEVICES];
static size_t g_pool_n[MAX_DEVICES], g_pool_cap[MAX_DEVICES];
static pair_t *g_pend; /* a FIFO: [g_pend_head, g_pend_n) live */
static size_t g_pend_head, g_pend_n, g_pend_cap;
static sps__gpu_pair_t *g_res;
static size_t g_res_n, g_res_cap;
static thr_t *g_threads;
/* counts (atomic) */
static uint64_t g_created, g_destroyed, g_open, g_resolved, g_errors, g_queries;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static __thread thr_t *t_thr;
static __thread int32_t t_tid;
static __thread unsigned t_tid_fork; /* g_fork_gen when t_tid was read */
static unsigned g_fork_gen;          /* bumped in a fork's child: tids change */

static const sps__emit_ops_t g_ops;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int32_t my_tid(void) {
    unsigned f = __atomic_load_n(&g_fork_gen, __ATOMIC_RELAXED);
    if (SPS__UNLIKELY(!t_tid || t_tid_fork != f)) {
        t_tid = (int32_t)syscall(SYS_gettid);
        t_tid_fork = f;
    }
    return t_tid;
}

static void count(uint64_t *c, uint64_t v) { __atomic_add_fetch(c, v, __ATOMIC_RELAXED); }

static const char *err_str(cudart_err_t e) {
    const char *s = L.error_string ? L.error_string(e) : NULL;
    return s ? s : "unknown CUDA error";
}

/* ---- loading ------------------------------------------------------------- */

static const char *const lib_names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                        "libcudart.so.11.0"};
#define N_NAMES (sizeof lib_names / sizeof lib_names[0])

static void *try_open(const char *path, int flags) {
    void *h = dlopen(path, flags);
    if (h) snprintf(L.path, sizeof L.path, "%s", path);
    return h;
}

static void *open_in_dir(const char *dir) {
    char p[600];
    for (size_t i = 0; i < N_NAMES; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, lib_names[i]);
        void *h = try_open(p, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

/* The CUDA paths docs/device.md lists for libcupti (src/ext/cupti.c's
 * find_lib), for libcudart: its directories only. */
static void *find_lib(void) {
    /* one the process has loaded already (torch's, cupy's): the same runtime */
    for (size_t i = 0; i < N_NAMES; i++) {
        void *h = try_open(lib_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) return h;
    }
    for (size_t i = 0; i < N_NAMES; i++) {
        void *h = try_open(lib_names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    static const char *const subs[] = {"lib64", "lib", "targets/x86_64-linux/lib"};
    char d[512];
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home) home = getenv("CUDA_PATH");
    for (int pass = 0; pass < 2; pass++) {
        const char *root = pass ? "/usr/local/cuda" : home;
        if (!root || !*root) continue;
        for (size_t j = 0; j < sizeof subs / sizeof subs[0]; j++) {
            snprintf(d, sizeof d, "%s/%s", root, subs[j]);
            void *h = open_in_dir(d);
            if (h) return h;
        }
    }
    glob_t g;
    void *h = NULL;
    if (glob("/usr/local/cuda-*", GLOB_ONLYDIR, NULL, &g) == 0) {
        for (size_t i = g.gl_pathc; i-- > 0 && !h;)
            for (size_t j = 0; j < sizeof subs / sizeof subs[0] && !h; j++) {
                snprintf(d, sizeof d, "%s/%s", g.gl_pathv[i], subs[j]);
                h = open_in_dir(d);
            }
        globfree(&g);
    }
    return h;
}

#define SYM(field, name, required)                                                  \
    do {                                                                            \
        void *sym_ = dlsym(h, name);                                                \
        memcpy(&L.field, &sym_, sizeof sym_);                                       \
        if (!L.field && (required)) {                                               \
            missing = name;                                                         \
            goto bad;                                                               \
        }                                                                           \
    } while (0)

int sps__gpu_timing_load(void) {
    pthread_mutex_lock(&g_load_lock);
    if (L.h) {
        pthread_mutex_unlock(&g_load_lock);
        return 0;
    }
    const char *missing = NULL;
    void *h;
    const char *env = getenv("SPANSCOPE_CUDART_LIB");
    if (env && *env) {
        h = try_open(env, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            char why[400];
            snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
            pthread_mutex_unlock(&g_load_lock);
            return sps__err_fail(SPS_ENOTSUP, "gpu_timing: cannot load SPANSCOPE_CUDART_LIB=%s: %s",
                                 env, why);
        }
    } else {
        h = find_lib();
        if (!h) {
            pthread_mutex_unlock(&g_load_lock);
            return sps__err_fail(SPS_ENOTSUP,
                                 "gpu_timing: libcudart not found (tried libcudart.so, .so.13, "
                                 ".so.12, .so.11.0 on the loader's path, $CUDA_HOME, "
                                 "/usr/local/cuda and /usr/local/cuda-*); install the CUDA "
                                 "runtime or set SPANSCOPE_CUDART_LIB to its path");
        }
    }
    SYM(event_create, "cudaEventCreateWithFlags", 1);
    SYM(event_record, "cudaEventRecord", 1);
    SYM(event_query, "cudaEventQuery", 1);
    SYM(event_sync, "cudaEventSynchronize", 1);
    SYM(event_elapsed, "cudaEventElapsedTime", 1);
    SYM(event_destroy, "cudaEventDestroy", 1);
    SYM(device_count, "cudaGetDeviceCount", 1);
    SYM(error_string, "cudaGetErrorString", 1);
    SYM(get_device, "cudaGetDevice", 0);
    L.h = h;
    pthread_mutex_unlock(&g_load_lock);
    return 0;
bad: {
    char path[640];
    snprintf(path, sizeof path, "%s", L.path);
    dlclose(h);
    memset(&L, 0, sizeof L);
    pthread_mutex_unlock(&g_load_lock);
    return sps__err_fail(SPS_ENOTSUP, "gpu_timing: %s lacks %s (not a CUDA runtime library)",
                         path, missing);
}
}

const char *sps__gpu_timing_lib_path(void) {
    pthread_mutex_lock(&g_load_lock);
    const char *p = L.h ? L.path : NULL;
    pthread_mutex_unlock(&g_load_lock);
    return p;
}

int sps__gpu_timing_available(void) {
    int rc = sps__gpu_timing_load();
    if (rc) return rc;
    int n = 0;
    cudart_err_t e = L.device_count(&n);
    if (e != CU_SUCCESS)
        return sps__err_fail(SPS_ENOTSUP, "gpu_timing: no CUDA device: cudaGetDeviceCount: %s (%d)",
                             err_str(e), e);
    if (n <= 0)
        return sps__err_fail(SPS_ENOTSUP, "gpu_timing: no CUDA device (cudaGetDeviceCount found 0)");
    return 0;
}

/* ---- the pools, the queue, the results (under g_lock) -------------------- */

/* An event of device dev from its pool; made when the pool is empty (the
 * lock is released around cudaEventCreateWithFlags).  NULL on failure. */
static cu_event_t pool_take_locked(int dev) {
    if (g_pool_n[dev]) return g_pool[dev][--g_pool_n[dev]];
    pthread_mutex_unlock(&g_lock);
    cu_event_t e = NULL;
    cudart_err_t rc = L.event_create(&e, CU_EVENT_DEFAULT);
    pthread_mutex_lock(&g_lock);
    if (rc != CU_SUCCESS || !e) {
        count(&g_errors, 1);
        return NULL;
    }
    count(&g_created, 1);
    return e;
}

static void event_destroy(cu_event_t e) {
    if (L.event_destroy(e) != CU_SUCCESS) count(&g_errors, 1);
    count(&g_destroyed, 1);
}

static void pool_give_locked(int dev, cu_event_t e) {
    if (!e) return;
    if (g_pool_n[dev] == g_pool_cap[dev]) {
        size_t cap = g_pool_cap[dev] ? g_pool_cap[dev] * 2 : 64;
        cu_event_t *p = realloc(g_pool[dev], cap * sizeof *p);
        if (!p) { /* keep going without pooling this one */
            event_destroy(e);
            return;
        }
        g_pool[dev] = p;
        g_pool_cap[dev] = cap;
    }
    g_pool[dev][g_pool_n[dev]++] = e;
}

static void pair_release_locked(pair_t *p) {
    pool_give_locked(p->dev, p->a);
    pool_give_locked(p->dev, p->b);
    p->a = p->b = NULL;
}

static int result_push_locked(const pair_t *p, int64_t dev_ns) {
    if (g_res_n == g_res_cap) {
        size_t cap = g_res_cap ? g_res_cap * 2 : 256;
        sps__gpu_pair_t *r = realloc(g_res, cap * sizeof *r);
        if (!r) return SPS_ENOMEM;
        g_res = r;
        g_res_cap = cap;
    }
    g_res[g_res_n++] = (sps__gpu_pair_t){p->t0, p->t1, dev_ns, p->tid, p->region};
    return 0;
}

/* Resolves pending pair p: 1 done (result kept, events pooled), 0 not
 * complete yet (only without sync). */
static int resolve_locked(pair_t *p, int sync) {
    cudart_err_t e;
    if (sync) {
        e = L.event_sync(p->b);
    } else {
        count(&g_queries, 1);
        e = L.event_query(p->b);
        if (e == CU_ERROR_NOT_READY) return 0;
    }
    int64_t ns = -1;
    if (e == CU_SUCCESS) {
        float ms = 0;
        e = L.event_elapsed(&ms, p->a, p->b);
        if (e == CU_SUCCESS && ms >= 0) ns = (int64_t)llround((double)ms * 1e6);
    }
    if (ns < 0) count(&g_errors, 1);
    if (result_push_locked(p, ns)) count(&g_errors, 1); /* out of memory: this one is lost */
    count(&g_resolved, 1);
    pair_release_locked(p);
    return 1;
}

/* Resolves pending pairs from the oldest: with sync all of them; without,
 * up to max of them, stopping at the first one not complete. */
static void resolve_pending_locked(int sync, size_t max) {
    size_t done = 0;
    while (g_pend_head < g_pend_n && (sync || done < max)) {
        if (!resolve_locked(&g_pend[g_pend_head], sync)) break;
        g_pend_head++;
        done++;
    }
    if (g_pend_head == g_pend_n) g_pend_head = g_pend_n = 0;
}

static int pending_push_locked(const pair_t *p) {
    if (g_pend_n == g_pend_cap) {
        if (g_pend_head) { /* slide the live part down first */
            memmove(g_pend, g_pend + g_pend_head, (g_pend_n - g_pend_head) * sizeof *g_pend);
            g_pend_n -= g_pend_head;
            g_pend_head = 0;
        }
        if (g_pend_n == g_pend_cap) {
            size_t cap = g_pend_cap ? g_pend_cap * 2 : 256;
            pair_t *q = realloc(g_pend, cap * sizeof *q);
            if (!q) return SPS_ENOMEM;
            g_pend = q;
            g_pend_cap = cap;
        }
    }
    g_pend[g_pend_n++] = *p;
    return 0;
}

/* ---- thread states ------------------------------------------------------- */

/* Gives the events of t's open pairs back (under g_lock). */
static void thr_drop_locked(thr_t *t) {
    for (size_t i = 0; i < t->n; i++) pair_release_locked(&t->stack[i]);
    __atomic_sub_fetch(&g_open, t->n, __ATOMIC_RELAXED);
    t->n = 0;
}

static void thr_exit(void *arg) {
    thr_t *t = arg;
    pthread_mutex_lock(&g_lock);
    thr_drop_locked(t);
    if (t->prev) t->prev->next = t->next;
    else g_threads = t->next;
    if (t->next) t->next->prev = t->prev;
    pthread_mutex_unlock(&g_lock);
    free(t->stack);
    free(t);
    if (t_thr == t) t_thr = NULL;
}

static void on_fork_child(void) { __atomic_add_fetch(&g_fork_gen, 1, __ATOMIC_RELAXED); }

static void key_make(void) {
    pthread_key_create(&g_key, thr_exit);
    pthread_atfork(NULL, NULL, on_fork_child);
}

static thr_t *thr_get(void) {
    thr_t *t = t_thr;
    if (SPS__LIKELY(t)) return t;
    pthread_once(&g_key_once, key_make);
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_lock(&g_lock);
    t->next = g_threads;
    if (g_threads) g_threads->prev = t;
    g_threads = t;
    pthread_mutex_unlock(&g_lock);
    pthread_setspecific(g_key, t);
    t_thr = t;
    return t;
}

/* ---- the emitter --------------------------------------------------------- */

static cu_stream_t stream_of(unsigned flags) {
    return flags & SPS__GPU_PER_THREAD_STREAM ? CU_STREAM_PER_THREAD : NULL;
}

static void gt_begin(sps_region_t r) {
    if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE)) return;
    /* no session, or paused: the call is not recorded, so not timed either */
    if (__atomic_load_n(&sps__paused, __ATOMIC_RELAXED) || sps__state_load() == SPS__OFF) return;
    thr_t *t = thr_get();
    if (!t) {
        count(&g_errors, 1);
        return;
    }
    unsigned gen = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
    if (SPS__UNLIKELY(t->gen != gen)) { /* pairs of an earlier start: dropped */
        if (t->n) {
            pthread_mutex_lock(&g_lock);
            thr_drop_locked(t);
            pthread_mutex_unlock(&g_lock);
        }
        t->gen = gen;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        pair_t *s = realloc(t->stack, cap * sizeof *s);
        if (!s) {
            count(&g_errors, 1);
            return;
        }
        t->stack = s;
        t->cap = cap;
    }
    int dev = 0;
    if (L.get_device && (L.get_device(&dev) != CU_SUCCESS || dev < 0 || dev >= MAX_DEVICES)) {
        count(&g_errors, 1);
        dev = 0;
    }
    pair_t *p = &t->stack[t->n];
    memset(p, 0, sizeof *p);
    p->dev = dev;
    p->tid = my_tid();
    p->region = r;
    pthread_mutex_lock(&g_lock);
    p->a = pool_take_locked(dev);
    p->b = p->a ? pool_take_locked(dev) : NULL;
    if (p->a && !p->b) pair_release_locked(p);
    pthread_mutex_unlock(&g_lock);
    if (p->a && L.event_record(p->a, stream_of(__atomic_load_n(&g_flags, __ATOMIC_RELAXED))) !=
                    CU_SUCCESS) {
        count(&g_errors, 1);
        pthread_mutex_lock(&g_lock);
        pair_release_locked(p);
        pthread_mutex_unlock(&g_lock);
    }
    t->n++;
    count(&g_open, 1);
    p->t0 = now_ns(); /* the core's begin timestamp comes next */
}

static void gt_end(sps_region_t r) {
    uint64_t t1 = now_ns(); /* the core's end timestamp came just before */
    thr_t *t = t_thr;
    if (!t || !t->n) return; /* its begin was not timed */
    if (t->gen != __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE)) return; /* an earlier start's */
    size_t i = t->n;
    while (i > 0 && t->stack[i - 1].region != r) i--;
    if (!i) return; /* not begun while timing */
    pair_t p = t->stack[i - 1];
    size_t gone = t->n - (i - 1); /* the pair, and any left open inside it */
    unsigned flags = __atomic_load_n(&g_flags, __ATOMIC_RELAXED);
    int ok = p.a != NULL;
    if (ok && L.event_record(p.b, stream_of(flags)) != CU_SUCCESS) {
        count(&g_errors, 1);
        ok = 0;
    }
    if (ok && flags & SPS__GPU_SYNC_ON_EXIT && L.event_sync(p.b) != CU_SUCCESS) count(&g_errors, 1);
    p.t1 = t1;
    pthread_mutex_lock(&g_lock);
    for (size_t j = i; j < t->n; j++) pair_release_locked(&t->stack[j]); /* unbalanced: dropped */
    t->n = i - 1;
    __atomic_sub_fetch(&g_open, gone, __ATOMIC_RELAXED);
    if (!ok) {
        pair_release_locked(&p);
    } else if (pending_push_locked(&p)) {
        count(&g_errors, 1);
        pair_release_locked(&p);
    }
    if (flags & SPS__GPU_SYNC_ON_EXIT) {
        resolve_pending_locked(0, RESOLVE_MAX);
    } else if (__atomic_add_fetch(&g_ends, 1, __ATOMIC_RELAXED) % RESOLVE_EVERY == 0) {
        resolve_pending_locked(0, RESOLVE_MAX);
    }
    pthread_mutex_unlock(&g_lock);
}

static const sps__emit_ops_t g_ops = {"gpu_timing", gt_begin, gt_end};

/* ---- start, stop, take --------------------------------------------------- */

int sps__gpu_timing_start(unsigned flags) {
    if (flags & ~(SPS__GPU_SYNC_ON_EXIT | SPS__GPU_PER_THREAD_STREAM))
        return sps__err_fail(SPS_EINVAL, "gpu_timing: unknown flags 0x%x", flags);
    int rc = sps__gpu_timing_available();
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    if (__atomic_load_n(&g_running, __ATOMIC_ACQUIRE)) {
        rc = __atomic_load_n(&g_flags, __ATOMIC_RELAXED) == flags ? 0
                              : sps__err_fail(SPS_EACTIVE, "gpu_timing: already running with "
                                                           "other settings (stop it first)");
        pthread_mutex_unlock(&g_lock);
        return rc;
    }
    __atomic_store_n(&g_flags, flags, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_running, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
    rc = sps__emit_set(&g_ops, 1);
    if (rc) {
        __atomic_store_n(&g_running, 0, __ATOMIC_RELEASE);
        return sps__err_fail(rc, "gpu_timing: the emitter table is full (%d emitters)",
                             SPS__EMIT_MAX);
    }
    return 0;
}

int sps__gpu_timing_stop(void) {
    if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE)) return 0;
    sps__emit_set(&g_ops, 0);
    __atomic_store_n(&g_running, 0, __ATOMIC_RELEASE);
    return 0;
}

int sps__gpu_timing_running(void) { return __atomic_load_n(&g_running, __ATOMIC_ACQUIRE); }

int sps__gpu_timing_take(int sync, sps__gpu_pair_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&g_load_lock);
    int loaded = L.h != NULL;
    pthread_mutex_unlock(&g_load_lock);
    if (!loaded) return 0;
    pthread_mutex_lock(&g_lock);
    resolve_pending_locked(sync, sync ? 0 : SIZE_MAX);
    if (g_res_n) {
        *out = g_res;
        *n = g_res_n;
        g_res = NULL;
        g_res_n = g_res_cap = 0;
    }
    pthread_mutex_unlock(&g_lock);
    return 0;
}

void sps__gpu_timing_stats(sps__gpu_stats_t *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&g_lock);
    for (int d = 0; d < MAX_DEVICES; d++) s->pooled += g_pool_n[d];
    s->pending = g_pend_n - g_pend_head;
    s->results = g_res_n;
    pthread_mutex_unlock(&g_lock);
    s->created = __atomic_load_n(&g_created, __ATOMIC_RELAXED);
    s->destroyed = __atomic_load_n(&g_destroyed, __ATOMIC_RELAXED);
    s->open = __atomic_load_n(&g_open, __ATOMIC_RELAXED);
    s->resolved = __atomic_load_n(&g_resolved, __ATOMIC_RELAXED);
    s->errors = __atomic_load_n(&g_errors, __ATOMIC_RELAXED);
    s->queries = __atomic_load_n(&g_queries, __ATOMIC_RELAXED);
}

int sps__gpu_timing_unload(void) {
    sps__gpu_timing_stop();
    if (__atomic_load_n(&g_open, __ATOMIC_RELAXED))
        return sps__err_fail(SPS_EACTIVE, "gpu_timing: pairs are still open on some thread");
    pthread_mutex_lock(&g_load_lock);
    if (!L.h) {
        pthread_mutex_unlock(&g_load_lock);
        return 0;
    }
    pthread_mutex_lock(&g_lock);
    resolve_pending_locked(1, 0);
    for (int d = 0; d < MAX_DEVICES; d++) {
        for (size_t i = 0; i < g_pool_n[d]; i++) event_destroy(g_pool[d][i]);
        free(g_pool[d]);
        g_pool[d] = NULL;
        g_pool_n[d] = g_pool_cap[d] = 0;
    }
    free(g_pend);
    g_pend = NULL;
    g_pend_head = g_pend_n = g_pend_cap = 0;
    free(g_res);
    g_res = NULL;
    g_res_n = g_res_cap = 0;
    __atomic_store_n(&g_ends, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_lock);
    dlclose(L.h);
    memset(&L, 0, sizeof L);
    pthread_mutex_unlock(&g_load_lock);
    return 0;
}

/* ---- the device collector SPS_DEVICE_EVENTS (api/device.h) -------------- */

/* Hands every resolved pair to the next finalize (sync: waits for those
 * whose end event the device has not reached).  Pairs CUDA refused to time
 * are left out (counted in the stats' errors). */
static int hand_over(int sync) {
    sps__gpu_pair_t *p;
    size_t n;
    int rc = sps__gpu_timing_take(sync, &p, &n);
    if (rc || !n) return rc;
    sps__device_pair_t *d = malloc(n * sizeof *d);
    if (!d) {
        free(p);
        return SPS_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].device_ns < 0) continue;
        d[k] = (sps__device_pair_t){.tid = p[i].tid, .region = p[i].region,
                                    .t0_ns = (int64_t)p[i].host_begin_ns,
                                    .t1_ns = (int64_t)p[i].host_end_ns,
                                    .device_ns = p[i].device_ns};
        k++;
    }
    free(p);
    rc = k ? sps__device_pairs_add(d, k) : 0;
    free(d);
    return rc;
}

/* SPANSCOPE_GPU_SYNC_ON_EXIT: scope-profiler's gpu_sync_on_exit (the public
 * sps_device_start takes no flags; the Python face sets it around its
 * start).  1/true/yes/on turn it on. */
static unsigned env_flags(void) {
    const char *v = getenv("SPANSCOPE_GPU_SYNC_ON_EXIT");
    if (!v) return 0;
    static const char *const on[] = {"1", "true", "yes", "on", "TRUE", "True", "YES", "ON"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
        if (!strcmp(v, on[i])) return SPS__GPU_SYNC_ON_EXIT;
    return 0;
}

static int dev_available(void) { return sps__gpu_timing_available(); }
static int dev_start(void) { return sps__gpu_timing_start(env_flags()); }
static int dev_stop(void) {
    sps__gpu_timing_stop();
    return hand_over(1);
}
static int dev_take(sps__devbatch_t *b) {
    (void)b; /* no /device rows: the pairs go through sps__device_pairs_add */
    return hand_over(1);
}

static const sps__device_ops_t g_dev_ops = {"cuda_events", dev_available, dev_start, dev_stop,
                                            dev_take};

__attribute__((constructor)) static void gpu_timing_provide(void) {
    sps__device_provide(SPS_DEVICE_EVENTS, &g_dev_ops);
}

/* Named by CMake's --undefined for the static library, so that a static
 * link keeps this object and its constructor (as emit_nvtx.c's); always
 * 1: the module needs nothing at build time. */
int sps__gpu_timing_built(void);
int sps__gpu_timing_built(void) { return 1; }
