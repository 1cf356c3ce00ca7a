/* schedule.c -- torch.profiler's step schedule, and the session's steps.
 *
 * The schedule is pure arithmetic (sps_schedule_action): no session, no
 * state.  Steps are state of the session: a counter and a log of marks,
 * each the instant a thread began a step (with its number) or ended one.
 * sps_spans pairs each begin mark with the next mark of the same thread
 * into a step span (sps__steps_window here, then src/model/fold.c nests
 * it among the regions' spans).
 *
 * Steps are deliberately not records in the thread buffers: the core's
 * nesting rule closes every inner region when an outer one ends, so a
 * region open across a step boundary would be cut there.  Marks live
 * beside the buffers and touch nothing on the hot path.
 *
 * Every static below is guarded by the session lock (sps__g.lock), and
 * belongs to session epoch g.epoch: the first use in a new session starts
 * the counter and the log afresh.  Marks hold raw ticks, converted with
 * the session's time map when read, exactly as the spans' timestamps are
 * (so a span begun right after a mark is never placed before it). */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The schedule                                                              */
/* ------------------------------------------------------------------------ */

int sps_schedule_check(const sps_schedule_t *s) {
    if (!s || s->wait < 0 || s->warmup < 0 || s->active < 1 || s->repeat < 0 ||
        s->skip_first < 0 || (s->skip_first_wait != 0 && s->skip_first_wait != 1))
        return SPS_EINVAL;
    int64_t n;
    if (__builtin_add_overflow(s->wait, s->warmup, &n) ||
        __builtin_add_overflow(n, s->active, &n))
        return SPS_EINVAL; /* a cycle longer than any step number */
    return 0;
}

/* torch's schedule_fn (facts §7) in integers.  Python's "step / num_steps
 * >= repeat" is a float division; for integers it is floor(step / n) >=
 * repeat (floor(x) >= k exactly when x >= k, k an integer).  The shift by
 * wait is applied to the quotient and remainder, not to step, so that no
 * sum overflows: wait < n, so it adds at most one to the quotient. */
