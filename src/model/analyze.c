/* analyze.c -- the incremental analyzer that keeps the session's statistics
 * and call tree up to date, by the one fold (fold.c).  A region id that was
 * never handed out is ignored and counted as misuse. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sps__analysis_t sps__an;

/* ------------------------------------------------------------------------ */
/* The incremental analyzer (under the session lock)                         */
/* ------------------------------------------------------------------------ */

/* Makes room for region id r in the accumulator arrays of an (the
 * session's, or a helper's of a split analysis).  0 or SPS_ENOMEM. */
static int an_reserve(sps__analysis_t *an, uint32_t r) {
    if (r < an->acc_cap) return 0;
    uint32_t cap = sps__registry_count() + 256;
    if (cap <= r) cap = r + 256;
    sps__acc_t *c = realloc(an->cum, cap * sizeof *c);
    if (!c) return SPS_ENOMEM;
    an->cum = c;
    sps__acc_t *p = realloc(an->per, cap * sizeof *p);
    if (!p) return SPS_ENOMEM;
    an->per = p;
    uint32_t *lc = realloc(an->lanes_cum, cap * sizeof *lc);
    if (!lc) return SPS_ENOMEM;
    an->lanes_cum = lc;
    uint32_t *lp = realloc(an->lanes_per, cap * sizeof *lp);
    if (!lp) return SPS_ENOMEM;
    an->lanes_per = lp;
    uint32_t old = an->acc_cap;
    memset(c + old, 0, (cap - old) * sizeof *c);
    memset(p + old, 0, (cap - old) * sizeof *p);
    memset(lc + old, 0, (cap - old) * sizeof *lc);
    memset(lp + old, 0, (cap - old) * sizeof *lp);
    an->acc_cap = cap;
    return 0;
}

int sps__acc_reserve(uint32_t r) { return an_reserve(&sps__an, r); }

/* Marks entry i of a thread's seen bytes (*v, *cap of them) as run in
 * the period and the session, counting the thread once in *per / *cum
 * where it had not run i there yet.  Out of memory: not counted (the
 * table's "% session" then reads high; nothing else depends on it). */
static void lane_mark(uint8_t **v, uint32_t *cap, uint32_t i, uint32_t *per, uint32_t *cum) {
    if (i >= *cap) {
        uint32_t n = *cap ? *cap : 64;
        while (n <= i) n *= 2;
        uint8_t *p = realloc(*v, n);
        if (!p) return;
        memset(p + *cap, 0, n - *cap);
        *v = p;
        *cap = n;
    }
    uint8_t m = (*v)[i];
    if (!(m & 1)) (*per)++;
    if (!(m & 2)) (*cum)++;
    (*v)[i] = 3;
}

/* Thread t ran a call of region r at tree node `node` (-1: none); an
 * counts it. */
static void lanes_count(sps__analysis_t *an, sps__thr_t *t, uint32_t r, int32_t node) {
    if (r < t->an_seen_cap && t->an_seen[r] == 3 &&
        (node < 0 || ((uint32_t)node < t->an_seen_node_cap && t->an_seen_node[node] == 3)))
        return; /* the common case: seen in this period already */
    if (!t->an_seen_cap || t->an_seen[0] != 3)
        lane_mark(&t->an_seen, &t->an_seen_cap, 0, &an->threads_per, &an->threads_cum);
    if (r < an->acc_cap)
        lane_mark(&t->an_seen, &t->an_seen_cap, r, &an->lanes_per[r], &an->lanes_cum[r]);
    if (node >= 0) {
        sps__tree_node_t *n = &an->tree.n[node];
        lane_mark(&t->an_seen_node, &t->an_seen_node_cap, (uint32_t)node, &n->lanes_per,
                  &n->lanes_cum);
    }
}

/* Forgets, in every thread, which regions it ran in the period (bit 0);
 * session: also in the session (bit 1). */
static void lanes_forget(int session) {
    uint8_t keep = session ? 0 : 2;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        for (uint32_t i = 0; i < t->an_seen_cap; i++) t->an_seen[i] &= keep;
        for (uint32_t i = 0; i < t->an_seen_node_cap; i++) t->an_seen_node[i] &= keep;
    }
}

/* What the fold of one thread's records reports to: the analysis it
 * folds into, and the thread. */
typedef struct an_ctx {
    sps__analysis_t *an;
    sps__thr_t *t;
} an_ctx_t;

/* The fold's close callback (inline: the fold inlines it, in both loops
 * that run analyze_event, only when it is forced). */
SPS__INLINE void analyze_close(void *ctx, const sps__frame_t *f, uint64_t end,
                               uint64_t self, size_t depth) {
    (void)depth;
    an_ctx_t *c = ctx;
    sps__analysis_t *an = c->an;
    /* the period's accumulators only: the session's (cum) are the earlier
     * periods', merged with these when asked (sps__cum_acc, sps__node_cum)
     * and when the period is taken -- half the work per call */
    if (f->region < an->acc_cap || an_reserve(an, f->region) == 0)
        sps__acc_add(&an->per[f->region], f->start, end, self);
    if (f->node >= 0) sps__acc_add(&an->tree.n[f->node].per, f->start, end, self);
    lanes_count(an, c->t, f->region, f->node);
}

/* Feeds one decoded record of thread c->t into the analysis c->an; misuse
 * counts what the fold refused (the caller adds it to sps__g.misuse under
 * the lock: a background step runs without it).  Inline: plan_run and
 * plan_run_ahead run it for every record. */
