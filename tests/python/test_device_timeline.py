"""Device activity (issue 38 part 3: CUDA kernels, copies, sets and the API
calls that launched them, a file's /device group) in every timeline writer,
and its checked reader:

* fixtures: a normal spanscope .h5 per rank (regions nested on two threads,
  one of them recursive), to which the test adds /device with h5py exactly
  as docs/device.md's contract lays it out: each launch's API row and the
  device rows it launched point at a real span of that file (its thread
  index, OS tid, region id and call id), the API call inside that span;
* ``spanscope convert`` / ``spanscope export chrome``: kineto's form --
  categories kernel / gpu_memcpy / gpu_memset / cuda_runtime / cuda_driver,
  "External id" on every span and on the API and device rows of the span
  that launched them (the innermost span of the launching region on the
  launching thread: a recursive region's inner call), ac2g flows s/f keyed
  by the correlation id, "M" events naming the GPU processes "GPU N" and
  their streams "stream S"; HTA (holistictraceanalysis) loads the file and
  its GPU kernel breakdown sees the kernels;
* ``.pftrace``: Perfetto's own schema (perfetto_trace_pb2) parses it; a
  process per GPU, a track per stream under it, a slice per activity and a
  flow from each API call to what it launched;
* ``spanscope merge`` of two ranks to .json / .pftrace (each rank's GPUs,
  flow ids kept apart) and to .h5 (/device carried with its rank);
* a bad /device (kind, index, length, time) is a one-line format error.

The expectations come from the fixture's own tables (numpy/h5py), never
from the library's reader.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")
h5py = pytest.importorskip("h5py")

RECORD = textwrap.dedent("""
    import sys, threading, time
    from spanscope import _ext

    def spin(ns):
        end = time.perf_counter_ns() + ns
        while time.perf_counter_ns() < end:
            pass

    def rec(n):
        with _ext.region_new("rec"):
            spin(400_000)
            if n:
                rec(n - 1)
            spin(400_000)

    def worker():
        for _ in range(2):
            with _ext.region_new("work"):
                spin(300_000)
                with _ext.region_new("launch"):
                    spin(400_000)

    path, rank = sys.argv[1], int(sys.argv[2])
    _ext.setup(path, rank=rank, size=2, local=True)
    t = threading.Thread(target=worker, name="w1")
    t.start()
    with _ext.region_new("step"):
        for _ in range(2):
            with _ext.region_new("launch"):
                spin(400_000)
        rec(1)
    t.join()
    _ext.finalize(path, False)
    _ext.shutdown()
