"""Every writer carries the stack samples (issue 34 part 2), for files
recorded from Python with the sampler on (Python frames named by the
frame walker):

* ``spanscope export chrome``: the JSON loads with json; one instant per
  sample as tensorplay writes them (ph "i", s "t", cat "python_function",
  name the leaf function, args.stack "file:line (function)" innermost
  first, region, weight), on the pid/tid row of its thread's spans; a
  thread without spans on a row of its own; read back, no sample became a
  span;
* ``spanscope merge`` to .pftrace: PerfSample packets that Perfetto's own
  schema (the ``perfetto`` package's perfetto_trace_pb2) parses with no
  unknown field, whose interned callstacks resolve the way trace processor
  resolves them (root first) to the leaf function, on the thread track of
  the spans they fall in; and, where a trace processor binary can run,
  its perf_sample table;
* ``spanscope convert`` of an .h5 to .json / .json.gz / .pftrace: the same
  instants and PerfSample packets, on the same rows;
* ``spanscope merge`` to .h5: /samples holds both inputs' samples, each
  under its rank, with its region's name;
* a /samples with an index out of range: export and merge fail with a
  message, write nothing and do not crash.

The expectations are read from the files with h5py, independently of the
library's reader.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

h5py = pytest.importorskip("h5py")

from spanscope import _ext  # noqa: E402

if not hasattr(_ext, "sampling_start"):  # pragma: no cover - every build has it
    pytest.skip("this build has no stack sampler", allow_module_level=True)

RECORD = textwrap.dedent("""
    import sys, threading, time
    from spanscope import _ext

    def sf_leaf_py(n):
        x = 0
        for i in range(n):
            x += i * i
        return x

    def sf_caller_py(n):
        return sf_leaf_py(n)

    def burn(seconds):
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            sf_caller_py(20000)

    path, rank = sys.argv[1], int(sys.argv[2])
    _ext.setup(path, rank=rank, size=2, local=True)
    _ext.sampling_start(1000)
    spanless = threading.Thread(target=burn, args=(0.15,), name="nospans")
    spanless.start()
    with _ext.region_new(f"py.outer{rank}"):
        burn(0.05)
        with _ext.region_new("py.inner"):
            burn(0.25)
    spanless.join()
    _ext.finalize(path, False)  # while sampling: the file says its rate
    _ext.sampling_stop()
    _ext.shutdown()
