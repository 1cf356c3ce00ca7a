/*
 * cmd_run_follow.c -- spanscope run --follow -- CMD: a native process tree
 * profiled into one file (docs/process-trees.md, "Native trees").
 *
 * cmd_run has set the environment (SPANSCOPE_FOLLOW: the parts directory,
 * SPANSCOPE_RUN_FOLLOW=1, LD_PRELOAD with libspanscope_run first).  Unlike
 * the plain native run, the tool does not become the command: it starts
 * it as its child (the root of the tree, rank 0) and stays, as the tree's
 * subreaper, so that it can merge the parts however the root ends -- by
 * returning from main, by _exit (a shell does), by a signal or a crash --
 * and then ends as the root did (its exit status, or its signal).
 *
 * Each process of the tree writes its part (src/ext/autorun.c); the tool,
 * once the root has ended and the rest of the tree with it (waited for a
 * few seconds: a daemon is left), recovers the parts of processes that
 * died without writing theirs (sps_recover of their crash-safe
 * directories), merges every part (sps_merge: one rank, one process each),
 * writes /metadata follow_processes (the claims: rank, pid, ppid, start,
 * argv) into a merged .h5, removes the parts directory and says so in one
 * line.  Signals the tool gets (TERM, INT, HUP, USR1, QUIT) from another
 * process go on to the root; a terminal's (Ctrl-C) reaches the root
 * itself, in the same process group, and is not sent twice.
 */
#include "cli.h"

#include <spanscope.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FOLLOW_MAX_RANKS 4096  /* claims read back (ranks 0..4095) */
#define FOLLOW_WAIT_MS 5000    /* the rest of the tree, after the root */

static volatile sig_atomic_t g_root_pid;

/* A signal for the tree: on to the root, unless the kernel sent it (a
 * terminal's Ctrl-C, which the root, in the same process group, gets
 * itself). */
static void forward(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    if (g_root_pid > 0 && (!si || si->si_code != SI_KERNEL)) kill((pid_t)g_root_pid, sig);
}

/* The pid a claim file names ("pid": N), or -1. */
static long claim_pid(const char *text) {
    const char *p = strstr(text, "\"pid\"");
    if (!p) return -1;
    p += 5;
    while (*p == ' ' || *p == ':') p++;
    char *end;
    long v = strtol(p, &end, 10);
    return end == p ? -1 : v;
}

/* The claims of dir: text[r] rank r's claim (malloc'd JSON object, NULL
 * where none), pids[r] its pid; returns the highest rank + 1. */
static int read_claims(const char *dir, char **text, long *pids) {
    DIR *d = opendir(dir);
    int top = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        int r, len = 0;
        if (sscanf(e->d_name, "rank%d.json%n", &r, &len) != 1 || e->d_name[len] || r < 0 ||
            r >= FOLLOW_MAX_RANKS)
            continue;
        char path[PATH_MAX + 300], buf[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        if (n == 0 || buf[0] != '{' || buf[n - 1] != '}') continue; /* being written: killed */
        text[r] = strdup(buf);
        pids[r] = claim_pid(buf);
        if (r + 1 > top) top = r + 1;
    }
    if (d) closedir(d);
    return top;
}

/* Waits for the tree's other processes (reparented to this subreaper)
 * for at most FOLLOW_WAIT_MS; returns how many still run then. */
static int wait_tree(void) {
    struct timespec step = {0, 10 * 1000 * 1000};
    for (int waited = 0;; waited += 10) {
        pid_t p;
        while ((p = waitpid(-1, NULL, WNOHANG)) > 0) {
        }
        if (p < 0 && errno == ECHILD) return 0;
        if (waited >= FOLLOW_WAIT_MS) break;
        nanosleep(&step, NULL);
    }
    int left = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *q = strrchr(buf, ')');
        long ppid = 0;
        if (q && sscanf(q + 2, "%*c %ld", &ppid) == 1 && ppid == (long)getpid()) left++;
    }
    if (d) closedir(d);
    return left;
}

/* The parts into one file (see the top); returns 0, or 1 when the merge
 * failed (the parts are kept, and said where). */
