/* bg_trial.c -- whether the background analysis may run while the
 * recorders are busy: decided by trial, on the machine as it is.
 *
 * The spill writer analyzes retired chunks in its idle time (analyze.c,
 * "The background analysis").  On most machines that costs a recording
 * thread nothing: the writer runs on another core.  On a VM whose two
 * vCPUs share one core's execution units (SMT), a recording thread ran at
 * half speed, in phases of seconds, while the writer analyzed on the other
 * vCPU.  Which machine this is cannot be read off /proc inside a VM, and
 * it can change as the host moves vCPUs; what can be measured is the
 * recorders' own rate.  So, while they are busy, the writer alternates
 * windows in which it may analyze and windows in which it may not, and
 * compares the records retired per ns in the two kinds: if the windows
 * with analysis keep at least BG_TRIAL_KEEP of the rate, analyzing is
 * allowed for BG_TRIAL_FREE_NS, else refused for BG_TRIAL_COSTLY_NS; then
 * a new trial.  A recording slowed by the writer thus pays at most the
 * trial's windows: BG_TRIAL_PAIRS x BG_TRIAL_WINDOW_NS every ~10 s.
 *
 * The controller is a pure function of the times and counts it is given
 * (tests drive it with made-up ones); analyze.c feeds it sps__mono_ns()
 * and sps__g.retired under the session lock. */
#include "model/model.h"

#include <string.h>

#define BG_TRIAL_WINDOW_NS 10000000      /* one window: 10 ms */
#define BG_TRIAL_PAIRS 8                 /* windows of each kind a trial */
#define BG_TRIAL_KEEP 0.93               /* rate kept with analysis: allowed */
#define BG_TRIAL_FREE_NS 1000000000      /* an "allowed" holds 1 s */
#define BG_TRIAL_COSTLY_NS 10000000000LL /* a "refused" holds 10 s */

/* Starts a trial at now: its first window refuses. */
static void trial_start(sps__bg_trial_t *t, int64_t now, uint64_t retired) {
    uint64_t trials = t->trials, allowed = t->allowed;
    memset(t, 0, sizeof *t);
    t->trials = trials;
    t->allowed = allowed;
    t->t0 = now;
    t->r0 = retired;
    t->verdict = -1;
}

/* The trial's verdict from its windows: 1 when those with analysis kept
 * BG_TRIAL_KEEP of the others' rate (or the recorders stopped). */
static int trial_verdict(const sps__bg_trial_t *t) {
    if (!t->ns[0] || !t->ns[1] || !t->rec[0]) return 1;
    double off = (double)t->rec[0] / (double)t->ns[0];
    double on = (double)t->rec[1] / (double)t->ns[1];
    return on >= BG_TRIAL_KEEP * off;
}

int sps__bg_trial_allow(sps__bg_trial_t *t, int64_t now, uint64_t retired) {
    if (t->verdict >= 0 && now < t->until && now >= t->t0) return t->verdict;
    /* no trial running, its verdict expired, a window left stale (the
     * recorders paused, or nobody asked for a while), or a clock that is
     * not the one it started with: a new one */
    if (t->verdict >= 0 || !t->t0 || now - t->t0 > 4 * BG_TRIAL_WINDOW_NS || now < t->t0) {
        trial_start(t, now, retired);
        return 0;
    }
    if (now - t->t0 < BG_TRIAL_WINDOW_NS) return t->on;
    t->rec[t->on] += retired - t->r0;
    t->ns[t->on] += now - t->t0;
    t->t0 = now;
    t->r0 = retired;
    t->on = !t->on;
    if (++t->windows < 2 * BG_TRIAL_PAIRS) return t->on;
    int v = trial_verdict(t);
    t->verdict = v;
    t->until = now + (v ? BG_TRIAL_FREE_NS : BG_TRIAL_COSTLY_NS);
    t->trials++;
    t->allowed += v;
    return v;
}
