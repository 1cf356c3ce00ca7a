/* isolate.c -- running a function in a child process (util.h): the one
 * way the library does work that may crash, hang or exhaust memory on
 * hostile input (libhdf5's parsing of a corrupt file) without taking the
 * caller's process with it. */
#include "util/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The child's address space now (bytes), from /proc/self/statm; 0 when
 * unknown.  The memory limit is on top of it: a forked child starts with
 * all of its parent's mappings. */
static size_t vm_bytes_now(void) {
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    long psz = sysconf(_SC_PAGESIZE);
    return (size_t)pages * (size_t)(psz > 0 ? psz : 4096);
}

/* The child's side: limits, then fn, then _exit with its status (no
 * atexit handlers, no flushing of the parent's stdio buffers). */
static void child_run(int (*fn)(void *), void *arg, unsigned timeout_s,
                      size_t mem_limit, pid_t parent) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
#else
    (void)parent;
#endif
    /* a crash is reported by its signal: no core file, no handler of the
     * parent's (Python's faulthandler) running in the child */
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
                               SIGALRM, SIGTERM, SIGINT, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (mem_limit) {
        size_t now = vm_bytes_now();
        struct rlimit as = {(rlim_t)(now + mem_limit), (rlim_t)(now + mem_limit)};
        if (now && now <= SIZE_MAX - mem_limit) setrlimit(RLIMIT_AS, &as);
    }
    if (timeout_s) alarm(timeout_s);
    _exit(fn(arg) & 0xff);
}

__thread int sps__internal_fork;

int sps__isolated(int (*fn)(void *), void *arg, unsigned timeout_s,
                  size_t mem_limit) {
    /* the library's own child: no profiling session of its own in it
     * (api/fork.c reads this, in this thread, inside fork) */
    sps__internal_fork = 1;
    pid_t parent = getpid(), pid = fork();
    sps__internal_fork = 0;
    if (pid < 0) return -1;
    if (pid == 0) child_run(fn, arg, timeout_s, mem_limit, parent);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return SPS__ISOLATED_SIGNAL + WTERMSIG(st);
    return -1;
}
