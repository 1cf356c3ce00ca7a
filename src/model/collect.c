/* collect.c -- the calls of the regions that per-call queries ask for
 * (sps_region_calls, Python's get_durations_numpy), kept up to date as the
 * period goes on, so that a query reads only the records written since
 * the previous one.
 *
 * What a query returns is defined by the merged pass (period.c): a
 * region's completed calls of the period, in the order in which the pass
 * meets their begins -- the order of the file's rows.  The pass takes the
 * threads' records from a heap on (time, thread index), so that order is
 * the order of (key, thread index, position on the thread), where a call's
 * key is the latest time its thread's records had reached when it began:
 * a running maximum over the thread's records of the period (the frames
 * carried in first), equal to the call's start unless the clock's mapping
 * stepped back (core/clock.c: segments under 1 ms use the rate measured at
 * start).  Why: along a thread keys never decrease, and at every step of
 * the heap, comparing the threads' next records by value and by key picks
 * the same thread.  A record whose value lies under its thread's key k
 * follows that thread's record of value k, which the heap took while every
 * other thread's next record -- and so that thread's key -- was at least k
 * (equal ones: the lower thread index, both ways).
 *
 * So each thread's calls of a region are kept on their own, in begin
 * order: a begin appends a slot (its start), its end fills the duration
 * in, a call whose key is not its start is noted aside ("late"); a copy
 * merges the threads' lists by (key, thread).  A call still open has its
 * slot but is not copied (its frame on the thread's stack names it).
 *
 * Cost: each query decodes the records written since the previous query
 * (memory chunks resume at the record where it stopped), folds them once
 * for every region kept, and copies the answer out.  The first query of a
 * region in a period reads the period from its start once more (for
 * every region kept: the lists are rebuilt together).  Memory: 16 bytes
 * per call of each region asked for in the period, plus the threads'
 * stacks; dropped when the period ends (the first query after a finalize
 * notices it: the threads' first records of the period changed) and when
 * the session ends (sps__collect_reset).  Everything runs under the
 * session lock. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#define NO_SEQ UINT64_MAX /* a thread without records in the period yet */

/* A call of a region whose merge key is not its start (index in its list). */
typedef struct late {
    size_t i;
    uint64_t key_ns;
} late_t;

/* One region's calls on one thread, in begin order.  dur_ns of a call still
 * open is unset. */
typedef struct calls {
    int64_t *start_ns, *dur_ns;
    size_t n, cap_start, cap_dur;
    late_t *late;    /* ascending i */
    size_t nlate, cap_late;
} calls_t;

/* A region asked for in this period. */
typedef struct kept {
    uint32_t region;
    calls_t *lanes;      /* [nlanes] by thread index */
    size_t nlanes;
    uint64_t closed;     /* completed calls in lanes */
    int64_t *pend_start_ns, *pend_dur_ns; /* the pending period's calls */
    size_t npend;
    int pend_ok;         /* pend_* computed for the current pending period */
} kept_t;

/* One thread of the session (lane of the merged pass). */
typedef struct lane {
    sps__thr_t *thr;
    sps__chunk_t *chunk; /* next record to read: record pos of chunk */
    uint32_t pos;
    uint64_t seq;        /* ... its sequence number: where lane_locate looks */
    uint32_t hi;         /* the timestamp's upper half at pos */
    int hi_known;
    int injected;        /* the frames carried into the period were read */
    uint64_t first_seq;  /* the period's first record here, NO_SEQ if none */
    uint64_t key_ns;     /* running maximum of the records' times */
    sps__stack_t st;     /* open calls: id = slot in the kept list, or -1 */
    int marked;          /* sps__collect_mark saw the thread: read it */
    sps__chunk_t *mark_chunk; /* where the query stops: t->cur and the */
    const uint64_t *mark;     /* write position in it then */
} lane_t;

/* The collector: one per process, under the session lock. */
static struct collector {
    uint64_t epoch;
    int64_t period_start_ns;
    lane_t *lanes;
    size_t nlanes, cap_lanes;
    kept_t *kept;
    size_t nkept, cap_kept;
    uint32_t *kept_of;   /* region id -> index in kept + 1, 0: not kept */
    size_t cap_kept_of;
    const sps__snap_t *pend; /* the pending period pend_* belong to */
    int64_t pend_start_ns;
    size_t pend_nsegs;
    sps__seg_t *segs;    /* scratch for one thread's read */
    size_t cap_segs;
    int synced;          /* sps__collect_mark succeeded: lanes match */
    uint64_t records_read, rebuilds;
} g;