SPS__INLINE void analyze_event(an_ctx_t *c, const sps__ev_t *e, uint32_t nids, uint64_t *misuse) {
    sps__thr_t *t = c->t;
    if (e->region == 0 || e->region >= nids) {
        (*misuse)++;
        return;
    }
    if (!e->is_end) {
        int32_t parent = t->stack.n ? t->stack.f[t->stack.n - 1].node : -1;
        sps__frame_t f = {e->region, sps__tree_node(&c->an->tree, parent, e->region),
                          e->ns, 0, e->seq, -1, 0, 0, 0};
        if (sps__stack_push(&t->stack, f)) (*misuse)++;
        return;
    }
    *misuse += (uint64_t)sps__fold_end(&t->stack, e->region, e->ns, analyze_close, c);
}

/* Whether blk[i], blk[i + 1] is a leaf call of region r: its begin, then
 * at once its end (valid ids only). */
SPS__INLINE int leaf_pair(const sps__ev_t *blk, uint32_t i, uint32_t r, uint32_t nids) {
    return !blk[i].is_end && blk[i + 1].is_end && blk[i].region == r &&
           blk[i + 1].region == r && r != 0 && r < nids;
}

/* Folds the run of leaf calls of one region that starts at blk[i] (two
 * at least: leaf_pair at i and i + 2), up to blk[n); returns the index
 * after it, or i when the run is not taken (no accumulator or tree node
 * for it: out of memory; analyze_event then folds it call by call).
 *
 * A run of leaf calls under one open frame is the inner loop of most
 * programs, and analyze_event spends its time there storing the two
 * accumulators' fields back for every call (each call's sums wait for
 * the previous call's store).  Here they are copies held in locals for
 * the run and written back once: the same additions in the same order,
 * so the same bits, with the same tree node (made by the run's first
 * begin, as analyze_event would), the parent's child time and the
 * thread's lanes. */
SPS__INLINE uint32_t analyze_leaf_run(an_ctx_t *c, const sps__ev_t *blk, uint32_t i,
                                      uint32_t n, uint32_t nids) {
    sps__analysis_t *an = c->an;
    sps__thr_t *t = c->t;
    uint32_t r = blk[i].region;
    if (r >= an->acc_cap && an_reserve(an, r)) return i;
    sps__frame_t *parent = t->stack.n ? &t->stack.f[t->stack.n - 1] : NULL;
    int32_t node = sps__tree_node(&an->tree, parent ? parent->node : -1, r);
    if (node < 0) return i;
    sps__acc_t per = an->per[r], at_node = an->tree.n[node].per;
    uint64_t child = 0;
    do {
        uint64_t start = blk[i].ns, end = blk[i + 1].ns;
        uint64_t d = end > start ? end - start : 0; /* self: a leaf has no child */
        sps__acc_add(&per, start, end, d);
        sps__acc_add(&at_node, start, end, d);
        child += d;
        i += 2;
    } while (i + 1 < n && leaf_pair(blk, i, r, nids));
    an->per[r] = per;
    an->tree.n[node].per = at_node;
    if (parent) parent->child += child;
    lanes_count(an, t, r, node);
    return i;
}

/* Folds the decoded events blk[0, n) of thread c->t (analyze_event, with
 * runs of leaf calls through analyze_leaf_run). */
SPS__INLINE void analyze_block(an_ctx_t *c, const sps__ev_t *blk, uint32_t n, uint32_t nids,
                               uint64_t *misuse) {
    uint32_t i = 0;
    while (i < n) {
        if (i + 3 < n && leaf_pair(blk, i, blk[i].region, nids) &&
            leaf_pair(blk, i + 2, blk[i].region, nids)) {
            uint32_t next = analyze_leaf_run(c, blk, i, n, nids);
            if (next != i) {
                i = next;
                continue;
            }
        }
        analyze_event(c, &blk[i++], nids, misuse);
    }
}

/* What one analysis of a thread reads: its segments from the cursor on,
 * planned under the lock. */
typedef struct an_plan {
    sps__seg_t *segs;
    size_t ns;
    int preset_hi;        /* segs[0] resumes at the cursor with an_hi */
    sps__chunk_t *last;   /* the last chunk read ... */
    uint32_t last_n;      /* ... to this record */
    uint64_t records;     /* records planned */
    uint64_t stop_seq;    /* read no record of this seq or later (a part
                             of a long run: its segment still ends where
                             the run does, as the spill reader wants) */
    uint32_t last_base;   /* the last chunk's record at its segment's 0 */
    /* the last segment is spilled: where the packed chunk holding its last
     * record starts (plan_run sets them: the next cursor's an_off) */
    int has_stop;
    int64_t stop_off;
    uint32_t stop_pos;
} an_plan_t;

/* Appends seg to p's segments.  0 or SPS_ENOMEM. */
static int plan_push(an_plan_t *p, size_t *cap, sps__seg_t seg) {
    if (p->ns == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        sps__seg_t *v = realloc(p->segs, n * sizeof *v);
        if (!v) return SPS_ENOMEM;
        p->segs = v;
        *cap = n;
    }
    p->segs[p->ns++] = seg;
    return 0;
}

/* Under the lock: plans the analysis of thread t from its cursor.  budget
 * 0: to stop in its current chunk (NULL: its write position).  Else (a
 * background step) only records before t->bg_ready_seq, at most budget
 * of them.  0 or SPS_ENOMEM. */
