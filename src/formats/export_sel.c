/*
 * export_sel.c -- which spans of a source an export takes (export.h):
 * the requested ranks' threads, as lanes, and the region names that pass
 * the include/exclude patterns; and the call tree of what is taken, by
 * the one fold (sps__fold_tl with its tree), shared by the .prof and SVG
 * writers.
 */
#include "formats/export.h"

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank of process p (index pi among the processes): its own, or its
 * index when it has none (a trace of several processes: one rank each). */
static int64_t proc_rank(const sps__tl_proc_t *p, size_t pi) {
    return p->rank >= 0 ? p->rank : (int64_t)pi;
}

/* The rank of every thread of h into out (nthreads of them); a thread of
 * no known process is rank 0. */
static void thread_ranks(const sps__tl_header_t *h, int64_t *out) {
    for (size_t t = 0; t < h->nthreads; t++) {
        out[t] = 0;
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == h->threads[t].pid) {
                out[t] = proc_rank(&h->procs[p], p);
                break;
            }
    }
}

/* Whether rank is requested by o (none requested: rank 0). */
static int rank_wanted(const sps__export_opts_t *o, int64_t rank) {
    if (!o->ranks || !o->nranks) return rank == 0;
    for (size_t i = 0; i < o->nranks; i++)
        if (o->ranks[i] == rank) return 1;
    return 0;
}

/* Checks that every requested rank is held by some thread of sel.
 * Returns 0 or SPS_EINVAL (message set). */
static int ranks_check(const sps__export_sel_t *sel, const sps__export_opts_t *o) {
    const sps__tl_header_t *h = sel->h;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t t = 0; t < h->nthreads; t++) {
        if (sel->rank_of_thread[t] < lo) lo = sel->rank_of_thread[t];
        if (sel->rank_of_thread[t] > hi) hi = sel->rank_of_thread[t];
    }
    size_t n = o->ranks && o->nranks ? o->nranks : 1;
    for (size_t i = 0; i < n; i++) {
        int64_t want = o->ranks && o->nranks ? o->ranks[i] : 0, found = 0;
        for (size_t t = 0; t < h->nthreads && !found; t++)
            found = sel->rank_of_thread[t] == want;
        if (found || (!h->nthreads && want == 0)) continue;
        if (lo > hi)
            return sps__err_fail(SPS_EINVAL, "Invalid rank requested: %" PRId64
                                 " (the file holds no threads)", want);
        return sps__err_fail(SPS_EINVAL, "Invalid rank requested: %" PRId64
                             " (the file holds ranks %" PRId64 "..%" PRId64 ")",
                             want, lo, hi);
    }
    return 0;
}

/* Whether name matches one of the n patterns, each anchored at the
 * name's start.  Returns 1, 0, or SPS_EINVAL for a pattern that does not
 * compile (message set). */
static int matches_any(const char *name, const char *const *pat, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(pat[i]);
        char *anchored = malloc(len + 4);
        if (!anchored) return SPS_ENOMEM;
        snprintf(anchored, len + 4, "^(%s)", pat[i]);
        regex_t re;
        int bad = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
        free(anchored);
        if (bad)
            return sps__err_fail(SPS_EINVAL, "bad region pattern '%s'", pat[i]);
        int hit = regexec(&re, name, 0, NULL, 0) == 0;
        regfree(&re);
        if (hit) return 1;
    }
    return 0;
}

/* Sets sel->name_on by o's filters.  Returns 0, SPS_EINVAL (a bad
 * pattern, or no name passes) or SPS_ENOMEM. */
static int names_filter(sps__export_sel_t *sel, const sps__export_opts_t *o) {
    const sps__tl_header_t *h = sel->h;
    size_t on = 0;
    for (size_t i = 0; i < h->nnames; i++) {
        int in = o->ninclude ? matches_any(h->names[i], o->include, o->ninclude) : 1;
        if (in < 0) return in;
        int out = in && o->nexclude ? matches_any(h->names[i], o->exclude, o->nexclude) : 0;
        if (out < 0) return out;
        sel->name_on[i] = (unsigned char)(in && !out);
        on += sel->name_on[i];
    }
    if (!on && (o->ninclude || o->nexclude))
        return sps__err_fail(SPS_EINVAL, "No regions matched the selected filters.");
    return 0;
}

