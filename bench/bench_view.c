/* bench_view.c -- the viewer's index and queries at scale (issue 36's
 * targets: first frame <= 2 s once the index exists, any zoom or pan
 * answered in <= 100 ms p95, server memory <= 1 GiB, the index built at
 * >= the finalize's speed).
 *
 * For each size (10^7 and 10^8 spans; 10^9 too under SPANSCOPE_BENCH_BIG=1;
 * or the sizes given with --spans N, repeatable): records N spans with the
 * C API (4 threads, each a loop of outer > 8 mid > 4 leaf regions), times
 * the finalize, the index build (sps__view_open with rebuild), the
 * timeline reader alone over the file (the floor of any build), then runs
 * the "server" in a fresh process (this program re-executed with --serve):
 * the time to first frame (sps__view_open on the existing index +
 * /api/meta + /api/tiles over the whole range at 1920 px + /api/window over
 * the whole range), the p50/p95 of /api/tiles at ten zoom levels (20
 * random windows each, widths from the whole range down to ~1 us), and
 * that process's peak RSS (its VmHWM: wait4's ru_maxrss would count the
 * forked copy of this recording process before the exec).  The recording also has
 * one long counter series ("queue", sampled by every thread at the end of
 * --counters K of each outer call's 8 mid calls; default 1, one sample
 * per 41 spans, as "live bytes" at the end of each outermost call; 8:
 * one per 5 spans): the server times /api/counters at 1920 px at the
 * same ten zooms, and the walk over every sample of the window (what
 * /api/counters did before the counter levels) for comparison.  Prints a
 * table and the CPU model.  Files go to --dir DIR (default $TMPDIR or
 * /tmp) and are removed unless --keep. */
#include "api/view.h"
#include "formats/timeline.h"
#include "formats/viewidx.h"
#include "spanscope.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NTHR 4
#define ZOOMS 10
#define PER_ZOOM 20

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static sps_region_t g_outer, g_mid, g_leaf, g_queue;
static uint64_t g_per_thread; /* outer iterations per thread */
static int g_counters = 1;    /* counter samples per outer call */

static void *worker(void *arg) {
    uint64_t r = 0x9e3779b97f4a7c15ull * (uint64_t)((intptr_t)arg + 1);
    double q = 0;
    for (uint64_t k = 0; k < g_per_thread; k++) {
        sps_begin(g_outer);
        for (int i = 0; i < 8; i++) {
            sps_begin(g_mid);
            for (int j = 0; j < 4; j++) {
                sps_begin(g_leaf);
                sps_end(g_leaf);
            }
            sps_end(g_mid);
            if (i < g_counters) { /* a queue depth wandering about */
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                q += (double)(r % 201) - 100.0;
                if (q < 0) q = -q;
                sps_counter(g_queue, q);
            }
        }
        sps_end(g_outer);
    }
    return NULL;
}

