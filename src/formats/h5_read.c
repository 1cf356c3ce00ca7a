/*
 * h5_read.c -- the validating reader of scope-profiler schema 2/3 files.
 * See h5_read.h for the contract.
 *
 * Order of work: open (checking the file exists and looks like HDF5 first,
 * for a clear message), root attributes, names, index, events, metadata,
 * then the derived columns: absolute starts, the row of each event, the
 * parent of each event (from ids, or from intervals), cycle cuts, self
 * times.  Any check that fails sets the thread's message and unwinds.
 */
#include "h5_read.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Elements in one column at most (events are indexed by int32). */
#define ELEMS_MAX ((hsize_t)INT32_MAX - 1)
/* Bytes of one fixed-length string element at most. */
#define FIXED_STR_MAX 65536
#define NO_ROW UINT32_MAX

/* Sets the library's error message (util.h) and returns code. */
#define fail sps__err_fail

/* What one read needs: the open file, its size and its name. */
typedef struct rd {
    hid_t file;
    uint64_t fsize;
    const char *path;
    sps__h5r_t *r;
    int deltas; /* /events holds start gaps (schema 3), not start times */
    sps__h5_quiet_t quiet; /* of an open: from open_begin to open_end */
} rd_t;

/* ------------------------------------------------------------------------ */
/* HDF5 plumbing                                                             */
/* ------------------------------------------------------------------------ */

/* Closes any HDF5 handle if valid and invalidates it. */
void sps__h5_close(int64_t *id) {
    if (*id < 0) return;
    switch (H5Iget_type(*id)) {
    case H5I_FILE: H5Fclose(*id); break;
    case H5I_GROUP: H5Gclose(*id); break;
    case H5I_DATASET: H5Dclose(*id); break;
    case H5I_DATASPACE: H5Sclose(*id); break;
    case H5I_DATATYPE: H5Tclose(*id); break;
    case H5I_ATTR: H5Aclose(*id); break;
    case H5I_GENPROP_LST: H5Pclose(*id); break;
    default: break;
    }
    *id = H5I_INVALID_HID;
}
#define h5_close sps__h5_close

void sps__h5_quiet_begin(sps__h5_quiet_t *q) {
    H5E_auto2_t func = NULL;
    q->data = NULL;
    q->saved = H5Eget_auto2(H5E_DEFAULT, &func, &q->data) >= 0;
    q->func = (void (*)(void))func;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

int sps__h5_quiet_end(sps__h5_quiet_t *q, int rc) {
    if (q->saved) H5Eset_auto2(H5E_DEFAULT, (H5E_auto2_t)q->func, q->data);
    return rc;
}

/* Non-zero when loc has a link called name (a single path component). */
static int has_link(hid_t loc, const char *name) {
    return H5Lexists(loc, name, H5P_DEFAULT) > 0;
}

/* Opens group loc/name.  Returns it, or -1 with the message set. */
static hid_t group_open(rd_t *c, hid_t loc, const char *name) {
    hid_t g = has_link(loc, name) ? H5Gopen2(loc, name, H5P_DEFAULT)
                                  : H5I_INVALID_HID;
    if (g < 0) fail(SPS_EFORMAT, "%s: missing group /%s", c->path, name);
    return g;
}

/* Checks that space is 1-D (or, when scalar_ok, scalar) and sets *n to its
 * number of elements.  Returns 0 or -1. */
static int space_len(hid_t space, int scalar_ok, hsize_t *n) {
    H5S_class_t cls = H5Sget_simple_extent_type(space);
    if (cls == H5S_SCALAR && scalar_ok) {
        *n = 1;
        return 0;
    }
    if (cls != H5S_SIMPLE || H5Sget_simple_extent_ndims(space) != 1) return -1;
    return H5Sget_simple_extent_dims(space, n, NULL) == 1 ? 0 : -1;
}

/* Checks that n elements of elem bytes each are plausible for the file:
 * at most ELEMS_MAX and at most SPS__H5_RATIO_MAX bytes per byte of file. */
static int size_ok(const rd_t *c, hsize_t n, size_t elem) {
    if (n > ELEMS_MAX) return 0;
    return (double)n * (double)elem <= (double)c->fsize * SPS__H5_RATIO_MAX + 65536.0;
}

/* A column's element class: what the reader accepts. */
typedef enum { C_INT, C_STR } cclass_t;

/* Opens dataset grp/name under loc, checking it is 1-D, of class cls
 * (integers: 1..8 bytes; strings: variable, or fixed up to FIXED_STR_MAX)
 * and of plausible size.  Sets *n.  Returns the dataset or -1 with the
 * message set. */
static hid_t col_open(rd_t *c, hid_t loc, const char *grp, const char *name,
                      cclass_t cls, hsize_t *n) {
    hid_t d = has_link(loc, name) ? H5Dopen2(loc, name, H5P_DEFAULT)
                                  : H5I_INVALID_HID;
    if (d < 0) {
        fail(SPS_EFORMAT, "%s: missing dataset /%s/%s", c->path, grp, name);
        return d;
    }
    hid_t s = H5Dget_space(d), t = H5Dget_type(d);
    H5T_class_t tc = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    size_t sz = t >= 0 ? H5Tget_size(t) : 0;
    int var = tc == H5T_STRING && H5Tis_variable_str(t) > 0;
    const char *bad = NULL;
    if (s < 0 || space_len(s, 0, n) < 0) bad = "is not one-dimensional";
    else if (cls == C_INT && (tc != H5T_INTEGER || sz < 1 || sz > 8))
        bad = "is not an integer column";
    else if (cls == C_STR && (tc != H5T_STRING || (!var && sz > FIXED_STR_MAX)))
        bad = "is not a string column";
    else if (!size_ok(c, *n, var ? 16 : sz ? sz : 1))
        bad = "claims more elements than the file can hold";
    h5_close(&t);
    h5_close(&s);
    if (bad) {
        fail(SPS_EFORMAT, "%s: /%s/%s %s", c->path, grp, name, bad);
        h5_close(&d);
    }
    return d;
}

/* Reads integer dataset grp/name under loc as native type mtype (int64 or
 * uint64) into a new array *out (caller frees).  When want is not
 * HSIZE_UNDEF the column must have exactly want elements.  Sets *n.
 * Returns 0 or an error code with the message set. */
static int ints_read(rd_t *c, hid_t loc, const char *grp, const char *name,
                     hid_t mtype, hsize_t want, void **out, hsize_t *n);

/* ints_read, where an empty column counts as absent when empty_absent
 * (*out NULL, *n 0, returns 0): scope-profiler's aggregate files leave
 * the per-row columns they do not fill empty.  One open of the column. */
static int ints_read_ex(rd_t *c, hid_t loc, const char *grp, const char *name,
                        hid_t mtype, hsize_t want, void **out, hsize_t *n,
                        int empty_absent) {
    hsize_t len = 0;
    *out = NULL;
    hid_t d = col_open(c, loc, grp, name, C_INT, &len);
    if (d < 0) return SPS_EFORMAT;
    if (empty_absent && len == 0) {
        h5_close(&d);
        if (n) *n = 0;
        return 0;
    }
    if (want != HSIZE_UNDEF && len != want) {
        h5_close(&d);
        return fail(SPS_EFORMAT, "%s: /%s/%s has %llu elements, expected %llu",
                    c->path, grp, name, (unsigned long long)len,
                    (unsigned long long)want);
    }
    *out = malloc(len ? len * 8 : 1);
    int rc = *out ? 0 : fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0 && len &&
        H5Dread(d, mtype, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl(len * 8), *out) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot read /%s/%s (corrupt data)",
                  c->path, grp, name);
    h5_close(&d);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    if (n) *n = len;
    return rc;
}

static int ints_read(rd_t *c, hid_t loc, const char *grp, const char *name,
                     hid_t mtype, hsize_t want, void **out, hsize_t *n) {
    return ints_read_ex(c, loc, grp, name, mtype, want, out, n, 0);
}

/* Reads an optional integer column (absent: *out NULL, returns 0). */
static int ints_read_opt(rd_t *c, hid_t loc, const char *grp,
                         const char *name, hid_t mtype, hsize_t want,
                         void **out) {
    *out = NULL;
    if (!has_link(loc, name)) return 0;
    return ints_read(c, loc, grp, name, mtype, want, out, NULL);
}

/* Copies s (len bytes, not necessarily terminated) as valid UTF-8 into a
 * new string.  NULL on allocation failure. */
static char *name_copy(const char *s, size_t len) {
    return sps__utf8_sanitize(s ? s : "", s ? len : 0);
}

/* Reads the variable-length strings of d (n of them; what names the
 * column in a message) into out[]. */
static int vstr_read(rd_t *c, hid_t d, hsize_t n, char **out, const char *what) {
    char **raw = calloc(n ? n : 1, sizeof *raw);
    hid_t t = H5Tcopy(H5T_C_S1), ft = H5Dget_type(d);
    int rc = raw && t >= 0 && ft >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
             H5Tset_cset(t, H5Tget_cset(ft)) >= 0 ? 0 : -1;
    h5_close(&ft);
    if (rc == 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl(n * 16), raw) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot read %s", c->path, what);
    for (hsize_t i = 0; rc == 0 && i < n; i++)
        if (!(out[i] = name_copy(raw[i], raw[i] ? strlen(raw[i]) : 0)))
            rc = -1;
    for (hsize_t i = 0; raw && i < n; i++)
        if (raw[i]) H5free_memory(raw[i]);
    h5_close(&t);
    free(raw);
    return rc == -1 ? fail(SPS_ENOMEM, "%s: out of memory", c->path) : rc;
}

/* Reads the fixed-length strings of d (n of them, sz bytes each; what
 * names the column in a message) into out[]. */
static int fstr_read(rd_t *c, hid_t d, hsize_t n, size_t sz, char **out,
                     const char *what) {
    char *raw = malloc(n * (sz + 1) + 1);
    hid_t t = H5Tcopy(H5T_C_S1), ft = H5Dget_type(d);
    int rc = raw && t >= 0 && ft >= 0 && H5Tset_size(t, sz + 1) >= 0 &&
             H5Tset_cset(t, H5Tget_cset(ft)) >= 0 &&
             H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 ? 0 : -1;
    h5_close(&ft);
    if (rc == 0 && n &&
        H5Dread(d, t, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl(n * (sz + 1)), raw) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot read %s", c->path, what);
    for (hsize_t i = 0; rc == 0 && i < n; i++) {
        const char *s = raw + i * (sz + 1);
        if (!(out[i] = name_copy(s, strnlen(s, sz)))) rc = -1;
    }
    h5_close(&t);
    free(raw);
    return rc == -1 ? fail(SPS_ENOMEM, "%s: out of memory", c->path) : rc;
}

/* ------------------------------------------------------------------------ */
/* Attributes                                                                */
/* ------------------------------------------------------------------------ */

/* Reads the scalar integer attribute name of loc into *v.  Returns 1 when
 * read, 0 when absent or not a scalar integer. */
static int attr_int(hid_t loc, const char *name, int64_t *v) {
    if (H5Aexists(loc, name) <= 0) return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hsize_t n = 0;
    int ok = s >= 0 && t >= 0 && space_len(s, 1, &n) == 0 && n == 1 &&
             H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) <= 8 &&
             H5Aread(a, H5T_NATIVE_INT64, v) >= 0;
    h5_close(&t);
    h5_close(&s);
    h5_close(&a);
    return ok;
}

/* Reads the scalar string attribute name of loc (variable or fixed
 * length) into buf.  Returns 1 when read, 0 when absent or not a string. */
static int attr_str(hid_t loc, const char *name, char *buf, size_t cap) {
    if (H5Aexists(loc, name) <= 0) return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t m = H5Tcopy(H5T_C_S1);
    hsize_t n = 0;
    int ok = s >= 0 && t >= 0 && m >= 0 && space_len(s, 1, &n) == 0 &&
             n == 1 && H5Tget_class(t) == H5T_STRING &&
             H5Tset_cset(m, H5Tget_cset(t)) >= 0;
    if (ok && H5Tis_variable_str(t) > 0) {
        char *v = NULL;
        ok = H5Tset_size(m, H5T_VARIABLE) >= 0 && H5Aread(a, m, &v) >= 0;
        snprintf(buf, cap, "%s", ok && v ? v : "");
        if (v) H5free_memory(v);
    } else if (ok) {
        ok = H5Tset_size(m, cap) >= 0 && H5Tset_strpad(m, H5T_STR_NULLTERM) >= 0 &&
             H5Aread(a, m, buf) >= 0;
        buf[cap - 1] = 0;
    }
    h5_close(&m);
    h5_close(&t);
    h5_close(&s);
    h5_close(&a);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

/* Checks that path is a readable regular file; sets c->fsize.  Returns 0,
 * SPS_EIO or SPS_EFORMAT (not HDF5), with the message set. */
static int file_probe(rd_t *c) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n',
                                         0x1a, '\n'};
    unsigned char head[8];
    struct stat st;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(SPS_EIO, "%s: %s", c->path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(SPS_EIO, "%s: not a regular file", c->path);
    }
    c->fsize = (uint64_t)st.st_size;
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    /* HDF5 also allows a user block (512, 1024, ... bytes) before the
     * signature; H5Fopen finds that case, so only a plain miss at 0 with
     * no room for a user block is refused here. */
    if (got != (ssize_t)sizeof head ||
        (memcmp(head, sig, sizeof sig) != 0 && c->fsize < 512 + sizeof sig))
        return fail(SPS_EFORMAT, "%s: not an HDF5 file", c->path);
    return 0;
}

int64_t sps__h5_fopen(const char *path, unsigned flags) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t f = H5Fopen(path, flags, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (fapl >= 0) H5Pclose(fapl);
    return (int64_t)f;
}

/* The transfer lists of sps__h5_dxpl: type conversion buffers of 4 KiB
 * and 64 KiB; H5P_DEFAULT where one could not be made. */
static hid_t g_dxpl_small = H5P_DEFAULT, g_dxpl_mid = H5P_DEFAULT;
static pthread_once_t g_dxpl_once = PTHREAD_ONCE_INIT;

