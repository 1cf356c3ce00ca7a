/* counters.c -- counter samples: (time, counter, value) appended to one
 * process-wide log under the session lock, taken out at each finalize.
 *
 * Counters are for values sampled now and then (memory in use, queue
 * depth), not per call: a sample costs a clock read and the lock, which is
 * why they do not go through the per-thread span buffers. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COUNTER_PERIOD_MAX (1u << 22) /* samples per period before dropping */

static sps_counter_sample_t *g_log;
static size_t g_n, g_cap;
static uint64_t g_dropped;

/* Samples are appended in lock order, which is time order but for the few
 * ns between a thread's clock read and its turn at the lock: an insertion
 * sort puts the nearly sorted log in order, stably. */
static void sort_by_time(sps_counter_sample_t *v, size_t n) {
    for (size_t i = 1; i < n; i++) {
        sps_counter_sample_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1].t_ns > x.t_ns) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

sps_region_t sps_counter_id(const char *name) {
    return name ? sps__registry_intern(name) : SPS_REGION_INVALID;
}

/* Under the lock: appends one sample, or counts it dropped. */
static void log_add(sps_counter_sample_t x) {
    if (g_n == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 256;
        sps_counter_sample_t *p = g_n < COUNTER_PERIOD_MAX ? realloc(g_log, cap * sizeof *p) : NULL;
        if (!p) {
            g_dropped++;
            return;
        }
        g_log = p;
        g_cap = cap;
    }
    g_log[g_n++] = x;
}

void sps_counter(sps_region_t c, double value) {
    if (c == SPS_REGION_INVALID || sps__state_load() == SPS__OFF) return;
    int64_t t = (int64_t)sps__mono_ns();
    pthread_mutex_lock(&sps__g.lock);
    if (sps__state_load() != SPS__OFF && sps__g.pid == getpid() && c < sps__registry_count())
        log_add((sps_counter_sample_t){t, value, c, 0});
    pthread_mutex_unlock(&sps__g.lock);
}

void sps__counters_take(sps__snap_t *s) {
    sort_by_time(g_log, g_n);
    if (s->counters) { /* a pending period's samples come first */
        sps_counter_sample_t *p = realloc(s->counters, (s->ncounters + g_n + 1) * sizeof *p);
        if (!p) return; /* keep them in the log for the next period */
        memcpy(p + s->ncounters, g_log, g_n * sizeof *p);
        s->counters = p;
        s->ncounters += g_n;
        free(g_log);
    } else {
        s->counters = g_log;
        s->ncounters = g_n;
    }
    s->counters_dropped += g_dropped;
    g_log = NULL;
    g_n = g_cap = 0;
    g_dropped = 0;
}

void sps__counters_reset(void) {
    free(g_log);
    g_log = NULL;
    g_n = g_cap = 0;
    g_dropped = 0;
}

int sps_counter_samples(int64_t from_ns, int64_t to_ns, sps_counter_sample_t **out,
                        size_t *n) {
    if (!out || !n) return SPS_EINVAL;
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&sps__g.lock);
    int rc = 0;
    if (sps__state_load() == SPS__OFF || sps__g.pid != getpid()) rc = SPS_ENOSESSION;
    /* A pending period (a finalize that could not write) still owns its
     * samples, as it owns its spans (which sps_spans returns): its samples
     * come first, then the log's. */
    const sps__snap_t *pend = rc ? NULL : sps__g.pending;
    const sps_counter_sample_t *src[2] = {pend ? pend->counters : NULL, g_log};
    size_t len[2] = {pend && pend->counters ? pend->ncounters : 0, g_n};
    size_t k = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; !rc && i < len[s]; i++)
            k += src[s][i].t_ns >= from_ns && src[s][i].t_ns <= to_ns;
    sps_counter_sample_t *v = rc ? NULL : malloc((k ? k : 1) * sizeof *v);
    if (!rc && !v) rc = SPS_ENOMEM;
    size_t m = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; !rc && i < len[s]; i++)
            if (src[s][i].t_ns >= from_ns && src[s][i].t_ns <= to_ns) v[m++] = src[s][i];
    pthread_mutex_unlock(&sps__g.lock);
    if (rc) return rc;
    sort_by_time(v, m);
    *out = v;
    *n = m;
    return 0;
}
