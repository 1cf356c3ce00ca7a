"""spanscope's MCP server (spanscope.integrations.mcp_server): the tools as
plain functions, then the same tools through an MCP client session (the mcp
SDK's in-memory transport, and its stdio client launching
``python -m spanscope.integrations.mcp_server``).  Every number is checked
against ``spanscope.read`` of the same file: the tools add no arithmetic of
their own beyond pooling the reader's statistics."""

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import spanscope
from spanscope import MPIRegion, ProfilingResults, Region
from spanscope.integrations.mcp_server import tools
from spanscope.integrations.mcp_server.tools import (
    TOOL_NAMES,
    ToolError,
    compare_benchmarks,
    compare_profiles,
    inspect_profile,
    plot_profile,
    run_benchmark,
    run_profile,
)

NS = 1_000_000_000


def _write(path, per_rank, metadata):
    """A profile with exact timings, written by spanscope's writer
    (spanscope.write_profile) from scope-profiler's result objects."""
    regions = {}
    for rank, regs in per_rank.items():
        for name, (starts, ends) in regs.items():
            regions.setdefault(name, {})[rank] = Region(starts, ends)
    res = ProfilingResults({n: MPIRegion(n, r) for n, r in regions.items()},
                           metadata=metadata)
    spanscope.write_profile(res, path)
    return path


@pytest.fixture
def baseline_file(tmp_path):
    """rank 0: setup 1 s, solve 2 x 2 s; rank 1: solve 1 x 4 s; run 6 s."""
    return _write(tmp_path / "baseline.h5",
                  {0: {"setup": ([0], [NS]), "solve": ([NS, 4 * NS], [3 * NS, 6 * NS])},
                   1: {"solve": ([NS], [5 * NS])}},
                  {"start_time_ns": 0, "finalize_time_ns": 6 * NS, "mpi_size": 2})


@pytest.fixture
def candidate_file(tmp_path):
    """setup unchanged, solve halved on both ranks; run 3 s."""
    return _write(tmp_path / "candidate.h5",
                  {0: {"setup": ([0], [NS]), "solve": ([NS, 2 * NS], [2 * NS, 3 * NS])},
                   1: {"solve": ([NS], [3 * NS])}},
                  {"start_time_ns": 0, "finalize_time_ns": 3 * NS, "mpi_size": 2})


@pytest.fixture
def recorded_file(tmp_path):
    """A profile recorded by the public API: nested regions, so the
    exclusive times are the fold's."""
    path = tmp_path / "recorded.h5"
    spanscope.setup(file_path=str(path))
    with spanscope.region("outer"):
        for _ in range(3):
            with spanscope.region("inner"):
                time.sleep(0.002)
    with spanscope.region("tail"):
        pass
    spanscope.finalize(verbose=False)
    return path


def _expected(path, name, ranks=None):
    """(calls, total s, self s) of a region from spanscope.read."""
    res = spanscope.read(path)
    per = res.regions[name]
    sel = [per[k] for k in per if ranks is None or k in ranks]
    calls = sum(d.num_calls for d in sel)
    total = sum(int(d.durations_ns.sum()) for d in sel) / NS
    self_total = sum(int(d.self_ns.sum()) for d in sel) / NS
    return calls, total, self_total


# ---------------------------------------------------------------------------
# the tools as plain functions (no mcp package needed)
# ---------------------------------------------------------------------------

