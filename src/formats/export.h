/*
 * export.h -- the exports of a recording for other tools (src/formats/):
 * speedscope JSON (speedscope.c), cProfile's .prof (pstats.c) and a flame
 * graph SVG (flame_svg.c), each written from any timeline source
 * (formats/timeline.h: .h5, .json, .json.gz, .pftrace) through the span
 * selection of export_sel.c, nesting and self time from the one fold
 * (model/fold.c).  The Chrome trace export is the timeline writer itself
 * (src/api/export.c feeds it the selected spans).
 *
 *     sps__tlr_t *r;                 // an open source (sps__tlr_open)
 *     sps__export_sel_t sel;
 *     rc = sps__export_sel_init(&sel, sps__tlr_header(r), &opts);
 *     rc = sps__speedscope_write(fp, r, &sel, &opts);   // or pstats, svg
 *     sps__export_sel_free(&sel);
 *
 * Errors: every function returns 0 or a negative SPS_E* code and, for
 * SPS_EINVAL / SPS_EFORMAT, sets the one-line message (util.h:
 * sps__err_set).
 */
#ifndef SPS_FORMATS_EXPORT_H
#define SPS_FORMATS_EXPORT_H

#include "formats/formats.h"
#include "formats/timeline.h"

#include <stdio.h>

/* What to export and how: the public sps_export_opts_t (spanscope.h),
 * scope-profiler 0.7.5's export options. */
typedef sps_export_opts_t sps__export_opts_t;

/* The selection of a source's spans by opts: which threads belong to a
 * selected rank, which names pass the filters, and each selected
 * thread's lane (0..nlanes-1, in header order). */
typedef struct sps__export_sel {
    const sps__tl_header_t *h;
    int64_t *lane_of_thread;  /* per header thread: its lane, or -1 */
    int64_t *rank_of_thread;  /* per header thread: its rank */
    size_t nlanes;
    uint32_t *lane_thread;    /* per lane: its header thread */
    unsigned char *name_on;   /* per header name: 1 when it passes */
    uint64_t nselected;       /* spans taken so far (sps__export_sel_take) */
    /* optional (NULL: none), per header name: its source location, file
     * NULL where unknown (set by the caller: an .h5's, h5_comm.h) */
    char *const *src_file;
    const int64_t *src_line;
    size_t nsrc;              /* names 0..nsrc-1 have an entry */
    /* optional (NULL: none): an .h5's stack samples, read once by the
     * caller with the one reader (sps__h5r_samples, h5_read.h), for the
     * writers that show them (speedscope, the svg from samples, folded:
     * folded.h) */
    const struct sps__h5r_samples *samples;
} sps__export_sel_t;

/* The rank of every thread of h into rank_of (h->nthreads of them, the
 * caller's array): its process's rank, or the process's index among h's
 * processes when it has none (a trace of several processes: one rank
 * each); 0 for a thread of no known process.  The one rule of the
 * exports (sel->rank_of_thread) and the HTML page (html.c). */
SPS__HIDDEN void sps__export_thread_ranks(const sps__tl_header_t *h, int64_t *rank_of);

/* Which of h's region names pass the patterns, into name_on (h->nnames of
 * them, the caller's array; h and the patterns borrowed): 1 when the name
 * matches one of the ninclude include patterns (none given: every name
 * does) and none of the nexclude exclude patterns.  A pattern is a POSIX
 * extended regex anchored at the name's start ("^(P)": Python's re.match,
 * as scope-profiler takes them); a NULL name counts as "".  *npass (NULL:
 * not wanted) gets how many pass.  Returns 0, SPS_EINVAL for a pattern
 * that does not compile ("bad region pattern 'P'", message set) or
 * SPS_ENOMEM; name_on and *npass are unspecified after an error.  The one
 * matcher of the exports and the HTML page (html.c). */
SPS__HIDDEN int sps__export_names_pass(const sps__tl_header_t *h,
                                       const char *const *include, size_t ninclude,
                                       const char *const *exclude, size_t nexclude,
                                       unsigned char *name_on, size_t *npass);

/* Builds sel over h by o (both borrowed; h must outlive sel).  Returns 0,
 * SPS_EINVAL (a requested rank the source does not hold: "invalid rank
 * requested: N (the file holds ranks A..B)"; a bad pattern; no region
 * passes the filters: "no regions matched the selected filters") or
 * SPS_ENOMEM. */
SPS__HIDDEN int sps__export_sel_init(sps__export_sel_t *sel,
                                     const sps__tl_header_t *h,
                                     const sps__export_opts_t *o);
