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

#endif /* SPS_FORMATS_EXPORT_H */
