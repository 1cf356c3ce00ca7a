/*
 * export.c -- sps_export (spanscope.h): a recording exported for other
 * tools.  Opens the source through the timeline readers (any of .h5,
 * .json, .json.gz, .pftrace), selects its spans (formats/export_sel.c),
 * hands them to the format's writer (formats/speedscope.c, pstats.c,
 * flame_svg.c, folded.c for the stack samples, or the Chrome trace writer
 * itself for "chrome") at a
 * temporary name, and renames that into place.  Called by the tool's
 * `spanscope export` and by Python's spanscope.export_* functions.
 */
#include "api/api.h"
#include "formats/export.h"
#include "formats/folded.h"
#include "formats/h5_comm.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The export formats, in the order of their names in messages. */
typedef enum { EX_SPEEDSCOPE, EX_PROF, EX_SVG, EX_CHROME, EX_FOLDED, EX_UNKNOWN } ex_fmt_t;

/* The format named fmt. */
static ex_fmt_t fmt_parse(const char *fmt) {
    static const char *const names[] = {"speedscope", "prof", "svg", "chrome", "folded"};
    for (int i = 0; fmt && i < EX_UNKNOWN; i++)
        if (!strcmp(fmt, names[i])) return (ex_fmt_t)i;
    return EX_UNKNOWN;
}

/* A header holding only the selected lanes (as threads, in lane order),
 * their processes, and the counters and flows that belong to them; the
 * region and thread names are the source's, each process is named "rank
 * R" as scope-profiler's Chrome export names it (R: the rank --ranks
 * selects by, sel.rank_of_thread).  Arrays owned by the struct. */
typedef struct sub_header {
    sps__tl_header_t h;
    sps__tl_thread_t *threads;
    sps__tl_proc_t *procs;
    char (*pname)[32];   /* per output process: its name */
    sps__tl_counter_t *counters;
    sps__tl_flow_t *flows;
} sub_header_t;

static void sub_free(sub_header_t *s) {
    free(s->threads);
    free(s->procs);
    free(s->pname);
    free(s->counters);
    free(s->flows);
}

/* The index in src->procs of process pid, or -1. */
static int64_t proc_index(const sps__tl_header_t *src, int64_t pid) {
    for (size_t p = 0; p < src->nprocs; p++)
        if (src->procs[p].pid == pid) return (int64_t)p;
    return -1;
}

/* Builds s from src and sel.  Returns 0 or SPS_ENOMEM. */
static int sub_build(sub_header_t *s, const sps__tl_header_t *src, const sps__export_sel_t *sel) {
    memset(s, 0, sizeof *s);
    s->h = *src;
    size_t nl = sel->nlanes ? sel->nlanes : 1, np = src->nprocs ? src->nprocs : 1;
    int64_t *pmap = malloc(np * sizeof *pmap);
    s->threads = malloc(nl * sizeof *s->threads);
    s->procs = malloc(np * sizeof *s->procs);
    s->pname = malloc(np * sizeof *s->pname);
    s->counters = malloc((src->ncounters ? src->ncounters : 1) * sizeof *s->counters);
    s->flows = malloc((src->nflows ? src->nflows : 1) * sizeof *s->flows);
    if (!pmap || !s->threads || !s->procs || !s->pname || !s->counters || !s->flows) {
        free(pmap);
        sub_free(s);
        return SPS_ENOMEM;
    }
    for (size_t p = 0; p < src->nprocs; p++) pmap[p] = -1;
    s->h.nprocs = 0;
    for (size_t l = 0; l < sel->nlanes; l++) {
        s->threads[l] = src->threads[sel->lane_thread[l]];
        int64_t p = proc_index(src, s->threads[l].pid);
        if (p >= 0 && pmap[p] < 0) {
            pmap[p] = (int64_t)s->h.nprocs;
            snprintf(s->pname[s->h.nprocs], sizeof s->pname[0], "rank %lld",
                     (long long)sel->rank_of_thread[sel->lane_thread[l]]);
            s->procs[s->h.nprocs] = src->procs[p];
            s->procs[s->h.nprocs].name = s->pname[s->h.nprocs];
            s->h.nprocs++;
        }
    }
    s->h.ncounters = s->h.nflows = 0;
    for (size_t i = 0; i < src->ncounters; i++)
        if (src->counters[i].proc < src->nprocs && pmap[src->counters[i].proc] >= 0) {
            s->counters[s->h.ncounters] = src->counters[i];
            s->counters[s->h.ncounters++].proc = (uint32_t)pmap[src->counters[i].proc];
        }
    for (size_t i = 0; i < src->nflows; i++)
        if (src->flows[i].thread < src->nthreads &&
            sel->lane_of_thread[src->flows[i].thread] >= 0 &&
            sel->name_on[src->flows[i].name < src->nnames ? src->flows[i].name : 0]) {
            s->flows[s->h.nflows] = src->flows[i];
            s->flows[s->h.nflows++].thread = (uint32_t)sel->lane_of_thread[src->flows[i].thread];
        }
    free(pmap);
    s->h.nthreads = sel->nlanes;
    s->h.threads = s->threads;
    s->h.procs = s->procs;
    s->h.counters = s->counters;
    s->h.flows = s->flows;
    s->h.nspans = 0; /* unknown once filtered */
    return 0;
}

