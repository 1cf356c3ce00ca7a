/*
 * test_disk_faults.c -- failing disks at finalize, at a checkpoint (a
 * finalize while another thread records), while spilling and while
 * converting or merging (docs/robustness.md, "Failing disks"):
 *
 *   - the code is SPS_EIO (the data could not be written) or SPS_EPATH
 *     (the file could not be created or put in place), and the cause is
 *     the operating system's: sps_last_errno() is ENOSPC / EIO / EFBIG /
 *     ENOENT / EROFS, sps_last_error() says it in words and names the file;
 *   - nothing is left in the directory (no output, no temporary file) and
 *     no HDF5 object is left open (H5Fget_obj_count);
 *   - nothing recorded is lost: a retry to another path writes every call;
 *   - the process exits normally afterwards (through HDF5's atexit, which
 *     crashes on a file left open);
 *   - the CLI's convert and merge exit 1 with one line naming the cause.
 *
 * Each case runs in a child: this program started again with "--child
 * CASE DIR" (so that LD_PRELOAD, the limits and the exit are the
 * child's).  The faults come from the fault_shim.c library (SPS_FAULT_SHIM)
 * everywhere, and from a real 512 KiB tmpfs where the tests run as root
 * and mount(8) works (skipped with the reason otherwise).
 */
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tu_h5.h"

enum { NCALLS = 300000 };

/* ------------------------------------------------------------------------ */
/* The child's side                                                          */
/* ------------------------------------------------------------------------ */

/* The child's exit codes: which check failed. */
enum { C_OK, C_SETUP, C_RC, C_ERRNO, C_MSG, C_LEFT, C_RETRY, C_COUNT, C_DROP, C_USAGE,
       C_OPEN };

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* Whether dir holds no entry besides . and .. */
static int dir_empty(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 1; /* a vanished directory holds nothing */
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n == 0;
}

/* Records n calls of outer > inner. */
static void record(sps_region_t outer, sps_region_t inner, int n) {
    for (int i = 0; i < n; i++) {
        sps_begin(outer);
        sps_begin(inner);
        sps_end(inner);
        sps_end(outer);
    }
}

/* Checks a failed finalize's code, cause, message and directory against
 * SPS_EXPECT_RC / SPS_EXPECT_ERRNO (SPS_EXPECT_MSG: words it must hold). */
static int check_failure(int rc, const char *dir, const char *path) {
    if (rc != env_int("SPS_EXPECT_RC", SPS_EIO)) {
        fprintf(stderr, "rc %d (%s)\n", rc, sps_err_name(rc));
        return C_RC;
    }
    if (sps_last_errno() != env_int("SPS_EXPECT_ERRNO", ENOSPC)) {
        fprintf(stderr, "errno %d, message '%s'\n", sps_last_errno(), sps_last_error());
        return C_ERRNO;
    }
    const char *want = getenv("SPS_EXPECT_MSG");
    if ((want && !strstr(sps_last_error(), want)) || !strstr(sps_last_error(), path)) {
        fprintf(stderr, "message '%s'\n", sps_last_error());
        return C_MSG;
    }
    /* every HDF5 handle of the failed write is closed (a file left open
     * is what crashed libhdf5 at exit) */
    ssize_t open_ids = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open_ids != 0) {
        fprintf(stderr, "%zd HDF5 objects still open\n", open_ids);
        return C_OPEN;
    }
    return dir_empty(dir) ? C_OK : C_LEFT;
}

/* Writes the period to the safe path and checks that it holds n calls of
 * each region. */
static int check_retry(const char *safe, uint64_t n) {
    unlink(safe);
    if (sps_finalize_to(safe)) return C_RETRY;
    if (sps_last_errno() || *sps_last_error()) { /* the old cause is forgotten */
        fprintf(stderr, "after a good finalize: errno %d, '%s'\n", sps_last_errno(),
                sps_last_error());
        return C_RETRY;
    }
    tu_h5_t *h = tu_h5_load(safe);
    int ok = h && h->ok && tu_h5_count(h, "disk.outer") == n &&
             tu_h5_count(h, "disk.inner") == n;
    if (h && !ok)
        fprintf(stderr, "retry holds %llu/%llu calls of %llu\n",
                (unsigned long long)tu_h5_count(h, "disk.outer"),
                (unsigned long long)tu_h5_count(h, "disk.inner"), (unsigned long long)n);
    tu_h5_free(h);
    unlink(safe);
    return ok ? C_OK : C_COUNT;
}

