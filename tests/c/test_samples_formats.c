/* test_samples_formats.c -- every writer carries the stack samples (issue
 * 34 part 2): two sampled sessions (ranks 0 and 1, each with regions on
 * two threads and a thread without spans) are
 *   - exported as Chrome JSON: one instant event per sample (ph "i",
 *     s "t", cat "python_function", name the leaf function, args.stack,
 *     region, weight) on the pid/tid row of its thread's spans, a thread
 *     without spans on a row of its own; the JSON reader takes the spans
 *     back and no sample becomes a span;
 *   - merged into .json and .pftrace: every input's samples, each on its
 *     rank (the .pftrace: PerfSample packets, pid the rank, tid the row of
 *     its thread, checked by a small protobuf walk here; the Python test
 *     checks the schema and the interned callstacks);
 *   - merged into .h5: /samples holds both inputs' samples, each under
 *     its rank, with its region's name, its leaf function and its weight;
 *   - a /samples with a bad index (stacks, regions, stack_frames) makes
 *     export and merge fail with SPS_EFORMAT, never crash;
 *   - a caller's samples (sps_timeline_write_samples) in JSON and .pftrace
 *     on the rows of their tids, a tid that is no thread on a row of its
 *     own; a bad index of them is SPS_EINVAL naming it, nothing written.
 * Everything is compared with the one checked reader (sps__h5r_samples). */
#include "testutil.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t sink; /* relaxed atomics: the burners run at once */

/* Burns us microseconds of this thread's CPU (the samples' leaf). */
__attribute__((noinline)) static void sf_burn(int us) {
    int64_t end = thread_cpu_ns() + (int64_t)us * 1000;
    uint64_t x = __atomic_load_n(&sink, __ATOMIC_RELAXED);
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1;
    __atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

/* A worker's regions: name[0] around name[1] around the burner. */
static void *worker(void *arg) {
    const char *const *name = arg;
    sps_region_t a = sps_region(name[0]), b = sps_region(name[1]);
    for (int i = 0; i < 4; i++) {
        sps_begin(a);
        sf_burn(20000);
        sps_begin(b);
        sf_burn(40000);
        sps_end(b);
        sps_end(a);
    }
    return NULL;
}

/* A thread without spans: its samples have no /events thread. */
static void *spanless(void *arg) {
    (void)arg;
    sf_burn(100000);
    return NULL;
}

/* Records one sampled session as rank `rank` of 2 into path: regions
 * outer/inner on the main thread and a worker, and a thread without
 * spans. */
static void record(const char *path, int rank, const char *outer, const char *inner) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = 2;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(1000), 0);
    const char *names[2] = {outer, inner};
    pthread_t th[2];
    assert_int_equal(pthread_create(&th[0], NULL, worker, (void *)names), 0);
    assert_int_equal(pthread_create(&th[1], NULL, spanless, NULL), 0);
    worker((void *)names);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
}

static char path_a[1024], path_b[1024];

/* Records the two sessions once. */
static int setup_files(void **state) {
    (void)state;
    snprintf(path_a, sizeof path_a, "%s", tu_path("sf_a.h5"));
    snprintf(path_b, sizeof path_b, "%s", tu_path("sf_b.h5"));
    record(path_a, 0, "sf.outer", "sf.inner");
    record(path_b, 1, "sf.b_outer", "sf.b_inner");
    return 0;
}

/* The leaf function of sample i ("<unknown>" for an empty stack). */
static const char *leaf_of(const sps__h5r_samples_t *x, size_t i) {
    int64_t k = x->stacks[i];
    if (x->stack_offsets[k + 1] == x->stack_offsets[k]) return "<unknown>";
    const char *f = x->functions[x->stack_frames[x->stack_offsets[k]]];
    return f && *f ? f : "<unknown>";
}

/* The file's samples, read by the one checked reader, with some of each
 * kind (in a region, outside every span, on a thread without spans). */
