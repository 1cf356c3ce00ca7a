/* aggregate.c -- aggregate mode: statistics kept by the recording thread
 * itself, no events (cfg.aggregate).  Begin pushes a frame on the thread's
 * own stack; end folds it by the one rule (fold.c) into the thread's
 * accumulator of its region, in ticks, under a per-thread seqlock that
 * readers (sps__agg_read) retry.  Core calls these through sps__agg_ops,
 * which the api layer registers at setup. */
#include "model/model.h"

/* The accumulators of thread t, by region id. */
static sps__acc_t *accs(const sps__thr_t *t) { return (sps__acc_t *)t->agg_acc; }
static uint32_t naccs(const sps__thr_t *t) { return (uint32_t)(t->agg_bytes / sizeof(sps__acc_t)); }

static void agg_begin(sps_region_t r, uint64_t now) {
    sps__thr_t *t = sps__tls;
    if (SPS__UNLIKELY(t->epoch != sps__g.epoch || r >= naccs(t))) {
        /* room for every region known now and some more: few regrowths */
        size_t n = sps__registry_count() + 64;
        if (n <= r) n = (size_t)r + 64;
        if (!(t = sps__agg_thread(n * sizeof(sps__acc_t)))) return;
    }
    sps__frame_t f = {r, -1, now, 0, 0, -1, 0, 0, 0};
    if (SPS__UNLIKELY(t->agg_stack.n == t->agg_stack.cap)) {
        pthread_mutex_lock(&sps__g.lock); /* readers may scan the stack size */
        sps__stack_push(&t->agg_stack, f);
        pthread_mutex_unlock(&sps__g.lock);
        return;
    }
    t->agg_stack.f[t->agg_stack.n++] = f;
}

/* Folds one closed call into its thread's accumulator (seqlock: readers
 * retry while the sequence is odd). */
static void agg_close(void *ctx, const sps__frame_t *f, uint64_t end,
                      uint64_t self, size_t depth) {
    sps__thr_t *t = ctx;
    (void)depth;
    if (f->region >= naccs(t)) return;
    __atomic_store_n(&t->agg_seq, t->agg_seq + 1, __ATOMIC_RELAXED);
    atomic_thread_fence(memory_order_release);
    sps__acc_add(&accs(t)[f->region], f->start, end, self);
    atomic_thread_fence(memory_order_release);
    __atomic_store_n(&t->agg_seq, t->agg_seq + 1, __ATOMIC_RELAXED);
}

static void agg_end(sps_region_t r, uint64_t now) {
    sps__thr_t *t = sps__tls;
    if (t->epoch != sps__g.epoch) return;
    int misuse = sps__fold_end(&t->agg_stack, r, now, agg_close, t);
    if (misuse) __atomic_fetch_add(&sps__g.misuse, (uint64_t)misuse, __ATOMIC_RELAXED);
}

const sps__agg_ops_t sps__agg_fold_ops = {agg_begin, agg_end};

__attribute__((no_sanitize("thread")))
sps__acc_t sps__agg_read(const sps__thr_t *t, sps_region_t r) {
    sps__acc_t a = {0};
    if (r >= naccs(t)) return a;
    for (;;) {
        uint32_t s0 = __atomic_load_n(&t->agg_seq, __ATOMIC_ACQUIRE);
        a = accs(t)[r];
        atomic_thread_fence(memory_order_acquire);
        if (!(s0 & 1) && __atomic_load_n(&t->agg_seq, __ATOMIC_RELAXED) == s0) return a;
    }
}
