/* test_pack.c -- the spill file's record codec (src/core/pack.c): every
 * stream of 64-bit words round-trips bit-exactly (regular loops, nested
 * loops, random timestamps, huge gaps, HI records, every region id, pure
 * noise, every length around the frame and group sizes); regular loops
 * pack to well under 2 bytes per call; the worst case never exceeds the
 * documented bound; truncated or corrupt input gives SPS_EIO and never a
 * read past its end (ASan). */
#include "testutil.h"
#include "sps_int.h"

#include <stdlib.h>
#include <string.h>

/* xorshift64*: reproducible noise */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}

static uint64_t rec_of(uint32_t region, int end, uint64_t ticks) {
    return ((uint64_t)(region << 1 | (uint32_t)end) << 32) | (uint32_t)ticks;
}

/* A stream as the hot path writes it: a HI record first and whenever the
 * upper half of the timestamp changes. */
typedef struct stream {
    uint64_t *w;
    uint32_t n, cap;
    uint32_t hi;
} stream_t;

static void st_init(stream_t *s, uint32_t cap, uint64_t t0) {
    s->w = malloc(cap * sizeof *s->w);
    assert_non_null(s->w);
    s->cap = cap;
    s->hi = (uint32_t)(t0 >> 32);
    s->w[0] = sps__rec_hi(s->hi);
    s->n = 1;
}

static int st_add(stream_t *s, uint32_t region, int end, uint64_t ticks) {
    if (s->n + 2 > s->cap) return 0;
    if ((uint32_t)(ticks >> 32) != s->hi) {
        s->hi = (uint32_t)(ticks >> 32);
        s->w[s->n++] = sps__rec_hi(s->hi);
    }
    s->w[s->n++] = rec_of(region, end, ticks);
    return 1;
}

/* Packs w[0, n), checks the size bound and the exact round trip; returns
 * the packed bytes. */
static size_t roundtrip(const uint64_t *w, uint32_t n) {
    size_t bound = sps__pack_bound(n);
    uint8_t *buf = malloc(bound);
    uint64_t *back = malloc((n ? n : 1) * sizeof *back);
    assert_non_null(buf);
    assert_non_null(back);
    size_t len = sps__pack(w, n, buf);
    size_t frames = (n + SPS__PACK_FRAME - 1) / SPS__PACK_FRAME;
    assert_true(len <= bound);
    /* never more than raw records + a frame header each + the chunk header */
    assert_true(len <= 8 * (size_t)n + 4 * frames + SPS__PACK_HDR);
    /* exactly the bytes the decoder may read: a copy of that size */
    uint8_t *exact = malloc(len);
    assert_non_null(exact);
    memcpy(exact, buf, len);
    memset(back, 0xA5, n * sizeof *back);
    assert_int_equal(sps__unpack(exact, len, back, n), 0);
    for (uint32_t i = 0; i < n; i++)
        if (back[i] != w[i])
            fail_msg("record %u of %u: got %016llx, packed %016llx", i, n,
                     (unsigned long long)back[i], (unsigned long long)w[i]);
    free(exact);
    free(back);
    free(buf);
    return len;
}

/* ------------------------------------------------------------------------ */

/* A begin/end loop on this VM's TSC (steps of 26 ticks, deltas 1, 25, 26)
 * and on a clean counter: about a third of a byte per record. */
static void test_regular_loop(void **state) {
    (void)state;
    const uint32_t n = 8192;
    stream_t s;
    st_init(&s, n, 0x1234500000000ull);
    static const uint32_t pat[6] = {26, 26, 26, 26, 1, 25};
    uint64_t t = 0x1234500000000ull;
    for (uint32_t i = 0; st_add(&s, 7, (int)(i & 1), t); i++) t += pat[i % 6];
    size_t len = roundtrip(s.w, s.n);
    double per_call = 2.0 * (double)len / s.n;
    if (per_call > 0.8) fail_msg("regular loop: %.3f B per call", per_call);
    free(s.w);
    st_init(&s, n, 1000); /* every delta the same: palette width 0 */
    t = 1000;
    for (uint32_t i = 0; st_add(&s, 3, (int)(i & 1), t); i++) t += 40;
    len = roundtrip(s.w, s.n);
    if (2.0 * (double)len / s.n > 0.2) fail_msg("constant deltas: %zu bytes", len);
    free(s.w);
}