static void read_samples(const char *path, sps__h5r_samples_t *x) {
    assert_int_equal(sps__h5r_samples(path, x), 0);
    size_t in_region = 0, spanless_n = 0; /* timer periods: ms of CPU */
    for (size_t i = 0; i < x->n; i++) {
        in_region += x->regions[i] >= 0 ? (size_t)x->weights[i] : 0;
        spanless_n += x->threads[i] < 0 ? (size_t)x->weights[i] : 0;
    }
    print_message("%s: %zu samples; ms in a region %zu, on the thread without spans %zu\n",
                  path, x->n, in_region, spanless_n);
    assert_true(in_region > 200); /* 2 x 240 ms */
    assert_true(spanless_n > 50); /* 100 ms */
}

/* The value of "key": in an event's text, as a string (copied to out) or
 * a number (its text). */
static int field(const char *ev, const char *key, char *out, size_t cap) {
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(ev, k);
    if (!p) return 0;
    p += strlen(k);
    size_t n = 0;
    int cut; /* the value goes on past what out holds */
    if (*p == '"') {
        p++;
        while (*p && *p != '"' && n + 1 < cap) {
            if (*p == '\\' && p[1]) p++;
            out[n++] = *p++;
        }
        cut = *p && *p != '"';
    } else {
        while (*p && *p != ',' && *p != '}' && n + 1 < cap) out[n++] = *p++;
        cut = *p && *p != ',' && *p != '}';
    }
    out[n] = 0;
    /* a value cut short would compare unequal for no reason of the
     * writer's (an ASan build's leaf, a 300-character C++ name, once did) */
    if (cut) fail_msg("\"%s\" is longer than the test's %zu bytes", key, cap - 1);
    return 1;
}

/* The whole file at path, NUL-terminated (malloc'd). */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

/* One sample event of a trace: where it is and what it says. */
typedef struct sev {
    long long pid, tid, weight;
    char name[2048], region[2048]; /* function names: C++ ones run long */
} sev_t;

/* Every sample event of the Chrome JSON at path (one event a line, as the
 * writer puts them); *n their count.  The tid of the row named
 * "thread N (samples)" of pid goes to spanless_tid[pid] (-1: none). */
static sev_t *json_samples(const char *path, size_t *n, long long spanless_tid[2]) {
    char *text = slurp(path, NULL);
    size_t cap = 1024, k = 0;
    sev_t *v = malloc(cap * sizeof *v);
    spanless_tid[0] = spanless_tid[1] = -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char buf[256];
        if (strstr(line, "\"thread_name\"") && strstr(line, "(samples)\"")) {
            assert_true(field(line, "pid", buf, sizeof buf));
            long long pid = atoll(buf);
            assert_true(field(line, "tid", buf, sizeof buf));
            if (pid >= 0 && pid < 2) spanless_tid[pid] = atoll(buf);
        }
        if (!strstr(line, "\"cat\":\"python_function\"")) continue;
        assert_non_null(strstr(line, "\"ph\":\"i\",\"s\":\"t\""));
        assert_non_null(strstr(line, "\"args\":{\"stack\":[\""));
        if (k == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        sev_t *e = &v[k++];
        memset(e, 0, sizeof *e);
        assert_true(field(line, "pid", buf, sizeof buf));
        e->pid = atoll(buf);
        assert_true(field(line, "tid", buf, sizeof buf));
        e->tid = atoll(buf);
        assert_true(field(line, "weight", buf, sizeof buf));
        e->weight = atoll(buf);
        assert_true(field(line, "name", e->name, sizeof e->name));
        if (!field(line, "region", e->region, sizeof e->region)) e->region[0] = 0;
    }
    free(text);
    *n = k;
    return v;
}

/* Whether events v[0..n) hold exactly x's samples (their leaf, region and
 * weight; pid the rank), each on its thread's row: tid its /events thread
 * index, or spanless_tid for a thread without spans.  Marks the matched
 * events in used. */