static hid_t dxpl_make(size_t buffer_bytes) {
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    if (x >= 0 && H5Pset_buffer(x, buffer_bytes, NULL, NULL) >= 0) return x;
    if (x >= 0) H5Pclose(x);
    return H5P_DEFAULT;
}

static void dxpl_init(void) {
    g_dxpl_small = dxpl_make(4096);
    g_dxpl_mid = dxpl_make(65536);
}

int64_t sps__h5_dxpl(size_t bytes) {
    pthread_once(&g_dxpl_once, dxpl_init);
    return (int64_t)(bytes <= 4096 ? g_dxpl_small : bytes <= 65536 ? g_dxpl_mid : H5P_DEFAULT);
}

/* Opens the HDF5 file read-only into c->file, after the isolated check
 * (sps__h5_guard_open: what is opened is the check's clean copy).  Returns 0, SPS_EFORMAT or the check's SPS_EIO. */
static int file_open(rd_t *c) {
    sps__h5_open_t o;
    int rc = sps__h5_guard_open(c->path, &o);
    if (rc) return rc;
    c->file = (hid_t)sps__h5_fopen(o.path, H5F_ACC_RDONLY);
    sps__h5_guard_close(&o);
    if (c->file >= 0) return 0;
    return fail(SPS_EFORMAT,
                "%s: not a readable HDF5 file (truncated or corrupt?)",
                c->path);
}

static int v1_probe(rd_t *c);

/* Reads the root attributes: schema (1 when absent and the file has
 * rank<N>/regions groups, else 2 or 3) and storage layout. */
static int root_read(rd_t *c) {
    int64_t schema = 0;
    char layout[64] = "columnar";
    if (!attr_int(c->file, "scope_profiler_schema", &schema)) {
        if (!v1_probe(c))
            return fail(SPS_EFORMAT,
                        "%s: not a scope-profiler profile (no scope_profiler_schema "
                        "attribute and no rank<N>/regions groups)", c->path);
        schema = 1; /* the layout before the attribute existed */
    }
    if (schema < 1 || schema > 3)
        return fail(SPS_EFORMAT, "%s: unsupported schema version %lld",
                    c->path, (long long)schema);
    if (H5Aexists(c->file, "storage_layout") > 0 &&
        !attr_str(c->file, "storage_layout", layout, sizeof layout))
        return fail(SPS_EFORMAT, "%s: storage_layout is not a string",
                    c->path);
    if (strcmp(layout, "columnar") && strcmp(layout, "aggregate"))
        return fail(SPS_EFORMAT, "%s: unknown storage_layout \"%.32s\"",
                    c->path, layout);
    c->r->schema = (int)schema;
    c->r->aggregate = strcmp(layout, "aggregate") == 0;
    return 0;
}

/* Reads /region_table/names. */
static int names_read(rd_t *c) {
    hid_t g = group_open(c, c->file, "region_table");
    hsize_t n = 0;
    if (g < 0) return SPS_EFORMAT;
    hid_t d = col_open(c, g, "region_table", "names", C_STR, &n);
    int rc = d < 0 ? SPS_EFORMAT : 0;
    hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    if (rc == 0 && !(c->r->names = calloc(n ? n : 1, sizeof(char *))))
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0) c->r->nnames = n;
    if (rc == 0 && n && H5Tis_variable_str(t) > 0)
        rc = vstr_read(c, d, n, c->r->names, "the region names");
    else if (rc == 0 && n)
        rc = fstr_read(c, d, n, H5Tget_size(t), c->r->names, "the region names");
    h5_close(&t);
    h5_close(&d);
    h5_close(&g);
    return rc;
}

/* The raw index columns while they are read. */
typedef struct idx {
    uint64_t *region, *rank, *off, *cnt;
    int64_t *excl, *atot, *amin, *amax;
} idx_t;

/* Frees the raw index columns. */
static void idx_free(idx_t *x) {
    free(x->region); free(x->rank); free(x->off); free(x->cnt);
    free(x->excl); free(x->atot); free(x->amin); free(x->amax);
}

/* Reads the aggregate_* columns of the index (n rows). */
static int agg_cols_read(rd_t *c, hid_t g, hsize_t n, idx_t *x) {
    const char *G = "rank_region_index";
    int rc = ints_read(c, g, G, "aggregate_counts", H5T_NATIVE_UINT64, n,
                       (void **)&x->cnt, NULL);
    if (rc == 0) rc = ints_read(c, g, G, "aggregate_totals", H5T_NATIVE_INT64,
                                n, (void **)&x->atot, NULL);
    if (rc == 0) rc = ints_read(c, g, G, "aggregate_minimums",
                                H5T_NATIVE_INT64, n, (void **)&x->amin, NULL);
    if (rc == 0) rc = ints_read(c, g, G, "aggregate_maximums",
                                H5T_NATIVE_INT64, n, (void **)&x->amax, NULL);
    if (rc == 0) rc = ints_read_opt(c, g, G, "aggregate_exclusives",
                                    H5T_NATIVE_INT64, n, (void **)&x->excl);
    return rc;
}

/* Reads the index columns the layout needs into x; *n = rows. */
static int idx_cols_read(rd_t *c, hid_t g, idx_t *x, hsize_t *n) {
    const char *G = "rank_region_index";
    int rc = ints_read(c, g, G, "region_ids", H5T_NATIVE_UINT64, HSIZE_UNDEF,
                       (void **)&x->region, n);
    if (rc == 0) rc = ints_read(c, g, G, "ranks", H5T_NATIVE_UINT64, *n,
                                (void **)&x->rank, NULL);
    if (rc == 0 && c->r->aggregate) return agg_cols_read(c, g, *n, x);
    if (rc == 0) rc = ints_read(c, g, G, "event_offsets", H5T_NATIVE_UINT64,
                                *n, (void **)&x->off, NULL);
    if (rc == 0) rc = ints_read(c, g, G, "event_counts", H5T_NATIVE_UINT64,
                                *n, (void **)&x->cnt, NULL);
    if (rc == 0) rc = ints_read_opt(c, g, G, "exclusive_totals",
                                    H5T_NATIVE_INT64, *n, (void **)&x->excl);
    return rc;
}

/* Converts the raw index columns into r->rows, checking region ids and
 * ranks.  Event bounds are checked once /events is known. */
static int idx_rows(rd_t *c, const idx_t *x, hsize_t n) {
    sps__row_t *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    c->r->rows = rows;
    c->r->nrows = n;
    for (hsize_t i = 0; i < n; i++) {
        if (x->region[i] >= c->r->nnames)
            return fail(SPS_EFORMAT, "%s: index row %llu names region %llu "
                        "but the file has %zu names", c->path,
                        (unsigned long long)i,
                        (unsigned long long)x->region[i], c->r->nnames);
        if (x->rank[i] > UINT32_MAX)
            return fail(SPS_EFORMAT, "%s: index row %llu has rank %llu",
                        c->path, (unsigned long long)i,
                        (unsigned long long)x->rank[i]);
        rows[i].file_region = (uint32_t)x->region[i];
        rows[i].rank = (uint32_t)x->rank[i];
        rows[i].offset = x->off ? x->off[i] : 0;
        rows[i].count = x->cnt[i];
        rows[i].exclusive_total = x->excl ? x->excl[i] : -1;
        if (x->atot) {
            rows[i].s.total = x->atot[i];
            rows[i].s.minimum = x->amin[i];
            rows[i].s.maximum = x->amax[i];
        }
    }
    return 0;
}

static int row_extras_read(rd_t *c, hid_t g, hsize_t n);

/* Reads /rank_region_index (and scope-profiler's per-row extras). */
static int index_read(rd_t *c) {
    idx_t x = {0};
    hsize_t n = 0;
    hid_t g = group_open(c, c->file, "rank_region_index");
    if (g < 0) return SPS_EFORMAT;
    int rc = idx_cols_read(c, g, &x, &n);
    if (rc == 0 && n >= NO_ROW)
        rc = fail(SPS_EFORMAT, "%s: too many index rows", c->path);
    if (rc == 0) rc = idx_rows(c, &x, n);
    if (rc == 0) rc = row_extras_read(c, g, n);
    c->r->has_summary = has_link(g, "summary_statistics");
    idx_free(&x);
    h5_close(&g);
    return rc;
}

/* Reads the optional columns of /events (n elements each): the tree and
 * thread ids, and scope-profiler's GPU, task and await columns. */
static int events_opt_read(rd_t *c, hid_t g, hsize_t n) {
    sps__h5r_t *r = c->r;
    int rc = ints_read_opt(c, g, "events", "call_ids", H5T_NATIVE_INT64, n,
                           (void **)&r->call_ids);
    if (rc == 0) rc = ints_read_opt(c, g, "events", "parent_ids",
                                    H5T_NATIVE_INT64, n,
                                    (void **)&r->parent_ids);
    if (rc == 0) rc = ints_read_opt(c, g, "events", "thread_ids",
                                    H5T_NATIVE_INT64, n,
                                    (void **)&r->thread_ids);
    if (rc == 0) rc = ints_read_opt(c, g, "events", "gpu_durations",
                                    H5T_NATIVE_INT64, n, (void **)&r->gpu_dur);
    if (rc == 0) rc = ints_read_opt(c, g, "events", "task_ids",
                                    H5T_NATIVE_INT64, n, (void **)&r->task_ids);
    if (rc == 0) rc = ints_read_opt(c, g, "events", "await_ns",
                                    H5T_NATIVE_INT64, n, (void **)&r->await_ns);
    return rc;
}

/* qsort order of /carried pairs: by event. */
typedef struct cpair { int64_t e, ns; } cpair_t;
static int cpair_cmp(const void *a, const void *b) {
    const cpair_t *x = a, *y = b;
    return x->e < y->e ? -1 : x->e > y->e;
}

/* Sorts r's /carried by event (the writer lists the calls in end order),
 * for sps__h5r_carried_ns.  0 or SPS_ENOMEM. */
static int carried_sort(sps__h5r_t *r) {
    cpair_t *v = malloc((r->ncarried ? r->ncarried : 1) * sizeof *v);
    if (!v) return SPS_ENOMEM;
    for (size_t i = 0; i < r->ncarried; i++) v[i] = (cpair_t){r->carried_event[i], r->carried_child[i]};
    qsort(v, r->ncarried, sizeof *v, cpair_cmp);
    for (size_t i = 0; i < r->ncarried; i++) {
        r->carried_event[i] = v[i].e;
        r->carried_child[i] = v[i].ns;
    }
    free(v);
    return 0;
}

int64_t sps__h5r_carried_ns(const sps__h5r_t *r, uint64_t e) {
    size_t lo = 0, hi = r->ncarried;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)r->carried_event[mid] < e) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->ncarried && (uint64_t)r->carried_event[lo] == e ? r->carried_child[lo] : 0;
}

/* Reads the optional group /carried (its two columns of equal length,
 * every event inside /events, every time >= 0), sorted by event. */
static int carried_read(rd_t *c) {
    sps__h5r_t *r = c->r;
    if (!has_link(c->file, "carried")) return 0;
    hid_t g = group_open(c, c->file, "carried");
    if (g < 0) return SPS_EFORMAT;
    hsize_t n = 0;
    int rc = ints_read(c, g, "carried", "event", H5T_NATIVE_INT64, HSIZE_UNDEF,
                       (void **)&r->carried_event, &n);
    if (rc == 0) rc = ints_read(c, g, "carried", "child_ns", H5T_NATIVE_INT64, n,
                                (void **)&r->carried_child, NULL);
    h5_close(&g);
    for (hsize_t i = 0; rc == 0 && i < n; i++)
        if (r->carried_event[i] < 0 || (uint64_t)r->carried_event[i] >= r->nevents ||
            r->carried_child[i] < 0)
            rc = fail(SPS_EFORMAT, "%s: /carried row %llu names event %lld with "
                      "%lld ns", c->path, (unsigned long long)i,
                      (long long)r->carried_event[i], (long long)r->carried_child[i]);
    if (rc == 0) r->ncarried = (size_t)n;
    if (rc == 0 && carried_sort(r)) rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    return rc;
}

/* Reads /events: start_deltas + durations (schema 3) or start_times +
 * end_times (schema 2), then the optional columns.  r->start holds the raw
 * first column until decode_starts runs. */
static int events_read(rd_t *c) {
    sps__h5r_t *r = c->r;
    hsize_t n = 0;
    if (r->aggregate) return 0; /* no per-call data, events ignored */
    hid_t g = group_open(c, c->file, "events");
    if (g < 0) return SPS_EFORMAT;
    int deltas = c->deltas = has_link(g, "start_deltas");
    const char *a = deltas ? "start_deltas" : "start_times";
    const char *b = deltas ? "durations" : "end_times";
    int rc = ints_read(c, g, "events", a, H5T_NATIVE_INT64, HSIZE_UNDEF,
                       (void **)&r->start, &n);
    if (rc == 0) rc = ints_read(c, g, "events", b, H5T_NATIVE_INT64, n,
                                (void **)&r->dur, NULL);
    if (rc == 0) rc = events_opt_read(c, g, n);
    r->nevents = n;
    if (rc == 0 && !deltas) /* end times -> durations */
        for (hsize_t i = 0; i < n; i++)
            r->dur[i] = (int64_t)((uint64_t)r->dur[i] - (uint64_t)r->start[i]);
    h5_close(&g);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* /metadata                                                                 */
/* ------------------------------------------------------------------------ */

#define META_ATTRS_MAX 65536 /* attributes of /metadata read at most */

/* Frees what attribute a owns (its name and values) and zeroes it. */
static void attr_clear(sps_meta_attr_t *a) {
    free((char *)a->name);
    free((int64_t *)a->ints);
    free((double *)a->floats);
    for (size_t k = 0; a->texts && k < a->n; k++) free((char *)a->texts[k]);
    free((char **)a->texts);
    memset(a, 0, sizeof *a);
}

void sps__h5r_attrs_free(sps_meta_attr_t *a, size_t n) {
    for (size_t i = 0; a && i < n; i++) attr_clear(&a[i]);
    free(a);
}

void sps__h5r_meta_free(sps__h5r_meta_t *m) {
    if (!m) return;
    sps__h5r_attrs_free(m->attrs, m->nattrs);
    memset(m, 0, sizeof *m);
}

/* Reads the n variable-length strings of attribute a into out[] as valid
 * UTF-8.  0, 1 (HDF5 cannot read them) or -1 (no memory). */
static int attr_vtexts(hid_t a, hid_t m, size_t n, char **out) {
    char **raw = calloc(n ? n : 1, sizeof *raw);
    if (!raw) return -1;
    int rc = H5Tset_size(m, H5T_VARIABLE) >= 0 && H5Aread(a, m, raw) >= 0 ? 0 : 1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!(out[i] = name_copy(raw[i], raw[i] ? strlen(raw[i]) : 0))) rc = -1;
    for (size_t i = 0; i < n; i++)
        if (raw[i]) H5free_memory(raw[i]);
    free(raw);
    return rc;
}