static int plan_thread(sps__thr_t *t, uint64_t budget, const uint64_t *stop, an_plan_t *p) {
    size_t cap = 0;
    uint32_t skip = t->an_pos;
    int bg = budget != 0;
    memset(p, 0, sizeof *p);
    p->stop_seq = UINT64_MAX;
    for (sps__chunk_t *c = t->an_chunk; c; c = c == t->cur ? NULL : (c->next ? c->next : t->cur)) {
        if (bg && (c == t->cur || c->seq0 + skip >= t->bg_ready_seq)) break;
        uint32_t n = c != t->cur ? c->n
            : stop ? (uint32_t)(stop - c->rec)
            : (uint32_t)(atomic_load_explicit(&t->pos, memory_order_acquire) - c->rec);
        if (bg && c->seq0 + n > t->bg_ready_seq) /* a run retired past the anchor */
            n = (uint32_t)(t->bg_ready_seq - c->seq0);
        sps__seg_t seg = {t->index, c->rec, c->file_off, n, skip, c->seq0};
        uint32_t base = 0; /* the chunk's record at seg's index 0 */
        if (p->ns == 0 && c->rec && skip && skip <= n && t->an_hi_seq == c->seq0 + skip) {
            /* resume at the cursor with the upper half known there: the
             * reader need not walk records [0, an_pos) again (a query then
             * costs the records since the previous one) */
            seg = (sps__seg_t){t->index, c->rec + skip, -1, n - skip, 0, c->seq0 + skip};
            base = skip;
            p->preset_hi = 1;
        } else if (p->ns == 0 && !c->rec && t->an_off >= 0 && t->an_off_pos <= skip) {
            /* a run spilled since: start at the packed chunk of the cursor */
            base = t->an_off_pos;
            seg = (sps__seg_t){t->index, NULL, t->an_off, n - base, skip - base,
                               c->seq0 + base};
        }
        uint64_t want = skip < n ? n - skip : 0;
        if (budget && p->records + want > budget) { /* a long run: read part of it */
            want = budget - p->records;
            n = skip + (uint32_t)want;
            p->stop_seq = c->seq0 + n;
        }
        if (want && plan_push(p, &cap, seg)) return SPS_ENOMEM;
        p->records += want;
        skip = 0;
        p->last = c;
        p->last_n = n;
        p->last_base = base;
        if (budget && p->records >= budget) break;
    }
    return 0;
}

/* Starts a reader of p's segments of thread t (tm converts). */
static void plan_rd_init(sps__rd_t *rd, const an_plan_t *p, const sps__thr_t *t,
                         const sps__timemap_t *tm) {
    sps__rd_init(rd, p->segs, p->ns, NULL, tm);
    if (p->preset_hi) rd->hi = t->an_hi;
}

/* Reads the next record of p from rd into *e: 1, or 0 at the end of p
 * (a record read ahead, of the next step's, is left: rd then stands
 * where a resumed read finds it), or a negative SPS_E* code. */
SPS__INLINE int plan_rd_next(sps__rd_t *rd, const an_plan_t *p, sps__ev_t *e) {
    int rc = sps__rd_next(rd, e);
    return rc > 0 && e->seq >= p->stop_seq ? 0 : rc;
}

/* Ends rd, the reader of p, which returned rc last: sets p's stop (where
 * the next step resumes) and returns rc, and *hi the upper half there. */
static int plan_rd_end(sps__rd_t *rd, an_plan_t *p, int rc, uint32_t *hi) {
    *hi = rd->hi;
    const sps__seg_t *last = p->ns ? &p->segs[p->ns - 1] : NULL;
    if (rc == 0 && last && !last->rec && rd->sp) {
        /* the packed chunk the spill reader is in (the run's last, or the
         * one holding the first record left for the next step) */
        p->has_stop = 1;
        p->stop_off = rd->sp->chunk_off;
        p->stop_pos = p->last_base + rd->chunk_start;
    }
    sps__rd_free(rd);
    return rc;
}

/* Reads p's segments of thread t into the analysis an (tm converts;
 * misuse counts what was refused).  Returns the reader's last code (0:
 * read to the end), and *hi its upper half there. */
static int plan_run(sps__analysis_t *an, sps__thr_t *t, an_plan_t *p,
                    const sps__timemap_t *tm, uint64_t *misuse, uint32_t *hi) {
    an_ctx_t ctx = {an, t};
    sps__rd_t rd;
    plan_rd_init(&rd, p, t, tm);
    uint32_t nids = sps__registry_count();
    sps__ev_t e;
    int rc;
    while ((rc = sps__rd_next(&rd, &e)) > 0) {
        if (e.seq >= p->stop_seq) { /* read ahead: the next step's */
            rc = 0;
            break;
        }
        analyze_event(&ctx, &e, nids, misuse);
    }
    return plan_rd_end(&rd, p, rc, hi);
}

