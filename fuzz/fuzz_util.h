/* fuzz_util.h -- what the libFuzzer targets share: the input as a file
 * (the readers take a path), and a check of what a timeline reader hands
 * out against the contract of formats/timeline.h. */
#ifndef SPS_FUZZ_UTIL_H
#define SPS_FUZZ_UTIL_H

#include "formats/timeline.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memory file and puts a path naming it
 * ("/proc/self/fd/N") into path.  Returns the descriptor (close it when
 * done) or -1. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path,
                            size_t cap) {
    int fd = memfd_create("spanscope-fuzz", MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* Opens path with the timeline reader for fmt and reads everything: every
 * header string, counter sample, flow point and span.  Traps when the
 * reader breaks its contract (a span, sample or flow point naming no
 * name, process or thread, a span ending before it starts, samples or
 * flow points out of time order): a caller indexing with those would read
 * out of bounds. */
static inline void fuzz_read_timeline(const char *path, sps__tl_format_t fmt) {
    sps__tlr_t *r;
    if (sps__tlr_open(&r, path, fmt) != 0) {
        (void)strlen(sps__err_msg());
        return;
    }
    const sps__tl_header_t *h = sps__tlr_header(r);
    size_t total = 0;
    for (size_t i = 0; i < h->nnames; i++) total += strlen(h->names[i]);
    for (size_t i = 0; i < h->nprocs; i++) total += strlen(h->procs[i].name);
    for (size_t i = 0; i < h->nthreads; i++) total += strlen(h->threads[i].name);
    if (h->trace_name) total += strlen(h->trace_name);
    for (size_t i = 0; i < h->ncounters; i++)
        if (h->counters[i].name >= h->nnames || h->counters[i].proc >= h->nprocs ||
            (i && h->counters[i].ts_ns < h->counters[i - 1].ts_ns))
            __builtin_trap();
    for (size_t i = 0; i < h->nflows; i++)
        if (h->flows[i].name >= h->nnames || h->flows[i].thread >= h->nthreads ||
            (i && h->flows[i].ts_ns < h->flows[i - 1].ts_ns))
            __builtin_trap();
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0)
        if (s.name >= h->nnames || s.thread >= h->nthreads ||
            s.end_ns < s.start_ns)
            __builtin_trap();
    if (rc < 0) (void)strlen(sps__err_msg());
    sps__tlr_free(r);
    (void)total;
}

#endif