/* Reads the n fixed-length strings (sz bytes each) of attribute a into
 * out[] as valid UTF-8.  0, 1 or -1, as attr_vtexts. */
static int attr_ftexts(hid_t a, hid_t m, size_t n, size_t sz, char **out) {
    if (sz == 0 || sz > FIXED_STR_MAX) return 1;
    char *raw = malloc(n * (sz + 1) + 1);
    if (!raw) return -1;
    int rc = H5Tset_size(m, sz + 1) >= 0 && H5Tset_strpad(m, H5T_STR_NULLTERM) >= 0 &&
             H5Aread(a, m, raw) >= 0 ? 0 : 1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *s = raw + i * (sz + 1);
        if (!(out[i] = name_copy(s, strnlen(s, sz)))) rc = -1;
    }
    free(raw);
    return rc;
}

/* Reads the n strings of attribute a (file type t) into x.  0, 1 or -1. */
static int attr_texts(hid_t a, hid_t t, size_t n, sps_meta_attr_t *x) {
    char **v = calloc(n ? n : 1, sizeof *v);
    hid_t m = H5Tcopy(H5T_C_S1);
    int rc = !v ? -1 : m < 0 || H5Tset_cset(m, H5Tget_cset(t)) < 0 ? 1
           : H5Tis_variable_str(t) > 0 ? attr_vtexts(a, m, n, v)
           : attr_ftexts(a, m, n, H5Tget_size(t), v);
    h5_close(&m);
    if (rc) {
        for (size_t i = 0; v && i < n; i++) free(v[i]);
        free(v);
        return rc;
    }
    x->kind = SPS_META_TEXT;
    x->texts = (const char *const *)v;
    return 0;
}

/* Reads the n numbers of attribute a (class tc) into x.  0, 1 or -1. */
static int attr_numbers(hid_t a, H5T_class_t tc, size_t n, sps_meta_attr_t *x) {
    void *v = malloc((n ? n : 1) * 8);
    if (!v) return -1;
    hid_t mt = tc == H5T_INTEGER ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    if (n && H5Aread(a, mt, v) < 0) {
        free(v);
        return 1;
    }
    x->kind = tc == H5T_INTEGER ? SPS_META_INT : SPS_META_FLOAT;
    if (tc == H5T_INTEGER) x->ints = v;
    else x->floats = v;
    return 0;
}

/* Non-zero when an attribute of n elements of elem bytes each (as stored)
 * fits in the file: attribute data is never compressed, so unlike a
 * dataset it cannot claim more than the file holds. */
static int attr_fits(const rd_t *c, hsize_t n, size_t elem) {
    return n <= ELEMS_MAX && (double)n * (double)(elem ? elem : 1) <=
                                 (double)c->fsize + 65536.0;
}

/* Reads attribute name of loc into x when it is a scalar or 1-D array of
 * integers, floats or strings that fits in the file.  0, 1 (left out) or
 * -1 (no memory). */
static int meta_attr_read(rd_t *c, hid_t loc, const char *name, sps_meta_attr_t *x) {
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    H5T_class_t tc = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    /* as stored: a variable-length string is a 16-byte heap reference */
    size_t elem = tc == H5T_STRING && H5Tis_variable_str(t) > 0 ? 16
                : t >= 0 ? H5Tget_size(t) : 0;
    hsize_t n = 0;
    int rc = 1;
    if (s >= 0 && space_len(s, 1, &n) == 0 && attr_fits(c, n, elem)) {
        if ((tc == H5T_INTEGER && H5Tget_size(t) <= 8) || tc == H5T_FLOAT)
            rc = attr_numbers(a, tc, (size_t)n, x);
        else if (tc == H5T_STRING)
            rc = attr_texts(a, t, (size_t)n, x);
    }
    if (rc == 0) {
        x->n = (size_t)n;
        x->is_array = H5Sget_simple_extent_type(s) != H5S_SCALAR;
        if (!(x->name = name_copy(name, strlen(name)))) rc = -1;
    }
    if (rc) attr_clear(x); /* x->n is set: the texts are freed too */
    h5_close(&t);
    h5_close(&s);
    h5_close(&a);
    return rc;
}

/* What meta_attr_cb collects. */
typedef struct meta_rd {
    rd_t *c;
    sps__h5r_meta_t *m;
    size_t cap;
    int rc;         /* 0 or SPS_ENOMEM */
} meta_rd_t;

/* H5Aiterate2's callback: adds attribute name to the list (when it is of
 * a kind that is read).  0 to go on, 1 to stop (enough), -1 on ENOMEM. */
static herr_t meta_attr_cb(hid_t loc, const char *name, const H5A_info_t *info,
                           void *ctx) {
    (void)info;
    meta_rd_t *d = ctx;
    sps__h5r_meta_t *m = d->m;
    if (m->nattrs >= META_ATTRS_MAX) return 1;
    if (sps__grow((void **)&m->attrs, &d->cap, m->nattrs, sizeof *m->attrs)) goto oom;
    sps_meta_attr_t *x = &m->attrs[m->nattrs];
    memset(x, 0, sizeof *x);
    int rc = meta_attr_read(d->c, loc, name, x);
    if (rc == 0) m->nattrs++;
    if (rc >= 0) return 0;
oom:
    d->rc = SPS_ENOMEM;
    return -1;
}

/* The one-value integer attribute name of m: 1 and *v set, or 0. */
static int meta_int(const sps__h5r_meta_t *m, const char *name, int64_t *v) {
    for (size_t i = 0; i < m->nattrs; i++) {
        const sps_meta_attr_t *a = &m->attrs[i];
        if (strcmp(a->name, name)) continue;
        if (a->kind != SPS_META_INT || a->n != 1) return 0;
        *v = a->ints[0];
        return 1;
    }
    return 0;
}

/* The one-value string attribute name of m, or "". */
static const char *meta_text(const sps__h5r_meta_t *m, const char *name) {
    for (size_t i = 0; i < m->nattrs; i++) {
        const sps_meta_attr_t *a = &m->attrs[i];
        if (!strcmp(a->name, name))
            return a->kind == SPS_META_TEXT && a->n == 1 ? a->texts[0] : "";
    }
    return "";
}

/* Fills m's typed view from its attributes (see sps__h5r_meta_t). */
void sps__h5r_meta_view(sps__h5r_meta_t *m) {
    int s = meta_int(m, "start_time_ns", &m->start_time_ns);
    int f = meta_int(m, "finalize_time_ns", &m->finalize_time_ns);
    m->has_times = s && f;
    m->has_anchor = meta_int(m, "wall_anchor_ns", &m->wall_anchor_ns) &&
                    meta_int(m, "mono_anchor_ns", &m->mono_anchor_ns) &&
                    m->wall_anchor_ns > 0;
    if (!m->has_anchor) m->wall_anchor_ns = m->mono_anchor_ns = 0;
    m->has_rank = meta_int(m, "rank", &m->rank) && m->rank >= 0 && m->rank <= INT32_MAX;
    meta_int(m, "mpi_size", &m->mpi_size);
    m->has_clock_offset = meta_int(m, "clock_offset_ns", &m->clock_offset_ns);
    m->has_clock_offset_error = m->has_clock_offset &&
        meta_int(m, "clock_offset_error_ns", &m->clock_offset_error_ns) &&
        m->clock_offset_error_ns >= 0;
    meta_int(m, "dropped_events", &m->dropped_events);
    meta_int(m, "misuse_count", &m->misuse_count);
    meta_int(m, "open_calls", &m->open_calls);
    m->hostname = meta_text(m, "hostname");
    m->label = meta_text(m, "label");
    m->clock_source = meta_text(m, "clock_source");
}

/* Reads /metadata of the open file c->file into *m (emptied first).
 * Returns 0 or SPS_ENOMEM with the message set. */
static int metadata_read(rd_t *c, sps__h5r_meta_t *m) {
    memset(m, 0, sizeof *m);
    meta_rd_t d = {c, m, 0, 0};
    hid_t g = has_link(c->file, "metadata") ? H5Gopen2(c->file, "metadata", H5P_DEFAULT)
                                             : H5I_INVALID_HID;
    if (g >= 0) {
        hsize_t at = 0;
        H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &at, meta_attr_cb, &d);
        h5_close(&g);
    }
    if (d.rc) {
        sps__h5r_meta_free(m);
        return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    }
    sps__h5r_meta_view(m);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* scope-profiler's extras: per-row strings, per-event columns, lane tables  */
/* ------------------------------------------------------------------------ */

#define LINKS_MAX 1000000 /* links of one group listed at most */
#define TABLE_COLS_MAX 64 /* columns of a lane table read at most */

/* Frees n strings of v and v.  NULL is a no-op. */
static void strs_free(char **v, size_t n) {
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* Reads string column grp/name of loc into a new array *out of valid
 * UTF-8 strings (caller frees with strs_free); when want is not
 * HSIZE_UNDEF the column must have exactly want elements.  Sets *n.
 * Returns 0 or an error code with the message set (*out NULL). */
static int strs_read_ex(rd_t *c, hid_t loc, const char *grp, const char *name,
                        hsize_t want, char ***out, hsize_t *n, int empty_absent) {
    *out = NULL;
    *n = 0;
    hid_t d = col_open(c, loc, grp, name, C_STR, n);
    if (d < 0) return SPS_EFORMAT;
    if (empty_absent && *n == 0) { /* as ints_read_ex */
        h5_close(&d);
        return 0;
    }
    int rc = want == HSIZE_UNDEF || *n == want ? 0
           : fail(SPS_EFORMAT, "%s: /%s/%s has %llu elements, expected %llu",
                  c->path, grp, name, (unsigned long long)*n,
                  (unsigned long long)want);
    hid_t t = H5Dget_type(d);
    if (rc == 0 && !(*out = calloc(*n ? *n : 1, sizeof **out)))
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0 && *n)
        rc = H5Tis_variable_str(t) > 0 ? vstr_read(c, d, *n, *out, name)
                                       : fstr_read(c, d, *n, H5Tget_size(t), *out, name);
    h5_close(&t);
    h5_close(&d);
    if (rc) {
        strs_free(*out, (size_t)*n);
        *out = NULL;
    }
    return rc;
}

static int strs_read(rd_t *c, hid_t loc, const char *grp, const char *name,
                     hsize_t want, char ***out, hsize_t *n) {
    return strs_read_ex(c, loc, grp, name, want, out, n, 0);
}

/* Reads scope-profiler's optional per-row columns of /rank_region_index
 * (group g, n rows): call sites, source texts, tags, per-call metadata.
 * An empty column beside a non-empty index counts as absent (aggregate
 * files); any other length than n is an error. */
static int row_extras_read(rd_t *c, hid_t g, hsize_t n) {
    static const char *const texts[] = {"source_files", "source_texts", "tags",
                                        "event_metadata"};
    const char *G = "rank_region_index";
    sps__h5r_t *r = c->r;
    char **const *dst[] = {&r->src_files, &r->src_texts, &r->tags, &r->ev_meta};
    int rc = 0;
    hsize_t got = 0;
    if (has_link(g, "source_lines"))
        rc = ints_read_ex(c, g, G, "source_lines", H5T_NATIVE_INT64, n,
                          (void **)&r->src_lines, NULL, n != 0);
    for (size_t i = 0; rc == 0 && i < sizeof texts / sizeof texts[0]; i++)
        if (has_link(g, texts[i]))
            rc = strs_read_ex(c, g, G, texts[i], n, (char ***)dst[i], &got, n != 0);
    return rc;
}

/* The names of a group's links, while they are listed. */
typedef struct links {
    char **v;
    size_t n, cap;
    int oom;
} links_t;

/* H5Literate's callback: keeps the name.  0 to go on, 1 to stop
 * (LINKS_MAX), -1 when out of memory. */
static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info,
                      void *ctx) {
    (void)g;
    (void)info;
    links_t *l = ctx;
    if (l->n >= LINKS_MAX) return 1;
    if (sps__grow((void **)&l->v, &l->cap, l->n, sizeof *l->v) ||
        !(l->v[l->n] = name_copy(name, strlen(name)))) {
        l->oom = 1;
        return -1;
    }
    l->n++;
    return 0;
}

/* Lists the links of group g in name order into *l (free with
 * links_free).  0 or an error code with the message set. */
static int links_list(rd_t *c, hid_t g, links_t *l) {
    hsize_t at = 0;
    memset(l, 0, sizeof *l);
    herr_t e = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &at, link_cb, l);
    if (l->oom) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (e < 0) return fail(SPS_EFORMAT, "%s: cannot list a group (corrupt file?)", c->path);
    return 0;
}

/* Frees the names links_list gathered and zeroes l. */
static void links_free(links_t *l) {
    strs_free(l->v, l->n);
    memset(l, 0, sizeof *l);
}

/* The type class of dataset loc/name; H5T_NO_CLASS when it is no dataset. */
static H5T_class_t dset_class(hid_t loc, const char *name) {
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    H5T_class_t k = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    h5_close(&t);
    h5_close(&d);
    return k;
}

/* Frees what table t owns and zeroes it. */
static void table_free(sps_file_table_t *t) {
    for (size_t i = 0; t->cols && i < t->ncols; i++) {
        sps_file_column_t *col = (sps_file_column_t *)&t->cols[i];
        free((char *)col->name);
        free((int64_t *)col->ints);
        strs_free((char **)col->texts, t->nrows);
    }
    free((sps_file_column_t *)t->cols);
    memset(t, 0, sizeof *t);
}

/* Reads column name of lane table grp (group g) into col when it is an
 * integer or string dataset; its length must be *nrows (set by the first
 * column read, HSIZE_UNDEF before).  0 when read, 1 when left out (other
 * types), else an error code with the message set. */
