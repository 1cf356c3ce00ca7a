"""scope-profiler's mpi4py wrappers on spanscope (spanscope.mpi_wrappers),
without an MPI runtime: fake communicators called the way scope-profiler's
own tests (tests/unit/test_mpi_wrappers.py of 0.7.5) call them, the region
names and tags compared with scope-profiler's, files of either tool decoded
by the other's parse_mpi_region, and setup(profile_mpi_calls=True).  The
same under mpirun with real mpi4py: tests/mpi/mpi_wrappers.py (CTest
mpi_wrappers)."""

import builtins
import pickle
import subprocess
import sys
from types import SimpleNamespace

import pytest

import spanscope
from spanscope import ProfileManager, ProfilingOptions
from spanscope.mpi_wrappers import (
    MPIRegionMetadata,
    ProfiledMPIComm,
    ProfiledMPIRequest,
    format_mpi_region,
    message_nbytes,
    parse_mpi_region,
    profile_mpi4py,
    profile_mpi_comm,
)


class FakeDatatype:
    def __init__(self, size=4):
        self.size = size

    def Get_size(self):
        if self.size is None:
            raise ValueError("unknown datatype")
        return self.size


class FakeRequest:
    marker = "underlying request"

    def __init__(self, operation):
        self.operation = operation

    def wait(self, status=None):
        return ("wait", self.operation, status)

    def Wait(self, status=None):
        return ("Wait", self.operation, status)


class FakeComm:
    """Records the calls it gets; returns the operation's name."""
    passthrough = "communicator attribute"

    def __init__(self, handle=7):
        self.handle = handle
        self.calls = []

    def py2f(self):
        return self.handle

    def _call(self, operation, *args, **kwargs):
        self.calls.append((operation, args, kwargs))
        return operation

    def __getattr__(self, name):
        if name in {"send", "recv", "Send", "Recv", "barrier", "Barrier", "bcast", "Bcast",
                    "allreduce", "Allreduce", "reduce", "Reduce"}:
            return lambda *a, **k: self._call(name, *a, **k)
        if name in {"isend", "irecv", "Isend", "Irecv"}:
            return lambda *a, **k: (self._call(name, *a, **k), FakeRequest(name))[1]
        raise AttributeError(name)

    def Split(self, *args, **kwargs):
        self._call("Split", *args, **kwargs)
        return FakeComm(handle=8)

    def Idup(self, *args, **kwargs):
        self._call("Idup", *args, **kwargs)
        return FakeComm(handle=9), FakeRequest("Idup")


def _mpi_names(results):
    return [n for n in results.region_names if n.startswith("mpi:")]


# -- the pure functions ----------------------------------------------------------------

def test_region_name_has_scope_profilers_field_order_and_parses_back():
    name = format_mpi_region("send", bytes=32, peer=2, tag=9, communicator=7)
    assert name == "mpi:send kind=point-to-point bytes=32 peer=2 root=-1 tag=9 comm=7"
    meta = parse_mpi_region(name)
    assert meta == MPIRegionMetadata(operation="send", kind="point-to-point", bytes=32,
                                     peer=2, root=-1, tag=9, communicator=7, request=None)
    wait = format_mpi_region("wait", bytes=32, peer=2, tag=9, communicator=7,
                             request="isend")
    assert wait.endswith(" request=isend")
    assert parse_mpi_region(wait).kind == "wait"
    assert parse_mpi_region(wait).request == "isend"
    assert parse_mpi_region(format_mpi_region("bcast", root=3)).kind == "collective"
    assert parse_mpi_region("ordinary-region") is None
    assert parse_mpi_region("mpi:send kind=broken") is None
    assert parse_mpi_region("mpi:send kind=x bytes=a peer=1 root=1 tag=1 comm=1") is None


def test_format_and_parse_agree_with_scope_profiler():
    sp_wrappers = pytest.importorskip("scope_profiler.mpi_wrappers")
    cases = [("send", dict(bytes=32, peer=2, tag=9, communicator=7)),
             ("allreduce", dict(bytes=8, communicator=3)),
             ("barrier", dict(bytes=0)),
             ("reduce", dict(bytes=16, root=1, communicator=91)),
             ("wait", dict(bytes=4, peer=1, tag=5, communicator=7, request="irecv"))]
    for operation, kw in cases:
        ours = format_mpi_region(operation, **kw)
        assert ours == sp_wrappers.format_mpi_region(operation, **kw)
        theirs = sp_wrappers.parse_mpi_region(ours)
        assert theirs is not None
        assert vars(theirs) == vars(parse_mpi_region(ours))


