/* test_flows.c -- flow points (ph "s"/"t"/"f") through the timeline
 * layer: read from JSON (numeric, string and bind ids, cat as name,
 * threads without spans, bp "e"), written back to JSON and to Perfetto
 * (instants with flow_ids / terminating_flow_ids) and read again, merged
 * with ids remapped per rank, writers' validation and hostile input.
 *
 * Leaves flows.pftrace in the test scratch directory for
 * tests/python/test_timeline_extras.py. */
#include "tl_extras.h"

/* A torch-like trace: an ac2g flow from an op to a kernel, a string-id
 * flow with a step on a thread without spans, a bind_id flow on a process
 * without spans, a uint64 id and a hashed one, and unusable events. */
static const char *const FLOWS_JSON =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel\",\"pid\":1,\"tid\":7,\"ts\":200,\"dur\":50},\n"
    "{\"ph\":\"s\",\"id\":42,\"pid\":1,\"tid\":1,\"ts\":20,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
    "{\"ph\":\"f\",\"id\":42,\"pid\":1,\"tid\":7,\"ts\":200,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
    "{\"ph\":\"s\",\"id\":\"0xabc\",\"pid\":1,\"tid\":1,\"ts\":30,\"cat\":\"fwdbwd\"},\n"
    "{\"ph\":\"t\",\"id\":\"0xabc\",\"pid\":1,\"tid\":3,\"ts\":40,\"cat\":\"fwdbwd\"},\n"
    "{\"ph\":\"f\",\"id\":\"0xabc\",\"pid\":1,\"tid\":1,\"ts\":45,\"cat\":\"fwdbwd\",\"bp\":\"e\"},\n"
    "{\"ph\":\"s\",\"bind_id\":99,\"pid\":5,\"tid\":9,\"ts\":50,\"name\":\"x\"},\n"
    "{\"ph\":\"s\",\"id\":18446744073709551615,\"pid\":1,\"tid\":1,\"ts\":60,\"name\":\"big\"},\n"
    "{\"ph\":\"s\",\"id\":1e400,\"pid\":1,\"tid\":1,\"ts\":61,\"name\":\"huge\"},\n"
    "{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":62,\"name\":\"noid\"},\n"
    "{\"ph\":\"s\",\"id\":1,\"pid\":\"x\",\"tid\":1,\"ts\":63},\n"
    "{\"ph\":\"s\",\"id\":{\"a\":1},\"pid\":1,\"tid\":1,\"ts\":64},\n"
    "{\"ph\":\"f\",\"id\":1,\"pid\":1,\"tid\":1}\n"
    "],\"baseTimeNanoseconds\":7}\n";

/* Reads FLOWS_JSON: ids, phases, names, threads and times. */
static void test_read(void **state) {
    (void)state;
    const char *p = tu_path("flows_in.json");
    tx_put(p, FLOWS_JSON);
    tx_all_t a;
    tx_read(p, &a);
    assert_int_equal(a.nspans, 2);
    assert_int_equal(a.nf, 8);
    assert_string_equal(a.f[0].name, "ac2g");
    assert_true(a.f[0].id == 42);
    assert_int_equal(a.f[0].phase, 's');
    assert_int_equal(a.f[0].ts, 20007);
    assert_int_equal(a.f[0].enclosing, 0);
    /* cat as the name, one hashed id for the string, a step on tid 3 */
    assert_string_equal(a.f[1].name, "fwdbwd");
    assert_true(a.f[1].id == a.f[2].id && a.f[2].id == a.f[3].id);
    assert_int_equal(a.f[2].phase, 't');
    assert_int_equal(a.f[2].tid, 3);
    assert_int_equal(a.f[3].enclosing, 1);
    /* bind_id, on a process that has no spans */
    assert_true(a.f[4].id == 99);
    assert_int_equal(a.f[4].pid, 5);
    assert_int_equal(a.f[4].tid, 9);
    assert_true(a.f[5].id == UINT64_MAX);
    assert_string_equal(a.f[6].name, "huge");
    assert_string_equal(a.f[7].name, "ac2g");
    assert_int_equal(a.f[7].phase, 'f');
    assert_int_equal(a.f[7].enclosing, 1);
    assert_int_equal(a.f[7].tid, 7);
}

/* JSON -> JSON keeps every field; JSON -> Perfetto -> JSON keeps ids,
 * phases, names, threads and times (a Perfetto 'f' reads back as
 * enclosing). */
static void test_roundtrips(void **state) {
    (void)state;
    tx_put(tu_path("flows_in.json"), FLOWS_JSON);
    tx_all_t a, b;
    tx_read(tu_path("flows_in.json"), &a);
    tx_convert(tu_path("flows_in.json"), tu_path("flows_rt.json"));
    tx_read(tu_path("flows_rt.json"), &b);
    tx_same(&a, &b, 1);
    tx_convert(tu_path("flows_in.json"), tu_path("flows.pftrace"));
    tx_read(tu_path("flows.pftrace"), &b);
    tx_same(&a, &b, 0);
    assert_int_equal(b.nspans, 2);
    tx_convert(tu_path("flows.pftrace"), tu_path("flows_rt2.json"));
    tx_read(tu_path("flows_rt2.json"), &b);
    tx_same(&a, &b, 0);
}

