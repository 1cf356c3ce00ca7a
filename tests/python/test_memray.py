"""scope-profiler 0.7.5's memray face on spanscope, with the real memray
(PyPI; scripts/install-deps.sh installs it): ``use_memray=True`` and its
options start one capture per process (per rank: ``.rank<N>`` in the name)
at setup and finish it at finalize, a new setup, reset, a session's end and
exit; the capture is memray's own file, read back here through
``memray.FileReader`` and spanscope's ``memray_summary`` -- which turns a
garbage, truncated or damaged file into a clear error naming it.  The
missing-dependency error is tried by hiding the module (docs/memray.md)."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

memray = pytest.importorskip(
    "memray", reason="memray is not installed (scripts/install-deps.sh installs it; "
                     "it has no Windows build)")

from spanscope import MemrayOptions, ProfileManager, ProfilingOptions  # noqa: E402
from spanscope import _cli  # noqa: E402
from spanscope._base import mpi as _mpi  # noqa: E402
from spanscope.results import read_h5  # noqa: E402
from spanscope.results._memray import (MemrayAllocationTracker,  # noqa: E402
                                       MemrayCaptureError, MemraySummary,
                                       memray_capture_path, memray_summary)

MiB = 1 << 20
#: the first bytes of a capture memray finished (it compresses the file with
#: lz4 when the capture ends) and of one it is still writing
LZ4_MAGIC = b"\x04\x22\x4d\x18"
RAW_MAGIC = b"memray\x00"


def allocate_known(n=4, size=MiB):
    """n blocks of size bytes, made here (a loop, not a comprehension: the
    allocating frame is this function's): the site a summary must name."""
    blocks = []
    for _ in range(n):
        blocks.append(bytearray(size))
    return blocks


def _reader_totals(path):
    """(bytes, allocations) of allocate_known's records, read with memray's reader."""
    reader = memray.FileReader(str(path))
    total = count = 0
    for record in reader.get_allocation_records():
        if record.allocator in (memray.AllocatorType.FREE, memray.AllocatorType.MUNMAP,
                                memray.AllocatorType.PYMALLOC_FREE):
            continue
        stack = record.stack_trace()
        if any(frame[0] == "allocate_known" for frame in stack):
            total += record.size
            count += record.n_allocations
    reader.close()
    return total, count


# -- the capture of a run ---------------------------------------------------------------

def test_capture_is_started_at_setup_and_finished_at_finalize(tmp_path):
    run = ProfileManager.setup(file_path=str(tmp_path / "timing.h5"))
    assert ProfileManager.get_config().memory_profile_path is None  # off: no capture
    ProfileManager.finalize(verbose=False)
    assert not (tmp_path / "timing.memray.bin").exists()

    run = ProfileManager.setup(file_path=str(tmp_path / "timing.h5"), use_memray=True,
                               replace=True)
    config = ProfileManager.get_config()
    assert config.use_memray is True
    assert config.memory_profile_path == tmp_path / "timing.memray.bin"
    capture = ProfileManager._memray_capture
    assert capture.active and capture.path == tmp_path / "timing.memray.bin"
    with ProfileManager.profile_region("work"):
        blocks = allocate_known()
    del blocks
    results = ProfileManager.finalize(verbose=False, return_results=True)
    assert not capture.active
    assert results["work"].num_calls == 1
    assert run.file_path == str(tmp_path / "timing.h5")
    data = (tmp_path / "timing.memray.bin").read_bytes()
    assert data.startswith(LZ4_MAGIC)  # memray finished it
    total, count = _reader_totals(tmp_path / "timing.memray.bin")
    assert count == 4 and total >= 4 * MiB
    meta = memray.FileReader(str(tmp_path / "timing.memray.bin")).metadata
    assert meta.pid == os.getpid()
    assert meta.has_native_traces is False and meta.trace_python_allocators is False
    # a second finalize, reset: nothing more to finish, nothing raised
    ProfileManager.finalize(verbose=False)
    ProfileManager.reset()
    assert (tmp_path / "timing.memray.bin").read_bytes() == data


def test_the_capture_ends_before_finalize_writes(tmp_path):
    """What finalize itself allocates (reading the file back) is not in
    the capture: it ended first, as in scope-profiler."""
    ProfileManager.setup(file_path=str(tmp_path / "t.h5"), use_memray=True)
    with ProfileManager.profile_region("work"):
        allocate_known(1)
    ProfileManager.finalize(verbose=False, return_results=True)
    reader = memray.FileReader(str(tmp_path / "t.memray.bin"))
    functions = set()
    for record in reader.get_allocation_records():
        if record.allocator not in (memray.AllocatorType.FREE, memray.AllocatorType.MUNMAP,
                                    memray.AllocatorType.PYMALLOC_FREE):
            functions.update(frame[0] for frame in record.stack_trace())
    assert "allocate_known" in functions
    assert "finalize" not in functions and "read_h5" not in functions, functions


def test_options_reach_memray(tmp_path):
    """memory_profile_path and the memray_* flags, flat, as a MemrayOptions
    group and as the TOML [profiling.memray] table, are what memray records."""
    ProfileManager.setup(file_path=str(tmp_path / "a.h5"), use_memray=True,
                         memory_profile_path=str(tmp_path / "flat.bin"),
                         memray_native_traces=True, memray_trace_python_allocators=True)
    allocate_known(1)
    ProfileManager.finalize(verbose=False)
    meta = memray.FileReader(str(tmp_path / "flat.bin")).metadata
    assert meta.has_native_traces is True and meta.trace_python_allocators is True

    options = ProfilingOptions(file_path=str(tmp_path / "b.h5"),
                               memray=MemrayOptions(enabled=True, path=str(tmp_path / "g.bin"),
                                                    trace_python_allocators=True))
    ProfileManager.setup(options=options, replace=True)
    assert ProfileManager.get_config().memory_profile_path == tmp_path / "g.bin"
    ProfileManager.finalize(verbose=False)
    meta = memray.FileReader(str(tmp_path / "g.bin")).metadata
    assert meta.trace_python_allocators is True and meta.has_native_traces is False

    toml = tmp_path / "profiling.toml"
    toml.write_text(textwrap.dedent(f"""
        [profiling]
        file_path = "{tmp_path / 'c.h5'}"
        [profiling.memray]
        enabled = true
        path = "{tmp_path / 'toml.bin'}"
        native_traces = true
        """))
    ProfileManager.setup(config_path=str(toml), replace=True)
    ProfileManager.finalize(verbose=False)
    assert memray.FileReader(str(tmp_path / "toml.bin")).metadata.has_native_traces is True


def test_recursive_tracing_beside_memray(tmp_path):
    """spanscope's recursive tracer on the profile hook (set_trace_hook:
    the default is the frame evaluation hook) takes memray's place there: setup says so; the regions and memray's
    totals stay right."""
    from spanscope import _ext
    kwargs = dict(file_path=str(tmp_path / "r.h5"), use_memray=True, recursive_profile=True)
    if _ext.trace_hook() == "setprofile":
        with pytest.warns(RuntimeWarning, match="share the interpreter's profile hook"):
            ProfileManager.setup(**kwargs)
    else:
        ProfileManager.setup(**kwargs)

    @ProfileManager.profile
    def traced():
        return allocate_known(2)

    traced()
    results = ProfileManager.finalize(verbose=False, return_results=True)
    names = [name for name in results.region_names if name.endswith("traced")]
    assert len(names) == 1 and results[names[0]].num_calls == 1, results.region_names
    s = memray_summary(tmp_path / "r.memray.bin")
    assert s.total_bytes >= 2 * MiB and s.peak_bytes >= 2 * MiB


def test_options_are_validated(tmp_path):
    with pytest.raises(TypeError, match="memray_native_traces must be a bool"):
        ProfileManager.setup(file_path=str(tmp_path / "a.h5"), use_memray=True,
                             memray_native_traces="yes")
    with pytest.raises(TypeError, match="use_memray must be a bool"):
        ProfileManager.setup(file_path=str(tmp_path / "a.h5"), use_memray=1)
    with pytest.raises(TypeError, match="memory_profile_path must be a str"):
        ProfileManager.setup(file_path=str(tmp_path / "a.h5"), use_memray=True,
                             memory_profile_path=3)
    with pytest.raises(ValueError, match=r"unknown \[memray\] profiling setting"):
        toml = tmp_path / "bad.toml"
        toml.write_text("[profiling.memray]\nenabeld = true\n")
        ProfileManager.setup(config_path=str(toml))
    assert not ProfileManager.is_configured()
    assert not list(tmp_path.glob("*.bin"))


def test_memory_profile_path_alone_or_deactivated_starts_nothing(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "a.h5"),
                         memory_profile_path=str(tmp_path / "cap.bin"))
    assert ProfileManager.get_config().memory_profile_path is None
    ProfileManager.finalize(verbose=False)
    ProfileManager.setup(file_path=str(tmp_path / "a.h5"), use_memray=True,
                         deactivate_profiling=True, replace=True)
    assert ProfileManager.get_config().memory_profile_path is None
    ProfileManager.finalize(verbose=False)
    assert not list(tmp_path.glob("*.bin"))


