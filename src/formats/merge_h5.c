/*
 * merge_h5.c -- sps_merge's .h5 output (merge.h): .h5 inputs into one
 * scope-profiler schema-3 file.
 *
 * Each input is streamed in blocks from sps__h5r_open_index when it has
 * call_ids and parent_ids (and stores its exclusive totals), else read
 * whole with sps__h5r_open to invent the ids from its nesting.  Output:
 * rows per (region, rank) over a merged region table, start deltas
 * recomputed after the clock shift, call/parent/thread ids kept (ids are
 * per rank), /counters of every input with its rank and shift, /samples
 * of every input (hmerge_samples: its rank, its shift, its stacks and
 * frames appended to the merged tables, its regions in the merged region
 * table), /device of every input (hmerge_device), /events/gpu_durations
 * moved with their events and the rows' gpu_count / gpu_total from them
 * (hmerge_gpu), /metadata
 * from the lowest rank with mpi_size = number of inputs.  No
 * /thread_table: the writer's table has one rank for all of its threads.
 *
 * Which rank each input is and how far its times move come from
 * model/align.c; this file reads the facts and applies the shifts.
 */
#include "formats/h5_device.h"
#include "formats/h5_read.h"
#include "formats/merge.h"
#include "model/align.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Events per sps__h5w_rows call (and per block read when streaming). */
#define H5_BATCH 65536

int sps__h5_quietly(int (*fn)(void *arg), void *arg) {
    sps__h5_quiet_t q; /* the one switch of HDF5's printing (h5_read.h) */
    sps__h5_quiet_begin(&q);
    return sps__h5_quiet_end(&q, fn(arg));
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */
/* ------------------------------------------------------------------------ */

/* One input and its state during the merge. */
typedef struct hin {
    const char *path;
    sps__h5r_t *h5;        /* index only (streamed), or whole (fallback) */
    sps__h5r_meta_t m;     /* its /metadata, taken over from h5 (owned) */
    int64_t *held;         /* the ranks of its rows: its rank facts (owned) */
    uint32_t *region_map;  /* input region id -> output region id */
    sps__h5r_samples_t smp; /* its /samples (the one checked reader's; owned) */
    int64_t *smp_region;   /* its sample names -> output region id */
    sps__h5r_device_t dev; /* its /device (the one checked reader's; owned) */
    int64_t *dev_region;   /* its device rows' region names -> output region id */
    int64_t gpu_d;         /* a streamed input's /events/gpu_durations (HDF5
                              dataset id), -1: none or a whole input */
    int has_gpu;           /* it has /events/gpu_durations */
    int64_t rank, offset;  /* from the alignment (write) */
    sps__align_t al;       /* the whole alignment: offset and drift (write) */
    sps__part_plan_t plan; /* its /part_plan (a rank's part), when has_plan */
    int has_plan;
    int64_t cd[5];         /* its event columns while its chunks are copied */
    int cd_state;          /* 0 not opened, 1 stored as the output's, -1 not */
    int released;          /* its reader's file closed after open (sps__h5r_release) */
    unsigned has;          /* HAS_*: the groups it has beside the spans (seen at open) */
    /* where the chunks it owns lie in its file, noted at open (chunks_note):
     * chunk ck0 + j, column c at addr[5 j + c], size[5 j + c] bytes (0: not
     * stored as the output's), filter mask mask[5 j + c]; nck 0: none noted */
    uint64_t ck0, nck;
    uint64_t *caddr;
    uint32_t *csize, *cmask;
    int fd;                /* its file, read with pread while its chunks are copied */
} hin_t;

/* What an input has that the merge reads by name later (hin_t's has):
 * an input without it is not opened again for it. */
#define HAS_VALUES 1u
#define HAS_COUNTERS 2u
#define HAS_RANK_GROUPS 4u

/* The input's time *t on the output's clock (sps__shift_at: its offset,
 * and its drift when it has one).  0 or -1 (leaves int64). */
static int hshift(const hin_t *x, int64_t *t) { return sps__shift_at(t, &x->al); }

/* A duration d starting at the input's (unshifted) time st, on the
 * output's clock: d itself for a constant shift, else the shifted end
 * minus the shifted start (a drift of b stretches it by b d).  The
 * caller has checked that both ends shift (the statistics pass). */
static int64_t hdur(const hin_t *x, int64_t st, int64_t d) {
    if (x->al.drift == 0 || d <= 0) return d;
    int64_t a = st, b;
    if (__builtin_add_overflow(st, d, &b) || hshift(x, &a) || hshift(x, &b)) return d;
    return b > a ? b - a : 0;
}

/* One output row: which input row it copies. */
typedef struct orow {
    uint32_t input, row;
} orow_t;

/* The merge: its inputs and what it builds. */
typedef struct hmerge {
    hin_t *in;
    size_t n;
    const char *out;       /* the output's name (messages) */
    int ref;               /* the reference input, -1 none */
    sps__strtab_t names;
    orow_t *src;           /* by output row */
    sps__row_t *rows;      /* by output row */
    size_t nrows;
    uint64_t nevents;
    int64_t *col[5];       /* batch: deltas, durations, call, parent, thread */
    int64_t *st;           /* batch: raw first column (streamed inputs) */
    sps__pline_t line;     /* progress of a long merge (progress.c) */
    uint64_t done;         /* events written */
    int64_t *gpu;          /* by output event: /events/gpu_durations (-1
                              none); NULL when no input has the column */
    sps__merge_opts_t *opts; /* the caller's (may be NULL) */
    int part;              /* writing a rank's part (opts->part) */
    int copy;              /* copying the parts' chunks (copy_check) */
    uint64_t pad;          /* rows before the first input's (part) */
    uint64_t copied, rewritten; /* chunks (copy) */
    unsigned char *zbuf;   /* a compressed chunk being copied */
    size_t zcap;
} hmerge_t;

/* The kind's free: closes every input, frees st (an hmerge_t). */
static void h5_free(void *st) {
    hmerge_t *h = st;
    if (!h) return;
    for (size_t i = 0; h->in && i < h->n; i++) {
        sps__h5r_free(h->in[i].h5);
        sps__h5r_meta_free(&h->in[i].m);
        free(h->in[i].held);
        free(h->in[i].region_map);
        sps__h5r_samples_free(&h->in[i].smp);
        free(h->in[i].smp_region);
        sps__h5r_device_free(&h->in[i].dev);
        free(h->in[i].dev_region);
        sps__h5_close(&h->in[i].gpu_d);
        for (int c = 0; c < 5; c++) sps__h5_close(&h->in[i].cd[c]);
        free(h->in[i].caddr), free(h->in[i].csize), free(h->in[i].cmask);
        if (h->in[i].fd >= 0) close(h->in[i].fd);
    }
    free(h->zbuf);
    free(h->gpu);
    free(h->in);
    sps__strtab_free(&h->names);
    free(h->src);
    free(h->rows);
    for (int k = 0; k < 5; k++) free(h->col[k]);
    free(h->st);
    free(h);
}

/* The kind's create: an hmerge_t for n inputs in *st.  0 or SPS_ENOMEM. */
static int h5_create(void **st, size_t n, sps__merge_opts_t *opts) {
    hmerge_t *h = calloc(1, sizeof *h);
    if (h) h->in = calloc(n, sizeof *h->in);
    if (!h || !h->in) {
        free(h);
        *st = NULL;
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    }
    h->n = n;
    h->ref = -1;
    h->opts = opts;
    for (size_t i = 0; i < n; i++) {
        h->in[i].gpu_d = H5I_INVALID_HID;
        h->in[i].fd = -1;
        for (int c = 0; c < 5; c++) h->in[i].cd[c] = H5I_INVALID_HID;
    }
    *st = h;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Opening an input: its reader and its facts                                */
/* ------------------------------------------------------------------------ */

/* Non-zero when every row of r stores its exclusive total (spanscope's
 * files do): a streamed merge copies them, since merging does not change
 * any call's children. */
static int has_excl(const sps__h5r_t *r) {
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].exclusive_total < 0) return 0;
    return 1;
}

/* The most rows of /clock_sync read (one per collective finalize of a
 * session; more means a damaged or hostile file). */
#define CLOCK_SYNC_MAX 1000000

/* Reads column name of /clock_sync (n rows) of the open file into v.
 * 0 or -1. */
static int sync_col(hid_t g, const char *name, int64_t *v, hsize_t n) {
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t dims[1] = {0};
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) == 1 && dims[0] == n;
    if (ok) {
        hid_t t = H5Dget_type(d);
        ok = t >= 0 && H5Tget_class(t) == H5T_INTEGER;
        if (t >= 0) H5Tclose(t);
    }
    if (ok && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl(n * 8), v) < 0)
        ok = 0;
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    return ok ? 0 : -1;
}

/* The drift facts of the file at path (docs/mpi.md, "Clock alignment"):
 * its /clock_sync measurements (t_ns, offset_ns, error_ns: the MPI
 * integration's ping-pongs with rank 0 over the session) fitted by
 * sps__clock_fit into f's has_drift line, the fit's bound becoming the
 * offset's error bound.  A file without the table keeps its constant
 * offset (files written before drift was tracked); so does one whose
 * table is malformed (sizes, types, negative errors, an implausible
 * slope), which is not worth failing a merge for: the table is extra
 * data beside the offset the file has always had. */
void sps__h5_clock_drift(const char *path, sps__clock_facts_t *f) {
    if (!f->has_offset) return;
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    hid_t file = (hid_t)sps__h5_fopen(path, H5F_ACC_RDONLY);
    hid_t g = file >= 0 && H5Lexists(file, "clock_sync", H5P_DEFAULT) > 0
                  ? H5Gopen2(file, "clock_sync", H5P_DEFAULT)
                  : H5I_INVALID_HID;
    hid_t d = g >= 0 ? H5Dopen2(g, "t_ns", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t n = 0;
    if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
        H5Sget_simple_extent_dims(sp, &n, NULL) != 1 || n > CLOCK_SYNC_MAX)
        n = 0;
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    int64_t *col = n ? malloc(3 * n * sizeof *col) : NULL;
    sps__clock_sample_t *smp = n ? malloc(n * sizeof *smp) : NULL;
    sps__clock_fit_t fit;
    if (col && smp && !sync_col(g, "t_ns", col, n) && !sync_col(g, "offset_ns", col + n, n) &&
        !sync_col(g, "error_ns", col + 2 * n, n)) {
        for (hsize_t i = 0; i < n; i++)
            smp[i] = (sps__clock_sample_t){col[i], col[n + i], col[2 * n + i]};
        if (sps__clock_fit(smp, (size_t)n, &fit) == 0) {
            f->has_drift = 1;
            f->drift_t0 = fit.t0, f->drift_off0 = fit.off0;
            f->drift_t1 = fit.t1, f->drift_off1 = fit.off1;
            f->has_offset_error = 1;
            f->offset_error_ns = fit.error;
        }
    }
    free(col), free(smp);
    if (g >= 0) H5Gclose(g);
    if (file >= 0) H5Fclose(file);
    sps__h5_quiet_end(&q, 0);
}