static void same_samples(const sev_t *v, size_t n, unsigned char *used,
                         const sps__h5r_samples_t *x, long long pid, long long spanless_tid) {
    for (size_t i = 0; i < x->n; i++) {
        long long tid = x->threads[i] >= 0 ? x->threads[i] : spanless_tid;
        const char *region = x->regions[i] >= 0 ? x->names[x->regions[i]] : "";
        size_t j = 0;
        for (; j < n; j++)
            if (!used[j] && v[j].pid == pid && v[j].tid == tid &&
                v[j].weight == x->weights[i] && !strcmp(v[j].name, leaf_of(x, i)) &&
                !strcmp(v[j].region, region))
                break;
        if (j == n)
            fail_msg("sample %zu (tid %lld, leaf %s, region '%s') has no event", i, tid,
                     leaf_of(x, i), region);
        used[j] = 1;
    }
}

/* export chrome: every sample of rank 0, as tensorplay's instants, on the
 * rows of its thread's spans; read back, the spans are the file's. */
static void test_export_chrome(void **state) {
    (void)state;
    sps__h5r_samples_t x;
    read_samples(path_a, &x);
    const char *out = tu_path("sf_a.json");
    char err[256] = "";
    assert_int_equal(sps_export(path_a, out, "chrome", NULL, err, sizeof err), 0);
    size_t n;
    long long sl[2];
    sev_t *v = json_samples(out, &n, sl);
    assert_int_equal(n, x.n);
    assert_true(sl[0] >= 0); /* the thread without spans has its row */
    unsigned char *used = calloc(n + 1, 1);
    same_samples(v, n, used, &x, 0, sl[0]);
    /* both threads with spans have samples in them, on their own rows */
    int on0 = 0, on1 = 0;
    for (size_t i = 0; i < n; i++) {
        on0 |= v[i].tid == 0 && !strcmp(v[i].region, "sf.inner");
        on1 |= v[i].tid == 1 && !strcmp(v[i].region, "sf.inner");
    }
    assert_true(on0 && on1);
    free(used), free(v);
    /* the JSON reader keeps the spans and makes no span of a sample */
    sps__tlr_t *r, *h5;
    assert_int_equal(sps__tlr_open(&r, out, SPS__TL_JSON), 0);
    assert_int_equal(sps__tlr_open(&h5, path_a, SPS__TL_H5), 0);
    sps__tl_span_t s, t;
    size_t spans = 0;
    int a, b;
    while ((a = sps__tlr_next(r, &s)) > 0) {
        b = sps__tlr_next(h5, &t);
        assert_int_equal(b, 1);
        assert_int_equal(s.start_ns, t.start_ns);
        assert_int_equal(s.end_ns, t.end_ns);
        assert_string_equal(sps__tlr_header(r)->names[s.name], sps__tlr_header(h5)->names[t.name]);
        spans++;
    }
    assert_int_equal(a, 0);
    assert_int_equal(sps__tlr_next(h5, &t), 0);
    assert_int_equal(spans, 16); /* 2 threads x 4 x (outer, inner) */
    sps__tlr_free(r);
    sps__tlr_free(h5);
    sps__h5r_samples_free(&x);
}

/* merge to .json: both inputs' samples, each on its rank's process. */
static void test_merge_json(void **state) {
    (void)state;
    sps__h5r_samples_t xa, xb;
    read_samples(path_a, &xa);
    read_samples(path_b, &xb);
    const char *out = tu_path("sf_m.json");
    const char *in[2] = {path_a, path_b};
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    size_t n;
    long long sl[2];
    sev_t *v = json_samples(out, &n, sl);
    assert_int_equal(n, xa.n + xb.n);
    assert_true(sl[0] >= 0 && sl[1] >= 0);
    unsigned char *used = calloc(n + 1, 1);
    same_samples(v, n, used, &xa, 0, sl[0]);
    same_samples(v, n, used, &xb, 1, sl[1]);
    free(used), free(v);
    sps__h5r_samples_free(&xa);
    sps__h5r_samples_free(&xb);
}