def test_message_nbytes_handles_buffers_specs_objects_and_unknowns():
    assert message_nbytes(bytearray(11)) == 11
    assert message_nbytes([bytearray(20), 3, FakeDatatype(4)]) == 12
    assert message_nbytes([bytearray(20), FakeDatatype(4)]) == 20
    assert message_nbytes([object(), FakeDatatype(4)]) == -1
    assert message_nbytes([object(), FakeDatatype(None)]) == -1
    assert message_nbytes([1, 2]) == len(pickle.dumps([1, 2], protocol=5))
    assert message_nbytes(None) == -1
    value = {"answer": 42}
    assert message_nbytes(value) == len(pickle.dumps(value, protocol=5))
    assert message_nbytes(value, pickle_objects=False) == -1
    assert message_nbytes(lambda: None) == -1


def test_the_names_are_on_the_package_and_import_no_mpi4py():
    for name in ("MPIRegionMetadata", "ProfiledMPIComm", "ProfiledMPIRequest",
                 "format_mpi_region", "message_nbytes", "parse_mpi_region",
                 "profile_mpi4py", "profile_mpi_comm"):
        assert getattr(spanscope, name) is getattr(spanscope.mpi_wrappers, name)
        assert name in spanscope.__all__
    code = ("import sys, spanscope, spanscope.mpi_wrappers; "
            "assert not [m for m in sys.modules if m.startswith('mpi4py')], 'mpi4py'")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the proxies in a session ----------------------------------------------------------

def test_proxy_profiles_object_buffer_collective_and_wait_calls():
    raw = FakeComm()
    communicator = profile_mpi_comm(raw)
    assert isinstance(communicator, ProfiledMPIComm)
    assert profile_mpi_comm(communicator) is communicator
    assert communicator.communicator is raw
    assert communicator.passthrough == "communicator attribute"

    buffer = [bytearray(16), 4, FakeDatatype(4)]
    with ProfileManager.session(deactivate_file_output=True, return_results=True,
                                verbose=False) as run:
        assert communicator.send(b"abc", 2, 3) == "send"
        assert communicator.recv(bytearray(8), 1, 4, "status") == "recv"
        request = communicator.isend(b"abcd", 3, 5)
        assert isinstance(request, ProfiledMPIRequest)
        assert request.marker == "underlying request"
        assert request.wait("lower-status") == ("wait", "isend", "lower-status")
        request = communicator.irecv(bytearray(5), 4, 6)
        assert request.Wait("upper-status") == ("Wait", "irecv", "upper-status")
        assert communicator.Send(buffer, 2, 7) == "Send"
        assert communicator.Recv(buffer, 1, 8, "status") == "Recv"
        assert communicator.Isend(buffer, 3, 9).Wait() == ("Wait", "Isend", None)
        assert communicator.Irecv(buffer, 4, 10).wait() == ("wait", "Irecv", None)
        assert communicator.barrier() == "barrier"
        assert communicator.Barrier() == "Barrier"
        assert communicator.bcast(b"abc", root=1) == "bcast"
        assert communicator.Bcast(buffer, root=2) == "Bcast"
        for _ in range(3):
            assert communicator.allreduce(3) == "allreduce"
        assert communicator.allreduce(3, op="sum") == "allreduce"
        assert communicator.Allreduce(buffer, bytearray(16)) == "Allreduce"
        assert communicator.Allreduce(buffer, bytearray(16), op="sum") == "Allreduce"
        assert communicator.reduce(3, root=1) == "reduce"
        assert communicator.reduce(3, op="sum", root=2) == "reduce"
        assert communicator.Reduce(buffer, bytearray(16), root=1) == "Reduce"
        assert communicator.Reduce(buffer, bytearray(16), op="sum", root=2) == "Reduce"

    # the arguments reach the communicator as mpi4py expects them
    assert raw.calls[0] == ("send", (b"abc",), {"dest": 2, "tag": 3})
    assert ("allreduce", (3,), {"op": "sum"}) in raw.calls
    results = run.results
    assert {parse_mpi_region(n).operation for n in _mpi_names(results)} == {
        "send", "recv", "isend", "irecv", "wait", "barrier", "bcast", "allreduce", "reduce"}
    send = results[format_mpi_region("send", bytes=3, peer=2, tag=3, communicator=7)]
    assert "mpi.operation:send" in send.tags
    assert "mpi.peer:2" in send.tags
    assert "mpi.communicator:7" in send.tags
    # object-mode sizes are not pickled by default: bytes=-1; buffers are exact
    assert format_mpi_region("allreduce", bytes=-1, communicator=7) in results.region_names
    assert format_mpi_region("send", bytes=16, peer=2, tag=7, communicator=7) \
        in results.region_names
    # one region per distinct call signature, every call of it counted
    allreduce = results[format_mpi_region("allreduce", bytes=-1, communicator=7)]
    assert allreduce[0].num_calls == 4
    wait = results[format_mpi_region("wait", bytes=4, peer=3, tag=5, communicator=7,
                                     request="isend")]
    assert "mpi.request:isend" in wait.tags and "mpi.kind:wait" in wait.tags
    assert wait[0].num_calls == 1


