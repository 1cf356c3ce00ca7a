/*
 * export_sel.c -- which spans of a source an export takes (export.h):
 * the requested ranks' threads, as lanes, and the region names that pass
 * the include/exclude patterns; and the call tree of what is taken, by
 * the one fold (sps__fold_tl with its tree), shared by the .prof and SVG
 * writers.  The rule for a thread's rank and the pattern matching are
 * also the HTML page's (html.c): one of each for every view.
 */
#include "formats/export.h"
#include "formats/h5_read.h"

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

void sps__export_thread_ranks(const sps__tl_header_t *h, int64_t *rank_of) {
    for (size_t t = 0; t < h->nthreads; t++) {
        rank_of[t] = 0;
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == h->threads[t].pid) {
                rank_of[t] = proc_rank(&h->procs[p], p);
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

/* Compiles the n patterns of pat into re[] ("^(P)", extended, no
 * submatches): each anchored at the name's start, as Python's re.match.
 * Returns 0, SPS_EINVAL naming the pattern (message set) or SPS_ENOMEM;
 * on an error those compiled so far are freed. */
static int compile_patterns(regex_t *re, const char *const *pat, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(pat[i]) + 4;
        char *anchored = malloc(len);
        int bad = !anchored;
        if (anchored) {
            snprintf(anchored, len, "^(%s)", pat[i]);
            bad = regcomp(&re[i], anchored, REG_EXTENDED | REG_NOSUB) != 0;
            free(anchored);
        }
        if (bad) {
            while (i > 0) regfree(&re[--i]);
            return anchored ? sps__err_fail(SPS_EINVAL, "bad region pattern '%s'", pat[i])
                            : SPS_ENOMEM;
        }
    }
    return 0;
}

/* Whether name matches one of the n compiled patterns re[]. */
static int matches_any(const regex_t *re, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (regexec(&re[i], name, 0, NULL, 0) == 0) return 1;
    return 0;
}

/* Every pattern is compiled once, before any name is matched, so that a
 * bad one is reported whatever the names are. */
int sps__export_names_pass(const sps__tl_header_t *h, const char *const *include,
                           size_t ninclude, const char *const *exclude, size_t nexclude,
                           unsigned char *name_on, size_t *npass) {
    regex_t *re = malloc((ninclude + nexclude + 1) * sizeof *re);
    if (!re) return SPS_ENOMEM;
    int rc = compile_patterns(re, include, ninclude);
    if (rc == 0 && (rc = compile_patterns(re + ninclude, exclude, nexclude)) != 0)
        for (size_t i = 0; i < ninclude; i++) regfree(&re[i]);
    if (rc) {
        free(re);
        return rc;
    }
    size_t on = 0;
    for (size_t i = 0; i < h->nnames; i++) {
        const char *nm = h->names[i] ? h->names[i] : "";
        name_on[i] = (unsigned char)((!ninclude || matches_any(re, ninclude, nm)) &&
                                     !matches_any(re + ninclude, nexclude, nm));
        on += name_on[i];
    }
    for (size_t i = 0; i < ninclude + nexclude; i++) regfree(&re[i]);
    free(re);
    if (npass) *npass = on;
    return 0;
}

/* Sets sel->name_on by o's filters.  Returns 0, SPS_EINVAL (a bad
 * pattern, or no name passes) or SPS_ENOMEM. */
static int names_filter(sps__export_sel_t *sel, const sps__export_opts_t *o) {
    size_t on = 0;
    int rc = sps__export_names_pass(sel->h, o->include, o->ninclude, o->exclude, o->nexclude,
                                    sel->name_on, &on);
    if (rc) return rc;
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
    sps__export_thread_ranks(h, sel->rank_of_thread);
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

/* ------------------------------------------------------------------------ */
/* Stack samples on a timeline's threads (export.h)                           */
/* ------------------------------------------------------------------------ */

/* The index in h->procs of rank's process: the one with that rank, else
 * the one without a rank whose pid is it; -1 when none. */
static int64_t rank_proc(const sps__tl_header_t *h, int64_t rank) {
    for (size_t p = 0; p < h->nprocs; p++)
        if (h->procs[p].rank == rank) return (int64_t)p;
    for (size_t p = 0; p < h->nprocs; p++)
        if (h->procs[p].rank < 0 && h->procs[p].pid == rank) return (int64_t)p;
    return -1;
}

/* The index among s->threads[0..n) of (pid, tid), or -1. */
static int64_t thread_at(const sps__tl_samples_t *s, size_t n, int64_t pid, int64_t tid) {
    for (size_t t = 0; t < n; t++)
        if (s->threads[t].pid == pid && s->threads[t].tid == tid) return (int64_t)t;
    return -1;
}

/* The thread of sample i of x on process pid: its row among the header's
 * (nh) threads, else an added one (found or made; *cap its room).  -1 on
 * ENOMEM. */
static int64_t sample_thread(sps__tl_samples_t *s, size_t nh, size_t *cap,
                             const sps__h5r_samples_t *x, size_t i, int64_t pid) {
    int64_t t = x->threads[i] >= 0 ? thread_at(s, nh, pid, x->threads[i]) : -1;
    if (t >= 0) return t;
    /* its own row: keyed by the OS tid among the added ones */
    for (size_t a = 0; a < s->nadded; a++) {
        const char *lab = s->label[a];
        char want[48];
        snprintf(want, sizeof want, "thread %lld (samples)", (long long)x->tids[i]);
        if (s->threads[nh + a].pid == pid && !strcmp(lab, want)) return (int64_t)(nh + a);
    }
    if (nh + s->nadded + 1 > *cap) {
        size_t nc = *cap * 2 + 8;
        sps__tl_thread_t *th = realloc(s->threads, nc * sizeof *th);
        if (!th) return -1;
        s->threads = th;
        char (*lb)[48] = realloc(s->label, nc * sizeof *lb);
        if (!lb) return -1;
        s->label = lb;
        /* the added names moved: point the rows at the new place */
        for (size_t a = 0; a < s->nadded; a++) s->threads[nh + a].name = s->label[a];
        *cap = nc;
    }
    int64_t tid = x->threads[i] >= 0 ? x->threads[i] : x->tids[i];
    if (thread_at(s, nh + s->nadded, pid, tid) >= 0) { /* taken: past the highest */
        int64_t hi = tid;
        for (size_t k = 0; k < nh + s->nadded; k++)
            if (s->threads[k].pid == pid && s->threads[k].tid > hi) hi = s->threads[k].tid;
        tid = hi < INT32_MAX ? hi + 1 : 0;
        while (thread_at(s, nh + s->nadded, pid, tid) >= 0) tid++;
    }
    size_t a = s->nadded++;
    snprintf(s->label[a], sizeof s->label[a], "thread %lld (samples)", (long long)x->tids[i]);
    s->threads[nh + a] = (sps__tl_thread_t){pid, tid, s->label[a]};
    return (int64_t)(nh + a);
}

int sps__tl_samples_place(sps__tl_samples_t *s, const sps__h5r_samples_t *x,
                          const sps__tl_header_t *h) {
    memset(s, 0, sizeof *s);
    s->x = x;
    size_t cap = h->nthreads + 8;
    s->threads = malloc(cap * sizeof *s->threads);
    s->label = malloc(cap * sizeof *s->label);
    s->thread = malloc((x->n ? x->n : 1) * sizeof *s->thread);
    if (!s->threads || !s->label || !s->thread) {
        sps__tl_samples_free(s);
        return SPS_ENOMEM;
    }
    if (h->nthreads) memcpy(s->threads, h->threads, h->nthreads * sizeof *s->threads);
    /* samples come by thread, then time: the last one's answer mostly holds */
    int64_t lrank = INT64_MIN, lthread = 0, ltid = 0, lt = -1;
    for (size_t i = 0; i < x->n; i++) {
        s->thread[i] = UINT32_MAX;
        if (x->ranks[i] == lrank && x->threads[i] == lthread && x->tids[i] == ltid) {
            if (lt >= 0) s->thread[i] = (uint32_t)lt, s->nplaced++;
            continue;
        }
        lrank = x->ranks[i], lthread = x->threads[i], ltid = x->tids[i], lt = -1;
        int64_t p = rank_proc(h, x->ranks[i]);
        if (p < 0) continue;
        int64_t t = lt = sample_thread(s, h->nthreads, &cap, x, i, h->procs[p].pid);
        if (t < 0) {
            sps__tl_samples_free(s);
            return SPS_ENOMEM;
        }
        s->thread[i] = (uint32_t)t;
        s->nplaced++;
    }
    s->nthreads = h->nthreads + s->nadded;
    return 0;
}

void sps__tl_samples_free(sps__tl_samples_t *s) {
    if (!s) return;
    free(s->thread);
    free(s->threads);
    free(s->label);
    memset(s, 0, sizeof *s);
}

const char *sps__tl_frame_text(const sps__h5r_samples_t *x, int64_t frame, char *buf,
                               size_t cap) {
    const char *fn = x->functions[frame] && *x->functions[frame] ? x->functions[frame] : "?";
    const char *file = x->files[frame], *mod = x->modules[frame];
    if (file && *file && x->lines[frame] > 0)
        snprintf(buf, cap, "%s:%lld (%s)", file, (long long)x->lines[frame], fn);
    else if (file && *file) snprintf(buf, cap, "%s (%s)", file, fn);
    else if (mod && *mod) snprintf(buf, cap, "%s (%s)", mod, fn);
    else snprintf(buf, cap, "%s", fn);
    return buf;
}
