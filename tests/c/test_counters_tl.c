/* test_counters_tl.c -- counter samples through the timeline layer: ph "C"
 * events read from JSON (series naming, numeric args only, time order),
 * written back to JSON and to Perfetto and read again (same samples,
 * values bit-exact), kept by `spanscope convert` and by merge (on the
 * input's process, shifted like its spans), writers' validation and
 * hostile input.
 *
 * Leaves counters.pftrace and counters_rt.json in the test scratch
 * directory for tests/python/test_timeline_extras.py. */
#include "tl_extras.h"

#include <math.h>

/* A trace with spans and counters: one series per (pid, name, key). */
static const char *const COUNTERS_JSON =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"name\":\"work\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":100},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":20,\"args\":{\"mem\":1.5}},\n"
    "{\"ph\":\"C\",\"name\":\"gpu\",\"pid\":1,\"tid\":4,\"ts\":15,"
    "\"args\":{\"util\":50,\"temp\":70.25}},\n"
    "{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"ts\":30,\"args\":{\"value\":-3e-5}},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":2,\"ts\":40,\"args\":{\"mem\":2}},\n"
    "{\"ph\":\"C\",\"name\":\"bad\",\"pid\":1,\"ts\":50,"
    "\"args\":{\"x\":\"7\",\"y\":null,\"z\":[1],\"w\":{\"v\":1},\"t\":true}},\n"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":60.5,\"args\":{\"mem\":0.1}},\n"
    "{\"ph\":\"C\",\"name\":\"inf\",\"pid\":1,\"ts\":61,\"args\":{\"v\":1e999}},\n"
    "{\"args\":{\"late\":3},\"ph\":\"C\",\"name\":\"order\",\"pid\":1,\"ts\":5}\n"
    "],\"baseTimeNanoseconds\":1000}\n";

/* Reads COUNTERS_JSON: the samples, their series names and times. */
static void test_read(void **state) {
    (void)state;
    const char *p = tu_path("counters_in.json");
    tx_put(p, COUNTERS_JSON);
    tx_all_t a;
    tx_read(p, &a);
    assert_int_equal(a.nspans, 1);
    assert_int_equal(a.nc, 7);
    /* time order, file order on ties */
    assert_string_equal(a.c[0].name, "order");
    assert_int_equal(a.c[0].ts, 1000 + 5000);
    assert_string_equal(a.c[1].name, "gpu.util");
    assert_string_equal(a.c[2].name, "gpu.temp");
    assert_int_equal(a.c[2].ts, 16000);
    assert_true(a.c[2].value == 70.25);
    const tx_item_t *q = tx_find(a.c, a.nc, "q", 1);
    assert_non_null(q);
    assert_true(q->value == -3e-5);
    const tx_item_t *m2 = tx_find(a.c, a.nc, "mem", 2);
    assert_non_null(m2);
    assert_int_equal(m2->ts, 41000);
    assert_true(m2->value == 2.0);
    assert_int_equal(a.c[6].ts, 61500);
    assert_true(a.c[6].value == 0.1);
    assert_null(tx_find(a.c, a.nc, "bad", -1));
    assert_null(tx_find(a.c, a.nc, "inf", -1));
}

/* JSON -> JSON, JSON -> Perfetto -> JSON, and `spanscope convert`: the
 * same samples. */
static void test_roundtrips(void **state) {
    (void)state;
    const char *in = tu_path("counters_in.json");
    tx_put(in, COUNTERS_JSON);
    tx_all_t a, b;
    tx_read(in, &a);
    tx_convert(in, tu_path("counters_rt.json"));
    tx_read(tu_path("counters_rt.json"), &b);
    tx_same(&a, &b, 1);
    tx_convert(in, tu_path("counters.pftrace"));
    tx_read(tu_path("counters.pftrace"), &b);
    tx_same(&a, &b, 1);
    assert_int_equal(b.nspans, 1);
    tx_convert(tu_path("counters.pftrace"), tu_path("counters_rt2.json"));
    tx_read(tu_path("counters_rt2.json"), &b);
    tx_same(&a, &b, 1);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", getenv("SPS_CLI"),
                               tu_path("counters_in.json"),
                               tu_path("counters_cli.pftrace")), 0);
    tx_read(tu_path("counters_cli.pftrace"), &b);
    tx_same(&a, &b, 1);
}

