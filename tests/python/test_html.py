"""`spanscope html`: one self-contained page (timeline canvas, per-region
bars, summary table) from a recording.

Makes a recording with the C example (build/examples/jacobi, an .h5) or,
failing that, with the Python package; runs the CLI ($SPS_BUILD/spanscope);
checks the page for outside references and content; then, where Chromium
is installed (Debian package `chromium`), renders it headless and checks
that the timeline canvas was drawn (the page's script writes the number of
rectangles it drew into data-drawn) and that the screenshot is not blank.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
CLI = BUILD / "spanscope"
JACOBI = BUILD / "examples" / "jacobi"
REGIONS = ["iteration", "sweep", "barrier wait", "solve"]


def cli(*args, **kw):
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True,
                          text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    out = d / "jacobi.h5"
    if JACOBI.exists():
        subprocess.run([str(JACOBI), "--threads", "2", "--n", "128", "--iters",
                        "20", "--out", str(out)], check=True,
                       capture_output=True, timeout=120)
        return out
    try:
        from spanscope import ProfileManager
    except ImportError:
        pytest.skip("neither build/examples/jacobi nor the spanscope package")
    ProfileManager.setup(file_path=str(out))
    for name in REGIONS:
        with ProfileManager.profile(name):
            pass
    ProfileManager.finalize()
    return out


@pytest.fixture(scope="module")
def page(recording):
    out = recording.with_suffix(".html")
    r = cli("html", recording, "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # progress only on a terminal
    return out


def data_blob(text):
    m = re.search(r'<script type="application/json" id="spsdata">(.*?)</script>',
                  text, re.S)
    assert m, "no JSON data blob"
    return json.loads(m.group(1))


def test_help_and_usage(tmp_path):
    r = cli("html", "--help")
    assert r.returncode == 0 and "usage: spanscope html" in r.stdout
    r = cli("html")
    assert r.returncode == 2 and r.stderr.startswith("spanscope: html:")
    r = cli("html", "x.h5")  # no -o
    assert r.returncode == 2
    r = cli("html", "x.h5", "-o", tmp_path / "a.html", "--bogus")
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    out = tmp_path / "out.html"
    for f in (bad, tmp_path / "missing.h5"):
        r = cli("html", f, "-o", out)
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith("spanscope: html: ")
        assert r.stderr.count("\n") == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]  # no temporary left behind


def test_self_contained(page):
    text = page.read_text(encoding="utf-8")
    low = text.lower()
    assert "http://" not in low and "https://" not in low
    assert not re.search(r"<script[^>]*\bsrc\s*=", low)
    assert not re.search(r"<link\b", low)
    assert not re.search(r"\b(src|href)\s*=", low)
    assert "@import" not in low and "url(" not in low
    assert "//" not in re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert "fetch(" not in text and "XMLHttpRequest" not in text


def test_content(page, recording):
    text = page.read_text(encoding="utf-8")
    assert "<canvas" in text and 'id="stats"' in text
    for col in ("calls", "total", "self", "mean", "min", "max"):
        assert f"<th>{col}</th>" in text
    d = data_blob(text)
    names = set(d["names"])
    for n in REGIONS if JACOBI.exists() else names:
        assert n in names
        assert f">{n}</td>" in text  # in the table
    assert d["kept"] == d["nspans"] > 0  # small input: nothing left out
    assert 'id="leftout"' not in text


def test_stats_match_report(page, recording):
    """calls per region equal those of `spanscope report`'s flat view."""
    if recording.suffix != ".h5":
        pytest.skip("report reads .h5 only")
    r = cli("report", recording, "--flat")
    assert r.returncode == 0, r.stderr
    want = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\S.*?)\s{2,}(\d+)\s+\S+%", line)
        if m:
            want[m.group(1)] = int(m.group(2))
    text = page.read_text(encoding="utf-8")
    got = dict((n, int(c)) for n, c in re.findall(
        r'<tr><td data-v="[^"]*">([^<]*)</td><td class="n" data-v="(\d+)"', text))
    assert want and got == want


def test_cap(recording, tmp_path):
    out = tmp_path / "capped.html"
    r = cli("html", recording, "-o", out, "--max-spans", "20")
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    d = data_blob(text)
    assert 0 < d["kept"] <= 20 < d["nspans"]
    assert 'id="leftout"' in text
    # the kept spans are exactly those longer than the threshold
    durs = [lane[1][i + 2] for lane in d["lanes"] for i in range(0, len(lane[1]), 4)]
    assert len(durs) == d["kept"]


def test_script_end_escaped(tmp_path):
    """A region name with </script> cannot end the data blob."""
    trace = {"traceEvents": [
        {"ph": "X", "name": "a</script><b>", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "name": "inner", "pid": 1, "tid": 1, "ts": 2, "dur": 3}]}
    src = tmp_path / "t.json"
    src.write_text(json.dumps(trace))
    out = tmp_path / "t.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "a</script>" not in text
    d = data_blob(text)
    assert "a</script><b>" in d["names"]
    assert "a&lt;/script&gt;&lt;b&gt;" in text