def test_a_new_setup_reset_and_a_session_end_finish_the_capture(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "one.h5"), use_memray=True)
    first = ProfileManager._memray_capture
    # memray traces with one capture at a time: the new run's starts once the
    # previous one is finished
    ProfileManager.setup(file_path=str(tmp_path / "two.h5"), use_memray=True, replace=True)
    assert not first.active and ProfileManager._memray_capture.active
    assert (tmp_path / "one.memray.bin").read_bytes().startswith(LZ4_MAGIC)
    second = ProfileManager._memray_capture
    ProfileManager.reset()
    assert not second.active
    assert (tmp_path / "two.memray.bin").read_bytes().startswith(LZ4_MAGIC)

    with ProfileManager.session(file_path=str(tmp_path / "three.h5"), use_memray=True,
                                verbose=False):
        allocate_known(2)
        assert ProfileManager._memray_capture.active
    assert ProfileManager._memray_capture is None
    assert _reader_totals(tmp_path / "three.memray.bin")[1] == 2


def test_an_existing_capture_is_never_overwritten(tmp_path):
    """memray refuses to overwrite a file; the error names it and comes
    before the running run is touched."""
    (tmp_path / "run.memray.bin").write_bytes(b"precious")
    ProfileManager.setup(file_path=str(tmp_path / "keep.h5"))
    with ProfileManager.profile_region("before"):
        pass
    with pytest.raises(FileExistsError, match=r"run\.memray\.bin.*already exists"):
        ProfileManager.setup(file_path=str(tmp_path / "run.h5"), use_memray=True,
                             replace=True)
    assert (tmp_path / "run.memray.bin").read_bytes() == b"precious"
    results = ProfileManager.finalize(verbose=False, return_results=True)
    assert results["before"].num_calls == 1  # the running run went on


