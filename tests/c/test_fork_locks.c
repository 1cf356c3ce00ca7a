/* test_fork_locks.c -- a fork while another thread holds one of core's
 * module locks (the region registry, region attributes, the task table,
 * the /metadata strings) must not leave the child waiting on it.
 *
 * A forked child opens its own session inside fork() (the fork's child
 * handler, api/fork.c: SPANSCOPE_FORK=own, the default), and that open
 * takes those locks: it interns the parent's regions again and sets their
 * tags, sets the /metadata strings, clears the task table.  Only the
 * forking thread exists in the child, so a lock another parent thread held
 * at the fork stays held there unless core re-initialises it
 * (sps__registry_atfork_child & co., called by session.c's atfork_child).
 *
 * Here a thread interns fresh region names (and sets tags, /metadata and
 * the task table) in a tight loop, so it holds one of the locks much of the
 * time, while the main thread forks 200 times.  Each child records a call
 * and finalizes within a bound: the parent gives each child 20 s to exit
 * (a child stuck inside fork() never runs its own code, so the parent
 * kills it and fails), and the child's alarm() turns a hang after fork()
 * returned into SIGALRM, a failure too, never a hung test. */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* 200 forks; 40 under a sanitizer, whose fork copies its shadow memory
 * (ASan: 200 forks took 194 s here) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define FORKS 40
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define FORKS 40
#  endif
#endif
#ifndef FORKS
#  define FORKS 200
#endif
#if defined(__SANITIZE_ADDRESS__)
#  define FL_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define FL_ASAN 1
#  endif
#endif
#define FRESH_NAMES 20000 /* then the same names again: lookups, same lock */
#define CHILD_SECONDS 20  /* generous: a loaded 2-core machine */

static atomic_int g_stop;
static atomic_long g_rounds;

/* Holds each of the four locks in turn, over and over. */
static void *interner(void *arg) {
    (void)arg;
    char name[64], value[32];
    sps_task_t task = {0};
    task.thread_index = -1;
    task.kind = "task";
    task.coro_name = "fl.coro";
    for (unsigned long i = 0; !atomic_load(&g_stop); i++) {
        snprintf(name, sizeof name, "fl.r%lu", i % FRESH_NAMES);
        sps_region_t r = sps_region(name);                    /* the registry */
        if (i % 8 == 0) {
            sps_region_set_tags(r, "[\"fl\"]");               /* region attributes */
            snprintf(value, sizeof value, "%lu", i);
            sps_metadata_set("fl.round", value);              /* /metadata strings */
            task.name = name;
            task.index = (int64_t)i;
            task.done_ns = -1;
            sps_tasks_set(&task, 1);                          /* the task table */
        }
        atomic_store(&g_rounds, (long)i);
    }
    return NULL;
}

/* Waits up to CHILD_SECONDS for pid; kills it and returns -1 if it is
 * still there, else its wait status. */
static int wait_bounded(pid_t pid) {
    struct timespec nap = {0, 2000000};
    for (long waited_ns = 0; waited_ns < CHILD_SECONDS * 1000000000L; waited_ns += nap.tv_nsec) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return st;
        assert_int_equal(w, 0);
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void test_fork_while_locks_are_held(void **state) {
    (void)state;
#ifdef FL_ASAN
    /* This libasan's allocator takes no lock at fork (gdb on a hung child:
     * __lsan::LockAllocator waiting on a size class's mutex the interner
     * held at the fork), so any malloc in the child -- ours or libhdf5's
     * -- may wait forever, and a hang here says nothing about our locks.
     * The normal build (200 forks) and ThreadSanitizer, whose allocator
     * is fork-safe, run it. */
    fprintf(stderr, "skipped under AddressSanitizer: its allocator is not fork-safe "
                    "in a multi-threaded program\n");
    skip();
#endif
    assert_int_equal(sps_fork_policy(1), 1); /* own, the default: asked for */
    assert_int_equal(sps_setup(NULL), 0);    /* no file: the locks are the point */
    sps_region_t main_r = sps_region("fl.main");
    atomic_store(&g_stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interner, NULL), 0);
    while (atomic_load(&g_rounds) < 1000) sched_yield(); /* it is in its loop */
    int hung = 0, bad = 0, forks = 0;
    for (int k = 0; k < FORKS; k++) {
        sps_begin(main_r);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            alarm(CHILD_SECONDS / 2);
            /* its own session, opened in the fork handler */
            if (!sps_is_active()) _exit(2);
            sps_region_t c = sps_region("fl.child");
            sps_begin(c);
            sps_end(c);
            sps_end(main_r); /* open at the fork: begun again in the child */
            sps_stats_t st;
            if (sps_region_stats(c, &st) || st.num_calls != 1) _exit(3);
            if (sps_finalize()) _exit(4);
            exit(sps_shutdown() ? 5 : 0); /* through the exit handlers */
        }
        forks++;
        sps_end(main_r);
        int st = wait_bounded(pid);
        if (st == -1) {
            hung++;
            fprintf(stderr, "fork %d: child %d still running after %d s: killed\n", k,
                    (int)pid, CHILD_SECONDS);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            bad++;
            fprintf(stderr, "fork %d: child %d %s %d\n", k, (int)pid,
                    WIFSIGNALED(st) ? "died of signal" : "exited", WIFSIGNALED(st)
                        ? WTERMSIG(st) : WEXITSTATUS(st));
        }
        if (hung + bad >= 3) break; /* enough to tell */
    }
    atomic_store(&g_stop, 1);
    pthread_join(th, NULL);
    fprintf(stderr, "%d forks while the interner ran %ld rounds\n", forks,
            atomic_load(&g_rounds));
    if (hung || bad) fail_msg("%d children hung, %d failed", hung, bad);
    /* the parent's session went on */
    sps_stats_t st;
    assert_int_equal(sps_region_stats(main_r, &st), 0);
    assert_int_equal(st.num_calls, FORKS);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
}

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define FL_TSAN 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__)
#  define FL_TSAN 1
#endif

int main(void) {
    unsetenv("SPANSCOPE_FORK");
#ifdef FL_TSAN
    /* as test_fork_child: the signal watcher thread the child's session
     * would start is killed there by ThreadSanitizer (die_after_fork) */
    setenv("SPANSCOPE_SIGNALS", "none", 1);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_while_locks_are_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
