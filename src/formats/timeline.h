/*
 * timeline.h -- the one interface between span sources (a recording, an
 * HDF5 file, a trace file) and timeline writers/readers (Chrome trace JSON,
 * Perfetto protobuf).
 *
 * A timeline is: processes (one per rank), threads (tracks) inside them,
 * interned span names, and spans.  Spans are delivered in global order of
 * start time; ties are broken so that an enclosing span comes before the
 * spans it contains (longer first).  On one thread spans nest properly (a
 * child lies inside its parent), which is what lets a writer emit begin/end
 * pairs with a stack and delta-encoded timestamps without buffering.
 *
 * Besides spans a timeline has counter samples and flow points (torch's
 * ph "C" and "s"/"t"/"f" events).  They are few next to spans and come
 * with the header, all at once, in time order.
 *
 * Writers never hold more than O(threads + names) state (plus, for
 * Perfetto, a copy of the header's counters and flows).  Trace readers
 * (JSON, Perfetto) receive spans in file order and sort them with a
 * bounded-memory external sort (sps__xsort_*, spansort.c), so a 10^7-span
 * conversion runs in bounded memory either way.
 */
#ifndef SPS_TIMELINE_H
#define SPS_TIMELINE_H

#include "formats/formats.h"

typedef enum {
    SPS__TL_UNKNOWN = 0,
    SPS__TL_H5,         /* .h5 / .hdf5 */
    SPS__TL_JSON,       /* .json (Chrome trace event format) */
    SPS__TL_JSON_GZ,    /* .json.gz */
    SPS__TL_PFTRACE     /* .pftrace / .perfetto-trace (Perfetto protobuf) */
} sps__tl_format_t;

/* The format named by path's extension. */
SPS__HIDDEN sps__tl_format_t sps__tl_format_of(const char *path);

typedef struct sps__tl_proc {
    int64_t pid;       /* unique per process in the timeline */
    int64_t rank;      /* MPI rank, -1 if none */
    const char *name;  /* "rank N" where there are ranks, else e.g. "spanscope" */
} sps__tl_proc_t;

typedef struct sps__tl_thread {
    int64_t pid;       /* its process */
    int64_t tid;       /* unique within the process */
    const char *name;  /* may be "" */
} sps__tl_thread_t;

/* One counter sample. */
typedef struct sps__tl_counter {
    uint32_t name;   /* index into header names (the counter's name) */
    uint32_t proc;   /* index into header procs */
    int64_t ts_ns;   /* CLOCK_MONOTONIC ns (absolute, like spans) */
    double value;
} sps__tl_counter_t;

/* One flow point: phase 's' starts flow id on its thread, 't' is a step,
 * 'f' ends it.  A flow's points share id (unique per flow in a timeline). */
typedef struct sps__tl_flow {
    uint64_t id;      /* flow id (string ids hashed to 64 bits) */
    uint32_t thread;  /* index into header threads */
    uint32_t name;    /* index into header names (the event's name; cat kept as name when name is absent) */
    int64_t ts_ns;
    char phase;       /* 's', 't' or 'f' */
    uint8_t enclosing;/* bp:"e" */
} sps__tl_flow_t;

typedef struct sps__tl_header {
    size_t nnames;
    const char *const *names;      /* span name id -> valid UTF-8 */
    size_t nprocs;
    const sps__tl_proc_t *procs;
    size_t nthreads;
    const sps__tl_thread_t *threads;
    int64_t base_ns;   /* CLOCK_MONOTONIC ns of time zero in the output */
    const char *trace_name; /* e.g. the source file name, may be NULL */
    int64_t rank, world_size;  /* for torch's distributedInfo; -1 / 0 if none */
    uint64_t nspans;   /* how many spans will follow, 0 if unknown */
    /* Optional clock anchor of the recording host, 0 = none: CLOCK_REALTIME
     * and CLOCK_MONOTONIC ns read back to back (as /metadata
     * wall_anchor_ns / mono_anchor_ns of an .h5), and the host's name
     * (NULL or "" if unknown).  JSON carries them as the top-level
     * "spanscopeClock"; merge aligns inputs with them (docs/merge.md).
     * Every sps__tl_header_t must be zero-initialised so that these stay
     * 0 where nobody sets them. */
    int64_t wall_anchor_ns, mono_anchor_ns;
    const char *hostname;
    /* Counter samples and flow points, each in time order (ts_ns
     * non-decreasing), 0 / NULL when none.  Writers check indices and
     * phases (SPS_EINVAL); non-finite counter values are skipped. */
    size_t ncounters;
    const sps__tl_counter_t *counters; /* time order */
    size_t nflows;
    const sps__tl_flow_t *flows;       /* time order */
    /* The distributed backend for torch's distributedInfo.backend ("nccl",
     * "gloo", "mpi"...), NULL when none is known: then the key is left
     * out (HTA and TensorBoard read a present backend as one in use). */
    const char *backend;
    /* 1: a JSON writer adds what torch's tools read (kineto's conventions,
     * chrome_json.c): kineto's args on every span and the "Record Window
     * End" instant, each span still one slice -- for the torch face's
     * traces, convert and merge.  SPS__TL_TORCH_TB (2): also what the
     * deprecated TensorBoard profiler plugin needs, a cpu_op copy of each
     * span, the "PyTorch Profiler (0)" window span and its start instant
     * (spanscope convert --torch-tb).  0: each span once, with the
     * caller's args only (scope-profiler's export_chrome_trace). */
    int kineto;
} sps__tl_header_t;

