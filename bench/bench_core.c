/* bench_core.c -- micro and macro benchmarks of spanscope's hot path.
 *
 * Uses only the public API (<spanscope.h>).  One subcommand per run, so that
 * each measurement of resident memory starts from a fresh process; every run
 * prints one JSON object on stdout.  bench/run.py drives it, repeats the runs
 * and prints the table (`make bench`).
 *
 *   bench_core info
 *   bench_core floor     [--n PAIRS] [--reps R]
 *   bench_core pair      --mode events|disabled|aggregate|scope|paused|memory|
 *                               memory_alloc|counters|crash|nocrash|emit_nvtx
 *                        [--threads T] [--n PAIRS] [--reps R]
 *   bench_core mem       [--n CALLS]
 *   bench_core disk      --shape loop|nested|varied [--n CALLS] --out FILE.h5
 *   bench_core big       [--n CALLS] --out FILE.h5 [--finalize 0|1] [--pause-ms MS]
 *   bench_core many      --threads T [--n CALLS_PER_THREAD] --out FILE.h5
 *   bench_core query     [--n CALLS] [--threads T] [--reps R]
 *   bench_core small     [--n CALLS] [--reps R] --out FILE.h5
 *
 * Times are wall-clock ns from CLOCK_MONOTONIC around a batch of calls,
 * divided by the number of calls; each repetition is one batch, and the
 * JSON lists every repetition so the driver can take the median. */
#define _GNU_SOURCE
#include <spanscope.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#  include <cpuid.h>
#  include <x86intrin.h>
#  define HAVE_TSC 1
#else
#  define HAVE_TSC 0
#endif

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static volatile uint64_t g_sink; /* keeps results of the floor loops alive */

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_core: %s: %s\n", what,
            rc < 0 ? sps_strerror(rc) : strerror(errno));
    exit(2);
}

/* The same choice of counter as the library (src/core/clock.c): the TSC when
 * CPUID 0x80000007 EDX bit 8 (invariant TSC) is set, overridden by the
 * environment variable SPANSCOPE_CLOCK=tsc|monotonic. */
static int tsc_invariant(void) {
#if HAVE_TSC
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
        __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
        return 1;
#endif
    return 0;
}

static int g_use_tsc;

static void clock_choose(void) {
    const char *env = getenv("SPANSCOPE_CLOCK");
    g_use_tsc = tsc_invariant();
    if (env && strcmp(env, "monotonic") == 0) g_use_tsc = 0;
    if (env && strcmp(env, "tsc") == 0) g_use_tsc = 1;
    if (!HAVE_TSC) g_use_tsc = 0;
}

/* One timestamp read exactly as the hot path does it. */
static inline uint64_t ticks(void) {
#if HAVE_TSC
    if (__builtin_expect(g_use_tsc, 1)) return __rdtsc();
#endif
    return mono_ns();
}

static long status_kib(const char *key) { /* from /proc/self/status */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            v = strtol(line + k + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static long rss_bytes(void) { /* resident set from /proc/self/statm */
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = -1;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
    fclose(f);
    return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

static long maxrss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void print_array(const char *key, const double *v, int n, int last) {
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", v[i]);
    printf("]%s", last ? "" : ", ");
}

/* ------------------------------------------------------------------------ */
/* Command line                                                              */
/* ------------------------------------------------------------------------ */

typedef struct opts {
    const char *cmd, *mode, *shape, *out;
    long long n;
    int reps, threads, finalize;
    int pause_ms; /* big: the program's own (unprofiled) work before finalize */
    int keep;     /* many: keep the file (bench_coder reads its columns) */
} opts_t;

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_core info\n"
            "       bench_core floor [--n PAIRS] [--reps R]\n"
            "       bench_core pair --mode events|disabled|aggregate|scope|paused "
            "[--threads T] [--n PAIRS] [--reps R]\n"
            "       bench_core mem [--n CALLS]\n"
            "       bench_core disk --shape loop|nested|varied [--n CALLS] --out FILE\n"
            "       bench_core big [--n CALLS] --out FILE [--finalize 0|1] [--pause-ms MS]\n"
            "                      [--shape loop|nested] [--keep 1]\n"
            "       bench_core many --threads T [--n CALLS_PER_THREAD] --out FILE [--keep 1]\n"
            "                      [--shape loop|nested]\n"
            "  (--shape nested: outer{inner}, two calls an iteration; --keep 1 keeps the file)\n"
            "       bench_core query [--n CALLS] [--threads T] [--reps R]\n"
            "       bench_core small [--n CALLS] [--reps R] --out FILE\n"
            "Prints one JSON object on stdout.  Driven by bench/run.py.\n");
}

static opts_t parse(int argc, char **argv) {
    opts_t o = {NULL, "events", "loop", NULL, 0, 7, 1, 1, 0, 0};
    if (argc < 2) {
        usage(stderr);
        exit(2);
    }
    o.cmd = argv[1];
    if (!strcmp(o.cmd, "--help") || !strcmp(o.cmd, "-h")) {
        usage(stdout);
        exit(0);
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "bench_core: %s needs a value\n", a);
            exit(2);
        }
        i++;
        if (!strcmp(a, "--n")) o.n = (long long)strtod(v, NULL);
        else if (!strcmp(a, "--reps")) o.reps = atoi(v);
        else if (!strcmp(a, "--threads")) o.threads = atoi(v);
        else if (!strcmp(a, "--mode")) o.mode = v;
        else if (!strcmp(a, "--shape")) o.shape = v;
        else if (!strcmp(a, "--out")) o.out = v;
        else if (!strcmp(a, "--finalize")) o.finalize = atoi(v);
        else if (!strcmp(a, "--pause-ms")) o.pause_ms = atoi(v);
        else if (!strcmp(a, "--keep")) o.keep = atoi(v);
        else {
            fprintf(stderr, "bench_core: unknown option %s\n", a);
            exit(2);
        }
    }
    if (o.reps < 1 || o.reps > 1000 || o.threads < 1 || o.threads > 64 || o.n < 0) {
        fprintf(stderr, "bench_core: bad --reps, --threads or --n\n");
        exit(2);
    }
    return o;
}

