/*
 * h5_comm.c -- readers of the optional tables of an HDF5 file that the
 * main reader (h5_read.c) leaves alone: /communication (the PMPI
 * wrappers' calls and bytes per region and rank: src/ext/pmpi.c, written
 * by src/ext/mpi.c; docs/mpi.md), for the report's communication
 * section, and the regions' source locations of /rank_region_index
 * (scope-profiler's source_files / source_lines), for the .prof keys.  Validated like every reader: 1-D
 * columns of one length (at most 2^24 rows), int64-compatible numbers, no
 * negative calls or bytes, names valid UTF-8 (others are replaced).
 */
#include "formats/h5_comm.h"
#include "formats/h5_read.h"

#include <hdf5.h>

#include <stdlib.h>
#include <string.h>

#define COMM_MAX_ROWS ((hsize_t)1 << 24)

/* The length of 1-D dataset d, or -1 when it is not 1-D or too long. */
static int64_t col_len(hid_t d) {
    hid_t sp = H5Dget_space(d);
    hsize_t dims[1] = {0};
    int nd = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (nd == 1) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    return nd == 1 && dims[0] <= COMM_MAX_ROWS ? (int64_t)dims[0] : -1;
}

/* Reads integer column name of g (n rows) into a malloc'd int64 array.
 * 0, or SPS_EFORMAT / SPS_ENOMEM. */
static int read_i64(hid_t g, const char *name, int64_t n, int64_t **out) {
    *out = NULL;
    if (n < 0 || (uint64_t)n > COMM_MAX_ROWS) return SPS_EFORMAT;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return SPS_EFORMAT;
    hid_t t = H5Dget_type(d);
    int ok = t >= 0 && H5Tget_class(t) == H5T_INTEGER && col_len(d) == n;
    if (t >= 0) H5Tclose(t);
    *out = ok ? malloc((size_t)(n ? n : 1) * sizeof **out) : NULL;
    int rc = !ok ? SPS_EFORMAT : !*out ? SPS_ENOMEM : 0;
    if (!rc && n && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                             (hid_t)sps__h5_dxpl((size_t)n * 8), *out) < 0)
        rc = SPS_EFORMAT;
    H5Dclose(d);
    return rc;
}

/* Reads the variable-length string column name of g (n rows) into *strs
 * (malloc'd array of malloc'd strings, valid UTF-8; freed by the caller
 * with its n even on failure).  0 or a code. */
static int read_strings(hid_t g, const char *name, int64_t n, char ***strs) {
    *strs = NULL;
    if (n < 0 || (uint64_t)n > COMM_MAX_ROWS) return SPS_EFORMAT;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return SPS_EFORMAT;
    hid_t ft = H5Dget_type(d);
    int rc = ft >= 0 && H5Tget_class(ft) == H5T_STRING && col_len(d) == n ? 0 : SPS_EFORMAT;
    char **out = calloc((size_t)(n ? n : 1), sizeof *out);
    *strs = out;
    if (!rc && !out) rc = SPS_ENOMEM;
    if (!rc && n) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5T_CSET_UTF8);
        char **raw = calloc((size_t)n, sizeof *raw);
        if (!raw) rc = SPS_ENOMEM;
        else if (H5Tis_variable_str(ft) > 0 &&
                 H5Dread(d, mt, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl((size_t)n * 16), raw) >= 0) {
            for (int64_t i = 0; i < n && !rc; i++) {
                const char *s = raw[i] ? raw[i] : "";
                if (!(out[i] = sps__utf8_sanitize(s, strlen(s)))) rc = SPS_ENOMEM;
            }
            hid_t sp = H5Dget_space(d);
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, raw);
            H5Sclose(sp);
        } else {
            rc = SPS_EFORMAT; /* fixed-length names: not what the writer writes */
        }
        free(raw);
        H5Tclose(mt);
    }
    if (ft >= 0) H5Tclose(ft);
    H5Dclose(d);
    return rc;
}