def test_fallback_communicator_id_and_a_call_that_raises_is_still_recorded():
    class NoHandleComm(FakeComm):
        def py2f(self):
            raise TypeError("no Fortran handle")

        def send(self, *args, **kwargs):
            raise RuntimeError("MPI failure")

    raw = NoHandleComm()
    communicator = ProfiledMPIComm(raw)
    with ProfileManager.session(deactivate_file_output=True, return_results=True,
                                verbose=False) as run:
        with pytest.raises(RuntimeError, match="MPI failure"):
            communicator.send(b"x", 1)
    names = _mpi_names(run.results)
    assert len(names) == 1
    assert f"comm={id(raw)}" in names[0]
    assert run.results[names[0]][0].num_calls == 1


def test_object_size_estimation_is_explicitly_opt_in():
    value = {"answer": 42}
    communicator = profile_mpi_comm(FakeComm(handle=11), pickle_object_sizes=True)
    with ProfileManager.session(deactivate_file_output=True, return_results=True,
                                verbose=False) as run:
        communicator.send(value, 2)
    names = _mpi_names(run.results)
    assert names == [format_mpi_region("send", bytes=len(pickle.dumps(value, protocol=5)),
                                       peer=2, tag=0, communicator=11)]


def test_calls_outside_a_session_pass_through_and_record_nothing():
    raw = FakeComm()
    communicator = profile_mpi_comm(raw)
    assert communicator.barrier() == "barrier"
    assert raw.calls == [("barrier", (), {})]
    with ProfileManager.session(deactivate_file_output=True, return_results=True,
                                verbose=False) as run:
        pass
    assert _mpi_names(run.results) == []


def test_regions_can_be_filtered_by_their_mpi_tags():
    communicator = profile_mpi_comm(FakeComm())
    with ProfileManager.session(deactivate_file_output=True, return_results=True,
                                verbose=False, region_tags=["mpi.kind:collective"]) as run:
        communicator.send(b"abc", 1)
        communicator.barrier()
    recorded = [n for n in _mpi_names(run.results) if run.results[n].ranks]
    assert [parse_mpi_region(n).operation for n in recorded] == ["barrier"]


def test_proxy_propagates_through_communicator_constructors():
    communicator = profile_mpi_comm(FakeComm(), pickle_object_sizes=True)
    split = communicator.Split(1, 2)
    assert isinstance(split, ProfiledMPIComm)
    assert split.communicator.handle == 8
    assert split._pickle_object_sizes is True
    duplicate, request = communicator.Idup()
    assert isinstance(duplicate, ProfiledMPIComm)
    assert duplicate.communicator.handle == 9
    assert request.operation == "Idup"


# -- profile_mpi4py ------------------------------------------------------------------

def test_profile_mpi4py_temporarily_wraps_predefined_communicators():
    class FakeMPI:
        COMM_WORLD = FakeComm(handle=21)
        COMM_SELF = FakeComm(handle=22)

    world, self_comm = FakeMPI.COMM_WORLD, FakeMPI.COMM_SELF
    with profile_mpi4py(FakeMPI):
        assert isinstance(FakeMPI.COMM_WORLD, ProfiledMPIComm)
        assert FakeMPI.COMM_WORLD.communicator is world
        assert FakeMPI.COMM_SELF.communicator is self_comm
    assert FakeMPI.COMM_WORLD is world
    assert FakeMPI.COMM_SELF is self_comm