/* The document's "metadata" member, as scope-profiler writes it: the
 * run's name (NULL: none) and the exporter.  0 or a writer's code. */
static int chrome_metadata(sps__cjw_t *w, const char *name) {
    char *q = name ? sps__json_quote(name, NULL) : NULL;
    if (name && !q) return SPS_ENOMEM;
    size_t n = (q ? strlen(q) : 0) + 96;
    char *m = malloc(n);
    int rc = SPS_ENOMEM;
    if (m) {
        if (q) snprintf(m, n, "\"metadata\":{\"name\":%s,\"exporter\":\"spanscope@"
                        SPS_VERSION_STRING "\"}", q);
        else snprintf(m, n, "\"metadata\":{\"exporter\":\"spanscope@" SPS_VERSION_STRING "\"}");
        rc = sps__cjw_extra(w, m);
    }
    free(m);
    free(q);
    return rc;
}

/* Per-event args of the Chrome trace, as scope-profiler's export writes
 * them: the rank, the call's index within its region and rank (spans come
 * in start order, so a counter per (process, name)), its duration in s,
 * its call id and its parent's (-1 for a root call), and the region's
 * source file and line when the .h5 has them.
 *
 * Call and parent ids are the one fold's (model/fold.c, sps__fold_tl, as
 * `convert` to .h5 writes them: h5_from_trace.c): the fold runs over every
 * span of the source, selected or not, one lane per source thread, and a
 * call's id is its position in start order within its rank (process), the
 * meaning of scope-profiler's call_ids (0, 1, ... per rank); its parent is
 * the call below it on the fold's stack.  A parent left out by --include /
 * --exclude keeps its id, as in scope-profiler's export. */
typedef struct chrome_args {
    uint64_t *next;      /* [nprocs * nnames] the next call index */
    char **file;         /* [nnames] JSON-quoted source file, or NULL */
    size_t nnames;
    sps__fold_tl_t fold; /* over the source's threads (lanes) */
    int fold_on;         /* fold initialised */
    int64_t *proc_of;    /* [source nthreads] its process's index, or 0 */
    int64_t *next_id;    /* [source nprocs] the next call id of that rank */
} chrome_args_t;

/* Fills a for source header h and selection sel (sizes only; the fold
 * starts empty).  0 or SPS_ENOMEM (a is then partly filled: free it with
 * chrome_args_free). */
static int chrome_args_init(chrome_args_t *a, const sps__tl_header_t *h,
                            const sps__export_sel_t *sel) {
    a->nnames = h->nnames;
    a->next = calloc((h->nprocs ? h->nprocs : 1) * (h->nnames ? h->nnames : 1), sizeof *a->next);
    a->file = calloc(h->nnames + 1, sizeof *a->file);
    a->proc_of = calloc(h->nthreads ? h->nthreads : 1, sizeof *a->proc_of);
    a->next_id = calloc(h->nprocs ? h->nprocs : 1, sizeof *a->next_id);
    if (!a->next || !a->file || !a->proc_of || !a->next_id) return SPS_ENOMEM;
    for (size_t t = 0; t < h->nthreads; t++) {
        int64_t p = proc_index(h, h->threads[t].pid);
        a->proc_of[t] = p >= 0 ? p : 0;
    }
    if (sps__fold_tl_init(&a->fold, h->nthreads, h->nnames, 0)) return SPS_ENOMEM;
    a->fold_on = 1;
    for (size_t i = 0; i < h->nnames && i < sel->nsrc; i++)
        if (sel->src_file[i] && *sel->src_file[i] &&
            !(a->file[i] = sps__json_quote(sel->src_file[i], NULL)))
            return SPS_ENOMEM;
    return 0;
}