/* Jittery deltas (a cycle-exact TSC): residual mode, still < 2 B/call. */
static void test_jitter(void **state) {
    (void)state;
    stream_t s;
    st_init(&s, 8192, 5000);
    uint64_t t = 5000;
    for (uint32_t i = 0; st_add(&s, 11, (int)(i & 1), t); i++)
        t += (i & 1 ? 60 : 35) + (rnd() % 9);
    size_t len = roundtrip(s.w, s.n);
    double per_call = 2.0 * (double)len / s.n;
    if (per_call > 2.0) fail_msg("jittery loop: %.3f B per call", per_call);
    free(s.w);
}

/* Nested loops of every period 2..20 (past the longest period tried, 16:
 * tag exceptions) and a 3-level tree with varied work. */
static void test_nested(void **state) {
    (void)state;
    for (uint32_t depth = 1; depth <= 10; depth++) {
        stream_t s;
        st_init(&s, 6000, 77);
        uint64_t t = 77;
        int ok = 1;
        while (ok) {
            for (uint32_t d = 0; d < depth && ok; d++) ok = st_add(&s, 100 + d, 0, t += 26);
            for (uint32_t d = depth; d-- > 0 && ok;) ok = st_add(&s, 100 + d, 1, t += 26);
        }
        size_t len = roundtrip(s.w, s.n);
        if (depth <= 8 && 2.0 * (double)len / s.n > 1.0)
            fail_msg("nest of depth %u: %.3f B per call", depth, 2.0 * (double)len / s.n);
        free(s.w);
    }
    stream_t s;
    st_init(&s, 20000, 1);
    uint64_t t = 1;
    for (int ok = 1; ok;) {
        ok = st_add(&s, 1, 0, t += 26);
        uint32_t inner = (uint32_t)(rnd() % 5);
        for (uint32_t k = 0; k < inner && ok; k++) {
            ok = st_add(&s, 2, 0, t += 26 * (rnd() % 4)) && st_add(&s, 3, 0, t += 1) &&
                 st_add(&s, 3, 1, t += 25 + rnd() % 300) && st_add(&s, 2, 1, t += 26);
        }
        if (ok) ok = st_add(&s, 1, 1, t += 26);
    }
    roundtrip(s.w, s.n);
    free(s.w);
}

/* Random regions (every id up to SPS__REGION_MAX), random end flags,
 * random and huge gaps (crossing the upper half: HI records), time going
 * backwards. */
static void test_adversarial_streams(void **state) {
    (void)state;
    stream_t s;
    st_init(&s, 50000, 0xFFFFFFF0ull);
    uint64_t t = 0xFFFFFFF0ull;
    for (uint32_t i = 0; ; i++) {
        uint32_t region = (uint32_t)(rnd() % 4 == 0 ? SPS__REGION_MAX - rnd() % 3
                                                    : rnd() % (SPS__REGION_MAX + 1u));
        uint64_t gap;
        switch (rnd() % 6) {
        case 0: gap = rnd() >> 28; break;          /* up to 2^36: HI records */
        case 1: gap = 0xFFFFFFFFull; break;        /* the low half wraps exactly */
        case 2: gap = 0; break;
        case 3: gap = (uint64_t)-(int64_t)(rnd() % 1000); break; /* backwards */
        default: gap = rnd() % 100000; break;
        }
        t += gap;
        if (!st_add(&s, region, (int)(rnd() & 1), t)) break;
    }
    roundtrip(s.w, s.n);
    /* every prefix length around frames and groups */
    const uint32_t lens[] = {1, 2, 3, 17, 31, 32, 33, 34, 63, 64, 65, 2047, 2048,
                             2049, 2050, 4095, 4096, 4097, 8191, 8192, 8193};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) roundtrip(s.w, lens[k]);
    free(s.w);
}

