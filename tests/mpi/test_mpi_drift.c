/* test_mpi_drift.c -- run with mpirun -n 4 --oversubscribe: clocks that
 * drift apart are followed (issue 37 part 2, docs/mpi.md "Clock
 * alignment").
 *
 * A fake clock per rank: this program defines clock_gettime itself, so
 * every CLOCK_MONOTONIC read of the process -- libspanscope's timestamps
 * (SPANSCOPE_CLOCK=monotonic: no TSC, every event stamped through
 * clock_gettime), its ping-pongs with rank 0, MPI's own timers -- reads
 *
 *     fake_r(t) = t + c_r + b_r (t - T0)      (t: the true clock)
 *
 * with a drift b_r of -2500..+3000 ppm and an offset c_r of up to 1.5 s per
 * rank (rank 0 runs true).  Nothing in spanscope is changed for the test:
 * the executable's clock_gettime interposes on libc's for the shared
 * libraries too (ENABLE_EXPORTS).
 *
 * Two periods of K barrier-synchronised markers each, a finalize after
 * each (the setup's measurement and one per finalize: a 2-point line for
 * the first file, a 3-point fit for the second).  Each marker is a region
 * "mark" holding one read of the TRUE clock (the real clock_gettime); rank
 * 0 gathers those readings and checks in each merged file that
 *   - /mpi_clock has the new columns: clock_samples = 2, then 3, and the
 *     fitted slope equals -b_r / (1 + b_r) within what the bounds allow;
 *   - every marker of every rank, aligned, contains its true reading
 *     within that rank's clock_alignment_error_ns (exactly, on rank 0);
 *   - the constant offset measured at setup (what the merge applied
 *     before) would have missed the last markers by more than 4 x the
 *     line's own error plus the marker's length: the check above would
 *     fail without the drift correction.  Where a rank's measurements are
 *     too loose to tell the two apart (4 x (bound + marker) beyond the
 *     constant's miss: every round trip stretched by load) that rank's
 *     period is not compared, and at least one of them must be.
 * It prints per rank the bound and the worst distance between an aligned
 * marker and its true time (the measured alignment error).
 *
 *     test_mpi_drift DIR */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlsym(RTLD_NEXT) */
#endif
#include "mpitest.h"
#include "mpi_h5.h"

#include "model/align.h" /* sps__clock_fit: the merge's own fit (inline) */

#include <dlfcn.h>
#include <math.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define K 6          /* markers per period */
#define GAP_US 80000 /* between markers: a period lasts ~0.5 s */
#define NP_MAX 8

/* The drift and offset of rank r's fake clock (rank 0: none). */
static const double DRIFT[NP_MAX] = {0, 3.0e-3, -2.5e-3, 2.0e-3, 1e-3, -1e-3, 1.5e-3, -2e-3};
static const int64_t SHIFT[NP_MAX] = {0,           2500000,    -4000000, 1500000000,
                                      -1000000000, 7000000,    3000000,  -11000000};

typedef int (*clock_fn)(clockid_t, struct timespec *);
static clock_fn g_real;
static double g_b;
/* Rank-periods where the line was compared with the constant offset
 * (the measurements tight enough to tell them apart): at least one. */
static int g_compared;
static int64_t g_c, g_t0;

static clock_fn real_clock(void) {
    if (!g_real) g_real = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
    return g_real;
}