/* Checks h's counters and flows: arrays present, indices in range,
 * phases 's'/'t'/'f', ts_ns - h->base_ns within int64.  Returns 0 or
 * SPS_EINVAL (timeline.c). */
SPS__HIDDEN int sps__tl_check_extras(const sps__tl_header_t *h);
/* Stable sort of n records of size sz by the int64 at byte offset ts_off
 * (ts_ns of a counter or flow).  Returns 0 or SPS_ENOMEM (timeline.c). */
SPS__HIDDEN int sps__tl_sort_by_time(void *base, size_t n, size_t sz,
                                     size_t ts_off);
/* A counter value as JSON text (%.17g, '.' whatever the locale) into buf
 * (>= 32 bytes).  Returns its length, 0 when v is not finite. */
SPS__HIDDEN size_t sps__tl_fmt_double(char *buf, size_t cap, double v);

/* sps__tl_header_t.kineto: the TensorBoard profiler plugin's layout. */
#define SPS__TL_TORCH_TB 2

typedef struct sps__tl_span {
    uint32_t name;     /* index into header names */
    uint32_t thread;   /* index into header threads */
    int64_t start_ns;  /* CLOCK_MONOTONIC ns (absolute; writers subtract base_ns) */
    int64_t end_ns;    /* >= start_ns */
    int64_t prior_ns;  /* a call carried across a checkpoint: the ns its
                          children spent in an earlier file (.h5 /carried),
                          which its self time excludes; else 0.  Trace
                          writers do not carry it (docs/design.md). */
} sps__tl_span_t;

/* A timeline writer.  open: validates h (names/threads/procs consistent) and
 * writes the prologue to path; span: one span, in the order above (a writer
 * may return SPS_EINVAL for a span out of order or not nested on its
 * thread); close: writes the epilogue, flushes, frees w even on error;
 * abort: frees w and removes the partial file.  Files are written in place
 * (the caller writes to a temporary name and renames). */
typedef struct sps__tlw sps__tlw_t;
SPS__HIDDEN int sps__tlw_open(sps__tlw_t **out, const char *path,
                              sps__tl_format_t fmt, const sps__tl_header_t *h);
SPS__HIDDEN int sps__tlw_span(sps__tlw_t *w, const sps__tl_span_t *s);
/* Top-level members for the document (JSON text such as "\"a\":1",
 * written as given: sps__cjw_extra), any time before close.  A JSON
 * writer adds them to its epilogue; Perfetto has no place for them and
 * ignores them.  Returns 0, SPS_EINVAL or SPS_ENOMEM. */
SPS__HIDDEN int sps__tlw_extra(sps__tlw_t *w, const char *members);
/* Stack samples placed on the header's threads (formats/export.h:
 * sps__tl_samples_place; the header given to open must have s's threads),
 * written by the format's sample call (sps__cjw_samples: Chrome JSON
 * instants; sps__pfw_samples: Perfetto PerfSample packets), after the
 * spans and before close, once per source.  s is borrowed for the call.
 * Returns 0, SPS_EINVAL (w or s NULL, a sample's thread or time out of
 * range), SPS_ENOMEM or SPS_EIO. */
struct sps__tl_samples;
SPS__HIDDEN int sps__tlw_samples(sps__tlw_t *w, const struct sps__tl_samples *s);
SPS__HIDDEN int sps__tlw_close(sps__tlw_t *w);
SPS__HIDDEN void sps__tlw_abort(sps__tlw_t *w);

/* The format back ends behind sps__tlw_* (same contracts). */
typedef struct sps__cjw sps__cjw_t; /* chrome_json.c */
SPS__HIDDEN int sps__cjw_open(sps__cjw_t **out, const char *path, int gzip,
                              const sps__tl_header_t *h);
