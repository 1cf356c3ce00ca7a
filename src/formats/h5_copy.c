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
#include "formats/h5_read.h"

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
    hid_t src = H5Fopen(src_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dst = src >= 0 ? H5Fopen(dst_path, H5F_ACC_RDWR, H5P_DEFAULT) : H5I_INVALID_HID;
    int rc = src < 0 || dst < 0 ? SPS_EIO : 0;
    rank_copy_t op = {dst, rank};
    if (!rc && H5Literate(src, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, rank_group_copy, &op) < 0)
        rc = SPS_EHDF5;
    if (dst >= 0 && H5Fclose(dst) < 0 && !rc) rc = SPS_EIO;
    if (src >= 0) H5Fclose(src);
    return sps__h5_quiet_end(&q, rc);
}
