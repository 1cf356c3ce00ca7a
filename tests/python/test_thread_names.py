"""Python threads carry their threading names (MainThread, w0, ...) in every
view: the HDF5 thread table, the results read back, the timelines written
from the file (Chrome JSON, Perfetto), the live session -- not the
interpreter's pthread name ("python") or "thread N".  The C core asks the
extension for the name on a thread's first record (sps_set_thread_namer)."""

import gzip
import json
import subprocess
import threading

import h5py
import pytest

import spanscope
from spanscope import _cli


def _record(path, names=("w0", "w1")):
    spanscope.setup(file_path=str(path))

    def work():
        for _ in range(3):
            with spanscope.region("work"):
                pass
    threads = [threading.Thread(target=work, name=n) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with spanscope.region("main"):
        pass
    spanscope.finalize(verbose=False)
    return path


@pytest.fixture
def named_h5(tmp_path):
    return _record(tmp_path / "run.h5")


def test_hdf5_thread_table_has_python_names(named_h5):
    with h5py.File(named_h5) as f:
        names = [n.decode() for n in f["thread_table/name"][()]]
    assert sorted(names) == ["MainThread", "w0", "w1"]


def test_results_read_back_have_python_names(named_h5):
    res = spanscope.read_h5(named_h5)
    assert sorted(t.name for t in res.threads[0]) == ["MainThread", "w0", "w1"]
    model = spanscope.read(named_h5)
    assert sorted(model.thread_table["name"]) == ["MainThread", "w0", "w1"]


def test_the_summary_table_reads_the_same_names(named_h5):
    res = spanscope.read_h5(named_h5)
    text = str(res.thread_summary() if callable(res.thread_summary) else res.thread_summary)
    assert "w0" in text and "MainThread" in text


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_chrome_trace_threads_are_named(named_h5, tmp_path, suffix, capsys):
    out = tmp_path / f"t{suffix}"
    assert _cli.main(["convert", str(named_h5), str(out)]) == 0
    raw = gzip.open(out).read() if suffix.endswith(".gz") else out.read_bytes()
    events = json.loads(raw)["traceEvents"]
    names = sorted(e["args"]["name"] for e in events
                   if e.get("ph") == "M" and e.get("name") == "thread_name")
    assert names == ["MainThread", "w0", "w1"]


def test_perfetto_threads_are_named(named_h5, tmp_path, capsys):
    out = tmp_path / "t.pftrace"
    assert _cli.main(["convert", str(named_h5), str(out)]) == 0
    data = out.read_bytes()
    for name in (b"MainThread", b"w0", b"w1"):
        assert name in data


def test_a_long_name_is_cut_between_characters(tmp_path):
    long = "worker-" + "\u00e9" * 40  # 2-byte characters: the cut lands mid-sequence
    path = _record(tmp_path / "long.h5", names=(long,))
    with h5py.File(path) as f:
        names = [n.decode("utf-8") for n in f["thread_table/name"][()]]
    cut = [n for n in names if n.startswith("worker-")]
    assert len(cut) == 1 and long.startswith(cut[0])
    assert 20 <= len(cut[0].encode()) <= 31


def test_threads_not_started_by_threading_keep_their_pthread_names(tmp_path):
    """A C thread recording into the session (no Python thread object) keeps
    its pthread name: the namer only names threads threading knows."""
    import ctypes
    import pathlib
    lib = ctypes.CDLL(str(pathlib.Path(spanscope.__file__).parent / "libspanscope.so.1"))
    out = tmp_path / "c.h5"
    spanscope.setup(file_path=str(out))
    # sps_thread_set_name from the calling (Python) thread wins over the namer
    lib.sps_thread_set_name.argtypes = [ctypes.c_char_p]
    assert lib.sps_thread_set_name(b"renamed-main") == 0
    with spanscope.region("x"):
        pass
    spanscope.finalize(verbose=False)
    with h5py.File(out) as f:
        names = [n.decode() for n in f["thread_table/name"][()]]
    assert names == ["renamed-main"]
    assert lib.sps_thread_set_name(b"") == 0  # back to the namer / pthread name
    assert lib.sps_thread_set_name(None) != 0
