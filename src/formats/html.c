/*
 * html.c -- the HTML page of a recording (html.h): one self-contained
 * page (inline CSS and JS, no network) with a zoomable timeline on a
 * <canvas> (a label per depth row), a legend of the regions' colours,
 * per-region bars of total and self time, and the summary table; and the
 * page comparing several recordings (statistics only: a runs table, bars
 * per region and run, a comparison table).
 *
 * Everything is computed here, in one pass over the span stream of any
 * timeline source (sps__tlr_*: .h5, .json, .json.gz, .pftrace):
 *   - per-region statistics over ALL spans (calls, total, self, min, max)
 *     by the one fold (model/fold.c: sps__fold_tl);
 *   - the spans embedded for the timeline, at most max_spans of them: the
 *     library's min-heap (util.h: sps__heap, key the duration, evict_cmp
 *     for equal ones) keeps the longest (every span longer than the
 *     longest one left out; among spans of exactly that length the
 *     earliest, then the shallowest, then the one of the lowest thread
 *     index).  Since a parent is never shorter than its child and wins
 *     ties against it, every kept span's ancestors are kept too.
 * Memory: O(regions + threads * depth + embedded spans + ranks * regions),
 * plus a histogram per region (a few KiB) when the table shows or sorts by
 * a percentile.
 *
 * The options (sps_html_options_t) select what is shown, as
 * scope-profiler 0.7.5's create_html_report: the ranks (a span of another
 * rank is not read into anything), and the regions that pass the
 * include/exclude patterns (POSIX EREs at the name's start: its re.match,
 * by the exports' one matcher, export.h: sps__export_names_pass).
 * Nesting and self time are folded over every region of the selected
 * ranks, so that hiding a child never turns its time into its parent's
 * self time; the patterns then pick what the timeline embeds and what the
 * legend, bars, tables and the scaling section show.  The timeline stacks
 * the shown spans by their shown ancestors (a hidden parent leaves no
 * empty row).  A pattern that matches nothing, or a rank a run does not
 * hold, is no error there, and none here: the page says so.
 */
#include "formats/h5_read.h"
#include "formats/html.h"

#include "formats/export.h"
#include "formats/folded.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Statistics of one region (span name). */
typedef struct rstat {
    uint64_t calls;
    int64_t total, self, min, max;
} rstat_t;

/* A span kept for the timeline. */
typedef struct kspan {
    int64_t start, dur;
    uint32_t name, thread, depth;
} kspan_t;

/* The whole state of one run. */
typedef struct html_state {
    const sps__tl_header_t *h;
    const char *values_path; /* sps__html_opts_t.values_path */
    sps__fold_tl_t fold; /* the one fold: nesting and self time per thread */
    rstat_t *stats;     /* per name (from the fold, at the end) */
    kspan_t *kept;      /* the spans kept, nkept of them (room for keptcap,
                         * at most cap); sorted for the page at the end */
    size_t nkept, keptcap, cap;
    sps__heap_t heap;   /* over kept[] while reading: the next to go first */
    uint64_t nspans, nshown, dropped_any; /* spans of the selected ranks; of
                                           * the shown regions among them */
    int64_t dropped_max; /* longest duration left out (valid if dropped_any) */
    int64_t t0, t1;      /* first start, last end */
    void (*progress)(uint64_t done, uint64_t total, int final); /* or NULL */
    const sps_html_options_t *o; /* the options (never NULL: the defaults) */
    unsigned char *name_on;   /* per name: passes the patterns */
    unsigned char *thread_on; /* per thread: of a selected rank */
    uint32_t *rix;            /* per thread: its rank's index in ranks[] */
    int64_t *ranks;           /* the ranks the source holds, ascending */
    size_t nranks;
    uint64_t *rank_total, *rank_calls; /* [rix * nnames + name] */
    sps__hist_t *hist;        /* per name when percentiles are asked, else NULL */
    /* with patterns: per thread and depth, whether the latest span at that
     * depth is shown (the open ancestors of a span at depth d are the
     * latest spans at depths 0..d-1), so that the timeline stacks the
     * shown spans without the rows of hidden ones; NULL without patterns */
    unsigned char **shown_at;
    size_t *shown_cap;
} html_state_t;

/* The order in which spans of equal duration leave the timeline, < 0
 * when a goes before b: the later start first, then the deeper (so that
 * earlier spans survive ties, and a parent as long as its child outlives
 * it), then the higher thread index (so that which spans are kept never
 * depends on the heap's arrangement). */
static int evict_cmp(const kspan_t *a, const kspan_t *b) {
    if (a->start != b->start) return a->start > b->start ? -1 : 1;
    if (a->depth != b->depth) return a->depth > b->depth ? -1 : 1;
    if (a->thread != b->thread) return a->thread > b->thread ? -1 : 1;
    return 0;
}

/* The heap's tie-breaker: evict_cmp of kept spans a and b (ctx: the
 * html_state_t). */
static int evict_tie(void *ctx, uint32_t a, uint32_t b) {
    const html_state_t *S = ctx;
    return evict_cmp(&S->kept[a], &S->kept[b]);
}

/* The heap key of a duration: the shortest comes first. */
static uint64_t dur_key(int64_t dur) { return sps__heap_key_i64(dur); }

/* Notes that a span of duration d is left out of the timeline. */
static void note_dropped(html_state_t *S, int64_t d) {
    if (!S->dropped_any || d > S->dropped_max) S->dropped_max = d;
    S->dropped_any = 1;
}

/* Makes room in S->kept (and the heap) for one more span: both start
 * with room for the spans the source says it has, which is only an
 * estimate, and double, to S->cap at most.  Needs S->keptcap > 0 (set
 * whenever S->cap is).  Returns 0 or SPS_ENOMEM. */
static int kept_room(html_state_t *S) {
    if (S->nkept < S->keptcap) return 0;
    size_t nc = S->keptcap <= S->cap / 2 ? S->keptcap * 2 : S->cap;
    kspan_t *v = realloc(S->kept, nc * sizeof *v);
    if (!v) return SPS_ENOMEM;
    S->kept = v;
    S->keptcap = nc;
    return sps__heap_reserve(&S->heap, nc) ? SPS_ENOMEM : 0;
}

/* Offers span k to the timeline: kept while among the cap longest (in
 * the order of evict_cmp among equals), the span it pushes out noted as
 * dropped.  Returns 0 or SPS_ENOMEM. */
static int keep_offer(html_state_t *S, const kspan_t *k) {
    if (S->cap == 0) {
        note_dropped(S, k->dur);
        return 0;
    }
    if (S->nkept < S->cap) {
        if (kept_room(S)) return SPS_ENOMEM;
        S->kept[S->nkept] = *k;
        if (sps__heap_push(&S->heap, dur_key(k->dur), (uint32_t)S->nkept))
            return SPS_ENOMEM; /* not with the room kept_room made */
        S->nkept++;
        return 0;
    }
    kspan_t *first = &S->kept[sps__heap_top(&S->heap).idx];
    if (first->dur > k->dur || (first->dur == k->dur && evict_cmp(first, k) >= 0)) {
        note_dropped(S, k->dur); /* k would go first: it is not kept */
        return 0;
    }
    note_dropped(S, first->dur);
    *first = *k; /* k takes the slot of the span it pushes out */
    sps__heap_update_top(&S->heap, dur_key(k->dur));
    return 0;
}

/* --- the options: what is shown (sps_html_options_t) -------------------- */

static const sps_html_options_t k_defaults = SPS_HTML_OPTIONS_INIT;

/* The values of a table row, each a column and/or a sort key. */
enum {
    K_NAME, K_RANKS, K_CALLS, K_TOTAL, K_SELF, K_PERCENT, K_AVG, K_MIN, K_MAX,
    K_FIRST, K_LAST, K_STD, K_P50, K_P95, K_P99, K_IMB, K_START, NKEYS
};
/* How a value is shown. */
typedef enum { V_TEXT, V_COUNT, V_NS, V_PCT } vkind_t;
/* Each value's name (scope-profiler's column and sort key names,
 * python/spanscope/_results_table.py; "self" is spanscope's own), the
 * page's header for it, its kind, and whether it is a column. */
static const struct {
    const char *key, *head;
    vkind_t kind;
    int column;
} k_keys[NKEYS] = {
    {"name", "region", V_TEXT, 1},     {"ranks", "ranks", V_COUNT, 1},
    {"calls", "calls", V_COUNT, 1},    {"total", "total", V_NS, 1},
    {"self", "self", V_NS, 1},         {"percent", "% session", V_PCT, 1},
    {"avg", "mean", V_NS, 1},          {"min", "min", V_NS, 1},
    {"max", "max", V_NS, 1},           {"first", "first", V_NS, 1},
    {"last", "last", V_NS, 1},         {"std", "std", V_NS, 1},
    {"p50", "p50", V_NS, 1},           {"p95", "p95", V_NS, 1},
    {"p99", "p99", V_NS, 1},           {"imbalance", "imbalance", V_PCT, 1},
    {"start", "first start", V_NS, 0}};
/* The table's columns when none are named: the page's before the options. */
static const int k_default_cols[] = {K_NAME, K_CALLS, K_TOTAL, K_SELF, K_AVG, K_MIN, K_MAX};
/* The sort keys, in the order the error message lists them. */
static const int k_sort_keys[] = {K_START, K_TOTAL, K_SELF, K_CALLS, K_AVG, K_MIN, K_MAX,
                                  K_FIRST, K_LAST, K_STD, K_P50, K_P95, K_P99, K_IMB,
                                  K_NAME};
#define NSORT (sizeof k_sort_keys / sizeof *k_sort_keys)
static const char *const k_scaling[] = {"strong", "weak", "both"};
static const char *const k_axes[] = {"auto", "ranks", "nodes", "threads", "cores"};
#define NAXES (sizeof k_axes / sizeof *k_axes)

/* The value named as a column (c), or -1. */
static int column_key(const char *c) {
    if (!strcmp(c, "region")) return K_NAME;
    for (int k = 0; k < NKEYS; k++)
        if (k_keys[k].column && !strcmp(k_keys[k].key, c)) return k;
    return -1;
}

/* The value named as a sort key (NULL: total), or -1. */
static int sort_key(const char *s) {
    if (!s) return K_TOTAL;
    for (size_t i = 0; i < NSORT; i++)
        if (!strcmp(k_keys[k_sort_keys[i]].key, s)) return k_sort_keys[i];
    return -1;
}

/* The index of s in the n names v (NULL: 0, the default), or -1. */
static int name_index(const char *s, const char *const *v, size_t n) {
    if (!s) return 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, v[i])) return (int)i;
    return -1;
}

/* The index in k_axes of o's scaling axis (0: auto). */
static int axis_of(const sps_html_options_t *o) {
    return name_index(o->speedup_x, k_axes, NAXES);
}

/* Checks o's columns: each known, at least one.  0 or SPS_EINVAL. */
static int check_columns(const sps_html_options_t *o) {
    if (!o->columns) return o->ncolumns ? sps__err_fail(SPS_EINVAL, "columns is NULL") : 0;
    if (!o->ncolumns)
        return sps__err_fail(SPS_EINVAL, "At least one region summary column must be "
                             "selected.");
    char bad[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < o->ncolumns; i++)
        if (!o->columns[i] || column_key(o->columns[i]) < 0) {
            int w = snprintf(bad + used, sizeof bad - used, "%s'%s'", used ? ", " : "",
                             o->columns[i] ? o->columns[i] : "(null)");
            if (w > 0) used = used + (size_t)w < sizeof bad ? used + (size_t)w : sizeof bad - 1;
        }
    if (!used) return 0;
    return sps__err_fail(SPS_EINVAL, "Unknown region summary column(s): [%s]. Choices: "
                         "region, ranks, calls, total, self, percent, avg, min, max, first, "
                         "last, std, p50, p95, p99, imbalance", bad);
}

int sps__html_check_opts(const sps_html_options_t *o) {
    if (!o) return 0;
    if (o->max_spans > SPS__HTML_MAX_SPANS_LIMIT)
        return sps__err_fail(SPS_EINVAL, "max_spans: at most %zu",
                             (size_t)SPS__HTML_MAX_SPANS_LIMIT);
    if ((o->ninclude && !o->include) || (o->nexclude && !o->exclude) ||
        (o->nranks && !o->ranks))
        return sps__err_fail(SPS_EINVAL, "a list of the options is NULL with a count");
    if (sort_key(o->sort) < 0)
        return sps__err_fail(SPS_EINVAL, "unknown sort key '%s'; choose one of start, total, "
                             "self, calls, avg, min, max, first, last, std, p50, p95, p99, "
                             "imbalance, name", o->sort);
    int rc = check_columns(o);
    if (rc) return rc;
    if (name_index(o->scaling, k_scaling, 3) < 0)
        return sps__err_fail(SPS_EINVAL, "scaling must be one of 'strong', 'weak', 'both', "
                             "not '%s'.", o->scaling);
    if (axis_of(o) < 0)
        return sps__err_fail(SPS_EINVAL, "speedup_x must be one of auto, ranks, nodes, "
                             "threads, cores, got '%s'", o->speedup_x);
    return 0;
}

