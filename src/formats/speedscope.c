/*
 * speedscope.c -- a recording as a speedscope document (export.h;
 * https://www.speedscope.app/file-format-schema.json):
 *
 *     {"$schema": ..., "exporter": "spanscope@V", "name": ...,
 *      "activeProfileIndex": 0, "shared": {"frames": [{"name": ...}]},
 *      "profiles": [{"type": "evented", "name": "rank 0", "unit": "seconds",
 *                    "startValue": s, "endValue": s,
 *                    "events": [{"type": "O"|"C", "frame": i, "at": s}]}]}
 *
 * One evented profile per selected lane (a thread of a rank), as
 * scope-profiler 0.7.5 writes them; times in seconds from the earliest
 * selected start, written with 9 decimals (exact ns).  The open and close
 * events are the one fold's (sps__fold_span on a stack per lane): a span
 * opens when placed and closes when the fold closes it, so events nest by
 * the same rule as every other view.  A span that partially overlaps an
 * open one (only from a source that does not filter them) is closed by
 * the fold at its own end; the next open on its lane is then moved to
 * that time, so that a profile's times never go back.
 *
 * Events of all lanes arrive interleaved in start order; they go through
 * the external sort (spansort.c) keyed (lane, arrival), so memory stays
 * bounded whatever the number of spans.
 */
#include "formats/export.h"

#include "spanscope.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An event as a sort record: start = at (ns), end = 0 open / 1 close,
 * thread = lane, name = region, ord = arrival. */
typedef struct ss_state {
    sps__xsort_t *xs;
    uint64_t seq;
    int err;
    uint32_t lane; /* the lane being folded (the close callback's) */
} ss_state_t;

/* Orders events by lane, then arrival. */
static int ev_cmp(const void *a, const void *b) {
    const sps__srec_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Queues one event. */
static void ev_add(ss_state_t *S, uint32_t lane, uint32_t region, int64_t at, int close) {
    sps__srec_t e = {at, close, lane, region, S->seq++};
    if (!S->err) S->err = sps__xsort_add(S->xs, &e);
}

/* The fold's close callback: the frame ends at end (an order key: ns
 * shifted by 2^63, as sps__fold_tl's). */
static void on_close(void *ctx, const sps__frame_t *f, uint64_t end,
                     uint64_t self, size_t depth) {
    (void)self, (void)depth;
    ss_state_t *S = ctx;
    ev_add(S, S->lane, f->region, (int64_t)(end + (uint64_t)INT64_MIN), 1);
}

/* ns (>= 0) as seconds with 9 decimals. */
static void put_sec(FILE *fp, int64_t ns) {
    if (ns < 0) ns = 0;
    fprintf(fp, "%" PRId64 ".%09" PRId64, ns / 1000000000, ns % 1000000000);
}

/* Reads r, folding the selected spans per lane and queueing their events;
 * *origin gets the earliest selected start, used[] marks the regions
 * seen.  Returns 0 or a code. */
static int fold_events(sps__tlr_t *r, sps__export_sel_t *sel, ss_state_t *S,
                       int64_t *origin, unsigned char *used) {
    sps__stack_t *lanes = calloc(sel->nlanes ? sel->nlanes : 1, sizeof *lanes);
    if (!lanes) return SPS_ENOMEM;
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0 && !S->err) {
        int64_t lane = sps__export_sel_take(sel, &s);
        if (lane < -1) { rc = (int)lane; break; }
        if (lane < 0) continue;
        if (sel->nselected == 1) *origin = s.start_ns;
        used[s.name] = 1;
        S->lane = (uint32_t)lane;
        sps__frame_t f = {.region = s.name, .node = -1, .id = -1,
                          .start = (uint64_t)s.start_ns - (uint64_t)INT64_MIN,
                          .end = (uint64_t)(s.end_ns > s.start_ns ? s.end_ns : s.start_ns) -
                                 (uint64_t)INT64_MIN};
        if (sps__fold_span(&lanes[lane], f, on_close, S) < 0) { rc = SPS_ENOMEM; break; }
        ev_add(S, (uint32_t)lane, s.name, s.start_ns, 0);
    }
    for (size_t l = 0; l < sel->nlanes; l++) {
        S->lane = (uint32_t)l;
        sps__fold_flush(&lanes[l], on_close, S);
        sps__stack_free(&lanes[l]);
    }
    free(lanes);
    if (!rc && S->err) rc = S->err;
    if (!rc && !sel->nselected)
        rc = sps__err_fail(SPS_EINVAL, "No calls recorded for the requested ranks.");
    return rc;
}