int sps_schedule_action(const sps_schedule_t *s, int64_t step) {
    if (sps_schedule_check(s) || step < 0) return SPS_EINVAL;
    if (step < s->skip_first) return SPS_ACTION_NONE;
    uint64_t x = (uint64_t)(step - s->skip_first);
    uint64_t n = (uint64_t)(s->wait + s->warmup + s->active);
    uint64_t q = x / n, m = x % n; /* x = q * n + m, m < n */
    if (s->skip_first_wait) {     /* x += wait */
        m += (uint64_t)s->wait;    /* < 2n < 2^64 */
        if (m >= n) {
            m -= n;
            q++;
        }
    }
    if (s->repeat > 0 && q >= (uint64_t)s->repeat) return SPS_ACTION_NONE;
    if (m < (uint64_t)s->wait) return SPS_ACTION_NONE;
    if (m < (uint64_t)(s->wait + s->warmup)) return SPS_ACTION_WARMUP;
    return m < n - 1 ? SPS_ACTION_RECORD : SPS_ACTION_RECORD_AND_SAVE;
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                     */
/* ------------------------------------------------------------------------ */

#define MARK_END (-1) /* a mark's step: the thread ended its step */

typedef struct mark {
    uint64_t ticks;
    int64_t step;    /* the step begun, or MARK_END */
    uint32_t thread; /* session thread index */
} mark_t;

static struct {
    uint64_t epoch;  /* session the state below belongs to, 0: none */
    int64_t counter; /* the step number last begun by sps_step(_begin) */
    mark_t *v;       /* marks in the order they were made (per thread: time) */
    size_t n, cap;
    int64_t *open;   /* by thread index: the step it has open, MARK_END */
    size_t nopen;
} g;

/* Under the lock: the state of the running session (reset on first use in
 * a new one; a large log of an old one is let go). */
static void sync_epoch(void) {
    if (g.epoch == sps__g.epoch) return;
    g.epoch = sps__g.epoch;
    g.counter = 0;
    g.n = 0;
    if (g.cap > 4096) {
        free(g.v);
        g.v = NULL;
        g.cap = 0;
    }
    for (size_t i = 0; i < g.nopen; i++) g.open[i] = MARK_END;
}

/* Under the lock: the oldest time sps_spans still reports, the start of
 * the pending period if there is one, else of the current period. */
static int64_t period_cutoff(void) {
    return sps__g.pending ? sps__g.pending->start_ns : sps__g.period_start_ns;
}

/* Under the lock: drops the marks no query can use again, keeping order:
 * a begin mark whose step ended before the period cutoff (a finalize
 * consumed it), and an end mark that ends no kept begin mark.  A thread's
 * last begin mark is always kept (its step may be open).  Bounds the log
 * on a long run that finalizes now and then. */
static void trim(void) {
    int64_t cut = period_cutoff();
    size_t nt = 0;
    for (size_t i = 0; i < g.n; i++)
        if (g.v[i].thread + 1 > nt) nt = g.v[i].thread + 1;
    size_t *nexti = malloc((g.n + 1) * sizeof *nexti); /* next mark, thread's */
    size_t *last = malloc((nt + 1) * sizeof *last);     /* per thread, scan */
    uint8_t *keep = malloc(g.n + 1);
    if (!nexti || !last || !keep) goto out; /* trimming is only an economy */
    for (size_t t = 0; t < nt; t++) last[t] = SIZE_MAX;
    for (size_t i = g.n; i-- > 0;) { /* backwards: the next mark of each */
        nexti[i] = last[g.v[i].thread];
        last[g.v[i].thread] = i;
    }
    for (size_t t = 0; t < nt; t++) last[t] = SIZE_MAX;
    for (size_t i = 0; i < g.n; i++) { /* forwards: last = the previous */
        const mark_t *m = &g.v[i];
        size_t prev = last[m->thread];
        if (m->step != MARK_END)
            keep[i] = nexti[i] == SIZE_MAX ||
                      sps__timemap_ns(&sps__g.tm, g.v[nexti[i]].ticks) >= cut;
        else
            keep[i] = prev != SIZE_MAX && g.v[prev].step != MARK_END && keep[prev];
        last[m->thread] = i;
    }
    size_t k = 0;
    for (size_t i = 0; i < g.n; i++)
        if (keep[i]) g.v[k++] = g.v[i];
    g.n = k;
out:
    free(nexti);
    free(last);
    free(keep);
}

/* Under the lock: appends a mark (growing, after trimming, when full). */
static int mark_add(mark_t m) {
    if (m.thread >= g.nopen) {
        size_t n = (size_t)m.thread * 2 + 8;
        int64_t *p = realloc(g.open, n * sizeof *p);
        if (!p) return SPS_ENOMEM;
        for (size_t i = g.nopen; i < n; i++) p[i] = MARK_END;
        g.open = p;
        g.nopen = n;
    }
    if (g.n == g.cap) {
        trim();
        if (!g.cap || g.n > g.cap / 2) { /* grow unless trimming freed half:
                                             amortised O(1) per mark */
            size_t cap = g.cap ? g.cap * 2 : 256;
            mark_t *p = realloc(g.v, cap * sizeof *p);
            if (!p) return SPS_ENOMEM;
            g.v = p;
            g.cap = cap;
        }
    }
    g.v[g.n++] = m;
    g.open[m.thread] = m.step;
    return 0;
}

enum { STEP_NEXT, STEP_SET, STEP_END };

/* The three public calls: one mark on the calling thread at one instant.
 * Returns the step begun (>= 0), 0 for an end, or a negative code. */
static int64_t step_mark(int kind, int64_t set_to) {
    int st = sps__state_load();
    if (st == SPS__AGGREGATE) return SPS_EMODE;
    if (st == SPS__OFF || sps__g.pid != getpid()) return SPS_ENOSESSION;
    int64_t ti = sps__thread_join(); /* outside the lock: it takes it */
    if (ti < 0) return ti;
    uint64_t now = sps__ticks();
    int64_t rc = 0;
    pthread_mutex_lock(&sps__g.lock);
    st = sps__state_load();
    if (st != SPS__EVENTS && st != SPS__EVENTS_EXTRA) {
        rc = st == SPS__AGGREGATE ? SPS_EMODE : SPS_ENOSESSION;
    } else if (sps_thread_current() != ti) {
        rc = SPS_ENOSESSION; /* a new session began meanwhile */
    } else {
        sync_epoch();
        uint32_t t = (uint32_t)ti;
        if (kind == STEP_END) {
            if (t < g.nopen && g.open[t] != MARK_END)
                rc = mark_add((mark_t){now, MARK_END, t});
        } else if (kind == STEP_NEXT && g.counter == INT64_MAX) {
            rc = SPS_ETOOBIG;
        } else {
            int64_t step = kind == STEP_SET ? set_to : g.counter + 1;
            rc = mark_add((mark_t){now, step, t});
            if (!rc) rc = g.counter = step;
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

int64_t sps_step(void) { return step_mark(STEP_NEXT, 0); }

int sps_step_begin(int64_t step) {
    if (step < 0) return SPS_EINVAL;
    int64_t rc = step_mark(STEP_SET, step);
    return rc < 0 ? (int)rc : 0;
}

int sps_step_end(void) {
    int64_t rc = step_mark(STEP_END, 0);
    return rc < 0 ? (int)rc : 0;
}

int sps__steps_window(int64_t from_ns, int64_t to_ns, sps__step_span_t **out,
                      size_t *n) {
    *out = NULL;
    *n = 0;
    if (g.epoch != sps__g.epoch || !g.n) return 0; /* no steps this session */
    int64_t cut = period_cutoff();
    size_t nt = 0;
    for (size_t i = 0; i < g.n; i++)
        if (g.v[i].thread + 1 > nt) nt = g.v[i].thread + 1;
    size_t *open = malloc(nt * sizeof *open); /* index of the begin mark + 1 */
    sps__step_span_t *v = malloc(g.n * sizeof *v); /* at most one per mark */
    if (!open || !v) {
        free(open);
        free(v);
        return SPS_ENOMEM;
    }
    memset(open, 0, nt * sizeof *open);
    size_t k = 0;
    for (size_t i = 0; i < g.n; i++) {
        const mark_t *m = &g.v[i];
        if (open[m->thread]) {
            const mark_t *b = &g.v[open[m->thread] - 1];
            int64_t t0 = sps__timemap_ns(&sps__g.tm, b->ticks);
            int64_t t1 = sps__timemap_ns(&sps__g.tm, m->ticks);
            if (t1 >= cut && t0 >= from_ns && t1 <= to_ns)
                v[k++] = (sps__step_span_t){t0, t1, b->step, m->thread, 0};
        }
        open[m->thread] = m->step == MARK_END ? 0 : i + 1;
    }
    free(open);
    if (!k) {
        free(v);
        return 0;
    }
    *out = v;
    *n = k;
    return 0;
}
