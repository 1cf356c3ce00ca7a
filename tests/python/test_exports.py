"""Exports for other tools (issue 12 part 5): speedscope JSON, cProfile's
.prof, the flame graph SVG and the Chrome trace, written in C from the one
fold (sps_export), called as scope-profiler 0.7.5's users call its
exports.  The numbers are checked against the file's own (a hand-written
trace of known times) and against scope-profiler's own exporter on the
same files: a file written by the real scope-profiler, and one written by
spanscope."""

import json
import marshal
import os
import pstats
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import spanscope

MS = 1_000_000  # ns


def _trace(path, ranks=(0,), threads=(1,), shift_ms=0):
    """A Chrome trace of known intervals, per process (rank) and thread:
    main [0,100) > setup [0,20), solve [20,90) > assemble [30,60) (ms),
    then a second main [100,110) with no children."""
    events = []
    for pid in ranks:
        for tid in threads:
            off = shift_ms + 200 * (tid - 1)
            for name, a, b in (("main", 0, 100), ("setup", 0, 20), ("solve", 20, 90),
                               ("assemble", 30, 60), ("main", 100, 110)):
                events.append({"ph": "X", "name": name, "pid": pid, "tid": tid,
                               "ts": (a + off) * 1000, "dur": (b - a) * 1000})
    Path(path).write_text(json.dumps({"traceEvents": events}))
    return path


def _spanscope_h5(path):
    """A recording written by spanscope's ProfileManager: main > (setup,
    solve > assemble x4), three times."""
    from spanscope import ProfileManager as PM
    PM.setup(file_path=str(path))
    for _ in range(3):
        with PM.region("main"):
            with PM.region("setup"):
                sum(range(2000))
            with PM.region("solve"):
                for _ in range(4):
                    with PM.region("assemble"):
                        sum(range(1000))
    PM.finalize()
    return path


SP_SCRIPT = """
import sys
from scope_profiler import ProfileManager as PM
PM.setup(file_path=sys.argv[1])
for _ in range(3):
    with PM.region("main"):
        with PM.region("setup"):
            sum(range(2000))
        with PM.region("solve"):
            for _ in range(4):
                with PM.region("assemble"):
                    sum(range(1000))
PM.finalize()
"""


def _scope_profiler_h5(path):
    """The same recording written by the real scope-profiler 0.7.5 (in a
    child process, so that its ProfileManager does not meet ours)."""
    pytest.importorskip("scope_profiler")
    subprocess.run([sys.executable, "-c", SP_SCRIPT, str(path)], check=True,
                   capture_output=True, timeout=120)
    return path


def _load_prof(path):
    with open(path, "rb") as f:
        return marshal.load(f)


def _by_func(stats):
    """pstats dict keyed by function name only (the files and lines of the
    keys are compared where both sides have them)."""
    out = {}
    for (_, _, func), (cc, nc, tt, ct, callers) in stats.items():
        out[func] = (cc, nc, tt, ct, {k[2]: v for k, v in callers.items()})
    return out


def _close(a, b):
    """Two pstats entries (by function) equal: counts exactly, times to 1 ns."""
    assert a.keys() == b.keys()
    for key in a:
        ca, cb = a[key], b[key]
        assert ca[:2] == cb[:2], key
        assert ca[2] == pytest.approx(cb[2], abs=2e-9), key
        assert ca[3] == pytest.approx(cb[3], abs=2e-9), key
        assert ca[4].keys() == cb[4].keys(), key
        for caller in ca[4]:
            assert ca[4][caller][:2] == cb[4][caller][:2]
            assert ca[4][caller][2:] == pytest.approx(cb[4][caller][2:], abs=2e-9)


# --------------------------------------------------------------------------
# .prof
# --------------------------------------------------------------------------