/* Under the lock: moves t's cursor past what p read (rc, hi: plan_run's). */
static void plan_commit(sps__thr_t *t, const an_plan_t *p, int rc, uint32_t hi) {
    if (!p->last) return;
    sps__chunk_t *next = p->last == t->cur ? NULL
                       : p->last->next ? p->last->next : t->cur;
    if (rc == 0 && next && p->last_n == p->last->n) {
        /* a retired chunk read to its end: resume at the next one, which
         * starts with a HI record (a spilled run that grows is then not
         * walked again) */
        t->an_chunk = next;
        t->an_pos = 0;
        t->an_off = -1;
        t->an_hi_seq = UINT64_MAX;
        return;
    }
    if (t->an_chunk != p->last) t->an_off = -1;
    if (rc == 0 && p->has_stop && p->stop_pos <= p->last_n) { /* resume where it stopped */
        t->an_off = p->stop_off;
        t->an_off_pos = p->stop_pos;
    }
    t->an_chunk = p->last;
    t->an_pos = p->last_n;
    /* hi is the upper half at the end of what was read: the cursor's,
     * when the last segment was read from memory to its end (a step that
     * stopped early has read past its cursor: no preset then) */
    t->an_hi_seq = rc == 0 && p->last->rec && p->stop_seq == UINT64_MAX
                 ? p->last->seq0 + p->last_n : UINT64_MAX;
    t->an_hi = hi;
}

/* ------------------------------------------------------------------------ */
/* A long analysis of one thread: its reading on a second core               */
/* ------------------------------------------------------------------------ */

/* One thread's records are one stack: its fold cannot be cut in two
 * without the stack at the cut (the two-core split below shares out
 * threads, not records).  What can run beside the fold is the reading
 * (ahead.c): a helper reads p's records into blocks that the calling
 * thread folds, in the same order. */

uint64_t sps__an_readaheads;

/* A plan's reader, as the helper runs it. */
typedef struct plan_rd {
    sps__rd_t rd;
    const an_plan_t *p;
} plan_rd_t;

/* sps__ahead_fill_fn over plan_rd_next. */
static int plan_fill(void *ctx, sps__ev_t *blk, uint32_t max, uint32_t *n) {
    plan_rd_t *r = ctx;
    int rc = 1;
    uint32_t k = 0;
    while (k < max && (rc = plan_rd_next(&r->rd, r->p, &blk[k])) > 0) k++;
    *n = k;
    return rc;
}

/* plan_run with the reading on a helper thread (same arguments, same
 * result); when the helper cannot start, plan_run itself. */
static int plan_run_ahead(sps__analysis_t *an, sps__thr_t *t, an_plan_t *p,
                          const sps__timemap_t *tm, uint64_t *misuse, uint32_t *hi) {
    plan_rd_t r = {.p = p};
    plan_rd_init(&r.rd, p, t, tm);
    sps__ahead_t *a = sps__ahead_start(plan_fill, &r);
    if (!a) {
        sps__rd_free(&r.rd);
        return plan_run(an, t, p, tm, misuse, hi);
    }
    an_ctx_t ctx = {an, t};
    uint32_t nids = sps__registry_count(), n = 0;
    const sps__ev_t *blk;
    while ((blk = sps__ahead_take(a, &n)) != NULL)
        analyze_block(&ctx, blk, n, nids, misuse);
    int rc = sps__ahead_end(a);
    sps__an_readaheads++;
    return plan_rd_end(&r.rd, p, rc, hi);
}

/* Under the lock: marks the write position of thread only (NULL: of
 * every thread), then adds an anchor.  A record before its thread's mark
 * was written before the anchor was read, so its ns value does not change
 * when later anchors arrive (a recorder writes on meanwhile: what it
 * writes after the mark waits for the next analysis). */
static void mark_then_anchor(sps__thr_t *only) {
    for (sps__thr_t *t = only ? only : sps__g.threads; t; t = only ? NULL : t->next_all)
        t->an_mark = t->cur ? atomic_load_explicit(&t->pos, memory_order_acquire) : NULL;
    sps__anchor_t a = sps__anchor_now();
    if (sps__timemap_add(&sps__g.tm, a) == 0) sps__crash_anchor(a); /* core/crash.c */
}

/* Analyzes thread t from its cursor to its mark. */
static int analyze_marked(sps__thr_t *t) {
    if (t->epoch != sps__g.epoch || !t->an_chunk) return 0;
    an_plan_t p;
    int rc = plan_thread(t, 0, t->an_mark, &p);
    uint32_t hi = 0;
    if (!rc) {
        rc = p.records >= sps__an_split_min && sps__ahead_allowed()
           ? plan_run_ahead(&sps__an, t, &p, &sps__g.tm, &sps__g.misuse, &hi)
           : plan_run(&sps__an, t, &p, &sps__g.tm, &sps__g.misuse, &hi);
        plan_commit(t, &p, rc, hi); /* also after a read error, as it always did */
    }
    free(p.segs);
    return rc;
}

int sps__analyze_thread(sps__thr_t *t) {
    sps__bg_wait();
    mark_then_anchor(t);
    return analyze_marked(t);
}

/* ------------------------------------------------------------------------ */
/* The background analysis (the spill writer's spare time)                   */
/* ------------------------------------------------------------------------ */

#define BG_BUDGET 16384u       /* records per step (~0.2 ms): a finalize or
                                  a query waits for at most one step */
/* The writer's own anchors, when a retired chunk waits for one: at least
 * 5 ms apart (a shorter segment's slope is noise), and at most one per
 * 2^22 records retired unless 100 ms passed (the recorders' rate): a
 * long recording's timemap stays small (an hour of the tightest loop
 * adds ~40 000 anchors, 1.3 MB). */
#define BG_ANCHOR_MIN_NS 5000000
#define BG_ANCHOR_RECORDS (1u << 22)
#define BG_ANCHOR_IDLE_NS 100000000