def test_one_capture_per_process(tmp_path):
    """Under another memray capture (memray run, a Tracker of the program's
    own) setup says why it cannot start one, and leaves no file behind."""
    with memray.Tracker(str(tmp_path / "outer.bin")):
        with pytest.raises(RuntimeError, match="one capture at a time"):
            ProfileManager.setup(file_path=str(tmp_path / "run.h5"), use_memray=True)
    assert not (tmp_path / "run.memray.bin").exists()


def test_metadata_and_the_finalize_line_name_the_capture(tmp_path, capsys):
    ProfileManager.setup(file_path=str(tmp_path / "full.h5"), use_memray=True,
                         metadata_detail="full")
    with ProfileManager.profile_region("work"):
        pass
    ProfileManager.finalize(verbose=True)
    out = capsys.readouterr().out
    assert f"wrote Memray allocation profile to {tmp_path / 'full.memray.bin'}" in out
    assert "one capture per rank" not in out
    assert read_h5(tmp_path / "full.h5").metadata["memory_profile_path"] == str(
        tmp_path / "full.memray.bin")
    # "minimal" (the default) keeps it out of the file, as scope-profiler
    ProfileManager.setup(file_path=str(tmp_path / "min.h5"), use_memray=True, replace=True)
    ProfileManager.finalize(verbose=False)
    assert "memory_profile_path" not in read_h5(tmp_path / "min.h5").metadata


def test_follow_fork_gives_the_child_its_own_capture(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "f.h5"), use_memray=True,
                         memray_follow_fork=True)
    pid = os.fork()
    if pid == 0:  # the child: its allocations, then its capture finished
        code = 1
        try:
            allocate_known(3)
            ProfileManager.finalize(verbose=False)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    ProfileManager.finalize(verbose=False)
    child = tmp_path / f"f.memray.bin.{pid}"
    assert child.exists(), sorted(p.name for p in tmp_path.iterdir())
    assert memray.FileReader(str(child)).metadata.pid == pid
    total, count = _reader_totals(child)
    assert count == 3 and total >= 3 * MiB
    assert _reader_totals(tmp_path / "f.memray.bin")[1] == 0  # not in the parent's