/* ------------------------------------------------------------------------ */
/* Stopwatch: CPU time of the calling thread, and wall time                  */
/* ------------------------------------------------------------------------ */

/* Per-operation times are taken from the thread's CPU-time clock
 * (CLOCK_THREAD_CPUTIME_ID): on a shared 2-core VM other processes preempt
 * the benchmark for milliseconds at a time, which inflates wall-clock
 * batches by up to 3x but does not move CPU time.  Kernel time spent on the
 * thread's behalf (a spill write) is CPU time and is counted; time asleep
 * (waiting for a lock) is not.  Wall-clock figures are reported alongside. */
typedef struct stamp {
    uint64_t wall, cpu;
} stamp_t;

typedef struct per {
    double cpu, wall; /* ns per operation */
} per_t;

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static stamp_t stamp(void) {
    stamp_t s;
    s.cpu = thread_cpu_ns();
    s.wall = mono_ns();
    return s;
}

static per_t per_op(stamp_t a, stamp_t b, long long n) {
    per_t p = {(double)(b.cpu - a.cpu) / (double)n,
               (double)(b.wall - a.wall) / (double)n};
    return p;
}

static void print_per(const char *key, const per_t *v, int n, int last) {
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", v[i].cpu);
    printf("], \"%s_wall\": [", key);
    for (int i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", v[i].wall);
    printf("]%s", last ? "" : ", ");
}

/* ------------------------------------------------------------------------ */
/* floor: what two timestamp reads cost                                      */
/* ------------------------------------------------------------------------ */

/* Two reads of the counter the hot path uses, the way it uses it. */
__attribute__((noinline)) static per_t floor_hot(long long n) {
    uint64_t acc = 0;
    stamp_t t0 = stamp();
    for (long long i = 0; i < n; i++) {
        uint64_t a = ticks();
        uint64_t b = ticks();
        acc += a ^ b;
    }
    stamp_t t1 = stamp();
    g_sink += acc;
    return per_op(t0, t1, n);
}

__attribute__((noinline)) static per_t floor_tsc(long long n) {
    uint64_t acc = 0;
    stamp_t t0 = stamp();
    for (long long i = 0; i < n; i++) {
#if HAVE_TSC
        uint64_t a = __rdtsc();
        uint64_t b = __rdtsc();
#else
        uint64_t a = mono_ns(), b = mono_ns();
#endif
        acc += a ^ b;
    }
    stamp_t t1 = stamp();
    g_sink += acc;
    return per_op(t0, t1, n);
}

__attribute__((noinline)) static per_t floor_mono(long long n) {
    uint64_t acc = 0;
    stamp_t t0 = stamp();
    for (long long i = 0; i < n; i++) {
        uint64_t a = mono_ns();
        uint64_t b = mono_ns();
        acc += a ^ b;
    }
    stamp_t t1 = stamp();
    g_sink += acc;
    return per_op(t0, t1, n);
}

/* What two calls of an empty function cost: the least a disabled sps_begin +
 * sps_end pair can cost as long as its check is not inlined. */
__attribute__((noinline)) static void bench_empty_call(sps_region_t r) {
    __asm__ __volatile__("" : : "r"(r) : "memory");
}

__attribute__((noinline)) static per_t floor_calls(long long n) {
    void (*volatile fp)(sps_region_t) = bench_empty_call; /* no inlining */
    void (*f)(sps_region_t) = fp;
    stamp_t t0 = stamp();
    for (long long i = 0; i < n; i++) {
        f(1);
        f(1);
    }
    return per_op(t0, stamp(), n);
}

/* What a disabled pair would cost if the header inlined the check: one load
 * of a global flag and a predictable branch per call, the call itself only
 * when recording.  (A model of a possible design, not the library's code.) */
static int g_flag; /* stays 0: "no session" */

__attribute__((noinline)) static per_t floor_inline_check(long long n) {
    sps_region_t r = 1;
    stamp_t t0 = stamp();
    for (long long i = 0; i < n; i++) {
        if (__builtin_expect(__atomic_load_n(&g_flag, __ATOMIC_RELAXED), 0)) sps_begin(r);
        __asm__ __volatile__("" ::: "memory");
        if (__builtin_expect(__atomic_load_n(&g_flag, __ATOMIC_RELAXED), 0)) sps_end(r);
        __asm__ __volatile__("" ::: "memory");
    }
    return per_op(t0, stamp(), n);
}

static int cmd_floor(const opts_t *o) {
    long long n = o->n ? o->n : 5000000;
    per_t *hot = calloc((size_t)o->reps, sizeof *hot);
    per_t *tsc = calloc((size_t)o->reps, sizeof *tsc);
    per_t *mono = calloc((size_t)o->reps, sizeof *mono);
    per_t *calls = calloc((size_t)o->reps, sizeof *calls);
    per_t *inl = calloc((size_t)o->reps, sizeof *inl);
    if (!hot || !tsc || !mono || !calls || !inl) die("calloc", 0);
    floor_hot(n / 10); /* warm up */
    for (int r = 0; r < o->reps; r++) {
        hot[r] = floor_hot(n);
        tsc[r] = floor_tsc(n);
        mono[r] = floor_mono(n / 2 ? n / 2 : 1);
        calls[r] = floor_calls(n);
        inl[r] = floor_inline_check(n);
    }
    printf("{\"clock\": \"%s\", \"pairs\": %lld, ", g_use_tsc ? "tsc" : "monotonic", n);
    print_per("hot_pair_ns", hot, o->reps, 0);
    print_per("tsc_pair_ns", tsc, o->reps, 0);
    print_per("mono_pair_ns", mono, o->reps, 0);
    print_per("empty_call_pair_ns", calls, o->reps, 0);
    print_per("inline_check_pair_ns", inl, o->reps, 1);
    printf("}\n");
    free(inl);
    free(calls);
    free(hot);
    free(tsc);
    free(mono);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* pair: what a begin+end pair costs                                         */
/* ------------------------------------------------------------------------ */

static sps_region_t g_region;

__attribute__((noinline)) static void loop_pairs(long long n) {
    sps_region_t r = g_region;
    for (long long i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
}

/* big and many --shape nested: n calls as n/2 iterations of outer{inner},
 * each a pair of calls (g_region outside, g_inner inside); an odd n ends
 * with one outer call alone. */
static sps_region_t g_inner;

__attribute__((noinline)) static void loop_nested_pairs(long long n) {
    sps_region_t a = g_region, b = g_inner;
    for (long long i = 0; i < n / 2; i++) {
        sps_begin(a);
        sps_begin(b);
        sps_end(b);
        sps_end(a);
    }
    if (n % 2) {
        sps_begin(a);
        sps_end(a);
    }
}

/* The recording loop of big and many: --shape loop (one region) or nested. */
static int g_nested;

static void record_calls(long long n) {
    if (g_nested) loop_nested_pairs(n);
    else loop_pairs(n);
}

/* Sets g_region (and g_inner) for big and many's --shape; 0, or 2 for a
 * shape they do not record. */
static int shape_regions(const char *shape, const char *name) {
    g_nested = !strcmp(shape, "nested");
    if (!g_nested && strcmp(shape, "loop")) {
        fprintf(stderr, "bench_core: --shape %s: big and many record loop or nested\n", shape);
        return 2;
    }
    g_region = sps_region(g_nested ? "outer" : name);
    if (g_nested) g_inner = sps_region("inner");
    return 0;
}

/* --mode memory_alloc: a span that allocates and frees (what the
 * allocator hooks report), so its records carry the readings */
__attribute__((noinline)) static void loop_pairs_alloc(long long n) {
    sps_region_t r = g_region;
    for (long long i = 0; i < n; i++) {
        sps_begin(r);
        sps_mem_alloc(64);
        sps_mem_free(64);
        sps_end(r);
    }
}

__attribute__((noinline)) static void loop_scope(long long n) {
    for (long long i = 0; i < n; i++) {
        SPS_REGION("bench scope");
        __asm__ __volatile__("" ::: "memory");
    }
}

typedef struct worker {
    pthread_t th;
    int idx;
    const opts_t *o;
    long long n;
    per_t *ns;    /* [reps] the batch of pairs */
    per_t *floor; /* [reps] the floor, measured just before it */
} worker_t;

static pthread_barrier_t g_start, g_done;

static per_t run_batch(const opts_t *o, long long n) {
    stamp_t t0 = stamp();
    if (!strcmp(o->mode, "scope")) loop_scope(n);
    else if (!strcmp(o->mode, "memory_alloc")) loop_pairs_alloc(n);
    else loop_pairs(n);
    return per_op(t0, stamp(), n);
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    char name[16];
    snprintf(name, sizeof name, "bench-%d", w->idx);
    pthread_setname_np(pthread_self(), name);
    /* warm-up batch: the thread's first chunks are allocated and touched */
    pthread_barrier_wait(&g_start);
    run_batch(w->o, w->n);
    pthread_barrier_wait(&g_done);
    for (int r = 0; r < w->o->reps; r++) {
        pthread_barrier_wait(&g_start);
        /* the floor right before the batch, in the same thread: the ratio
         * of the two is taken under the same conditions */
        w->floor[r] = floor_hot(w->n);
        w->ns[r] = run_batch(w->o, w->n);
        pthread_barrier_wait(&g_done);
    }
    return NULL;
}

static int cmd_pair(const opts_t *o) {
    long long n = o->n ? o->n : 1000000;
    /* memory: SPS_TRACK_MEMORY, nothing allocated inside; memory_alloc: a
     * 64-byte allocation and free inside each span; counters: three
     * software perf_event counters (SPS_TRACK_COUNTERS) */
    int track = !strcmp(o->mode, "memory") || !strcmp(o->mode, "memory_alloc")
                    ? SPS_TRACK_MEMORY
                : !strcmp(o->mode, "counters") ? SPS_TRACK_COUNTERS : 0;
    /* crash: events with a file path, so the session is crash-safe (its
     * chunks are shared mappings of PATH.live-<pid>/chunks, core/crash.c);
     * events: no file path, private chunks */
    int crash = !strcmp(o->mode, "crash") || !strcmp(o->mode, "nocrash");
    /* emit_nvtx: events with the NVTX emitter on (docs/nvtx-itt.md): every
     * begin and end takes the out-of-line path and pushes/pops a range --
     * a no-op without a tool; bench/run.py runs it again with the test tool
     * (NVTX_INJECTION64_PATH) */
    int emit = !strcmp(o->mode, "emit_nvtx");
    int events = !strcmp(o->mode, "events") || !strcmp(o->mode, "scope") || track || crash ||
                 emit;
    int aggregate = !strcmp(o->mode, "aggregate");
    int disabled = !strcmp(o->mode, "disabled");
    int paused = !strcmp(o->mode, "paused"); /* a live session under sps_pause */
    if (!events && !aggregate && !disabled && !paused) {
        fprintf(stderr, "bench_core: unknown --mode %s\n", o->mode);
        return 2;
    }
    g_region = sps_region("bench pair");
    if (!disabled) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.aggregate = aggregate;
        cfg.track = track;
        if (track == SPS_TRACK_COUNTERS &&
            sps_set_counters("task-clock,page-faults,context-switches"))
            die("sps_set_counters", SPS_EINVAL);
        /* Room for one batch of every thread: the timed batches run on
         * chunks recycled by the untimed sps_finalize_to(NULL) between
         * them (the steady state of a long run that checkpoints), so no
         * spill write falls inside a batch.  The 10^8-call run ("big")
         * measures the default configuration, spill writes included. */
        size_t per_call = track == SPS_TRACK_COUNTERS ? 16u + 2u * 8u * 9u
                        : track ? 16u + 2u * 8u * 6u : 16u; /* + value groups */
        size_t need = (size_t)n * per_call * (size_t)o->threads * 2u + (8u << 20);
        cfg.memory_limit = need > (32u << 20) ? need : (32u << 20);
        char path[512];
        if (crash) {
            const char *dir = getenv("TMPDIR");
            snprintf(path, sizeof path, "%s/bench_core_crash_%d.h5", dir && *dir ? dir : "/tmp",
                     (int)getpid());
            cfg.file_path = path;
            sps_crash_safe(!strcmp(o->mode, "crash"));
        }
        int rc = sps_setup(&cfg);
        if (rc) die("sps_setup", rc);
        if (paused && (rc = sps_pause()) != 0) die("sps_pause", rc);
        if (emit && (rc = sps_emit_set(SPS_EMIT_NVTX, 1)) != 0) die("sps_emit_set", rc);
    }
    int nt = o->threads;
    if (nt <= 0 || o->reps <= 0 || o->reps > 100000) die("--threads/--reps", SPS_EINVAL);
    worker_t *w = calloc((size_t)nt, sizeof *w);
    if (!w) die("calloc", 0);
    pthread_barrier_init(&g_start, NULL, (unsigned)nt + 1);
    pthread_barrier_init(&g_done, NULL, (unsigned)nt + 1);
    for (int i = 0; i < nt; i++) {
        w[i] = (worker_t){0, i, o, n, calloc((size_t)o->reps, sizeof(per_t)),
                          calloc((size_t)o->reps, sizeof(per_t))};
        if (!w[i].ns || !w[i].floor || pthread_create(&w[i].th, NULL, worker_main, &w[i]))
            die("pthread_create", 0);
    }
    for (int r = 0; r <= o->reps; r++) { /* rep 0 is the warm-up */
        pthread_barrier_wait(&g_start);
        pthread_barrier_wait(&g_done);
        if (!disabled && !aggregate) {
            int rc = sps_finalize_to(NULL); /* recycles the chunks, untimed */
            if (rc) die("sps_finalize_to", rc);
        }
    }
    for (int i = 0; i < nt; i++) pthread_join(w[i].th, NULL);
    /* per-thread ns per pair: mean over the threads of each repetition */
    per_t *mean = calloc((size_t)o->reps, sizeof *mean);
    per_t *fl = calloc((size_t)o->reps, sizeof *fl);
    double *ratio = calloc((size_t)o->reps, sizeof *ratio);
    if (!mean || !fl || !ratio) die("calloc", 0);
    for (int r = 0; r < o->reps; r++) {
        for (int i = 0; i < nt; i++) {
            mean[r].cpu += w[i].ns[r].cpu / nt;
            mean[r].wall += w[i].ns[r].wall / nt;
            fl[r].cpu += w[i].floor[r].cpu / nt;
            fl[r].wall += w[i].floor[r].wall / nt;
        }
        ratio[r] = mean[r].cpu / fl[r].cpu;
    }
    uint64_t calls = 0;
    if (aggregate) {
        sps_stats_t st;
        if (sps_region_stats(g_region, &st) == 0) calls = st.num_calls;
    }
    uint64_t dropped = sps_dropped();
    if (!disabled) sps_shutdown();
    printf("{\"mode\": \"%s\", \"threads\": %d, \"pairs\": %lld, "
           "\"dropped\": %llu, \"aggregate_calls\": %llu, ",
           o->mode, nt, n, (unsigned long long)dropped, (unsigned long long)calls);
    print_per("ns", mean, o->reps, 0);
    print_per("floor_ns", fl, o->reps, 0);
    print_array("ratio", ratio, o->reps, 1);
    printf("}\n");
    for (int i = 0; i < nt; i++) {
        free(w[i].ns);
        free(w[i].floor);
    }
    free(w);
    free(mean);
    free(fl);
    free(ratio);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* mem: bytes of memory per recorded call                                    */
/* ------------------------------------------------------------------------ */

static int cmd_mem(const opts_t *o) {
    long long n = o->n ? o->n : 4000000;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.overflow = SPS_OVERFLOW_GROW;
    cfg.memory_limit = (size_t)4 << 30;
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    g_region = sps_region("bench mem");
    loop_pairs(1); /* the thread joins and gets its first chunk */
    long before = rss_bytes(), hwm0 = status_kib("VmHWM");
    loop_pairs(n);
    long after = rss_bytes(), hwm1 = status_kib("VmHWM");
    sps_stats_t st;
    rc = sps_region_stats(g_region, &st);
    if (rc) die("sps_region_stats", rc);
    sps_shutdown();
    printf("{\"calls\": %lld, \"rss_before\": %ld, \"rss_after\": %ld, "
           "\"vmhwm_before_kib\": %ld, \"vmhwm_after_kib\": %ld, "
           "\"recorded_calls\": %llu, \"bytes_per_call\": %.4f, \"dropped\": %llu}\n",
           n, before, after, hwm0, hwm1, (unsigned long long)st.num_calls,
           (double)(after - before) / (double)n, (unsigned long long)sps_dropped());
    return 0;
}

/* ------------------------------------------------------------------------ */
/* disk: bytes in the HDF5 file per recorded call                            */
/* ------------------------------------------------------------------------ */

__attribute__((noinline)) static void loop_nested(long long outer, long long inner,
                                                  sps_region_t a, sps_region_t b) {
    for (long long i = 0; i < outer; i++) {
        sps_begin(a);
        for (long long j = 0; j < inner; j++) {
            sps_begin(b);
            sps_end(b);
        }
        sps_end(a);
    }
}

/* A loop whose body does a pseudo-random amount of work (0..255 steps of a
 * dependent chain, roughly 0..250 ns): durations and start deltas spread
 * out, so the file holds more entropy than a perfectly regular loop. */
__attribute__((noinline)) static void loop_varied(long long n, sps_region_t r) {
    uint64_t x = 88172645463325252ull, acc = 0;
    for (long long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned k = (unsigned)(x & 255u);
        sps_begin(r);
        for (unsigned j = 0; j < k; j++) {
            acc = acc * 6364136223846793005ull + j;
            __asm__ __volatile__("" : "+r"(acc));
        }
        sps_end(r);
    }
    g_sink += acc;
}

static int cmd_disk(const opts_t *o) {
    long long n = o->n ? o->n : 1000000, calls;
    if (!o->out) {
        fprintf(stderr, "bench_core: disk needs --out FILE\n");
        return 2;
    }
    remove(o->out);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = o->out;
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    if (!strcmp(o->shape, "nested")) {
        long long inner = 1000, outer = n / inner ? n / inner : 1;
        loop_nested(outer, inner, sps_region("outer"), sps_region("inner"));
        calls = outer * (inner + 1);
    } else if (!strcmp(o->shape, "varied")) {
        loop_varied(n, sps_region("varied"));
        calls = n;
    } else if (!strcmp(o->shape, "loop")) {
        g_region = sps_region("loop");
        loop_pairs(n);
        calls = n;
    } else {
        fprintf(stderr, "bench_core: unknown --shape %s\n", o->shape);
        return 2;
    }
    uint64_t t0 = mono_ns();
    rc = sps_finalize();
    double fin_s = (double)(mono_ns() - t0) / 1e9;
    if (rc) die("sps_finalize", rc);
    sps_shutdown();
    long long size = file_size(o->out);
    printf("{\"shape\": \"%s\", \"calls\": %lld, \"file_bytes\": %lld, "
           "\"bytes_per_call\": %.4f, \"finalize_s\": %.4f}\n",
           o->shape, calls, size, (double)size / (double)calls, fin_s);
    return 0;
}

/* small: the finalize of a small period -- a checkpoint, a short run --
 * where the file's fixed costs (its datasets, index and metadata) are
 * the whole cost.  R periods of CALLS calls (default 1 000) in 8
 * regions, each finalized to --out; prints every finalize's wall time
 * and their median. */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmd_small(const opts_t *o) {
    long long n = o->n ? o->n : 1000;
    if (!o->out) {
        fprintf(stderr, "bench_core: small needs --out FILE\n");
        return 2;
    }
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = o->out;
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    sps_region_t r[8];
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "region%d", i);
        r[i] = sps_region(name);
    }
    double *ms = calloc((size_t)o->reps, sizeof *ms);
    if (!ms) die("calloc", 0);
    for (int k = 0; k < o->reps; k++) {
        for (long long i = 0; i < n; i++) {
            sps_begin(r[i & 7]);
            sps_end(r[i & 7]);
        }
        uint64_t t0 = mono_ns();
        rc = sps_finalize_to(o->out);
        ms[k] = (double)(mono_ns() - t0) / 1e6;
        if (rc) die("sps_finalize_to", rc);
    }
    sps_shutdown();
    printf("{\"calls\": %lld, \"regions\": 8, \"finalize_ms\": [", n);
    for (int k = 0; k < o->reps; k++) printf("%s%.4f", k ? ", " : "", ms[k]);
    qsort(ms, (size_t)o->reps, sizeof *ms, cmp_double);
    printf("], \"finalize_ms_median\": %.4f}\n", ms[o->reps / 2]);
    free(ms);
    return 0;
}

/* sps_finalize_to(path), with the verbose line's figures: *analysis_s,
 * the time finalize's own analysis took, and *two_cores, whether it ran
 * split (both -1 when the line is missing). */
/* What the verbose lines said of the background analysis (-1: no line):
 * the percent of the period's records analyzed before finalize, and how
 * many of the trials (bg_trial.c) allowed it beside busy recorders. */
static double g_bg_pct = -1;
static long long g_bg_trials = -1, g_bg_allowed = -1;

static int finalize_analysis(const char *path, double *analysis_s, int *two_cores) {
    *analysis_s = -1;
    *two_cores = -1;
    FILE *fp = tmpfile();
    if (!fp) return sps_finalize_to(path);
    if (!getenv("SPANSCOPE_PROGRESS")) setenv("SPANSCOPE_PROGRESS", "0", 1); /* stderr quiet */
    int rc = sps_finalize_print(path, fp);
    char line[1024];
    rewind(fp);
    while (fgets(line, sizeof line, fp)) {
        const char *p = strstr(line, "spanscope: analysis at finalize ");
        if (!p) continue;
        *analysis_s = strtod(p + strlen("spanscope: analysis at finalize "), NULL);
        *two_cores = strstr(p, "on two cores") != NULL;
        const char *q = strstr(p, " s; ");
        if (q) g_bg_pct = strtod(q + 4, NULL);
    }
    rewind(fp);
    while (fgets(line, sizeof line, fp)) {
        const char *p = strstr(line, "was allowed by ");
        if (p) sscanf(p, "was allowed by %lld of %lld trials", &g_bg_allowed, &g_bg_trials);
    }
    fclose(fp);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* big: 10^8 (or 10^9) calls with the default configuration (SPILL, 32 MiB)  */
/* ------------------------------------------------------------------------ */

static int dbl_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0, n) (sorts v). */
static double median(double *v, long long n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The spill file, seen from outside the library: the largest deleted
 * regular file this process has open (the spill file is an unlinked
 * temporary file, and the benchmark opens no other).  Its size and the
 * disk it takes (st_blocks), or -1 when there is none. */
static void spill_file_size(long long *size, long long *disk) {
    *size = *disk = -1;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        char link[300], target[512];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k < 10) continue;
        target[k] = 0;
        struct stat st;
        if (!strstr(target, " (deleted)") || stat(link, &st) || !S_ISREG(st.st_mode)) continue;
        if ((long long)st.st_size > *size) {
            *size = (long long)st.st_size;
            *disk = (long long)st.st_blocks * 512;
        }
    }
    closedir(d);
}