/* When it runs (SPANSCOPE_BG_ANALYSIS; the api layer sets sps__bg_mode at
 * setup): while the recorders are quiet, and while they are busy when a
 * trial shows that analyzing does not slow them (the default); always
 * ("1"); or only while they are quiet ("quiet").  Quiet: they retired
 * fewer than BG_QUIET_RECORDS in the last BG_QUIET_NS.  Why not always:
 * on a VM whose two vCPUs share a core (SMT), a recording thread ran at
 * half speed, in phases of seconds, while the writer analyzed on the
 * other vCPU (10^9 calls: 1.7-1.9 x the floor instead of 1.1 x); on
 * others it costs them nothing measurable, and every record analyzed
 * while recording is work finalize does not do (bg_trial.c).  A pause in
 * the recording is time the program does not spend in the hot path, and
 * the backlog it analyzes then is work finalize would otherwise do. */
#define BG_QUIET_NS 50000000
#define BG_QUIET_RECORDS (1u << 16)
int sps__bg_mode;
static uint64_t bg_q_retired; /* sps__g.retired at the window's start */
static int64_t bg_q_ns;       /* the window's start */
static int bg_q_quiet;
static sps__bg_trial_t bg_trial; /* the trials while the recorders are busy */

/* Under the lock: whether a step may run now (see above). */
static int bg_may_run(void) {
    if (sps__bg_mode == SPS__BG_ALWAYS) return 1;
    int64_t now = (int64_t)sps__mono_ns();
    if (now - bg_q_ns >= BG_QUIET_NS) {
        bg_q_quiet = now - bg_q_ns < 4 * BG_QUIET_NS && /* not a stale window */
                     sps__g.retired - bg_q_retired < BG_QUIET_RECORDS;
        bg_q_retired = sps__g.retired;
        bg_q_ns = now;
    }
    if (bg_q_quiet || sps__bg_mode == SPS__BG_QUIET) return bg_q_quiet;
    return sps__bg_trial_allow(&bg_trial, now, sps__g.retired);
}

static sps__timemap_t bg_tm; /* the writer's copy of sps__g.tm ... */
static uint64_t bg_tm_epoch;  /* ... in this session */
static uint64_t bg_anchor_retired; /* sps__g.retired at the writer's last anchor */

/* Under the lock: brings bg_tm up to sps__g.tm (the last copied anchor's
 * slope may have been set since).  0 or SPS_ENOMEM. */
static int bg_tm_sync(void) {
    const sps__timemap_t *m = &sps__g.tm;
    if (bg_tm.cap < m->n) {
        size_t cap = m->cap;
        sps__anchor_t *a = realloc(bg_tm.a, cap * sizeof *a);
        if (a) bg_tm.a = a;
        double *k = a ? realloc(bg_tm.k, cap * sizeof *k) : NULL;
        if (k) bg_tm.k = k;
        uint64_t *q = k ? realloc(bg_tm.q, cap * sizeof *q) : NULL;
        if (!q) return SPS_ENOMEM;
        bg_tm.q = q;
        bg_tm.cap = cap;
    }
    size_t from = bg_tm_epoch == sps__g.epoch && bg_tm.n && bg_tm.n <= m->n ? bg_tm.n - 1 : 0;
    bg_tm_epoch = sps__g.epoch;
    memcpy(bg_tm.a + from, m->a + from, (m->n - from) * sizeof *m->a);
    memcpy(bg_tm.k + from, m->k + from, (m->n - from) * sizeof *m->k);
    memcpy(bg_tm.q + from, m->q + from, (m->n - from) * sizeof *m->q);
    bg_tm.n = m->n;
    return 0;
}

/* Under the lock: adds an anchor for retired chunks that wait for one, if
 * the rules above allow it now; 1 if it did. */
static int bg_anchor(void) {
    sps__anchor_t a = sps__anchor_now();
    int64_t age = sps__g.tm.n ? a.ns - sps__g.tm.a[sps__g.tm.n - 1].ns : INT64_MAX;
    if (age < BG_ANCHOR_MIN_NS ||
        (sps__g.retired - bg_anchor_retired < BG_ANCHOR_RECORDS && age < BG_ANCHOR_IDLE_NS))
        return 0;
    if (sps__timemap_add(&sps__g.tm, a)) return 0;
    sps__crash_anchor(a); /* core/crash.c */
    bg_anchor_retired = sps__g.retired;
    sps__retired_before_anchor(); /* what was retired so far lies before it */
    return 1;
}

/* Under the lock: the first thread whose cursor is in records a
 * background step may read, or NULL (*waits: 1 when retired records wait
 * for an anchor the rules above did not allow yet). */
static sps__thr_t *bg_pick(int *waits) {
    *waits = 0;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        sps__chunk_t *c = t->an_chunk;
        if (t->epoch != sps__g.epoch || !c || c == t->cur) continue;
        if (c->seq0 + t->an_pos < t->bg_ready_seq) return t;
        *waits |= t->retired_seq > t->bg_ready_seq;
    }
    return *waits && bg_anchor() ? bg_pick(waits) : NULL;
}

/* The spill writer's step (sps__bg_ops_t: 1 analyzed, 0 nothing to do,
 * -1 records wait for an anchor): under the lock, plans one
 * thread's analysis within BG_BUDGET records, and runs it without the
 * lock, the analysis claimed (bg_busy: everyone else who touches it waits
 * in sps__bg_wait).  The records are read where they are, in memory or in
 * the spill file; the chunks cannot go meanwhile, since only the writer
 * converts or frees a retired chunk while a session lasts, and a snapshot
 * or a session end waits for the step. */