def test_profile_mpi4py_restores_communicators_after_an_error():
    class FakeMPI:
        COMM_WORLD = FakeComm()

    world = FakeMPI.COMM_WORLD
    with pytest.raises(RuntimeError, match="target failed"):
        with profile_mpi4py(FakeMPI):
            raise RuntimeError("target failed")
    assert FakeMPI.COMM_WORLD is world


def test_profile_mpi4py_explains_when_mpi4py_is_not_installed(monkeypatch):
    real_import = builtins.__import__

    def import_without_mpi4py(name, *args, **kwargs):
        if name == "mpi4py":
            raise ImportError("mpi4py unavailable")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", import_without_mpi4py)
    with pytest.raises(RuntimeError, match=r"requires mpi4py.*pip install mpi4py"):
        with profile_mpi4py():
            pass


def test_profile_mpi4py_lazy_mode_waits_for_the_target_import(monkeypatch):
    class FakeMPI:
        COMM_WORLD = FakeComm(handle=31)
        COMM_SELF = FakeComm(handle=32)

    imports = []

    def target_import(name, *args, **kwargs):
        imports.append(name)
        if name == "mpi4py":
            monkeypatch.setitem(sys.modules, "mpi4py.MPI", FakeMPI)
            return SimpleNamespace(MPI=FakeMPI)
        raise ImportError(name)

    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    monkeypatch.setattr(builtins, "__import__", target_import)
    world = FakeMPI.COMM_WORLD
    with profile_mpi4py(lazy=True):
        assert imports == []
        assert not isinstance(FakeMPI.COMM_WORLD, ProfiledMPIComm)
        package = builtins.__import__("mpi4py", fromlist=("MPI",))
        assert package.MPI is FakeMPI
        assert isinstance(FakeMPI.COMM_WORLD, ProfiledMPIComm)
        builtins.__import__("mpi4py", fromlist=("MPI",))
        assert FakeMPI.COMM_WORLD.communicator is world  # wrapped once, not twice
    assert FakeMPI.COMM_WORLD is world
    assert builtins.__import__ is target_import


def test_profile_mpi4py_lazy_mode_wraps_an_already_loaded_module(monkeypatch):
    class FakeMPI:
        COMM_WORLD = FakeComm(handle=41)

    monkeypatch.setitem(sys.modules, "mpi4py.MPI", FakeMPI)
    world = FakeMPI.COMM_WORLD
    with profile_mpi4py(lazy=True):
        assert isinstance(FakeMPI.COMM_WORLD, ProfiledMPIComm)
    assert FakeMPI.COMM_WORLD is world


# -- profile_mpi_calls ---------------------------------------------------------------

@pytest.fixture
def fake_mpi(monkeypatch):
    """A fake mpi4py.MPI already imported (as under mpirun, where setup()
    imports mpi4py itself)."""
    class FakeMPI:
        COMM_WORLD = FakeComm(handle=51)
        COMM_SELF = FakeComm(handle=52)

    monkeypatch.setitem(sys.modules, "mpi4py.MPI", FakeMPI)
    return FakeMPI


def test_profile_mpi_calls_wraps_comm_world_for_the_session(fake_mpi):
    world = fake_mpi.COMM_WORLD
    with ProfileManager.session(options=ProfilingOptions(profile_mpi_calls=True),
                                deactivate_file_output=True, return_results=True,
                                verbose=False) as run:
        assert isinstance(fake_mpi.COMM_WORLD, ProfiledMPIComm)
        fake_mpi.COMM_WORLD.barrier()
        fake_mpi.COMM_WORLD.Bcast([bytearray(8), FakeDatatype(1)], root=0)
    assert fake_mpi.COMM_WORLD is world  # the session's end restores it
    assert sorted(_mpi_names(run.results)) == sorted([
        format_mpi_region("barrier", bytes=0, communicator=51),
        format_mpi_region("bcast", bytes=8, root=0, communicator=51)])


def test_profile_mpi_calls_enters_and_leaves_profile_mpi4py_once(monkeypatch):
    """scope-profiler's test_profiling_options case: the option enters
    profile_mpi4py(lazy=True) at setup and leaves it at the session's end."""
    import spanscope.mpi_wrappers as wrappers
    events = []

    class FakeContext:
        def __enter__(self):
            events.append("install")

        def __exit__(self, *args):
            events.append("restore")

    monkeypatch.setattr(wrappers, "profile_mpi4py", lambda *, lazy: FakeContext())
    options = ProfilingOptions(profile_mpi_calls=True, deactivate_file_output=True)
    with ProfileManager.session(options=options, verbose=False):
        assert events == ["install"]
    assert events == ["install", "restore"]


