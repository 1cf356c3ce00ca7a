"""`spanscope view` of a recording with device activity (issue 38 part 3:
"device tracks in every timeline ... flow arrows from the launching span to
the kernel"), in a real browser.

The fixture is test_device_timeline.py's: a spanscope recording (nested and
recursive regions on two threads) to which /device is added with h5py as
docs/device.md's contract lays it out (kernels, a copy, a set, two GPUs, a
launch from a thread without spans).  The page (headless Chromium over the
DevTools protocol, test_view_chromium.py's client) must show:

* a process group per GPU ("GPU N") and a lane per stream ("stream S"),
  each activity drawn once at full zoom, in its name's colour;
* a click on a kernel selects it: its name, kind, grid and block, its API
  call and its launching span (the innermost span of its region on the
  launching thread that holds the launch -- the recursive region's inner
  call), and one flow arrow from the launch in that span to the kernel's
  start;
* a click on a launching span lists what it launched, with an arrow to each;
* hovering a kernel draws its arrow and its tooltip says which span
  launched it (only the hovered and selected records' arrows are drawn);
* a kernel launched outside every span has no launching span and no arrow;
* the region table of the window leaves the device activity out;
* end to end: a recording made through the C core's CUPTI collector against
  the stand-in libcupti (tests/c/fake_cupti.c, as test_device_python.py's
  end-to-end test) shows its kernels on "GPU 0", each joined to the span
  that launched it.

The expectations come from the fixture's own rows, never from the viewer.
"""
import os
import subprocess
import sys

import pytest

import test_device_timeline as TDT
from test_view_chromium import CLI, Browser, Viewer, assert_clean, fmt_ns, open_page
import test_view_chromium as TVC

pytestmark = TVC.pytestmark


@pytest.fixture(scope="module")
def device_file(tmp_path_factory):
    """One recording (rank 0) with /device added; (path, info)."""
    if not CLI.exists():
        pytest.skip(f"no command-line tool at {CLI}")
    d = tmp_path_factory.mktemp("viewdevice")
    path = str(d / "dev.h5")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-c", TDT.RECORD, path, "0"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return path, TDT.add_device(path, 0)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium-profile-device"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def page(browser, device_file):
    path, info = device_file
    v = Viewer(path)
    meta = open_page(browser, v.url)
    yield meta, info
    v.stop()


def api_row(info, r):
    """The API row of device row r (same correlation), or None."""
    for a in info["rows"]:
        if a["kinds"] >= 4 and a["correlations"] == r["correlations"]:
            return a
    return None


def launching_span(info, r):
    """The fixture's launching span of device row r: the innermost span of
    its region on its thread that holds the launch (its API call's start)."""
    a = api_row(info, r)
    if a is None or r["regions"] < 0:
        return None
    name = next(s["name"] for s in info["spans"] if s["region"] == r["regions"])
    held = [s for s in info["spans"] if s["thread"] == r["threads"] and s["name"] == name
            and s["start"] <= a["starts_ns"] <= s["end"]]
    return max(held, key=lambda s: s["start"]) if held else None


def stream_lanes(meta):
    """{(gpu name, stream): view thread id} of the page's stream lanes."""
    procs = {p["id"]: p for p in meta["procs"]}
    return {(procs[t["proc"]]["name"], int(t["name"].split()[1])): t["id"]
            for t in meta["threads"] if t.get("stream")}


def device_rows(info):
    return [r for r in info["rows"] if r["kinds"] <= 3]


def rec_of(browser, thread, start):
    recs = browser.js("spsView.records()")
    got = [r for r in recs if r["thread"] == thread and r["start"] == start]
    assert len(got) == 1, (thread, start, [r for r in recs if r["thread"] == thread])
    return got[0]


def click_rec(browser, r):
    x = browser.js(f"spsView.pixelOf({r['start'] + r['dur'] / 2})")
    y = browser.js(f"spsView.rowY({r['thread']}, {r['depth']})")
    browser.js("spsView.selected = null")
    browser.click(x, y)
    browser.wait("!!(spsView.selected && document.getElementById('d-name'))", 30, "the details")
    browser.settle()


def text(browser, el_id):
    return browser.js(f"(document.getElementById('{el_id}') || {{}}).textContent || null")