/* A protobuf varint at *p (< end); advances *p.  -1 past the end. */
static int64_t pb_varint(const uint8_t **p, const uint8_t *end) {
    uint64_t v = 0;
    for (int s = 0; *p < end && s < 64; s += 7) {
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7F) << s;
        if (!(c & 0x80)) return (int64_t)v;
    }
    return -1;
}

/* Walks message [p, end): calls fn(ctx, field, wire type, varint value,
 * bytes, length) for each field (wire types 0 and 2; 1 and 5 skipped). */
static void pb_walk(const uint8_t *p, const uint8_t *end, void *ctx,
                    void (*fn)(void *, int, int, int64_t, const uint8_t *, size_t)) {
    while (p < end) {
        int64_t tag = pb_varint(&p, end);
        assert_true(tag > 0);
        int num = (int)(tag >> 3), wt = (int)(tag & 7);
        if (wt == 0) {
            int64_t v = pb_varint(&p, end);
            fn(ctx, num, 0, v, NULL, 0);
        } else if (wt == 2) {
            int64_t len = pb_varint(&p, end);
            assert_true(len >= 0 && len <= end - p);
            fn(ctx, num, 2, 0, p, (size_t)len);
            p += len;
        } else if (wt == 1) {
            p += 8;
        } else if (wt == 5) {
            p += 4;
        } else {
            fail_msg("wire type %d", wt);
        }
    }
}

/* What the walk of a trace finds: per rank, its PerfSamples and the tids
 * they name. */
typedef struct pf_count {
    size_t samples[2];
    size_t on_thread[2][64]; /* per tid < 64 */
    int64_t pid, tid;        /* of the PerfSample being read */
    int in_sample;
} pf_count_t;

static void pf_sample_field(void *ctx, int num, int wt, int64_t v, const uint8_t *b, size_t n) {
    pf_count_t *c = ctx;
    (void)b, (void)n;
    if (wt == 0 && num == 2) c->pid = v;
    if (wt == 0 && num == 3) c->tid = v;
}

static void pf_packet_field(void *ctx, int num, int wt, int64_t v, const uint8_t *b, size_t n) {
    pf_count_t *c = ctx;
    (void)v;
    if (num != 66 || wt != 2) return; /* TracePacket.perf_sample */
    c->pid = c->tid = -1;
    pb_walk(b, b + n, c, pf_sample_field);
    assert_true(c->pid == 0 || c->pid == 1);
    c->samples[c->pid]++;
    if (c->tid >= 0 && c->tid < 64) c->on_thread[c->pid][c->tid]++;
}

static void pf_trace_field(void *ctx, int num, int wt, int64_t v, const uint8_t *b, size_t n) {
    (void)v;
    if (num == 1 && wt == 2) pb_walk(b, b + n, ctx, pf_packet_field);
}

/* Sum over x's samples of min(weight, 64) (the copies Perfetto gets),
 * those of /events thread `thread` (-1: threads without spans; -2: all). */
static size_t copies(const sps__h5r_samples_t *x, int64_t thread) {
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (thread == -2 || x->threads[i] == thread)
            k += (size_t)(x->weights[i] < 64 ? x->weights[i] : 64);
    return k;
}

/* merge to .pftrace: PerfSample packets for every sample of both inputs,
 * pid the rank, tid the row of its thread; the trace reader skips them. */