static void chrome_args_free(chrome_args_t *a) {
    for (size_t i = 0; a->file && i < a->nnames; i++) free(a->file[i]);
    free(a->file);
    free(a->next);
    free(a->proc_of);
    free(a->next_id);
    if (a->fold_on) sps__fold_tl_free(&a->fold);
}

/* Places span s (s->thread: its source thread) on the fold and gives it
 * its call id (*id) and its parent's (*parent, -1 for a root).  Every span
 * of the source goes through here, in the reader's order.  0, SPS_EINVAL
 * (a thread or name out of range) or SPS_ENOMEM. */
static int chrome_args_ids(chrome_args_t *a, const sps__tl_span_t *s,
                           int64_t *id, int64_t *parent) {
    int64_t d = sps__fold_tl_add(&a->fold, s->thread, s->name, s->start_ns, s->end_ns,
                                 s->prior_ns);
    if (d < 0) return (int)d;
    sps__stack_t *st = &a->fold.lanes[s->thread];
    *id = a->next_id[a->proc_of[s->thread]]++;
    st->f[d].id = *id;
    *parent = d > 0 ? st->f[d - 1].id : -1;
    return 0;
}

/* The args object of span s (header h: the output's, s->thread its lane;
 * id and parent from chrome_args_ids) into buf.  Its length, 0 when it
 * does not fit. */
static size_t chrome_args_of(chrome_args_t *a, const sps__tl_header_t *h,
                             const sps__export_sel_t *sel, const sps__tl_span_t *s,
                             int64_t id, int64_t parent, char *buf, size_t cap) {
    int64_t p = proc_index(h, h->threads[s->thread].pid);
    int64_t rank = sel->rank_of_thread[sel->lane_thread[s->thread]];
    uint64_t idx = a->next[(size_t)(p >= 0 ? p : 0) * a->nnames + s->name]++;
    char dur[40];
    if (!sps__tl_fmt_double(dur, sizeof dur, (double)(s->end_ns - s->start_ns) * 1e-9))
        strcpy(dur, "0");
    int n = snprintf(buf, cap, "{\"rank\":%lld,\"call_index\":%llu,\"duration_s\":%s,"
                     "\"call_id\":%lld,\"parent_id\":%lld",
                     (long long)rank, (unsigned long long)idx, dur, (long long)id,
                     (long long)parent);
    if (n > 0 && (size_t)n < cap && a->file[s->name])
        n += snprintf(buf + n, cap - (size_t)n, ",\"source_file\":%s,\"source_line\":%lld",
                      a->file[s->name], (long long)sel->src_line[s->name]);
    if (n <= 0 || (size_t)n + 2 > cap) return 0;
    buf[n++] = '}';
    buf[n] = '\0';
    return (size_t)n;
}

/* The Chrome trace: the selected spans through the Chrome JSON writer
 * (the one `convert` uses), each with scope-profiler's args, and an
 * .h5's stack samples (sel->samples, read once by the caller; NULL: none)
 * of the selected ranks as tensorplay's instant events (export.h:
 * sps__cjw_samples; a thread with samples but no selected span gets its
 * own row), to path.  Returns 0 or a code. */