/* The number of rows of dataset name under g (a 1-D integer column of
 * at most max rows), -1 when there is none such. */
static int64_t col_rows(hid_t g, const char *name, hsize_t max) {
    if (H5Lexists(g, name, H5P_DEFAULT) <= 0) return -1;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t n = 0;
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, &n, NULL) == 1 && n <= max;
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    return ok ? (int64_t)n : -1;
}

/* What sps__mpi_clock_print reads: /mpi_clock's columns (cols[k] NULL
 * when the file lacks column k) and /clock_sync's fit. */
#define MC_COLS 9
static const char *const mc_names[MC_COLS] = {
    "rank", "clock_offset_ns", "clock_offset_error_ns", "clock_samples",
    "clock_fit_t0_ns", "clock_fit_offset0_ns", "clock_fit_t1_ns",
    "clock_fit_offset1_ns", "clock_alignment_error_ns"};

typedef struct mclock {
    int64_t nrows;           /* /mpi_clock rows, -1: no table */
    int64_t *cols[MC_COLS];
    int64_t nsync;           /* /clock_sync rows, -1: no table */
    int fitted;              /* its fit succeeded */
    sps__clock_fit_t fit;
} mclock_t;

/* Reads path's /mpi_clock and /clock_sync into *c (sps__h5_quietly). */
typedef struct mclock_job {
    const char *path;
    mclock_t *c;
} mclock_job_t;

