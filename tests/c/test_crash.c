/* test_crash.c -- crash safety and `recover` (core/crash.c, api/recover.c;
 * docs/crash-recovery.md): real child processes record in 1-8 threads,
 * with and without spilling, and are killed at random moments with
 * SIGKILL, SIGSEGV and SIGABRT; what sps_recover writes must hold every
 * call the child completed, and at most one more per thread (the call in
 * flight whose end reached memory before the counter did). */
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

#define MAX_THREADS 8

/* A sanitizer turns a deadly SIGSEGV or SIGABRT into its own report and an
 * exit status: there the kills are all SIGKILL (the recovery is the same). */
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

typedef struct shared {
    volatile uint64_t done[MAX_THREADS]; /* calls of "work" completed */
    volatile int started;
    volatile int ready; /* threads inside "outer" */
} shared_t;

static shared_t *g_sh;
static sps_region_t g_work, g_outer;

static void *worker(void *arg) {
    int i = (int)(intptr_t)arg;
    sps_thread_set_name(i ? "worker" : "main-worker");
    sps_begin(g_outer);
    __atomic_fetch_add(&g_sh->ready, 1, __ATOMIC_RELEASE);
    for (uint64_t k = 0;; k++) {
        sps_begin(g_work);
        if ((k & 1023) == 0) __atomic_fetch_add(&g_sh->started, 1, __ATOMIC_RELAXED);
        sps_end(g_work);
        __atomic_store_n(&g_sh->done[i], k + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* The child: records until it is killed. */
static void child(const char *path, int threads, int spill, int checkpoint) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    /* cmocka catches these in the test process: the child dies of them */
    static const int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    if (spill == 1) {
        cfg.memory_limit = 256 << 10; /* 4 chunks: spills at once */
        cfg.chunk_size = 64 << 10;
    } else if (spill == 2) { /* 16384 slots: the slot table grows and moves */
        cfg.memory_limit = 64 << 20;
        cfg.chunk_size = 4 << 10;
    }
    if (sps_setup(&cfg)) _exit(90);
    g_work = sps_region("work");
    g_outer = sps_region("outer");
    if (checkpoint) { /* a finalize first: the recovered part is what follows */
        sps_region_t pre = sps_region("before-checkpoint");
        for (int k = 0; k < 1000; k++) {
            sps_begin(pre);
            sps_end(pre);
        }
        sps_begin(g_outer); /* open across the checkpoint */
        if (sps_finalize()) _exit(91);
        sps_end(g_outer);
    }
    pthread_t th[MAX_THREADS];
    for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    worker(0);
    _exit(92);
}

static uint64_t calls_of(const sps_file_t *f, const char *name) {
    uint64_t n = 0;
    for (size_t r = 0; r < f->nrows; r++)
        if (!strcmp(f->names[f->rows[r].region], name)) n += f->rows[r].count;
    return n;
}

static int live_dirs(const char *path) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash) *slash = 0;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s.live-", base);
    DIR *d = opendir(slash ? dir : ".");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

/* One child killed with sig after delay_ms of recording; checks what
 * sps_recover gives back. */
static void kill_and_recover(int threads, int spill, int sig, int delay_ms, int checkpoint) {
    if (SANITIZED) sig = SIGKILL;
    char name[96];
    snprintf(name, sizeof name, "crash_%d_%d_%d_%d.h5", threads, spill, sig, checkpoint);
    const char *path = tu_path(name);
    unlink(path);
    tu_system("rm -rf '%s'.live-*", path); /* an earlier failed run's */
    memset((void *)g_sh, 0, sizeof *g_sh);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) child(path, threads, spill, checkpoint);
    /* wait until it records, then a while more */
    for (int w = 0; w < 10000 && __atomic_load_n(&g_sh->ready, __ATOMIC_ACQUIRE) < threads; w++)
        usleep(1000);
    usleep((useconds_t)delay_ms * 1000);
    assert_int_equal(kill(pid, sig), 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), sig);
    uint64_t done = 0;
    for (int i = 0; i < threads; i++) done += g_sh->done[i];
    assert_int_equal(live_dirs(path), 1);
    if (spill == 2) { /* more slots than the table's first 64 KiB hold */
        struct stat st_slots;
        char slots[600];
        snprintf(slots, sizeof slots, "%s.live-%d/slots", path, (int)pid);
        assert_int_equal(stat(slots, &st_slots), 0);
        print_message("slot table: %lld bytes, %llu calls\n", (long long)st_slots.st_size,
                      (unsigned long long)g_sh->done[0]);
        assert_true(st_slots.st_size > (64 << 10));
    }

    sps_recover_info_t info;
    char err[512];
    int rc = sps_recover(path, &info, err, sizeof err);
    if (rc) fail_msg("recover: %s", err);
    assert_int_equal(live_dirs(path), 0); /* written: removed */
    const sps_file_t *f;
    rc = sps_file_open(path, &f, err, sizeof err);
    if (rc) fail_msg("open: %s", err);
    uint64_t got = calls_of(f, "work");
    if (got < done || got > done + (uint64_t)threads)
        fail_msg("%d threads, spill %d, signal %d: %llu calls completed, %llu recovered", threads,
                 spill, sig, (unsigned long long)done, (unsigned long long)got);
    /* every thread's "outer" was open at the kill: closed there */
    assert_int_equal(calls_of(f, "outer"), (uint64_t)threads + (checkpoint ? 1 : 0));
    assert_true(info.open_closed >= (uint64_t)threads);
    if (checkpoint) { /* the checkpoint's calls were written by it, not again */
        assert_int_equal(calls_of(f, "before-checkpoint"), 0);
        assert_int_equal(info.carried, 1);
    }
    assert_int_equal(info.lost_records, 0);
    sps_file_close(f);
    unlink(path);
}

