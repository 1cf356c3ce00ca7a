/* emit.c -- the emitters' table (emit.h): integrations told of every
 * region begin and end while they are on, session or not (issue 38: NVTX
 * ranges, ITT tasks).
 *
 * The table holds at most SPS__EMIT_MAX ops.  A slot is written once,
 * under the session lock, before its bit in sps__emit_mask is published
 * (release); the hot path reads the mask (acquire) and then the slots of
 * its bits, without a lock.  Slots are never cleared (ops live as long as
 * the process), so a thread that read an old mask calls ops that are
 * still valid.
 *
 * The hot path learns that an emitter is on from sps__active, which
 * sps__state_store (core.h) sets to SPS__EMITTING while the mask is not
 * empty: sps_begin's inline check then calls sps__begin even without a
 * session, and sps__begin's one compare with SPS__EVENTS sends it to the
 * out-of-line path (buffer.c, record_other), which calls
 * sps__emit_begin, records as the session's state says, and calls
 * sps__emit_end.  With the mask empty nothing changed: the fast path is
 * as before.  An emitter that finds it has nothing to do (NVTX with no
 * tool attached) says so with sps__emit_idle: it stays on for
 * sps_emit_active, but leaves the hot mask, so the hot path is the fast
 * one again.  sps__active is written only under the session lock (and in
 * a fork's child), so the mask is too, here.
 *
 * The public face (spanscope.h: sps_emit_set, sps_emit_active, and
 * sps_config_t.emit applied by the session) reaches the integrations by
 * their public bit: each one names its ops with sps__emit_provide from a
 * constructor, so core never names an integration. */
#include "core/core.h"
#include "core/emit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

unsigned sps__emit_mask; /* core.h: bit i = g_ops[i] on and not idle: the
                            emitters the hot path calls */

static const sps__emit_ops_t *g_ops[SPS__EMIT_MAX]; /* registered, in order */
static unsigned g_nops;                              /* under sps__g.lock */
static unsigned g_on;   /* bit i: g_ops[i] on (what sps__emit_on answers) */
static unsigned g_idle; /* bit i: g_ops[i] has nothing to do (sps__emit_idle) */

/* Under sps__g.lock: publishes the hot mask and sps__active with it. */
static void publish(void) {
    __atomic_store_n(&sps__emit_mask, g_on & ~g_idle, __ATOMIC_RELEASE);
    sps__state_store(sps__state_load()); /* sps__active follows the mask */
}

/* The integrations this build has, by public bit index (SPS_EMIT_*). */
#define EMIT_BITS 8
static const sps__emit_ops_t *g_by_bit[EMIT_BITS];

/* Every public bit this header version names. */
#define EMIT_KNOWN (SPS_EMIT_NVTX | SPS_EMIT_ITT)

