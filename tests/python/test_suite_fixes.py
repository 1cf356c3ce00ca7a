"""scope-profiler 0.7.5 behaviours spanscope follows (issue 32, part 2):
results of an in-memory finalize, repeated finalize() (the region table,
call ids across periods), empty results when profiling is off, the call
graph's scope-profiler shape, launcher detection."""

import csv
import json
import os

import pytest

import spanscope
from spanscope import ProfileManager, plots
from spanscope.results import ProfilingResults, read_h5


@pytest.fixture(autouse=True)
def _fresh():
    yield
    ProfileManager.reset()


def _nested():
    @ProfileManager.profile("leaf")
    def leaf():
        return 1

    @ProfileManager.profile("middle")
    def middle():
        return sum(leaf() for _ in range(3))

    @ProfileManager.profile("root")
    def root():
        return middle() + leaf()

    root()


def test_in_memory_results_outlive_their_temporary_file(tmp_path):
    """finalize(return_results=True) without file output: the results are
    held in memory (the temporary file they were read from is gone), name
    the configured file, and plot."""
    configured = tmp_path / "profiling_data.h5"
    ProfileManager.setup(file_path=str(configured), deactivate_file_output=True)
    _nested()
    res = ProfileManager.finalize(verbose=False, return_results=True)
    assert not configured.exists()
    assert str(res.file_path) == str(configured)
    assert not os.path.exists(res.model.path)  # the temporary file was removed
    fig, axis = plots.plot_callgraph(res, verbose=False, return_fig=True)
    assert len(axis.collections[0].get_offsets()) == 1 + 1 + 3 + 1
    data = tmp_path / "calls.csv"
    assert plots.plot_callgraph([res], data_filepath=data, verbose=False) is None
    with open(data, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows][:2] == ["root", "middle"]
    assert rows[0]["parent_id"] == ""  # a root
    plots.plot_gantt(res, filepath=tmp_path / "g.png", verbose=False)  # any plot
    assert (tmp_path / "g.png").exists()


def test_callgraph_compact_json_and_errors(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "p.h5"))
    _nested()
    res = ProfileManager.finalize(verbose=False, return_results=True)
    out = tmp_path / "edges.json"
    plots.plot_callgraph(res, compact=True, data_filepath=out, data_format="json",
                         verbose=False)
    doc = json.loads(out.read_text())
    assert doc["plot"] == "callgraph"
    assert {"parent": "root", "child": "middle"} in doc["edges"]
    assert {"parent": "middle", "child": "leaf"} in doc["edges"]
    assert {"parent": "root", "child": "leaf"} in doc["edges"]
    assert [r["name"] for r in doc["regions"]] == ["root", "middle", "leaf"]
    with pytest.raises(ValueError, match="one profiling file at a time"):
        plots.plot_callgraph([res, res], verbose=False)
    with pytest.raises(ValueError, match="No calls recorded"):
        plots.plot_callgraph(res, rank=3, verbose=False)
    with pytest.raises(ValueError, match="No profiling data provided"):
        plots.plot_gantt([])


def test_region_table_names_only_regions_with_a_completed_call(tmp_path):
    out = tmp_path / "p.h5"
    ProfileManager.setup(file_path=str(out))
    with ProfileManager.region("first_only"):
        pass
    ProfileManager.finalize(verbose=False)
    assert read_h5(out).region_names == ["first_only"]
    with ProfileManager.region("outer"):  # open across the finalize
        with ProfileManager.region("inner"):
            pass
        ProfileManager.finalize(verbose=False)
    res = read_h5(out)
    assert res.region_names == ["inner"]  # not first_only, not the open outer
    assert res["inner"].num_calls == 1
    ProfileManager.finalize(verbose=False)
    assert read_h5(out).region_names == ["outer"]  # its call, once it completed


def test_call_ids_run_on_across_finalizes_and_restart_at_setup(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "one.h5"))
    with ProfileManager.region("step"):
        pass
    with ProfileManager.region("step"):
        first = ProfileManager.finalize(verbose=False, return_results=True)
    second = ProfileManager.finalize(verbose=False, return_results=True)
    assert first["step"][0].call_ids.tolist() == [0]
    assert second["step"][0].call_ids.tolist() == [1]  # the call open at the first
    assert (first["step"][0].start_times_ns.tolist()
            != second["step"][0].start_times_ns.tolist())
    ProfileManager.setup(file_path=str(tmp_path / "two.h5"))
    for _ in range(2):
        with ProfileManager.region("step"):
            pass
    third = ProfileManager.finalize(verbose=False, return_results=True)
    assert third["step"][0].call_ids.tolist() == [0, 1]  # a new run: from 0