# -- one capture per rank ---------------------------------------------------------------

def test_capture_path_naming():
    assert str(memray_capture_path("out/run.h5")) == "out/run.memray.bin"
    assert str(memray_capture_path("run.h5", None, 3, 4)) == "run.memray.rank3.bin"
    assert str(memray_capture_path("run.h5", "", 0, 1)) == "run.memray.bin"  # "": the default
    assert str(memray_capture_path(None)) == "profiling_data.memray.bin"
    assert str(memray_capture_path("run.h5", "mem/cap.bin", 1, 2)) == "mem/cap.rank1.bin"
    assert str(memray_capture_path("run.h5", "cap", 1, 2)) == "cap.rank1"
    assert str(memray_capture_path("run.json", None)) == "run.memray.bin"
    with pytest.raises(ValueError, match="rank 2 is not one of the 2"):
        memray_capture_path("run.h5", None, 2, 2)
    with pytest.raises(TypeError, match="memory_profile_path must be"):
        memray_capture_path("run.h5", 5)
    with pytest.raises(TypeError, match="rank must be an int"):
        memray_capture_path("run.h5", None, "0", 2)


def test_each_rank_names_its_capture(tmp_path, monkeypatch, capsys):
    """A fake rank 1 of 3 (scope-profiler's tests fake the communicator):
    the capture gets .rank1 before its suffix, default name or not."""
    monkeypatch.setattr(_mpi, "world", lambda: (1, 3))
    ProfileManager.setup(file_path=str(tmp_path / "timing.h5"), use_memray=True)
    assert ProfileManager.get_config().memory_profile_path == tmp_path / "timing.memray.rank1.bin"
    ProfileManager.finalize(verbose=False)
    assert (tmp_path / "timing.memray.rank1.bin").exists()
    ProfileManager.setup(file_path=str(tmp_path / "timing.h5"), use_memray=True, replace=True,
                         memory_profile_path=str(tmp_path / "alloc.bin"))
    assert ProfileManager._memray_capture.path == tmp_path / "alloc.rank1.bin"
    ProfileManager.finalize(verbose=False)
    assert memray.FileReader(str(tmp_path / "alloc.rank1.bin")).metadata.pid == os.getpid()


MPI_SCRIPT = """
import os, sys
from spanscope import ProfileManager
def allocate_known():
    blocks = []
    for _ in range(2):
        blocks.append(bytearray(1 << 20))
    return blocks
out = sys.argv[1]
ProfileManager.setup(file_path=os.path.join(out, "run.h5"), use_memray=True)
with ProfileManager.profile_region("work"):
    allocate_known()
ProfileManager.finalize(verbose=True)
"""