/* The true CLOCK_MONOTONIC, ns. */
static int64_t true_ns(void) {
    struct timespec ts;
    real_clock()(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The rank's skew, on from before main (MPI and spanscope read the clock
 * from their first call on): the launcher's rank variable names it. */
__attribute__((constructor)) static void fake_init(void) {
    const char *e = getenv("OMPI_COMM_WORLD_RANK");
    if (!e) e = getenv("PMIX_RANK");
    if (!e) e = getenv("PMI_RANK");
    int r = e ? atoi(e) : 0;
    if (r < 0 || r >= NP_MAX) r = 0;
    g_t0 = true_ns();
    g_c = SHIFT[r];
    g_b = DRIFT[r];
}

/* Rank r's fake clock at true time t, its T0 being t0. */
static int64_t fake_at(int r, int64_t t0, int64_t t) {
    return t + SHIFT[r] + (int64_t)llround(DRIFT[r] * (double)(t - t0));
}

/* This process's fake clock at true time t. */
static int64_t fake_of(int64_t t) {
    return t + g_c + (int64_t)llround(g_b * (double)(t - g_t0));
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int rc = real_clock()(id, ts);
    if (rc || id != CLOCK_MONOTONIC || (g_b == 0 && g_c == 0)) return rc;
    int64_t f = fake_of((int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec);
    ts->tv_sec = f / 1000000000;
    ts->tv_nsec = f % 1000000000;
    return 0;
}

/* Each rank's clock alignment as a merge applied it: the fitted line
 * through (t0, o0) and (t1, o1) (times on the rank's clock), its bound,
 * the number of measurements, and the offset measured at setup. */
typedef struct clk {
    int64_t n[NP_MAX], t0[NP_MAX], o0[NP_MAX], t1[NP_MAX], o1[NP_MAX], bound[NP_MAX],
        setup_off[NP_MAX];
} clk_t;

/* A collective finalize's merged file: /mpi_clock's columns into *c. */
static void clk_from_table(const char *path, int size, clk_t *c) {
    int64_t rk[NP_MAX];
    CHECK(read_col(path, "mpi_clock/rank", rk, NP_MAX) == (size_t)size);
    for (int r = 0; r < size; r++) CHECK(rk[r] == r);
    CHECK(read_col(path, "mpi_clock/clock_offset_ns", c->setup_off, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_samples", c->n, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_t0_ns", c->t0, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_offset0_ns", c->o0, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_t1_ns", c->t1, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_offset1_ns", c->o1, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_alignment_error_ns", c->bound, NP_MAX) ==
          (size_t)size);
}

/* Rank r's own file (written after MPI_Finalize): its /clock_sync
 * measurements fitted as sps_merge fits them (the same inline function),
 * and its /metadata offset. */
static void clk_from_part(const char *path, int r, clk_t *c) {
    int64_t t[16], o[16], e[16];
    size_t n = read_col(path, "clock_sync/t_ns", t, 16);
    CHECK(n >= 2);
    CHECK(read_col(path, "clock_sync/offset_ns", o, 16) == n);
    CHECK(read_col(path, "clock_sync/error_ns", e, 16) == n);
    sps__clock_sample_t smp[16];
    for (size_t i = 0; i < n; i++) {
        CHECK(i == 0 || t[i] > t[i - 1]); /* setup's, then one per finalize */
        CHECK(e[i] >= 0);
        smp[i] = (sps__clock_sample_t){t[i], o[i], e[i]};
    }
    sps__clock_fit_t fit = {0};
    CHECK(sps__clock_fit(smp, n, &fit) == 0);
    c->n[r] = fit.n, c->t0[r] = fit.t0, c->o0[r] = fit.off0;
    c->t1[r] = fit.t1, c->o1[r] = fit.off1, c->bound[r] = fit.error;
    c->setup_off[r] = meta_i64(path, "metadata", "clock_offset_ns");
    CHECK(c->setup_off[r] == o[0]); /* the first measurement is setup's */
}

/* Checks the merged file at path (label: what it is) against the true
 * readings truth[rank * K + k], with the alignment c and nsamp
 * measurements per rank; rank 0 only.  A marker after a rank's last
 * measurement (t1: a finalize after MPI_Finalize measures nothing) may
 * be off by the bound grown linearly past t1: fit - truth is a line
 * within the bound at t0 and t1, so at t > t1 within bound (1 + 2 (t -
 * t1) / (t1 - t0)).  Prints the measured alignment error per rank. */
static void check_file(const char *path, const char *label, int size, const clk_t *c,
                       int nsamp, const int64_t *truth, const int64_t *fake_t0) {
    const int64_t *n = c->n, *t0 = c->t0, *o0 = c->o0, *t1 = c->t1, *o1 = c->o1,
                  *setup_off = c->setup_off;
    CHECK(meta_i64(path, "metadata", "mpi_size") == size);
    const sps_file_t *f = NULL;
    char err[512];
    CHECK(sps_file_open(path, &f, err, sizeof err) == 0);
    uint32_t mark = UINT32_MAX;
    for (size_t i = 0; i < f->nnames; i++)
        if (!strcmp(f->names[i], "mark")) mark = (uint32_t)i;
    CHECK(mark != UINT32_MAX);
    for (int r = 0; r < size; r++) {
        CHECK(n[r] == nsamp);
        CHECK(c->bound[r] >= 0);
        CHECK(t1[r] > t0[r]);
        /* the fitted slope: offset = t - fake(t) has slope -b/(1+b) per ns
         * of the rank's clock; the line's ends are each within the bound */
        double slope = (double)(o1[r] - o0[r]) / (double)(t1[r] - t0[r]);
        double want = -DRIFT[r] / (1 + DRIFT[r]);
        double tol = 2.0 * (double)c->bound[r] / (double)(t1[r] - t0[r]) + 1e-9;
        if (fabs(slope - want) > tol)
            fprintf(stderr, "rank %d: fitted slope %.9f, injected %.9f, tolerance %.9f\n", r,
                    slope, want, tol);
        CHECK(fabs(slope - want) <= tol);
        if (r == 0) CHECK(c->bound[r] <= 2 && o0[r] == 0 && o1[r] == 0);

        /* the markers of rank r in start order */
        const sps_file_row_t *row = NULL;
        for (size_t i = 0; i < f->nrows; i++)
            if (f->rows[i].region == mark && f->rows[i].rank == (uint32_t)r) row = &f->rows[i];
        CHECK(row && row->count == K);
        int64_t worst = 0, worst_const = INT64_MAX, longest = 0, last = 0, err_map = 0;
        for (int k = 0; k < K; k++) {
            int64_t s = f->start_ns[row->first + k], e = s + f->dur_ns[row->first + k];
            int64_t t = truth[r * K + k];
            /* aligned: the true reading lies in [s, e] up to the bound
             * (grown past the last measurement, on the rank's clock) */
            int64_t raw = fake_at(r, fake_t0[r], t), lim = c->bound[r];
            if (raw > t1[r])
                lim = (int64_t)((double)c->bound[r] *
                                (1 + 2 * (double)(raw - t1[r]) / (double)(t1[r] - t0[r]))) + 1;
            int64_t miss = t < s ? s - t : t > e ? t - e : 0;
            if (miss > lim)
                fprintf(stderr, "rank %d marker %d: aligned [%lld, %lld], true %lld, "
                        "tolerance %lld\n", r, k, (long long)s, (long long)e, (long long)t,
                        (long long)lim);
            CHECK(miss <= lim);
            if (miss > worst) worst = miss;
            /* the alignment error itself, without the marker's length:
             * the fitted line applied to the true reading's fake time
             * (what the merge does to an event stamped exactly then) */
            double mapped = (double)raw + (double)o0[r] +
                            (double)(o1[r] - o0[r]) * (double)(raw - t0[r]) /
                                (double)(t1[r] - t0[r]);
            int64_t em = llabs((int64_t)llround(mapped) - t);
            CHECK(em <= lim + 1);
            if (em > err_map) err_map = em;
            if (e - s > longest) longest = e - s;
            /* with the constant offset of setup instead (the merge before
             * drift): the event's raw time fake(t) plus that offset */
            if (k == K - 1) {
                worst_const = llabs(fake_at(r, fake_t0[r], t) + setup_off[r] - t);
                last = e - s;
            }
        }
        if (r > 0 && 4 * (c->bound[r] + last) >= worst_const) {
            /* measurements too loose to see the drift by (a rank
             * descheduled through every round trip of a finalize): the
             * bound already held the line above; no comparison */
            printf("test_mpi_drift: %s, rank %d: bound %lld ns too loose to tell the line "
                   "from the constant offset (off by %lld ns): not compared\n",
                   label, r, (long long)c->bound[r], (long long)worst_const);
        } else if (r > 0) {
            /* the constant offset would miss the last marker by far more
             * than the fitted line does and the marker's own length,
             * wherever the measurements' bound could tell them apart (one
             * ping-pong stretched by a loaded machine, or a sanitizer,
             * makes the bound honest but large -- CI saw 1.8 ms) */
            if (worst_const <= 4 * (err_map + last))
                fprintf(stderr, "rank %d: a constant offset is off by %lld ns only "
                        "(the line: %lld, marker %lld ns)\n", r, (long long)worst_const,
                        (long long)err_map, (long long)last);
            CHECK(worst_const > 4 * (err_map + last));
            g_compared++;
        }
        printf("test_mpi_drift: %s, rank %d: drift %+.0f ppm injected, %+.1f fitted "
               "(%d measurements); alignment error at the markers %lld ns, bound %lld ns; "
               "markers (up to %lld ns long) contain their true time within %lld ns; "
               "setup's constant offset: off by %lld ns at the last marker\n",
               label, r, DRIFT[r] * 1e6, -slope * 1e6 * (1 + DRIFT[r]), (int)n[r],
               (long long)err_map, (long long)c->bound[r], (long long)longest,
               (long long)worst, r ? (long long)worst_const : 0LL);
    }
    sps_file_close(f);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    setenv("SPANSCOPE_CLOCK", "monotonic", 1); /* every stamp through clock_gettime */
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rank = mt_rank;
    CHECK(size >= 2 && size <= NP_MAX);
    /* the fake clock is on (rank 0 true), and the interposition reaches
     * libspanscope: sps_now_ns reads the fake clock */
    if (rank > 0) {
        int64_t a = true_ns(), x = sps_now_ns(), b = true_ns();
        CHECK(x >= fake_of(a) - 1000 && x <= fake_of(b) + 1000);
        CHECK(llabs(x - a) > 1000000); /* every skewed rank is shifted by ms at least */
    }

    char path[4096], p1[4096], p2[4096];
    snprintf(path, sizeof path, "%s/drift.h5", argv[1]);
    snprintf(p1, sizeof p1, "%s/p1.h5", argv[1]);
    snprintf(p2, sizeof p2, "%s/p2.h5", argv[1]);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    CHECK(sps_setup(&cfg) == 0);
    CHECK(!strcmp(sps_clock_source(), "monotonic"));
    int64_t off = 1, oerr = -1;
    CHECK(sps_mpi_clock_offset(&off, &oerr) == 0);
    CHECK(oerr >= 0 && (rank > 0 || (off == 0 && oerr == 0)));
    int64_t *fake_t0 = malloc(NP_MAX * sizeof *fake_t0); /* every rank's T0 */
    CHECK(fake_t0);
    MPI_Gather(&g_t0, 1, MPI_INT64_T, fake_t0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);

    sps_region_t mark = sps_region("mark");
    int64_t mine[K], *truth = malloc((size_t)size * K * sizeof *truth);
    CHECK(truth);
    clk_t clk;
    for (int p = 1; p <= 3; p++) {
        for (int k = 0; k < K; k++) {
            usleep(GAP_US);
            MPI_Barrier(MPI_COMM_WORLD);
            sps_begin(mark);
            mine[k] = true_ns();
            sps_end(mark);
        }
        MPI_Gather(mine, K, MPI_INT64_T, truth, K, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (p == 3) break; /* finalized after MPI_Finalize, below */
        /* collective finalizes: setup's measurement and one more each */
        CHECK(sps_finalize_to(p == 1 ? p1 : p2) == 0);
        if (rank == 0) {
            /* SPANSCOPE_MPI_MERGE=copy (the test mpi_drift_copy): each rank
             * put its own events on rank 0's clock, rank 0 copied them */
            const char *merge = getenv("SPANSCOPE_MPI_MERGE");
            char how[96];
            meta_str(p == 1 ? p1 : p2, "metadata", "mpi_merge", how, sizeof how);
            if (merge && !strcmp(merge, "copy")) CHECK(!strncmp(how, "copy: ", 6));
            else CHECK(how[0] == 0);
            printf("test_mpi_drift: period %d merged %s\n", p, how[0] ? how : "event by event");
            clk_from_table(p == 1 ? p1 : p2, size, &clk);
            check_file(p == 1 ? p1 : p2, p == 1 ? "period 1 (collective)" : "period 2 (collective)",
                       size, &clk, p + 1, truth, fake_t0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();

    /* period 3 after MPI_Finalize: every rank writes drift.h5.rank<R>.h5
     * with its measurements (/clock_sync: setup's and the two finalizes'),
     * and rank 0 merges them as `spanscope merge` would; the markers come
     * after the last measurement (extrapolated) */
    CHECK(sps_finalize() == 0);
    CHECK(sps_shutdown() == 0);
    char done[4200];
    snprintf(done, sizeof done, "%s/done.%d", argv[1], rank);
    FILE *df = fopen(done, "w");
    CHECK(df && fclose(df) == 0);
    if (rank == 0) {
        char parts[NP_MAX][4200];
        const char *in[NP_MAX];
        for (int r = 0; r < size; r++) {
            struct stat st;
            snprintf(done, sizeof done, "%s/done.%d", argv[1], r);
            for (int w = 0; w < 1200 && stat(done, &st) != 0; w++) usleep(50000);
            CHECK(stat(done, &st) == 0);
            snprintf(parts[r], sizeof parts[r], "%s.rank%d.h5", path, r);
            in[r] = parts[r];
            clk_from_part(parts[r], r, &clk);
        }
        char p3[4200];
        snprintf(p3, sizeof p3, "%s/p3.h5", argv[1]);
        CHECK(sps_merge(p3, in, (size_t)size, stderr) == 0);
        check_file(p3, "period 3 (per-rank files merged)", size, &clk, 3, truth, fake_t0);
    }
    free(truth);
    free(fake_t0);
    if (rank == 0) CHECK(g_compared >= 1); /* 3 periods x (size - 1) ranks */
    if (rank == 0) printf("test_mpi_drift: all checks passed on %d ranks\n", size);
    fflush(stdout);
    return 0;
}
