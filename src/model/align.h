/*
 * align.h -- what a merge of per-rank recordings decides before it reads
 * a span: each input's rank and the shift that puts its times on the
 * output's clock (src/model/align.c, where the rules are written).
 *
 * Pure model code: plain structs in (each input's facts, as the formats
 * read them from its file), plain structs out (its rank, its offset, the
 * offset's error bound and how it was aligned).  No file, no HDF5, no
 * timeline types: tests/c/test_align.c exercises every rule without a
 * file.  The merges (src/formats/merge_trace.c, merge_h5.c) and their
 * entry point (src/api/merge.c) are its callers.
 */
#ifndef SPS_MODEL_ALIGN_H
#define SPS_MODEL_ALIGN_H

#include "util/util.h"

#include <stddef.h>
#include <stdint.h>

/* Offsets smaller than this between inputs of one host mean one boot
 * (the same-host rule, align.c). */
#define SPS__SAME_BOOT_NS 1000000000LL

/* What an input's file says about its rank. */
typedef struct sps__rank_facts {
    /* The rank its metadata names, -1 when none: an .h5's /metadata
     * rank, a trace's distributedInfo.rank. */
    int64_t named;
    /* The ranks its contents carry (borrowed; -1 entries carry none):
     * a trace's "rank N" process labels, an .h5's index rows or
     * processes. */
    const int64_t *held;
    size_t nheld;
    /* 1 when held are a trace's process labels: a named rank overrides
     * them, and the one rank they share stands in for a missing one.
     * 0 for an .h5: its rows must all be one rank whatever /metadata
     * names, and they never name it (a file without /metadata rank
     * falls back to its position, as a trace without labels does). */
    int labels;
} sps__rank_facts_t;

/* What an input's file says about its clock (.h5: /metadata; a trace:
 * its header's "spanscopeClock"). */
typedef struct sps__clock_facts {
    int has_anchor;             /* wall_anchor_ns > 0 and mono_anchor_ns */
    int64_t wall_anchor_ns, mono_anchor_ns; /* CLOCK_REALTIME, CLOCK_MONOTONIC */
    const char *hostname;       /* borrowed; NULL or "" when unknown */
    int has_offset;             /* MPI: clock_offset_ns (to ADD to reach rank 0's clock) */
    int64_t offset_ns;
    int has_offset_error;       /* with has_offset: clock_offset_error_ns >= 0 */
    int64_t offset_error_ns;
    /* MPI drift (appended): with has_offset, has_drift when the file
     * carries the session's clock measurements (an .h5's /clock_sync):
     * the offset is then the line through (drift_t0, drift_off0) and
     * (drift_t1, drift_off1), t on this input's clock (sps__clock_fit),
     * and offset_error_ns is the fit's bound (has_offset_error set). */
    int has_drift;
    int64_t drift_t0, drift_off0, drift_t1, drift_off1;
} sps__clock_facts_t;

/* One input's facts. */
typedef struct sps__align_in {
    sps__rank_facts_t rank;
    sps__clock_facts_t clock;
} sps__align_in_t;

/* How an input's clock was put on the output's (docs/merge.md names them
 * in the JSON output's "spanscope" key, see sps__clock_name). */
typedef enum sps__clock_how {
    SPS__CLOCK_NONE = 0,    /* not aligned: merged unshifted */
    SPS__CLOCK_REFERENCE,   /* the reference: the output's clock is its */
    SPS__CLOCK_SAME_HOST,   /* the reference's host and boot: offset 0 */
    SPS__CLOCK_WALL,        /* through the wall-clock anchors */
    SPS__CLOCK_MPI          /* through the measured MPI clock offsets */
} sps__clock_how_t;

/* What the merge does with one input. */
typedef struct sps__align {
    int64_t rank;           /* its process in the output */
    int64_t offset;         /* ns added to each of its times */
    int64_t offset_error;   /* a bound of offset's error in ns, -1 unknown */
    sps__clock_how_t how;
    /* A drifting clock (appended; 0 and 0 for a constant shift): a time t
     * of this input becomes t + offset + drift * (t - drift_t0), offset
     * being the shift at drift_t0 (sps__shift_at). */
    double drift;
    int64_t drift_t0;
} sps__align_t;