class TestInspectProfile:
    def test_headline_and_regions_match_the_reader(self, recorded_file):
        payload = inspect_profile(str(recorded_file))
        res = spanscope.read(recorded_file)
        pr = spanscope.read_profile(recorded_file)
        assert payload["num_ranks"] == 1
        assert payload["num_regions"] == len(res.region_names) == 3
        assert payload["total_time_seconds"] == pytest.approx(pr.total_time)
        assert payload["regions"]["total_matching_filter"] == 3
        by_name = {r["name"]: r for r in payload["regions"]["items"]}
        for name in ("outer", "inner", "tail"):
            calls, total, self_total = _expected(recorded_file, name)
            assert by_name[name]["calls"] == calls
            assert by_name[name]["total"] == pytest.approx(total, abs=1e-12)
            assert by_name[name]["exclusive"] == pytest.approx(self_total, abs=1e-12)
        assert by_name["inner"]["calls"] == 3
        # outer's self time is its duration minus its three inner calls
        assert by_name["outer"]["exclusive"] < by_name["outer"]["total"]
        assert by_name["outer"]["exclusive"] == pytest.approx(
            by_name["outer"]["total"] - by_name["inner"]["total"], abs=1e-12)
        # sorted by total, descending
        totals = [r["total"] for r in payload["regions"]["items"]]
        assert totals == sorted(totals, reverse=True)
        json.dumps(payload)  # JSON-ready throughout

    def test_exact_statistics_and_rank_filter(self, baseline_file):
        payload = inspect_profile(str(baseline_file))
        solve = {r["name"]: r for r in payload["regions"]["items"]}["solve"]
        assert solve["num_ranks"] == 2 and solve["calls"] == 3
        assert solve["total"] == pytest.approx(8.0)
        assert solve["min"] == pytest.approx(2.0) and solve["max"] == pytest.approx(4.0)
        assert solve["p50"] == pytest.approx(2.0)
        # rank totals 4 s and 4 s: balanced
        assert solve["imbalance"] == pytest.approx(0.0)
        only1 = inspect_profile(str(baseline_file), ranks=[1])
        rows = {r["name"]: r for r in only1["regions"]["items"]}
        assert rows["solve"]["calls"] == 1 and rows["solve"]["total"] == pytest.approx(4.0)
        assert rows["setup"]["calls"] == 0 and rows["setup"]["total"] is None

    def test_top_n_limits_but_reports_the_true_total(self, baseline_file):
        payload = inspect_profile(str(baseline_file), top_n=1)
        assert payload["regions"]["returned"] == 1
        assert payload["regions"]["total_matching_filter"] == 2
        assert payload["regions"]["items"][0]["name"] == "solve"
        everything = inspect_profile(str(baseline_file), top_n=0)
        assert everything["regions"]["returned"] == 2

    def test_include_exclude_and_sort(self, baseline_file):
        inc = inspect_profile(str(baseline_file), include=["solve"])
        assert [r["name"] for r in inc["regions"]["items"]] == ["solve"]
        exc = inspect_profile(str(baseline_file), exclude=["sol"])
        assert [r["name"] for r in exc["regions"]["items"]] == ["setup"]
        by_name = inspect_profile(str(baseline_file), sort="name")
        assert [r["name"] for r in by_name["regions"]["items"]] == ["setup", "solve"]
        by_start = inspect_profile(str(baseline_file), sort="start")
        assert by_start["regions"]["items"][0]["name"] == "setup"

    def test_metadata_is_grouped_and_json_safe(self, baseline_file):
        payload = inspect_profile(str(baseline_file))
        meta = payload["metadata"]
        assert meta["parallelism"]["mpi_size"] == 2
        assert type(meta["parallelism"]["mpi_size"]) is int  # not a numpy scalar
        assert meta["run"]["start_time_ns"] == 0
        assert "other" not in meta and meta["other_field_count"] > 0
        full = inspect_profile(str(baseline_file), full_metadata=True)
        assert len(full["metadata"]["other"]) == meta["other_field_count"]
        assert payload["likwid"] is None

    def test_missing_file(self, tmp_path):
        with pytest.raises(ToolError, match="not found"):
            inspect_profile(str(tmp_path / "does_not_exist.h5"))

    @pytest.mark.parametrize("content", [b"hello, not a profile\n", b"",
                                         b"\x89HDF\r\n\x1a\n" + b"\0" * 64])
    def test_a_file_that_is_not_a_profile(self, tmp_path, content):
        bad = tmp_path / "bad.h5"
        bad.write_bytes(content)
        with pytest.raises(ToolError, match="Could not read"):
            inspect_profile(str(bad))

    def test_a_truncated_profile(self, tmp_path, baseline_file):
        data = Path(baseline_file).read_bytes()
        cut = tmp_path / "cut.h5"
        cut.write_bytes(data[: len(data) // 2])
        with pytest.raises(ToolError, match="Could not read"):
            inspect_profile(str(cut))

    def test_a_plain_hdf5_file_that_is_not_a_profile(self, tmp_path):
        h5py = pytest.importorskip("h5py")
        path = tmp_path / "other.h5"
        with h5py.File(path, "w") as f:
            f["x"] = np.arange(3)
        with pytest.raises(ToolError, match="Could not read"):
            inspect_profile(str(path))

    def test_a_directory(self, tmp_path):
        with pytest.raises(ToolError, match="directory"):
            inspect_profile(str(tmp_path))

    @pytest.mark.parametrize("kwargs, message", [
        ({"sort": "bogus"}, "sort must be one of"),
        ({"top_n": -1}, "top_n must be"),
        ({"top_n": "ten"}, "top_n must be"),
        ({"ranks": ["a"]}, "ranks must be a list of integers"),
        ({"ranks": [-1]}, "non-negative"),
        ({"include": ["("]}, "invalid regular expression"),
        ({"exclude": [3]}, "exclude must be a list"),
    ])
    def test_bad_arguments(self, baseline_file, kwargs, message):
        with pytest.raises(ToolError, match=message):
            inspect_profile(str(baseline_file), **kwargs)

    def test_bad_path_argument(self):
        with pytest.raises(ToolError, match="must be a path"):
            inspect_profile(None)


class TestCompareProfiles:
    def test_overall_and_per_region(self, baseline_file, candidate_file):
        payload = compare_profiles(str(baseline_file), str(candidate_file))
        assert payload["overall"]["faster"] is True
        assert payload["overall"]["absolute_diff_seconds"] == pytest.approx(-3.0)
        assert payload["overall"]["relative_change_pct"] == pytest.approx(-50.0)
        assert payload["overall"]["speedup"] == pytest.approx(2.0)
        rows = {r["name"]: r for r in payload["regions"]["items"]}
        _, base_solve, _ = _expected(baseline_file, "solve")
        _, cand_solve, _ = _expected(candidate_file, "solve")
        assert rows["solve"]["baseline"] == pytest.approx(base_solve) == pytest.approx(8.0)
        assert rows["solve"]["candidate"] == pytest.approx(cand_solve) == pytest.approx(4.0)
        assert rows["solve"]["pct"] == pytest.approx(-50.0)
        assert rows["setup"]["delta"] == pytest.approx(0.0)
        assert [r["name"] for r in payload["improvements"]] == ["solve"]
        assert payload["regressions"] == []

    def test_a_slower_candidate_is_a_regression(self, baseline_file, candidate_file):
        payload = compare_profiles(str(candidate_file), str(baseline_file))
        assert payload["overall"]["faster"] is False
        assert [r["name"] for r in payload["regressions"]] == ["solve"]
        assert payload["regressions"][0]["pct"] == pytest.approx(100.0)

    def test_other_metrics_and_ranks(self, baseline_file, candidate_file):
        calls = compare_profiles(str(baseline_file), str(candidate_file), metric="calls")
        rows = {r["name"]: r for r in calls["regions"]["items"]}
        assert rows["solve"]["baseline"] == 3 and rows["solve"]["delta"] == 0
        p50 = compare_profiles(str(baseline_file), str(candidate_file), metric="p50",
                               ranks=[1])
        rows = {r["name"]: r for r in p50["regions"]["items"]}
        assert rows["solve"]["baseline"] == pytest.approx(4.0)
        assert rows["solve"]["candidate"] == pytest.approx(2.0)

    @pytest.mark.parametrize("kwargs, message", [
        ({"metric": "bogus"}, "metric must be one of"),
        ({"threshold_pct": -1}, "threshold_pct"),
        ({"threshold_pct": "5"}, "threshold_pct"),
    ])
    def test_bad_arguments(self, baseline_file, candidate_file, kwargs, message):
        with pytest.raises(ToolError, match=message):
            compare_profiles(str(baseline_file), str(candidate_file), **kwargs)

    def test_missing_baseline(self, tmp_path, candidate_file):
        with pytest.raises(ToolError, match="not found"):
            compare_profiles(str(tmp_path / "missing.h5"), str(candidate_file))


class TestRunProfile:
    def test_runs_a_script_and_summarizes_its_profile(self, tmp_path):
        script = tmp_path / "bench.py"
        script.write_text("import time\nfrom spanscope import ProfileManager\n"
                          "with ProfileManager.profile_region('work'):\n"
                          "    time.sleep(0.001)\nprint('done here')\n")
        out = tmp_path / "out.h5"
        payload = run_profile(str(script), output_path=str(out))
        assert out.exists()
        assert payload["num_ranks"] == 1
        rows = {r["name"]: r for r in payload["regions"]["items"]}
        calls, total, _ = _expected(out, "work")
        assert rows["work"]["calls"] == calls == 1
        assert rows["work"]["total"] == pytest.approx(total, abs=1e-12)
        assert "done here" in payload["stdout_tail"]

    def test_missing_script(self, tmp_path):
        with pytest.raises(ToolError, match="No such script"):
            run_profile(str(tmp_path / "does_not_exist.py"))

    def test_a_script_that_raises(self, tmp_path):
        script = tmp_path / "broken.py"
        script.write_text("raise RuntimeError('boom')\n")
        with pytest.raises(ToolError, match="failed") as info:
            run_profile(str(script))
        assert "boom" in str(info.value)

    def test_timeout_kills_a_runaway_script(self, tmp_path):
        script = tmp_path / "slow.py"
        script.write_text("import time\ntime.sleep(30)\n")
        with pytest.raises(ToolError, match="exceeded"):
            run_profile(str(script), timeout_seconds=0.5)

    def test_arguments_reach_the_script_without_a_shell(self, tmp_path):
        script = tmp_path / "echo_args.py"
        script.write_text("import sys\nfrom spanscope import ProfileManager\n"
                          "with ProfileManager.profile_region('args'):\n    pass\n"
                          "assert sys.argv[1:] == ['hello world', '$(rm -rf /)'], sys.argv\n")
        payload = run_profile(str(script), script_args=["hello world", "$(rm -rf /)"])
        assert {r["name"] for r in payload["regions"]["items"]} == {"args"}

    @pytest.mark.parametrize("kwargs, message", [
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"script_args": "a b"}, "script_args"),
        ({"buffer_limit": 0}, "buffer_limit"),
    ])
    def test_bad_arguments(self, tmp_path, kwargs, message):
        script = tmp_path / "ok.py"
        script.write_text("pass\n")
        with pytest.raises(ToolError, match=message):
            run_profile(str(script), **kwargs)