def test_gpu_groups_and_stream_lanes_draw_each_activity_once(browser, page):
    meta, info = page
    t0 = meta["t0_ns"]
    gpus = sorted(p["name"] for p in meta["procs"] if p.get("gpu"))
    assert gpus == ["GPU 0", "GPU 1"]
    lanes = stream_lanes(meta)
    want = {(f"GPU {r['devices']}", r["streams"]) for r in device_rows(info)}
    assert set(lanes) == want  # GPU 0: 7, 9, 13, 21; GPU 1: 3
    assert meta["ndevice"] == len(device_rows(info))
    assert meta["nspans"] == len(info["spans"])
    # full zoom: every activity drawn once, as itself, on its stream's lane
    recs = browser.js("spsView.records()")
    on_streams = [r for r in recs if r["thread"] in set(lanes.values())]
    assert len(on_streams) == len(device_rows(info))
    got = sorted((r["thread"], r["start"], r["dur"], meta["names"][r["name"]], r["count"])
                 for r in on_streams)
    exp = sorted((lanes[(f"GPU {r['devices']}", r["streams"])], r["starts_ns"] - t0,
                  r["ends_ns"] - r["starts_ns"], r["name"], 1) for r in device_rows(info))
    assert got == exp
    # the CPU spans are all there too
    assert browser.js("spsView.drawnSpans") == len(info["spans"]) + len(device_rows(info))
    # the screenshot: the widest kernel in its colour at its right end
    k = max((r for r in on_streams if meta["names"][r["name"]] == TDT.KERNEL),
            key=lambda r: r["dur"])
    x = browser.js(f"spsView.pixelOf({k['start'] + k['dur']})") - 2
    y = browser.js(f"spsView.rowY({k['thread']}, {k['depth']})") + 5
    assert "#%02x%02x%02x" % browser.pixel(x, y) == meta["colors"][k["name"]]
    # the lanes' labels: the GPU groups and streams are on the canvas, as text
    assert_clean(browser)


def test_click_on_a_kernel_shows_its_launching_span_and_one_arrow(browser, page):
    meta, info = page
    t0 = meta["t0_ns"]
    lanes = stream_lanes(meta)
    # the kernel the recursive region's inner call launched
    inner = info["inner"]
    r = next(r for r in device_rows(info) if launching_span(info, r) is inner)
    a = api_row(info, r)
    thread = lanes[(f"GPU {r['devices']}", r["streams"])]
    rec = rec_of(browser, thread, r["starts_ns"] - t0)
    click_rec(browser, rec)
    sel = browser.js("spsView.selected")
    assert sel["name"] == TDT.KERNEL
    assert text(browser, "d-name") == TDT.KERNEL
    assert text(browser, "d-kind") == "kernel"
    assert text(browser, "d-grid") == f"{r['grid_x']} \u00d7 {r['grid_y']} \u00d7 {r['grid_z']}"
    assert text(browser, "d-block") == f"{r['block_x']} \u00d7 {r['block_y']} \u00d7 {r['block_z']}"
    assert text(browser, "d-api").startswith(a["name"] + " @ " + fmt_ns(a["starts_ns"] - t0))
    # the launching span: rec's inner call (not the outer one that also holds the launch)
    launch = sel["launch"]
    assert meta["names"][launch["name"]] == "rec"
    assert launch["start_ns"] == inner["start"] - t0
    assert launch["dur_ns"] == inner["end"] - inner["start"]
    assert launch["launch_ns"] == a["starts_ns"] - t0
    assert text(browser, "d-launch").startswith("rec @ " + fmt_ns(inner["start"] - t0))
    # one arrow, from the launch in that span to the kernel's start
    assert browser.js("spsView.arrowsDrawn") == 1
    pts = browser.js("spsView.arrowPoints()")
    assert len(pts) == 1 and pts[0] is not None
    fx = browser.js(f"spsView.pixelOf({a['starts_ns'] - t0})")
    fy = browser.js(f"spsView.rowY({launch['thread']}, {launch['depth']})")
    tx = browser.js(f"spsView.pixelOf({r['starts_ns'] - t0})")
    ty = browser.js(f"spsView.rowY({thread}, {rec['depth']})")
    assert abs(pts[0]["from"]["x"] - fx) < 0.5 and abs(pts[0]["from"]["y"] - fy) < 0.5
    assert abs(pts[0]["to"]["x"] - tx) < 0.5 and abs(pts[0]["to"]["y"] - ty) < 0.5
    # the launching span's lane is the launching thread's (the rec region's row there)
    lane = next(t for t in meta["threads"] if t["id"] == launch["thread"])
    assert not lane.get("stream") and lane["tid"] == r["threads"]
    # the arrow is drawn: its colour where it ends (the head, left of the kernel's start)
    assert browser.pixel(tx - 3, ty) == (0xd0, 0x10, 0x4c)
    # a click on the "launched by" cell goes to the launching span
    browser.js("document.getElementById('d-launch').click()")
    browser.wait(f"spsView.selected && spsView.selected.start_ns === {inner['start'] - t0}"
                 " && spsView.selected.name === 'rec'", 30, "the launching span selected")
    browser.settle()
    assert_clean(browser)


