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
 *
 * An .h5's stack samples (sel->samples, the one reader's) add one
 * "sampled" profile per sampled thread of the selected ranks, after the
 * evented ones, as py-spy writes them:
 *
 *     {"type": "sampled", "name": "rank 0 - main (thread 4242, samples)",
 *      "unit": "none", "startValue": 0, "endValue": W,
 *      "samples": [[f, ...outermost first], ...], "weights": [w, ...]}
 *
 * samples in time order, consecutive samples of one stack as one entry
 * whose weight is theirs added up (a sample counts as its weight: the
 * timer periods it stands for, 1/hz s of CPU each).  Their frames follow
 * the regions' in the shared frames, one per frame label (folded.h):
 * {"name": function, "file": file or module, "line": line}.
 */
#include "formats/export.h"
#include "formats/folded.h"

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

/* Label i of lab as a shared frame (sep before it). */
static void put_label_frame(FILE *fp, const sps__h5r_samples_t *s,
                            const sps__smp_labels_t *lab, size_t i, const char *sep) {
    int64_t f = lab->first[i];
    fprintf(fp, "%s{\"name\":\"", sep);
    sps__json_fputs(fp, f >= 0 && s->functions[f][0] ? s->functions[f] : lab->text[i], 0);
    fputc('"', fp);
    const char *file = f < 0 ? "" : s->files[f][0] ? s->files[f] : s->modules[f];
    if (file[0]) {
        fputs(",\"file\":\"", fp);
        sps__json_fputs(fp, file, 0);
        fputc('"', fp);
    }
    if (f >= 0 && s->files[f][0] && s->lines[f] > 0)
        fprintf(fp, ",\"line\":%lld", (long long)s->lines[f]);
    fputc('}', fp);
}

/* The document's head: schema, exporter, name and the frames (the
 * regions used, in the source's order, with their source file and line
 * where an .h5 has them; frame[] gets each one's index). */
static uint32_t put_head(FILE *fp, const sps__export_sel_t *sel, const sps__export_opts_t *o,
                         const unsigned char *used, uint32_t *frame,
                         const sps__smp_labels_t *lab) {
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
    uint32_t base = n; /* the samples' frames: base + their label */
    for (size_t i = 0; lab && i < lab->n; i++)
        put_label_frame(fp, sel->samples, lab, i, n++ ? "," : "");
    fputs("]},\"profiles\":[", fp);
    return base;
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

/* A selected sample in a sampled profile's order: thread, then time. */
typedef struct smp_ord {
    int64_t rank, tid, t;
    size_t i;
} smp_ord_t;

static int ord_cmp(const void *a, const void *b) {
    const smp_ord_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* A sampled profile's name: "rank R - NAME (thread TID, samples)" where
 * the sample's /events thread has a name in the header, else "rank R -
 * thread TID (samples)" (TID: the OS thread id). */
static const char *sampled_label(const sps__export_sel_t *sel, size_t i, char *buf,
                                 size_t cap) {
    const sps__h5r_samples_t *s = sel->samples;
    const sps__tl_header_t *h = sel->h;
    for (size_t t = 0; s->threads[i] >= 0 && t < h->nthreads; t++)
        if (sel->rank_of_thread[t] == s->ranks[i] && h->threads[t].tid == s->threads[i] &&
            h->threads[t].name && h->threads[t].name[0]) {
            snprintf(buf, cap, "rank %lld - %s (thread %lld, samples)",
                     (long long)s->ranks[i], h->threads[t].name, (long long)s->tids[i]);
            return buf;
        }
    snprintf(buf, cap, "rank %lld - thread %lld (samples)", (long long)s->ranks[i],
             (long long)s->tids[i]);
    return buf;
}

/* The stack of sample i as frame indexes, outermost first. */
static void put_stack(FILE *fp, const sps__h5r_samples_t *s, const sps__smp_labels_t *lab,
                      uint32_t base, size_t i) {
    int64_t k = s->stacks[i], a = s->stack_offsets[k], b = s->stack_offsets[k + 1];
    fputc('[', fp);
    if (a == b) fprintf(fp, "%" PRIu32, base + (uint32_t)(lab->n - 1)); /* "[unknown]" */
    for (int64_t j = b - 1; j >= a; j--)
        fprintf(fp, "%s%" PRIu32, j < b - 1 ? "," : "",
                base + lab->of_frame[s->stack_frames[j]]);
    fputc(']', fp);
}

/* One sampled profile per sampled thread of the selected ranks (after
 * the evented ones: each starts with a comma).  0 or SPS_ENOMEM. */
static int put_sampled(FILE *fp, const sps__export_sel_t *sel, const sps__export_opts_t *o,
                       const sps__smp_labels_t *lab, uint32_t base) {
    const sps__h5r_samples_t *s = sel->samples;
    smp_ord_t *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v) return SPS_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (sps__smp_rank_on(o, s->ranks[i]))
            v[m++] = (smp_ord_t){s->ranks[i], s->tids[i], s->times_ns[i], i};
    if (m) qsort(v, m, sizeof *v, ord_cmp);
    char label[192];
    for (size_t g = 0; g < m;) {
        size_t e = g;
        while (e < m && v[e].rank == v[g].rank && v[e].tid == v[g].tid) e++;
        fputs(",{\"type\":\"sampled\",\"name\":\"", fp);
        sps__json_fputs(fp, sampled_label(sel, v[g].i, label, sizeof label), 0);
        fputs("\",\"unit\":\"none\",\"startValue\":0,\"samples\":[", fp);
        for (size_t j = g, n = 0; j < e; j++) { /* a run of one stack: one entry */
            if (j > g && s->stacks[v[j].i] == s->stacks[v[j - 1].i]) continue;
            if (n++) fputc(',', fp);
            put_stack(fp, s, lab, base, v[j].i);
        }
        fputs("],\"weights\":[", fp);
        uint64_t total = 0, run = 0;
        for (size_t j = g, n = 0; j < e; j++) {
            run += (uint64_t)s->weights[v[j].i];
            total += (uint64_t)s->weights[v[j].i];
            if (j + 1 < e && s->stacks[v[j + 1].i] == s->stacks[v[j].i]) continue;
            fprintf(fp, "%s%" PRIu64, n++ ? "," : "", run);
            run = 0;
        }
        fprintf(fp, "],\"endValue\":%" PRIu64 "}", total);
        g = e;
    }
    free(v);
    return 0;
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
    sps__smp_labels_t lab = {0};
    int sampled = sel->samples && sel->samples->n;
    if (!rc && sampled) rc = sps__smp_labels(sel->samples, &lab);
    if (!rc) {
        uint32_t base = put_head(fp, sel, o, used, frame, sampled ? &lab : NULL);
        rc = put_profiles(fp, sel, &S, origin, frame);
        if (!rc && sampled) rc = put_sampled(fp, sel, o, &lab, base);
        fputs("]}\n", fp);
    }
    if (!rc && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    sps__smp_labels_free(&lab);
    sps__xsort_free(S.xs);
    free(used);
    free(frame);
    return rc;
}
