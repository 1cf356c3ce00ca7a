"""The HTML report's colours, legend, depth labels and the comparison of
several runs (`spanscope html a.h5 b.h5 -o cmp.html`).

Colours: 20 regions get 20 colours that stay apart (CIELAB distance, the
measure of how different two colours look), the same colour in the data
blob (timeline), the legend and the bars; the old hash-to-hue scheme is
checked to collide on the same names, so the test can tell the two apart.
Depth labels and the comparison page are rendered in headless Chromium
where it is installed.
"""
import colorsys
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import spanscope
from spanscope import ProfileManager

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))
CLI = BUILD / "spanscope"


def cli(*args):
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def blob(text):
    m = re.search(r'<script type="application/json" id="spsdata">(.*?)</script>', text, re.S)
    assert m, "no JSON data blob"
    return json.loads(m.group(1))


def lab(hexcolor):
    """sRGB "#rrggbb" to CIELAB (D65)."""
    rgb = [int(hexcolor[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def min_distance(colors):
    return min(math.dist(lab(a), lab(b)) for a, b in itertools.combinations(colors, 2))


def trace(path, names, pid=1):
    """A Chrome trace: one call of each name on one thread, the i-th
    (i + 1) * 10 us long, nested two deep every third name."""
    ev, t = [], 0
    for i, n in enumerate(names):
        d = (len(names) - i) * 10
        ev.append({"ph": "X", "name": n, "pid": pid, "tid": 1, "ts": t, "dur": d})
        if i % 3 == 0:
            ev.append({"ph": "X", "name": n + "/child", "pid": pid, "tid": 1, "ts": t + 1,
                       "dur": d // 2})
        t += d + 1
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


NAMES20 = [f"region_{i:02d}" for i in range(20)]


def test_twenty_regions_get_distinct_colours(tmp_path):
    src = trace(tmp_path / "t20.json", NAMES20)
    out = tmp_path / "t20.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    d = blob(text)
    col = dict(zip(d["names"], d["colors"]))
    assert len(col) == 20 + 7  # the regions and their children
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in col.values())
    assert len(set(col.values())) == len(col)
    # the 20 longest regions (most total time: the first 20 slots) stay far
    # apart: >= 20 CIELAB units, where about 2.3 is just noticeable
    top = sorted(col, key=lambda n: -sum(
        dur for e in json.loads(src.read_text())["traceEvents"] if e["name"] == n
        for dur in [e["dur"]]))[:20]
    assert min_distance([col[n] for n in top]) >= 20
    # the scheme it replaces, a hash of the name to a hue, collides on these
    # names (kept here so the threshold is known to tell them apart)
    def old(n):
        h = int(hashlib.sha256(n.encode()).hexdigest(), 16) % 360
        return "#%02x%02x%02x" % tuple(round(c * 255) for c in colorsys.hls_to_rgb(h / 360, .58, .62))
    assert min_distance([old(n) for n in NAMES20]) < 20
    # legend: every region, with the blob's colour; bars: the same colours
    legend = re.search(r'<div id="legend">(.*?)</div>', text, re.S).group(1)
    got = re.findall(r'<span class="sw" style="background:(#[0-9a-f]{6})"></span>([^<]*)</span>',
                     legend)
    assert {n: c for c, n in got} == col
    bars = re.findall(r'<div class="bar-name" title="([^"]*)">.*?background:(#[0-9a-f]{6})',
                      text)
    assert dict(bars) == col


def test_colours_past_the_palette_stay_distinct(tmp_path):
    """Past the 32 colours of the palette every region still gets a colour
    of its own, and regions next to each other in the legend (similar
    total time) differ visibly."""
    names = [f"r{i}" for i in range(80)]
    src = trace(tmp_path / "t80.json", names)
    out = tmp_path / "t80.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    d = blob(out.read_text(encoding="utf-8"))
    col = dict(zip(d["names"], d["colors"]))
    assert len(set(col.values())) == len(col) == 80 + 27
    total = {}
    for e in json.loads(src.read_text())["traceEvents"]:
        total[e["name"]] = total.get(e["name"], 0) + e["dur"]
    slots = sorted(col, key=lambda n: (-total[n], d["names"].index(n)))
    assert min(math.dist(lab(col[a]), lab(col[b])) for a, b in zip(slots, slots[1:])) > 10


def test_legend_order_follows_total_time(tmp_path):
    out = tmp_path / "o.html"
    r = cli("html", trace(tmp_path / "o.json", ["small", "big", "mid"]), "-o", out)
    assert r.returncode == 0, r.stderr
    legend = re.search(r'<div id="legend">(.*?)</div>', out.read_text(), re.S).group(1)
    names = re.findall(r'</span>([^<]*)</span>', legend)
    # trace(): durations 30, 20, 10 us, and small's child 15 us
    assert names == ["small", "big", "small/child", "mid"]


# --- recordings and the comparison page --------------------------------------

def spin(ns):
    import time
    t = time.perf_counter_ns()
    while time.perf_counter_ns() - t < ns:
        pass


def record(path, n_step, extra=None):
    ProfileManager.setup(file_path=str(path))
    for _ in range(n_step):
        with ProfileManager.region("step"):
            with ProfileManager.region("compute"):
                spin(20_000)
            with ProfileManager.region("io"):
                spin(5_000)
    if extra:
        with ProfileManager.region(extra):
            spin(1_000)
    ProfileManager.finalize(verbose=False)
    ProfileManager._reset()
    return path


@pytest.fixture
def two_runs(tmp_path):
    a = record(tmp_path / "a.h5", 3, extra="only_in_a")
    b = record(tmp_path / "b.h5", 6, extra="only_in_b")
    return a, b


def cells(row):
    return re.findall(r'<td[^>]*>([^<]*)</td>', row)


def test_comparison_page(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp.html"
    r = cli("html", a, b, "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    text = out.read_text(encoding="utf-8")
    assert "comparison of 2 runs" in text
    d = blob(text)
    assert [x["label"] for x in d["runs"]] == ["a.h5", "b.h5"]
    ra, rb = spanscope.read(a), spanscope.read(b)
    stats = dict(zip(d["regions"], d["stats"]))
    assert set(stats) == {"step", "compute", "io", "only_in_a", "only_in_b"}
    for name in ("step", "compute", "io"):
        sa, sb = stats[name]
        assert sa[:2] == [ra[name].num_calls, ra[name].total_ns]
        assert sb[:2] == [rb[name].num_calls, rb[name].total_ns]
        assert sa[2] == int(ra[name].self_ns.sum())  # the fold's self time
    assert stats["only_in_a"][1] is None and stats["only_in_b"][0] is None
    # the ratio column: total #2 / #1, per region
    rows = re.findall(r"<tr><td data-v=\"([^\"]*)\">.*?</tr>",
                      text.split('id="cmp"')[1], re.S)
    body = text.split('id="cmp"')[1]
    for name in ("step", "compute"):
        row = re.search(rf'<tr><td data-v="{name}">.*?</tr>', body, re.S).group(0)
        cls, q = re.findall(r'<td class="n ?(\w*)" data-v="([0-9.e+-]+)">[0-9.]+&times;', row)[0]
        q = float(q)
        assert q == pytest.approx(rb[name].total_ns / ra[name].total_ns, rel=1e-5)
        assert cls == ("up" if q > 1 else "down" if q < 1 else "")
    assert ">gone</td>" in re.search(r'<tr><td data-v="only_in_a">.*?</tr>', body, re.S).group(0)
    assert ">new</td>" in re.search(r'<tr><td data-v="only_in_b">.*?</tr>', body, re.S).group(0)
    assert set(rows) == set(stats)
    # bars: per region one per run, in the region's colour
    col = dict(zip(d["regions"], d["colors"]))
    assert len(set(col.values())) == len(col)
    for name in ("step", "compute", "io"):
        block = re.search(rf'background:{col[name]}"></span><b>{name}</b>(.*?)</div>\n</div>',
                          text, re.S)
        assert block and block.group(1).count('class="bar-run"') == 2
    # the legend names every region; nothing outside the file is referenced
    legend = re.search(r'<div id="legend">(.*?)</div>', text, re.S).group(1)
    assert all(f"</span>{n}</span>" in legend for n in stats)
    low = text.lower()
    assert "http://" not in low and "https://" not in low and "<link" not in low
    assert not re.search(r"\b(src|href)\s*=", low)


def test_comparison_of_three_and_traces(two_runs, tmp_path):
    """Three inputs of mixed formats, two with the same file name: the
    labels say which is which."""
    a, b = two_runs
    (tmp_path / "x").mkdir()
    c = tmp_path / "x" / "a.json"
    d2 = tmp_path / "a.json"
    for p in (c, d2):
        r = cli("convert", a, p)
        assert r.returncode == 0, r.stderr
    out = tmp_path / "cmp3.html"
    r = cli("html", a, c, d2, "-o", out)
    assert r.returncode == 0, r.stderr
    d = blob(out.read_text(encoding="utf-8"))
    assert [x["label"] for x in d["runs"]] == ["a.h5", str(c), str(d2)]
    stats = dict(zip(d["regions"], d["stats"]))
    for name in ("step", "compute", "io"):  # the same recording three times
        s1, s2, s3 = stats[name]
        assert s1[0] == s2[0] == s3[0]
        assert abs(s1[1] - s2[1]) <= 3 * s1[0] and s2 == s3  # traces: us with ns precision


def test_comparison_errors(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "e.html"
    r = cli("html", a, b, "-o", out, "--max-spans", "10")
    assert r.returncode == 2 and "--max-spans is for one FILE" in r.stderr
    r = cli("html", a, tmp_path / "missing.h5", "-o", out)
    assert r.returncode == 1 and r.stderr.startswith("spanscope: html: ")
    assert r.stderr.count("\n") == 1 and "missing.h5" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = cli("html", a, bad, "-o", out)
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    r = cli("html", a, tmp_path / "x.txt", "-o", out)
    assert r.returncode == 2 and "unknown input format" in r.stderr
    assert not out.exists()
    assert not list(tmp_path.glob("e.html*"))  # no temporary left behind
    r = cli("html", "--help")
    assert r.returncode == 0 and "FILE FILE... -o PAGE.html" in r.stdout


# --- headless Chromium ------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("chromium is not installed")


def dump_dom(page):
    r = subprocess.run([chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=5000", "--window-size=1200,800", "--dump-dom",
                        page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_depth_labels_drawn(tmp_path):
    """Every depth row of every thread lane gets a label: the page's
    script counts them into data-depth-labels."""
    src = tmp_path / "deep.json"
    ev = [{"ph": "X", "name": f"d{k}", "pid": 1, "tid": 1, "ts": k, "dur": 100 - 2 * k}
          for k in range(4)]  # four deep on thread 1
    ev += [{"ph": "X", "name": "flat", "pid": 1, "tid": 2, "ts": 0, "dur": 50},
           {"ph": "X", "name": "flat", "pid": 2, "tid": 3, "ts": 0, "dur": 50}]
    src.write_text(json.dumps({"traceEvents": ev}))
    out = tmp_path / "deep.html"
    r = cli("html", src, "-o", out)
    assert r.returncode == 0, r.stderr
    dom = dump_dom(out)
    m = re.search(r'<canvas[^>]*data-depth-labels="(\d+)"', dom)
    assert m, "the timeline drew no depth labels"
    assert int(m.group(1)) == 4 + 1 + 1


def test_comparison_renders_and_sorts(two_runs, tmp_path):
    a, b = two_runs
    out = tmp_path / "cmp.html"
    assert cli("html", a, b, "-o", out).returncode == 0
    page = out.read_text(encoding="utf-8")
    # click the "total #2 / #1" header once before the dump
    page = page.replace("</body>", "<script>document.querySelector('#cmp thead th:last-child')"
                        ".click();</script></body>")
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page, encoding="utf-8")
    dom = dump_dom(clicked)
    body = dom.split('id="cmp"')[1].split("</table>")[0]
    order = re.findall(r'<tr><td data-v="([^"]*)"', body)
    ratios = [float(x) for x in re.findall(r'data-v="([0-9.e+-]+)">[0-9.]+×', body)]
    assert len(order) == 5 and len(ratios) == 3
    assert ratios == sorted(ratios)  # the first click sorts ascending
    assert order[-2:] in (["only_in_a", "only_in_b"], ["only_in_b", "only_in_a"])


def test_summary_table_still_sorts(tmp_path):
    """The one-run page's summary table (#stats) sorts by a click too,
    through the script it now shares with the comparison."""
    out = tmp_path / "s.html"
    r = cli("html", trace(tmp_path / "s.json", ["c", "a", "b"]), "-o", out)
    assert r.returncode == 0, r.stderr
    page = out.read_text(encoding="utf-8").replace(
        "</body>", "<script>document.querySelector('#stats thead th').click();</script></body>")
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page, encoding="utf-8")
    body = dump_dom(clicked).split('id="stats"')[1].split("</table>")[0]
    assert re.findall(r'<tr><td data-v="([^"]*)"', body) == ["a", "b", "c", "c/child"]
