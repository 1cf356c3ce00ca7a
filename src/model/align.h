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

#endif /* SPS_MODEL_ALIGN_H */
