/* The viewer's level-of-detail index (formats/viewidx.c) and the view
 * object (api/view.c): a recording made with the C API (nested regions on
 * several threads, a recursive region, many short spans, counters), and
 * its .json and .pftrace conversions, answered through sps__view_handle
 * and checked against a brute-force fold of the file's spans (the one
 * fold, sps__fold_ivals): tiles at full zoom-out (bounded per lane, every
 * span counted once) and zoom-in (every span once, exact times), windows
 * (the region table and call tree), span lookup, search, counters; stale,
 * truncated, corrupt and garbage indexes rebuilt; bad parameters 400. */
#include "testutil.h"
#include "tu_h5.h"
#include "api/view.h"
#include "formats/h5_device.h"
#include "formats/viewidx.h"
#include "model/model.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NTHR 3
#define NOUT 30
#define NTINY 5000

static sps_region_t r_outer, r_inner, r_rec, r_tiny;

static void rec(int d) {
    sps_begin(r_rec);
    tu_spin_ns(1000);
    if (d) rec(d - 1);
    sps_end(r_rec);
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (int k = 0; k < NOUT; k++) {
        sps_begin(r_outer);
        tu_spin_ns(1000);
        for (int j = 0; j < 2; j++) {
            sps_begin(r_inner);
            tu_spin_ns(2000);
            sps_end(r_inner);
        }
        rec(2);
        sps_end(r_outer);
    }
    if (id == 0)
        for (int k = 0; k < NTINY; k++) { /* one lane of several blocks and levels */
            sps_begin(r_tiny);
            sps_end(r_tiny);
        }
    return NULL;
}

static char g_h5[1024], g_json[1024], g_pf[1024], g_ixdir[1024];

static void record_once(void) {
    if (g_h5[0]) return;
    snprintf(g_h5, sizeof g_h5, "%s", tu_path("viewidx.h5"));
    snprintf(g_json, sizeof g_json, "%s", tu_path("viewidx.json"));
    snprintf(g_pf, sizeof g_pf, "%s", tu_path("viewidx.pftrace"));
    snprintf(g_ixdir, sizeof g_ixdir, "%s", tu_path("viewidx_ix"));
    assert_int_equal(sps_setup(NULL), 0);
    r_outer = sps_region("vi.outer");
    r_inner = sps_region("vi.Inner <b>\"x\"");
    r_rec = sps_region("vi.rec");
    r_tiny = sps_region("vi.tiny");
    sps_region_t c = sps_counter_id("vi.queue");
    pthread_t th[NTHR];
    for (long k = 0; k < NTHR; k++)
        assert_int_equal(pthread_create(&th[k], NULL, worker, (void *)k), 0);
    for (int k = 0; k < 40; k++) {
        sps_counter(c, (double)(k % 7));
        tu_spin_ns(20000);
    }
    for (int k = 0; k < NTHR; k++) pthread_join(th[k], NULL);
    assert_int_equal(sps_finalize_to(g_h5), 0);
    sps_shutdown();
    const char *cli = getenv("SPS_CLI");
    assert_non_null(cli);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, g_h5, g_json), 0);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, g_h5, g_pf), 0);
}

/* ------------------------------------------------------------------------ */
/* The file's spans by brute force                                          */
/* ------------------------------------------------------------------------ */

typedef struct bspan {
    int64_t start, dur, self;
    uint32_t name, thread, depth;
    int64_t parent;
} bspan_t;

typedef struct brute {
    bspan_t *v;
    size_t n;
    size_t nnames;
    char **names;
} brute_t;

static brute_t brute_read(const char *path) {
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, sps__tl_format_of(path));
    if (rc) fail_msg("%s: %s", path, sps__err_msg());
    const sps__tl_header_t *h = sps__tlr_header(r);
    brute_t b = {0};
    b.nnames = h->nnames;
    b.names = calloc(h->nnames, sizeof *b.names);
    for (size_t i = 0; i < h->nnames; i++) b.names[i] = strdup(h->names[i]);
    size_t cap = 1024;
    sps__ival_t *iv = malloc(cap * sizeof *iv);
    b.v = malloc(cap * sizeof *b.v);
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        if (b.n == cap) {
            cap *= 2;
            iv = realloc(iv, cap * sizeof *iv);
            b.v = realloc(b.v, cap * sizeof *b.v);
        }
        iv[b.n] = (sps__ival_t){s.start_ns, s.end_ns, 0, s.name, s.thread, 0};
        b.v[b.n] = (bspan_t){s.start_ns, s.end_ns - s.start_ns, 0, s.name, s.thread, 0, -1};
        b.n++;
    }
    assert_int_equal(rc, 0);
    sps__tlr_free(r);
    sps__fold_out_t *out = malloc((b.n ? b.n : 1) * sizeof *out);
    assert_int_equal(sps__fold_ivals(iv, b.n, out, NULL), 0);
    for (size_t i = 0; i < b.n; i++) {
        b.v[i].self = out[i].self;
        b.v[i].depth = out[i].depth;
        b.v[i].parent = out[i].parent;
    }
    free(out);
    free(iv);
    return b;
}

