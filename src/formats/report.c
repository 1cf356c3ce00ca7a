/* report.c -- sps_report: a file's summary table, for the CLI and bindings. */
#include "sps_int.h"
#include "formats/h5_read.h"

#include <stdlib.h>
#include <string.h>

static const char *const k_sorts[] = {"self", "total", "calls", "mean", "max", "name"};

/* Parses a sort key; -1 if unknown. */
static int parse_sort(const char *s) {
    if (!s) return SPS__SORT_SELF;
    for (int i = 0; i < (int)(sizeof k_sorts / sizeof *k_sorts); i++)
        if (strcmp(s, k_sorts[i]) == 0) return i;
    return -1;
}

static int fail(int rc, char *err, size_t errlen, const char *msg) {
    if (err && errlen) snprintf(err, errlen, "%s", msg);
    return rc;
}

int sps_report(const char *path, void *out_file, const char *sort, size_t top,
               char *err, size_t errlen) {
    int si = parse_sort(sort);
    if (!path || !out_file) return fail(SPS_EINVAL, err, errlen, "no path or output");
    if (si < 0)
        return fail(SPS_EINVAL, err, errlen,
                    "unknown sort key (use self, total, calls, mean, max or name)");
    sps__h5r_t *r = NULL;
    int rc = sps__h5r_open(&r, path);
    if (rc) return fail(rc, err, errlen, sps__h5r_error());
    sps__tnode_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    rc = sps__h5r_tree(r, &nodes, &nn);
    if (!rc) rc = sps__h5r_flat(r, &flat, &nf);
    if (!rc) {
        sps__table_opts_t opt = {1, 1, (sps__sort_t)si, top, sps__h5r_session_ns(r)};
        rc = sps__table_print((FILE *)out_file, nodes, nn, flat, nf, &opt);
    }
    if (rc) fail(rc, err, errlen, sps_strerror(rc));
    free(nodes);
    free(flat);
    sps__h5r_free(r);
    return rc;
}
