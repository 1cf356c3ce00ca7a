"""MPI for the Python faces: start MPI through mpi4py when the process was
started by an MPI launcher, so that the C core's sps_setup finds MPI
initialised and makes the session collective (docs/mpi.md).

The C library does the rest by itself: with MPI initialised, setup
measures the clock offset against rank 0 and every finalize is collective,
writing one file with every rank.  Nothing here runs without a launcher, and
SPANSCOPE_MPI=0 switches it off.
"""
from __future__ import annotations

import ctypes
import functools
import os
import warnings

# Environment variables the common launchers set in every rank they start.
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                  "MPI_LOCALNRANKS", "MV2_COMM_WORLD_SIZE", "HYDRA_CONTROL_FD")


def launched() -> bool:
    """True when an MPI launcher (mpirun, mpiexec, srun with PMI) started
    this process and SPANSCOPE_MPI is not "0"."""
    if os.environ.get("SPANSCOPE_MPI", "") == "0":
        return False
    return any(v in os.environ for v in _LAUNCHER_VARS)


@functools.lru_cache(maxsize=None)
def built_with_mpi() -> bool:
    """True when the loaded libspanscope has the MPI integration."""
    from spanscope import _ext
    here = os.path.dirname(_ext.__file__)
    for name in sorted(os.listdir(here)):
        if name.startswith("libspanscope.so"):
            try:
                lib = ctypes.CDLL(os.path.join(here, name))
            except OSError:
                continue
            return hasattr(lib, "sps_mpi_setup")
    return False


def ensure_initialized() -> bool:
    """Under an MPI launcher, imports mpi4py.MPI (which initialises MPI, and
    finalises it at exit after spanscope's own exit handlers) and returns
    True when MPI is initialised.  Without a launcher, or without mpi4py,
    returns False and does nothing."""
    if not launched():
        return False
    try:
        from mpi4py import MPI
    except ImportError:
        return False
    on = bool(MPI.Is_initialized() and not MPI.Is_finalized())
    if on and MPI.COMM_WORLD.Get_size() > 1 and not built_with_mpi():
        warnings.warn("spanscope was built without MPI: every rank records on "
                      "its own and writes its own file (rebuild with MPI, "
                      "docs/mpi.md)", RuntimeWarning, stacklevel=3)
    return on


def world():
    """(rank, size) of MPI_COMM_WORLD when MPI is initialised, else (0, 1)."""
    if not ensure_initialized():
        return 0, 1
    from mpi4py import MPI
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