/* ------------------------------------------------------------------------ */
/* Lists of calls                                                            */
/* ------------------------------------------------------------------------ */

static void calls_free(calls_t *c) {
    free(c->start_ns);
    free(c->dur_ns);
    free(c->late);
    memset(c, 0, sizeof *c);
}

/* Appends a call that begins at start_ns with merge key key_ns; its slot
 * index, or -1 (out of memory). */
static int64_t calls_push(calls_t *c, uint64_t start_ns, uint64_t key_ns) {
    if (sps__grow((void **)&c->start_ns, &c->cap_start, c->n, sizeof *c->start_ns) ||
        sps__grow((void **)&c->dur_ns, &c->cap_dur, c->n, sizeof *c->dur_ns))
        return -1;
    if (key_ns != start_ns) {
        if (sps__grow((void **)&c->late, &c->cap_late, c->nlate, sizeof *c->late))
            return -1;
        c->late[c->nlate++] = (late_t){c->n, key_ns};
    }
    c->start_ns[c->n] = (int64_t)start_ns;
    c->dur_ns[c->n] = 0;
    return (int64_t)c->n++;
}

static void kept_free_pending(kept_t *k) {
    free(k->pend_start_ns);
    free(k->pend_dur_ns);
    k->pend_start_ns = k->pend_dur_ns = NULL;
    k->npend = 0;
    k->pend_ok = 0;
}

/* Empties every kept list (the regions stay kept). */
static void kept_clear_all(void) {
    for (size_t i = 0; i < g.nkept; i++) {
        kept_t *k = &g.kept[i];
        for (size_t l = 0; l < k->nlanes; l++) {
            k->lanes[l].n = 0;
            k->lanes[l].nlate = 0;
        }
        k->closed = 0;
    }
}

/* Forgets every kept region and its memory. */
static void kept_drop_all(void) {
    for (size_t i = 0; i < g.nkept; i++) {
        kept_t *k = &g.kept[i];
        for (size_t l = 0; l < k->nlanes; l++) calls_free(&k->lanes[l]);
        free(k->lanes);
        kept_free_pending(k);
    }
    free(g.kept);
    free(g.kept_of);
    g.kept = NULL;
    g.kept_of = NULL;
    g.nkept = g.cap_kept = g.cap_kept_of = 0;
}

static kept_t *kept_find(uint32_t r) {
    return r < g.cap_kept_of && g.kept_of[r] ? &g.kept[g.kept_of[r] - 1] : NULL;
}

/* Keeps region r from now on (its list empty); NULL when out of memory. */
static kept_t *kept_add(uint32_t r) {
    if (r >= g.cap_kept_of) {
        size_t cap = (size_t)r + 64;
        uint32_t *p = realloc(g.kept_of, cap * sizeof *p);
        if (!p) return NULL;
        memset(p + g.cap_kept_of, 0, (cap - g.cap_kept_of) * sizeof *p);
        g.kept_of = p;
        g.cap_kept_of = cap;
    }
    if (sps__grow((void **)&g.kept, &g.cap_kept, g.nkept, sizeof *g.kept)) return NULL;
    g.kept[g.nkept] = (kept_t){.region = r};
    g.kept_of[r] = (uint32_t)++g.nkept;
    return &g.kept[g.nkept - 1];
}

/* k's list of thread index l, made to exist; NULL when out of memory. */
static calls_t *kept_lane(kept_t *k, size_t l) {
    if (l >= k->nlanes) {
        size_t n = l + 1 > g.nlanes ? l + 1 : g.nlanes;
        calls_t *p = realloc(k->lanes, n * sizeof *p);
        if (!p) return NULL;
        memset(p + k->nlanes, 0, (n - k->nlanes) * sizeof *p);
        k->lanes = p;
        k->nlanes = n;
    }
    return &k->lanes[l];
}

/* ------------------------------------------------------------------------ */
/* Threads: where the period starts, where a query stops                     */
/* ------------------------------------------------------------------------ */

/* The first chunk of t's records in the period (snapshots skip what an
 * earlier finalize consumed: records [0, consumed)), or NULL. */
static sps__chunk_t *period_chunk(const sps__thr_t *t) {
    return t->head ? t->head : t->cur;
}

static uint64_t period_first_seq(const sps__thr_t *t) {
    const sps__chunk_t *c = period_chunk(t);
    return c ? c->seq0 + c->consumed : NO_SEQ;
}