""")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two sampled recordings, ranks 0 and 1 (each in its own interpreter)."""
    d = tmp_path_factory.mktemp("samples_formats")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    paths = []
    for rank in (0, 1):
        path = str(d / f"py_r{rank}.h5")
        done = subprocess.run([sys.executable, "-c", RECORD, path, str(rank)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        paths.append(path)
    return paths


def cli(build_dir, *args):
    return subprocess.run([str(build_dir / "spanscope"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def read_samples(path):
    """/samples of path as dicts: time, thread, tid, rank, region name (None
    outside spans), weight, stack [(function, file, line), ...] innermost
    first."""
    with h5py.File(path) as f:
        g = f["samples"]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        dec = [[x.decode() if isinstance(x, bytes) else x for x in g[k][()]]
               for k in ("frame_functions", "frame_files")]
        lines = g["frame_lines"][()]
        off, frames = g["stack_offsets"][()], g["stack_frames"][()]
        out = []
        for i in range(len(g["times_ns"])):
            k = int(g["stacks"][i])
            stack = [(dec[0][f], dec[1][f], int(lines[f])) for f in frames[off[k]:off[k + 1]]]
            r = int(g["regions"][i])
            out.append(dict(t=int(g["times_ns"][i]), thread=int(g["threads"][i]),
                            tid=int(g["tids"][i]), rank=int(g["ranks"][i]),
                            region=names[r] if r >= 0 else None,
                            weight=int(g["weights"][i]), stack=stack))
    return out


def leaf(sample):
    return sample["stack"][0][0] if sample["stack"] and sample["stack"][0][0] else "<unknown>"


def test_recordings_have_python_samples(files):
    for path in files:
        s = read_samples(path)
        inner = [x for x in s if x["region"] == "py.inner"]
        assert sum(x["weight"] for x in inner) > 100  # 250 ms at 1 kHz
        assert sum(leaf(x) == "sf_leaf_py" for x in inner) > len(inner) // 2
        assert any(x["thread"] < 0 for x in s)  # the thread without spans


def check_chrome_instants(doc, samples, outer="py.outer0"):
    """doc (a Chrome JSON trace of the file whose /samples are samples) has
    every sample as tensorplay's instant, on its thread's row, inside its
    span; the thread without spans on a row of its own.  Returns the
    instants."""
    events = doc["traceEvents"]
    inst = [e for e in events if e.get("cat") == "python_function"]
    assert len(inst) == len(samples)
    for e in inst:
        assert e["ph"] == "i" and e["s"] == "t"
        assert isinstance(e["args"]["stack"], list) and e["args"]["weight"] >= 1
    # the same samples: (leaf, region, weight, stack text) as a multiset
    def key_of_sample(x):
        st = [f"{fi}:{li} ({fn})" if fi and li > 0 else None for fn, fi, li in x["stack"]]
        return (leaf(x), x["region"], x["weight"], tuple(s for s in st if s))

    def key_of_event(e):
        st = [s for s in e["args"]["stack"] if s.rsplit(" (", 1)[0].rsplit(":", 1)[-1].isdigit()]
        return (e["name"], e["args"].get("region"), e["args"]["weight"], tuple(st))
    assert sorted(map(key_of_sample, samples), key=repr) == sorted(map(key_of_event, inst), key=repr)
    # a Python frame as tensorplay writes it: "file:line (function)"
    leaf_ev = next(e for e in inst if e["name"] == "sf_leaf_py")
    assert leaf_ev["args"]["stack"][0].endswith(" (sf_leaf_py)")
    assert ":" in leaf_ev["args"]["stack"][0]
    # samples in py.inner sit on the row of py.inner's span
    rows = {(e["pid"], e["tid"]) for e in events if e["ph"] == "X" and e["name"] == "py.inner"}
    assert len(rows) == 1
    assert {(e["pid"], e["tid"]) for e in inst if e["args"].get("region") == "py.inner"} == rows
    # ... and in time inside it
    x = next(e for e in events if e["ph"] == "X" and e["name"] == "py.inner")
    for e in inst:
        if e["args"].get("region") == "py.inner":
            assert x["ts"] <= e["ts"] <= x["ts"] + x["dur"]
    # the thread without spans: a row of its own, named
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spanless = [e for e in inst if "region" not in e["args"] and (e["pid"], e["tid"]) not in rows]
    assert spanless
    for e in spanless:
        assert names[(e["pid"], e["tid"])].endswith("(samples)")
    # no sample became a span
    assert sorted({e["name"] for e in events if e["ph"] == "X"}) == ["py.inner", outer]
    return inst


def test_export_chrome_carries_every_sample(files, build_dir, tmp_path):
    out = tmp_path / "a.json"
    done = cli(build_dir, "export", "chrome", files[0], "-o", out)
    assert done.returncode == 0, done.stderr
    check_chrome_instants(json.loads(out.read_text()), read_samples(files[0]))
    # read back (the JSON reader): the spans, and no sample became a span
    back = tmp_path / "back.h5"
    done = cli(build_dir, "convert", out, back)
    assert done.returncode == 0, done.stderr
    with h5py.File(back) as f:
        got = sorted(n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()])
    assert got == ["py.inner", "py.outer0"]


def _interned_callstacks(trace, pb):
    """Per sequence: function names, frames and callstacks as trace
    processor keeps them (the sequence's interned data)."""
    seqs = {}
    for p in trace.packet:
        if not p.HasField("interned_data"):
            continue
        s = seqs.setdefault(p.trusted_packet_sequence_id,
                            {"fn": {}, "frames": {}, "cs": {}, "maps": {}, "paths": {}})
        d = p.interned_data
        s["fn"].update({x.iid: x.str.decode() for x in d.function_names})
        s["paths"].update({x.iid: x.str.decode() for x in d.mapping_paths})
        s["maps"].update({x.iid: x for x in d.mappings})
        s["frames"].update({x.iid: x for x in d.frames})
        s["cs"].update({x.iid: list(x.frame_ids) for x in d.callstacks})
    return seqs


def perf_samples(path):
    """The PerfSample packets of the Perfetto trace at path, each checked
    against Perfetto's schema (no unknown field, absolute monotonic
    timestamps, on a thread with a track, callstack frames resolving as
    trace processor resolves them): {pid: [(timestamp, tid, leaf
    function)]}, and the threads {(pid, tid): name}."""
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the perfetto package is not installed")
    from google.protobuf import unknown_fields
    trace = pb.Trace.FromString(open(path, "rb").read())

    def no_unknown(msg):
        """msg and every sub-message hold only fields the schema knows."""
        assert len(unknown_fields.UnknownFieldSet(msg)) == 0
        for fd, value in msg.ListFields():
            if fd.message_type is None:
                continue
            for v in ([value] if hasattr(value, "ListFields") else list(value)):
                if hasattr(v, "ListFields"):
                    no_unknown(v)
    threads = {}
    for p in trace.packet:
        no_unknown(p)
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread"):
            t = p.track_descriptor.thread
            threads[(t.pid, t.tid)] = t.thread_name
    seqs = _interned_callstacks(trace, pb)
    got = {}
    for p in trace.packet:
        if not p.HasField("perf_sample"):
            continue
        s = p.perf_sample
        assert p.timestamp_clock_id == 3  # BUILTIN_CLOCK_MONOTONIC, absolute
        st = seqs[p.trusted_packet_sequence_id]
        frames = [st["frames"][f] for f in st["cs"][s.callstack_iid]]  # root first
        for fr in frames:  # every frame resolves as trace processor resolves it
            assert fr.mapping_id in st["maps"] and fr.function_name_id in st["fn"]
            for pid_ in st["maps"][fr.mapping_id].path_string_ids:
                assert pid_ in st["paths"]
        leaf_name = st["fn"][frames[-1].function_name_id] if frames else "<unknown>"
        assert (s.pid, s.tid) in threads
        got.setdefault(s.pid, []).append((p.timestamp, s.tid, leaf_name))
    return got, threads


def check_perf_samples(got, samples, inner_tid):
    """got (one process's perf_samples) are samples (a file's /samples, on
    the clock they were taken on), each weight times up to 64, the samples
    of py.inner on the thread inner_tid (its spans' row)."""
    want = sorted((x["t"], leaf(x)) for x in samples for _ in range(min(x["weight"], 64)))
    assert sorted((t, name) for t, _, name in got) == want
    inner_times = {x["t"] for x in samples if x["region"] == "py.inner"}
    assert {t_ for t_, tid_, _ in got if t_ in inner_times} == inner_times
    assert all(tid_ == inner_tid for t_, tid_, _ in got if t_ in inner_times)
    assert any(name == "sf_leaf_py" for _, _, name in got)


def test_merge_pftrace_perf_samples(files, build_dir, tmp_path):
    out = tmp_path / "m.pftrace"
    done = cli(build_dir, "merge", "-o", out, *files)
    assert done.returncode == 0, done.stderr
    got, _ = perf_samples(out)
    assert sorted(got) == [0, 1]
    for rank, path in enumerate(files):
        samples = read_samples(path)
        # samples in py.inner are on the thread of py.inner's spans (a merge's
        # rows: the file's thread index as tid); same host, so merge shifts
        # nothing: the times are the file's
        inner_threads = {x["thread"] for x in samples if x["region"] == "py.inner"}
        assert len(inner_threads) == 1
        check_perf_samples(got[rank], samples, inner_threads.pop())


@pytest.mark.parametrize("ext", [".json", ".json.gz"])
def test_convert_json_carries_every_sample(files, build_dir, tmp_path, ext):
    """spanscope convert .h5 to JSON: the instants as export chrome writes
    them, on their thread's row."""
    import gzip
    out = tmp_path / f"c{ext}"
    done = cli(build_dir, "convert", files[0], out)
    assert done.returncode == 0, done.stderr
    text = gzip.decompress(out.read_bytes()) if ext.endswith(".gz") else out.read_bytes()
    doc = json.loads(text)
    check_chrome_instants(doc, read_samples(files[0]))
    # the samples before kineto's window end, which stays the last event
    assert doc["traceEvents"][-1]["name"] == "Record Window End"


def test_convert_pftrace_perf_samples(files, build_dir, tmp_path):
    """spanscope convert .h5 to .pftrace: a PerfSample per timer period, the
    samples of py.inner on its spans' thread, the spanless thread's on a
    thread of its own."""
    out = tmp_path / "c.pftrace"
    done = cli(build_dir, "convert", files[1], out)
    assert done.returncode == 0, done.stderr
    got, threads = perf_samples(out)
    assert len(got) == 1  # the file's one process
    (pid, mine), = got.items()
    samples = read_samples(files[1])
    inner_threads = {x["thread"] for x in samples if x["region"] == "py.inner"}
    assert len(inner_threads) == 1
    check_perf_samples(mine, samples, inner_threads.pop())
    spanless = {x["t"] for x in samples if x["thread"] < 0}
    rows = {tid for t, tid, _ in mine if t in spanless}
    assert len(rows) == 1 and threads[(pid, rows.pop())].endswith("(samples)")


def test_convert_trace_has_no_samples_to_carry(files, build_dir, tmp_path):
    """A trace input has no /samples: convert writes its spans (the instants
    of a JSON input are not spans and are not read back)."""
    a = tmp_path / "a.json"
    assert cli(build_dir, "convert", files[0], a).returncode == 0
    out = tmp_path / "b.pftrace"
    done = cli(build_dir, "convert", a, out)
    assert done.returncode == 0, done.stderr
    got, _ = perf_samples(out)
    assert got == {}


@pytest.mark.parametrize("ext", [".json", ".pftrace"])
def test_convert_bad_sample_index_fails(files, build_dir, tmp_path, ext):
    bad = tmp_path / "bad.h5"
    shutil.copy(files[0], bad)
    with h5py.File(bad, "r+") as f:
        d = f["samples"]["stacks"]
        v = d[()]
        v[0] = 10 ** 6
        d[...] = v
    out = tmp_path / f"x{ext}"
    done = cli(build_dir, "convert", bad, out)
    assert done.returncode != 0 and done.returncode < 128, done.returncode
    assert "/samples/stacks" in done.stderr, done.stderr
    assert not out.exists()


def _trace_processor():
    """A TraceProcessor on a local trace_processor_shell ($SPANSCOPE_TRACE_PROCESSOR,
    or one on PATH), or None where there is none: the perfetto package
    downloads its binary at run time, which these machines cannot."""
    shell = os.environ.get("SPANSCOPE_TRACE_PROCESSOR") or shutil.which("trace_processor_shell") \
        or shutil.which("trace_processor")
    if not shell:
        return None
    from perfetto.trace_processor import TraceProcessorConfig
    return TraceProcessorConfig(bin_path=shell)


def test_trace_processor_perf_sample_table(files, build_dir, tmp_path):
    pytest.importorskip("perfetto.trace_processor")
    config = _trace_processor()
    if config is None:
        pytest.skip("no trace_processor_shell binary here (the perfetto package fetches "
                    "it from the network at run time; set SPANSCOPE_TRACE_PROCESSOR); "
                    "test_merge_pftrace_perf_samples checks the packets against the schema")
    from perfetto.trace_processor import TraceProcessor
    out = tmp_path / "m.pftrace"
    assert cli(build_dir, "merge", "-o", out, *files).returncode == 0
    with TraceProcessor(trace=str(out), config=config) as tp:
        rows = list(tp.query(
            "select t.tid as tid, p.pid as pid, f.name as leaf from perf_sample s "
            "join thread t using(utid) left join process p using(upid) "
            "join stack_profile_callsite c on c.id = s.callsite_id "
            "join stack_profile_frame f on f.id = c.frame_id"))
    for rank, path in enumerate(files):
        samples = read_samples(path)
        want = sum(min(x["weight"], 64) for x in samples if x["stack"])
        mine = [r for r in rows if r.pid == rank]
        assert len(mine) == want
        inner_tid = {x["thread"] for x in samples if x["region"] == "py.inner"}.pop()
        assert any(r.tid == inner_tid and r.leaf == "sf_leaf_py" for r in mine)


def test_merge_h5_has_both_ranks_samples(files, build_dir, tmp_path):
    out = tmp_path / "m.h5"
    done = cli(build_dir, "merge", "-o", out, files[1], files[0])
    assert done.returncode == 0, done.stderr
    merged = read_samples(out)
    inputs = [read_samples(p) for p in files]
    assert len(merged) == sum(map(len, inputs))

    def key(x):
        return (x["t"], x["thread"], x["tid"], x["region"], x["weight"], tuple(x["stack"]))
    for rank, samples in enumerate(inputs):
        mine = sorted(key(x) for x in merged if x["rank"] == rank)
        assert mine == sorted(key(x) for x in samples)
    regions = {(x["rank"], x["region"]) for x in merged}
    assert {(0, "py.outer0"), (0, "py.inner"), (1, "py.outer1"), (1, "py.inner")} <= regions
    for p in (*files, out):
        with h5py.File(p) as f:
            assert f["samples"].attrs["hz"] == 1000


@pytest.mark.parametrize("column,value", [("stacks", 10 ** 6), ("regions", 4321),
                                          ("stack_frames", -3), ("stacks", -1)])
def test_bad_sample_index_is_a_format_error(files, build_dir, tmp_path, column, value):
    bad = tmp_path / "bad.h5"
    shutil.copy(files[0], bad)
    with h5py.File(bad, "r+") as f:
        d = f["samples"][column]
        v = d[()]
        v[0] = value
        d[...] = v
    for args, out in ((("export", "chrome", bad, "-o"), tmp_path / "x.json"),
                      (("merge", "-o"), tmp_path / "x.h5"),
                      (("merge", "-o"), tmp_path / "x.pftrace")):
        cmd = [*args, out] if args[0] == "export" else [*args, out, bad, files[1]]
        done = cli(build_dir, *cmd)
        assert done.returncode != 0 and done.returncode < 128, (cmd, done.returncode)
        assert f"/samples/{column}" in done.stderr, done.stderr
        assert not out.exists()
