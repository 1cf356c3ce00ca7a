/*
 * api.h -- the api layer's internal interface (src/api/): the functions
 * that orchestrate the layers below for a whole task (a report of a file,
 * the comparison of two files, a merge), called by the public functions of
 * <spanscope.h> and by the command-line tool, which adds only its argument
 * parsing.  Nothing below src/api/ includes this header.
 */
#ifndef SPS_API_H
#define SPS_API_H

#include "formats/formats.h"

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
                        * per-rank view by total (else: by the time
                        * lost to imbalance, max - mean) */
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
    double threshold;  /* smallest change of the median, in percent,
                        * called slower or faster (the tool's default:
                        * 10, above the level shifts between identical
                        * runs) */
    /* Called before each file is opened and once its header is read (the
     * rest is bounded work): the tool arms and lifts its time limit
     * there.  Either may be NULL. */
    void (*reading)(const char *path);
    void (*read_done)(void);
    /* When not NULL, gets the number of regions called slower (the
     * tool's `check` fails on it). */
    size_t *nslower;
} sps__diff_opts_t;

/* Reads the recordings a and b (.h5, .json, .json.gz or .pftrace, by
 * extension; validated) and writes to fp their comparison region by
 * region, matched by name: calls, total and per-call time in each, the
 * changes of total, self and median per-call time, and a verdict on the
 * median per-call time tested with Mann-Whitney's rank test (slower /
 * faster when |z| > 3 and the median changed by at least o->threshold
 * percent; "~" otherwise; "only in A/B"), then a count of each verdict.
 * Medians and ranks, not means: a burst of outliers (preemption) moves a
 * run's mean far beyond its standard error (diff.c says more).  Differences are not errors.  fp, a, b
 * and o are borrowed.  Memory: O(regions + threads * depth).
 *
 * Returns 0, SPS_EINVAL (an argument NULL, or an unknown extension),
 * SPS_EFORMAT (a file is not valid), SPS_EIO (a file cannot be read, or
 * writing fp failed), SPS_ENOMEM, or a reader's code; on failure the
 * error channel (util.h: sps__err_msg) holds a one-line reason naming the
 * file, and nothing has been written to fp. */
SPS__HIDDEN int sps__diff_write(FILE *fp, const char *a, const char *b,
                                const sps__diff_opts_t *o);

/* ------------------------------------------------------------------------ */
/* inspect (src/api/inspect.c)                                               */
/* ------------------------------------------------------------------------ */

/* Writes to fp what the recording at path holds (`spanscope inspect`):
 * its format and size; for an .h5 its schema, layout, regions, index rows,
 * events and every /metadata attribute; for any format with spans its
 * processes (ranks), threads with their span counts, names, spans and the
 * time they cover.  fp and path are borrowed.  Returns 0, SPS_EINVAL (an
 * argument NULL, or an unknown extension), SPS_EIO, SPS_EFORMAT or
 * SPS_ENOMEM, with the one-line reason in the error channel (util.h). */
SPS__HIDDEN int sps__inspect_write(FILE *fp, const char *path);

/* ======================================================================== */
/* integrations: distributed sessions (api: src/api/dist.c; the MPI one:   */
/* src/ext/mpi.c, its own library libspanscope_mpi)                          */
/* ======================================================================== */

/* A distributed integration (MPI) lives in a library of its own, so that a
 * program that does not use it never loads it (nor libmpi).  It plugs in
 * through an operations table it registers with sps__dist_register, from
 * its library's constructor; the core calls the table, never the
 * integration by name.  libspanscope_mpi is another shared object, where
 * the core's hidden symbols are out of reach: registering gives it a table
 * of the core's services instead (one exported internal entry point, not
 * one per service).  docs/mpi.md describes the arrangement. */

/* Both tables start with the ABI version they were built with; a table of
 * another version is refused (a libspanscope_mpi of another spanscope). */
#define SPS__DIST_ABI 4

/* What an integration gives the core.  Every function is called without
 * the session lock held; none may be NULL. */
typedef struct sps__dist_ops {
    int abi;          /* SPS__DIST_ABI */
    const char *name; /* "mpi" */
    /* sps_setup (no session live, cfg->local not set): when the runtime is
     * up (MPI initialised, or sps_mpi_setup named a communicator) it is
     * collective and fills *out (on = 1, rank, size, clock offset);
     * otherwise it zeroes *out (on = 0).  0 or a negative SPS_E* code. */
    int (*setup)(sps__dist_t *out);
    /* A finalize of a session whose setup gave on = 1: the collective
     * finalize, which writes this rank's period with the core's
     * finalize_local.  Every rank returns the same code. */
    int (*finalize)(const char *path, FILE *table_fp);
    /* sps_shutdown of such a session (in the process that set it up). */
    void (*shutdown)(void);
} sps__dist_ops_t;