class TestPlotProfile:
    def test_draws_a_gantt_chart(self, baseline_file, tmp_path):
        pytest.importorskip("matplotlib")
        payload = plot_profile(str(baseline_file), plot_type="gantt",
                               output_dir=str(tmp_path / "figs"))
        assert payload["plot_type"] == "gantt" and payload["backend"] == "matplotlib"
        (path,) = payload["paths"]
        assert path.endswith(".png")
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    @pytest.mark.parametrize("kwargs, message", [
        ({"plot_type": "bogus"}, "plot_type must be one of"),
        ({"plot_type": "speedup"}, "at least 2"),
        ({"plot_type": "gantt", "x_field": "num_ranks"}, "x_field only applies"),
        ({"backend": "svgz"}, "backend must be"),
    ])
    def test_bad_arguments(self, baseline_file, kwargs, message):
        with pytest.raises(ToolError, match=message):
            plot_profile(str(baseline_file), **kwargs)

    def test_no_paths_and_a_missing_file(self, tmp_path):
        with pytest.raises(ToolError, match="at least one path"):
            plot_profile([])
        with pytest.raises(ToolError, match="not found"):
            plot_profile([str(tmp_path / "nope.h5")])


class TestBenchmarkTools:
    def test_missing_config_and_manifests(self, tmp_path):
        with pytest.raises(ToolError, match="not found"):
            run_benchmark(str(tmp_path / "bench.toml"))
        with pytest.raises(ToolError, match="not found"):
            compare_benchmarks(str(tmp_path / "a.json"), str(tmp_path / "b.json"))

    def test_without_the_benchmark_workflow_the_error_says_so(self, tmp_path, monkeypatch):
        config = tmp_path / "bench.toml"
        config.write_text("[benchmark]\nname='x'\nscript='x.py'\n")
        monkeypatch.setitem(sys.modules, "spanscope.benchmark", None)
        with pytest.raises(ToolError, match="benchmark workflow"):
            run_benchmark(str(config))