/* Whether a percentile is shown or sorted by: then the durations of each
 * shown region go into a histogram. */
static int needs_hist(const sps_html_options_t *o) {
    int k = sort_key(o->sort);
    if (k == K_P50 || k == K_P95 || k == K_P99) return 1;
    for (size_t i = 0; o->columns && i < o->ncolumns; i++) {
        k = column_key(o->columns[i]);
        if (k == K_P50 || k == K_P95 || k == K_P99) return 1;
    }
    return 0;
}

/* Whether rank is selected by o (no ranks named: every rank). */
static int rank_selected(const sps_html_options_t *o, int64_t rank) {
    if (!o->nranks) return 1;
    for (size_t i = 0; i < o->nranks; i++)
        if (o->ranks[i] == rank) return 1;
    return 0;
}

/* Ascending int64 (qsort). */
static int i64_cmp(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Fills S->ranks (the distinct ranks, ascending), S->rix and
 * S->thread_on from the threads' ranks, rank_of (scratch of nthreads;
 * the exports' rule: sps__export_thread_ranks). */
static void sel_ranks(html_state_t *S, int64_t *rank_of) {
    const sps__tl_header_t *h = S->h;
    sps__export_thread_ranks(h, rank_of);
    memcpy(S->ranks, rank_of, h->nthreads * sizeof *S->ranks);
    qsort(S->ranks, h->nthreads, sizeof *S->ranks, i64_cmp);
    S->nranks = 0;
    for (size_t t = 0; t < h->nthreads; t++)
        if (!S->nranks || S->ranks[S->nranks - 1] != S->ranks[t]) S->ranks[S->nranks++] = S->ranks[t];
    for (size_t t = 0; t < h->nthreads; t++) {
        int64_t *hit = bsearch(&rank_of[t], S->ranks, S->nranks, sizeof *S->ranks, i64_cmp);
        S->rix[t] = (uint32_t)(hit - S->ranks);
        S->thread_on[t] = (unsigned char)rank_selected(S->o, rank_of[t]);
    }
}

/* Sets S->name_on by the patterns of S->o (the exports' matcher:
 * sps__export_names_pass).  0, SPS_EINVAL or SPS_ENOMEM. */
static int sel_names(html_state_t *S) {
    const sps_html_options_t *o = S->o;
    return sps__export_names_pass(S->h, o->include, o->ninclude, o->exclude, o->nexclude,
                                  S->name_on, NULL);
}

/* Sets up what S shows by S->o: the selected ranks' threads, the names
 * that pass, and the per-rank totals (and histograms) the table needs.
 * Returns 0, SPS_EINVAL (a bad pattern) or SPS_ENOMEM. */
static int sel_init(html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    size_t nt = h->nthreads ? h->nthreads : 1, nn = h->nnames ? h->nnames : 1;
    int64_t *rank_of = malloc(nt * sizeof *rank_of);
    S->ranks = malloc(nt * sizeof *S->ranks);
    S->rix = malloc(nt * sizeof *S->rix);
    S->thread_on = malloc(nt);
    S->name_on = malloc(nn);
    if (!rank_of || !S->ranks || !S->rix || !S->thread_on || !S->name_on) {
        free(rank_of);
        return SPS_ENOMEM;
    }
    sel_ranks(S, rank_of);
    free(rank_of);
    size_t cells = (S->nranks ? S->nranks : 1) * nn;
    S->rank_total = calloc(cells, sizeof *S->rank_total);
    S->rank_calls = calloc(cells, sizeof *S->rank_calls);
    if (!S->rank_total || !S->rank_calls) return SPS_ENOMEM;
    if (needs_hist(S->o) && !(S->hist = calloc(nn, sizeof *S->hist))) return SPS_ENOMEM;
    if (S->o->ninclude || S->o->nexclude) {
        S->shown_at = calloc(nt, sizeof *S->shown_at);
        S->shown_cap = calloc(nt, sizeof *S->shown_cap);
        if (!S->shown_at || !S->shown_cap) return SPS_ENOMEM;
    }
    return sel_names(S);
}

static int64_t shown_depth(html_state_t *S, uint32_t t, int64_t d, int on);

/* Takes span s into the statistics and the timeline.  Returns 0,
 * SPS_EFORMAT (bad indices) or SPS_ENOMEM. */
static int take_span(html_state_t *S, const sps__tl_span_t *s) {
    const sps__tl_header_t *h = S->h;
    if (s->name >= h->nnames || s->thread >= h->nthreads || s->end_ns < s->start_ns) {
        sps__err_set("span %" PRIu64 " names no region or thread, or ends "
                           "before it starts", S->nspans);
        return SPS_EFORMAT;
    }
    if (!S->thread_on[s->thread]) return 0; /* another rank's: not on this page */
    if (S->nspans == 0 || s->start_ns < S->t0) S->t0 = s->start_ns;
    if (S->nspans == 0 || s->end_ns > S->t1) S->t1 = s->end_ns;
    S->nspans++;
    int64_t depth = sps__fold_tl_add(&S->fold, s->thread, s->name, s->start_ns, s->end_ns, s->prior_ns);
    if (depth < 0) return (int)depth;
    uint64_t dur = (uint64_t)(s->end_ns - s->start_ns);
    size_t cell = (size_t)S->rix[s->thread] * h->nnames + s->name;
    S->rank_total[cell] += dur;
    S->rank_calls[cell]++;
    int64_t sd = shown_depth(S, s->thread, depth, S->name_on[s->name]);
    if (sd < 0) return SPS_ENOMEM;
    if (!S->name_on[s->name]) return 0; /* folded (its time is its own), not shown */
    depth = sd;
    S->nshown++;
    if (S->hist && sps__hist_add(&S->hist[s->name], dur)) return SPS_ENOMEM;
    kspan_t k = {s->start_ns, s->end_ns - s->start_ns, s->name, s->thread,
                 (uint32_t)depth};
    return keep_offer(S, &k);
}

/* The depth of a span of thread t at depth d among the shown spans (its
 * shown ancestors), noting whether it is shown itself (on) for the spans
 * inside it.  Returns it, or -1 when out of memory. */
static int64_t shown_depth(html_state_t *S, uint32_t t, int64_t d, int on) {
    if (!S->shown_at) return d;
    size_t need = (size_t)d + 1;
    if (need > S->shown_cap[t]) {
        size_t cap = S->shown_cap[t] ? S->shown_cap[t] : 16;
        while (cap < need) cap *= 2;
        unsigned char *v = realloc(S->shown_at[t], cap);
        if (!v) return -1;
        S->shown_at[t] = v;
        S->shown_cap[t] = cap;
    }
    int64_t n = 0;
    for (int64_t j = 0; j < d; j++) n += S->shown_at[t][j];
    S->shown_at[t][d] = (unsigned char)on;
    return n;
}

/* Closes every open span of the fold and takes its statistics. */
static void finish_stacks(html_state_t *S) {
    sps__fold_tl_finish(&S->fold);
    for (size_t i = 0; i < S->h->nnames; i++) {
        const sps__acc_t *a = &S->fold.acc[i];
        S->stats[i] = (rstat_t){a->count, (int64_t)a->total, (int64_t)a->self,
                                a->count ? (int64_t)a->min : 0,
                                a->count ? (int64_t)a->max : 0};
    }
}

/* Order of embedded spans: by thread, then start, then depth. */
static int kspan_cmp(const void *pa, const void *pb) {
    const kspan_t *a = pa, *b = pb;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return 0;
}

/* Sorts the kept spans for the page; the heap is done with. */
static void finish_kept(html_state_t *S) {
    sps__heap_free(&S->heap);
    if (S->nkept) /* with max_spans 0 there is no array (qsort wants one) */
        qsort(S->kept, S->nkept, sizeof *S->kept, kspan_cmp);
}

/* The region palette, most distinct first.  Picked (greedy farthest point
 * in CIELAB) among the sRGB colours of lightness 52..80 and chroma 32..62 --
 * light enough for the dark label text, saturated enough never to read as
 * the page's greys -- to lie as far apart as possible: the first 20 are at
 * least 28 CIELAB units (dE76) apart, all 32 at least 21.  A hash of the
 * name to a hue, as before, gave colliding colours (two names of 20 landing
 * a few degrees apart was the common case). */
static const char *const k_palette[] = {
    "#507dc3", "#e1c34b", "#f05a73", "#00dcbe", "#ff9bfa", "#468c28", "#a5734b",
    "#00d2ff", "#faaabe", "#008c8c", "#ff8c55", "#afcd82", "#9169d2", "#be5a91",
    "#878223", "#5fd782", "#c3b4ff", "#af6e05", "#ebbe87", "#059664", "#b96469",
    "#0f8cb4", "#82befa", "#96b43c", "#6991ff", "#ffa08c", "#5fcdcd", "#cd5a46",
    "#78c39b", "#faaf55", "#c35fbe", "#ff6eaa"};
#define PALETTE_N (sizeof k_palette / sizeof *k_palette)

/* One channel of HSL to RGB (h in turns, s and l in 0..1), 0..255. */
static unsigned hsl_channel(double h, double s, double l) {
    double q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    h -= floor(h);
    double v = h < 1.0 / 6 ? p + (q - p) * 6 * h
             : h < 0.5     ? q
             : h < 2.0 / 3 ? p + (q - p) * (2.0 / 3 - h) * 6
                           : p;
    return (unsigned)lround(v * 255);
}

/* The colour of colour slot i (slot 0: the region with the most total
 * time) as "#rrggbb" in buf: the palette's, and past its end a hue a
 * golden angle (137.5 degrees) on from the slot before, at one of three
 * lightnesses in turn, so that neighbours still differ. */
static const char *slot_color(char buf[8], size_t i) {
    if (i < PALETTE_N) return k_palette[i];
    double h = fmod((double)(i - PALETTE_N) * 0.381966 + 0.07, 1.0);
    double l = (const double[]){0.62, 0.50, 0.72}[(i - PALETTE_N) % 3];
    snprintf(buf, 8, "#%02x%02x%02x", hsl_channel(h + 1.0 / 3, 0.6, l),
             hsl_channel(h, 0.6, l), hsl_channel(h - 1.0 / 3, 0.6, l));
    return buf;
}

const char *sps__html_slot_color(char buf[8], size_t i) { return slot_color(buf, i); }

/* The colour slot of every name of h: the n regions of ord (those with
 * calls, most total time first) take slots 0..n-1 in that order, the
 * names without calls the slots after.  Returns the array (the caller
 * frees it) or NULL when out of memory. */
static uint32_t *color_slots(const sps__tl_header_t *h, const uint32_t *ord, size_t n) {
    uint32_t *slot = malloc((h->nnames ? h->nnames : 1) * sizeof *slot);
    if (!slot) return NULL;
    for (size_t i = 0; i < h->nnames; i++) slot[i] = UINT32_MAX;
    for (size_t i = 0; i < n; i++) slot[ord[i]] = (uint32_t)i;
    uint32_t next = (uint32_t)n;
    for (size_t i = 0; i < h->nnames; i++)
        if (slot[i] == UINT32_MAX) slot[i] = next++;
    return slot;
}

/* Writes s as a quoted JSON string of the page's data blob, by the
 * library's one escaper (util.h: invalid UTF-8 as U+FFFD), with every '<'
 * as \u003c so that no name can end the <script> element the blob stands
 * in. */
static void put_json_str(FILE *fp, const char *s) {
    fputc('"', fp);
    sps__json_fputs(fp, s, SPS__JSON_IN_SCRIPT);
    fputc('"', fp);
}

/* Writes s as HTML text or attribute value: the library's one escaper
 * for markup (util.h, sps__xml_fputs: entities, controls and invalid
 * UTF-8 as U+FFFD), which the flame graph's SVG uses too. */
static void put_html(FILE *fp, const char *s) { sps__xml_fputs(fp, s); }

/* Formats a duration in ns as text ("1.23 ms") into buf. */
static const char *fmt_ns(char *buf, size_t n, double ns) {
    if (ns < 1e3) snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(buf, n, "%.2f \xc2\xb5s", ns / 1e3);
    else if (ns < 1e9) snprintf(buf, n, "%.2f ms", ns / 1e6);
    else snprintf(buf, n, "%.3f s", ns / 1e9);
    return buf;
}

static const char page_css[] =
    "body{font:13px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;"
    "margin:16px;color:#222;background:#fafafa}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
    ".meta{color:#555;margin-bottom:8px}\n"
    "#tlwrap{position:relative;border:1px solid #ccc;background:#fff;"
    "max-height:640px;overflow-y:auto;overflow-x:hidden}\n"
    "#tl{display:block;cursor:grab}\n"
    "#tip{position:fixed;pointer-events:none;background:#222;color:#fff;"
    "padding:4px 8px;border-radius:4px;font-size:12px;display:none;z-index:9;"
    "white-space:pre}\n"
    ".bar-row{display:flex;align-items:center;margin:2px 0}\n"
    ".bar-name{width:240px;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap;padding-right:8px;text-align:right}\n"
    ".bar-track{flex:1;position:relative;height:16px;background:#eee}\n"
    ".bar-total,.bar-self{position:absolute;left:0;top:0;height:100%}\n"
    ".bar-total{opacity:.4}\n"
    ".bar-val{width:190px;padding-left:8px;color:#444;white-space:nowrap}\n"
    "table{border-collapse:collapse;background:#fff}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    "th{background:#f0f0f0;cursor:pointer;user-select:none}\n"
    "button{font:inherit;margin:0 6px 6px 0}\n"
    ".note{color:#8a5300}\n"
    "#legend{display:flex;flex-wrap:wrap;gap:3px 14px;margin:6px 0 8px}\n"
    ".lg{display:inline-flex;align-items:center;white-space:nowrap}\n"
    ".sw{display:inline-block;width:12px;height:12px;margin-right:5px;border-radius:2px}\n"
    /* a long name (1 MiB from a hostile file) cut with an ellipsis; the
     * viewer's table (tools/view_page/view.css) has the same rule */
    "#stats td:first-child{max-width:40em;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}\n"
    ".bar-run{width:60px;color:#555;text-align:right;padding-right:6px;white-space:nowrap;"
    "overflow:hidden;text-overflow:ellipsis}\n"
    ".up{color:#b00020}.down{color:#1b7a2c}\n";

/* The page's script: the timeline (canvas, zoom, pan, tooltip) and table
 * sorting.  Reads the JSON blob of <script id="spsdata">. */
static const char page_js[] =
    "(function(){'use strict';\n"
    "var D=JSON.parse(document.getElementById('spsdata').textContent);\n"
    "function fmt(ns){var a=Math.abs(ns);if(a<1e3)return ns.toFixed(0)+' ns';"
    "if(a<1e6)return (ns/1e3).toFixed(2)+' \\u00b5s';if(a<1e9)return (ns/1e6).toFixed(2)+' ms';"
    "return (ns/1e9).toFixed(3)+' s';}\n"
    "var ROW=16,GAP=6,HDR=18,LBL=210,AX=22;\n"
    "var cv=document.getElementById('tl'),wrap=document.getElementById('tlwrap'),"
    "tip=document.getElementById('tip'),ctx=cv.getContext('2d');\n"
    /* lanes: one per thread, ordered by process then thread */
    "var lanes=[],byThread={};\n"
    "D.threads.forEach(function(t,i){var L={t:i,pid:t[0],tid:t[1],name:t[2],proc:t[3],"
    "st:[],du:[],nm:[],dp:[],rows:[],maxd:0};byThread[i]=L;lanes.push(L);});\n"
    "D.lanes.forEach(function(e){var L=byThread[e[0]],a=e[1],s=0;"
    "for(var i=0;i<a.length;i+=4){s+=a[i+1];var d=a[i+3];L.nm.push(a[i]);L.st.push(s);"
    "L.du.push(a[i+2]);L.dp.push(d);if(d>L.maxd)L.maxd=d;"
    "(L.rows[d]||(L.rows[d]=[])).push(L.st.length-1);}});\n"
    "lanes.sort(function(a,b){return a.proc-b.proc||a.t-b.t;});\n"
    "var y=AX,lastProc=-1;lanes.forEach(function(L){if(L.proc!==lastProc){"
    "L.hdr=y;y+=HDR;lastProc=L.proc;}L.y=y;L.h=(L.maxd+1)*ROW;y+=L.h+GAP;});\n"
    /* counters: one lane each, below the threads, drawn as steps */
    "var CH=44,clanes=(D.counters||[]).map(function(c){var ts=[],vs=[],mn=Infinity,mx=-Infinity;"
    "for(var i=0;i<c[2].length;i+=2){ts.push(c[2][i]);vs.push(c[2][i+1]);"
    "if(c[2][i+1]<mn)mn=c[2][i+1];if(c[2][i+1]>mx)mx=c[2][i+1];}"
    "var L={name:D.names[c[0]],proc:c[1],ts:ts,vs:vs,mn:mn,mx:mx,y:y+HDR,h:CH};y+=HDR+CH+GAP;return L;});\n"
    "var H=Math.min(y,30000),T0=0,T1=Math.max(1,D.t1-D.t0),v0=T0,v1=T1,W=0;\n"
    "function resize(){var dpr=window.devicePixelRatio||1;W=wrap.clientWidth;"
    "cv.style.width=W+'px';cv.style.height=H+'px';cv.width=Math.round(W*dpr);"
    "cv.height=Math.round(H*dpr);ctx.setTransform(dpr,0,0,dpr,0,0);draw();}\n"
    "function xOf(t){return LBL+(t-v0)/(v1-v0)*(W-LBL);}\n"
    "function tOf(x){return v0+(x-LBL)/(W-LBL)*(v1-v0);}\n"
    "function color(n){return D.colors[n];}\n"
    /* first index in row (sorted, disjoint) whose end >= t */
    "function firstEnd(L,row,t){var lo=0,hi=row.length;while(lo<hi){var m=(lo+hi)>>1,"
    "k=row[m];if(L.st[k]+L.du[k]<t)lo=m+1;else hi=m;}return lo;}\n"
    "function draw(){var n=0;ctx.clearRect(0,0,W,H);ctx.font='11px sans-serif';"
    "ctx.textBaseline='middle';var top=wrap.scrollTop-40,bot=wrap.scrollTop+wrap.clientHeight+40;\n"
    "ctx.save();ctx.beginPath();ctx.rect(LBL,0,W-LBL,H);ctx.clip();\n"
    "lanes.forEach(function(L){if(L.y+L.h<top||L.y>bot)return;"
    "for(var d=0;d<L.rows.length;d++){var row=L.rows[d];if(!row)continue;"
    "var yy=L.y+d*ROW,lastX=-1;for(var i=firstEnd(L,row,v0);i<row.length;i++){var k=row[i],"
    "s=L.st[k];if(s>v1)break;var x0=xOf(s),x1=xOf(s+L.du[k]);if(x1<lastX+0.5&&x1-x0<1)continue;"
    "if(x0<LBL-2)x0=LBL-2;if(x1>W+2)x1=W+2;var w=Math.max(1,x1-x0);"
    "ctx.fillStyle=color(L.nm[k]);ctx.fillRect(x0,yy+1,w,ROW-2);n++;lastX=x0+w;"
    "if(w>40){ctx.fillStyle='#111';var nm=D.names[L.nm[k]];var tw=Math.floor((w-6)/6.2);"
    "if(tw>2)ctx.fillText(nm.length>tw?nm.slice(0,tw-1)+'\\u2026':nm,x0+3,yy+ROW/2);}}}});\n"
    "var nc=0;clanes.forEach(function(C){if(C.y+C.h<top||C.y>bot||!C.ts.length)return;"
    "var span=C.mx-C.mn||1,yOf=function(v){return C.y+C.h-2-(v-C.mn)/span*(C.h-4);};"
    "ctx.strokeStyle='#3c6fb4';ctx.fillStyle='rgba(60,120,200,0.18)';"
    "ctx.beginPath();var px=xOf(C.ts[0]),py=yOf(C.vs[0]);ctx.moveTo(px,C.y+C.h);ctx.lineTo(px,py);"
    "for(var i=1;i<C.ts.length;i++){var x=xOf(C.ts[i]);ctx.lineTo(x,py);py=yOf(C.vs[i]);ctx.lineTo(x,py);}"
    "ctx.lineTo(W+2,py);ctx.lineTo(W+2,C.y+C.h);ctx.closePath();ctx.fill();ctx.stroke();nc++;});\n"
    "ctx.restore();\n"
    /* labels, process headers, axis */
    "ctx.fillStyle='#fff';ctx.fillRect(0,0,LBL,H);ctx.fillStyle='#222';var ndl=0;"
    "lanes.forEach(function(L){if(L.hdr!==undefined){ctx.fillStyle='#e8e8f0';"
    "ctx.fillRect(0,L.hdr,W,HDR-2);ctx.fillStyle='#222';ctx.font='bold 12px sans-serif';"
    "ctx.fillText(D.procs[L.proc]||'process',4,L.hdr+HDR/2);}"
    "ctx.font='11px sans-serif';ctx.fillStyle='#333';"
    "ctx.fillText((L.name||('thread '+L.tid)).slice(0,22),8,L.y+ROW/2);"
    /* a label per depth row: which level of the call tree it shows */
    "ctx.fillStyle='#888';ctx.textAlign='right';for(var d=0;d<=L.maxd;d++){"
    "ctx.fillText('depth '+d,LBL-6,L.y+d*ROW+ROW/2);ndl++;}ctx.textAlign='left';"
    "ctx.strokeStyle='#eee';ctx.beginPath();ctx.moveTo(0,L.y+L.h+GAP/2);"
    "ctx.lineTo(W,L.y+L.h+GAP/2);ctx.stroke();});\n"
    "clanes.forEach(function(C){ctx.fillStyle='#eef3ea';ctx.fillRect(0,C.y-HDR,W,HDR-2);"
    "ctx.fillStyle='#222';ctx.font='bold 12px sans-serif';ctx.fillText('counter: '+C.name+"
    "' ('+(D.procs[C.proc]||'process')+')',4,C.y-HDR/2);ctx.font='11px sans-serif';"
    "ctx.fillStyle='#333';ctx.fillText('max '+C.mx.toPrecision(4),8,C.y+8);"
    "ctx.fillText('min '+C.mn.toPrecision(4),8,C.y+C.h-8);});\n"
    "ctx.fillStyle='#f6f6f6';ctx.fillRect(0,0,W,AX);ctx.strokeStyle='#bbb';ctx.fillStyle='#444';"
    "var span=v1-v0,step=Math.pow(10,Math.floor(Math.log10(span/8)));"
    "if(span/step>16)step*=5;else if(span/step>8)step*=2;"
    "for(var t=Math.ceil(v0/step)*step;t<=v1;t+=step){var x=xOf(t);ctx.beginPath();"
    "ctx.moveTo(x,AX-6);ctx.lineTo(x,AX);ctx.stroke();ctx.fillText(fmt(t),x+2,AX/2-1);}\n"
    "cv.setAttribute('data-drawn',String(n));cv.setAttribute('data-counters',String(nc));"
    "cv.setAttribute('data-depth-labels',String(ndl));}\n"
    "function hit(ev){var r=cv.getBoundingClientRect(),x=ev.clientX-r.left,y=ev.clientY-r.top;"
    "if(x<LBL)return null;var t=tOf(x);for(var i=0;i<lanes.length;i++){var L=lanes[i];"
    "if(y<L.y||y>=L.y+L.h)continue;var d=Math.floor((y-L.y)/ROW),row=L.rows[d];if(!row)return null;"
    "var j=firstEnd(L,row,t);if(j<row.length){var k=row[j];var px=(v1-v0)/(W-LBL);"
    "if(L.st[k]<=t+px&&L.st[k]+L.du[k]>=t-px)return {L:L,k:k};}return null;}return null;}\n"
    "var drag=null;\n"
    "cv.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:v0,v1:v1};"
    "cv.style.cursor='grabbing';});\n"
    "window.addEventListener('mouseup',function(){drag=null;cv.style.cursor='grab';});\n"
    "window.addEventListener('mousemove',function(e){if(drag){var dt=(e.clientX-drag.x)/(W-LBL)*"
    "(drag.v1-drag.v0);v0=drag.v0-dt;v1=drag.v1-dt;tip.style.display='none';draw();return;}"
    "if(e.target!==cv){tip.style.display='none';return;}var h=hit(e);"
    "if(!h){tip.style.display='none';return;}var L=h.L,k=h.k;"
    "tip.textContent=D.names[L.nm[k]]+'\\nstart: '+fmt(L.st[k])+'\\nduration: '+fmt(L.du[k])+"
    "'\\n'+(D.procs[L.proc]||'')+' / '+(L.name||('thread '+L.tid));"
    "tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
    "tip.style.display='block';});\n"
    "cv.addEventListener('wheel',function(e){e.preventDefault();var r=cv.getBoundingClientRect(),"
    "x=Math.max(LBL,e.clientX-r.left),t=tOf(x),f=Math.exp((e.deltaY||0)*0.0015);"
    "var nw=Math.max(1e-3*1,Math.min((v1-v0)*f,(T1-T0)*4));v0=t-(t-v0)*nw/(v1-v0);v1=v0+nw;draw();},"
    "{passive:false});\n"
    "wrap.addEventListener('scroll',draw);window.addEventListener('resize',resize);\n"
    "document.getElementById('reset').addEventListener('click',function(){v0=T0;v1=T1;draw();});\n"
    "document.getElementById('zin').addEventListener('click',function(){var c=(v0+v1)/2,"
    "w=(v1-v0)/4;v0=c-w;v1=c+w;draw();});\n"
    "document.getElementById('zout').addEventListener('click',function(){var c=(v0+v1)/2,"
    "w=(v1-v0);v0=c-w;v1=c+w;draw();});\n"
    "resize();\n"
    "})();\n";

/* Sorting of the summary table (#stats: its markup is what other tools
 * parse, so it carries no class) and of every table of class "sortable"
 * by a click on a column's header: by the cells' data-v, as text in the
 * first column and as numbers in the others (cells without data-v last). */
static const char sort_js[] =
    "(function(){'use strict';\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table#stats,table.sortable'),function(tb){"
    "Array.prototype.forEach.call(tb.tHead.rows[tb.tHead.rows.length-1].cells,"
    "function(th,ci){var asc=false;th.addEventListener('click',function(){asc=!asc;"
    "var rows=Array.prototype.slice.call(tb.tBodies[0].rows);rows.sort(function(a,b){"
    "var x=a.cells[ci].getAttribute('data-v'),y=b.cells[ci].getAttribute('data-v');"
    "if(x===null||y===null)return (x===null)-(y===null);"
    "var c=ci===0?x.localeCompare(y):(+x)-(+y);return asc?c:-c;});"
    "rows.forEach(function(r){tb.tBodies[0].appendChild(r);});});});});\n"
    "})();\n";

/* Region order for bars and table (qsort_r over region ids, ctx the
 * rstat_t array): total time, descending, then id. */
static int by_total(const void *pa, const void *pb, void *ctx) {
    const rstat_t *stats = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ta = stats[a].total, tb = stats[b].total;
    if (ta != tb) return ta > tb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Most points drawn per counter series: longer series are thinned to the
 * minimum and the maximum of each of COUNTER_POINTS / 2 time buckets. */
#define COUNTER_POINTS 4000

/* Writes one series (samples idx[0..n), n > 0, of the header's counters,
 * all finite: write_counters leaves NaN/inf out, as JSON has no literal
 * for them and the bucket min/max comparisons would be meaningless) as
 * [name, process, [t, v, t, v, ...]] with t relative to S->t0. */
static void write_series(FILE *fp, const html_state_t *S, const size_t *idx, size_t n) {
    const sps__tl_counter_t *c = S->h->counters;
    fprintf(fp, "[%u,%u,[", c[idx[0]].name, c[idx[0]].proc);
    size_t buckets = n > COUNTER_POINTS ? COUNTER_POINTS / 2 : n;
    int first = 1;
    for (size_t b = 0; b < buckets; b++) {
        size_t lo = b * n / buckets, hi = (b + 1) * n / buckets, mn = lo, mx = lo;
        for (size_t i = lo; i < hi; i++) {
            if (c[idx[i]].value < c[idx[mn]].value) mn = i;
            if (c[idx[i]].value > c[idx[mx]].value) mx = i;
        }
        size_t pick[2] = {mn < mx ? mn : mx, mn < mx ? mx : mn};
        for (int k = 0; k < (mn == mx ? 1 : 2); k++) {
            const sps__tl_counter_t *x = &c[idx[pick[k]]];
            fprintf(fp, "%s%" PRId64 ",%.9g", first ? "" : ",", x->ts_ns - S->t0, x->value);
            first = 0;
        }
    }
    fputs("]]", fp);
}

/* Orders sample indexes by (name, process, time, index): one sort groups
 * the series, each in time order (the index keeps equal times stable).
 * qsort_r with ctx the header's counters. */
static int by_series(const void *pa, const void *pb, void *ctx) {
    const sps__tl_counter_t *counters = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const sps__tl_counter_t *x = &counters[a], *y = &counters[b];
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->proc != y->proc) return x->proc < y->proc ? -1 : 1;
    if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Writes every counter series of the header (one per name and process)
 * with its finite samples; a series without any is left out.  Sorting an
 * index array once keeps this O(n log n) in the samples. */
static void write_counters(FILE *fp, const html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    size_t *idx = malloc((h->ncounters + 1) * sizeof *idx);
    if (!idx) return;
    size_t m = 0;
    for (size_t i = 0; i < h->ncounters; i++)
        if (isfinite(h->counters[i].value)) idx[m++] = i; /* JSON has no NaN/inf */
    qsort_r(idx, m, sizeof *idx, by_series, (void *)h->counters);
    for (size_t i = 0, j; i < m; i = j) {
        const sps__tl_counter_t *c = &h->counters[idx[i]];
        for (j = i + 1; j < m && h->counters[idx[j]].name == c->name &&
                        h->counters[idx[j]].proc == c->proc;)
            j++;
        if (i) fputc(',', fp);
        write_series(fp, S, idx + i, j - i);
    }
    free(idx);
}

/* Writes the JSON blob: names, colours ("#rrggbb" per name, by its slot),
 * processes, threads, and the kept
 * spans per thread as [name, start delta, duration, depth] quadruples
 * (start relative to the first span, delta from the previous start in the
 * lane). */
static void write_json(FILE *fp, const html_state_t *S, const uint32_t *slot) {
    const sps__tl_header_t *h = S->h;
    fprintf(fp, "{\"t0\":0,\"t1\":%" PRId64 ",\"nspans\":%" PRIu64
            ",\"kept\":%zu,\"names\":[", S->t1 - S->t0, S->nspans, S->nkept);
    for (size_t i = 0; i < h->nnames; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, h->names[i] ? h->names[i] : "");
    }
    fputs("],\"shown\":[", fp); /* the names the filters pass that have calls */
    for (size_t i = 0, f = 1; i < h->nnames; i++)
        if (S->name_on[i] && S->stats[i].calls) {
            fprintf(fp, "%s%zu", f ? "" : ",", i);
            f = 0;
        }
    fputs("],\"colors\":[", fp);
    for (size_t i = 0; i < h->nnames; i++) {
        char b[8];
        fprintf(fp, "%s\"%s\"", i ? "," : "", slot_color(b, slot[i]));
    }
    fputs("],\"procs\":[", fp);
    for (size_t i = 0; i < h->nprocs; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, h->procs[i].name ? h->procs[i].name : "");
    }
    fputs("],\"threads\":[", fp);
    for (size_t i = 0; i < h->nthreads; i++) {
        size_t p = 0;
        while (p < h->nprocs && h->procs[p].pid != h->threads[i].pid) p++;
        fprintf(fp, "%s[%" PRId64 ",%" PRId64 ",", i ? "," : "", h->threads[i].pid,
                h->threads[i].tid);
        put_json_str(fp, h->threads[i].name ? h->threads[i].name : "");
        fprintf(fp, ",%zu]", p);
    }
    fputs("],\"lanes\":[", fp);
    size_t i = 0;
    int first = 1;
    while (i < S->nkept) {
        uint32_t t = S->kept[i].thread;
        int64_t prev = 0;
        fprintf(fp, "%s[%u,[", first ? "" : ",", t);
        first = 0;
        for (int f2 = 1; i < S->nkept && S->kept[i].thread == t; i++, f2 = 0) {
            const kspan_t *k = &S->kept[i];
            int64_t s = k->start - S->t0;
            fprintf(fp, "%s%u,%" PRId64 ",%" PRId64 ",%u", f2 ? "" : ",", k->name,
                    s - prev, k->dur, k->depth);
            prev = s;
        }
        fputs("]]", fp);
    }
    fputs("],\"counters\":[", fp);
    write_counters(fp, S);
    fputs("]}", fp);
}

/* Writes the legend: a swatch of each region's colour and its name, in
 * order ord (n regions); slot: the colour slot per name. */
static void write_legend(FILE *fp, const char *const *names, const uint32_t *ord,
                         size_t n, const uint32_t *slot) {
    fputs("<div id=\"legend\">", fp);
    for (size_t i = 0; i < n; i++) {
        char b[8];
        const char *nm = names[ord[i]] ? names[ord[i]] : "";
        fprintf(fp, "<span class=\"lg\"><span class=\"sw\" style=\"background:%s\"></span>",
                slot_color(b, slot[ord[i]]));
        put_html(fp, nm);
        fputs("</span>", fp);
    }
    fputs("</div>\n", fp);
}

/* Writes the bars of total and self time per region, in order ord, each
 * in the colour of its slot. */
static void write_bars(FILE *fp, const html_state_t *S, const uint32_t *ord,
                       size_t n, const uint32_t *slot) {
    int64_t mx = n ? S->stats[ord[0]].total : 0;
    char b1[32], b2[32];
    fputs("<h2>Time per region</h2>\n<div class=\"meta\">light bar: total "
          "(inclusive) time; dark bar: self (exclusive) time</div>\n<div id=\"bars\">\n", fp);
    for (size_t i = 0; i < n; i++) {
        const rstat_t *r = &S->stats[ord[i]];
        const char *nm = S->h->names[ord[i]] ? S->h->names[ord[i]] : "";
        double wt = mx > 0 ? 100.0 * (double)r->total / (double)mx : 0;
        double ws = mx > 0 ? 100.0 * (double)r->self / (double)mx : 0;
        char col[8];
        const char *c = slot_color(col, slot[ord[i]]);
        fputs("<div class=\"bar-row\"><div class=\"bar-name\" title=\"", fp);
        put_html(fp, nm);
        fputs("\">", fp);
        put_html(fp, nm);
        fprintf(fp, "</div><div class=\"bar-track\"><div class=\"bar-total\" "
                "style=\"width:%.2f%%;background:%s\"></div>"
                "<div class=\"bar-self\" style=\"width:%.2f%%;background:%s\">"
                "</div></div><div class=\"bar-val\">%s / self %s</div></div>\n",
                wt, c, ws, c, fmt_ns(b1, sizeof b1, (double)r->total),
                fmt_ns(b2, sizeof b2, (double)r->self));
    }
    fputs("</div>\n", fp);
}

/* Writes one numeric cell of the table (a time in ns, or a count). */
static void cell_ns(FILE *fp, double v) {
    char b[32];
    fprintf(fp, "<td class=\"n\" data-v=\"%.0f\">%s</td>", v, fmt_ns(b, sizeof b, v));
}

/* What "% session" divides by, in ns per rank: the total of the region
 * scope-profiler's session() opens ("scope_profiler.session") over the
 * ranks that ran it, when the run has it; else the selected ranks' first
 * start to last end; 0 when neither (the column then shows "-"). */
static double session_ns(const html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    for (size_t i = 0; i < h->nnames; i++) {
        if (!h->names[i] || strcmp(h->names[i], "scope_profiler.session") || !S->stats[i].calls)
            continue;
        size_t nr = 0;
        for (size_t k = 0; k < S->nranks; k++) nr += S->rank_calls[k * h->nnames + i] != 0;
        return (double)S->stats[i].total / (double)(nr ? nr : 1);
    }
    return S->nspans ? (double)(S->t1 - S->t0) : 0;
}

/* Fills v[NKEYS] with the table's values of region i (ns, counts, %; NaN
 * where there is none): ranks that ran it, statistics from the fold,
 * percentiles from its histogram, imbalance as scope-profiler's
 * (max / mean - 1) x 100 over the ranks' totals (0 with fewer than two
 * ranks), % session of session (session_ns) per rank that ran it. */
static void row_values(const html_state_t *S, uint32_t i, double session, double *v) {
    const sps__acc_t *a = &S->fold.acc[i];
    const rstat_t *r = &S->stats[i];
    size_t nn = S->h->nnames, nr = 0, nt = 0;
    double sum = 0, mx = 0, mean, m2;
    for (size_t k = 0; k < S->nranks; k++) {
        double t = (double)S->rank_total[k * nn + i];
        nr += S->rank_calls[k * nn + i] != 0;
        if (t > 0) {
            sum += t;
            mx = t > mx ? t : mx;
            nt++;
        }
    }
    sps__acc_moments(a, &mean, &m2);
    double calls = (double)r->calls;
    v[K_NAME] = 0;
    v[K_RANKS] = (double)nr;
    v[K_CALLS] = calls;
    v[K_TOTAL] = (double)r->total;
    v[K_SELF] = (double)r->self;
    v[K_PERCENT] = session > 0 && nr ? 100.0 * (double)r->total / (session * (double)nr) : NAN;
    v[K_AVG] = calls ? (double)r->total / calls : NAN;
    v[K_MIN] = calls ? (double)r->min : NAN;
    v[K_MAX] = calls ? (double)r->max : NAN;
    v[K_FIRST] = calls ? (double)a->first_dur : NAN;
    v[K_LAST] = calls ? (double)a->last_dur : NAN;
    v[K_STD] = calls ? sqrt(m2 > 0 ? m2 / calls : 0) : NAN;
    static const double q[3] = {0.50, 0.95, 0.99};
    for (int k = 0; k < 3; k++) { /* within the bucket, and never past min or max */
        double p = S->hist && calls ? sps__hist_quantile(&S->hist[i], q[k]) : NAN;
        v[K_P50 + k] = isnan(p) ? p : fmin(fmax(p, v[K_MIN]), v[K_MAX]);
    }
    v[K_IMB] = nt >= 2 ? (mx / (sum / (double)nt) - 1.0) * 100.0 : 0.0;
    v[K_START] = calls ? (double)a->first_start : NAN;
}

/* The table's values of every region of S (nnames x NKEYS; the caller
 * frees), or NULL when out of memory. */
static double *table_values(const html_state_t *S) {
    size_t nn = S->h->nnames ? S->h->nnames : 1;
    double *v = malloc(nn * NKEYS * sizeof *v), session = session_ns(S);
    for (size_t i = 0; v && i < S->h->nnames; i++) row_values(S, (uint32_t)i, session, v + i * NKEYS);
    return v;
}

/* What the table's order compares (qsort_r's ctx). */
typedef struct row_order {
    const double *v;          /* per name, NKEYS values */
    const char *const *names; /* per name */
    int key;                  /* the sort key (K_*) */
} row_order_t;

/* The table's order: by name, or by the key -- "start" ascending, the
 * others descending as scope-profiler sorts them -- regions without a
 * value last, ties by name. */
static int by_sort_key(const void *pa, const void *pb, void *ctx) {
    const row_order_t *o = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const char *na = o->names[a] ? o->names[a] : "", *nb = o->names[b] ? o->names[b] : "";
    if (o->key != K_NAME) {
        double x = o->v[a * NKEYS + o->key], y = o->v[b * NKEYS + o->key];
        if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1;
        if (!isnan(x) && x != y) return (o->key == K_START ? x < y : x > y) ? -1 : 1;
    }
    int c = strcmp(na, nb);
    return c ? c : (a < b ? -1 : a > b);
}

/* Sorts the n region ids of ord by S->o's sort key (values v). */
static void sort_rows(uint32_t *ord, size_t n, const char *const *names, const double *v,
                      const sps_html_options_t *o) {
    row_order_t ro = {v, names, sort_key(o->sort)};
    qsort_r(ord, n, sizeof *ord, by_sort_key, &ro);
}

/* Writes one cell of the table: value x of kind k, "-" when NaN. */
static void cell_value(FILE *fp, vkind_t k, double x) {
    if (isnan(x)) fputs("<td class=\"n\">-</td>", fp);
    else if (k == V_NS) cell_ns(fp, x);
    else if (k == V_PCT) fprintf(fp, "<td class=\"n\" data-v=\"%.6g\">%.2f %%</td>", x, x);
    else fprintf(fp, "<td class=\"n\" data-v=\"%.0f\">%.0f</td>", x, x);
}

/* The table's column c of ncols (S->o's, or the defaults). */
static int table_column(const sps_html_options_t *o, size_t c) {
    return o->ncolumns ? column_key(o->columns[c]) : k_default_cols[c];
}

/* Writes the summary table: the n regions of ord (in the sort's order),
 * the columns of S->o, values v (table_values). */
static void write_table(FILE *fp, const html_state_t *S, const uint32_t *ord, size_t n,
                        const double *v) {
    const sps_html_options_t *o = S->o;
    size_t ncols = o->ncolumns ? o->ncolumns : sizeof k_default_cols / sizeof *k_default_cols;
    fputs("<h2>Summary</h2>\n<table id=\"stats\"><thead><tr>", fp);
    for (size_t c = 0; c < ncols; c++)
        fprintf(fp, "<th>%s</th>", k_keys[table_column(o, c)].head);
    fputs("</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < n; i++) {
        const char *nm = S->h->names[ord[i]] ? S->h->names[ord[i]] : "";
        fputs("<tr>", fp);
        for (size_t c = 0; c < ncols; c++) {
            int k = table_column(o, c);
            if (k != K_NAME) {
                cell_value(fp, k_keys[k].kind, v[ord[i] * NKEYS + k]);
                continue;
            }
            fputs("<td data-v=\"", fp);
            put_html(fp, nm);
            fputs("\">", fp);
            put_html(fp, nm);
            fputs("</td>", fp);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes the filters of o when it has any, and a note when they leave
 * no region (nshown 0).  scope-profiler writes its page then too, so this
 * is no error. */
static void write_filters(FILE *fp, const sps_html_options_t *o, size_t nshown) {
    if (!o->ninclude && !o->nexclude && !o->nranks) return;
    fputs("<div class=\"meta\" id=\"filters\">shown:", fp);
    for (size_t i = 0; i < o->ninclude; i++) {
        fputs(i ? ", " : " regions matching ", fp);
        put_html(fp, o->include[i]);
    }
    for (size_t i = 0; i < o->nexclude; i++) {
        fputs(i ? ", " : (o->ninclude ? "; not matching " : " regions not matching "), fp);
        put_html(fp, o->exclude[i]);
    }
    for (size_t i = 0; i < o->nranks; i++)
        fprintf(fp, "%s%" PRId64, i ? ", " : (o->ninclude || o->nexclude ? "; ranks " : " ranks "),
                o->ranks[i]);
    fputs(o->ninclude || o->nexclude ? " (patterns: extended regular expressions at the "
          "name's start)</div>\n" : "</div>\n", fp);
    if (!nshown)
        fputs("<div class=\"meta note\" id=\"nomatch\">No regions matched the selected "
              "filters.</div>\n", fp);
}

/* Writes a note for each rank S->o asks for that run S does not hold:
 * "this run" (run NULL, one run's page) or "run #K (LABEL)". */
static void write_rank_notes(FILE *fp, const html_state_t *S, size_t k, const char *run) {
    const sps_html_options_t *o = S->o;
    for (size_t i = 0; i < o->nranks; i++) {
        if (bsearch(&o->ranks[i], S->ranks, S->nranks, sizeof *S->ranks, i64_cmp)) continue;
        fprintf(fp, "<div class=\"meta note\" id=\"badrank-%" PRId64, o->ranks[i]);
        if (run) fprintf(fp, "-run%zu", k + 1);
        fprintf(fp, "\">Rank %" PRId64 " is not in ", o->ranks[i]);
        if (run) {
            fprintf(fp, "run #%zu (", k + 1);
            put_html(fp, run);
            fputc(')', fp);
        } else
            fputs("this run", fp);
        fprintf(fp, ": it holds %zu rank%s", S->nranks, S->nranks == 1 ? "" : "s");
        if (S->nranks) fprintf(fp, ", %" PRId64 " to %" PRId64, S->ranks[0], S->ranks[S->nranks - 1]);
        fputs(".</div>\n", fp);
    }
}

/* With ranks selected, notes how many regions that pass the patterns
 * ran on none of them (scope-profiler's "N region(s) recorded no calls
 * on the selected ranks"). */
static void write_unran_note(FILE *fp, const html_state_t *S) {
    size_t n = 0;
    for (size_t i = 0; S->o->nranks && i < S->h->nnames; i++)
        n += S->name_on[i] && !S->stats[i].calls;
    if (n)
        fprintf(fp, "<div class=\"meta note\" id=\"unran\">%zu region(s) recorded no calls "
                "on the selected ranks.</div>\n", n);
}

/* Writes the timeline's section (buttons, note on spans left out, the
 * legend of the n regions of ord, the canvas) and the bars. */
static void write_charts(FILE *fp, const html_state_t *S, const uint32_t *ord, size_t n,
                         const uint32_t *slot) {
    char b[32];
    fputs("<h2>Timeline</h2>\n<div class=\"meta\">mouse wheel: zoom; drag: pan; "
          "hover: details. <button id=\"zin\">zoom in</button><button id=\"zout\">"
          "zoom out</button><button id=\"reset\">reset</button></div>\n", fp);
    if (S->nkept < S->nshown)
        fprintf(fp, "<div class=\"meta note\" id=\"leftout\">%" PRIu64 " of %" PRIu64
                " spans left out of the timeline to keep the page small: the shortest"
                " ones (none of them longer than %s). The statistics below cover "
                "every span.</div>\n",
                S->nshown - S->nkept, S->nshown,
                fmt_ns(b, sizeof b, (double)(S->dropped_any ? S->dropped_max : 0)));
    write_legend(fp, S->h->names, ord, n, slot);
    fputs("<div id=\"tlwrap\"><canvas id=\"tl\" data-drawn=\"0\"></canvas></div>\n"
          "<div id=\"tip\"></div>\n", fp);
    write_bars(fp, S, ord, n, slot);
}

/* Writes the whole page to fp.  Returns 0 or SPS_ENOMEM. */
/* Writes the "Values per region" table of the .h5 at path (its /values:
 * memory and counters, own and self per region and rank), nothing when
 * path is NULL or the file has none. */
static void write_values(FILE *fp, const char *path) {
    sps__h5r_values_t v;
    if (!path || sps__h5r_values(path, &v) != 0) return;
    if (v.n) {
        fputs("<h2>Values per region</h2>\n<div class=\"meta\">own (children included) "
              "and self (outside the children) per region and rank; peak_bytes: the "
              "highest live bytes above a call's start (docs/values.md)</div>\n"
              "<table id=\"values\"><thead><tr><th>region</th><th>rank</th><th>calls</th>",
              fp);
        for (size_t k = 0; k < v.nnames; k++) {
            fputs("<th>", fp);
            put_html(fp, v.names[k]);
            fputs("</th><th>self</th>", fp);
        }
        fputs("</tr></thead><tbody>\n", fp);
        for (size_t i = 0; i < v.n; i++) {
            fputs("<tr><td>", fp);
            put_html(fp, v.regions[i]);
            fprintf(fp, "</td><td>%lld</td><td>%lld</td>", (long long)v.ranks[i],
                    (long long)v.calls[i]);
            for (size_t k = 0; k < v.nnames; k++)
                fprintf(fp, "<td>%lld</td><td>%lld</td>", (long long)v.own[i * v.nnames + k],
                        (long long)v.self[i * v.nnames + k]);
            fputs("</tr>\n", fp);
        }
        fputs("</tbody></table>\n", fp);
    }
    sps__h5r_values_free(&v);
}

/* The "where the time went" rows shown per region (as the report's). */
#define SAMPLES_TOP 10

/* Writes one row of the samples table: weight, CPU ms (hz > 0), share of
 * of, the label. */
static void samples_row(FILE *fp, uint64_t w, uint64_t of, int64_t hz, const char *label) {
    fprintf(fp, "<tr><td>%" PRIu64 "</td>", w);
    if (hz > 0) fprintf(fp, "<td>%.1f</td>", (double)w * 1000.0 / (double)hz);
    else fputs("<td>-</td>", fp);
    fprintf(fp, "<td>%.1f%%</td><td class=\"fn\">", of ? 100.0 * (double)w / (double)of : 0.0);
    put_html(fp, label);
    fputs("</td></tr>\n", fp);
}

/* Writes "Where the time went (samples)" for the .h5 at path (its
 * /samples, docs/sampling.md): per region (heaviest first, the samples
 * outside every span last) its self samples by leaf function, the
 * SAMPLES_TOP heaviest and the rest as one row -- the report's section
 * (formats/report.c), from the same views (folded.h).  Nothing when path
 * is NULL, the file has no samples, or they cannot be read (the page
 * shows the spans all the same). */
static void write_samples(FILE *fp, const char *path) {
    sps__h5r_samples_t s;
    if (!path || sps__tl_format_of(path) != SPS__TL_H5 || sps__h5r_samples(path, &s) != 0)
        return;
    sps__folded_t f = {0};
    sps__smp_regions_t g = {0};
    if (s.n) {
        if (sps__folded_build(&s, NULL, 0, 1, &f) == 0 && sps__smp_regions(&f, &g) == 0 &&
            f.total) {
            fprintf(fp, "<h2 id=\"samples\">Where the time went (samples)</h2>\n"
                    "<div class=\"meta\">%" PRIu64 " samples", f.total);
            if (s.hz > 0)
                fprintf(fp, " at %lld Hz, %.1f ms of CPU", (long long)s.hz,
                        (double)f.total * 1000.0 / (double)s.hz);
            if (s.lost) fprintf(fp, ", %lld lost", (long long)s.lost);
            fputs("; per region its self samples (taken in it, not in a region it called) "
                  "by leaf function (docs/sampling.md)</div>\n", fp);
            for (size_t i = 0; i < g.n; i++) {
                const sps__smp_region_t *r = &g.r[i];
                fputs("<h3>", fp);
                put_html(fp, r->region >= 0 ? s.names[r->region] : "(outside every span)");
                fprintf(fp, " <span class=\"meta\">%" PRIu64 " samples", r->weight);
                if (s.hz > 0) fprintf(fp, ", %.1f ms", (double)r->weight * 1000.0 / (double)s.hz);
                fprintf(fp, ", %.1f%% of all</span></h3>\n",
                        100.0 * (double)r->weight / (double)f.total);
                fputs("<table class=\"samples\"><thead><tr><th>samples</th><th>CPU ms</th>"
                      "<th>%</th><th>function</th></tr></thead><tbody>\n", fp);
                size_t shown = r->nleaves > SAMPLES_TOP ? SAMPLES_TOP : r->nleaves;
                uint64_t rest = 0;
                for (size_t k = 0; k < shown; k++)
                    samples_row(fp, r->leaves[k].weight, r->weight, s.hz,
                                f.labels.text[r->leaves[k].label]);
                for (size_t k = shown; k < r->nleaves; k++) rest += r->leaves[k].weight;
                if (shown < r->nleaves) {
                    char more[64];
                    snprintf(more, sizeof more, "(%zu more functions)", r->nleaves - shown);
                    samples_row(fp, rest, r->weight, s.hz, more);
                }
                fputs("</tbody></table>\n", fp);
            }
        }
        sps__smp_regions_free(&g);
        sps__folded_free(&f);
    }
    sps__h5r_samples_free(&s);
}

static int write_page(FILE *fp, const html_state_t *S, const char *title) {
    const sps__tl_header_t *h = S->h;
    size_t n = 0;
    uint32_t *ord = malloc((h->nnames ? h->nnames : 1) * sizeof *ord);
    uint32_t *rows = malloc((h->nnames ? h->nnames : 1) * sizeof *rows);
    double *vals = table_values(S);
    if (!ord || !rows || !vals) {
        free(ord);
        free(rows);
        free(vals);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < h->nnames; i++)
        if (S->stats[i].calls && S->name_on[i]) ord[n++] = (uint32_t)i;
    qsort_r(ord, n, sizeof *ord, by_total, S->stats);
    memcpy(rows, ord, n * sizeof *rows);
    sort_rows(rows, n, h->names, vals, S->o);
    uint32_t *slot = color_slots(h, ord, n);
    if (!slot) {
        free(ord);
        free(rows);
        free(vals);
        return SPS_ENOMEM;
    }
    char b[32];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
          "<title>spanscope: ", fp);
    put_html(fp, title);
    fprintf(fp, "</title>\n<style>\n%s</style>\n</head><body>\n<h1>spanscope: ", page_css);
    put_html(fp, title);
    fprintf(fp, "</h1>\n<div class=\"meta\">%" PRIu64 " span%s, %zu region%s, "
            "%zu thread%s in %zu process%s, %s from first start to last end</div>\n",
            S->nshown, S->nshown == 1 ? "" : "s", n, n == 1 ? "" : "s",
            h->nthreads, h->nthreads == 1 ? "" : "s", h->nprocs,
            h->nprocs == 1 ? "" : "es",
            fmt_ns(b, sizeof b, (double)(S->nspans ? S->t1 - S->t0 : 0)));
    write_filters(fp, S->o, n);
    write_rank_notes(fp, S, 0, NULL);
    write_unran_note(fp, S);
    if (S->o->charts) write_charts(fp, S, ord, n, slot);
    write_table(fp, S, rows, n, vals);
    write_values(fp, S->values_path);
    write_samples(fp, S->values_path);
    fputs("<script type=\"application/json\" id=\"spsdata\">", fp);
    write_json(fp, S, slot);
    if (S->o->charts)
        fprintf(fp, "</script>\n<script>\n%s%s</script>\n</body></html>\n", page_js, sort_js);
    else
        fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", sort_js);
    free(slot);
    free(ord);
    free(rows);
    free(vals);
    return 0;
}

/* Reads every span of r into S.  Returns 0 or a negative SPS_E* code. */
static int read_spans(sps__tlr_t *r, html_state_t *S) {
    const sps__tl_header_t *h = S->h;
    sps__tl_span_t s;
    uint64_t nread = 0;
    int rc = sel_init(S);
    if (rc) return rc;
    if (sps__fold_tl_init(&S->fold, h->nthreads, h->nnames, 0)) return SPS_ENOMEM;
    S->stats = calloc(h->nnames ? h->nnames : 1, sizeof *S->stats);
    if (!S->stats) return SPS_ENOMEM;
    sps__heap_init(&S->heap, evict_tie, S);
    size_t hc = S->cap; /* room for the spans the source says it has */
    if (h->nspans && h->nspans < hc) hc = (size_t)h->nspans;
    if (hc) {
        S->kept = malloc(hc * sizeof *S->kept);
        if (!S->kept || sps__heap_reserve(&S->heap, hc)) return SPS_ENOMEM;
        S->keptcap = hc;
    }
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if ((rc = take_span(S, &s)) != 0) return rc;
        if ((++nread & 0xFFFF) == 0 && S->progress) S->progress(nread, h->nspans, 0);
    }
    if (h->nspans >= 0x10000 && S->progress) S->progress(nread, h->nspans, 1);
    if (rc < 0) return rc;
    finish_stacks(S);
    finish_kept(S);
    for (size_t i = 0; i < h->ncounters; i++) { /* the time axis covers them too */
        int64_t t = h->counters[i].ts_ns;
        int first = S->nspans == 0 && i == 0;
        if (first || t < S->t0) S->t0 = t;
        if (first || t > S->t1) S->t1 = t;
    }
    return 0;
}

/* Frees what S owns. */
static void state_free(html_state_t *S) {
    sps__fold_tl_free(&S->fold);
    for (size_t i = 0; S->hist && i < S->h->nnames; i++) sps__hist_free(&S->hist[i]);
    free(S->hist);
    for (size_t t = 0; S->shown_at && t < S->h->nthreads; t++) free(S->shown_at[t]);
    free(S->shown_at);
    free(S->shown_cap);
    free(S->name_on);
    free(S->thread_on);
    free(S->rix);
    free(S->ranks);
    free(S->rank_total);
    free(S->rank_calls);
    free(S->stats);
    free(S->kept);
    sps__heap_free(&S->heap);
}

/* The page must stay within what SPS__HTML_MAX_SPANS_LIMIT promises. */
_Static_assert(sizeof(kspan_t) + sizeof(sps__heap_ent_t) <= 48,
               "SPS__HTML_MAX_SPANS_LIMIT");

int sps__html_write(FILE *fp, sps__tlr_t *r, const sps__html_opts_t *opt) {
    html_state_t S;
    if (!fp || !r || !opt || opt->max_spans > SPS__HTML_MAX_SPANS_LIMIT)
        return SPS_EINVAL;
    memset(&S, 0, sizeof S);
    S.h = sps__tlr_header(r);
    S.cap = opt->max_spans;
    S.progress = opt->progress;
    S.o = opt->o ? opt->o : &k_defaults;
    S.values_path = opt->values_path;
    int rc = sps__html_check_opts(opt->o);
    if (rc == 0) rc = read_spans(r, &S);
    if (rc == 0) rc = write_page(fp, &S, opt->title ? opt->title : "");
    if (rc == 0 && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    state_free(&S);
    return rc;
}

/* --- the comparison of several runs (sps__html_write_cmp) --------------- */

/* What the comparison knows: each run's statistics (cap 0: no timeline),
 * and the regions of all runs matched by name. */
typedef struct cmp_state {
    html_state_t *runs;
    const char *const *labels;
    size_t nruns;
    const char **names; /* per region, borrowed from a run's header */
    uint32_t *ids;      /* region r's name index in run k: ids[r * nruns + k],
                         * UINT32_MAX where run k has no call of it */
    size_t nregions;
    const sps__html_opts_t *opt;
    int axis;           /* the scaling section's (AX_*; AX_AUTO: none) */
    int64_t *xs;        /* its distinct values, ascending, nx of them */
    size_t nx;
    uint32_t *sreg;     /* its regions, nsreg of them */
    size_t nsreg;
    double *smean;      /* [i * nx + j]: region sreg[i]'s mean call at xs[j] */
} cmp_state_t;

/* A region name of one run, to match names across runs. */
typedef struct cmp_ent {
    const char *name;
    uint32_t run, id;
} cmp_ent_t;

/* Entries by name, then run (qsort). */
static int ent_cmp(const void *pa, const void *pb) {
    const cmp_ent_t *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* The statistics of region r in run k, or NULL where it has no call. */
static const rstat_t *cmp_stat(const cmp_state_t *C, size_t r, size_t k) {
    uint32_t id = C->ids[r * C->nruns + k];
    return id == UINT32_MAX ? NULL : &C->runs[k].stats[id];
}

/* Region r's most total time over the runs. */
static int64_t cmp_max_total(const cmp_state_t *C, size_t r) {
    int64_t m = 0;
    for (size_t k = 0; k < C->nruns; k++) {
        const rstat_t *s = cmp_stat(C, r, k);
        if (s && s->total > m) m = s->total;
    }
    return m;
}

/* Region order of the comparison (qsort_r, ctx the cmp_state_t): the most
 * total time in any run first, then by name. */
static int by_max_total(const void *pa, const void *pb, void *ctx) {
    const cmp_state_t *C = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ta = cmp_max_total(C, a), tb = cmp_max_total(C, b);
    if (ta != tb) return ta > tb ? -1 : 1;
    return strcmp(C->names[a], C->names[b]);
}

/* Matches the regions (names with calls) of every run by name into
 * C->names / C->ids.  Returns 0 or SPS_ENOMEM. */
static int cmp_match(cmp_state_t *C) {
    size_t n = 0, total = 0;
    for (size_t k = 0; k < C->nruns; k++) total += C->runs[k].h->nnames;
    cmp_ent_t *e = malloc((total ? total : 1) * sizeof *e);
    if (!e) return SPS_ENOMEM;
    for (size_t k = 0; k < C->nruns; k++) {
        const html_state_t *S = &C->runs[k];
        for (size_t i = 0; i < S->h->nnames; i++)
            if (S->stats[i].calls && S->name_on[i])
                e[n++] = (cmp_ent_t){S->h->names[i] ? S->h->names[i] : "", (uint32_t)k,
                                     (uint32_t)i};
    }
    qsort(e, n, sizeof *e, ent_cmp);
    C->names = malloc((n ? n : 1) * sizeof *C->names);
    C->ids = malloc((n ? n : 1) * C->nruns * sizeof *C->ids);
    if (!C->names || !C->ids) {
        free(e);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(e[i].name, e[i - 1].name)) {
            C->names[C->nregions] = e[i].name;
            for (size_t k = 0; k < C->nruns; k++)
                C->ids[C->nregions * C->nruns + k] = UINT32_MAX;
            C->nregions++;
        }
        C->ids[(C->nregions - 1) * C->nruns + e[i].run] = e[i].id;
    }
    free(e);
    return 0;
}

/* --- the comparison's scaling section ------------------------------------ */

/* The axes of the scaling section, as k_axes names them (0: auto). */
enum { AX_AUTO, AX_RANKS, AX_NODES, AX_THREADS, AX_CORES, NAX };
/* One of each axis's units, for the page's text. */
static const char *const k_axis_one[NAX] = {"", "rank", "node", "thread", "core"};
/* What scope-profiler calls each axis's field (its error messages). */
static const char *const k_axis_field[NAX] = {"", "num_ranks", "num_nodes",
                                              "omp_num_threads", "total_cores"};
/* The public options of the comparison (never NULL). */
static const sps_html_options_t *cmp_opts(const cmp_state_t *C) {
    return C->opt->o ? C->opt->o : &k_defaults;
}

/* Regions drawn: the ones with the most time on the smallest run
 * (scope-profiler's _SPEEDUP_REGIONS). */
#define SCALE_REGIONS 8

/* The value of axis a for run k of C, or -1 where the run has none:
 * ranks the source holds; nodes from /metadata num_nodes (a one-rank run:
 * 1); threads from /metadata (opt->meta_threads); cores = ranks x
 * threads -- scope-profiler's _scaling_value. */
static int64_t axis_value(const cmp_state_t *C, size_t k, int a) {
    const html_state_t *S = &C->runs[k];
    const sps__html_opts_t *opt = C->opt;
    int64_t ranks = (int64_t)S->nranks;
    int64_t threads = opt->meta_threads && opt->meta_threads[k] > 0 ? opt->meta_threads[k] : -1;
    if (a == AX_RANKS) return ranks > 0 ? ranks : -1;
    if (a == AX_THREADS) return threads > 0 ? threads : -1;
    if (a == AX_CORES) return ranks > 0 && threads > 0 ? ranks * threads : -1;
    if (opt->meta_nodes && opt->meta_nodes[k] > 0) return opt->meta_nodes[k];
    return ranks == 1 ? 1 : -1;
}

/* Whether runs differ along axis a (every run having a value). */
static int axis_varies(const cmp_state_t *C, int a) {
    for (size_t k = 0; k < C->nruns; k++)
        if (axis_value(C, k, a) < 0) return 0;
    for (size_t k = 1; k < C->nruns; k++)
        if (axis_value(C, k, a) != axis_value(C, 0, a)) return 1;
    return 0;
}

/* Picks the axis into C->axis: a named one, checked to have a value in
 * every run, or auto's (scope-profiler's _scaling_field): ranks when they
 * differ, else threads when they differ, else none (AX_AUTO).  Returns 0
 * or SPS_EINVAL naming the runs without a value. */
static int pick_axis(cmp_state_t *C) {
    int a = axis_of(cmp_opts(C));
    if (a == AX_AUTO) {
        C->axis = axis_varies(C, AX_RANKS) ? AX_RANKS
                  : axis_varies(C, AX_THREADS) ? AX_THREADS : AX_AUTO;
        return 0;
    }
    char missing[512] = "";
    size_t used = 0;
    for (size_t k = 0; k < C->nruns; k++)
        if (axis_value(C, k, a) < 0) {
            int w = snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                             C->labels[k]);
            if (w > 0) used = used + (size_t)w < sizeof missing ? used + (size_t)w : sizeof missing - 1;
        }
    if (used)
        return sps__err_fail(SPS_EINVAL, "the %s axis needs '%s' in every run's metadata, "
                             "but %s did not record it%s; choose another axis, or 'auto'",
                             k_axes[a], k_axis_field[a], missing,
                             a == AX_NODES ? " (files written by older scope-profiler "
                             "versions lack the node count of a multi-rank run)" : "");
    C->axis = a;
    return 0;
}

/* Region r's mean call duration (ns) over the runs whose axis value is x
 * (the mean of their means, as scope-profiler's plot_speedup), NaN where
 * none of them ran it. */
static double scale_mean(const cmp_state_t *C, size_t r, int64_t x) {
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < C->nruns; k++) {
        const rstat_t *s = cmp_stat(C, r, k);
        if (axis_value(C, k, C->axis) != x || !s || !s->calls || s->total <= 0) continue;
        sum += (double)s->total / (double)s->calls;
        n++;
    }
    return n ? sum / (double)n : NAN;
}

/* Region order for the scaling section (qsort_r, ctx a scale_order_t):
 * the most total time on the baseline run first, then by name. */
typedef struct scale_order {
    const cmp_state_t *C;
    size_t base;
} scale_order_t;
static int by_base_total(const void *pa, const void *pb, void *ctx) {
    const scale_order_t *o = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ta = cmp_stat(o->C, a, o->base)->total, tb = cmp_stat(o->C, b, o->base)->total;
    if (ta != tb) return ta > tb ? -1 : 1;
    return strcmp(o->C->names[a], o->C->names[b]);
}

/* Fills C's scaling section when there is one: the axis's distinct values
 * xs (ascending), the regions (at most SCALE_REGIONS, in every run, most
 * total time on the baseline -- the first run of the smallest value --
 * first) and their mean call durations at each value.  Returns 0 or
 * SPS_ENOMEM. */
static int scale_compute(cmp_state_t *C) {
    if (C->axis == AX_AUTO) return 0;
    C->xs = malloc(C->nruns * sizeof *C->xs);
    C->sreg = malloc((C->nregions ? C->nregions : 1) * sizeof *C->sreg);
    if (!C->xs || !C->sreg) return SPS_ENOMEM;
    size_t base = 0;
    for (size_t k = 0; k < C->nruns; k++) {
        C->xs[k] = axis_value(C, k, C->axis);
        if (C->xs[k] < C->xs[base]) base = k;
    }
    qsort(C->xs, C->nruns, sizeof *C->xs, i64_cmp);
    C->nx = 0;
    for (size_t k = 0; k < C->nruns; k++)
        if (!C->nx || C->xs[C->nx - 1] != C->xs[k]) C->xs[C->nx++] = C->xs[k];
    for (size_t r = 0; r < C->nregions; r++) {
        size_t k = 0;
        while (k < C->nruns && cmp_stat(C, r, k)) k++;
        if (k == C->nruns) C->sreg[C->nsreg++] = (uint32_t)r;
    }
    scale_order_t so = {C, base};
    qsort_r(C->sreg, C->nsreg, sizeof *C->sreg, by_base_total, &so);
    if (C->nsreg > SCALE_REGIONS) C->nsreg = SCALE_REGIONS;
    C->smean = malloc((C->nsreg ? C->nsreg : 1) * C->nx * sizeof *C->smean);
    if (!C->smean) return SPS_ENOMEM;
    for (size_t i = 0; i < C->nsreg; i++)
        for (size_t j = 0; j < C->nx; j++)
            C->smean[i * C->nx + j] = scale_mean(C, C->sreg[i], C->xs[j]);
    return 0;
}

/* The section's value of kind q for region i at value j: 0 speedup
 * (T_base / T_x), 1 strong-scaling efficiency (speedup / (x / x_base)),
 * 2 weak-scaling efficiency (T_base / T_x, whose ideal is 1); NaN where a
 * mean is missing. */
static double scale_value(const cmp_state_t *C, size_t i, size_t j, int q) {
    double tb = C->smean[i * C->nx], tx = C->smean[i * C->nx + j];
    double s = tb / tx;
    if (isnan(s) || !(tx > 0)) return NAN;
    return q == 1 ? s / ((double)C->xs[j] / (double)C->xs[0]) : s;
}

/* Formats a chart's number: at most 3 significant digits. */
static const char *fmt_num(char *b, size_t n, double v) {
    snprintf(b, n, "%.3g", v);
    return b;
}

/* Writes one line chart of the section as inline SVG (id: the element's
 * id): the value of kind q per region (colours col[]) over the axis
 * values, and the ideal as a dashed grey line (q 0: x / x_base; else
 * 1).  Axes are linear, ticks at each x value and at 5 y values. */
static void scale_svg(FILE *fp, const cmp_state_t *C, const char *id, int q,
                      const char *const *col) {
    const double W = 640, H = 300, L = 56, R = 16, T = 14, B = 42;
    double x0 = (double)C->xs[0], x1 = (double)C->xs[C->nx - 1];
    double ymax = q == 0 ? x1 / x0 : 1.0;
    for (size_t i = 0; i < C->nsreg; i++)
        for (size_t j = 0; j < C->nx; j++) {
            double v = scale_value(C, i, j, q);
            if (!isnan(v) && v > ymax) ymax = v;
        }
    ymax *= 1.1;
    char b[32];
#define SX(x) (L + ((x) - x0) / (x1 > x0 ? x1 - x0 : 1) * (W - L - R))
#define SY(y) (H - B - (y) / ymax * (H - T - B))
    fprintf(fp, "<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
            "viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
            id, W, H, W, H);
    fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\" "
            "stroke=\"#ccc\"/>\n", L, T, W - L - R, H - T - B);
    for (int t = 0; t <= 4; t++) {
        double y = ymax / 1.1 * t / 4;
        fprintf(fp, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
                L, W - R, SY(y), SY(y), L - 4, SY(y) + 4, fmt_num(b, sizeof b, y));
    }
    for (size_t j = 0; j < C->nx; j++)
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%"
                PRId64 "</text>\n", SX((double)C->xs[j]), H - B + 16, C->xs[j]);
    fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
            (L + W - R) / 2, H - 6, k_axes[C->axis]);
    fprintf(fp, "<line class=\"ideal\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#888\" stroke-dasharray=\"5,4\"><title>ideal</title></line>\n",
            SX(x0), SY(1.0), SX(x1), SY(q == 0 ? x1 / x0 : 1.0));
    for (size_t i = 0; i < C->nsreg; i++) {
        fprintf(fp, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"", col[i]);
        for (size_t j = 0, f = 1; j < C->nx; j++) {
            double v = scale_value(C, i, j, q);
            if (isnan(v)) continue;
            fprintf(fp, "%s%.1f,%.1f", f ? "" : " ", SX((double)C->xs[j]), SY(v));
            f = 0;
        }
        fputs("\"/>\n", fp);
        for (size_t j = 0; j < C->nx; j++) {
            double v = scale_value(C, i, j, q);
            if (isnan(v)) continue;
            fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", SX((double)C->xs[j]),
                    SY(v), col[i]);
            put_html(fp, C->names[C->sreg[i]]);
            fprintf(fp, ": %s %" PRId64 ", %s</title></circle>\n", k_axes[C->axis], C->xs[j],
                    fmt_num(b, sizeof b, v));
        }
    }