def test_prof_numbers_are_the_files(tmp_path):
    src = _trace(tmp_path / "run.json")
    written = spanscope.export_prof(str(src), tmp_path / "profile.prof", verbose=False)
    assert written == [tmp_path / "profile_rank0.prof"]
    d = _by_func(_load_prof(written[0]))
    assert set(d) == {"main", "main > setup", "main > solve", "main > solve > assemble",
                      "<run rank 0>"}
    cc, nc, tt, ct, callers = d["main"]
    assert (cc, nc) == (2, 2)
    assert ct == pytest.approx(0.110)          # 100 ms + 10 ms
    assert tt == pytest.approx(0.020)          # 110 - setup 20 - solve 70
    assert callers == {"<run rank 0>": (2, 2, pytest.approx(0.020), pytest.approx(0.110))}
    assert d["main > solve"][2:4] == (pytest.approx(0.040), pytest.approx(0.070))
    assert d["main > solve > assemble"][:4] == (1, 1, pytest.approx(0.030), pytest.approx(0.030))
    assert d["<run rank 0>"][:4] == (1, 1, 0.0, pytest.approx(0.110))
    # pstats loads it (what snakeviz does), and load_prof is pstats.Stats
    st = spanscope.load_prof(written[0])
    assert isinstance(st, pstats.Stats)
    assert st.total_calls == 2 + 1 + 1 + 1 + 1
    st.sort_stats("cumulative").print_stats(3)


def test_prof_by_region_counts_recursion_once(tmp_path):
    """call_paths=False: one entry per region; a recursive call adds to
    ncalls but not to primitive calls or cumulative time (cProfile's rule)."""
    ev = [{"ph": "X", "name": "f", "pid": 0, "tid": 1, "ts": 0, "dur": 100},
          {"ph": "X", "name": "f", "pid": 0, "tid": 1, "ts": 10, "dur": 50},
          {"ph": "X", "name": "g", "pid": 0, "tid": 1, "ts": 20, "dur": 10}]
    src = tmp_path / "rec.json"
    src.write_text(json.dumps({"traceEvents": ev}))
    out = spanscope.export_prof(str(src), tmp_path / "r.prof", call_paths=False, verbose=False)
    d = _by_func(_load_prof(out[0]))
    cc, nc, tt, ct, callers = d["f"]
    assert (cc, nc) == (1, 2)
    assert ct == pytest.approx(100e-6)
    assert tt == pytest.approx(90e-6)          # 50 + 40
    assert set(callers) == {"f", "<rec rank 0>"}
    assert d["g"][4] == {"f": (1, 1, pytest.approx(10e-6), pytest.approx(10e-6))}


@pytest.mark.parametrize("call_paths", [True, False])
def test_prof_matches_scope_profiler_on_its_own_file(tmp_path, call_paths):
    """A file written by the real scope-profiler 0.7.5: spanscope's .prof
    holds the numbers scope-profiler's own export_prof writes."""
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.prof_export import export_prof as sp_export_prof
    h5 = _scope_profiler_h5(tmp_path / "sp.h5")
    ours = spanscope.export_prof(str(h5), tmp_path / "ours.prof", call_paths=call_paths,
                                 verbose=False)
    theirs = sp_export_prof(sp.read_h5(str(h5)), tmp_path / "theirs.prof",
                            call_paths=call_paths, verbose=False)
    a, b = _load_prof(ours[0]), _load_prof(theirs[0])
    _close(_by_func(a), _by_func(b))
    # the keys too: the regions' source locations the file captured
    assert set(a) == set(b)
    assert any(k[0] != "~" for k in a)


def test_prof_matches_scope_profiler_on_a_spanscope_file(tmp_path):
    """And the other way: a spanscope file, exported by both."""
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.prof_export import export_prof as sp_export_prof
    h5 = _spanscope_h5(tmp_path / "ours.h5")
    ours = spanscope.export_prof(str(h5), tmp_path / "a.prof", verbose=False)
    theirs = sp_export_prof(sp.read_h5(str(h5)), tmp_path / "b.prof", verbose=False)
    _close(_by_func(_load_prof(ours[0])), _by_func(_load_prof(theirs[0])))


