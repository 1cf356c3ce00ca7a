"""spanscope's terminal browser (spanscope.integrations.tui): the navigation
model and the detail texts against spanscope.read of the same file, the plot
dispatch to spanscope.plots, the text chart, the command line, and the
Textual app driven by its pilot (App.run_test: keys pressed, widgets read)."""

import asyncio
import importlib.util
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import spanscope
from spanscope import MPIRegion, ProfilingResults, Region
from spanscope.integrations import tui
from spanscope.integrations.tui import (
    build_browser_model,
    main,
    node_detail_text,
    parse_ranks,
    render_plot,
    render_text_chart,
)

NS = 1_000_000_000

needs_textual = pytest.mark.skipif(
    importlib.util.find_spec("textual") is None,
    reason="the optional 'tui' extra (textual) is not installed")


def _write(path, per_rank, metadata=None):
    """A profile with exact timings, by spanscope's writer."""
    regions = {}
    for rank, regs in per_rank.items():
        for name, (starts, ends) in regs.items():
            regions.setdefault(name, {})[rank] = Region(starts, ends)
    res = ProfilingResults({n: MPIRegion(n, r) for n, r in regions.items()},
                           metadata=metadata or {})
    spanscope.write_profile(res, path)
    return path


@pytest.fixture
def recorded_file(tmp_path):
    """Recorded with the public API: outer > 3 x inner, then tail."""
    path = tmp_path / "profiling_data.h5"
    spanscope.setup(file_path=str(path))
    with spanscope.region("outer"):
        for _ in range(3):
            with spanscope.region("inner"):
                time.sleep(0.001)
    with spanscope.region("tail"):
        pass
    spanscope.finalize(verbose=False)
    return path


@pytest.fixture
def ranks_file(tmp_path):
    """rank 0: setup 1 s, solve 2 x 2 s; rank 1: solve 3 s."""
    return _write(tmp_path / "ranks.h5",
                  {0: {"setup": ([0], [NS]), "solve": ([2 * NS, 5 * NS], [4 * NS, 7 * NS])},
                   1: {"solve": ([2 * NS], [5 * NS])}},
                  {"start_time_ns": 0, "finalize_time_ns": 8 * NS, "mpi_size": 2})


def _find(node, label):
    if node.label == label:
        return node
    for child in node.children:
        found = _find(child, label)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------
# the model and the detail texts
# ---------------------------------------------------------------------------

def test_sections_and_regions(recorded_file):
    model = build_browser_model(recorded_file)
    assert [c.label for c in model.root.children] == [
        "Overview", "Plots", "Metadata", "Regions", "Raw HDF5"]
    assert model.root.label == "profiling_data.h5"
    regions = _find(model.root, "Regions")
    # by first call, as the reader orders them
    assert [c.label for c in regions.children] == ["outer", "inner", "tail"]
    inner = _find(regions, "inner")
    assert [c.label for c in inner.children] == ["Summary", "Calls", "Source"]
    assert [c.label for c in _find(inner, "Calls").children] == ["Rank 0"]


def test_region_details_match_the_reader(recorded_file):
    model = build_browser_model(recorded_file)
    res = spanscope.read(recorded_file)
    for name in ("outer", "inner", "tail"):
        data = res.regions[name][0]
        text = node_detail_text(_find(_find(model.root, "Regions"), name))
        assert re.search(rf"│ Calls\s+│ {data.num_calls}\s+│", text)
        total = int(data.durations_ns.sum()) / NS
        assert f"{total:.6g} s" in text
        self_total = int(data.self_ns.sum()) / NS
        assert re.search(rf"Exclusive \(self\)\s+│ {re.escape(f'{self_total:.6g}')} s", text)
    # outer's self time is the fold's: its duration less its children's
    outer = res.regions["outer"][0]
    assert int(outer.self_ns.sum()) < int(outer.durations_ns.sum())