def test_under_mpirun_every_rank_writes_its_own_capture(tmp_path):
    mpirun = shutil.which("mpirun")
    if mpirun is None or subprocess.run([sys.executable, "-c", "import mpi4py"],
                                        capture_output=True).returncode != 0:
        pytest.skip("needs mpirun and mpi4py (scripts/install-deps.sh installs both)")
    script = tmp_path / "ranks.py"
    script.write_text(MPI_SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    proc = subprocess.run([mpirun, "-n", "2", "--oversubscribe", sys.executable, str(script),
                           str(tmp_path)], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pids = set()
    for rank in (0, 1):
        capture = tmp_path / f"run.memray.rank{rank}.bin"
        assert capture.exists(), sorted(p.name for p in tmp_path.iterdir())
        pids.add(memray.FileReader(str(capture)).metadata.pid)
        assert _reader_totals(capture)[1] == 2
    assert len(pids) == 2
    assert not (tmp_path / "run.memray.bin").exists()
    # rank 0 alone says where the captures are
    assert proc.stdout.count("wrote Memray allocation profile to") == 1
    assert "(one capture per rank)" in proc.stdout


# -- without memray ---------------------------------------------------------------------

def test_missing_memray_has_an_actionable_error(tmp_path, monkeypatch):
    ProfileManager.setup(file_path=str(tmp_path / "keep.h5"))
    with ProfileManager.profile_region("before"):
        pass
    monkeypatch.setitem(sys.modules, "memray", None)  # import memray: ImportError
    with pytest.raises(ImportError, match=r'pip install "spanscope\[memray\]"') as info:
        ProfileManager.setup(file_path=str(tmp_path / "timing.h5"), use_memray=True,
                             replace=True)
    assert "pip install memray" in str(info.value)
    assert "scope-profiler[extras]" in str(info.value)  # what scope-profiler's users know
    assert isinstance(info.value.__cause__, ImportError)
    with pytest.raises(ImportError, match="memray is not installed"):
        memray_summary(__file__)
    monkeypatch.undo()
    results = ProfileManager.finalize(verbose=False, return_results=True)
    assert results["before"].num_calls == 1
    assert not (tmp_path / "timing.memray.bin").exists()


# -- the command line -------------------------------------------------------------------

SCRIPT = """
def allocate_known():
    blocks = []
    for _ in range(4):
        blocks.append(bytearray(1 << 20))
    return blocks
blocks = allocate_known()
"""


def test_spanscope_run_memory_profile(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "spanscope", "run", "--memory-profile",
                           "-o", str(tmp_path / "prog.h5"), str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"wrote Memray allocation profile to {tmp_path / 'prog.memray.bin'}" in proc.stdout
    summary = memray_summary(tmp_path / "prog.memray.bin")
    assert summary.top_sites[0].function == "allocate_known"
    assert summary.top_sites[0].bytes >= 4 * MiB and summary.top_sites[0].allocations == 4
    # again: memray never overwrites the capture, and the command says so
    proc = subprocess.run([sys.executable, "-m", "spanscope", "run", "--memory-profile",
                           "-o", str(tmp_path / "prog.h5"), str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "prog.memray.bin' already exists" in proc.stderr


def test_spanscope_run_memory_profile_without_memray(tmp_path, monkeypatch, capsys):
    script = tmp_path / "prog.py"
    script.write_text("x = 1\n")
    monkeypatch.setitem(sys.modules, "memray", None)
    assert _cli.main(["run", "--memory-profile", "-o", str(tmp_path / "p.h5"),
                      str(script)]) == 2
    err = capsys.readouterr().err
    assert "memray is not installed" in err and 'pip install "spanscope[memray]"' in err
    assert "--memory-profile" in _cli._run_parser().format_help()
    assert "not available" not in _cli._run_parser().format_help().split(
        "--memory-profile")[1].split("--buffer-limit")[0]


# -- reading a capture back -------------------------------------------------------------

@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    """A finished capture of allocate_known (4 MiB in 4 blocks), held at once."""
    path = tmp_path_factory.mktemp("cap") / "known.bin"
    tracker = MemrayAllocationTracker(path)
    tracker.start()
    try:
        blocks = allocate_known()
        del blocks
    finally:
        tracker.stop()
        tracker.stop()  # twice: nothing
    return path


@pytest.fixture(scope="module")
def raw_capture(tmp_path_factory):
    """The same, left as memray writes it while capturing (not compressed):
    what a killed process leaves, which memray still reads."""
    path = tmp_path_factory.mktemp("raw") / "raw.bin"
    with memray.Tracker(destination=memray.FileDestination(str(path), compress_on_exit=False)):
        blocks = allocate_known()
        del blocks
    return path


def test_summary_says_where_the_memory_went(capture):
    s = memray_summary(capture)
    assert isinstance(s, MemraySummary)
    top = s.top_sites[0]
    assert top.function == "allocate_known" and top.file == __file__
    assert top.allocations == 4 and 4 * MiB <= top.bytes < 4 * MiB + 4096
    assert s.total_bytes >= top.bytes and s.total_allocations >= 4
    assert s.peak_bytes >= 4 * MiB
    assert s.peak_sites[0].function == "allocate_known" and s.peak_sites[0].bytes >= 4 * MiB
    assert s.pid == os.getpid() and s.problems == ()
    assert s.duration_s >= 0
    text = str(s)
    assert str(capture) in text and "allocate_known" in text and "peak" in text
    assert "4.0 MiB" in text
    assert len(memray_summary(capture, top=1).top_sites) == 1
    assert memray_summary(capture, top=0).top_sites == ()
    # memray's own statistics agree on the totals
    from memray._memray import compute_statistics
    stats = compute_statistics(str(capture))
    assert stats.total_memory_allocated == s.total_bytes
    assert stats.peak_memory_allocated == s.peak_bytes
    assert stats.total_num_allocations == s.total_allocations


def test_summary_of_a_capture_memray_left_unfinished(raw_capture):
    assert raw_capture.read_bytes().startswith(RAW_MAGIC)
    s = memray_summary(raw_capture)
    assert s.top_sites[0].function == "allocate_known" and s.top_sites[0].allocations == 4


def _hostile(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name, make", [
    ("garbage.bin", lambda cap, raw: os.urandom(4096)),
    ("empty.bin", lambda cap, raw: b""),
    ("text.bin", lambda cap, raw: b"not a capture at all\n" * 50),
    ("h5.bin", lambda cap, raw: b"\x89HDF\r\n\x1a\n" + bytes(500)),
    ("half.bin", lambda cap, raw: cap[: len(cap) // 2]),         # a finished one, cut
    ("cut.bin", lambda cap, raw: cap[:-7]),
    ("magic.bin", lambda cap, raw: RAW_MAGIC),                     # memray's magic only
    ("header.bin", lambda cap, raw: raw[:120]),                    # a header, cut
])
def test_hostile_and_truncated_files_give_a_clear_error(tmp_path, capture, raw_capture,
                                                       name, make):
    path = _hostile(tmp_path, name, make(capture.read_bytes(), raw_capture.read_bytes()))
    with pytest.raises(MemrayCaptureError, match="memray capture") as info:
        memray_summary(path)
    assert str(path) in str(info.value)
    assert info.value.filename == str(path)
    assert isinstance(info.value, OSError)
    # memray's exception is in the message, not chained below it
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_capture_cut_inside_a_record_is_named_truncated(tmp_path, raw_capture, capfd):
    """memray stops reading at a cut record without raising (it logs to
    stderr): the summary says the file is truncated, or with strict=False
    gives what memray read, its complaint in problems."""
    data = raw_capture.read_bytes()
    cut = None
    for n in range(len(data) - 1, 200, -7):  # a cut that lands inside a record
        path = _hostile(tmp_path, "cut.bin", data[:n])
        try:
            memray_summary(path)
        except MemrayCaptureError as error:
            cut = (path, error)
            break
    assert cut is not None, "no cut of the capture was reported"
    path, error = cut
    assert "truncated or damaged" in str(error) and str(path) in str(error)
    partial = memray_summary(path, strict=False)
    assert partial.problems and "memray:" in str(partial)
    assert partial.total_allocations <= memray_summary(raw_capture).total_allocations
    assert "Memray ERROR" not in capfd.readouterr().err  # taken in, not printed


def test_summary_argument_errors(tmp_path, capture):
    with pytest.raises(FileNotFoundError, match="no memray capture at"):
        memray_summary(tmp_path / "missing.bin")
    with pytest.raises(MemrayCaptureError, match="is a directory"):
        memray_summary(tmp_path)
    with pytest.raises(TypeError, match="path must be"):
        memray_summary(3)
    with pytest.raises(TypeError, match="top must be an int"):
        memray_summary(capture, top=1.5)
    with pytest.raises(ValueError, match="top must be >= 0"):
        memray_summary(capture, top=-1)


def test_tracker_errors(tmp_path):
    with pytest.raises(TypeError, match="native_traces must be a bool"):
        MemrayAllocationTracker(tmp_path / "x.bin", native_traces=1)
    with pytest.raises(TypeError, match="path must be"):
        MemrayAllocationTracker(None)
    with pytest.raises(MemrayCaptureError, match="cannot create the capture"):
        MemrayAllocationTracker(tmp_path / "no" / "such" / "dir" / "x.bin").start()
    tracker = MemrayAllocationTracker(tmp_path / "x.bin")
    tracker.stop()  # before start: nothing
    assert not tracker.active and "active=False" in repr(tracker)


def test_memray_log_keeps_errors_and_passes_the_rest_through(capfd):
    """What memray_summary takes in while memray reads: memray's errors
    (its only sign of a cut record); everything else goes back to stderr."""
    from spanscope.results._memray import _MemrayLog
    with _MemrayLog() as log:
        os.write(2, b"someone else's line\n")
        os.write(2, b"Memray ERROR: Failed to process allocation record\n")
        os.write(2, b"Memray WARNING: Correcting symbol\n")
    err = capfd.readouterr().err
    assert log.messages == ["Failed to process allocation record"]
    assert "someone else's line" in err and "Memray WARNING: Correcting symbol" in err
    assert "Memray ERROR" not in err