""")

KERNEL = "_Z6saxpyifPfS_"
COLS = ("kinds", "names_idx", "devices", "contexts", "streams", "correlations", "starts_ns",
        "ends_ns", "bytes", "ranks", "threads", "tids", "regions", "call_ids", "grid_x",
        "grid_y", "grid_z", "block_x", "block_y", "block_z", "copy_kinds", "src_kinds",
        "dst_kinds")
CAT = {1: "kernel", 2: "gpu_memcpy", 3: "gpu_memset", 4: "cuda_runtime", 5: "cuda_driver"}


def spans_of(path):
    """The file's spans from its own tables: dicts with rank, region (id
    and name), thread index, OS tid, call id, start and end ns."""
    with h5py.File(path) as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        ix = f["rank_region_index"]
        offs, counts = ix["event_offsets"][()], ix["event_counts"][()]
        regions, ranks = ix["region_ids"][()], ix["ranks"][()]
        ev = f["events"]
        deltas, durs = ev["start_deltas"][()], ev["durations"][()]
        threads, calls = ev["thread_ids"][()], ev["call_ids"][()]
        tt = f["thread_table"]
        native = dict(zip(tt["index"][()].tolist(), tt["native_id"][()].tolist()))
    out = []
    for row in range(len(offs)):
        o, n = int(offs[row]), int(counts[row])
        starts = np.cumsum(deltas[o:o + n])
        for k in range(n):
            i = o + k
            out.append(dict(rank=int(ranks[row]), region=int(regions[row]),
                            name=names[int(regions[row])], thread=int(threads[i]),
                            tid=native[int(threads[i])], call=int(calls[i]),
                            start=int(starts[k]), end=int(starts[k] + durs[i])))
    return out


def add_device(path, rank):
    """Adds /device to the file at path, as the contract lays it out, and
    returns the activities as dicts (with the launching span's call id)."""
    spans = spans_of(path)
    names = [KERNEL, "cudaLaunchKernel", "Memcpy HtoD (Pinned -> Device)", "cudaMemcpyAsync",
             "Memset (Device)", "cuMemsetD8Async", "_Z4fillPfi"]
    rows = []
    corr = [100 * (rank + 1)]

    def launch(span, api_name, api_kind, dev_name, dev_kind, at, dev=0, stream=7, nbytes=0,
               region=None, call=None, thread=None, tid=None):
        c = corr[0] = corr[0] + 1
        t0 = span["start"] + at if span else at
        base = dict(correlations=c, ranks=rank,
                    threads=span["thread"] if thread is None else thread,
                    tids=span["tid"] if tid is None else tid,
                    regions=span["region"] if region is None else region,
                    call_ids=span["call"] if call is None else call)
        rows.append(dict(base, kinds=api_kind, names_idx=names.index(api_name), devices=-1,
                         contexts=-1, streams=-1, starts_ns=t0, ends_ns=t0 + 20_000))
        kern = dev_kind == 1
        rows.append(dict(base, kinds=dev_kind, names_idx=names.index(dev_name), devices=dev,
                         contexts=1, streams=stream, starts_ns=t0 + 100_000,
                         ends_ns=t0 + 100_000 + (150_000 if kern else 50_000), bytes=nbytes,
                         grid_x=64 if kern else 0, grid_y=1 if kern else 0,
                         grid_z=1 if kern else 0, block_x=256 if kern else 0,
                         block_y=1 if kern else 0, block_z=1 if kern else 0,
                         copy_kinds=1 if dev_kind == 2 else 0,
                         src_kinds=3 if dev_kind == 2 else 0,
                         dst_kinds=2 if dev_kind == 2 else 0))
        return c

    main_launch = sorted((s for s in spans if s["name"] == "launch" and s["thread"] == 0),
                         key=lambda s: s["start"])
    work_launch = [s for s in spans if s["name"] == "launch" and s["thread"] == 1]
    for s in main_launch:
        launch(s, "cudaLaunchKernel", 4, KERNEL, 1, 50_000)
    launch(main_launch[0], "cudaMemcpyAsync", 4, "Memcpy HtoD (Pinned -> Device)", 2, 150_000,
           stream=13, nbytes=1 << 20)
    launch(main_launch[1], "cuMemsetD8Async", 5, "Memset (Device)", 3, 150_000, stream=9,
           nbytes=4096)
    for s in work_launch:
        launch(s, "cudaLaunchKernel", 4, "_Z4fillPfi", 1, 60_000, dev=1, stream=3)
    recs = sorted((s for s in spans if s["name"] == "rec"), key=lambda s: s["start"])
    outer, inner = recs[0], recs[1]
    assert outer["start"] <= inner["start"] and inner["end"] <= outer["end"]
    # inside the inner call (the innermost span of the region wins) ...
    launch(inner, "cudaLaunchKernel", 4, KERNEL, 1, 100_000, call=inner["call"])
    # ... and in the outer call after the inner one returned
    launch(outer, "cudaLaunchKernel", 4, KERNEL, 1, inner["end"] - outer["start"] + 100_000)
    # a thread that recorded no span, outside every span
    unknown = launch(None, "cudaLaunchKernel", 4, KERNEL, 1, spans[0]["start"], region=-1,
                     call=-1, thread=-1, tid=999_999, stream=21)
    full = {c: np.array([r.get(c, 0) for r in rows], dtype=np.int64) for c in COLS}
    with h5py.File(path, "r+") as f:
        g = f.create_group("device")
        g.attrs["description"] = "CUDA activity (fixture)"
        g.attrs["collector"] = "cupti"
        g.attrs["clock"] = "identity"
        g.attrs["dropped"] = np.int64(0)
        g.attrs["cupti_version"] = np.int64(130000)
        g.create_dataset("names", data=names, dtype=h5py.string_dtype())
        for c in COLS:
            g.create_dataset(c, data=full[c])
    for r in rows:
        r["name"] = names[r["names_idx"]]
    return dict(rows=rows, spans=spans, inner=inner, outer=outer, unknown=unknown)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two recordings, ranks 0 and 1 (each in its own interpreter), each
    with a /device added; returns [(path, info), ...]."""
    d = tmp_path_factory.mktemp("device_timeline")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = []
    for rank in (0, 1):
        path = str(d / f"dev_r{rank}.h5")
        done = subprocess.run([sys.executable, "-c", RECORD, path, str(rank)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        out.append((path, add_device(path, rank)))
    return out


def cli(build_dir, *args):
    exe = build_dir / "spanscope"
    if not exe.exists():
        pytest.skip(f"{exe} is missing: build first")
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def load_json(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def span_ext_ids(doc, spans, base_ns, pid=0):
    """The External id of each fixture span (by (tid, start ns, name)) in doc."""
    by_key = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["pid"] == pid:
            start = base_ns + round(float(e["ts"]) * 1000)
            by_key[(e["tid"], start, e["name"])] = e["args"]["External id"]
    return {(s["thread"], s["start"], s["name"]): by_key[(s["thread"], s["start"], s["name"])]
            for s in spans}


def check_chrome(doc, info, pid=0, gpu_name="GPU {}"):
    """The kineto form of the fixture's activities in doc (a JSON trace of
    one input whose host process is pid)."""
    ev = doc["traceEvents"]
    base = int(doc["baseTimeNanoseconds"])
    spans = [s for s in info["spans"]]
    ext = span_ext_ids(doc, spans, base, pid)
    xs = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    ids = [e["args"]["External id"] for e in xs]
    assert len(ids) == len(set(ids)), "External id is unique per span"
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
               if e.get("ph") == "M" and e["name"] == "thread_name"}
    act = [e for e in ev if e.get("ph") == "X" and e.get("cat") in CAT.values()]
    mine = {}
    for e in act:
        mine.setdefault(e["args"]["correlation"], []).append(e)
    flows = {}
    for e in ev:
        if e.get("cat") == "ac2g":
            flows.setdefault((e["id"], e["ph"]), []).append(e)
    by_span = {(s["thread"], s["call"]): s for s in spans}
    gpu_pids = {}
    for r in info["rows"]:
        got = [e for e in mine[r["correlations"]] if e["cat"] == CAT[r["kinds"]]]
        assert len(got) == 1, (r, got)
        e = got[0]
        assert e["name"] == r["name"]
        assert base + round(float(e["ts"]) * 1000) == r["starts_ns"]
        assert round(float(e["dur"]) * 1000) == r["ends_ns"] - r["starts_ns"]
        span = by_span.get((r["threads"], r["call_ids"]))
        if span is None:  # launched outside every span: no External id
            assert "External id" not in e["args"]
        else:
            assert e["args"]["External id"] == ext[(span["thread"], span["start"], span["name"])]
        if r["kinds"] >= 4:  # the API call, on its thread's row, the flow's start
            if r["threads"] >= 0:
                assert (e["pid"], e["tid"]) == (pid, r["threads"])
            else:
                assert threads[(e["pid"], e["tid"])] == f"thread {r['tids']} (CUDA)"
            (s,) = flows[(r["correlations"], "s")]
            assert (s["pid"], s["tid"], s["ts"], s["name"]) == (e["pid"], e["tid"], e["ts"], "ac2g")
        else:  # the device row, on its GPU's stream, the flow's end
            assert e["args"]["device"] == r["devices"] and e["args"]["stream"] == r["streams"]
            assert e["tid"] == r["streams"]
            assert procs[e["pid"]] == gpu_name.format(r["devices"])
            assert threads[(e["pid"], e["tid"])] == f"stream {r['streams']}"
            gpu_pids.setdefault(r["devices"], set()).add(e["pid"])
            if r["kinds"] == 1:
                assert e["args"]["grid"] == [64, 1, 1] and e["args"]["block"] == [256, 1, 1]
            else:
                assert e["args"]["bytes"] == r["bytes"]
                assert e["args"]["memory bandwidth (GB/s)"] == pytest.approx(
                    r["bytes"] / (r["ends_ns"] - r["starts_ns"]))
            (f,) = flows[(r["correlations"], "f")]
            assert (f["pid"], f["tid"], f["ts"], f.get("bp")) == (e["pid"], e["tid"], e["ts"], "e")
    assert all(len(v) == 1 for v in gpu_pids.values()) and len(gpu_pids) == 2
    assert not set().union(*gpu_pids.values()) & {pid}
    # the recursive region: the inner call's launch has the inner call's id
    inner, outer = info["inner"], info["outer"]
    ki = ext[(inner["thread"], inner["start"], "rec")]
    ko = ext[(outer["thread"], outer["start"], "rec")]
    assert ki != ko
    rec_rows = [e for e in act if e["cat"] == "cuda_runtime" and
                e["args"].get("External id") in (ki, ko)]
    assert sorted(e["args"]["External id"] for e in rec_rows) == sorted([ki, ko])
    return act


@pytest.mark.parametrize("ext", [".json", ".json.gz"])
def test_convert_chrome_kineto_form(files, build_dir, tmp_path, ext):
    path, info = files[0]
    out = tmp_path / f"c{ext}"
    done = cli(build_dir, "convert", path, out)
    assert done.returncode == 0, done.stderr
    act = check_chrome(load_json(out), info)
    assert len(act) == len(info["rows"])


def test_export_chrome_scope_profiler_args(files, build_dir, tmp_path):
    """spanscope export chrome (scope-profiler's export, its own args on each
    span) gets the External ids and the device rows too."""
    path, info = files[0]
    out = tmp_path / "e.json"
    done = cli(build_dir, "export", "chrome", path, "-o", out)
    assert done.returncode == 0, done.stderr
    doc = load_json(out)
    check_chrome(doc, info)
    # scope-profiler's args stay beside the id
    xs = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
    assert all(len(e["args"]) > 1 for e in xs), xs[:2]


def test_export_chrome_of_a_rank(files, build_dir, tmp_path):
    """A rank-1 file exported with --ranks 1: its process is rank 1's, its
    GPUs and API rows go with it."""
    path, info = files[1]
    out = tmp_path / "r1.json"
    done = cli(build_dir, "export", "chrome", path, "-o", out, "--ranks", "1")
    assert done.returncode == 0, done.stderr
    doc = load_json(out)
    pid = {e["pid"] for e in doc["traceEvents"] if e.get("cat") == "user_annotation"}.pop()
    check_chrome(doc, info, pid=pid)


def test_hta_sees_the_kernels(files, build_dir, tmp_path):
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:
        pytest.skip(f"holistictraceanalysis is not installed ({e}): "
                    "scripts/install-deps.sh installs it")
    path, info = files[0]
    d = tmp_path / "hta"
    d.mkdir()
    done = cli(build_dir, "convert", path, d / "rank0.pt.trace.json")
    assert done.returncode == 0, done.stderr
    ta = TraceAnalysis(trace_dir=str(d))
    df = ta.t.get_trace(0)
    sym = ta.t.symbol_table.get_sym_table()
    cats = {sym[c] for c in df["cat"].unique()}
    assert {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime"} <= cats
    kernels = df[df["cat"].map(lambda c: sym[c]) == "kernel"]
    assert (kernels["stream"] >= 0).all()
    want = [r for r in info["rows"] if r["kinds"] == 1]
    assert len(kernels) == len(want)
    # HTA's correlation of a kernel to its runtime call (its own join)
    runtime = df[df["cat"].map(lambda c: sym[c]) == "cuda_runtime"]
    assert set(kernels["correlation"]) <= set(runtime["correlation"])
    _kernel_type, kernel_df = ta.get_gpu_kernel_breakdown(visualize=False)
    names = set(kernel_df["name"])
    assert KERNEL in names and "_Z4fillPfi" in names
    # HTA rounds times down to whole µs: each kernel within 1 µs
    for n in (KERNEL, "_Z4fillPfi"):
        mine = [r for r in want if r["name"] == n]
        us = sum(r["ends_ns"] - r["starts_ns"] for r in mine) / 1e3
        got = kernel_df[kernel_df["name"] == n]["sum (us)"].sum()
        assert abs(got - us) <= len(mine), (n, got, us)
    mem = kernel_df[kernel_df["kernel_type"] == "MEMORY"]
    assert set(mem["name"]) == {"Memcpy HtoD (Pinned -> Device)", "Memset (Device)"}
    # HTA's launch statistics (its join of cuda_runtime rows to what they
    # launched, by correlation): each launch's CPU time, GPU time and
    # delay, to the µs (driver calls are not runtime launches)
    stats = ta.get_cuda_kernel_launch_stats(visualize=False)[0]
    by_corr = {}
    for r in info["rows"]:
        by_corr.setdefault(r["correlations"], {})[r["kinds"]] = r
    launched = {c for c, v in by_corr.items() if 4 in v and v.keys() & {1, 2, 3}}
    assert set(stats["correlation"]) == launched
    for _, row in stats.iterrows():
        v = by_corr[row["correlation"]]
        api, kern = v[4], next(v[k] for k in (1, 2, 3) if k in v)
        assert abs(row["cpu_duration"] - (api["ends_ns"] - api["starts_ns"]) / 1e3) <= 1
        assert abs(row["gpu_duration"] - (kern["ends_ns"] - kern["starts_ns"]) / 1e3) <= 1
        assert abs(row["launch_delay"] - (kern["starts_ns"] - api["ends_ns"]) / 1e3) <= 1
    # HTA's temporal breakdown: the kernels' time is compute time (kernels
    # of the two threads' GPUs may overlap: at most their sum, at least the
    # longest kernel)
    tb = ta.get_temporal_breakdown(visualize=False)
    busy = sum(r["ends_ns"] - r["starts_ns"] for r in want) / 1e3
    longest = max(r["ends_ns"] - r["starts_ns"] for r in want) / 1e3
    assert longest - 1 <= tb["compute_time(us)"].iloc[0] <= busy + len(want)


pb = None


def _pb():
    return pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                               reason="the perfetto package is not installed")


def read_pftrace(path):
    """Device tracks, slices and flows of a .pftrace the way trace processor
    reads them: {uuid: descriptor}, [(track uuid, name, cat, start, end,
    flow_ids, terminating_flow_ids)] for the device sequence's slices."""
    pb = _pb()
    trace = pb.Trace.FromString(open(path, "rb").read())
    tracks, open_, slices = {}, {}, []
    for pkt in trace.packet:
        if pkt.HasField("track_descriptor"):
            tracks[pkt.track_descriptor.uuid] = pkt.track_descriptor
        if pkt.HasField("track_event") and pkt.trusted_packet_sequence_id == 3:
            te = pkt.track_event
            assert pkt.timestamp_clock_id == 3
            if te.type == te.TYPE_SLICE_BEGIN:
                open_.setdefault(te.track_uuid, []).append(
                    [te.track_uuid, te.name, list(te.categories), pkt.timestamp, None,
                     list(te.flow_ids), list(te.terminating_flow_ids)])
            elif te.type == te.TYPE_SLICE_END:
                s = open_[te.track_uuid].pop()
                s[4] = pkt.timestamp
                slices.append(tuple(s))
    assert not any(open_.values())
    return tracks, slices