static unsigned g_seed;

static void test_kill_random(void **state) {
    (void)state;
    static const int sigs[] = {SIGKILL, SIGSEGV, SIGABRT};
    static const int threads[] = {1, 4, 8};
    int rounds = getenv("SPS_CRASH_ROUNDS") ? atoi(getenv("SPS_CRASH_ROUNDS")) : 2;
    for (int r = 0; r < rounds; r++)
        for (size_t s = 0; s < 3; s++)
            for (size_t t = 0; t < 3; t++)
                for (int spill = 0; spill < 2; spill++)
                    kill_and_recover(threads[t], spill, sigs[s], 5 + (int)(rand_r(&g_seed) % 120),
                                     0);
}

/* Thousands of small chunks: the slot table (core/crash.c) outgrows its
 * first 64 KiB and its mapping moves while threads record. */
static void test_kill_many_slots(void **state) {
    (void)state;
    kill_and_recover(2, 2, SIGKILL, SANITIZED ? 3000 : 600, 0);
}

static void test_kill_after_checkpoint(void **state) {
    (void)state;
    kill_and_recover(2, 0, SIGKILL, 30, 1);
    kill_and_recover(2, 1, SIGKILL, 60, 1);
}

/* A run that finalizes and exits leaves nothing behind; sps_shutdown too. */
static void test_clean_runs_leave_nothing(void **state) {
    (void)state;
    const char *path = tu_path("crash_clean.h5");
    pid_t pid = fork();
    if (pid == 0) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = path;
        if (sps_setup(&cfg)) _exit(1);
        sps_region_t r = sps_region("x");
        for (int i = 0; i < 100000; i++) {
            sps_begin(r);
            sps_end(r);
        }
        _exit(sps_finalize() ? 2 : (exit(0), 0));
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(live_dirs(path), 0);
    char err[256];
    assert_int_equal(sps_recover(path, NULL, err, sizeof err), SPS_EPATH);
    assert_non_null(strstr(err, "nothing to recover"));

    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(live_dirs(path), 1);
    assert_int_equal(sps_recover(path, NULL, NULL, 0), SPS_EACTIVE);
    sps_shutdown();
    assert_int_equal(live_dirs(path), 0);

    /* off: no directory */
    assert_int_equal(sps_crash_safe(0), 0);
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(live_dirs(path), 0);
    sps_shutdown();
    assert_int_equal(sps_crash_safe(-1), 0);
    assert_int_equal(sps_crash_safe(2), SPS_EINVAL);
}

/* Damaged directories: an error naming the problem, never a crash; a torn
 * last entry (the one being written at the kill) is not an error. */
static void test_hostile(void **state) {
    (void)state;
    const char *path = tu_path("crash_hostile.h5");
    memset((void *)g_sh, 0, sizeof *g_sh);
    pid_t pid = fork();
    if (pid == 0) child(path, 2, 1, 0);
    for (int w = 0; w < 5000 && !__atomic_load_n(&g_sh->started, __ATOMIC_RELAXED); w++)
        usleep(1000);
    usleep(50000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char dir[600], log[700], saved[600];
    snprintf(dir, sizeof dir, "%s.live-%d", path, (int)pid);
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(saved, sizeof saved, "%s.saved-log", path);
    assert_int_equal(tu_system("cp '%s' '%s'", log, saved), 0);
    struct stat st;
    assert_int_equal(stat(log, &st), 0);
    char err[512];
    /* a torn tail: recovers */
    assert_int_equal(truncate(log, st.st_size - 5), 0);
    int rc = sps_recover(path, NULL, err, sizeof err);
    if (rc) fail_msg("torn tail: %s", err);
    /* the directory is gone now: rebuild it from the saved log each time */
    unsigned seed = 7;
    for (int k = 0; k < 60; k++) {
        assert_int_equal(tu_system("mkdir -p '%s' && cp '%s' '%s' && : > '%s/chunks' && : > '%s/spill'",
                                   dir, saved, log, dir, dir), 0);
        int fd = open(log, O_RDWR);
        assert_true(fd >= 0);
        off_t size = lseek(fd, 0, SEEK_END);
        if (k < 20) { /* flip bytes */
            for (int j = 0; j < 4; j++) {
                unsigned char b = (unsigned char)rand_r(&seed);
                pwrite(fd, &b, 1, (off_t)(rand_r(&seed) % (unsigned)size));
            }
        } else if (k < 40) { /* truncate anywhere */
            ftruncate(fd, (off_t)(rand_r(&seed) % (unsigned)size));
        } else { /* garbage */
            unsigned char junk[4096];
            for (size_t j = 0; j < sizeof junk; j++) junk[j] = (unsigned char)rand_r(&seed);
            pwrite(fd, junk, sizeof junk, k & 1 ? 0 : 24);
        }
        close(fd);
        err[0] = 0;
        rc = sps_recover(path, NULL, err, sizeof err);
        assert_true(rc == 0 || rc == SPS_EFORMAT || rc == SPS_EPATH);
        if (rc) assert_true(strlen(err) > 10);
        tu_system("rm -rf '%s'", dir);
    }
    unlink(saved);
    unlink(path);
}

int main(void) {
    g_sh = mmap(NULL, sizeof *g_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    g_seed = (unsigned)time(NULL);
    printf("# seed %u\n", g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_runs_leave_nothing),
        cmocka_unit_test(test_kill_random),
        cmocka_unit_test(test_kill_after_checkpoint),
        cmocka_unit_test(test_kill_many_slots),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