/* The lane of span s when it is selected (counted in nselected), else -1;
 * SPS_EFORMAT (message set) when s names no thread or region of h. */
SPS__HIDDEN int64_t sps__export_sel_take(sps__export_sel_t *sel,
                                         const sps__tl_span_t *s);
/* The label of lane l: "rank R" when its rank has one thread, else
 * "rank R - NAME" (the thread's name, or "thread TID").  Into buf (cap
 * bytes); returns buf. */
SPS__HIDDEN const char *sps__export_lane_label(const sps__export_sel_t *sel,
                                               size_t l, char *buf, size_t cap);
/* Frees what init allocated (sel may be zeroed or initialised). */
SPS__HIDDEN void sps__export_sel_free(sps__export_sel_t *sel);

/* The call tree of the selected spans (the one fold with its tree:
 * sps__fold_tl, lanes = sel's): reads r to its end.  *fold is initialised
 * here; the caller frees it with sps__fold_tl_free.  Returns 0,
 * SPS_EINVAL (no selected span: "no calls recorded for the requested
 * ranks"), SPS_EFORMAT, SPS_ENOMEM or a reader's code. */
SPS__HIDDEN int sps__export_fold_tree(sps__tlr_t *r, sps__export_sel_t *sel,
                                      sps__fold_tl_t *fold);

/* The writers.  Each reads r (an open source at its first span; consumed)
 * and writes its document to fp; fp, r, sel and o are borrowed.  Memory:
 * O(regions + call paths + threads x depth); speedscope's events go
 * through the external sort (bounded memory, spansort.c).  Returns 0,
 * SPS_EIO (writing fp failed) or the codes above. */
/* speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one evented profile per selected lane (a thread of a rank), frames shared,
 * times in seconds from the earliest selected start, exact to the ns. */
SPS__HIDDEN int sps__speedscope_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                                      const sps__export_opts_t *o);
/* cProfile's .prof: marshal'd {(file, line, func): (cc, nc, tt, ct,
 * callers)}, times in s; (file, line) the region's source location
 * (sel->src_file), else ("~", 0) as cProfile writes built-ins. */
SPS__HIDDEN int sps__pstats_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                                  const sps__export_opts_t *o);
/* A flame graph (icicle: the root on top) as SVG: one <rect> per frame
 * drawn, frame width by inclusive time, a <title> per frame. */
SPS__HIDDEN int sps__flame_svg_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                                     const sps__export_opts_t *o);

/* ------------------------------------------------------------------------ */
/* Stack samples on a timeline (issue 34: every writer carries the samples) */
/* ------------------------------------------------------------------------ */

struct sps__h5r_samples; /* h5_read.h */

/* An .h5's stack samples (the one checked reader's, sps__h5r_samples)
 * placed on a timeline header's threads, for the trace writers.  A
 * sample's thread is the header thread whose (pid, tid) is (its rank's
 * process, its /events thread index), the rule h5_timeline.c gives the
 * spans of that thread, so samples land on their spans' row.  A sample
 * whose thread has no such row (a thread without spans: threads -1, or a
 * thread whose spans were all left out) gets a thread of its own, added
 * after the header's: tid its OS tid (or, where that tid is taken, one
 * past the process's highest), named "thread OS_TID (samples)".  A sample
 * of a rank the header has no process for is left out (thread
 * UINT32_MAX: an export of other ranks). */
typedef struct sps__tl_samples {
    const struct sps__h5r_samples *x; /* borrowed: samples, stacks, frames */
    uint32_t *thread;        /* [x->n]: its thread in threads, or UINT32_MAX */
    sps__tl_thread_t *threads; /* the header's threads, then the added ones */
    size_t nthreads;         /* all of them */
    size_t nadded;           /* how many were added */
    char (*label)[48];       /* [nadded] the added threads' names */
    int64_t shift_ns;        /* added to every sample's time (a merge's offset) */
    uint64_t nplaced;        /* samples with a thread */
} sps__tl_samples_t;

/* Places x's samples on h's threads (rules above) into *s (zeroed here;
 * x and h borrowed: x must outlive s).  A rank's process: the one whose
 * rank is that rank, else the one without a rank whose pid is it.
 * Returns 0 or SPS_ENOMEM; free with sps__tl_samples_free. */
SPS__HIDDEN int sps__tl_samples_place(sps__tl_samples_t *s, const struct sps__h5r_samples *x,
                                      const sps__tl_header_t *h);
SPS__HIDDEN void sps__tl_samples_free(sps__tl_samples_t *s);