static int merge_parts(const char *dir, const char *out, int quiet, int left) {
    static char *text[FOLLOW_MAX_RANKS];
    static long pids[FOLLOW_MAX_RANKS];
    int n = read_claims(dir, text, pids);
    if (n == 0) { /* the command never started (exec failed): nothing ran */
        rmdir(dir);
        return 0;
    }
    const char **parts = calloc((size_t)n, sizeof *parts);
    char *table = NULL;
    size_t tlen = 0, np = 0;
    int recovered = 0, missing = 0;
    FILE *tf = open_memstream(&table, &tlen);
    if (!parts || !tf) return cli_die(1, "run: --follow: out of memory"), 1;
    fputc('[', tf);
    for (int r = 0; r < n; r++) {
        if (!text[r]) continue;
        char path[PATH_MAX + 64], live[PATH_MAX + 96];
        snprintf(path, sizeof path, "%s/part.pid%ld.h5", dir, pids[r]);
        snprintf(live, sizeof live, "%s.live-%ld", path, pids[r]);
        struct stat st;
        if (stat(path, &st) != 0 && stat(live, &st) == 0) {
            char err[512] = "";
            if (sps_recover(path, NULL, err, sizeof err) == 0) recovered++;
            else fprintf(stderr, "spanscope: run: --follow: the part of process %ld could not "
                         "be recovered: %s\n", pids[r], err);
        }
        if (stat(path, &st) != 0) {
            missing++;
            continue;
        }
        parts[np] = strdup(path);
        fprintf(tf, "%s%s", np ? ", " : "", text[r]);
        np++;
    }
    fputc(']', tf);
    fclose(tf);
    int rc = np ? sps_merge(out, parts, np, stderr) : SPS_EPATH;
    size_t olen = strlen(out);
    if (!rc && olen > 3 && !strcmp(out + olen - 3, ".h5")) {
        char err[512] = "";
        if (sps_metadata_write(out, "follow_processes", table, err, sizeof err))
            fprintf(stderr, "spanscope: run: --follow: %s\n", err);
    }
    for (size_t i = 0; i < np; i++) free((char *)parts[i]);
    for (int r = 0; r < n; r++) free(text[r]), text[r] = NULL;
    free(parts);
    free(table);
    if (rc) {
        fprintf(stderr, "spanscope: run: --follow: the merge failed (%s); the processes' parts "
                "are kept in %s (spanscope merge -o %s %s/part.pid*.h5)\n",
                np ? sps_strerror(rc) : "no process wrote its part", dir, out, dir);
        return 1;
    }
    DIR *d = opendir(dir); /* its files: the parts and the claims */
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    if (quiet && !missing && !left) return 0;
    fprintf(stderr, "spanscope: run: --follow: merged %zu process%s into %s", np,
            np == 1 ? "" : "es", out);
    if (recovered) fprintf(stderr, " (%d recovered after a crash or kill)", recovered);
    if (missing)
        fprintf(stderr, "; %d process%s left no part (killed before its session started, or "
                "still running)", missing, missing == 1 ? "" : "es");
    if (left) fprintf(stderr, "; %d still running, not waited for", left);
    fputc('\n', stderr);
    return 0;
}

/* spanscope run --follow -- CMD (cmd_run has checked the options and set
 * the environment up): runs cmd, merges, ends as cmd did. */
int cmd_run_follow(char **cmd, int quiet) {
    const char *dir = getenv("SPANSCOPE_FOLLOW"), *out = getenv("SPANSCOPE_OUTPUT");
    if (!dir || !out) return cli_die(EXIT_USAGE, "run: --follow: no parts directory");
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        fprintf(stderr, "spanscope: run: --follow: cannot become the tree's subreaper (%s): "
                "orphaned processes are not waited for\n", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        rmdir(dir);
        return cli_die(1, "run: --follow: fork: %s", strerror(errno));
    }
    if (child == 0) {
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        setenv("SPANSCOPE_RUN_PID", pid, 1); /* the root: rank 0 */
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "spanscope: run: cannot run %s: %s\n", cmd[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    g_root_pid = child;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_root_pid = 0;
    int left = wait_tree();
    int merge_failed = merge_parts(dir, out, quiet, left);
    if (WIFSIGNALED(status)) { /* end as the root did */
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        fflush(NULL);
        raise(sig);
        return 128 + sig; /* a signal that does not end a process */
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return code ? code : merge_failed;
}