static int chrome_write(const char *path, sps__tlr_t *r, sps__export_sel_t *sel,
                        const sps__export_opts_t *o, const sps__h5r_device_t *dev) {
    static const sps__h5r_samples_t none = {0};
    const sps__h5r_samples_t *x = sel->samples ? sel->samples : &none;
    sub_header_t sub;
    sps__tl_samples_t smp = {0};
    int rc = sub_build(&sub, sel->h, sel);
    if (rc) return rc;
    if (o->doc_name) sub.h.trace_name = o->doc_name;
    size_t n = strlen(path);
    chrome_args_t args = {0};
    sps__cjw_t *w = NULL;
    /* an .h5's device activity (NULL: none): GPU processes, stream rows,
     * the API calls on their threads' rows, flows (export.h) */
    static const sps__h5r_device_t no_dev = {0};
    sps__tl_device_t dpl = {0};
    rc = sps__tl_samples_place(&smp, x, &sub.h);
    if (!rc) { /* the selected lanes, then the threads of samples only */
        sub.h.threads = smp.threads;
        sub.h.nthreads = smp.nthreads;
        rc = sps__tl_device_place(&dpl, dev ? dev : &no_dev, &sub.h);
    }
    if (!rc) { /* ... then the threads of CUDA API calls only */
        sub.h.threads = dpl.threads;
        sub.h.nthreads = dpl.nthreads;
        rc = chrome_args_init(&args, sel->h, sel);
    }
    if (!rc) rc = sps__cjw_open(&w, path, n > 3 && !strcmp(path + n - 3, ".gz"), &sub.h);
    /* a file with /device (even an empty one): every span gets its External id */
    if (!rc && dev && dev->present && (rc = sps__cjw_device(w, &dpl))) {
        sps__cjw_abort(w);
        if (rc == SPS_EINVAL)
            rc = sps__err_fail(SPS_EINVAL, "a device activity's time leaves the trace's "
                               "time range");
    }
    if (rc) {
        sps__tl_device_free(&dpl);
        chrome_args_free(&args);
        sps__tl_samples_free(&smp);
        sub_free(&sub);
        return rc;
    }
    sps__tl_span_t s;
    char buf[8192];
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        int64_t lane = sps__export_sel_take(sel, &s);
        if (lane < -1) { rc = (int)lane; break; }
        int64_t id = -1, parent = -1; /* every span is folded: the file's ids */
        if ((rc = chrome_args_ids(&args, &s, &id, &parent))) break;
        if (lane < 0) continue;
        s.thread = (uint32_t)lane;
        size_t len = chrome_args_of(&args, &sub.h, sel, &s, id, parent, buf, sizeof buf);
        if ((rc = sps__cjw_span_args(w, &s, len ? buf : NULL))) break;
    }
    if (!rc && !sel->nselected)
        rc = sps__err_fail(SPS_EINVAL, "No calls recorded for the requested ranks.");
    if (!rc && smp.nplaced) rc = sps__cjw_samples(w, &smp);
    if (!rc) rc = chrome_metadata(w, o->doc_name ? o->doc_name : sel->h->trace_name);
    if (rc) sps__cjw_abort(w);
    else rc = sps__cjw_close(w);
    sps__tl_device_free(&dpl);
    chrome_args_free(&args);
    sps__tl_samples_free(&smp);
    sub_free(&sub);
    return rc;
}

/* The code for a file that could not be created (errno e): SPS_EPATH
 * when the path is the problem (a missing or read-only directory, no
 * permission), SPS_EIO when the disk is (full, a quota, EIO). */
static int create_code(int e) {
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EFBIG ? SPS_EIO
           : e == ENOMEM ? SPS_ENOMEM : SPS_EPATH;
}

/* The stream writers: fmt's document into tmp, through the one output
 * stream (util.h: sps__out_open; its writes note their errno).  Returns 0
 * or a code. */
static int stream_write(ex_fmt_t fmt, const char *tmp, sps__tlr_t *r,
                        sps__export_sel_t *sel, const sps__export_opts_t *o) {
    FILE *fp = sps__out_open(tmp, 1);
    if (!fp) return create_code(errno);
    int rc = fmt == EX_SPEEDSCOPE ? sps__speedscope_write(fp, r, sel, o)
             : fmt == EX_PROF     ? sps__pstats_write(fp, r, sel, o)
             : fmt == EX_FOLDED   ? sps__folded_export(fp, sel, o)
                                  : sps__flame_svg_write(fp, r, sel, o);
    if (fclose(fp) != 0 && !rc) rc = SPS_EIO;
    return rc;
}

