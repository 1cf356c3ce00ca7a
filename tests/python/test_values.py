"""Values per span in a file (issue 33): a session with memory tracking
(``_ext.setup(track=1)``, the allocator hooks feeding it) writes /values,
which ``spanscope.read`` gives as ``Results.values`` and ``spanscope report``
prints; hostile /values groups are refused with a clear error."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import spanscope
from spanscope import _ext
from spanscope.results._model import RegionValues


def _record(path, track=1):
    _ext.setup(path, track=track)
    _ext.mem_hooks_install(python=True, numpy=True)
    try:
        outer, inner = _ext.region_new("values.outer"), _ext.region_new("values.inner")
        for _ in range(2):
            with outer:
                keep = np.ones(1 << 17)  # 1 MiB kept past the inner call
                with inner:
                    tmp = np.ones(1 << 18)  # 2 MiB, freed inside
                    del tmp
                del keep
        _ext.finalize(path, False)
    finally:
        _ext.mem_hooks_uninstall()
        _ext.shutdown()


def test_read_gives_values_per_region(tmp_path):
    path = str(tmp_path / "mem.h5")
    _record(path)
    res = spanscope.read(path)
    outer, inner = res.values["values.outer"][0], res.values["values.inner"][0]
    assert isinstance(outer, RegionValues) and outer.calls == 2 and inner.calls == 2
    mib = 1 << 20
    # at least the known bytes: 2 x (1 + 2) MiB in outer, 2 x 2 MiB in inner
    assert inner.own["alloc_bytes"] >= 4 * mib and inner.own["free_bytes"] >= 4 * mib
    assert outer.own["alloc_bytes"] >= 6 * mib
    # self: outer's own 1 MiB arrays, not inner's
    assert 2 * mib <= outer.self["alloc_bytes"] < 3 * mib
    # peaks: inner 2 MiB above its start; outer 1 + 2 MiB, 1 MiB outside inner
    assert 2 * mib <= inner.own["peak_bytes"] < 2 * mib + 64 * 1024
    assert 3 * mib <= outer.own["peak_bytes"] < 3 * mib + 64 * 1024
    assert mib <= outer.self["peak_bytes"] < mib + 64 * 1024


def test_report_prints_the_values(tmp_path, build_dir):
    path = str(tmp_path / "mem.h5")
    _record(path)
    cli = os.path.join(build_dir, "spanscope")
    out = subprocess.run([cli, "report", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    table = out.stdout.split("Values per region", 1)[1]
    line = next(l for l in table.splitlines() if l.startswith("values.inner"))
    assert "MiB" in line


def test_no_values_without_tracking(tmp_path):
    path = str(tmp_path / "plain.h5")
    _record(path, track=0)
    assert spanscope.read(path).values == {}


@pytest.mark.parametrize("damage", ["rank_negative", "short_column", "region_not_str"])
def test_hostile_values_group_is_refused(tmp_path, damage):
    path = str(tmp_path / "mem.h5")
    _record(path)
    with h5py.File(path, "r+") as f:
        g = f["values"]
        if damage == "rank_negative":
            g["rank"][0] = -5
        elif damage == "short_column":
            del g["self_alloc_bytes"]
            g["self_alloc_bytes"] = np.zeros(1, dtype=np.int64)
        else:
            del g["region"]
            g["region"] = np.zeros(len(g["calls"]), dtype=np.int64)
    with pytest.raises(ValueError, match="values"):
        spanscope.read(path)


def test_live_bytes_are_a_counter_track_in_traces(tmp_path, build_dir):
    """Finalize turns each thread's live bytes at the end of its outermost
    calls into counter samples (/counters), so a trace written from the
    file draws them as a counter track."""
    path = str(tmp_path / "mem.h5")
    _record(path)
    res = spanscope.read(path)
    track = res.counters["live bytes (thread 0)"]
    assert len(track["values"]) == 2  # two outermost calls
    assert list(track["times_ns"]) == sorted(track["times_ns"])
    out = str(tmp_path / "mem.json")
    cli = os.path.join(build_dir, "spanscope")
    done = subprocess.run([cli, "convert", path, out], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import json
    with open(out) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    samples = [e for e in events if e.get("ph") == "C" and e["name"] == "live bytes (thread 0)"]
    assert len(samples) == 2


def test_diff_compares_the_values(tmp_path, build_dir):
    a, b = str(tmp_path / "a.h5"), str(tmp_path / "b.h5")
    _record(a)
    _record(b)
    cli = os.path.join(build_dir, "spanscope")
    done = subprocess.run([cli, "diff", a, b], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    table = done.stdout.split("Values per region", 1)[1]
    rows = [l.split() for l in table.splitlines() if l.startswith("values.inner")]
    names = {r[1] for r in rows}
    assert {"alloc_bytes", "free_bytes", "peak_bytes"} <= names
    for r in rows:  # the same work: the same bytes on both sides, at least 4 MiB
        if r[1] == "alloc_bytes":
            assert int(r[2]) >= 4 << 20 and int(r[3]) >= 4 << 20


def test_html_report_has_the_values_table(tmp_path, build_dir):
    path, page = str(tmp_path / "mem.h5"), str(tmp_path / "mem.html")
    _record(path)
    cli = os.path.join(build_dir, "spanscope")
    done = subprocess.run([cli, "html", path, "-o", page], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = open(page).read()
    assert "<h2>Values per region</h2>" in text
    table = text.split('<table id="values">', 1)[1].split("</table>", 1)[0]
    assert "<th>alloc_bytes</th>" in table and "<td>values.inner</td>" in table
    assert "live bytes (thread 0)" in text  # the counter lane of the timeline


def test_report_derives_ipc_and_miss_rates(tmp_path, build_dir):
    """Where the counters are there (a PMU; here written into /values by
    hand, as this machine has none), the report shows IPC and miss rates."""
    path = str(tmp_path / "hw.h5")
    _record(path)
    with h5py.File(path, "r+") as f:
        g = f["values"]
        n = len(g["calls"])
        for name, v in (("cycles", 4000), ("instructions", 6000),
                        ("cache-references", 200), ("cache-misses", 50)):
            g[name] = np.full(n, v, dtype=np.int64)
            g["self_" + name] = np.full(n, v, dtype=np.int64)
    cli = os.path.join(build_dir, "spanscope")
    out = subprocess.run([cli, "report", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    table = out.stdout.split("Values per region", 1)[1].splitlines()
    head = next(l for l in table if l.startswith("region"))
    assert "IPC" in head and "cache miss %" in head and "branch miss %" not in head
    row = next(l for l in table if l.startswith("values.inner")).split()
    assert row[-2:] == ["1.500", "25.000"]