/* The rank of the input at position pos whose file says f: f->named when
 * it names one, else (labels) the one rank its labelled processes share,
 * else pos; a rank outside 0..INT32_MAX counts as none.  Returns 0 with
 * *rank set, or -1 when the input holds several ranks (two different
 * held ranks, and no named rank overriding labels): clash[0] and
 * clash[1] are two of them.  Reads only f and its held array. */
SPS__HIDDEN int sps__rank_resolve(const sps__rank_facts_t *f, size_t pos,
                                  int64_t *rank, int64_t clash[2]);

/* Looks for two of the n inputs that share a rank (al[i].rank).  Returns
 * 1 with *first < *second the earliest such pair in input order of the
 * second (the first input with a rank an earlier one has, and that
 * earlier one), 0 when all ranks differ, or -1 when out of memory (a
 * hash index of n entries, freed before it returns). */
SPS__HIDDEN int sps__rank_duplicate(const sps__align_t *al, size_t n,
                                    size_t *first, size_t *second);

/* The reference input of n (facts in, resolved ranks al[i].rank): when
 * some input has an MPI offset, the lowest-ranked input that has an MPI
 * offset or anchors; otherwise the first input with anchors.  -1 when no
 * input has either. */
SPS__HIDDEN int sps__align_ref(const sps__align_in_t *in,
                               const sps__align_t *al, size_t n);

/* Puts x (its rank kept) on rank 0's clock by f's own MPI offset line (its
 * setup offset, or the line fitted to its /clock_sync), as a merge with
 * rank 0 as its reference would: a rank writing its part for the
 * chunk-copy merge (docs/mpi.md).  Without an MPI offset, x is left
 * unshifted (how NONE). */
SPS__HIDDEN void sps__align_onto_rank0(const sps__clock_facts_t *f, sps__align_t *x);

/* Aligns the n inputs' clocks: picks the reference (sps__align_ref) and
 * sets every al[i].offset, offset_error and how by the rules of align.c;
 * al[i].rank must be resolved and is left alone.  Returns the reference's
 * index, or -1 (every input then "none", offset 0).  Never traps: hostile
 * anchors and offsets wrap (sps__wrap_sub), error bounds saturate. */
SPS__HIDDEN int sps__align_clocks(const sps__align_in_t *in, sps__align_t *al,
                                  size_t n);

/* The name of how in the JSON output: "none", "reference", "same-host",
 * "wall-clock" or "mpi" (static strings). */
SPS__HIDDEN const char *sps__clock_name(sps__clock_how_t how);

/* a - b wrapping modulo 2^64: hostile anchors and offsets must not trap
 * (signed overflow is undefined). */
