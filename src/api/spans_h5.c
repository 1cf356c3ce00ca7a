/* spans_h5.c -- sps_spans_write_h5: spans held by a caller (results built
 * in memory: read from scope-profiler's JSON, merged, filtered) written as
 * a schema-3 .h5, for Python's write_profile(results, "x.h5").
 *
 * No second writer: the spans become a timeline (one process per rank, one
 * track per (rank, thread)), which the Perfetto writer stores at a
 * temporary name with exact ns, and sps__h5_from_timeline (the path of
 * `spanscope convert TRACE OUT.h5`) folds and writes as .h5 -- call and
 * parent ids and self times from the one fold; the run's facts (times,
 * label, the regions' sources and tags) go to /metadata and the index
 * (sps__h5_from_timeline_ex).  The temporary files sit
 * next to the output; the .h5 is renamed into place. */
#include "api/api.h"
#include "formats/timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One span of the input, and where its track is. */
typedef struct in_span {
    int64_t start, end;
    uint32_t name, track;
} in_span_t;

/* A (rank, thread) pair of the input: a track of the timeline. */
typedef struct track_key {
    int64_t rank, thread;
    uint32_t index; /* of the input span that named it first */
} track_key_t;

static int key_cmp(const void *a, const void *b) {
    const track_key_t *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The timeline's order: start, then the enclosing (longer) span first. */
static int span_cmp(const void *a, const void *b) {
    const in_span_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->track < y->track ? -1 : x->track > y->track;
}

/* The timeline of in: procs, threads and sorted spans, all malloc'd into
 * the out-parameters (free them whatever the result).  0, SPS_EINVAL (a
 * name index out of range, an end before its start) or SPS_ENOMEM. */
static int build(const sps_span_set_t *in, sps__tl_proc_t **procs, size_t *nprocs,
                 sps__tl_thread_t **threads, size_t *nthreads, in_span_t **spans,
                 char (**pnames)[32]) {
    size_t n = in->nspans;
    track_key_t *keys = malloc((n ? n : 1) * sizeof *keys);
    *spans = malloc((n ? n : 1) * sizeof **spans);
    *threads = malloc((n ? n : 1) * sizeof **threads);
    *procs = malloc((n ? n : 1) * sizeof **procs);
    *pnames = malloc((n ? n : 1) * sizeof **pnames);
    if (!keys || !*spans || !*threads || !*procs || !*pnames) {
        free(keys);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (in->name[i] >= in->nnames || in->end_ns[i] < in->start_ns[i]) {
            free(keys);
            return sps__err_fail(SPS_EINVAL, "span %zu: %s", i,
                                 in->name[i] >= in->nnames ? "name index out of range"
                                                           : "ends before it starts");
        }
        keys[i] = (track_key_t){in->rank ? in->rank[i] : 0, in->thread ? in->thread[i] : 0,
                                (uint32_t)i};
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    size_t nt = 0, np = 0;
    uint32_t *track_of = malloc((n ? n : 1) * sizeof *track_of);
    if (!track_of) {
        free(keys);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || key_cmp(&keys[i - 1], &keys[i])) {
            if (np == 0 || (*procs)[np - 1].rank != keys[i].rank) {
                snprintf((*pnames)[np], sizeof (*pnames)[np], "rank %lld",
                         (long long)keys[i].rank);
                (*procs)[np] = (sps__tl_proc_t){keys[i].rank, keys[i].rank, (*pnames)[np]};
                np++;
            }
            (*threads)[nt++] = (sps__tl_thread_t){keys[i].rank, keys[i].thread, ""};
        }
        track_of[keys[i].index] = (uint32_t)(nt - 1);
    }
    for (size_t i = 0; i < n; i++)
        (*spans)[i] = (in_span_t){in->start_ns[i], in->end_ns[i], in->name[i], track_of[i]};
    qsort(*spans, n, sizeof **spans, span_cmp);
    free(track_of);
    free(keys);
    *nprocs = np;
    *nthreads = nt;
    return 0;
}

/* Writes the timeline to the Perfetto file at path.  0 or a code (the
 * writer's SPS_EINVAL: spans that overlap without nesting on a thread). */
static int write_trace(const char *path, const sps_span_set_t *in) {
    sps__tl_proc_t *procs = NULL;
    sps__tl_thread_t *threads = NULL;
    in_span_t *spans = NULL;
    char (*pnames)[32] = NULL;
    size_t np = 0, nt = 0;
    int rc = build(in, &procs, &np, &threads, &nt, &spans, &pnames);
    sps__tlw_t *w = NULL;
    if (!rc) {
        sps__tl_header_t h = {0};
        h.nnames = in->nnames;
        h.names = in->names;
        h.nprocs = np;
        h.procs = procs;
        h.nthreads = nt;
        h.threads = threads;
        h.base_ns = in->nspans ? spans[0].start : 0;
        h.rank = -1;
        h.nspans = in->nspans;
        rc = sps__tlw_open(&w, path, SPS__TL_PFTRACE, &h);
    }
    for (size_t i = 0; !rc && i < in->nspans; i++) {
        sps__tl_span_t s = {spans[i].name, spans[i].track, spans[i].start, spans[i].end, 0};
        rc = sps__tlw_span(w, &s);
        if (rc == SPS_EINVAL)
            rc = sps__err_fail(SPS_EINVAL, "spans of one thread overlap without nesting "
                               "(the call at %lld ns)", (long long)spans[i].start);
    }
    if (w && rc) sps__tlw_abort(w);
    else if (w) rc = sps__tlw_close(w);
    free(procs), free(threads), free(spans), free(pnames);
    return rc;
}

int sps_spans_write_h5(const char *path, const sps_span_set_t *in, char *err, size_t errlen) {
    sps__err_clear();
    if (!path || !in || (in->nspans && (!in->name || !in->start_ns || !in->end_ns)) ||
        (in->nnames && !in->names))
        return sps__err_copy(sps__err_fail(SPS_EINVAL, "no path or spans"), err, errlen);
    for (size_t i = 0; i < in->nnames; i++)
        if (!in->names[i])
            return sps__err_copy(sps__err_fail(SPS_EINVAL, "name %zu is NULL", i), err, errlen);
    for (size_t i = 0; i < in->nmeta; i++)
        if (!in->meta_keys || !in->meta_values || !in->meta_keys[i] || !in->meta_values[i])
            return sps__err_copy(sps__err_fail(SPS_EINVAL, "metadata %zu is NULL", i), err,
                                 errlen);
    char *trace = sps__tmp_name(path, ".pftrace");
    char *tmp = sps__tmp_name(path, NULL);
    sps__rinfo_t *info = calloc(in->nnames + 1, sizeof *info);
    int rc = trace && tmp && info ? write_trace(trace, in) : SPS_ENOMEM;
    for (size_t i = 0; info && i < in->nnames; i++) /* borrowed: never freed as rinfo */
        info[i] = (sps__rinfo_t){in->source_files ? (char *)in->source_files[i] : NULL,
                                 in->source_texts ? (char *)in->source_texts[i] : NULL,
                                 in->tags ? (char *)in->tags[i] : NULL, NULL,
                                 in->source_lines ? in->source_lines[i] : -1, 0, 0};
    sps__h5_run_t run = {in->has_times, in->start_time_ns, in->finalize_time_ns, in->label,
                         in->nnames, in->names, info, in->nmeta,
                         (char *const *)in->meta_keys, (char *const *)in->meta_values};
    if (!rc) rc = sps__h5_from_timeline_ex(trace, SPS__TL_PFTRACE, tmp, &run);
    free(info);
    if (trace) unlink(trace);
    if (!rc && rename(tmp, path) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EPATH;
    }
    if (rc && tmp) unlink(tmp);
    if ((rc == SPS_EPATH || rc == SPS_EIO) && sps__err_os())
        sps__err_os_fail(rc, "writing", path); /* the cause, the output's name */
    else if (rc == SPS_EPATH || rc == SPS_EIO || rc == SPS_ENOMEM)
        if (!*sps__err_msg()) sps__err_set("%s: %s", path, sps_strerror(rc));
    free(trace);
    free(tmp);
    return sps__err_copy(rc, err, errlen);
}
