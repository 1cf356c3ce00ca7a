/* output.c -- turns a finalized period into a file and a table.
 *
 * Builds the HDF5 layout (one row per region with calls in the period,
 * offsets in region order) from the period statistics, writes the calls
 * through the merged pass into "<path>.tmp-<pid>" and renames it into
 * place. */
#include "sps_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void summary_of(const sps__acc_t *a, sps__summary_t *o) {
    sps_stats_t st;
    sps__acc_stats(a, &st);
    o->total = st.total_ns;
    o->minimum = st.min_ns;
    o->maximum = st.max_ns;
    o->first = (int64_t)a->first_dur;
    o->last = (int64_t)a->last_dur;
    o->start_minimum = a->count ? (int64_t)a->first_start : 0;
    o->end_maximum = a->count ? (int64_t)a->end_max : 0;
    o->gpu_count = 0;
    o->gpu_total = 0;
    o->mean = st.mean_ns;
    o->m2 = st.var_ns2 * (double)(a->count > 1 ? a->count - 1 : 0);
}

/* Checks that a file can be created next to path, before any data is
 * consumed.  Returns 0 or SPS_EPATH. */
static int probe_path(const char *tmp) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return SPS_EPATH;
    close(fd);
    return 0;
}

/* Adds the period's counter samples to the closed file tmp as /counters:
 * names in order of first sample, one row per sample. */
static int write_counters(const sps__snap_t *s, const char *tmp) {
    size_t n = s->ncounters;
    uint32_t nids = sps__registry_count();
    int64_t *series = malloc((n + 1) * sizeof *series);
    int64_t *ranks = malloc((n + 1) * sizeof *ranks);
    int64_t *t = malloc((n + 1) * sizeof *t);
    double *v = malloc((n + 1) * sizeof *v);
    uint32_t *slot = calloc(nids + 1, sizeof *slot); /* id -> names index + 1 */
    const char **names = malloc((n + 1) * sizeof *names);
    int rc = series && ranks && t && v && slot && names ? 0 : SPS_ENOMEM;
    size_t nnames = 0;
    for (size_t i = 0; !rc && i < n; i++) {
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
    if (!rc)
        rc = sps__h5_add_counters(tmp, nnames, names, n, series, ranks, t, v,
                                  s->counters_dropped);
    free(series), free(ranks), free(t), free(v), free(slot), free(names);
    return rc;
}

static int write_file(sps__snap_t *s, const char *path) {
    const char **names = calloc(s->nregs + 1, sizeof *names);
    sps__row_t *rows = calloc(s->nregs + 1, sizeof *rows);
    uint32_t nids = sps__registry_count();
    uint32_t *file_region = malloc(nids * sizeof *file_region);
    char tmp[4200];
    int rc = names && rows && file_region ? 0 : SPS_ENOMEM;
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
    if (!rc && strlen(path) > 4096) rc = SPS_EPATH;
    if (!rc) rc = probe_path(tmp);
    size_t nrows = 0;
    uint64_t off = 0;
    for (size_t i = 0; !rc && i < s->nregs; i++) {
        uint32_t r = s->regs[i];
        names[i] = sps__registry_name(r);
        file_region[r] = UINT32_MAX;
        const sps__acc_t *a = r < s->nregions ? &s->per[r] : NULL;
        if (!a || !a->count) continue;
        sps__row_t *row = &rows[nrows];
        row->file_region = (uint32_t)i;
        row->rank = (uint32_t)s->rank;
        row->offset = off;
        row->count = s->aggregate ? 0 : a->count;
        row->exclusive_total = (int64_t)a->self;
        summary_of(a, &row->s);
        if (s->aggregate) row->count = a->count; /* aggregate_counts */
        file_region[r] = (uint32_t)nrows++;
        if (!s->aggregate) off += a->count;
    }
    sps__layout_t lay = {
        .aggregate = s->aggregate, .nnames = s->nregs, .names = names,
        .nrows = nrows, .rows = rows, .nevents = off, .with_tree = 1,
        .compress_threshold = s->compress_threshold, .nthreads = s->nthreads,
        .threads = s->threads, .start_time_ns = s->start_ns,
        .finalize_time_ns = s->end_ns, .wall_anchor_ns = s->wall_anchor_ns,
        .mono_anchor_ns = s->mono_anchor_ns, .label = s->label,
        .rank = s->rank, .size = s->size, .dropped = s->dropped,
        .misuse = s->misuse, .open_calls = s->open_calls,
        .clock_source = sps__use_tsc ? "tsc" : "monotonic",
        .has_clock_offset = s->has_clock_offset,
        .clock_offset_ns = s->clock_offset_ns,
        .clock_offset_error_ns = s->clock_offset_error_ns};
    sps__h5w_t *w = NULL;
    if (!rc) rc = sps__h5w_open(&w, tmp, &lay);
    if (!rc && !s->aggregate) {
        rc = sps__write_events(s, w, &lay, file_region);
        if (rc) {
            sps__h5w_abort(w);
            w = NULL;
        }
    }
    if (w) rc = sps__h5w_close(w);
    if (!rc && (s->ncounters || s->counters_dropped)) rc = write_counters(s, tmp);
    if (!rc && rename(tmp, path) != 0) rc = SPS_EPATH;
    if (rc) unlink(tmp);
    free(names);
    free(rows);
    free(file_region);
    return rc;
}

int sps__print_accs(FILE *fp, const sps__acc_t *per_region, uint32_t nregions,
                    const sps__acc_t *nodes, const int32_t *node_parent,
                    const uint32_t *node_region, size_t nnodes,
                    int64_t session_ns) {
    sps__tree_row_t *tn = calloc(nnodes + 1, sizeof *tn);
    sps__tflat_t *fl = calloc(nregions + 1, sizeof *fl);
    if (!tn || !fl) {
        free(tn);
        free(fl);
        return SPS_ENOMEM;
    }
    size_t nf = 0;
    for (uint32_t r = 1; r < nregions; r++) {
        if (!per_region[r].count) continue;
        sps_stats_t st;
        sps__acc_stats(&per_region[r], &st);
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
    int rc = sps__table_print(fp, tn, nnodes, fl, nf, &opt);
    free(tn);
    free(fl);
    return rc;
}

int sps__finalize_write(sps__snap_t *s, const char *path, FILE *verbose) {
    int rc = path ? write_file(s, path) : 0;
    if (verbose) {
        sps__print_accs(verbose, s->per, s->nregions, s->node_per, s->node_parent,
                        s->node_region, s->nnodes, s->end_ns - s->start_ns);
        if (path && rc == 0) fprintf(verbose, "spanscope: wrote %s\n", path);
        if (rc) fprintf(verbose, "spanscope: could not write %s: %s\n",
                        path ? path : "(none)", sps_strerror(rc));
    }
    return rc;
}
