"""Device activity through the file tools (issue 38 parts 3 and 5; docs/device.md,
docs/device-timeline.md):

* ``spanscope merge -o OUT.h5`` carries /events/gpu_durations: each event's
  device time moves with its event (-1 for the events of an input without
  the column; no column in the output when no input has it), and each
  (rank, region)'s gpu_count / gpu_total in summary_statistics are its
  events' values, as finalize makes them; streamed inputs and inputs read
  whole (no parent ids) alike;
* /device/cbids (CUPTI's callback id of the API rows): carried by the
  merge (0 where an input lacks the column), written as kineto's "cbid"
  arg of cuda_runtime / cuda_driver rows in Chrome JSON (absent when the
  file has no cbids), checked by the reader (a negative one is a format
  error);
* ``spanscope convert IN.h5 OUT.h5`` keeps /device and /samples (and
  /events/gpu_durations) by the merge's carrying, the spans as they were.

Fixtures: the recordings of test_device_timeline.py (two ranks, /device
added with h5py per the contract), plus per-event gpu_durations and cbids
added here. Expectations come from the fixtures' own tables.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
h5py = pytest.importorskip("h5py")

sys.path.insert(0, os.path.dirname(__file__))
from test_device_timeline import RECORD, add_device, cli, spans_of  # noqa: E402

# CUPTI's callback ids (cupti_runtime_cbid.h / cupti_driver_cbid.h)
CBID = {"cudaLaunchKernel": 211, "cudaMemcpyAsync": 41, "cuMemsetD8Async": 270}


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def add_gpu(path, rank):
    """Adds /events/gpu_durations (a value for every third event, -1 for the
    others) and the matching gpu_count / gpu_total to summary_statistics;
    returns {(rank, call id): value}."""
    with h5py.File(path, "r+") as f:
        n = len(f["events/durations"])
        calls = f["events/call_ids"][()]
        gpu = np.full(n, -1, dtype=np.int64)
        gpu[::3] = 1000 * (rank + 1) + 7 * np.arange(0, n, 3)
        f["events"].create_dataset("gpu_durations", data=gpu)
        ix = f["rank_region_index"]
        offs, counts = ix["event_offsets"][()], ix["event_counts"][()]
        summ = ix["summary_statistics"][()]
        for row in range(len(offs)):
            g = gpu[int(offs[row]):int(offs[row] + counts[row])]
            summ["gpu_count"][row] = int((g >= 0).sum())
            summ["gpu_total"][row] = int(g[g >= 0].sum())
        ix["summary_statistics"][...] = summ
    return {(rank, int(c)): int(v) for c, v in zip(calls, gpu)}


def add_cbids(path):
    """Adds /device/cbids: an API row's callback id by its name, 0 for the
    device rows; returns {(rank, correlation, kind): cbid}."""
    with h5py.File(path, "r+") as f:
        g = f["device"]
        names = [_text(n) for n in g["names"][()]]
        kinds, idx = g["kinds"][()], g["names_idx"][()]
        cb = np.array([CBID[names[i]] if k >= 4 else 0 for k, i in zip(kinds, idx)],
                      dtype=np.int64)
        g.create_dataset("cbids", data=cb)
        return {(int(r), int(c), int(k)): int(v)
                for r, c, k, v in zip(g["ranks"][()], g["correlations"][()], kinds, cb)}


def record(d, name, rank):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    path = str(d / name)
    done = subprocess.run([sys.executable, "-c", RECORD, path, str(rank)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """Two recordings (ranks 0 and 1) with /device, nothing else added."""
    d = tmp_path_factory.mktemp("device_gaps")
    out = []
    for rank in (0, 1):
        path = record(d, f"plain_r{rank}.h5", rank)
        add_device(path, rank)
        out.append(path)
    return out


@pytest.fixture
def pair(plain, tmp_path):
    """Fresh copies of the two recordings."""
    out = []
    for rank, src in enumerate(plain):
        dst = tmp_path / f"r{rank}.h5"
        shutil.copy(src, dst)
        out.append(str(dst))
    return out


def events_of(path):
    """{(rank, call id): (region name, gpu value or None)} and the summary
    per (rank, region name): (count, gpu_count, gpu_total)."""
    with h5py.File(path) as f:
        names = [_text(n) for n in f["region_table/names"][()]]
        ix = f["rank_region_index"]
        offs, counts = ix["event_offsets"][()], ix["event_counts"][()]
        regions, ranks = ix["region_ids"][()], ix["ranks"][()]
        summ = ix["summary_statistics"][()]
        calls = f["events/call_ids"][()]
        gpu = f["events/gpu_durations"][()] if "gpu_durations" in f["events"] else None
    ev, rows = {}, {}
    for row in range(len(offs)):
        key = (int(ranks[row]), names[int(regions[row])])
        rows[key] = (int(counts[row]), int(summ["gpu_count"][row]),
                     int(summ["gpu_total"][row]))
        for e in range(int(offs[row]), int(offs[row] + counts[row])):
            ev[(int(ranks[row]), int(calls[e]))] = (
                names[int(regions[row])], None if gpu is None else int(gpu[e]))
    return ev, rows


def expected(inputs):
    """What the merge of inputs must hold: per (rank, call id) the region
    and gpu value (-1 where the input has no column), per (rank, region)
    (calls, gpu_count, gpu_total) from those values."""
    ev, rows = {}, {}
    for path in inputs:
        e, _ = events_of(path)
        for k, (name, g) in e.items():
            g = -1 if g is None else g
            ev[k] = (name, g)
            n, c, t = rows.get((k[0], name), (0, 0, 0))
            rows[(k[0], name)] = (n + 1, c + (g >= 0), t + max(g, 0))
    return ev, rows


def merge(build_dir, out, *inputs):
    done = cli(build_dir, "merge", "-o", out, *inputs)
    assert done.returncode == 0, done.stderr
    return out


# ---- merge: /events/gpu_durations and gpu_count / gpu_total ----

@pytest.mark.parametrize("which", ["both", "rank0", "whole"])
def test_merge_h5_carries_gpu_durations(pair, build_dir, tmp_path, which):
    add_gpu(pair[0], 0)
    if which != "rank0":
        add_gpu(pair[1], 1)
    if which == "whole":  # no parent ids: the merge reads this input whole
        with h5py.File(pair[1], "r+") as f:
            del f["events/parent_ids"]
    out = merge(build_dir, tmp_path / "m.h5", *pair)
    want_ev, want_rows = expected(pair)
    got_ev, got_rows = events_of(out)
    assert got_ev == want_ev
    assert got_rows == want_rows
    assert any(g >= 0 for _, g in got_ev.values())
    if which == "rank0":  # rank 1 had no column: -1 for each of its events
        assert all(g == -1 for (r, _), (_, g) in got_ev.items() if r == 1)
        assert all(c == 0 and t == 0 for (r, _), (_, c, t) in got_rows.items() if r == 1)


def test_merge_h5_without_gpu_durations_has_none(pair, build_dir, tmp_path):
    out = merge(build_dir, tmp_path / "m.h5", *pair)
    with h5py.File(out) as f:
        assert "gpu_durations" not in f["events"]
        assert (f["rank_region_index/summary_statistics"]["gpu_count"] == 0).all()
        assert "device" in f


def test_merge_h5_bad_gpu_durations_is_a_format_error(pair, build_dir, tmp_path):
    add_gpu(pair[0], 0)
    with h5py.File(pair[0], "r+") as f:
        g = f["events/gpu_durations"][()]
        del f["events/gpu_durations"]
        f["events"].create_dataset("gpu_durations", data=g[:-1])  # one short
    out = tmp_path / "m.h5"
    done = cli(build_dir, "merge", "-o", out, *pair)
    assert done.returncode != 0
    assert "gpu_durations" in done.stderr and pair[0] in done.stderr, done.stderr
    assert not out.exists()


# ---- /device/cbids ----

def test_merge_h5_carries_cbids(pair, build_dir, tmp_path):
    want = add_cbids(pair[0])  # rank 1 has none: 0 there
    out = merge(build_dir, tmp_path / "m.h5", *pair)
    with h5py.File(out) as f:
        g = f["device"]
        got = {(int(r), int(c), int(k)): int(v)
               for r, c, k, v in zip(g["ranks"][()], g["correlations"][()], g["kinds"][()],
                                     g["cbids"][()])}
    assert {k: v for k, v in got.items() if k[0] == 0} == want
    assert any(v for v in want.values())
    assert all(v == 0 for k, v in got.items() if k[0] == 1)


def _chrome_rows(path):
    with open(path) as f:
        doc = json.load(f)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in
            ("cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset")]


def test_chrome_cbid_arg(pair, build_dir, tmp_path):
    want = add_cbids(pair[0])
    out = tmp_path / "t.json"
    done = cli(build_dir, "convert", pair[0], out)
    assert done.returncode == 0, done.stderr
    rows = _chrome_rows(out)
    api = [e for e in rows if e["cat"] in ("cuda_runtime", "cuda_driver")]
    dev = [e for e in rows if e["cat"] not in ("cuda_runtime", "cuda_driver")]
    assert api and dev
    kind = {"cuda_runtime": 4, "cuda_driver": 5}
    for e in api:
        assert e["args"]["cbid"] == want[(0, e["args"]["correlation"], kind[e["cat"]])]
        assert e["args"]["cbid"] == CBID[e["name"]]
    assert all("cbid" not in e["args"] for e in dev)
    # a file without the column: no cbid arg at all
    done = cli(build_dir, "convert", pair[1], tmp_path / "u.json")
    assert done.returncode == 0, done.stderr
    assert all("cbid" not in e["args"] for e in _chrome_rows(tmp_path / "u.json"))


def test_bad_cbids_is_a_format_error(pair, build_dir, tmp_path):
    add_cbids(pair[0])
    with h5py.File(pair[0], "r+") as f:
        cb = f["device/cbids"]
        cb[0] = -3
    done = cli(build_dir, "convert", pair[0], tmp_path / "t.json")
    assert done.returncode != 0
    assert "/device/cbids[0] = -3" in done.stderr, done.stderr


# ---- convert .h5 -> .h5 keeps /device, /samples, /events/gpu_durations ----

RECORD_SAMPLED = RECORD.replace(
    "_ext.setup(path, rank=rank, size=2, local=True)\n",
    "_ext.setup(path, rank=rank, size=2, local=True)\n"
    "_ext.sampling_start(1000)\n"
    "with _ext.region_new('hot'):\n"
    "    spin(150_000_000)\n").replace(
    "_ext.finalize(path, False)\n", "_ext.finalize(path, False)\n_ext.sampling_stop()\n")


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """A sampled recording (rank 0) with /device, gpu_durations and cbids."""
    if not hasattr(__import__("spanscope")._ext, "sampling_start"):
        pytest.skip("this build has no stack sampler")
    d = tmp_path_factory.mktemp("device_gaps_sampled")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    path = str(d / "s.h5")
    done = subprocess.run([sys.executable, "-c", RECORD_SAMPLED, path, "0"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    add_device(path, 0)
    add_gpu(path, 0)
    add_cbids(path)
    with h5py.File(path) as f:
        assert "samples" in f and len(f["samples/times_ns"]) > 10
    return path


def span_ids(path):
    """{(rank, call id): (thread, start, region name)} and the inverse."""
    by_call = {(s["rank"], s["call"]): (s["thread"], s["start"], s["name"])
               for s in spans_of(path)}
    return by_call, {v: k for k, v in by_call.items()}


def device_rows(path):
    with h5py.File(path) as f:
        g = f["device"]
        cols = {c: g[c][()] for c in g if c != "names"}
        names = [_text(n) for n in g["names"][()]]
        rnames = [_text(n) for n in f["region_table/names"][()]]
    rows = []
    for i in range(len(cols["kinds"])):
        r = {c: int(v[i]) for c, v in cols.items()}
        r["name"] = names[r.pop("names_idx")]
        r["region"] = rnames[r.pop("regions")] if r["regions"] >= 0 else None
        rows.append(r)
    return sorted(rows, key=lambda r: (r["ranks"], r["correlations"], r["kinds"]))


def sample_rows(path):
    with h5py.File(path) as f:
        g = f["samples"]
        cols = {c: g[c][()] for c in ("times_ns", "threads", "tids", "ranks", "regions",
                                      "call_ids", "stacks", "weights")}
        rnames = [_text(n) for n in f["region_table/names"][()]]
    return [dict({c: int(v[i]) for c, v in cols.items()},
                 region=rnames[int(cols["regions"][i])] if cols["regions"][i] >= 0 else None)
            for i in range(len(cols["times_ns"]))]


def gpu_by_span(path):
    """{(rank, thread, start, region name): gpu} and the summary's gpu per
    (rank, region name)."""
    ev, rows = events_of(path)
    by_call, _ = span_ids(path)
    return ({(k[0],) + by_call[k]: g for k, (_, g) in ev.items()},
            {k: (c, t) for k, (_, c, t) in rows.items()})


def check_carried(src, out):
    """out (the convert of src) holds src's /device, /samples and gpu
    durations, each on the span of out that is src's span."""
    src_calls, _ = span_ids(src)
    _, out_span = span_ids(out)

    def moved(rank, call):  # src's call id -> out's
        return -1 if call < 0 else out_span[src_calls[(rank, call)]][1]

    want = device_rows(src)
    for r in want:
        r["call_ids"] = moved(r["ranks"], r["call_ids"])
    got = device_rows(out)
    assert got == want
    assert any(r["call_ids"] >= 0 for r in got) and any(r["cbids"] for r in got)
    ws = sample_rows(src)
    for r in ws:
        r["call_ids"] = moved(r["ranks"], r["call_ids"])
        del r["regions"], r["stacks"]
    gs = sample_rows(out)
    for r in gs:
        del r["regions"], r["stacks"]
    assert gs == ws
    assert any(r["call_ids"] >= 0 for r in gs)
    assert gpu_by_span(out) == gpu_by_span(src)
    assert any(c for c, _ in gpu_by_span(out)[1].values())
    with h5py.File(src) as a, h5py.File(out) as b:
        # the stacks are the file's own tables, copied whole
        for c in ("stack_offsets", "stack_frames", "frame_lines", "frame_functions"):
            assert (a["samples"][c][()] == b["samples"][c][()]).all()


