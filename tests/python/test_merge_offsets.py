"""spanscope merge aligns clocks through each recording's wall/monotonic
anchor: a recording whose anchor says its monotonic clock runs 5 s behind
(another host) is shifted by exactly that much."""
import os
import pathlib
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import spanscope

BUILD = pathlib.Path(os.environ.get("SPS_BUILD", pathlib.Path(__file__).parents[2] / "build"))
CLI = BUILD / "spanscope"
HELLO = BUILD / "examples" / "hello"


@pytest.fixture
def two_ranks(tmp_path):
    if not CLI.exists() or not HELLO.exists():
        pytest.skip("build the C tree first (make check does)")
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    for p in (a, b):
        subprocess.run([str(HELLO), str(p)], check=True, capture_output=True)
    with h5py.File(b, "r+") as f:  # b: rank 1 on another host, clock 5 s apart
        m = f["metadata"]
        m.attrs["rank"] = np.int64(1)
        m.attrs["hostname"] = "another-host"
        m.attrs["wall_anchor_ns"] = np.int64(m.attrs["wall_anchor_ns"] + 5_000_000_000)
    return a, b


def starts(path, rank):
    res = spanscope.read(path)
    return {name: r[rank].start_ns for name, r in res.regions.items() if rank in r}


def anchor_offset(path):
    with h5py.File(path) as f:
        m = f["metadata"].attrs
        return int(m["wall_anchor_ns"]) - int(m["mono_anchor_ns"])


def test_offset_is_applied_exactly(two_ranks, tmp_path):
    a, b = two_ranks
    out = tmp_path / "m.h5"
    subprocess.run([str(CLI), "merge", "-o", str(out), str(a), str(b)], check=True)
    merged0, merged1 = starts(out, 0), starts(out, 1)
    orig_a, orig_b = starts(a, 0), starts(b, 0)
    assert merged0.keys() == orig_a.keys() and merged1.keys() == orig_b.keys()
    for name in orig_a:
        assert np.array_equal(merged0[name], orig_a[name])  # the reference: unshifted
    # the two processes' anchors differ by the 5 s we added plus their own
    # read skew (tens of ns): the shift is exactly the anchors' difference
    shift = anchor_offset(b) - anchor_offset(a)
    assert abs(shift - 5_000_000_000) < 1_000_000
    for name in orig_b:
        assert np.array_equal(merged1[name], orig_b[name] + shift)


def test_offset_in_trace_output(two_ranks, tmp_path):
    import json
    a, b = two_ranks
    out = tmp_path / "m.json"
    subprocess.run([str(CLI), "merge", "-o", str(out), str(a), str(b)], check=True)
    doc = json.loads(out.read_text())
    ranks = {r["rank"]: r for r in doc["spanscope"]["merge"]["ranks"]}
    assert ranks[1]["clock_aligned"] is True
    assert ranks[1]["offset_ns"] == anchor_offset(b) - anchor_offset(a)
    assert ranks[0]["offset_ns"] == 0
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    first = {p: min(e["ts"] for e in xs if e["pid"] == p) for p in (0, 1)}
    assert first[1] - first[0] > 4_000_000  # µs: rank 1 starts ~5 s later