def check_pftrace(path, infos):
    tracks, slices = read_pftrace(path)
    gpus = {u: t.process for u, t in tracks.items() if t.HasField("process")
            and t.process.process_name.startswith("GPU ")}
    streams = {u: t for u, t in tracks.items() if t.parent_uuid in gpus}
    threads = {u: t.thread for u, t in tracks.items() if t.HasField("thread")}
    want = [r for info in infos for r in info["rows"]]
    assert len(slices) == len(want)
    by_start = {}
    for s in slices:
        by_start.setdefault((s[3], s[1]), []).append(s)
    starts = {}
    ends = {}
    for r in want:
        (s,) = [x for x in by_start[(r["starts_ns"], r["name"])] if x[2] == [CAT[r["kinds"]]]]
        assert s[4] == r["ends_ns"]
        if r["kinds"] <= 3:
            t = streams[s[0]]
            assert t.name == f"stream {r['streams']}"
            assert gpus[t.parent_uuid].process_name.startswith(f"GPU {r['devices']}")
            (fid,) = s[6]
            ends.setdefault(fid, []).append(r)
        else:
            th = threads[s[0]]
            if r["threads"] >= 0:
                assert th.tid == r["threads"]
            else:
                assert th.thread_name == f"thread {r['tids']} (CUDA)"
            (fid,) = s[5]
            assert fid not in starts
            starts[fid] = r
    assert set(starts) == set(ends)
    for fid, rs in ends.items():
        assert all(r["correlations"] == starts[fid]["correlations"] and
                   r["ranks"] == starts[fid]["ranks"] for r in rs)
    return gpus