/* The JSON text of a flow point. */
static void test_json_text(void **state) {
    (void)state;
    tx_put(tu_path("flows_in.json"), FLOWS_JSON);
    tx_convert(tu_path("flows_in.json"), tu_path("flows_text.json"));
    FILE *f = fopen(tu_path("flows_text.json"), "rb");
    char buf[8192] = {0};
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(buf, "{\"ph\":\"s\",\"id\":42,\"pid\":1,\"tid\":1,"
                                "\"ts\":20.000,\"cat\":\"flow\",\"name\":\"ac2g\"}"));
    assert_non_null(strstr(buf, "{\"ph\":\"f\",\"id\":42,\"pid\":1,\"tid\":7,"
                                "\"ts\":200.000,\"bp\":\"e\",\"cat\":\"flow\","
                                "\"name\":\"ac2g\"}"));
    assert_non_null(strstr(buf, "\"id\":18446744073709551615,"));
}

/* Writers refuse flows with a bad thread, name or phase. */
static void test_writer_einval(void **state) {
    (void)state;
    const char *names[] = {"n"};
    sps__tl_proc_t proc = {1, -1, "p"};
    sps__tl_thread_t thr = {1, 1, ""};
    sps__tl_flow_t bad[] = {{1, 1, 0, 0, 's', 0}, {1, 0, 1, 0, 's', 0},
                            {1, 0, 0, 0, 'x', 0}};
    for (int k = 0; k < 3; k++)
        for (int fmt = 0; fmt < 2; fmt++) {
            sps__tl_header_t h = {0};
            h.nnames = 1; h.names = names; h.nprocs = 1; h.procs = &proc;
            h.nthreads = 1; h.threads = &thr; h.rank = -1;
            h.nflows = 1; h.flows = &bad[k];
            sps__tlw_t *w = NULL;
            assert_int_equal(sps__tlw_open(&w, tu_path("flows_bad.out"),
                                           fmt ? SPS__TL_PFTRACE : SPS__TL_JSON, &h),
                             SPS_EINVAL);
        }
}

/* Merge of two inputs whose flows share ids: distinct ids per rank
 * ((rank << 40) | id), each on its rank's process. */
static void test_merge(void **state) {
    (void)state;
    static const char *const fmt =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"name\":\"op\",\"pid\":%d,\"tid\":1,\"ts\":10,\"dur\":100},"
        "{\"ph\":\"s\",\"id\":42,\"pid\":%d,\"tid\":1,\"ts\":20,\"name\":\"ac2g\"},"
        "{\"ph\":\"f\",\"id\":42,\"pid\":%d,\"tid\":2,\"ts\":30,\"name\":\"ac2g\",\"bp\":\"e\"},"
        "{\"ph\":\"s\",\"id\":1099511627776,\"pid\":%d,\"tid\":1,\"ts\":40,\"name\":\"big\"}],"
        "\"distributedInfo\":{\"rank\":%d,\"world_size\":2}}";
    char text[2048];
    for (int r = 0; r < 2; r++) {
        int pid = 100 + r;
        snprintf(text, sizeof text, fmt, pid, pid, pid, pid, r);
        tx_put(tu_path(r ? "flows_m1.json" : "flows_m0.json"), text);
    }
    const char *outs[] = {"flows_merged.json", "flows_merged.pftrace"};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tu_system("\"%s\" merge -o '%s' '%s' '%s' 2>/dev/null",
                                   getenv("SPS_CLI"), tu_path(outs[k]),
                                   tu_path("flows_m1.json"),
                                   tu_path("flows_m0.json")), 0);
        tx_all_t m;
        tx_read(tu_path(outs[k]), &m);
        assert_int_equal(m.nf, 6);
        for (size_t i = 0; i < m.nf; i++) {
            const tx_item_t *x = &m.f[i];
            if (!strcmp(x->name, "ac2g"))
                assert_true(x->id == (((uint64_t)x->pid << 40) | 42));
            else
                assert_true(x->id >> 63); /* >= 2^40: hashed, top bit */
            for (size_t j = 0; j < m.nf; j++)
                if (m.f[j].pid != x->pid) assert_true(m.f[j].id != x->id);
        }
        assert_true(tx_find(m.f, m.nf, "big", 0)->id !=
                    tx_find(m.f, m.nf, "big", 1)->id);
    }
}

/* Hostile flows: huge and odd ids, flows on unknown pids, a file cut at
 * every byte: never a crash, only usable points kept. */
static void test_hostile(void **state) {
    (void)state;
    const char *p = tu_path("flows_hostile.json");
    tx_put(p, "[{\"ph\":\"s\",\"id\":-5,\"pid\":3,\"tid\":-1,\"ts\":1},"
              "{\"ph\":\"t\",\"id\":123456789012345678901234567890,\"pid\":3,\"ts\":2},"
              "{\"ph\":\"f\",\"id\":1.5,\"pid\":4,\"tid\":4,\"ts\":3},"
              "{\"ph\":\"f\",\"id\":true,\"pid\":4,\"tid\":4,\"ts\":3},"
              "{\"ph\":\"s\",\"id\":\"\",\"pid\":4,\"tid\":4,\"ts\":-3},"
              "{\"ph\":\"s\",\"id\":7,\"pid\":4,\"tid\":4,\"ts\":9223372036854775807}");
    tx_all_t a;
    tx_read(p, &a);
    assert_int_equal(a.nf, 4);
    assert_int_equal(a.f[0].ts, -3000);
    assert_true(a.f[1].id == (uint64_t)-5);
    assert_int_equal(a.f[1].tid, -1);
    size_t n = strlen(FLOWS_JSON);
    char *t = malloc(n + 1);
    for (size_t k = 0; k < n; k++) {
        memcpy(t, FLOWS_JSON, k);
        t[k] = 0;
        tx_put(p, t);
        sps__tlr_t *r;
        if (sps__tlr_open(&r, p, SPS__TL_JSON) == 0) sps__tlr_free(r);
    }
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_roundtrips),
        cmocka_unit_test(test_json_text),
        cmocka_unit_test(test_writer_einval),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
