/* html_file.c -- sps_html_file: the HTML report of a recording, written to
 * a file (for the bindings: ProfileManager.setup(output="run.html")).  The
 * page itself is formats/html.c's; this opens the input with the timeline
 * readers and writes through a temporary name renamed into place, as
 * `spanscope html` does. */
#include "api/api.h"
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
    FILE *fp = tmp ? fopen(tmp, "w") : NULL;
    if (!fp) {
        int e = tmp ? errno : ENOMEM;
        free(tmp);
        return sps__err_fail(e == ENOMEM ? SPS_ENOMEM : SPS_EPATH, "%s: %s", out, strerror(e));
    }
    int rc = n == 1 ? sps__html_write(fp, rs[0], opt)
                    : sps__html_write_cmp(fp, rs, labels, n, opt);
    int werr = ferror(fp);
    if (fclose(fp) != 0) werr = 1;
    int done = rc == 0 && !werr && rename(tmp, out) == 0, e = errno;
    if (!done) unlink(tmp);
    free(tmp);
    if (done) return 0;
    if (werr || rc == 0) return sps__err_fail(SPS_EIO, "%s: %s", out, strerror(e ? e : EIO));
    if (rc != SPS_EFORMAT) sps__err_set("%s: %s", out, sps_strerror(rc));
    return rc;
}

int sps_html_file(const char *in_path, const char *out_path, size_t max_spans,
                  char *err, size_t errlen) {
    sps__err_clear();
    if (!in_path || !out_path) return sps__err_copy(SPS_EINVAL, err, errlen);
    sps__tl_format_t fi = sps__tl_format_of(in_path);
    if (fi == SPS__TL_UNKNOWN)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "%s: unknown input format (.h5, "
                                           ".json, .json.gz, .pftrace)", in_path),
                             err, errlen);
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, in_path, fi);
    if (rc) return sps__err_copy(rc, err, errlen);
    const char *title = strrchr(in_path, '/');
    sps__html_opts_t opt = {max_spans ? max_spans : SPS__HTML_DEFAULT_MAX_SPANS,
                            title ? title + 1 : in_path, NULL};
    rc = emit(&r, NULL, 1, out_path, &opt);
    sps__tlr_free(r);
    return sps__err_copy(rc, err, errlen);
}

int sps_html_compare_files(const char *const *in_paths, const char *const *labels,
                           size_t n, const char *out_path, char *err, size_t errlen) {
    sps__err_clear();
    if (!in_paths || !labels || n < 2 || !out_path)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "a comparison needs two or more "
                                           "recordings, their labels and an output"),
                             err, errlen);
    sps__tlr_t **rs = calloc(n, sizeof *rs);
    if (!rs) return sps__err_copy(SPS_ENOMEM, err, errlen);
    int rc = 0;
    size_t opened = 0;
    for (; rc == 0 && opened < n; opened++) {
        sps__tl_format_t fi = in_paths[opened] && labels[opened]
                                  ? sps__tl_format_of(in_paths[opened]) : SPS__TL_UNKNOWN;
        if (fi == SPS__TL_UNKNOWN) {
            rc = sps__err_fail(SPS_EINVAL, "%s: unknown input format (.h5, .json, .json.gz, "
                               ".pftrace)", in_paths[opened] ? in_paths[opened] : "(null)");
            break;
        }
        rc = sps__tlr_open(&rs[opened], in_paths[opened], fi);
        if (rc) break;
    }
    if (rc == 0) {
        sps__html_opts_t opt = {SPS__HTML_DEFAULT_MAX_SPANS, labels[0], NULL};
        rc = emit(rs, labels, n, out_path, &opt);
    }
    for (size_t i = 0; i < opened; i++) sps__tlr_free(rs[i]);
    free(rs);
    return sps__err_copy(rc, err, errlen);
}