def test_to_pstats_per_label_and_rank(tmp_path):
    src = _trace(tmp_path / "two.json", ranks=(0, 1))
    stats = spanscope.to_pstats(str(src), ranks=[0, 1])
    assert set(stats) == {("two", 0), ("two", 1)}
    for st in stats.values():
        assert isinstance(st, pstats.Stats)
        assert st.total_tt == pytest.approx(0.110)


def test_rank_and_filter_errors(tmp_path):
    src = _trace(tmp_path / "run.json")
    with pytest.raises(ValueError, match="Invalid rank requested: 3"):
        spanscope.export_prof(str(src), tmp_path / "x.prof", ranks=[3], verbose=False)
    with pytest.raises(ValueError, match="No regions matched"):
        spanscope.export_speedscope(str(src), tmp_path / "x.json", include="nothing.*",
                                    verbose=False)
    with pytest.raises(TypeError, match="path"):
        spanscope.export_prof(object(), tmp_path / "x.prof", verbose=False)
    with pytest.raises(OSError):
        spanscope.export_prof(str(tmp_path / "missing.h5"), tmp_path / "x.prof", verbose=False)


def test_exclude_reparents_children(tmp_path):
    """A region left out is skipped before nesting: its children become
    their grandparent's, as in scope-profiler's filtered regions."""
    src = _trace(tmp_path / "run.json")
    out = spanscope.export_prof(str(src), tmp_path / "x.prof", exclude=["solve"], verbose=False)
    d = _by_func(_load_prof(out[0]))
    assert "main > assemble" in d and not any("solve" in k for k in d)
    assert d["main"][2] == pytest.approx(0.110 - 0.020 - 0.030)


# --------------------------------------------------------------------------
# speedscope
# --------------------------------------------------------------------------

def _replay(profile, frames):
    """Replays an evented profile: (name, open, close) per call; checks the
    schema's rules on the way (closes match the top frame, time never goes
    back, events within startValue..endValue)."""
    stack, calls, last = [], [], profile["startValue"]
    for ev in profile["events"]:
        assert set(ev) == {"type", "frame", "at"}
        assert ev["at"] >= last
        last = ev["at"]
        if ev["type"] == "O":
            stack.append((ev["frame"], ev["at"]))
        else:
            assert ev["type"] == "C"
            frame, at = stack.pop()
            assert frame == ev["frame"]
            calls.append((frames[frame]["name"], at, ev["at"]))
    assert not stack
    assert last <= profile["endValue"]
    return sorted(calls)