/* The JSON writer's text for a sample: the torch/Chrome counter form. */
static void test_json_text(void **state) {
    (void)state;
    const char *names[] = {"mem", "w"};
    sps__tl_proc_t proc = {3, -1, "p"};
    sps__tl_thread_t thr = {3, 1, ""};
    sps__tl_counter_t c[] = {{0, 0, 2500, 0.1}, {0, 0, 3000, NAN},
                             {0, 0, 3500, INFINITY}, {0, 0, 4000, -2}};
    sps__tl_header_t h = {0};
    h.nnames = 2; h.names = names; h.nprocs = 1; h.procs = &proc;
    h.nthreads = 1; h.threads = &thr; h.base_ns = 1000; h.rank = -1;
    h.ncounters = 4; h.counters = c;
    const char *p = tu_path("counters_text.json");
    sps__tlw_t *w;
    assert_int_equal(sps__tlw_open(&w, p, SPS__TL_JSON, &h), 0);
    assert_int_equal(sps__tlw_close(w), 0);
    FILE *f = fopen(p, "rb");
    char buf[4096] = {0};
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(buf, "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":3,"
                                "\"ts\":1.500,\"args\":{\"mem\":0.10000000000000001}}"));
    assert_non_null(strstr(buf, "\"ts\":3.000,\"args\":{\"mem\":-2}}"));
    assert_null(strstr(buf, "nan"));
    assert_null(strstr(buf, "inf"));
    tx_all_t a;
    tx_read(p, &a);
    assert_int_equal(a.nc, 2);
    /* Perfetto skips them too */
    assert_int_equal(sps__tlw_open(&w, tu_path("counters_text.pftrace"),
                                   SPS__TL_PFTRACE, &h), 0);
    assert_int_equal(sps__tlw_close(w), 0);
    tx_read(tu_path("counters_text.pftrace"), &a);
    assert_int_equal(a.nc, 2);
}

/* Writers refuse counters that name no name or process. */
static void test_writer_einval(void **state) {
    (void)state;
    const char *names[] = {"mem"};
    sps__tl_proc_t proc = {3, -1, "p"};
    sps__tl_counter_t bad[] = {{1, 0, 0, 1}, {0, 1, 0, 1}};
    for (int k = 0; k < 2; k++)
        for (int fmt = 0; fmt < 2; fmt++) {
            sps__tl_header_t h = {0};
            h.nnames = 1; h.names = names; h.nprocs = 1; h.procs = &proc;
            h.rank = -1; h.ncounters = 1; h.counters = &bad[k];
            sps__tlw_t *w = NULL;
            assert_int_equal(sps__tlw_open(&w, tu_path("counters_bad.out"),
                                           fmt ? SPS__TL_PFTRACE : SPS__TL_JSON, &h),
                             SPS_EINVAL);
            assert_null(w);
        }
    sps__tl_header_t h = {0};
    h.ncounters = 1; /* counters NULL */
    sps__tlw_t *w = NULL;
    assert_int_equal(sps__tlw_open(&w, tu_path("counters_bad.json"), SPS__TL_JSON, &h),
                     SPS_EINVAL);
}

/* Merge: each input's samples on its process, under their names. */
static void test_merge(void **state) {
    (void)state;
    const char *a = tu_path("counters_m0.json"), *b = tu_path("counters_m1.json");
    tx_put(a, "{\"traceEvents\":["
              "{\"ph\":\"X\",\"name\":\"w\",\"pid\":7,\"tid\":1,\"ts\":1,\"dur\":5},"
              "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":7,\"ts\":2,\"args\":{\"mem\":1}}],"
              "\"distributedInfo\":{\"rank\":0,\"world_size\":2}}");
    tx_put(b, "{\"traceEvents\":["
              "{\"ph\":\"X\",\"name\":\"w\",\"pid\":9,\"tid\":1,\"ts\":1,\"dur\":5},"
              "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":9,\"ts\":3,\"args\":{\"mem\":2}},"
              "{\"ph\":\"C\",\"name\":\"io\",\"pid\":9,\"ts\":4,\"args\":{\"io\":5}}],"
              "\"distributedInfo\":{\"rank\":1,\"world_size\":2}}");
    const char *outs[] = {"counters_merged.json", "counters_merged.pftrace"};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tu_system("\"%s\" merge -o '%s' '%s' '%s' 2>/dev/null",
                                   getenv("SPS_CLI"), tu_path(outs[k]), b, a), 0);
        tx_all_t m;
        tx_read(tu_path(outs[k]), &m);
        assert_int_equal(m.nc, 3);
        const tx_item_t *x = tx_find(m.c, m.nc, "mem", 0);
        assert_non_null(x);
        assert_true(x->value == 1);
        assert_int_equal(x->ts, 2000);
        x = tx_find(m.c, m.nc, "mem", 1);
        assert_non_null(x);
        assert_true(x->value == 2);
        assert_non_null(tx_find(m.c, m.nc, "io", 1));
    }
}