int sps__emit_set(const sps__emit_ops_t *ops, int on) {
    if (!ops || !ops->begin || !ops->end) return SPS_EINVAL;
    sps__process_init();
    pthread_mutex_lock(&sps__g.lock);
    unsigned i = 0;
    while (i < g_nops && g_ops[i] != ops) i++;
    int rc = 0;
    if (i == g_nops) {
        if (!on) goto out; /* never on: nothing to turn off */
        if (g_nops == SPS__EMIT_MAX) {
            rc = SPS_ENOMEM;
            goto out;
        }
        /* the slot before its bit: the mask's release store publishes it */
        __atomic_store_n(&g_ops[i], ops, __ATOMIC_RELEASE);
        g_nops++;
    }
    __atomic_store_n(&g_on, on ? g_on | (1u << i) : g_on & ~(1u << i), __ATOMIC_RELEASE);
    publish();
out:
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

void sps__emit_idle(const sps__emit_ops_t *ops) {
    pthread_mutex_lock(&sps__g.lock);
    for (unsigned i = 0; i < g_nops; i++)
        if (g_ops[i] == ops && !(g_idle & (1u << i))) {
            g_idle |= 1u << i;
            publish();
        }
    pthread_mutex_unlock(&sps__g.lock);
}

int sps__emit_on(const sps__emit_ops_t *ops) {
    unsigned m = __atomic_load_n(&g_on, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < SPS__EMIT_MAX; i++)
        if (m & (1u << i) && __atomic_load_n(&g_ops[i], __ATOMIC_RELAXED) == ops) return 1;
    return 0;
}

/* The out-of-line path, on the recording thread: begins in registration
 * order, ends in the reverse order, so that the emitters' ranges nest. */
/* The thread's label: a heap buffer made at its first sps_emit_label (a
 * pointer in TLS, not the buffer: a library dlopen'ed into a process has
 * only glibc's small surplus of static TLS), freed at the thread's exit. */
#define LABEL_CAP 256
static __thread char *t_label;
static pthread_key_t g_label_key;
static pthread_once_t g_label_once = PTHREAD_ONCE_INIT;

static void label_key_make(void) {
    (void)pthread_key_create(&g_label_key, free);
}

void sps_emit_label(const char *text) {
    if (!text || !*text) {
        if (t_label) t_label[0] = 0;
        return;
    }
    if (!t_label) {
        pthread_once(&g_label_once, label_key_make);
        if (!(t_label = malloc(LABEL_CAP))) return; /* no label: the name alone */
        pthread_setspecific(g_label_key, t_label);
    }
    size_t n = strnlen(text, LABEL_CAP - 1);
    memcpy(t_label, text, n);
    t_label[n] = 0;
}

const char *sps__emit_label(void) {
    return t_label && t_label[0] ? t_label : NULL;
}

/* The label is the next begin's only: taken here whatever the emitters
 * did with it. */
void sps__emit_begin(sps_region_t r) {
    unsigned m = __atomic_load_n(&sps__emit_mask, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; m; i++, m >>= 1)
        if (m & 1u) __atomic_load_n(&g_ops[i], __ATOMIC_RELAXED)->begin(r);
    if (t_label) t_label[0] = 0;
}

void sps__emit_end(sps_region_t r) {
    unsigned m = __atomic_load_n(&sps__emit_mask, __ATOMIC_ACQUIRE);
    for (int i = SPS__EMIT_MAX - 1; i >= 0; i--)
        if (m & (1u << i)) __atomic_load_n(&g_ops[i], __ATOMIC_RELAXED)->end(r);
}

/* ------------------------------------------------------------------------ */
/* The integrations by public bit                                            */
/* ------------------------------------------------------------------------ */

static int bit_index(unsigned bit) {
    if (!bit || bit & (bit - 1)) return -1;
    int i = __builtin_ctz(bit);
    return i < EMIT_BITS ? i : -1;
}

void sps__emit_provide(unsigned bit, const sps__emit_ops_t *ops) {
    int i = bit_index(bit);
    if (i >= 0) __atomic_store_n(&g_by_bit[i], ops, __ATOMIC_RELEASE);
}

int sps__emit_check(unsigned what) {
    if (what & ~(unsigned)EMIT_KNOWN) return SPS_EINVAL;
    for (int i = 0; i < EMIT_BITS; i++)
        if (what & (1u << i) && !__atomic_load_n(&g_by_bit[i], __ATOMIC_ACQUIRE))
            return SPS_ENOTSUP;
    return 0;
}

int sps_emit_set(unsigned what, int on) {
    if (!what) return SPS_EINVAL;
    int rc = sps__emit_check(what); /* nothing changes unless all can */
    if (rc) return rc;
    for (int i = 0; i < EMIT_BITS; i++) {
        if (!(what & (1u << i))) continue;
        rc = sps__emit_set(__atomic_load_n(&g_by_bit[i], __ATOMIC_ACQUIRE), on);
        if (rc) return rc; /* SPS_ENOMEM: the table is full (not with these) */
    }
    return 0;
}

unsigned sps_emit_active(void) {
    unsigned out = 0;
    for (int i = 0; i < EMIT_BITS; i++) {
        const sps__emit_ops_t *ops = __atomic_load_n(&g_by_bit[i], __ATOMIC_ACQUIRE);
        if (ops && sps__emit_on(ops)) out |= 1u << i;
    }
    return out;
}

unsigned sps_emit_available(void) {
    unsigned out = 0;
    for (int i = 0; i < EMIT_BITS; i++)
        if (__atomic_load_n(&g_by_bit[i], __ATOMIC_ACQUIRE)) out |= 1u << i;
    return out;
}