static int table_col_read(rd_t *c, hid_t g, const char *grp, const char *name,
                          hsize_t *nrows, sps_file_column_t *col) {
    H5T_class_t k = dset_class(g, name);
    if (k != H5T_INTEGER && k != H5T_STRING) return 1;
    hsize_t n = 0;
    int rc;
    memset(col, 0, sizeof *col);
    col->is_text = k == H5T_STRING;
    if (col->is_text) rc = strs_read(c, g, grp, name, *nrows, (char ***)&col->texts, &n);
    else rc = ints_read(c, g, grp, name, H5T_NATIVE_INT64, *nrows, (void **)&col->ints, &n);
    if (rc == 0 && !(col->name = name_copy(name, strlen(name)))) {
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
        free((int64_t *)col->ints);
        strs_free((char **)col->texts, (size_t)n);
        memset(col, 0, sizeof *col);
    }
    if (rc == 0) *nrows = n;
    return rc;
}

/* Reads the optional lane table /grp (thread_table, task_table) into *t:
 * its integer and string columns, all of one length.  Absent: an empty
 * table.  0 or an error code with the message set. */
static int table_read(rd_t *c, const char *grp, sps_file_table_t *t) {
    memset(t, 0, sizeof *t);
    if (!has_link(c->file, grp)) return 0;
    hid_t g = group_open(c, c->file, grp);
    if (g < 0) return SPS_EFORMAT;
    links_t l;
    int rc = links_list(c, g, &l);
    sps_file_column_t *cols = rc ? NULL : calloc(l.n ? l.n : 1, sizeof *cols);
    if (rc == 0 && !cols) rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    hsize_t nrows = HSIZE_UNDEF;
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < l.n && k < TABLE_COLS_MAX; i++) {
        int x = table_col_read(c, g, grp, l.v[i], &nrows, &cols[k]);
        if (x == 0) k++;
        else if (x < 0) rc = x;
    }
    t->cols = cols;
    t->ncols = k;
    t->nrows = k ? (size_t)nrows : 0;
    if (rc) table_free(t);
    links_free(&l);
    h5_close(&g);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Schema 1: rank<N>/regions/<name>/{start_times, end_times}                 */
/* ------------------------------------------------------------------------ */

/* One region group of a schema-1 file while the file is read. */
typedef struct v1reg {
    char *name;
    uint32_t rank;
    int64_t *start, *end; /* n each, absolute ns */
    hsize_t n;
    int64_t line;         /* source_lineno, -1 when absent */
    char *file, *tags;    /* source_file ("" absent), tags as JSON list text */
    char *text;           /* source_text ("" absent) */
} v1reg_t;

/* The schema-1 regions read so far. */
typedef struct v1 {
    v1reg_t *v;
    size_t n, cap;
} v1_t;

/* Frees every region x holds (what v1_assemble has not taken over) and
 * zeroes x. */
static void v1_free(v1_t *x) {
    for (size_t i = 0; x->v && i < x->n; i++) {
        free(x->v[i].name);
        free(x->v[i].start);
        free(x->v[i].end);
        free(x->v[i].file);
        free(x->v[i].tags);
        free(x->v[i].text);
    }
    free(x->v);
    memset(x, 0, sizeof *x);
}

/* 1 and *rank set when name is "rank<digits>" (a rank within uint32). */
static int v1_rank_name(const char *name, uint32_t *rank) {
    uint64_t v = 0;
    if (strncmp(name, "rank", 4) || !name[4]) return 0;
    for (const char *p = name + 4; *p; p++) {
        if (*p < '0' || *p > '9' || v > UINT32_MAX / 10) return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > UINT32_MAX) return 0;
    *rank = (uint32_t)v;
    return 1;
}

/* 1 when the file has a rank<N>/regions group: the layout of schema 1,
 * which predates the schema attribute. */
static int v1_probe(rd_t *c) {
    links_t l;
    int found = 0;
    if (links_list(c, c->file, &l)) return 0;
    for (size_t i = 0; !found && i < l.n; i++) {
        uint32_t rank;
        if (!v1_rank_name(l.v[i], &rank)) continue;
        hid_t g = H5Gopen2(c->file, l.v[i], H5P_DEFAULT);
        found = g >= 0 && has_link(g, "regions");
        h5_close(&g);
    }
    links_free(&l);
    sps__err_clear();
    return found;
}

/* Sets c->r->rank_groups: which of scope-profiler's integration groups
 * (likwid, perf_events, line_profile) some rank<N> group holds.  Only the
 * root and each rank group's links are looked at, never the data (it is
 * not read: spanscope has no such integration yet).  Always 0: a file
 * whose groups cannot be listed simply reports none. */
static int rank_groups_read(rd_t *c) {
    static const struct { const char *name; unsigned bit; } kinds[] = {
        {"likwid", SPS_FILE_HAS_LIKWID},
        {"perf_events", SPS_FILE_HAS_PERF_EVENTS},
        {"line_profile", SPS_FILE_HAS_LINE_PROFILE}};
    links_t l;
    c->r->rank_groups = 0;
    if (links_list(c, c->file, &l)) {
        sps__err_clear();
        return 0;
    }
    for (size_t i = 0; i < l.n; i++) {
        uint32_t rank;
        if (!v1_rank_name(l.v[i], &rank)) continue;
        hid_t g = H5Gopen2(c->file, l.v[i], H5P_DEFAULT);
        for (size_t k = 0; g >= 0 && k < sizeof kinds / sizeof kinds[0]; k++)
            if (has_link(g, kinds[k].name)) c->r->rank_groups |= kinds[k].bit;
        h5_close(&g);
    }
    links_free(&l);
    sps__err_clear();
    return 0;
}

/* The n strings v as a JSON list ("[\"a\", \"b\"]"), malloc'd; NULL when
 * out of memory.  The escaping is util's (sps__json_quote). */
static char *json_list(const char *const *v, size_t n) {
    size_t len = 1, cap = 64;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = '[';
    for (size_t i = 0; i < n; i++) {
        size_t ql = 0;
        char *q = sps__json_quote(v[i], &ql);
        if (!q || len + ql + 4 > SIZE_MAX / 2) {
            free(q);
            free(out);
            return NULL;
        }
        while (len + ql + 4 > cap) cap *= 2;
        char *p = realloc(out, cap);
        if (!p) {
            free(q);
            free(out);
            return NULL;
        }
        out = p;
        if (i) {
            memcpy(out + len, ", ", 2);
            len += 2;
        }
        memcpy(out + len, q, ql);
        len += ql;
        free(q);
    }
    if (len + 2 > cap && !(out = realloc(out, len + 2))) return NULL;
    out[len++] = ']';
    out[len] = 0;
    return out;
}

/* Reads the attributes of region group g into x: source_lineno,
 * source_file, source_text (any length: capture_region_source's call-site
 * text) and tags (a string or a list of strings). */
static int v1_attrs(rd_t *c, hid_t g, v1reg_t *x) {
    char buf[4096] = "";
    sps_meta_attr_t tags, text;
    memset(&tags, 0, sizeof tags);
    memset(&text, 0, sizeof text);
    int has_text = H5Aexists(g, "source_text") > 0 &&
                   meta_attr_read(c, g, "source_text", &text) == 0 &&
                   text.kind == SPS_META_TEXT && text.n == 1;
    x->text = has_text ? name_copy(text.texts[0], strlen(text.texts[0])) : name_copy("", 0);
    attr_clear(&text);
    if (!attr_int(g, "source_lineno", &x->line)) x->line = -1;
    if (!attr_str(g, "source_file", buf, sizeof buf)) buf[0] = 0;
    int got = H5Aexists(g, "tags") > 0 && meta_attr_read(c, g, "tags", &tags) == 0 &&
              tags.kind == SPS_META_TEXT;
    x->file = name_copy(buf, strlen(buf));
    x->tags = json_list(got ? tags.texts : NULL, got ? tags.n : 0);
    attr_clear(&tags);
    return x->file && x->tags && x->text ? 0
                                         : fail(SPS_ENOMEM, "%s: out of memory", c->path);
}

/* Reads region group name of rank (under the regions group rg; where
 * names it in messages) into a new entry of x. */
static int v1_region_read(rd_t *c, hid_t rg, const char *where, const char *name,
                          uint32_t rank, v1_t *x) {
    char grp[512];
    snprintf(grp, sizeof grp, "%s/regions/%s", where, name);
    hid_t g = H5Gopen2(rg, name, H5P_DEFAULT);
    if (g < 0) return fail(SPS_EFORMAT, "%s: /%s is not a group", c->path, grp);
    if (sps__grow((void **)&x->v, &x->cap, x->n, sizeof *x->v)) {
        h5_close(&g);
        return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    }
    v1reg_t *e = &x->v[x->n++];
    memset(e, 0, sizeof *e);
    e->rank = rank;
    e->name = name_copy(name, strlen(name));
    int rc = e->name ? 0 : fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0) rc = ints_read(c, g, grp, "start_times", H5T_NATIVE_INT64, HSIZE_UNDEF,
                                (void **)&e->start, &e->n);
    if (rc == 0) rc = ints_read(c, g, grp, "end_times", H5T_NATIVE_INT64, e->n,
                                (void **)&e->end, NULL);
    if (rc == 0) rc = v1_attrs(c, g, e);
    h5_close(&g);
    return rc;
}

/* Reads every region group of rank group name (rank) into x. */
static int v1_rank_read(rd_t *c, const char *name, uint32_t rank, v1_t *x) {
    hid_t g = H5Gopen2(c->file, name, H5P_DEFAULT);
    hid_t rg = g >= 0 && has_link(g, "regions") ? H5Gopen2(g, "regions", H5P_DEFAULT)
                                                : H5I_INVALID_HID;
    links_t l = {0};
    int rc = rg < 0 ? 0 : links_list(c, rg, &l); /* no regions: nothing */
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = v1_region_read(c, rg, name, l.v[i], rank, x);
    links_free(&l);
    h5_close(&rg);
    h5_close(&g);
    return rc;
}

/* qsort orders: regions by rank then name; names. */
static int v1reg_cmp(const void *a, const void *b) {
    const v1reg_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return strcmp(x->name, y->name);
}
static int str_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fills r->names (the distinct region names, sorted) from x. */
static int v1_names(rd_t *c, const v1_t *x) {
    sps__h5r_t *r = c->r;
    char **v = calloc(x->n ? x->n : 1, sizeof *v);
    if (!v) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (size_t i = 0; i < x->n; i++) v[i] = x->v[i].name;
    qsort(v, x->n, sizeof *v, str_cmp);
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (k == 0 || strcmp(v[k - 1], v[i])) v[k++] = v[i];
    r->names = calloc(k ? k : 1, sizeof *r->names);
    int rc = r->names ? 0 : fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (size_t i = 0; rc == 0 && i < k; i++)
        if (!(r->names[i] = name_copy(v[i], strlen(v[i]))))
            rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (r->names) r->nnames = k;
    free(v);
    return rc;
}

/* The id of name among r's sorted names (it is there). */
static uint32_t v1_name_id(const sps__h5r_t *r, const char *name) {
    const char *key = name;
    char **hit = bsearch(&key, r->names, r->nnames, sizeof *r->names, str_cmp);
    return hit ? (uint32_t)(hit - r->names) : 0;
}

/* Allocates the per-row and per-event arrays of nrows rows and nev
 * events.  0 or SPS_ENOMEM with the message set. */
static int v1_alloc(rd_t *c, size_t nrows, uint64_t nev) {
    sps__h5r_t *r = c->r;
    size_t ne = nev ? (size_t)nev : 1, nr = nrows ? nrows : 1;
    r->rows = calloc(nr, sizeof *r->rows);
    r->start = malloc(ne * sizeof *r->start);
    r->dur = malloc(ne * sizeof *r->dur);
    r->src_lines = malloc(nr * sizeof *r->src_lines);
    r->src_files = calloc(nr, sizeof *r->src_files);
    r->tags = calloc(nr, sizeof *r->tags);
    r->src_texts = calloc(nr, sizeof *r->src_texts);
    if (r->rows) r->nrows = nrows;
    return r->rows && r->start && r->dur && r->src_lines && r->src_files && r->tags &&
                   r->src_texts
               ? 0 : fail(SPS_ENOMEM, "%s: out of memory", c->path);
}

/* Turns the region groups of x into the reader's index and events: one
 * row per (rank, region) in rank then name order, its calls back to back. */
static int v1_assemble(rd_t *c, v1_t *x) {
    sps__h5r_t *r = c->r;
    uint64_t nev = 0;
    for (size_t i = 0; i < x->n; i++) nev += x->v[i].n;
    if (nev > ELEMS_MAX || x->n >= NO_ROW)
        return fail(SPS_EFORMAT, "%s: too many events or regions", c->path);
    qsort(x->v, x->n, sizeof *x->v, v1reg_cmp);
    int rc = v1_names(c, x);
    if (rc == 0) rc = v1_alloc(c, x->n, nev);
    uint64_t off = 0;
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        v1reg_t *e = &x->v[i];
        r->rows[i] = (sps__row_t){.file_region = v1_name_id(r, e->name), .rank = e->rank,
                                  .offset = off, .count = e->n, .exclusive_total = -1};
        for (hsize_t k = 0; k < e->n; k++) {
            r->start[off + k] = e->start[k];
            r->dur[off + k] = (int64_t)((uint64_t)e->end[k] - (uint64_t)e->start[k]);
        }
        r->src_lines[i] = e->line;
        r->src_files[i] = e->file;
        r->tags[i] = e->tags;
        r->src_texts[i] = e->text;
        e->file = e->tags = e->text = NULL; /* owned by r now */
        off += e->n;
    }
    r->nevents = rc == 0 ? nev : 0;
    return rc;
}

/* Reads a schema-1 file's rank groups into the reader's names, index and
 * events (start times absolute: no deltas). */
