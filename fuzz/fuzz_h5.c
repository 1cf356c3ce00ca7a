/* fuzz_h5.c -- libFuzzer target: the HDF5 reader (h5_read.c: open,
 * validate, call tree, flat view) and the timeline over it
 * (h5_timeline.c), the stack samples (/samples) and the device activity
 * (/device, and its placement on the timeline: device_tl.c), through the isolated check (h5_guard.c): an input that
 * crashes libhdf5 crashes the check's child and is refused (counted, and
 * printed at exit as "fuzz_h5: ..."), so any crash of this process is a
 * file the check let through -- a bug. */
#include "fuzz_util.h"
#include "formats/export.h"
#include "formats/h5_read.h"

#include <stdio.h>
#include <stdlib.h>

/* Reads path with sps__h5r_open and computes everything the tool shows. */
static void read_h5(const char *path) {
    sps__h5r_t *r;
    if (sps__h5r_open(&r, path) != 0) {
        (void)strlen(sps__err_msg());
        return;
    }
    sps__tree_row_t *nodes = NULL;
    sps__tflat_t *flat = NULL;
    size_t nn = 0, nf = 0;
    if (sps__h5r_tree(r, &nodes, &nn) == 0)
        for (size_t i = 0; i < nn; i++) (void)strlen(nodes[i].name);
    if (sps__h5r_flat(r, &flat, &nf) == 0)
        for (size_t i = 0; i < nf; i++) (void)strlen(flat[i].name);
    (void)sps__h5r_session_ns(r);
    free(nodes);
    free(flat);
    sps__h5r_free(r);
}

/* Reads /samples and traps when the reader hands out an index it claims
 * to have checked (h5_read.h) out of range. */
static void read_samples(const char *path) {
    sps__h5r_samples_t x;
    if (sps__h5r_samples(path, &x) != 0) {
        (void)strlen(sps__err_msg());
        return;
    }
    for (size_t i = 0; i < x.n; i++) {
        if (x.regions[i] >= (int64_t)x.nnames || x.regions[i] < -1) __builtin_trap();
        if (x.stacks[i] < 0 || (size_t)x.stacks[i] >= x.nstacks) __builtin_trap();
        if (x.weights[i] < 1) __builtin_trap();
        for (int64_t k = x.stack_offsets[x.stacks[i]]; k < x.stack_offsets[x.stacks[i] + 1]; k++) {
            int64_t f = x.stack_frames[k];
            if (f < 0 || (size_t)f >= x.nframes) __builtin_trap();
            (void)strlen(x.functions[f]);
            (void)strlen(x.files[f]);
            (void)strlen(x.modules[f]);
        }
        if (x.regions[i] >= 0) (void)strlen(x.names[x.regions[i]]);
    }
    sps__h5r_samples_free(&x);
}

/* Reads /device, traps when the reader hands out an index or kind it
 * claims to have checked (h5_read.h) out of range, and places it on the
 * file's timeline header as the trace writers do. */
static void read_device(const char *path) {
    sps__h5r_device_t x;
    if (sps__h5r_device(path, &x) != 0) {
        (void)strlen(sps__err_msg());
        return;
    }
    for (size_t i = 0; i < x.n; i++) {
        if (x.kinds[i] < 1 || x.kinds[i] > 5) __builtin_trap();
        if (x.names_idx[i] < 0 || (size_t)x.names_idx[i] >= x.nnames) __builtin_trap();
        if (x.regions[i] < -1 || x.regions[i] >= (int64_t)x.nregion_names) __builtin_trap();
        if (x.ends_ns[i] < x.starts_ns[i]) __builtin_trap();
        if (x.kinds[i] <= 3 && (x.devices[i] < 0 || x.devices[i] > SPS__DEV_MAX_DEVICE))
            __builtin_trap();
        (void)strlen(x.names[x.names_idx[i]]);
        if (x.regions[i] >= 0) (void)strlen(x.region_names[x.regions[i]]);
    }
    sps__tlr_t *r;
    if (sps__tlr_open(&r, path, SPS__TL_H5) == 0) {
        sps__tl_device_t d;
        if (sps__tl_device_place(&d, &x, sps__tlr_header(r)) == 0) {
            sps__tl_span_t s;
            while (sps__tlr_next(r, &s) > 0) sps__tl_device_claim(&d, &s, 1);
            sps__tl_device_free(&d);
        }
        sps__tlr_free(r);
    }
    sps__h5r_device_free(&x);
}

/* Reads path's /part_plan (a rank's part for the chunk-copy merge of a
 * collective finalize) as a merge does, and its event count. */
static void read_plan(const char *path) {
    sps__h5r_t *r;
    if (sps__h5r_open_index(&r, path) != 0) {
        sps__h5r_free(r);
        return;
    }
    sps__part_plan_t p;
    if (sps__part_plan_read(r->h_file, &p) == 1 && p.pad >= SPS__H5_CHUNK)
        abort(); /* the reader lets no inconsistent plan through */
    sps__h5r_free(r);
    uint64_t n;
    (void)sps__part_events(path, &n);
}

/* At exit: how many inputs the check parsed in a child, and refused. */
static void print_stats(void) {
    uint64_t checked = 0, refused = 0;
    sps_h5_check_stats(&checked, &refused);
    fprintf(stderr, "fuzz_h5: %llu inputs checked in a child process, %llu refused "
            "(libhdf5 crashed, hung or wrote past a buffer there)\n",
            (unsigned long long)checked, (unsigned long long)refused);
}

/* libFuzzer's entry point: reads data as a scope-profiler HDF5 file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int registered;
    if (!registered) registered = !atexit(print_stats);
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    read_h5(path);
    read_samples(path);
    read_device(path);
    read_plan(path);
    fuzz_read_timeline(path, SPS__TL_H5);
    close(fd);
    return 0;
}