def test_convert_h5_keeps_device_samples_gpu(sampled, build_dir, tmp_path):
    out = tmp_path / "c.h5"
    done = cli(build_dir, "convert", sampled, out)
    assert done.returncode == 0, done.stderr
    assert "not carried" not in done.stderr
    check_carried(sampled, str(out))


def test_convert_h5_moves_call_ids(sampled, build_dir, tmp_path):
    """Call ids that do not start at 0 (a file after a checkpoint): the
    rewrite numbers its spans afresh, and the carried rows follow them."""
    src = tmp_path / "shifted.h5"
    shutil.copy(sampled, src)
    with h5py.File(src, "r+") as f:
        for c in ("events/call_ids", "events/parent_ids", "device/call_ids",
                  "samples/call_ids"):
            v = f[c][()]
            f[c][...] = np.where(v >= 0, v + 1000, v)
    out = tmp_path / "c.h5"
    done = cli(build_dir, "convert", src, out)
    assert done.returncode == 0, done.stderr
    with h5py.File(out) as f:
        assert f["events/call_ids"][()].min() < 1000  # renumbered: a naive copy would miss
    check_carried(str(src), str(out))


def test_convert_h5_without_call_ids_says_so(sampled, build_dir, tmp_path):
    src = tmp_path / "noids.h5"
    shutil.copy(sampled, src)
    with h5py.File(src, "r+") as f:
        del f["events/call_ids"]
        del f["events/parent_ids"]
    out = tmp_path / "c.h5"
    done = cli(build_dir, "convert", src, out)
    assert done.returncode == 0, done.stderr
    assert (f"not carried into {out}: /device, /samples, /events/gpu_durations ("
            in done.stderr), done.stderr
    assert "no call ids" in done.stderr
    with h5py.File(out) as f:
        assert "device" not in f and "samples" not in f
        assert "gpu_durations" not in f["events"]
