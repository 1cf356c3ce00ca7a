/* meta_write.c -- sps_metadata_write: one /metadata attribute set in a
 * written file (spanscope.h). */
#include "api/api.h"
#include "formats/h5_read.h"

int sps_metadata_write(const char *path, const char *key, const char *value, char *err,
                       size_t errlen) {
    sps__err_clear();
    if (!path || !key || !*key || !value)
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "no path, key or value"), err, errlen);
    int rc = sps__h5_guard(path); /* not HDF5, or one HDF5 cannot read safely */
    if (!rc) rc = sps__h5_meta_put(path, key, value);
    return sps__err_copy(rc, err, errlen);
}