def test_click_on_a_launching_span_lists_and_arrows_what_it_launched(browser, page):
    meta, info = page
    t0 = meta["t0_ns"]
    browser.js(f"spsView.zoomTo(0, {meta['t1_rel_ns']})")
    browser.settle()
    lanes = stream_lanes(meta)
    # the main thread's first launch span: a kernel and a copy
    launched = {}
    for r in device_rows(info):
        s = launching_span(info, r)
        if s is not None:
            launched.setdefault((s["thread"], s["start"]), []).append(r)
    span = min((s for s in info["spans"] if s["name"] == "launch"
                and len(launched.get((s["thread"], s["start"]), [])) == 2),
               key=lambda s: s["start"])
    rows = launched[(span["thread"], span["start"])]
    threads = {t["id"] for t in meta["threads"] if t["tid"] == span["thread"]
               and not t.get("stream")}
    recs = [x for x in browser.js("spsView.records()")
            if x["thread"] in threads and x["start"] == span["start"] - t0]
    assert len(recs) == 1
    click_rec(browser, recs[0])
    sel = browser.js("spsView.selected")
    assert sel["name"] == "launch" and sel["launched_total"] == 2
    assert text(browser, "d-launched").startswith("2 device activities")
    pts = browser.js("spsView.arrowPoints()")
    assert len(pts) == 2 and browser.js("spsView.arrowsDrawn") == 2
    fy = browser.js(f"spsView.rowY({recs[0]['thread']}, {recs[0]['depth']})")
    want_from = sorted(browser.js(f"spsView.pixelOf({api_row(info, r)['starts_ns'] - t0})")
                       for r in rows)
    got_from = sorted(p["from"]["x"] for p in pts)
    assert all(abs(g - w) < 0.5 for g, w in zip(got_from, want_from))
    assert all(abs(p["from"]["y"] - fy) < 0.5 for p in pts)
    want_to = set()
    for r in rows:
        th = lanes[(f"GPU {r['devices']}", r["streams"])]
        x = browser.js(f"spsView.pixelOf({r['starts_ns'] - t0})")
        want_to.add((round(x, 1), round(browser.js(f"spsView.rowY({th}, 0)"), 1)))
    assert {(round(p["to"]["x"], 1), round(p["to"]["y"], 1)) for p in pts} == want_to
    assert_clean(browser)


def test_a_kernel_launched_outside_every_span_has_no_arrow(browser, page):
    meta, info = page
    t0 = meta["t0_ns"]
    browser.js(f"spsView.zoomTo(0, {meta['t1_rel_ns']})")
    browser.settle()
    lanes = stream_lanes(meta)
    r = next(r for r in device_rows(info) if r["correlations"] == info["unknown"])
    rec = rec_of(browser, lanes[(f"GPU {r['devices']}", r["streams"])], r["starts_ns"] - t0)
    click_rec(browser, rec)
    assert browser.js("spsView.selected.launch") is None
    assert text(browser, "d-launch").startswith("no span")
    assert browser.js("spsView.arrowPoints().length") == 0
    assert browser.js("spsView.arrowsDrawn") == 0
    # a click on nothing clears the selection and its arrows
    browser.click(TVC.WIDTH - 80, browser.js("spsView.rowY(%d, 0)" % rec["thread"]))
    assert browser.js("spsView.selected") is None
    browser.settle()
    assert browser.js("spsView.arrowPoints().length") == 0
    assert_clean(browser)


