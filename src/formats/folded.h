/*
 * folded.h -- the views of a file's stack samples (folded.c), shared by
 * every output that shows where a region's time went: the report, the
 * HTML page, speedscope's sampled profiles, the flame graph from samples
 * and the folded stacks.  They all start from the one checked reader of
 * /samples (sps__h5r_samples, h5_read.h), which has checked every index,
 * so nothing here checks one again.
 *
 *     sps__h5r_samples_t s;          // sps__h5r_samples(path, &s)
 *     sps__folded_t f;
 *     rc = sps__folded_build(&s, NULL, 0, 1, &f);   // all ranks, by region
 *     rc = sps__folded_write(fp, &f, &s);            // "region;outer;...;leaf 12"
 *     sps__smp_regions_t g;
 *     rc = sps__smp_regions(&f, &g);                 // per region its leaves
 *     sps__smp_regions_free(&g);
 *     sps__folded_free(&f);
 *
 * A sample always counts as its weight (the timer periods it stands for:
 * weight / hz seconds of CPU).  Functions return 0 or a negative SPS_E*
 * code.
 */
#ifndef SPS_FORMATS_FOLDED_H
#define SPS_FORMATS_FOLDED_H

#include "formats/export.h"
#include "formats/h5_read.h"

#include <stdint.h>
#include <stdio.h>

/* The label of every frame: one text per distinct (function, place), the
 * place a runtime frame's (Python's) "file:line", a native frame's
 * "file:line" where the file has lines, else its module's base name:
 *     "step (solver.py:42)", "burn (libfoo.so)", "main (prog.c:10)".
 * Frames with the same text share a label (a native function's frames at
 * different addresses are one function).  Labels are numbered in the
 * text's byte order, and the last one is always "[unknown]", the frame
 * of a sample whose stack is empty (first -1). */
typedef struct sps__smp_labels {
    size_t n;            /* labels, "[unknown]" included */
    char **text;         /* [n] */
    int64_t *first;      /* [n] a frame with that label (-1: "[unknown]") */
    uint32_t *of_frame;  /* [nframes] each frame's label */
} sps__smp_labels_t;

/* Labels s's frames into *out (freed with sps__smp_labels_free, also
 * after a failure).  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__smp_labels(const sps__h5r_samples_t *s, sps__smp_labels_t *out);
SPS__HIDDEN void sps__smp_labels_free(sps__smp_labels_t *l);

/* One line of the folded stacks: a distinct stack of labels (and region,
 * when built by region) and the weight of its samples. */
typedef struct sps__folded_row {
    int64_t region;   /* the innermost span's region (index into s->names),
                       * -1 outside every span; always -1 unless by region */
    uint32_t stack;   /* a distinct stack: labels stack_lab[stack_off[k] ..
                       * stack_off[k] + stack_len[k]) */
    uint64_t weight;
} sps__folded_row_t;

/* The folded stacks of a file's samples (the one builder). */
typedef struct sps__folded {
    sps__smp_labels_t labels;
    int by_region;
    size_t nstacks;        /* distinct stacks of labels */
    size_t *stack_off;     /* [nstacks] into stack_lab */
    uint32_t *stack_len;   /* [nstacks] labels, >= 1 */
    uint32_t *stack_lab;   /* labels, OUTERMOST first (the leaf last) */
    size_t n;
    sps__folded_row_t *rows; /* by region (-1 first), then stack (the labels'
                              * order, outermost first): each (region, stack)
                              * once */
    uint64_t total;          /* the rows' weight: the selected samples' */
    size_t nsamples;         /* samples selected */
} sps__folded_t;

/* Adds up the samples of s on the ranks ranks[0..nranks) (nranks 0: every
 * rank) per distinct stack of labels, and per innermost region when
 * by_region, into *out (freed with sps__folded_free, also after a
 * failure).  No samples selected is not an error (out->n 0).  0 or
 * SPS_ENOMEM. */
SPS__HIDDEN int sps__folded_build(const sps__h5r_samples_t *s, const int64_t *ranks,
                                  size_t nranks, int by_region, sps__folded_t *out);
SPS__HIDDEN void sps__folded_free(sps__folded_t *f);

/* The label of stack k's leaf (its innermost frame). */
SPS__HIDDEN uint32_t sps__folded_leaf(const sps__folded_t *f, uint32_t stack);

/* The region cell of a folded line or a table: s's name of region r, or
 * "[no region]" for r -1 (samples outside every span). */
SPS__HIDDEN const char *sps__smp_region_name(const sps__h5r_samples_t *s, int64_t r);

/* Writes f as Brendan Gregg's folded stacks, one line per row:
 * "[region;]outer;...;leaf weight\n" (the region when f was built by
 * region; in a name ';' becomes ':' and a control character '?', so that
 * a line always splits as flamegraph.pl and speedscope split it).  s is
 * the file f was built from.  0 or SPS_EIO. */
SPS__HIDDEN int sps__folded_write(FILE *fp, const sps__folded_t *f,
                                  const sps__h5r_samples_t *s);

/* Whether o selects rank (its ranks; none: rank 0, the rule of
 * export_sel.c), for the exports' samples. */
SPS__HIDDEN int sps__smp_rank_on(const sps__export_opts_t *o, int64_t rank);

/* The export "folded" (src/api/export.c): sel->samples on the ranks o
 * selects (none: rank 0), by region when o->call_paths is 0 (the tool's
 * --by-region).  SPS_EINVAL when sel has no samples or none on those
 * ranks ("no stack samples ..."); else as sps__folded_write. */
SPS__HIDDEN int sps__folded_export(FILE *fp, const sps__export_sel_t *sel,
                                   const sps__export_opts_t *o);

/* One leaf of a region: a label and the weight of the region's self
 * samples whose innermost frame has it. */
typedef struct sps__smp_leaf {
    uint32_t label;
    uint64_t weight;
} sps__smp_leaf_t;

/* A region's self samples (those whose innermost open span is one of its
 * calls) by leaf. */
typedef struct sps__smp_region {
    int64_t region;          /* -1: the samples outside every span */
    uint64_t weight;         /* all of its samples' */
    size_t nleaves;
    sps__smp_leaf_t *leaves; /* heaviest first (ties: label order) */
} sps__smp_region_t;

typedef struct sps__smp_regions {
    size_t n;
    sps__smp_region_t *r;    /* heaviest first; "outside every span" last */
    sps__smp_leaf_t *pool;   /* owns every region's leaves */
} sps__smp_regions_t;

/* The regions of f (built by region) with their leaves, into *out (freed
 * with sps__smp_regions_free, also after a failure).  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__smp_regions(const sps__folded_t *f, sps__smp_regions_t *out);
SPS__HIDDEN void sps__smp_regions_free(sps__smp_regions_t *g);

/* The report's section "Where the time went (samples)" for the file at
 * path (formats/report.c; nothing when it has no samples): per region
 * (heaviest first, the samples outside every span last) its self samples
 * by leaf label, the top heaviest (0: all) with samples, CPU ms (weight /
 * hz) and share of the region, the rest as one line.  0 or the reader's
 * code (message set), SPS_ENOMEM. */
SPS__HIDDEN int sps__samples_print(FILE *fp, const char *path, size_t top);

#endif /* SPS_FORMATS_FOLDED_H */