/* One request; its body freed; returns the status. */
__attribute__((noinline)) static int ask(sps__view_t *v, const char *path, const char *q, size_t *len, char **keep) {
    char *b;
    size_t n;
    const char *ct;
    int st = sps__view_handle(v, "GET", path, q, &b, &n, &ct);
    if (len) *len = n;
    if (keep) *keep = b;
    else free(b);
    return st;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct ccols {
    uint64_t n;
} ccols_t;

static int count_col(void *ctx, const sps__vix_cpoint_t *p) {
    (void)p;
    ((ccols_t *)ctx)->n++;
    return 0;
}

/* This process's peak RSS in KiB (VmHWM: since its exec), -1 unknown. */
static long peak_rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

/* The server's half (a fresh process): prints "first p50... p95..." on
 * stdout as numbers for the parent. */
static int serve(const char *file, const char *dir) {
    double t = now_s();
    sps__view_t *v;
    sps__view_opts_t o = {dir, 0, 0};
    const char *paths[1] = {file};
    if (sps__view_open(&v, paths, 1, &o)) {
        fprintf(stderr, "bench_view: %s\n", sps__err_msg());
        return 1;
    }
    char *meta;
    if (ask(v, "/api/meta", NULL, NULL, &meta) != 200) return 1;
    const char *p = strstr(meta, "\"t1_rel_ns\":");
    long long ext = p ? strtoll(p + 12, NULL, 10) : 0;
    p = strstr(meta, "\"built\":");
    int built = p && !strncmp(p + 8, "true", 4);
    char ixpath[4096] = "";
    if ((p = strstr(meta, "\"index\":{\"path\":\""))) {
        p += strlen("\"index\":{\"path\":\"");
        size_t k = strcspn(p, "\"");
        if (k < sizeof ixpath) snprintf(ixpath, sizeof ixpath, "%.*s", (int)k, p);
    }
    int64_t t0abs = 0;
    if ((p = strstr(meta, "\"t0_ns\":"))) t0abs = strtoll(p + 8, NULL, 10);
    free(meta);
    char q[160];
    snprintf(q, sizeof q, "t0=0&t1=%lld&px=1920", ext + 1);
    size_t tiles_len;
    if (ask(v, "/api/tiles", q, &tiles_len, NULL) != 200) return 1;
    snprintf(q, sizeof q, "t0=0&t1=%lld", ext + 1);
    if (ask(v, "/api/window", q, NULL, NULL) != 200) return 1;
    double first = now_s() - t;
    printf("first %.6f %d %zu\n", first, built, tiles_len);
    /* ten zoom levels, widths from the whole range to ~1 us */
    srand(42);
    double full = (double)ext + 1, narrow = 1000.0;
    for (int z = 0; z < ZOOMS; z++) {
        double w = full * pow(narrow / full, (double)z / (ZOOMS - 1));
        double ts[PER_ZOOM];
        for (int i = 0; i < PER_ZOOM; i++) {
            double a = (full - w) * ((double)rand() / RAND_MAX);
            snprintf(q, sizeof q, "t0=%.0f&t1=%.0f&px=1920", a, a + w < a + 1 ? a + 1 : a + w);
            double s = now_s();
            if (ask(v, "/api/tiles", q, NULL, NULL) != 200) return 1;
            ts[i] = now_s() - s;
        }
        qsort(ts, PER_ZOOM, sizeof *ts, cmp_d);
        printf("zoom %d %.0f %.6f %.6f\n", z, w, ts[PER_ZOOM / 2], ts[(PER_ZOOM * 95 + 99) / 100 - 1]);
    }
    /* /api/counters at the same zooms; beside it the walk over every
     * sample of the window (the index opened a second time) */
    sps__vix_t *x = NULL;
    if (!ixpath[0] || sps__vix_open(&x, ixpath, NULL)) {
        fprintf(stderr, "bench_view: %s: %s\n", ixpath, sps__err_msg());
        return 1;
    }
    const sps__vix_info_t *in = sps__vix_info(x);
    uint64_t nsmp = 0, nrec = 0;
    for (size_t s = 0; s < in->nseries; s++) {
        nsmp += in->series[s].n;
        for (uint32_t j = 0; j < in->series[s].nlev; j++) nrec += in->clevels[in->series[s].lev + j].n;
    }
    printf("csamples %llu %llu %zu\n", (unsigned long long)nsmp, (unsigned long long)nrec, in->nseries);
    srand(43);
    for (int z = 0; z < ZOOMS; z++) {
        double w = full * pow(narrow / full, (double)z / (ZOOMS - 1));
        double ts[PER_ZOOM], tr[PER_ZOOM], tl[PER_ZOOM], rl = 0, rr = 0;
        for (int i = 0; i < PER_ZOOM; i++) {
            double a = (full - w) * ((double)rand() / RAND_MAX);
            double b = a + w < a + 1 ? a + 1 : a + w;
            snprintf(q, sizeof q, "t0=%.0f&t1=%.0f&px=1920", a, b);
            double s = now_s();
            if (ask(v, "/api/counters", q, NULL, NULL) != 200) return 1;
            ts[i] = now_s() - s;
            s = now_s();
            for (size_t k = 0; k < in->nseries; k++) {
                ccols_t c = {0};
                uint64_t reads = 0;
                if (sps__vix_counter_cols(x, k, t0abs + (int64_t)a, t0abs + (int64_t)b, 1920, 0,
                                          count_col, &c, &reads))
                    return 1;
                rr += (double)reads;
            }
            tr[i] = now_s() - s;
            s = now_s();
            for (size_t k = 0; k < in->nseries; k++) {
                ccols_t c = {0};
                uint64_t reads = 0;
                if (sps__vix_counter_cols(x, k, t0abs + (int64_t)a, t0abs + (int64_t)b, 1920, 1,
                                          count_col, &c, &reads))
                    return 1;
                rl += (double)reads;
            }
            tl[i] = now_s() - s;
        }
        qsort(ts, PER_ZOOM, sizeof *ts, cmp_d);
        qsort(tr, PER_ZOOM, sizeof *tr, cmp_d);
        qsort(tl, PER_ZOOM, sizeof *tl, cmp_d);
        int p95 = (PER_ZOOM * 95 + 99) / 100 - 1;
        printf("czoom %d %.0f %.6f %.6f %.6f %.6f %.6f %.6f %.0f %.0f\n", z, w, ts[PER_ZOOM / 2],
               ts[p95], tl[PER_ZOOM / 2], tl[p95], tr[PER_ZOOM / 2], tr[p95], rl / PER_ZOOM,
               rr / PER_ZOOM);
    }
    sps__vix_close(x);
    sps__view_close(v);
    printf("rss %ld\n", peak_rss_kb());
    return 0;
}

typedef struct row {
    uint64_t spans;
    double fin_s, build_s, first_s, read_s;
    uint64_t h5_bytes, ix_bytes;
    double p50[ZOOMS], p95[ZOOMS], width[ZOOMS];
    double c50[ZOOMS], c95[ZOOMS], l50[ZOOMS], l95[ZOOMS], r50[ZOOMS], r95[ZOOMS];
    double creads[ZOOMS], rreads[ZOOMS];
    uint64_t csamples, crecords, cseries;
    long rss_kb;
    int ok;
} row_t;

static uint64_t file_size(const char *p) {
    struct stat st;
    return stat(p, &st) ? 0 : (uint64_t)st.st_size;
}

/* Records, finalizes, builds, serves one size. */
static int run_size(uint64_t nspans, const char *dir, int keep, const char *self, row_t *r) {
    memset(r, 0, sizeof *r);
    char h5[1024], ixdir[1024];
    snprintf(h5, sizeof h5, "%s/bench_view_%llu.h5", dir, (unsigned long long)nspans);
    snprintf(ixdir, sizeof ixdir, "%s/bench_view_ix", dir);
    mkdir(ixdir, 0777);
    g_per_thread = (nspans + NTHR * 41 - 1) / (NTHR * 41);
    r->spans = g_per_thread * NTHR * 41;
    fprintf(stderr, "bench_view: recording %llu spans...\n", (unsigned long long)r->spans);
    if (sps_setup(NULL)) return -1;
    g_outer = sps_region("outer");
    g_mid = sps_region("mid");
    g_leaf = sps_region("leaf");
    g_queue = sps_counter_id("queue");
    pthread_t th[NTHR];
    for (intptr_t i = 0; i < NTHR; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < NTHR; i++) pthread_join(th[i], NULL);
    double t = now_s();
    int rc = sps_finalize_to(h5);
    r->fin_s = now_s() - t;
    sps_shutdown();
    if (rc) {
        fprintf(stderr, "bench_view: finalize: %s\n", sps_strerror(rc));
        return -1;
    }
    r->h5_bytes = file_size(h5);
    fprintf(stderr, "bench_view: finalize %.2f s; indexing...\n", r->fin_s);
    t = now_s();
    sps__view_t *v;
    sps__view_opts_t o = {ixdir, 1, 0};
    const char *paths[1] = {h5};
    if (sps__view_open(&v, paths, 1, &o)) {
        fprintf(stderr, "bench_view: %s\n", sps__err_msg());
        return -1;
    }
    r->build_s = now_s() - t;
    /* the floor of any build: the timeline reader alone over the file */
    t = now_s();
    sps__tlr_t *rd;
    if (sps__tlr_open(&rd, h5, SPS__TL_H5) == 0) {
        sps__tl_span_t s;
        while (sps__tlr_next(rd, &s) > 0) {
        }
        sps__tlr_free(rd);
        r->read_s = now_s() - t;
    }
    char *meta;
    ask(v, "/api/meta", NULL, NULL, &meta);
    const char *p = strstr(meta, "\"bytes\":");
    r->ix_bytes = p ? strtoull(p + 8, NULL, 10) : 0;
    free(meta);
    sps__view_close(v);
    /* the server: a fresh process, so its RSS is its own */
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(self, self, "--serve", h5, ixdir, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[256];
    while (in && fgets(line, sizeof line, in)) {
        int z, built;
        double w, a, b;
        size_t tl;
        double c[8];
        unsigned long long n1, n2, n3;
        if (sscanf(line, "first %lf %d %zu", &a, &built, &tl) == 3) r->first_s = a;
        else if (sscanf(line, "rss %llu", &n1) == 1) r->rss_kb = (long)n1;
        else if (sscanf(line, "csamples %llu %llu %llu", &n1, &n2, &n3) == 3) {
            r->csamples = n1;
            r->crecords = n2;
            r->cseries = n3;
        } else if (sscanf(line, "czoom %d %lf %lf %lf %lf %lf %lf %lf %lf %lf", &z, &w, &c[0], &c[1],
                          &c[2], &c[3], &c[4], &c[5], &c[6], &c[7]) == 10 && z >= 0 && z < ZOOMS) {
            r->c50[z] = c[0];
            r->c95[z] = c[1];
            r->l50[z] = c[2];
            r->l95[z] = c[3];
            r->r50[z] = c[4];
            r->r95[z] = c[5];
            r->creads[z] = c[6];
            r->rreads[z] = c[7];
        }
        else if (sscanf(line, "zoom %d %lf %lf %lf", &z, &w, &a, &b) == 4 && z >= 0 && z < ZOOMS) {
            r->width[z] = w;
            r->p50[z] = a;
            r->p95[z] = b;
        }
    }
    if (in) fclose(in);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (r->rss_kb <= 0) r->rss_kb = ru.ru_maxrss; /* no /proc: an upper bound */
        r->ok = 1;
    }
    if (!keep) {
        char cmd[2200];
        unlink(h5);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", ixdir);
        if (system(cmd)) fprintf(stderr, "bench_view: could not remove %s\n", ixdir);
    }
    return r->ok ? 0 : -1;
}

static void cpu_model(char *buf, size_t cap) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, cap, "unknown");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c += 1 + (c[1] == ' ');
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, cap, "%s", c);
            }
            break;
        }
    if (f) fclose(f);
}