#undef SX
#undef SY
    fputs("</svg>\n", fp);
}

/* Writes the scaling section (mode: 0 strong, 1 weak, 2 both, as
 * k_scaling): its charts and its table; a note instead when the axis has
 * one value in every run.  slot: the colour slot per region of C. */
static void scale_write(FILE *fp, const cmp_state_t *C, const uint32_t *slot) {
    if (C->axis == AX_AUTO) return;
    const char *sm = cmp_opts(C)->scaling;
    int mode = sm ? name_index(sm, k_scaling, 3) : 2; /* NULL: "both" */
    fprintf(fp, "<h2 id=\"scaling\">Scaling over %s</h2>\n", k_axes[C->axis]);
    if (C->nx < 2) {
        fprintf(fp, "<div class=\"meta note\" id=\"noscaling\">Every run has the same %s (%"
                PRId64 "), so there is no scaling to show.</div>\n", k_axes[C->axis], C->xs[0]);
        return;
    }
    fprintf(fp, "<div class=\"meta\">per region (the %zu with the most time on the run of "
            "the fewest %s) its mean call time T at each number of %s, against the "
            "smallest (T<sub>base</sub>): speedup T<sub>base</sub>/T; strong-scaling "
            "efficiency speedup / (%s / %s<sub>base</sub>), ideal 1 with a fixed total "
            "problem; weak-scaling efficiency T<sub>base</sub>/T, ideal 1 with a fixed "
            "problem per %s. The profiles cannot tell which study it is.</div>\n",
            C->nsreg, k_axes[C->axis], k_axes[C->axis], k_axes[C->axis], k_axes[C->axis],
            k_axis_one[C->axis]);
    const char *col[SCALE_REGIONS];
    char cb[SCALE_REGIONS][8];
    for (size_t i = 0; i < C->nsreg && i < SCALE_REGIONS; i++)
        col[i] = slot_color(cb[i], slot[C->sreg[i]]);
    fputs("<div class=\"legend-scale\" id=\"scale-legend\">", fp);
    for (size_t i = 0; i < C->nsreg; i++) {
        fprintf(fp, "<span class=\"lg\"><span class=\"sw\" style=\"background:%s\"></span>", col[i]);
        put_html(fp, C->names[C->sreg[i]]);
        fputs("</span> ", fp);
    }
    fputs("<span class=\"lg\">- - ideal</span></div>\n", fp);
    if (mode != 1) {
        fputs("<h3>Speedup (strong scaling)</h3>\n", fp);
        scale_svg(fp, C, "speedup", 0, col);
    }
    if (mode != 0) {
        fputs("<h3>Weak-scaling efficiency</h3>\n", fp);
        scale_svg(fp, C, "weak-efficiency", 2, col);
    }
    fprintf(fp, "<table id=\"scaling-table\" class=\"sortable\"><thead><tr><th>region</th>"
            "<th>%s</th><th>mean</th>%s%s</tr></thead><tbody>\n", k_axes[C->axis],
            mode != 1 ? "<th>speedup</th><th>efficiency</th>" : "",
            mode != 0 ? "<th>weak efficiency</th>" : "");
    for (size_t i = 0; i < C->nsreg; i++)
        for (size_t j = 0; j < C->nx; j++) {
            fputs("<tr><td data-v=\"", fp);
            put_html(fp, C->names[C->sreg[i]]);
            fputs("\">", fp);
            put_html(fp, C->names[C->sreg[i]]);
            fprintf(fp, "</td><td class=\"n\" data-v=\"%" PRId64 "\">%" PRId64 "</td>",
                    C->xs[j], C->xs[j]);
            double m = C->smean[i * C->nx + j];
            if (isnan(m)) fputs("<td class=\"n\">-</td>", fp);
            else cell_ns(fp, m);
            for (int q = 0; q < 3; q++) {
                if ((q < 2 && mode == 1) || (q == 2 && mode == 0)) continue;
                double v = scale_value(C, i, j, q);
                if (isnan(v)) fputs("<td class=\"n\">-</td>", fp);
                else fprintf(fp, "<td class=\"n\" data-v=\"%.6g\">%.3f</td>", v, v);
            }
            fputs("</tr>\n", fp);
        }
    fputs("</tbody></table>\n", fp);
}