# ---------------------------------------------------------------------------
# the MCP server, through an MCP client session
# ---------------------------------------------------------------------------

# the optional `mcp` extra: scripts/install-deps.sh installs it, so these run
# in CI; without it only the plain functions above are tested
needs_mcp = pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                               reason="the optional 'mcp' extra is not installed")


def _json(result) -> dict:
    """A successful call's JSON: its structured content, checked against
    its text block."""
    assert not result.isError, result.content
    (block,) = result.content
    payload = json.loads(block.text)
    if result.structuredContent is not None:
        assert result.structuredContent in (payload, {"result": payload})
    return payload


def _error_text(result) -> str:
    assert result.isError
    return " ".join(getattr(b, "text", "") for b in result.content)


def _with_client(scenario):
    from mcp.shared.memory import create_connected_server_and_client_session

    from spanscope.integrations.mcp_server.server import create_server

    async def run():
        async with create_connected_server_and_client_session(create_server()) as client:
            await client.initialize()
            return await scenario(client)

    return asyncio.run(run())


@needs_mcp
class TestServerObject:
    def test_create_server(self):
        from mcp.server.fastmcp import FastMCP

        from spanscope.integrations.mcp_server.server import create_server
        server = create_server()
        assert isinstance(server, FastMCP)
        assert server.name == "spanscope"
        assert create_server() is not server

    def test_every_tool_is_listed_with_its_schema(self):
        async def scenario(client):
            return (await client.list_tools()).tools

        listed = {t.name: t for t in _with_client(scenario)}
        assert set(listed) == set(TOOL_NAMES)
        for tool in listed.values():
            assert tool.description and len(tool.description) > 40
        assert listed["inspect_profile"].inputSchema["required"] == ["file_path"]
        assert "top_n" in listed["inspect_profile"].inputSchema["properties"]
        assert set(listed["compare_profiles"].inputSchema["required"]) == {
            "baseline_path", "candidate_path"}
        assert listed["run_profile"].inputSchema["required"] == ["script_path"]
        assert listed["plot_profile"].inputSchema["required"] == ["file_paths"]