static void brute_free(brute_t *b) {
    for (size_t i = 0; i < b->nnames; i++) free(b->names[i]);
    free(b->names);
    free(b->v);
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */
/* ------------------------------------------------------------------------ */

static int req(sps__view_t *v, const char *path, const char *query, char **body, size_t *len) {
    const char *ct = NULL;
    int st = sps__view_handle(v, "GET", path, query, body, len, &ct);
    assert_non_null(*body);
    assert_non_null(ct);
    if (st == 200 && !strcmp(path, "/api/tiles")) assert_string_equal(ct, "application/octet-stream");
    else assert_string_equal(ct, "application/json");
    return st;
}

/* A JSON body's number after "key": (the first one). */
static int64_t json_i64(const char *body, const char *key) {
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(body, k);
    if (!p) fail_msg("no %s in %s", key, body);
    return strtoll(p + strlen(k), NULL, 10);
}

static sps__view_t *open_view(const char *path, int rebuild, int *built) {
    sps__view_t *v;
    sps__view_opts_t o = {g_ixdir, rebuild, 0};
    const char *paths[1] = {path};
    int rc = sps__view_open(&v, paths, 1, &o);
    if (rc) fail_msg("view_open %s: %d %s", path, rc, sps__err_msg());
    char *b;
    size_t n;
    assert_int_equal(req(v, "/api/meta", NULL, &b, &n), 200);
    if (built) *built = strstr(b, "\"built\":true") != NULL;
    free(b);
    return v;
}

typedef struct tile {
    uint32_t thread, depth, level, name, count;
    double start, dur;
} tile_t;

/* Parses a tiles body; checks its framing.  Returns the records. */
static tile_t *parse_tiles(const char *b, size_t n, size_t *nt, uint32_t px, uint32_t *maxlane) {
    assert_true(n >= 8);
    uint32_t magic, nl;
    memcpy(&magic, b, 4);
    memcpy(&nl, b + 4, 4);
    assert_int_equal(magic, 0x54565053u);
    size_t o = 8, cnt = 0, cap = 64;
    tile_t *t = malloc(cap * sizeof *t);
    uint32_t pt = 0, pd = 0;
    *maxlane = 0;
    for (uint32_t l = 0; l < nl; l++) {
        assert_true(o + 16 <= n);
        uint32_t h[4];
        memcpy(h, b + o, 16);
        o += 16;
        if (l) assert_true(h[0] > pt || (h[0] == pt && h[1] > pd)); /* (thread, depth) order */
        pt = h[0];
        pd = h[1];
        assert_true(h[2] > 0); /* only lanes with records */
        if (h[2] > *maxlane) *maxlane = h[2];
        (void)px;
        assert_true(o + (size_t)h[2] * 24 <= n);
        for (uint32_t i = 0; i < h[2]; i++, o += 24) {
            if (cnt == cap) t = realloc(t, (cap *= 2) * sizeof *t);
            tile_t *r = &t[cnt++];
            r->thread = h[0];
            r->depth = h[1];
            r->level = h[3];
            memcpy(&r->start, b + o, 8);
            memcpy(&r->dur, b + o + 8, 8);
            memcpy(&r->name, b + o + 16, 4);
            memcpy(&r->count, b + o + 20, 4);
            assert_true(r->count >= 1);
        }
    }
    assert_int_equal(o, n);
    *nt = cnt;
    return t;
}

/* ------------------------------------------------------------------------ */
/* Expected window answers                                                   */
/* ------------------------------------------------------------------------ */

typedef struct nacc {
    uint64_t calls;
    int64_t total, self, min, max;
} nacc_t;

static const nacc_t *g_sort_acc;
static int by_total(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const nacc_t *s = g_sort_acc;
    if (s[a].total != s[b].total) return s[a].total > s[b].total ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The "table":[...] text the view must give for the spans of b starting
 * in [t0, t1) (absolute), and their number. */
static char *expected_table(const brute_t *b, int64_t t0, int64_t t1, uint64_t *calls) {
    nacc_t *acc = calloc(b->nnames, sizeof *acc);
    *calls = 0;
    for (size_t i = 0; i < b->n; i++) {
        const bspan_t *s = &b->v[i];
        if (s->start < t0 || s->start >= t1) continue;
        nacc_t *a = &acc[s->name];
        if (!a->calls || s->dur < a->min) a->min = s->dur;
        if (!a->calls || s->dur > a->max) a->max = s->dur;
        a->calls++;
        a->total += s->dur;
        a->self += s->self;
        (*calls)++;
    }
    uint32_t *ord = malloc(b->nnames * sizeof *ord);
    size_t n = 0;
    for (size_t i = 0; i < b->nnames; i++)
        if (acc[i].calls) ord[n++] = (uint32_t)i;
    g_sort_acc = acc;
    qsort(ord, n, sizeof *ord, by_total);
    size_t cap = 256 + n * 200;
    char *out = malloc(cap);
    size_t o = (size_t)snprintf(out, cap, "\"table\":[");
    for (size_t i = 0; i < n; i++) {
        const nacc_t *a = &acc[ord[i]];
        char mean[40];
        size_t ml = sps__tl_fmt_double(mean, sizeof mean, (double)a->total / (double)a->calls);
        mean[ml] = 0;
        o += (size_t)snprintf(out + o, cap - o,
                              "%s{\"name\":%u,\"calls\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,"
                              "\"min_ns\":%lld,\"max_ns\":%lld,\"mean_ns\":%s}",
                              i ? "," : "", ord[i], (unsigned long long)a->calls,
                              (long long)a->total, (long long)a->self, (long long)a->min,
                              (long long)a->max, mean);
    }
    snprintf(out + o, cap - o, "]");
    free(ord);
    free(acc);
    return out;
}

/* Checks /api/window for [t0, t1) absolute against the brute force: the
 * table exactly, the call count, and every call path's node. */
static void check_window(sps__view_t *v, const brute_t *b, int64_t vt0, int64_t t0, int64_t t1) {
    char q[128], *body;
    size_t n;
    snprintf(q, sizeof q, "t0=%lld&t1=%lld", (long long)(t0 - vt0), (long long)(t1 - vt0));
    assert_int_equal(req(v, "/api/window", q, &body, &n), 200);
    uint64_t calls;
    char *tab = expected_table(b, t0, t1, &calls);
    if (!strstr(body, tab)) fail_msg("window %s:\n got %s\n want %s", q, body, tab);
    assert_int_equal((uint64_t)json_i64(body, "calls"), calls);
    /* the call tree: one node per call path (a path's ancestors too, with
     * 0 calls when none of their calls starts in the window), each with
     * the brute force's calls, total and self */
    const char *tree = strstr(body, "\"tree\":{\"name\":-1,\"children\":[");
    assert_non_null(tree);
    typedef struct pacc {
        char key[128];
        uint32_t name;
        uint64_t calls;
        int64_t total, self;
    } pacc_t;
    pacc_t *pa = calloc(256, sizeof *pa);
    size_t npa = 0;
    for (size_t i = 0; i < b->n; i++) {
        const bspan_t *s = &b->v[i];
        if (s->start < t0 || s->start >= t1) continue;
        /* the keys of its path and every prefix: names root..it */
        uint32_t chain[64];
        size_t k = 0;
        for (int64_t j = (int64_t)i; j >= 0 && k < 64; j = b->v[j].parent) chain[k++] = b->v[j].name;
        char key[128] = "";
        for (size_t d = k; d-- > 0;) {
            size_t o = strlen(key);
            snprintf(key + o, sizeof key - o, "%u/", chain[d]);
            size_t q = 0;
            while (q < npa && strcmp(pa[q].key, key)) q++;
            if (q == npa) {
                assert_true(npa < 256);
                snprintf(pa[npa].key, sizeof pa[npa].key, "%s", key);
                pa[npa++].name = chain[d];
            }
            if (d == 0) {
                pa[q].calls++;
                pa[q].total += s->dur;
                pa[q].self += s->self;
            }
        }
    }
    size_t nodes = 0;
    for (const char *c = tree; (c = strstr(c, "\"children\":[")); c++) nodes++;
    assert_int_equal(nodes, npa + 1); /* and the root */
    for (size_t q = 0; q < npa; q++) {
        char node[160];
        snprintf(node, sizeof node, "{\"name\":%u,\"calls\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,",
                 pa[q].name, (unsigned long long)pa[q].calls, (long long)pa[q].total,
                 (long long)pa[q].self);
        if (!strstr(tree, node)) fail_msg("window %s: node %s (%s) not in %s", q ? "" : "", node, pa[q].key, tree);
    }
    free(pa);
    free(tab);
    free(body);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static int tile_cmp(const void *pa, const void *pb) {
    const tile_t *a = pa, *b = pb;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static void check_file(const char *path) {
    brute_t b = brute_read(path);
    assert_true(b.n > NTINY);
    int built;
    sps__view_t *v = open_view(path, 1, &built);
    assert_true(built);
    char *body;
    size_t n;
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    int64_t vt0 = json_i64(body, "t0_ns"), ext = json_i64(body, "t1_rel_ns");
    assert_int_equal((uint64_t)json_i64(body, "nspans"), b.n); /* the file's */
    assert_int_equal((uint64_t)json_i64(strstr(body, "\"t1_rel_ns\""), "nspans"), b.n);
    assert_non_null(strstr(body, "\"vi.Inner <b>\\\"x\\\"\"")); /* escaped */
    assert_non_null(strstr(body, "\"colors\":[\"#"));
    free(body);
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    for (size_t i = 0; i < b.n; i++) {
        if (b.v[i].start < tmin) tmin = b.v[i].start;
        if (b.v[i].start + b.v[i].dur > tmax) tmax = b.v[i].start + b.v[i].dur;
    }
    assert_true(vt0 <= tmin);

    /* full zoom-out: few records per lane, every span counted once */
    char q[256];
    for (int px = 20; px <= 2000; px *= 10) {
        snprintf(q, sizeof q, "t0=0&t1=%lld&px=%d", (long long)ext + 1, px);
        assert_int_equal(req(v, "/api/tiles", q, &body, &n), 200);
        size_t nt;
        uint32_t maxlane;
        tile_t *t = parse_tiles(body, n, &nt, (uint32_t)px, &maxlane);
        assert_true(maxlane <= 3u * (uint32_t)px + 3);
        uint64_t total = 0;
        for (size_t i = 0; i < nt; i++) total += t[i].count;
        assert_int_equal(total, b.n);
        if (px == 20) assert_true(nt < b.n / 4); /* merged */
        free(t);
        free(body);
    }

    /* full zoom-in: every span exactly once with its exact times */
    tile_t *got = malloc(b.n * sizeof *got);
    size_t ngot = 0;
    const int64_t w = 8192;
    int64_t first = tmin - vt0;
    for (int64_t a = first - first % w; a <= tmax - vt0; a += w) {
        snprintf(q, sizeof q, "t0=%lld&t1=%lld&px=16384", (long long)a, (long long)(a + w));
        assert_int_equal(req(v, "/api/tiles", q, &body, &n), 200);
        size_t nt;
        uint32_t maxlane;
        tile_t *t = parse_tiles(body, n, &nt, 16384, &maxlane);
        for (size_t i = 0; i < nt; i++) {
            assert_int_equal(t[i].level, 0);
            assert_int_equal(t[i].count, 1);
            if (t[i].start < (double)a) continue; /* counted where it starts */
            assert_true(ngot < b.n);
            got[ngot++] = t[i];
        }
        free(t);
        free(body);
    }
    assert_int_equal(ngot, b.n);
    tile_t *want = malloc(b.n * sizeof *want);
    for (size_t i = 0; i < b.n; i++)
        want[i] = (tile_t){b.v[i].thread, b.v[i].depth, 0, b.v[i].name, 1,
                           (double)(b.v[i].start - vt0), (double)b.v[i].dur};
    qsort(got, ngot, sizeof *got, tile_cmp);
    qsort(want, b.n, sizeof *want, tile_cmp);
    for (size_t i = 0; i < b.n; i++) {
        assert_int_equal(got[i].thread, want[i].thread);
        assert_int_equal(got[i].depth, want[i].depth);
        assert_int_equal(got[i].name, want[i].name);
        assert_true(got[i].start == want[i].start);
        assert_true(got[i].dur == want[i].dur);
    }
    free(got);
    free(want);

    /* windows: the whole range, the fold's numbers; then sub-windows */
    check_window(v, &b, vt0, vt0, vt0 + ext + 1);
    {
        sps__fold_tl_t f;
        sps__tlr_t *r;
        assert_int_equal(sps__tlr_open(&r, path, sps__tl_format_of(path)), 0);
        const sps__tl_header_t *h = sps__tlr_header(r);
        assert_int_equal(sps__fold_tl_init(&f, h->nthreads, h->nnames, 0), 0);
        sps__tl_span_t s;
        while (sps__tlr_next(r, &s) > 0)
            assert_true(sps__fold_tl_add(&f, s.thread, s.name, s.start_ns, s.end_ns, s.prior_ns) >= 0);
        sps__fold_tl_finish(&f);
        snprintf(q, sizeof q, "t0=0&t1=%lld", (long long)ext + 1);
        assert_int_equal(req(v, "/api/window", q, &body, &n), 200);
        for (size_t i = 0; i < h->nnames; i++) {
            if (!f.acc[i].count) continue;
            char row[256];
            snprintf(row, sizeof row,
                     "{\"name\":%zu,\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,\"min_ns\":%llu,"
                     "\"max_ns\":%llu,",
                     i, (unsigned long long)f.acc[i].count, (unsigned long long)f.acc[i].total,
                     (unsigned long long)f.acc[i].self, (unsigned long long)f.acc[i].min,
                     (unsigned long long)f.acc[i].max);
            if (!strstr(body, row)) fail_msg("the one fold's row %s not in %s", row, body);
        }
        free(body);
        sps__fold_tl_free(&f);
        sps__tlr_free(r);
    }
    for (int k = 1; k <= 12; k++) {
        int64_t a = tmin + (tmax - tmin) * (k - 1) / 13, z = tmin + (tmax - tmin) * (k + 2) / 13;
        check_window(v, &b, vt0, a, z);
    }
    /* a window on some threads only */
    snprintf(q, sizeof q, "t0=0&t1=%lld&threads=0", (long long)ext + 1);
    assert_int_equal(req(v, "/api/window", q, &body, &n), 200);
    uint64_t c0 = 0;
    for (size_t i = 0; i < b.n; i++) c0 += b.v[i].thread == 0;
    assert_int_equal((uint64_t)json_i64(body, "calls"), c0);
    free(body);

    /* span lookup: every 7th span, at its middle */
    for (size_t i = 0; i < b.n; i += 7) {
        const bspan_t *s = &b.v[i];
        snprintf(q, sizeof q, "thread=%u&depth=%u&t=%lld", s->thread, s->depth,
                 (long long)(s->start - vt0 + s->dur / 2));
        assert_int_equal(req(v, "/api/span", q, &body, &n), 200);
        assert_int_equal(json_i64(body, "start_ns"), s->start - vt0);
        assert_int_equal(json_i64(body, "dur_ns"), s->dur);
        assert_int_equal(json_i64(body, "self_ns"), s->self);
        assert_int_equal(json_i64(body, "name"), s->name);
        /* the path: depth + 1 names, ending with its own */
        const char *p = strstr(body, "\"path\":[");
        assert_non_null(p);
        size_t commas = 0;
        for (const char *c = p; *c && *c != ']'; c++) commas += *c == ',';
        assert_int_equal(commas, s->depth);
        free(body);
    }
    snprintf(q, sizeof q, "thread=0&depth=0&t=%lld", (long long)(tmax - vt0 + 1000000));
    assert_int_equal(req(v, "/api/span", q, &body, &n), 404);
    free(body);

    /* search: case-insensitive, hits in time order */
    assert_int_equal(req(v, "/api/search", "q=INNER%20%3Cb", &body, &n), 200);
    uint32_t inner = UINT32_MAX;
    for (size_t i = 0; i < b.nnames; i++)
        if (!strcmp(b.names[i], "vi.Inner <b>\"x\"")) inner = (uint32_t)i;
    assert_true(inner != UINT32_MAX);
    char want_names[64];
    snprintf(want_names, sizeof want_names, "{\"names\":[%u],\"hits\":[", inner);
    assert_true(!strncmp(body, want_names, strlen(want_names)));
    int64_t first_inner = INT64_MAX;
    size_t ninner = 0;
    for (size_t i = 0; i < b.n; i++)
        if (b.v[i].name == inner) {
            ninner++;
            if (b.v[i].start < first_inner) first_inner = b.v[i].start;
        }
    assert_int_equal(json_i64(body, "start_ns"), first_inner - vt0);
    size_t nh = 0;
    for (const char *p = body; (p = strstr(p, "\"start_ns\"")); p++) nh++;
    assert_int_equal(nh, ninner < 100 ? ninner : 100);
    free(body);
    assert_int_equal(req(v, "/api/search", "q=vi.&limit=5", &body, &n), 200);
    nh = 0;
    for (const char *p = body; (p = strstr(p, "\"start_ns\"")); p++) nh++;
    assert_int_equal(nh, 5);
    free(body);
    assert_int_equal(req(v, "/api/search", "q=no%20such%20region", &body, &n), 200);
    assert_string_equal(body, "{\"names\":[],\"hits\":[]}");
    free(body);

    /* counters: the series, at most px points, min <= last <= max */
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    int has_counter = strstr(body, "\"vi.queue\"") != NULL;
    free(body);
    if (has_counter) {
        snprintf(q, sizeof q, "t0=0&t1=%lld&px=5", (long long)ext + 1);
        assert_int_equal(req(v, "/api/counters", q, &body, &n), 200);
        assert_non_null(strstr(body, "{\"series\":[{\"id\":0,\"points\":[["));
        size_t npts = 0;
        for (const char *p = strstr(body, "\"points\":[") + 10; (p = strstr(p, "[")); p++) npts++;
        assert_true(npts >= 1 && npts <= 5);
        free(body);
    }

    /* bad parameters: 400 with an error */
    const char *bad[][2] = {
        {"/api/tiles", "t0=10&t1=5&px=10"},  {"/api/tiles", "t0=0&t1=100&px=0"},
        {"/api/tiles", "t0=0&t1=100&px=16385"}, {"/api/tiles", "t0=0&t1=100"},
        {"/api/tiles", "t0=x&t1=100&px=3"},  {"/api/tiles", "t0=0&t1=100&px=3&threads=99"},
        {"/api/tiles", "t0=0&t1=100&px=3&threads=0,a"}, {"/api/tiles", "t0=nan&t1=100&px=3"},
        {"/api/window", "t0=5&t1=5"},        {"/api/window", NULL},
        {"/api/span", "thread=999&depth=0&t=0"}, {"/api/span", "thread=0&t=0"},
        {"/api/search", NULL},               {"/api/search", "q=%zz"},
        {"/api/search", "q=a&limit=0"},      {"/api/counters", "t0=0&t1=10&px=-1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int st = req(v, bad[i][0], bad[i][1], &body, &n);
        if (st != 400) fail_msg("%s?%s: %d %s", bad[i][0], bad[i][1], st, body);
        assert_true(!strncmp(body, "{\"error\":\"", 10));
        free(body);
    }
    assert_int_equal(req(v, "/api/nothing", NULL, &body, &n), 404);
    free(body);
    sps__view_close(v);

    /* reopened: the index is reused */
    v = open_view(path, 0, &built);
    assert_false(built);
    sps__view_close(v);
    brute_free(&b);
}

static void test_h5(void **state) {
    (void)state;
    record_once();
    check_file(g_h5);
}

static void test_json(void **state) {
    (void)state;
    record_once();
    check_file(g_json);
}

static void test_pftrace(void **state) {
    (void)state;
    record_once();
    check_file(g_pf);
}

/* The index of path in the test's index directory (one file there per
 * source; found by its name's prefix). */
static void index_of(const char *src, char *out, size_t cap) {
    sps__view_t *v = open_view(src, 0, NULL);
    char *body;
    size_t n;
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    const char *p = strstr(body, "\"index\":{\"path\":\"");
    assert_non_null(p);
    p += strlen("\"index\":{\"path\":\"");
    const char *e = strchr(p, '"');
    snprintf(out, cap, "%.*s", (int)(e - p), p);
    free(body);
    sps__view_close(v);
}

static void copy_file(const char *from, const char *to) {
    assert_int_equal(tu_system("cp '%s' '%s'", from, to), 0);
}

static void test_stale_and_corrupt(void **state) {
    (void)state;
    record_once();
    const char *src = tu_path("viewidx_stale.json");
    copy_file(g_json, src);
    char ix[1024];
    index_of(src, ix, sizeof ix);
    int built;
    sps__view_close(open_view(src, 0, &built));
    assert_false(built);
    /* the source changes: rebuilt */
    struct stat st;
    assert_int_equal(stat(src, &st), 0);
    assert_int_equal(tu_system("touch -d '2001-01-01' '%s'", src), 0);
    sps__view_close(open_view(src, 0, &built));
    assert_true(built);
    sps__view_close(open_view(src, 0, &built));
    assert_false(built);
    sps__vix_src_t id;
    assert_int_equal(sps__vix_src_stat(src, &id), 0);
    /* truncated, garbage, empty: rejected by vix_open, rebuilt by view_open */
    char saved[1100];
    snprintf(saved, sizeof saved, "%s.good", ix);
    copy_file(ix, saved);
    struct stat ist;
    assert_int_equal(stat(ix, &ist), 0);
    const char *damage[] = {"truncate -s %lld '%s'", "truncate -s 100 '%s'",
                            "head -c 5000 /dev/urandom > '%s'", ": > '%s'"};
    for (size_t d = 0; d < 4; d++) {
        copy_file(saved, ix);
        if (d == 0) assert_int_equal(tu_system(damage[0], (long long)ist.st_size - 1, ix), 0);
        else assert_int_equal(tu_system(damage[d], ix), 0);
        sps__vix_t *x = NULL;
        assert_int_equal(sps__vix_open(&x, ix, &id), SPS_EFORMAT);
        assert_null(x);
        assert_true(strlen(sps__err_msg()) > 0);
        sps__view_close(open_view(src, 0, &built));
        assert_true(built);
    }
    /* bytes flipped anywhere: open fails with SPS_EFORMAT or every query
     * answers (200, 404 or 500), never a crash */
    FILE *f = fopen(saved, "rb");
    assert_non_null(f);
    unsigned char *good = malloc((size_t)ist.st_size);
    assert_int_equal(fread(good, 1, (size_t)ist.st_size, f), (size_t)ist.st_size);
    fclose(f);
    srand(12345);
    for (int it = 0; it < 300; it++) {
        unsigned char *m = malloc((size_t)ist.st_size);
        memcpy(m, good, (size_t)ist.st_size);
        int nflip = 1 + rand() % 8;
        for (int k = 0; k < nflip; k++) {
            size_t at = (size_t)rand() % (size_t)ist.st_size;
            if (it % 3 == 0 && at > 128) at = 128 + at % 512; /* near the header too */
            m[at] ^= (unsigned char)(1 + rand() % 255);
        }
        f = fopen(ix, "wb");
        assert_int_equal(fwrite(m, 1, (size_t)ist.st_size, f), (size_t)ist.st_size);
        fclose(f);
        free(m);
        sps__vix_t *x = NULL;
        int rc = sps__vix_open(&x, ix, NULL);
        assert_true(rc == 0 || rc == SPS_EFORMAT);
        if (rc) continue;
        const sps__vix_info_t *in = sps__vix_info(x);
        for (size_t l = 0; l < in->nlanes; l++) {
            sps__vix_sum_t *sums = calloc(in->npaths ? in->npaths : 1, sizeof *sums);
            (void)sps__vix_window(x, l, INT64_MIN, INT64_MAX, sums);
            free(sums);
        }
        sps__vix_close(x);
        /* the view: the same damaged file is either rebuilt or answers */
        sps__view_t *v = NULL;
        sps__view_opts_t o = {g_ixdir, 0, 0};
        const char *paths[1] = {src};
        if (sps__view_open(&v, paths, 1, &o) == 0) {
            const char *qs[][2] = {{"/api/meta", NULL},
                                   {"/api/tiles", "t0=0&t1=100000000000&px=100"},
                                   {"/api/tiles", "t0=0&t1=1000000&px=16384"},
                                   {"/api/window", "t0=0&t1=100000000000"},
                                   {"/api/search", "q=vi"},
                                   {"/api/counters", "t0=0&t1=100000000000&px=9"},
                                   {"/api/span", "thread=0&depth=0&t=1000"}};
            for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
                char *body;
                size_t n;
                int st = req(v, qs[k][0], qs[k][1], &body, &n);
                assert_true(st == 200 || st == 404 || st == 500);
                free(body);
            }
            sps__view_close(v);
        }
    }
    free(good);
    copy_file(saved, ix);
}

static void test_several_files(void **state) {
    (void)state;
    record_once();
    sps__view_t *v;
    sps__view_opts_t o = {g_ixdir, 0, 0};
    const char *paths[2] = {g_h5, g_pf};
    assert_int_equal(sps__view_open(&v, paths, 2, &o), 0);
    char *body;
    size_t n;
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    brute_t b = brute_read(g_h5);
    assert_int_equal((uint64_t)json_i64(strstr(body, "\"t1_rel_ns\""), "nspans"), 2 * b.n);
    int64_t ext = json_i64(body, "t1_rel_ns");
    /* names merged by text: each once */
    const char *names = strstr(body, "\"names\":[");
    assert_non_null(names);
    const char *once = strstr(names, "\"vi.rec\"");
    assert_non_null(once);
    assert_null(strstr(once + 1, "\"vi.rec\""));
    free(body);
    char q[128];
    snprintf(q, sizeof q, "t0=0&t1=%lld", (long long)ext + 1);
    assert_int_equal(req(v, "/api/window", q, &body, &n), 200);
    assert_int_equal((uint64_t)json_i64(body, "calls"), 2 * b.n);
    free(body);
    /* the second file's threads come after the first's */
    snprintf(q, sizeof q, "t0=0&t1=%lld&px=100&threads=%d", (long long)ext + 1, NTHR + 1);
    assert_int_equal(req(v, "/api/tiles", q, &body, &n), 200);
    size_t nt;
    uint32_t ml;
    tile_t *t = parse_tiles(body, n, &nt, 100, &ml);
    assert_true(nt > 0);
    for (size_t i = 0; i < nt; i++) assert_int_equal(t[i].thread, NTHR + 1);
    free(t);
    free(body);
    sps__view_close(v);
    brute_free(&b);
    /* a file that is not a recording: an error, no crash */
    const char *junk = tu_path("viewidx_junk.json");
    FILE *f = fopen(junk, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":", f);
    fclose(f);
    paths[0] = junk;
    assert_true(sps__view_open(&v, paths, 1, &o) < 0);
    assert_true(strlen(sps__err_msg()) > 0);
}

/* ------------------------------------------------------------------------ */
/* Counter levels of detail                                                 */
/* ------------------------------------------------------------------------ */

#define CN 300000 /* samples of the long series */

static char g_cjson[1024];
static int64_t *g_ct; /* the long series as written: ns */
static double *g_cv;

static uint64_t xs(uint64_t *r) {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

/* A .json with one span and two counter series on one process: "mem"
 * (CN samples, bursts of ns gaps, runs of us gaps and ms gaps between,
 * values repeating at times) and "other" (every 1000th time). */
static void counters_file(void) {
    if (g_cjson[0]) return;
    snprintf(g_cjson, sizeof g_cjson, "%s", tu_path("viewidx_counters.json"));
    g_ct = malloc(CN * sizeof *g_ct);
    g_cv = malloc(CN * sizeof *g_cv);
    uint64_t r = 88172645463325252ull;
    int64_t t = 1000000000;
    for (size_t k = 0; k < CN; k++) {
        uint64_t g = xs(&r) % 100;
        t += g < 50 ? 1 + (int64_t)(xs(&r) % 100) : g < 80 ? 1000 + (int64_t)(xs(&r) % 5000)
             : g < 98 ? 20000 + (int64_t)(xs(&r) % 50000) : 1000000 + (int64_t)(xs(&r) % 5000000);
        g_ct[k] = t;
        uint64_t vv = xs(&r);
        g_cv[k] = k && vv % 4 == 0 ? g_cv[k - 1] : (double)((int64_t)(vv % 2001) - 1000) / 4;
    }
    /* values the answer's number writer treats apart: a negative zero,
     * integers about 10^15 and beyond, huge, tiny, not a binary fraction */
    const double special[] = {-0.0, 1e15 - 1, 1e15, -1e15, 123456789012345678.0, 1e300, -1e-300,
                              0.1, -4503599627370497.0, 9007199254740993.0};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++)
        g_cv[CN / 7 + i * 9973] = special[i];
    FILE *f = fopen(g_cjson, "w");
    assert_non_null(f);
    fprintf(f, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"run\",\"pid\":1,\"tid\":1,"
               "\"ts\":%lld.000,\"dur\":%lld.000}",
            (long long)(g_ct[0] / 1000), (long long)((g_ct[CN - 1] - g_ct[0]) / 1000));
    for (size_t k = 0; k < CN; k++) {
        char v[40];
        sps__tl_fmt_double(v, sizeof v, g_cv[k]);
        fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":%lld.%03lld,\"args\":{\"b\":%s}}",
                (long long)(g_ct[k] / 1000), (long long)(g_ct[k] % 1000), v);
        if (k % 1000 == 0)
            fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"other\",\"pid\":1,\"ts\":%lld.%03lld,"
                       "\"args\":{\"n\":%zu}}",
                    (long long)(g_ct[k] / 1000), (long long)(g_ct[k] % 1000), k);
    }
    fputs("]}\n", f);
    assert_int_equal(fclose(f), 0);
}

/* A series' samples read back one by one (the reference for the walks). */
typedef struct rseries {
    int64_t *t;
    double *v;
    uint64_t n;
} rseries_t;

static rseries_t read_series(sps__vix_t *x, size_t s) {
    rseries_t r = {0};
    r.n = sps__vix_info(x)->series[s].n;
    r.t = malloc((r.n ? r.n : 1) * sizeof *r.t);
    r.v = malloc((r.n ? r.n : 1) * sizeof *r.v);
    for (uint64_t i = 0; i < r.n; i++) assert_int_equal(sps__vix_sample(x, s, i, &r.t[i], &r.v[i]), 0);
    return r;
}

static void put_num(char **p, double d) {
    char b[40];
    size_t n = sps__tl_fmt_double(b, sizeof b, d);
    memcpy(*p, b, n);
    *p += n;
}

/* The points of one series over [t0, t1) at px columns by brute force:
 * every sample, its column by the API's formula, as JSON text into out
 * (room for them); returns how many points. */
static size_t brute_points(const rseries_t *r, int64_t vt0, int64_t t0, int64_t t1, long px,
                           char *out) {
    double span = (double)t1 - (double)t0;
    long col = -1;
    int64_t ct = 0;
    double mn = 0, mx = 0, last = 0;
    size_t np = 0;
    char *p = out;
    for (uint64_t k = 0; k <= r->n; k++) {
        int end = k == r->n || r->t[k] >= t1;
        if (!end && r->t[k] < t0) continue;
        long c = -2;
        if (!end) {
            c = (long)((double)(r->t[k] - t0) * (double)px / span);
            if (c >= px) c = px - 1;
        }
        if (c != col && col >= 0) {
            p += sprintf(p, "%s[%lld,", np ? "," : "", (long long)(ct - vt0));
            put_num(&p, mn);
            *p++ = ',';
            put_num(&p, mx);
            *p++ = ',';
            put_num(&p, last);
            *p++ = ']';
            np++;
        }
        if (end) break;
        if (c != col) {
            col = c;
            ct = r->t[k];
            mn = mx = r->v[k];
        }
        if (r->v[k] < mn) mn = r->v[k];
        if (r->v[k] > mx) mx = r->v[k];
        last = r->v[k];
    }
    *p = 0;
    return np;
}

typedef struct ccount {
    size_t n;
    int64_t prev;
    int order;
} ccount_t;

static int count_point(void *ctx, const sps__vix_cpoint_t *pt) {
    ccount_t *c = ctx;
    if (c->n && pt->t <= c->prev) c->order = 0;
    c->prev = pt->t;
    c->n++;
    return 0;
}

/* /api/counters at a window equals the walk over every sample, and the
 * levels' walk reads O(px) records. */
static void check_counters(sps__view_t *v, sps__vix_t *x, const rseries_t *rs, size_t ns,
                           int64_t vt0, int64_t a, int64_t b, long px, char *exp) {
    char q[160];
    snprintf(q, sizeof q, "t0=%lld&t1=%lld&px=%ld", (long long)a, (long long)b, px);
    char *body;
    size_t n;
    assert_int_equal(req(v, "/api/counters", q, &body, &n), 200);
    char *p = exp + sprintf(exp, "{\"series\":[");
    for (size_t s = 0; s < ns; s++) {
        p += sprintf(p, "%s{\"id\":%zu,\"points\":[", s ? "," : "", s);
        size_t np = brute_points(&rs[s], vt0, vt0 + a, vt0 + b, px, p);
        assert_true(np <= (size_t)px);
        p += strlen(p);
        p += sprintf(p, "]}");
    }
    sprintf(p, "]}");
    if (strcmp(body, exp)) {
        size_t i = 0;
        while (body[i] && body[i] == exp[i]) i++;
        fail_msg("%s: differs at %zu: got ...%.80s want ...%.80s", q, i, body + (i > 20 ? i - 20 : 0),
                 exp + (i > 20 ? i - 20 : 0));
    }
    free(body);
    /* the levels' walk and the samples' walk give the same columns; with
     * many samples a column the levels read far fewer records */
    for (size_t s = 0; s < ns; s++) {
        uint64_t rl = 0, rr = 0;
        ccount_t c1 = {0, 0, 1}, c0 = {0, 0, 1};
        assert_int_equal(sps__vix_counter_cols(x, s, vt0 + a, vt0 + b, (uint32_t)px, 1, count_point,
                                               &c1, &rl), 0);
        assert_int_equal(sps__vix_counter_cols(x, s, vt0 + a, vt0 + b, (uint32_t)px, 0, count_point,
                                               &c0, &rr), 0);
        assert_int_equal(c1.n, c0.n);
        assert_true(c1.order && c0.order);
        /* many samples a column: the levels pay (beside three binary
         * searches of ~19 reads each) */
        if (rs[s].n == CN && rr > 64 * (uint64_t)px + 256)
            if (rl * 4 > rr) fail_msg("%s: levels read %llu, the samples %llu", q,
                                      (unsigned long long)rl, (unsigned long long)rr);
    }
}

static void test_counter_levels(void **state) {
    (void)state;
    counters_file();
    int built;
    sps__view_t *v = open_view(g_cjson, 1, &built);
    assert_true(built);
    char *body;
    size_t n;
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    int64_t vt0 = json_i64(body, "t0_ns"), ext = json_i64(body, "t1_rel_ns");
    free(body);
    char ix[1024];
    index_of(g_cjson, ix, sizeof ix);
    sps__vix_t *x;
    assert_int_equal(sps__vix_open(&x, ix, NULL), 0);
    const sps__vix_info_t *in = sps__vix_info(x);
    assert_int_equal(in->nseries, 2);
    rseries_t rs[2];
    size_t big = 2;
    for (size_t s = 0; s < 2; s++) {
        rs[s] = read_series(x, s);
        if (rs[s].n == CN) big = s;
    }
    assert_true(big < 2);
    assert_int_equal(rs[1 - big].n, CN / 1000);
    /* the samples as written; levels at most a third of them, coarser
     * ones at most a quarter of the finer ones */
    for (size_t k = 0; k < CN; k++) {
        assert_int_equal(rs[big].t[k], g_ct[k]);
        assert_true(rs[big].v[k] == g_cv[k]);
    }
    const sps__vix_series_t *se = &in->series[big];
    assert_true(se->nlev >= 4);
    uint64_t recs = 0, below = CN;
    for (uint32_t j = 0; j < se->nlev; j++) {
        const sps__vix_clevel_t *c = &in->clevels[se->lev + j];
        assert_true(c->n * 4 <= below);
        recs += c->n;
        below = c->n;
    }
    assert_true(recs * 3 <= CN);
    /* zooms: the whole range at several widths, then random windows from
     * the whole range down to ~1 us, some past either end */
    char *exp = malloc((size_t)16384 * 2 * 120 + 256);
    const long pxs[] = {1, 2, 7, 640, 1920, 16384};
    for (size_t i = 0; i < sizeof pxs / sizeof *pxs; i++)
        check_counters(v, x, rs, 2, vt0, 0, ext + 1, pxs[i], exp);
    check_counters(v, x, rs, 2, vt0, -5000, ext + 5000, 1920, exp);
    uint64_t rng = 12345;
    const long rpx[] = {1, 3, 100, 1000, 1920};
    for (int it = 0; it < 60; it++) {
        double u = (double)(xs(&rng) % 1000001) / 1e6;
        int64_t w = (int64_t)((double)ext * pow(1e-6, u)) + 1;
        int64_t a = (int64_t)(xs(&rng) % (uint64_t)(ext + w / 4)) - w / 8;
        check_counters(v, x, rs, 2, vt0, a, a + w, rpx[xs(&rng) % 5], exp);
    }
    /* each special value alone, and as the last of a column */
    for (size_t i = 0; i < 10; i++) {
        int64_t at = g_ct[CN / 7 + i * 9973] - vt0;
        check_counters(v, x, rs, 2, vt0, at, at + 1, 1, exp);
        check_counters(v, x, rs, 2, vt0, at - 100000, at + 1, 3, exp);
    }
    /* a window around one bucket's edge at ns resolution */
    int64_t mid = g_ct[CN / 2] - vt0;
    check_counters(v, x, rs, 2, vt0, mid - 3, mid + 2, 5, exp);
    free(exp);
    for (size_t s = 0; s < 2; s++) {
        free(rs[s].t);
        free(rs[s].v);
    }
    sps__vix_close(x);
    sps__view_close(v);
}

/* The recording's counter (vi.queue, 40 samples) in each format:
 * /api/counters equals the brute-force binning at several widths. */
static void test_counters_formats(void **state) {
    (void)state;
    record_once();
    const char *files[3] = {g_h5, g_json, g_pf};
    for (size_t f = 0; f < 3; f++) {
        sps__view_t *v = open_view(files[f], 0, NULL);
        char *body;
        size_t n;
        assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
        int64_t vt0 = json_i64(body, "t0_ns"), ext = json_i64(body, "t1_rel_ns");
        free(body);
        char ix[1024];
        index_of(files[f], ix, sizeof ix);
        sps__vix_t *x;
        assert_int_equal(sps__vix_open(&x, ix, NULL), 0);
        const sps__vix_info_t *in = sps__vix_info(x);
        assert_true(in->nseries >= 1 && in->nseries <= 4);
        rseries_t rs[4];
        uint64_t total = 0;
        for (size_t s = 0; s < in->nseries; s++) {
            rs[s] = read_series(x, s);
            total += rs[s].n;
        }
        assert_true(total >= 40);
        char *exp = malloc((size_t)2000 * 4 * 120 + 256);
        const long pxs[] = {1, 2, 5, 13, 40, 1920};
        for (size_t i = 0; i < sizeof pxs / sizeof *pxs; i++) {
            check_counters(v, x, rs, in->nseries, vt0, 0, ext + 1, pxs[i], exp);
            check_counters(v, x, rs, in->nseries, vt0, ext / 3, ext / 3 + ext / 5, pxs[i], exp);
        }
        free(exp);
        for (size_t s = 0; s < in->nseries; s++) {
            free(rs[s].t);
            free(rs[s].v);
        }
        sps__vix_close(x);
        sps__view_close(v);
    }
}

/* Whether the counters of index ix answer every zoom with 0 or
 * SPS_EFORMAT (a damaged one); returns how many SPS_EFORMAT. */
static int counters_survive(const char *ix) {
    sps__vix_t *x = NULL;
    int rc = sps__vix_open(&x, ix, NULL);
    assert_true(rc == 0 || rc == SPS_EFORMAT);
    if (rc) {
        assert_true(strlen(sps__err_msg()) > 0);
        return 1;
    }
    const sps__vix_info_t *in = sps__vix_info(x);
    int bad = 0;
    int64_t lo = in->t_min, hi = in->t_max + 1;
    for (size_t s = 0; s < in->nseries; s++)
        for (int z = 0; z < 8; z++) {
            int64_t w = (hi - lo) >> (2 * z);
            if (w < 1) w = 1;
            int64_t a = lo + (hi - lo) / 3;
            ccount_t c = {0, 0, 1};
            uint64_t reads;
            for (int lv = 0; lv < 2; lv++) {
                rc = sps__vix_counter_cols(x, s, a, a + w, 977, lv, count_point, &c, &reads);
                assert_true(rc == 0 || rc == SPS_EFORMAT);
                if (rc) {
                    assert_true(strlen(sps__err_msg()) > 0);
                    bad++;
                }
            }
        }
    sps__vix_close(x);
    return bad;
}

static void write_file(const char *path, const unsigned char *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* A damaged counters index: the meta section's series and levels and the
 * levels' records flipped, and every record's first child out of range:
 * the open or the walk says SPS_EFORMAT, never a crash; the view
 * rebuilds or answers 200 / 500. */
static void test_counter_corrupt(void **state) {
    (void)state;
    counters_file();
    sps__view_close(open_view(g_cjson, 0, NULL));
    char ix[1024], bad_ix[1100];
    index_of(g_cjson, ix, sizeof ix);
    snprintf(bad_ix, sizeof bad_ix, "%s.bad", ix);
    FILE *f = fopen(ix, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *good = malloc(size), *m = malloc(size);
    assert_int_equal(fread(good, 1, size, f), size);
    fclose(f);
    assert_int_equal(counters_survive(ix), 0);
    sps__vix_t *x;
    assert_int_equal(sps__vix_open(&x, ix, NULL), 0);
    const sps__vix_info_t *in = sps__vix_info(x);
    uint64_t meta_off = le64(good + 64), meta_len = le64(good + 72);
    assert_true(meta_off + meta_len <= size && meta_len > 0);
    size_t big = in->series[0].nlev ? 0 : 1;
    const sps__vix_clevel_t *fine = &in->clevels[in->series[big].lev];
    uint64_t lv_off = fine->off, lv_len = 0;
    for (uint32_t j = 0; j < in->series[big].nlev; j++)
        lv_len += in->clevels[in->series[big].lev + j].n * 40;
    uint64_t fine_off = fine->off, fine_n = fine->n;
    sps__vix_close(x);
    /* every first child of the finest level past the samples */
    memcpy(m, good, size);
    for (uint64_t i = 0; i < fine_n; i++)
        for (int b = 0; b < 8; b++) m[fine_off + i * 40 + 32 + b] = 0x7f;
    write_file(bad_ix, m, size);
    assert_true(counters_survive(bad_ix) > 0);
    /* a record's value not finite */
    memcpy(m, good, size);
    for (uint64_t i = 0; i < fine_n; i++) memset(m + fine_off + i * 40 + 8, 0xff, 8);
    write_file(bad_ix, m, size);
    assert_true(counters_survive(bad_ix) > 0);
    /* bytes flipped in the meta section's counter part and in the levels */
    srand(777);
    for (int it = 0; it < 200; it++) {
        memcpy(m, good, size);
        int nflip = 1 + rand() % 6;
        for (int k = 0; k < nflip; k++) {
            size_t at = it % 2 ? (size_t)(meta_off + meta_len - 1 - (uint64_t)rand() % (meta_len < 200 ? meta_len : 200))
                               : (size_t)(lv_off + (uint64_t)rand() % lv_len);
            m[at] ^= (unsigned char)(1 + rand() % 255);
        }
        write_file(bad_ix, m, size);
        (void)counters_survive(bad_ix);
    }
    /* the view on a damaged index: rebuilt or answering */
    memcpy(m, good, size);
    for (uint64_t i = 0; i < fine_n; i++) m[fine_off + i * 40 + 39] = 0x10;
    write_file(ix, m, size);
    sps__view_t *v;
    sps__view_opts_t o = {g_ixdir, 0, 0};
    const char *paths[1] = {g_cjson};
    assert_int_equal(sps__view_open(&v, paths, 1, &o), 0);
    char *body;
    size_t n;
    int st = req(v, "/api/counters", "t0=0&t1=100000000000&px=333", &body, &n);
    assert_true(st == 200 || st == 500);
    if (st == 500) assert_non_null(strstr(body, "corrupt view index"));
    free(body);
    sps__view_close(v);
    write_file(ix, good, size);
    unlink(bad_ix);
    free(good);
    free(m);
}

/* ------------------------------------------------------------------------ */
/* Device activity: GPU processes, stream lanes, launching spans            */
/* ------------------------------------------------------------------------ */

#define DV_NL 40   /* top-level dv.launch calls on the main thread */
#define DV_K 150   /* kernels each launches: 6000 on one stream */

static sps_region_t r_dstep, r_dlaunch;

static void *dv_worker(void *arg) {
    (void)arg;
    for (int k = 0; k < 3; k++) {
        sps_begin(r_dlaunch);
        tu_spin_ns(30000);
        sps_end(r_dlaunch);
    }
    return NULL;
}

/* A span of the device fixture, with its thread's /events index. */
typedef struct dspan {
    int64_t start, end, tid;
    uint32_t name, thread, depth;
} dspan_t;

typedef struct dfix {
    char path[1024];
    brute_t b;
    dspan_t *sp;        /* b's spans with their thread's /events index */
    size_t ndev;        /* device rows */
    int64_t *cols[SPS__DEVC_N];
    size_t nrows;
    /* expected: per device row, its launching span (index into sp, -1) */
    long *launcher;
} dfix_t;

static const char *const dv_names[] = {"k_saxpy", "cudaLaunchKernel", "Memcpy HtoD (Pinned -> Device)",
                                       "cudaMemcpyAsync", "Memset (Device)", "cudaMemsetAsync",
                                       "k_fill"};

/* Appends an API row and its device row: launched at `at` by the span
 * (thread tid, region reg; -1: none), running [ds, de) on (dev, stream). */
static void dv_row(dfix_t *f, int64_t tid, int64_t reg, int64_t at, int64_t api_name, int kind,
                   int64_t name, int64_t dev, int64_t stream, int64_t ds, int64_t de,
                   int64_t bytes, int with_api) {
    static int64_t corr = 1000;
    corr++;
    for (int r = with_api ? 0 : 1; r < 2; r++) {
        size_t i = f->nrows++;
        for (int c = 0; c < SPS__DEVC_N; c++) f->cols[c][i] = 0;
        f->cols[SPS__DEVC_KINDS][i] = r ? kind : 4; /* runtime API */
        f->cols[SPS__DEVC_NAMES_IDX][i] = r ? name : api_name;
        f->cols[SPS__DEVC_DEVICES][i] = r ? dev : -1;
        f->cols[SPS__DEVC_CONTEXTS][i] = r ? 1 : -1;
        f->cols[SPS__DEVC_STREAMS][i] = r ? stream : -1;
        f->cols[SPS__DEVC_CORRELATIONS][i] = corr;
        f->cols[SPS__DEVC_STARTS][i] = r ? ds : at;
        f->cols[SPS__DEVC_ENDS][i] = r ? de : at + 10;
        f->cols[SPS__DEVC_BYTES][i] = r ? bytes : 0;
        f->cols[SPS__DEVC_RANKS][i] = 0;
        f->cols[SPS__DEVC_THREADS][i] = tid;
        f->cols[SPS__DEVC_TIDS][i] = tid >= 0 ? 4242 + tid : 999999;
        f->cols[SPS__DEVC_REGIONS][i] = reg;
        f->cols[SPS__DEVC_CALL_IDS][i] = -1;
        if (r && kind == 1) {
            f->cols[SPS__DEVC_GRID_X][i] = 64;
            f->cols[SPS__DEVC_GRID_Y][i] = 2;
            f->cols[SPS__DEVC_GRID_Z][i] = 1;
            f->cols[SPS__DEVC_BLOCK_X][i] = 256;
            f->cols[SPS__DEVC_BLOCK_Y][i] = 1;
            f->cols[SPS__DEVC_BLOCK_Z][i] = 1;
        }
        if (r) f->ndev++;
    }
}

/* The innermost span of name on thread (an index into sp) holding t, -1. */
static long dv_innermost(const dfix_t *f, uint32_t thread, uint32_t name, int64_t t) {
    long best = -1;
    for (size_t i = 0; i < f->b.n; i++) {
        const dspan_t *s = &f->sp[i];
        if (s->thread == thread && s->name == name && s->start <= t && t <= s->end &&
            (best < 0 || s->depth > f->sp[best].depth))
            best = (long)i;
    }
    return best;
}

static uint32_t dv_name_of(const brute_t *b, const char *name) {
    for (size_t i = 0; i < b->nnames; i++)
        if (!strcmp(b->names[i], name)) return (uint32_t)i;
    fail_msg("no name %s", name);
    return 0;
}

/* Records step > launch (x DV_NL, the last one nesting another launch) on
 * the main thread and 3 launches on a worker, then adds /device: per main
 * launch DV_K kernels on (GPU 0, stream 7) 300 ns apart and a copy on
 * stream 13; two overlapping sets on stream 9; a kernel per worker launch
 * on (GPU 1, stream 3); a kernel launched outside every span (stream 21). */
static void dv_fixture(dfix_t *f) {
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", tu_path("viewidx_device.h5"));
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = f->path;
    assert_int_equal(sps_setup(&cfg), 0);
    r_dstep = sps_region("dv.step");
    r_dlaunch = sps_region("dv.launch");
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, dv_worker, NULL), 0);
    sps_begin(r_dstep);
    for (int j = 0; j < DV_NL; j++) {
        sps_begin(r_dlaunch);
        tu_spin_ns(20000);
        if (j == DV_NL - 1) { /* recursive: the inner call launches */
            sps_begin(r_dlaunch);
            tu_spin_ns(20000);
            sps_end(r_dlaunch);
            tu_spin_ns(20000);
        }
        sps_end(r_dlaunch);
    }
    sps_end(r_dstep);
    pthread_join(th, NULL);
    assert_int_equal(sps_finalize(), 0);
    sps_shutdown();

    f->b = brute_read(f->path);
    sps__tlr_t *r;
    assert_int_equal(sps__tlr_open(&r, f->path, SPS__TL_H5), 0);
    const sps__tl_header_t *h = sps__tlr_header(r);
    f->sp = malloc(f->b.n * sizeof *f->sp);
    for (size_t i = 0; i < f->b.n; i++) {
        const bspan_t *s = &f->b.v[i];
        f->sp[i] = (dspan_t){s->start, s->start + s->dur, h->threads[s->thread].tid, s->name,
                             s->thread, s->depth};
    }
    sps__tlr_free(r);
    tu_h5_t *hh = tu_h5_load(f->path);
    assert_non_null(hh);
    int64_t reg_launch = -1;
    for (size_t i = 0; i < hh->nnames; i++)
        if (!strcmp(hh->names[i], "dv.launch")) reg_launch = (int64_t)i;
    assert_true(reg_launch >= 0);
    tu_h5_free(hh);

    size_t cap = 2 * (DV_NL * (DV_K + 1) + 16);
    for (int c = 0; c < SPS__DEVC_N; c++) f->cols[c] = calloc(cap, sizeof(int64_t));
    f->launcher = malloc(cap * sizeof *f->launcher);
    uint32_t nl = dv_name_of(&f->b, "dv.launch");
    /* the main thread's launch spans in start order */
    int64_t t_end = 0, t_first = INT64_MAX;
    size_t nmain = 0;
    uint32_t main_thread = UINT32_MAX;
    for (size_t i = 0; i < f->b.n; i++)
        if (f->sp[i].name == dv_name_of(&f->b, "dv.step")) main_thread = f->sp[i].thread;
    assert_true(main_thread != UINT32_MAX);
    for (size_t i = 0; i < f->b.n; i++) {
        const dspan_t *s = &f->sp[i];
        if (s->end > t_end) t_end = s->end;
        if (s->start < t_first) t_first = s->start;
        if (s->name != nl) continue;
        if (s->thread == main_thread) {
            if (s->depth != 1) continue; /* the nested one: below */
            int64_t at = s->start + 100;
            if (nmain == DV_NL - 1) { /* the last: launch from the inner call */
                long in = -1;
                for (size_t k = 0; k < f->b.n; k++)
                    if (f->sp[k].name == nl && f->sp[k].depth == 2) in = (long)k;
                assert_true(in >= 0);
                at = f->sp[in].start + 100;
            }
            for (int k = 0; k < DV_K; k++) {
                int64_t ds = t_first + 1000 + (int64_t)(nmain * DV_K + (size_t)k) * 300;
                dv_row(f, s->tid, reg_launch, at + k, 1, 1, 0, 0, 7, ds, ds + 200, 0, 1);
            }
            dv_row(f, s->tid, reg_launch, at + DV_K, 3, 2, 2, 0, 13, s->start + 500,
                   s->start + 900, 1 << 20, 1);
            nmain++;
        } else {
            dv_row(f, s->tid, reg_launch, s->start + 50, 1, 1, 6, 1, 3, s->start + 5000,
                   s->start + 9000, 0, 1);
        }
    }
    assert_int_equal(nmain, DV_NL);
    /* two sets overlapping in time on stream 9: two depths */
    dv_row(f, -1, -1, t_end + 100, 5, 3, 4, 0, 9, t_end + 1000, t_end + 5000, 4096, 1);
    dv_row(f, -1, -1, t_end + 200, 5, 3, 4, 0, 9, t_end + 2000, t_end + 6000, 4096, 1);
    /* a kernel without an API row, outside every span */
    dv_row(f, -1, -1, 0, 1, 1, 0, 0, 21, t_end + 7000, t_end + 8000, 0, 0);
    for (size_t i = 0; i < f->nrows; i++) {
        f->launcher[i] = -1;
        if (f->cols[SPS__DEVC_KINDS][i] > 3 || f->cols[SPS__DEVC_REGIONS][i] < 0) continue;
        /* the API row (the row before) is the launch */
        int64_t at = f->cols[SPS__DEVC_STARTS][i - 1];
        uint32_t thr = UINT32_MAX;
        for (size_t k = 0; k < f->b.n; k++)
            if (f->sp[k].tid == f->cols[SPS__DEVC_THREADS][i]) thr = f->sp[k].thread;
        f->launcher[i] = dv_innermost(f, thr, nl, at);
        assert_true(f->launcher[i] >= 0);
    }
    sps__h5_device_t x = {0};
    x.n = f->nrows;
    for (int c = 0; c < SPS__DEVC_N; c++) x.cols[c] = f->cols[c];
    x.nnames = sizeof dv_names / sizeof *dv_names;
    x.names = dv_names;
    x.collector = "cupti";
    x.clock = "identity";
    assert_int_equal(sps__h5_add_device(f->path, &x), 0);
}

static void dv_free(dfix_t *f) {
    for (int c = 0; c < SPS__DEVC_N; c++) free(f->cols[c]);
    free(f->launcher);
    free(f->sp);
    brute_free(&f->b);
}

typedef struct dcount {
    uint64_t entries, count;
    int64_t prev_start;
    int ordered;
} dcount_t;

static int dv_count(void *ctx, const sps__vix_ent_t *e) {
    dcount_t *c = ctx;
    c->entries++;
    c->count += e->count;
    if (e->start < c->prev_start) c->ordered = 0;
    c->prev_start = e->start;
    return 0;
}

/* The bytes of the file at path (malloc'd), their number in *n. */
static unsigned char *dv_slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long sz = ftell(fp);
    assert_true(sz > 0);
    rewind(fp);
    unsigned char *p = malloc((size_t)sz);
    assert_int_equal(fread(p, 1, (size_t)sz, fp), (size_t)sz);
    fclose(fp);
    *n = (size_t)sz;
    return p;
}

static void put_le64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void test_device_lanes(void **state) {
    (void)state;
    record_once(); /* the other tests' session is over */
    dfix_t f;
    dv_fixture(&f);
    int built;
    sps__view_t *v = open_view(f.path, 1, &built);
    assert_true(built);
    char ix[1024];
    index_of(f.path, ix, sizeof ix);
    sps__vix_t *x;
    assert_int_equal(sps__vix_open(&x, ix, NULL), 0);
    const sps__vix_info_t *in = sps__vix_info(x);
    assert_int_equal(in->nspans, f.b.n);
    assert_int_equal(in->ndev, f.ndev);
    /* the launched ones: every device row with a launching span */
    uint64_t nl = 0;
    for (size_t i = 0; i < f.nrows; i++) nl += f.launcher[i] >= 0;
    assert_int_equal(in->nrev, nl);
    /* GPU processes and stream threads */
    uint32_t t0 = in->dev_thread0, sth[5];
    assert_int_equal(in->nthreads - t0, 5); /* GPU 0: 7, 9, 13, 21; GPU 1: 3 */
    const char *want[] = {"stream 7", "stream 9", "stream 13", "stream 21", "stream 3"};
    const uint32_t depths[] = {1, 2, 1, 1, 1};
    const uint64_t per_lane[] = {DV_NL * DV_K, 2, DV_NL, 1, 3};
    for (uint32_t s = 0; s < 5; s++) {
        sth[s] = UINT32_MAX;
        for (uint32_t k = t0; k < in->nthreads; k++)
            if (!strcmp(in->threads[k].name, want[s])) sth[s] = k;
        assert_true(sth[s] != UINT32_MAX);
        const sps__vix_thread_t *t = &in->threads[sth[s]];
        assert_string_equal(in->procs[t->proc].name, s < 4 ? "GPU 0" : "GPU 1");
        assert_int_equal(t->depths, depths[s]);
        /* every level of every depth of the stream counts its activities once */
        uint64_t lane_total = 0;
        for (uint32_t d = 0; d < depths[s]; d++) {
            int64_t lane = sps__vix_lane_find(x, sth[s], d);
            assert_true(lane >= 0);
            uint32_t th, dp, nlev;
            sps__vix_lane(x, (size_t)lane, &th, &dp, &nlev);
            if (s == 0) assert_true(nlev >= 3); /* 6000 kernels 300 ns apart: merged levels */
            uint64_t c0 = 0;
            for (uint32_t k = 0; k < nlev; k++) {
                dcount_t c = {0, 0, INT64_MIN, 1};
                assert_int_equal(sps__vix_scan(x, (size_t)lane, k, INT64_MIN, INT64_MAX, NULL,
                                               dv_count, &c), 0);
                assert_true(c.ordered);
                if (k == 0) {
                    c0 = c.count;
                    assert_int_equal(c.entries, c.count);
                } else {
                    assert_int_equal(c.count, c0);
                    assert_true(c.entries < c0 || c0 < 64);
                }
            }
            lane_total += c0;
        }
        assert_int_equal(lane_total, per_lane[s]);
    }

    /* every device row: its record, its launching span */
    char *body;
    size_t n;
    char q[256];
    uint64_t checked = 0;
    int64_t vt0;
    assert_int_equal(req(v, "/api/meta", NULL, &body, &n), 200);
    vt0 = json_i64(body, "t0_ns");
    assert_int_equal((uint64_t)json_i64(body, "nspans"), f.b.n);
    assert_int_equal((uint64_t)json_i64(body, "ndevice"), f.ndev);
    assert_non_null(strstr(body, "\"name\":\"GPU 1\",\"rank\":"));
    assert_non_null(strstr(body, "\"gpu\":true"));
    assert_non_null(strstr(body, "\"name\":\"stream 13\""));
    assert_non_null(strstr(body, "\"stream\":true"));
    free(body);
    for (size_t i = 0; i < f.nrows; i++) {
        if (f.cols[SPS__DEVC_KINDS][i] > 3) continue;
        int64_t st = f.cols[SPS__DEVC_STARTS][i];
        int64_t stream = f.cols[SPS__DEVC_STREAMS][i];
        uint32_t s = stream == 7 ? 0 : stream == 9 ? 1 : stream == 13 ? 2 : stream == 21 ? 3 : 4;
        sps__vix_dev_t d;
        uint32_t dep = 0;
        int rc = sps__vix_dev_at(x, sth[s], 0, st, &d);
        if (rc == 1) rc = sps__vix_dev_at(x, sth[s], dep = 1, st, &d);
        assert_int_equal(rc, 0);
        assert_int_equal(d.end, f.cols[SPS__DEVC_ENDS][i]);
        assert_int_equal(d.kind, f.cols[SPS__DEVC_KINDS][i]);
        assert_string_equal(in->names[d.name], dv_names[f.cols[SPS__DEVC_NAMES_IDX][i]]);
        assert_int_equal(d.bytes, f.cols[SPS__DEVC_BYTES][i]);
        assert_int_equal(d.correlation, f.cols[SPS__DEVC_CORRELATIONS][i]);
        if (d.kind == 1) {
            assert_int_equal(d.grid[0], 64);
            assert_int_equal(d.grid[1], 2);
            assert_int_equal(d.block[0], 256);
        }
        long ls = f.launcher[i];
        if (ls < 0) {
            assert_int_equal(d.lthread, UINT32_MAX);
        } else {
            assert_int_equal(d.lthread, f.sp[ls].thread);
            assert_int_equal(d.ldepth, f.sp[ls].depth);
            assert_int_equal(d.lstart, f.sp[ls].start);
            assert_int_equal(d.lend, f.sp[ls].end);
            assert_string_equal(in->names[d.lname], "dv.launch");
            checked++;
        }
        if (stream == 21) assert_int_equal(d.api_name, UINT32_MAX);
        else {
            assert_string_equal(in->names[d.api_name], dv_names[f.cols[SPS__DEVC_NAMES_IDX][i - 1]]);
            assert_int_equal(d.api_start, f.cols[SPS__DEVC_STARTS][i - 1]);
        }
        if (i % 97 == 0 || stream != 7) { /* the page's answer */
            snprintf(q, sizeof q, "thread=%u&depth=%u&t=%lld", sth[s], dep,
                     (long long)(st - vt0));
            assert_int_equal(req(v, "/api/span", q, &body, &n), 200);
            assert_non_null(strstr(body, "\"device\":{\"kind\":"));
            if (ls >= 0) {
                assert_int_equal(json_i64(strstr(body, "\"launch\":"), "start_ns"),
                                 f.sp[ls].start - vt0);
                assert_int_equal(json_i64(strstr(body, "\"launch\":"), "launch_ns"),
                                 f.cols[SPS__DEVC_STARTS][i - 1] - vt0);
            } else {
                assert_non_null(strstr(body, "\"launch\":null"));
            }
            free(body);
        }
    }
    assert_int_equal(checked, nl);

    /* the launching spans: what each launched */
    for (size_t k = 0; k < f.b.n; k++) {
        const dspan_t *s = &f.sp[k];
        uint64_t want_n = 0;
        for (size_t i = 0; i < f.nrows; i++) want_n += f.launcher[i] == (long)k;
        sps__vix_dev_t got[4];
        uint64_t total;
        long g = sps__vix_dev_launched(x, s->thread, s->depth, s->start, got, 4, &total);
        assert_int_equal(total, want_n);
        assert_int_equal((uint64_t)g, want_n < 4 ? want_n : 4);
        for (long j = 0; j < g; j++) assert_int_equal(got[j].lstart, s->start);
        snprintf(q, sizeof q, "thread=%u&depth=%u&t=%lld", s->thread, s->depth,
                 (long long)(s->start - vt0));
        assert_int_equal(req(v, "/api/span", q, &body, &n), 200);
        if (want_n) assert_int_equal((uint64_t)json_i64(body, "launched_total"), want_n);
        else assert_null(strstr(body, "\"launched\""));
        free(body);
    }

    /* the window's regions and tree leave the device out; tiles carry it */
    snprintf(q, sizeof q, "t0=0&t1=%lld", (long long)(in->t_max - vt0 + 1));
    assert_int_equal(req(v, "/api/window", q, &body, &n), 200);
    assert_int_equal((uint64_t)json_i64(body, "calls"), f.b.n);
    free(body);
    for (int px = 20; px <= 2000; px *= 10) {
        snprintf(q, sizeof q, "t0=0&t1=%lld&px=%d", (long long)(in->t_max - vt0 + 1), px);
        assert_int_equal(req(v, "/api/tiles", q, &body, &n), 200);
        size_t nt;
        uint32_t maxlane;
        tile_t *t = parse_tiles(body, n, &nt, (uint32_t)px, &maxlane);
        uint64_t dev = 0, cpu = 0, recs = 0;
        for (size_t i = 0; i < nt; i++) {
            if (t[i].thread >= t0) dev += t[i].count, recs++;
            else cpu += t[i].count;
        }
        assert_int_equal(dev, f.ndev);
        assert_int_equal(cpu, f.b.n);
        if (px == 20) assert_true(recs < f.ndev / 20); /* merged */
        free(t);
        free(body);
    }
    /* search finds a kernel on its stream */
    assert_int_equal(req(v, "/api/search", "q=k_fill", &body, &n), 200);
    assert_non_null(strstr(body, "\"hits\":[{"));
    assert_int_equal(json_i64(strstr(body, "\"hits\""), "thread"), sth[4]);
    free(body);
    uint64_t dev_off = in->dev_off, rev_off = in->rev_off, ndev = in->ndev, nrev = in->nrev;
    uint32_t nthr1 = (uint32_t)in->nthreads;
    sps__view_close(v);

    /* second of two files: its threads, streams and launching spans shifted alike */
    {
        sps__view_t *v2;
        sps__view_opts_t o = {g_ixdir, 0, 0};
        const char *paths[2] = {g_h5, f.path};
        assert_int_equal(sps__view_open(&v2, paths, 2, &o), 0);
        assert_int_equal(req(v2, "/api/meta", NULL, &body, &n), 200);
        int64_t vt2 = json_i64(body, "t0_ns");
        assert_int_equal((uint64_t)json_i64(body, "ndevice"), f.ndev);
        /* the first file's threads come first: the device file's after them */
        size_t nthr0 = 0;
        for (const char *p = strstr(body, "\"threads\":["); p && (p = strstr(p, "\"depths\":"));
             p++)
            nthr0++;
        free(body);
        nthr0 -= nthr1;
        /* an activity with a launching span, on stream 7's first row (the
         * fixture's streams and overlaps vary with its times: look it up) */
        size_t i = 0;
        sps__vix_dev_t d;
        while (i < f.nrows && (f.launcher[i] < 0 || f.cols[SPS__DEVC_KINDS][i] > 3 ||
                               f.cols[SPS__DEVC_STREAMS][i] != 7 ||
                               sps__vix_dev_at(x, sth[0], 0, f.cols[SPS__DEVC_STARTS][i], &d)))
            i++;
        assert_true(i < f.nrows);
        snprintf(q, sizeof q, "thread=%zu&depth=0&t=%lld", nthr0 + sth[0],
                 (long long)(f.cols[SPS__DEVC_STARTS][i] - vt2));
        assert_int_equal(req(v2, "/api/span", q, &body, &n), 200);
        const char *l = strstr(body, "\"launch\":");
        assert_non_null(l);
        assert_int_equal(json_i64(l, "thread"), (int64_t)(nthr0 + f.sp[f.launcher[i]].thread));
        assert_int_equal(json_i64(l, "start_ns"), f.sp[f.launcher[i]].start - vt2);
        free(body);
        sps__view_close(v2);
    }
    sps__vix_close(x);

    /* a damaged device record or reverse record: SPS_EFORMAT, never a crash */
    size_t isz;
    unsigned char *orig = dv_slurp(ix, &isz);
    assert_non_null(orig);
    char bad_ix[1200];
    snprintf(bad_ix, sizeof bad_ix, "%s.bad", ix);
    unsigned char *cp = malloc(isz);
    memcpy(cp, orig, isz);
    cp[dev_off + 28] = 9; /* record 0's kind (word 3's high half): 9 */
    write_file(bad_ix, cp, isz);
    assert_int_equal(sps__vix_open(&x, bad_ix, NULL), 0);
    sps__vix_dev_t d0;
    uint32_t th0 = (uint32_t)(le64(orig + dev_off) >> 32), dp0 = (uint32_t)le64(orig + dev_off);
    assert_int_equal(sps__vix_dev_at(x, th0, dp0, (int64_t)le64(orig + dev_off + 8), &d0),
                     SPS_EFORMAT);
    assert_non_null(strstr(sps__err_msg(), "corrupt device record 0"));
    sps__vix_close(x);
    memcpy(cp, orig, isz);
    put_le64(cp + rev_off + 16, ndev); /* reverse record 0 names no record */
    write_file(bad_ix, cp, isz);
    assert_int_equal(sps__vix_open(&x, bad_ix, NULL), 0);
    uint64_t tot;
    assert_int_equal(sps__vix_dev_launched(x, (uint32_t)(le64(orig + rev_off) >> 32),
                                           (uint32_t)le64(orig + rev_off),
                                           (int64_t)le64(orig + rev_off + 8), &d0, 1, &tot),
                     SPS_EFORMAT);
    sps__vix_close(x);
    /* random bytes of the device section: every query answers or fails cleanly */
    uint64_t seed = 0x5eed;
    size_t span_len = (size_t)(ndev * 144 + nrev * 24);
    for (int k = 0; k < 300; k++) {
        memcpy(cp, orig, isz);
        for (int j = 0; j < 4; j++) {
            uint64_t at = xs(&seed) % span_len;
            size_t off = (size_t)(at < ndev * 144 ? dev_off + at : rev_off + (at - ndev * 144));
            cp[off] ^= (unsigned char)(1u + xs(&seed) % 255);
        }
        write_file(bad_ix, cp, isz);
        if (sps__vix_open(&x, bad_ix, NULL)) continue;
        for (uint64_t j = 0; j < ndev; j += 97) {
            const unsigned char *r = orig + dev_off + j * 144;
            sps__vix_dev_t d;
            int rc = sps__vix_dev_at(x, (uint32_t)(le64(r) >> 32), (uint32_t)le64(r),
                                     (int64_t)le64(r + 8), &d);
            assert_true(rc == 0 || rc == 1 || rc == SPS_EFORMAT);
            if (rc == 0 && d.lthread != UINT32_MAX) {
                sps__vix_dev_t l[8];
                long g = sps__vix_dev_launched(x, d.lthread, d.ldepth, d.lstart, l, 8, &tot);
                assert_true(g >= 0 || g == SPS_EFORMAT);
            }
        }
        sps__vix_close(x);
    }
    unlink(bad_ix);
    free(cp);
    free(orig);
    dv_free(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h5),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_pftrace),
        cmocka_unit_test(test_stale_and_corrupt),
        cmocka_unit_test(test_several_files),
        cmocka_unit_test(test_counter_levels),
        cmocka_unit_test(test_counters_formats),
        cmocka_unit_test(test_counter_corrupt),
        cmocka_unit_test(test_device_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