/* Puts lane ln at the start of its thread's period (nothing read yet). */
static void lane_rewind(lane_t *ln) {
    sps__chunk_t *c = period_chunk(ln->thr);
    ln->chunk = c;
    ln->pos = c ? c->consumed : 0;
    ln->seq = c ? c->seq0 + c->consumed : 0;
    ln->hi_known = 0;
    ln->injected = 0;
    ln->first_seq = c ? c->seq0 + c->consumed : NO_SEQ;
    ln->key_ns = 0;
    ln->st.n = 0;
}

/* Lane of thread t (index t->index), made to exist; NULL when out of memory. */
static lane_t *lane_of(sps__thr_t *t) {
    size_t i = t->index;
    if (i >= g.nlanes) {
        if (i >= g.cap_lanes) {
            size_t cap = i + 16;
            lane_t *p = realloc(g.lanes, cap * sizeof *p);
            if (!p) return NULL;
            memset(p + g.cap_lanes, 0, (cap - g.cap_lanes) * sizeof *p);
            g.lanes = p;
            g.cap_lanes = cap;
        }
        g.nlanes = i + 1;
    }
    lane_t *ln = &g.lanes[i];
    if (ln->thr != t) {
        ln->thr = t;
        lane_rewind(ln);
    }
    return ln;
}

/* Forgets the lanes (a new session epoch: thread indexes start again). */
static void lanes_drop(void) {
    for (size_t i = 0; i < g.cap_lanes; i++) sps__stack_free(&g.lanes[i].st);
    free(g.lanes);
    g.lanes = NULL;
    g.nlanes = g.cap_lanes = 0;
}

void sps__collect_reset(void) {
    kept_drop_all();
    lanes_drop();
    free(g.segs);
    g.segs = NULL;
    g.cap_segs = 0;
    g.pend = NULL;
    g.epoch = 0;
    g.synced = 0;
}

/* Makes the lanes match the session: a new epoch forgets everything; a
 * period that changed (a finalize took the records: some thread's first
 * record of the period is another one now, or the period's start time
 * moved) drops what was kept; threads new to the session get a lane, at
 * their first record.  0 or SPS_ENOMEM. */
static int sync_period(void) {
    if (g.epoch != sps__g.epoch) {
        kept_drop_all();
        lanes_drop();
        g.pend = NULL;
        g.epoch = sps__g.epoch;
        g.period_start_ns = sps__g.period_start_ns;
    }
    int changed = g.period_start_ns != sps__g.period_start_ns;
    for (sps__thr_t *t = sps__g.threads; t && !changed; t = t->next_all) {
        if (t->epoch != sps__g.epoch || t->index >= g.nlanes) continue;
        const lane_t *ln = &g.lanes[t->index];
        changed = ln->thr == t && ln->first_seq != NO_SEQ &&
                  ln->first_seq != period_first_seq(t);
    }
    if (changed) {
        kept_drop_all();
        for (size_t i = 0; i < g.nlanes; i++)
            if (g.lanes[i].thr) lane_rewind(&g.lanes[i]);
        g.period_start_ns = sps__g.period_start_ns;
    }
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        if (t->epoch != sps__g.epoch) continue;
        lane_t *ln = lane_of(t);
        if (!ln) return SPS_ENOMEM;
        /* no records in the period when last seen: start at its first
         * chunk now (nothing was read, the carried frames included) */
        if (ln->first_seq == NO_SEQ) lane_rewind(ln);
    }
    return 0;
}

/* Under the lock, before the query's anchor (sps__timemap_add): brings the
 * lanes in line with the session and records every thread's write
 * position, where sps__collect_region will stop reading.  So every record
 * read lies before the last anchor, and its ns value does not change when
 * later anchors arrive: what is kept converts as the finalize's snapshot
 * will convert it. */
