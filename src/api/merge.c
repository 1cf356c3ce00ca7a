/*
 * merge.c -- sps_merge: per-rank recordings into one file, one process
 * per rank, clocks aligned (docs/merge.md).  The library side of
 * `spanscope merge -o OUT IN...` (tools/cmd_merge.c is its command line),
 * of Python's merge_distributed_traces and of a collective finalize under
 * MPI.
 *
 * This file orchestrates; it reads and decides nothing itself:
 *   - checks the arguments (paths, extensions);
 *   - chooses the output kind (formats/merge.h): a trace (.json,
 *     .json.gz, .pftrace: formats/merge_trace.c) or an .h5
 *     (formats/merge_h5.c);
 *   - has the kind open each input and read its facts, and resolves its
 *     rank by the model's rule as it goes (model/align.c: an input
 *     holding several ranks stops the merge there);
 *   - once every input is read: duplicate ranks, the reference and each
 *     input's clock shift (model/align.c);
 *   - has the kind write the merged file to "<out>.tmp-<pid>" and renames
 *     it into place; on failure nothing is left behind.
 *
 * Errors: every failure writes one line (no "merge:" prefix; the file it
 * is about named first) to the caller's FILE*, and nothing else is
 * printed: HDF5's own error printing is off while a merge runs.
 */
#include "api/api.h"
#include "formats/h5_read.h"
#include "formats/merge.h"
#include "formats/timeline.h"
#include "model/align.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* One merge: its arguments, the kind writing it, every input's facts and
 * alignment, and where its error line goes. */
typedef struct merge {
    const char *out;
    const char *const *ins;
    size_t n;
    FILE *err;             /* the caller's, may be NULL */
    int failed;            /* the error line is written */
    const sps__merge_hooks_t *hooks;
    const sps__merge_kind_t *kind;
    void *st;              /* the kind's state */
    sps__align_in_t *facts;
    sps__align_t *al;
    int ref;               /* the reference input, -1 none */
    int via_trace;         /* .h5 output from trace inputs (write_to) */
    sps__merge_opts_t *opts; /* the caller's, may be NULL */
} merge_t;

/* Writes the one-line reason (printf format) to c->err, the first time
 * only, and returns code. */
SPS__PRINTF(3, 4)
static int fail(merge_t *c, int code, const char *fmt, ...) {
    if (c->err && !c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(c->err, fmt, ap);
        va_end(ap);
        fputc('\n', c->err);
        fflush(c->err);
    }
    c->failed = 1;
    return code;
}

/* Writes the message a lower layer set for code (about what, when it set
 * none) and returns code. */
static int fail_msg(merge_t *c, int code, const char *what) {
    const char *msg = sps__err_msg();
    return *msg ? fail(c, code, "%s", msg)
                : fail(c, code, "%s: %s", what, sps_strerror(code));
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* Checks c's output path and formats and the input paths (see
 * sps__merge_check) and chooses c->kind.  Returns 0 or SPS_EINVAL after
 * the error line. */