def test_convert_pftrace_device_tracks(files, build_dir, tmp_path):
    path, info = files[0]
    out = tmp_path / "c.pftrace"
    done = cli(build_dir, "convert", path, out)
    assert done.returncode == 0, done.stderr
    gpus = check_pftrace(out, [info])
    assert sorted(p.process_name for p in gpus.values()) == ["GPU 0", "GPU 1"]


@pytest.mark.parametrize("ext", [".json", ".pftrace"])
def test_merge_traces_keep_each_ranks_device(files, build_dir, tmp_path, ext):
    out = tmp_path / f"m{ext}"
    done = cli(build_dir, "merge", "-o", out, files[0][0], files[1][0])
    assert done.returncode == 0, done.stderr
    if ext == ".pftrace":
        gpus = check_pftrace(out, [files[0][1], files[1][1]])
        assert len(gpus) == 4
        return
    doc = load_json(out)
    ev = doc["traceEvents"]
    act = [e for e in ev if e.get("ph") == "X" and e.get("cat") in CAT.values()]
    assert len(act) == sum(len(i["rows"]) for _, i in files)
    names = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and
                   e["name"] == "process_name" and e["args"]["name"].startswith("GPU"))
    assert names == ["GPU 0 (rank 0)", "GPU 0 (rank 1)", "GPU 1 (rank 0)", "GPU 1 (rank 1)"]
    s_ids = [e["id"] for e in ev if e.get("cat") == "ac2g" and e["ph"] == "s"]
    assert len(s_ids) == len(set(s_ids)) == sum(
        sum(1 for r in i["rows"] if r["kinds"] >= 4) for _, i in files)


