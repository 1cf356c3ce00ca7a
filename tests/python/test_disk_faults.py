"""Failing disks never lose data or crash the user's program (issue 15,
part 2; docs/robustness.md, "Failing disks").

Each case runs a user's script in a child interpreter, so that its exit
status is checked too (libhdf5 1.10 used to crash at exit after a failed
write), on two kinds of failing disk:

- ``tmpfs``: a real 512 KiB tmpfs (root only; skipped otherwise);
- ``shim``: the fault-injecting LD_PRELOAD library the C tests' CMake
  builds (tests/c/fault_shim.c), which fails writes under a directory with
  a chosen errno once a byte budget is spent.

What each case asserts: OSError with the operating system's errno
(ENOSPC...), a message naming the cause and the file, nothing left in the
directory, a retry to another path that writes every call, exit status 0.
"""
from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import BUILD

SHIM = BUILD / "tests" / "c" / "libsps_fault_shim.so"
CLI = BUILD / "spanscope"
NCALLS = 300_000


def _mount(d: Path, opts: str) -> bool:
    if os.geteuid() != 0:
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)],
                       capture_output=True)
    return r.returncode == 0


@pytest.fixture(params=["tmpfs", "shim"])
def full_disk(request, tmp_path):
    """(directory, environment) of a disk that is full after a few KiB."""
    d = tmp_path / "disk"
    d.mkdir()
    env = dict(os.environ)
    if request.param == "tmpfs":
        if not _mount(d, "size=512k"):
            pytest.skip("a real full disk needs root and mount(8) (tmpfs); the shim case covers it")
        request.addfinalizer(lambda: subprocess.run(["umount", str(d)]))
    else:
        if not SHIM.exists():
            pytest.skip(f"the fault shim is not built ({SHIM}): build the C tests")
        env.update(LD_PRELOAD=str(SHIM), SPS_FAULT_DIR=str(d), SPS_FAULT_BYTES="65536")
    return d, env


def _run(script: str, env: dict, *args) -> subprocess.CompletedProcess:
    # these scripts check what a failed finalize leaves (nothing) and says
    # (one line): crash safety's live directory, kept while anything is
    # unwritten, and its own warnings are tested by test_crash_python.py
    env = dict(env, SPANSCOPE_CRASH_SAFE="0")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
                          env=env, capture_output=True, text=True, timeout=300)