/* One frame of a sample as text, "file:line (function)" as tensorplay
 * writes a stack entry (a native frame: "module (function)"; a frame with
 * neither: the function alone), into buf (cap bytes); returns buf. */
SPS__HIDDEN const char *sps__tl_frame_text(const struct sps__h5r_samples *x, int64_t frame,
                                           char *buf, size_t cap);

/* The writers' sample events.  Each is called after the writer's open
 * with a header whose threads are s->threads (s->nthreads of them) and
 * before its close, once per source (a merge: once per input, each with
 * its own shift).  Samples left out (thread UINT32_MAX) are skipped.
 *
 * Chrome JSON (chrome_json.c): one instant event per sample, as
 * tensorplay's traces write them:
 *   {"ph":"i","s":"t","cat":"python_function","name":LEAF,"pid":P,"tid":T,
 *    "ts":US,"args":{"stack":["file:line (func)",...innermost first],
 *    "region":"the innermost span's name" (absent outside every span),
 *    "weight":W}}
 * LEAF is the innermost frame's function ("<unknown>" for an empty stack).
 *
 * Perfetto (perfetto.c): one PerfSample packet per sample (TracePacket
 * field 66: pid, tid and callstack_iid) on a sequence of their own with
 * absolute BUILTIN_CLOCK_MONOTONIC timestamps, after an InternedData packet
 * of the source's function names, mapping paths (a frame's file, else its
 * module), mappings, frames (rel_pc: a native frame's address, a Python
 * frame's line) and callstacks (root first, as Perfetto's Callstack
 * lists them); trace processor puts them in its perf_sample table on the
 * thread's utid.  Perfetto counts samples, not weights: a sample of
 * weight W is written W times (at most 64; the exact weight stays in the
 * .h5 and the JSON).
 *
 * Return 0, SPS_EINVAL (a sample's thread out of range, a time that does
 * not fit), SPS_ENOMEM or SPS_EIO (sticky, as the writer's other calls). */
SPS__HIDDEN int sps__cjw_samples(sps__cjw_t *w, const sps__tl_samples_t *s);
SPS__HIDDEN int sps__pfw_samples(sps__pfw_t *w, const sps__tl_samples_t *s);

/* ------------------------------------------------------------------------ */
/* Device activity on a timeline (issue 38: device tracks in every timeline) */
/* ------------------------------------------------------------------------ */

struct sps__h5r_device; /* h5_read.h */

/* An .h5's /device (the one checked reader's, sps__h5r_device) placed on
 * a timeline header, for the trace writers (device_tl.c).
 *
 * Host side: an API row (cudaLaunchKernel, ...) goes on its launching
 * thread's row, found as the samples' are (export.h above: the header
 * thread (its rank's process, its /events thread index)); a thread with no
 * row gets one of its own after the header's, "thread OS_TID (CUDA)"; a
 * rank the header has no process for leaves its rows out (UINT32_MAX).
 * Device side: one GPU process per (host process, device), pid
 * SPS__TL_GPU_PID0 + host process index * 4096 + device, named "GPU N"
 * (with the host process's name after it when the header has several),
 * a track per stream ("stream S", tid S).
 *
 * The launching span: every activity has a launch (its API row's start,
 * the API row found by correlation; a device row without one: its own
 * start), a launching thread row and a launching region (its region's
 * name among the header's names).  The launching span is the innermost
 * span of that name on that row that holds the launch -- the pass's rule
 * (model/pass.h), never "any span in time"; a writer finds it while the
 * spans stream by (sps__tl_device_claim), so that the Chrome writer gives
 * the span's "External id" to the activity. */
#define SPS__TL_GPU_PID0 (1 << 30)
typedef struct sps__tl_gpu {
    int64_t pid;         /* the GPU process's pid in the trace */
    int64_t device;      /* the CUDA device index */
    uint32_t host_proc;  /* its host process (header index) */
    char name[64];       /* "GPU N" [(host process)] */
} sps__tl_gpu_t;
typedef struct sps__tl_device {
    const struct sps__h5r_device *x; /* borrowed */
    uint32_t *thread;      /* [x->n] the launching thread's row, UINT32_MAX: left out */
    uint32_t *name;        /* [x->n] the launching region's header name, UINT32_MAX none */
    uint32_t *gpu;         /* [x->n] a device row's GPU (index into gpus), else UINT32_MAX */
    int64_t *launch;       /* [x->n] the launch, ns (shift_ns not added) */
    int64_t *api;          /* [x->n] a device row's API row (same correlation), -1 none */
    uint64_t *ext;         /* [x->n] the launching span's External id, 0 none (claim) */
    uint32_t *order;       /* placed rows with a name, by (thread, name, launch) */
    size_t norder;
    sps__tl_gpu_t *gpus;
    size_t ngpus;
    sps__tl_thread_t *threads; /* the header's threads, then the added ones */
    size_t nthreads, nadded;
    char (*label)[48];     /* [nadded] the added threads' names */
    int64_t shift_ns;      /* added to every time (a merge's offset) */
    uint64_t flow_base;    /* added to every correlation for flow ids (a merge's input) */
    uint64_t nplaced;      /* rows with a place */
} sps__tl_device_t;