/* sps_export without the error copy: the message is set on failure. */
static int export_run(const char *in, const char *out, ex_fmt_t fmt,
                      const sps__export_opts_t *o) {
    sps__tl_format_t fi = sps__tl_format_of(in);
    if (fi == SPS__TL_UNKNOWN)
        return sps__err_fail(SPS_EINVAL, "%s: unknown input format (.h5, .json, "
                             ".json.gz, .pftrace)", in);
    sps__export_opts_t one = *o;
    if ((fmt == EX_PROF || fmt == EX_SVG) && one.nranks > 1)
        return sps__err_fail(SPS_EINVAL, "%s exports one rank a file (got %zu ranks)",
                             fmt == EX_PROF ? "prof" : "svg", one.nranks);
    /* an .h5's source locations: .prof keys, Chrome args, speedscope frames */
    sps__h5r_sources_t src = {0};
    if (fi == SPS__TL_H5 && fmt != EX_SVG && sps__h5r_sources(in, &src))
        return SPS_ENOMEM;
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, in, fi);
    if (rc) {
        sps__h5r_sources_free(&src);
        return rc; /* the reader's message names the file */
    }
    sps__export_sel_t sel;
    if ((rc = sps__export_sel_init(&sel, sps__tlr_header(r), &one))) {
        sps__tlr_free(r);
        sps__h5r_sources_free(&src);
        return rc;
    }
    if (src.n) { /* per header name: the .h5 reader's names are its region ids */
        sel.src_file = src.file;
        sel.src_line = src.line;
        sel.nsrc = src.n;
    }
    /* an .h5's stack samples (the one reader, folded.h): speedscope's
     * sampled profiles, folded, the svg from samples, the Chrome trace's
     * instants */
    sps__h5r_samples_t smp = {0};
    int want_smp = fmt == EX_SPEEDSCOPE || fmt == EX_FOLDED || fmt == EX_CHROME ||
                   (fmt == EX_SVG && one.from_samples);
    if (want_smp && fi != SPS__TL_H5 && fmt != EX_SPEEDSCOPE && fmt != EX_CHROME)
        rc = sps__err_fail(SPS_EINVAL, "%s: stack samples come only in a spanscope .h5", in);
    else if (want_smp && fi == SPS__TL_H5 && !(rc = sps__h5r_samples(in, &smp)))
        sel.samples = &smp;
    /* an .h5's device activity: the Chrome trace's GPU rows (export.h) */
    sps__h5r_device_t dev = {0};
    if (!rc && fmt == EX_CHROME && fi == SPS__TL_H5) rc = sps__h5r_device(in, &dev);
    char *tmp = rc ? NULL : sps__tmp_name(out, NULL);
    if (rc) (void)0; /* the samples' or the device reader's message */
    else if (!tmp) rc = SPS_ENOMEM;
    else if (fmt == EX_CHROME) rc = chrome_write(tmp, r, &sel, &one, &dev);
    else rc = stream_write(fmt, tmp, r, &sel, &one);
    if (!rc && rename(tmp, out) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EPATH;
    }
    if (rc && tmp) unlink(tmp); /* no partial output, no temporary file */
    /* a failed write says its cause and names the output, not the
     * temporary file: "no space left on device (writing out.json)" */
    if ((rc == SPS_EIO || rc == SPS_EPATH) && sps__err_os())
        sps__err_os_fail(rc, "writing", out);
    else if (rc == SPS_EIO || rc == SPS_EPATH || rc == SPS_ENOMEM || rc == SPS_ENOTSUP)
        sps__err_set("%s: %s", out, sps_strerror(rc));
    free(tmp);
    sps__h5r_device_free(&dev);
    sps__h5r_samples_free(&smp);
    sps__h5r_sources_free(&src);
    sps__export_sel_free(&sel);
    sps__tlr_free(r);
    return rc;
}

int sps_export(const char *in_path, const char *out_path, const char *format,
               const sps_export_opts_t *opts, char *err, size_t errlen) {
    sps_export_opts_t dflt = SPS_EXPORT_OPTS_INIT;
    ex_fmt_t fmt = fmt_parse(format);
    int rc;
    sps__err_clear();
    if (!in_path || !out_path) rc = sps__err_fail(SPS_EINVAL, "no input or output path");
    else if (fmt == EX_UNKNOWN)
        rc = sps__err_fail(SPS_EINVAL, "unknown export format '%s' (speedscope, prof, "
                           "svg, chrome, folded)", format ? format : "(null)");
    else rc = export_run(in_path, out_path, fmt, opts ? opts : &dflt);
    return sps__err_copy(rc, err, errlen);
}