static int bg_step(void) {
    if (sps__g.mode != SPS__EVENTS || sps__g.bg_busy) return 0;
    /* someone waits for the analysis: let it have it (the writer would
     * otherwise take the lock back first, step after step) */
    if (sps__g.bg_waiters) return -1;
    if (!bg_may_run()) return -1; /* the recorders are busy: look again later */
    int waits;
    sps__thr_t *t = bg_pick(&waits);
    if (!t) return waits ? -1 : 0;
    an_plan_t p;
    if (plan_thread(t, BG_BUDGET, NULL, &p)) return 0;
    if (!p.ns || bg_tm_sync()) {
        if (!p.ns) plan_commit(t, &p, 0, t->an_hi); /* empty: step over it */
        free(p.segs);
        return 0;
    }
    sps__g.bg_busy = 1;
    pthread_mutex_unlock(&sps__g.lock);
    uint64_t misuse = 0;
    uint32_t hi = 0;
    int rc = plan_run(&sps__an, t, &p, &bg_tm, &misuse, &hi);
    pthread_mutex_lock(&sps__g.lock);
    sps__g.misuse += misuse;
    sps__g.sp.bg_records += p.records;
    plan_commit(t, &p, rc, hi); /* also after a read error: what was folded stays */
    sps__g.bg_busy = 0;
    pthread_cond_broadcast(&sps__g.sp.done);
    free(p.segs);
    return rc >= 0;
}

const sps__bg_ops_t sps__bg_analyze_ops = {bg_step};

/* ------------------------------------------------------------------------ */
/* A long analysis on two cores                                              */
/* ------------------------------------------------------------------------ */

/* An analysis of every thread (finalize's; a query's) with many records
 * to read splits the threads in two, in list order, by their records: the
 * calling thread folds the first part into the session's analysis, a
 * helper thread the rest into its own, which then merges in.  The threads'
 * folds are independent but for what they add up (the accumulators, the
 * thread counts) and the call tree's numbering, which must come out as the
 * sequential analysis numbers it (first seen, thread by thread in list
 * order): the helper folds into a copy of the tree's shape, and its new
 * nodes are added to the session's tree in the order it made them, after
 * those of the first part, which is the order the sequential analysis
 * would have made them in.  Tested against the sequential analysis in
 * tests/c/test_spill.c (test_split_analysis). */
/* 2^21 records fold in ~25 ms here (64 threads: 2.56e8 records in ~3 s on
 * one core); starting and joining the helper costs ~20-25 us */
const uint64_t sps__an_split_default = 1u << 21;
uint64_t sps__an_split_min = 1u << 21;
uint64_t sps__an_splits;

/* The helper's part. */
typedef struct split {
    sps__analysis_t an;     /* deltas, over a copy of the tree's shape */
    size_t base;            /* nodes of the session's tree when it began */
    sps__thr_t **thr;       /* its threads ... */
    an_plan_t *plans;       /* ... and their plans, n of them */
    int *rc;
    uint32_t *hi;
    size_t n;
    uint64_t misuse;
} split_t;

static void *split_main(void *arg) {
    split_t *sp = arg;
    for (size_t i = 0; i < sp->n; i++)
        sp->rc[i] = plan_run(&sp->an, sp->thr[i], &sp->plans[i], &sps__g.tm, &sp->misuse,
                             &sp->hi[i]);
    return NULL;
}

/* sp's analysis: zero accumulators for every region id, and the session
 * tree's nodes with their numbers.  0 or SPS_ENOMEM. */
static int split_init(split_t *sp) {
    sp->base = sps__an.tree.len;
    if (an_reserve(&sp->an, sps__an.acc_cap) || an_reserve(&sps__an, sp->an.acc_cap - 1))
        return SPS_ENOMEM;
    for (size_t i = 0; i < sp->base; i++)
        if (sps__tree_find(&sp->an.tree, sps__an.tree.n[i].parent,
                           sps__an.tree.n[i].region) != (int32_t)i)
            return SPS_ENOMEM;
    return 0;
}

static void an_free(sps__analysis_t *an) {
    free(an->cum);
    free(an->per);
    free(an->lanes_cum);
    free(an->lanes_per);
    sps__tree_free(&an->tree);
}

/* Thread t's bytes seen for nodes from base on were the helper's numbers:
 * moves them to the session's (map). */
static void seen_remap(sps__thr_t *t, size_t base, size_t len, const int32_t *map) {
    if (t->an_seen_node_cap <= base) return;
    size_t k = (t->an_seen_node_cap < len ? t->an_seen_node_cap : len) - base;
    uint8_t *tail = malloc(k ? k : 1);
    if (tail) memcpy(tail, t->an_seen_node + base, k);
    memset(t->an_seen_node + base, 0, t->an_seen_node_cap - base);
    for (size_t i = 0; tail && i < k; i++) {
        if (!tail[i] || map[base + i] < 0) continue;
        uint32_t to = (uint32_t)map[base + i];
        if (to >= t->an_seen_node_cap) { /* out of memory: not counted, as lane_mark */
            uint32_t n = t->an_seen_node_cap * 2;
            while (n <= to) n *= 2;
            uint8_t *v = realloc(t->an_seen_node, n);
            if (!v) continue;
            memset(v + t->an_seen_node_cap, 0, n - t->an_seen_node_cap);
            t->an_seen_node = v;
            t->an_seen_node_cap = n;
        }
        t->an_seen_node[to] |= tail[i];
    }
    free(tail);
}

