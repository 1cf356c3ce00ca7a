/* html_file.c -- sps_html_write_files: the HTML report of one recording
 * or the comparison of several, written to a file, with the options of
 * sps_html_options_t; sps_html_file and sps_html_compare_files are that
 * with the defaults.  The one glue of the page: `spanscope html`
 * (tools/cmd_html.c), Python's create_html_report and
 * ProfileManager.setup(output="run.html") all come here.  The page itself
 * is formats/html.c's; this opens the inputs with the timeline readers,
 * reads each .h5's /metadata for the scaling axes (the one metadata
 * reader, h5_read.h), and writes through a temporary name renamed into
 * place. */
#include "api/api.h"
#include "formats/h5_read.h"
#include "formats/html.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes the page of the n runs rs[] to out through a temporary name: one
 * run's page (n 1) or the comparison of n runs labelled labels[].  0, or
 * a code with the message set. */
static int emit(sps__tlr_t *const *rs, const char *const *labels, size_t n, const char *out,
                const sps__html_opts_t *opt) {
    char *tmp = sps__tmp_name(out, NULL);
    FILE *fp = tmp ? sps__out_open(tmp, 1) : NULL; /* its writes note their errno */
    if (!fp) {
        int e = tmp ? errno : ENOMEM;
        free(tmp);
        if (e == ENOMEM) return sps__err_fail(SPS_ENOMEM, "%s: %s", out, strerror(e));
        sps__err_os_note(e);
        return sps__err_os_fail(e == ENOSPC || e == EDQUOT || e == EIO ? SPS_EIO : SPS_EPATH,
                                "writing", out);
    }
    int rc = n == 1 ? sps__html_write(fp, rs[0], opt)
                    : sps__html_write_cmp(fp, rs, labels, n, opt);
    int werr = ferror(fp); /* set by a failed write or flush of the page */
    if (fclose(fp) != 0) werr = 1;
    int renamed = rc == 0 && !werr && rename(tmp, out) == 0;
    if (rc == 0 && !werr && !renamed) sps__err_os_note(errno);
    if (!renamed) unlink(tmp); /* no partial page, no temporary file */
    free(tmp);
    if (renamed) return 0;
    if (werr || rc == 0) { /* the output failed, not the input: say why */
        if (!sps__err_os()) sps__err_os_note(EIO);
        return sps__err_os_fail(werr ? SPS_EIO : SPS_EPATH, "writing", out);
    }
    if (rc != SPS_EFORMAT && rc != SPS_EINVAL) sps__err_set("%s: %s", out, sps_strerror(rc));
    return rc;
}

/* The integer value of /metadata attribute name in m, or -1 where it is
 * absent or not a positive number (scope-profiler writes ints; a float or
 * a numeric string is taken too). */
static int64_t meta_count(const sps__h5r_meta_t *m, const char *name) {
    for (size_t i = 0; i < m->nattrs; i++) {
        const sps_meta_attr_t *a = &m->attrs[i];
        if (strcmp(a->name, name) || a->is_array || a->n != 1) continue;
        double v = a->kind == SPS_META_INT     ? (double)a->ints[0]
                   : a->kind == SPS_META_FLOAT ? a->floats[0]
                                               : strtod(a->texts[0], NULL);
        return v >= 1 && v < 1e15 ? (int64_t)v : -1;
    }
    return -1;
}

/* The base name of path (after its last '/'). */
static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Opens input k: its reader into rs[k] and, for an .h5, the counts of its
 * /metadata into threads[k], nodes[k] (-1 when absent).  0 or a code with
 * the message set. */
static int open_run(const char *path, sps__tlr_t **r, int64_t *threads, int64_t *nodes) {
    sps__tl_format_t fi = path ? sps__tl_format_of(path) : SPS__TL_UNKNOWN;
    *threads = *nodes = -1;
    if (fi == SPS__TL_UNKNOWN)
        return sps__err_fail(SPS_EINVAL, "%s: unknown input format (.h5, .json, .json.gz, "
                             ".pftrace)", path ? path : "(null)");
    sps__h5r_meta_t m;
    memset(&m, 0, sizeof m);
    /* /metadata before the reader opens the file: libhdf5 shares one file's
     * state between two open handles of it, and a corrupt file that one
     * open parses safely can crash the second (the check parses it once) */
    if (fi == SPS__TL_H5 && sps__h5r_metadata(path, &m) == 0) {
        /* OpenMP's count as scope-profiler records it; else the threads
         * spanscope's writer saw record (it writes omp_num_threads -1
         * without OMP_NUM_THREADS) */
        *threads = meta_count(&m, "omp_num_threads");
        if (*threads < 0) *threads = meta_count(&m, "threads");
        *nodes = meta_count(&m, "num_nodes");
    }
    sps__h5r_meta_free(&m);
    sps__err_clear();
    return sps__tlr_open(r, path, fi);
}

/* sps_html_write_files without the error copy: the message is set on
 * failure. */
static int write_files(const char *const *in, const char *const *labels, size_t n,
                       const char *out, const sps_html_options_t *o) {
    if (!in || !n || !out)
        return sps__err_fail(SPS_EINVAL, "the HTML report needs one or more recordings and "
                             "an output");
    int rc = sps__html_check_opts(o);
    if (rc) return rc;
    sps__tlr_t **rs = calloc(n, sizeof *rs);
    int64_t *counts = calloc(2 * n, sizeof *counts);
    const char **names = calloc(n, sizeof *names);
    if (!rs || !counts || !names) rc = SPS_ENOMEM;
    size_t opened = 0;
    for (; rc == 0 && opened < n; opened++) {
        if ((rc = open_run(in[opened], &rs[opened], &counts[opened], &counts[n + opened])))
            break;
        names[opened] = labels && labels[opened] ? labels[opened] : base_name(in[opened]);
    }
    if (rc == 0) {
        const char *title = o && o->title ? o->title : base_name(in[0]);
        sps__html_opts_t opt = {o ? o->max_spans : SPS__HTML_DEFAULT_MAX_SPANS, title,
                                o ? o->progress : NULL, o, counts, counts + n,
                                n == 1 ? in[0] : NULL};
        rc = emit(rs, names, n, out, &opt);
    }
    for (size_t i = 0; i < opened; i++) sps__tlr_free(rs[i]);
    free(rs);
    free(counts);
    free(names);
    return rc;
}

int sps_html_write_files(const char *const *in_paths, const char *const *labels, size_t n,
                         const char *out_path, const sps_html_options_t *opts, char *err,
                         size_t errlen) {
    sps__err_clear();
    return sps__err_copy(write_files(in_paths, labels, n, out_path, opts), err, errlen);
}

int sps_html_file(const char *in_path, const char *out_path, size_t max_spans,
                  char *err, size_t errlen) {
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    if (max_spans) o.max_spans = max_spans;
    return sps_html_write_files(&in_path, NULL, 1, out_path, &o, err, errlen);
}

int sps_html_compare_files(const char *const *in_paths, const char *const *labels,
                           size_t n, const char *out_path, char *err, size_t errlen) {
    sps__err_clear();
    if (!in_paths || !labels || n < 2 || !out_path)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "a comparison needs two or more "
                                           "recordings, their labels and an output"),
                             err, errlen);
    return sps_html_write_files(in_paths, labels, n, out_path, NULL, err, errlen);
}