/* What the core gives an integration (sps__dist_register fills a pointer
 * to its one static table, valid for the life of the process). */
typedef struct sps__dist_core {
    int abi; /* SPS__DIST_ABI */
    /* The finalize of this process alone (sps__finalize_local). */
    int (*finalize_local)(const char *path, FILE *table_fp);
    /* The same, for a part that is read once and rewritten (a rank's part
     * of a collective finalize): the events are stored uncompressed, so
     * that neither this rank compresses them nor the merging one
     * decompresses them (sps__finalize_part). */
    int (*finalize_part)(const char *path, FILE *table_fp);
    /* Copies the live session's distributed state into *out under the
     * session lock (zeroed when no session of this process is live, or it
     * is not distributed); returns 1 when such a session is live, else 0. */
    int (*dist_info)(sps__dist_t *out);
    /* The live session's mode (SPS__EVENTS or SPS__AGGREGATE), SPS__OFF
     * when none is live in this process.  Read under the session lock. */
    int (*session_mode)(void);
    /* sps__h5_add_table (formats/h5.c, below). */
    int (*h5_add_table)(const char *path, const char *group, const char *desc,
                        size_t n, const char *strname, const char *const *strcol,
                        size_t ncols, const char *const *colname,
                        const int64_t *const *cols);
    /* The chunk-copy merge (docs/mpi.md "The collective finalize"): the
     * events of a part (sps__part_events), a merge with options -- a
     * rank's part laid out for it, or the parts merged by it
     * (sps__merge_ex) --, and a part's event rows read or written
     * (sps__part_rows). */
    int (*part_events)(const char *path, uint64_t *n);
    int (*merge)(const char *out_path, const char *const *in_paths, size_t n,
                 void *err_file, sps__merge_opts_t *opts);
    int (*part_rows)(const char *path, uint64_t first, size_t n, int64_t *const *cols,
                     int write);
    /* The message a rank sends with its laid-out part, so that rank 0
     * reads its index without libhdf5 (sps__part_index_msg). */
    int (*part_index_msg)(const char *path, void **msg, size_t *len);
} sps__dist_core_t;

/* Registers ops as the process's distributed integration and points *core
 * (may be NULL) at the core's services: set before ops is published (a
 * setup on another thread may call ops at once), NULL again when refused.
 * ops must stay valid for the life of the process (libspanscope_mpi is
 * linked with -z nodelete).  Registering the same table again is a no-op.
 * Thread-safe.  Returns 0, SPS_EINVAL (ops NULL or of another
 * SPS__DIST_ABI) or SPS_EACTIVE (another table is registered: one
 * distributed runtime per process).  Exported (SPS_API)
 * because the integration is another shared object; internal all the same:
 * not in spanscope.h, no promise beyond SPS__DIST_ABI. */
SPS_API int sps__dist_register(const sps__dist_ops_t *ops,
                               const sps__dist_core_t **core);

/* The api layer's side (api/dist.c), called by setup and finalize only.  sps__dist_setup (from
 * sps_setup): when no integration is registered and MPI is initialised in
 * the process (PMPI_Initialized found with dlsym: the core links no MPI),
 * first loads libspanscope_mpi from libspanscope's own directory (see
 * dist.c); then calls the registered setup, or zeroes *out when there is
 * none.  sps__dist_finalize: the registered finalize (sps__finalize_local
 * when there is none).  sps__dist_shutdown: the registered shutdown. */
SPS__HIDDEN int sps__dist_setup(sps__dist_t *out);
SPS__HIDDEN int sps__dist_finalize(const char *path, FILE *table_fp);
SPS__HIDDEN void sps__dist_shutdown(void);
/* api/finalize.c: the finalize of this process alone (what sps__finalize_ex does
 * without a distributed session). */
SPS__HIDDEN int sps__finalize_local(const char *path, FILE *table_fp);
/* sps__finalize_local with the events stored uncompressed (see
 * sps__dist_core_t's finalize_part). */
SPS__HIDDEN int sps__finalize_part(const char *path, FILE *table_fp);
/* api/finalize.c: writes a finalized period to path (NULL: no file) and prints
 * the table to verbose if not NULL.  Does not take the lock. */
SPS__HIDDEN int sps__finalize_write(sps__snap_t *s, const char *path,
                                    FILE *verbose);
/* api/finalize.c: sps_finalize_to with the table printed to table_fp (or none). */
SPS__HIDDEN int sps__finalize_ex(const char *path, FILE *table_fp);