static void test_merge_pftrace(void **state) {
    (void)state;
    sps__h5r_samples_t x[2];
    read_samples(path_a, &x[0]);
    read_samples(path_b, &x[1]);
    const char *out = tu_path("sf_m.pftrace");
    const char *in[2] = {path_a, path_b};
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    size_t len;
    char *data = slurp(out, &len);
    pf_count_t c;
    memset(&c, 0, sizeof c);
    pb_walk((const uint8_t *)data, (const uint8_t *)data + len, &c, pf_trace_field);
    for (int r = 0; r < 2; r++) {
        size_t all = copies(&x[r], -2);
        print_message("rank %d: %zu PerfSamples (%zu expected)\n", r, c.samples[r], all);
        assert_int_equal(c.samples[r], all);
        /* the two threads with spans: their /events index, the rows of their
         * spans; so the rest (the thread without spans) is on a row of its own */
        for (int64_t t = 0; t < 2; t++) assert_int_equal(c.on_thread[r][t], copies(&x[r], t));
        assert_true(copies(&x[r], -1) > 0);
    }
    free(data);
    /* read back: the spans, and nothing of the samples */
    sps__tlr_t *rd;
    assert_int_equal(sps__tlr_open(&rd, out, SPS__TL_PFTRACE), 0);
    sps__tl_span_t s;
    size_t spans = 0;
    int rc;
    while ((rc = sps__tlr_next(rd, &s)) > 0) spans++;
    assert_int_equal(rc, 0);
    assert_int_equal(spans, 32); /* 16 a rank */
    sps__tlr_free(rd);
    sps__h5r_samples_free(&x[0]);
    sps__h5r_samples_free(&x[1]);
}

/* Whether sample i of m and sample j of x say the same (leaf, region
 * name, weight, thread, tid, call id, time). */
static int same_sample(const sps__h5r_samples_t *m, size_t i, const sps__h5r_samples_t *x,
                       size_t j) {
    const char *rm = m->regions[i] >= 0 ? m->names[m->regions[i]] : "";
    const char *rx = x->regions[j] >= 0 ? x->names[x->regions[j]] : "";
    int64_t km = m->stacks[i], kx = x->stacks[j];
    int64_t dm = m->stack_offsets[km + 1] - m->stack_offsets[km];
    int64_t dx = x->stack_offsets[kx + 1] - x->stack_offsets[kx];
    if (dm != dx) return 0;
    for (int64_t f = 0; f < dm; f++) { /* the whole stack, frame by frame */
        int64_t a = m->stack_frames[m->stack_offsets[km] + f];
        int64_t b = x->stack_frames[x->stack_offsets[kx] + f];
        if (strcmp(m->functions[a], x->functions[b]) || strcmp(m->modules[a], x->modules[b]) ||
            m->lines[a] != x->lines[b])
            return 0;
    }
    return !strcmp(rm, rx) && m->weights[i] == x->weights[j] &&
           m->threads[i] == x->threads[j] && m->tids[i] == x->tids[j] &&
           m->call_ids[i] == x->call_ids[j] && m->times_ns[i] == x->times_ns[j];
}

/* merge to .h5: /samples holds both inputs' samples under their ranks,
 * stacks, frames and regions re-indexed into the merged tables. */
static void test_merge_h5(void **state) {
    (void)state;
    sps__h5r_samples_t x[2], m;
    read_samples(path_a, &x[0]);
    read_samples(path_b, &x[1]);
    const char *out = tu_path("sf_m.h5");
    const char *in[2] = {path_b, path_a}; /* ranks come from the files */
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    assert_int_equal(sps__h5r_samples(out, &m), 0);
    assert_int_equal(m.n, x[0].n + x[1].n);
    assert_int_equal(m.hz, 1000);
    unsigned char *used = calloc(m.n + 1, 1);
    for (int r = 0; r < 2; r++)
        for (size_t j = 0; j < x[r].n; j++) {
            size_t i = 0;
            for (; i < m.n; i++)
                if (!used[i] && m.ranks[i] == r && same_sample(&m, i, &x[r], j)) break;
            if (i == m.n) fail_msg("rank %d sample %zu is not in the merged file", r, j);
            used[i] = 1;
        }
    /* the regions of both ranks are in the merged region table */
    int seen_a = 0, seen_b = 0;
    for (size_t i = 0; i < m.n; i++) {
        if (m.regions[i] < 0) continue;
        seen_a |= m.ranks[i] == 0 && !strcmp(m.names[m.regions[i]], "sf.inner");
        seen_b |= m.ranks[i] == 1 && !strcmp(m.names[m.regions[i]], "sf.b_inner");
    }
    assert_true(seen_a && seen_b);
    free(used);
    /* export chrome of rank 1 only: its samples, none of rank 0's */
    const char *json = tu_path("sf_m_r1.json");
    int64_t one = 1;
    sps_export_opts_t o = SPS_EXPORT_OPTS_INIT;
    o.ranks = &one;
    o.nranks = 1;
    assert_int_equal(sps_export(out, json, "chrome", &o, NULL, 0), 0);
    size_t n;
    long long sl[2];
    sev_t *v = json_samples(json, &n, sl);
    assert_int_equal(n, x[1].n);
    used = calloc(n + 1, 1);
    same_samples(v, n, used, &x[1], 1, sl[1]);
    free(used), free(v);
    sps__h5r_samples_free(&m);
    sps__h5r_samples_free(&x[0]);
    sps__h5r_samples_free(&x[1]);
}