def test_rank_calls_list_every_call_with_its_self_time(recorded_file):
    model = build_browser_model(recorded_file)
    res = spanscope.read(recorded_file)
    inner = _find(_find(model.root, "Regions"), "inner")
    text = node_detail_text(_find(_find(inner, "Calls"), "Rank 0"))
    assert all(col in text for col in ("#", "Start", "End", "Duration", "Self"))
    data = res.regions["inner"][0]
    body = [line for line in text.splitlines() if re.match(r"│ \d+ ", line)]
    assert len(body) == data.num_calls == 3
    for i, line in enumerate(body):
        cells = [c.strip() for c in line.strip("│").split("│")]
        assert int(cells[0]) == i
        assert float(cells[3]) == pytest.approx(int(data.durations_ns[i]) / NS, rel=1e-8)
        assert float(cells[4]) == pytest.approx(int(data.self_ns[i]) / NS, rel=1e-8)
    source = node_detail_text(_find(inner, "Source"))
    first_line = source.splitlines()[0]
    assert first_line.endswith(f"test_tui.py:{inner.payload['region'].source_lineno}")
    assert inner.payload["region"].source_lineno == data.source_line


def test_overview_and_regions_table(ranks_file):
    model = build_browser_model(ranks_file)
    overview = node_detail_text(_find(model.root, "Overview"))
    assert "Top regions by total time" in overview and "█" in overview
    assert re.search(r"│ Ranks\s+│ 2 ", overview)
    assert re.search(r"│ Calls\s+│ 4 ", overview)
    assert "Setup to finalize" in overview and "8 s" in overview
    table = node_detail_text(_find(model.root, "Regions"))
    solve = next(line for line in table.splitlines() if "solve" in line)
    assert "7 s" in solve  # 2 + 2 + 3
    # rank totals 4 s and 3 s: 4 / 3.5 - 1 = 14.2857%
    assert "14.2857%" in solve
    calls = node_detail_text(_find(_find(_find(model.root, "Regions"), "solve"), "Calls"))
    assert re.search(r"│ 0\s+│ 2\s+│", calls) and re.search(r"│ 1\s+│ 1\s+│", calls)


def test_metadata_sections(ranks_file):
    model = build_browser_model(ranks_file)
    landing = node_detail_text(_find(model.root, "Metadata"))
    assert "metadata entries recorded" in landing and "Select a section below" in landing
    parallelism = node_detail_text(_find(model.root, "Parallelism"))
    assert re.search(r"│ mpi_size\s+│ 2\s+│", parallelism)
    run = _find(model.root, "Run")
    run.payload["entries"] = [("uname", "Darwin " * 30)]
    wrapped = node_detail_text(run)
    assert len(max(wrapped.splitlines(), key=len)) < 110
    assert wrapped.count("Darwin") == 30

    class Broken:
        def __str__(self):
            raise TypeError("broken")

    run.payload["entries"] = [("broken", Broken())]
    assert "<unprintable Broken>" in node_detail_text(run)


def test_raw_hdf5_lists_the_file(recorded_file):
    model = build_browser_model(recorded_file)
    raw = _find(model.root, "Raw HDF5")
    assert "HDF5 group: /" in node_detail_text(raw)
    names = _find(raw, "names")
    assert names is not None and "HDF5 dataset" in node_detail_text(names)
    assert "Dtype:" in node_detail_text(names)


def test_a_json_profile_has_no_raw_hdf5(ranks_file, tmp_path):
    out = spanscope.write_profile(spanscope.read_profile(ranks_file), tmp_path / "r.json")
    model = build_browser_model(out)
    assert [c.label for c in model.root.children] == [
        "Overview", "Plots", "Metadata", "Regions"]
    assert [c.label for c in _find(model.root, "Regions").children] == ["setup", "solve"]


@pytest.mark.parametrize("content", [b"not a profile", b"", b"\x89HDF\r\n\x1a\n" + b"\0" * 40])
def test_a_file_that_is_not_a_profile(tmp_path, content):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(content)
    with pytest.raises((OSError, ValueError)):
        build_browser_model(bad)