/* Hostile counters: the reader never fails on them and keeps only what
 * is usable; truncation at every byte gives a clean result or error. */
static void test_hostile(void **state) {
    (void)state;
    const char *p = tu_path("counters_hostile.json");
    tx_put(p, "[{\"ph\":\"C\",\"name\":\"a\",\"pid\":1,\"args\":{\"v\":1}},"
              "{\"ph\":\"C\",\"name\":\"b\",\"pid\":\"x\",\"ts\":1,\"args\":{\"v\":1}},"
              "{\"ph\":\"C\",\"name\":\"c\",\"pid\":1,\"ts\":1e300,\"args\":{\"v\":1}},"
              "{\"ph\":\"C\",\"name\":\"d\",\"pid\":1,\"ts\":1,\"args\":[1,2]},"
              "{\"ph\":\"C\",\"name\":\"e\",\"pid\":1,\"ts\":1,\"args\":{\"v\":-0}},"
              "{\"ph\":\"C\",\"pid\":1,\"ts\":1,\"args\":{\"v\":"
              "1.00000000000000000000000000000000000000000000000000000000000000000001}},"
              "{\"ph\":\"C\",\"name\":\"f\",\"pid\":1,\"ts\":1}]");
    tx_all_t a;
    tx_read(p, &a);
    assert_int_equal(a.nc, 2);
    assert_string_equal(a.c[0].name, "e");
    assert_string_equal(a.c[1].name, "");
    assert_true(a.c[1].value == 1.0);
    /* truncations of a valid file: never a crash */
    size_t n = strlen(COUNTERS_JSON);
    char *t = malloc(n + 1);
    for (size_t k = 0; k < n; k++) {
        memcpy(t, COUNTERS_JSON, k);
        t[k] = 0;
        tx_put(p, t);
        sps__tlr_t *r;
        if (sps__tlr_open(&r, p, SPS__TL_JSON) == 0) sps__tlr_free(r);
    }
    free(t);
}

/* A Perfetto file with counters, cut at every byte: a clean error or a
 * header whose counters keep the contract. */
static void test_pftrace_truncated(void **state) {
    (void)state;
    const char *in = tu_path("counters_in.json");
    tx_put(in, COUNTERS_JSON);
    tx_convert(in, tu_path("counters_cut_src.pftrace"));
    FILE *f = fopen(tu_path("counters_cut_src.pftrace"), "rb");
    unsigned char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof buf);
    const char *p = tu_path("counters_cut.pftrace");
    for (size_t k = 0; k < n; k++) {
        for (int flip = 0; flip < 2; flip++) {
            unsigned char b2[8192];
            memcpy(b2, buf, n);
            if (flip) b2[k] ^= 0x5A;
            f = fopen(p, "wb");
            fwrite(b2, 1, flip ? n : k, f);
            fclose(f);
            sps__tlr_t *r;
            if (sps__tlr_open(&r, p, SPS__TL_PFTRACE)) continue;
            const sps__tl_header_t *h = sps__tlr_header(r);
            for (size_t i = 0; i < h->ncounters; i++)
                assert_true(h->counters[i].name < h->nnames &&
                            h->counters[i].proc < h->nprocs);
            for (size_t i = 0; i < h->nflows; i++)
                assert_true(h->flows[i].name < h->nnames &&
                            h->flows[i].thread < h->nthreads);
            sps__tlr_free(r);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_roundtrips),
        cmocka_unit_test(test_json_text),
        cmocka_unit_test(test_writer_einval),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_pftrace_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