/* Copies src to dst and writes value at index at of /samples/<col>. */
static void corrupt(const char *src, const char *dst, const char *col, size_t at,
                    int64_t value) {
    assert_int_equal(tu_system("cp '%s' '%s'", src, dst), 0);
    hid_t f = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    char name[128];
    snprintf(name, sizeof name, "/samples/%s", col);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t fs = H5Dget_space(d);
    hsize_t off = at, one = 1;
    assert_true(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &one, NULL) >= 0);
    hid_t ms = H5Screate_simple(1, &one, NULL);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, &value) >= 0);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Fclose(f);
}

/* A /samples with an index out of range: export and merge say
 * SPS_EFORMAT and write nothing; the command-line tool exits non-zero. */
static void test_hostile_samples(void **state) {
    (void)state;
    static const struct { const char *col; int64_t v; } bad[] = {
        {"stacks", 1000000}, {"regions", 99999}, {"stack_frames", 77777}, {"stacks", -5}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char p[1024], o[1024];
        snprintf(p, sizeof p, "%s", tu_path("sf_bad.h5"));
        corrupt(path_a, p, bad[k].col, 0, bad[k].v);
        snprintf(o, sizeof o, "%s", tu_path("sf_bad_out.json"));
        unlink(o);
        char err[512] = "";
        int rc = sps_export(p, o, "chrome", NULL, err, sizeof err);
        print_message("%s = %lld: export %d (%s)\n", bad[k].col, (long long)bad[k].v, rc, err);
        assert_int_equal(rc, SPS_EFORMAT);
        assert_int_not_equal(access(o, F_OK), 0);
        const char *in[2] = {p, path_b};
        const char *outs[] = {"sf_bad_m.h5", "sf_bad_m.json", "sf_bad_m.pftrace"};
        for (size_t j = 0; j < 3; j++) {
            snprintf(o, sizeof o, "%s", tu_path(outs[j]));
            unlink(o);
            FILE *ef = tmpfile();
            assert_int_equal(sps_merge(o, in, 2, ef), SPS_EFORMAT);
            fclose(ef);
            assert_int_not_equal(access(o, F_OK), 0);
        }
        const char *cli = getenv("SPS_CLI");
        if (cli) {
            snprintf(o, sizeof o, "%s", tu_path("sf_bad_cli.json"));
            assert_int_not_equal(tu_system("'%s' export chrome '%s' -o '%s' 2>/dev/null", cli, p, o), 0);
            assert_int_not_equal(tu_system("'%s' merge -o '%s' '%s' '%s' 2>/dev/null", cli,
                                           tu_path("sf_bad_cli.h5"), p, path_b), 0);
        }
    }
}

/* The timeline of path_a's spans (threads 0 and 1, tids 0 and 1, pid 1)
 * that test_timeline_samples writes, and its samples (the public reader's,
 * tids replaced by the caller's: a sample's /events thread index, 7 for
 * the thread without spans, which is no thread of the timeline). */