/* The document's head: schema, exporter, name and the frames (the
 * regions used, in the source's order, with their source file and line
 * where an .h5 has them; frame[] gets each one's index). */
static void put_head(FILE *fp, const sps__export_sel_t *sel, const sps__export_opts_t *o,
                     const unsigned char *used, uint32_t *frame) {
    const sps__tl_header_t *h = sel->h;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
          "\"exporter\":\"spanscope@" SPS_VERSION_STRING "\",\"name\":\"", fp);
    sps__json_fputs(fp, o->doc_name ? o->doc_name
                        : h->trace_name ? h->trace_name : "spanscope", 0);
    fputs("\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", fp);
    uint32_t n = 0;
    for (size_t i = 0; i < h->nnames; i++) {
        if (!used[i]) continue;
        frame[i] = n;
        fprintf(fp, "%s{\"name\":\"", n++ ? "," : "");
        sps__json_fputs(fp, h->names[i], 0);
        fputc('"', fp);
        if (i < sel->nsrc && sel->src_file[i] && *sel->src_file[i]) { /* an .h5's source */
            fputs(",\"file\":\"", fp);
            sps__json_fputs(fp, sel->src_file[i], 0);
            fputc('"', fp);
            if (sel->src_line[i] > 0) fprintf(fp, ",\"line\":%lld", (long long)sel->src_line[i]);
        }
        fputc('}', fp);
    }
    fputs("]},\"profiles\":[", fp);
}

/* Writes the profiles from the sorted events. */
static int put_profiles(FILE *fp, const sps__export_sel_t *sel, ss_state_t *S,
                        int64_t origin, const uint32_t *frame) {
    sps__srec_t e;
    int rc, open = 0, nprof = 0;
    uint32_t lane = 0;
    int64_t last = 0;
    char label[160];
    while ((rc = sps__xsort_next(S->xs, &e)) > 0) {
        if (!open || e.thread != lane) {
            if (open) { fputs("],\"endValue\":", fp); put_sec(fp, last - origin); fputc('}', fp); }
            lane = e.thread;
            last = e.start;
            fprintf(fp, "%s{\"type\":\"evented\",\"name\":\"", nprof++ ? "," : "");
            sps__json_fputs(fp, sps__export_lane_label(sel, lane, label, sizeof label), 0);
            fputs("\",\"unit\":\"seconds\",\"startValue\":", fp);
            put_sec(fp, e.start - origin);
            fputs(",\"events\":[", fp);
            open = 1;
        } else {
            fputc(',', fp);
        }
        if (e.start < last) e.start = last; /* after a partial overlap */
        last = e.start;
        fprintf(fp, "{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":", e.end ? 'C' : 'O',
                frame[e.name]);
        put_sec(fp, e.start - origin);
        fputc('}', fp);
    }
    if (open) { fputs("],\"endValue\":", fp); put_sec(fp, last - origin); fputc('}', fp); }
    return rc;
}

int sps__speedscope_write(FILE *fp, sps__tlr_t *r, sps__export_sel_t *sel,
                          const sps__export_opts_t *o) {
    const sps__tl_header_t *h = sel->h;
    ss_state_t S = {0};
    int64_t origin = 0;
    unsigned char *used = calloc(h->nnames ? h->nnames : 1, 1);
    uint32_t *frame = calloc(h->nnames ? h->nnames : 1, sizeof *frame);
    int rc = used && frame ? sps__xsort_new(&S.xs, ev_cmp, "speedscope events") : SPS_ENOMEM;
    if (!rc) rc = fold_events(r, sel, &S, &origin, used);
    if (!rc) rc = sps__xsort_finish(S.xs);
    if (!rc) {
        put_head(fp, sel, o, used, frame);
        rc = put_profiles(fp, sel, &S, origin, frame);
        fputs("]}\n", fp);
    }
    if (!rc && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    sps__xsort_free(S.xs);
    free(used);
    free(frame);
    return rc;
}