@needs_mcp
class TestToolsOverMCP:
    def test_every_tool(self, tmp_path, recorded_file, baseline_file, candidate_file):
        script = tmp_path / "job.py"
        script.write_text("from spanscope import ProfileManager\n"
                          "with ProfileManager.profile_region('job'):\n    pass\n")
        run_out = tmp_path / "job.h5"
        figs = tmp_path / "figs"
        config = tmp_path / "bench.toml"
        config.write_text("[benchmark]\nname='x'\nscript='job.py'\n")

        async def scenario(client):
            calls = {
                "inspect": ("inspect_profile", {"file_path": str(recorded_file),
                                                "top_n": 0}),
                "compare": ("compare_profiles", {"baseline_path": str(baseline_file),
                                                 "candidate_path": str(candidate_file)}),
                "run": ("run_profile", {"script_path": str(script),
                                        "output_path": str(run_out)}),
                "plot": ("plot_profile", {"file_paths": [str(baseline_file)],
                                          "plot_type": "durations",
                                          "output_dir": str(figs)}),
                "bench": ("run_benchmark", {"config_path": str(config)}),
                "cmp_bench": ("compare_benchmarks", {"baseline_path": str(tmp_path / "a"),
                                                     "candidate_path": str(tmp_path / "b")}),
            }
            return {k: await client.call_tool(n, a) for k, (n, a) in calls.items()}

        got = _with_client(scenario)
        # inspect_profile: the plain function's answer, the reader's numbers
        inspected = _json(got["inspect"])
        assert inspected == json.loads(json.dumps(inspect_profile(str(recorded_file),
                                                                  top_n=0)))
        rows = {r["name"]: r for r in inspected["regions"]["items"]}
        for name in ("outer", "inner", "tail"):
            calls, total, self_total = _expected(recorded_file, name)
            assert rows[name]["calls"] == calls
            assert rows[name]["total"] == pytest.approx(total, abs=1e-12)
            assert rows[name]["exclusive"] == pytest.approx(self_total, abs=1e-12)
        # compare_profiles
        compared = _json(got["compare"])
        assert compared["overall"]["faster"] is True
        assert compared["overall"]["speedup"] == pytest.approx(2.0)
        # run_profile wrote the file it summarizes
        ran = _json(got["run"])
        assert run_out.exists()
        assert {r["name"]: r["calls"] for r in ran["regions"]["items"]} == {
            "job": _expected(run_out, "job")[0]}
        # plot_profile drew a file (matplotlib: the `plot` extra, installed
        # by scripts/install-deps.sh); without it, the error names the extra
        if importlib.util.find_spec("matplotlib") is None:
            assert "spanscope[plot]" in _error_text(got["plot"])
        else:
            (path,) = _json(got["plot"])["paths"]
            assert Path(path).is_file() and Path(path).parent == figs
        # the benchmark tools: a clear error, never a traceback
        for key in ("bench", "cmp_bench"):
            text = _error_text(got[key])
            assert "Traceback" not in text
            assert "benchmark" in text.lower() or "not found" in text

    def test_errors_are_tool_errors_not_tracebacks(self, tmp_path, baseline_file):
        bad = tmp_path / "bad.h5"
        bad.write_text("not a profile")

        async def scenario(client):
            return [
                await client.call_tool("inspect_profile",
                                       {"file_path": str(tmp_path / "missing.h5")}),
                await client.call_tool("inspect_profile", {"file_path": str(bad)}),
                await client.call_tool("inspect_profile", {}),
                await client.call_tool("inspect_profile", {"file_path": str(baseline_file),
                                                           "top_n": "many"}),
                await client.call_tool("inspect_profile", {"file_path": str(baseline_file),
                                                           "sort": "bogus"}),
                await client.call_tool("compare_profiles",
                                       {"baseline_path": str(baseline_file)}),
                await client.call_tool("not_a_real_tool", {}),
            ]

        missing, not_profile, no_arg, bad_type, bad_sort, one_path, unknown = \
            _with_client(scenario)
        assert "not found" in _error_text(missing)
        assert "Could not read" in _error_text(not_profile)
        assert "file_path" in _error_text(no_arg)
        assert "top_n" in _error_text(bad_type)
        assert "sort must be one of" in _error_text(bad_sort)
        assert "candidate_path" in _error_text(one_path)
        assert "not_a_real_tool" in _error_text(unknown)
        for result in (missing, not_profile, no_arg, bad_type, bad_sort, one_path, unknown):
            assert "Traceback" not in _error_text(result)


@needs_mcp
def test_stdio_server_subprocess(tmp_path, recorded_file):
    """The server as an MCP client starts it: python -m
    spanscope.integrations.mcp_server on stdio."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "spanscope.integrations.mcp_server"],
                                   env=dict(os.environ), cwd=str(tmp_path))

    async def run():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                init = await client.initialize()
                names = {t.name for t in (await client.list_tools()).tools}
                ok = await client.call_tool("inspect_profile",
                                            {"file_path": str(recorded_file)})
                bad = await client.call_tool("inspect_profile",
                                             {"file_path": str(tmp_path / "no.h5")})
                return init, names, ok, bad

    init, names, ok, bad = asyncio.run(asyncio.wait_for(run(), 120))
    assert init.serverInfo.name == "spanscope"
    assert names == set(TOOL_NAMES)
    rows = {r["name"]: r for r in _json(ok)["regions"]["items"]}
    assert rows["inner"]["calls"] == _expected(recorded_file, "inner")[0] == 3
    assert "not found" in _error_text(bad)


def test_main_help_and_bad_arguments():
    run = [sys.executable, "-m", "spanscope.integrations.mcp_server"]
    out = subprocess.run(run + ["--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "inspect_profile" in out.stdout
    bad = subprocess.run(run + ["--port", "1"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and "takes none" in bad.stderr


@needs_mcp
def test_without_the_mcp_package_the_error_names_the_extra(monkeypatch, capsys):
    from spanscope.integrations.mcp_server import server
    monkeypatch.setitem(sys.modules, "mcp.server.fastmcp", None)
    with pytest.raises(ImportError, match=r"spanscope\[mcp\]"):
        server.create_server()
    assert server.main([]) == 2
    assert "pip install 'spanscope[mcp]'" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# LIKWID, perf events and values per span (issue 33's data, read by the tools)
# ---------------------------------------------------------------------------

DATA = Path(__file__).parent / "data"


def _full_api(name):
    """LIKWID's own read-back (pylikwid, tests/python/data/likwid/make.sh)."""
    from spanscope.results._likwid import LikwidRegionResult
    doc = json.loads((DATA / "likwid" / f"full_api_{name}.json").read_text())
    return [LikwidRegionResult(**d) for d in doc]


