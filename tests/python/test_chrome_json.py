"""Reads the Chrome trace JSON files that tests/c/test_chrome_json.c leaves in
its scratch directory with Python's json module, and checks what TensorBoard,
Perfetto and torch tooling rely on: valid JSON (after gunzip), µs units with
ns precision, M metadata, torch-compatible top-level keys.

The files are produced by `ctest` (run it first).  The directory is
$SPS_BUILD/tests/c/tmp (SPS_BUILD defaults to <repo>/build).  A missing file
is skipped with the reason, not an error.
"""
import gzip
import json
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
TMP = Path(os.environ.get("SPS_TEST_TMP", BUILD / "tests" / "c" / "tmp"))

BASE_NS = 1234567890123  # make_tl() in test_chrome_json.c
NAMES = {"main", 'say "hi"', "back\\slash", "line\nbreak\ttab\r",
         "caf\u00e9 \u65e5\u672c \U0001F600", "ctl\x01\x1f\x7f",
         "slash/</script>", "", "u2028\u2028", "x"}


def load(name):
    p = TMP / name
    if not p.exists():
        pytest.skip(f"{p} is missing: run ctest first (test_chrome_json writes it)")
    raw = p.read_bytes()
    if name.endswith(".gz"):
        assert raw[:2] == b"\x1f\x8b"
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")  # strict: the writer emits valid UTF-8
    # json.loads with parse_float=Decimal keeps the printed digits exact
    return text, json.loads(text, parse_float=Decimal)


@pytest.mark.parametrize("name", ["chrome_rt.json", "chrome_rt.json.gz"])
def test_roundtrip_file(name):
    text, doc = load(name)
    assert doc["schemaVersion"] == 1
    assert doc["displayTimeUnit"] == "ms"  # kineto's and tensorplay's
    assert doc["baseTimeNanoseconds"] == BASE_NS
    assert doc["traceName"] == 'rt "trace".h5'
    # no backend named: none written (the tools read one as in use)
    assert doc["distributedInfo"] == {"rank": 1, "world_size": 3}
    assert re.search(r'"rank":\s+(\d+)', text).group(1) == "1"  # HTA's pattern
    assert doc["deviceProperties"] == []
    ev = doc["traceEvents"]
    allx = [e for e in ev if e["ph"] == "X"]
    xs = [e for e in allx if e["cat"] == "user_annotation"]
    ms = [e for e in ev if e["ph"] == "M"]
    assert len(xs) > 1000
    # each span once, as torch writes a record_function: no cpu_op copy and
    # no "Trace" window span (those are the TensorBoard layout's, convert
    # --torch-tb)
    assert len(allx) == len(xs)
    assert not any("spanscope_view" in e for e in allx)
    # kineto's args on every X event: a distinct External id each
    ids = [e["args"]["External id"] for e in allx]
    assert ids == list(range(1, len(allx) + 1))
    assert all(e["args"]["Ev Idx"] == e["args"]["External id"] - 1 for e in allx)
    # the window's end: one instant after the spans (no Trace span)
    assert not [e for e in ev if e.get("cat") == "Trace"]
    inst = {e["name"]: e["ts"] for e in ev if e["ph"] == "i"}
    assert inst == {"Record Window End": max(e["ts"] + e["dur"] for e in xs)}
    for e in xs:
        assert e["name"] in NAMES
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        # µs with exactly three decimals: ns precision, no float noise
        for k in ("ts", "dur"):
            assert isinstance(e[k], Decimal)
            assert e[k].as_tuple().exponent == -3, e
        assert e["dur"] >= 0
    # the exactly known span: base + 999912345678 ns, 1 ns long
    known = [e for e in xs if e["ts"] == Decimal("999912345.678")]
    assert len(known) == 1 and known[0]["dur"] == Decimal("0.001")
    assert re.search(r'"ts":999912345\.678,"dur":0\.001,"args":\{"External id"', text)
    # a span that starts before baseTimeNanoseconds has a negative ts
    assert any(e["ts"] < 0 for e in xs)
    # X events come in start order
    ts = [e["ts"] for e in xs]
    assert ts == sorted(ts)
    # metadata: process names "rank N", labels, sort indices, thread names
    pn = {e["pid"]: e["args"]["name"] for e in ms if e["name"] == "process_name"}
    assert pn == {1000: "rank 0", 1007: "rank 1", 1014: "rank 2"}
    labels = {e["pid"]: e["args"]["labels"] for e in ms if e["name"] == "process_labels"}
    assert labels == {1000: "rank 0", 1007: "rank 1", 1014: "rank 2"}
    psort = [e["args"]["sort_index"] for e in ms if e["name"] == "process_sort_index"]
    assert psort == [0, 1, 2]
    tn = [e for e in ms if e["name"] == "thread_name"]
    assert all(re.fullmatch(r'worker "\d+"', e["args"]["name"]) for e in tn)
    assert len(tn) == 26  # 40 threads, every third unnamed
    tsort = [e["args"]["sort_index"] for e in ms if e["name"] == "thread_sort_index"]
    assert tsort == list(range(40))
    # every span's (pid, tid) is a declared thread
    threads = {(e["pid"], e["tid"]) for e in ms if e["name"] == "thread_sort_index"}
    assert {(e["pid"], e["tid"]) for e in xs} <= threads