def test_deactivated_profiling_returns_empty_results(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "p.h5"), deactivate_profiling=True)
    res = ProfileManager.finalize(verbose=False, return_results=True)
    assert isinstance(res, ProfilingResults)
    assert res.region_names == [] and res.summary() == []
    assert ProfileManager.finalize(verbose=False) is None


def test_launcher_env_vars(monkeypatch):
    from spanscope._base import mpi
    assert "OMPI_COMM_WORLD_RANK" in mpi.LAUNCHER_ENV_VARS
    assert "PMI_RANK" in mpi.LAUNCHER_ENV_VARS
    for var in list(os.environ):
        if var in mpi._LAUNCHER_VARS or var == "SPANSCOPE_MPI":
            monkeypatch.delenv(var)
    assert not mpi.launched()
    for var in mpi.LAUNCHER_ENV_VARS:
        monkeypatch.setenv(var, "0")
        assert mpi.launched(), var
        monkeypatch.delenv(var)
    monkeypatch.setenv("PALS_RANKID", "0")
    monkeypatch.setenv("SPANSCOPE_MPI", "0")
    assert not mpi.launched()


def test_profiling_config_is_a_checked_read_only_mapping(tmp_path):
    from spanscope.options import ProfilingConfig
    first = ProfilingConfig(file_path=tmp_path / "first.h5", label="first")
    second = ProfilingConfig(file_path=str(tmp_path / "second.h5"), buffer_limit=64)
    assert first.file_path == str(tmp_path / "first.h5") and first.label == "first"
    assert second.label is None and second.buffer_limit == 64
    assert first.aggregation_mode is False and first["metadata_detail"] == "minimal"
    with pytest.raises(AttributeError, match="read-only"):
        first.label = "x"
    with pytest.raises(TypeError, match="did you mean 'label'"):
        ProfilingConfig(lable="x")
    with pytest.raises(ValueError, match="metadata_detail"):
        ProfilingConfig(metadata_detail="some")
    assert ProfilingConfig(use_nvtx=True).use_nvtx is True  # NVTX ranges (issue 38)
    ProfileManager.set_config(first)  # a mapping of setup()'s settings
    assert ProfileManager.get_config().label == "first"
    ProfileManager.finalize(verbose=False)
    assert read_h5(first.file_path).label == "first"


def test_get_config_before_setup_gives_the_defaults():
    ProfileManager.reset()
    c = ProfileManager.get_config()
    assert c.file_path == "profiling_data.h5" and c.label is None
    assert c.comm is None and (c.rank, c.size) == (0, 1)  # not under a launcher


def test_hdf5_value_errors_come_before_the_missing_features():
    from spanscope.options import FeatureNotAvailableError
    with pytest.raises(ValueError, match="LZF compression does not accept"):
        ProfileManager.setup(hdf5_compression="lzf", hdf5_compression_level=1)
    with pytest.raises(ValueError, match="Zstandard"):
        ProfileManager.setup(hdf5_compression="zstd", hdf5_compression_level=30)
    with pytest.raises(FeatureNotAvailableError):
        ProfileManager.setup(hdf5_compression="lzf")


def test_no_label_stores_none_and_the_session_root_is_scope_profilers(tmp_path):
    with ProfileManager.session(file_path=str(tmp_path / "run.h5"), verbose=False,
                                return_results=True) as run:
        with ProfileManager.region("work"):
            pass
    res = read_h5(tmp_path / "run.h5")
    assert "label" not in res.metadata and res.label is None
    assert res.display_label == "run"
    assert run.results.call_stack()[0]["name"] == "scope_profiler.session"
    assert set(res.region_names) == {"scope_profiler.session", "work"}


def _json_profile(tmp_path):
    from spanscope.results import write_json
    h5 = tmp_path / "profile.h5"
    ProfileManager.setup(file_path=str(h5))
    with ProfileManager.region("outer"):
        with ProfileManager.region("inner"):
            pass
    ProfileManager.finalize(verbose=False)
    return h5, write_json(read_h5(h5), tmp_path / "profile.json")


def test_cli_export_json_to_a_directory_gzip_indent(tmp_path):
    import gzip
    from spanscope._cli import main
    from spanscope.results import read_json
    h5, _ = _json_profile(tmp_path)
    assert main(["export", "json", str(h5), "-o", str(tmp_path / "out")]) == 0
    assert read_json(tmp_path / "out" / "profile.json").region_names == ["outer", "inner"]
    assert main(["export", "json", str(h5), "-o", str(tmp_path / "gz"), "--gzip",
                 "--indent", "2"]) == 0
    text = gzip.decompress((tmp_path / "gz" / "profile.json.gz").read_bytes())
    assert b"\n  " in text
    assert main(["export", "json", str(h5), "-o", str(tmp_path / "one.json")]) == 0
    assert read_json(tmp_path / "one.json").num_ranks == 1  # a .json name: that file
    assert main(["export", "json", str(h5), "-o", str(tmp_path / "x"), "--indent",
                 "two"]) == 2


