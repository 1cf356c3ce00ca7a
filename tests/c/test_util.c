/* test_util.c -- the base layer (src/util/): the heap against qsort with
 * random keys and many duplicates, the index with colliding hashes and
 * growth, whole-buffer I/O through short writes, signals and full disks,
 * the JSON escaper on every kind of invalid UTF-8, UTF-8 repair, and the
 * error message across threads. */
#include "testutil.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* A deterministic xorshift generator. */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ------------------------------------------------------------------------ */
/* array                                                                     */
/* ------------------------------------------------------------------------ */

static void test_grow(void **state) {
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 1000; n++) {
        assert_int_equal(sps__grow((void **)&v, &cap, n, sizeof *v), 0);
        assert_true(cap > n);
        v[n] = (int)n;
    }
    assert_int_equal(cap, 1024); /* 16, doubled */
    for (size_t n = 0; n < 1000; n++) assert_int_equal(v[n], (int)n);
    /* n below the capacity: nothing to do, nothing moves */
    int *same = v;
    assert_int_equal(sps__grow((void **)&v, &cap, 5, sizeof *v), 0);
    assert_ptr_equal(v, same);
    /* a size that would overflow is refused and leaves the array alone */
    size_t huge = SIZE_MAX / 2 + 1;
    assert_int_equal(sps__grow((void **)&v, &huge, huge, 4), -1);
    assert_ptr_equal(v, same);
    free(v);
}

/* ------------------------------------------------------------------------ */
/* heap                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct kv {
    uint64_t key;
    uint32_t idx;
    int64_t second; /* the tie-breaker's field: larger first */
} kv_t;

static int kv_cmp(const void *a, const void *b) {
    const kv_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int kv_cmp_tie(const void *a, const void *b) {
    const kv_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->second != y->second) return x->second > y->second ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Tie-breaker: larger `second` first (ctx: the kv array by idx). */
static int tie_second(void *ctx, uint32_t a, uint32_t b) {
    const kv_t *v = ctx;
    if (v[a].second != v[b].second) return v[a].second > v[b].second ? -1 : 1;
    return 0;
}

/* Pushes n random entries (keys 0..nkeys-1: many equal), pops them all,
 * and compares with qsort by (key, tie, idx). */
static void heap_check(size_t n, uint64_t nkeys, int with_tie) {
    kv_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *v);
    uint64_t x = 12345 + n;
    for (size_t i = 0; i < n; i++)
        v[i] = (kv_t){rnd(&x) % nkeys, (uint32_t)i, (int64_t)(rnd(&x) % 3)};
    memcpy(ref, v, n * sizeof *v);
    qsort(ref, n, sizeof *ref, with_tie ? kv_cmp_tie : kv_cmp);
    sps__heap_t h;
    sps__heap_init(&h, with_tie ? tie_second : NULL, v);
    for (size_t i = 0; i < n; i++) assert_int_equal(sps__heap_push(&h, v[i].key, v[i].idx), 0);
    assert_int_equal(h.n, n);
    for (size_t i = 0; i < n; i++) {
        sps__heap_ent_t t = sps__heap_top(&h);
        assert_int_equal(t.key, ref[i].key);
        assert_int_equal(t.idx, ref[i].idx);
        sps__heap_pop(&h);
    }
    assert_int_equal(h.n, 0);
    sps__heap_free(&h);
    free(v);
    free(ref);
}

static void test_heap_order(void **state) {
    (void)state;
    heap_check(1, 1, 0);
    heap_check(2, 1, 0);
    heap_check(1000, 10, 0);      /* many duplicates */
    heap_check(10000, 1u << 30, 0); /* nearly distinct */
    heap_check(5000, 4, 1);       /* ties broken by the callback */
}

/* A k-way merge of sorted runs with update_top, as the merges use it,
 * against qsort of everything; int64 keys with both extremes. */
static void test_heap_merge(void **state) {
    (void)state;
    enum { K = 37, LEN = 300 };
    int64_t run[K][LEN];
    size_t pos[K] = {0};
    int64_t *all = malloc(K * LEN * sizeof *all), *got = malloc(K * LEN * sizeof *got);
    uint64_t x = 7;
    for (int k = 0; k < K; k++) {
        int64_t t = (int64_t)(rnd(&x) % 100) - 50;
        for (int i = 0; i < LEN; i++) {
            t += (int64_t)(rnd(&x) % 3); /* repeats inside a run too */
            run[k][i] = t;
        }
    }
    run[0][0] = INT64_MIN;
    run[1][LEN - 1] = INT64_MAX;
    for (int k = 0; k < K; k++) memcpy(all + k * LEN, run[k], sizeof run[k]);
    sps__heap_t h;
    sps__heap_init(&h, NULL, NULL);
    assert_int_equal(sps__heap_reserve(&h, K), 0);
    for (uint32_t k = 0; k < K; k++)
        assert_int_equal(sps__heap_push(&h, sps__heap_key_i64(run[k][0]), k), 0);
    size_t n = 0;
    while (h.n) {
        uint32_t k = sps__heap_top(&h).idx;
        got[n++] = run[k][pos[k]];
        if (++pos[k] < LEN) sps__heap_update_top(&h, sps__heap_key_i64(run[k][pos[k]]));
        else sps__heap_pop(&h);
    }
    assert_int_equal(n, K * LEN);
    for (size_t i = 1; i < n; i++) assert_true(got[i - 1] <= got[i]);
    assert_int_equal(got[0], INT64_MIN);
    assert_int_equal(got[n - 1], INT64_MAX);
    sps__heap_free(&h);
    free(all);
    free(got);
}