/* SPS_FSIZE (bytes): the file size limit stands for the disk, set just
 * before the write and lifted after (writes past it fail with EFBIG). */
static void fsize_limit(int on) {
    static struct rlimit was;
    const char *v = getenv("SPS_FSIZE");
    if (!v || !*v) return;
    if (on) {
        signal(SIGXFSZ, SIG_IGN);
        getrlimit(RLIMIT_FSIZE, &was);
        struct rlimit r = {(rlim_t)atoll(v), was.rlim_max};
        setrlimit(RLIMIT_FSIZE, &r);
    } else {
        setrlimit(RLIMIT_FSIZE, &was);
    }
}

/* finalize to DIR/out.h5 fails; the retry writes everything. */
static int child_finalize(const char *dir, const char *safe) {
    char path[4200];
    snprintf(path, sizeof path, "%s/out.h5", dir);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    if (sps_setup(&cfg)) return C_SETUP;
    sps_region_t a = sps_region("disk.outer"), b = sps_region("disk.inner");
    record(a, b, NCALLS);
    if (getenv("SPS_RMDIR")) rmdir(dir); /* the directory vanishes */
    fsize_limit(1);
    int fin = sps_finalize();
    fsize_limit(0);
    if (fin == 0 && getenv("SPS_MAY_FIT")) { /* the budget was enough: a file */
        tu_h5_t *h = tu_h5_load(path);
        int ok = h && h->ok && tu_h5_count(h, "disk.outer") == NCALLS;
        tu_h5_free(h);
        unlink(path);
        sps_shutdown();
        return ok ? C_OK : C_COUNT;
    }
    int rc = check_failure(fin, dir, path);
    if (rc) return rc;
    rc = check_retry(safe, NCALLS);
    sps_shutdown();
    return rc;
}

/* A checkpoint: finalize while another thread records; it fails, the
 * thread goes on, the retry holds the thread's every call. */
/* stop and done are shared with the main thread: atomics (TSan). */
typedef struct {
    int stop;
    uint64_t done;
} rec_t;

static void *recorder(void *arg) {
    rec_t *r = arg;
    sps_region_t a = sps_region("disk.outer"), b = sps_region("disk.inner");
    /* bounded, so that memory stays under the default limit (no spill,
     * which a file size limit would make drop calls) */
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED) &&
           __atomic_load_n(&r->done, __ATOMIC_RELAXED) < 2 * NCALLS) {
        record(a, b, 1000);
        __atomic_fetch_add(&r->done, 1000, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int child_checkpoint(const char *dir, const char *safe) {
    char path[4200];
    snprintf(path, sizeof path, "%s/out.h5", dir);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.spill_dir = getenv("SPS_TEST_TMP");
    if (sps_setup(&cfg)) return C_SETUP;
    rec_t r = {0, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, recorder, &r)) return C_SETUP;
    while (__atomic_load_n(&r.done, __ATOMIC_RELAXED) < NCALLS) usleep(1000);
    if (getenv("SPS_RMDIR")) rmdir(dir);
    fsize_limit(1);
    int rc = check_failure(sps_finalize(), dir, path);
    fsize_limit(0);
    usleep(20000); /* recording goes on after the failed checkpoint */
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    if (rc) return rc;
    rc = check_retry(safe, r.done);
    sps_shutdown();
    return rc;
}

/* Spilling to a failing disk: recording does not stop or crash; what
 * cannot be spilled is dropped and counted (sps_dropped), the rest is
 * written by the retry. */
/* The spill failure's cause: sps_spill_error's errno and words
 * (SPS_EXPECT_ERRNO, SPS_EXPECT_MSG; the words name the directory), and
 * the same in the retry's /metadata (spill_errno, spill_error). */
static int check_spill_cause(const char *dir, const char *safe) {
    int want = env_int("SPS_EXPECT_ERRNO", ENOSPC);
    const char *words = getenv("SPS_EXPECT_MSG");
    char why[512], meta[512] = "";
    int got = sps_spill_error(why, sizeof why);
    if (got != want || !strstr(why, dir) || (words && !strstr(why, words))) {
        fprintf(stderr, "spill cause %d '%s', want %d\n", got, why, want);
        return C_ERRNO;
    }
    hid_t f = H5Fopen(safe, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
        tu_h5_attr_str(f, "/metadata", "spill_error", meta, sizeof meta);
        H5Fclose(f);
    }
    if (tu_h5_attr_i64(safe, "/metadata", "spill_errno", -1) != want || strcmp(meta, why)) {
        fprintf(stderr, "/metadata spill_error '%s' (want '%s')\n", meta, why);
        return C_MSG;
    }
    return C_OK;
}

static int child_spill(const char *dir, const char *safe) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.chunk_size = 4096;
    cfg.memory_limit = 8192;
    cfg.spill_dir = dir;
    if (sps_setup(&cfg)) return C_SETUP;
    if (sps_spill_error(NULL, 0)) return C_ERRNO; /* no failure yet */
    if (getenv("SPS_RMDIR")) rmdir(dir); /* the spill directory vanishes */
    sps_region_t a = sps_region("disk.outer"), b = sps_region("disk.inner");
    record(a, b, NCALLS);
    uint64_t dropped = sps_dropped();
    sps_stats_t st;
    if (sps_region_stats(a, &st)) return C_COUNT;
    if (dropped == 0) {
        fprintf(stderr, "nothing dropped: the spill never met the fault\n");
        return C_DROP;
    }
    uint64_t kept = st.num_calls;
    unlink(safe);
    if (sps_finalize_to(safe)) return C_RETRY;
    tu_h5_t *h = tu_h5_load(safe);
    int ok = h && h->ok && tu_h5_count(h, "disk.outer") == kept &&
             tu_h5_attr_i64(safe, "/metadata", "dropped_events", -1) == (int64_t)dropped;
    tu_h5_free(h);
    int cause = check_spill_cause(dir, safe);
    unlink(safe);
    if (cause) return cause;
    sps_shutdown();
    /* 4 records a call; every one kept in a call or counted as dropped */
    if (ok && 4ull * NCALLS - 4 * kept > dropped + 4) {
        fprintf(stderr, "%llu records neither kept (%llu calls) nor counted as dropped (%llu)\n",
                (unsigned long long)(4ull * NCALLS - 4 * kept - dropped),
                (unsigned long long)kept, (unsigned long long)dropped);
        return C_DROP;
    }
    return ok ? C_OK : C_COUNT;
}