def test_speedscope_document_follows_the_schema(tmp_path):
    src = _trace(tmp_path / "run.json", ranks=(0, 1), threads=(1, 2))
    written = spanscope.export_speedscope(str(src), tmp_path / "profile.speedscope.json",
                                          ranks=[0, 1], verbose=False)
    assert written == [tmp_path / "profile.speedscope.json"]
    doc = json.loads(written[0].read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert doc["exporter"].startswith("spanscope@")
    assert doc["activeProfileIndex"] == 0 and doc["name"] == "run"
    frames = doc["shared"]["frames"]
    assert {f["name"] for f in frames} == {"main", "setup", "solve", "assemble"}
    names = [p["name"] for p in doc["profiles"]]
    assert len(names) == 4 and names[0].startswith("rank 0 - ") and names[2].startswith("rank 1 - ")
    for p in doc["profiles"]:
        assert p["type"] == "evented" and p["unit"] == "seconds"
        calls = _replay(p, frames)
        assert len(calls) == 5
        main = [c for c in calls if c[0] == "main"]
        assert [round(c[2] - c[1], 9) for c in main] == [0.1, 0.01]


def test_speedscope_matches_scope_profiler_on_its_file(tmp_path):
    sp = pytest.importorskip("scope_profiler")
    from scope_profiler.speedscope_export import export_speedscope as sp_export
    h5 = _scope_profiler_h5(tmp_path / "sp.h5")
    ours = json.loads(spanscope.export_speedscope(str(h5), tmp_path / "a.speedscope.json",
                                                  verbose=False)[0].read_text())
    theirs = json.loads(sp_export(sp.read_h5(str(h5)), tmp_path / "b.speedscope.json",
                                  verbose=False)[0].read_text())
    assert [p["name"] for p in ours["profiles"]] == [p["name"] for p in theirs["profiles"]]
    a = _replay(ours["profiles"][0], ours["shared"]["frames"])
    b = _replay(theirs["profiles"][0], theirs["shared"]["frames"])
    assert [c[0] for c in a] == [c[0] for c in b]
    for x, y in zip(a, b):
        assert x[1] == pytest.approx(y[1], abs=2e-9) and x[2] == pytest.approx(y[2], abs=2e-9)


def test_speedscope_defaults_to_rank_zero_and_names_files_per_run(tmp_path):
    one = _trace(tmp_path / "run_one.json", ranks=(0, 1))
    two = _trace(tmp_path / "run_two.json", ranks=(0, 1))
    written = spanscope.export_speedscope([str(one), str(two)],
                                          tmp_path / "profile.speedscope.json", verbose=False)
    assert [p.name for p in written] == ["profile_run_one.speedscope.json",
                                         "profile_run_two.speedscope.json"]
    for p in written:
        assert [q["name"] for q in json.loads(p.read_text())["profiles"]] == ["rank 0"]


# --------------------------------------------------------------------------
# flame graph SVG
# --------------------------------------------------------------------------

def _rects(svg_path):
    root = ET.parse(svg_path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    out = []
    for g in root.iter(ns + "g"):
        rect, title = g.find(ns + "rect"), g.find(ns + "title")
        out.append((title.text, float(rect.get("x")), float(rect.get("y")),
                    float(rect.get("width"))))
    assert len(out) == len(list(root.iter(ns + "rect")))
    return root, out


def test_flamegraph_svg_one_rect_per_frame(tmp_path):
    src = _trace(tmp_path / "run.json")
    written = spanscope.export_flamegraph_svg(str(src), tmp_path / "flame.svg", width=1100,
                                              verbose=False)
    assert written == [tmp_path / "flame_rank0.svg"]
    root, rects = _rects(written[0])
    assert root.get("viewBox") == "0 0 1100 " + root.get("viewBox").split()[3]
    # root + the four call paths, each as wide as its share of 110 ms
    assert len(rects) == 5
    by = {t.split(" (")[0]: (x, y, w) for t, x, y, w in rects}
    assert by["<run rank 0>"][2] == pytest.approx(1100)
    assert by["main"][2] == pytest.approx(1100)
    assert by["solve"][2] == pytest.approx(1100 * 70 / 110, abs=0.01)
    assert by["assemble"][2] == pytest.approx(1100 * 30 / 110, abs=0.01)
    assert by["solve"][0] == pytest.approx(1100 * 20 / 110, abs=0.01)  # after setup
    assert by["assemble"][1] > by["solve"][1] > by["main"][1]          # icicle


def test_flamegraph_threshold_and_fixed_size(tmp_path):
    src = _trace(tmp_path / "run.json")
    out = spanscope.export_flamegraph_svg(str(src), tmp_path / "f.svg", threshold=0.5,
                                          scalable=False, verbose=False)
    text = out[0].read_text()
    assert text.startswith("<?xml")
    root, rects = _rects(out[0])
    assert root.get("width") == "1200"
    assert sorted(t.split(" (")[0] for t, *_ in rects) == ["<run rank 0>", "main", "solve"]


def test_flamegraph_escapes_names(tmp_path):
    ev = [{"ph": "X", "name": "a<b>&\"c'", "pid": 0, "tid": 1, "ts": 0, "dur": 10}]
    src = tmp_path / "esc.json"
    src.write_text(json.dumps({"traceEvents": ev}))
    out = spanscope.export_flamegraph_svg(str(src), tmp_path / "e.svg", verbose=False)
    _, rects = _rects(out[0])
    assert any(t.startswith("a<b>&\"c'") for t, *_ in rects)


# --------------------------------------------------------------------------
# Chrome trace
# --------------------------------------------------------------------------

def test_chrome_trace_of_selected_ranks(tmp_path):
    src = _trace(tmp_path / "run.json", ranks=(0, 1, 2))
    out = spanscope.export_chrome_trace(str(src), tmp_path / "t.trace.json", ranks=[1, 2],
                                        exclude="setup", verbose=False)
    assert out == [tmp_path / "t.trace.json"]
    doc = json.loads(out[0].read_text())
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 2 * 4 and not any(e["name"] == "setup" for e in xs)
    assert len({e["pid"] for e in xs}) == 2
    assert doc["metadata"]["exporter"].startswith("spanscope@")
    assert doc["metadata"]["name"] == "run"  # the run's label, as scope-profiler's
    main = sorted(e["dur"] for e in xs if e["name"] == "main")
    assert main == [10000, 10000, 100000, 100000]


def test_exports_read_every_format(tmp_path):
    """The same recording as .h5, .json and .pftrace gives the same .prof."""
    h5 = _spanscope_h5(tmp_path / "rec.h5")
    cli = Path(os.environ.get("SPS_BUILD", "build")) / "spanscope"
    if not cli.exists():
        pytest.skip("no CLI built")
    outs = []
    for ext in (".h5", ".json", ".pftrace"):
        path = h5 if ext == ".h5" else tmp_path / f"rec{ext}"
        if ext != ".h5":
            subprocess.run([str(cli), "convert", str(h5), str(path)], check=True)
        prof = spanscope.export_prof(str(path), tmp_path / f"p{ext}.prof", verbose=False)
        outs.append({k: v[:2] for k, v in _by_func(_load_prof(prof[0])).items()
                     if not k.startswith("<")})
    assert outs[0] == outs[1] == outs[2]
    assert outs[0]["main > solve > assemble"] == (12, 12)


def test_speedscope_fields_of_the_schema(tmp_path):
    """What speedscope's file-format-schema.json (draft-06, from its
    file-format-spec.ts) requires, field by field: the file's $schema,
    shared.frames (each with a string name) and profiles; each evented
    profile's type, name, unit (one of the schema's units), startValue,
    endValue and events; each event's type (O/C), frame (an index into
    the frames) and at (a number)."""
    src = _trace(tmp_path / "run.json", ranks=(0, 1), threads=(1, 2))
    doc = json.loads(spanscope.export_speedscope(str(src), tmp_path / "s.speedscope.json",
                                                 ranks=[0, 1], verbose=False)[0].read_text())
    assert {"$schema", "shared", "profiles"} <= set(doc)
    assert isinstance(doc["name"], str) and isinstance(doc["exporter"], str)
    assert isinstance(doc["activeProfileIndex"], (int, float))
    frames = doc["shared"]["frames"]
    assert all(isinstance(f["name"], str) and set(f) <= {"name", "file", "line", "col"}
               for f in frames)
    for p in doc["profiles"]:
        assert {"type", "name", "unit", "startValue", "endValue", "events"} <= set(p)
        assert p["unit"] in {"bytes", "microseconds", "milliseconds", "nanoseconds", "none",
                             "seconds"}
        for ev in p["events"]:
            assert ev["type"] in ("O", "C") and isinstance(ev["at"], (int, float))
            assert isinstance(ev["frame"], int) and 0 <= ev["frame"] < len(frames)


def test_snakeviz_opens_the_prof(tmp_path):
    """snakeviz loads a .prof with pstats.Stats and turns it into its
    table and call tree (snakeviz.stats); both work on ours."""
    stats_mod = pytest.importorskip("snakeviz.stats")
    src = _trace(tmp_path / "run.json")
    out = spanscope.export_prof(str(src), tmp_path / "v.prof", verbose=False)
    st = pstats.Stats(str(out[0]))
    rows = stats_mod.table_rows(st)
    assert {r[-1] for r in rows} >= {"~:0(main)", "~:0(main > solve > assemble)"}
    main = next(r for r in rows if r[-1] == "~:0(main)")
    assert main[0] == ["2", 2] and float(main[3]) == pytest.approx(0.11)
    tree = stats_mod.json_stats(st)  # the call graph the page draws
    assert "<run rank 0>" in json.dumps(tree)


def test_exports_take_a_results_object_that_names_its_file(tmp_path):
    """spanscope.read(path) results (they know their file) work where a
    path does, as scope-profiler's exports take its results."""
    h5 = _spanscope_h5(tmp_path / "rec.h5")
    res = spanscope.read(str(h5))
    a = spanscope.export_prof(res, tmp_path / "a.prof", verbose=False)
    b = spanscope.export_prof(str(h5), tmp_path / "b.prof", verbose=False)
    assert _load_prof(a[0]) == _load_prof(b[0])


def test_chrome_trace_events_carry_scope_profilers_args(tmp_path):
    """Each call's args as scope-profiler's export writes them: rank, its
    index within the region, its duration in s, the region's source."""
    sp_ref = pytest.importorskip("scope_profiler")
    from spanscope import ProfileManager
    src = tmp_path / "args.h5"
    ProfileManager.setup(output=str(src), capture_region_source=True)
    for _ in range(3):
        with ProfileManager.region("step"):
            with ProfileManager.region("inner"):
                pass
    ProfileManager.finalize(verbose=False)
    ours = spanscope.export_chrome_trace(src, tmp_path / "ours.json", verbose=False)
    theirs = sp_ref.export_chrome_trace(sp_ref.read_h5(src), tmp_path / "theirs.json")

    def calls(path):
        doc = json.loads(Path(path[0] if isinstance(path, list) else path).read_text())
        return {(e["name"], e["args"]["call_index"]): e["args"]
                for e in doc["traceEvents"] if e.get("ph") == "X"}

    a, b = calls(ours), calls(theirs)
    assert set(a) == set(b) and len(a) == 6
    for key, want in b.items():
        got = a[key]
        assert got["rank"] == want["rank"]
        assert got["duration_s"] == pytest.approx(want["duration_s"], abs=2e-9)
        assert got["source_file"] == want["source_file"]
        assert got["source_line"] == want["source_line"]


def test_speedscope_frames_carry_the_source(tmp_path):
    from spanscope import ProfileManager
    src = tmp_path / "src.h5"
    ProfileManager.setup(output=str(src), capture_region_source=True)
    with ProfileManager.region("step"):
        pass
    ProfileManager.finalize(verbose=False)
    (out,) = spanscope.export_speedscope(src, tmp_path / "s", verbose=False)
    (frame,) = json.loads(out.read_text())["shared"]["frames"]
    region = spanscope.read_h5(src)["step"]
    assert frame == {"name": "step", "file": region.source_file, "line": region.source_lineno}


def _chrome_calls(path):
    """The X events of a Chrome trace, keyed by (name, call_index)."""
    doc = json.loads(Path(path[0] if isinstance(path, list) else path).read_text())
    return {(e["name"], e["args"]["call_index"]): e
            for e in doc["traceEvents"] if e.get("ph") == "X"}


def test_chrome_call_ids_point_at_the_enclosing_call(tmp_path):
    """Every X event's call_id / parent_id (scope-profiler's args): ids
    unique per rank, a root's parent -1, any other's parent the innermost
    event of its thread that holds it -- and the same ids as the file's own
    call_ids / parent_ids (what spanscope.read_h5 and scope-profiler's
    read_h5 give)."""
    import threading
    from spanscope import ProfileManager as PM
    src = tmp_path / "nested.h5"
    PM.setup(file_path=str(src))

    def worker():
        with PM.region("w_outer"):
            with PM.region("w_inner"):
                sum(range(500))

    for _ in range(2):
        with PM.region("main"):
            with PM.region("setup"):
                sum(range(500))
            with PM.region("solve"):
                for _ in range(3):
                    with PM.region("assemble"):
                        sum(range(200))
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    PM.finalize(verbose=False)
    out = spanscope.export_chrome_trace(src, tmp_path / "ids.json", verbose=False)
    xs = list(_chrome_calls(out).values())
    assert len(xs) == 2 * (1 + 1 + 1 + 3) + 2
    by_id = {e["args"]["call_id"]: e for e in xs}
    assert len(by_id) == len(xs)  # unique within the rank
    for e in xs:
        holders = [p for p in xs if p is not e and p["tid"] == e["tid"]
                   and p["ts"] <= e["ts"] and e["ts"] + e["dur"] <= p["ts"] + p["dur"]]
        pid = e["args"]["parent_id"]
        if not holders:
            assert pid == -1, e
        else:
            innermost = min(holders, key=lambda p: p["dur"])
            assert by_id[pid] is innermost, e
    assert {by_id[e["args"]["parent_id"]]["name"] for e in xs
            if e["name"] == "assemble"} == {"solve"}
    assert by_id[_chrome_calls(out)[("w_inner", 0)]["args"]["parent_id"]]["name"] == "w_outer"
    # the ids are the file's (the one model's), as spanscope.read_h5 gives them
    res = spanscope.read_h5(str(src))
    for (name, k), e in _chrome_calls(out).items():
        ev = res[name][0].events()[k]
        assert (e["args"]["call_id"], e["args"]["parent_id"]) == (ev["call_id"], ev["parent_id"])


def test_chrome_args_are_scope_profilers_on_its_own_file(tmp_path):
    """A file recorded by the real scope-profiler 0.7.5, exported by both:
    every event carries the same arg names, and the same rank, call_index,
    call_id and parent_id; with a region excluded, a call whose parent was
    left out keeps that parent's id in both."""
    sp_ref = pytest.importorskip("scope_profiler")
    src = _scope_profiler_h5(tmp_path / "sp.h5")
    for exclude in (None, "solve"):
        ours = spanscope.export_chrome_trace(str(src), tmp_path / "ours.json",
                                             exclude=exclude, verbose=False)
        theirs = sp_ref.export_chrome_trace(sp_ref.read_h5(str(src)), tmp_path / "theirs.json",
                                            exclude=exclude, verbose=False)
        a, b = _chrome_calls(ours), _chrome_calls(theirs)
        assert set(a) == set(b) and len(a) == (3 * 7 if exclude is None else 3 * 6)
        for key, want in b.items():
            got = a[key]["args"]
            assert set(got) == set(want["args"]), key
            for arg in ("rank", "call_index", "call_id", "parent_id"):
                assert got[arg] == want["args"][arg], (key, arg)
        assert {a[k]["args"]["parent_id"] for k in a if k[0] == "assemble"} == \
            {b[k]["args"]["parent_id"] for k in b if k[0] == "assemble"}
        assert all(a[k]["args"]["parent_id"] >= 0 for k in a if k[0] == "assemble")
    doc = json.loads(Path(ours[0]).read_text())
    procs = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"]
    assert procs == ["rank 0"]  # as scope-profiler names a rank's process


def test_chrome_call_ids_of_a_trace_input(tmp_path):
    """A trace (no stored ids) gets its ids from the same fold: per rank in
    start order, parents by nesting; each rank numbers its own calls."""
    src = _trace(tmp_path / "run.json", ranks=(0, 1))
    out = spanscope.export_chrome_trace(str(src), tmp_path / "t.json", ranks=[0, 1],
                                        verbose=False)
    doc = json.loads(Path(out[0]).read_text())
    for rank in (0, 1):
        xs = sorted((e for e in doc["traceEvents"]
                     if e.get("ph") == "X" and e["args"]["rank"] == rank),
                    key=lambda e: e["args"]["call_id"])
        got = [(e["name"], e["args"]["call_id"], e["args"]["parent_id"]) for e in xs]
        assert got == [("main", 0, -1), ("setup", 1, 0), ("solve", 2, 0),
                       ("assemble", 3, 2), ("main", 4, -1)]
    procs = sorted(e["args"]["name"] for e in doc["traceEvents"]
                   if e.get("name") == "process_name")
    assert procs == ["rank 0", "rank 1"]
