/*
 * perfev.h -- the perf_event counter reader (src/core/perfev.c): the
 * hidden interface core's session and hot path use, and the statistics the
 * tests and bench/bench_perfev.c read.  Nothing here is public; the public
 * face is sps_set_counters (include/spanscope.h).  docs/perf-events.md.
 *
 * Life of a choice: sps_set_counters (any thread, any time) sets the
 * process's choice; sps__perf_session_open (session setup, under the
 * session lock) freezes it for the session; every recording thread's first
 * sps__perf_read opens the session's events on that thread, one group per
 * kernel PMU (hardware events in one, software events in another,
 * cpu-clock in its own: the kernel never schedules a member of another PMU
 * than its leader's; task-clock comes with the software group's read), and
 * each later call reads them without a lock, an allocation or stdio.
 */
#ifndef SPS_CORE_PERFEV_H
#define SPS_CORE_PERFEV_H

#include "util/util.h" /* SPS__HIDDEN */

#include <stdint.h>

/* Most counters one session reads: SPS__VAL_MAX (24 values per record)
 * minus the 5 memory values. */
#define SPS__PERF_MAX 19u

/* Session setup, under the session lock: freezes the current
 * sps_set_counters choice for this session and returns how many values
 * sps__perf_read writes (0: none chosen).  A choice different from the
 * previous session's makes every thread open its events again at its next
 * read. */
SPS__HIDDEN uint32_t sps__perf_session_open(void);
/* The session's i-th counter name as sps_set_counters was given it
 * (trimmed), NULL past the last.  Owned by perfev.c, valid until the next
 * sps__perf_session_open. */
SPS__HIDDEN const char *sps__perf_name(uint32_t i);
/* The session's end: the calling thread's events are closed now; every
 * other thread's at its exit or at its first read in a later session
 * (their file descriptors are theirs: closing them from here could race
 * with their reads). */
SPS__HIDDEN void sps__perf_session_close(void);
/* On the recording thread, at every begin and end of a session with
 * counters: writes the thread's cumulative counts for the session's events,
 * in order, into out[0 .. n-1] (n from sps__perf_session_open).  Each is
 * monotone since the thread's group was opened and below 2^63; an event
 * the machine cannot count reads 0.  The first call on a thread (and the
 * first after a fork, or after the session's choice changed) opens the
 * events; later calls: rdpmc where the kernel allows it, else one read()
 * per group.  Not async-signal-safe. */
SPS__HIDDEN void sps__perf_read(uint64_t *out);

/* What the calling thread's reader does (tests, bench/bench_perfev.c). */
typedef struct sps__perf_stats {
    uint32_t n;          /* events of the thread's open set (0: not open) */
    uint32_t groups;     /* groups opened: one per kernel PMU */
    uint32_t rdpmc;      /* groups read with rdpmc (no syscall) */
    uint32_t available;  /* bit i: event i opened (counts), else reads 0 */
    uint64_t reads;      /* sps__perf_read calls since the set was opened */
    uint64_t syscalls;   /* read() calls those made (the open's excluded) */
    uint64_t opens;      /* times this thread opened a set */
} sps__perf_stats_t;
/* The calling thread's statistics; all zero before its first read. */
SPS__HIDDEN void sps__perf_thread_stats(sps__perf_stats_t *out);

#endif /* SPS_CORE_PERFEV_H */