def test_hovering_a_kernel_draws_its_arrow_and_says_where_it_was_launched(browser, page):
    meta, info = page
    t0 = meta["t0_ns"]
    browser.js(f"spsView.zoomTo(0, {meta['t1_rel_ns']})")
    browser.settle()
    lanes = stream_lanes(meta)
    # nothing selected: a click on empty space (stream 21's one kernel is at the start)
    browser.click(TVC.WIDTH - 80, browser.js(f"spsView.rowY({lanes[('GPU 0', 21)]}, 0)"))
    browser.settle()
    assert browser.js("spsView.selected") is None
    r = next(r for r in device_rows(info) if r["devices"] == 1)  # a worker's kernel
    s = launching_span(info, r)
    a = api_row(info, r)
    thread = lanes[("GPU 1", 3)]
    rec = rec_of(browser, thread, r["starts_ns"] - t0)
    x = browser.js(f"spsView.pixelOf({rec['start'] + rec['dur'] / 2})")
    y = browser.js(f"spsView.rowY({thread}, {rec['depth']})")
    browser.page("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": round(x), "y": round(y)})
    browser.wait("spsView.hoverArrows === 1", 30, "the hovered kernel's arrow")
    browser.settle()
    pts = browser.js("spsView.hoverArrowPoints()")
    assert browser.js("spsView.arrowsDrawn") == 1 and len(pts) == 1
    fx = browser.js(f"spsView.pixelOf({a['starts_ns'] - t0})")
    tx = browser.js(f"spsView.pixelOf({r['starts_ns'] - t0})")
    assert abs(pts[0]["from"]["x"] - fx) < 0.5 and abs(pts[0]["to"]["x"] - tx) < 0.5
    tip = browser.js("document.getElementById('tip').textContent")
    assert tip.startswith("_Z4fillPfi\n")
    assert ("launched by launch @ " + fmt_ns(s["start"] - t0)) in tip
    # the pointer away: the arrow goes
    browser.page("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 0, "y": 0})
    browser.settle()
    assert browser.js("spsView.hoverArrows") == 0 and browser.js("spsView.arrowsDrawn") == 0
    assert_clean(browser)


def test_the_window_table_leaves_the_device_out(browser, page):
    meta, info = page
    browser.js(f"spsView.zoomTo(0, {meta['t1_rel_ns']})")
    browser.settle()
    rows = browser.js("Array.from(document.querySelectorAll('#stats tbody tr'))"
                      ".map(function (tr) { return tr.cells[0].textContent; })")
    assert set(rows) == {s["name"] for s in info["spans"]}
    # search finds kernels on their streams
    res = browser.js("spsView.search('_Z4fill')")
    lanes = stream_lanes(meta)
    assert {h["thread"] for h in res["hits"]} == {lanes[("GPU 1", 3)]}
    assert_clean(browser)


# --- end to end: the collector against the stand-in libcupti ---------------------

FAKE = next((p for p in (TVC.BUILD / "libsps_fake_cupti.so",
                         TVC.BUILD / "tests" / "c" / "libsps_fake_cupti.so") if p.exists()), None)

CHILD = r"""
import ctypes, os, sys
from spanscope import _ext
lib = ctypes.CDLL(os.environ["SPANSCOPE_CUPTI_LIB"])
lib.fake_cupti_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
path = sys.argv[1]
_ext.setup(path)
_ext.device_start(_ext.DEVICE_CUPTI)
with _ext.region_new("outer"):
    lib.fake_cupti_launch(b"_Z4axpyv", 50000)
    with _ext.region_new("inner"):
        lib.fake_cupti_launch(b"_Z4gemmv", 200000)
        lib.fake_cupti_launch(b"_Z4gemmv", 100000)
_ext.device_stop(_ext.DEVICE_CUPTI)
_ext.finalize(path, False)
_ext.shutdown()
"""


@pytest.mark.skipif(FAKE is None, reason="the build has no stand-in libcupti "
                    "(libsps_fake_cupti.so: built only where CUPTI's headers are)")
def test_a_recording_through_the_stand_in_libcupti(browser, tmp_path):
    path = tmp_path / "cupti.h5"
    env = dict(os.environ, SPANSCOPE_CUPTI_LIB=str(FAKE), SPANSCOPE_CUDA_LIB=str(FAKE))
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    v = Viewer(path)
    try:
        meta = open_page(browser, v.url)
        names = meta["names"]
        assert [p["name"] for p in meta["procs"] if p.get("gpu")] == ["GPU 0"]
        assert meta["ndevice"] == 3
        streams = {t["id"] for t in meta["threads"] if t.get("stream")}
        kern = sorted((x for x in browser.js("spsView.records()") if x["thread"] in streams),
                      key=lambda x: x["start"])
        assert [names[k["name"]] for k in kern] == ["_Z4axpyv", "_Z4gemmv", "_Z4gemmv"]
        assert [k["dur"] for k in kern] == [50000, 200000, 100000]
        spans = {names[x["name"]]: x for x in browser.js("spsView.records()")
                 if x["thread"] not in streams}
        for k, want in zip(kern, ["outer", "inner", "inner"]):
            click_rec(browser, k)
            sel = browser.js("spsView.selected")
            assert names[sel["launch"]["name"]] == want
            assert sel["launch"]["start_ns"] == spans[want]["start"]
            assert text(browser, "d-api").startswith("cudaLaunchKernel @ ")
            assert browser.js("spsView.arrowsDrawn") == 1
        click_rec(browser, spans["inner"])
        assert browser.js("spsView.selected.launched_total") == 2
        assert browser.js("spsView.arrowsDrawn") == 2
        assert_clean(browser)
    finally:
        v.stop()