def test_merge_h5_carries_device(files, build_dir, tmp_path):
    out = tmp_path / "m.h5"
    done = cli(build_dir, "merge", "-o", out, files[0][0], files[1][0])
    assert done.returncode == 0, done.stderr
    with h5py.File(out) as f:
        assert "device" in f, list(f)
        g = f["device"]
        got = {c: g[c][()] for c in COLS}
        names = [n.decode() if isinstance(n, bytes) else n for n in g["names"][()]]
        rnames = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        assert g.attrs["collector"] in ("cupti", b"cupti")
    rows = [dict((c, int(got[c][i])) for c in COLS) for i in range(len(got["kinds"]))]
    assert len(rows) == sum(len(i["rows"]) for _, i in files)
    for rank, (path, info) in enumerate(files):
        mine = sorted((r["correlations"], r["kinds"], names[r["names_idx"]], r["starts_ns"],
                       r["ends_ns"], r["streams"], r["devices"],
                       rnames[r["regions"]] if r["regions"] >= 0 else None)
                      for r in rows if r["ranks"] == rank)
        spans_name = {s["region"]: s["name"] for s in info["spans"]}
        want = sorted((r["correlations"], r["kinds"], r["name"], r["starts_ns"], r["ends_ns"],
                       r["streams"], r["devices"],
                       spans_name[r["regions"]] if r["regions"] >= 0 else None)
                      for r in info["rows"])
        assert mine == want