/* Adds the helper's analysis to the session's, its new nodes numbered
 * after those the calling thread made, in the order it made them; its
 * threads' stacks and seen bytes follow the new numbers.  Out of memory:
 * the new nodes' statistics are lost (as a sequential analysis's would
 * be), their frames left without a node. */
static void split_merge(split_t *sp) {
    sps__analysis_t *b = &sp->an;
    if (b->acc_cap) an_reserve(&sps__an, b->acc_cap - 1); /* the helper's grew: ids it met */
    for (uint32_t r = 0; r < b->acc_cap && r < sps__an.acc_cap; r++) {
        sps__acc_merge(&sps__an.per[r], &b->per[r]);
        sps__an.lanes_per[r] += b->lanes_per[r];
        sps__an.lanes_cum[r] += b->lanes_cum[r];
    }
    sps__an.threads_per += b->threads_per;
    sps__an.threads_cum += b->threads_cum;
    int32_t *map = malloc((b->tree.len ? b->tree.len : 1) * sizeof *map);
    for (size_t i = 0; map && i < b->tree.len; i++) {
        const sps__tree_node_t *n = &b->tree.n[i];
        int32_t parent = n->parent >= 0 ? map[n->parent] : -1;
        map[i] = i < sp->base ? (int32_t)i
               : n->parent >= 0 && parent < 0 ? -1
               : sps__tree_node(&sps__an.tree, parent, n->region);
        if (map[i] < 0) continue;
        sps__tree_node_t *to = &sps__an.tree.n[map[i]];
        sps__acc_merge(&to->per, &n->per);
        to->lanes_per += n->lanes_per;
        to->lanes_cum += n->lanes_cum;
    }
    for (size_t j = 0; j < sp->n; j++) {
        sps__thr_t *t = sp->thr[j];
        for (size_t f = 0; f < t->stack.n; f++)
            if (t->stack.f[f].node >= (int32_t)sp->base)
                t->stack.f[f].node = map ? map[t->stack.f[f].node] : -1;
        if (map) seen_remap(t, sp->base, b->tree.len, map);
        else if (t->an_seen_node_cap > sp->base)
            memset(t->an_seen_node + sp->base, 0, t->an_seen_node_cap - sp->base);
    }
    free(map);
}

/* Under the lock, after mark_then_anchor: analyzes every thread to its
 * mark on two cores, when that pays.  1 if it did; 0: nothing done (the
 * caller analyzes sequentially). */
static int analyze_split(void) {
    if (!sps__ahead_allowed()) return 0;
    size_t n = 0;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        n += t->epoch == sps__g.epoch && t->an_chunk;
    if (n < 2) return 0;
    sps__thr_t **thr = calloc(n, sizeof *thr);
    an_plan_t *plans = calloc(n, sizeof *plans);
    int *rc = calloc(n, sizeof *rc);
    uint32_t *hi = calloc(n, sizeof *hi);
    uint64_t total = 0;
    size_t m = 0;
    int ok = thr && plans && rc && hi;
    for (sps__thr_t *t = sps__g.threads; ok && t; t = t->next_all) {
        if (t->epoch != sps__g.epoch || !t->an_chunk) continue;
        thr[m] = t;
        ok = plan_thread(t, 0, t->an_mark, &plans[m]) == 0;
        total += plans[m++].records;
    }
    /* the first part: its threads' records reach half of them */
    size_t k = 0;
    for (uint64_t sum = 0; ok && k < m && 2 * sum < total; k++) sum += plans[k].records;
    split_t sp = {.thr = thr + k, .plans = plans + k, .rc = rc + k, .hi = hi + k, .n = m - k};
    pthread_t th;
    int started = ok && total >= sps__an_split_min && k < m && split_init(&sp) == 0 &&
                  pthread_create(&th, NULL, split_main, &sp) == 0;
    if (started) {
        for (size_t i = 0; i < k; i++)
            rc[i] = plan_run(&sps__an, thr[i], &plans[i], &sps__g.tm, &sps__g.misuse, &hi[i]);
        pthread_join(th, NULL);
        split_merge(&sp);
        sps__an_splits++;
        sps__g.misuse += sp.misuse;
        for (size_t i = 0; i < m; i++) plan_commit(thr[i], &plans[i], rc[i], hi[i]);
    }
    for (size_t i = 0; plans && i < m; i++) free(plans[i].segs);
    an_free(&sp.an);
    free(thr), free(plans), free(rc), free(hi);
    return started;
}

/* ------------------------------------------------------------------------ */
/* The analysis's part of sessions and snapshots (the api layer calls these) */
/* ------------------------------------------------------------------------ */

void sps__analysis_reset(void) {
    sps__bg_wait();
    if (sps__an.acc_cap) {
        memset(sps__an.cum, 0, sps__an.acc_cap * sizeof *sps__an.cum);
        memset(sps__an.per, 0, sps__an.acc_cap * sizeof *sps__an.per);
        memset(sps__an.lanes_cum, 0, sps__an.acc_cap * sizeof *sps__an.lanes_cum);
        memset(sps__an.lanes_per, 0, sps__an.acc_cap * sizeof *sps__an.lanes_per);
    }
    sps__an.threads_cum = sps__an.threads_per = 0;
    lanes_forget(1);
    sps__tree_free(&sps__an.tree);
    memset(&bg_trial, 0, sizeof bg_trial); /* a session's trials are its own */
}