def test_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        build_browser_model(tmp_path / "missing.h5")


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

def test_plot_catalog(recorded_file):
    plots = _find(build_browser_model(recorded_file).root, "Plots")
    assert [c.label for c in plots.children] == [
        "Gantt", "Durations", "Flame chart", "Flame graph", "Callgraph", "Timeseries",
        "Histogram", "Imbalance"]
    assert "Matplotlib" in node_detail_text(plots.children[0])


def test_render_plot_passes_the_settings(recorded_file, monkeypatch, tmp_path):
    model = build_browser_model(recorded_file)
    captured = []
    monkeypatch.setattr(tui, "plot_durations",
                        lambda results, **kw: captured.append((results, kw)))
    out = tmp_path / "d.png"
    assert render_plot(_find(model.root, "Durations"), filepath=out, settings={
        "include": "inner, outer", "exclude": "tail", "ranks": "0,2-3", "cmap": "viridis",
        "metric": "avg", "sort_by": "avg", "top_n": "5", "log_scale": True,
        "backend": "plotly"}) == str(out)
    results, kw = captured[0]
    assert results is model.results
    assert kw["filepath"] == str(out) and kw["show"] is False
    assert kw["include"] == ["inner", "outer"] and kw["exclude"] == ["tail"]
    assert kw["ranks"] == [0, 2, 3] and kw["cmap"] == "viridis"
    assert kw["metric"] == "avg" and kw["sort_by"] == "avg" and kw["top_n"] == 5
    assert kw["log_scale"] is True and kw["backend"] == "plotly"


@pytest.mark.parametrize("settings, message", [
    ({"ranks": "0-x"}, "ranks"),
    ({"include": "("}, "Invalid region filter"),
    ({"top_n": "many"}, "Top N"),
])
def test_render_plot_rejects_bad_settings(recorded_file, settings, message):
    node = _find(build_browser_model(recorded_file).root, "Durations")
    with pytest.raises(ValueError, match=message):
        render_plot(node, settings=settings)


def test_render_plot_needs_a_plot(recorded_file):
    with pytest.raises(ValueError, match="individual plot"):
        render_plot(_find(build_browser_model(recorded_file).root, "Overview"))


def test_render_plot_draws_a_png(recorded_file, tmp_path):
    pytest.importorskip("matplotlib")
    node = _find(build_browser_model(recorded_file).root, "Histogram")
    out = Path(render_plot(node, filepath=tmp_path / "h.png", settings={"bins": "5"}))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_parse_ranks():
    assert parse_ranks("") is None
    assert parse_ranks("3, 0-1") == [0, 1, 3]
    for bad in ("a", "1-", "3-1", "-2"):
        with pytest.raises(ValueError):
            parse_ranks(bad)


def test_text_chart_fits_and_orders(ranks_file):
    node = _find(build_browser_model(ranks_file).root, "Durations")
    text = render_text_chart(node, width=48, height=12)
    lines = text.splitlines()
    assert len(lines) <= 12 and max(map(len, lines)) <= 48
    assert lines[0].startswith("total duration")
    assert lines[1].startswith("solve") and lines[1].rstrip().endswith("7")
    assert lines[2].startswith("setup") and lines[2].rstrip().endswith("1")
    assert lines[1].count("█") > lines[2].count("█") > 0
    only = render_text_chart(node, settings={"include": "setup", "ranks": "0"})
    assert "solve" not in only and "setup" in only
    rank1 = render_text_chart(node, settings={"ranks": "1", "metric": "max"})
    assert "setup" not in rank1 and rank1.splitlines()[1].rstrip().endswith("3")
    top = render_text_chart(node, settings={"top_n": "1", "sort_by": "name"})
    assert len(top.splitlines()) == 2 and "setup" in top
    with pytest.raises(ValueError, match="Invalid region filter"):
        render_text_chart(node, settings={"exclude": "*print"})
    with pytest.raises(ValueError, match="durations plot only"):
        render_text_chart(_find(build_browser_model(ranks_file).root, "Gantt"))


