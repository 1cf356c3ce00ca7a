/*
 * html.h -- the HTML page of a recording (src/formats/html.c): one
 * self-contained page (inline CSS and JS, no network) with a zoomable
 * timeline on a <canvas> (a label per call depth), a legend of the
 * regions' colours, per-region bars of total and self time, the summary
 * table and the counter tracks, written from any timeline source
 * (formats/timeline.h: .h5, .json, .json.gz, .pftrace); and the page that
 * compares several recordings (sps__html_write_cmp).
 *
 * Colours: regions take the colours of a fixed palette whose first 20 are
 * pairwise far apart (html.c: k_palette), in the order of their total
 * time, so that distinct regions stay distinguishable; past the palette,
 * golden-angle hues.
 *
 *     sps__tlr_t *r;
 *     if (sps__tlr_open(&r, path, sps__tl_format_of(path)) == 0) {
 *         sps__html_opts_t o = {SPS__HTML_DEFAULT_MAX_SPANS, "run.h5", NULL};
 *         rc = sps__html_write(fp, r, &o);
 *         sps__tlr_free(r);
 *     }
 */
#ifndef SPS_HTML_H
#define SPS_HTML_H

#include "formats/formats.h"
#include "formats/timeline.h"

#include <stdint.h>
#include <stdio.h>

/* Spans embedded in the timeline unless told otherwise, and the most the
 * timeline can be asked to embed (spanscope.h; the heap that picks them,
 * util.h: sps__heap, numbers them in 32 bits). */
#define SPS__HTML_DEFAULT_MAX_SPANS SPS_HTML_DEFAULT_MAX_SPANS
#define SPS__HTML_MAX_SPANS_LIMIT SPS_HTML_MAX_SPANS_LIMIT

/* How to write the page. */
typedef struct sps__html_opts {
    /* embed at most this many spans (the longest; <=
     * SPS__HTML_MAX_SPANS_LIMIT); the statistics cover every span */
    size_t max_spans;
    /* the page's title (the tool: the input's file name), HTML-escaped */
    const char *title;
    /* called now and then while the spans are read (done of total; total
     * is the source's estimate, 0 when unknown) and, for large inputs,
     * once at the end with final set; NULL for none.  The library prints
     * nothing itself. */
    void (*progress)(uint64_t done, uint64_t total, int final);
    /* the public options (spanscope.h: filters, ranks, the table's sort
     * and columns, charts, scaling); NULL: their defaults.  Its
     * max_spans, title and progress are not read (the fields above are). */
    const sps_html_options_t *o;
    /* a comparison's runs, per run (NULL: none recorded): /metadata's
     * omp_num_threads and num_nodes, <= 0 where the run did not record
     * them (the scaling section's threads and nodes axes) */
    const int64_t *meta_threads, *meta_nodes;
    /* a one-run page of an .h5: its path, for the "Values per region"
     * table of its /values (docs/values.md); NULL: none */
    const char *values_path;
} sps__html_opts_t;

/* The colour of colour slot i as "#rrggbb" (buf: room for 8 bytes; the
 * result is buf or a static string): the page's palette, slot 0 for the
 * region with the most total time, then by total time descending (ties by
 * name id), the names without calls after them in id order.  Shared with
 * the viewer (api/view.c), so both draw a region in one colour. */
SPS__HIDDEN const char *sps__html_slot_color(char buf[8], size_t i);

/* Checks the public options o (NULL: fine): sort key, columns, scaling
 * mode and axis names, max_spans.  Returns 0 or SPS_EINVAL with the
 * message set (scope-profiler's wording where it has one). */
SPS__HIDDEN int sps__html_check_opts(const sps_html_options_t *o);

/* Reads every span of r (an open source, positioned at its first span)
 * and writes the page to fp.  Statistics per region cover every span;
 * self time is a span's duration minus its direct children's, from a
 * stack per thread.  The timeline embeds the opt->max_spans longest spans;
 * among spans of equal length the earlier start wins, then the smaller
 * depth, then the lower thread index, so every kept span's ancestors are
 * kept too (a parent is never shorter than its child and wins ties), and
 * the choice is a function of the spans alone.  Memory: O(regions +
 * threads * depth + embedded spans).  r, fp and opt are borrowed; r is
 * consumed (read to its end).  Nothing is written to fp unless every span
 * was read.
 *
 * opt->o filters what the page shows (html.c, top): nesting and self time
 * are folded over every region of the selected ranks, and only the
 * regions that pass the patterns are embedded, drawn and tabled.
 *
 * Returns 0, SPS_EINVAL (fp, r or opt NULL, max_spans over the limit,
 * bad options: sps__html_check_opts, a pattern that does not compile),
 * SPS_EFORMAT (a bad span; message: sps__err_msg()), SPS_ENOMEM,
 * SPS_EIO (writing fp failed), or the reader's code. */
SPS__HIDDEN int sps__html_write(FILE *fp, sps__tlr_t *r,
                                const sps__html_opts_t *opt);

/* Reads every span of each of the nruns (>= 2) sources rs[] (open,
 * positioned at their first span; labels[k] names rs[k] on the page) and
 * writes to fp one page that compares them: a table of the runs, the
 * legend, per region one bar of total and self time per run on one
 * scale, and a sortable table of calls, total, self and mean per region
 * and run with each later run's total time as a ratio of run #1's.
 * Regions are matched by name; a region missing from a run shows as
 * such.  With charts (opt->o) and runs that differ along the scaling
 * axis (opt->o->speedup_x), the scaling section: per region (at most 8,
 * the most total time on the smallest run) speedup and efficiency over
 * the axis, as inline SVG and a table.  Statistics by the one fold, as in
 * sps__html_write; the page embeds no timeline (opt->max_spans is not used; opt->title neither:
 * the page is titled by the number of runs).  Memory: O(regions + threads
 * * depth) per run.  Everything is borrowed; every rs[k] is consumed.
 * Nothing is written to fp unless every span of every run was read.
 *
 * Returns 0, SPS_EINVAL (a NULL argument or nruns < 2, bad options, a
 * named axis a run has no value for), SPS_EFORMAT (a
 * bad span; message: sps__err_msg()), SPS_ENOMEM, SPS_EIO, or a reader's
 * code. */
SPS__HIDDEN int sps__html_write_cmp(FILE *fp, sps__tlr_t *const *rs,
                                    const char *const *labels, size_t nruns,
                                    const sps__html_opts_t *opt);

#endif /* SPS_HTML_H */