typedef struct tl_case {
    sps_timeline_t t;
    sps_samples_t s;     /* the caller's view */
    sps_samples_t file;  /* as read */
    sps_span_t *spans;
    int64_t *tids;
    int64_t ids[2];
    const char *names[1];
} tl_case_t;

static void tl_case_make(tl_case_t *c) {
    memset(c, 0, sizeof *c);
    assert_int_equal(sps_samples_read(path_a, &c->file), 0);
    c->s = c->file;
    c->s.impl_ = NULL; /* the caller's arrays (here: the reader's, borrowed) */
    c->tids = malloc((c->s.n + 1) * sizeof *c->tids);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < c->s.n; i++) {
        c->tids[i] = c->s.threads[i] >= 0 ? c->s.threads[i] : 7;
        if (c->s.times_ns[i] < lo) lo = c->s.times_ns[i];
        if (c->s.times_ns[i] > hi) hi = c->s.times_ns[i];
    }
    c->s.tids = c->tids;
    c->s.threads = c->s.ranks = c->s.call_ids = NULL; /* not read */
    c->spans = calloc(2, sizeof *c->spans);
    for (uint32_t k = 0; k < 2; k++) /* one span a thread over every sample */
        c->spans[k] = (sps_span_t){.start_ns = lo, .end_ns = hi, .thread = k,
                                   .region = 0, .parent = -1};
    c->ids[0] = 0, c->ids[1] = 1;
    c->names[0] = "tl.all";
    c->t = (sps_timeline_t){.nnames = 1, .names = c->names, .nthreads = 2,
                            .thread_ids = c->ids, .nspans = 2, .spans = c->spans,
                            .base_ns = lo, .rank = -1, .pid = 1};
}

static void tl_case_free(tl_case_t *c) {
    sps_samples_free(&c->file);
    free(c->spans), free(c->tids);
}

/* sps_timeline_write_samples: the caller's samples in JSON (instants on
 * the row of their tid; the tid that is no thread on a row of its own)
 * and in .pftrace (PerfSamples per tid); without samples the very file of
 * sps_timeline_write. */
static void test_timeline_samples(void **state) {
    (void)state;
    tl_case_t c;
    tl_case_make(&c);
    sps__h5r_samples_t x; /* the same samples, for same_samples */
    read_samples(path_a, &x);
    const char *js = tu_path("sf_tl.json");
    assert_int_equal(sps_timeline_write_samples(js, &c.t, &c.s), 0);
    size_t n;
    long long sl[2];
    sev_t *v = json_samples(js, &n, sl);
    assert_int_equal(n, x.n);
    assert_int_equal(sl[1], 7); /* pid 1: the row of tid 7, its own tid */
    unsigned char *used = calloc(n + 1, 1);
    same_samples(v, n, used, &x, 1, 7);
    free(used), free(v);
    const char *pf = tu_path("sf_tl.pftrace");
    assert_int_equal(sps_timeline_write_samples(pf, &c.t, &c.s), 0);
    size_t len;
    char *data = slurp(pf, &len);
    pf_count_t k;
    memset(&k, 0, sizeof k);
    pb_walk((const uint8_t *)data, (const uint8_t *)data + len, &k, pf_trace_field);
    free(data);
    assert_int_equal(k.samples[1], copies(&x, -2));
    assert_int_equal(k.on_thread[1][0], copies(&x, 0));
    assert_int_equal(k.on_thread[1][1], copies(&x, 1));
    assert_int_equal(k.on_thread[1][7], copies(&x, -1));
    /* any int64 is a tid: JSON keeps it; Perfetto (int32 tids) gives the
     * row a free int32 tid, named after the sample's */
    const int64_t big = (int64_t)1 << 40;
    for (size_t i = 0; i < c.s.n; i++)
        if (c.tids[i] == 7) c.tids[i] = big;
    assert_int_equal(sps_timeline_write_samples(js, &c.t, &c.s), 0);
    v = json_samples(js, &n, sl);
    assert_int_equal(n, x.n);
    assert_true(sl[1] == big);
    used = calloc(n + 1, 1);
    same_samples(v, n, used, &x, 1, big);
    free(used), free(v);
    assert_int_equal(sps_timeline_write_samples(pf, &c.t, &c.s), 0);
    data = slurp(pf, &len);
    memset(&k, 0, sizeof k);
    pb_walk((const uint8_t *)data, (const uint8_t *)data + len, &k, pf_trace_field);
    assert_non_null(memmem(data, len, "thread 1099511627776 (samples)", 30));
    free(data);
    assert_int_equal(k.samples[1], copies(&x, -2));
    assert_int_equal(k.on_thread[1][0] + k.on_thread[1][1], copies(&x, 0) + copies(&x, 1));
    /* no samples: sps_timeline_write's file, byte for byte */
    const char *a = tu_path("sf_tl_plain.json"), *b = tu_path("sf_tl_null.json");
    assert_int_equal(sps_timeline_write(a, &c.t), 0);
    assert_int_equal(sps_timeline_write_samples(b, &c.t, NULL), 0);
    size_t la, lb;
    char *ta = slurp(a, &la), *tb = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ta, tb, la);
    free(ta), free(tb);
    sps__h5r_samples_free(&x);
    tl_case_free(&c);
}

