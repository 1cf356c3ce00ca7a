/* mpiprog.c -- an MPI program not modified for profiling: 3 MPI_Allreduce
 * and 1 MPI_Barrier per rank.  Under `mpirun -n N spanscope run --mpi`
 * they are regions of one file holding every rank. */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x = rank, y = 0;
    for (int i = 0; i < 3; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("mpiprog %d ranks sum %g\n", size, y);
    MPI_Finalize();
    return 0;
}