def _ok(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"status {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stdout.strip().endswith("OK"), r.stdout + r.stderr


#: a scope-profiler user's program: regions, a finalize that fails, a retry
FINALIZE = """
    import errno, os, sys, h5py
    from spanscope import ProfileManager
    d, safe, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
    path = os.path.join(d, "out.h5")
    ProfileManager.setup(file_path=path)

    @ProfileManager.profile("disk.work")
    def work():
        pass

    for _ in range(%d):
        work()
    if os.environ.get("T_RMDIR"):
        os.rmdir(d)
    if os.environ.get("T_FSIZE"):
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        was = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(os.environ["T_FSIZE"]), was[1]))
    try:
        ProfileManager.finalize()
    except OSError as e:
        print("errno", e.errno, "|", e.strerror, "|", e.filename)
        assert e.errno == want, (e.errno, e.strerror)
        assert os.strerror(want).lower() in e.strerror.lower(), e.strerror
        assert e.filename == path
    else:
        raise SystemExit("finalize did not fail")
    if os.environ.get("T_FSIZE"):
        resource.setrlimit(resource.RLIMIT_FSIZE, was)
    assert not os.path.exists(d) or os.listdir(d) == [], os.listdir(d)
    ProfileManager.finalize(file_path=safe)  # the retry: nothing was lost
    with h5py.File(safe) as h:
        assert h["events/durations"].shape == (%d,), h["events/durations"].shape
    print("OK")
""" % (NCALLS, NCALLS)


def test_finalize_on_full_disk(full_disk, tmp_path):
    d, env = full_disk
    r = _run(FINALIZE, env, d, tmp_path / "safe.h5", errno.ENOSPC)
    _ok(r)
    assert "no space left on device" in r.stdout


def test_finalize_eio_mid_write(tmp_path):
    if not SHIM.exists():
        pytest.skip(f"the fault shim is not built ({SHIM})")
    d = tmp_path / "disk"
    d.mkdir()
    env = dict(os.environ, LD_PRELOAD=str(SHIM), SPS_FAULT_DIR=str(d), SPS_FAULT_BYTES="20000",
               SPS_FAULT_ERRNO=str(errno.EIO), SPS_FAULT_OPS="write")
    _ok(_run(FINALIZE, env, d, tmp_path / "safe.h5", errno.EIO))


def _shim(d: Path, **faults) -> dict:
    if not SHIM.exists():
        pytest.skip(f"the fault shim is not built ({SHIM}): build the C tests")
    return dict(os.environ, LD_PRELOAD=str(SHIM), SPS_FAULT_DIR=str(d), **faults)


def test_finalize_quota(tmp_path):
    d = tmp_path / "disk"
    d.mkdir()
    env = _shim(d, SPS_FAULT_BYTES="65536", SPS_FAULT_ERRNO=str(errno.EDQUOT))
    r = _run(FINALIZE, env, d, tmp_path / "safe.h5", errno.EDQUOT)
    _ok(r)
    assert "disk quota exceeded" in r.stdout


def test_finalize_no_permission(tmp_path):
    """EACCES (the shim refuses to create files there: the tests run as
    root, whom a directory's mode does not stop): PermissionError."""
    d = tmp_path / "disk"
    d.mkdir()
    env = _shim(d, SPS_FAULT_OPS="open", SPS_FAULT_ERRNO=str(errno.EACCES))
    r = _run(FINALIZE.replace("except OSError", "except PermissionError"), env, d,
             tmp_path / "safe.h5", errno.EACCES)
    _ok(r)
    assert "permission denied" in r.stdout


def test_finalize_file_size_limit(tmp_path):
    d = tmp_path / "disk"
    d.mkdir()
    env = dict(os.environ, T_FSIZE="100000")
    _ok(_run(FINALIZE, env, d, tmp_path / "safe.h5", errno.EFBIG))


def test_finalize_vanished_directory(tmp_path):
    d = tmp_path / "disk"
    d.mkdir()
    r = _run(FINALIZE.replace("except OSError", "except FileNotFoundError"),
             dict(os.environ, T_RMDIR="1"), d, tmp_path / "safe.h5", errno.ENOENT)
    _ok(r)


def test_finalize_read_only_directory(tmp_path):
    d = tmp_path / "disk"
    d.mkdir()
    if not _mount(d, "size=512k,ro"):
        pytest.skip("a read-only file system needs root and mount(8)")
    try:
        _ok(_run(FINALIZE, dict(os.environ), d, tmp_path / "safe.h5", errno.EROFS))
    finally:
        subprocess.run(["umount", str(d)])


CHECKPOINT = """
    import errno, os, sys, threading, h5py
    from spanscope import ProfileManager
    d, safe = sys.argv[1], sys.argv[2]
    ProfileManager.setup(file_path=os.path.join(d, "out.h5"))
    stop, done = threading.Event(), [0]

    def loop():
        with ProfileManager.region("disk.loop") as r:
            pass
        while not stop.is_set():
            for _ in range(1000):
                with ProfileManager.region("disk.loop"):
                    pass
            done[0] += 1000

    t = threading.Thread(target=loop)
    t.start()
    while done[0] < 100000:
        pass
    try:
        ProfileManager.finalize()  # a checkpoint while the thread records
        raise SystemExit("the checkpoint did not fail")
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    assert os.listdir(d) == [], os.listdir(d)
    stop.set()
    t.join()
    ProfileManager.finalize(file_path=safe)
    with h5py.File(safe) as h:
        n = h["events/durations"].shape[0]
    assert n == done[0] + 1, (n, done[0])
    print("OK")
"""


def test_checkpoint_on_full_disk(full_disk, tmp_path):
    d, env = full_disk
    _ok(_run(CHECKPOINT, env, d, tmp_path / "safe.h5"))


SPILL = """
    import os, sys, h5py
    from spanscope import ProfileManager
    d, safe = sys.argv[1], sys.argv[2]
    from spanscope import _ext
    ProfileManager.setup(file_path=None, memory_limit=8192, chunk_size=4096, spill_dir=d)

    @ProfileManager.profile("disk.spill")
    def work():
        pass

    n = %d
    for _ in range(n):
        work()
    c = _ext.counters()
    dropped = c["dropped"]
    assert dropped > 0, "nothing was dropped: the spill did not fail"
    # the cause is kept (sps_spill_error) and written beside the count
    assert c["spill_errno"] == want, c
    assert words in c["spill_error"] and d in c["spill_error"], c
    ProfileManager.finalize(file_path=safe)
    with h5py.File(safe) as h:
        kept = h["events/durations"].shape[0]
        meta = h["metadata"].attrs
        assert meta["dropped_events"] == dropped
        assert meta["spill_errno"] == want
        text = meta["spill_error"]
        assert (text.decode() if isinstance(text, bytes) else text) == c["spill_error"]
    assert 2 * kept + dropped >= 2 * n - 2, (kept, dropped)  # kept or counted
    print("OK")
""" % NCALLS
SPILL = SPILL.replace("d, safe = sys.argv[1], sys.argv[2]",
                      "d, safe, want, words = sys.argv[1], sys.argv[2], int(sys.argv[3]), "
                      "sys.argv[4]\n    if os.environ.get('T_RMDIR'): os.rmdir(d)")


def test_spill_on_full_disk(full_disk, tmp_path):
    d, env = full_disk
    _fill(d, env)  # packed, 300 000 calls of a loop fit in 512 KiB
    _ok(_run(SPILL, env, d, tmp_path / "safe.h5", errno.ENOSPC, "no space left on device"))


def _read_only(d: Path, request) -> dict:
    """The environment for a read-only directory d: a read-only tmpfs
    mounted there (root), else the shim's refusal to create files there
    with EROFS; skipped when neither works."""
    if _mount(d, "ro,size=64k"):
        request.addfinalizer(lambda: subprocess.run(["umount", str(d)]))
        return dict(os.environ)
    return _shim(d, SPS_FAULT_OPS="open", SPS_FAULT_ERRNO=str(errno.EROFS))


def test_spill_read_only_directory(tmp_path, request):
    d = tmp_path / "ro"
    d.mkdir()
    env = _read_only(d, request)
    _ok(_run(SPILL, env, d, tmp_path / "safe.h5", errno.EROFS, "read-only file system"))


def test_spill_vanished_directory(tmp_path):
    d = tmp_path / "gone"
    d.mkdir()
    _ok(_run(SPILL, dict(os.environ, T_RMDIR="1"), d, tmp_path / "safe.h5", errno.ENOENT,
             "no such file or directory"))


def _recording(path: Path) -> Path:
    r = _run("""
        import sys
        from spanscope import ProfileManager
        ProfileManager.setup(file_path=sys.argv[1])
        for _ in range(100000):
            with ProfileManager.region("disk.in"):
                pass
        ProfileManager.finalize()
        print("OK")
    """, dict(os.environ), path)
    _ok(r)
    return path


def _fill(d: Path, env: dict) -> None:
    """Makes the disk full for a small output: the shim's budget shrinks to
    16 KiB, the tmpfs is filled by a file ("filler") to its last byte."""
    if "SPS_FAULT_BYTES" in env:
        env["SPS_FAULT_BYTES"] = "16384"
        return
    with open(d / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC


def _left(d: Path) -> list:
    return sorted(p.name for p in d.iterdir() if p.name != "filler")


@pytest.mark.parametrize("out", ["out.h5", "out.pftrace"])
def test_cli_convert_and_merge_on_full_disk(full_disk, tmp_path, out):
    if not CLI.exists():
        pytest.skip(f"no CLI at {CLI}")
    d, env = full_disk
    src = _recording(tmp_path / "in.h5")
    _fill(d, env)
    for cmd in (["convert", src, d / out], ["merge", "-o", d / out, src]):
        r = subprocess.run([CLI, *map(str, cmd)], env=env, capture_output=True, text=True)
        assert r.returncode == 1, (cmd, r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1, r.stderr  # one line
        assert "no space left on device" in r.stderr and str(d / out) in r.stderr, r.stderr
        assert _left(d) == [], _left(d)


def test_merge_distributed_traces_on_full_disk(full_disk, tmp_path):
    d, env = full_disk
    src = _recording(tmp_path / "in.h5")
    _fill(d, env)
    r = _run("""
        import os, sys
        import spanscope.profiler as prof
        src, out = sys.argv[1], sys.argv[2]
        try:
            prof.merge_distributed_traces([src], out)
            raise SystemExit("the merge did not fail")
        except OSError as e:
            assert "no space left on device" in str(e), str(e)
            assert e.errno == errno.ENOSPC and e.filename == out, (e.errno, e.filename)
        assert [n for n in os.listdir(os.path.dirname(out)) if n != "filler"] == []
        print("OK")
    """.replace("import os, sys", "import errno, os, sys"), env, src, d / "merged.h5")
    _ok(r)


#: every Python writer, by name: a statement that writes into directory d
#: from the recording src (the torch-style ones record a few spans first)
WRITERS = {
    "export_chrome_trace": "sp.export_chrome_trace(src, j(d, 'x.trace.json'), verbose=False)",
    "export_chrome_trace_gz":
        "sp.export_chrome_trace(src, j(d, 'x.trace.json.gz'), verbose=False)",
    "export_speedscope": "sp.export_speedscope(src, j(d, 'x.speedscope.json'), verbose=False)",
    "export_prof": "sp.export_prof(src, j(d, 'x.prof'), verbose=False)",
    "export_flamegraph_svg": "sp.export_flamegraph_svg(src, j(d, 'x.svg'), verbose=False)",
    "write_json": "sp.write_json(sp.read_h5(src), j(d, 'x.json'))",
    "write_json_gz": "sp.write_json(sp.read_h5(src), j(d, 'x.json.gz'))",
    "write_profile_h5": "sp.write_profile(sp.read_h5(src), j(d, 'x.h5'))",
    "create_html_report": "sp.create_html_report(src, j(d, 'x.html'))",
    "write_metadata_json": "sp.write_metadata_json(src, j(d, 'meta.json'))",
    "profiler_export_chrome_trace": "torch_prof().export_chrome_trace(j(d, 'x.pt.trace.json'))",
    "profiler_export_stacks": "torch_prof().export_stacks(j(d, 'x.stacks'))",
    "tensorboard_trace_handler": "torch_prof(prof.tensorboard_trace_handler(d))",
    "merge_distributed_traces": "prof.merge_distributed_traces([src], j(d, 'merged.json'))",
}

#: runs one writer (argv: src, d, writer statement, expected errno, words)
WRITE = """
    import errno, os, sys
    import spanscope as sp
    import spanscope.profiler as prof
    src, d, stmt, want, words = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    j = os.path.join

    def torch_prof(handler=None):
        with prof.profile(on_trace_ready=handler) as p:
            for _ in range(2000):
                with prof.record_function("disk.torch"):
                    pass
        return p

    try:
        exec(stmt)
        raise SystemExit(stmt + ": no error")
    except OSError as e:
        print("errno", e.errno, "|", e, "|", e.filename)
        assert e.errno == want, (e.errno, str(e))
        assert words in str(e), str(e)
        assert e.filename and os.path.dirname(e.filename) == d, e.filename
    left = [n for n in os.listdir(d) if n != "filler"] if os.path.isdir(d) else []
    assert left == [], left
    print("OK")
"""

#: the writers that make the output's missing folders (scope-profiler's
#: exports and JSON writers, tensorboard_trace_handler); the others refuse
#: a vanished directory with FileNotFoundError
MAKES_FOLDERS = {"create_html_report", "export_chrome_trace", "export_chrome_trace_gz",
                 "export_flamegraph_svg", "export_prof", "export_speedscope",
                 "tensorboard_trace_handler", "write_json", "write_json_gz",
                 "write_metadata_json"}


def _writer_case(name: str, d: Path, env: dict, src: Path, want: int, words: str) -> None:
    r = _run(WRITE, env, src, d, WRITERS[name], want, words)
    _ok(r)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    return _recording(tmp_path_factory.mktemp("rec") / "in.h5")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_on_full_disk(full_disk, recording, name):
    """Every Python writer on a full disk (a filled 512 KiB tmpfs as root;
    the shim's, whose byte budget for these small outputs is 0): OSError
    with errno ENOSPC, the cause in its message, the output as its
    filename, no partial or temporary file, a normal exit."""
    d, env = full_disk
    _fill(d, env)
    if "SPS_FAULT_BYTES" in env:
        env["SPS_FAULT_BYTES"] = "0"
    _writer_case(name, d, env, recording, errno.ENOSPC, "no space left on device")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_on_failing_disk(tmp_path, recording, name):
    """The same with EIO in the middle of the write (the shim: a short
    write after 16 bytes, then EIO) and with a quota (EDQUOT, from the
    first byte)."""
    d = tmp_path / "disk"
    d.mkdir()
    env = _shim(d, SPS_FAULT_BYTES="16", SPS_FAULT_ERRNO=str(errno.EIO), SPS_FAULT_OPS="write")
    _writer_case(name, d, env, recording, errno.EIO, "input/output error")
    env = _shim(d, SPS_FAULT_BYTES="0", SPS_FAULT_ERRNO=str(errno.EDQUOT))
    _writer_case(name, d, env, recording, errno.EDQUOT, "disk quota exceeded")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_read_only_directory(tmp_path, recording, request, name):
    d = tmp_path / "ro"
    d.mkdir()
    env = _read_only(d, request)
    _writer_case(name, d, env, recording, errno.EROFS, "read-only file system")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_writers_vanished_directory(tmp_path, recording, name):
    """Into a directory that vanished: the writers that make missing folders
    make it and write the whole file (no temporary left); the others raise
    FileNotFoundError naming the output and write nothing."""
    d = tmp_path / "gone" / "sub"
    if name not in MAKES_FOLDERS:
        _writer_case(name, d, dict(os.environ), recording, errno.ENOENT,
                     "no such file or directory")
        return
    r = _run(WRITE.replace('raise SystemExit(stmt + ": no error")',
                           'names = os.listdir(d)\n        assert names and not [n for n in names '
                           'if ".tmp-" in n], names\n        print("OK")\n        '
                           'raise SystemExit(0)'),
             dict(os.environ), recording, d, WRITERS[name], 0, "")
    _ok(r)
