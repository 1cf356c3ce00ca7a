/* mpitest.h -- tiny helpers of the MPI test programs (run by mpirun; a
 * failed check prints the rank and line and aborts every rank). */
#ifndef SPS_MPITEST_H
#define SPS_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "spanscope_mpi.h"

static int mt_rank;

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", mt_rank,     \
                    __FILE__, __LINE__, #c);                                   \
            fflush(stderr);                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)

static inline void mt_spin(int64_t ns) {
    int64_t t = sps_now_ns();
    while (sps_now_ns() - t < ns) {
    }
}

#endif