@pytest.fixture
def likwid_file(tmp_path):
    """The regions LIKWID measured, recorded by spanscope; rank 0 holds
    LIKWID's read-back (FLOPS_DP: metrics), rank 1 what LIKWID's marker file
    holds (values only, no metrics), as use_likwid=True stores them."""
    from spanscope.results import _likwid
    path = tmp_path / "likwid.h5"
    spanscope.setup(file_path=str(path))
    for _ in range(2):
        with spanscope.region("outer"):
            for _ in range(3):
                with spanscope.region("compute"):
                    pass
    with spanscope.region("io"):
        pass
    spanscope.finalize(verbose=False)
    _likwid.append_likwid_results(path, 0, _full_api("flops_dp"),
                                  {"LIKWID_EVENTS": "FLOPS_DP"})
    _likwid.append_likwid_results(
        path, 1, _likwid.read_marker_file(DATA / "likwid" / "markers_flops_dp.txt"))
    return path


def _values_file(path, allocate=10 ** 6):
    """A recording with memory values per span (the file's /values): outer
    allocates 10**5 bytes itself, inner (its child) allocate bytes."""
    from spanscope import _ext
    _ext.setup(str(path), track=1)
    _ext.mem_hooks_install()
    try:
        with _ext.region_new("outer"):
            with _ext.region_new("inner"):
                keep = bytearray(allocate)
            more = bytearray(10 ** 5)
        del keep, more
        _ext.finalize(str(path), False)
    finally:
        _ext.mem_hooks_uninstall()
        _ext.shutdown()
    return path


@pytest.fixture
def values_file(tmp_path):
    """_values_file's recording (requested before fixtures that record with
    the ProfileManager, whose session stays until the test ends)."""
    return _values_file(tmp_path / "values.h5")


def _json_number(v):
    """scope-profiler's float as the tools' JSON number (NaN: None)."""
    return None if v is None or v != v else v


class TestLikwid:
    def test_payload_is_scope_profilers(self, likwid_file):
        payload = inspect_profile(str(likwid_file))
        lk = payload["likwid"]
        assert lk["ranks"] == [0, 1]
        assert lk["region_count_total"] == lk["region_count_returned"] == 6
        assert [(e["rank"], e["region"]) for e in lk["regions"]] == [
            (0, "compute"), (0, "io"), (0, "outer"), (1, "compute"), (1, "io"), (1, "outer")]
        res = spanscope.read_profile(likwid_file)
        compute = res.get_likwid_region("compute", rank=0)
        first = lk["regions"][0]
        assert first["group"] == "FLOPS_DP" == compute.group_name
        assert first["call_count"] == 3 + 4 == int(compute.call_counts.sum())
        assert list(first["metrics"]) == compute.metric_names
        cpi = compute.metrics[compute.metric_names.index("CPI")]
        assert first["metrics"]["CPI"] == pytest.approx(float(np.mean(cpi)))
        # io counted nothing: LIKWID's CPI is NaN there, null in JSON
        io = lk["regions"][1]
        assert io["metrics"]["CPI"] is None and io["metrics"]["DP [MFLOP/s]"] == 0.0
        # the marker file's regions: LIKWID's calls, no derived metrics
        assert lk["regions"][3]["call_count"] == 7 and lk["regions"][3]["metrics"] == {}
        json.dumps(payload, allow_nan=False)  # strict JSON
        assert "not_read" not in payload and payload["perf_events"] is None

    def test_ranks_and_top_n(self, likwid_file):
        lk = inspect_profile(str(likwid_file), ranks=[1], top_n=2)["likwid"]
        assert lk["ranks"] == [1] and lk["region_count_total"] == 3
        assert lk["region_count_returned"] == 2
        assert [e["region"] for e in lk["regions"]] == ["compute", "io"]
        none = inspect_profile(str(likwid_file), ranks=[7])["likwid"]
        assert none == {"ranks": [], "region_count_total": 0, "region_count_returned": 0,
                        "regions": []}

    def test_same_as_scope_profilers_own_tool(self, likwid_file):
        """scope-profiler 0.7.5's MCP tool on the same file gives the same
        payload (its NaN is JSON's null here)."""
        sp_tools = pytest.importorskip("scope_profiler.mcp_server.tools")
        theirs = sp_tools.inspect_profile(str(likwid_file), top_n=None)["likwid"]
        mine = inspect_profile(str(likwid_file), top_n=None)["likwid"]
        for entry in theirs["regions"]:
            entry["metrics"] = {k: _json_number(v) for k, v in entry["metrics"].items()}
        assert mine == theirs

    def test_json_profile_keeps_the_likwid_data(self, likwid_file, tmp_path):
        back = spanscope.write_json(spanscope.read_profile(likwid_file), tmp_path / "p.json")
        lk = inspect_profile(str(back))["likwid"]
        assert lk["ranks"] == [0, 1] and lk["region_count_total"] == 6


