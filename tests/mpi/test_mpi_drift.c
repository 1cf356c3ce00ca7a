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
 * with a drift b_r of -1500..+2000 ppm and an offset c_r of up to 1.5 s per
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
 *     bound plus the marker's length: the check above would fail without
 *     the drift correction.
 * It prints per rank the bound and the worst distance between an aligned
 * marker and its true time (the measured alignment error).
 *
 *     test_mpi_drift DIR */
#define _GNU_SOURCE
#include "mpitest.h"
#include "mpi_h5.h"

#include <dlfcn.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define K 6          /* markers per period */
#define GAP_US 80000 /* between markers: a period lasts ~0.5 s */
#define NP_MAX 8

/* The drift and offset of rank r's fake clock (rank 0: none). */
static const double DRIFT[NP_MAX] = {0, 2.0e-3, -1.5e-3, 1.0e-3, 5e-4, -5e-4, 1.5e-3, -1e-3};
static const int64_t SHIFT[NP_MAX] = {0,           2500000,    -4000000, 1500000000,
                                      -1000000000, 7000000,    3000000,  -11000000};

typedef int (*clock_fn)(clockid_t, struct timespec *);
static clock_fn g_real;
static double g_b;
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

/* Checks the merged file at path of period p (1 or 2: 2 or 3
 * measurements) against the true readings truth[rank * K + k]; rank 0
 * only.  Prints the measured alignment error per rank. */
static void check_file(const char *path, int p, int size, const int64_t *truth,
                       const int64_t *fake_t0) {
    int64_t rk[NP_MAX], n[NP_MAX], t0[NP_MAX], o0[NP_MAX], t1[NP_MAX], o1[NP_MAX],
        bound[NP_MAX], setup_off[NP_MAX];
    CHECK(read_col(path, "mpi_clock/rank", rk, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_offset_ns", setup_off, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_samples", n, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_t0_ns", t0, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_offset0_ns", o0, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_t1_ns", t1, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_fit_offset1_ns", o1, NP_MAX) == (size_t)size);
    CHECK(read_col(path, "mpi_clock/clock_alignment_error_ns", bound, NP_MAX) ==
          (size_t)size);

    CHECK(meta_i64(path, "metadata", "mpi_size") == size);
    const sps_file_t *f = NULL;
    char err[512];
    CHECK(sps_file_open(path, &f, err, sizeof err) == 0);
    uint32_t mark = UINT32_MAX;
    for (size_t i = 0; i < f->nnames; i++)
        if (!strcmp(f->names[i], "mark")) mark = (uint32_t)i;
    CHECK(mark != UINT32_MAX);
    for (int r = 0; r < size; r++) {
        CHECK(rk[r] == r);
        CHECK(n[r] == p + 1);
        CHECK(bound[r] >= 0);
        CHECK(t1[r] > t0[r]);
        /* the fitted slope: offset = t - fake(t) has slope -b/(1+b) per ns
         * of the rank's clock; the line's ends are each within the bound */
        double slope = (double)(o1[r] - o0[r]) / (double)(t1[r] - t0[r]);
        double want = -DRIFT[r] / (1 + DRIFT[r]);
        double tol = 2.0 * (double)bound[r] / (double)(t1[r] - t0[r]) + 1e-9;
        if (fabs(slope - want) > tol)
            fprintf(stderr, "rank %d: fitted slope %.9f, injected %.9f, tolerance %.9f\n", r,
                    slope, want, tol);
        CHECK(fabs(slope - want) <= tol);
        if (r == 0) CHECK(bound[r] <= 2 && o0[r] == 0 && o1[r] == 0);

        /* the markers of rank r in start order */
        const sps_file_row_t *row = NULL;
        for (size_t i = 0; i < f->nrows; i++)
            if (f->rows[i].region == mark && f->rows[i].rank == (uint32_t)r) row = &f->rows[i];
        CHECK(row && row->count == K);
        int64_t worst = 0, worst_const = INT64_MAX, longest = 0, last = 0;
        for (int k = 0; k < K; k++) {
            int64_t s = f->start_ns[row->first + k], e = s + f->dur_ns[row->first + k];
            int64_t t = truth[r * K + k];
            /* aligned: the true reading lies in [s, e] up to the bound */
            int64_t miss = t < s ? s - t : t > e ? t - e : 0;
            if (miss > bound[r])
                fprintf(stderr, "rank %d marker %d: aligned [%lld, %lld], true %lld, "
                        "bound %lld\n", r, k, (long long)s, (long long)e, (long long)t,
                        (long long)bound[r]);
            CHECK(miss <= bound[r]);
            if (miss > worst) worst = miss;
            if (e - s > longest) longest = e - s;
            /* with the constant offset of setup instead (the merge before
             * drift): the event's raw time fake(t) plus that offset */
            if (k == K - 1) {
                worst_const = llabs(fake_at(r, fake_t0[r], t) + setup_off[r] - t);
                last = e - s;
            }
        }
        if (r > 0) {
            /* the constant offset would miss the last marker by far more
             * than the bound and the marker's own length */
            if (worst_const <= 4 * (bound[r] + last))
                fprintf(stderr, "rank %d: a constant offset is off by %lld ns only "
                        "(bound %lld, marker %lld ns)\n", r, (long long)worst_const,
                        (long long)bound[r], (long long)last);
            CHECK(worst_const > 4 * (bound[r] + last));
        }
        printf("test_mpi_drift: period %d rank %d: injected drift %+.0f ppm, fitted %+.1f "
               "ppm over %d measurements; error bound %lld ns; aligned markers within "
               "%lld ns of the true time (longest marker %lld ns); the setup's constant "
               "offset would be off by %lld ns at the last marker\n",
               p, r, DRIFT[r] * 1e6, -slope * 1e6, (int)n[r], (long long)bound[r],
               (long long)worst, (long long)longest, r ? (long long)worst_const : 0LL);
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
    for (int p = 1; p <= 2; p++) {
        for (int k = 0; k < K; k++) {
            usleep(GAP_US);
            MPI_Barrier(MPI_COMM_WORLD);
            sps_begin(mark);
            mine[k] = true_ns();
            sps_end(mark);
        }
        CHECK(sps_finalize_to(p == 1 ? p1 : p2) == 0);
        MPI_Gather(mine, K, MPI_INT64_T, truth, K, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (rank == 0) check_file(p == 1 ? p1 : p2, p, size, truth, fake_t0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK(sps_shutdown() == 0);
    free(truth);
    free(fake_t0);
    if (rank == 0) printf("test_mpi_drift: all checks passed on %d ranks\n", size);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
