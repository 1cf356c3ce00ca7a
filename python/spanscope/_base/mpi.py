"""MPI for the Python faces: start MPI through mpi4py when the process was
started by an MPI launcher, and load libspanscope_mpi (shipped beside the
extension when the package was built with MPI), so that the C core's
sps_setup finds MPI initialised and makes the session collective
(docs/mpi.md).

libspanscope itself links no MPI: the MPI integration is its own library,
loaded here only once MPI is initialised, so a serial ``import spanscope``
never loads libmpi.  The C library does the rest: with MPI initialised,
setup measures the clock offset against rank 0 and every finalize is
collective, writing one file with every rank.  Nothing here runs without a
launcher, and SPANSCOPE_MPI=0 switches it off.
"""
from __future__ import annotations

import functools
import os
import warnings

#: The per-rank environment variables by which scope-profiler recognises an
#: MPI launch (scope_profiler.mpi_launch.LAUNCHER_ENV_VARS): Open MPI, MPICH /
#: Intel MPI / Cray / srun (PMI), PMIx, MVAPICH2, Hydra, Cray ALPS and PALS.
#: Any of them set means a launcher started this process (launched()); none
#: of them makes ``import spanscope`` initialise MPI.
LAUNCHER_ENV_VARS = (
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "MPI_LOCALRANKID",
    "ALPS_APP_PE",
    "PALS_RANKID",
)

# Environment variables the common launchers set in every rank they start
# (the size variables, and scope-profiler's per-rank ones).
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                  "MPI_LOCALNRANKS", "MV2_COMM_WORLD_SIZE", "HYDRA_CONTROL_FD",
                  *LAUNCHER_ENV_VARS)


def launched() -> bool:
    """True when an MPI launcher (mpirun, mpiexec, srun with PMI) started
    this process and SPANSCOPE_MPI is not "0"."""
    if os.environ.get("SPANSCOPE_MPI", "") == "0":
        return False
    return any(v in os.environ for v in _LAUNCHER_VARS)


def _mpi_library():
    """The path of the libspanscope_mpi beside the extension, or None (the
    package was built without MPI)."""
    from spanscope import _ext
    here = os.path.dirname(_ext.__file__)
    # the soname first: the name the C core would load beside libspanscope
    names = sorted((n != "libspanscope_mpi.so.1", n) for n in os.listdir(here)
                   if n.startswith("libspanscope_mpi.so"))
    return os.path.join(here, names[0][1]) if names else None


def built_with_mpi() -> bool:
    """True when the package ships the MPI integration (libspanscope_mpi
    beside the extension).  Loads nothing."""
    return _mpi_library() is not None


@functools.lru_cache(maxsize=None)
def load_library():
    """Loads libspanscope_mpi with RTLD_GLOBAL (so that C code of the process
    finds sps_mpi_* too) and returns it, or None when the package has none
    or it cannot be loaded.  Its constructor registers the integration with
    the core (the same libspanscope the extension uses: libspanscope_mpi finds
    it beside itself), so that the next sps_setup is collective.  Loading it
    loads libmpi: call it only once MPI is initialised."""
    path = _mpi_library()
    if path is None:
        return None
    import ctypes  # here: `import spanscope` without MPI needs none

    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        warnings.warn("spanscope: cannot load %s (%s): every rank records on its "
                      "own and writes its own file" % (path, e), RuntimeWarning,
                      stacklevel=3)
        return None
    return lib if hasattr(lib, "sps_mpi_setup") else None


def ensure_initialized() -> bool:
    """Under an MPI launcher, imports mpi4py.MPI (which initialises MPI, and
    finalises it at exit after spanscope's own exit handlers) and returns
    True when MPI is initialised, having loaded libspanscope_mpi
    (load_library) so that the next sps_setup is collective.  Without a
    launcher, or without mpi4py, returns False and does nothing."""
    if not launched():
        return False
    try:
        from mpi4py import MPI
    except ImportError:
        return False
    on = bool(MPI.Is_initialized() and not MPI.Is_finalized())
    # once MPI is up (never before: it would load libmpi into serial runs)
    if on and load_library() is None and not built_with_mpi() \
            and MPI.COMM_WORLD.Get_size() > 1:
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