static int v1_read(rd_t *c) {
    links_t top;
    v1_t x = {0};
    int rc = links_list(c, c->file, &top);
    for (size_t i = 0; rc == 0 && i < top.n; i++) {
        uint32_t rank;
        if (v1_rank_name(top.v[i], &rank)) rc = v1_rank_read(c, top.v[i], rank, &x);
    }
    if (rc == 0) rc = v1_assemble(c, &x);
    c->deltas = 0;
    v1_free(&x);
    links_free(&top);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Derived columns                                                           */
/* ------------------------------------------------------------------------ */

/* A row's event range, for the overlap check. */
typedef struct span {
    uint64_t off, end;
    uint32_t row;
} span_t;

/* qsort order of spans: by offset. */
static int span_cmp(const void *a, const void *b) {
    const span_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int rows_bounds_check(rd_t *c);

/* Checks every row's event slice lies within /events and that no two
 * overlap; fills r->row (the row covering each event). */
static int rows_check(rd_t *c) {
    sps__h5r_t *r = c->r;
    int rc = rows_bounds_check(c);
    if (rc) return rc;
    r->row = malloc((r->nevents ? r->nevents : 1) * sizeof *r->row);
    if (!r->row) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (uint64_t e = 0; e < r->nevents; e++) r->row[e] = NO_ROW;
    for (size_t i = 0; i < r->nrows; i++)
        for (uint64_t e = r->rows[i].offset; e < r->rows[i].offset + r->rows[i].count; e++)
            r->row[e] = (uint32_t)i;
    return 0;
}

/* Turns each row's start gaps into absolute starts (wrapping, like
 * numpy's cumsum, so hostile values cannot trap). */
static void decode_starts(sps__h5r_t *r) {
    for (size_t i = 0; i < r->nrows; i++) {
        uint64_t acc = 0;
        for (uint64_t e = r->rows[i].offset;
             e < r->rows[i].offset + r->rows[i].count; e++) {
            acc += (uint64_t)r->start[e];
            r->start[e] = (int64_t)acc;
        }
    }
}

/* The end of event e: start + duration, saturating; a negative duration
 * counts as 0. */
static int64_t ev_end(const sps__h5r_t *r, uint64_t e) {
    int64_t s = r->start[e], d = r->dur[e] > 0 ? r->dur[e] : 0;
    return s > INT64_MAX - d ? INT64_MAX : s + d;
}

/* The rank of event e (0 for events no row covers). */
static uint32_t ev_rank(const sps__h5r_t *r, uint64_t e) {
    return r->row[e] == NO_ROW ? 0 : r->rows[r->row[e]].rank;
}

/* A call id of one rank, for the parent lookup. */
typedef struct cid {
    uint32_t rank;
    int64_t id;
    int32_t ev;
} cid_t;

/* qsort order: by rank, then id. */
static int cid_cmp(const void *a, const void *b) {
    const cid_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The event whose call id is id on rank, or -1. */
static int32_t cid_find(const cid_t *k, size_t n, uint32_t rank, int64_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].rank < rank || (k[mid].rank == rank && k[mid].id < id))
            lo = mid + 1;
        else hi = mid;
    }
    return lo < n && k[lo].rank == rank && k[lo].id == id ? k[lo].ev : -1;
}

/* Sets r->parent from call_ids/parent_ids: ids are per rank; a parent id
 * that names no call of its rank makes the call a root (counted in
 * r->orphans).  Refuses duplicate call ids and parent ids below -1. */
static int parents_by_ids(rd_t *c) {
    sps__h5r_t *r = c->r;
    size_t n = 0;
    cid_t *k = malloc((r->nevents ? r->nevents : 1) * sizeof *k);
    if (!k) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (uint64_t e = 0; e < r->nevents; e++)
        if (r->row[e] != NO_ROW)
            k[n++] = (cid_t){ev_rank(r, e), r->call_ids[e], (int32_t)e};
    qsort(k, n, sizeof *k, cid_cmp);
    int rc = 0;
    for (size_t i = 1; rc == 0 && i < n; i++)
        if (k[i].rank == k[i - 1].rank && k[i].id == k[i - 1].id)
            rc = fail(SPS_EFORMAT, "%s: call id %lld appears twice on rank "
                      "%u", c->path, (long long)k[i].id, k[i].rank);
    for (uint64_t e = 0; rc == 0 && e < r->nevents; e++) {
        int64_t p = r->parent_ids[e];
        r->parent[e] = -1;
        if (r->row[e] == NO_ROW || p == -1) continue;
        if (p < -1)
            rc = fail(SPS_EFORMAT, "%s: event %llu has parent id %lld",
                      c->path, (unsigned long long)e, (long long)p);
        else if ((r->parent[e] = cid_find(k, n, ev_rank(r, e), p)) < 0)
            r->orphans++;
    }
    free(k);
    return rc;
}

/* Sets r->parent (and the interval self times, kept in r->self) by the one
 * fold's interval rule (model/fold.c): per rank and thread (when thread_ids
 * is there), in start order. */
static int parents_by_intervals(rd_t *c) {
    sps__h5r_t *r = c->r;
    size_t n = 0;
    sps__ival_t *v = malloc((r->nevents ? r->nevents : 1) * sizeof *v);
    sps__fold_out_t *out = malloc((r->nevents ? r->nevents : 1) * sizeof *out);
    int32_t *ev = malloc((r->nevents ? r->nevents : 1) * sizeof *ev);
    int rc = v && out && ev ? 0 : fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (uint64_t e = 0; !rc && e < r->nevents; e++) {
        r->parent[e] = -1;
        if (r->row[e] == NO_ROW) continue;
        ev[n] = (int32_t)e;
        v[n++] = (sps__ival_t){r->start[e], ev_end(r, e), ev_rank(r, e), 0,
                               r->thread_ids ? r->thread_ids[e] : 0, 0};
    }
    if (!rc && sps__fold_ivals(v, n, out, NULL))
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (size_t i = 0; !rc && i < n; i++)
        r->parent[ev[i]] = out[i].parent < 0 ? -1 : ev[out[i].parent];
    free(v);
    free(out);
    free(ev);
    return rc;
}

/* Cuts cycles in r->parent (possible only with hostile parent ids): walks
 * up from every event; a walk that meets its own path makes the last call
 * on it a root.  state: 0 new, 1 on the current path, 2 done. */
static int cycles_cut(rd_t *c) {
    sps__h5r_t *r = c->r;
    unsigned char *state = calloc(r->nevents ? r->nevents : 1, 1);
    int32_t *path = malloc((r->nevents ? r->nevents : 1) * sizeof *path);
    if (!state || !path) {
        free(state);
        free(path);
        return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    }
    for (uint64_t e = 0; e < r->nevents; e++) {
        size_t n = 0;
        int32_t cur = (int32_t)e;
        while (cur >= 0 && state[cur] == 0) {
            state[cur] = 1;
            path[n++] = cur;
            cur = r->parent[cur];
        }
        if (cur >= 0 && state[cur] == 1) {
            r->parent[path[n - 1]] = -1;
            r->cycles++;
        }
        while (n) state[path[--n]] = 2;
    }
    free(path);
    free(state);
    return 0;
}

/* Sets r->self by the one fold's rule: each call's duration minus the part
 * of each direct child that lies inside it (model/fold.c: sps__fold_clip),
 * so hostile parent ids cannot make a self time negative; a call carried
 * across a checkpoint also loses what /carried says its children spent in
 * earlier files. */
static int self_times(rd_t *c) {
    sps__h5r_t *r = c->r;
    r->self = malloc((r->nevents ? r->nevents : 1) * sizeof *r->self);
    if (!r->self) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    for (uint64_t e = 0; e < r->nevents; e++) r->self[e] = r->dur[e] > 0 ? r->dur[e] : 0;
    for (uint64_t e = 0; e < r->nevents; e++) {
        int32_t p = r->parent[e];
        if (p < 0 || r->row[e] == NO_ROW) continue;
        int64_t in = sps__fold_clip(r->start[e], ev_end(r, e), r->start[p], ev_end(r, p));
        r->self[p] = r->self[p] > in ? r->self[p] - in : 0;
    }
    for (size_t i = 0; i < r->ncarried; i++) { /* children in earlier files */
        int64_t *x = &r->self[r->carried_event[i]];
        *x = *x > r->carried_child[i] ? *x - r->carried_child[i] : 0;
    }
    return 0;
}

/* Computes every derived column from the raw ones. */
static int derive(rd_t *c) {
    sps__h5r_t *r = c->r;
    if (r->aggregate) return 0;
    int rc = rows_check(c);
    if (rc) return rc;
    if (c->deltas) decode_starts(r);
    r->parent = malloc((r->nevents ? r->nevents : 1) * sizeof *r->parent);
    if (!r->parent) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    r->nested_by_ids = r->call_ids && r->parent_ids;
    rc = r->nested_by_ids ? parents_by_ids(c) : parents_by_intervals(c);
    if (rc == 0) rc = cycles_cut(c);
    if (rc == 0) rc = self_times(c);
    return rc;
}

/* Runs every step of a read on an opened probe. */
static int read_all(rd_t *c) {
    int rc = file_open(c);
    if (rc == 0) rc = root_read(c);
    if (rc == 0 && c->r->schema == 1) {
        rc = v1_read(c);
    } else {
        if (rc == 0) rc = names_read(c);
        if (rc == 0) rc = index_read(c);
        if (rc == 0) rc = events_read(c);
        if (rc == 0 && !c->r->aggregate) rc = carried_read(c);
    }
    if (rc == 0) rc = table_read(c, "thread_table", &c->r->thread_table);
    if (rc == 0) rc = table_read(c, "task_table", &c->r->task_table);
    if (rc == 0) rc = metadata_read(c, &c->r->meta);
    if (rc == 0) rc = rank_groups_read(c);
    if (rc == 0) rc = derive(c);
    return rc;
}

/* Checks every row's slice lies within /events and that no two overlap,
 * without a per-event array (streaming). */
static int rows_bounds_check(rd_t *c) {
    sps__h5r_t *r = c->r;
    span_t *s = malloc((r->nrows ? r->nrows : 1) * sizeof *s);
    if (!s) return fail(SPS_ENOMEM, "%s: out of memory", c->path);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->nrows; i++) {
        uint64_t off = r->rows[i].offset, cnt = r->rows[i].count;
        if (off > r->nevents || cnt > r->nevents - off)
            rc = fail(SPS_EFORMAT, "%s: index row %zu slices events [%llu, "
                      "+%llu) but /events has %llu", c->path, i,
                      (unsigned long long)off, (unsigned long long)cnt,
                      (unsigned long long)r->nevents);
        s[i] = (span_t){off, off + cnt, (uint32_t)i};
    }
    if (rc == 0) qsort(s, r->nrows, sizeof *s, span_cmp);
    for (size_t i = 1; rc == 0 && i < r->nrows; i++)
        if (s[i].off < s[i - 1].end)
            rc = fail(SPS_EFORMAT, "%s: index rows %u and %u overlap in "
                      "/events", c->path, s[i - 1].row, s[i].row);
    free(s);
    return rc;
}

/* Opens the optional integer column name of /events (group g) into *d
 * when the file has it, checking its length against n; *d stays -1 when
 * it is absent.  Returns 0 or SPS_EFORMAT with the message set. */
static int opt_col_open(rd_t *c, hid_t g, const char *name, hsize_t n,
                        hid_t *d) {
    hsize_t k = 0;
    *d = H5I_INVALID_HID;
    if (!has_link(g, name)) return 0;
    *d = col_open(c, g, "events", name, C_INT, &k);
    if (*d < 0) return SPS_EFORMAT;
    if (k != n)
        return fail(SPS_EFORMAT, "%s: the /events columns differ in length",
                    c->path);
    return 0;
}

/* Opens the event columns for block reads (start, durations and, when
 * present, thread_ids, call_ids and parent_ids) and sets nevents. */
/* Opens /events' columns of c->file into c->r's ids and chunk readers
 * (events_open's first half; sps__h5r_reacquire's too).  0 or a code. */
static int events_cols_open(rd_t *c) {
    sps__h5r_t *r = c->r;
    hsize_t n = 0, m = 0;
    hid_t g = group_open(c, c->file, "events");
    if (g < 0) return SPS_EFORMAT;
    r->deltas = has_link(g, "start_deltas");
    const char *a = r->deltas ? "start_deltas" : "start_times";
    const char *b = r->deltas ? "durations" : "end_times";
    hid_t ds = col_open(c, g, "events", a, C_INT, &n);
    hid_t dd = ds >= 0 ? col_open(c, g, "events", b, C_INT, &m) : H5I_INVALID_HID;
    hid_t dt = H5I_INVALID_HID, dc = H5I_INVALID_HID, dp = H5I_INVALID_HID;
    int rc = ds < 0 || dd < 0 ? SPS_EFORMAT : 0;
    if (rc == 0 && m != n)
        rc = fail(SPS_EFORMAT, "%s: the /events columns differ in length", c->path);
    if (rc == 0) rc = opt_col_open(c, g, "thread_ids", n, &dt);
    if (rc == 0) rc = opt_col_open(c, g, "call_ids", n, &dc);
    if (rc == 0) rc = opt_col_open(c, g, "parent_ids", n, &dp);
    h5_close(&g);
    if (rc) {
        h5_close(&ds);
        h5_close(&dd);
        h5_close(&dt);
        h5_close(&dc);
        h5_close(&dp);
        return rc;
    }
    r->h_start = ds;
    r->h_dur = dd;
    r->h_tid = dt;
    r->h_call = dc;
    r->h_parent = dp;
    r->nevents = n;
    int64_t cols[5] = {ds, dd, dt, dc, dp};
    for (int i = 0; i < 5; i++) r->cr[i] = sps__h5cr_new(cols[i]);
    return 0;
}

static int events_open(rd_t *c) {
    int rc = events_cols_open(c);
    if (rc == 0) rc = rows_bounds_check(c);
    return rc ? rc : carried_read(c);
}

/* Reads n elements from first of event column col (0..4: start, dur, tid,
 * call, parent; see sps__h5r_t) as int64 into out: 0, SPS_EFORMAT or
 * SPS_ENOMEM. */