def test_cli_reads_json_profiles(tmp_path, capfd):
    from spanscope._cli import _is_json_profile, _rewritten, main
    h5, js = _json_profile(tmp_path)
    assert _is_json_profile(str(js)) and not _is_json_profile(str(h5))
    assert _rewritten(["diff", str(h5), str(js)]) and not _rewritten(["diff", str(h5)])
    assert main(["inspect", str(js)]) == 0
    assert "outer" in capfd.readouterr().out
    assert main(["diff", str(h5), str(js)]) == 0
    assert "outer" in capfd.readouterr().out
    page = tmp_path / "r.html"
    assert main(["report", str(js), "-o", str(page), "--no-charts"]) == 0
    assert page.exists() and "outer" in page.read_text()


def _ranked_h5(path, ranks, ns, **metadata):
    """A profile of `ranks` ranks, one call of "solve" each lasting ns."""
    from spanscope.results import MPIRegion, Region
    from spanscope.results._jsonio import write_h5_profile
    import h5py
    per = {r: Region([1_000], [1_000 + ns]) for r in range(ranks)}
    res = ProfilingResults({"solve": MPIRegion("solve", per)}, num_ranks=ranks)
    out = write_h5_profile(res, path)
    with h5py.File(out, "a") as f:  # what a multi-node MPI run records
        for key, value in metadata.items():
            f["metadata"].attrs[key] = value
    return out


def test_speedup_by_nodes_is_labelled_and_a_missing_field_named(tmp_path):
    pytest.importorskip("plotly")
    a = _ranked_h5(tmp_path / "r2.h5", 2, 4_000_000, num_nodes=1)
    b = _ranked_h5(tmp_path / "r4.h5", 4, 2_000_000, num_nodes=2)
    out = tmp_path / "s.html"
    plots.plot_speedup([a, b], x_field="num_nodes", backend="plotly", filepath=out,
                       verbose=False)
    assert "nodes = 1" in out.read_text()  # scope-profiler's title: the baseline
    old = [_ranked_h5(tmp_path / f"old{n}.h5", n, 1_000_000) for n in (2, 4)]
    with pytest.raises(ValueError, match="'num_nodes' not found in metadata for"):
        plots.plot_speedup(old, x_field="num_nodes", verbose=False)


def test_print_region_table_takes_total_time(tmp_path):
    import io
    from spanscope.results._table import print_region_table, region_rows
    ProfileManager.setup(file_path=str(tmp_path / "t.h5"))
    _nested()
    rows = region_rows(ProfileManager.finalize(verbose=False, return_results=True))
    a, b = io.StringIO(), io.StringIO()
    print_region_table(rows, stream=a, suppress_notes=True)
    print_region_table(rows, stream=b, suppress_notes=True, total_time=10)
    assert "leaf (3x)" in a.getvalue()
    assert a.getvalue() == b.getvalue()  # accepted, unused (scope-profiler's)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_stands_down_from_the_parents_task_tracking(tmp_path):
    import asyncio
    import pickle
    stock = asyncio.BaseEventLoop.create_task
    with ProfileManager.session(track_async=True, verbose=False,
                                file_path=str(tmp_path / "parent.h5")):
        parent_tracker = ProfileManager.get_config().tracker
        assert asyncio.BaseEventLoop.create_task is not stock  # installed
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            status = 1
            try:
                async def main():
                    return await asyncio.gather(*[asyncio.sleep(0, i) for i in range(5)])
                asyncio.run(main())
                t = ProfileManager.get_config().tracker
                os.write(w, pickle.dumps((len(t.tasks), len(t.threads), t is parent_tracker,
                                          asyncio.BaseEventLoop.create_task is stock,
                                          ProfileManager.is_active())))
                status = 0
            finally:
                os._exit(status)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            got = pickle.loads(f.read())
        _, st = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(st) == 0
        # the child tracks no tasks (a fresh, empty tracker; asyncio's stock
        # create_task back), while it records into a session of its own, the
        # default for forked children (SPANSCOPE_FORK=own, docs/process-trees.md)
        assert got == (0, 0, False, True, True)
        assert ProfileManager.get_config().tracker is parent_tracker  # untouched here
    assert asyncio.BaseEventLoop.create_task is stock
    assert ProfileManager.get_config().tracker is parent_tracker  # kept after the run