int sps__export_sel_init(sps__export_sel_t *sel, const sps__tl_header_t *h,
                         const sps__export_opts_t *o) {
    memset(sel, 0, sizeof *sel);
    sel->h = h;
    size_t nt = h->nthreads ? h->nthreads : 1;
    sel->lane_of_thread = malloc(nt * sizeof *sel->lane_of_thread);
    sel->rank_of_thread = malloc(nt * sizeof *sel->rank_of_thread);
    sel->lane_thread = malloc(nt * sizeof *sel->lane_thread);
    sel->name_on = malloc(h->nnames ? h->nnames : 1);
    if (!sel->lane_of_thread || !sel->rank_of_thread || !sel->lane_thread ||
        !sel->name_on) {
        sps__export_sel_free(sel);
        return SPS_ENOMEM;
    }
    thread_ranks(h, sel->rank_of_thread);
    int rc = ranks_check(sel, o);
    if (!rc) rc = names_filter(sel, o);
    if (rc) {
        sps__export_sel_free(sel);
        return rc;
    }
    for (size_t t = 0; t < h->nthreads; t++) {
        sel->lane_of_thread[t] = -1;
        if (!rank_wanted(o, sel->rank_of_thread[t])) continue;
        sel->lane_thread[sel->nlanes] = (uint32_t)t;
        sel->lane_of_thread[t] = (int64_t)sel->nlanes++;
    }
    return 0;
}

int64_t sps__export_sel_take(sps__export_sel_t *sel, const sps__tl_span_t *s) {
    const sps__tl_header_t *h = sel->h;
    if (s->thread >= h->nthreads || s->name >= h->nnames)
        return sps__err_fail(SPS_EFORMAT, "a span names no thread or region of "
                             "the file");
    int64_t lane = sel->lane_of_thread[s->thread];
    if (lane < 0 || !sel->name_on[s->name]) return -1;
    sel->nselected++;
    return lane;
}

const char *sps__export_lane_label(const sps__export_sel_t *sel, size_t l,
                                   char *buf, size_t cap) {
    const sps__tl_header_t *h = sel->h;
    uint32_t t = sel->lane_thread[l];
    int64_t rank = sel->rank_of_thread[t];
    size_t same = 0;
    for (size_t i = 0; i < h->nthreads; i++) same += sel->rank_of_thread[i] == rank;
    const sps__tl_thread_t *th = &h->threads[t];
    if (same <= 1) snprintf(buf, cap, "rank %" PRId64, rank);
    else if (th->name && th->name[0])
        snprintf(buf, cap, "rank %" PRId64 " - %s", rank, th->name);
    else snprintf(buf, cap, "rank %" PRId64 " - thread %" PRId64, rank, th->tid);
    return buf;
}

void sps__export_sel_free(sps__export_sel_t *sel) {
    free(sel->lane_of_thread);
    free(sel->rank_of_thread);
    free(sel->lane_thread);
    free(sel->name_on);
    memset(sel, 0, sizeof *sel);
}

int sps__export_fold_tree(sps__tlr_t *r, sps__export_sel_t *sel, sps__fold_tl_t *fold) {
    int rc = sps__fold_tl_init(fold, sel->nlanes, sel->h->nnames, 1);
    if (rc) return rc;
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        int64_t lane = sps__export_sel_take(sel, &s);
        if (lane < -1) { rc = (int)lane; break; }
        if (lane < 0) continue;
        int64_t d = sps__fold_tl_add(fold, (uint32_t)lane, s.name, s.start_ns,
                                     s.end_ns, s.prior_ns);
        if (d < 0) { rc = (int)d; break; }
    }
    if (!rc) sps__fold_tl_finish(fold);
    if (!rc && !sel->nselected)
        rc = sps__err_fail(SPS_EINVAL, "No calls recorded for the requested ranks.");
    if (rc) sps__fold_tl_free(fold);
    return rc;
}
