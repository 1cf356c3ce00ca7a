/* mpi_h5.h -- reading the MPI tests' files with plain HDF5 calls (what a
 * test linked with the shared library, without spanscope's internal
 * reader, can use). */
#ifndef SPS_MPI_H5_H
#define SPS_MPI_H5_H

#include <hdf5.h>
#include <stdint.h>

/* int64 attribute attr of object obj in the file at path, -999 when it
 * cannot be read. */
static inline int64_t meta_i64(const char *path, const char *obj, const char *attr) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = H5Aopen_by_name(f, obj, attr, H5P_DEFAULT, H5P_DEFAULT);
    int64_t v = -999;
    if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &v) < 0) v = -999;
    H5Aclose(a);
    H5Fclose(f);
    return v;
}

/* String attribute attr of object obj in the file at path into buf (cap
 * bytes, NUL-terminated); "" when it cannot be read. */
static inline const char *meta_str(const char *path, const char *obj, const char *attr, char *buf,
                            size_t cap) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = H5Aopen_by_name(f, obj, attr, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    buf[0] = 0;
    H5Tset_size(t, cap);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    hid_t ft = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    if (ft >= 0 && H5Tis_variable_str(ft) > 0) {
        char *v = NULL;
        H5Tset_size(t, H5T_VARIABLE);
        if (H5Aread(a, t, &v) >= 0 && v) snprintf(buf, cap, "%s", v);
        if (v) H5free_memory(v);
    } else if (ft >= 0 && H5Aread(a, t, buf) < 0) {
        buf[0] = 0;
    }
    buf[cap - 1] = 0;
    H5Tclose(t);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    H5Fclose(f);
    return buf;
}

/* Reads dataset `name` as int64 (at most cap values) into out; returns its
 * length, 0 when it cannot be read or is longer than cap. */
static inline size_t read_col(const char *path, const char *name, int64_t *out, size_t cap) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    if (n < 0 || (size_t)n > cap || H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        n = 0;
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    return (size_t)n;
}

#endif
