"""scope-profiler's mpi4py wrappers (spanscope.mpi_wrappers) with real
mpi4py under mpirun -n 2 --oversubscribe: setup(profile_mpi_calls=True)
wraps MPI.COMM_WORLD, buffer- and object-mode point-to-point calls, a
request's Wait, collectives and a communicator from Split run in regions
named as scope-profiler names them, the collective finalize writes them
with their bytes, peers and ranks into one file, reset() restores
COMM_WORLD.  The pure functions and the option's lifetime are
tests/python/test_mpi_wrappers.py.

    python mpi_wrappers.py DIR       (under mpirun, 2 ranks)
    python mpi_wrappers.py --probe   (exit 0 when this can run here)
"""
import os
import sys


def probe():
    try:
        import h5py  # noqa: F401
        import mpi4py  # noqa: F401
        import numpy  # noqa: F401
        from spanscope._base import mpi as _mpi
    except ImportError:
        return 1
    return 0 if _mpi.built_with_mpi() else 1


def check(cond, what):
    """A failed check prints "check failed" (CTest's FAIL_REGULAR_EXPRESSION)
    and aborts every rank, so no rank waits forever in a collective."""
    if not cond:
        print(f"mpi_wrappers: check failed: {what}", flush=True)
        from mpi4py import MPI
        MPI.COMM_WORLD.Abort(1)


def main(out):
    import numpy as np
    import spanscope
    from spanscope import ProfileManager
    from spanscope.mpi_wrappers import ProfiledMPIComm, format_mpi_region, parse_mpi_region

    path = os.path.join(out, "wrapped.h5")
    ProfileManager.setup(file_path=path, profile_mpi_calls=True)  # MPI starts here
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    check(isinstance(comm, ProfiledMPIComm), f"COMM_WORLD is {type(comm).__name__}")
    rank, size = comm.Get_rank(), comm.Get_size()         # passed through
    check(size == 2, f"2 ranks, got {size}")
    cid = comm.communicator.py2f()
    peer = 1 - rank

    data = np.arange(100, dtype=np.float64)               # 800 bytes
    if rank == 0:
        comm.Send([data, MPI.DOUBLE], dest=1, tag=7)
        comm.send({"step": 1}, dest=1, tag=8)             # object mode: bytes=-1
    else:
        got = np.empty(100, dtype=np.float64)
        comm.Recv([got, MPI.DOUBLE], source=0, tag=7)
        check(np.array_equal(got, data), "Recv got the data")
        check(comm.recv(source=0, tag=8) == {"step": 1}, "recv got the object")
    request = comm.Irecv([np.empty(4, dtype=np.int32), MPI.INT], source=peer, tag=9)
    comm.Isend([np.full(4, rank, dtype=np.int32), MPI.INT], dest=peer, tag=9).Wait()
    request.Wait()
    total = comm.allreduce(rank + 1)
    check(total == 3, f"allreduce gave {total}")
    comm.Barrier()
    sub = comm.Split(color=0, key=rank)                   # a derived communicator
    check(isinstance(sub, ProfiledMPIComm), "Split returns a profiled communicator")
    sub.Barrier()
    sub_id = sub.communicator.py2f()
    # the regions carry scope-profiler's mpi.* tags (checked on the live
    # regions: the collective finalize's merge does not carry the tags
    # column into the merged file yet)
    live = ProfileManager.get_region(format_mpi_region(
        "allreduce", bytes=-1, communicator=cid)).tags
    check({"mpi", "mpi.kind:collective", "mpi.operation:allreduce",
           f"mpi.communicator:{cid}"} <= set(live), live)
    ProfileManager.finalize(verbose=False)                # collective: one file
    ProfileManager.reset()
    check(not isinstance(MPI.COMM_WORLD, ProfiledMPIComm), "reset restores COMM_WORLD")
    sub.communicator.Free()

    if rank == 0:
        results = spanscope.read_h5(path)
        calls = {}                                        # (name, rank) -> calls
        for name in results.region_names:
            if name.startswith("mpi:"):
                for r in results[name].ranks:
                    calls[name, r] = results[name][r].num_calls
        ints = dict(bytes=16, peer=-1, tag=9, communicator=cid)
        want = {(format_mpi_region("send", bytes=800, peer=1, tag=7, communicator=cid), 0): 1,
                (format_mpi_region("send", bytes=-1, peer=1, tag=8, communicator=cid), 0): 1,
                (format_mpi_region("recv", bytes=800, peer=0, tag=7, communicator=cid), 1): 1,
                (format_mpi_region("recv", bytes=-1, peer=0, tag=8, communicator=cid), 1): 1}
        for r in (0, 1):
            p = 1 - r
            ints["peer"] = p
            want[format_mpi_region("irecv", **ints), r] = 1
            want[format_mpi_region("isend", **ints), r] = 1
            want[format_mpi_region("wait", request="irecv", **ints), r] = 1
            want[format_mpi_region("wait", request="isend", **ints), r] = 1
            want[format_mpi_region("allreduce", bytes=-1, communicator=cid), r] = 1
            want[format_mpi_region("barrier", bytes=0, communicator=cid), r] = 1
            want[format_mpi_region("barrier", bytes=0, communicator=sub_id), r] = 1
        check(calls == want, f"regions per rank:\n{sorted(calls.items())}\n"
                             f"expected:\n{sorted(want.items())}")
        check(results[format_mpi_region("send", bytes=800, peer=1, tag=7,
                                        communicator=cid)][0].durations[0] > 0,
              "the Send has a duration")
        metas = [parse_mpi_region(n) for n, _ in want]
        check(all(m is not None for m in metas), "every name parses")
        try:
            from scope_profiler.mpi_wrappers import parse_mpi_region as theirs
        except ImportError:
            pass
        else:
            check([vars(theirs(n)) for n, _ in want] == [vars(m) for m in metas],
                  "scope-profiler's parse_mpi_region reads the names the same")
        print("mpi_wrappers: all checks passed on 2 ranks", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    main(sys.argv[1])