class TestPerfEvents:
    def test_totals_and_ratios(self):
        path = DATA / "perf_events" / "hw_two_ranks.h5"
        expected = json.loads((DATA / "perf_events" / "expected.json").read_text())
        pe = inspect_profile(str(path))["perf_events"]
        want = expected["hw_two_ranks.h5"]["ranks"]
        assert pe["ranks"] == [0, 1] and pe["region_count_total"] == 3
        got = {(e["rank"], e["region"]): e for e in pe["regions"]}
        assert set(got) == {(int(k), name) for k, regions in want.items() for name in regions}
        for rank, regions in want.items():
            for name, totals in regions.items():
                entry = got[int(rank), name]
                assert entry["calls"] == totals["calls"]
                assert entry["events"] == totals["values"]
        c0 = got[0, "compute"]["metrics"]
        assert c0 == pytest.approx({"ipc": 9e6 / 4e6, "cache-misses-per-ki": 5000 / 9e6 * 1e3,
                                    "cache-miss-rate": 10.0, "branch-miss-rate": 2.0})
        # rank 1 recorded no branch events: no branch ratio there
        assert "branch-miss-rate" not in got[1, "compute"]["metrics"]

    def test_filters(self):
        path = str(DATA / "perf_events" / "hw_two_ranks.h5")
        only = inspect_profile(path, include=["str"])["perf_events"]
        assert [(e["rank"], e["region"]) for e in only["regions"]] == [(0, "stream")]
        rank1 = inspect_profile(path, ranks=[1])["perf_events"]
        assert rank1["ranks"] == [1] and len(rank1["regions"]) == 1
        top = inspect_profile(path, top_n=1, exclude=["stream"])["perf_events"]
        assert top["region_count_total"] == 2 and top["region_count_returned"] == 1

    def test_software_counters_and_none(self):
        sw = inspect_profile(str(DATA / "perf_events" / "sw_counters.h5"))["perf_events"]
        outer = next(e for e in sw["regions"] if e["region"] == "outer")
        assert outer["calls"] == 3 and outer["events"]["page-faults"] == 1027
        assert outer["metrics"] == {}
        assert inspect_profile(str(DATA / "perf_events" / "no_counters.h5"))[
            "perf_events"] is None

    def test_a_corrupt_group_is_a_tool_error(self, tmp_path):
        import shutil

        import h5py
        path = tmp_path / "bad.h5"
        shutil.copyfile(DATA / "perf_events" / "hw_two_ranks.h5", path)
        with h5py.File(path, "a") as f:
            del f["rank0/perf_events/compute/values"]
        with pytest.raises(ToolError, match="perf-event groups"):
            inspect_profile(str(path))


