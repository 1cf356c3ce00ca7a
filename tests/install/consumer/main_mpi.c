/* An MPI program outside the tree that finds an installed spanscope_mpi:
 * a collective session (sps_mpi_clock_offset answers only then), one file
 * for every rank, written by rank 0. */
#include <mpi.h>
#include <spanscope_mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argc > 1 ? argv[1] : NULL;
    int bad = sps_setup(&cfg) < 0;
    for (int i = 0; i < 10; i++) {
        SPS_REGION("consumer.mpi_loop");
    }
    int64_t off = 0, err = 0;
    bad |= sps_mpi_clock_offset(&off, &err) != 0; /* not an MPI session */
    bad |= sps_finalize() < 0;                     /* collective */
    bad |= sps_shutdown() < 0;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any) printf("mpi session on %d ranks\n", size);
    MPI_Finalize();
    return any;
}