/* Recorded in slices of 10^6 pairs, timed one by one: the first slices
 * fill the 32 MiB pool (fresh, page-faulted chunks), the later ones run
 * with a full pool, where every full chunk is handed to the spill writer.
 * Every 10th slice is followed by a floor slice (two timestamp reads, as
 * the hot path does them, 10^6 times) in the same thread, so the floor is
 * measured in the same run, under the same conditions. */
static int cmd_big(const opts_t *o) {
    long long n = o->n ? o->n : 100000000;
    if (!o->out) {
        fprintf(stderr, "bench_core: big needs --out FILE\n");
        return 2;
    }
    remove(o->out);
    long rss0 = rss_bytes(), hwm0 = status_kib("VmHWM");
    sps_config_t cfg = SPS_CONFIG_INIT; /* defaults: SPILL, 32 MiB, 64 KiB chunks */
    cfg.file_path = o->out;
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    if (shape_regions(o->shape, "big loop")) return 2;
    const long long slice = 1000000, every = 10;
    long long nslices = (n + slice - 1) / slice, nfloor = 0;
    double *sl = calloc((size_t)nslices, sizeof *sl);
    double *slw = calloc((size_t)nslices, sizeof *slw);
    double *fl = calloc((size_t)(nslices / every + 1), sizeof *fl);
    if (!sl || !slw || !fl) die("calloc", 0);
    floor_hot(slice / 10); /* warm up */
    uint64_t floor_cpu = 0, floor_wall = 0, floor_proc = 0;
    stamp_t t0 = stamp();
    uint64_t p0 = process_cpu_ns();
    for (long long i = 0, done = 0; i < nslices; i++) {
        long long k = n - done < slice ? n - done : slice;
        stamp_t a = stamp();
        record_calls(k);
        per_t p = per_op(a, stamp(), k);
        sl[i] = p.cpu;
        slw[i] = p.wall;
        done += k;
        if (i % every == every - 1) { /* not counted in the recording's time */
            stamp_t f0 = stamp();
            uint64_t q0 = process_cpu_ns();
            fl[nfloor++] = floor_hot(slice).cpu;
            stamp_t f1 = stamp();
            floor_cpu += f1.cpu - f0.cpu;
            floor_wall += f1.wall - f0.wall;
            floor_proc += process_cpu_ns() - q0;
        }
    }
    stamp_t t1 = stamp();
    uint64_t p1 = process_cpu_ns();
    long hwm_rec = status_kib("VmHWM");
    long long spill_size, spill_disk;
    spill_file_size(&spill_size, &spill_disk);
    /* a pause before finalize: time the spill writer may analyze in */
    if (o->pause_ms > 0) usleep((useconds_t)o->pause_ms * 1000u);
    stamp_t t1f = stamp();
    uint64_t pf0 = process_cpu_ns();
    double an_s = -1;
    int two = -1;
    if (o->finalize) rc = finalize_analysis(o->out, &an_s, &two);
    stamp_t t2 = stamp();
    uint64_t pf1 = process_cpu_ns();
    if (rc) die("sps_finalize", rc);
    uint64_t dropped = sps_dropped();
    sps_shutdown();
    long long size = o->finalize ? file_size(o->out) : 0;
    double rec_cpu = (double)(t1.cpu - t0.cpu - floor_cpu) / (double)n;
    double rec_wall = (double)(t1.wall - t0.wall - floor_wall) / (double)n;
    double rec_proc = (double)(p1 - p0 - floor_proc) / (double)n;
    /* the recording's wall time, the floor slices taken out: what
     * finalize is compared with (issue 37 part 4) */
    double rec_s = (double)(t1.wall - t0.wall - floor_wall) / 1e9;
    double first2 = nslices > 1 ? (sl[0] + sl[1]) / 2 : sl[0];
    long long late0 = nslices > 4 ? 4 : 0; /* pool full from slice 3 on */
    double late_med = median(sl + late0, nslices - late0);
    double late_med_wall = median(slw + late0, nslices - late0);
    double floor_med = median(fl, nfloor);
    if (!nfloor) floor_med = floor_hot(slice).cpu; /* a run under 10 slices */
    printf("{\"calls\": %lld, \"record_ns_per_pair\": %.4f, \"record_ns_per_pair_wall\": %.4f, "
           "\"record_process_cpu_ns_per_pair\": %.4f, "
           "\"first_slices_ns_per_pair\": %.4f, \"spill_slices_median_ns_per_pair\": %.4f, "
           "\"spill_slices_median_ns_per_pair_wall\": %.4f, "
           "\"floor_ns\": %.4f, \"floor_samples\": %lld, \"ratio_record_floor\": %.4f, "
           "\"ratio_spill_floor\": %.4f, "
           "\"spill_file_bytes\": %lld, \"spill_disk_bytes\": %lld, \"spill_bytes_per_call\": %.4f, "
           "\"finalize_s\": %.4f, \"finalize_cpu_s\": %.4f, "
           "\"rss_before_setup\": %ld, \"vmhwm_before_setup_kib\": %ld, "
           "\"vmhwm_after_record_kib\": %ld, \"vmhwm_kib\": %ld, \"maxrss_kib\": %ld, "
           "\"file_bytes\": %lld, \"file_bytes_per_call\": %.4f, \"dropped\": %llu, "
           "\"pause_ms\": %d, \"analysis_s\": %.4f, \"shape\": \"%s\", "
           "\"record_s\": %.4f, \"finalize_over_record\": %.4f, \"bg_analyzed_pct\": %.1f, "
           "\"bg_trials\": %lld, \"bg_allowed\": %lld, \"finalize_process_cpu_s\": %.4f}\n",
           n, rec_cpu, rec_wall, rec_proc, first2, late_med, late_med_wall, floor_med, nfloor,
           rec_cpu / floor_med, late_med / floor_med, spill_size, spill_disk,
           spill_size > 0 ? (double)spill_size / (double)n : 0.0,
           (double)(t2.wall - t1f.wall) / 1e9, (double)(t2.cpu - t1f.cpu) / 1e9, rss0, hwm0,
           hwm_rec, status_kib("VmHWM"), maxrss_kib(), size, (double)size / (double)n,
           (unsigned long long)dropped, o->pause_ms, an_s, o->shape, rec_s,
           rec_s > 0 ? (double)(t2.wall - t1f.wall) / 1e9 / rec_s : 0.0, g_bg_pct,
           g_bg_trials, g_bg_allowed, (double)(pf1 - pf0) / 1e9);
    free(sl);
    free(slw);
    free(fl);
    if (!o->keep) remove(o->out);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* many: T threads x n calls each, default configuration, then finalize      */
/* ------------------------------------------------------------------------ */

static long long g_many_n;

static void *many_thread(void *arg) {
    (void)arg;
    record_calls(g_many_n);
    return NULL;
}

/* Records n pairs on each of T threads at once (all started, then all
 * joined), finalizes once, and prints the wall times of both, finalize's
 * calls per second, peak RSS and the file's bytes per call. */
static int cmd_many(const opts_t *o) {
    int nt = o->threads > 0 ? o->threads : 64;
    g_many_n = o->n ? o->n : 2000000;
    if (!o->out) {
        fprintf(stderr, "bench_core: many needs --out FILE\n");
        return 2;
    }
    remove(o->out);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = o->out;
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    if (shape_regions(o->shape, "many loop")) return 2;
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    if (!th) die("calloc", 0);
    stamp_t t0 = stamp();
    for (int i = 0; i < nt; i++)
        if (pthread_create(&th[i], NULL, many_thread, NULL)) die("pthread_create", 0);
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    stamp_t t1 = stamp();
    long hwm_rec = status_kib("VmHWM");
    double an_s;
    int two;
    uint64_t pf0 = process_cpu_ns();
    stamp_t t1c = stamp();
    rc = finalize_analysis(o->out, &an_s, &two);
    stamp_t t2 = stamp();
    uint64_t pf1 = process_cpu_ns();
    if (rc) die("sps_finalize", rc);
    sps_shutdown();
    long long calls = g_many_n * nt, size = file_size(o->out);
    double fin_s = (double)(t2.wall - t1.wall) / 1e9;
    printf("{\"threads\": %d, \"calls\": %lld, \"record_s\": %.4f, \"finalize_s\": %.4f, "
           "\"total_s\": %.4f, \"finalize_calls_per_s\": %.0f, "
           "\"vmhwm_after_record_kib\": %ld, \"vmhwm_kib\": %ld, "
           "\"file_bytes_per_call\": %.4f, \"dropped\": %llu, "
           "\"analysis_s\": %.4f, \"analysis_two_cores\": %d, \"shape\": \"%s\", "
           "\"finalize_over_record\": %.4f, \"bg_analyzed_pct\": %.1f, "
           "\"bg_trials\": %lld, \"bg_allowed\": %lld, \"finalize_cpu_s\": %.4f, "
           "\"finalize_process_cpu_s\": %.4f}\n",
           nt, calls, (double)(t1.wall - t0.wall) / 1e9, fin_s,
           (double)(t2.wall - t0.wall) / 1e9, (double)calls / fin_s,
           hwm_rec, status_kib("VmHWM"), (double)size / (double)calls,
           (unsigned long long)sps_dropped(), an_s, two, o->shape,
           (double)(t2.wall - t1.wall) / (double)(t1.wall - t0.wall), g_bg_pct, g_bg_trials,
           g_bg_allowed, (double)(t2.cpu - t1c.cpu) / 1e9, (double)(pf1 - pf0) / 1e9);
    free(th);
    if (!o->keep) remove(o->out);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* query: what a per-call query costs after k new calls (issue 11, part 3)   */
/* ------------------------------------------------------------------------ */

static void *query_fill(void *arg) {
    loop_pairs(*(long long *)arg);
    return NULL;
}

static double median_ns(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, dbl_cmp);
    return v[n / 2];
}

/* n calls of one region (from --threads threads at once, default the main
 * thread), then: the first query (reads the period once), and for each k
 * the median over --reps of: k new calls on the main thread, then one
 * query -- counting (sps_region_durations(r, NULL, 0)), copying the whole
 * answer (n + ... durations), and sps_region_stats.  Wall ns per query;
 * copy_floor_ns is memcpy of the answer's bytes, the copy's floor. */
static int cmd_query(const opts_t *o) {
    long long n = o->n ? o->n : 10000000;
    int reps = o->reps, nt = o->threads > 0 ? o->threads : 1;
    static const long long ks[] = {0, 1, 10, 100, 1000, 10000, 100000};
    const int nk = (int)(sizeof ks / sizeof ks[0]);
    long long room = n + 3LL * reps * (1 + 10 + 100 + 1000 + 10000 + 100000) + 16;
    sps_config_t cfg = SPS_CONFIG_INIT; /* defaults: spill past 32 MiB */
    int rc = sps_setup(&cfg);
    if (rc) die("sps_setup", rc);
    g_region = sps_region("bench query");
    int64_t *buf = malloc((size_t)room * sizeof *buf), *buf2 = malloc((size_t)room * sizeof *buf2);
    double *v = calloc((size_t)reps, sizeof *v);
    if (!buf || !buf2 || !v) die("malloc", 0);
    memset(buf, 1, (size_t)room * sizeof *buf); /* fault the pages in */
    memset(buf2, 1, (size_t)room * sizeof *buf2);
    pthread_t th[64];
    long long each = n / nt;
    if (nt == 1) loop_pairs(n);
    for (int i = 0; nt > 1 && i < nt && i < 64; i++)
        if (pthread_create(&th[i], NULL, query_fill, &each)) die("pthread_create", 0);
    for (int i = 0; nt > 1 && i < nt && i < 64; i++) pthread_join(th[i], NULL);
    uint64_t t0 = mono_ns();
    size_t total = sps_region_durations(g_region, NULL, 0);
    double first_ms = (double)(mono_ns() - t0) / 1e6;
    for (int r = 0; r < reps; r++) {
        t0 = mono_ns();
        memcpy(buf2, buf, total * sizeof *buf);
        v[r] = (double)(mono_ns() - t0);
    }
    double floor_ns = median_ns(v, reps);
    printf("{\"calls\": %lld, \"threads\": %d, \"first_query_ms\": %.3f, "
           "\"copy_floor_ns\": %.0f, \"rows\": [", n, nt, first_ms, floor_ns);
    for (int i = 0; i < nk; i++) {
        double cnt, cpy, sta;
        for (int r = 0; r < reps; r++) {
            loop_pairs(ks[i]);
            t0 = mono_ns();
            total = sps_region_durations(g_region, NULL, 0);
            v[r] = (double)(mono_ns() - t0);
        }
        cnt = median_ns(v, reps);
        for (int r = 0; r < reps; r++) {
            loop_pairs(ks[i]);
            t0 = mono_ns();
            total = sps_region_durations(g_region, buf, (size_t)room);
            v[r] = (double)(mono_ns() - t0);
        }
        cpy = median_ns(v, reps);
        for (int r = 0; r < reps; r++) {
            loop_pairs(ks[i]);
            sps_stats_t st;
            t0 = mono_ns();
            if (sps_region_stats(g_region, &st)) die("sps_region_stats", 0);
            v[r] = (double)(mono_ns() - t0);
        }
        sta = median_ns(v, reps);
        printf("%s{\"k\": %lld, \"count_ns\": %.0f, \"copy_ns\": %.0f, \"stats_ns\": %.0f}",
               i ? ", " : "", ks[i], cnt, cpy, sta);
    }
    printf("], \"answer_calls\": %zu, \"maxrss_kib\": %ld}\n", total, maxrss_kib());
    sps_shutdown();
    free(buf), free(buf2), free(v);
    return 0;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    opts_t o = parse(argc, argv);
    clock_choose();
    if (!strcmp(o.cmd, "info")) {
        printf("{\"clock\": \"%s\", \"tsc_invariant\": %d, \"spanscope_clock_env\": \"%s\", "
               "\"version\": \"%s\"}\n",
               g_use_tsc ? "tsc" : "monotonic", tsc_invariant(),
               getenv("SPANSCOPE_CLOCK") ? getenv("SPANSCOPE_CLOCK") : "",
               SPS_VERSION_STRING);
        return 0;
    }
    if (!strcmp(o.cmd, "floor")) return cmd_floor(&o);
    if (!strcmp(o.cmd, "pair")) return cmd_pair(&o);
    if (!strcmp(o.cmd, "mem")) return cmd_mem(&o);
    if (!strcmp(o.cmd, "disk")) return cmd_disk(&o);
    if (!strcmp(o.cmd, "big")) return cmd_big(&o);
    if (!strcmp(o.cmd, "many")) return cmd_many(&o);
    if (!strcmp(o.cmd, "query")) return cmd_query(&o);
    if (!strcmp(o.cmd, "small")) return cmd_small(&o);
    fprintf(stderr, "bench_core: unknown command %s\n", o.cmd);
    usage(stderr);
    return 2;
}