/* The caller's samples are checked like a file's: a bad index is
 * SPS_EINVAL naming it, and nothing is written. */
static void test_timeline_samples_checked(void **state) {
    (void)state;
    tl_case_t c;
    tl_case_make(&c);
    const char *out = tu_path("sf_tl_bad.pftrace");
    int64_t *col = malloc((c.s.n + 1) * sizeof *col);
    int64_t bad_frames[2] = {0, (int64_t)c.s.nframes}, offs[3] = {0, 2, 1}, one[2] = {0, 2};
    for (int k = 0; k < 6; k++) {
        sps_samples_t s = c.s;
        const char *want;
        memcpy(col, c.s.stacks, c.s.n * sizeof *col);
        if (k == 0) col[3] = (int64_t)s.nstacks, s.stacks = col, want = "stacks[3]";
        else if (k == 1) {
            memcpy(col, c.s.regions, c.s.n * sizeof *col);
            col[0] = (int64_t)s.nregion_names, s.regions = col, want = "regions[0]";
        } else if (k == 2) {
            for (size_t i = 0; i < s.n; i++) col[i] = 1;
            col[s.n - 1] = 0, s.weights = col, want = "weights[";
        } else if (k == 3) {
            s.nstacks = 1, s.stack_frames = bad_frames, s.stack_offsets = one;
            for (size_t i = 0; i < s.n; i++) col[i] = 0;
            s.stacks = col, want = "stack_frames[1]";
        } else if (k == 4) {
            s.nstacks = 2, s.stack_offsets = offs, s.stack_frames = bad_frames;
            for (size_t i = 0; i < s.n; i++) col[i] = 0;
            s.stacks = col, want = "stack_offsets fall at 2";
        } else {
            s.tids = NULL, want = "tids";
        }
        unlink(out);
        assert_int_equal(sps_timeline_write_samples(out, &c.t, &s), SPS_EINVAL);
        print_message("case %d: %s\n", k, sps_last_error());
        assert_non_null(strstr(sps_last_error(), want));
        assert_int_not_equal(access(out, F_OK), 0);
    }
    free(col);
    tl_case_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_chrome),
        cmocka_unit_test(test_merge_json),
        cmocka_unit_test(test_merge_pftrace),
        cmocka_unit_test(test_merge_h5),
        cmocka_unit_test(test_hostile_samples),
        cmocka_unit_test(test_timeline_samples),
        cmocka_unit_test(test_timeline_samples_checked),
    };
    return cmocka_run_group_tests(tests, setup_files, NULL);
}