/* Not records at all: random words, all-HI words, zeros, a stream whose
 * every word is a HI record but the last. */
static void test_noise(void **state) {
    (void)state;
    const uint32_t n = 10000;
    uint64_t *w = malloc(n * sizeof *w);
    assert_non_null(w);
    for (uint32_t i = 0; i < n; i++) w[i] = rnd();
    size_t len = roundtrip(w, n);
    assert_true(len <= 8 * (size_t)n + 4 * 5 + SPS__PACK_HDR); /* stored raw */
    for (uint32_t i = 0; i < n; i++) w[i] = sps__rec_hi((uint32_t)rnd());
    roundtrip(w, n);
    w[n - 1] = rec_of(5, 1, 12345);
    roundtrip(w, n);
    memset(w, 0, n * sizeof *w);
    roundtrip(w, n);
    for (uint32_t i = 0; i < n; i++) /* tags random, times regular */
        w[i] = (rnd() & 0xFFFFFFFF00000000ull) | (uint32_t)(i * 26u);
    roundtrip(w, n);
    for (uint32_t i = 0; i < n; i++) /* tags regular, times random */
        w[i] = ((uint64_t)(6u | (i & 1u)) << 32) | (uint32_t)rnd();
    roundtrip(w, n);
    free(w);
}

/* Truncations and flipped bytes: SPS_EIO or some output, never a crash or
 * a read past the end (each try decodes from an exactly sized copy). */
static void test_corrupt(void **state) {
    (void)state;
    stream_t s;
    st_init(&s, 3000, 99);
    uint64_t t = 99;
    for (uint32_t i = 0; st_add(&s, 9 + (i % 7 == 0), (int)(i & 1), t); i++)
        t += i % 97 ? 26 : 100000;
    uint8_t *buf = malloc(sps__pack_bound(s.n));
    uint64_t *back = malloc(s.n * sizeof *back);
    assert_non_null(buf);
    assert_non_null(back);
    size_t len = sps__pack(s.w, s.n, buf);
    for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 37) {
        uint8_t *c = malloc(cut ? cut : 1);
        memcpy(c, buf, cut);
        assert_int_equal(sps__unpack(c, cut, back, s.n), SPS_EIO);
        free(c);
    }
    uint8_t *c = malloc(len);
    for (int k = 0; k < 3000; k++) {
        memcpy(c, buf, len);
        for (int f = 0; f < 1 + k % 4; f++) c[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        int rc = sps__unpack(c, len, back, s.n);
        assert_true(rc == 0 || rc == SPS_EIO);
    }
    /* a header that lies about the record count */
    memcpy(c, buf, len);
    assert_int_equal(sps__unpack(c, len, back, s.n - 1), SPS_EIO);
    free(c);
    free(back);
    free(buf);
    free(s.w);
}

/* What the hot path really wrote: a recording's chunks round-trip. */
static void test_recorded_chunks(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.overflow = SPS_OVERFLOW_GROW;
    cfg.chunk_size = 65536;
    cfg.memory_limit = 64u << 20;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t a = sps_region("pack.a"), b = sps_region("pack.b");
    for (int i = 0; i < 300000; i++) {
        sps_begin(a);
        if (i % 10 == 0) {
            sps_begin(b);
            sps_end(b);
        }
        sps_end(a);
    }
    pthread_mutex_lock(&sps__g.lock);
    size_t nchunks = 0;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        for (sps__chunk_t *c = t->head; c; c = c->next, nchunks++) roundtrip(c->rec, c->n);
    pthread_mutex_unlock(&sps__g.lock);
    assert_true(nchunks > 10);
    sps_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_loop),   cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_nested),         cmocka_unit_test(test_adversarial_streams),
        cmocka_unit_test(test_noise),          cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_recorded_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