# ---- the reader: sps_device_read and every writer refuse a bad /device ----

BAD = [("kinds", 0, 9, "/device/kinds"), ("names_idx", 0, 99, "/device/names_idx"),
       ("regions", 0, 4321, "/device/regions"), ("threads", 0, -7, "/device/threads"),
       ("devices", 1, -1, "/device/devices"), ("devices", 1, 1 << 20, "/device/devices"),
       ("streams", 1, -2, "/device/streams"), ("ranks", 0, -1, "/device/ranks"),
       ("ends_ns", 1, 0, "ends"), ("call_ids", 0, -5, "/device/call_ids")]


def _bad_copy(src, dst, column, row, value):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        d = f["device"][column]
        v = d[()]
        v[row] = value
        d[...] = v


@pytest.mark.parametrize("column,row,value,says", BAD)
def test_bad_device_is_a_format_error(files, build_dir, tmp_path, column, row, value, says):
    bad = tmp_path / "bad.h5"
    _bad_copy(files[0][0], bad, column, row, value)
    for args, out in ((("convert", bad), tmp_path / "x.json"),
                      (("convert", bad), tmp_path / "x.pftrace"),
                      (("export", "chrome", bad, "-o"), tmp_path / "y.json"),
                      (("merge", "-o"), tmp_path / "z.h5"),
                      (("merge", "-o"), tmp_path / "z.json")):
        cmd = [*args, out] if args[0] != "merge" else [*args, out, bad, files[1][0]]
        done = cli(build_dir, *cmd)
        assert done.returncode != 0 and done.returncode < 128, (cmd, done.returncode)
        assert says in done.stderr, (cmd, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not out.exists()


@pytest.mark.parametrize("what", ["short", "missing", "float", "2d"])
def test_bad_device_shape_is_a_format_error(files, build_dir, tmp_path, what):
    bad = tmp_path / "bad.h5"
    shutil.copy(files[0][0], bad)
    with h5py.File(bad, "r+") as f:
        g = f["device"]
        v = g["streams"][()]
        del g["streams"]
        if what == "short":
            g.create_dataset("streams", data=v[:-1])
        elif what == "float":
            g.create_dataset("streams", data=v.astype(np.float64))
        elif what == "2d":
            g.create_dataset("streams", data=np.stack([v, v]))
    out = tmp_path / "x.json"
    done = cli(build_dir, "convert", bad, out)
    assert done.returncode != 0 and done.returncode < 128, done.returncode
    assert "/device/streams" in done.stderr, done.stderr
    assert not out.exists()


def test_device_read_c_api(files, build_dir, tmp_path):
    """sps_device_read through ctypes: the columns as the fixture wrote them,
    a file without /device, and a bad one (SPS_EFORMAT, sps_last_error)."""
    import ctypes

    so = build_dir / "libspanscope.so.1"
    if not so.exists():
        pytest.skip(f"{so} is missing: build first")
    lib = ctypes.CDLL(str(so))
    P = ctypes.POINTER(ctypes.c_int64)
    S = ctypes.POINTER(ctypes.c_char_p)

    class Device(ctypes.Structure):
        _fields_ = ([("n", ctypes.c_size_t)] + [(c, P) for c in COLS] +
                    [("nnames", ctypes.c_size_t), ("names", S),
                     ("nregion_names", ctypes.c_size_t), ("region_names", S),
                     ("present", ctypes.c_int), ("collector", ctypes.c_char_p),
                     ("clock", ctypes.c_char_p), ("dropped", ctypes.c_int64),
                     ("cupti_version", ctypes.c_int64), ("impl_", ctypes.c_void_p)])

    lib.sps_device_read.argtypes = [ctypes.c_char_p, ctypes.POINTER(Device)]
    lib.sps_device_free.argtypes = [ctypes.POINTER(Device)]
    lib.sps_last_error.restype = ctypes.c_char_p
    path, info = files[0]
    d = Device()
    assert lib.sps_device_read(path.encode(), ctypes.byref(d)) == 0
    try:
        assert d.present == 1 and d.n == len(info["rows"])
        assert d.collector == b"cupti" and d.clock == b"identity"
        assert d.cupti_version == 130000
        for c in ("kinds", "correlations", "starts_ns", "streams", "call_ids", "regions"):
            assert [getattr(d, c)[i] for i in range(d.n)] == [r.get(c, 0) for r in info["rows"]]
        assert [d.names[d.names_idx[i]].decode() for i in range(d.n)] == \
            [r["name"] for r in info["rows"]]
    finally:
        lib.sps_device_free(ctypes.byref(d))
    plain = tmp_path / "plain.h5"
    shutil.copy(path, plain)
    with h5py.File(plain, "r+") as f:
        del f["device"]
    assert lib.sps_device_read(str(plain).encode(), ctypes.byref(d)) == 0
    assert d.present == 0 and d.n == 0
    lib.sps_device_free(ctypes.byref(d))
    bad = tmp_path / "bad.h5"
    _bad_copy(path, bad, "kinds", 0, 0)
    rc = lib.sps_device_read(str(bad).encode(), ctypes.byref(d))
    assert rc < 0
    assert b"/device/kinds[0]" in lib.sps_last_error()
    lib.sps_device_free(ctypes.byref(d))


# ---- sps_timeline_write_device: a caller's spans and device activity ----

def _ctypes_lib(build_dir):
    import ctypes
    so = build_dir / "libspanscope.so.1"
    if not so.exists():
        pytest.skip(f"{so} is missing: build first")
    return ctypes.CDLL(str(so))


@pytest.mark.parametrize("ext", [".json", ".pftrace"])
def test_timeline_write_device_c_api(build_dir, tmp_path, ext):
    """The torch face's writer (spans held by the caller): API rows on the
    thread of their tid (a tid of no thread: its own row), the launching
    span by region name and time (a recursive region: the inner call),
    kernels on their GPU's stream, flows; a bad index is SPS_EINVAL."""
    import ctypes
    lib = _ctypes_lib(build_dir)
    I64, P = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)
    S = ctypes.POINTER(ctypes.c_char_p)

    class Span(ctypes.Structure):
        _fields_ = [("start_ns", I64), ("end_ns", I64), ("self_ns", I64), ("parent", I64),
                    ("region", ctypes.c_uint32), ("thread", ctypes.c_uint32),
                    ("depth", ctypes.c_uint32), ("stack", ctypes.c_uint32),
                    ("seq", ctypes.c_uint64)]

    class Timeline(ctypes.Structure):
        _fields_ = [("nnames", ctypes.c_size_t), ("names", S), ("nthreads", ctypes.c_size_t),
                    ("thread_ids", P), ("thread_names", S), ("nspans", ctypes.c_size_t),
                    ("spans", ctypes.POINTER(Span)), ("args", S), ("extra", ctypes.c_char_p),
                    ("base_ns", I64), ("process_name", ctypes.c_char_p),
                    ("trace_name", ctypes.c_char_p), ("rank", I64), ("world_size", I64),
                    ("wall_anchor_ns", I64), ("mono_anchor_ns", I64),
                    ("hostname", ctypes.c_char_p), ("ncounters", ctypes.c_size_t),
                    ("counters", ctypes.c_void_p), ("pid", I64), ("backend", ctypes.c_char_p)]

    class Device(ctypes.Structure):
        _fields_ = ([("n", ctypes.c_size_t)] + [(c, P) for c in COLS] +
                    [("nnames", ctypes.c_size_t), ("names", S),
                     ("nregion_names", ctypes.c_size_t), ("region_names", S),
                     ("present", ctypes.c_int), ("collector", ctypes.c_char_p),
                     ("clock", ctypes.c_char_p), ("dropped", I64),
                     ("cupti_version", I64), ("impl_", ctypes.c_void_p)])

    base = 10_000_000_000
    names = (ctypes.c_char_p * 2)(b"step", b"rec")
    tids = (I64 * 2)(4242, 4343)
    # step [0, 1 ms] on thread 0 holding rec [100, 900] holding rec [200, 500];
    # step [0, 1 ms] on thread 1
    sp = [(0, 1_000_000, 0, 0), (0, 1_000_000, 0, 1), (100_000, 900_000, 1, 0),
          (200_000, 500_000, 1, 0)]
    spans = (Span * 4)(*[Span(base + a, base + b, 0, -1, r, t, 0, 0, 2 ** 64 - 1)
                         for a, b, r, t in sp])
    t = Timeline(2, names, 2, tids, None, 4, spans, None, None, base, None, b"t", -1, 0,
                 0, 0, None, 0, None, 777, None)
    # API rows: (tid, region in region_names, start), each launching a kernel
    region_names = (ctypes.c_char_p * 2)(b"rec", b"step")
    api = [(4242, 0, 300_000), (4242, 0, 600_000), (4343, 1, 50_000), (99, -1, 10_000)]
    rows = []
    for k, (tid, rg, at) in enumerate(api):
        c = 500 + k
        rows.append(dict(kinds=4, names_idx=1, correlations=c, tids=tid, regions=rg,
                         starts_ns=base + at, ends_ns=base + at + 5_000, devices=-1,
                         streams=-1))
        rows.append(dict(kinds=1, names_idx=0, correlations=c, tids=tid, regions=rg,
                         starts_ns=base + at + 20_000, ends_ns=base + at + 70_000, devices=k % 2,
                         streams=7))
    n = len(rows)
    arrs = {c: (I64 * n)(*[r.get(c, 0) for r in rows]) for c in COLS}
    dnames = (ctypes.c_char_p * 2)(b"_Z1kv", b"cudaLaunchKernel")
    d = Device()
    d.n = n
    for c in ("kinds", "names_idx", "correlations", "tids", "regions", "starts_ns", "ends_ns",
              "devices", "streams"):
        setattr(d, c, ctypes.cast(arrs[c], P))
    d.nnames, d.names = 2, ctypes.cast(dnames, S)
    d.nregion_names, d.region_names = 2, ctypes.cast(region_names, S)
    lib.sps_timeline_write_device.argtypes = [ctypes.c_char_p, ctypes.POINTER(Timeline),
                                              ctypes.c_void_p, ctypes.POINTER(Device)]
    lib.sps_last_error.restype = ctypes.c_char_p
    out = tmp_path / f"t{ext}"
    assert lib.sps_timeline_write_device(str(out).encode(), ctypes.byref(t), None,
                                         ctypes.byref(d)) == 0, lib.sps_last_error()
    if ext == ".json":
        doc = load_json(out)
        ev = doc["traceEvents"]
        ext_of = {(e["tid"], round(float(e["ts"]) * 1000)): e["args"]["External id"]
                  for e in ev if e.get("cat") == "user_annotation"}
        rt = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
        kern = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "kernel"}
        assert rt[500]["args"]["External id"] == ext_of[(4242, 200_000)]  # the inner rec
        assert rt[501]["args"]["External id"] == ext_of[(4242, 100_000)]  # the outer rec
        assert rt[502]["args"]["External id"] == ext_of[(4343, 0)]        # thread 1's step
        assert "External id" not in rt[503]["args"]
        assert (rt[500]["pid"], rt[500]["tid"]) == (777, 4242)
        rows99 = {e["tid"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"
                  and e["args"]["name"] == "thread 99 (CUDA)"}
        assert rt[503]["tid"] in rows99
        for c in range(500, 504):
            assert kern[c]["args"]["External id" if c != 503 else "correlation"] == (
                rt[c]["args"]["External id"] if c != 503 else 503)
            assert kern[c]["tid"] == 7 and kern[c]["pid"] != 777
        flows = [(e["ph"], e["id"]) for e in ev if e.get("cat") == "ac2g"]
        assert sorted(flows) == sorted([("s", c) for c in range(500, 504)] +
                                       [("f", c) for c in range(500, 504)])
    else:
        tracks, slices = read_pftrace(out)
        gpus = sorted(t.process.process_name for t in tracks.values()
                      if t.HasField("process") and t.process.process_name.startswith("GPU"))
        assert gpus == ["GPU 0", "GPU 1"]
        assert len(slices) == n
        starts = {s[5][0] for s in slices if s[5]}
        ends = {s[6][0] for s in slices if s[6]}
        assert len(starts) == 4 and starts == ends
    # a region index out of range: refused, nothing written
    arrs["regions"][0] = 9
    bad = tmp_path / f"bad{ext}"
    rc = lib.sps_timeline_write_device(str(bad).encode(), ctypes.byref(t), None, ctypes.byref(d))
    assert rc < 0 and b"device: regions[0]" in lib.sps_last_error()
    assert not bad.exists()


def test_export_chrome_empty_device_still_gives_ids(files, build_dir, tmp_path):
    """A file whose /device has no rows (a session with the collector on
    that launched nothing): scope-profiler's export still gives every span
    its External id; a file without /device does not."""
    path, _info = files[0]
    empty, plain = tmp_path / "empty.h5", tmp_path / "plain.h5"
    shutil.copy(path, empty)
    shutil.copy(path, plain)
    with h5py.File(empty, "r+") as f:
        g = f["device"]
        for c in [*COLS, "names"]:
            dt = g[c].dtype
            del g[c]
            g.create_dataset(c, shape=(0,), dtype=dt)
    with h5py.File(plain, "r+") as f:
        del f["device"]
    for src, want in ((empty, True), (plain, False)):
        out = tmp_path / f"{src.stem}.json"
        done = cli(build_dir, "export", "chrome", src, "-o", out)
        assert done.returncode == 0, done.stderr
        xs = [e for e in load_json(out)["traceEvents"] if e.get("cat") == "user_annotation"]
        assert xs and all(("External id" in e["args"]) == want for e in xs)
        assert not [e for e in load_json(out)["traceEvents"] if e.get("cat") in CAT.values()]