void sps__bg_trials(uint64_t *trials, uint64_t *allowed) {
    *trials = bg_trial.trials;
    *allowed = bg_trial.allowed;
}

void sps__analyze_all(void) {
    sps__bg_wait();
    mark_then_anchor(NULL);
    if (sps__g.mode != SPS__EVENTS || analyze_split()) return;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) analyze_marked(t);
}

sps__acc_t sps__cum_acc(sps_region_t r) {
    sps__bg_wait();
    sps__acc_t a = {0};
    if (sps__g.mode == SPS__AGGREGATE) {
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
            if (t->epoch == sps__g.epoch) {
                sps__acc_t x = sps__agg_read(t, r);
                sps__acc_to_ns(&x, &sps__g.tm);
                sps__acc_merge(&a, &x);
            }
    } else if (r < sps__an.acc_cap) {
        a = sps__an.cum[r];
        sps__acc_merge(&a, &sps__an.per[r]);
    }
    return a;
}

sps__acc_t sps__node_cum(size_t i) {
    sps__bg_wait();
    sps__acc_t a = sps__an.tree.n[i].cum;
    sps__acc_merge(&a, &sps__an.tree.n[i].per);
    return a;
}

int sps__analysis_take(sps__snap_t *s) {
    sps__bg_wait();
    /* Aggregate mode never runs the analyzer, so nothing else grows the
     * arrays to the registry: sized by acc_cap alone, a session whose
     * first regions were aggregate ones took a period of no regions and
     * wrote an empty /rank_region_index (issue 12).  Every id gets a slot,
     * which finalize fills from the threads' accumulators. */
    if (sps__g.mode == SPS__AGGREGATE && sps__acc_reserve(sps__registry_count()))
        return SPS_ENOMEM;
    s->nregions = sps__an.acc_cap;
    s->per = calloc(s->nregions ? s->nregions : 1, sizeof *s->per);
    s->nnodes = sps__an.tree.len;
    s->node_per = calloc(s->nnodes ? s->nnodes : 1, sizeof *s->node_per);
    s->lanes = calloc(s->nregions ? s->nregions : 1, sizeof *s->lanes);
    s->node_lanes = calloc(s->nnodes ? s->nnodes : 1, sizeof *s->node_lanes);
    if (!s->per || !s->node_per || !s->lanes || !s->node_lanes) return SPS_ENOMEM;
    if (s->nregions) {
        memcpy(s->per, sps__an.per, s->nregions * sizeof *s->per);
        memcpy(s->lanes, sps__an.lanes_per, s->nregions * sizeof *s->lanes);
        for (uint32_t r = 0; r < s->nregions; r++)
            sps__acc_merge(&sps__an.cum[r], &sps__an.per[r]);
        memset(sps__an.per, 0, s->nregions * sizeof *sps__an.per);
        memset(sps__an.lanes_per, 0, s->nregions * sizeof *sps__an.lanes_per);
    }
    for (size_t i = 0; i < s->nnodes; i++) {
        sps__tree_node_t *n = &sps__an.tree.n[i];
        s->node_per[i] = n->per;
        s->node_lanes[i] = n->lanes_per;
        sps__acc_merge(&n->cum, &n->per);
        memset(&n->per, 0, sizeof n->per);
        n->lanes_per = 0;
    }
    s->lanes_total = sps__an.threads_per;
    sps__an.threads_per = 0;
    lanes_forget(0);
    return 0;
}

/* The larger of two thread counts: a thread of both periods is one. */
static uint32_t lanes_max(uint32_t a, uint32_t b) { return a > b ? a : b; }

void sps__analysis_merge(sps__snap_t *s, const sps__snap_t *old) {
    for (uint32_t r = 0; r < s->nregions && r < old->nregions; r++) {
        sps__acc_merge(&s->per[r], &old->per[r]);
        if (s->lanes && old->lanes) s->lanes[r] = lanes_max(s->lanes[r], old->lanes[r]);
    }
    for (size_t k = 0; k < s->nnodes && k < old->nnodes; k++) {
        sps__acc_merge(&s->node_per[k], &old->node_per[k]);
        if (s->node_lanes && old->node_lanes)
            s->node_lanes[k] = lanes_max(s->node_lanes[k], old->node_lanes[k]);
    }
    s->lanes_total = lanes_max(s->lanes_total, old->lanes_total);
}

int sps__analysis_describe(sps__snap_t *s) {
    sps__bg_wait();
    uint32_t count = sps__registry_count();
    s->regs = malloc(count * sizeof *s->regs);
    s->node_parent = malloc((sps__an.tree.len + 1) * sizeof *s->node_parent);
    s->node_region = malloc((sps__an.tree.len + 1) * sizeof *s->node_region);
    if (!s->regs || !s->node_parent || !s->node_region) return SPS_ENOMEM;
    for (sps_region_t r = 1; r < count; r++) {
        int reg = sps__region_registered(r);
        int rec = (r < s->nregions && s->per[r].count) || sps__cum_acc(r).count;
        if (reg || rec) s->regs[s->nregs++] = r;
    }
    sps__regions_sort(s->regs, s->nregs);
    for (size_t i = 0; i < s->nnodes; i++) {
        s->node_parent[i] = sps__an.tree.n[i].parent;
        s->node_region[i] = sps__an.tree.n[i].region;
    }
    return 0;
}