/* Writes the scaling part of the comparison's JSON blob: ,"axes":[per run
 * {ranks, nodes, threads, cores} (null: unknown)],"scaling":null or
 * {axis, x, regions, mean_ns, speedup, efficiency, weak_efficiency} (per
 * region a list over x; null where missing). */
static void scale_json(FILE *fp, const cmp_state_t *C) {
    fputs(",\"axes\":[", fp);
    for (size_t k = 0; k < C->nruns; k++) {
        fputs(k ? ",{" : "{", fp);
        for (int a = AX_RANKS; a < NAX; a++) {
            int64_t v = axis_value(C, k, a);
            if (v < 0) fprintf(fp, "%s\"%s\":null", a > AX_RANKS ? "," : "", k_axes[a]);
            else fprintf(fp, "%s\"%s\":%" PRId64, a > AX_RANKS ? "," : "", k_axes[a], v);
        }
        fputc('}', fp);
    }
    fputs("],\"scaling\":", fp);
    if (C->axis == AX_AUTO || C->nx < 2 || !cmp_opts(C)->charts) {
        fputs("null", fp);
        return;
    }
    fprintf(fp, "{\"axis\":\"%s\",\"x\":[", k_axes[C->axis]);
    for (size_t j = 0; j < C->nx; j++) fprintf(fp, "%s%" PRId64, j ? "," : "", C->xs[j]);
    fputs("],\"regions\":[", fp);
    for (size_t i = 0; i < C->nsreg; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, C->names[C->sreg[i]]);
    }
    static const char *const keys[] = {"mean_ns", "speedup", "efficiency", "weak_efficiency"};
    for (int q = -1; q < 3; q++) {
        fprintf(fp, "],\"%s\":[", keys[q + 1]);
        for (size_t i = 0; i < C->nsreg; i++) {
            fputs(i ? ",[" : "[", fp);
            for (size_t j = 0; j < C->nx; j++) {
                double v = q < 0 ? C->smean[i * C->nx + j] : scale_value(C, i, j, q);
                if (j) fputc(',', fp);
                if (isnan(v)) fputs("null", fp);
                else fprintf(fp, "%.17g", v);
            }
            fputc(']', fp);
        }
    }
    fputs("]}", fp);
}

