"""Python under mpirun -n 4 --oversubscribe: ProfileManager in every rank,
MPI started through mpi4py by spanscope itself, libspanscope_mpi loaded
beside the extension, one file per finalize with every rank in it,
checkpoints, a rank without events, clock offsets.  And the serial case: a
session without a launcher loads neither libspanscope_mpi nor libmpi.

    python mpi_python.py DIR       (under mpirun)
    python mpi_python.py --serial  (without a launcher)
    python mpi_python.py --probe   (exit 0 when this can run here)
"""
import os
import sys
import time


def probe():
    try:
        import h5py  # noqa: F401
        import mpi4py  # noqa: F401
        from spanscope._base import mpi as _mpi
    except ImportError:
        return 1
    return 0 if _mpi.built_with_mpi() else 1


def mapped():
    """Base names of the shared objects mapped into this process."""
    with open("/proc/self/maps") as f:
        return {os.path.basename(line.split()[-1]) for line in f
                if len(line.split()) >= 6 and ".so" in line}


def serial():
    """Without a launcher a session stays local and loads no MPI, although
    the package ships libspanscope_mpi."""
    from spanscope._base import mpi as _mpi
    for v in _mpi._LAUNCHER_VARS:
        os.environ.pop(v, None)
    from spanscope import ProfileManager
    assert _mpi.built_with_mpi()
    ProfileManager.setup(file_path=None)
    with ProfileManager.region("serial_work"):
        pass
    ProfileManager.finalize(verbose=False)
    loaded = mapped()
    assert any(n.startswith("libspanscope.so") for n in loaded), sorted(loaded)
    mpi = sorted(n for n in loaded if "mpi" in n)
    assert not mpi, mpi
    print("mpi_python --serial: no MPI library loaded (%d objects)" % len(loaded), flush=True)


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def main(out):
    import h5py
    import numpy as np
    from spanscope import ProfileManager
    from spanscope._base import mpi as _mpi

    assert _mpi.launched()
    p1, p2 = os.path.join(out, "py1.h5"), os.path.join(out, "py2.h5")
    ProfileManager.setup(file_path=p1)      # imports mpi4py: MPI starts here
    from mpi4py import MPI
    # the integration came from the package's own directory
    assert "libspanscope_mpi.so.1" in mapped(), sorted(mapped())
    assert _mpi.load_library() is not None
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    last = size - 1
    if rank != last:                        # the last rank records nothing
        for _ in range(3):
            with ProfileManager.region("py_work"):
                spin(100_000 * (rank + 1))
    if rank == 1:
        with ProfileManager.region("py_only_rank1"):
            pass
    import spanscope
    spanscope.counter("rank_load", float(rank))  # a counter sample on every rank
    ProfileManager.finalize(verbose=False)  # collective
    if rank == 0:
        with h5py.File(p1, "r") as f:
            names = [n.decode() if isinstance(n, bytes) else n
                     for n in f["region_table/names"][:]]
            ids = f["rank_region_index/region_ids"][:]
            ranks = f["rank_region_index/ranks"][:]
            counts = f["rank_region_index/event_counts"][:]
            work = names.index("py_work")
            got = {int(r): int(c) for i, r, c in zip(ids, ranks, counts) if i == work}
            assert got == {k: 3 for k in range(last)}, got
            assert int(f["metadata"].attrs["mpi_size"]) == size
            err = f["mpi_clock/clock_offset_error_ns"][:]
            off = f["mpi_clock/clock_offset_ns"][:]
            assert len(err) == size and (err >= 0).all() and (err < 100_000_000).all()
            # one host, one CLOCK_MONOTONIC: the estimate lies within its bound
            assert (np.abs(off) <= err + 1000).all(), (off, err)
            assert len(f["events/durations"]) == 3 * last + 1
            cn = [n.decode() if isinstance(n, bytes) else n for n in f["counters/names"][:]]
            assert cn == ["rank_load"], cn
            assert sorted(f["counters/ranks"][:].tolist()) == list(range(size))
            got_v = dict(zip(f["counters/ranks"][:].tolist(), f["counters/values"][:].tolist()))
            assert got_v == {r: float(r) for r in range(size)}, got_v
    # checkpoint: the second file holds only the second period, every rank
    with ProfileManager.region("py_step"):
        spin(10_000)
    ProfileManager.finalize(verbose=False, file_path=p2)
    if rank == 0:
        with h5py.File(p2, "r") as f:
            names = [n.decode() if isinstance(n, bytes) else n
                     for n in f["region_table/names"][:]]
            ids = f["rank_region_index/region_ids"][:]
            ranks = sorted(int(r) for i, r in zip(ids, f["rank_region_index/ranks"][:])
                           if names[i] == "py_step")
            assert ranks == list(range(size)), ranks
            assert len(f["events/durations"]) == size
        left = [n for n in os.listdir(out) if ".tmp" in n]
        assert not left, left
    comm.Barrier()
    torch_style(out, comm, rank, size)
    if rank == 0:
        print("mpi_python: all checks passed on %d ranks" % size, flush=True)


def torch_style(out, comm, rank, size):
    """The torch-style profiler under mpirun: each rank profiles on its own
    (local sessions: no rank waits for another), then rank 0 merges the
    per-rank traces with merge_distributed_traces."""
    from spanscope import ProfileManager, profiler
    ProfileManager._reset()                 # the collective session ends (all ranks)
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(size)
    if rank % 2 == 1:                       # odd ranks profile late, alone
        time.sleep(0.2)
    with profiler.profile() as p:
        with profiler.record_function(f"torch_style_r{rank}"):
            spin(50_000)
    path = os.path.join(out, f"trace{rank}.pt.trace.json")
    p.export_chrome_trace(path)
    import json
    with open(path) as f:  # MPI is initialised (mpi4py): the backend is named
        assert json.load(f)["distributedInfo"] == {"rank": rank, "world_size": size,
                                                   "backend": "mpi"}
    comm.Barrier()
    if rank == 0:
        merged = os.path.join(out, "merged.json")
        profiler.merge_distributed_traces(
            [os.path.join(out, f"trace{r}.pt.trace.json") for r in range(size)], merged)
        with open(merged) as f:
            ev = json.load(f)["traceEvents"]
        got = sorted((e["name"], e["pid"]) for e in ev
                     if e["ph"] == "X" and e["cat"] == "user_annotation")
        assert got == [(f"torch_style_r{r}", r) for r in range(size)], got


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    if sys.argv[1:] == ["--serial"]:
        sys.exit(serial())
    main(sys.argv[1])