static int block_read(const sps__h5r_t *r, int col, uint64_t first, size_t n,
                      int64_t *out) {
    hid_t d = col == 0 ? r->h_start : col == 1 ? r->h_dur : col == 2 ? r->h_tid
            : col == 3 ? r->h_call : r->h_parent;
    if (r->cr[col]) { /* direct chunk reads; 1: this range through H5Dread */
        int rc = sps__h5cr_read(r->cr[col], first, n, out);
        if (rc != 1) return rc;
    }
    hsize_t start = first, count = n;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    int ok = fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0 &&
             H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, out) >= 0;
    hid_t tmp = fs;
    h5_close(&tmp);
    tmp = ms;
    h5_close(&tmp);
    (void)r;
    return ok ? 0 : SPS_EFORMAT;
}

/* Reads n elements from first of the optional column d into out (when
 * out is not NULL): the stored values, or -1 each when d is absent. */
static int opt_block_read(const sps__h5r_t *r, int col, uint64_t first,
                          size_t n, int64_t *out) {
    if (!out) return 0;
    hid_t d = col == 2 ? r->h_tid : col == 3 ? r->h_call : r->h_parent;
    if (d >= 0) return block_read(r, col, first, n, out);
    for (size_t i = 0; i < n; i++) out[i] = -1;
    return 0;
}

/* Reads a block of events with all columns (see h5_read.h). */
/* sps__h5r_events_ids of a schema-1 file held in memory: its start times
 * and durations, -1 for the ids it does not have. */
static void events_from_memory(const sps__h5r_t *r, uint64_t first, size_t n,
                               int64_t *start, int64_t *dur, int64_t *tid,
                               int64_t *call_ids, int64_t *parent_ids) {
    if (start) memcpy(start, r->start + first, n * sizeof *start);
    if (dur) memcpy(dur, r->dur + first, n * sizeof *dur);
    int64_t *ids[] = {tid, call_ids, parent_ids};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
        for (size_t i = 0; ids[k] && i < n; i++) ids[k][i] = -1;
}

int sps__h5r_events_ids(const sps__h5r_t *r, uint64_t first, size_t n,
                        int64_t *start, int64_t *dur, int64_t *tid,
                        int64_t *call_ids, int64_t *parent_ids) {
    if (r->in_memory && first <= r->nevents && n <= r->nevents - first) {
        if (n) events_from_memory(r, first, n, start, dur, tid, call_ids, parent_ids);
        return 0;
    }
    if (r->h_start < 0 || first > r->nevents || n > r->nevents - first)
        return fail(SPS_EINVAL, "events [%llu, +%zu) out of range",
                    (unsigned long long)first, n);
    if (!n) return 0;
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    int rc = start ? block_read(r, 0, first, n, start) : 0;
    if (rc == 0 && dur) rc = block_read(r, 1, first, n, dur);
    if (rc == 0) rc = opt_block_read(r, 2, first, n, tid);
    if (rc == 0) rc = opt_block_read(r, 3, first, n, call_ids);
    if (rc == 0) rc = opt_block_read(r, 4, first, n, parent_ids);
    if (rc == 0 && !r->deltas && start && dur) /* end times -> durations */
        for (size_t i = 0; i < n; i++)
            dur[i] = (int64_t)((uint64_t)dur[i] - (uint64_t)start[i]);
    sps__h5_quiet_end(&q, rc);
    if (rc) fail(rc, "cannot read /events [%llu, +%zu) (%s)", (unsigned long long)first, n,
                 rc == SPS_ENOMEM ? "out of memory" : "corrupt data");
    return rc;
}

/* Reads a block of events without the id columns (see h5_read.h). */
int sps__h5r_events(const sps__h5r_t *r, uint64_t first, size_t n,
                    int64_t *start, int64_t *dur, int64_t *tid) {
    return sps__h5r_events_ids(r, first, n, start, dur, tid, NULL, NULL);
}

/* Shared start of both opens: the arguments checked (*out NULL), a probe
 * of path and a new, empty result; HDF5's error printing is switched off
 * until open_end.  Returns 0 or an error code with the message set; when
 * c->r is NULL the open is over (nothing to end), else open_end follows,
 * whatever the code. */
static int open_begin(rd_t *c, sps__h5r_t **out, const char *path) {
    *c = (rd_t){H5I_INVALID_HID, 0, path, NULL, 0, {NULL, NULL, 0}};
    if (out) *out = NULL;
    if (!out || !path) return fail(SPS_EINVAL, "no file given");
    sps__err_clear();
    if (!(c->r = calloc(1, sizeof(sps__h5r_t))))
        return fail(SPS_ENOMEM, "%s: out of memory", path);
    c->r->h_file = c->r->h_start = c->r->h_dur = c->r->h_tid = H5I_INVALID_HID;
    c->r->h_call = c->r->h_parent = H5I_INVALID_HID;
    sps__h5_quiet_begin(&c->quiet);
    return file_probe(c);
}

/* Shared end of both opens: restores HDF5's error printing and hands the
 * result over (or frees it on failure). */
static int open_end(rd_t *c, int rc, sps__h5r_t **out) {
    sps__h5_quiet_end(&c->quiet, 0);
    if (rc) {
        sps__h5r_free(c->r);
        return rc;
    }
    *out = c->r;
    return 0;
}

/* 1 when compound type t has a numeric member of each name of m (HDF5
 * converts compounds by member name and would leave a missing one
 * untouched rather than fail). */
static int compound_has_all(hid_t t, hid_t m) {
    int n = H5Tget_nmembers(m);
    for (int i = 0; n > 0 && i < n; i++) {
        char *name = H5Tget_member_name(m, (unsigned)i);
        int k = name ? H5Tget_member_index(t, name) : -1;
        H5T_class_t cls = k >= 0 ? H5Tget_member_class(t, (unsigned)k) : H5T_NO_CLASS;
        if (name) H5free_memory(name);
        if (cls != H5T_INTEGER && cls != H5T_FLOAT) return 0;
    }
    return n > 0;
}

/* Reads rank_region_index/summary_statistics (a compound with at least the
 * 11 numeric fields of sps__summary_t, one element per row) into
 * r->summary when the file has it; HDF5 converts the fields by name.  0 or
 * SPS_EFORMAT / SPS_ENOMEM with the message set. */
static int summary_read(rd_t *c) {
    sps__h5r_t *r = c->r;
    if (!r->has_summary || r->aggregate) return 0;
    hid_t g = H5Gopen2(c->file, "rank_region_index", H5P_DEFAULT);
    hid_t d = g >= 0 ? H5Dopen2(g, "summary_statistics", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t s = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hid_t ft = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    hid_t mt = (hid_t)sps__h5_summary_type(0, 0, sizeof(sps__summary_t));
    hsize_t n = 0;
    int rc = s < 0 || space_len(s, 0, &n) < 0 || ft < 0 || H5Tget_class(ft) != H5T_COMPOUND ||
             n != r->nrows || mt < 0 || !compound_has_all(ft, mt)
                 ? fail(SPS_EFORMAT, "%s: /rank_region_index/summary_statistics is not a "
                        "summary compound (total, minimum, ..., m2) of one element per "
                        "row", c->path) : 0;
    if (rc == 0 && !(r->summary = calloc(n ? n : 1, sizeof *r->summary)))
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0 && n && H5Dread(d, mt, H5S_ALL, H5S_ALL,
                                (hid_t)sps__h5_dxpl(n * 2 * sizeof *r->summary), r->summary) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot read /rank_region_index/summary_statistics "
                  "(corrupt, or fields missing)", c->path);
    int64_t ids[] = {mt, ft, s, d, g};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) h5_close(&ids[i]);
    return rc;
}

/* Reads names, index and metadata; leaves the file open (see h5_read.h). */
int sps__h5r_open_index(sps__h5r_t **out, const char *path) {
    rd_t c;
    int rc = open_begin(&c, out, path);
    if (!c.r) return rc;
    if (rc == 0) rc = file_open(&c);
    if (rc == 0) rc = root_read(&c);
    if (rc == 0 && c.r->schema == 1) { /* no /events to stream: read whole */
        rc = v1_read(&c);
        c.r->in_memory = 1;
    } else {
        if (rc == 0) rc = names_read(&c);
        if (rc == 0) rc = index_read(&c);
        if (rc == 0) rc = summary_read(&c);
        if (rc == 0 && !c.r->aggregate) rc = events_open(&c);
    }
    if (rc == 0) rc = table_read(&c, "thread_table", &c.r->thread_table);
    if (rc == 0) rc = table_read(&c, "task_table", &c.r->task_table);
    if (rc == 0) rc = metadata_read(&c, &c.r->meta);
    if (rc == 0) rc = rank_groups_read(&c);
    c.r->h_file = c.file;
    return open_end(&c, rc, out);
}

/* Reads and validates path into *out (see h5_read.h). */
int sps__h5r_open(sps__h5r_t **out, const char *path) {
    rd_t c;
    int rc = open_begin(&c, out, path);
    if (!c.r) return rc;
    if (rc == 0) rc = read_all(&c);
    h5_close(&c.file);
    return open_end(&c, rc, out);
}

void sps__h5r_release(sps__h5r_t *r) {
    for (int i = 0; i < 5; i++) sps__h5cr_free(r->cr[i]), r->cr[i] = NULL;
    hid_t *ids[] = {&r->h_parent, &r->h_call, &r->h_tid, &r->h_dur, &r->h_start, &r->h_file};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) h5_close(ids[i]);
}

int sps__h5r_reacquire(sps__h5r_t *r, const char *path, int file_only) {
    if (r->h_file >= 0 || r->in_memory || r->aggregate) return 0;
    rd_t c = {H5I_INVALID_HID, 0, path, r, r->deltas, {NULL, NULL, 0}};
    uint64_t nevents = r->nevents;
    sps__h5_quiet_begin(&c.quiet);
    int rc = file_probe(&c); /* its size, which bounds the columns */
    if (rc == 0) rc = file_open(&c);
    if (rc == 0 && !file_only) rc = events_cols_open(&c);
    if (rc == 0 && r->nevents != nevents)
        rc = fail(SPS_EFORMAT, "%s: changed since it was opened", path);
    r->h_file = c.file; /* closed by release or free, also after a failure */
    if (rc) sps__h5r_release(r);
    return sps__h5_quiet_end(&c.quiet, rc);
}

/* Frees r and everything it owns. */
void sps__h5r_free(sps__h5r_t *r) {
    if (!r) return;
    for (int i = 0; i < 5; i++) sps__h5cr_free(r->cr[i]);
    hid_t ids[] = {r->h_parent, r->h_call, r->h_tid, r->h_dur, r->h_start,
                   r->h_file};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) h5_close(&ids[i]);
    for (size_t i = 0; r->names && i < r->nnames; i++) free(r->names[i]);
    free(r->names);
    sps__h5r_meta_free(&r->meta);
    free(r->rows);
    free(r->start);
    free(r->dur);
    free(r->self);
    free(r->parent);
    free(r->row);
    free(r->call_ids);
    free(r->parent_ids);
    free(r->thread_ids);
    free(r->carried_event);
    free(r->carried_child);
    free(r->src_lines);
    strs_free(r->src_files, r->nrows);
    strs_free(r->src_texts, r->nrows);
    strs_free(r->tags, r->nrows);
    strs_free(r->ev_meta, r->nrows);
    free(r->summary);
    free(r->gpu_dur);
    free(r->task_ids);
    free(r->await_ns);
    table_free(&r->thread_table);
    table_free(&r->task_table);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* Views: tree, flat, session                                                */
/* ------------------------------------------------------------------------ */

/* Gives event e (and, first, its ancestors) its node of the model's call
 * tree t (one node per path of regions) and folds its call into the
 * node's statistics: walks up to the first ancestor that has one, then
 * assigns on the way down.  0 or SPS_ENOMEM. */
static int node_assign(const sps__h5r_t *r, sps__tree_t *t, int32_t *ev_node,
                       int32_t *path, uint64_t e) {
    size_t n = 0;
    for (int32_t cur = (int32_t)e; cur >= 0 && ev_node[cur] < 0;
         cur = r->parent[cur])
        path[n++] = cur;
    while (n) {
        int32_t cur = path[--n], p = r->parent[cur];
        int32_t node = sps__tree_node(t, p >= 0 ? ev_node[p] : -1,
                                      r->rows[r->row[cur]].file_region);
        if (node < 0) return SPS_ENOMEM;
        ev_node[cur] = node;
        sps__acc_add(&t->n[node].cum, (uint64_t)r->start[cur], (uint64_t)ev_end(r, cur),
                     (uint64_t)r->self[cur]);
    }
    return 0;
}

/* Builds the call tree (see h5_read.h): the model's tree over the
 * reader's parents, as rows of the tree view. */
int sps__h5r_tree(const sps__h5r_t *r, sps__tree_row_t **nodes, size_t *n) {
    size_t ne = r->aggregate ? 0 : (size_t)r->nevents;
    sps__tree_t t = {0};
    int32_t *ev_node = malloc((ne ? ne : 1) * sizeof *ev_node);
    int32_t *path = malloc((ne ? ne : 1) * sizeof *path);
    int rc = ev_node && path ? 0 : SPS_ENOMEM;
    for (size_t e = 0; rc == 0 && e < ne; e++) ev_node[e] = -1;
    for (size_t e = 0; rc == 0 && e < ne; e++)
        if (r->row[e] != NO_ROW && ev_node[e] < 0)
            rc = node_assign(r, &t, ev_node, path, e);
    sps__tree_row_t *v = rc ? NULL : malloc((t.len ? t.len : 1) * sizeof *v);
    if (!rc && !v) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < t.len; i++) {
        sps_stats_t st;
        sps__acc_stats(&t.n[i].cum, &st);
        v[i] = (sps__tree_row_t){t.n[i].parent, r->names[t.n[i].region], st.num_calls,
                                 st.total_ns, st.self_ns, st.min_ns, st.max_ns};
    }
    *nodes = v;
    *n = rc ? 0 : t.len;
    free(path);
    free(ev_node);
    sps__tree_free(&t);
    return rc ? fail(rc, "out of memory") : 0;
}

/* Adds row i of an aggregate file to flat entry f. */
static void flat_add_row(const sps__row_t *row, sps__tflat_t *f) {
    if (row->count == 0) return;
    if (f->calls == 0 || row->s.minimum < f->min_ns) f->min_ns = row->s.minimum;
    if (f->calls == 0 || row->s.maximum > f->max_ns) f->max_ns = row->s.maximum;
    f->calls += row->count;
    f->total_ns = (int64_t)((uint64_t)f->total_ns + (uint64_t)row->s.total);
    int64_t x = row->exclusive_total >= 0 ? row->exclusive_total : row->s.total;
    f->self_ns = (int64_t)((uint64_t)f->self_ns + (uint64_t)x);
}