# --- headless Chromium ------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("chromium is not installed")


def run_chromium(*args):
    return subprocess.run(
        [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
         "--virtual-time-budget=5000", "--window-size=1200,800", *args],
        capture_output=True, text=True, timeout=120)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat, w = 8, b"", None
    while i < len(data):
        n, typ = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6)
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        i += 12 + n
    raw = zlib.decompress(idat)
    rows, prev, stride = [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def test_renders_in_chromium(page, tmp_path):
    r = run_chromium("--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<canvas[^>]*data-drawn="(\d+)"', r.stdout)
    assert m and int(m.group(1)) > 0, "the timeline drew nothing"
    for n in REGIONS if JACOBI.exists() else []:
        assert n in r.stdout
    png = tmp_path / "shot.png"
    r = run_chromium(f"--screenshot={png}", page.as_uri())
    assert png.exists(), r.stderr[-2000:]
    w, h, bpp, rows = png_pixels(png)
    # colored pixels (saturated, unlike the page's greys) in the timeline
    colored = 0
    for row in rows[:min(h, 400)]:
        for x in range(0, w * bpp, bpp * 2):
            rr, gg, bb = row[x], row[x + 1], row[x + 2]
            if max(rr, gg, bb) - min(rr, gg, bb) > 60:
                colored += 1
    assert colored > 500, "the screenshot's timeline looks blank"


def test_cap_with_ties(tmp_path):
    """Spans of equal length beyond the cap: the cap is filled (earliest
    first), not emptied, and every kept child's parent is kept."""
    ev = []
    for i in range(300):
        ev.append({"ph": "X", "name": "outer", "pid": 1, "tid": 1, "ts": i * 10, "dur": 9})
        ev.append({"ph": "X", "name": "inner", "pid": 1, "tid": 1, "ts": i * 10 + 1, "dur": 9 - 2})
    src = tmp_path / "ties.json"
    src.write_text(json.dumps({"traceEvents": ev}))
    out = tmp_path / "ties.html"
    r = cli("html", src, "-o", out, "--max-spans", "100")
    assert r.returncode == 0, r.stderr
    d = data_blob(out.read_text(encoding="utf-8"))
    assert d["nspans"] == 600 and d["kept"] == 100
    (lane,) = d["lanes"]
    depths = lane[1][3::4]
    assert depths.count(0) == 100  # the 100 longest: all outer spans kept first


def test_counters_drawn(tmp_path):
    """Counter samples of a recording become counter lanes: in the data blob
    (thinned to at most 4000 points per series, min and max kept) and drawn
    by the page's script (data-counters)."""
    spanscope = pytest.importorskip("spanscope")
    src = tmp_path / "c.h5"
    spanscope.setup(file_path=str(src))
    for i in range(10000):
        spanscope.counter("queue depth", i % 97)
        if i % 1000 == 0:
            with spanscope.region("phase"):
                pass
    spanscope.finalize(verbose=False)
    out = tmp_path / "c.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    d = data_blob(out.read_text(encoding="utf-8"))
    (series,) = d["counters"]
    assert d["names"][series[0]] == "queue depth"
    pts = series[2]
    assert 2 <= len(pts) // 2 <= 4000
    vals = pts[1::2]
    assert min(vals) == 0 and max(vals) == 96  # the extremes survive the thinning
    ts = pts[0::2]
    assert ts == sorted(ts)
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        r = run_chromium("--dump-dom", out.as_uri())
        m = re.search(r'data-counters="(\d+)"', r.stdout)
        assert m and int(m.group(1)) == 1, "the counter lane was not drawn"


def test_counters_non_finite_skipped(tmp_path):
    """NaN and infinite counter samples have no JSON literal: the page
    leaves them out (its data blob must parse), keeps the finite samples of
    the series, and writes no series that has no finite sample at all."""
    import math
    spanscope = pytest.importorskip("spanscope")
    src = tmp_path / "nan.h5"
    spanscope.setup(file_path=str(src))
    spanscope.counter("x", float("nan"))
    spanscope.counter("x", 1.5)
    spanscope.counter("x", float("inf"))
    spanscope.counter("x", 2.5)
    spanscope.counter("x", float("-inf"))
    spanscope.counter("only nan", float("nan"))
    with spanscope.region("phase"):
        pass
    spanscope.finalize(verbose=False)
    out = tmp_path / "nan.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="spsdata">(.*?)</script>',
                  text, re.S)
    assert m, "no JSON data blob"

    def refuse(name):  # json.loads takes NaN/Infinity unless told not to
        raise ValueError(f"non-finite literal {name} in the page's JSON")

    d = json.loads(m.group(1), parse_constant=refuse)
    (series,) = d["counters"]  # "only nan" has no finite sample: not written
    assert d["names"][series[0]] == "x"
    vals = series[2][1::2]
    assert vals == [1.5, 2.5]
    assert all(math.isfinite(v) for v in vals)
