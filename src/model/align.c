/*
 * align.c -- rank resolution and clock alignment for merges (align.h):
 * the rules that decide, from each input's facts, which process of the
 * output it becomes and how its times are shifted.  Pure functions over
 * plain structs; the merges that read the facts from files and apply the
 * shifts are src/formats/merge_trace.c and merge_h5.c, driven by
 * src/api/merge.c (sps_merge).
 *
 * RANKS
 *
 * Every input becomes one process of the output, labelled with its rank:
 * /metadata rank for an .h5; distributedInfo.rank, else the one rank its
 * "rank N"-labelled processes share, for a trace; else the input's
 * position in the list (0-based).  A rank outside 0..INT32_MAX counts as
 * none.  An input holding several ranks (an earlier merge: an .h5 whose
 * rows carry two ranks, a trace whose labels name two and no
 * distributedInfo.rank) is an error, and so are two inputs with the same
 * rank.
 *
 * CLOCK ALIGNMENT
 *
 * Times in a recording are CLOCK_MONOTONIC ns of the recording host.  At
 * sps_setup a session reads CLOCK_REALTIME and then CLOCK_MONOTONIC, back to
 * back, and stores them as /metadata wall_anchor_ns and mono_anchor_ns.  So
 * for input i, wall(t) = t + (wall_i - mono_i).  The output's timeline is
 * the monotonic clock of the reference input (the first input that has
 * anchors; with MPI offsets, see below), and input i's times
 * are shifted by
 *
 *     offset_i = (wall_i - mono_i) - (wall_ref - mono_ref).
 *
 * Error of offset_i: (a) the anchor read skew, the time between the two
 * clock reads (tens of ns; up to the scheduler's time slice if the thread
 * is preempted in between), once per input; (b) anything that moved
 * CLOCK_REALTIME against CLOCK_MONOTONIC between the two setups: NTP slew
 * (at most 500 ppm, typically a few ppm) or a step; (c) across hosts, the
 * difference of the hosts' NTP errors (well under a ms on a LAN with
 * chrony/ntpd, microseconds with PTP).
 *
 * On one host within one boot all processes share CLOCK_MONOTONIC, so no
 * shift is right and (a)/(b) only add error.  An input whose /metadata
 * hostname equals the reference's and whose computed offset is under 1 s
 * (SPS__SAME_BOOT_NS: a reboot in between takes longer; NTP slew over a
 * run stays below) is therefore taken as on the same clock: offset
 * exactly 0.
 *
 * MPI offsets.  Under MPI the ranks can measure their clocks against rank
 * 0's directly (ping-pong at a collective), which beats the anchors across
 * hosts.  The MPI integration stores the result in an .h5 file's /metadata
 * as int64 attributes clock_offset_ns (ns to ADD to this file's times to
 * put them on rank 0's clock; 0 on rank 0) and clock_offset_error_ns (a
 * bound of its error).  When any input has clock_offset_ns, the output is
 * on rank 0's clock: the reference is the lowest-ranked input that has
 * clock_offset_ns or anchors (rank 0 in a full merge), and every input
 * that has clock_offset_ns is shifted by
 *
 *     offset_i = clock_offset_i - clock_offset_ref
 *
 * where clock_offset_ref is the reference's own clock_offset_ns, 0 when it
 * has none (it is then taken to be on rank 0's clock, as rank 0 is).  The
 * offset is used exactly as measured, in preference to the anchors and to
 * the same-host rule (the integration writes 0 for ranks it knows share
 * rank 0's clock).  Its error bound is clock_offset_error_i +
 * clock_offset_error_ref.  Inputs without clock_offset_ns are aligned on
 * that reference by the anchors, as above.  The JSON output records such a
 * rank as "clock": "mpi", with "offset_error_ns" when its file gives a
 * bound (and the reference "offset_error_ns": 0 when it has
 * clock_offset_ns).
 *
 * Drift.  The MPI integration measures the offset again at every
 * collective finalize and stores the session's measurements in each
 * rank's file (/clock_sync: t_ns on the rank's clock, offset_ns,
 * error_ns; docs/mpi.md).  The merge fits a line to them
 * (sps__clock_fit, align.h: least squares weighted by 1/error^2) and
 * hands it over as has_drift with the line's two ends; its error bound
 * (the largest error + |residual| of a measurement) replaces
 * clock_offset_error_ns.  Then offset_i is not a constant but a line in
 * the input's time t: with g_i(t) = t + o_i + s_i (t - t_i) the map onto
 * rank 0's clock, input i goes onto the reference's clock by
 * g_ref^-1(g_i(t)), again a line: sps__align_t's offset at drift_t0 = t_i
 * and drift = (s_i - s_ref) / (1 + s_ref), applied by sps__shift_at.  A
 * file without /clock_sync keeps the constant offset.
 *
 * Trace inputs carry anchors when their header has them (a JSON trace's
 * top-level "spanscopeClock" {wall_anchor_ns, mono_anchor_ns, hostname},
 * written by spanscope since the anchors were added to sps__tl_header_t):
 * they are then used exactly as an .h5 input's /metadata anchors and
 * hostname, same-host rule included.  A trace output carries the
 * reference's anchors in its header, so a merged JSON can be merged again.
 *
 * Inputs without anchors (torch's baseTimeNanoseconds is a perf_counter
 * value; older spanscope JSON and all Perfetto traces are CLOCK_MONOTONIC
 * without a wall anchor) are merged unshifted, which is exact when they
 * come from the reference's host and boot, and meaningless otherwise.
 * This is recorded as "clock_aligned": false for the rank in the JSON
 * output's "spanscope" key; nothing is printed.
 *
 * Arithmetic on anchors and offsets wraps (sps__wrap_sub) and error bounds
 * saturate at INT64_MAX: the facts come from untrusted files, and a
 * garbage offset is caught where it is applied (sps__shift fails, the
 * merge reports the input), never by a trap here.
 */