int sps__h5r_comm(const char *path, sps__h5r_comm_t *out) {
    memset(out, 0, sizeof *out);
    sps__h5_quiet_t q;
    sps__h5_open_t o;
    int rc = sps__h5_guard_open(path, &o);
    if (rc) return rc;
    sps__h5_quiet_begin(&q);
    hid_t f = (hid_t)sps__h5_fopen(o.path, H5F_ACC_RDONLY);
    sps__h5_guard_close(&o);
    if (f < 0)
        return sps__h5_quiet_end(&q, sps__err_fail(SPS_EIO, "%s: cannot open", path));
    if (H5Lexists(f, "communication", H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(f, "communication", H5P_DEFAULT);
        hid_t d = g >= 0 ? H5Dopen2(g, "rank", H5P_DEFAULT) : -1;
        int64_t n = d >= 0 ? col_len(d) : -1;
        if (d >= 0) H5Dclose(d);
        rc = n < 0 ? SPS_EFORMAT : 0;
        if (!rc) rc = read_strings(g, "region", n, &out->region);
        if (out->region) out->n = (size_t)n; /* for the free on failure */
        if (!rc) rc = read_i64(g, "rank", n, &out->rank);
        if (!rc) rc = read_i64(g, "calls", n, &out->calls);
        if (!rc) rc = read_i64(g, "bytes", n, &out->bytes);
        for (int64_t i = 0; !rc && i < n; i++)
            if (out->rank[i] < 0 || out->rank[i] > INT32_MAX || out->calls[i] < 0 ||
                out->bytes[i] < 0)
                rc = SPS_EFORMAT;
        if (g >= 0) H5Gclose(g);
        if (rc == SPS_EFORMAT)
            sps__err_set("%s: /communication is not a valid table (region, rank, "
                         "calls, bytes)", path);
    }
    H5Fclose(f);
    if (rc) sps__h5r_comm_free(out);
    return sps__h5_quiet_end(&q, rc);
}

/* ------------------------------------------------------------------------ */
/* Source locations                                                          */
/* ------------------------------------------------------------------------ */

/* Makes room in out for regions 0..n-1 (n <= COMM_MAX_ROWS).  0 or
 * SPS_ENOMEM. */
static int sources_alloc(sps__h5r_sources_t *out, size_t n) {
    out->file = calloc(n ? n : 1, sizeof *out->file);
    out->line = malloc((n ? n : 1) * sizeof *out->line);
    if (!out->file || !out->line) return SPS_ENOMEM;
    out->n = n;
    for (size_t g = 0; g < n; g++) out->line[g] = -1;
    return 0;
}

int sps__h5r_sources(const char *path, sps__h5r_sources_t *out) {
    memset(out, 0, sizeof *out);
    sps__h5_quiet_t q;
    sps__h5_open_t o;
    if (sps__h5_guard_open(path, &o)) return 0; /* the main reader reports it */
    sps__h5_quiet_begin(&q);
    hid_t f = (hid_t)sps__h5_fopen(o.path, H5F_ACC_RDONLY);
    sps__h5_guard_close(&o);
    if (f < 0) return sps__h5_quiet_end(&q, 0); /* the main reader reports it */
    hid_t g = H5Lexists(f, "rank_region_index", H5P_DEFAULT) > 0
                  ? H5Gopen2(f, "rank_region_index", H5P_DEFAULT) : -1;
    int rc = 0;
    if (g >= 0 && H5Lexists(g, "source_files", H5P_DEFAULT) > 0 &&
        H5Lexists(g, "source_lines", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(g, "region_ids", H5P_DEFAULT);
        int64_t n = d >= 0 ? col_len(d) : -1;
        if (d >= 0) H5Dclose(d);
        int64_t *ids = NULL, *lines = NULL;
        char **files = NULL;
        if (n >= 0 && !read_i64(g, "region_ids", n, &ids) &&
            !read_i64(g, "source_lines", n, &lines) &&
            !read_strings(g, "source_files", n, &files)) {
            int64_t top = -1; /* regions 0..top have rows */
            for (int64_t i = 0; i < n; i++)
                if (ids[i] >= 0 && ids[i] < (int64_t)COMM_MAX_ROWS && ids[i] > top) top = ids[i];
            rc = sources_alloc(out, (size_t)(top + 1));
            for (int64_t i = 0; !rc && i < n; i++) { /* a region's first row with a source */
                if (ids[i] < 0 || ids[i] > top || !files[i][0] || lines[i] < 0 ||
                    out->file[ids[i]])
                    continue;
                out->file[ids[i]] = files[i];
                out->line[ids[i]] = lines[i];
                files[i] = NULL;
            }
        }
        /* an unreadable location is no location: the main reader judges the file */
        for (int64_t i = 0; files && i < n; i++) free(files[i]);
        free(files);
        free(ids);
        free(lines);
    }
    if (g >= 0) H5Gclose(g);
    H5Fclose(f);
    if (rc) sps__h5r_sources_free(out);
    return sps__h5_quiet_end(&q, rc);
}

void sps__h5r_sources_free(sps__h5r_sources_t *s) {
    for (size_t i = 0; s->file && i < s->n; i++) free(s->file[i]);
    free(s->file);
    free(s->line);
    memset(s, 0, sizeof *s);
}

void sps__h5r_comm_free(sps__h5r_comm_t *c) {
    for (size_t i = 0; c->region && i < c->n; i++) free(c->region[i]);
    free(c->region);
    free(c->rank);
    free(c->calls);
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------ */
/* The report's section                                                      */
/* ------------------------------------------------------------------------ */

/* One region's communication over the ranks. */
typedef struct csum {
    const char *name;
    uint64_t calls, bytes, ranks;
    uint64_t min_bytes, max_bytes; /* over the ranks that called it */
} csum_t;

/* bytes with a binary unit ("812 B", "12.3 KiB", "4.21 GiB"). */
static void fmt_bytes(char *buf, size_t cap, double b) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) b /= 1024, u++;
    if (u == 0) snprintf(buf, cap, "%.0f B", b);
    else snprintf(buf, cap, "%.*f %s", b < 10 ? 2 : b < 100 ? 1 : 0, b, unit[u]);
}

/* The summary per region name of c's rows into s (ns of them). */
static size_t comm_sum(const sps__h5r_comm_t *c, csum_t *s) {
    size_t ns = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t k = 0;
        while (k < ns && strcmp(s[k].name, c->region[i])) k++;
        if (k == ns) s[ns++] = (csum_t){c->region[i], 0, 0, 0, UINT64_MAX, 0};
        uint64_t b = (uint64_t)c->bytes[i];
        s[k].calls += (uint64_t)c->calls[i];
        s[k].bytes += b;
        s[k].ranks++;
        if (b < s[k].min_bytes) s[k].min_bytes = b;
        if (b > s[k].max_bytes) s[k].max_bytes = b;
    }
    return ns;
}