/* Writes the table of the runs: label, spans, regions, threads,
 * processes, first start to last end. */
static void cmp_write_runs(FILE *fp, const cmp_state_t *C) {
    char b[32];
    fputs("<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>#</th><th>run</th><th>spans</th>"
          "<th>regions</th><th>threads</th><th>processes</th><th>first start to last end</th>"
          "</tr></thead><tbody>\n", fp);
    for (size_t k = 0; k < C->nruns; k++) {
        const html_state_t *S = &C->runs[k];
        size_t nreg = 0;
        for (size_t i = 0; i < S->h->nnames; i++) nreg += S->stats[i].calls != 0;
        fprintf(fp, "<tr><td>#%zu</td><td>", k + 1);
        put_html(fp, C->labels[k]);
        fprintf(fp, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%zu</td>"
                "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%s</td></tr>\n",
                S->nspans, nreg, S->h->nthreads, S->h->nprocs,
                fmt_ns(b, sizeof b, (double)(S->nspans ? S->t1 - S->t0 : 0)));
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes per region (in order ord, colour by slot) one bar of total time
 * and one of self time per run, all on the scale of the longest total. */
static void cmp_write_bars(FILE *fp, const cmp_state_t *C, const uint32_t *ord,
                           const uint32_t *slot) {
    int64_t mx = C->nregions ? cmp_max_total(C, ord[0]) : 0;
    char b1[32], b2[32], col[8];
    fputs("<h2>Time per region and run</h2>\n<div class=\"meta\">per region one bar per run "
          "(#1, #2, ...: the table above); light bar: total (inclusive) time; dark bar: "
          "self (exclusive) time</div>\n<div id=\"bars\">\n", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        uint32_t r = ord[i];
        const char *c = slot_color(col, slot[r]);
        fprintf(fp, "<div class=\"cmp-region\"><div class=\"lg\"><span class=\"sw\" "
                "style=\"background:%s\"></span><b>", c);
        put_html(fp, C->names[r]);
        fputs("</b></div>\n", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            double wt = s && mx > 0 ? 100.0 * (double)s->total / (double)mx : 0;
            double ws = s && mx > 0 ? 100.0 * (double)s->self / (double)mx : 0;
            fprintf(fp, "<div class=\"bar-row\"><div class=\"bar-run\">#%zu</div>"
                    "<div class=\"bar-track\"><div class=\"bar-total\" style=\"width:%.2f%%;"
                    "background:%s\"></div><div class=\"bar-self\" style=\"width:%.2f%%;"
                    "background:%s\"></div></div><div class=\"bar-val\">", k + 1, wt, c, ws, c);
            if (s)
                fprintf(fp, "%s / self %s", fmt_ns(b1, sizeof b1, (double)s->total),
                        fmt_ns(b2, sizeof b2, (double)s->self));
            else
                fputs("not in this run", fp);
            fputs("</div></div>\n", fp);
        }
        fputs("</div>\n", fp);
    }
    fputs("</div>\n", fp);
}

/* Writes the comparison table: per region and run calls, total, self and
 * mean, then each later run's total time against run #1's (a ratio;
 * sortable by it). */
static void cmp_write_table(FILE *fp, const cmp_state_t *C, const uint32_t *ord) {
    fputs("<h2>Comparison</h2>\n<table id=\"cmp\" class=\"sortable\"><thead><tr><th>region</th>", fp);
    for (size_t k = 0; k < C->nruns; k++)
        fprintf(fp, "<th>calls #%zu</th><th>total #%zu</th><th>self #%zu</th><th>mean #%zu</th>",
                k + 1, k + 1, k + 1, k + 1);
    for (size_t k = 1; k < C->nruns; k++) fprintf(fp, "<th>total #%zu / #1</th>", k + 1);
    fputs("</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        uint32_t r = ord[i];
        fputs("<tr><td data-v=\"", fp);
        put_html(fp, C->names[r]);
        fputs("\">", fp);
        put_html(fp, C->names[r]);
        fputs("</td>", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            if (!s) {
                fputs("<td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td>"
                      "<td class=\"n\">-</td>", fp);
                continue;
            }
            fprintf(fp, "<td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", s->calls,
                    s->calls);
            cell_ns(fp, (double)s->total);
            cell_ns(fp, (double)s->self);
            cell_ns(fp, (double)s->total / (double)s->calls);
        }
        const rstat_t *base = cmp_stat(C, r, 0);
        for (size_t k = 1; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, r, k);
            if (!s || !base || base->total <= 0) {
                fputs(s ? "<td class=\"n\">new</td>" : "<td class=\"n\">gone</td>", fp);
                continue;
            }
            double q = (double)s->total / (double)base->total;
            fprintf(fp, "<td class=\"n%s\" data-v=\"%.6g\">%.3g&times; (%+.1f%%)</td>",
                    q > 1 ? " up" : q < 1 ? " down" : "", q, q, (q - 1) * 100);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

/* Writes the comparison's JSON blob: the runs (label, spans), the regions
 * in page order with their colours, and per region and run [calls, total,
 * self, min, max] (ns) or null. */
static void cmp_write_json(FILE *fp, const cmp_state_t *C, const uint32_t *ord,
                           const uint32_t *slot) {
    fputs("{\"runs\":[", fp);
    for (size_t k = 0; k < C->nruns; k++) {
        fprintf(fp, "%s{\"label\":", k ? "," : "");
        put_json_str(fp, C->labels[k]);
        fprintf(fp, ",\"nspans\":%" PRIu64 "}", C->runs[k].nspans);
    }
    fputs("],\"regions\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        if (i) fputc(',', fp);
        put_json_str(fp, C->names[ord[i]]);
    }
    fputs("],\"colors\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        char b[8];
        fprintf(fp, "%s\"%s\"", i ? "," : "", slot_color(b, slot[ord[i]]));
    }
    fputs("],\"stats\":[", fp);
    for (size_t i = 0; i < C->nregions; i++) {
        fputs(i ? ",[" : "[", fp);
        for (size_t k = 0; k < C->nruns; k++) {
            const rstat_t *s = cmp_stat(C, ord[i], k);
            if (k) fputc(',', fp);
            if (!s) fputs("null", fp);
            else
                fprintf(fp, "[%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                        s->calls, s->total, s->self, s->min, s->max);
        }
        fputc(']', fp);
    }
    fputc(']', fp);
    scale_json(fp, C);
    fputc('}', fp);
}

/* The table values (table_values) of each region of C in the baseline
 * run, all NaN where it has no call (nregions x NKEYS; the caller frees),
 * or NULL when out of memory. */
static double *cmp_table_values(const cmp_state_t *C) {
    double *base = table_values(&C->runs[0]);
    double *v = malloc((C->nregions ? C->nregions : 1) * NKEYS * sizeof *v);
    for (size_t r = 0; base && v && r < C->nregions; r++) {
        uint32_t id = C->ids[r * C->nruns];
        for (int k = 0; k < NKEYS; k++)
            v[r * NKEYS + k] = id == UINT32_MAX ? NAN : base[(size_t)id * NKEYS + k];
    }
    free(base);
    if (!base) {
        free(v);
        return NULL;
    }
    return v;
}

/* Writes the whole comparison page.  Returns 0 or SPS_ENOMEM. */
static int cmp_write_page(FILE *fp, cmp_state_t *C) {
    size_t nr = C->nregions ? C->nregions : 1;
    uint32_t *ord = malloc(nr * sizeof *ord), *rows = malloc(nr * sizeof *rows);
    uint32_t *slot = malloc(nr * sizeof *slot);
    double *vals = cmp_table_values(C);
    if (!ord || !rows || !slot || !vals) {
        free(ord);
        free(rows);
        free(slot);
        free(vals);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < C->nregions; i++) ord[i] = (uint32_t)i;
    qsort_r(ord, C->nregions, sizeof *ord, by_max_total, C);
    for (size_t i = 0; i < C->nregions; i++) slot[ord[i]] = (uint32_t)i;
    memcpy(rows, ord, C->nregions * sizeof *rows);
    if (cmp_opts(C)->sort) /* by the baseline's values; else as the bars */
        sort_rows(rows, C->nregions, C->names, vals, cmp_opts(C));
    fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
            "<title>spanscope: comparison of %zu runs</title>\n<style>\n%s"
            ".cmp-region{margin:8px 0 10px}\n</style>\n</head><body>\n"
            "<h1>spanscope: comparison of %zu runs</h1>\n<div class=\"meta\">%zu region%s "
            "over all runs; run #1 is the baseline of the ratio columns</div>\n",
            C->nruns, page_css, C->nruns, C->nregions, C->nregions == 1 ? "" : "s");
    write_filters(fp, cmp_opts(C), C->nregions);
    for (size_t k = 0; k < C->nruns; k++) write_rank_notes(fp, &C->runs[k], k, C->labels[k]);
    cmp_write_runs(fp, C);
    if (cmp_opts(C)->charts) {
        fputs("<h2>Regions</h2>\n", fp);
        write_legend(fp, C->names, ord, C->nregions, slot);
        cmp_write_bars(fp, C, ord, slot);
        scale_write(fp, C, slot);
    }
    cmp_write_table(fp, C, rows);
    fputs("<script type=\"application/json\" id=\"spsdata\">", fp);
    cmp_write_json(fp, C, ord, slot);
    fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", sort_js);
    free(ord);
    free(rows);
    free(slot);
    free(vals);
    return 0;
}

int sps__html_write_cmp(FILE *fp, sps__tlr_t *const *rs, const char *const *labels,
                        size_t nruns, const sps__html_opts_t *opt) {
    if (!fp || !rs || !labels || !opt || nruns < 2) return SPS_EINVAL;
    for (size_t k = 0; k < nruns; k++)
        if (!rs[k] || !labels[k]) return SPS_EINVAL;
    int rc = sps__html_check_opts(opt->o);
    if (rc) return rc;
    cmp_state_t C;
    memset(&C, 0, sizeof C);
    C.runs = calloc(nruns, sizeof *C.runs);
    C.labels = labels;
    C.nruns = nruns;
    C.opt = opt;
    if (!C.runs) return SPS_ENOMEM;
    for (size_t k = 0; k < nruns && rc == 0; k++) {
        C.runs[k].h = sps__tlr_header(rs[k]);
        C.runs[k].cap = 0; /* statistics only: the comparison has no timeline */
        C.runs[k].progress = opt->progress;
        C.runs[k].o = cmp_opts(&C);
        rc = read_spans(rs[k], &C.runs[k]);
    }
    if (rc == 0) rc = pick_axis(&C);
    if (rc == 0) rc = cmp_match(&C);
    if (rc == 0) rc = scale_compute(&C);
    if (rc == 0) rc = cmp_write_page(fp, &C);
    if (rc == 0 && (fflush(fp) != 0 || ferror(fp))) rc = SPS_EIO;
    for (size_t k = 0; k < nruns; k++) state_free(&C.runs[k]);
    free(C.runs);
    free(C.names);
    free(C.ids);
    free(C.xs);
    free(C.sreg);
    free(C.smean);
    return rc;
}
