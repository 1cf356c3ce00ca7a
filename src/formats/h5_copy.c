/* h5_copy.c -- the clean copy of an untrusted HDF5 file (h5_read.h:
 * sps__h5_copy), made by the isolated check's child so that the caller's
 * libhdf5 never parses the untrusted file's own metadata.
 *
 * libhdf5 1.10 reads memory it never set, or past its arrays, on some
 * corrupt files (an attribute table closed on unset entries, a global heap
 * object index past the collection's array), and whether that crashes
 * depends on what the reading process's heap holds there: a check in
 * another process cannot decide it for the caller.  So the child, once its
 * walks got through, has libhdf5 copy every object into a new file
 * (H5Ocopy: groups, datasets, their attributes and strings rewritten by
 * value; compressed chunks copied as they are) and the root group's
 * attributes by value.  Every object header, heap and chunk index the
 * caller then parses was written by libhdf5; what it still meets of the
 * untrusted file is values and deflate streams, which the readers and the
 * filter check. */
#include "formats/h5_device.h"
#include "formats/h5_read.h"
#include "formats/merge.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the attribute name of src (an open object) onto dst, by value. */
static herr_t attr_copy(hid_t src, const char *name, const H5A_info_t *info, void *op) {
    (void)info;
    hid_t dst = *(hid_t *)op, a = H5Aopen(src, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_DEFAULT) : -1;
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    size_t sz = mt >= 0 ? H5Tget_size(mt) : 0;
    herr_t rc = -1;
    void *buf = n >= 0 && sz ? calloc((size_t)(n ? n : 1), sz) : NULL;
    if (buf && H5Aread(a, mt, buf) >= 0) {
        hid_t b = H5Acreate2(dst, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
        if (b >= 0 && H5Awrite(b, mt, buf) >= 0) rc = 0;
        if (b >= 0) H5Aclose(b);
        if (H5Tdetect_class(mt, H5T_VLEN) > 0 ||
            (H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0))
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    }
    free(buf);
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
    return rc;
}

/* Copies the link name of the root group src into the root group dst:
 * a hard link's object with everything under it, a soft link as a soft
 * link; other kinds are left out (the readers follow neither). */
static herr_t link_copy(hid_t src, const char *name, const H5L_info_t *info, void *op) {
    hid_t dst = *(hid_t *)op;
    if (info->type == H5L_TYPE_HARD)
        return H5Ocopy(src, name, dst, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
    if (info->type != H5L_TYPE_SOFT || info->u.val_size == 0 || info->u.val_size > 65536)
        return 0;
    char *target = malloc(info->u.val_size);
    herr_t rc = -1;
    if (target && H5Lget_val(src, name, target, info->u.val_size, H5P_DEFAULT) >= 0) {
        target[info->u.val_size - 1] = '\0';
        rc = H5Lcreate_soft(target, dst, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
    }
    free(target);
    return rc;
}

int sps__h5_copy(const char *src_path, const char *dst_path) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t src = H5Fopen(src_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (src < 0) return SPS__H5_COPY_NONE; /* the reader opens it, and says why not */
    hid_t dst = H5Fcreate(dst_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int rc = dst < 0 ? 9 : 0;
    if (!rc) {
        hsize_t at = 0;
        if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_NATIVE, &at, attr_copy, &dst) < 0 ||
            H5Literate(src, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, link_copy, &dst) < 0)
            rc = 9;
        if (H5Fclose(dst) < 0) rc = 9;
    }
    H5Fclose(src);
    return rc;
}

typedef struct rank_copy {
    hid_t dst;
    int64_t rank; /* -1: keep the name */
} rank_copy_t;

/* H5Literate callback: copies a "rank<N>" group of the root (digits only
 * after "rank") into rc->dst. */
static herr_t rank_group_copy(hid_t src, const char *name, const H5L_info_t *info, void *op) {
    const rank_copy_t *rc = op;
    if (info->type != H5L_TYPE_HARD || strncmp(name, "rank", 4) != 0 || !name[4]) return 0;
    for (const char *p = name + 4; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    H5O_info_t oi;
    if (H5Oget_info_by_name(src, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
        return 0;
    char out[32];
    if (rc->rank >= 0) snprintf(out, sizeof out, "rank%lld", (long long)rc->rank);
    else snprintf(out, sizeof out, "%.31s", name);
    if (H5Lexists(rc->dst, out, H5P_DEFAULT) > 0) return 0;
    return H5Ocopy(src, name, rc->dst, out, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}

int sps__h5_copy_rank_groups(const char *src_path, const char *dst_path, int64_t rank) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    hid_t src = (hid_t)sps__h5_fopen(src_path, H5F_ACC_RDONLY);
    hid_t dst = src >= 0 ? H5Fopen(dst_path, H5F_ACC_RDWR, H5P_DEFAULT) : H5I_INVALID_HID;
    int rc = src < 0 || dst < 0 ? SPS_EIO : 0;
    rank_copy_t op = {dst, rank};
    if (!rc && H5Literate(src, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, rank_group_copy, &op) < 0)
        rc = SPS_EHDF5;
    if (dst >= 0 && H5Fclose(dst) < 0 && !rc) rc = SPS_EIO;
    if (src >= 0) H5Fclose(src);
    return sps__h5_quiet_end(&q, rc);
}

/* ---- an .h5 -> .h5 convert's carrying (sps__h5_carry_device) ------------ */

/* One span of either file, as the pairing sees it. */
typedef struct ckey {
    int64_t rank, thread, start, dur, region; /* region: out's id, -1 none */
    int64_t call;                             /* its call id */
    uint64_t ev;                              /* its event index */
} ckey_t;

static int ckey_cmp(const void *a, const void *b) {
    const ckey_t *x = a, *y = b;
    const int64_t kx[6] = {x->rank, x->thread, x->start, x->dur, x->region, x->call};
    const int64_t ky[6] = {y->rank, y->thread, y->start, y->dur, y->region, y->call};
    for (int i = 0; i < 6; i++)
        if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* (rank, call id of in) -> call id of out, sorted for bsearch. */
typedef struct cmap {
    int64_t rank, in_call, out_call;
} cmap_t;

static int cmap_cmp(const void *a, const void *b) {
    const cmap_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->in_call > y->in_call) - (x->in_call < y->in_call);
}

/* The call id of out paired with in's call id call of rank rank; -1 for
 * -1 or a call id no span of in has. */
static int64_t cmap_find(const cmap_t *m, size_t n, int64_t rank, int64_t call) {
    if (call < 0) return -1;
    cmap_t key = {rank, call, 0};
    const cmap_t *hit = n ? bsearch(&key, m, n, sizeof *m, cmap_cmp) : NULL;
    return hit ? hit->out_call : -1;
}

/* The spans of r as keys (region: through rmap into out's names, -1 for
 * a name out lacks); NULL when out of memory. */
static ckey_t *ckeys(const sps__h5r_t *r, const int64_t *rmap) {
    ckey_t *k = malloc((r->nevents + 1) * sizeof *k);
    if (!k) return NULL;
    for (uint64_t e = 0; e < r->nevents; e++) /* an event no row covers pairs with none */
        k[e] = (ckey_t){-1, -1, 0, 0, -1, -1, e};
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *w = &r->rows[i];
        for (uint64_t e = w->offset; e < w->offset + w->count && e < r->nevents; e++)
            k[e] = (ckey_t){w->rank, r->thread_ids ? r->thread_ids[e] : 0, r->start[e],
                            r->dur[e], rmap ? rmap[w->file_region] : (int64_t)w->file_region,
                            r->call_ids ? r->call_ids[e] : (int64_t)e, e};
    }
    return k;
}

/* The carrying's state (everything owned). */
typedef struct carry {
    sps__h5r_t *ri, *ro;
    sps__h5r_device_t dev;
    sps__h5r_samples_t smp;
    sps__strtab_t names;     /* out's region names, ids = out's indexes */
    int64_t *rmap;           /* in's region id -> out's */
    ckey_t *ki, *ko;
    cmap_t *map;             /* by (rank, in call) */
    int64_t *out_of_in;      /* in's event -> out's */
    int64_t *gpu;            /* out's gpu_durations */
    int64_t *col;            /* /device's columns; /samples' regions, call ids */
} carry_t;

static void carry_free(carry_t *c) {
    sps__h5r_free(c->ri);
    sps__h5r_free(c->ro);
    sps__h5r_device_free(&c->dev);
    sps__h5r_samples_free(&c->smp);
    sps__strtab_free(&c->names);
    free(c->rmap), free(c->ki), free(c->ko), free(c->map), free(c->out_of_in);
    free(c->gpu), free(c->col);
}

/* An out region id for the region name s, -1 when out has none such. */
static int64_t out_region(carry_t *c, const char *s) {
    int64_t id = sps__strtab_id(&c->names, s); /* out's names came first */
    return id >= 0 && (size_t)id < c->ro->nnames ? id : -1;
}

/* Pairs in's spans with out's (c->map, c->out_of_in).  0, SPS_EMODE (why
 * set) or SPS_ENOMEM. */
static int carry_pair(carry_t *c, const char *in) {
    const sps__h5r_t *ri = c->ri, *ro = c->ro;
    if (ri->aggregate || !ri->call_ids)
        return sps__err_fail(SPS_EMODE, "%s has %s: its rows cannot be matched to the "
                             "rewritten spans", in, ri->aggregate ? "no spans (aggregate)"
                                                                  : "no call ids");
    if (ri->nevents != ro->nevents)
        return sps__err_fail(SPS_EMODE, "%s has %llu spans, the rewrite %llu", in,
                             (unsigned long long)ri->nevents, (unsigned long long)ro->nevents);
    for (size_t i = 0; i < ro->nnames; i++)
        if (sps__strtab_id(&c->names, ro->names[i]) != (int64_t)i)
            return sps__err_fail(SPS_EMODE, "the rewrite's region names are not distinct");
    if (!(c->rmap = malloc((ri->nnames + 1) * sizeof *c->rmap)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    for (size_t i = 0; i < ri->nnames; i++) c->rmap[i] = out_region(c, ri->names[i]);
    c->ki = ckeys(ri, c->rmap);
    c->ko = ckeys(ro, NULL);
    c->map = malloc((ri->nevents + 1) * sizeof *c->map);
    c->out_of_in = malloc((ri->nevents + 1) * sizeof *c->out_of_in);
    if (!c->ki || !c->ko || !c->map || !c->out_of_in)
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    size_t n = (size_t)ri->nevents;
    qsort(c->ki, n, sizeof *c->ki, ckey_cmp);
    qsort(c->ko, n, sizeof *c->ko, ckey_cmp);
    for (size_t i = 0; i < n; i++) {
        const ckey_t *a = &c->ki[i], *b = &c->ko[i];
        if (a->rank != b->rank || a->thread != b->thread || a->start != b->start ||
            a->dur != b->dur || a->region != b->region)
            return sps__err_fail(SPS_EMODE, "a span of %s (rank %lld, thread %lld, start "
                                 "%lld ns) has no equal in the rewrite", in,
                                 (long long)a->rank, (long long)a->thread, (long long)a->start);
        c->map[i] = (cmap_t){a->rank, a->call, b->call};
        c->out_of_in[a->ev] = (int64_t)b->ev;
    }
    qsort(c->map, n, sizeof *c->map, cmap_cmp);
    for (size_t i = 1; i < n; i++)
        if (c->map[i].rank == c->map[i - 1].rank && c->map[i].in_call == c->map[i - 1].in_call)
            return sps__err_fail(SPS_EMODE, "%s: call id %lld of rank %lld names two spans",
                                 in, (long long)c->map[i].in_call, (long long)c->map[i].rank);
    return 0;
}

/* Writes out's summary_statistics' gpu_count / gpu_total from c->gpu, per
 * index row (its event_offsets / event_counts as out stores them).
 * 0 or SPS_EHDF5. */
static int carry_summary(const carry_t *c, const char *out) {
    hid_t f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gopen2(f, "rank_region_index", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t d = g >= 0 ? H5Dopen2(g, "summary_statistics", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t off = g >= 0 ? H5Dopen2(g, "event_offsets", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t cnt = g >= 0 ? H5Dopen2(g, "event_counts", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hid_t mt = H5Tcreate(H5T_COMPOUND, 2 * sizeof(int64_t));
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    int64_t *o = n >= 0 ? malloc(((size_t)n * 4 + 1) * sizeof *o) : NULL;
    int ok = o && off >= 0 && cnt >= 0 && mt >= 0 &&
             H5Tinsert(mt, "gpu_count", 0, H5T_NATIVE_INT64) >= 0 &&
             H5Tinsert(mt, "gpu_total", sizeof(int64_t), H5T_NATIVE_INT64) >= 0 &&
             H5Dread(off, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, o) >= 0 &&
             H5Dread(cnt, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, o + n) >= 0;
    for (hssize_t i = 0; ok && i < n; i++) {
        int64_t k = 0, t = 0;
        for (int64_t e = o[i]; e >= 0 && e < o[i] + o[n + i] &&
                               (uint64_t)e < c->ro->nevents; e++)
            if (c->gpu[e] >= 0) {
                k++;
                if (__builtin_add_overflow(t, c->gpu[e], &t)) t = INT64_MAX;
            }
        o[2 * n + 2 * i] = k;
        o[2 * n + 2 * i + 1] = t;
    }
    if (ok && n && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, o + 2 * n) < 0) ok = 0;
    free(o);
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (cnt >= 0) H5Dclose(cnt);
    if (off >= 0) H5Dclose(off);
    if (d >= 0) H5Dclose(d);
    if (g >= 0) H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0) ok = 0;
    return ok ? 0 : sps__err_fail(SPS_EHDF5, "%s: cannot write the gpu_count / gpu_total "
                                  "of summary_statistics", out);
}

/* Adds /events/gpu_durations (c->gpu) to out.  0 or SPS_EHDF5. */
static int carry_gpu_column(const carry_t *c, const char *out) {
    hsize_t dim[1] = {c->ro->nevents};
    hid_t f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gopen2(f, "events", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t sp = g >= 0 ? H5Screate_simple(1, dim, NULL) : H5I_INVALID_HID;
    hid_t d = sp >= 0 ? H5Dcreate2(g, "gpu_durations", H5T_STD_I64LE, sp, H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT)
                      : H5I_INVALID_HID;
    int ok = d >= 0 && (dim[0] == 0 || H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                                                H5P_DEFAULT, c->gpu) >= 0);
    if (d >= 0 && H5Dclose(d) < 0) ok = 0;
    if (sp >= 0) H5Sclose(sp);
    if (g >= 0) H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0) ok = 0;
    return ok ? 0 : sps__err_fail(SPS_EHDF5, "%s: cannot add /events/gpu_durations", out);
}

/* /device of in, its rows' launching spans moved to out's. */
static int carry_dev(carry_t *c, const char *out) {
    const sps__h5r_device_t *x = &c->dev;
    size_t n = x->n;
    if (!(c->col = malloc((SPS__DEVC_N * n + 1) * sizeof *c->col)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    const int64_t *src[SPS__DEVC_N] = {
        x->kinds, x->names_idx, x->devices, x->contexts, x->streams, x->correlations,
        x->starts_ns, x->ends_ns, x->bytes, x->ranks, x->threads, x->tids, x->regions,
        x->call_ids, x->grid_x, x->grid_y, x->grid_z, x->block_x, x->block_y, x->block_z,
        x->copy_kinds, x->src_kinds, x->dst_kinds, x->cbids};
    sps__h5_device_t o;
    memset(&o, 0, sizeof o);
    for (int k = 0; k < SPS__DEVC_N; k++) {
        int64_t *v = c->col + (size_t)k * n;
        for (size_t i = 0; i < n; i++) v[i] = src[k] ? src[k][i] : 0;
        o.cols[k] = v;
    }
    int64_t *rg = c->col + (size_t)SPS__DEVC_REGIONS * n;
    int64_t *cid = c->col + (size_t)SPS__DEVC_CALL_IDS * n;
    for (size_t i = 0; i < n; i++) {
        int64_t r = x->regions[i];
        rg[i] = r >= 0 ? out_region(c, x->region_names[r]) : -1;
        cid[i] = cmap_find(c->map, (size_t)c->ri->nevents, x->ranks[i], x->call_ids[i]);
    }
    o.n = n;
    o.nnames = x->nnames;
    o.names = (const char *const *)x->names;
    o.collector = x->collector;
    o.clock = x->clock;
    o.dropped = x->dropped;
    o.cupti_version = x->cupti_version;
    o.gpu_dur = c->gpu; /* /events/gpu_durations with it (NULL: none) */
    o.nevents = c->ro->nevents;
    int rc = sps__h5_add_device(out, &o);
    return rc ? sps__err_fail(rc, "%s: cannot add /device: %s", out, sps_strerror(rc)) : 0;
}

/* /samples of in, their spans and regions moved to out's. */
static int carry_smp(carry_t *c, const char *out) {
    const sps__h5r_samples_t *x = &c->smp;
    size_t n = x->n;
    free(c->col);
    if (!(c->col = malloc((2 * n + 1) * sizeof *c->col)))
        return sps__err_fail(SPS_ENOMEM, "out of memory");
    int64_t *rg = c->col, *cid = c->col + n;
    for (size_t i = 0; i < n; i++) {
        rg[i] = x->regions[i] >= 0 ? out_region(c, x->names[x->regions[i]]) : -1;
        cid[i] = cmap_find(c->map, (size_t)c->ri->nevents, x->ranks[i], x->call_ids[i]);
    }
    sps__h5_samples_t o = {n, x->times_ns, x->threads, x->tids, x->ranks, rg, cid,
                           x->stacks, x->weights, x->nstacks, x->stack_offsets,
                           x->stack_frames, x->nframes,
                           (const char *const *)x->functions, (const char *const *)x->files,
                           (const char *const *)x->modules, x->lines, x->kinds,
                           x->addresses, x->hz, x->lost};
    int rc = sps__h5_add_samples(out, &o);
    return rc ? sps__err_fail(rc, "%s: cannot add /samples: %s", out, sps_strerror(rc)) : 0;
}

/* Whether the file at in has /events/gpu_durations, asked of its index
 * reader (cheap: no events read).  0 or the reader's code. */
static int gpu_column(const char *in, int *has) {
    sps__h5r_t *r = NULL;
    int rc = sps__h5r_open_index(&r, in);
    hid_t f = rc == 0 ? (hid_t)r->h_file : H5I_INVALID_HID;
    *has = f >= 0 && H5Lexists(f, "events", H5P_DEFAULT) > 0 &&
           H5Lexists(f, "events/gpu_durations", H5P_DEFAULT) > 0;
    sps__h5r_free(r);
    return rc;
}

static int carry_run(carry_t *c, const char *in, const char *out, unsigned *what) {
    int gpu = 0;
    int rc = sps__h5r_device(in, &c->dev);
    if (!rc) rc = sps__h5r_samples(in, &c->smp);
    if (!rc) rc = gpu_column(in, &gpu);
    if (rc) return rc;
    unsigned has = (c->dev.present ? SPS__CARRY_DEVICE : 0) |
                   (c->smp.n || c->smp.hz || c->smp.lost ? SPS__CARRY_SAMPLES : 0) |
                   (gpu ? SPS__CARRY_GPU : 0);
    if (what) *what = has;
    if (!has) return 0; /* the common case: nothing read whole */
    if ((rc = sps__h5r_open(&c->ri, in))) return rc;
    if ((rc = sps__h5r_open(&c->ro, out))) return rc;
    if ((rc = carry_pair(c, in))) return rc;
    if (c->ri->gpu_dur) {
        if (!(c->gpu = malloc((c->ro->nevents + 1) * sizeof *c->gpu)))
            return sps__err_fail(SPS_ENOMEM, "out of memory");
        for (uint64_t e = 0; e < c->ri->nevents; e++)
            c->gpu[c->out_of_in[e]] = c->ri->gpu_dur[e];
    }
    /* every reader is done: out is written only from here on */
    if (c->dev.present) rc = carry_dev(c, out);
    else if (c->gpu) rc = carry_gpu_column(c, out);
    if (!rc && c->gpu) rc = carry_summary(c, out);
    if (!rc && (has & SPS__CARRY_SAMPLES)) rc = carry_smp(c, out);
    return rc;
}

int sps__h5_carry_device(const char *in, const char *out, unsigned *what) {
    if (what) *what = 0;
    carry_t c;
    memset(&c, 0, sizeof c);
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    int rc = carry_run(&c, in, out, what);
    carry_free(&c);
    return sps__h5_quiet_end(&q, rc);
}