/* Orders by bytes, most first, then name. */
static int csum_cmp(const void *a, const void *b) {
    const csum_t *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

int sps__comm_print(FILE *fp, const char *path) {
    sps__h5r_comm_t c;
    int rc = sps__h5r_comm(path, &c);
    if (rc || !c.n) {
        sps__h5r_comm_free(&c);
        return rc;
    }
    csum_t *s = malloc(c.n * sizeof *s);
    if (!s) {
        sps__h5r_comm_free(&c);
        return SPS_ENOMEM;
    }
    size_t ns = comm_sum(&c, s), w = 6;
    qsort(s, ns, sizeof *s, csum_cmp);
    for (size_t k = 0; k < ns; k++) {
        size_t len = sps__utf8_width(s[k].name);
        if (len > w) w = len < 40 ? len : 40;
    }
    fprintf(fp, "\nCommunication (MPI calls counted by the PMPI wrappers; %zu region%s, "
                "by bytes)\n", ns, ns == 1 ? "" : "s");
    sps__utf8_put_cell(fp, 0, "region", w);
    fprintf(fp, " %10s %12s %12s %12s %12s %6s\n", "calls", "bytes", "bytes/call",
            "min/rank", "max/rank", "ranks");
    for (size_t k = 0; k < ns; k++) {
        char b[4][32];
        fmt_bytes(b[0], sizeof b[0], (double)s[k].bytes);
        fmt_bytes(b[1], sizeof b[1], s[k].calls ? (double)s[k].bytes / (double)s[k].calls : 0);
        fmt_bytes(b[2], sizeof b[2], (double)s[k].min_bytes);
        fmt_bytes(b[3], sizeof b[3], (double)s[k].max_bytes);
        sps__utf8_put_cell(fp, 0, s[k].name, w);
        fprintf(fp, " %10llu %12s %12s %12s %12s %6llu\n", (unsigned long long)s[k].calls,
                b[0], b[1], b[2], b[3], (unsigned long long)s[k].ranks);
    }
    free(s);
    sps__h5r_comm_free(&c);
    return 0;
}
