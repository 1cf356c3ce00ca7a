/* device_read.c -- sps_device_read / sps_device_free: a file's /device
 * (CUDA activity, docs/device.md) through the one checked reader
 * (formats/h5_read.h: sps__h5r_device), handed out as the public
 * sps_device_t over the reader's arrays. */
#include "api/api.h"
#include "formats/h5_read.h"

#include <stdlib.h>
#include <string.h>

int sps_device_read(const char *path, sps_device_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    sps__err_clear();
    if (!path) return sps__err_fail(SPS_EINVAL, "no file given");
    sps__h5r_device_t *x = calloc(1, sizeof *x);
    if (!x) return SPS_ENOMEM;
    int rc = sps__h5r_device(path, x);
    if (rc) {
        free(x);
        return rc;
    }
    *out = (sps_device_t){
        x->n, x->kinds, x->names_idx, x->devices, x->contexts, x->streams,
        x->correlations, x->starts_ns, x->ends_ns, x->bytes, x->ranks, x->threads,
        x->tids, x->regions, x->call_ids, x->grid_x, x->grid_y, x->grid_z,
        x->block_x, x->block_y, x->block_z, x->copy_kinds, x->src_kinds,
        x->dst_kinds, x->nnames, (const char *const *)x->names, x->nregion_names,
        (const char *const *)x->region_names, x->present, x->collector, x->clock,
        x->dropped, x->cupti_version, x};
    return 0;
}

void sps_device_free(sps_device_t *d) {
    if (!d) return;
    sps__h5r_device_free(d->impl_);
    free(d->impl_);
    memset(d, 0, sizeof *d);
}

const int64_t *sps_device_cbids(const sps_device_t *d) {
    if (!d || !d->impl_) return NULL;
    return ((const sps__h5r_device_t *)d->impl_)->cbids;
}