/* api/finalize.c: builds table input from accumulators (ns) and prints it. */
/* lanes (NULL: one each): the threads that ran each region
 * [nregions], node [nnodes] and any (lanes_total), so that "% session" is
 * over their session time. */
typedef struct sps__acc_lanes {
    const uint32_t *region, *node;
    uint32_t total;
} sps__acc_lanes_t;
SPS__HIDDEN int sps__print_accs(FILE *fp, const sps__acc_t *per_region,
                                uint32_t nregions, const sps__acc_t *nodes,
                                const int32_t *node_parent,
                                const uint32_t *node_region, size_t nnodes,
                                int64_t session_ns, const sps__acc_lanes_t *lanes);
/* ------------------------------------------------------------------------ */
/* merge (src/api/merge.c; docs/merge.md)                                    */
/* ------------------------------------------------------------------------ */

/* The hidden side of sps_merge, for the command-line tool: the argument
 * check on its own (so that the tool can tell usage errors from data
 * errors) and the merge with hooks around the reading of the inputs
 * (where the tool arms and disarms its watchdog). */

/* Called around the reading of the inputs; either may be NULL. */
typedef struct sps__merge_hooks {
    /* before each input is opened (the tool: its read time limit) */
    void (*reading)(const char *path);
    /* once every input's header is read: the rest is bounded work */
    void (*read_done)(void);
} sps__merge_hooks_t;

/* Checks sps_merge's arguments without reading any file: paths given, the
 * output's and every input's extension known, no .h5 output from trace
 * inputs.  Returns 0 or SPS_EINVAL after writing the one-line reason (no
 * "merge:" prefix) to err_file (a FILE*, may be NULL). */
SPS__HIDDEN int sps__merge_check(const char *out_path,
                                 const char *const *in_paths, size_t n,
                                 void *err_file);

/* sps_merge with hooks (NULL: none); same contract as sps_merge. */
SPS__HIDDEN int sps__merge(const char *out_path, const char *const *in_paths,
                           size_t n, void *err_file,
                           const sps__merge_hooks_t *hooks);
/* sps_merge with options (formats.h's sps__merge_opts_t, may be NULL):
 * opts->part writes a rank's part for the chunk-copy merge from one .h5
 * input into an .h5 (else SPS_EINVAL); opts's out fields say how the
 * events were written.  Same contract as sps_merge otherwise. */
SPS__HIDDEN int sps__merge_ex(const char *out_path, const char *const *in_paths,
                              size_t n, void *err_file, sps__merge_opts_t *opts);

/* A finalize's stack samples (samples.c; docs/sampling.md).  take: under
 * the session lock, moves the sampler's samples of the period into s.
 * prepare: their times, threads, and the merged pass's order.  write:
 * /samples into the closed file tmp, regions and call ids as the file
 * numbers them (file_region by region id indexes rows; the period's first
 * call id); 0 or an SPS_E code.  defer: after a successful write, gives the
 * samples whose span stays open back for the period that writes it. */
SPS__HIDDEN void sps__samples_take(sps__snap_t *s);
SPS__HIDDEN void sps__samples_prepare(sps__snap_t *s);
SPS__HIDDEN int sps__samples_write(const sps__snap_t *s, const char *tmp,
                                   const uint32_t *file_region, const sps__row_t *rows,
                                   int64_t first_call_id);
SPS__HIDDEN void sps__samples_defer(const sps__snap_t *s);

/* ------------------------------------------------------------------------ */
/* recover (src/api/recover.c)                                               */
/* ------------------------------------------------------------------------ */

/* sps_recover without the error copy: 0 or an SPS_E* code with the
 * thread's error message set. */
SPS__HIDDEN int sps__recover(const char *path, sps_recover_info_t *info);

/* ------------------------------------------------------------------------ */
/* signals (src/api/signals.c; docs/signals.md)                              */
/* ------------------------------------------------------------------------ */

/* sps_setup: installs the handlers of the chosen signals (sps_signals,
 * SPANSCOPE_SIGNALS); 0 or SPS_EINVAL (a bad list, the error says why).
 * sps_shutdown: restores the dispositions as they were, first thing. */
SPS__HIDDEN int sps__signals_install(void);
SPS__HIDDEN void sps__signals_uninstall(void);
/* Around each finalize (api/finalize.c), outside every lock: enter waits
 * while a signal's write is under way in this process (that write ends the
 * process), and the watcher's write waits while a finalize is under way, so
 * the two never use HDF5 at once.  The watcher's own finalize passes. */
SPS__HIDDEN void sps__signals_finalize_enter(void);
SPS__HIDDEN void sps__signals_finalize_leave(void);

#endif /* SPS_API_H */