def test_text_charts_are_drawn_one_at_a_time(ranks_file, monkeypatch):
    node = _find(build_browser_model(ranks_file).root, "Durations")
    state = {"active": 0, "maximum": 0}
    lock = threading.Lock()
    real = tui.region_rows

    def slow_rows(*args, **kwargs):
        with lock:
            state["active"] += 1
            state["maximum"] = max(state["maximum"], state["active"])
        time.sleep(0.02)
        with lock:
            state["active"] -= 1
        return real(*args, **kwargs)

    monkeypatch.setattr(tui, "region_rows", slow_rows)
    threads = [threading.Thread(target=render_text_chart, args=(node,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["maximum"] == 1


def test_matplotlib_child_script_draws_the_plot(ranks_file):
    """g's child process, headless (Agg: show() returns at once)."""
    pytest.importorskip("matplotlib")
    import json
    import os
    import subprocess
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", tui._matplotlib_child_script(),
                           str(ranks_file), "durations", json.dumps({"metric": "avg"})],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    bad = subprocess.run([sys.executable, "-c", tui._matplotlib_child_script(),
                          str(ranks_file), "durations", json.dumps({"ranks": "x"})],
                         capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode != 0 and "ranks" in bad.stderr


# ---------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------

def test_help_needs_no_textual(capsys):
    assert main(["--help"]) == 0
    assert "spanscope tui" in capsys.readouterr().out


def test_bad_files_give_one_line_and_exit_1(tmp_path, capsys):
    assert main([str(tmp_path / "missing.h5")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spanscope tui: ") and err.count("\n") == 1
    bad = tmp_path / "bad.h5"
    bad.write_text("not a profile")
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert main([]) == 2  # no FILE: usage


def test_without_textual_the_error_names_the_extra(recorded_file, monkeypatch, capsys):
    monkeypatch.setattr(tui, "_APP_CLASS", None)
    monkeypatch.setitem(sys.modules, "textual.app", None)
    assert main([str(recorded_file)]) == 2
    assert "spanscope[tui]" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# the app, driven by Textual's pilot
# ---------------------------------------------------------------------------

def _run(app, scenario, size=(120, 40)):
    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(pilot)

    asyncio.run(go())


async def _until(pilot, condition, timeout=10.0):
    """Waits (in app time) until condition() holds: a redraw scheduled by
    a timer lands later on a busy machine."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(0.05)
    return True


def _tree_node(tree_node, label):
    if str(tree_node.label) == label:
        return tree_node
    for child in tree_node.children:
        found = _tree_node(child, label)
        if found is not None:
            return found
    return None


def _shown(app) -> str:
    """What the detail widget shows (its rendered text)."""
    return str(app.query_one("#detail").render())


@needs_textual
def test_app_opens_on_the_overview_and_walks_the_tree(recorded_file):
    app = tui.create_app(build_browser_model(recorded_file))

    async def scenario(pilot):
        assert app.selected_browser_node.label == "Overview"
        assert "Top regions by total time" in app.detail_text
        assert "Top regions by total time" in _shown(app)
        await pilot.press("down")  # the cursor moves to Plots
        await pilot.pause()
        assert app.selected_browser_node.label == "Plots"
        assert "Available plots:" in _shown(app)
        tree = app.query_one("#nav")
        tree.select_node(_tree_node(tree.root, "Regions"))
        await pilot.pause()
        res = spanscope.read(recorded_file)
        for name in ("outer", "inner", "tail"):
            assert name in app.detail_text
        line = next(line for line in app.detail_text.splitlines() if "inner" in line)
        assert f"{int(res.regions['inner'][0].durations_ns.sum()) / NS:.6g} s" in line
        # a region, once its section is open
        _tree_node(tree.root, "Regions").expand()
        await pilot.pause()
        tree.select_node(_tree_node(tree.root, "inner"))
        await pilot.pause()
        assert app.selected_browser_node.kind == "region"
        assert re.search(r"│ Calls\s+│ 3\s+│", _shown(app))
        assert app.query_one("#settings").styles.display == "none"
        await pilot.press("q")

    _run(app, scenario)
    assert app.return_code in (0, None)


@needs_textual
def test_keyboard_only_navigation_reaches_a_calls_table(recorded_file):
    app = tui.create_app(build_browser_model(recorded_file))

    async def scenario(pilot):
        # Overview, Plots, Metadata, Regions: three downs, expand, into outer
        await pilot.press("down", "down", "down")
        await pilot.pause()
        assert app.selected_browser_node.label == "Regions"
        tree = app.query_one("#nav")
        regions = _tree_node(tree.root, "Regions")
        await pilot.press("enter")  # expands (and selects) Regions
        await pilot.pause()
        assert regions.is_expanded
        await pilot.press("down")
        await pilot.pause()
        assert app.selected_browser_node.label == "outer"
        await pilot.press("escape")  # focus stays on the tree
        assert app.focused is tree

    _run(app, scenario)


@needs_textual
def test_durations_plot_shows_settings_and_a_live_text_chart(ranks_file, tmp_path):
    app = tui.create_app(build_browser_model(ranks_file), output_dir=tmp_path / "plots")

    async def scenario(pilot):
        tree = app.query_one("#nav")
        tree.select_node(_tree_node(tree.root, "Durations"))
        assert await _until(pilot, lambda: "total duration" in _shown(app))
        assert app.query_one("#settings").styles.display == "block"
        chart = _shown(app)
        assert "total duration" in chart and "solve" in chart and "setup" in chart
        assert "█" in chart
        # typing an exclude filter redraws the chart and the selected regions
        app.query_one("#exclude").focus()
        await pilot.press(*"solve")
        # the final chart: a half-typed "s" excludes setup too ("No matching
        # regions", without "solve" either: 3.10 once stopped waiting there)
        assert await _until(pilot, lambda: "solve" not in _shown(app) and "setup" in _shown(app))
        assert "█" in _shown(app)
        assert str(app.query_one("#selected-regions").render()) == "setup"
        # a half-typed bad pattern keeps the last chart and says so below
        await pilot.press("(")
        assert await _until(pilot, lambda: "Invalid region filter" in str(
            app.query_one("#selected-regions").render()))
        await pilot.pause(0.4)  # the refresh it scheduled has run
        assert "setup" in _shown(app) and "solve" not in _shown(app)

    _run(app, scenario)


@needs_textual
def test_s_saves_the_selected_plot(ranks_file, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "plots"
    app = tui.create_app(build_browser_model(ranks_file), output_dir=out)

    async def scenario(pilot):
        tree = app.query_one("#nav")
        tree.select_node(_tree_node(tree.root, "Gantt"))
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        assert (out / "gantt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # t on a plot without a text chart only warns; s on a section warns
        await pilot.press("t")
        tree.select_node(_tree_node(tree.root, "Overview"))
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("Saved" in m and "gantt.png" in m for m in messages)
        assert any("durations plot only" in m for m in messages)
        assert any("Select an individual plot first" in m for m in messages)
        assert sorted(p.name for p in out.iterdir()) == ["gantt.png"]

    _run(app, scenario)


@needs_textual
def test_a_failing_view_is_contained(recorded_file, monkeypatch):
    app = tui.create_app(build_browser_model(recorded_file))
    monkeypatch.setattr(tui, "node_detail_text",
                        lambda node: (_ for _ in ()).throw(TypeError("bad detail")))

    async def scenario(pilot):
        tree = app.query_one("#nav")
        tree.select_node(_tree_node(tree.root, "Metadata"))
        await pilot.pause()
        assert "Unable to render Metadata" in _shown(app)
        assert "TypeError: bad detail" in _shown(app)

    _run(app, scenario)


@needs_textual
def test_tall_trees_and_long_details_scroll(tmp_path):
    path = _write(tmp_path / "many.h5",
                  {0: {f"region-{i:02d}": ([i * NS], [(i + 1) * NS]) for i in range(40)}})
    app = tui.create_app(build_browser_model(path))

    async def scenario(pilot):
        nav = app.query_one("#nav")
        nav.root.expand_all()
        await pilot.pause()
        assert nav.max_scroll_y > 0
        nav.select_node(_tree_node(nav.root, "Regions"))
        await pilot.pause()
        viewport = app.query_one("#detail-scroll")
        assert "region-39" in app.detail_text
        assert viewport.max_scroll_y > 0

    _run(app, scenario, size=(100, 20))


def test_python_m_runs_the_command_line(tmp_path):
    import subprocess
    run = [sys.executable, "-m", "spanscope.integrations.tui"]
    ok = subprocess.run(run + ["--help"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "--plot-output" in ok.stdout
    bad = subprocess.run(run + [str(tmp_path / "missing.h5")], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("spanscope tui: ")


# ---------------------------------------------------------------------------
# values per span, LIKWID and perf events (issue 33's data in the browser)
# ---------------------------------------------------------------------------

DATA = Path(__file__).parent / "data"


@pytest.fixture
def values_file(tmp_path):
    """Memory values per span (the file's /values): outer allocates 10**5
    bytes itself and holds inner, which allocates 10**6."""
    from spanscope import _ext
    path = tmp_path / "values.h5"
    _ext.setup(str(path), track=1)
    _ext.mem_hooks_install()
    try:
        with _ext.region_new("outer"):
            with _ext.region_new("inner"):
                keep = bytearray(10 ** 6)
            more = bytearray(10 ** 5)
        del keep, more
        _ext.finalize(str(path), False)
    finally:
        _ext.mem_hooks_uninstall()
        _ext.shutdown()
    return path


@pytest.fixture
def likwid_file(tmp_path):
    """Regions recorded by spanscope with LIKWID's read-back of them
    (tests/python/data/likwid: FLOPS_DP, two hardware threads) on rank 0."""
    import json

    from spanscope.results import _likwid
    path = tmp_path / "likwid.h5"
    spanscope.setup(file_path=str(path))
    with spanscope.region("outer"):
        for _ in range(3):
            with spanscope.region("compute"):
                pass
    with spanscope.region("io"):
        pass
    spanscope.finalize(verbose=False)
    doc = json.loads((DATA / "likwid" / "full_api_flops_dp.json").read_text())
    _likwid.append_likwid_results(path, 0, [_likwid.LikwidRegionResult(**d) for d in doc])
    return path


def _cells(text, first):
    """The cells of the table row of text whose first cell is first."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{text}")


def test_bytes_as_the_report_writes_them():
    assert tui._bytes(0) == "0 B" and tui._bytes(1023) == "1023 B"
    assert tui._bytes(1536) == "1.5 KiB" and tui._bytes(10 ** 6) == "976.6 KiB"
    assert tui._bytes(3 * 2 ** 20) == "3.0 MiB" and tui._bytes(5 * 2 ** 30) == "5.0 GiB"


def test_region_details_show_their_values(values_file):
    model = build_browser_model(values_file)
    read = spanscope.read(values_file).values
    for name in ("outer", "inner"):
        own, self_ = read[name][0].own, read[name][0].self
        for node in (_find(_find(model.root, "Regions"), name),
                     _find(_find(_find(model.root, "Regions"), name), "Summary"),
                     _find(_find(_find(model.root, "Regions"), name), "Rank 0")):
            text = node_detail_text(node)
            assert "Values per span (rank 0)" in text
            for key in ("alloc_bytes", "free_bytes", "peak_bytes"):
                assert _cells(text, key)[1:] == [tui._bytes(own[key]), tui._bytes(self_[key])]
            assert _cells(text, "allocs")[1:] == [f"{own['allocs']:,}",
                                                  f"{self_['allocs']:,}"]
    inner = _cells(node_detail_text(_find(model.root, "inner")), "alloc_bytes")
    assert inner[1].endswith(("KiB", "MiB"))  # at least the 10**6 bytes, readable
    assert "alloc_bytes" in node_detail_text(_find(model.root, "Overview"))
    assert "Not shown" not in node_detail_text(_find(model.root, "Overview"))


def test_without_values_there_is_no_values_section(recorded_file):
    model = build_browser_model(recorded_file)
    assert "Values per span" not in node_detail_text(_find(model.root, "inner"))
    assert "Values per span" not in node_detail_text(_find(model.root, "Overview"))


def test_likwid_counters_per_region_and_rank(likwid_file):
    model = build_browser_model(likwid_file)
    compute = _find(_find(model.root, "Regions"), "compute")
    assert [c.label for c in compute.children][-1] == "LIKWID rank 0"
    text = node_detail_text(_find(compute, "LIKWID rank 0"))
    result = spanscope.read_profile(likwid_file).get_likwid_region("compute")
    assert "Group: FLOPS_DP" in text and "CPUs: 0, 1" in text
    assert _cells(text, "Calls")[1:] == ["3", "4"]
    cpi = result.metrics[result.metric_names.index("CPI")]
    assert _cells(text, "CPI")[1:] == [f"{v:.6g}" for v in cpi]
    ev = result.events[result.event_names.index("INSTR_RETIRED_ANY")]
    assert _cells(text, "INSTR_RETIRED_ANY")[1:] == [f"{v:.6g}" for v in ev]
    assert "LIKWID" in node_detail_text(_find(model.root, "Overview"))
    # a plot per metric and event, after the timing plots
    plots = _find(model.root, "Plots")
    likwid = [c for c in plots.children if c.kind == "plot_likwid"]
    assert [c.payload["metric"] for c in likwid] == \
        result.metric_names + result.event_labels
    assert "LIKWID" in node_detail_text(plots)
    assert "Metric: CPI" in node_detail_text(_find(plots, "LIKWID: CPI"))


def test_a_likwid_plot_dispatches_to_plot_likwid(likwid_file, monkeypatch, tmp_path):
    model = build_browser_model(likwid_file)
    captured = []
    monkeypatch.setattr(tui, "plot_likwid", lambda results, **kw: captured.append(kw))
    node = _find(model.root, "LIKWID: CPI")
    render_plot(node, filepath=tmp_path / "l.png", settings={"include": "comp",
                                                              "log_scale": True})
    (kw,) = captured
    assert kw["metric"] == "CPI" and kw["include"] == ["comp"] and kw["log_scale"] is True
    assert tui._plot_file_stem(node) == "likwid_CPI"
    assert tui._plot_file_stem(_find(model.root, "LIKWID: DP [MFLOP/s]")) == \
        "likwid_DP_MFLOP_s"


def test_a_likwid_plot_draws_a_png_and_in_the_child_script(likwid_file, tmp_path):
    pytest.importorskip("matplotlib")
    import json
    import os
    import subprocess
    node = _find(build_browser_model(likwid_file).root, "LIKWID: CPI")
    out = Path(render_plot(node, filepath=tmp_path / "cpi.png"))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", tui._matplotlib_child_script(),
                           str(likwid_file), "likwid", json.dumps({}), "CPI"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr


def test_perf_event_totals_per_region_and_rank():
    path = DATA / "perf_events" / "hw_two_ranks.h5"
    model = build_browser_model(path)
    compute = _find(_find(model.root, "Regions"), "compute")
    assert [c.label for c in compute.children][-2:] == ["Perf events rank 0",
                                                       "Perf events rank 1"]
    text = node_detail_text(_find(compute, "Perf events rank 0"))
    assert "Region: compute" in text and "Calls: 4" in text
    assert _cells(text, "instructions")[1] == "9,000,000"
    assert _cells(text, "ipc")[1] == "2.25"
    assert _cells(text, "branch-miss-rate")[1] == "2"
    rank1 = node_detail_text(_find(compute, "Perf events rank 1"))
    assert "branch-miss-rate" not in rank1 and _cells(rank1, "cycles")[1] == "4,400,000"
    stream = _find(_find(model.root, "Regions"), "stream")
    assert [c.label for c in stream.children if c.kind == "perf_events_rank"] == \
        ["Perf events rank 0"]
    overview = node_detail_text(_find(model.root, "Overview"))
    assert "Perf events" in overview and "Not shown" not in overview


def test_line_profiles_are_shown_and_nothing_is_unread(tmp_path):
    """A file with line profiles (rank<N>/line_profile, as a
    use_line_profiler run writes them): the overview counts them, says
    nothing is left unshown, and the region has its "Line Profile" node
    with the function's lines."""
    import shutil

    import h5py

    from spanscope.results import write_line_profile
    path = tmp_path / "lp.h5"
    shutil.copyfile(DATA / "perf_events" / "sw_counters.h5", path)
    results = spanscope.read_profile(path)
    region = results.region_names[0]
    record = {"region": region, "filename": "k.py", "function": "kernel", "first_lineno": 1,
              "line_numbers": np.array([2, 3]), "hits": np.array([1, 10]),
              "times": np.array([2.0, 8.0]), "unit": 1e-3,
              "source": "def kernel():\n    x = 0\n    x += 1", "source_first_lineno": 1}
    with h5py.File(path, "a") as f:
        write_line_profile(f["rank0"], [record])
    model = build_browser_model(path)
    overview = node_detail_text(_find(model.root, "Overview"))
    assert "Not shown" not in overview
    assert "Line profiles" in overview and "1 function(s) on rank(s) 0" in overview
    node = _find(_find(model.root, region), "Line Profile")
    assert node is not None and "kernel" in node_detail_text(node)
    lines = node_detail_text(_find(node, "Rank 0"))
    assert "x += 1" in lines and "Total: 0.01 s" in lines
    # without line profiles, no such row
    plain = node_detail_text(_find(build_browser_model(DATA / "perf_events" / "sw_counters.h5")
                                   .root, "Overview"))
    assert "Line profiles" not in plain


@needs_textual
def test_app_shows_values_and_saves_a_likwid_plot(values_file, likwid_file, tmp_path):
    pytest.importorskip("matplotlib")
    app = tui.create_app(build_browser_model(values_file))

    async def values(pilot):
        tree = app.query_one("#nav")
        tree.root.expand_all()
        await pilot.pause()
        tree.select_node(_tree_node(tree.root, "inner"))
        await pilot.pause()
        assert "Values per span" in _shown(app) and "alloc_bytes" in _shown(app)
        assert "KiB" in _shown(app) or "MiB" in _shown(app)

    _run(app, values)

    out = tmp_path / "plots"
    app = tui.create_app(build_browser_model(likwid_file), output_dir=out)

    async def likwid(pilot):
        tree = app.query_one("#nav")
        tree.root.expand_all()
        await pilot.pause()
        tree.select_node(_tree_node(tree.root, "LIKWID rank 0"))
        await pilot.pause()
        assert "Group: FLOPS_DP" in _shown(app)
        tree.select_node(_tree_node(tree.root, "LIKWID: CPI"))
        await pilot.pause()
        assert app.query_one("#settings").styles.display == "block"
        assert "Metric: CPI" in _shown(app)
        await pilot.press("s")
        await pilot.pause()
        assert (out / "likwid_CPI.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    _run(app, likwid, size=(140, 50))
