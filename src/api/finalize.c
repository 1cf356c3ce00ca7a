/* finalize.c -- sps_finalize and friends: a period taken out of the session
 * (core's snapshot, the model's statistics), written to a file and printed.
 *
 * sps_finalize works in three steps: under the session lock it brings the
 * analysis up to date and takes a snapshot of the period (moving retired
 * chunks out, copying each thread's current chunk) with its statistics;
 * without the lock it writes the snapshot to "<path>.tmp-<pid>" (one row
 * per region with calls in the period, offsets in region order; the calls
 * through the merged pass) and renames it into place; then it gives the
 * chunks back to the pool.  Recording goes on in every thread meanwhile.
 * If the write fails the snapshot is kept as "pending" and written,
 * together with the next period, by the next finalize. */
#include "api/api.h"
#include "api/device.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Checks that a file can be created next to path, before any data is
 * consumed.  Returns 0 or SPS_EPATH (the cause noted: EROFS, ENOENT...). */
static int probe_path(const char *tmp) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        sps__err_os_note(errno);
        return SPS_EPATH;
    }
    close(fd);
    return 0;
}

/* Adds the period's counter samples to the closed file tmp as /counters:
 * names in order of first sample, one row per sample. */
/* Sorts the samples [0, n) of the four columns by time, stably (the
 * program's samples and the value tracks' come in two runs). */
