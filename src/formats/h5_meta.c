/* h5_meta.c -- one /metadata attribute set in a written .h5 (what a run
 * learns only after the file exists: `spanscope run --follow`'s process
 * table in the merged file, docs/process-trees.md). */
#include "formats/formats.h"
#include "formats/h5_read.h"

#include <errno.h>
#include <hdf5.h>

/* Sets (or replaces) /metadata's attribute key to the string value, a
 * variable-length UTF-8 scalar as the writer stores its strings, in the
 * closed HDF5 file at path; /metadata is made when the file lacks it.
 * key and value are borrowed.  Returns 0, SPS_EIO (the file cannot be
 * opened for writing: message set) or SPS_EHDF5. */
int sps__h5_meta_put(const char *path, const char *key, const char *value) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return sps__h5_quiet_end(&q, sps__err_fail(SPS_EIO, "%s: cannot open it for writing",
                                                   path));
    int rc = SPS_EHDF5;
    htri_t has = H5Lexists(f, "metadata", H5P_DEFAULT);
    hid_t g = has > 0 ? H5Gopen2(f, "metadata", H5P_DEFAULT)
              : has == 0 ? H5Gcreate2(f, "metadata", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                         : H5I_INVALID_HID;
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = H5I_INVALID_HID;
    if (g >= 0 && t >= 0 && s >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
        H5Tset_cset(t, H5T_CSET_UTF8) >= 0 &&
        (H5Aexists(g, key) <= 0 || H5Adelete(g, key) >= 0) &&
        (a = H5Acreate2(g, key, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
        H5Awrite(a, t, &value) >= 0)
        rc = 0;
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    if (g >= 0) H5Gclose(g);
    if (H5Fclose(f) < 0 && !rc) rc = SPS_EHDF5;
    if (rc) sps__err_set("%s: cannot set /metadata %s", path, key);
    return sps__h5_quiet_end(&q, rc);
}
