/* test_crash_values.c -- `recover` brings back what crash safety used to
 * drop (core/crash.c, api/recover.c; docs/crash-recovery.md): the values
 * per span (cfg.track: memory, counters) and the stack samples
 * (cfg.sample_hz).  Real children record in 1-4 threads, allocate a known
 * number of bytes in each call, are sampled at 1000 Hz, and are killed at
 * random moments; the recovered /values must equal what the completed
 * calls allocated (each thread's call in flight may be there or not), and
 * the recovered /samples must be there, in the regions, with frames.
 * Damaged samples files are left out with a note, never a crash. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 4
#define OUTER_SELF 1000u /* bytes each thread allocates in "outer" itself */
/* The shortest recording before a kill, once samples reach the live
 * directory (wait_samples) */
#define DELAY_MS 30

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define SANITIZED 1
#  endif
#endif
#ifndef SANITIZED
#  define SANITIZED 0
#endif
/* ThreadSanitizer defers signals to its own safe points: a sample's stack
 * is where the handler finally ran, often in its runtime */
#if defined(__SANITIZE_THREAD__)
#  define TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define TSAN 1
#  endif
#endif
#ifndef TSAN
#  define TSAN 0
#endif

typedef struct shared {
    volatile uint64_t done[MAX_THREADS]; /* calls of "work" completed */
    volatile int ready;                  /* threads inside "outer" */
    volatile int64_t checkpointed_ns;    /* when the child's checkpoint finalize
                                            returned (CLOCK_MONOTONIC, 0: none) */
} shared_t;

static shared_t *g_sh;
static sps_region_t g_work, g_outer;

/* The bytes call k of "work" allocates (it frees half of them). */
static uint64_t bytes_of(uint64_t k) { return 16 + 8 * (k % 7); }

/* sum of bytes_of(k) for k < n */
static uint64_t bytes_upto(uint64_t n) {
    uint64_t s = 0;
    for (uint64_t k = 0; k < n; k++) s += bytes_of(k);
    return s;
}

static uint64_t half_upto(uint64_t n) {
    uint64_t s = 0;
    for (uint64_t k = 0; k < n; k++) s += bytes_of(k) / 2;
    return s;
}

/* Where the samples land: a frame the recovered stacks must name. */
__attribute__((noinline)) static void crash_values_spin(uint64_t k) {
    volatile uint64_t x = k;
    for (int j = 0; j < 10000; j++) x = x * 6364136223846793005ull + 1442695040888963407ull;
}

