"""The lowest layer of the Python package: writing files atomically (atomic)
and loading the MPI library only under an MPI launcher (mpi)."""
