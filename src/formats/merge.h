/*
 * merge.h -- the two output kinds of sps_merge, for its entry point
 * (src/api/merge.c): a trace (merge_trace.c: .json, .json.gz, .pftrace
 * from any inputs) and an .h5 (merge_h5.c: from .h5 inputs).
 *
 * The entry point drives both the same way, through the kind's table:
 *
 *     kind->create(&st, n, opts);                  // n inputs
 *     for each input i:
 *         kind->open(st, i, path, fmt, &facts[i]); // reads its facts
 *         ... resolve its rank (model/align.h) ...
 *     ... duplicate ranks, clocks (model/align.h) ...
 *     kind->write(st, out, tmp, al, ref, opts);    // the merged file at tmp
 *     kind->free(st);
 *
 * and renames tmp to out.  The kinds read and write files and nothing
 * else: which rank an input is and how its clock is shifted is decided
 * by model/align.c from the facts they read.  Errors: every function
 * that fails sets the one-line message (sps__err_set, util.h; naming the
 * file it is about first, no "merge:" prefix) and returns a negative
 * SPS_E* code; the entry point writes the line.
 */
#ifndef SPS_FORMATS_MERGE_H
#define SPS_FORMATS_MERGE_H

#include "formats/formats.h"
#include "formats/timeline.h"
#include "model/align.h"

/* One output kind. */
typedef struct sps__merge_kind {
    /* Makes the kind's state for n inputs (n >= 1) in *st; opts (may be
     * NULL) are the ones write will get, for what open reads of them (the
     * .h5 kind: the parts' index messages).  0 or SPS_ENOMEM. */
    int (*create)(void **st, size_t n, sps__merge_opts_t *opts);
    /* Opens input i (each of 0..n-1 once, in order) at path, whose
     * format is fmt (known, and one the kind takes), and fills *facts
     * with what its file says about its rank and clock; strings and
     * arrays in *facts live as long as st.  0 or a code (message set). */
    int (*open)(void *st, size_t i, const char *path, sps__tl_format_t fmt,
                sps__align_in_t *facts);
    /* Writes the merged file to tmp (removed again on failure) after
     * every input is open: al[i] is input i's rank and clock shift, ref
     * the reference input (align.h, -1 none); out is the output's name,
     * for messages and the trace's name; opts (may be NULL) what the
     * merge does beyond sps_merge (formats.h: the .h5 kind only, the
     * trace kind ignores it).  0 or a code (message set). */
    int (*write)(void *st, const char *out, const char *tmp,
                 const sps__align_t *al, int ref, sps__merge_opts_t *opts);
    /* Closes every input and frees st (NULL: nothing). */
    void (*free)(void *st);
} sps__merge_kind_t;

/* .json / .json.gz / .pftrace: a k-way merge of the inputs' timeline
 * readers into a timeline writer (merge_trace.c). */
SPS__HIDDEN extern const sps__merge_kind_t sps__merge_to_trace;
/* .h5 from .h5 inputs (merge_h5.c). */
SPS__HIDDEN extern const sps__merge_kind_t sps__merge_to_h5;

/* Runs fn(arg) with HDF5's automatic error printing off for this thread
 * (restored afterwards) and returns what it returns: a merge prints
 * nothing but its one error line (merge_h5.c). */
SPS__HIDDEN int sps__h5_quietly(int (*fn)(void *arg), void *arg);

/* The drift facts of the .h5 file at path into f (which must have its
 * MPI offset already, has_offset; else nothing is read): its /clock_sync
 * measurements fitted by sps__clock_fit (model/align.h) into has_drift and
 * the line's two ends, the fit's bound becoming offset_error_ns.  A file
 * without the table, or with a malformed one, leaves f as it is (the
 * constant offset).  merge_h5.c; both merges call it. */
SPS__HIDDEN void sps__h5_clock_drift(const char *path, sps__clock_facts_t *f);

/* Prints the MPI clock alignment of the .h5 file at path to fp (merge_h5.c,
 * docs/mpi.md "Clock alignment"): a rank's own file's /clock_sync fitted
 * (offset, drift in ppm, alignment error), and a merged file's /mpi_clock
 * per rank (offset and error at setup, drift, measurements, alignment
 * error; older files without the drift columns: the setup's values).
 * Nothing when the file has neither.  0, SPS_EIO or SPS_EFORMAT (message
 * set). */
SPS__HIDDEN int sps__mpi_clock_print(FILE *fp, const char *path);

/* A set of strings (borrowed) with ids in order of first insertion: the
 * names both kinds merge by string (merge_trace.c). */
typedef struct sps__strtab {
    const char **v;      /* id -> string */
    size_t n, cap;
    sps__htab_t index;   /* string -> id (util.h) */
} sps__strtab_t;

/* The id of s in t, added if new.  Returns the id or -1 (no memory). */
SPS__HIDDEN int64_t sps__strtab_id(sps__strtab_t *t, const char *s);
/* Frees t's arrays (not the strings); t may be used again. */
SPS__HIDDEN void sps__strtab_free(sps__strtab_t *t);

#endif /* SPS_FORMATS_MERGE_H */