void sps__collect_mark(void) {
    for (size_t i = 0; i < g.nlanes; i++) g.lanes[i].marked = 0;
    g.synced = sync_period() == 0;
    if (!g.synced) return;
    for (size_t i = 0; i < g.nlanes; i++) {
        lane_t *ln = &g.lanes[i];
        if (!ln->thr) continue;
        ln->marked = 1;
        ln->mark_chunk = ln->thr->cur;
        ln->mark = ln->mark_chunk ? atomic_load_explicit(&ln->thr->pos, memory_order_acquire)
                                  : NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Reading: the fold of each thread's new records                            */
/* ------------------------------------------------------------------------ */

/* A call's duration in ns as the fold counts it (sps__fold_close_top):
 * never negative, though a clock mapping that steps back inside a call can
 * put its end before its start. */
static int64_t call_dur_ns(uint64_t start, uint64_t end) {
    return end > start ? (int64_t)(end - start) : 0;
}

/* The fold's close callback (ctx: the lane's index): a kept call's
 * duration. */
static void on_close(void *ctx, const sps__frame_t *f, uint64_t end, uint64_t self,
                     size_t depth) {
    (void)self;
    (void)depth;
    kept_t *k = f->id >= 0 ? kept_find(f->region) : NULL;
    if (!k) return;
    k->lanes[*(const size_t *)ctx].dur_ns[f->id] = call_dur_ns(f->start, end);
    k->closed++;
}

/* One record of lane l, as the merged pass handles it (pass_event).  0 or
 * SPS_ENOMEM. */
static int lane_event(lane_t *ln, size_t l, const sps__ev_t *e, uint32_t nids) {
    if (e->ns > ln->key_ns) ln->key_ns = e->ns; /* the heap saw it, valid or not */
    if (e->region == 0 || e->region >= nids) return 0; /* misuse, ignored */
    if (e->is_end) {
        sps__fold_end(&ln->st, e->region, e->ns, on_close, &l);
        return 0;
    }
    sps__frame_t f = {.region = e->region, .node = -1, .start = e->ns, .seq = e->seq,
                      .id = -1};
    kept_t *k = kept_find(e->region);
    if (k) {
        calls_t *c = kept_lane(k, l);
        if (!c || (f.id = calls_push(c, e->ns, ln->key_ns)) < 0) return SPS_ENOMEM;
    }
    return sps__stack_push(&ln->st, f);
}

/* Reads lane l's records from where it stopped up to its mark: the rest
 * of the chunk it stopped in, the chunks retired since, and the current
 * chunk up to the mark.  0 or an SPS_E code. */
/* Finds lane ln's place again by its sequence number: since the last
 * query the spill writer may have merged ln->chunk into its thread's
 * spilled run (core/spill.c: the descriptor goes back to the pool), so the
 * pointer alone is not to be trusted.  Sets ln->chunk/pos to the chunk of
 * t's list holding record seq (or the current chunk), forgetting the
 * upper half when the chunk changed.  0, or -1 when seq is not in the
 * list any more (the caller rewinds). */
static int lane_locate(lane_t *ln) {
    sps__thr_t *t = ln->thr;
    uint64_t seq = ln->seq;
    for (sps__chunk_t *c = period_chunk(t); c; c = c == t->cur ? NULL : (c->next ? c->next : t->cur)) {
        if (seq < c->seq0) return -1;
        if (c == t->cur || seq <= c->seq0 + c->n) {
            if (c != ln->chunk || seq - c->seq0 != ln->pos || !c->rec) ln->hi_known = 0;
            ln->chunk = c;
            ln->pos = (uint32_t)(seq - c->seq0);
            return 0;
        }
    }
    return -1;
}

static int lane_read(size_t l) {
    lane_t *ln = &g.lanes[l];
    sps__thr_t *t = ln->thr;
    if (!t || !ln->marked || !ln->chunk) return 0;
    if (lane_locate(ln)) return SPS_ENOMEM; /* lost its place: the caller rebuilds */
    size_t ns = 0;
    sps__chunk_t *c = ln->chunk, *last = c;
    uint32_t last_n = ln->pos;
    int preset_hi = 0;
    while (c) {
        /* the current chunk cannot change while the lock is held (retiring
         * one takes it), so the mark lies in it */
        if (c == t->cur && c != ln->mark_chunk) break;
        uint32_t n = c == t->cur ? (uint32_t)(ln->mark - c->rec) : c->n;
        if (sps__grow((void **)&g.segs, &g.cap_segs, ns, sizeof *g.segs)) return SPS_ENOMEM;
        if (c == ln->chunk && c->rec && ln->hi_known) {
            /* resume at pos: given the timestamp's upper half there (rd.hi
             * below), the reader need not walk records [0, pos) again */
            uint32_t from = ln->pos < n ? ln->pos : n;
            g.segs[ns++] = (sps__seg_t){t->index, c->rec + from, -1, n - from, 0,
                                        c->seq0 + from};
            preset_hi = 1;
        } else {
            uint32_t skip = c == ln->chunk ? ln->pos : c->consumed;
            g.segs[ns++] = (sps__seg_t){t->index, c->rec, c->file_off, n, skip, c->seq0};
        }
        last = c;
        last_n = n;
        c = c == t->cur ? NULL : (c->next ? c->next : t->cur);
    }
    sps__rd_t rd;
    sps__rd_init(&rd, g.segs, ns, ln->injected ? NULL : &t->carried, &sps__g.tm);
    if (preset_hi) rd.hi = ln->hi;
    ln->injected = 1;
    uint32_t nids = sps__registry_count();
    sps__ev_t e;
    int rc;
    while ((rc = sps__rd_next(&rd, &e)) > 0) {
        g.records_read++; /* the carried frames count: they are read too */
        if ((rc = lane_event(ln, l, &e, nids)) != 0) break;
    }
    ln->hi = rd.hi;
    ln->hi_known = 1;
    sps__rd_free(&rd);
    ln->chunk = last;
    ln->pos = last_n;
    ln->seq = last->seq0 + last_n;
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------ */
/* Copying out: the threads' lists merged by (key, thread)                   */
/* ------------------------------------------------------------------------ */

/* A cursor over one thread's list of a region.  It moves by runs: [i,
 * run_end) holds completed calls whose key is their start, or a single
 * call whose key is noted aside (late_here, key_ns); calls still open (the
 * frames of the region on the thread's stack, whose slots ascend with the
 * stack) are skipped. */
typedef struct it {
    const calls_t *c;
    size_t i, run_end;
    int late_here;
    uint64_t key_ns;     /* late_here: the key of call i */
    size_t li;           /* next late entry to look at */
    const sps__stack_t *st;
    size_t sj;           /* next frame of st to look at */
    uint32_t region;
} it_t;

/* The slot of the next open call at or after it->i, or SIZE_MAX. */
static size_t it_next_open(it_t *it) {
    while (it->sj < it->st->n) {
        const sps__frame_t *f = &it->st->f[it->sj];
        if (f->region == it->region && f->id >= 0 && (size_t)f->id >= it->i)
            return (size_t)f->id;
        it->sj++;
    }
    return SIZE_MAX;
}

/* Sets up the run at it->i (after the one that ended there); 0 when the
 * list holds no more completed calls. */
static int it_run(it_t *it) {
    const calls_t *c = it->c;
    for (;;) {
        if (it->i >= c->n) return 0;
        size_t open = it_next_open(it);
        if (open == it->i) { /* still open: not part of the answer */
            it->i++;
            continue;
        }
        while (it->li < c->nlate && c->late[it->li].i < it->i) it->li++;
        size_t late = it->li < c->nlate ? c->late[it->li].i : SIZE_MAX;
        it->late_here = late == it->i;
        if (it->late_here) {
            it->key_ns = c->late[it->li].key_ns;
            it->run_end = it->i + 1;
        } else {
            size_t e = open < late ? open : late;
            it->run_end = e < c->n ? e : c->n;
        }
        return 1;
    }
}

/* The key of the cursor's next call (it_run returned 1). */
static inline uint64_t it_key(const it_t *it) {
    return it->late_here ? it->key_ns : (uint64_t)it->c->start_ns[it->i];
}

/* Copies calls [it->i, it->i + m) to out at out_n. */
static inline void it_copy(it_t *it, int64_t *starts, int64_t *durs, size_t out_n,
                           size_t m) {
    const int64_t *s = it->c->start_ns + it->i, *d = it->c->dur_ns + it->i;
    if (m <= 4) { /* threads that take turns call by call: no memcpy call */
        for (size_t j = 0; j < m; j++) {
            if (starts) starts[out_n + j] = s[j];
            if (durs) durs[out_n + j] = d[j];
        }
    } else {
        if (starts) memcpy(starts + out_n, s, m * sizeof *starts);
        if (durs) memcpy(durs + out_n, d, m * sizeof *durs);
    }
    it->i += m;
}

/* Merges the cursors a and b of two threads (a's the lower thread index,
 * both at a run) into starts/durs from out_n on, until one of them has no
 * more calls or out_n reaches cap; returns the new out_n, and in *a_more /
 * *b_more whether each still has calls (its cursor then at a run).  Two
 * plain runs merge without a branch per call: threads that record at the
 * same time alternate call by call, and such a branch would be
 * mispredicted half the time. */
static size_t merge_two(it_t *a, it_t *b, int64_t *starts, int64_t *durs, size_t out_n,
                        size_t cap, int *a_more, int *b_more) {
    int64_t sink[2];
    int64_t *os = starts ? starts : sink, *od = durs ? durs : sink;
    size_t step_s = starts != NULL, step_d = durs != NULL; /* NULL: write the sink */
    for (;;) {
        if (out_n == cap) break;
        if (!a->late_here && !b->late_here) {
            const int64_t *sa = a->c->start_ns, *sb = b->c->start_ns;
            const int64_t *da = a->c->dur_ns, *db = b->c->dur_ns;
            size_t ia = a->i, ib = b->i, ea = a->run_end, eb = b->run_end, o = out_n;
#define MERGE_STEP                                                              \
    do {                                                                        \
        size_t ta = (uint64_t)sa[ia] <= (uint64_t)sb[ib]; /* ties: a */        \
        int64_t vs = ta ? sa[ia] : sb[ib], vd = ta ? da[ia] : db[ib];           \
        os[o * step_s] = vs;                                                    \
        od[o * step_d] = vd;                                                    \
        ia += ta;                                                               \
        ib += 1 - ta;                                                           \
        o++;                                                                    \
    } while (0)
            while (ia < ea && ib < eb && o < cap) {
                if (ia + 8 <= ea && ib + 8 <= eb && o + 8 <= cap) {
                    /* threads that took turns in longer stretches: 8 of
                     * one (their keys ascend within a run) ... */
                    if ((uint64_t)sa[ia + 7] <= (uint64_t)sb[ib]) {
                        it_t t = *a;
                        t.i = ia;
                        it_copy(&t, starts, durs, o, 8);
                        ia += 8, o += 8;
                        continue;
                    }
                    if ((uint64_t)sb[ib + 7] < (uint64_t)sa[ia]) {
                        it_t t = *b;
                        t.i = ib;
                        it_copy(&t, starts, durs, o, 8);
                        ib += 8, o += 8;
                        continue;
                    }
                    /* ... else 8 steps, none of which can run past a run */
                    for (int j = 0; j < 8; j++) MERGE_STEP;
                    continue;
                }
                MERGE_STEP;
            }
#undef MERGE_STEP
            a->i = ia, b->i = ib, out_n = o;
        } else { /* a call whose key is noted aside: one at a time */
            uint64_t ka = it_key(a), kb = it_key(b);
            it_t *t = ka <= kb ? a : b;
            it_copy(t, starts, durs, out_n, 1);
            out_n++;
        }
        if (a->i == a->run_end) *a_more = it_run(a);
        if (b->i == b->run_end) *b_more = it_run(b);
        if (!*a_more || !*b_more) break;
    }
    return out_n;
}

/* Copies the first cap completed calls of k (live period) into starts and
 * durs (either may be NULL) in the merged pass's order, by a heap over the
 * threads on (key, thread index).  The thread on top gives calls while it
 * stays ahead of the runner-up, so a region recorded on one thread at a
 * time is copied in runs.  Returns how many were copied, or (size_t)-1 when
 * out of memory. */
static size_t kept_copy(const kept_t *k, int64_t *starts, int64_t *durs, size_t cap) {
    size_t nl = k->nlanes, out_n = 0;
    if (!cap || (!starts && !durs) || !k->closed) return 0;
    it_t *its = calloc(nl ? nl : 1, sizeof *its);
    sps__heap_t h;
    sps__heap_init(&h, NULL, NULL); /* equal keys: the lower thread index */
    if (!its || sps__heap_reserve(&h, nl)) {
        free(its);
        sps__heap_free(&h);
        return (size_t)-1;
    }
    static const sps__stack_t none;
    for (size_t l = 0; l < nl; l++) {
        its[l] = (it_t){.c = &k->lanes[l], .st = l < g.nlanes ? &g.lanes[l].st : &none,
                        .region = k->region};
        if (it_run(&its[l])) sps__heap_push(&h, it_key(&its[l]), (uint32_t)l);
    }
    if (h.n == 2) { /* the common case of several threads: two */
        uint32_t x = h.v[0].idx, y = h.v[1].idx;
        it_t *a = &its[x < y ? x : y], *b = &its[x < y ? y : x];
        int a_more = 1, b_more = 1;
        out_n = merge_two(a, b, starts, durs, out_n, cap, &a_more, &b_more);
        h.n = 0; /* what is left (room reserved): below */
        if (a_more) sps__heap_push(&h, it_key(a), (uint32_t)(a - its));
        if (b_more) sps__heap_push(&h, it_key(b), (uint32_t)(b - its));
    }
    while (h.n && out_n < cap) {
        uint32_t m = sps__heap_top(&h).idx;
        it_t *it = &its[m];
        if (h.n == 1) { /* the others are done: whole runs */
            do {
                size_t n = it->run_end - it->i;
                if (n > cap - out_n) n = cap - out_n;
                it_copy(it, starts, durs, out_n, n);
                out_n += n;
            } while (out_n < cap && it_run(it));
            break;
        }
        /* the runner-up: the smaller child of the top */
        sps__heap_ent_t b = h.v[1];
        if (h.n > 2 && (h.v[2].key < b.key || (h.v[2].key == b.key && h.v[2].idx < b.idx)))
            b = h.v[2];
        /* m's calls go first while their key is below b's, or equal to it
         * with m the lower thread index (the heap's order) */
        uint64_t bk = b.key;
        int tie_ok = m < b.idx;
        int more = 1;
        for (;;) {
            size_t i = it->i + 1, e = it->run_end; /* call it->i is the top */
            if (!it->late_here) {
                const int64_t *st = it->c->start_ns;
                size_t stop = it->i + (cap - out_n) < e ? it->i + (cap - out_n) : e;
                if (tie_ok) while (i < stop && (uint64_t)st[i] <= bk) i++;
                else while (i < stop && (uint64_t)st[i] < bk) i++;
            }
            size_t n = i - it->i;
            it_copy(it, starts, durs, out_n, n);
            out_n += n;
            if (it->i < e) break;                    /* b goes next, or cap */
            if (!(more = it_run(it))) break;          /* m is done */
            uint64_t key = it_key(it);
            if (out_n == cap || key > bk || (key == bk && !tie_ok)) break;
        }
        if (more) sps__heap_update_top(&h, it_key(it));
        else sps__heap_pop(&h);
    }
    free(its);
    sps__heap_free(&h);
    return out_n;
}

/* ------------------------------------------------------------------------ */
/* The full pass (a pending period; the reference the tests compare with)    */
/* ------------------------------------------------------------------------ */

typedef struct collect {
    uint32_t region;
    int64_t *starts, *durs; /* in ns */
    uint64_t *ord;          /* ordinal: the order the file uses */
    size_t n, cap;
} collect_t;

static int collect_end(void *ctx, const sps__call_t *c) {
    collect_t *k = ctx;
    if (c->region != k->region) return 0;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 256;
        int64_t *s = realloc(k->starts, cap * sizeof *s);
        if (!s) return SPS_ENOMEM;
        k->starts = s;
        int64_t *d = realloc(k->durs, cap * sizeof *d);
        if (!d) return SPS_ENOMEM;
        k->durs = d;
        uint64_t *o = realloc(k->ord, cap * sizeof *o);
        if (!o) return SPS_ENOMEM;
        k->ord = o;
        k->cap = cap;
    }
    k->starts[k->n] = (int64_t)c->start;
    k->durs[k->n] = call_dur_ns(c->start, c->end);
    k->ord[k->n] = c->ordinal;
    k->n++;
    return 0;
}

typedef struct { uint64_t o; int64_t s, d; } sd_t;
static int sd_cmp(const void *a, const void *b) {
    const sd_t *x = a, *y = b;
    return x->o < y->o ? -1 : x->o > y->o;
}

/* Region r's calls of snap by the merged pass, in ordinal order (the file's
 * rows): *starts and *durs malloc'd (NULL when *n is 0), *n their number.
 * 0 or an SPS_E code (then nothing is allocated). */
static int collect_snap(const sps__snap_t *snap, uint32_t r, int64_t **starts,
                        int64_t **durs, size_t *n) {
    collect_t k = {.region = r};
    sps__pass_cb_t cb = {&k, NULL, collect_end};
    int rc = sps__pass_run(snap, &cb, NULL);
    sd_t *v = rc ? NULL : malloc((k.n ? k.n : 1) * sizeof *v);
    if (!rc && !v) rc = SPS_ENOMEM;
    if (!rc) {
        for (size_t i = 0; i < k.n; i++) v[i] = (sd_t){k.ord[i], k.starts[i], k.durs[i]};
        qsort(v, k.n, sizeof *v, sd_cmp);
        for (size_t i = 0; i < k.n; i++) {
            k.starts[i] = v[i].s;
            k.durs[i] = v[i].d;
        }
    }
    free(v);
    free(k.ord);
    if (rc || !k.n) {
        free(k.starts);
        free(k.durs);
        k.starts = k.durs = NULL;
        k.n = 0;
    }
    *starts = k.starts;
    *durs = k.durs;
    *n = k.n;
    return rc;
}

size_t sps__collect_calls(const sps__snap_t *snap, uint32_t r, int64_t *starts,
                          int64_t *durs, size_t cap) {
    int64_t *s = NULL, *d = NULL;
    size_t n = 0;
    collect_snap(snap, r, &s, &d, &n);
    for (size_t i = 0; i < n && i < cap; i++) {
        if (starts) starts[i] = s[i];
        if (durs) durs[i] = d[i];
    }
    free(s);
    free(d);
    return n;
}

/* ------------------------------------------------------------------------ */
/* The query                                                                 */
/* ------------------------------------------------------------------------ */

/* k's calls of the pending period (a finalize whose write failed), by one
 * full pass the first time they are asked for: the pending period does not
 * change until the next finalize.  0 or an SPS_E code. */
static int kept_pending(kept_t *k) {
    const sps__snap_t *p = sps__g.pending;
    if (p != g.pend || (p && (p->start_ns != g.pend_start_ns || p->nsegs != g.pend_nsegs))) {
        for (size_t i = 0; i < g.nkept; i++) kept_free_pending(&g.kept[i]);
        g.pend = p;
        g.pend_start_ns = p ? p->start_ns : 0;
        g.pend_nsegs = p ? p->nsegs : 0;
    }
    if (!p || k->pend_ok) return 0;
    int rc = collect_snap(p, k->region, &k->pend_start_ns, &k->pend_dur_ns, &k->npend);
    k->pend_ok = rc == 0;
    return rc;
}

int sps__collect_region(uint32_t r, int64_t *starts, int64_t *durs, size_t cap,
                        size_t *n) {
    *n = 0;
    if (!g.synced) return SPS_ENOMEM;
    kept_t *k = kept_find(r);
    if (!k) {
        /* a region new to this period: its calls so far are in records
         * already read, so read the period again for every kept region */
        int read = 0;
        for (size_t l = 0; l < g.nlanes && !read; l++)
            read = g.lanes[l].injected;
        if (read) {
            g.rebuilds++;
            kept_clear_all();
            for (size_t l = 0; l < g.nlanes; l++)
                if (g.lanes[l].thr) lane_rewind(&g.lanes[l]);
        }
        if (!(k = kept_add(r))) return SPS_ENOMEM;
    }
    int rc = 0;
    for (size_t l = 0; l < g.nlanes && !rc; l++) rc = lane_read(l);
    if (!rc) rc = kept_pending(k = kept_find(r));
    if (rc) { /* start over next time: what was read is not all kept */
        sps__collect_reset();
        return rc;
    }
    size_t np = k->npend, total = np + k->closed;
    size_t m = np < cap ? np : cap;
    if (starts && m) memcpy(starts, k->pend_start_ns, m * sizeof *starts);
    if (durs && m) memcpy(durs, k->pend_dur_ns, m * sizeof *durs);
    if (cap > m) {
        size_t c = kept_copy(k, starts ? starts + m : NULL, durs ? durs + m : NULL, cap - m);
        if (c == (size_t)-1) return SPS_ENOMEM;
    }
    *n = total;
    return 0;
}

void sps__collect_info(sps_query_info_t *out) {
    memset(out, 0, sizeof *out);
    out->records_read = g.records_read;
    out->rebuilds = g.rebuilds;
    out->regions = g.nkept;
    for (size_t i = 0; i < g.nkept; i++) {
        const kept_t *k = &g.kept[i];
        out->bytes += k->npend * 16 + k->nlanes * sizeof *k->lanes;
        for (size_t l = 0; l < k->nlanes; l++)
            out->bytes += (k->lanes[l].cap_start + k->lanes[l].cap_dur) * 8 +
                          k->lanes[l].cap_late * sizeof(late_t);
    }
    out->bytes += g.cap_kept * sizeof(kept_t) + g.cap_kept_of * sizeof(uint32_t) +
                  g.cap_lanes * sizeof(lane_t);
    for (size_t l = 0; l < g.nlanes; l++) out->bytes += g.lanes[l].st.cap * sizeof(sps__frame_t);
}