typedef struct csample { int64_t t, series; double v; size_t at; } csample_t;
static int csample_cmp(const void *a, const void *b) {
    const csample_t *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The period's counter samples and, after them, the value tracks' (vt:
 * live bytes and counters per thread, h5_period.c), as /counters in time
 * order. */
static int write_counters(const sps__snap_t *s, const sps__vtot_t *vt, const char *tmp) {
    size_t n = s->ncounters + vt->n;
    uint32_t nids = sps__registry_count();
    int64_t *series = malloc((n + 1) * sizeof *series);
    int64_t *ranks = malloc((n + 1) * sizeof *ranks);
    int64_t *t = malloc((n + 1) * sizeof *t);
    double *v = malloc((n + 1) * sizeof *v);
    uint32_t *slot = calloc(nids + 1, sizeof *slot); /* id -> names index + 1 */
    const char **names = malloc((s->ncounters + vt->nnames + 1) * sizeof *names);
    csample_t *cs = malloc((n + 1) * sizeof *cs);
    int rc = series && ranks && t && v && slot && names && cs ? 0 : SPS_ENOMEM;
    size_t nnames = 0;
    for (size_t i = 0; !rc && i < s->ncounters; i++) {
        uint32_t id = s->counters[i].counter;
        if (id >= nids) id = 0;
        if (!slot[id]) {
            names[nnames] = sps__registry_name(id);
            slot[id] = (uint32_t)++nnames;
        }
        series[i] = slot[id] - 1;
        ranks[i] = s->rank;
        t[i] = s->counters[i].t_ns;
        v[i] = s->counters[i].value;
    }
    size_t base = nnames;
    for (size_t k = 0; !rc && k < vt->nnames; k++) names[nnames++] = vt->names[k];
    for (size_t i = 0; !rc && i < vt->n; i++) {
        size_t j = s->ncounters + i;
        series[j] = (int64_t)base + vt->sm_series[i];
        ranks[j] = s->rank;
        t[j] = vt->sm_t[i];
        v[j] = vt->sm_v[i];
    }
    if (!rc && vt->n) { /* two time-ordered runs: one sort */
        for (size_t i = 0; i < n; i++) cs[i] = (csample_t){t[i], series[i], v[i], i};
        qsort(cs, n, sizeof *cs, csample_cmp);
        for (size_t i = 0; i < n; i++) t[i] = cs[i].t, series[i] = cs[i].series, v[i] = cs[i].v;
    }
    if (!rc)
        rc = sps__h5_add_counters(tmp, nnames, names, n, series, ranks, t, v,
                                  s->counters_dropped + vt->dropped);
    free(series), free(ranks), free(t), free(v), free(slot), free(names), free(cs);
    return rc;
}

/* The session thread index of the thread whose kernel id is tid among
 * threads[0..n), or -1 (a thread that recorded nothing in the period).
 * Tasks and their steps name threads by kernel id (the binding cannot
 * know an index before the thread records); the file names them by
 * index, as its thread_ids do. */
static int64_t thread_index_of(const sps__thread_info_t *threads, size_t n, int64_t tid) {
    for (size_t i = 0; i < n; i++)
        if (threads[i].native_id == tid) return threads[i].index;
    return -1;
}

/* The task table's and the steps' kernel thread ids as session indices
 * (a few threads: a scan each). */
static void tasks_to_indices(const sps__snap_t *s, sps_task_t *t, size_t nt,
                             sps_task_step_t *st, size_t ns) {
    for (size_t i = 0; i < nt; i++)
        t[i].thread_index = thread_index_of(s->threads, s->nthreads, t[i].thread_index);
    for (size_t i = 0; i < ns; i++)
        st[i].thread = thread_index_of(s->threads, s->nthreads, st[i].thread);
}

/* Call ids run on across the periods of one session, as scope-profiler's
 * call_ids do across finalize() calls until the next setup(): a period's
 * first call id is the number of calls the session's earlier files hold.
 * ids_epoch is the session (sps__g.epoch) ids_next counts for; both under
 * sps__g.lock. */
static uint64_t ids_epoch;
static int64_t ids_next;

/* The first call id of the period s is written with (0 in a new session). */
static int64_t s_first_call_id(const sps__snap_t *s) {
    (void)s;
    pthread_mutex_lock(&sps__g.lock);
    if (ids_epoch != sps__g.epoch) {
        ids_epoch = sps__g.epoch;
        ids_next = 0;
    }
    int64_t v = ids_next;
    pthread_mutex_unlock(&sps__g.lock);
    return v;
}

/* After the period s was written with n calls: the next one's ids follow. */
static void ids_written(const sps__snap_t *s, uint64_t n) {
    (void)s;
    pthread_mutex_lock(&sps__g.lock);
    if (ids_epoch == sps__g.epoch) ids_next += (int64_t)n;
    pthread_mutex_unlock(&sps__g.lock);
}

static int write_file(sps__snap_t *s, const char *path, int verbose) {
    const char **names = calloc(s->nregs + 1, sizeof *names);
    sps__row_t *rows = calloc(s->nregs + 1, sizeof *rows);
    uint32_t nids = sps__registry_count();
    uint32_t *file_region = malloc(nids * sizeof *file_region);
    sps__rinfo_t *info = calloc(s->nregs + 1, sizeof *info);
    uint32_t *named = calloc(s->nregs + 1, sizeof *named); /* name index -> region */
    char *tmp = sps__tmp_name(path, NULL);
    int rc = names && rows && file_region && info && named && tmp ? 0 : SPS_ENOMEM;
    if (!rc && strlen(path) > 4096) rc = SPS_EPATH;
    if (!rc) rc = probe_path(tmp);
    size_t nrows = 0, nnames = 0;
    uint64_t off = 0;
    /* the region table names the regions with a completed call in the
     * period (scope-profiler's files): one registered, used only in an
     * earlier period or only by a call still open is not in it; name k is
     * row k's region, info[k] its source, tags and metadata */
    for (size_t i = 0; !rc && i < s->nregs; i++) {
        uint32_t r = s->regs[i];
        file_region[r] = UINT32_MAX;
        const sps__acc_t *a = r < s->nregions ? &s->per[r] : NULL;
        if (!a || !a->count) continue;
        names[nnames] = sps__registry_name(r);
        named[nnames] = r;
        rc = sps__rinfo_copy(r, &info[nnames]); /* source, tags, metadata */
        sps__row_t *row = &rows[nrows];
        row->file_region = (uint32_t)nnames++;
        row->rank = (uint32_t)s->rank;
        row->offset = off;
        row->count = s->aggregate ? 0 : a->count;
        row->exclusive_total = (int64_t)a->self;
        sps__summary_of(a, &row->s);
        if (s->aggregate) row->count = a->count; /* aggregate_counts */
        file_region[r] = (uint32_t)nrows++;
        if (!s->aggregate) off += a->count;
    }
    sps__layout_t lay = {
        .aggregate = s->aggregate, .nnames = nnames, .names = names,
        .nrows = nrows, .rows = rows, .nevents = off, .with_tree = 1,
        .compress_threshold = s->compress_threshold, .nthreads = s->nthreads,
        .threads = s->threads, .start_time_ns = s->start_ns,
        .finalize_time_ns = s->end_ns, .wall_anchor_ns = s->wall_anchor_ns,
        .mono_anchor_ns = s->mono_anchor_ns, .label = s->label,
        .rank = s->rank, .size = s->size, .dropped = s->dropped,
        .spill_error = s->spill_errno ? s->spill_error : NULL, .spill_errno = s->spill_errno,
        .misuse = s->misuse, .open_calls = s->open_calls,
        .clock_source = sps__use_tsc ? "tsc" : "monotonic",
        .has_clock_offset = s->has_clock_offset,
        .clock_offset_ns = s->clock_offset_ns,
        .clock_offset_error_ns = s->clock_offset_error_ns, .info = info,
        .first_call_id = s_first_call_id(s)};
    sps_task_t *tasks = NULL;
    sps_task_step_t *steps = NULL;
    size_t nsteps = 0;
    if (!rc) rc = sps__tasks_copy(&tasks, &lay.ntasks); /* the binding's task table */
    if (!rc && lay.ntasks && !s->aggregate) rc = sps__task_steps_copy(&steps, &nsteps);
    if (!rc) tasks_to_indices(s, tasks, lay.ntasks, steps, nsteps);
    lay.tasks = tasks;
    char **mkeys = NULL, **mvalues = NULL;
    if (!rc) rc = sps__meta_copy(&mkeys, &mvalues, &lay.nextra); /* added /metadata */
    lay.extra_keys = mkeys;
    lay.extra_values = mvalues;
    sps__h5w_t *w = NULL;
    sps__carried_t carried = {0};
    sps__vtot_t vt = {0};
    if (!rc) rc = sps__h5w_open(&w, tmp, &lay);
    if (!rc && !s->aggregate) {
        sps__pline_t line; /* a long write says how far it is (progress.c) */
        sps__pline_init(&line, "writing", path, "calls", verbose, s->rank);
        sps__progress_t pr = {sps__pline_fn, &line};
        if (!rc) rc = sps__vtot_init(&vt, lay.nrows, s->nthreads);
        sps__samples_prepare(s); /* the pass attributes them */
        if (!rc) rc = sps__write_events(s, w, &lay, file_region, &carried, &vt, &pr);
        sps__pline_end(&line, lay.nevents, rc);
        if (rc) {
            sps__h5w_abort(w);
            w = NULL;
        }
    }
    /* the device collectors' activities and per-call device times, on the
     * period's spans (docs/device.md); their gpu_count / gpu_total go into
     * the index the close writes */
    sps__devfin_t dev;
    memset(&dev, 0, sizeof dev);
    if (!rc && w) {
        rc = sps__device_attribute(s, file_region, rows, nrows, lay.nevents,
                                   lay.first_call_id, &dev);
        if (rc) {
            sps__h5w_abort(w);
            w = NULL;
        }
    }
    if (w) rc = sps__h5w_close(w);
    if (!rc && nsteps) rc = sps__h5_add_task_columns(tmp, steps, nsteps); /* track_async */
    if (!rc) rc = sps__carried_write(tmp, &carried);
    sps__carried_free(&carried);
    if (!rc) rc = sps__values_write(tmp, &vt, &lay);
    if (!rc && (s->ncounters || s->counters_dropped || vt.n || vt.dropped))
        rc = write_counters(s, &vt, tmp);
    if (!rc && !s->aggregate)
        rc = sps__samples_write(s, tmp, file_region, rows, lay.first_call_id);
    if (!rc) rc = sps__device_write(tmp, s->rank, &dev);
    sps__vtot_free(&vt);
    if (!rc && rename(tmp, path) != 0) {
        sps__err_os_note(errno);
        rc = SPS_EPATH;
    }
    if (rc && tmp) unlink(tmp); /* no temporary file outlives a failure */
    if (rc == SPS_EIO || rc == SPS_EPATH) sps__err_os_fail(rc, "writing", path);
    for (size_t i = 0; info && named && i < nnames; i++) {
        if (!rc) sps__rinfo_written(named[i], info[i].md_gen); /* consumed */
        sps__rinfo_free(&info[i]);
    }
    if (!rc && !s->aggregate) ids_written(s, off);
    if (!rc) sps__samples_defer(s);
    sps__device_done(&dev, rc == 0);
    free(info);
    free(named);
    sps__tasks_free(tasks, lay.ntasks);
    free(steps);
    sps__meta_free(mkeys, mvalues, lay.nextra);
    free(tmp);
    free(names);
    free(rows);
    free(file_region);
    return rc;
}

int sps__print_accs(FILE *fp, const sps__acc_t *per_region, uint32_t nregions,
                    const sps__acc_t *nodes, const int32_t *node_parent,
                    const uint32_t *node_region, size_t nnodes,
                    int64_t session_ns, const sps__acc_lanes_t *lanes) {
    sps__tree_row_t *tn = calloc(nnodes + 1, sizeof *tn);
    sps__tflat_t *fl = calloc(nregions + 1, sizeof *fl);
    uint32_t *fl_lanes = calloc(nregions + 1, sizeof *fl_lanes);
    if (!tn || !fl || !fl_lanes) {
        free(tn), free(fl), free(fl_lanes);
        return SPS_ENOMEM;
    }
    size_t nf = 0;
    for (uint32_t r = 1; r < nregions; r++) {
        if (!per_region[r].count) continue;
        sps_stats_t st;
        sps__acc_stats(&per_region[r], &st);
        fl_lanes[nf] = lanes && lanes->region ? lanes->region[r] : 1;
        fl[nf++] = (sps__tflat_t){sps__registry_name(r), st.num_calls, st.total_ns,
                                  st.self_ns, st.min_ns, st.max_ns, st.mean_ns};
    }
    for (size_t i = 0; i < nnodes; i++) {
        sps_stats_t st;
        sps__acc_stats(&nodes[i], &st);
        tn[i] = (sps__tree_row_t){node_parent[i], sps__registry_name(node_region[i]),
                               st.num_calls, st.total_ns, st.self_ns, st.min_ns,
                               st.max_ns};
    }
    sps__table_opts_t opt = {1, 1, SPS__SORT_SELF, 0, session_ns};
    sps__table_lanes_t tl = {fl_lanes, lanes ? lanes->node : NULL, lanes ? lanes->total : 0};
    int rc = sps__table_print_lanes(fp, tn, nnodes, fl, nf, &opt, lanes ? &tl : NULL);
    free(tn);
    free(fl);
    free(fl_lanes);
    return rc;
}

/* Verbose: how much of the period's analysis finalize did itself, and how
 * much the spill writer had done before it, in the background. */
static void print_analysis(FILE *fp, const sps__snap_t *s) {
    uint64_t records = 0;
    for (size_t i = 0; i < s->nsegs; i++)
        records += s->segs[i].n > s->segs[i].skip ? s->segs[i].n - s->segs[i].skip : 0;
    if (!records) return;
    uint64_t bg = s->bg_records < records ? s->bg_records : records;
    fprintf(fp, "spanscope: analysis at finalize %.3f s; %.0f %% of the period's %llu records "
            "were analyzed before, in the background%s\n", (double)s->analysis_ns / 1e9,
            100.0 * (double)bg / (double)records, (unsigned long long)records,
            s->analysis_split ? "; the rest on two cores" : "");
    if (s->bg_trials) /* bg_trial.c */
        fprintf(fp, "spanscope: while the recorders were busy, analyzing beside them was "
                "allowed by %llu of %llu trials (one that finds it slows them refuses it for 10 s; "
                "SPANSCOPE_BG_ANALYSIS=quiet: never while busy)\n",
                (unsigned long long)s->bg_allowed, (unsigned long long)s->bg_trials);
}

int sps__finalize_write(sps__snap_t *s, const char *path, FILE *verbose) {
    int rc = path ? write_file(s, path, verbose != NULL) : 0;
    if (verbose) {
        sps__acc_lanes_t lanes = {s->lanes, s->node_lanes, s->lanes_total};
        sps__print_accs(verbose, s->per, s->nregions, s->node_per, s->node_parent,
                        s->node_region, s->nnodes, s->end_ns - s->start_ns,
                        s->lanes ? &lanes : NULL);
        if (path && rc == 0) fprintf(verbose, "spanscope: wrote %s\n", path);
        print_analysis(verbose, s);
        if (rc) fprintf(verbose, "spanscope: could not write %s: %s\n",
                        path ? path : "(none)",
                        sps__err_os() ? sps__err_msg() : sps_strerror(rc));
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                          */
/* ------------------------------------------------------------------------ */

int sps_finalize_to(const char *path) {
    return sps__finalize_ex(path, sps__g.cfg.verbose ? stderr : NULL);
}

/* sps_finalize_to, with the table printed to table_fp (NULL: no table).
 * In a distributed session the finalize is the integration's (api/dist.c;
 * MPI: collective), which writes this process's part with
 * sps__finalize_local. */
int sps__finalize_ex(const char *path, FILE *table_fp) {
    sps__err_clear(); /* the cause of an earlier failure is not this one's */
    if (sps__session_live() && sps__g.dist.on) return sps__dist_finalize(path, table_fp);
    return sps__finalize_local(path, table_fp);
}

/* Pools the written period s by call path into *out (sps_finalize_paths):
 * the file's region table (the regions of s->regs with a completed call in
 * the period, as write_file names them), the paths from the model's pass.
 * 0 or SPS_ENOMEM (out then has what was made; its owner frees it). */
static int period_paths(const sps__snap_t *s, sps_period_paths_t *out) {
    uint32_t nids = sps__registry_count();
    uint32_t *name_of = malloc((nids ? nids : 1) * sizeof *name_of); /* id -> names index */
    out->names = calloc(s->nregs + 1, sizeof *out->names);
    if (!name_of || !out->names) {
        free(name_of);
        return SPS_ENOMEM;
    }
    /* the file's region table: the regions with a completed call */
    size_t k = 0;
    for (size_t i = 0; i < nids; i++) name_of[i] = 0;
    for (size_t i = 0; i < s->nregs; i++) {
        uint32_t r = s->regs[i];
        if (r >= s->nregions || !s->per[r].count) continue;
        out->names[k] = sps__registry_name(r);
        if (r < nids) name_of[r] = (uint32_t)k;
        k++;
    }
    out->nnames = k;
    sps__path_t *v = NULL;
    size_t n = 0;
    int rc = sps__paths_pass(s, &v, &n);
    out->paths = rc ? NULL : calloc(n + 1, sizeof *out->paths);
    if (!rc && !out->paths) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const sps__path_t *x = &v[i];
        out->paths[i] = (sps_call_path_t){
            x->parent, x->region < nids ? name_of[x->region] : 0, x->calls, x->total_ns,
            x->duration_sum_ns, x->self_ns, x->min_ns, x->max_ns, x->first_start_ns,
            x->first_ns, x->last_end_ns, x->last_ns, x->coverage_ns, x->recursive};
    }
    if (!rc) {
        out->npaths = n;
        out->available = 1;
    }
    free(v);
    free(name_of);
    return rc;
}

static int finalize_local_locked(const char *path, FILE *table_fp, int plain,
                                 sps_period_paths_t *paths);

/* sps__finalize_local and sps__finalize_part: plain stores the events
 * uncompressed; paths (or NULL) gets the period's call paths once it is
 * written (sps_finalize_paths).  A finalize and a signal's write (the
 * watcher's, api/signals.c) never use HDF5 at once -- its serial build does
 * not allow it: a Python program's exit finalize beside the write of the
 * SIGTERM that came just before left no file -- the later one waits
 * (sps__signals_finalize_enter). */
static int finalize_local_ex(const char *path, FILE *table_fp, int plain,
                             sps_period_paths_t *paths) {
    sps__signals_finalize_enter();
    int rc = finalize_local_locked(path, table_fp, plain, paths);
    sps__signals_finalize_leave();
    return rc;
}

static int finalize_local_locked(const char *path, FILE *table_fp, int plain,
                                 sps_period_paths_t *paths) {
    sps__process_init();
    pthread_mutex_lock(&sps__g.lock);
    if (!sps__session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_ENOSESSION;
    }
    char *p = path ? strdup(path) : NULL;
    int64_t an0 = (int64_t)sps__mono_ns();
    uint64_t splits0 = sps__an_splits;
    sps__analyze_all(); /* adds the period's last anchor */
    int64_t an_ns = (int64_t)sps__mono_ns() - an0;
    sps__snap_t *s = sps__snap_build(1);
    if (s) {
        s->analysis_ns = an_ns;
        s->analysis_split = sps__an_splits != splits0;
        s->bg_records = sps__g.sp.bg_records - sps__g.sp.bg_taken;
        sps__bg_trials(&s->bg_trials, &s->bg_allowed);
        sps__g.sp.bg_taken = sps__g.sp.bg_records;
    }
    if (s && sps__analysis_take(s)) {
        sps__snap_stash(s, sps__analysis_merge); /* nothing lost: written next time */
        s = NULL;
    }
    if (s) sps__snap_absorb_pending(s, sps__analysis_merge);
    if (s) sps__counters_take(s);
    if (s) sps__samples_take(s);
    if (s && sps__g.mode == SPS__AGGREGATE) /* aggregate files: whole session */
        for (uint32_t r = 1; r < s->nregions; r++) s->per[r] = sps__cum_acc(r);
    if (s && (sps__snap_describe(s) || sps__analysis_describe(s))) {
        sps__snap_stash(s, sps__analysis_merge);
        s = NULL;
    }
    if (s) sps__g.period_start_ns = s->end_ns;
    if (s) sps__collect_reset(); /* the queries' kept calls were this period's */
    if (s && plain) s->compress_threshold = -1;
    pthread_mutex_unlock(&sps__g.lock);
    if (!s) {
        free(p);
        return SPS_ENOMEM;
    }
    int rc = sps__finalize_write(s, p, table_fp);
    int written = rc == 0;
    /* the snapshot is this thread's until it is released or stashed; a
     * pooling that runs out of memory leaves the written file as it is */
    if (written && paths && !s->aggregate) rc = period_paths(s, paths);
    pthread_mutex_lock(&sps__g.lock);
    if (!written) {
        sps__snap_stash(s, sps__analysis_merge);
    } else {
        sps__snap_release(s);
        sps__snap_free(s);
    }
    pthread_mutex_unlock(&sps__g.lock);
    free(p);
    return rc;
}

int sps__finalize_local(const char *path, FILE *table_fp) {
    return finalize_local_ex(path, table_fp, 0, NULL);
}

int sps__finalize_part(const char *path, FILE *table_fp) {
    return finalize_local_ex(path, table_fp, 1, NULL);
}

/* A distributed session's finalize is the integration's (its file holds
 * every rank): there the period is not pooled (available 0). */
int sps_finalize_paths(const char *path, void *table_file, sps_period_paths_t *out) {
    memset(out, 0, sizeof *out);
    if (sps__session_live() && sps__g.dist.on)
        return sps__dist_finalize(path, (FILE *)table_file);
    return finalize_local_ex(path, (FILE *)table_file, 0, out);
}

void sps_period_paths_free(sps_period_paths_t *p) {
    if (!p) return;
    free(p->names);
    free(p->paths);
    memset(p, 0, sizeof *p);
}

int sps_finalize(void) {
    pthread_mutex_lock(&sps__g.lock);
    char *p = sps__g.file_path ? strdup(sps__g.file_path) : NULL;
    int nomem = sps__g.file_path && !p;
    pthread_mutex_unlock(&sps__g.lock);
    if (nomem) return SPS_ENOMEM;
    int rc = sps_finalize_to(p);
    free(p);
    return rc;
}


int sps_finalize_print(const char *path, void *table_file) {
    return sps__finalize_ex(path, (FILE *)table_file);
}