static int check_args(merge_t *c) {
    if (!c->out || !*c->out) return fail(c, SPS_EINVAL, "no output path");
    if (!c->ins || c->n == 0) return fail(c, SPS_EINVAL, "no input files");
    if (c->n > INT32_MAX) return fail(c, SPS_EINVAL, "too many input files");
    sps__tl_format_t fo = sps__tl_format_of(c->out);
    if (fo == SPS__TL_UNKNOWN)
        return fail(c, SPS_EINVAL, "%s: unknown output format (.h5, .json, "
                    ".json.gz, .pftrace)", c->out);
    for (size_t i = 0; i < c->n; i++) {
        const char *in = c->ins[i];
        if (!in || !*in) return fail(c, SPS_EINVAL, "input %zu has no path", i);
        sps__tl_format_t f = sps__tl_format_of(in);
        if (f == SPS__TL_UNKNOWN)
            return fail(c, SPS_EINVAL, "%s: unknown input format (.h5, .json, "
                        ".json.gz, .pftrace)", in);
        if (fo == SPS__TL_H5 && f != SPS__TL_H5) c->via_trace = 1;
    }
    /* an .h5 from trace inputs: the trace merge (ranks, clocks), to a
     * temporary .pftrace, then that written as .h5 (write_to) */
    c->kind = fo == SPS__TL_H5 && !c->via_trace ? &sps__merge_to_h5 : &sps__merge_to_trace;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Reading the inputs                                                        */
/* ------------------------------------------------------------------------ */

/* Has the kind open input i and read its facts, then resolves its rank
 * (model/align.c).  Returns 0 or a code after the error line. */
static int read_one(merge_t *c, size_t i) {
    const char *path = c->ins[i];
    if (c->hooks && c->hooks->reading) c->hooks->reading(path);
    sps__err_clear();
    int rc = c->kind->open(c->st, i, path, sps__tl_format_of(path), &c->facts[i]);
    if (rc) return fail_msg(c, rc, path);
    int64_t clash[2];
    if (sps__rank_resolve(&c->facts[i].rank, i, &c->al[i].rank, clash))
        return fail(c, SPS_EFORMAT, "%s holds several ranks (%lld and %lld): "
                    "merge takes one recording per rank", path,
                    (long long)clash[0], (long long)clash[1]);
    return 0;
}

/* Reads every input, then checks that no two share a rank and aligns
 * their clocks (model/align.c).  Returns 0 or a code after the error
 * line. */
static int read_all(merge_t *c) {
    for (size_t i = 0; i < c->n; i++) {
        int rc = read_one(c, i);
        if (rc) return rc;
    }
    /* the headers are read: the rest is bounded work */
    if (c->hooks && c->hooks->read_done) c->hooks->read_done();
    size_t a, b;
    int dup = sps__rank_duplicate(c->al, c->n, &a, &b);
    if (dup < 0) return fail(c, SPS_ENOMEM, "out of memory");
    if (dup)
        return fail(c, SPS_EINVAL, "%s and %s are both rank %lld", c->ins[a],
                    c->ins[b], (long long)c->al[a].rank);
    c->ref = sps__align_clocks(c->facts, c->al, c->n);
    if (c->opts && c->opts->part) { /* a rank's part: on rank 0's clock */
        int64_t rank = c->al[0].rank;
        sps__align_onto_rank0(&c->facts[0].clock, &c->al[0]);
        c->al[0].rank = rank;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing the output                                                        */
/* ------------------------------------------------------------------------ */

/* Has the kind write the merged file to the temporary name tmp and
 * renames it to the output; removes tmp on failure.  Returns 0 or a code
 * after the error line. */
static int write_to(merge_t *c, const char *tmp) {
    sps__err_clear();
    int rc;
    if (c->via_trace) { /* the merged trace, then the .h5 of it */
        char *trace = sps__tmp_name(c->out, ".pftrace");
        if (!trace) return fail(c, SPS_ENOMEM, "out of memory");
        rc = c->kind->write(c->st, trace, trace, c->al, c->ref, NULL);
        if (!rc) rc = sps__h5_from_timeline(trace, SPS__TL_PFTRACE, tmp);
        unlink(trace);
        free(trace);
    } else {
        rc = c->kind->write(c->st, c->out, tmp, c->al, c->ref, c->opts);
    }
    if (!rc && rename(tmp, c->out) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EIO;
    }
    /* a failed write says its cause (ENOSPC...) and the output's name,
     * not the temporary's */
    if ((rc == SPS_EIO || rc == SPS_EPATH) && sps__err_os())
        sps__err_os_fail(rc, "writing", c->out);
    if (rc) fail_msg(c, rc, c->out);
    if (rc) unlink(tmp); /* no partial output, no temporary file */
    return rc;
}

/* Reads the inputs and writes the merge (c checked), then closes the
 * inputs.  Returns 0 or a code after the error line.  Runs with HDF5's
 * error printing off (sps__h5_quietly), closing included. */
static int merge_run(void *arg) {
    merge_t *c = arg;
    char *tmp = NULL;
    int rc = 0;
    c->facts = calloc(c->n, sizeof *c->facts);
    c->al = calloc(c->n, sizeof *c->al);
    if (!c->facts || !c->al || !(tmp = sps__tmp_name(c->out, ""))) {
        rc = fail(c, SPS_ENOMEM, "out of memory");
    }
    sps__err_clear();
    if (rc == 0 && (rc = c->kind->create(&c->st, c->n, c->via_trace ? NULL : c->opts))) fail_msg(c, rc, c->out);
    if (rc == 0) rc = read_all(c);
    if (rc == 0) rc = write_to(c, tmp);
    c->kind->free(c->st);
    free(tmp);
    free(c->facts);
    free(c->al);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

/* Checks sps_merge's arguments without reading a file (api.h). */
int sps__merge_check(const char *out_path, const char *const *in_paths,
                     size_t n, void *err_file) {
    merge_t c = {.out = out_path, .ins = in_paths, .n = n, .err = err_file, .ref = -1};
    return check_args(&c);
}

/* Runs merge c (its fields set) after checking its arguments. */
static int merge_checked(merge_t *c) {
    int rc = check_args(c);
    if (rc == 0 && c->opts && c->opts->part && (c->n != 1 || c->kind != &sps__merge_to_h5))
        rc = fail(c, SPS_EINVAL, "%s: a rank's part is written from one .h5 file", c->out);
    if (rc) return rc;
    if (c->opts && c->opts->trusted) sps__h5_guard_trust(1);
    rc = sps__h5_quietly(merge_run, c);
    if (c->opts && c->opts->trusted) sps__h5_guard_trust(0);
    if (rc && !c->failed) fail(c, rc, "%s: %s", c->out, sps_strerror(rc));
    return rc;
}

/* sps_merge with options (api.h). */
int sps__merge_ex(const char *out_path, const char *const *in_paths, size_t n,
                  void *err_file, sps__merge_opts_t *opts) {
    merge_t c = {.out = out_path, .ins = in_paths, .n = n, .err = err_file, .ref = -1,
                 .opts = opts};
    return merge_checked(&c);
}

/* sps_merge with hooks around the reading of the inputs (api.h). */
int sps__merge(const char *out_path, const char *const *in_paths, size_t n,
               void *err_file, const sps__merge_hooks_t *hooks) {
    merge_t c = {.out = out_path, .ins = in_paths, .n = n, .err = err_file,
                 .hooks = hooks, .ref = -1};
    return merge_checked(&c);
}

/* Merges per-rank recordings into one file (spanscope.h). */
int sps_merge(const char *out_path, const char *const *in_paths, size_t n,
              void *err_file) {
    return sps__merge(out_path, in_paths, n, err_file, NULL);
}
