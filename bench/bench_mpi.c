/* bench_mpi.c -- the collective finalize at scale (bench/bench_mpi.py runs
 * it under mpirun -n 1, 2, 4, 8).
 *
 *     bench_mpi DIR CALLS_PER_RANK REPS
 *
 * Every rank records CALLS_PER_RANK calls (three regions, one nested in
 * another), then all ranks call sps_finalize_to(DIR/bench.h5); the time from
 * a barrier before to a barrier after is the finalize time (the slowest
 * rank's, as the program sees it).  Repeated REPS times (checkpoints).
 * Rank 0 prints one JSON line: ranks, calls per rank, finalize seconds of
 * each repetition, the size of the merged file, and per rank the CPU
 * seconds its process spent in the finalizes (getrusage: every thread of
 * it, user + system) and its peak resident set (ru_maxrss, KiB) -- what
 * issue 37 compares between rank 0 and a middle rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "spanscope.h"

/* This process's CPU seconds so far (user + system, all threads). */
static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0) fprintf(stderr, "usage: bench_mpi DIR CALLS_PER_RANK REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long calls = atol(argv[2]);
    int reps = atoi(argv[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.h5", argv[1]);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    if (sps_setup(&cfg) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner"),
                 other = sps_region("other");
    double *t = calloc((size_t)reps, sizeof *t);
    long long bytes = 0;
    double fin_cpu = 0; /* this rank's CPU in the finalizes */
    for (int k = 0; k < reps; k++) {
        for (long i = 0; i < calls; i += 3) {
            sps_begin(outer);
            sps_begin(inner);
            sps_end(inner);
            sps_end(outer);
            sps_begin(other);
            sps_end(other);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = cpu_s();
        int rc = sps_finalize_to(path);
        fin_cpu += cpu_s() - c0;
        MPI_Barrier(MPI_COMM_WORLD);
        t[k] = MPI_Wtime() - t0;
        if (rc) {
            if (rank == 0) fprintf(stderr, "bench_mpi: finalize: %s\n", sps_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        struct stat st;
        if (rank == 0 && stat(path, &st) == 0) bytes = (long long)st.st_size;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mine[2] = {fin_cpu, (double)ru.ru_maxrss};
    double *all = rank == 0 ? calloc((size_t)size * 2, sizeof *all) : NULL;
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"ranks\": %d, \"calls_per_rank\": %ld, \"file_bytes\": %lld, "
               "\"finalize_s\": [", size, calls, bytes);
        for (int k = 0; k < reps; k++) printf("%s%.6f", k ? ", " : "", t[k]);
        printf("], \"cpu_s\": [");
        for (int r = 0; r < size; r++) printf("%s%.6f", r ? ", " : "", all[2 * r]);
        printf("], \"maxrss_kib\": [");
        for (int r = 0; r < size; r++) printf("%s%.0f", r ? ", " : "", all[2 * r + 1]);
        printf("]}\n");
    }
    free(all);
    free(t);
    sps_shutdown();
    MPI_Finalize();
    return 0;
}
