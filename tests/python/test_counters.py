"""Counters: named time series recorded by the program (spanscope.counter /
sps_counter), kept in the HDF5 file's /counters group and drawn in
timelines as counter tracks (Chrome "ph":"C", Perfetto counter tracks)."""
import gzip
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager, profiler

CLI = pathlib.Path(os.environ.get("SPS_BUILD", "build")) / "spanscope"


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def test_counters_in_the_h5_file_per_period(tmp_path):
    spanscope.counter("ignored", 1.0)  # no session: nothing, no error
    p1, p2 = tmp_path / "a.h5", tmp_path / "b.h5"
    ProfileManager.setup(file_path=str(p1))
    for i in range(5):
        with ProfileManager.region("step"):
            spanscope.counter("loss", 1.0 / (i + 1))
        spanscope.counter("mem", 1024 * i)
    ProfileManager.finalize(verbose=False)
    spanscope.counter("mem", 7.5)
    ProfileManager.finalize(verbose=False, file_path=str(p2))
    r = spanscope.read(p1)
    assert set(r.counters) == {"loss", "mem"}
    assert np.allclose(r.counters["loss"]["values"], [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5])
    assert list(r.counters["mem"]["values"]) == [0, 1024, 2048, 3072, 4096]
    t = r.counters["loss"]["times_ns"]
    assert (np.diff(t) > 0).all()
    # each loss sample lies inside its step
    steps = r["step"]
    assert ((steps.start_ns <= t) & (t <= steps.end_ns)).all()
    assert "ignored" not in r.counters
    assert "loss" not in spanscope.read(p1).region_names  # counters are not regions
    assert list(spanscope.read(p2).counters["mem"]["values"]) == [7.5]  # next period only


def test_counter_arguments():
    ProfileManager.setup(output=None)
    with pytest.raises(TypeError):
        spanscope.counter(3, 1.0)
    with pytest.raises(TypeError):
        spanscope.counter("x", "nan-ish")
    with pytest.raises(ValueError):
        spanscope.counter("a\0b", 1.0)
    spanscope.counter("x", 2)  # ints are fine


@pytest.mark.skipif(not CLI.exists(), reason="the spanscope CLI is not built")
def test_counters_convert_to_chrome_and_perfetto(tmp_path):
    p = tmp_path / "c.h5"
    ProfileManager.setup(file_path=str(p))
    for i in range(3):
        with ProfileManager.region("work"):
            spanscope.counter("queue", i + 0.5)
    ProfileManager.finalize(verbose=False)
    rep = subprocess.run([str(CLI), "report", str(p)], check=True, capture_output=True,
                         text=True).stdout
    line = [ln for ln in rep.splitlines() if ln.startswith("queue")][0].split()
    assert "Counters (1; 3 samples)" in rep
    assert line[1:] == ["3", "0.5", "1.5", "2.5", "2.5"]  # samples min mean max last
    assert "Counters" in spanscope.read(p).summary()
    js = tmp_path / "c.json"
    subprocess.run([str(CLI), "convert", str(p), str(js)], check=True)
    cs = [e for e in load(js)["traceEvents"] if e["ph"] == "C"]
    assert [e["args"]["queue"] for e in cs] == [0.5, 1.5, 2.5]
    assert {e["name"] for e in cs} == {"queue"}
    # .json -> .pftrace -> .json keeps them
    pf, back = tmp_path / "c.pftrace", tmp_path / "back.json"
    subprocess.run([str(CLI), "convert", str(js), str(pf)], check=True)
    subprocess.run([str(CLI), "convert", str(pf), str(back)], check=True)
    cs2 = [e for e in load(back)["traceEvents"] if e["ph"] == "C"]
    assert [e["args"]["queue"] for e in cs2] == [0.5, 1.5, 2.5]
    assert [e["ts"] for e in cs2] == [e["ts"] for e in cs]


def test_profile_window_exports_its_counters(tmp_path):
    spanscope.setup(output=None)
    spanscope.counter("before", 1)
    with profiler.profile() as prof:
        for i in range(4):
            with profiler.record_function("it"):
                spanscope.counter("loss", 4 - i)
    spanscope.counter("after", 1)
    c = prof.counters()
    assert set(c) == {"loss"}  # only the window's samples
    assert list(c["loss"]["values"]) == [4, 3, 2, 1]
    path = tmp_path / "p.json"
    prof.export_chrome_trace(path)
    cs = [e for e in load(path)["traceEvents"] if e["ph"] == "C"]
    assert [e["args"]["loss"] for e in cs] == [4, 3, 2, 1]
    spans = [e for e in load(path)["traceEvents"]
             if e["ph"] == "X" and e["cat"] == "user_annotation"]
    assert len(cs) == len(spans) == 4
    for e, s in zip(cs, spans):
        assert s["ts"] <= e["ts"] <= s["ts"] + s["dur"]


def test_report_shows_long_counter_names_whole(tmp_path):
    """The counters table sizes its name column by columns (code points),
    up to 40, and cuts longer names there with an ellipsis (the one cell
    printer of the C tables), never inside a UTF-8 sequence."""
    p = tmp_path / "names.h5"
    ProfileManager.setup(file_path=str(p))
    spanscope.counter("gpu_memory_bytes_\u00e9t\u00e9", 1.0)
    spanscope.counter("q", 2.0)
    spanscope.counter("\u00e9" * 50, 3.0)
    ProfileManager.finalize(verbose=False)
    rep = spanscope.read(p).summary()
    rows = rep[rep.index("Counters"):].splitlines()[2:]
    assert rows[0].startswith("gpu_memory_bytes_\u00e9t\u00e9  ")
    assert rows[1].startswith("q" + " " * 20 + "  ")   # padded to the widest
    assert rows[2].startswith("\u00e9" * 37 + "...  ")  # cut at 40 columns
    assert len({len(r) for r in rows}) == 1  # columns line up (in code points)