#include "model/align.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Ranks                                                                     */
/* ------------------------------------------------------------------------ */

int sps__rank_resolve(const sps__rank_facts_t *f, size_t pos, int64_t *rank,
                      int64_t clash[2]) {
    /* a named rank settles labels that disagree, never an .h5's rows */
    int must_agree = !f->labels || f->named < 0;
    int64_t held = -1;
    for (size_t i = 0; i < f->nheld; i++) {
        int64_t q = f->held[i];
        if (q < 0) continue;
        if (held >= 0 && q != held && must_agree) {
            clash[0] = held;
            clash[1] = q;
            return -1;
        }
        if (held < 0) held = q;
    }
    int64_t r = f->named >= 0 ? f->named : f->labels ? held : -1;
    *rank = r >= 0 && r <= INT32_MAX ? r : (int64_t)pos;
    return 0;
}

int sps__rank_duplicate(const sps__align_t *al, size_t n, size_t *first,
                        size_t *second) {
    sps__htab_t seen = {0};
    if (n > UINT32_MAX || sps__htab_reserve(&seen, n)) return -1;
    int found = 0;
    for (size_t j = 0; j < n && !found; j++) {
        sps__hprobe_t p = sps__htab_probe(&seen, sps__hash_u64((uint64_t)al[j].rank));
        for (uint32_t i; !found && sps__htab_next(&seen, &p, &i);)
            if (al[i].rank == al[j].rank) {
                *first = i;
                *second = j;
                found = 1;
            }
        if (!found) sps__htab_put(&seen, &p, (uint32_t)j); /* reserved */
    }
    sps__htab_free(&seen);
    return found;
}

/* ------------------------------------------------------------------------ */
/* Clocks (see CLOCK ALIGNMENT above)                                        */
/* ------------------------------------------------------------------------ */

int sps__align_ref(const sps__align_in_t *in, const sps__align_t *al,
                   size_t n) {
    int ref = -1, mpi = 0;
    for (size_t i = 0; i < n; i++) mpi |= in[i].clock.has_offset;
    for (size_t i = 0; i < n; i++) {
        if (!in[i].clock.has_offset && !in[i].clock.has_anchor) continue;
        if (ref < 0) ref = (int)i;
        else if (mpi && al[i].rank < al[ref].rank) ref = (int)i;
    }
    return ref;
}

/* Aligns x (facts a) on the reference (facts b) through their wall-clock
 * anchors: same-host (offset 0), wall-clock, or left as it is (none) when
 * either has no anchors. */
static void align_anchor(sps__align_t *x, const sps__clock_facts_t *a,
                         const sps__clock_facts_t *b) {
    if (!a->has_anchor || !b->has_anchor) return;
    int64_t d = sps__wrap_sub(sps__wrap_sub(a->wall_anchor_ns, a->mono_anchor_ns),
                              sps__wrap_sub(b->wall_anchor_ns, b->mono_anchor_ns));
    const char *ha = a->hostname ? a->hostname : "", *hb = b->hostname ? b->hostname : "";
    if (ha[0] && !strcmp(ha, hb) && d > -SPS__SAME_BOOT_NS && d < SPS__SAME_BOOT_NS) {
        x->how = SPS__CLOCK_SAME_HOST;
    } else {
        x->offset = d;
        x->how = SPS__CLOCK_WALL;
    }
}