SPS__HIDDEN int sps__cjw_span(sps__cjw_t *w, const sps__tl_span_t *s);
SPS__HIDDEN int sps__cjw_span_args(sps__cjw_t *w, const sps__tl_span_t *s,
                                   const char *args);
SPS__HIDDEN int sps__cjw_extra(sps__cjw_t *w, const char *members);
SPS__HIDDEN int sps__cjw_close(sps__cjw_t *w);
SPS__HIDDEN void sps__cjw_abort(sps__cjw_t *w);

typedef struct sps__pfw sps__pfw_t; /* perfetto.c */
SPS__HIDDEN int sps__pfw_open(sps__pfw_t **out, const char *path,
                              const sps__tl_header_t *h);
SPS__HIDDEN int sps__pfw_span(sps__pfw_t *w, const sps__tl_span_t *s);
SPS__HIDDEN int sps__pfw_close(sps__pfw_t *w);
SPS__HIDDEN void sps__pfw_abort(sps__pfw_t *w);

/* A timeline reader: the same header and spans, in the same order, from a
 * file.  Input is untrusted: a truncated, corrupt or hostile file gives
 * SPS_EFORMAT and a one-line message (sps__err_msg), never a crash, a
 * hang or an allocation out of proportion to the file's size.  The header
 * and its strings stay valid until sps__tlr_free. */
typedef struct sps__tlr sps__tlr_t;
SPS__HIDDEN int sps__tlr_open(sps__tlr_t **out, const char *path,
                              sps__tl_format_t fmt);
SPS__HIDDEN const sps__tl_header_t *sps__tlr_header(const sps__tlr_t *r);
/* 1 and *s filled, 0 at the end, or a negative SPS_E* code. */
SPS__HIDDEN int sps__tlr_next(sps__tlr_t *r, sps__tl_span_t *s);
SPS__HIDDEN void sps__tlr_free(sps__tlr_t *r);

/* Back ends behind sps__tlr_* : each returns an object whose first member
 * is a sps__tlr_vt_t (dispatch table), so timeline.c can call through it. */
typedef struct sps__tlr_vt {
    const sps__tl_header_t *(*header)(void *r);
    int (*next)(void *r, sps__tl_span_t *s);
    void (*free)(void *r);
} sps__tlr_vt_t;
SPS__HIDDEN int sps__cjr_open(void **out, const char *path, int gzip); /* chrome_json_read.c */
SPS__HIDDEN int sps__pfr_open(void **out, const char *path);           /* perfetto_read.c */
SPS__HIDDEN int sps__h5tl_open(void **out, const char *path);          /* h5_timeline.c */
/* Back ends report errors with sps__err_set (util.h): one line that names
 * the file. */

/* The readers' bounded-memory external sort (spansort.c).  A record is 32
 * bytes; what its fields mean, and so its order (cmp, qsort-style), is the
 * reader's.  add: appends (spills a full run, sorted, to an unlinked file
 * in $TMPDIR); finish: ends the input; next: records in cmp order (1, 0 at
 * the end, or SPS_EIO); rewind: delivers again from the first.  Errors other than SPS_ENOMEM set the message
 * (sps__err_set) naming what.  The run size is set_run's (tests),
 * else $SPANSCOPE_SORT_RUN, else 2^20 records. */
typedef struct sps__srec {
    int64_t start, end;
    uint32_t thread, name;
    uint64_t ord;
} sps__srec_t;
typedef int (*sps__srec_cmp_t)(const void *a, const void *b);
typedef struct sps__xsort sps__xsort_t;
SPS__HIDDEN int sps__xsort_new(sps__xsort_t **out, sps__srec_cmp_t cmp,
                               const char *what);
SPS__HIDDEN int sps__xsort_add(sps__xsort_t *x, const sps__srec_t *r);
SPS__HIDDEN int sps__xsort_finish(sps__xsort_t *x);
SPS__HIDDEN int sps__xsort_next(sps__xsort_t *x, sps__srec_t *r);
SPS__HIDDEN int sps__xsort_rewind(sps__xsort_t *x); /* deliver again */
SPS__HIDDEN uint64_t sps__xsort_count(const sps__xsort_t *x);
SPS__HIDDEN int sps__xsort_spilled(const sps__xsort_t *x);
SPS__HIDDEN sps__srec_t *sps__xsort_memory(sps__xsort_t *x, size_t *n);
SPS__HIDDEN void sps__xsort_truncate(sps__xsort_t *x, size_t n);
SPS__HIDDEN void sps__xsort_free(sps__xsort_t *x);
SPS__HIDDEN void sps__xsort_set_run(size_t records);

#endif /* SPS_TIMELINE_H */
