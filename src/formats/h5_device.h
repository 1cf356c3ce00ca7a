/* h5_device.h -- the HDF5 writer's device part (src/formats/h5.c;
 * docs/device.md): /device and /events/gpu_durations added to a closed
 * file by finalize (src/api/device.c). */
#ifndef SPS_FORMATS_H5_DEVICE_H
#define SPS_FORMATS_H5_DEVICE_H

#include "formats/formats.h"

/* /device's int64 columns, in the order of sps__h5_device_t.cols. */
enum {
    SPS__DEVC_KINDS, SPS__DEVC_NAMES_IDX, SPS__DEVC_DEVICES, SPS__DEVC_CONTEXTS,
    SPS__DEVC_STREAMS, SPS__DEVC_CORRELATIONS, SPS__DEVC_STARTS, SPS__DEVC_ENDS,
    SPS__DEVC_BYTES, SPS__DEVC_RANKS, SPS__DEVC_THREADS, SPS__DEVC_TIDS,
    SPS__DEVC_REGIONS, SPS__DEVC_CALL_IDS, SPS__DEVC_GRID_X, SPS__DEVC_GRID_Y,
    SPS__DEVC_GRID_Z, SPS__DEVC_BLOCK_X, SPS__DEVC_BLOCK_Y, SPS__DEVC_BLOCK_Z,
    SPS__DEVC_COPY_KINDS, SPS__DEVC_SRC_KINDS, SPS__DEVC_DST_KINDS,
    SPS__DEVC_CBIDS, /* CUPTI's callback id of an API row, 0 for device rows */
    SPS__DEVC_N
};
/* Their dataset names (SPS__DEVC_N of them). */
SPS__HIDDEN extern const char *const sps__h5_device_cols[SPS__DEVC_N];

typedef struct sps__h5_device {
    size_t n;                        /* rows */
    const int64_t *cols[SPS__DEVC_N]; /* [n] each */
    size_t nnames;
    const char *const *names;
    const char *collector, *clock;   /* attributes */
    int64_t dropped, cupti_version;
    const int64_t *gpu_dur;          /* [nevents] /events/gpu_durations; NULL: none */
    uint64_t nevents;
} sps__h5_device_t;

/* Adds /device (and /events/gpu_durations when x->gpu_dur) to the closed
 * file at path.  0, SPS_EHDF5 or SPS_EIO. */
SPS__HIDDEN int sps__h5_add_device(const char *path, const sps__h5_device_t *x);

#endif /* SPS_FORMATS_H5_DEVICE_H */
