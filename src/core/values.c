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

void sps_mem_alloc(size_t bytes) {
    sps__memtls_t *m = &sps__mem_tls;
    m->alloc_bytes += bytes;
    m->allocs++;
    m->live += (int64_t)bytes;
    if (m->live > m->peak) m->peak = m->live;
}

void sps_mem_free(size_t bytes) {
    sps__memtls_t *m = &sps__mem_tls;
    m->free_bytes += bytes;
    m->frees++;
    m->live -= (int64_t)bytes;
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
}

/* ------------------------------------------------------------------------ */
/* The session's values                                                      */
/* ------------------------------------------------------------------------ */

static const char *const mem_names[SPS__MEM_NVALS] = {
    "alloc_bytes", "free_bytes", "allocs", "frees", "peak_bytes"};
static int g_track;          /* the session's cfg.track */
static uint32_t g_nperf;     /* counters after the memory values */

uint32_t sps__values_open(int track) {
    g_track = track;
    g_nperf = 0;
    uint32_t n = track & SPS_TRACK_MEMORY ? SPS__MEM_NVALS : 0;
    if (track & SPS_TRACK_COUNTERS) {
        g_nperf = sps__perf_session_open();
        if (g_nperf > SPS__VAL_MAX - n) g_nperf = SPS__VAL_MAX - n;
    }
    return n + g_nperf;
}

void sps__values_close(void) {
    if (g_track & SPS_TRACK_COUNTERS) sps__perf_session_close();
    g_track = 0;
    g_nperf = 0;
}

void sps__values_read(uint64_t *out) {
    if (g_track & SPS_TRACK_MEMORY) {
        sps__mem_read(out);
        out += SPS__MEM_NVALS;
    }
    if (g_nperf) sps__perf_read(out);
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