static int child_main(const char *which, const char *dir, const char *safe) {
    if (!strcmp(which, "finalize")) return child_finalize(dir, safe);
    if (!strcmp(which, "checkpoint")) return child_checkpoint(dir, safe);
    if (!strcmp(which, "spill")) return child_spill(dir, safe);
    return C_USAGE;
}

/* ------------------------------------------------------------------------ */
/* The parent's side                                                         */
/* ------------------------------------------------------------------------ */

static const char *g_self; /* this program */

/* Runs argv with the environment settings env (NAME=VALUE..., NULL
 * ended) added, stderr into err_path; returns the wait status. */
static int run_with(char *const argv[], const char *const env[], const char *err_path) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        if (err_path) {
            FILE *f = freopen(err_path, "w", stderr);
            (void)f;
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Runs the child case in dir with env; it must exit 0 on its own. */
static void run_case(const char *which, const char *dir, const char *const env[]) {
    char *argv[] = {(char *)g_self, "--child", (char *)which, (char *)dir,
                    (char *)tu_path("disk_faults_safe.h5"), NULL};
    const char *errf = tu_path("disk_faults_child.err");
    int st = run_with(argv, env, errf);
    char line[512] = "";
    FILE *f = fopen(errf, "r");
    if (f) {
        size_t k = fread(line, 1, sizeof line - 1, f);
        line[k] = 0;
        fclose(f);
    }
    if (WIFSIGNALED(st)) fail_msg("%s: the child died of signal %d: %s", which, WTERMSIG(st), line);
    if (WEXITSTATUS(st)) fail_msg("%s: child check %d failed: %s", which, WEXITSTATUS(st), line);
}

/* A fresh, empty directory under the test tmp dir. */
static const char *fresh_dir(const char *name) {
    static char d[1024]; /* tu_path's buffers rotate */
    snprintf(d, sizeof d, "%s", tu_path(name));
    tu_system("rm -rf '%s' && mkdir -p '%s'", d, d);
    return d;
}

static char g_env_shim[4200], g_env_dir[4200];

/* The shim's settings for faults in dir (more NAME=VALUE after them). */
static void need_shim(void) {
    if (!getenv("SPS_FAULT_SHIM")) {
        printf("skipped: SPS_FAULT_SHIM (the fault shim's path) is not set: run through ctest\n");
        skip();
    }
}

static void shim_env(const char **env, const char *dir) {
    need_shim();
    snprintf(g_env_shim, sizeof g_env_shim, "LD_PRELOAD=%s", getenv("SPS_FAULT_SHIM"));
    snprintf(g_env_dir, sizeof g_env_dir, "SPS_FAULT_DIR=%s", dir);
    env[0] = g_env_shim;
    env[1] = g_env_dir;
}

/* A full disk (the shim: every reservation and write under the directory
 * fails with ENOSPC once 64 KiB are written). */
static void test_shim_full_disk_at_finalize(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_full");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_BYTES=65536";
    env[3] = "SPS_EXPECT_MSG=no space left on device";
    run_case("finalize", dir, env);
    /* fallocate alone refusing (the reservation ahead of the writes) */
    env[2] = "SPS_FAULT_OPS=fallocate";
    run_case("finalize", dir, env);
}

/* EIO in the middle of the write (the first writes pass, a later fails:
 * libhdf5's own writes, which then cannot flush at close either). */
static void test_shim_eio_mid_write(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_eio");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_ERRNO=5";
    env[3] = "SPS_FAULT_OPS=write";
    env[4] = "SPS_FAULT_BYTES=20000";
    env[5] = "SPS_EXPECT_ERRNO=5";
    env[6] = "SPS_EXPECT_MSG=input/output error";
    run_case("finalize", dir, env);
}

/* The disk fills at every point of the write in turn (budgets from 4 KiB
 * up, 1.4x apart, until one is enough): wherever the write fails (inside
 * libhdf5's writes, its flush, the staging file, the tables), the failure
 * is clean, no HDF5 object stays open, the retry writes everything and
 * the process exits normally.  A failure half-way through libhdf5's flush
 * is the one that left the file open (and crashed at exit) until the
 * discard finished the flush into memory. */
static void test_shim_budget_sweep(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_sweep");
    const char *env[8] = {0};
    shim_env(env, dir);
    static char budget[64];
    env[2] = budget;
    env[3] = "SPS_FAULT_OPS=write";
    env[4] = "SPS_MAY_FIT=1";
    for (double b = 4096; b < 8e6; b *= 1.4) {
        snprintf(budget, sizeof budget, "SPS_FAULT_BYTES=%.0f", b);
        run_case("finalize", dir, env);
    }
    /* the end of the write (libhdf5's flush, where the window that
     * crashed lies: 87-98 % of the file, measured), in 2 % steps of the
     * size the same recording has here */
    const char *probe = tu_path("disk_sweep_size.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = probe;
    assert_int_equal(sps_setup(&cfg), 0);
    record(sps_region("disk.outer"), sps_region("disk.inner"), NCALLS);
    assert_int_equal(sps_finalize(), 0);
    sps_shutdown();
    struct stat st;
    assert_int_equal(stat(probe, &st), 0);
    unlink(probe);
    for (int pct = 60; pct <= 110; pct += 2) {
        snprintf(budget, sizeof budget, "SPS_FAULT_BYTES=%lld", (long long)st.st_size * pct / 100);
        run_case("finalize", dir, env);
    }
}

/* fsync and rename failing: the file is complete but cannot be trusted
 * (fsync) or put in place (rename). */
static void test_shim_fsync_and_rename(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_sync");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_OPS=fsync";
    env[3] = "SPS_FAULT_ERRNO=5";
    env[4] = "SPS_EXPECT_ERRNO=5";
    run_case("finalize", dir, env);
    env[2] = "SPS_FAULT_OPS=rename";
    env[3] = "SPS_FAULT_ERRNO=30"; /* EROFS */
    env[4] = "SPS_EXPECT_ERRNO=30";
    env[5] = "SPS_EXPECT_RC=-9";
    env[6] = "SPS_EXPECT_MSG=read-only file system";
    run_case("finalize", dir, env);
}

/* A file size limit (RLIMIT_FSIZE, no shim): EFBIG. */
static void test_file_size_limit(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_fsize");
    const char *env[] = {"SPS_FSIZE=100000", "SPS_EXPECT_ERRNO=27",
                         "SPS_EXPECT_MSG=file too large", NULL};
    run_case("finalize", dir, env);
}

/* The output's directory vanishes before finalize: SPS_EPATH, ENOENT. */
static void test_vanished_directory(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_gone");
    const char *env[] = {"SPS_RMDIR=1", "SPS_EXPECT_RC=-9", "SPS_EXPECT_ERRNO=2",
                         "SPS_EXPECT_MSG=no such file or directory", NULL};
    run_case("finalize", dir, env);
}

/* A checkpoint on a full disk while another thread records. */
static void test_shim_checkpoint(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_ckpt");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_BYTES=65536";
    run_case("checkpoint", dir, env);
    /* EIO inside libhdf5's own writes while the thread records */
    env[2] = "SPS_FAULT_BYTES=20000";
    env[3] = "SPS_FAULT_ERRNO=5";
    env[4] = "SPS_FAULT_OPS=write";
    env[5] = "SPS_EXPECT_ERRNO=5";
    run_case("checkpoint", dir, env);
}

/* A checkpoint under a file size limit, and into a vanished directory. */
static void test_checkpoint_fsize_and_vanished(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_ckpt_fsize");
    const char *env[] = {"SPS_FSIZE=100000", "SPS_EXPECT_ERRNO=27", NULL};
    run_case("checkpoint", dir, env);
    const char *env2[] = {"SPS_RMDIR=1", "SPS_EXPECT_RC=-9", "SPS_EXPECT_ERRNO=2", NULL};
    run_case("checkpoint", dir, env2);
}

/* The spill directory's disk is full. */
static void test_shim_spill(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_spill");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_BYTES=32768";
    run_case("spill", dir, env);
    /* EIO in the middle of the spill: the same, and the cause says so */
    env[3] = "SPS_FAULT_ERRNO=5";
    env[4] = "SPS_EXPECT_ERRNO=5";
    env[5] = "SPS_EXPECT_MSG=input/output error";
    run_case("spill", dir, env);
}

/* Writes a small recording to path (in this process). */
static void make_input(const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t a = sps_region("disk.outer"), b = sps_region("disk.inner");
    record(a, b, 100000);
    assert_int_equal(sps_finalize(), 0);
    sps_shutdown();
}

/* Runs the CLI with args under the shim (faults in dir after 16 KiB:
 * errno_env, e.g. "SPS_FAULT_ERRNO=28"); it must exit 1 with one line
 * naming the cause (cause: strerror's words) and leave dir empty. */
static void cli_fails(const char *dir, char *const args[], const char *errno_env,
                      const char *cause) {
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_BYTES=16384";
    env[3] = errno_env;
    const char *errf = tu_path("disk_cli.err");
    int st = run_with(args, env, errf);
    char text[1024] = "";
    FILE *f = fopen(errf, "r");
    assert_non_null(f);
    size_t k = fread(text, 1, sizeof text - 1, f);
    text[k] = 0;
    fclose(f);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
        fail_msg("%s %s: status %d: %s", args[1], args[2], st, text);
    if (!strstr(text, cause)) fail_msg("%s: says '%s'", args[1], text);
    char *nl = strchr(text, '\n');
    assert_true(nl && nl[1] == 0); /* one line */
    assert_true(dir_empty(dir));
}

static void test_shim_cli_convert_and_merge(void **state) {
    (void)state;
    need_shim();
    char in[1024]; /* tu_path's buffers rotate */
    snprintf(in, sizeof in, "%s", tu_path("disk_cli_in.h5"));
    make_input(in);
    const char *dir = fresh_dir("disk_shim_cli");
    char out[4200], out2[4200];
    snprintf(out, sizeof out, "%s/out.pftrace", dir);
    snprintf(out2, sizeof out2, "%s/out.h5", dir);
    const char *cli = getenv("SPS_CLI");
    assert_non_null(cli);
    char *conv[] = {(char *)cli, "convert", in, out, NULL};
    char *conv_h5[] = {(char *)cli, "convert", in, out2, NULL};
    char *merge[] = {(char *)cli, "merge", "-o", out2, in, NULL};
    char *const *runs[] = {conv, conv_h5, merge};
    static const char *const faults[][2] = {{"SPS_FAULT_ERRNO=28", "no space left on device"},
                                            {"SPS_FAULT_ERRNO=5", "input/output error"},
                                            {"SPS_FAULT_ERRNO=27", "file too large"}};
    for (size_t f = 0; f < 3; f++)
        for (size_t i = 0; i < 3; i++) cli_fails(dir, runs[i], faults[f][0], faults[f][1]);
    unlink(in);
}

/* A quota (EDQUOT) at finalize: the shim's writes fail with it once 64 KiB
 * are written. */
static void test_shim_quota_at_finalize(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_quota");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_BYTES=65536";
    env[3] = "SPS_FAULT_ERRNO=122"; /* EDQUOT */
    env[4] = "SPS_EXPECT_ERRNO=122";
    env[5] = "SPS_EXPECT_MSG=disk quota exceeded";
    run_case("finalize", dir, env);
}

/* No permission (EACCES) at finalize: the shim refuses to create files in
 * the directory (the tests run as root, whom a mode does not stop). */
static void test_shim_no_permission_at_finalize(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_shim_acces");
    const char *env[8] = {0};
    shim_env(env, dir);
    env[2] = "SPS_FAULT_OPS=open";
    env[3] = "SPS_FAULT_ERRNO=13"; /* EACCES */
    env[4] = "SPS_EXPECT_ERRNO=13";
    env[5] = "SPS_EXPECT_RC=-9";
    env[6] = "SPS_EXPECT_MSG=permission denied";
    run_case("finalize", dir, env);
}

/* A real full disk, a read-only file system: tmpfs mounts (root only). */
static int mount_tmpfs(const char *dir, const char *opts) {
    if (geteuid() != 0) return -1;
    return tu_system("mount -t tmpfs -o %s tmpfs '%s' 2>/dev/null", opts, dir);
}

/* A read-only directory for dir: a read-only tmpfs mounted there (root;
 * *mounted = 1, unmount it after), else the shim's refusal to create
 * files there with EROFS (env[0..2] set).  Skips when neither works. */
static void read_only_dir(const char *dir, const char **env, int *mounted) {
    *mounted = mount_tmpfs(dir, "ro,size=64k") == 0;
    if (*mounted) return;
    if (!getenv("SPS_FAULT_SHIM")) {
        printf("skipped: a read-only directory needs root and mount(8) (a read-only "
               "tmpfs) or the fault shim\n");
        skip();
    }
    shim_env(env, dir);
    env[2] = "SPS_FAULT_OPS=open";
    env[3] = "SPS_FAULT_ERRNO=30";
}

/* Spilling into a read-only directory (real or the shim's) and into one
 * that vanished: the spill fails at its open, events are dropped and
 * counted, the cause (EROFS, ENOENT) is kept and written to /metadata. */
static void test_spill_read_only_and_vanished(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_spill_ro");
    const char *env[10] = {0};
    int mounted;
    read_only_dir(dir, env, &mounted);
    size_t k = mounted ? 0 : 4;
    env[k] = "SPS_EXPECT_ERRNO=30";
    env[k + 1] = "SPS_EXPECT_MSG=read-only file system";
    run_case("spill", dir, env);
    if (mounted) tu_system("umount '%s'", dir);
    const char *gone = fresh_dir("disk_spill_gone");
    const char *env2[] = {"SPS_RMDIR=1", "SPS_EXPECT_ERRNO=2",
                          "SPS_EXPECT_MSG=no such file or directory", NULL};
    run_case("spill", gone, env2);
}

/* Runs the CLI with args (env added: faults, if any); it must exit 1 with
 * one line naming the cause and the output, and leave dir empty. */
static void cli_refused(const char *dir, char *const args[], const char *const env[],
                        const char *cause, const char *out) {
    const char *errf = tu_path("disk_cli.err");
    int st = run_with(args, env, errf);
    char text[1024] = "";
    FILE *f = fopen(errf, "r");
    assert_non_null(f);
    size_t k = fread(text, 1, sizeof text - 1, f);
    text[k] = 0;
    fclose(f);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
        fail_msg("%s %s: status %d: %s", args[1], args[2], st, text);
    if (!strstr(text, cause) || !strstr(text, out)) fail_msg("%s: says '%s'", args[1], text);
    char *nl = strchr(text, '\n');
    assert_true(nl && nl[1] == 0); /* one line */
    assert_true(dir_empty(dir));
}

/* The CLI's writers (convert to every format, merge, every export, the
 * HTML page) into dir for input in: out[i] the outputs, runs[i] their
 * command lines (NULL ended); buffers owned by the caller. */
enum { NWRITERS = 12 };
static void cli_writers(const char *in, const char *dir, char out[NWRITERS][4200],
                        char *runs[NWRITERS][8]) {
    static const char *const names[NWRITERS] = {
        "c.json", "c.json.gz", "c.pftrace", "c.h5", "m.h5", "m.json",
        "e.speedscope.json", "e.prof", "e.svg", "e.trace.json", "e.trace.json.gz", "p.html"};
    const char *cli = getenv("SPS_CLI");
    assert_non_null(cli);
    for (int i = 0; i < NWRITERS; i++) {
        snprintf(out[i], 4200, "%s/%s", dir, names[i]);
        char **a = runs[i];
        memset(a, 0, 8 * sizeof *a);
        a[0] = (char *)cli;
        if (i < 4) {
            a[1] = "convert", a[2] = (char *)in, a[3] = out[i];
        } else if (i < 6) {
            a[1] = "merge", a[2] = "-o", a[3] = out[i], a[4] = (char *)in;
        } else if (i < 11) {
            static const char *const fmt[] = {"speedscope", "prof", "svg", "chrome", "chrome"};
            a[1] = "export", a[2] = (char *)fmt[i - 6], a[3] = (char *)in, a[4] = "-o",
            a[5] = out[i];
        } else {
            a[1] = "html", a[2] = (char *)in, a[3] = "-o", a[4] = out[i];
        }
    }
}

/* Every CLI writer on a failing disk (the shim: full after 16 KiB, EIO,
 * a file size limit's EFBIG, a quota's EDQUOT): exit 1, one line with the
 * cause and the output's name, nothing left.  The text outputs (Chrome
 * JSON, speedscope, prof, SVG, HTML) write through sps__out_open's
 * stream, which the shim sees. */
static void test_shim_cli_every_writer(void **state) {
    (void)state;
    need_shim();
    char in[1024];
    snprintf(in, sizeof in, "%s", tu_path("disk_cli_in2.h5"));
    make_input(in);
    const char *dir = fresh_dir("disk_shim_writers");
    static char out[NWRITERS][4200];
    static char *runs[NWRITERS][8];
    cli_writers(in, dir, out, runs);
    static const char *const faults[][2] = {{"SPS_FAULT_ERRNO=28", "no space left on device"},
                                            {"SPS_FAULT_ERRNO=5", "input/output error"},
                                            {"SPS_FAULT_ERRNO=27", "file too large"},
                                            {"SPS_FAULT_ERRNO=122", "disk quota exceeded"}};
    for (size_t f = 0; f < 4; f++)
        for (int i = 0; i < NWRITERS; i++) {
            const char *env[8] = {0};
            shim_env(env, dir);
            /* small outputs (prof, svg: ~1 KB here) fill a smaller disk */
            env[2] = i == 7 || i == 8 ? "SPS_FAULT_BYTES=256" : "SPS_FAULT_BYTES=16384";
            env[3] = faults[f][0];
            cli_refused(dir, runs[i], env, faults[f][1], out[i]);
        }
    /* the plain text outputs are synced at close (sps__out_open): a failed
     * fsync is a failed write */
    static const int synced[] = {0, 5, 6, 7, 8, 9, 11};
    for (size_t k = 0; k < sizeof synced / sizeof synced[0]; k++) {
        const char *env[8] = {0};
        shim_env(env, dir);
        env[2] = "SPS_FAULT_OPS=fsync";
        env[3] = "SPS_FAULT_ERRNO=5";
        cli_refused(dir, runs[synced[k]], env, "input/output error", out[synced[k]]);
    }
    unlink(in);
}

/* Every CLI writer into a read-only directory (a read-only tmpfs as
 * root, else the shim's EROFS) and into a vanished one (ENOENT). */
static void test_cli_read_only_and_vanished(void **state) {
    (void)state;
    char in[1024];
    snprintf(in, sizeof in, "%s", tu_path("disk_cli_in3.h5"));
    make_input(in);
    const char *dir = fresh_dir("disk_cli_ro");
    static char out[NWRITERS][4200];
    static char *runs[NWRITERS][8];
    const char *env[8] = {0};
    int mounted;
    read_only_dir(dir, env, &mounted);
    cli_writers(in, dir, out, runs);
    for (int i = 0; i < NWRITERS; i++)
        cli_refused(dir, runs[i], env, "read-only file system", out[i]);
    if (mounted) tu_system("umount '%s'", dir);
    char gone[1200];
    snprintf(gone, sizeof gone, "%s/gone", fresh_dir("disk_cli_gone"));
    cli_writers(in, gone, out, runs);
    for (int i = 0; i < NWRITERS; i++)
        cli_refused(gone, runs[i], NULL, "no such file or directory", out[i]);
    unlink(in);
}

/* Every CLI writer on a real full disk (a 512 KiB tmpfs filled to its last
 * byte; root only). */
static void test_tmpfs_cli_every_writer(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_tmpfs_writers");
    if (mount_tmpfs(dir, "size=512k")) {
        printf("skipped: a real full disk needs root and mount(8) (tmpfs); the shim's cases cover it\n");
        skip();
    }
    char in[1024];
    snprintf(in, sizeof in, "%s", tu_path("disk_cli_in4.h5"));
    make_input(in);
    /* a filler takes every byte of the tmpfs; the outputs go to a
     * subdirectory, which must stay empty */
    char sub[1200], filler[1300];
    snprintf(sub, sizeof sub, "%s/out", dir);
    snprintf(filler, sizeof filler, "%s/filler", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    tu_system("dd if=/dev/zero of='%s' bs=4k 2>/dev/null; true", filler);
    static char out[NWRITERS][4200];
    static char *runs[NWRITERS][8];
    cli_writers(in, sub, out, runs);
    for (int i = 0; i < NWRITERS; i++)
        cli_refused(sub, runs[i], NULL, "no space left on device", out[i]);
    tu_system("umount '%s'", dir);
    unlink(in);
}

/* Fills the file system of dir up to leave_bytes with a file dir/filler
 * (the spill's packed chunks are small: 300 000 calls alone may not fill
 * 512 KiB, depending on how regular their timestamps came out). */
static void fill_fs(const char *dir, unsigned long long leave_bytes) {
    struct statvfs vfs;
    assert_int_equal(statvfs(dir, &vfs), 0);
    unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    char path[1024], block[4096] = {0};
    snprintf(path, sizeof path, "%s/filler", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (unsigned long long n = 0; n + leave_bytes + sizeof block <= avail; n += sizeof block)
        if (fwrite(block, 1, sizeof block, f) != sizeof block) break;
    fclose(f);
}

static void test_tmpfs_full_disk(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_tmpfs");
    if (mount_tmpfs(dir, "size=512k")) {
        printf("skipped: a real full disk needs root and mount(8) (tmpfs); the shim's cases cover it\n");
        skip();
    }
    const char *env[] = {"SPS_EXPECT_MSG=no space left on device", NULL};
    run_case("finalize", dir, env);
    run_case("checkpoint", dir, env);
    fill_fs(dir, 8192);
    run_case("spill", dir, env);
    tu_system("rm -f '%s/filler'", dir);
    tu_system("umount '%s'", dir);
}

/* A read-only file system (root: a read-only tmpfs). */
static void test_tmpfs_read_only(void **state) {
    (void)state;
    const char *dir = fresh_dir("disk_ro");
    if (mount_tmpfs(dir, "size=512k,ro")) {
        printf("skipped: a read-only file system needs root and mount(8)\n");
        skip();
    }
    const char *env[] = {"SPS_EXPECT_RC=-9", "SPS_EXPECT_ERRNO=30",
                         "SPS_EXPECT_MSG=read-only file system", NULL};
    run_case("finalize", dir, env);
    tu_system("umount '%s'", dir);
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "--child")) return child_main(argv[2], argv[3], argv[4]);
    /* the children run with the shim preloaded ahead of a sanitizer's
     * runtime (make check-sanitize): tell ASan that is intended */
    static char asan[2048];
    const char *a = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", a ? a : "",
             a && *a ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    g_self = "/proc/self/exe";
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) self[n] = 0, g_self = self;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shim_full_disk_at_finalize),
        cmocka_unit_test(test_shim_eio_mid_write),
        cmocka_unit_test(test_shim_budget_sweep),
        cmocka_unit_test(test_shim_fsync_and_rename),
        cmocka_unit_test(test_file_size_limit),
        cmocka_unit_test(test_vanished_directory),
        cmocka_unit_test(test_shim_checkpoint),
        cmocka_unit_test(test_checkpoint_fsize_and_vanished),
        cmocka_unit_test(test_shim_spill),
        cmocka_unit_test(test_shim_cli_convert_and_merge),
        cmocka_unit_test(test_tmpfs_full_disk),
        cmocka_unit_test(test_tmpfs_read_only),
        cmocka_unit_test(test_shim_quota_at_finalize),
        cmocka_unit_test(test_shim_no_permission_at_finalize),
        cmocka_unit_test(test_spill_read_only_and_vanished),
        cmocka_unit_test(test_shim_cli_every_writer),
        cmocka_unit_test(test_cli_read_only_and_vanished),
        cmocka_unit_test(test_tmpfs_cli_every_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
