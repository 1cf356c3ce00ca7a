/* markers.c -- a program written for LIKWID's marker API, built unchanged
 * against spanscope (-DLIKWID_PERFMON -I<include>/likwid, -lspanscope):
 * several tags, nesting, pthreads, GET, RESET, SWITCH and LIKWID's misuse
 * cases.  It checks what the API returns itself (exit 1 on the first
 * failed check); run.sh then checks the names and exact call counts in the
 * HDF5 file that CLOSE wrote (check.py).
 *
 * Expected in the file: outer 5, inner 10, worker 4 x 7 = 28, twice 1,
 * unregistered 1, reset_me 3 (RESET zeroes GET's numbers, not the
 * profile).  Nothing for "never" (a STOP without START) or the calls
 * before INIT. */
#include <errno.h>
#include <likwid-marker.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define WORKER_CALLS 7

static int failures;
#define CHECK(c)                                                           \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "markers.c:%d: check failed: %s\n", __LINE__, #c); \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* per thread: the worker threads run work() at once (no data race) */
static _Thread_local volatile double sink;
static void work(int n) {
    for (int i = 0; i < n; i++) sink += (double)i * 0.5;
}

static void *worker(void *arg) {
    int *ok = arg;
    LIKWID_MARKER_THREADINIT;
    LIKWID_MARKER_REGISTER("worker");
    for (int i = 0; i < WORKER_CALLS; i++) {
        LIKWID_MARKER_START("worker");
        work(1000);
        LIKWID_MARKER_STOP("worker");
    }
    int nevents = 4, count = -1;
    double events[4] = {-1, -1, -1, -1}, time = -1;
    LIKWID_MARKER_GET("worker", &nevents, events, &time, &count);
    /* this thread's own calls only, as LIKWID's per-thread results */
    *ok = nevents == 0 && count == WORKER_CALLS && time > 0 && events[0] == -1;
    /* "outer" was started on the main thread, not here */
    *ok = *ok && likwid_markerStopRegion("outer") == -EFAULT;
    return NULL;
}

int main(void) {
    /* before INIT: LIKWID's "not initialised" answers, nothing recorded */
    CHECK(likwid_markerStartRegion("outer") == -EFAULT);
    CHECK(likwid_markerStopRegion("outer") == -EFAULT);
    int nevents = 3, count = -1;
    double time = -1, events[3];
    LIKWID_MARKER_GET("outer", &nevents, events, &time, &count);
    CHECK(nevents == 0 && count == 0 && time == 0.0);

    LIKWID_MARKER_INIT;
    LIKWID_MARKER_INIT; /* twice: nothing more */
    LIKWID_MARKER_THREADINIT;
    CHECK(LIKWID_MARKER_REGISTER("outer") == 0);
    CHECK(LIKWID_MARKER_REGISTER("inner") == 0);
    for (int i = 0; i < 5; i++) {
        LIKWID_MARKER_START("outer");
        for (int j = 0; j < 2; j++) {
            CHECK(LIKWID_MARKER_START("inner") == 0);
            work(2000);
            CHECK(LIKWID_MARKER_STOP("inner") == 0);
        }
        CHECK(LIKWID_MARKER_STOP("outer") == 0);
    }
    nevents = 3;
    LIKWID_MARKER_GET("outer", &nevents, events, &time, &count);
    CHECK(nevents == 0 && count == 5 && time > 0);
    double outer_time = time;
    LIKWID_MARKER_GET("inner", &nevents, events, &time, &count);
    CHECK(count == 10 && time > 0 && time <= outer_time); /* nested inside outer */

    pthread_t th[NTHREADS];
    int ok[NTHREADS] = {0};
    for (int i = 0; i < NTHREADS; i++) CHECK(pthread_create(&th[i], NULL, worker, &ok[i]) == 0);
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(ok[i]);
    }
    /* the main thread ran no worker call */
    LIKWID_MARKER_GET("worker", &nevents, events, &time, &count);
    CHECK(count == 0 && time == 0.0);

    /* misuse, as LIKWID handles it: warnings, -EFAULT, no crash */
    CHECK(LIKWID_MARKER_STOP("never") == -EFAULT);   /* never started */
    CHECK(LIKWID_MARKER_STOP("outer") == -EFAULT);   /* already stopped */
    CHECK(LIKWID_MARKER_START(NULL) == -EINVAL);
    CHECK(LIKWID_MARKER_STOP("") == -EINVAL);
    CHECK(LIKWID_MARKER_START("twice") == 0);
    CHECK(LIKWID_MARKER_START("twice") == 0);        /* warns, the call goes on */
    CHECK(LIKWID_MARKER_STOP("twice") == 0);
    CHECK(LIKWID_MARKER_STOP("twice") == -EFAULT);
    LIKWID_MARKER_GET("twice", &nevents, events, &time, &count);
    CHECK(count == 1);
    /* an unregistered tag: LIKWID creates the region at its first start */
    CHECK(LIKWID_MARKER_START("unregistered") == 0);
    CHECK(LIKWID_MARKER_STOP("unregistered") == 0);

    /* RESET: only a stopped region; zeroes this thread's numbers */
    for (int i = 0; i < 3; i++) {
        LIKWID_MARKER_START("reset_me");
        if (i == 2) CHECK(LIKWID_MARKER_RESET("reset_me") == -EFAULT); /* started */
        LIKWID_MARKER_STOP("reset_me");
    }
    LIKWID_MARKER_GET("reset_me", &nevents, events, &time, &count);
    CHECK(count == 3);
    CHECK(LIKWID_MARKER_RESET("reset_me") == 0);
    LIKWID_MARKER_GET("reset_me", &nevents, events, &time, &count);
    CHECK(count == 0 && time == 0.0);
    CHECK(LIKWID_MARKER_RESET("not_a_region") == -EFAULT);
    LIKWID_MARKER_GET("not_a_region", &nevents, events, &time, &count); /* zeros */
    CHECK(count == 0 && time == 0.0 && nevents == 0);
    LIKWID_MARKER_GET("outer", NULL, NULL, NULL, NULL); /* NULLs are fine */

    LIKWID_MARKER_SWITCH; /* one group: nothing changes */
    LIKWID_MARKER_GET("outer", &nevents, events, &time, &count);
    CHECK(count == 5);

    LIKWID_MARKER_CLOSE; /* writes the session INIT started */
    LIKWID_MARKER_CLOSE; /* twice: nothing */
    CHECK(likwid_markerStartRegion("outer") == -EFAULT); /* off again */
    if (failures) {
        fprintf(stderr, "markers: %d check(s) failed\n", failures);
        return 1;
    }
    printf("markers: all checks passed\n");
    return 0;
}
