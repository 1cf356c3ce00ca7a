/* values.c -- the values a session reads at every begin and end besides
 * the time (sps_config_t.track, docs/values.md): the thread's memory
 * counters and its perf_event counters.
 *
 * Memory: allocators credit the calling thread through sps_mem_alloc /
 * sps_mem_free, a few stores into thread-local counters (no lock, no
 * allocation: they run inside allocators).  The counters are cumulative,
 * so a span's own value is its end's reading minus its begin's, folded
 * like time by the model.  The peak cannot be had from two readings: the
 * thread keeps the highest live byte count since its last reading, and
 * each reading hands over by how much it rose above the live count of the
 * reading before (the "excess" of the segment between two events); the
 * model turns segments' excesses into each span's peak (model/values.c). */
#include "core/core.h"

__thread sps__memtls_t sps__mem_tls __attribute__((tls_model("initial-exec")));
int sps__mem_delta; /* core.h: memory-only sessions write delta groups */

/* Sends the calling thread's next record to the out-of-line path, where
 * sps__mem_record writes the changed readings with it: lowers t->end to
 * the write position, unless something else lowered it already (a
 * session's end: compare-and-swap from the chunk's true end). */
static void mem_lower(sps__thr_t *t) {
    if (t == &sps__dummy_thr || !t->true_end || t->mem_low) return;
    uint64_t *expect = t->true_end;
    uint64_t *low = atomic_load_explicit(&t->pos, memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&t->end, &expect, low, memory_order_relaxed,
                                                memory_order_relaxed))
        t->mem_low = low;
}

/* Raises t->end back to the chunk's true end if it is still where
 * mem_lower put it. */
static void mem_raise(sps__thr_t *t) {
    uint64_t *expect = t->mem_low;
    if (!expect) return;
    t->mem_low = NULL;
    atomic_compare_exchange_strong_explicit(&t->end, &expect, t->true_end, memory_order_relaxed,
                                            memory_order_relaxed);
}

static inline void mem_changed(sps__memtls_t *m) {
    m->dirty = 1;
    if (__atomic_load_n(&sps__mem_delta, __ATOMIC_RELAXED) && !sps__tls->mem_low)
        mem_lower(sps__tls);
}

void sps_mem_alloc(size_t bytes) {
    sps__memtls_t *m = &sps__mem_tls;
    m->alloc_bytes += bytes;
    m->allocs++;
    m->live += (int64_t)bytes;
    if (m->live > m->peak) m->peak = m->live;
    mem_changed(m);
}

void sps_mem_free(size_t bytes) {
    sps__memtls_t *m = &sps__mem_tls;
    m->free_bytes += bytes;
    m->frees++;
    m->live -= (int64_t)bytes;
    mem_changed(m);
}

int sps__mem_record(sps__thr_t *t, uint32_t payload, uint64_t now) {
    uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    uint32_t n = SPS__MEM_NVALS;
    /* end still where mem_lower put it: nobody else (a session's end or
     * start) sent the thread to the slow path meanwhile */
    if (!__atomic_load_n(&sps__mem_delta, __ATOMIC_RELAXED) ||
        atomic_load_explicit(&t->end, memory_order_relaxed) != t->mem_low ||
        sps__state_load() != SPS__EVENTS || (uint32_t)(now >> 32) != t->hi ||
        !t->true_end || p + n + 2 > t->true_end)
        return 0; /* the slow path, under the lock */
    p[0] = ((uint64_t)SPS__REC_VAL_TAG << 32) | n;
    sps__mem_read(p + 1);
    p[n + 1] = ((uint64_t)payload << 32) | (uint32_t)now;
    atomic_store_explicit(&t->pos, p + n + 2, memory_order_release);
    mem_raise(t);
    return 1;
}

void sps__mem_slow_done(sps__thr_t *t) {
    if (t == &sps__dummy_thr) return;
    mem_raise(t); /* also after delta groups were turned off */
    if (sps__mem_delta && sps__mem_tls.dirty) mem_lower(t); /* the library allocated meanwhile */
}

void sps_mem_thread_counts(sps_mem_counts_t *out) {
    const sps__memtls_t *m = &sps__mem_tls;
    *out = (sps_mem_counts_t){m->alloc_bytes, m->free_bytes, m->allocs, m->frees, m->live};
}

void sps__mem_read(uint64_t *out) {
    sps__memtls_t *m = &sps__mem_tls;
    int64_t excess = m->peak - m->live_at_read;
    out[SPS__MEM_ALLOC_BYTES] = m->alloc_bytes;
    out[SPS__MEM_FREE_BYTES] = m->free_bytes;
    out[SPS__MEM_ALLOCS] = m->allocs;
    out[SPS__MEM_FREES] = m->frees;
    out[SPS__MEM_EXCESS] = excess > 0 ? (uint64_t)excess : 0;
    m->live_at_read = m->peak = m->live;
    m->dirty = 0;
}

/* ------------------------------------------------------------------------ */
/* The session's values                                                      */
/* ------------------------------------------------------------------------ */

static const char *const mem_names[SPS__MEM_NVALS] = {
    "alloc_bytes", "free_bytes", "allocs", "frees", "peak_bytes"};
static int g_track;          /* the session's cfg.track */
static uint32_t g_nperf;     /* counters after the memory values */

/* g_track and g_nperf: written under the session lock, read by recording
 * threads without it (relaxed atomics) */
uint32_t sps__values_open(int track) {
    __atomic_store_n(&g_track, track, __ATOMIC_RELAXED);
    __atomic_store_n(&g_nperf, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sps__mem_delta, track == SPS_TRACK_MEMORY, __ATOMIC_RELAXED);
    uint32_t n = track & SPS_TRACK_MEMORY ? SPS__MEM_NVALS : 0;
    if (track & SPS_TRACK_COUNTERS) {
        uint32_t nperf = sps__perf_session_open();
        if (nperf > SPS__VAL_MAX - n) nperf = SPS__VAL_MAX - n;
        __atomic_store_n(&g_nperf, nperf, __ATOMIC_RELAXED);
    }
    return n + __atomic_load_n(&g_nperf, __ATOMIC_RELAXED);
}

void sps__values_close(void) {
    __atomic_store_n(&sps__mem_delta, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&g_track, __ATOMIC_RELAXED) & SPS_TRACK_COUNTERS)
        sps__perf_session_close();
    __atomic_store_n(&g_track, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_nperf, 0, __ATOMIC_RELAXED);
}

void sps__values_read(uint64_t *out) {
    if (__atomic_load_n(&g_track, __ATOMIC_RELAXED) & SPS_TRACK_MEMORY) {
        sps__mem_read(out);
        out += SPS__MEM_NVALS;
    }
    if (__atomic_load_n(&g_nperf, __ATOMIC_RELAXED)) sps__perf_read(out);
}

const char *sps__values_name(uint32_t i) {
    if (g_track & SPS_TRACK_MEMORY) {
        if (i < SPS__MEM_NVALS) return mem_names[i];
        i -= SPS__MEM_NVALS;
    }
    return i < g_nperf ? sps__perf_name(i) : NULL;
}

int sps__values_kind(uint32_t i) {
    return (g_track & SPS_TRACK_MEMORY) && i == SPS__MEM_EXCESS ? SPS__VAL_EXCESS : SPS__VAL_SUM;
}