/* Aligns x (facts a, which has an MPI offset) on the reference (facts b)
 * by the difference of their offsets (b's is 0 when it has none: it is
 * then taken to be on rank 0's clock), with the sum of the error bounds
 * when a has one. */
/* The line of f's offset: at time t0 (f's clock) off0, slope per ns. */
static void mpi_line(const sps__clock_facts_t *f, int64_t *t0, int64_t *off0,
                     double *slope) {
    *t0 = 0, *off0 = f->has_offset ? f->offset_ns : 0, *slope = 0;
    if (!f->has_offset || !f->has_drift) return;
    *t0 = f->drift_t0, *off0 = f->drift_off0;
    int64_t dt = sps__wrap_sub(f->drift_t1, f->drift_t0);
    if (dt > 0)
        *slope = (double)sps__wrap_sub(f->drift_off1, f->drift_off0) / (double)dt;
    if (!(*slope <= SPS__MAX_DRIFT && *slope >= -SPS__MAX_DRIFT)) *slope = 0;
}

static void align_mpi(sps__align_t *x, const sps__clock_facts_t *a,
                      const sps__clock_facts_t *b) {
    /* g_a(t) = t + oa + sa (t - ta) puts a's time t on rank 0's clock, g_b
     * the reference's; the output is the reference's clock: t -> g_b^-1
     * (g_a(t)), again a line, offset at ta and slope below (the plain
     * difference of the offsets when neither drifts) */
    int64_t ta, oa, tb, ob;
    double sa, sb;
    mpi_line(a, &ta, &oa, &sa);
    mpi_line(b, &tb, &ob, &sb);
    x->offset = sps__wrap_sub(oa, ob);
    if (sb != 0) {
        /* how far a's time ta lies from tb on the reference's clock */
        double gap = (double)sps__wrap_sub(sps__wrap_sub(ta, tb), sps__wrap_sub(ob, oa));
        double c = sb * gap / (1 + sb);
        if (c > -9.0e18 && c < 9.0e18)
            x->offset = sps__wrap_sub(x->offset, (int64_t)(c < 0 ? c - 0.5 : c + 0.5));
    }
    x->drift = (sa - sb) / (1 + sb);
    x->drift_t0 = ta;
    x->how = SPS__CLOCK_MPI;
    if (!a->has_offset_error) return;
    int64_t e = b->has_offset_error ? b->offset_error_ns : 0;
    if (__builtin_add_overflow(a->offset_error_ns, e, &x->offset_error))
        x->offset_error = INT64_MAX;
}

int sps__align_clocks(const sps__align_in_t *in, sps__align_t *al, size_t n) {
    int ref = sps__align_ref(in, al, n);
    for (size_t i = 0; i < n; i++) {
        al[i].offset = 0;
        al[i].offset_error = -1;
        al[i].how = SPS__CLOCK_NONE;
        al[i].drift = 0;
        al[i].drift_t0 = 0;
        if (ref < 0) continue;
        const sps__clock_facts_t *r = &in[ref].clock;
        if ((int)i == ref) {
            al[i].how = SPS__CLOCK_REFERENCE;
            al[i].offset_error = r->has_offset ? 0 : -1;
        } else if (in[i].clock.has_offset) {
            align_mpi(&al[i], &in[i].clock, r);
        } else {
            align_anchor(&al[i], &in[i].clock, r);
        }
    }
    return ref;
}

void sps__align_onto_rank0(const sps__clock_facts_t *f, sps__align_t *x) {
    x->offset = 0, x->offset_error = -1, x->how = SPS__CLOCK_NONE;
    x->drift = 0, x->drift_t0 = 0;
    if (!f->has_offset) return; /* not a rank of an MPI session: left as it is */
    const sps__clock_facts_t rank0 = {.has_offset = 1};
    align_mpi(x, f, &rank0);
}

const char *sps__clock_name(sps__clock_how_t how) {
    switch (how) {
    case SPS__CLOCK_REFERENCE: return "reference";
    case SPS__CLOCK_SAME_HOST: return "same-host";
    case SPS__CLOCK_WALL: return "wall-clock";
    case SPS__CLOCK_MPI: return "mpi";
    case SPS__CLOCK_NONE: break;
    }
    return "none";
}