/* Places x on h (rules above) into *d (zeroed here; x and h borrowed: x
 * must outlive d).  Returns 0 or SPS_ENOMEM; free with
 * sps__tl_device_free.  The writer is opened with a header whose threads
 * are d->threads (d->nthreads). */
SPS__HIDDEN int sps__tl_device_place(sps__tl_device_t *d, const struct sps__h5r_device *x,
                                     const sps__tl_header_t *h);
/* sps__tl_device_place for a caller's timeline (sps_timeline_write_device):
 * an API row's thread is the header thread of its process whose tid is
 * x->tids[i] (any int64; x->threads is not read), else a row of its own. */
SPS__HIDDEN int sps__tl_device_place_by_tid(sps__tl_device_t *d,
                                            const struct sps__h5r_device *x,
                                            const sps__tl_header_t *h);
SPS__HIDDEN void sps__tl_device_free(sps__tl_device_t *d);
/* A merge's step: d (placed on an input's own header) moved onto the
 * output's: its threads through thread_map (nmap entries: the input
 * header's threads, then d's added ones), its names through name_map
 * (nnames entries), its GPUs under output process proc, named "GPU N
 * (PROC_NAME)" (NULL: "GPU N"); the launches read again from d->x (whose
 * times the merge may have mapped).  0 or SPS_ENOMEM. */
SPS__HIDDEN int sps__tl_device_remap(sps__tl_device_t *d, const uint32_t *thread_map,
                                     size_t nmap, const uint32_t *name_map, size_t nnames,
                                     uint32_t proc, const char *proc_name);
/* Span s (on d's header) was written with External id ext: every activity
 * of d that s launched takes it (a later, inner span of the same name
 * that holds the launch takes it again, so the innermost one wins). */
SPS__HIDDEN void sps__tl_device_claim(sps__tl_device_t *d, const sps__tl_span_t *s,
                                      uint64_t ext);

/* The writers' device calls.  Register d (borrowed until close) after the
 * writer's open and before its first span; register several (a merge:
 * one per input, each with its shift).  The writer then claims the
 * launching spans as the spans go by and writes the activity at close:
 *
 * Chrome JSON (chrome_json.c), as kineto writes it: every span gets
 * args "External id" (unique per span); an API row is
 *   {"ph":"X","cat":"cuda_runtime"|"cuda_driver","name":..,"pid":P,"tid":T,
 *    "ts","dur","args":{"External id":K,"correlation":C}}
 * on its thread, a device row
 *   {"ph":"X","cat":"kernel"|"gpu_memcpy"|"gpu_memset","name":..,"pid":GPU,
 *    "tid":STREAM,"ts","dur","args":{"External id":K,"correlation":C,
 *    "device":D,"context":X,"stream":S,"grid":[..],"block":[..] (kernels),
 *    "bytes":B,"memory bandwidth (GB/s)":.. (copies, sets)}}
 * (K: the launching span's, left out where none), a flow
 *   {"ph":"s","cat":"ac2g","name":"ac2g","id":C,...} at the API row and
 *   {"ph":"f","bp":"e",...} at the device row, and "M" events naming
 * each GPU process "GPU N" and each stream's thread "stream S".
 *
 * Perfetto (perfetto.c), on a sequence of its own with absolute
 * CLOCK_MONOTONIC times: a process per GPU, a track per stream, each
 * device row a slice there, each API row a slice on its host thread's
 * track, a flow (flow_ids / terminating_flow_ids) from the API row to the
 * device rows it launched.
 *
 * Return 0, SPS_EINVAL (a row's thread or time out of range, a span
 * already written), SPS_ENOMEM or SPS_EIO. */
SPS__HIDDEN int sps__cjw_device(sps__cjw_t *w, sps__tl_device_t *d);
SPS__HIDDEN int sps__pfw_device(sps__pfw_t *w, sps__tl_device_t *d);
SPS__HIDDEN int sps__tlw_device(sps__tlw_t *w, sps__tl_device_t *d);

#endif /* SPS_FORMATS_EXPORT_H */
