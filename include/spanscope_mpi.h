/*
 * spanscope_mpi.h -- spanscope's MPI integration (built when libspanscope is
 * configured with MPI: CMake option SPS_MPI, AUTO by default).  See
 * docs/mpi.md.
 *
 * With MPI, a session is collective over a communicator:
 *   - sps_setup() called while MPI is initialised (MPI_Initialized true,
 *     MPI_Finalized false) uses MPI_COMM_WORLD by itself; sps_mpi_setup()
 *     names another communicator.  Every rank of the communicator must call
 *     it.  Setup duplicates the communicator (spanscope's messages never
 *     mix with the program's), sets rank and size in the session, and
 *     measures this rank's clock offset against rank 0 (ping-pong, the
 *     round with the lowest round trip wins).  SPANSCOPE_MPI=0 in the
 *     environment switches the automatic detection off.
 *   - sps_finalize() (and sps_finalize_to / sps_finalize_print) is then
 *     collective too: every rank writes its period to a temporary part
 *     (rank 0 next to its output path, the others in their node-local
 *     $TMPDIR), the parts are handed to rank 0 through MPI one rank after
 *     the other (no file system in common is needed), and rank 0 merges
 *     them into one schema-3 file with the rank column filled (written to
 *     a temporary name and renamed into place) and removes them.  Every
 *     rank returns the same code; an output path rank 0 cannot write fails
 *     on every rank before any period is consumed.  Rank 0's path is the
 *     one used.  Checkpoints (finalize again) work as without MPI.
 *   - sps_shutdown() releases the duplicated communicator (MPI_Comm_free,
 *     which MPI defines as collective: call it on every rank).
 *
 * MPI calls made by spanscope itself go through the PMPI entry points, so a
 * profiling library (e.g. libspanscope_pmpi) never sees them.
 */
#ifndef SPANSCOPE_MPI_H
#define SPANSCOPE_MPI_H

#include <mpi.h>

#include "spanscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sps_setup(cfg) over communicator comm (collective over comm).  cfg's
 * rank and size are replaced by comm's.  Returns what sps_setup returns, or
 * SPS_EINVAL (comm is MPI_COMM_NULL or MPI is not initialised), SPS_EIO (an
 * MPI call failed). */
SPS_API int sps_mpi_setup(const sps_config_t *cfg, MPI_Comm comm);

/* This rank's clock offset against rank 0, as measured at setup: ns to ADD
 * to this rank's CLOCK_MONOTONIC times to put them on rank 0's clock, and
 * the error bound (half the lowest round trip).  Either pointer may be
 * NULL.  Returns 0, or SPS_ENOSESSION when no MPI session is active. */
SPS_API int sps_mpi_clock_offset(int64_t *offset_ns, int64_t *error_ns);

/* Counts one call of region r that moved `bytes` bytes, for the file's
 * /communication table (what libspanscope_pmpi calls around every MPI call
 * it records).  Thread-safe; does nothing without an active session.  The
 * counts of a period are written by the collective finalize and then
 * start again from zero. */
SPS_API void sps_mpi_count(sps_region_t r, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SPANSCOPE_MPI_H */