/* Folds the calls of row i of a columnar file into a (the model's
 * accumulator: the fold's self times, negative durations as 0). */
static void flat_add_events(const sps__h5r_t *r, size_t i, sps__acc_t *a) {
    const sps__row_t *row = &r->rows[i];
    for (uint64_t e = row->offset; e < row->offset + row->count; e++)
        sps__acc_add(a, (uint64_t)r->start[e], (uint64_t)ev_end(r, e), (uint64_t)r->self[e]);
}

/* Builds the flat per-region statistics (see h5_read.h). */
int sps__h5r_flat(const sps__h5r_t *r, sps__tflat_t **flat, size_t *n) {
    sps__tflat_t *f = calloc(r->nnames ? r->nnames : 1, sizeof *f);
    sps__acc_t *acc = calloc(r->nnames ? r->nnames : 1, sizeof *acc);
    unsigned char *used = calloc(r->nnames ? r->nnames : 1, 1);
    size_t k = 0;
    *flat = NULL;
    *n = 0;
    if (!f || !used || !acc) {
        free(f);
        free(acc);
        free(used);
        return fail(SPS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->nrows; i++) {
        uint32_t g = r->rows[i].file_region;
        used[g] = 1;
        if (r->aggregate) flat_add_row(&r->rows[i], &f[g]);
        else flat_add_events(r, i, &acc[g]);
    }
    for (size_t g = 0; g < r->nnames; g++) {
        if (!used[g]) continue;
        if (!r->aggregate) {
            sps_stats_t st;
            sps__acc_stats(&acc[g], &st);
            f[g] = (sps__tflat_t){NULL, st.num_calls, st.total_ns, st.self_ns,
                                  st.min_ns, st.max_ns, st.mean_ns};
        } else {
            f[g].mean_ns = f[g].calls ? (double)f[g].total_ns / (double)f[g].calls : 0.0;
        }
        f[k] = f[g];
        f[k].name = r->names[g];
        k++;
    }
    free(acc);
    free(used);
    *flat = f;
    *n = k;
    return 0;
}

/* The session's wall time (see h5_read.h). */
int64_t sps__h5r_session_ns(const sps__h5r_t *r) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    const sps__h5r_meta_t *m = &r->meta;
    if (m->has_times && m->finalize_time_ns > m->start_time_ns &&
        (m->start_time_ns >= 0 ||
         m->finalize_time_ns <= INT64_MAX + m->start_time_ns))
        return m->finalize_time_ns - m->start_time_ns;
    for (uint64_t e = 0; !r->aggregate && e < r->nevents; e++) {
        if (r->row[e] == NO_ROW) continue;
        if (r->start[e] < lo) lo = r->start[e];
        if (ev_end(r, e) > hi) hi = ev_end(r, e);
    }
    if (hi > lo && (lo >= 0 || hi <= INT64_MAX + lo)) return hi - lo;
    int64_t best = 0;
    for (size_t i = 0; r->aggregate && i < r->nrows; i++)
        if (r->rows[i].s.total > best) best = r->rows[i].s.total;
    return best;
}

/* ------------------------------------------------------------------------ */
/* /counters (spanscope's counter samples)                                   */
/* ------------------------------------------------------------------------ */

/* Reads float dataset grp/name (want elements) as double into *out. */
static int floats_read(rd_t *c, hid_t loc, const char *grp, const char *name,
                       hsize_t want, double **out) {
    *out = NULL;
    hid_t d = has_link(loc, name) ? H5Dopen2(loc, name, H5P_DEFAULT) : H5I_INVALID_HID;
    if (d < 0) return fail(SPS_EFORMAT, "%s: missing dataset /%s/%s", c->path, grp, name);
    hid_t s = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t n = 0;
    int bad = s < 0 || space_len(s, 0, &n) < 0 || t < 0 || H5Tget_class(t) != H5T_FLOAT ||
              n != want || !size_ok(c, n, 8);
    h5_close(&t);
    h5_close(&s);
    int rc = bad ? fail(SPS_EFORMAT, "%s: /%s/%s is not a float column of %llu elements",
                        c->path, grp, name, (unsigned long long)want) : 0;
    if (rc == 0 && !(*out = malloc(n ? n * sizeof **out : 1)))
        rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0 && n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                (hid_t)sps__h5_dxpl(n * 8), *out) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot read /%s/%s (corrupt data)", c->path, grp, name);
    h5_close(&d);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* Reads /counters/names into out. */
static int counter_names_read(rd_t *c, hid_t g, sps__h5r_counters_t *out) {
    hsize_t n = 0;
    hid_t d = col_open(c, g, "counters", "names", C_STR, &n);
    if (d < 0) return SPS_EFORMAT;
    hid_t t = H5Dget_type(d);
    int rc = (out->names = calloc(n ? n : 1, sizeof(char *))) ? 0
             : fail(SPS_ENOMEM, "%s: out of memory", c->path);
    if (rc == 0) out->nnames = n;
    if (rc == 0 && n && H5Tis_variable_str(t) > 0) rc = vstr_read(c, d, n, out->names, "the counter names");
    else if (rc == 0 && n) rc = fstr_read(c, d, n, H5Tget_size(t), out->names, "the counter names");
    h5_close(&t);
    h5_close(&d);
    return rc;
}

/* Reads and checks the sample columns of /counters. */
static int counter_cols_read(rd_t *c, hid_t g, sps__h5r_counters_t *out) {
    hsize_t n = 0;
    int rc = ints_read(c, g, "counters", "series", H5T_NATIVE_INT64, HSIZE_UNDEF,
                       (void **)&out->series, &n);
    if (rc == 0) rc = ints_read(c, g, "counters", "ranks", H5T_NATIVE_INT64, n,
                                (void **)&out->ranks, NULL);
    if (rc == 0) rc = ints_read(c, g, "counters", "times_ns", H5T_NATIVE_INT64, n,
                                (void **)&out->times, NULL);
    if (rc == 0) rc = floats_read(c, g, "counters", "values", n, &out->values);
    if (rc) return rc;
    out->n = n;
    for (hsize_t i = 0; i < n; i++) {
        if (out->series[i] < 0 || (uint64_t)out->series[i] >= out->nnames)
            return fail(SPS_EFORMAT, "%s: /counters/series[%llu] names no counter",
                        c->path, (unsigned long long)i);
        if (out->ranks[i] < 0 || out->ranks[i] > INT32_MAX)
            return fail(SPS_EFORMAT, "%s: /counters/ranks[%llu] is not a rank", c->path,
                        (unsigned long long)i);
    }
    return 0;
}

void sps__h5r_counters_free(sps__h5r_counters_t *x) {
    if (!x) return;
    for (size_t i = 0; x->names && i < x->nnames; i++) free(x->names[i]);
    free(x->names);
    free(x->series);
    free(x->ranks);
    free(x->times);
    free(x->values);
    memset(x, 0, sizeof *x);
}

/* Opens the file at path (probed, read-only, HDF5's error printing off),
 * runs fn on it and closes it: the frame of the readers of one part of a
 * file (/counters, /metadata).  Returns fn's code, or the open's. */
static int with_file(const char *path, int (*fn)(rd_t *c, void *out), void *out) {
    rd_t c = {H5I_INVALID_HID, 0, path, NULL, 0, {NULL, NULL, 0}};
    sps__h5_quiet_begin(&c.quiet);
    int rc = file_probe(&c);
    if (rc == 0) rc = file_open(&c);
    if (rc == 0) rc = fn(&c, out);
    h5_close(&c.file);
    return sps__h5_quiet_end(&c.quiet, rc);
}

/* with_file's step for sps__h5r_counters. */
static int counters_of(rd_t *c, void *p) {
    sps__h5r_counters_t *out = p;
    if (!has_link(c->file, "counters")) return 0;
    hid_t g = group_open(c, c->file, "counters");
    int rc = g < 0 ? SPS_EFORMAT : counter_names_read(c, g, out);
    if (rc == 0) rc = counter_cols_read(c, g, out);
    int64_t dropped = 0;
    if (rc == 0 && attr_int(g, "dropped", &dropped) && dropped > 0)
        out->dropped = (uint64_t)dropped;
    h5_close(&g);
    return rc;
}

int sps__h5r_counters(const char *path, sps__h5r_counters_t *out) {
    if (!out || !path) return fail(SPS_EINVAL, "no file given");
    memset(out, 0, sizeof *out);
    int rc = with_file(path, counters_of, out);
    if (rc) sps__h5r_counters_free(out);
    return rc;
}

/* The recorder's memory values, in the order it writes them (h5_period.c):
 * a file's /values lists them first. */
static const char *const mem_order[] = {"alloc_bytes", "free_bytes", "allocs", "frees",
                                        "peak_bytes"};

static int mem_rank(const char *name) {
    for (int i = 0; i < 5; i++)
        if (strcmp(name, mem_order[i]) == 0) return i;
    return 5;
}

static int value_name_cmp(const void *a, const void *b) {
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int rx = mem_rank(x), ry = mem_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* H5Literate callback: collects the value columns' names (not region,
 * calls, rank, nor a self_ column) into the sps__h5r_values_t. */
static herr_t value_link(hid_t g, const char *name, const H5L_info_t *info, void *p) {
    (void)g;
    (void)info;
    sps__h5r_values_t *out = p;
    if (!strcmp(name, "region") || !strcmp(name, "calls") || !strcmp(name, "rank") ||
        !strcmp(name, "description") || !strncmp(name, "self_", 5))
        return 0;
    char **v = realloc(out->names, (out->nnames + 1) * sizeof *v);
    if (!v) return -1;
    out->names = v;
    if (!(v[out->nnames] = name_copy(name, strlen(name)))) return -1;
    out->nnames++;
    return 0;
}

/* Reads value column `name` (own) or "self_<name>" into dst[i * stride + k]. */
static int value_col_read(rd_t *c, hid_t g, const char *name, size_t n, int64_t *dst,
                          size_t stride, size_t k) {
    int64_t *col = NULL;
    int rc = ints_read(c, g, "values", name, H5T_NATIVE_INT64, n, (void **)&col, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) dst[i * stride + k] = col[i];
    free(col);
    return rc;
}

/* with_file's step for sps__h5r_values. */
static int values_of(rd_t *c, void *p) {
    sps__h5r_values_t *out = p;
    if (!has_link(c->file, "values")) return 0;
    hid_t g = group_open(c, c->file, "values");
    if (g < 0) return SPS_EFORMAT;
    hsize_t n = 0;
    int rc = ints_read(c, g, "values", "calls", H5T_NATIVE_INT64, HSIZE_UNDEF,
                       (void **)&out->calls, &n);
    if (rc == 0) rc = ints_read(c, g, "values", "rank", H5T_NATIVE_INT64, n,
                                (void **)&out->ranks, NULL);
    if (rc == 0 && H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, value_link, out) < 0)
        rc = fail(SPS_EFORMAT, "%s: cannot list /values", c->path);
    if (rc == 0 && out->nnames > 64)
        rc = fail(SPS_EFORMAT, "%s: /values has %zu value columns (at most 64)", c->path,
                  out->nnames);
    if (rc == 0) {
        qsort(out->names, out->nnames, sizeof *out->names, value_name_cmp);
        size_t cells = (size_t)n * out->nnames;
        out->own = calloc(cells ? cells : 1, sizeof *out->own);
        out->self = calloc(cells ? cells : 1, sizeof *out->self);
        out->regions = calloc(n ? n : 1, sizeof *out->regions);
        if (!out->own || !out->self || !out->regions)
            rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    }
    for (size_t k = 0; rc == 0 && k < out->nnames; k++) {
        char self_name[160];
        snprintf(self_name, sizeof self_name, "self_%s", out->names[k]);
        rc = value_col_read(c, g, out->names[k], n, out->own, out->nnames, k);
        if (rc == 0) rc = value_col_read(c, g, self_name, n, out->self, out->nnames, k);
    }
    if (rc == 0 && n) {
        hsize_t m = 0;
        hid_t d = col_open(c, g, "values", "region", C_STR, &m);
        if (d < 0) rc = SPS_EFORMAT;
        else if (m != n)
            rc = fail(SPS_EFORMAT, "%s: /values/region has %llu elements, expected %llu",
                      c->path, (unsigned long long)m, (unsigned long long)n);
        hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
        if (rc == 0 && H5Tis_variable_str(t) > 0) rc = vstr_read(c, d, n, out->regions, "the value rows' regions");
        else if (rc == 0) rc = fstr_read(c, d, n, H5Tget_size(t), out->regions, "the value rows' regions");
        h5_close(&t);
        h5_close(&d);
    }
    if (rc == 0) out->n = n;
    for (hsize_t i = 0; rc == 0 && i < n; i++)
        if (out->calls[i] < 0 || out->ranks[i] < 0 || out->ranks[i] > INT32_MAX)
            rc = fail(SPS_EFORMAT, "%s: /values row %llu has a negative count or a bad rank",
                      c->path, (unsigned long long)i);
    h5_close(&g);
    return rc;
}

void sps__h5r_values_free(sps__h5r_values_t *x) {
    if (!x) return;
    for (size_t i = 0; x->names && i < x->nnames; i++) free(x->names[i]);
    for (size_t i = 0; x->regions && i < x->n; i++) free(x->regions[i]);
    free(x->names);
    free(x->regions);
    free(x->ranks);
    free(x->calls);
    free(x->own);
    free(x->self);
    memset(x, 0, sizeof *x);
}

int sps__h5r_values(const char *path, sps__h5r_values_t *out) {
    if (!out || !path) return fail(SPS_EINVAL, "no file given");
    memset(out, 0, sizeof *out);
    int rc = with_file(path, values_of, out);
    if (rc) sps__h5r_values_free(out);
    return rc;
}

/* ---- /samples ---- */

/* Reads the int64 column /samples/name of want elements into *out. */
static int smp_ints(rd_t *c, hid_t g, const char *name, hsize_t want, int64_t **out,
                    hsize_t *n) {
    return ints_read(c, g, "samples", name, H5T_NATIVE_INT64, want, (void **)out, n);
}

