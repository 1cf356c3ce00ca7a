/*
 * api.h -- the api layer's internal interface (src/api/): the functions
 * that orchestrate the layers below for a whole task (a report of a file,
 * the comparison of two files), called by the public functions of
 * <spanscope.h> and by the command-line tool, which adds only its argument
 * parsing.  Nothing below src/api/ includes this header.
 */
#ifndef SPS_API_H
#define SPS_API_H

#include "sps_int.h"

#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* report (src/api/report.c)                                                 */
/* ------------------------------------------------------------------------ */

/* The sort keys of the summary table, in sps__sort_t order: for messages
 * ("unknown sort key 'x' (" SPS__SORT_KEYS ")") and help texts. */
#define SPS__SORT_KEYS "self, total, calls, mean, max, name"

/* The sort keys are parsed by sps__sort_parse (formats/table.c, sps_int.h):
 * the tool's --sort, sps_report's sort and Python's summary(sort=...). */

/* What a report shows. */
typedef struct sps__report_opts {
    int tree;          /* the call tree (not for aggregate files: a note) */
    int flat;          /* the flat per-region view */
    sps__sort_t sort;  /* flat view order; SPS__SORT_TOTAL also orders the
                        * per-rank view by total (else: by imbalance) */
    size_t top;        /* rows of the flat and per-rank views, 0 = all */
    int ranks;         /* per-rank view: 1 always, 0 never, -1 when the
                        * file holds 2+ ranks and the flat view is shown */
    int counters;      /* the counters section, when the file has counters */
    int csv;           /* CSV instead of text: the tree (tree without flat) or
                        * the flat view, exact ns; no title, per-rank view
                        * or counters */
} sps__report_opts_t;

/* Everything, as `spanscope report FILE` and sps_report print it. */
#define SPS__REPORT_OPTS_INIT {1, 1, SPS__SORT_SELF, 0, -1, 1, 0}

/* Reads the recording at path -- an HDF5 file (spanscope's, or
 * scope-profiler's schema 2/3), or a trace (.json, .json.gz, .pftrace) read
 * through the timeline readers; validated -- and writes its report to fp,
 * every number from the one fold (a trace's spans are folded here, an HDF5
 * file's by its reader): a first line naming the
 * file, its schema, layout, regions and calls; then, as opt says, the call
 * tree, the flat view, the per-rank view (per region the min / mean / max
 * over the ranks of its total time, a rank without calls counting as 0,
 * the slowest rank and the imbalance) and the counters (per counter its
 * samples, min, mean, max and last value).  The one report: the tool's
 * `report`, sps_report and the Python extension's file summary all call
 * it.  fp and path are borrowed; nothing is kept.  Not safe against HDF5
 * crashing on a hostile file: the tool calls it in a child process.
 *
 * Returns 0, SPS_EINVAL (fp, path or opt NULL), SPS_EIO (the file cannot
 * be opened or read, or writing fp failed), SPS_EFORMAT (not a valid
 * file) or SPS_ENOMEM.  On failure the error channel (util.h:
 * sps__err_msg) holds a one-line reason naming the file; what was written
 * to fp before the failure stays there. */
SPS__HIDDEN int sps__report_write(FILE *fp, const char *path,
                                  const sps__report_opts_t *opt);

/* ------------------------------------------------------------------------ */
/* diff (src/api/diff.c)                                                     */
/* ------------------------------------------------------------------------ */

/* The order of the comparison's rows. */
typedef enum {
    SPS__DIFF_BY_TOTAL = 0, /* largest change of total time first */
    SPS__DIFF_BY_PERCALL,   /* largest change of the per-call mean first */
    SPS__DIFF_BY_NAME       /* region name */
} sps__diff_sort_t;

/* The keys of sps__diff_sort_t, in order, for messages and help texts. */
#define SPS__DIFF_SORT_KEYS "total, per-call, name"

/* Parses a sort key of the comparison ("total", "per-call" or "name")
 * into *out.  Returns 0, or SPS_EINVAL (NULL or any other text; *out is
 * then left alone). */
SPS__HIDDEN int sps__diff_sort_parse(const char *key, sps__diff_sort_t *out);

/* How to compare. */
typedef struct sps__diff_opts {
    sps__diff_sort_t sort;
    size_t top;        /* rows shown, 0 = all */
    double threshold;  /* smallest per-call change, in percent, called
                        * slower or faster (the tool's default: 5) */
    /* Called before each file is opened and once its header is read (the
     * rest is bounded work): the tool arms and lifts its time limit
     * there.  Either may be NULL. */
    void (*reading)(const char *path);
    void (*read_done)(void);
} sps__diff_opts_t;

/* Reads the recordings a and b (.h5, .json, .json.gz or .pftrace, by
 * extension; validated) and writes to fp their comparison region by
 * region, matched by name: calls, total and per-call time in each, the
 * changes of total, self and per-call time, and a verdict from Welch's
 * t-test on the per-call times (slower / faster when |t| > 3 and the
 * change is at least o->threshold percent; "~" otherwise; "only in A/B"),
 * then a count of each verdict.  Differences are not errors.  fp, a, b
 * and o are borrowed.  Memory: O(regions + threads * depth).
 *
 * Returns 0, SPS_EINVAL (an argument NULL, or an unknown extension),
 * SPS_EFORMAT (a file is not valid), SPS_EIO (a file cannot be read, or
 * writing fp failed), SPS_ENOMEM, or a reader's code; on failure the
 * error channel (util.h: sps__err_msg) holds a one-line reason naming the
 * file, and nothing has been written to fp. */
SPS__HIDDEN int sps__diff_write(FILE *fp, const char *a, const char *b,
                                const sps__diff_opts_t *o);

#endif /* SPS_API_H */
