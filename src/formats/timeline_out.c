/* timeline_out.c -- sps_timeline_write: spans held by a caller (the
 * torch-style Python face's EventList) written as a Chrome trace or a
 * Perfetto trace through the same writers every other timeline uses. */
#include "formats/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Checks the spans against the name and thread tables. */
static int check_spans(const sps_timeline_t *t) {
    if ((t->nnames && !t->names) || (t->nthreads && !t->thread_ids) ||
        (t->nspans && !t->spans) || (t->ncounters && !t->counters))
        return SPS_EINVAL;
    for (size_t i = 0; i < t->ncounters; i++)
        if (t->counters[i].counter >= t->nnames ||
            (i && t->counters[i].t_ns < t->counters[i - 1].t_ns))
            return SPS_EINVAL;
    for (size_t i = 0; i < t->nspans; i++) {
        const sps_span_t *s = &t->spans[i];
        if (s->region >= t->nnames || s->thread >= t->nthreads ||
            s->end_ns < s->start_ns || (i && s->start_ns < t->spans[i - 1].start_ns))
            return SPS_EINVAL;
    }
    return 0;
}

/* Streams t's spans into w (JSON: with their args). */
static int write_spans(sps__tlw_t *w, sps__cjw_t *cj, const sps_timeline_t *t) {
    for (size_t i = 0; i < t->nspans; i++) {
        const sps_span_t *s = &t->spans[i];
        sps__tl_span_t x = {s->region, s->thread, s->start_ns, s->end_ns, 0};
        int rc = cj ? sps__cjw_span_args(cj, &x, t->args ? t->args[i] : NULL)
                    : sps__tlw_span(w, &x);
        if (rc) return rc;
    }
    return 0;
}

/* Writes to tmp, as a JSON (gz: compressed) or Perfetto file. */
static int write_file(const char *tmp, sps__tl_format_t fmt,
                      const sps__tl_header_t *h, const sps_timeline_t *t) {
    if (fmt == SPS__TL_PFTRACE) {
        sps__tlw_t *w;
        int rc = sps__tlw_open(&w, tmp, fmt, h);
        if (rc) return rc;
        rc = write_spans(w, NULL, t);
        if (rc) {
            sps__tlw_abort(w);
            return rc;
        }
        return sps__tlw_close(w);
    }
    sps__cjw_t *cj;
    int rc = sps__cjw_open(&cj, tmp, fmt == SPS__TL_JSON_GZ, h);
    if (rc) return rc;
    rc = write_spans(NULL, cj, t);
    if (!rc && t->extra) rc = sps__cjw_extra(cj, t->extra);
    if (rc) {
        sps__cjw_abort(cj);
        return rc;
    }
    return sps__cjw_close(cj);
}

int sps_timeline_write(const char *path, const sps_timeline_t *t) {
    if (!path || !t) return SPS_EINVAL;
    sps__err_clear(); /* a cause noted below is this call's */
    sps__tl_format_t fmt = sps__tl_format_of(path);
    if (fmt != SPS__TL_JSON && fmt != SPS__TL_JSON_GZ && fmt != SPS__TL_PFTRACE)
        return SPS_EINVAL;
    int rc = check_spans(t);
    if (rc) return rc;
    sps__tl_thread_t *th = calloc(t->nthreads + 1, sizeof *th);
    sps__tl_counter_t *cnt = calloc(t->ncounters + 1, sizeof *cnt);
    char *tmp = sps__tmp_name(path, NULL);
    if (!th || !tmp || !cnt) {
        free(th);
        free(tmp);
        free(cnt);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < t->ncounters; i++)
        cnt[i] = (sps__tl_counter_t){t->counters[i].counter, 0, t->counters[i].t_ns,
                                     t->counters[i].value};
    int64_t pid = t->pid > 0 ? t->pid : (int64_t)getpid();
    for (size_t i = 0; i < t->nthreads; i++)
        th[i] = (sps__tl_thread_t){pid, t->thread_ids[i],
                                   t->thread_names && t->thread_names[i] ? t->thread_names[i] : ""};
    char pname[32];
    snprintf(pname, sizeof pname, "rank %lld", (long long)t->rank);
    sps__tl_proc_t proc = {pid, t->rank >= 0 ? t->rank : -1,
                           t->process_name ? t->process_name : t->rank >= 0 ? pname : "spanscope"};
    sps__tl_header_t h;
    memset(&h, 0, sizeof h);
    h.nnames = t->nnames;
    h.names = t->names;
    h.nprocs = 1;
    h.procs = &proc;
    h.nthreads = t->nthreads;
    h.threads = th;
    h.base_ns = t->base_ns;
    h.trace_name = t->trace_name;
    h.rank = t->rank >= 0 ? t->rank : -1;
    h.world_size = t->world_size;
    h.nspans = t->nspans;
    h.wall_anchor_ns = t->wall_anchor_ns;
    h.mono_anchor_ns = t->mono_anchor_ns;
    h.hostname = t->hostname;
    h.ncounters = t->ncounters;
    h.counters = cnt;
    h.backend = t->backend;
    h.kineto = 1; /* the torch face's traces, for torch's tools: chrome_json.c */
    rc = write_file(tmp, fmt, &h, t);
    if (!rc && rename(tmp, path) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EPATH;
    }
    if (rc) unlink(tmp); /* no partial output, no temporary file */
    /* the cause and the output's name (sps_last_error), not the temporary's */
    if ((rc == SPS_EIO || rc == SPS_EPATH) && sps__err_os()) sps__err_os_fail(rc, "writing", path);
    free(th);
    free(tmp);
    free(cnt);
    return rc;
}