/* Every value of v[0..n) in [lo, hi]; else SPS_EFORMAT naming the column. */
static int smp_range(rd_t *c, const char *name, const int64_t *v, size_t n, int64_t lo,
                     int64_t hi) {
    for (size_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi)
            return fail(SPS_EFORMAT, "%s: /samples/%s[%zu] = %lld is outside [%lld, %lld]",
                        c->path, name, i, (long long)v[i], (long long)lo, (long long)hi);
    return 0;
}

static int samples_of(rd_t *c, void *p) {
    sps__h5r_samples_t *out = p;
    if (!has_link(c->file, "samples")) return 0;
    hid_t g = group_open(c, c->file, "samples");
    if (g < 0) return SPS_EFORMAT;
    hsize_t n = 0, ns = 0, nf = 0, nst = 0, nn = 0;
    int rc = smp_ints(c, g, "times_ns", HSIZE_UNDEF, &out->times_ns, &n);
    static const char *const cols[] = {"threads", "tids", "ranks", "regions", "call_ids",
                                       "stacks", "weights"};
    int64_t **dst[] = {&out->threads, &out->tids, &out->ranks, &out->regions, &out->call_ids,
                       &out->stacks, &out->weights};
    for (size_t i = 0; rc == 0 && i < 7; i++) rc = smp_ints(c, g, cols[i], n, dst[i], NULL);
    if (rc == 0) rc = smp_ints(c, g, "stack_offsets", HSIZE_UNDEF, &out->stack_offsets, &ns);
    if (rc == 0 && ns < 1) rc = fail(SPS_EFORMAT, "%s: /samples/stack_offsets is empty", c->path);
    if (rc == 0) rc = smp_ints(c, g, "stack_frames", HSIZE_UNDEF, &out->stack_frames, &nst);
    if (rc == 0) rc = strs_read(c, g, "samples", "frame_functions", HSIZE_UNDEF, &out->functions, &nf);
    if (rc == 0) out->nframes = nf; /* so that the free function frees them */
    if (rc == 0) rc = strs_read(c, g, "samples", "frame_files", nf, &out->files, &nn);
    if (rc == 0) rc = strs_read(c, g, "samples", "frame_modules", nf, &out->modules, &nn);
    if (rc == 0) rc = smp_ints(c, g, "frame_lines", nf, &out->lines, NULL);
    if (rc == 0) rc = smp_ints(c, g, "frame_kinds", nf, &out->kinds, NULL);
    if (rc == 0) rc = smp_ints(c, g, "frame_addresses", nf, &out->addresses, NULL);
    if (rc == 0) { /* the counts set only now: the free function frees what is read */
        out->n = n;
        out->nstacks = ns - 1;
        out->nframes = nf;
    }
    if (rc == 0 && has_link(c->file, "region_table")) {
        hid_t rt = group_open(c, c->file, "region_table");
        hsize_t k = 0;
        rc = rt < 0 ? SPS_EFORMAT : strs_read(c, rt, "region_table", "names", HSIZE_UNDEF,
                                              &out->names, &k);
        if (rc == 0) out->nnames = k;
        h5_close(&rt);
    }
    /* the indexes, checked once here so that no view checks them again */
    if (rc == 0) rc = smp_range(c, "regions", out->regions, n, -1, (int64_t)out->nnames - 1);
    if (rc == 0) rc = smp_range(c, "stacks", out->stacks, n, 0, (int64_t)ns - 2);
    if (rc == 0) rc = smp_range(c, "weights", out->weights, n, 1, INT32_MAX);
    if (rc == 0) rc = smp_range(c, "ranks", out->ranks, n, 0, INT32_MAX);
    if (rc == 0) rc = smp_range(c, "threads", out->threads, n, -1, INT32_MAX);
    if (rc == 0) rc = smp_range(c, "stack_offsets", out->stack_offsets, ns, 0, (int64_t)nst);
    for (hsize_t i = 1; rc == 0 && i < ns; i++)
        if (out->stack_offsets[i] < out->stack_offsets[i - 1])
            rc = fail(SPS_EFORMAT, "%s: /samples/stack_offsets fall at %llu", c->path,
                      (unsigned long long)i);
    if (rc == 0 && (hsize_t)out->stack_offsets[ns - 1] != nst)
        rc = fail(SPS_EFORMAT, "%s: /samples/stack_offsets ends at %lld, not at the %llu "
                  "stack frames", c->path, (long long)out->stack_offsets[ns - 1],
                  (unsigned long long)nst);
    if (rc == 0) rc = smp_range(c, "stack_frames", out->stack_frames, nst, 0, (int64_t)nf - 1);
    if (rc == 0) rc = smp_range(c, "frame_kinds", out->kinds, nf, 0, 1);
    int64_t v = 0;
    if (rc == 0 && attr_int(g, "hz", &v)) out->hz = v;
    if (rc == 0 && attr_int(g, "lost", &v)) out->lost = v;
    h5_close(&g);
    return rc;
}

int sps__h5r_samples(const char *path, sps__h5r_samples_t *out) {
    if (!out || !path) return fail(SPS_EINVAL, "no file given");
    memset(out, 0, sizeof *out);
    int rc = with_file(path, samples_of, out);
    if (rc) sps__h5r_samples_free(out);
    return rc;
}

void sps__h5r_samples_free(sps__h5r_samples_t *x) {
    if (!x) return;
    int64_t *cols[] = {x->times_ns, x->threads, x->tids, x->ranks, x->regions, x->call_ids,
                       x->stacks, x->weights, x->stack_offsets, x->stack_frames, x->lines,
                       x->kinds, x->addresses};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) free(cols[i]);
    strs_free(x->functions, x->nframes);
    strs_free(x->files, x->nframes);
    strs_free(x->modules, x->nframes);
    strs_free(x->names, x->nnames);
    memset(x, 0, sizeof *x);
}

/* with_file's step for sps__h5r_metadata. */
static int metadata_of(rd_t *c, void *out) { return metadata_read(c, out); }

int sps__h5r_metadata(const char *path, sps__h5r_meta_t *out) {
    if (!out) return fail(SPS_EINVAL, "no file given");
    memset(out, 0, sizeof *out);
    if (!path) return fail(SPS_EINVAL, "no file given");
    sps__err_clear();
    int rc = with_file(path, metadata_of, out);
    if (rc) sps__h5r_meta_free(out);
    return rc;
}

/* ---- /device (CUDA activity) ---- */

/* Every value of column name (v[0..n), rows where pick is set, or all when
 * pick is 0) in [lo, hi]; else SPS_EFORMAT naming the column and row. */
static int dev_range(rd_t *c, const char *name, const int64_t *v, size_t n, int64_t lo,
                     int64_t hi, const int64_t *kinds, int device_rows) {
    for (size_t i = 0; i < n; i++) {
        if (kinds && (kinds[i] <= SPS__DEV_MEMSET) != device_rows) continue;
        if (v[i] < lo || v[i] > hi)
            return fail(SPS_EFORMAT, "%s: /device/%s[%zu] = %lld is outside [%lld, %lld]",
                        c->path, name, i, (long long)v[i], (long long)lo, (long long)hi);
    }
    return 0;
}

/* with_file's step for sps__h5r_device. */
static int device_of(rd_t *c, void *p) {
    sps__h5r_device_t *out = p;
    if (!has_link(c->file, "device")) return 0;
    hid_t g = group_open(c, c->file, "device");
    if (g < 0) return SPS_EFORMAT;
    out->present = 1;
    hsize_t n = 0, nn = 0, k = 0;
    int rc = ints_read(c, g, "device", "kinds", H5T_NATIVE_INT64, HSIZE_UNDEF,
                       (void **)&out->kinds, &n);
    static const char *const need[] = {"names_idx", "devices", "streams", "correlations",
                                       "starts_ns", "ends_ns", "ranks", "threads", "tids",
                                       "regions", "call_ids"};
    int64_t **nd[] = {&out->names_idx, &out->devices, &out->streams, &out->correlations,
                      &out->starts_ns, &out->ends_ns, &out->ranks, &out->threads,
                      &out->tids, &out->regions, &out->call_ids};
    for (size_t i = 0; rc == 0 && i < sizeof need / sizeof need[0]; i++)
        rc = ints_read(c, g, "device", need[i], H5T_NATIVE_INT64, n, (void **)nd[i], NULL);
    static const char *const opt[] = {"contexts", "bytes", "grid_x", "grid_y", "grid_z",
                                      "block_x", "block_y", "block_z", "copy_kinds",
                                      "src_kinds", "dst_kinds"};
    int64_t **od[] = {&out->contexts, &out->bytes, &out->grid_x, &out->grid_y, &out->grid_z,
                      &out->block_x, &out->block_y, &out->block_z, &out->copy_kinds,
                      &out->src_kinds, &out->dst_kinds};
    for (size_t i = 0; rc == 0 && i < sizeof opt / sizeof opt[0]; i++) {
        rc = ints_read_opt(c, g, "device", opt[i], H5T_NATIVE_INT64, n, (void **)od[i]);
        if (rc == 0 && !*od[i] && !(*od[i] = calloc(n ? n : 1, sizeof **od[i])))
            rc = fail(SPS_ENOMEM, "%s: out of memory", c->path);
    }
    /* CUPTI's callback ids: optional, left NULL when absent (older files) */
    if (rc == 0)
        rc = ints_read_opt(c, g, "device", "cbids", H5T_NATIVE_INT64, n, (void **)&out->cbids);
    if (rc == 0) rc = strs_read(c, g, "device", "names", HSIZE_UNDEF, &out->names, &nn);
    if (rc == 0) out->nnames = nn;
    if (rc == 0) out->n = n; /* the free function frees what is read */
    if (rc == 0 && has_link(c->file, "region_table")) {
        hid_t rt = group_open(c, c->file, "region_table");
        rc = rt < 0 ? SPS_EFORMAT : strs_read(c, rt, "region_table", "names", HSIZE_UNDEF,
                                              &out->region_names, &k);
        if (rc == 0) out->nregion_names = k;
        h5_close(&rt);
    }
    /* every index and kind, checked once here */
    size_t m = (size_t)n;
    if (rc == 0) rc = dev_range(c, "kinds", out->kinds, m, 1, 5, NULL, 0);
    if (rc == 0) rc = dev_range(c, "names_idx", out->names_idx, m, 0, (int64_t)nn - 1, NULL, 0);
    if (rc == 0)
        rc = dev_range(c, "devices", out->devices, m, 0, SPS__DEV_MAX_DEVICE, out->kinds, 1);
    if (rc == 0) rc = dev_range(c, "streams", out->streams, m, 0, UINT32_MAX, out->kinds, 1);
    if (rc == 0) rc = dev_range(c, "correlations", out->correlations, m, 0, INT64_MAX, NULL, 0);
    if (rc == 0) rc = dev_range(c, "ranks", out->ranks, m, 0, INT32_MAX, NULL, 0);
    if (rc == 0) rc = dev_range(c, "threads", out->threads, m, -1, INT32_MAX, NULL, 0);
    if (rc == 0)
        rc = dev_range(c, "regions", out->regions, m, -1, (int64_t)out->nregion_names - 1,
                       NULL, 0);
    if (rc == 0) rc = dev_range(c, "call_ids", out->call_ids, m, -1, INT64_MAX, NULL, 0);
    if (rc == 0) rc = dev_range(c, "bytes", out->bytes, m, 0, INT64_MAX, NULL, 0);
    if (rc == 0 && out->cbids)
        rc = dev_range(c, "cbids", out->cbids, m, 0, UINT32_MAX, NULL, 0);
    const char *dims[] = {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"};
    int64_t *dimv[] = {out->grid_x, out->grid_y, out->grid_z,
                       out->block_x, out->block_y, out->block_z};
    for (size_t i = 0; rc == 0 && i < 6; i++)
        rc = dev_range(c, dims[i], dimv[i], m, 0, UINT32_MAX, NULL, 0);
    for (size_t i = 0; rc == 0 && i < m; i++)
        if (out->ends_ns[i] < out->starts_ns[i])
            rc = fail(SPS_EFORMAT, "%s: /device row %zu ends (%lld) before it starts (%lld)",
                      c->path, i, (long long)out->ends_ns[i], (long long)out->starts_ns[i]);
    int64_t v = 0;
    if (rc == 0 && attr_int(g, "dropped", &v)) out->dropped = v;
    if (rc == 0 && attr_int(g, "cupti_version", &v)) out->cupti_version = v;
    if (rc == 0 && !attr_str(g, "collector", out->collector, sizeof out->collector))
        out->collector[0] = 0;
    if (rc == 0 && !attr_str(g, "clock", out->clock, sizeof out->clock)) out->clock[0] = 0;
    if (rc == 0 && !attr_str(g, "description", out->description, sizeof out->description))
        out->description[0] = 0;
    /* attributes are text for a message or a page: whole UTF-8 only */
    char *texts[] = {out->collector, out->clock, out->description};
    for (size_t i = 0; rc == 0 && i < 3; i++)
        if (!sps__utf8_valid(texts[i], strlen(texts[i]))) texts[i][0] = 0;
    h5_close(&g);
    return rc;
}

int sps__h5r_device(const char *path, sps__h5r_device_t *out) {
    if (!out) return fail(SPS_EINVAL, "no file given");
    memset(out, 0, sizeof *out);
    if (!path) return fail(SPS_EINVAL, "no file given");
    int rc = with_file(path, device_of, out);
    if (rc) sps__h5r_device_free(out);
    return rc;
}

void sps__h5r_device_free(sps__h5r_device_t *x) {
    if (!x) return;
    int64_t *cols[] = {x->kinds, x->names_idx, x->devices, x->contexts, x->streams,
                       x->correlations, x->starts_ns, x->ends_ns, x->bytes, x->ranks,
                       x->threads, x->tids, x->regions, x->call_ids, x->grid_x, x->grid_y,
                       x->grid_z, x->block_x, x->block_y, x->block_z, x->copy_kinds,
                       x->src_kinds, x->dst_kinds, x->cbids};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) free(cols[i]);
    strs_free(x->names, x->nnames);
    strs_free(x->region_names, x->nregion_names);
    memset(x, 0, sizeof *x);
}