static inline int64_t sps__wrap_sub(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* Shifts the time *t by off.  Returns 0, or -1 when the result would
 * leave int64 (*t is then unspecified: callers report the input).
 * Inline: the merges call it for every span. */
static inline int sps__shift(int64_t *t, int64_t off) {
    return __builtin_add_overflow(*t, off, t) ? -1 : 0;
}

/* Shifts the time *t of an input aligned by a (offset, and the drift when
 * a->drift is not 0: t + offset + drift * (t - drift_t0), rounded to the
 * ns).  Returns 0, or -1 when the result would leave int64.  Inline: the
 * merges call it for every time they copy. */
static inline int sps__shift_at(int64_t *t, const sps__align_t *a) {
    if (a->drift == 0) return sps__shift(t, a->offset);
    double d = a->drift * (double)sps__wrap_sub(*t, a->drift_t0);
    if (!(d > -9.0e18 && d < 9.0e18)) return -1;
    int64_t dd = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
    return sps__shift(t, a->offset) || sps__shift(t, dd) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Clock drift: one rank's offset measurements and the line through them     */
/* ------------------------------------------------------------------------ */

/* One measurement of a rank's clock against rank 0's (a ping-pong, see
 * src/ext/mpi.c): at t_ns on the rank's own clock (the best round's
 * midpoint), rank 0's clock read offset_ns more, within error_ns. */
typedef struct sps__clock_sample {
    int64_t t_ns, offset_ns, error_ns;
} sps__clock_sample_t;

/* The fitted drift: offset(t) is the line through (t0, off0) and (t1,
 * off1) (t0 = t1 and off0 = off1 with one measurement: a constant),
 * error a bound of its error over [t0, t1] in ns. */
typedef struct sps__clock_fit {
    int64_t n;              /* measurements used */
    int64_t t0, off0, t1, off1;
    int64_t error;
} sps__clock_fit_t;

/* The largest drift a fit may give (ns per ns): real oscillators stay
 * under 10^-3 (crystals are specified at 10^-5..10^-4); a larger slope
 * comes from a damaged file or a clock that was stepped, and the fit then
 * gives up (sps__clock_fit returns -1). */
#define SPS__MAX_DRIFT 0.01

/* Fits offset(t) = a + b t to the n samples s (any order; t_ns need not
 * be distinct): least squares weighted by 1 / error^2 (error taken as at
 * least 1 ns), so that a round trip stretched by the scheduler counts
 * little against the tight ones.  Two samples give the line through them,
 * one a constant.  The bound: max over the samples of error + |residual|
 * (+ 1 ns of rounding): if the true offset is linear in t, fit - true is
 * linear too, so on [t0, t1] it is largest at an end, where it is at most
 * that sample's residual plus its error.  Static inline, so that
 * libspanscope_mpi (another shared object, which cannot call the core's
 * hidden functions) fits with the same code as the merge.  Returns 0
 * with *out set, or -1 (no sample, an error < 0, times spanning more than
 * 2^62 ns, or a slope beyond SPS__MAX_DRIFT). */
static inline int sps__clock_fit(const sps__clock_sample_t *s, size_t n,
                                 sps__clock_fit_t *out) {
    if (n == 0) return -1;
    int64_t tmin = s[0].t_ns, tmax = s[0].t_ns;
    for (size_t i = 0; i < n; i++) {
        if (s[i].error_ns < 0) return -1;
        if (s[i].t_ns < tmin) tmin = s[i].t_ns;
        if (s[i].t_ns > tmax) tmax = s[i].t_ns;
    }
    if (sps__wrap_sub(tmax, tmin) < 0 || sps__wrap_sub(tmax, tmin) > ((int64_t)1 << 62))
        return -1;
    /* in long double, times relative to tmin and offsets to the first
     * sample's: the sums stay well inside the mantissa */
    long double sw = 0, st = 0, so = 0, stt = 0, sto = 0;
    int64_t o0 = s[0].offset_ns;
    for (size_t i = 0; i < n; i++) {
        long double e = s[i].error_ns < 1 ? 1.0L : (long double)s[i].error_ns;
        long double w = 1.0L / (e * e);
        long double t = (long double)sps__wrap_sub(s[i].t_ns, tmin);
        long double o = (long double)sps__wrap_sub(s[i].offset_ns, o0);
        sw += w, st += w * t, so += w * o, stt += w * t * t, sto += w * t * o;
    }
    long double den = sw * stt - st * st, b = 0, a;
    if (tmax > tmin && den > 0) b = (sw * sto - st * so) / den;
    if (b > SPS__MAX_DRIFT || b < -SPS__MAX_DRIFT) return -1;
    a = (so - b * st) / sw; /* offset - o0 at tmin */
    long double worst = 0;
    for (size_t i = 0; i < n; i++) {
        long double t = (long double)sps__wrap_sub(s[i].t_ns, tmin);
        long double r = (long double)sps__wrap_sub(s[i].offset_ns, o0) - (a + b * t);
        if (r < 0) r = -r;
        r += (long double)s[i].error_ns;
        if (r > worst) worst = r;
    }
    if (!(worst < 4.0e18L)) return -1;
    long double span = (long double)sps__wrap_sub(tmax, tmin), e1 = a + b * span;
    if (!(a > -4.0e18L && a < 4.0e18L && e1 > -4.0e18L && e1 < 4.0e18L)) return -1;
    out->n = (int64_t)n;
    out->t0 = tmin;
    out->t1 = tmax;
    out->off0 = (int64_t)((uint64_t)o0 + (uint64_t)(int64_t)(a < 0 ? a - 0.5L : a + 0.5L));
    out->off1 = (int64_t)((uint64_t)o0 + (uint64_t)(int64_t)(e1 < 0 ? e1 - 0.5L : e1 + 0.5L));
    out->error = (int64_t)worst + 2; /* rounding of the two ends */
    return 0;
}

#endif /* SPS_MODEL_ALIGN_H */