/* sps__heap_keeps_top against update_top itself: on random heaps with
 * many equal keys, it says 1 exactly when update_top leaves the same
 * entry on top (no tie function: ties by index); with a tie function it
 * never says 1 where the top would change (equal keys: "not sure"). */
static void test_heap_keeps_top(void **state) {
    (void)state;
    uint64_t x = 99;
    kv_t v[9];
    for (int round = 0; round < 20000; round++) {
        size_t n = 1 + rnd(&x) % 9;
        int with_tie = round % 4 == 3;
        for (size_t i = 0; i < n; i++)
            v[i] = (kv_t){rnd(&x) % 4, (uint32_t)i, (int64_t)(rnd(&x) % 2)};
        sps__heap_t h;
        sps__heap_init(&h, with_tie ? tie_second : NULL, v);
        for (size_t i = 0; i < n; i++) assert_int_equal(sps__heap_push(&h, v[i].key, v[i].idx), 0);
        uint32_t top = sps__heap_top(&h).idx;
        uint64_t key = rnd(&x) % 5;
        int keeps = sps__heap_keeps_top(&h, key);
        v[top].key = key; /* the tie function reads the array */
        sps__heap_update_top(&h, key);
        int kept = sps__heap_top(&h).idx == top;
        if (with_tie) {
            if (keeps) assert_true(kept);
        } else {
            assert_int_equal(keeps, kept);
        }
        sps__heap_free(&h);
    }
}

/* ------------------------------------------------------------------------ */
/* hash                                                                      */
/* ------------------------------------------------------------------------ */

static void test_hash_bytes(void **state) {
    (void)state;
    /* FNV-1a 64 of "" and of "a" (the published test vectors), mixed */
    assert_true(sps__hash_bytes("", 0) == sps__hash_u64(0xcbf29ce484222325ull));
    assert_true(sps__hash_bytes("a", 1) == sps__hash_u64(0xaf63dc4c8601ec8cull));
    assert_true(sps__hash_bytes("ab", 2) != sps__hash_bytes("ba", 2));
    assert_true(sps__hash_pair(1, 2) != sps__hash_pair(2, 1));
    /* a bijection: distinct inputs, distinct outputs (spot check) */
    assert_true(sps__hash_u64(0) != sps__hash_u64(1));
}

/* Finds key in t over items[]: its index or -1. */
static int64_t find(const sps__htab_t *t, const uint64_t *items, uint64_t key,
                    uint64_t h) {
    sps__hprobe_t p = sps__htab_probe(t, h);
    for (uint32_t i; sps__htab_next(t, &p, &i);)
        if (items[i] == key) return i;
    return -1;
}

/* Inserts n keys, hashed well or (bad) onto only five hashes, so that
 * probes must walk long chains of equal digests; checks every key is
 * found after all the growth and absent keys are not. */
static void htab_check(size_t n, int bad) {
    uint64_t *items = calloc(n, sizeof *items);
    sps__htab_t t = {0};
    assert_int_equal(find(&t, items, 1, 1), -1); /* empty: nothing */
    size_t grows = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = i * 2654435761u + 17;
        uint64_t h = bad ? key % 5 : sps__hash_u64(key);
        assert_int_equal(find(&t, items, key, h), -1);
        sps__hprobe_t p = sps__htab_probe(&t, h);
        uint32_t j;
        while (sps__htab_next(&t, &p, &j)) assert_true(items[j] != key);
        assert_int_equal(sps__htab_make_room(&t, &p), 0); /* may grow */
        if (t.cap != cap) grows++, cap = t.cap;
        assert_int_equal(t.slot[p.i].idx1, 0);
        sps__htab_put(&t, &p, (uint32_t)i);
        items[i] = key;
        assert_true(t.n * 2 <= t.cap);
    }
    assert_true(grows > 1 || n < 32);
    assert_int_equal(t.n, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t key = items[i], h = bad ? key % 5 : sps__hash_u64(key);
        assert_int_equal(find(&t, items, key, h), (int64_t)i);
        uint64_t miss = key + 1; /* no key: they are 17 + multiples of a large odd number */
        assert_int_equal(find(&t, items, miss, bad ? miss % 5 : sps__hash_u64(miss)), -1);
    }
    sps__htab_free(&t);
    assert_int_equal(t.cap, 0);
    free(items);
}