def test_bad_utf8_names_are_valid_json():
    _, doc = load("chrome_names.json")
    # written without kineto's additions (as scope-profiler's export is):
    # each span once, no window
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert all(e["cat"] == "user_annotation" and "args" not in e for e in xs)
    assert [e["name"] for e in xs] == ["bad\ufffd\ufffdend", "over\ufffd\ufffd",
                                       "sur\ufffd\ufffd\ufffd"]
    assert [e["ts"] for e in xs] == [Decimal("0.010"), Decimal("0.011"),
                                     Decimal("0.012")]
    assert "distributedInfo" not in doc
    assert "traceName" not in doc


def test_float_loading_matches_ns():
    """Plain json.load (floats, as TensorBoard and Perfetto's importers use)
    gives times within float rounding of the exact ns."""
    p = TMP / "chrome_rt.json"
    if not p.exists():
        pytest.skip(f"{p} is missing: run ctest first")
    with open(p) as f:
        doc = json.load(f)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    for e in xs[:200]:
        ns = e["ts"] * 1000
        assert abs(ns - round(ns)) < 1e-3


def test_convert_torch_tb_layout(tmp_path):
    """spanscope convert writes each span once; --torch-tb adds the
    TensorBoard plugin's cpu_op copies (marked spanscope_view) and its
    window span, which convert's own reader skips again; --torch-tb with a
    non-JSON output is a usage error."""
    import subprocess
    cli = BUILD / "spanscope"
    src = TMP / "chrome_rt.json"
    if not cli.exists() or not src.exists():
        pytest.skip(f"{cli} or {src} is missing: build and run ctest first")

    def convert(*args):
        return subprocess.run([str(cli), "convert", *map(str, args)], capture_output=True,
                              text=True, timeout=120)

    plain, tb, back = tmp_path / "plain.json", tmp_path / "tb.json", tmp_path / "back.json"
    assert convert(src, plain).returncode == 0
    assert convert("--torch-tb", src, tb).returncode == 0
    assert convert(tb, back).returncode == 0
    d0, d1, d2 = (json.loads(p.read_text()) for p in (plain, tb, back))
    x0 = [e for e in d0["traceEvents"] if e["ph"] == "X"]
    x1 = [e for e in d1["traceEvents"] if e["ph"] == "X"]
    spans = [(e["name"], e["ts"], e["dur"]) for e in x0]
    assert {e["cat"] for e in x0} == {"user_annotation"}
    ua = [e for e in x1 if e["cat"] == "user_annotation"]
    ops = [e for e in x1 if e["cat"] == "cpu_op"]
    assert [(e["name"], e["ts"], e["dur"]) for e in ua] == spans
    assert [(e["name"], e["ts"], e["dur"]) for e in ops] == spans
    assert all(e["spanscope_view"] == 1 for e in ops)
    assert [e["name"] for e in x1 if e["cat"] == "Trace"] == ["PyTorch Profiler (0)"]
    # read back: the copies and the window span are skipped, each span once
    assert [(e["name"], e["ts"], e["dur"]) for e in d2["traceEvents"] if e["ph"] == "X"] == spans
    bad = convert("--torch-tb", src, tmp_path / "x.pftrace")
    assert bad.returncode != 0 and "--torch-tb" in bad.stderr