def test_profile_mpi_calls_lasts_until_the_next_setup_or_reset(fake_mpi, tmp_path):
    world = fake_mpi.COMM_WORLD
    ProfileManager.setup(output=None, profile_mpi_calls=True)
    assert isinstance(fake_mpi.COMM_WORLD, ProfiledMPIComm)
    ProfileManager.finalize(verbose=False)       # a checkpoint: still wrapped
    assert isinstance(fake_mpi.COMM_WORLD, ProfiledMPIComm)
    ProfileManager.setup(output=None)            # a run without the option
    assert fake_mpi.COMM_WORLD is world
    ProfileManager.finalize(verbose=False)
    config = tmp_path / "profile.toml"
    config.write_text("[profiling]\nprofile_mpi_calls = true\n"
                      "deactivate_file_output = true\n", encoding="utf-8")
    ProfileManager.setup(config_path=config)
    assert isinstance(fake_mpi.COMM_WORLD, ProfiledMPIComm)
    ProfileManager.reset()
    assert fake_mpi.COMM_WORLD is world


def test_profile_mpi_calls_is_off_by_default_and_when_deactivated(fake_mpi):
    world = fake_mpi.COMM_WORLD
    ProfileManager.setup(output=None)
    assert fake_mpi.COMM_WORLD is world
    ProfileManager.finalize(verbose=False)
    ProfileManager.setup(output=None, profile_mpi_calls=True, deactivate_profiling=True)
    assert fake_mpi.COMM_WORLD is world
    with pytest.raises(TypeError):
        ProfileManager.setup(output=None, profile_mpi_calls="yes", replace=True)


# -- files across the two tools --------------------------------------------------------

def test_scope_profiler_decodes_the_mpi_regions_of_a_spanscope_file(tmp_path):
    sp_wrappers = pytest.importorskip("scope_profiler.mpi_wrappers")
    import scope_profiler
    path = tmp_path / "ours.h5"
    communicator = profile_mpi_comm(FakeComm(handle=3))
    with ProfileManager.session(file_path=str(path), verbose=False):
        communicator.Send([bytearray(64), 16, FakeDatatype(4)], 1, tag=2)
        communicator.isend(b"x", 1).wait()  # bytes: a buffer, 1 byte
    theirs = scope_profiler.read_h5(str(path))
    decoded = {n: sp_wrappers.parse_mpi_region(n) for n in theirs.region_names
               if n.startswith("mpi:")}
    assert {(m.operation, m.bytes, m.peer, m.tag, m.communicator, m.request)
            for m in decoded.values()} == {("send", 64, 1, 2, 3, None),
                                           ("isend", 1, 1, 0, 3, None),
                                           ("wait", 1, 1, 0, 3, "isend")}


def test_spanscope_decodes_the_mpi_regions_of_a_scope_profiler_file(tmp_path):
    """The real scope-profiler 0.7.5 in a subprocess (its ProfileManager
    is process-global), its wrappers over a fake communicator; spanscope
    reads the file and parses the names, and sees scope-profiler's tags."""
    pytest.importorskip("scope_profiler")
    path = tmp_path / "theirs.h5"
    code = f"""
import sys
sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
from test_mpi_wrappers import FakeComm, FakeDatatype
from scope_profiler import ProfileManager
from scope_profiler.mpi_wrappers import profile_mpi_comm
comm = profile_mpi_comm(FakeComm(handle=5))
with ProfileManager.session(file_path={str(path)!r}, verbose=False):
    comm.Allreduce([bytearray(32), 8, FakeDatatype(4)], bytearray(32))
    comm.Irecv([bytearray(12), FakeDatatype(4)], 0, tag=4).Wait()
"""
    subprocess.run([sys.executable, "-c", code], check=True)
    results = spanscope.read_h5(str(path))
    decoded = {parse_mpi_region(n): n for n in results.region_names if n.startswith("mpi:")}
    assert {(m.operation, m.kind, m.bytes, m.peer, m.tag, m.communicator, m.request)
            for m in decoded} == {("allreduce", "collective", 32, -1, -1, 5, None),
                                  ("irecv", "point-to-point", 12, 0, 4, 5, None),
                                  ("wait", "wait", 12, 0, 4, 5, "irecv")}
    for meta, name in decoded.items():
        assert results[name][0].num_calls == 1
        assert f"mpi.operation:{meta.operation}" in results[name].tags