static void *worker(void *arg) {
    int i = (int)(intptr_t)arg;
    sps_thread_set_name(i ? "worker" : "main-worker");
    sps_begin(g_outer);
    sps_mem_alloc(OUTER_SELF);
    __atomic_fetch_add(&g_sh->ready, 1, __ATOMIC_RELEASE);
    for (uint64_t k = 0;; k++) {
        sps_begin(g_work);
        sps_mem_alloc(bytes_of(k));
        crash_values_spin(k);
        sps_mem_free(bytes_of(k) / 2);
        sps_end(g_work);
        __atomic_store_n(&g_sh->done[i], k + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* The child: records with values and samples until it is killed. */
static void child(const char *path, int threads, int counters, int spill, int checkpoint) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.track = SPS_TRACK_MEMORY | (counters ? SPS_TRACK_COUNTERS : 0);
    cfg.sample_hz = 1000;
    if (counters && sps_set_counters("task-clock,page-faults")) _exit(93);
    if (spill) {
        cfg.memory_limit = 256 << 10; /* 4 chunks: spills at once */
        cfg.chunk_size = 64 << 10;
    }
    if (sps_setup(&cfg)) _exit(90);
    g_work = sps_region("work");
    g_outer = sps_region("outer");
    if (checkpoint) { /* a finalize first: the recovered part is what follows */
        sps_region_t pre = sps_region("before-checkpoint");
        for (int k = 0; k < 1000; k++) {
            sps_begin(pre);
            sps_mem_alloc(5);
            crash_values_spin((uint64_t)k);
            sps_end(pre);
        }
        if (sps_finalize()) _exit(91);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        g_sh->checkpointed_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
    pthread_t th[MAX_THREADS];
    for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    worker(0);
    _exit(92);
}

/* The /values row of region name: its index, -1 none. */
static long value_row(const sps_file_t *f, const char *name) {
    for (size_t r = 0; r < f->value_nrows; r++)
        if (!strcmp(f->value_regions[r], name)) return (long)r;
    return -1;
}

static long value_col(const sps_file_t *f, const char *name) {
    for (size_t k = 0; k < f->nvalue_names; k++)
        if (!strcmp(f->value_names[k], name)) return (long)k;
    return -1;
}

static int64_t own_of(const sps_file_t *f, const char *region, const char *value) {
    long r = value_row(f, region), k = value_col(f, value);
    if (r < 0 || k < 0) fail_msg("no /values %s of %s", value, region);
    return f->value_own[(size_t)r * f->nvalue_names + (size_t)k];
}

static int64_t self_of(const sps_file_t *f, const char *region, const char *value) {
    long r = value_row(f, region), k = value_col(f, value);
    if (r < 0 || k < 0) fail_msg("no /values self_%s of %s", value, region);
    return f->value_self[(size_t)r * f->nvalue_names + (size_t)k];
}

static uint64_t calls_of(const sps_file_t *f, const char *name) {
    uint64_t n = 0;
    for (size_t r = 0; r < f->nrows; r++)
        if (!strcmp(f->names[f->rows[r].region], name)) n += f->rows[r].count;
    return n;
}

static const char *meta_text(const sps_meta_attr_t *m, size_t n, const char *key) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(m[i].name, key) && m[i].kind == SPS_META_TEXT && m[i].n) return m[i].texts[0];
    return NULL;
}

/* Whether stack st of s names function fn. */
static int stack_names(const sps_samples_t *s, int64_t st, const char *fn) {
    for (int64_t j = s->stack_offsets[st]; j < s->stack_offsets[st + 1]; j++) {
        int64_t fi = s->stack_frames[j];
        if (fi >= 0 && (size_t)fi < s->nframes && strstr(s->functions[fi], fn)) return 1;
    }
    return 0;
}

/* The samples of path: present, none at or before after_ns (a
 * checkpoint's), attributed to the regions, with frames naming the
 * function they were taken in (the attribution counted from from_ns on:
 * the checkpoint's finalize is outside every region).  Returns how many. */
static size_t check_samples(const char *path, int64_t after_ns, int64_t from_ns, int delay_ms) {
    sps_samples_t s;
    int rc = sps_samples_read(path, &s);
    if (rc) fail_msg("samples of %s: %d", path, rc);
    if (s.n < 5) fail_msg("%zu samples recovered after %d ms", s.n, delay_ms);
    assert_int_equal(s.hz, 1000);
    size_t in_regions = 0, spin = 0, counted = 0;
    for (size_t i = 0; i < s.n; i++) {
        int64_t st = s.stacks[i];
        assert_true(st >= 0 && (size_t)st < s.nstacks);
        assert_true(s.stack_offsets[st + 1] > s.stack_offsets[st]); /* frames */
        int64_t rg = s.regions[i];
        int count = s.times_ns[i] > from_ns;
        counted += count;
        if (rg >= 0) {
            assert_true((size_t)rg < s.nregion_names);
            const char *name = s.region_names[rg];
            in_regions += count && (!strcmp(name, "work") || !strcmp(name, "outer"));
            assert_true(s.call_ids[i] >= 0);
        }
        spin += stack_names(&s, st, "crash_values_spin");
        assert_true(s.times_ns[i] > after_ns);
    }
    /* the threads spend their time inside "outer", much of it in the spin
     * (sanitizers slow the rest down) */
    if (in_regions * 10 < counted * 8 || !spin || (!TSAN && spin * 10 < counted * 3))
        fail_msg("%zu samples (%zu counted): %zu in the regions, %zu naming "
                 "crash_values_spin", s.n, counted, in_regions, spin);
    size_t n = s.n;
    sps_samples_free(&s);
    return n;
}

/* Waits (at most 20 s) until the child's samples reach its live
 * directory, and about ten more after them: they do once their stacks
 * are described, and the first
 * description loads the symbol tables and debug info, which takes from
 * ~110 ms (this VM, idle) to seconds (2 vCPUs shared with 4 spinning
 * threads, ASan) -- docs/crash-recovery.md, "what can be lost". */
static void wait_samples(const char *path, pid_t pid) {
    char smp[600];
    snprintf(smp, sizeof smp, "%s.live-%d/samples", path, (int)pid);
    struct stat st;
    /* what the file held when every thread was inside "outer": after a
     * checkpoint, the period before it (its stacks and samples) is there
     * already, and the new period's stacks still have to be described (CI's
     * ASan run killed such a child with 5 samples after its checkpoint, all
     * taken during the checkpoint's finalize) */
    off_t base = stat(smp, &st) ? 0 : st.st_size, described = -1;
    for (int w = 0; w < 2000; w++) {
        if (!stat(smp, &st) && described < 0 && st.st_size > base + 8000)
            described = st.st_size; /* stacks described, some samples */
        /* ... and then a drain or more of samples alone (24 bytes each):
         * 8000 bytes can be almost all stack text, and a child starved of
         * its CPU (CI's ASan run: tests run two at a time beside it) was
         * killed with 3 samples, 185 ms later */
        if (described >= 0 && !stat(smp, &st) && st.st_size >= described + 10 * 24) return;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("%s: no samples after 20 s", smp);
}

/* One child killed with sig after delay_ms of recording; checks the
 * recovered values and samples. */
static void kill_and_recover(int threads, int counters, int spill, int sig, int delay_ms,
                             int checkpoint) {
    if (SANITIZED) sig = SIGKILL;
    char name[96];
    snprintf(name, sizeof name, "crashv_%d_%d_%d_%d_%d.h5", threads, counters, spill, sig,
             checkpoint);
    const char *path = tu_path(name);
    char ckpt[600];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt.h5", path);
    unlink(path);
    unlink(ckpt);
    tu_system("rm -rf '%s'.live-*", path);
    memset((void *)g_sh, 0, sizeof *g_sh);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) child(path, threads, counters, spill, checkpoint);
    for (int w = 0; w < 20000 && __atomic_load_n(&g_sh->ready, __ATOMIC_ACQUIRE) < threads; w++)
        usleep(1000);
    wait_samples(path, pid);
    usleep((useconds_t)delay_ms * 1000);
    assert_int_equal(kill(pid, sig), 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFSIGNALED(st)) fail_msg("the child exited with %d", WEXITSTATUS(st));
    assert_int_equal(WTERMSIG(st), sig);
    uint64_t done[MAX_THREADS];
    for (int i = 0; i < threads; i++) done[i] = g_sh->done[i];
    int64_t ckpt_end = 0;
    if (checkpoint) { /* the checkpoint's file, before recover replaces it */
        assert_int_equal(tu_system("cp '%s' '%s'", path, ckpt), 0);
        sps_samples_t s;
        assert_int_equal(sps_samples_read(ckpt, &s), 0);
        for (size_t i = 0; i < s.n; i++)
            if (s.times_ns[i] > ckpt_end) ckpt_end = s.times_ns[i];
        sps_samples_free(&s);
    }

    sps_recover_info_t info;
    char err[512];
    int rc = sps_recover(path, &info, err, sizeof err);
    if (rc) fail_msg("recover: %s", err);
    char dir[600];
    struct stat dst;
    snprintf(dir, sizeof dir, "%s.live-%d", path, (int)pid);
    assert_int_equal(stat(dir, &dst), -1); /* written: removed, samples and all */
    const sps_file_t *f;
    rc = sps_file_open(path, &f, err, sizeof err);
    if (rc) fail_msg("open: %s", err);

    /* values: per thread the calls completed, and maybe the one in flight */
    uint64_t got = calls_of(f, "work"), lo = 0;
    for (int i = 0; i < threads; i++) lo += done[i];
    if (got < lo || got > lo + (uint64_t)threads)
        fail_msg("%llu calls completed, %llu recovered", (unsigned long long)lo,
                 (unsigned long long)got);
    /* per thread: the call in flight is not there (its begin was not
     * stored), closed at the kill (its values: up to the thread's last
     * record, so nothing of it), or complete (its end stored before the
     * counter) */
    int64_t alloc = own_of(f, "work", "alloc_bytes"), freed = own_of(f, "work", "free_bytes");
    int64_t allocs = own_of(f, "work", "allocs"), frees = own_of(f, "work", "frees");
    int match = 0;
    unsigned combos = 1;
    for (int i = 0; i < threads; i++) combos *= 3;
    for (unsigned m = 0; m < combos && !match; m++) {
        uint64_t calls = 0, ended = 0, a = 0, b = 0;
        unsigned x = m;
        for (int i = 0; i < threads; i++, x /= 3) {
            uint64_t c = done[i] + (x % 3 != 0), e = done[i] + (x % 3 == 2);
            calls += c;
            ended += e;
            a += bytes_upto(e);
            b += half_upto(e);
        }
        match = calls == got && (int64_t)a == alloc && (int64_t)b == freed &&
                (int64_t)ended == allocs && (int64_t)ended == frees;
    }
    if (!match)
        fail_msg("%d threads: %llu calls of work recovered with alloc_bytes %lld, free_bytes "
                 "%lld, allocs %lld: no choice of the calls in flight gives these", threads,
                 (unsigned long long)got, (long long)alloc, (long long)freed, (long long)allocs);
    assert_int_equal(self_of(f, "work", "alloc_bytes"), alloc); /* a leaf */
    /* "outer" was open at the kill: closed there, with its values so far */
    assert_int_equal(calls_of(f, "outer"), (uint64_t)threads);
    assert_int_equal(own_of(f, "outer", "alloc_bytes"), alloc + (int64_t)OUTER_SELF * threads);
    assert_int_equal(self_of(f, "outer", "alloc_bytes"), (int64_t)OUTER_SELF * threads);
    assert_true(own_of(f, "outer", "peak_bytes") >= (int64_t)OUTER_SELF);
    if (checkpoint) assert_int_equal(calls_of(f, "before-checkpoint"), 0);
    if (counters) {
        assert_true(value_col(f, "task-clock") >= 0);
        assert_true(value_col(f, "page-faults") >= 0);
        assert_true(own_of(f, "outer", "task-clock") >= own_of(f, "work", "task-clock"));
    }
    sps_file_close(f);

    /* samples: there, in the regions, with frames; none the checkpoint wrote */
    check_samples(path, ckpt_end, g_sh->checkpointed_ns, delay_ms);
    size_t nmeta = 0;
    sps_meta_attr_t *meta = NULL;
    assert_int_equal(sps_metadata_read(path, &meta, &nmeta, err, sizeof err), 0);
    const char *skipped = meta_text(meta, nmeta, "recovered_samples_skipped");
    assert_non_null(skipped);
    assert_string_equal(skipped, "0");
    assert_null(meta_text(meta, nmeta, "recovered_samples_note"));
    sps_metadata_free(meta, nmeta);
    unlink(path);
    unlink(ckpt);
}

static unsigned g_seed;

static int counters_work(void) {
    /* task-clock and page-faults are software events: refused only where
     * perf_event_open is (perf_event_paranoid 3, seccomp) */
    if (sps_set_counters("task-clock,page-faults")) return 0;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.track = SPS_TRACK_COUNTERS;
    int ok = sps_setup(&cfg) == 0;
    if (ok) {
        sps_region_t r = sps_region("probe");
        sps_begin(r);
        tu_spin_ns(2000000);
        sps_end(r);
        uint64_t own[4] = {0}, self[4] = {0}, calls = 0;
        ok = sps_region_values(r, own, self, 4, &calls) == 2 && own[0] > 0;
        sps_shutdown();
    }
    sps_set_counters(NULL);
    return ok;
}

static void test_values_and_samples_after_kill(void **state) {
    (void)state;
    /* (no SIGSEGV sent with kill(): the sampler's fault guard takes the
     * first one and returns -- a real fault faults again, a sent one does
     * not; see the report of this change) */
    static const int sigs[] = {SIGKILL, SIGABRT};
    static const int threads[] = {1, 4};
    int rounds = getenv("SPS_CRASH_ROUNDS") ? atoi(getenv("SPS_CRASH_ROUNDS")) : 1;
    for (int r = 0; r < rounds; r++)
        for (size_t s = 0; s < 2; s++)
            for (size_t t = 0; t < 2; t++)
                for (int spill = 0; spill < 2; spill++)
                    kill_and_recover(threads[t], 0, spill, sigs[s],
                                     DELAY_MS + (int)(rand_r(&g_seed) % 200), 0);
}

static void test_counters_after_kill(void **state) {
    (void)state;
    if (!counters_work()) skip(); /* no perf events here */
    kill_and_recover(2, 1, 0, SIGKILL, DELAY_MS + (int)(rand_r(&g_seed) % 200), 0);
    kill_and_recover(3, 1, 1, SIGKILL, DELAY_MS + (int)(rand_r(&g_seed) % 200), 0);
}

static void test_after_checkpoint(void **state) {
    (void)state;
    kill_and_recover(2, 0, 0, SIGKILL, DELAY_MS + (int)(rand_r(&g_seed) % 150), 1);
    kill_and_recover(2, 0, 1, SIGKILL, DELAY_MS + (int)(rand_r(&g_seed) % 150), 1);
}

/* Damaged samples files: the records are recovered all the same, the
 * samples up to the damage kept, the rest left out with a note; never a
 * crash.  Flips, truncations and garbage on a real file. */
static void test_hostile_samples(void **state) {
    (void)state;
    const char *path = tu_path("crashv_hostile.h5");
    tu_system("rm -rf '%s'.live-*", path);
    memset((void *)g_sh, 0, sizeof *g_sh);
    pid_t pid = fork();
    if (pid == 0) child(path, 2, 0, 0, 0);
    for (int w = 0; w < 20000 && __atomic_load_n(&g_sh->ready, __ATOMIC_ACQUIRE) < 2; w++)
        usleep(1000);
    wait_samples(path, pid);
    usleep(DELAY_MS * 1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char dir[600], saved[700];
    snprintf(dir, sizeof dir, "%s.live-%d", path, (int)pid);
    snprintf(saved, sizeof saved, "%s.saved", path);
    assert_int_equal(tu_system("rm -rf '%s' && cp -r '%s' '%s'", saved, dir, saved), 0);
    char smp[700];
    snprintf(smp, sizeof smp, "%s/samples", dir);
    struct stat st;
    assert_int_equal(stat(smp, &st), 0);
    assert_true(st.st_size > 100);
    char err[512];
    unsigned seed = 11;
    for (int k = 0; k < 48; k++) {
        if (k) assert_int_equal(tu_system("rm -rf '%s' && cp -r '%s' '%s'", dir, saved, dir), 0);
        int fd = open(smp, O_RDWR);
        assert_true(fd >= 0);
        off_t size = lseek(fd, 0, SEEK_END);
        if (k == 0) {
            /* untouched */
        } else if (k < 16) { /* flip bytes */
            for (int j = 0; j < 4; j++) {
                unsigned char b = (unsigned char)rand_r(&seed);
                pwrite(fd, &b, 1, (off_t)(rand_r(&seed) % (unsigned)size));
            }
        } else if (k < 32) { /* truncate anywhere */
            assert_int_equal(ftruncate(fd, (off_t)(rand_r(&seed) % (unsigned)size)), 0);
        } else { /* garbage, or garbage with good framing */
            unsigned char junk[4096];
            for (size_t j = 0; j < sizeof junk; j++) junk[j] = (unsigned char)rand_r(&seed);
            pwrite(fd, junk, sizeof junk, k & 1 ? 0 : 28);
        }
        close(fd);
        if (k == 47) { /* not a file at all */
            unlink(smp);
            assert_int_equal(mkdir(smp, 0700), 0);
        }
        err[0] = 0;
        int rc = sps_recover(path, NULL, err, sizeof err);
        if (rc) fail_msg("damage %d: the records must be recovered: %s", k, err);
        const sps_file_t *f;
        assert_int_equal(sps_file_open(path, &f, err, sizeof err), 0);
        assert_true(calls_of(f, "work") > 0);
        sps_file_close(f);
        sps_samples_t s;
        assert_int_equal(sps_samples_read(path, &s), 0);
        for (size_t i = 0; i < s.n; i++) { /* what is there is whole */
            assert_true(s.stacks[i] >= 0 && (size_t)s.stacks[i] < s.nstacks);
        }
        if (k == 0) assert_true(s.n > 5);
        sps_samples_free(&s);
        size_t nmeta = 0;
        sps_meta_attr_t *meta = NULL;
        assert_int_equal(sps_metadata_read(path, &meta, &nmeta, err, sizeof err), 0);
        if (k == 0) assert_null(meta_text(meta, nmeta, "recovered_samples_note"));
        if (k == 47) assert_non_null(meta_text(meta, nmeta, "recovered_samples_note"));
        sps_metadata_free(meta, nmeta);
        tu_system("rm -rf '%s'", dir);
    }
    tu_system("rm -rf '%s'", saved);
    unlink(path);
}

int main(void) {
    g_sh = mmap(NULL, sizeof *g_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_seed = (unsigned)time(NULL);
    printf("# seed %u\n", g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_samples_after_kill),
        cmocka_unit_test(test_counters_after_kill),
        cmocka_unit_test(test_after_checkpoint),
        cmocka_unit_test(test_hostile_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