static const char *fmt_w(char *b, size_t n, double ns) {
    if (ns >= 1e9) snprintf(b, n, "%.3g s", ns / 1e9);
    else if (ns >= 1e6) snprintf(b, n, "%.3g ms", ns / 1e6);
    else if (ns >= 1e3) snprintf(b, n, "%.3g us", ns / 1e3);
    else snprintf(b, n, "%.0f ns", ns);
    return b;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--serve")) return serve(argv[2], argv[3]);
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    uint64_t sizes[8];
    size_t ns = 0;
    int keep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--spans") && i + 1 < argc && ns < 8) {
            sizes[ns++] = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--keep")) {
            keep = 1;
        } else if (!strcmp(argv[i], "--counters") && i + 1 < argc) {
            g_counters = atoi(argv[++i]);
            if (g_counters < 0 || g_counters > 8) {
                fprintf(stderr, "bench_view: --counters takes 0 to 8\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_view [--spans N]... [--dir DIR] [--keep] [--counters K]\n");
            return 2;
        }
    }
    if (!ns) {
        sizes[ns++] = 10000000ull;
        sizes[ns++] = 100000000ull;
        const char *big = getenv("SPANSCOPE_BENCH_BIG");
        if (big && !strcmp(big, "1")) sizes[ns++] = 1000000000ull;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return 1;
    self[sl] = 0;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    row_t rows[8];
    int fail = 0;
    for (size_t i = 0; i < ns; i++)
        if (run_size(sizes[i], dir, keep, self, &rows[i])) {
            fprintf(stderr, "bench_view: %llu spans failed\n", (unsigned long long)sizes[i]);
            fail = 1;
        }
    printf("\nbench_view: spanscope view's index and queries (CPU: %s, %ld cores online)\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("targets: first frame <= 2 s, tiles p95 <= 100 ms, server RSS <= 1 GiB, build >= finalize speed\n\n");
    printf("%12s %10s %12s %10s %12s %12s %10s %9s %11s %10s %13s %16s\n", "spans", "finalize s",
           "fin Mspans/s", "index s", "idx Mspans/s", "read Mspans/s", "index MB", "B/span",
           "1st frame s", "RSS MiB", "tiles p95 max", "counters p95 max");
    for (size_t i = 0; i < ns; i++) {
        const row_t *r = &rows[i];
        if (!r->ok) {
            printf("%12llu  failed\n", (unsigned long long)sizes[i]);
            continue;
        }
        double worst = 0, cworst = 0;
        for (int z = 0; z < ZOOMS; z++) {
            if (r->p95[z] > worst) worst = r->p95[z];
            if (r->c95[z] > cworst) cworst = r->c95[z];
        }
        printf("%12llu %10.2f %12.2f %10.2f %12.2f %12.2f %10.1f %9.2f %11.3f %10.1f %10.1f ms %13.1f ms\n",
               (unsigned long long)r->spans, r->fin_s, (double)r->spans / r->fin_s / 1e6, r->build_s,
               (double)r->spans / r->build_s / 1e6,
               r->read_s > 0 ? (double)r->spans / r->read_s / 1e6 : 0.0,
               (double)r->ix_bytes / 1048576.0,
               (double)r->ix_bytes / (double)r->spans, r->first_s, (double)r->rss_kb / 1024.0,
               worst * 1e3, cworst * 1e3);
    }
    for (size_t i = 0; i < ns; i++) {
        const row_t *r = &rows[i];
        if (!r->ok) continue;
        printf("\n/api/tiles at 1920 px, %llu spans (%d random windows per zoom):\n",
               (unsigned long long)r->spans, PER_ZOOM);
        printf("%6s %12s %10s %10s\n", "zoom", "width", "p50 ms", "p95 ms");
        for (int z = 0; z < ZOOMS; z++) {
            char b[32];
            printf("%6d %12s %10.2f %10.2f\n", z, fmt_w(b, sizeof b, r->width[z]), r->p50[z] * 1e3,
                   r->p95[z] * 1e3);
        }
        printf("\n/api/counters at 1920 px, %llu spans, %llu samples in %llu series, %llu level "
               "records (%.1f MB of the index; %d random windows per zoom): the request (JSON included); the walk alone, "
               "with the levels and over every sample of the window (as before the levels), and "
               "the records or samples each read:\n",
               (unsigned long long)r->spans, (unsigned long long)r->csamples,
               (unsigned long long)r->cseries, (unsigned long long)r->crecords,
               (double)(r->csamples * 16 + r->crecords * 40) / 1e6, PER_ZOOM);
        printf("%6s %12s %10s %10s %10s %10s %12s %10s %10s %12s\n", "zoom", "width", "p50 ms",
               "p95 ms", "lvl p50", "lvl p95", "lvl reads", "smp p50", "smp p95", "smp reads");
        for (int z = 0; z < ZOOMS; z++) {
            char b[32];
            printf("%6d %12s %10.2f %10.2f %10.2f %10.2f %12.0f %10.2f %10.2f %12.0f\n", z,
                   fmt_w(b, sizeof b, r->width[z]), r->c50[z] * 1e3, r->c95[z] * 1e3,
                   r->l50[z] * 1e3, r->l95[z] * 1e3, r->creads[z], r->r50[z] * 1e3,
                   r->r95[z] * 1e3, r->rreads[z]);
        }
    }
    return fail;
}
