/* test_mpi_signals.c -- SIGTERM to mpirun on a 4-rank recording program
 * gives ONE profile holding every rank (api/signals.c, docs/signals.md):
 * each rank writes its part, rank 0 merges them, no MPI call is made from
 * the signal's watcher.  Driven by signals.sh:
 *
 *   test_mpi_signals run DIR     (under mpirun) every rank records "work"
 *                                calls, MPI_Allreduce every 64 of them,
 *                                until SIGTERM; it counts its completed
 *                                calls in DIR/count.<rank> (8 bytes,
 *                                mmap'ed) and writes its pid to
 *                                DIR/pid.<rank> once recording
 *   test_mpi_signals check DIR   (no MPI) DIR/sig.h5 is one valid profile
 *                                of 4 ranks, each rank's calls between its
 *                                count when the signal was sent
 *                                (DIR/before.<rank>, written by the
 *                                driver) and its count at the end, + 1;
 *                                no part is left */
#include <fcntl.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spanscope.h"

#define NP 4

static int fail(const char *what) {
    fprintf(stderr, "test_mpi_signals: check failed: %s\n", what);
    return 1;
}

static long long read_ll(const char *dir, const char *name, int rank) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.%d", dir, name, rank);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

static long long count_of(const char *dir, int rank) {
    char p[4096];
    snprintf(p, sizeof p, "%s/count.%d", dir, rank);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return -1;
    long long v = -1;
    if (pread(fd, &v, sizeof v, 0) != (ssize_t)sizeof v) v = -1;
    close(fd);
    return v;
}

static int run(const char *dir) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096], p[4096];
    snprintf(path, sizeof path, "%s/sig.h5", dir);
    snprintf(p, sizeof p, "%s/count.%d", dir, rank);
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 8) != 0) return fail("count file");
    atomic_llong *done = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (done == MAP_FAILED) return fail("mmap");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    if (sps_setup(&cfg) != 0) return fail("sps_setup");
    snprintf(p, sizeof p, "%s/pid.%d", dir, rank);
    FILE *f = fopen(p, "w");
    if (!f) return fail("pid file");
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    sps_region_t work = sps_region("work");
    volatile double x = 0;
    for (long long i = 1;; i++) {
        sps_begin(work);
        for (int j = 0; j < 2000; j++) x += j * 1e-9;
        sps_end(work);
        atomic_store(done, i);
        if (i % 64 == 0) { /* the main threads are in MPI when the signal comes */
            double s = 1, r = 0;
            MPI_Allreduce(&s, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
}

static int check(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/sig.h5", dir);
    const sps_file_t *f = NULL;
    char err[1024];
    if (sps_file_open(path, &f, err, sizeof err) != 0) {
        fprintf(stderr, "test_mpi_signals: %s\n", err);
        return fail("the merged file is a profile");
    }
    long long calls[NP] = {0};
    int bad_rank = 0;
    for (size_t i = 0; i < f->nrows; i++) {
        if (strcmp(f->names[f->rows[i].region], "work") != 0) continue;
        if (f->rows[i].rank >= NP) bad_rank = 1;
        else calls[f->rows[i].rank] += (long long)f->rows[i].count;
    }
    sps_file_close(f);
    if (bad_rank) return fail("ranks 0..3 only");
    int rc = 0;
    for (int r = 0; r < NP; r++) {
        long long before = read_ll(dir, "before", r), after = count_of(dir, r);
        printf("rank %d: %lld calls before the signal, %lld in the file, %lld at the end\n", r,
               before, calls[r], after);
        if (before <= 0 || calls[r] < before || calls[r] > after + 1)
            rc = fail("each rank's calls: all made before the signal, none never made");
        char part[4200];
        snprintf(part, sizeof part, "%s.rank%d.h5", path, r);
        struct stat st;
        if (stat(part, &st) == 0) rc = fail("no part left");
    }
    if (!rc) printf("test_mpi_signals: all checks passed on %d ranks\n", NP);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "check") == 0) return check(argv[2]);
    if (argc != 3 || strcmp(argv[1], "run") != 0) {
        fprintf(stderr, "usage: test_mpi_signals run|check DIR\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rc = run(argv[2]);
    MPI_Abort(MPI_COMM_WORLD, rc);
    return rc;
}