static int mclock_read(void *arg) {
    const mclock_job_t *j = arg;
    mclock_t *c = j->c;
    hid_t f = (hid_t)sps__h5_fopen(j->path, H5F_ACC_RDONLY);
    if (f < 0) return sps__err_fail(SPS_EIO, "%s: cannot open", j->path);
    int rc = 0;
    if (H5Lexists(f, "mpi_clock", H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(f, "mpi_clock", H5P_DEFAULT);
        c->nrows = g >= 0 ? col_rows(g, "rank", 1u << 24) : -1;
        /* the three columns every /mpi_clock has, then the drift's (all
         * or none) */
        for (int k = 0; rc == 0 && c->nrows >= 0 && k < MC_COLS; k++) {
            int64_t n = col_rows(g, mc_names[k], 1u << 24);
            if (n < 0 && k >= 3) continue;
            if (n != c->nrows ||
                !(c->cols[k] = malloc(((size_t)n + 1) * sizeof(int64_t))) ||
                sync_col(g, mc_names[k], c->cols[k], (hsize_t)n))
                rc = sps__err_fail(SPS_EFORMAT, "%s: /mpi_clock: column %s unreadable "
                                   "or of another length than rank", j->path, mc_names[k]);
        }
        if (c->nrows < 0) rc = sps__err_fail(SPS_EFORMAT, "%s: /mpi_clock has no rank column",
                                             j->path);
        for (int k = 4; rc == 0 && k < MC_COLS; k++)
            if (!c->cols[k] != !c->cols[3])
                rc = sps__err_fail(SPS_EFORMAT, "%s: /mpi_clock: %s without %s", j->path,
                                   c->cols[3] ? mc_names[3] : mc_names[k],
                                   c->cols[3] ? mc_names[k] : mc_names[3]);
        if (g >= 0) H5Gclose(g);
    }
    H5Fclose(f);
    if (rc == 0) {
        sps__clock_facts_t fx = {0};
        fx.has_offset = 1;
        sps__h5_clock_drift(j->path, &fx);
        c->fitted = fx.has_drift;
        c->fit = (sps__clock_fit_t){0, fx.drift_t0, fx.drift_off0, fx.drift_t1, fx.drift_off1,
                                    fx.offset_error_ns};
    }
    return rc;
}

/* The drift in ppm of a line from (t0, o0) to (t1, o1) (0 when flat). */
static double ppm_of(int64_t t0, int64_t o0, int64_t t1, int64_t o1) {
    int64_t dt = sps__wrap_sub(t1, t0);
    return dt > 0 ? 1e6 * (double)sps__wrap_sub(o1, o0) / (double)dt : 0.0;
}

int sps__mpi_clock_print(FILE *fp, const char *path) {
    mclock_t c = {.nrows = -1, .nsync = -1};
    mclock_job_t j = {path, &c};
    int rc = sps__h5_quietly(mclock_read, &j);
    if (rc == 0 && c.fitted)
        fprintf(fp, "clock_sync this rank's clock against rank 0's: offset %lld ns, drift "
                    "%+.3f ppm over %.3f s, alignment error %lld ns\n",
                (long long)c.fit.off0, ppm_of(c.fit.t0, c.fit.off0, c.fit.t1, c.fit.off1),
                (double)sps__wrap_sub(c.fit.t1, c.fit.t0) / 1e9, (long long)c.fit.error);
    if (rc == 0 && c.nrows >= 0) {
        fprintf(fp, "mpi_clock  %lld rank%s onto rank 0's clock\n"
                    "  rank   offset at setup   error at setup   drift (ppm)  measured  "
                    "alignment error\n",
                (long long)c.nrows, c.nrows == 1 ? "" : "s");
        for (int64_t i = 0; i < c.nrows; i++) {
            fprintf(fp, "  %4lld  %13lld ns  %12lld ns", (long long)c.cols[0][i],
                    (long long)c.cols[1][i], (long long)c.cols[2][i]);
            if (c.cols[3] && c.cols[3][i] > 0)
                fprintf(fp, "  %+12.3f  %8lld  %12lld ns\n",
                        ppm_of(c.cols[4][i], c.cols[5][i], c.cols[6][i], c.cols[7][i]),
                        (long long)c.cols[3][i], (long long)c.cols[8][i]);
            else /* an older file, or no fit: the constant offset of setup */
                fprintf(fp, "  %12s  %8s  %12lld ns\n", "-", "1", (long long)c.cols[2][i]);
        }
    }
    for (int k = 0; k < MC_COLS; k++) free(c.cols[k]);
    return rc;
}

/* Fills f from x's /metadata and rows: rank (named by /metadata, the
 * rows' ranks held), anchors, host and MPI offset (without its drift:
 * h5_facts).  Returns 0 or SPS_ENOMEM (message set). */
static int facts_of(hin_t *x, sps__align_in_t *f) {
    const sps__h5r_t *r = x->h5;
    const sps__h5r_meta_t *m = &x->m;
    if (!(x->held = malloc((r->nrows + 1) * sizeof *x->held)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->nrows; i++) x->held[i] = r->rows[i].rank;
    f->rank = (sps__rank_facts_t){m->has_rank ? m->rank : -1, x->held, r->nrows, 0};
    f->clock = (sps__clock_facts_t){
        m->has_anchor, m->wall_anchor_ns, m->mono_anchor_ns,
        m->hostname ? m->hostname : "",
        m->has_clock_offset, m->clock_offset_ns,
        m->has_clock_offset_error, m->clock_offset_error_ns, 0, 0, 0, 0, 0};
    return 0;
}

/* facts_of, and the MPI offset's drift from the file's /clock_sync. */
static int h5_facts(hin_t *x, sps__align_in_t *f) {
    int rc = facts_of(x, f);
    if (rc == 0) sps__h5_clock_drift(x->path, &f->clock);
    return rc;
}

/* Non-zero when input x is streamed (opened by index, not read whole). */
static int streamed(const hin_t *x) { return x->h5->start == NULL; }

/* Finds input x's /events/gpu_durations (per event: the device time of
 * what the span launched, -1 none; docs/device.md): a whole input's
 * reader has it read already; a streamed input's is opened here, a 1-D
 * integer column of one value per event, read row by row later
 * (gpu_slice).  0, or SPS_EFORMAT naming the file. */
static int gpu_open(hin_t *x) {
    const sps__h5r_t *r = x->h5;
    if (!streamed(x)) {
        x->has_gpu = r->gpu_dur != NULL;
        return 0;
    }
    hid_t f = (hid_t)r->h_file;
    if (f < 0 || H5Lexists(f, "events", H5P_DEFAULT) <= 0 ||
        H5Lexists(f, "events/gpu_durations", H5P_DEFAULT) <= 0)
        return 0;
    hid_t d = H5Dopen2(f, "events/gpu_durations", H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hid_t t = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    hsize_t dims[1] = {0};
    int ok = sp >= 0 && t >= 0 && H5Tget_class(t) == H5T_INTEGER &&
             H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) == 1 && dims[0] == r->nevents;
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (!ok) {
        if (d >= 0) H5Dclose(d);
        return sps__err_fail(SPS_EFORMAT, "%s: /events/gpu_durations is not one integer per "
                             "event (%llu events)", x->path, (unsigned long long)r->nevents);
    }
    x->gpu_d = d;
    x->has_gpu = 1;
    return 0;
}

/* Reads n values of input x's gpu_durations from event first into out
 * (-1 each when x has none).  0, or SPS_EFORMAT naming the file. */
static int gpu_slice(const hin_t *x, uint64_t first, size_t n, int64_t *out) {
    if (!x->has_gpu) {
        for (size_t i = 0; i < n; i++) out[i] = -1;
        return 0;
    }
    if (!streamed(x)) {
        memcpy(out, x->h5->gpu_dur + first, n * sizeof *out);
        return 0;
    }
    if (!n) return 0;
    hsize_t start[1] = {first}, count[1] = {n};
    hid_t fs = H5Dget_space((hid_t)x->gpu_d);
    hid_t ms = H5Screate_simple(1, count, NULL);
    int ok = fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread((hid_t)x->gpu_d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, out) >= 0;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return ok ? 0 : sps__err_fail(SPS_EFORMAT, "%s: cannot read /events/gpu_durations",
                                  x->path);
}

/* H5Literate callback: sets HAS_RANK_GROUPS for a root link named
 * "rank" and digits (what sps__h5_copy_rank_groups copies). */
static herr_t rank_link(hid_t g, const char *name, const H5L_info_t *info, void *op) {
    (void)g, (void)info;
    if (strncmp(name, "rank", 4) || !name[4] || strspn(name + 4, "0123456789") != strlen(name + 4))
        return 0;
    *(unsigned *)op |= HAS_RANK_GROUPS;
    return 1;
}

/* The HAS_* groups of the open file f (all of them when f is not open: the
 * later readers then look for themselves). */
static unsigned has_groups(hid_t f) {
    if (f < 0) return HAS_VALUES | HAS_COUNTERS | HAS_RANK_GROUPS;
    unsigned has = 0;
    if (H5Lexists(f, "values", H5P_DEFAULT) > 0) has |= HAS_VALUES;
    if (H5Lexists(f, "counters", H5P_DEFAULT) > 0) has |= HAS_COUNTERS;
    if (H5Literate(f, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, rank_link, &has) < 0)
        has |= HAS_RANK_GROUPS;
    return has;
}

/* The event columns of a part, in sps__h5w_chunk_raw's column order. */
static const char *const part_cols[5] = {"events/start_deltas", "events/durations",
                                         "events/call_ids", "events/parent_ids",
                                         "events/thread_ids"};

static int chunk_same(hid_t d, hsize_t ch);

/* Notes where the chunks that part x owns (those starting within its
 * events, on the grid of SPS__H5_CHUNK rows) lie in its file, while the
 * file is open: the copy then reads them with pread, without opening the
 * file with libhdf5 again (a released part).  Leaves nck 0 when anything
 * is off (the copy then goes through libhdf5). */
static void chunks_note(hin_t *x) {
    const sps__part_plan_t *p = &x->plan;
    const uint64_t ch = SPS__H5_CHUNK;
    if (!p->events) return;
    uint64_t k0 = (p->base + ch - 1) / ch, k1 = (p->base + p->events + ch - 1) / ch;
    if (k1 <= k0) return;
    uint64_t n = k1 - k0, kin0 = k0 - (p->base - p->pad) / ch;
    x->caddr = malloc(5 * n * sizeof *x->caddr);
    x->csize = calloc(5 * n, sizeof *x->csize);
    x->cmask = calloc(5 * n, sizeof *x->cmask);
    int ok = x->caddr && x->csize && x->cmask;
    for (int c = 0; ok && c < 5; c++) {
        hid_t d = H5Dopen2((hid_t)x->h5->h_file, part_cols[c], H5P_DEFAULT);
        ok = d >= 0 && chunk_same(d, ch);
        for (uint64_t j = 0; ok && j < n; j++) {
            hsize_t off[1] = {(kin0 + j) * ch}, size = 0;
            haddr_t addr = HADDR_UNDEF;
            unsigned mask = 0;
            if (H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) < 0 ||
                addr == HADDR_UNDEF || size > UINT32_MAX)
                size = 0; /* not stored: read and written again */
            x->caddr[5 * j + c] = (uint64_t)addr;
            x->csize[5 * j + c] = (uint32_t)size;
            x->cmask[5 * j + c] = mask;
        }
        if (d >= 0) H5Dclose(d);
    }
    if (ok) x->ck0 = k0, x->nck = n;
}

/* ------------------------------------------------------------------------ */
/* A part's index as a message (sps__part_index_msg)                         */
/* ------------------------------------------------------------------------ */

/* The message: u64 the index's length, the reader's index
 * (sps__h5r_index_put, with the part's /metadata), then what h5_open
 * found of the part beside it: MSG_HEAD u64 (has, the plan's five fields,
 * ck0, nck), nck x 5 chunk addresses (u64), sizes and masks (u32), and
 * the clock facts the drift read gave (MSG_CLOCK int64). */
#define MSG_HEAD 8
#define MSG_CLOCK 9
#define MSG_PER_CHUNK (5 * (sizeof(uint64_t) + 2 * sizeof(uint32_t)))

/* The clock facts h5_facts' drift read sets, in the message's order. */
static void clock_fields(sps__clock_facts_t *k, int64_t v[MSG_CLOCK], int put) {
    int64_t *f[MSG_CLOCK] = {NULL, &k->offset_ns, NULL, &k->offset_error_ns, NULL,
                             &k->drift_t0, &k->drift_off0, &k->drift_t1, &k->drift_off1};
    int *flag[MSG_CLOCK] = {&k->has_offset, NULL, &k->has_offset_error, NULL, &k->has_drift};
    for (int i = 0; i < MSG_CLOCK; i++) {
        if (put) v[i] = f[i] ? *f[i] : *flag[i];
        else if (f[i]) *f[i] = v[i];
        else *flag[i] = (int)v[i];
    }
}

/* Undoes a refused msg_open: x as h5_create left it. */
static void msg_undo(hin_t *x) {
    sps__h5r_free(x->h5);
    sps__h5r_meta_free(&x->m);
    free(x->held), free(x->caddr), free(x->csize), free(x->cmask);
    x->h5 = NULL, x->held = NULL, x->caddr = NULL, x->csize = NULL, x->cmask = NULL;
    x->has = 0, x->has_plan = 0, x->released = 0, x->ck0 = 0, x->nck = 0;
    memset(&x->plan, 0, sizeof x->plan);
}

/* Input x (at path) from its rank's message m, as h5_open would have
 * opened and released it, with its facts.  0, or SPS_EFORMAT / SPS_ENOMEM
 * (the caller undoes it and opens the file). */
static int msg_open(hin_t *x, const sps__msg_t *m, const char *path, sps__align_in_t *facts) {
    const unsigned char *p = m->p;
    uint64_t ilen, head[MSG_HEAD];
    if (!p || m->len < sizeof ilen) return SPS_EFORMAT;
    memcpy(&ilen, p, sizeof ilen);
    if (ilen > m->len - sizeof ilen) return SPS_EFORMAT;
    const unsigned char *e = p + sizeof ilen + ilen;
    size_t elen = m->len - sizeof ilen - (size_t)ilen;
    if (elen < sizeof head) return SPS_EFORMAT;
    memcpy(head, e, sizeof head);
    uint64_t nck = head[7];
    if (nck > elen / MSG_PER_CHUNK ||
        elen != sizeof head + nck * MSG_PER_CHUNK + MSG_CLOCK * sizeof(int64_t))
        return SPS_EFORMAT;
    int rc = sps__h5r_index_get(&x->h5, p + sizeof ilen, (size_t)ilen);
    if (rc) return rc;
    x->path = path;
    x->m = x->h5->meta; /* the input takes the reader's /metadata over */
    memset(&x->h5->meta, 0, sizeof x->h5->meta);
    x->has = (unsigned)head[0];
    x->plan = (sps__part_plan_t){head[1], head[2], head[3], head[4], head[5]};
    x->has_plan = x->released = 1;
    x->ck0 = head[6], x->nck = nck;
    size_t k = 5 * (size_t)nck;
    x->caddr = malloc((k ? k : 1) * sizeof *x->caddr);
    x->csize = malloc((k ? k : 1) * sizeof *x->csize);
    x->cmask = malloc((k ? k : 1) * sizeof *x->cmask);
    if (!x->caddr || !x->csize || !x->cmask) return SPS_ENOMEM;
    e += sizeof head;
    memcpy(x->caddr, e, k * sizeof *x->caddr), e += k * sizeof *x->caddr;
    memcpy(x->csize, e, k * sizeof *x->csize), e += k * sizeof *x->csize;
    memcpy(x->cmask, e, k * sizeof *x->cmask), e += k * sizeof *x->cmask;
    int64_t clk[MSG_CLOCK];
    memcpy(clk, e, sizeof clk);
    if ((rc = facts_of(x, facts))) return rc;
    clock_fields(&facts->clock, clk, 0);
    return 0;
}

/* The kind's open: input i's index only (events are streamed later) when
 * the file has call_ids and parent_ids, else the whole file with
 * sps__h5r_open -- the fallback for files without ids (scope-profiler's
 * own), whose parent ids must be invented from the reader's nesting by
 * intervals -- and its facts.  Aggregate files are refused (SPS_EMODE).
 * 0 or a code (message set). */
static int h5_open(void *st, size_t i, const char *path, sps__tl_format_t fmt,
                   sps__align_in_t *facts) {
    hmerge_t *h = st;
    hin_t *x = &h->in[i];
    (void)fmt; /* always .h5: the entry point checked */
    sps__merge_opts_t *o = h->opts;
    if (o && o->trusted && o->index_msgs && o->index_msgs[i].len) {
        if (msg_open(x, &o->index_msgs[i], path, facts) == 0) {
            o->index_msgs_used++;
            return 0;
        }
        msg_undo(x); /* a refused message: the file is read instead */
        memset(facts, 0, sizeof *facts);
    }
    x->path = path;
    int rc = sps__h5r_open_index(&x->h5, path);
    if (rc) return rc;
    if (!x->h5->aggregate &&
        (x->h5->h_call < 0 || x->h5->h_parent < 0 || !has_excl(x->h5))) {
        sps__h5r_free(x->h5);
        x->h5 = NULL;
        if ((rc = sps__h5r_open(&x->h5, path))) return rc;
    }
    x->m = x->h5->meta; /* the input takes the reader's /metadata over */
    memset(&x->h5->meta, 0, sizeof x->h5->meta);
    if (x->h5->aggregate)
        return sps__err_fail(SPS_EMODE, "%s: aggregate file (no per-call data): "
                             "cannot merge into a columnar .h5", path);
    /* its stack samples, checked now: a bad /samples fails the merge before
     * anything is written (the reader's message names the file); a file
     * this reader holds open and that has no /samples is not opened again
     * for it (nor for /device) */
    hid_t f = (hid_t)x->h5->h_file;
    if ((f < 0 || H5Lexists(f, "samples", H5P_DEFAULT) != 0) &&
        (rc = sps__h5r_samples(path, &x->smp)))
        return rc;
    /* its device activity, checked now likewise */
    if ((f < 0 || H5Lexists(f, "device", H5P_DEFAULT) != 0) &&
        (rc = sps__h5r_device(path, &x->dev)))
        return rc;
    if ((rc = gpu_open(x))) return rc;
    /* a rank's part laid out for the chunk-copy merge (h5_part.c); a
     * malformed plan is merged event by event like any file */
    if (streamed(x)) x->has_plan = sps__part_plan_read(x->h5->h_file, &x->plan) == 1;
    rc = h5_facts(x, facts);
    if (rc == 0) x->has = has_groups((hid_t)x->h5->h_file);
    /* a rank's part in a collective finalize: its file closed until its
     * chunks are copied, so that rank 0 does not hold every rank's file
     * open at once (libhdf5 keeps ~0.5 MiB per open file) */
    if (rc == 0 && x->has_plan && sps__h5_guard_trusted() && !x->has_gpu) {
        chunks_note(x);
        sps__h5r_release(x->h5);
        x->released = 1;
    }
    return rc;
}

/* Whether x, just opened by h5_open, can travel as a message: a laid-out
 * part, released (its chunks noted where it could: a part without them is
 * read by libhdf5 in the copy, as a released part always was), and
 * nothing the message does not carry (stack samples, device activity:
 * their readers hold the file). */
static int msg_fits(const hin_t *x) {
    static const sps__h5r_samples_t no_smp;
    static const sps__h5r_device_t no_dev;
    return x->released && x->has_plan && !x->has_gpu && streamed(x) &&
           !memcmp(&x->smp, &no_smp, sizeof no_smp) && !memcmp(&x->dev, &no_dev, sizeof no_dev);
}

/* Appends x's message (msg_open's layout) to b; f its facts. */
static void msg_put(const hin_t *x, sps__align_in_t *f, sps__bytes_t *b) {
    sps__h5r_t r = *x->h5; /* a shallow view, with the /metadata x took over */
    r.meta = x->m;
    uint64_t ilen = 0;
    sps__bytes_put(b, &ilen, sizeof ilen);
    size_t at = b->n;
    sps__h5r_index_put(&r, b);
    if (!b->oom) ilen = b->n - at, memcpy(b->p + at - sizeof ilen, &ilen, sizeof ilen);
    const sps__part_plan_t *p = &x->plan;
    uint64_t head[MSG_HEAD] = {x->has, p->base, p->total, p->pad, p->events, p->tail,
                               x->ck0, x->nck};
    size_t k = 5 * (size_t)x->nck;
    int64_t clk[MSG_CLOCK];
    clock_fields(&f->clock, clk, 1);
    sps__bytes_put(b, head, sizeof head);
    sps__bytes_put(b, x->caddr, k * sizeof *x->caddr);
    sps__bytes_put(b, x->csize, k * sizeof *x->csize);
    sps__bytes_put(b, x->cmask, k * sizeof *x->cmask);
    sps__bytes_put(b, clk, sizeof clk);
}

typedef struct msg_job {
    const char *path;
    sps__bytes_t b;
    int fits;
} msg_job_t;

/* Opens the part as rank 0's merge would (h5_open) and writes its message. */
static int msg_make(void *arg) {
    msg_job_t *j = arg;
    void *st = NULL;
    sps__align_in_t f;
    memset(&f, 0, sizeof f);
    int rc = h5_create(&st, 1, NULL);
    if (rc == 0) rc = h5_open(st, 0, j->path, SPS__TL_H5, &f);
    hin_t *x = rc == 0 ? &((hmerge_t *)st)->in[0] : NULL;
    if (x && (j->fits = msg_fits(x))) msg_put(x, &f, &j->b);
    h5_free(st);
    if (rc == 0 && j->b.oom) rc = sps__err_fail(SPS_ENOMEM, "out of memory");
    return rc;
}

int sps__part_index_msg(const char *path, void **msg, size_t *len) {
    msg_job_t j = {path, {0}, 0};
    *msg = NULL, *len = 0;
    int trusted = sps__h5_guard_trusted();
    sps__h5_guard_trust(1); /* this process's own part, just written */
    int rc = sps__h5_quietly(msg_make, &j);
    sps__h5_guard_trust(trusted);
    if (rc == 0 && j.fits) *msg = j.b.p, *len = j.b.n;
    else free(j.b.p);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Rows and their statistics                                                 */
/* ------------------------------------------------------------------------ */

/* qsort_r order of output rows: by output region, then rank. */
static int orow_cmp(const void *a, const void *b, void *ctx) {
    const hmerge_t *h = ctx;
    const orow_t *x = a, *y = b;
    const hin_t *ix = &h->in[x->input], *iy = &h->in[y->input];
    uint32_t rx = ix->region_map[ix->h5->rows[x->row].file_region];
    uint32_t ry = iy->region_map[iy->h5->rows[y->row].file_region];
    if (rx != ry) return rx < ry ? -1 : 1;
    return ix->rank < iy->rank ? -1 : ix->rank > iy->rank;
}

/* qsort_r order of output rows when inputs follow each other (a part, or
 * the chunk-copy merge of parts): by input, then where its events are in
 * the input, so that each input's events keep their order. */
static int orow_cmp_input(const void *a, const void *b, void *ctx) {
    const hmerge_t *h = ctx;
    const orow_t *x = a, *y = b;
    if (x->input != y->input) return x->input < y->input ? -1 : 1;
    uint64_t ox = h->in[x->input].h5->rows[x->row].offset;
    uint64_t oy = h->in[y->input].h5->rows[y->row].offset;
    return ox < oy ? -1 : ox > oy;
}

/* Adds an event (start st after the clock shift, duration d) to a, by the
 * one fold's accumulator.  Returns 0 or -1 when the end leaves int64. */
static int stats_add(sps__acc_t *a, int64_t st, int64_t d) {
    int64_t en;
    if (d < 0) d = 0;
    if (__builtin_add_overflow(st, d, &en)) return -1;
    sps__acc_add(a, (uint64_t)st, (uint64_t)en, 0);
    return 0;
}

/* Fills row o's statistics from the events of streamed input x's row ir,
 * shifted by x's offset, reading them in blocks; the exclusive total is the
 * one the input stores.  Returns 0, -1 (a time leaves int64) or -2 (read
 * error, message set). */
static int row_stats_stream(hmerge_t *h, const hin_t *x,
                            const sps__row_t *ir, sps__row_t *o) {
    const sps__h5r_t *r = x->h5;
    uint64_t acc = 0;
    sps__acc_t a = {0};
    for (uint64_t k0 = 0; k0 < ir->count;) {
        size_t b = ir->count - k0 < H5_BATCH ? (size_t)(ir->count - k0) : H5_BATCH;
        if (sps__h5r_events_ids(r, ir->offset + k0, b, h->st, h->col[1], NULL,
                                NULL, NULL) < 0)
            return -2;
        for (size_t j = 0; j < b; j++) {
            acc = r->deltas ? acc + (uint64_t)h->st[j] : (uint64_t)h->st[j];
            int64_t st = (int64_t)acc, d = h->col[1][j], en;
            if (x->al.drift != 0 && d > 0 &&
                (__builtin_add_overflow(st, d, &en) || hshift(x, &en)))
                return -1;
            d = hdur(x, st, d);
            if (hshift(x, &st) || stats_add(&a, st, d)) return -1;
        }
        k0 += b;
    }
    sps__summary_of(&a, &o->s);
    o->exclusive_total = ir->exclusive_total;
    return 0;
}

/* Fills row o's statistics from the events of input x's row ir, shifted
 * by x's offset.  Returns 0 or -1 (a time leaves int64). */
static int row_stats(const hin_t *x, const sps__row_t *ir, sps__row_t *o) {
    const sps__h5r_t *r = x->h5;
    int64_t self = 0;
    sps__acc_t a = {0};
    for (uint64_t k = 0; k < ir->count; k++) {
        uint64_t e = ir->offset + k;
        int64_t st = r->start[e], d = r->dur[e], en;
        if (x->al.drift != 0 && d > 0 &&
            (__builtin_add_overflow(st, d, &en) || hshift(x, &en)))
            return -1;
        d = hdur(x, st, d);
        if (hshift(x, &st) || stats_add(&a, st, d)) return -1;
        if (__builtin_add_overflow(self, r->self[e], &self)) self = INT64_MAX;
    }
    sps__summary_of(&a, &o->s);
    o->exclusive_total = self;
    return 0;
}

/* Builds the merged region table (every input's region_map) and lists
 * the output rows (h->src) in their order.  Returns 0 or SPS_ENOMEM
 * (message set). */
static int hmerge_regions(hmerge_t *h) {
    size_t nrows = 0;
    for (size_t i = 0; i < h->n; i++) {
        hin_t *x = &h->in[i];
        const sps__h5r_t *r = x->h5;
        nrows += r->nrows;
        x->region_map = malloc((r->nnames + 1) * sizeof *x->region_map);
        if (!x->region_map) return sps__err_fail(SPS_ENOMEM, "out of memory");
        for (size_t j = 0; j < r->nnames; j++) {
            int64_t id = sps__strtab_id(&h->names, r->names[j]);
            if (id < 0) return sps__err_fail(SPS_ENOMEM, "out of memory");
            x->region_map[j] = (uint32_t)id;
        }
        /* the regions its samples name, by string (in the table before
         * it is written) */
        x->smp_region = malloc((x->smp.nnames + 1) * sizeof *x->smp_region);
        if (!x->smp_region) return sps__err_fail(SPS_ENOMEM, "out of memory");
        for (size_t j = 0; j < x->smp.nnames; j++)
            if ((x->smp_region[j] = sps__strtab_id(&h->names, x->smp.names[j])) < 0)
                return sps__err_fail(SPS_ENOMEM, "out of memory");
        /* the regions its device rows name, likewise */
        x->dev_region = malloc((x->dev.nregion_names + 1) * sizeof *x->dev_region);
        if (!x->dev_region) return sps__err_fail(SPS_ENOMEM, "out of memory");
        for (size_t j = 0; j < x->dev.nregion_names; j++)
            if ((x->dev_region[j] = sps__strtab_id(&h->names, x->dev.region_names[j])) < 0)
                return sps__err_fail(SPS_ENOMEM, "out of memory");
    }
    h->src = malloc((nrows + 1) * sizeof *h->src);
    h->rows = calloc(nrows + 1, sizeof *h->rows);
    if (!h->src || !h->rows) return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->n; i++)
        for (size_t j = 0; j < h->in[i].h5->nrows; j++)
            h->src[h->nrows++] = (orow_t){(uint32_t)i, (uint32_t)j};
    qsort_r(h->src, h->nrows, sizeof *h->src,
            h->part || h->copy ? orow_cmp_input : orow_cmp, h);
    return 0;
}

/* The merged /events/gpu_durations (h->gpu), when any input has the
 * column: each event's value moves with the event (-1 for the events of
 * an input without it), and each output row's gpu_count / gpu_total are
 * its events' values >= 0, counted and summed (as finalize makes them).
 * Returns 0 or a code (message set). */
static int hmerge_gpu(hmerge_t *h) {
    int any = 0;
    for (size_t i = 0; i < h->n; i++) any |= h->in[i].has_gpu;
    if (!any) return 0;
    if (!(h->gpu = malloc((h->nevents + 1) * sizeof *h->gpu)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (uint64_t e = 0; e < h->nevents; e++) h->gpu[e] = -1; /* a part's other rows */
    for (size_t k = 0; k < h->nrows; k++) {
        const hin_t *x = &h->in[h->src[k].input];
        const sps__row_t *ir = &x->h5->rows[h->src[k].row];
        sps__row_t *o = &h->rows[k];
        int64_t *g = h->gpu + o->offset;
        int rc = gpu_slice(x, ir->offset, (size_t)ir->count, g);
        if (rc) return rc;
        uint64_t cnt = 0;
        int64_t tot = 0;
        for (uint64_t e = 0; e < ir->count; e++)
            if (g[e] >= 0) {
                cnt++;
                if (__builtin_add_overflow(tot, g[e], &tot)) tot = INT64_MAX;
            }
        o->s.gpu_count = cnt;
        o->s.gpu_total = tot;
    }
    return 0;
}

/* Adds h->gpu as /events/gpu_durations to the closed output tmp (nothing
 * when no input had the column).  Returns 0 or a code (message set). */
static int hmerge_gpu_write(const hmerge_t *h, const char *tmp) {
    if (!h->gpu) return 0;
    hsize_t dim[1] = {h->nevents};
    hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gopen2(f, "events", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = g >= 0 ? H5Screate_simple(1, dim, NULL) : H5I_INVALID_HID;
    hid_t d = sp >= 0 ? H5Dcreate2(g, "gpu_durations", H5T_STD_I64LE, sp, H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT)
                      : H5I_INVALID_HID;
    int ok = d >= 0 && (h->nevents == 0 || H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                                                    H5P_DEFAULT, h->gpu) >= 0);
    if (d >= 0 && H5Dclose(d) < 0) ok = 0;
    if (sp >= 0) H5Sclose(sp);
    if (g >= 0) H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0) ok = 0;
    return ok ? 0 : sps__err_fail(SPS_EHDF5, "%s: cannot add /events/gpu_durations", h->out);
}

/* Builds the output rows with their offsets and statistics.  Returns 0 or
 * a code (message set). */
static int hmerge_rows(hmerge_t *h) {
    int rc = hmerge_regions(h);
    h->nevents = h->pad; /* a part's rows start at its pad */
    for (size_t k = 0; rc == 0 && k < h->nrows; k++) {
        const hin_t *x = &h->in[h->src[k].input];
        const sps__row_t *ir = &x->h5->rows[h->src[k].row];
        sps__row_t *o = &h->rows[k];
        o->file_region = x->region_map[ir->file_region];
        o->rank = (uint32_t)x->rank;
        o->offset = h->nevents;
        o->count = ir->count;
        if (h->copy) { /* where the part put it; its statistics as the rank made them */
            o->offset = x->plan.base + (ir->offset - x->plan.pad);
            o->s = x->h5->summary[h->src[k].row];
            o->exclusive_total = ir->exclusive_total;
            h->nevents += ir->count;
            continue;
        }
        if (ir->count > (uint64_t)INT64_MAX - h->nevents)
            return sps__err_fail(SPS_EFORMAT, "too many events");
        h->nevents += ir->count;
        rc = streamed(x) ? row_stats_stream(h, x, ir, o) : row_stats(x, ir, o);
        if (rc == -2)
            return sps__err_fail(SPS_EFORMAT, "%s: %s", x->path, sps__err_msg());
        if (rc < 0)
            return sps__err_fail(SPS_EFORMAT, "%s: a time leaves the 64-bit "
                                 "range after clock alignment", x->path);
    }
    if (rc == 0 && h->part) { /* room for the later ranks' first rows */
        h->opts->plan.pad = h->pad;
        h->opts->plan.events = h->nevents - h->pad;
        if (h->opts->plan.tail > (uint64_t)INT64_MAX - h->nevents)
            return sps__err_fail(SPS_EINVAL, "part: too many events");
        h->nevents += h->opts->plan.tail;
    }
    return rc ? rc : hmerge_gpu(h);
}

/* Allocates the block buffers.  Returns 0 or SPS_ENOMEM (message set). */
static int hmerge_alloc(hmerge_t *h) {
    for (int k = 0; k < 5; k++)
        if (!(h->col[k] = malloc(H5_BATCH * sizeof(int64_t))))
            return sps__err_fail(SPS_ENOMEM, "out of memory");
    if (!(h->st = malloc(H5_BATCH * sizeof(int64_t))))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

/* Fills the output layout: region table, rows, and /metadata from the
 * lowest rank (anchors from the reference input, whose clock the output
 * uses; times spanning all inputs; counters summed). */
static void hmerge_layout(const hmerge_t *h, sps__layout_t *lay) {
    const hin_t *in = h->in, *lo = &in[0];
    for (size_t i = 0; i < h->n; i++)
        if (in[i].rank < lo->rank) lo = &in[i];
    memset(lay, 0, sizeof *lay);
    lay->nnames = h->names.n;
    lay->names = h->names.v;
    lay->nrows = h->nrows;
    lay->rows = h->rows;
    lay->nevents = h->nevents;
    lay->with_tree = 1;
    lay->start_time_ns = INT64_MAX;
    lay->finalize_time_ns = INT64_MIN;
    for (size_t i = 0; i < h->n; i++) {
        const hin_t *x = &in[i];
        int64_t s = x->m.start_time_ns, f = x->m.finalize_time_ns;
        if (!hshift(x, &s) && s < lay->start_time_ns) lay->start_time_ns = s;
        if (!hshift(x, &f) && f > lay->finalize_time_ns) lay->finalize_time_ns = f;
        lay->dropped += (uint64_t)x->m.dropped_events;
        lay->misuse += (uint64_t)x->m.misuse_count;
        lay->open_calls += (uint64_t)x->m.open_calls;
    }
    if (h->part) {
        lay->compress_threshold = 1; /* chunks whatever its size: they are copied */
        lay->has_clock_offset = 1;   /* on rank 0's clock already: merged unshifted */
        lay->clock_offset_ns = 0;
        lay->clock_offset_error_ns = lo->al.offset_error > 0 ? lo->al.offset_error : 0;
    }
    if (lay->start_time_ns == INT64_MAX) lay->start_time_ns = 0;
    if (lay->finalize_time_ns == INT64_MIN) lay->finalize_time_ns = 0;
    if (h->ref >= 0 && in[h->ref].m.has_anchor) {
        lay->wall_anchor_ns = in[h->ref].m.wall_anchor_ns;
        lay->mono_anchor_ns = in[h->ref].m.mono_anchor_ns;
    }
    lay->label = lo->m.label;
    lay->rank = (int)lo->rank;
    lay->size = (int)h->n;
    lay->clock_source = lo->m.clock_source && lo->m.clock_source[0] ? lo->m.clock_source : NULL;
}

/* Writes the events of output row k in batches: start deltas recomputed
 * after the shift, ids kept (missing ids derived: call id = event index,
 * parent id from the reader's nesting, thread 0).  Returns 0 or a code
 * (message set). */
static int hmerge_events(hmerge_t *h, sps__h5w_t *w, size_t k) {
    const hin_t *x = &h->in[h->src[k].input];
    const sps__h5r_t *r = x->h5;
    const sps__row_t *ir = &r->rows[h->src[k].row];
    uint64_t prev = 0;
    for (uint64_t done = 0; done < ir->count;) {
        size_t b = ir->count - done < H5_BATCH ? (size_t)(ir->count - done) : H5_BATCH;
        for (size_t j = 0; j < b; j++) {
            uint64_t e = ir->offset + done + j;
            /* the statistics pass checked that the shift fits */
            int64_t t = r->start[e];
            uint64_t st = x->al.drift == 0 ? (uint64_t)t + (uint64_t)x->offset
                          : (hshift(x, &t), (uint64_t)t);
            int32_t p = r->parent[e];
            h->col[0][j] = (int64_t)(st - prev);
            prev = st;
            h->col[1][j] = hdur(x, r->start[e], r->dur[e]);
            h->col[2][j] = r->call_ids ? r->call_ids[e] : (int64_t)e;
            h->col[3][j] = r->parent_ids && r->call_ids ? r->parent_ids[e]
                         : p < 0 ? -1
                         : r->call_ids ? r->call_ids[p] : (int64_t)p;
            h->col[4][j] = r->thread_ids ? r->thread_ids[e] : 0;
        }
        int rc = sps__h5w_rows(w, h->rows[k].offset + done, b, h->col[0],
                               h->col[1], h->col[2], h->col[3], h->col[4]);
        if (rc) return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
        done += b;
        sps__pline_fn(&h->line, h->done += b, h->nevents);
    }
    return 0;
}

/* Writes the events of output row k of a streamed input, read in blocks:
 * start deltas recomputed after the shift, durations and call/parent ids
 * as stored, thread ids as stored or 0 when the file has none (as the
 * whole-file path does).  Returns 0 or a code (message set: a read
 * error names the input, a write error the output). */
static int hmerge_events_stream(hmerge_t *h, sps__h5w_t *w, size_t k) {
    const hin_t *x = &h->in[h->src[k].input];
    const sps__h5r_t *r = x->h5;
    const sps__row_t *ir = &r->rows[h->src[k].row];
    uint64_t prev = 0, acc = 0;
    for (uint64_t done = 0; done < ir->count;) {
        size_t b = ir->count - done < H5_BATCH ? (size_t)(ir->count - done) : H5_BATCH;
        int rc = sps__h5r_events_ids(r, ir->offset + done, b, h->st, h->col[1],
                                     h->col[4], h->col[2], h->col[3]);
        if (rc) return sps__err_fail(rc, "%s: %s", x->path, sps__err_msg());
        for (size_t j = 0; j < b; j++) {
            if (r->deltas) acc += (uint64_t)h->st[j];
            else acc = (uint64_t)h->st[j];
            uint64_t st = acc + (uint64_t)x->offset;
            if (x->al.drift != 0) { /* checked by the statistics pass */
                int64_t t = (int64_t)acc;
                h->col[1][j] = hdur(x, t, h->col[1][j]);
                hshift(x, &t);
                st = (uint64_t)t;
            }
            h->col[0][j] = (int64_t)(st - prev);
            prev = st;
        }
        if (r->h_tid < 0) memset(h->col[4], 0, b * sizeof *h->col[4]);
        rc = sps__h5w_rows(w, h->rows[k].offset + done, b, h->col[0],
                           h->col[1], h->col[2], h->col[3], h->col[4]);
        if (rc) return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
        done += b;
        sps__pline_fn(&h->line, h->done += b, h->nevents);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The chunk-copy merge of ranks' parts (docs/mpi.md "The collective        */
/* finalize"; h5_part.c)                                                     */
/* ------------------------------------------------------------------------ */

/* Whether the inputs can be merged by copying their chunks: every one a
 * rank's part (/part_plan) on the output's clock as it is (no shift),
 * each starting where the one before ends, its rows exactly its plan's
 * events, all agreeing on the total.  Anything else is merged event by
 * event, which gives the same file. */
static int copy_check(const hmerge_t *h) {
    uint64_t next = 0;
    for (size_t i = 0; i < h->n; i++) {
        const hin_t *x = &h->in[i];
        const sps__part_plan_t *p = &x->plan;
        if (!x->has_plan || x->al.offset != 0 || x->al.drift != 0 || !x->h5->summary)
            return 0; /* its rows' statistics are copied */
        if (p->base != next || p->total != h->in[0].plan.total) return 0;
        uint64_t n = 0;
        for (size_t j = 0; j < x->h5->nrows; j++) {
            const sps__row_t *r = &x->h5->rows[j];
            if (r->offset < p->pad || r->offset - p->pad > p->events ||
                r->count > p->events - (r->offset - p->pad))
                return 0;
            n += r->count; /* rows do not overlap (the reader checked) */
        }
        if (n != p->events) return 0;
        next += n;
    }
    return h->n > 0 && next == h->in[0].plan.total && next > 0;
}


/* Non-zero when dataset d is stored as the merged file's event columns
 * are: int64 in chunks of ch rows through shuffle + deflate (h5.c's
 * event_dcpl). */
static int chunk_same(hid_t d, hsize_t ch) {
    hid_t p = H5Dget_create_plist(d), t = H5Dget_type(d);
    hsize_t dim = 0;
    unsigned flags = 0, cd[8];
    size_t ncd = 8;
    int ok = p >= 0 && t >= 0 && H5Tequal(t, H5T_STD_I64LE) > 0 &&
             H5Pget_layout(p) == H5D_CHUNKED && H5Pget_chunk(p, 1, &dim) == 1 && dim == ch &&
             H5Pget_nfilters(p) == 2 &&
             H5Pget_filter2(p, 0, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE;
    ncd = 8;
    ok = ok && H5Pget_filter2(p, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE;
    if (t >= 0) H5Tclose(t);
    if (p >= 0) H5Pclose(p);
    return ok;
}

/* Opens part x's event columns once, and says whether they are stored as
 * the output's (x->cd_state). */
static void chunk_cols(hin_t *x, hsize_t ch) {
    if (x->cd_state) return;
    x->cd_state = 1;
    for (int c = 0; c < 5; c++) {
        x->cd[c] = H5Dopen2((hid_t)x->h5->h_file, part_cols[c], H5P_DEFAULT);
        if (x->cd[c] < 0 || !chunk_same((hid_t)x->cd[c], ch)) x->cd_state = -1;
    }
}

/* Copies chunk kin of part x's event columns, compressed as they are, to
 * chunk k of the output when all five are stored as the output's and the
 * chunk is stored in each (*raw = 1); leaves *raw 0 otherwise.  0 or a
 * code (message set). */
static int chunk_copy(hmerge_t *h, hin_t *x, uint64_t kin, sps__h5w_t *w, uint64_t k,
                      uint64_t ch, int *raw) {
    hsize_t off[1] = {kin * ch}, bytes[5] = {0};
    *raw = 0;
    chunk_cols(x, ch);
    if (x->cd_state < 0) return 0;
    for (int c = 0; c < 5; c++) {
        if (H5Dget_chunk_storage_size((hid_t)x->cd[c], off, &bytes[c]) < 0 || !bytes[c])
            return 0; /* not stored: read and written again */
        if (bytes[c] > h->zcap) {
            unsigned char *b = realloc(h->zbuf, bytes[c]);
            if (!b) return sps__err_fail(SPS_ENOMEM, "out of memory");
            h->zbuf = b, h->zcap = bytes[c];
        }
    }
    for (int c = 0; c < 5; c++) {
        uint32_t mask = 0;
        int rc;
        if (H5Dread_chunk((hid_t)x->cd[c], H5P_DEFAULT, off, &mask, h->zbuf) < 0)
            return sps__err_fail(SPS_EFORMAT, "%s: cannot read chunk %llu of /%s", x->path,
                                 (unsigned long long)kin, part_cols[c]);
        if ((rc = sps__h5w_chunk_raw(w, c, k, mask, h->zbuf, bytes[c])))
            return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
    }
    *raw = 1;
    return 0;
}

/* Copies chunk k of the output, which part x owns, from where chunks_note
 * found its columns in x's file (*raw = 1), or leaves *raw 0 when one of
 * them is not stored as the output's.  0 or a code (message set). */
static int chunk_pread(hmerge_t *h, hin_t *x, uint64_t k, sps__h5w_t *w, int *raw) {
    *raw = 0;
    if (k < x->ck0 || k - x->ck0 >= x->nck) return 0;
    const uint64_t j = k - x->ck0;
    for (int c = 0; c < 5; c++)
        if (!x->csize[5 * j + c]) return 0;
    if (x->fd < 0 && (x->fd = open(x->path, O_RDONLY | O_CLOEXEC)) < 0)
        return sps__err_fail(SPS_EIO, "%s: cannot open: %s", x->path, strerror(errno));
    for (int c = 0; c < 5; c++) {
        size_t len = x->csize[5 * j + c];
        if (len > h->zcap) {
            unsigned char *b = realloc(h->zbuf, len);
            if (!b) return sps__err_fail(SPS_ENOMEM, "out of memory");
            h->zbuf = b, h->zcap = len;
        }
        if (pread(x->fd, h->zbuf, len, (off_t)x->caddr[5 * j + c]) != (ssize_t)len)
            return sps__err_fail(SPS_EIO, "%s: cannot read chunk %llu of /%s", x->path,
                                 (unsigned long long)k, part_cols[c]);
        int rc = sps__h5w_chunk_raw(w, c, k, x->cmask[5 * j + c], h->zbuf, len);
        if (rc) return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
    }
    *raw = 1;
    return 0;
}

/* Closes part x's columns and, when it was released after open, its file
 * again: its chunks are copied. */
static void part_done(hin_t *x) {
    if (x->fd >= 0) close(x->fd);
    x->fd = -1;
    for (int c = 0; c < 5; c++) sps__h5_close(&x->cd[c]);
    x->cd_state = 0;
    if (x->released) sps__h5r_release(x->h5);
}

/* Writes the merged events by copying, chunk by chunk, from the part that
 * owns the chunk (whose events its first row is): compressed as its rank
 * wrote it where the part's columns are stored as the output's, else
 * read and written again.  0 or a code (message set). */
static int hmerge_copy_events(hmerge_t *h, sps__h5w_t *w) {
    uint64_t ch = sps__h5w_event_chunk(w), step = ch ? ch : SPS__H5_CHUNK;
    uint64_t nk = (h->nevents + step - 1) / step;
    size_t i = 0;
    int rc = 0;
    for (uint64_t k = 0; rc == 0 && k < nk; k++) {
        uint64_t first = k * step, rows = h->nevents - first < step ? h->nevents - first : step;
        while (i < h->n && !(first >= h->in[i].plan.base &&
                             first - h->in[i].plan.base < h->in[i].plan.events)) {
            part_done(&h->in[i]); /* the inputs tile the events in order (copy_check) */
            i++;
        }
        if (i == h->n)
            return sps__err_fail(SPS_EFORMAT, "%s: no part holds event %llu", h->out,
                                 (unsigned long long)first);
        hin_t *x = &h->in[i];
        const sps__part_plan_t *p = &x->plan;
        uint64_t at = first - p->base + p->pad; /* its row in the part */
        if (rows > p->pad + p->events + p->tail - at)
            return sps__err_fail(SPS_EFORMAT, "%s: holds %llu rows of chunk %llu, not %llu",
                                 x->path, (unsigned long long)(p->pad + p->events + p->tail - at),
                                 (unsigned long long)k, (unsigned long long)rows);
        int raw = 0;
        if (x->nck && ch == SPS__H5_CHUNK) { /* noted at open: read with pread */
            rc = chunk_pread(h, x, k, w, &raw);
        } else {
            if (x->released && (rc = sps__h5r_reacquire(x->h5, x->path, 1)))
                return sps__err_fail(rc, "%s", sps__err_msg());
            if (ch && at % ch == 0) rc = chunk_copy(h, x, at / ch, w, k, ch, &raw);
        }
        if (rc == 0 && !raw) {
            rc = sps__part_rows(x->path, at, (size_t)rows, h->col, 0);
            if (rc == 0)
                rc = sps__h5w_rows(w, first, (size_t)rows, h->col[0], h->col[1], h->col[2],
                                   h->col[3], h->col[4]);
            if (rc) return sps__err_fail(rc, "%s: %s", h->out, sps__err_msg());
        }
        raw ? h->copied++ : h->rewritten++;
        sps__pline_fn(&h->line, h->done += rows, h->nevents);
    }
    if (i < h->n) part_done(&h->in[i]);
    return rc;
}

/* The merged /counters: every input's samples with its rank and its clock
 * shift, names merged by string (the strings stay in src). */
typedef struct mcounters {
    sps__h5r_counters_t *src; /* one per input */
    sps__strtab_t names;
    int64_t *series, *ranks, *times;
    double *values;
    size_t n;
    uint64_t dropped;
} mcounters_t;

/* Appends input x's samples (in) to k, which has room.  Returns 0,
 * SPS_ENOMEM or SPS_EFORMAT (a time overflows once shifted). */
static int mcounters_add(mcounters_t *k, const hin_t *x, const sps__h5r_counters_t *in) {
    for (size_t i = 0; i < in->n; i++) {
        int64_t id = sps__strtab_id(&k->names, in->names[in->series[i]]);
        int64_t t = in->times[i];
        if (id < 0) return SPS_ENOMEM;
        if (hshift(x, &t)) return SPS_EFORMAT;
        k->series[k->n] = id;
        k->ranks[k->n] = x->rank;
        k->times[k->n] = t;
        k->values[k->n++] = in->values[i];
    }
    k->dropped += in->dropped;
    return 0;
}

/* Reads every input's /counters into k.  Returns 0 or a code (message
 * set). */
static int mcounters_read(const hmerge_t *h, mcounters_t *k) {
    size_t total = 0;
    if (!(k->src = calloc(h->n + 1, sizeof *k->src)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->n; i++) {
        if (!(h->in[i].has & HAS_COUNTERS)) continue; /* none: k->src[i] stays empty */
        int rc = sps__h5r_counters(h->in[i].path, &k->src[i]);
        if (rc) return rc;
        total += k->src[i].n;
    }
    k->series = malloc((total + 1) * sizeof *k->series);
    k->ranks = malloc((total + 1) * sizeof *k->ranks);
    k->times = malloc((total + 1) * sizeof *k->times);
    k->values = malloc((total + 1) * sizeof *k->values);
    if (!k->series || !k->ranks || !k->times || !k->values)
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->n; i++) {
        int rc = mcounters_add(k, &h->in[i], &k->src[i]);
        if (rc == SPS_ENOMEM) return sps__err_fail(rc, "out of memory");
        if (rc)
            return sps__err_fail(rc, "%s: a counter time leaves the 64-bit "
                                 "range once shifted", h->in[i].path);
    }
    return 0;
}

/* Adds the inputs' counter samples (if any) to the closed output tmp.
 * Returns 0 or a code (message set). */
static int hmerge_counters(const hmerge_t *h, const char *tmp) {
    mcounters_t k;
    memset(&k, 0, sizeof k);
    int rc = mcounters_read(h, &k);
    if (rc == 0 && (k.n || k.dropped)) {
        rc = sps__h5_add_counters(tmp, k.names.n, k.names.v, k.n, k.series, k.ranks,
                                  k.times, k.values, k.dropped);
        if (rc) rc = sps__err_fail(rc, "%s: cannot add /counters: %s", h->out,
                                   sps_strerror(rc));
    }
    for (size_t i = 0; k.src && i < h->n; i++) sps__h5r_counters_free(&k.src[i]);
    free(k.src);
    sps__strtab_free(&k.names);
    free(k.series), free(k.ranks), free(k.times), free(k.values);
    return rc;
}

/* The merged /values: every input's rows (a single-rank input's under
 * the rank the merge gave it), the value names merged by string (a value
 * an input lacks reads 0 there).  Returns 0 or a code (message set). */
static int hmerge_values(const hmerge_t *h, const char *tmp) {
    sps__h5r_values_t *in = calloc(h->n ? h->n : 1, sizeof *in);
    sps__strtab_t names = {0};
    size_t n = 0;
    int rc = in ? 0 : SPS_ENOMEM, read_rc = 0;
    for (size_t i = 0; rc == 0 && i < h->n; i++) {
        if (!(h->in[i].has & HAS_VALUES)) continue; /* none: in[i] stays empty */
        if ((read_rc = rc = sps__h5r_values(h->in[i].path, &in[i]))) break; /* its message */
        n += in[i].n;
        for (size_t k = 0; rc == 0 && k < in[i].nnames; k++)
            if (sps__strtab_id(&names, in[i].names[k]) < 0) rc = SPS_ENOMEM;
    }
    size_t nv = names.n, ncols = 2 + 2 * nv;
    int64_t *col = NULL;
    const int64_t **cols = NULL;
    const char **region = NULL;
    char **colname = NULL;
    if (rc == 0 && n) {
        col = calloc(ncols * n, sizeof *col);
        cols = malloc(ncols * sizeof *cols);
        region = malloc(n * sizeof *region);
        colname = calloc(ncols, sizeof *colname);
        if (!col || !cols || !region || !colname) rc = SPS_ENOMEM;
    }
    if (rc == 0 && n) {
        colname[0] = strdup("calls");
        colname[1] = strdup("rank");
        for (size_t k = 0; k < nv; k++) {
            size_t len = strlen(names.v[k]) + 6;
            colname[2 + 2 * k] = strdup(names.v[k]);
            if ((colname[3 + 2 * k] = malloc(len))) snprintf(colname[3 + 2 * k], len, "self_%s", names.v[k]);
        }
        for (size_t k = 0; k < ncols; k++)
            if (!colname[k]) rc = SPS_ENOMEM;
    }
    size_t row = 0;
    for (size_t i = 0; rc == 0 && n && i < h->n; i++) {
        const sps__h5r_values_t *v = &in[i];
        for (size_t j = 0; j < v->n; j++, row++) {
            region[row] = v->regions[j];
            col[row] = v->calls[j];
            col[n + row] = h->in[i].m.has_rank ? h->in[i].rank : v->ranks[j];
            for (size_t k = 0; k < v->nnames; k++) {
                size_t c = (size_t)sps__strtab_id(&names, v->names[k]);
                col[(2 + 2 * c) * n + row] = v->own[j * v->nnames + k];
                col[(3 + 2 * c) * n + row] = v->self[j * v->nnames + k];
            }
        }
    }
    for (size_t k = 0; rc == 0 && n && k < ncols; k++) cols[k] = col + k * n;
    if (rc == 0 && n)
        rc = sps__h5_add_table(tmp, "values",
                               "values per span (cfg.track, docs/values.md) summed per region "
                               "and rank: calls with values, rank, then per value its own sum "
                               "and its self sum (peak_bytes: the largest own and self peak)",
                               n, "region", region, ncols, (const char *const *)colname, cols);
    for (size_t k = 0; colname && k < ncols; k++) free(colname[k]);
    free(colname), free(region), free(cols), free(col);
    for (size_t i = 0; in && i < h->n; i++) sps__h5r_values_free(&in[i]);
    free(in);
    sps__strtab_free(&names);
    if (read_rc) return read_rc;
    return rc ? sps__err_fail(rc, "%s: cannot add /values: %s", h->out, sps_strerror(rc)) : 0;
}

/* Adds the inputs' /carried to the closed file tmp, each call's event
 * index moved to where its row went.  Returns 0 or a code (message set). */
static int hmerge_carried(const hmerge_t *h, const char *tmp) {
    sps__carried_t c = {0};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < h->nrows; k++) {
        const sps__h5r_t *r = h->in[h->src[k].input].h5;
        const sps__row_t *ir = &r->rows[h->src[k].row];
        for (size_t i = 0; rc == 0 && i < r->ncarried; i++) {
            uint64_t e = (uint64_t)r->carried_event[i];
            if (e >= ir->offset && e - ir->offset < ir->count)
                rc = sps__carried_add(&c, (int64_t)(h->rows[k].offset + (e - ir->offset)),
                                      r->carried_child[i]);
        }
    }
    if (rc == 0) rc = sps__carried_write(tmp, &c);
    sps__carried_free(&c);
    return rc ? sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc)) : 0;
}

/* The merged /samples: each input's samples under the rank it became,
 * times shifted by its offset, regions by name in the merged region
 * table, stacks and frames appended to the merged tables (its stack k is
 * the merged table's stack base + k, its frame f frame fbase + f);
 * threads, tids, call ids and weights kept (ids are per rank).  hz: the
 * lowest rank's that has one; lost: the sum.  Returns 0 or a code
 * (message set). */
static int hmerge_samples(const hmerge_t *h, const char *tmp) {
    size_t n = 0, ns = 0, nsf = 0, nf = 0;
    int64_t hz = 0, hz_rank = INT64_MAX, lost = 0;
    for (size_t i = 0; i < h->n; i++) {
        const sps__h5r_samples_t *x = &h->in[i].smp;
        n += x->n, ns += x->nstacks, nf += x->nframes;
        nsf += x->nstacks ? (size_t)x->stack_offsets[x->nstacks] : 0;
        if (x->hz > 0 && h->in[i].rank < hz_rank) hz = x->hz, hz_rank = h->in[i].rank;
        lost += x->lost;
    }
    if (!n && !hz && !lost) return 0; /* no input sampled */
    int64_t *col = malloc((8 * n + (ns + 1) + nsf + 3 * nf + 1) * sizeof *col);
    const char **str = malloc((3 * nf + 1) * sizeof *str);
    if (!col || !str) {
        free(col), free(str);
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    }
    int64_t *t = col, *th = t + n, *tid = th + n, *rk = tid + n, *rg = rk + n, *cid = rg + n,
            *st = cid + n, *wt = st + n, *off = wt + n, *sf = off + ns + 1, *line = sf + nsf,
            *kind = line + nf, *addr = kind + nf;
    const char **fn = str, **file = str + nf, **mod = str + 2 * nf;
    size_t k = 0, sbase = 0, fbase = 0, sfbase = 0;
    int rc = 0;
    off[0] = 0;
    for (size_t i = 0; rc == 0 && i < h->n; i++) {
        const hin_t *in = &h->in[i];
        const sps__h5r_samples_t *x = &in->smp;
        for (size_t j = 0; j < x->n; j++, k++) {
            t[k] = x->times_ns[j];
            if (hshift(in, &t[k])) {
                rc = sps__err_fail(SPS_EFORMAT, "%s: a sample time leaves the 64-bit "
                                   "range once shifted", in->path);
                break;
            }
            th[k] = x->threads[j], tid[k] = x->tids[j], rk[k] = in->rank;
            rg[k] = x->regions[j] >= 0 ? in->smp_region[x->regions[j]] : -1;
            cid[k] = x->call_ids[j], wt[k] = x->weights[j];
            st[k] = (int64_t)sbase + x->stacks[j];
        }
        for (size_t j = 0; j < x->nstacks; j++)
            off[sbase + j + 1] = (int64_t)sfbase + x->stack_offsets[j + 1];
        size_t nfr = x->nstacks ? (size_t)x->stack_offsets[x->nstacks] : 0;
        for (size_t j = 0; j < nfr; j++) sf[sfbase + j] = (int64_t)fbase + x->stack_frames[j];
        for (size_t j = 0; j < x->nframes; j++) {
            fn[fbase + j] = x->functions[j], file[fbase + j] = x->files[j];
            mod[fbase + j] = x->modules[j], line[fbase + j] = x->lines[j];
            kind[fbase + j] = x->kinds[j], addr[fbase + j] = x->addresses[j];
        }
        sbase += x->nstacks, fbase += x->nframes, sfbase += nfr;
    }
    if (rc == 0) {
        sps__h5_samples_t out = {n, t, th, tid, rk, rg, cid, st, wt, ns, off, sf, nf,
                                 fn, file, mod, line, kind, addr, hz, lost};
        if ((rc = sps__h5_add_samples(tmp, &out)))
            rc = sps__err_fail(rc, "%s: cannot add /samples: %s", h->out, sps_strerror(rc));
    }
    free(col), free(str);
    return rc;
}

/* The merged /device: each input's rows under the rank it became, times
 * shifted as its spans' (a row whose time leaves int64 fails the merge),
 * regions by name in the merged region table, activity names by string
 * in a merged name table; threads, tids, call ids and correlations kept
 * (they are per rank).  Attributes: the first input's collector and
 * clock ("mixed" where inputs differ), dropped summed, cupti_version the
 * highest.  Nothing when no input has /device.  Returns 0 or a code
 * (message set). */
static int hmerge_device(const hmerge_t *h, const char *tmp) {
    size_t n = 0;
    int any = 0;
    for (size_t i = 0; i < h->n; i++) n += h->in[i].dev.n, any |= h->in[i].dev.present;
    if (!any) return 0;
    int64_t *col = malloc((SPS__DEVC_N * n + 1) * sizeof *col);
    sps__strtab_t names = {0};
    if (!col) return sps__err_fail(SPS_ENOMEM, "out of memory");
    const char *collector = NULL, *clock = NULL;
    int64_t dropped = 0, version = 0;
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < h->n; i++) {
        const hin_t *in = &h->in[i];
        const sps__h5r_device_t *x = &in->dev;
        if (!x->present) continue;
        if (!collector) collector = x->collector, clock = x->clock;
        else {
            if (strcmp(collector, x->collector)) collector = "mixed";
            if (strcmp(clock, x->clock)) clock = "mixed";
        }
        dropped += x->dropped;
        if (x->cupti_version > version) version = x->cupti_version;
        const int64_t *src[SPS__DEVC_N] = {
            x->kinds, x->names_idx, x->devices, x->contexts, x->streams, x->correlations,
            x->starts_ns, x->ends_ns, x->bytes, x->ranks, x->threads, x->tids, x->regions,
            x->call_ids, x->grid_x, x->grid_y, x->grid_z, x->block_x, x->block_y, x->block_z,
            x->copy_kinds, x->src_kinds, x->dst_kinds, x->cbids /* NULL: 0 */};
        for (size_t j = 0; j < x->n; j++, k++) {
            for (int c = 0; c < SPS__DEVC_N; c++) col[c * n + k] = src[c] ? src[c][j] : 0;
            int64_t *t0 = &col[SPS__DEVC_STARTS * n + k], *t1 = &col[SPS__DEVC_ENDS * n + k];
            if (hshift(in, t0) || hshift(in, t1)) {
                rc = sps__err_fail(SPS_EFORMAT, "%s: a device activity's time leaves the "
                                   "64-bit range once shifted", in->path);
                break;
            }
            if (*t1 < *t0) *t1 = *t0;
            col[SPS__DEVC_RANKS * n + k] = in->rank;
            int64_t rg = x->regions[j];
            col[SPS__DEVC_REGIONS * n + k] = rg >= 0 ? in->dev_region[rg] : -1;
            int64_t id = sps__strtab_id(&names, x->names[x->names_idx[j]]);
            if (id < 0) {
                rc = sps__err_fail(SPS_ENOMEM, "out of memory");
                break;
            }
            col[SPS__DEVC_NAMES_IDX * n + k] = id;
        }
    }
    if (rc == 0) {
        sps__h5_device_t out = {0};
        out.n = n;
        for (int c = 0; c < SPS__DEVC_N; c++) out.cols[c] = col + (size_t)c * n;
        out.nnames = names.n;
        out.names = names.v;
        out.collector = collector ? collector : "";
        out.clock = clock ? clock : "";
        out.dropped = dropped;
        out.cupti_version = version;
        if ((rc = sps__h5_add_device(tmp, &out)))
            rc = sps__err_fail(rc, "%s: cannot add /device: %s", h->out, sps_strerror(rc));
    }
    sps__strtab_free(&names);
    free(col);
    return rc;
}

/* The regions' attributes for the output (by output name; malloc'd, its
 * strings borrowed from the inputs): source file, line and text and tags
 * from the first input row of the name that has them (the ranks of one
 * program agree); per-call metadata only for a name with a single row, as
 * the writer keeps one list per name.  NULL when out of memory. */
static sps__rinfo_t *hmerge_info(const hmerge_t *h) {
    sps__rinfo_t *info = calloc(h->names.n + 1, sizeof *info);
    uint32_t *rows_of = calloc(h->names.n + 1, sizeof *rows_of);
    if (!info || !rows_of) {
        free(info), free(rows_of);
        return NULL;
    }
    for (size_t i = 0; i < h->names.n; i++) info[i].line = -1;
    for (size_t k = 0; k < h->nrows; k++) {
        const hin_t *x = &h->in[h->src[k].input];
        const sps__h5r_t *r = x->h5;
        size_t j = h->src[k].row;
        sps__rinfo_t *o = &info[x->region_map[r->rows[j].file_region]];
        if (!o->file && r->src_files && r->src_files[j] && *r->src_files[j]) {
            o->file = r->src_files[j];
            o->line = r->src_lines ? r->src_lines[j] : -1;
        }
        if (!o->text && r->src_texts && r->src_texts[j] && *r->src_texts[j])
            o->text = r->src_texts[j];
        if (!o->tags && r->tags && r->tags[j] && strcmp(r->tags[j], "[]"))
            o->tags = r->tags[j];
        if (rows_of[x->region_map[r->rows[j].file_region]]++ == 0 && r->ev_meta &&
            r->ev_meta[j]) {
            o->md = r->ev_meta[j];
            o->md_calls = r->rows[j].count;
        } else {
            o->md = NULL; /* several rows: no one list fits them all */
        }
    }
    free(rows_of);
    return info;
}

/* Writes the merged .h5 to tmp: layout, every row's events, then the
 * calls carried across checkpoints and the counters.  Returns 0 or a code
 * (message set). */
static int hmerge_write_file(hmerge_t *h, const char *tmp) {
    sps__layout_t lay;
    hmerge_layout(h, &lay);
    sps__rinfo_t *info = hmerge_info(h);
    if (!info) return sps__err_fail(SPS_ENOMEM, "out of memory");
    lay.info = info;
    sps__h5w_t *w;
    int rc = sps__h5w_open(&w, tmp, &lay);
    if (rc) {
        free(info);
        return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
    }
    sps__pline_init(&h->line, "merging into", h->out, "events", 0, 0);
    if (h->copy) rc = hmerge_copy_events(h, w);
    for (size_t k = 0; !h->copy && rc == 0 && k < h->nrows; k++)
        rc = streamed(&h->in[h->src[k].input]) ? hmerge_events_stream(h, w, k)
                                               : hmerge_events(h, w, k);
    sps__pline_end(&h->line, h->nevents, rc);
    /* how a chunk-copy merge wrote the events, in /metadata mpi_merge (the
     * writer reads the layout's strings at close) */
    char how[96], *how_key = "mpi_merge", *how_val = how;
    if (h->copy) {
        snprintf(how, sizeof how, "copy: %llu chunks copied, %llu rewritten",
                 (unsigned long long)h->copied, (unsigned long long)h->rewritten);
        lay.nextra = 1, lay.extra_keys = &how_key, lay.extra_values = &how_val;
    }
    if (rc) {
        sps__h5w_abort(w);
        free(info);
        return rc;
    }
    rc = sps__h5w_close(w);
    free(info);
    if (rc) return sps__err_fail(rc, "%s: %s", h->out, sps_strerror(rc));
    if ((rc = hmerge_carried(h, tmp))) return rc;
    if ((rc = hmerge_values(h, tmp))) return rc;
    /* scope-profiler's rank<N> groups (LIKWID, perf events, line
     * profiles), each input's under the rank it became */
    for (size_t i = 0; i < h->n; i++) {
        if (!(h->in[i].has & HAS_RANK_GROUPS)) continue;
        rc = sps__h5_copy_rank_groups(h->in[i].path, tmp,
                                      h->in[i].m.has_rank ? h->in[i].rank : -1);
        if (rc) return sps__err_fail(rc, "%s: cannot copy the rank groups of %s: %s", h->out,
                                     h->in[i].path, sps_strerror(rc));
    }
    if ((rc = hmerge_samples(h, tmp))) return rc;
    if ((rc = hmerge_device(h, tmp))) return rc;
    if ((rc = hmerge_gpu_write(h, tmp))) return rc;
    if ((rc = hmerge_counters(h, tmp))) return rc;
    return h->part ? sps__part_plan_write(tmp, &h->opts->plan) : 0;
}

/* The kind's write: takes the inputs' ranks and shifts from al, builds
 * the rows and writes the file to tmp.  0 or a code (message set). */
static int h5_write(void *st, const char *out, const char *tmp,
                    const sps__align_t *al, int ref, sps__merge_opts_t *opts) {
    hmerge_t *h = st;
    h->out = out;
    h->ref = ref;
    for (size_t i = 0; i < h->n; i++) {
        h->in[i].rank = al[i].rank;
        h->in[i].offset = al[i].offset;
        h->in[i].al = al[i];
    }
    h->opts = opts;
    h->part = opts && opts->part;
    if (h->part) h->pad = opts->plan.base % SPS__H5_CHUNK;
    else h->copy = opts && opts->trusted && copy_check(h); /* never a stranger's bytes */
    for (size_t i = 0; !h->copy && i < h->n; i++) { /* merged event by event: reopen */
        int rc = h->in[i].released ? sps__h5r_reacquire(h->in[i].h5, h->in[i].path, 0) : 0;
        if (rc) return sps__err_fail(rc, "%s", sps__err_msg());
        h->in[i].released = 0;
    }
    int rc = hmerge_alloc(h);
    if (rc == 0) rc = hmerge_rows(h);
    if (rc == 0) rc = hmerge_write_file(h, tmp);
    if (opts) {
        opts->copied = h->copy;
        opts->chunks_copied = h->copied;
        opts->chunks_rewritten = h->rewritten;
    }
    return rc;
}

const sps__merge_kind_t sps__merge_to_h5 = {
    h5_create, h5_open, h5_write, h5_free,
};