static void test_htab(void **state) {
    (void)state;
    htab_check(1, 0);
    htab_check(20000, 0); /* grows many times */
    htab_check(2000, 1);  /* five hashes for everything: probes by equality */
    /* reserve: no growth until that many are in */
    sps__htab_t t = {0};
    assert_int_equal(sps__htab_reserve(&t, 1000), 0);
    size_t cap = t.cap;
    assert_true(cap >= 2000);
    for (uint32_t i = 0; i < 1000; i++) {
        sps__hprobe_t p = sps__htab_probe(&t, sps__hash_u64(i));
        uint32_t j;
        while (sps__htab_next(&t, &p, &j)) assert_true(j != i);
        assert_int_equal(sps__htab_make_room(&t, &p), 0);
        sps__htab_put(&t, &p, i);
    }
    assert_int_equal(t.cap, cap);
    assert_int_equal(sps__htab_reserve(&t, 10), 0); /* never shrinks */
    assert_int_equal(t.cap, cap);
    sps__htab_free(&t);
}

/* ------------------------------------------------------------------------ */
/* tmpio                                                                     */
/* ------------------------------------------------------------------------ */

/* The one temporary name: "<path>.tmp-<pid><suffix>". */
static void test_tmp_name(void **state) {
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "out/a.h5.tmp-%d", (int)getpid());
    char *s = sps__tmp_name("out/a.h5", NULL);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
    snprintf(want, sizeof want, "x.tmp-%d.json", (int)getpid());
    s = sps__tmp_name("x", ".json");
    assert_string_equal(s, want);
    free(s);
    snprintf(want, sizeof want, ".tmp-%d", (int)getpid());
    s = sps__tmp_name("", "");
    assert_string_equal(s, want);
    free(s);
    /* a path longer than any fixed buffer is kept whole */
    char *path = malloc(10001);
    memset(path, 'p', 10000);
    path[10000] = 0;
    s = sps__tmp_name(path, NULL);
    assert_non_null(s);
    assert_memory_equal(s, path, 10000);
    assert_string_equal(s + 10000, want);
    free(s);
    free(path);
}

static void test_tmpio_roundtrip(void **state) {
    (void)state;
    int fd = sps__tmpfile_open(NULL, "spanscope-test-");
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_nlink, 0); /* unlinked: gone with the fd */
    enum { N = 300000 };
    unsigned char *a = malloc(N), *b = malloc(N + 100);
    for (size_t i = 0; i < N; i++) a[i] = (unsigned char)(i * 7);
    assert_int_equal(sps__pwrite_all(fd, a, N, 4096), 0);
    assert_int_equal(sps__pread_full(fd, b, N, 4096), N);
    assert_memory_equal(a, b, N);
    errno = 0; /* a negative offset is refused, not taken as "append" */
    assert_int_equal(sps__pwrite_all(fd, a, 10, -1), -1);
    assert_int_equal(errno, EINVAL);
    /* past the end: a short count, not an error */
    assert_int_equal(sps__pread_full(fd, b, N + 100, 4096), N);
    assert_int_equal(sps__pread_full(fd, b, 10, 4096 + N + 5), 0);
    close(fd);
    free(a);
    free(b);
    /* a directory that does not exist */
    errno = 0;
    assert_int_equal(sps__tmpfile_open("/nonexistent/dir/x", "s-"), -1);
    assert_true(errno == ENOENT || errno == ENOTDIR);
    /* reading a closed descriptor */
    char c;
    assert_int_equal(sps__pread_full(fd, &c, 1, 0), -1);
    assert_int_equal(errno, EBADF);
}

static void test_tmpio_full_disk(void **state) {
    (void)state;
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) skip();
    char buf[4096] = {1};
    errno = 0;
    assert_int_equal(sps__write_all(fd, buf, sizeof buf), -1);
    assert_int_equal(errno, ENOSPC);
    errno = 0;
    assert_int_equal(sps__pwrite_all(fd, buf, sizeof buf, 0), -1);
    assert_int_equal(errno, ENOSPC);
    close(fd);
}

/* A file size limit makes the kernel write part of a buffer and then
 * refuse the rest: a short write, then EFBIG (in a child: the limit and
 * the ignored SIGXFSZ stay there). */