class TestValuesAndUnreadGroups:
    def test_regions_carry_their_values(self, values_file):
        path = values_file
        payload = inspect_profile(str(path))
        items = {r["name"]: r for r in payload["regions"]["items"]}
        read = spanscope.read(path).values
        for name in ("outer", "inner"):
            v = items[name]["values"]
            assert v["calls"] == read[name][0].calls == 1 and v["ranks"] == [0]
            assert v["own"] == read[name][0].own and v["self"] == read[name][0].self
        inner, outer = items["inner"]["values"], items["outer"]["values"]
        assert inner["own"]["alloc_bytes"] >= 10 ** 6
        # the fold: outer's own holds inner's bytes, its self does not
        assert outer["own"]["alloc_bytes"] >= inner["own"]["alloc_bytes"] + 10 ** 5
        assert 10 ** 5 <= outer["self"]["alloc_bytes"] < 10 ** 6
        assert outer["own"]["peak_bytes"] >= 10 ** 6
        json.dumps(payload, allow_nan=False)
        # ranks without values: the member is there, null
        assert all(r["values"] is None for r in
                   inspect_profile(str(path), ranks=[3])["regions"]["items"])

    def test_a_file_without_values_has_no_member(self, baseline_file):
        assert all("values" not in r
                   for r in inspect_profile(str(baseline_file))["regions"]["items"])

    def test_ranks_pool_sums_and_take_the_largest_peak(self):
        from types import SimpleNamespace

        from spanscope.results._model import RegionValues
        values = {"r": {0: RegionValues(2, {"alloc_bytes": 10, "peak_bytes": 7},
                                        {"alloc_bytes": 4, "peak_bytes": 3}),
                        1: RegionValues(3, {"alloc_bytes": 5, "peak_bytes": 9},
                                        {"alloc_bytes": 5, "peak_bytes": 1})}}
        results = SimpleNamespace(model=SimpleNamespace(values=values))
        assert tools.region_values(results, "r") == {
            "calls": 5, "own": {"alloc_bytes": 15, "peak_bytes": 9},
            "self": {"alloc_bytes": 9, "peak_bytes": 3}, "ranks": [0, 1]}
        assert tools.region_values(results, "r", [1])["own"] == {"alloc_bytes": 5,
                                                                 "peak_bytes": 9}
        assert tools.region_values(results, "nope") is None
        assert tools.has_values(results) and not tools.has_values(SimpleNamespace(model=None))

    def test_line_profiles_are_read_and_nothing_stays_unread(self, tmp_path):
        """A file with line profiles (rank<N>/line_profile, as a
        use_line_profiler run writes them): inspect_profile returns them,
        the slowest function first with its slowest lines, and no group is
        left unread."""
        import shutil

        import h5py

        from spanscope.results import write_line_profile
        path = tmp_path / "lp.h5"
        shutil.copyfile(DATA / "perf_events" / "sw_counters.h5", path)
        source = "def kernel(n):\n    x = 0\n    for i in range(n):\n        x += i\n    return x"
        kernel = {"region": "solve", "filename": "k.py", "function": "kernel",
                  "first_lineno": 1, "line_numbers": np.array([2, 3, 4, 5]),
                  "hits": np.array([1, 11, 10, 1]), "times": np.array([1.0, 30.0, 60.0, 9.0]),
                  "unit": 1e-3, "source": source, "source_first_lineno": 1}
        setup = {"region": "init", "filename": "gone.py", "function": "setup",
                 "first_lineno": 7, "line_numbers": np.array([8]), "hits": np.array([2]),
                 "times": np.array([4.0]), "unit": 1e-3}
        with h5py.File(path, "a") as f:
            write_line_profile(f["rank0"], [setup, kernel])
        payload = inspect_profile(str(path))
        assert "not_read" not in payload
        assert payload["perf_events"]["ranks"] == [0]
        assert tools.unread_groups(spanscope.read_profile(path)) == []
        lp = payload["line_profile"]
        assert lp["ranks"] == [0] and lp["record_count_total"] == 2
        assert lp["record_count_returned"] == 2
        first, second = lp["records"]
        assert (first["region"], first["function"], second["function"]) == \
            ("solve", "kernel", "setup")
        assert first["filename"] == "k.py" and first["first_lineno"] == 1
        assert first["lines"] == 4 and first["total_seconds"] == pytest.approx(0.1)
        assert [h["line"] for h in first["hot_lines"]] == [4, 3, 5, 2]
        hottest = first["hot_lines"][0]
        assert hottest["hits"] == 10 and hottest["seconds"] == pytest.approx(0.06)
        assert hottest["percent"] == pytest.approx(60.0) and hottest["source"] == "x += i"
        # no stored source and no file: no text rather than a placeholder
        assert second["hot_lines"] == [{"line": 8, "hits": 2, "seconds": pytest.approx(0.004),
                                        "percent": pytest.approx(100.0), "source": None}]
        json.dumps(payload, allow_nan=False)
        # include / exclude select by region, top_n and ranks cut
        only = inspect_profile(str(path), include=["init"])["line_profile"]
        assert [r["function"] for r in only["records"]] == ["setup"]
        assert only["record_count_total"] == 1
        assert inspect_profile(str(path), exclude=["solve"])["line_profile"][
            "records"][0]["region"] == "init"
        top = inspect_profile(str(path), top_n=1)["line_profile"]
        assert top["record_count_total"] == 2 and top["record_count_returned"] == 1
        assert top["records"][0]["function"] == "kernel"
        other = inspect_profile(str(path), ranks=[1])["line_profile"]
        assert other["ranks"] == [] and other["records"] == []
        # a file without line profiles: the member is there, null
        shutil.copyfile(DATA / "perf_events" / "sw_counters.h5", tmp_path / "plain.h5")
        assert inspect_profile(str(tmp_path / "plain.h5"))["line_profile"] is None


@needs_mcp
def test_inspect_profile_over_mcp_describes_and_returns_the_new_data(values_file,
                                                                     likwid_file):
    path = values_file

    async def scenario(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        values = await client.call_tool("inspect_profile", {"file_path": str(path)})
        lk = await client.call_tool("inspect_profile", {"file_path": str(likwid_file)})
        return listed["inspect_profile"].description, _json(values), _json(lk)

    description, values, lk = _with_client(scenario)
    for word in ("values", "alloc_bytes", "peak_bytes", "own", "self", "likwid",
                 "perf_events", "not_read"):
        assert word in description
    assert values["regions"]["items"][0]["values"]["own"]["alloc_bytes"] >= 10 ** 5
    assert lk["likwid"]["region_count_total"] == 6
