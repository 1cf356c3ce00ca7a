"""write_profile(results, "x.h5") for results held in Python (scope-profiler's
write_profile writes HDF5 for any name that is not .json/.html): the calls go
to C (sps_spans_write_h5) and come back the same, read by spanscope and by
the real scope-profiler 0.7.5."""

import numpy as np
import pytest

import spanscope as sp
from spanscope import ProfileManager

sp_ref = pytest.importorskip("scope_profiler")


def _record(path, fmt_suffix):
    ProfileManager.setup(output=str(path.with_suffix(fmt_suffix)), label="wp run",
                         capture_region_source=True)
    for i in range(4):
        with ProfileManager.region("step", tags=["solver"]):
            with ProfileManager.region("inner"):
                sum(range(2000 * (i + 1)))
            with ProfileManager.region("io"):
                pass
    ProfileManager.finalize(verbose=False)
    return path.with_suffix(fmt_suffix)


def _same_calls(a, b):
    assert a.region_names == b.region_names
    for name in a.region_names:
        x, y = a[name][0], b[name][0]
        assert np.array_equal(x.start_times_ns, y.start_times_ns)
        assert np.array_equal(x.end_times_ns, y.end_times_ns)
        assert x.exclusive_duration == pytest.approx(y.exclusive_duration, abs=1e-12)


def test_json_results_written_as_h5(tmp_path):
    src = _record(tmp_path / "run", ".json")
    held = sp.read_json(src)  # results held in Python: no .h5 behind them
    out = sp.write_profile(held, tmp_path / "back.h5")
    assert out == tmp_path / "back.h5"
    ours, theirs = sp.read_h5(out), sp_ref.read_h5(out)
    _same_calls(held, ours)
    assert theirs.region_names == ours.region_names
    for name in ours.region_names:
        assert theirs[name][0].num_calls == ours[name][0].num_calls == 4
        # the self times the fold gave, as scope-profiler reads them back
        assert theirs[name][0].exclusive_duration == pytest.approx(
            ours[name][0].exclusive_duration)
    step = ours["step"][0]
    inner = ours["inner"][0]
    assert set(inner.parent_ids) <= set(step.call_ids)
    # the run's facts come along: times, label, sources, tags
    for k in ("run_start_time", "finalize_time", "total_time", "label"):
        assert getattr(theirs, k) == getattr(held, k), k
    for name in held.region_names:
        for k in ("tags", "source_file", "source_lineno", "source_text"):
            assert getattr(theirs[name], k) == getattr(held[name], k), (name, k)
    assert list(theirs["step"].tags) == ["solver"] and theirs["step"].source_lineno > 0


def test_h5_results_are_copied_and_options_refused(tmp_path):
    src = _record(tmp_path / "run", ".h5")
    res = sp.read_h5(src)
    out = sp.write_profile(res, tmp_path / "copy.h5")
    assert out.read_bytes() == src.read_bytes()
    with pytest.raises(TypeError, match="no options"):
        sp.write_profile(res, tmp_path / "x.h5", compression="gzip")


def test_overlapping_calls_are_refused_with_a_reason(tmp_path):
    from spanscope import _ext
    # two calls of one thread that overlap without nesting: no call tree
    name = np.array([0, 1], np.uint32)
    zero = np.zeros(2, np.int64)
    out = tmp_path / "bad.h5"
    with pytest.raises(ValueError, match="overlap"):
        _ext.spans_write_h5(str(out), ["a", "b"], name, zero, zero,
                            np.array([0, 5], np.int64), np.array([10, 15], np.int64))
    assert not out.exists() and not list(tmp_path.iterdir())  # no temporaries left
    # on two threads the same calls are fine
    _ext.spans_write_h5(str(out), ["a", "b"], name, zero, np.array([0, 1], np.int64),
                        np.array([0, 5], np.int64), np.array([10, 15], np.int64))
    res = sp.read_h5(out)
    assert res["a"][0].num_calls == res["b"][0].num_calls == 1
    assert res["b"][0].durations_ns.tolist() == [10]


def test_spans_write_h5_checks_its_arguments(tmp_path):
    from spanscope import _ext
    z = np.zeros(1, np.int64)
    with pytest.raises(ValueError, match="out of range"):
        _ext.spans_write_h5(str(tmp_path / "a.h5"), ["a"], np.array([3], np.uint32), z, z, z, z)
    with pytest.raises(ValueError, match="before it starts"):
        _ext.spans_write_h5(str(tmp_path / "a.h5"), ["a"], np.array([0], np.uint32), z, z,
                            np.array([5], np.int64), np.array([4], np.int64))
    with pytest.raises(TypeError, match="one per span"):
        _ext.spans_write_h5(str(tmp_path / "a.h5"), ["a"], np.array([0, 0], np.uint32), z, z,
                            z, z)
    with pytest.raises(OSError):
        _ext.spans_write_h5(str(tmp_path / "no" / "dir" / "a.h5"), ["a"],
                            np.array([0], np.uint32), z, z, z, np.array([1], np.int64))
    assert not (tmp_path / "a.h5").exists()


def test_merge_keeps_the_regions_attributes(tmp_path):
    """spanscope merge (and the MPI collective finalize, which merges the
    ranks' parts) keeps source locations and tags, as one rank's file has
    them."""
    import subprocess

    import h5py

    from conftest import BUILD
    cli = BUILD / "spanscope"
    if not cli.exists():
        pytest.skip("the spanscope tool is not built")
    paths = []
    for rank in (0, 1):
        p = tmp_path / f"r{rank}.h5"
        ProfileManager.setup(output=str(p), capture_region_source=True)
        with ProfileManager.region("load", tags=["io"]):
            pass
        with ProfileManager.region("solve"):
            pass
        ProfileManager.finalize(verbose=False)
        with h5py.File(p, "r+") as f:
            f["metadata"].attrs["rank"] = np.int64(rank)
        paths.append(p)
    one = sp_ref.read_h5(paths[0])
    out = tmp_path / "merged.h5"
    r = subprocess.run([str(cli), "merge", "-o", str(out), *map(str, paths)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    merged = sp_ref.read_h5(out)
    assert merged.num_ranks == 2
    for name in ("load", "solve"):
        for rank in (0, 1):
            assert merged[name][rank].num_calls == 1
        assert merged[name].tags == one[name].tags
        assert merged[name].source_file == one[name].source_file
        assert merged[name].source_lineno == one[name].source_lineno
    assert list(merged["load"].tags) == ["io"]
    assert merged["load"].source_file and merged["load"].source_lineno > 0


def test_results_held_in_python_are_exported(tmp_path):
    """The exports take results without an .h5 behind them (JSON, merged):
    written to a temporary .h5 in C first, the same numbers come out."""
    src = _record(tmp_path / "run", ".json")
    held = sp.read_json(src)
    stats = sp.to_pstats(held)
    (key,) = stats
    st = stats[key].stats
    calls = {k[2]: v[1] for k, v in st.items()}
    assert calls["step"] == 4 and calls["step > inner"] == 4
    out = sp.export_speedscope(held, tmp_path / "held", verbose=False)
    import json
    doc = json.loads(out[0].read_text())
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert set(held.region_names) <= set(names)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("spanscope-export")]
    with pytest.raises(TypeError, match="path or results"):
        sp.export_prof(object(), tmp_path / "x.prof", verbose=False)