static void test_tmpio_short_write(void **state) {
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {10000, 10000};
        int fd = sps__tmpfile_open(NULL, "spanscope-test-");
        if (fd < 0 || setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(2);
        static char buf[30000];
        errno = 0;
        int rc = sps__pwrite_all(fd, buf, sizeof buf, 0);
        struct stat st;
        fstat(fd, &st);
        /* the part that fit was written, the call still failed */
        _exit(rc == -1 && errno == EFBIG && st.st_size == 10000 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The reader side of test_tmpio_signals: drains the pipe slowly. */
typedef struct drain {
    int fd;
    unsigned char *got;
    size_t n, cap;
} drain_t;

static void *drain_main(void *arg) {
    drain_t *d = arg;
    for (;;) {
        ssize_t k = read(d->fd, d->got + d->n, d->cap - d->n < 777 ? d->cap - d->n : 777);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        d->n += (size_t)k;
        if ((d->n / 777) % 64 == 0) usleep(100);
    }
    return NULL;
}

static void on_alarm(int sig) { (void)sig; }

/* Writes through a pipe that a slow reader drains while a timer keeps
 * interrupting (no SA_RESTART): write() returns short counts and EINTR,
 * and every byte must still arrive, in order. */
static void test_tmpio_signals(void **state) {
    (void)state;
    enum { N = 4 << 20 };
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval it = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
    unsigned char *src = malloc(N);
    for (size_t i = 0; i < N; i++) src[i] = (unsigned char)(i ^ (i >> 8));
    drain_t d = {p[0], malloc(N), 0, N};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain_main, &d), 0);
    setitimer(ITIMER_REAL, &it, NULL);
    int rc = sps__write_all(p[1], src, N);
    setitimer(ITIMER_REAL, &off, NULL);
    close(p[1]);
    pthread_join(th, NULL);
    sigaction(SIGALRM, &old, NULL);
    close(p[0]);
    assert_int_equal(rc, 0);
    assert_int_equal(d.n, N);
    assert_memory_equal(d.got, src, N);
    free(src);
    free(d.got);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

/* Escapes n bytes of s into a static buffer (through the sink). */
typedef struct cat {
    char buf[4096];
    size_t n;
    size_t pieces;
} cat_t;

static void cat_put(void *ctx, const char *p, size_t n) {
    cat_t *c = ctx;
    assert_true(n > 0);
    assert_true(c->n + n < sizeof c->buf);
    memcpy(c->buf + c->n, p, n);
    c->n += n;
    c->buf[c->n] = 0;
    c->pieces++;
}

static cat_t g_cat;

/* s[0..n) escaped under flags, in g_cat. */
static const char *esc_flags(const char *s, size_t n, unsigned flags) {
    g_cat.n = g_cat.pieces = 0;
    g_cat.buf[0] = 0;
    sps__json_escape(s, n, flags, cat_put, &g_cat);
    return g_cat.buf;
}

static const char *esc(const char *s, size_t n) { return esc_flags(s, n, 0); }

#define ESC(lit) esc(lit, sizeof lit - 1)
#define ESC_SCRIPT(lit) esc_flags(lit, sizeof lit - 1, SPS__JSON_IN_SCRIPT)

static void test_json_escape(void **state) {
    (void)state;
    assert_string_equal(ESC(""), "");
    assert_string_equal(ESC("plain text"), "plain text");
    assert_string_equal(ESC("a\"b\\c/d"), "a\\\"b\\\\c/d");
    /* control characters, DEL and NUL as \u00XX */
    assert_string_equal(ESC("\x01\x1f\n\t\r\b\f\x7f"),
                        "\\u0001\\u001f\\u000a\\u0009\\u000d\\u0008\\u000c\\u007f");
    assert_string_equal(ESC("a\0b"), "a\\u0000b");
    /* valid UTF-8 is copied: 2, 3 and 4 bytes, the extremes */
    assert_string_equal(ESC("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"),
                        "caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80");
    assert_string_equal(ESC("\xC2\xA0\xEF\xBF\xBF\xF4\x8F\xBF\xBF"),
                        "\xC2\xA0\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
    /* C1 controls as \u00XX, as C0's (a terminal could act on them) */
    assert_string_equal(ESC("\xC2\x80\xC2\x9B[2J\xC2\x9F"), "\\u0080\\u009b[2J\\u009f");
    /* U+2028 and U+2029 escaped (line ends in JavaScript), with or
     * without SPS__JSON_IN_SCRIPT; their neighbours U+2027, U+202A copied */
    assert_string_equal(ESC("a\xE2\x80\xA8" "b\xE2\x80\xA9" "c"), "a\\u2028b\\u2029c");
    assert_string_equal(ESC_SCRIPT("\xE2\x80\xA8<"), "\\u2028\\u003c");
    assert_string_equal(ESC("\xE2\x80\xA7\xE2\x80\xAA"), "\xE2\x80\xA7\xE2\x80\xAA");
    /* invalid: one U+FFFD per byte that starts no valid sequence */
    assert_string_equal(ESC("\x80"), "\\ufffd");               /* lone continuation */
    assert_string_equal(ESC("\xFF\xFE"), "\\ufffd\\ufffd");    /* never valid */
    assert_string_equal(ESC("\xC0\x80"), "\\ufffd\\ufffd");    /* overlong NUL */
    assert_string_equal(ESC("\xC1\xBF"), "\\ufffd\\ufffd");    /* overlong */
    assert_string_equal(ESC("\xE0\x80\xAF"), "\\ufffd\\ufffd\\ufffd"); /* overlong '/' */
    assert_string_equal(ESC("\xF0\x80\x80\xAF"), "\\ufffd\\ufffd\\ufffd\\ufffd");
    assert_string_equal(ESC("\xED\xA0\x80"), "\\ufffd\\ufffd\\ufffd"); /* surrogate */
    assert_string_equal(ESC("\xED\xBF\xBF"), "\\ufffd\\ufffd\\ufffd"); /* surrogate */
    assert_string_equal(ESC("\xF4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd"); /* > U+10FFFF */
    assert_string_equal(ESC("\xF5\x80"), "\\ufffd\\ufffd");
    assert_string_equal(ESC("x\xE6\x97"), "x\\ufffd\\ufffd");   /* truncated at the end */
    assert_string_equal(ESC("\xE6\x97x"), "\\ufffd\\ufffdx");   /* cut by ASCII */
    assert_string_equal(ESC("\xF0\x9F\x98"), "\\ufffd\\ufffd\\ufffd");
    /* a plain run goes out in one piece, an escape between two runs */
    esc("abcdef", 6);
    assert_int_equal(g_cat.pieces, 1);
    esc("ab\ncd", 5);
    assert_int_equal(g_cat.pieces, 3);
    /* the explicit length is honoured (no reading past n) */
    assert_string_equal(esc("ab\xC3\xA9", 3), "ab\\ufffd");
    /* plain JSON leaves '<' alone */
    assert_string_equal(ESC("a</script>"), "a</script>");
}

/* SPS__JSON_IN_SCRIPT: every '<' as \u003c (nothing can end or alter the
 * <script> element the text stands in), everything else as without it. */
static void test_json_escape_script(void **state) {
    (void)state;
    assert_string_equal(ESC_SCRIPT("a</script><b>"), "a\\u003c/script>\\u003cb>");
    assert_string_equal(ESC_SCRIPT("<!--<script>"), "\\u003c!--\\u003cscript>");
    assert_string_equal(ESC_SCRIPT("</SCRIPT"), "\\u003c/SCRIPT");
    assert_string_equal(ESC_SCRIPT("<"), "\\u003c");
    assert_string_equal(ESC_SCRIPT("a&b>c"), "a&b>c");
    /* the other rules hold together with it */
    assert_string_equal(ESC_SCRIPT("\"<\\\x01\xFF\xC3\xA9"),
                        "\\\"\\u003c\\\\\\u0001\\ufffd\xC3\xA9");
    /* the runs around an escape still go out whole */
    esc_flags("ab<cd", 5, SPS__JSON_IN_SCRIPT);
    assert_int_equal(g_cat.pieces, 3);
    /* random bytes: no '<' comes out, and without any '<' in the input
     * the output is that of plain JSON */
    uint64_t x = 777;
    char in[48], plain[sizeof g_cat.buf];
    for (int round = 0; round < 5000; round++) {
        size_t n = rnd(&x) % sizeof in;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rnd(&x);
            in[i] = (char)(r % 4 == 0 ? '<' : (r >> 8) & 0xFF);
        }
        snprintf(plain, sizeof plain, "%s", esc(in, n));
        const char *out = esc_flags(in, n, SPS__JSON_IN_SCRIPT);
        assert_null(strchr(out, '<'));
        assert_true(sps__utf8_valid(out, strlen(out)));
        if (!memchr(in, '<', n)) assert_string_equal(out, plain);
    }
}

/* Random bytes always give valid UTF-8 without raw controls or lone
 * quotes; valid input without specials comes back unchanged. */
static void test_json_random(void **state) {
    (void)state;
    uint64_t x = 4242;
    char in[64];
    for (int round = 0; round < 20000; round++) {
        size_t n = rnd(&x) % sizeof in;
        for (size_t i = 0; i < n; i++) in[i] = (char)(rnd(&x) & 0xFF);
        const char *out = esc(in, n);
        size_t m = strlen(out);
        assert_true(sps__utf8_valid(out, m));
        for (size_t i = 0; i < m; i++) {
            unsigned char c = (unsigned char)out[i];
            assert_true(c >= 0x20 && c != 0x7F);
            assert_true(c != '"'); /* a quote only ever follows a backslash */
            if (c == '\\') { /* an escape: \\, \" or \uXXXX */
                assert_true(i + 1 < m && strchr("\\\"u", out[i + 1]));
                i++;
            }
        }
        int special = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)in[i];
            special |= c < 0x20 || c == 0x7F || c == '"' || c == '\\';
        }
        if (!special && sps__utf8_valid(in, n)) {
            assert_int_equal(m, n);
            assert_memory_equal(out, in, n);
        }
    }
}

static void test_json_quote_fputs(void **state) {
    (void)state;
    size_t len = 0;
    char *q = sps__json_quote("a\"\xFF", &len);
    assert_non_null(q);
    assert_string_equal(q, "\"a\\\"\\ufffd\"");
    assert_int_equal(len, strlen(q));
    free(q);
    q = sps__json_quote("", NULL);
    assert_string_equal(q, "\"\"");
    free(q);
    char *buf = NULL;
    size_t sz = 0;
    FILE *fp = open_memstream(&buf, &sz);
    assert_int_equal(sps__json_fputs(fp, "t\tab\xC3<", 0), 0);
    assert_int_equal(sps__json_fputs(fp, "|<", SPS__JSON_IN_SCRIPT), 0);
    fclose(fp);
    assert_string_equal(buf, "t\\u0009ab\\ufffd<|\\u003c");
    free(buf);
    /* a full disk shows as -1 (unbuffered, so the write happens now) */
    fp = fopen("/dev/full", "w");
    if (fp) {
        setvbuf(fp, NULL, _IONBF, 0);
        assert_int_equal(sps__json_fputs(fp, "x", 0), -1);
        fclose(fp);
    }
}

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                     */
/* ------------------------------------------------------------------------ */

static void test_utf8(void **state) {
    (void)state;
    assert_int_equal(sps__utf8_len((const unsigned char *)"\xE6\x97\xA5", 3), 3);
    assert_int_equal(sps__utf8_len((const unsigned char *)"\xE6\x97\xA5", 2), 0);
    assert_int_equal(sps__utf8_len((const unsigned char *)"\xED\xA0\x80", 3), 0);
    assert_true(sps__utf8_valid("caf\xC3\xA9", 5));
    assert_false(sps__utf8_valid("a\0b", 3)); /* NUL is refused */
    assert_false(sps__utf8_valid("\xC0\x80", 2));
    char *s = sps__utf8_sanitize("a\xFF" "b\xE6\x97", 5);
    assert_string_equal(s, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_true(sps__utf8_valid(s, strlen(s)));
    free(s);
    s = sps__utf8_sanitize("", 0);
    assert_string_equal(s, "");
    free(s);
    assert_int_equal(sps__utf8_width("caf\xC3\xA9 \xF0\x9F\x98\x80"), 6);
    assert_int_equal(sps__utf8_prefix("caf\xC3\xA9!", 4), 5); /* never splits é */
    assert_int_equal(sps__utf8_prefix("caf\xC3\xA9!", 3), 3);
    assert_int_equal(sps__utf8_prefix("ab", 10), 2);
    assert_int_equal(sps__utf8_prefix("ab", 0), 0);
    /* byte cuts back over continuation bytes only */
    const char *u = "a\xC3\xA9\xE6\x97\xA5" "b"; /* a, 2 bytes, 3 bytes, b */
    assert_int_equal(sps__utf8_cut(u, 0), 0);
    assert_int_equal(sps__utf8_cut(u, 1), 1);
    assert_int_equal(sps__utf8_cut(u, 2), 1); /* inside the e-acute */
    assert_int_equal(sps__utf8_cut(u, 3), 3);
    assert_int_equal(sps__utf8_cut(u, 4), 3);
    assert_int_equal(sps__utf8_cut(u, 5), 3);
    assert_int_equal(sps__utf8_cut(u, 6), 6);
    assert_int_equal(sps__utf8_cut(u, 7), 7); /* the NUL */
    assert_int_equal(sps__utf8_cut("\x80\x80", 1), 0);
}

/* One cell printed by sps__utf8_put_cell, in a static buffer. */
static const char *cell(size_t indent, const char *s, size_t width) {
    static char out[256];
    char *buf = NULL;
    size_t sz = 0;
    FILE *fp = open_memstream(&buf, &sz);
    assert_non_null(fp);
    sps__utf8_put_cell(fp, indent, s, width);
    fclose(fp);
    assert_true(sz < sizeof out);
    memcpy(out, buf, sz + 1);
    free(buf);
    return out;
}

static void test_utf8_put_cell(void **state) {
    (void)state;
    /* padded to width; exactly width fits without dots */
    assert_string_equal(cell(0, "abc", 6), "abc   ");
    assert_string_equal(cell(0, "abcdef", 6), "abcdef");
    assert_string_equal(cell(0, "", 3), "   ");
    /* cut to width - 3 code points and "...", never inside a sequence */
    assert_string_equal(cell(0, "abcdefg", 6), "abc...");
    assert_string_equal(cell(0, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 6),
                        "\xC3\xA9\xC3\xA9\xC3\xA9...");
    assert_string_equal(cell(0, "\xF0\x9F\x98\x80\xE6\x97\xA5", 6), "\xF0\x9F\x98\x80\xE6\x97\xA5    ");
    /* indent, and a name cut to what the indent leaves */
    assert_string_equal(cell(2, "ab", 6), "  ab  ");
    assert_string_equal(cell(2, "abcde", 6), "  a...");
    assert_string_equal(cell(9, "ab", 4), "    "); /* the indent is cut to width */
    /* under 4 columns of room: fewer dots, still exactly width */
    assert_string_equal(cell(0, "abcdef", 3), "...");
    assert_string_equal(cell(4, "abcdef", 6), "    ..");
    assert_string_equal(cell(0, "abcdef", 0), "");
    /* controls as '?': C0, DEL, and C1 (two bytes, one column) */
    assert_string_equal(cell(0, "a\tb\x1b[2J\x7f", 10), "a?b?[2J?  ");
    assert_string_equal(cell(0, "x\xC2\x85y\xC2\x9Fz\xC2\xA0", 6), "x?y?z\xC2\xA0");
    assert_string_equal(cell(0, "\xC2\x85\xC2\x85\xC2\x85\xC2\x85\xC2\x85\xC2\x85\xC2\x85", 6), "???...");
    /* every cell is width columns, whatever is cut or replaced */
    static const char *const names[] = {"", "a", "\x01\x02", ("\xC2\x80\xC3\xA9" "abc"),
                                        "\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5\xE6\x97\xA5", "abcdefghijklmnop"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        for (size_t ind = 0; ind < 8; ind++)
            for (size_t w = 0; w < 12; w++) {
                const char *c = cell(ind, names[k], w);
                assert_int_equal(sps__utf8_width(c), w);
                assert_true(sps__utf8_valid(c, strlen(c)));
                for (const unsigned char *q = (const unsigned char *)c; *q; q++) {
                    assert_true(*q >= 0x20 && *q != 0x7f);
                    assert_false(q[0] == 0xC2 && q[1] >= 0x80 && q[1] <= 0x9F);
                }
            }
}

/* ------------------------------------------------------------------------ */
/* error message                                                             */
/* ------------------------------------------------------------------------ */

typedef struct err_arg {
    int id;
    int bad; /* rounds where this thread saw another's message */
} err_arg_t;

static void *err_main(void *p) {
    err_arg_t *a = p;
    char want[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(want, sizeof want, "thread %d round %d", a->id, i);
        if (i % 3 == 0) sps__err_clear();
        sps__err_set("thread %d round %d", a->id, i);
        sched_yield();
        if (strcmp(sps__err_msg(), want) != 0) a->bad++;
    }
    return NULL;
}

/* s written by sps__xml_fputs, in a static buffer. */
static const char *xml(const char *s) {
    static char out[256];
    char *buf = NULL;
    size_t sz = 0;
    FILE *fp = open_memstream(&buf, &sz);
    assert_non_null(fp);
    assert_int_equal(sps__xml_fputs(fp, s), 0);
    fclose(fp);
    assert_true(sz < sizeof out);
    memcpy(out, buf, sz + 1);
    free(buf);
    return out;
}

#define FFFD "\xEF\xBF\xBD"

/* The markup escaper: entities; C0 (but tab, newline, CR), DEL, C1 and
 * every byte that starts no valid sequence as U+FFFD; valid UTF-8
 * copied; so the output is valid UTF-8 and XML 1.0 whatever the input. */
static void test_xml_escape(void **state) {
    (void)state;
    assert_string_equal(xml("</script><img onerror='x' a=\"b\">&"),
                        "&lt;/script&gt;&lt;img onerror=&#39;x&#39; a=&quot;b&quot;&gt;&amp;");
    assert_string_equal(xml("t\tn\nr\r"), "t\tn\nr\r");
    assert_string_equal(xml("\x1b[2J\x07\x7f"), FFFD "[2J" FFFD FFFD);
    assert_string_equal(xml("c1\xC2\x9B\xC2\x80 nbsp\xC2\xA0"), "c1" FFFD FFFD " nbsp\xC2\xA0");
    assert_string_equal(xml("\xFF\xC0\xAF\xED\xA0\x80x\xE2\x82"),
                        FFFD FFFD FFFD FFFD FFFD FFFD "x" FFFD FFFD);
    assert_string_equal(xml("caf\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80"),
                        "caf\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80");
    /* random bytes: valid UTF-8 out, no control but tab/newline/CR, no '<' */
    uint64_t x = 4242;
    for (int round = 0; round < 3000; round++) {
        char in[40];
        size_t n = rnd(&x) % (sizeof in - 1);
        for (size_t i = 0; i < n; i++) in[i] = (char)((rnd(&x) >> 8) % 255 + 1);
        in[n] = 0;
        const char *o = xml(in);
        assert_true(sps__utf8_valid(o, strlen(o)));
        for (const unsigned char *q = (const unsigned char *)o; *q; q++) {
            assert_true(*q >= 0x20 || *q == '\t' || *q == '\n' || *q == '\r');
            assert_true(*q != 0x7f && *q != '<' && *q != '>' && *q != '"');
            assert_false(q[0] == 0xC2 && q[1] >= 0x80 && q[1] <= 0x9F);
        }
    }
}

/* s by sps__utf8_put_text, in a static buffer. */
static const char *text(const char *s, size_t max_cols) {
    static char out[256];
    char *buf = NULL;
    size_t sz = 0;
    FILE *fp = open_memstream(&buf, &sz);
    assert_non_null(fp);
    sps__utf8_put_text(fp, s, max_cols);
    fclose(fp);
    assert_true(sz < sizeof out);
    memcpy(out, buf, sz + 1);
    free(buf);
    return out;
}

/* put_text: a cell as wide as the text, cut at max_cols; a text that is
 * not UTF-8 is repaired first (put_cell too). */
static void test_utf8_put_text(void **state) {
    (void)state;
    assert_string_equal(text("abc", 0), "abc");
    assert_string_equal(text("abc", 10), "abc");
    assert_string_equal(text("abcdefgh", 6), "abc...");
    assert_string_equal(text("osc\x1b]0;t\x07 c1\xC2\x9B" "2J", 0), "osc?]0;t? c1?2J");
    assert_string_equal(text("bad\xFF\x9B\xC0\xAF", 0), "bad" FFFD FFFD FFFD FFFD);
    assert_string_equal(text("", 5), "");
    assert_string_equal(cell(0, "x\x9By", 5), "x" FFFD "y  ");
}

/* The public face of put_text: the whole result's length, a buffer cut
 * short without splitting a sequence, NULL as "". */
static void test_terminal_text(void **state) {
    (void)state;
    char buf[64];
    assert_int_equal(sps_terminal_text("a\x1b[2J\xFF", 0, buf, sizeof buf), 8);
    assert_string_equal(buf, "a?[2J" FFFD);
    assert_int_equal(sps_terminal_text("abcdefgh", 5, buf, sizeof buf), 5);
    assert_string_equal(buf, "ab...");
    /* cap 6 leaves room for "a?[2J" and no part of the 3-byte U+FFFD */
    assert_int_equal(sps_terminal_text("a\x1b[2J\xFF", 0, buf, 6), 8);
    assert_string_equal(buf, "a?[2J");
    assert_int_equal(sps_terminal_text(NULL, 0, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(sps_terminal_text("xyz", 0, NULL, 0), 3);
}

/* Error messages quote what files hold: one line, nothing a terminal
 * acts on, valid UTF-8. */
static void test_error_clean(void **state) {
    (void)state;
    sps__err_set("region '%s' bad", "a\x1b[2J\nb\rc\td\x07\x7f\xC2\x9B\xFF" "e\xC3\xA9");
    assert_string_equal(sps__err_msg(), "region 'a?[2J b c d?" "?" "?" "?e\xC3\xA9' bad");
}

static void test_error_threads(void **state) {
    (void)state;
    enum { T = 6 };
    sps__err_set("main's own");
    pthread_t th[T];
    err_arg_t a[T];
    for (int i = 0; i < T; i++) {
        a[i] = (err_arg_t){i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, err_main, &a[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    assert_string_equal(sps__err_msg(), "main's own"); /* untouched */
}

static void test_error_format(void **state) {
    (void)state;
    sps__err_clear();
    assert_string_equal(sps__err_msg(), "");
    assert_int_equal(sps__err_fail(-7, "%s: line\nbreak\r%d", "f.h5", 3), -7);
    assert_string_equal(sps__err_msg(), "f.h5: line break 3");
    /* an argument pointing into the message itself */
    sps__err_set("outer: %s", sps__err_msg());
    assert_string_equal(sps__err_msg(), "outer: f.h5: line break 3");
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    sps__err_set("%s", big);
    assert_int_equal(strlen(sps__err_msg()), 511);
}

/* sps__err_copy hands the message over on failure only, cut to the
 * buffer and never inside a UTF-8 sequence. */
static void test_error_copy(void **state) {
    (void)state;
    char buf[8];
    sps__err_set("a.h5: bad");
    memcpy(buf, "keep", 5);
    assert_int_equal(sps__err_copy(0, buf, sizeof buf), 0); /* success: untouched */
    assert_string_equal(buf, "keep");
    assert_int_equal(sps__err_copy(-3, NULL, 10), -3);
    assert_int_equal(sps__err_copy(-3, buf, 0), -3);
    assert_string_equal(buf, "keep");
    assert_int_equal(sps__err_copy(-3, buf, sizeof buf), -3);
    assert_string_equal(buf, "a.h5: b"); /* cut to 7 bytes */
    assert_int_equal(sps__err_copy(-3, buf, 1), -3);
    assert_string_equal(buf, "");
    sps__err_set("ab\xE6\x97\xA5\xE6\x97\xA5"); /* 2 + 3 + 3 bytes */
    assert_int_equal(sps__err_copy(-1, buf, sizeof buf), -1);
    assert_string_equal(buf, "ab\xE6\x97\xA5"); /* not the 2 bytes of the second */
    char wide[64];
    assert_int_equal(sps__err_copy(-1, wide, sizeof wide), -1);
    assert_string_equal(wide, "ab\xE6\x97\xA5\xE6\x97\xA5");
    sps__err_clear();
    assert_int_equal(sps__err_copy(-1, wide, sizeof wide), -1);
    assert_string_equal(wide, "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_heap_order),
        cmocka_unit_test(test_heap_merge),
        cmocka_unit_test(test_heap_keeps_top),
        cmocka_unit_test(test_hash_bytes),
        cmocka_unit_test(test_htab),
        cmocka_unit_test(test_tmp_name),
        cmocka_unit_test(test_tmpio_roundtrip),
        cmocka_unit_test(test_tmpio_full_disk),
        cmocka_unit_test(test_tmpio_short_write),
        cmocka_unit_test(test_tmpio_signals),
        cmocka_unit_test(test_json_escape),
        cmocka_unit_test(test_json_escape_script),
        cmocka_unit_test(test_json_random),
        cmocka_unit_test(test_json_quote_fputs),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_utf8_put_cell),
        cmocka_unit_test(test_xml_escape),
        cmocka_unit_test(test_utf8_put_text),
        cmocka_unit_test(test_terminal_text),
        cmocka_unit_test(test_error_clean),
        cmocka_unit_test(test_error_threads),
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_error_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
