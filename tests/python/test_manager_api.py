"""scope-profiler 0.7.5's recording API on spanscope, tried the way its users
(and its own tests: test_api_shortcuts.py, unit/test_region_variants.py)
call it: module-level names, settings and their precedence, the TOML file
and the environment, output formats, results in memory, pause / resume /
sample_every, tags and opt-in tags, per-call metadata, source capture, the
live region views.  Files are read back with h5py and with the real
scope-profiler's read_h5 where it is installed."""
import json
import sys
import types

import h5py
import numpy as np
import pytest

import spanscope as sp
from spanscope import (GPUOptions, HDF5Options, MemrayOptions, ProfileManager,
                       ProfilingOptions, _ext)
from spanscope.options import FeatureNotAvailableError


def _index(path):
    """{region name: {column: value}} of the file's /rank_region_index."""
    with h5py.File(path) as f:
        names = f["region_table/names"].asstr()[()]
        ix = f["rank_region_index"]
        out = {}
        for i, rid in enumerate(ix["region_ids"][()]):
            out[names[rid]] = {k: (ix[k][()][i].decode() if isinstance(ix[k][()][i], bytes)
                                   else ix[k][()][i])
                               for k in ("event_counts", "source_files", "source_lines",
                                         "source_texts", "tags", "event_metadata")}
        return out


def _toml(tmp_path, text, name="profiling.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- module level ---------------------------------------------------------------

RECORDING_NAMES = ["setup", "finalize", "region", "session", "profile", "is_active",
                   "is_configured", "registered_regions", "recorded_regions",
                   "define_region", "last_results", "metadata", "region_factory",
                   "register_opt_in_tag", "reset", "setup_from_env", "run", "profile_script",
                   "profile_command", "instrument"]


def test_module_level_names_are_the_manager_methods():
    for name in RECORDING_NAMES:
        mine = getattr(sp, name)
        theirs = getattr(ProfileManager, name)
        assert getattr(mine, "__func__", mine) is getattr(theirs, "__func__", theirs), name
    assert ProfileManager.profile_region is ProfileManager.region
    assert ProfileManager.region.__func__ is ProfileManager.profile_region.__func__
    for cls in (ProfilingOptions, HDF5Options, MemrayOptions, GPUOptions,
                sp.RegionHandle, sp.RegionFactory):
        assert cls.__name__ in sp.__all__


def test_lifecycle_and_region_queries_distinguish_definition_from_recording(tmp_path):
    assert not sp.is_configured() and not sp.is_active()

    @sp.profile("work")
    def work():
        pass

    work()
    assert sp.registered_regions() == ("work",)
    assert sp.recorded_regions() == ()
    sp.setup(file_path=str(tmp_path / "lifecycle.h5"))
    assert sp.is_configured() and sp.is_active()
    assert sp.registered_regions() == ("work",)
    work()
    assert sp.recorded_regions() == ("work",)
    sp.finalize(verbose=False)
    assert sp.is_configured() and sp.is_active()  # finalize is a checkpoint


def test_finalize_before_setup_is_harmless():
    assert sp.finalize() is None
    assert sp.finalize(verbose=False, return_results=True) is None
    assert sp.last_results() is None


# -- results in memory ----------------------------------------------------------

def test_setup_returns_a_run_handle_and_last_results_without_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = sp.setup(output=None)
    with sp.region("work"):
        pass
    results = run.finalize(verbose=False)
    assert run.results is results
    assert sp.last_results() is results
    assert results["work"].num_calls == 1
    assert list(tmp_path.iterdir()) == []  # no file, not even a temporary one


def test_return_results_with_a_file(tmp_path):
    p = tmp_path / "r.h5"
    sp.setup(file_path=str(p))
    for _ in range(3):
        with sp.region("step"):
            pass
    results = sp.finalize(verbose=False, return_results=True)
    assert results["step"].num_calls == 3
    assert p.exists() and sp.read(p)["step"].num_calls == 3


def test_defined_region_handle_survives_new_sessions(tmp_path):
    work = sp.define_region("work", tags=("persistent",))
    assert sp.registered_regions() == ("work",)
    outputs = [tmp_path / "first.h5", tmp_path / "second.h5"]
    for output in outputs:
        with sp.session(file_path=str(output), verbose=False):
            with work:
                pass
    for output in outputs:
        assert sp.read(output)["work"].num_calls == 1
        assert _index(output)["work"]["tags"] == '["persistent"]'
    with pytest.raises(ValueError, match="already defined differently"):
        sp.define_region("work", tags=("other",))


def test_run_callable_profiles_without_manual_lifecycle(tmp_path):
    output = tmp_path / "callable.h5"

    def application(x):
        with sp.region("work"):
            return 40 + x

    assert sp.run(application, 2, output=output) == 42
    assert sp.read(output)["work"].num_calls == 1
    assert sp.last_results()["work"].num_calls == 1


# -- output formats ---------------------------------------------------------------

def test_output_alias_can_disable_files_and_rejects_ambiguous_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sp.setup(output=None)
    with sp.region("work"):
        pass
    sp.finalize(verbose=False)
    assert not (tmp_path / "profiling_data.h5").exists()
    with pytest.raises(TypeError, match="output cannot be combined"):
        sp.setup(output=tmp_path / "unused.h5", file_path=tmp_path / "other.h5", replace=True)


def test_output_h5_html_and_json_write_that_format(tmp_path):
    h5 = tmp_path / "run.h5"
    run = sp.setup(output=h5)
    with sp.region("work"):
        pass
    sp.finalize(verbose=False)
    assert run.file_path == str(h5)
    assert h5.read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"

    page = tmp_path / "run.html"
    run = sp.setup(output=page, replace=True)
    with sp.region("work"):
        pass
    results = run.finalize(verbose=False)
    text = page.read_text()
    assert text.lstrip().lower().startswith("<!doctype html") and "work" in text
    assert results["work"].num_calls == 1
    # no sidecar; the live session's crash-safety directory (OUTPUT.live-<pid>,
    # docs/crash-recovery.md) exists while a session with a file is alive
    assert sorted(p.name for p in tmp_path.iterdir()
                  if ".live-" not in p.name) == ["run.h5", "run.html"]

    js = tmp_path / "run.json"
    if getattr(sp, "write_json", None) is None:  # the results branch delivers it
        with pytest.raises(FeatureNotAvailableError, match="write_json"):
            sp.setup(output=js, replace=True)
    else:
        run = sp.setup(output=js, replace=True)
        with sp.region("work"):
            pass
        run.finalize(verbose=False)
        assert json.loads(js.read_text())
    # the session shut down, everything written: its crash-safety directory is gone
    live = [p.name for p in tmp_path.iterdir() if ".live-" in p.name]
    assert live, "the live session has its crash-safety directory"
    ProfileManager.reset()
    assert [p.name for p in tmp_path.iterdir() if ".live-" in p.name] == []


# -- settings ----------------------------------------------------------------------

def test_an_unknown_setup_keyword_names_the_closest_match():
    with pytest.raises(TypeError, match=r"'recursive_profil' \(did you mean 'recursive_profile'"):
        sp.setup(recursive_profil=True)
    with pytest.raises(TypeError, match="Unknown profiling setting"):
        sp.setup(zzzz_nothing_like_it=1)
    assert not sp.is_configured()


def test_groups_expand_to_the_flat_setting_names():
    o = ProfilingOptions(file_path="x.h5", hdf5=HDF5Options(compression="gzip"),
                         memray=MemrayOptions(), gpu=GPUOptions())
    assert o.to_kwargs() == {"file_path": "x.h5", "hdf5_compression": "gzip"}
    assert MemrayOptions(enabled=True).to_kwargs() == {"use_memray": True}
    assert GPUOptions(nvtx=True, timing=False).to_kwargs() == {"use_nvtx": True,
                                                               "use_gpu_timing": False}
    with pytest.raises(ValueError, match="set both directly and on the 'hdf5'"):
        ProfilingOptions(hdf5_compression="gzip",
                         hdf5=HDF5Options(compression="gzip")).to_kwargs()
    with pytest.raises(TypeError, match="must be a HDF5Options"):
        ProfilingOptions(hdf5={"compression": "gzip"}).to_kwargs()


def test_precedence_runs_config_path_then_options_then_keywords(tmp_path):
    path = _toml(tmp_path, '[profiling]\nlabel = "from-toml"\nbuffer_limit = 111\n'
                           'output_mode = "direct"\n')
    sp.setup(config_path=path, options=ProfilingOptions(label="from-options", buffer_limit=222),
             label="from-keyword", deactivate_file_output=True)
    config = ProfileManager.get_config()
    assert config.label == "from-keyword"  # keyword beats options
    assert config.buffer_limit == 222       # options beat the TOML file
    assert config.output_mode == "direct"   # only the TOML file set it
    with pytest.raises(AttributeError):
        config.label = "x"


def test_toml_sub_tables_and_their_errors(tmp_path):
    good = _toml(tmp_path, '[profiling]\nfile_path = "t.h5"\n[profiling.hdf5]\n'
                           'compression = "gzip"\n')
    sp.setup(config_path=good, output=None)
    assert ProfileManager.get_config().hdf5_compression == "gzip"
    sp.finalize(verbose=False)
    cases = [
        ('[profiling]\nhdf5_compression = "gzip"\n[profiling.hdf5]\ncompression = "gzip"\n',
         "set both directly and as hdf5.compression"),
        ('[profiling.hdf5]\nlevel = 3\n', r"unknown \[hdf5\] profiling setting"),
        ('[profiling]\nhdf5 = 3\n', "must be a TOML table"),
        ('[profiling]\nfile_pth = "x.h5"\n', "did you mean 'file_path'"),
        ('[profiling\n', "invalid profiling TOML"),
    ]
    for i, (text, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message):
            sp.setup(config_path=_toml(tmp_path, text, f"bad{i}.toml"), replace=True)
    with pytest.raises(ValueError, match="could not read profiling config"):
        sp.setup(config_path=tmp_path / "missing.toml", replace=True)


@pytest.mark.parametrize("kw, message", [
    ({"aggregation_mode": True, "use_line_profiler": True}, "aggregation_mode cannot be combined"),
    ({"aggregation_mode": True, "use_nvtx": True}, "aggregation_mode cannot be combined"),
    ({"aggregation_mode": True, "track_threads": True}, "track_threads/track_async cannot"),
    ({"track_threads": True, "use_likwid": True}, "track_threads/track_async cannot"),
    ({"gpu_sync_on_exit": True}, "requires use_gpu_timing=True"),
    ({"output_mode": "fast"}, "output_mode must be"),
    ({"metadata_detail": "some"}, "metadata_detail must be"),
    ({"hdf5_compression": "brotli"}, "hdf5_compression must be"),
])
def test_the_combinations_scope_profiler_rejects_are_value_errors(kw, message):
    with pytest.raises(ValueError, match=message):
        sp.setup(output=None, **kw)


def test_gpu_timing_without_a_device_says_why():
    """use_gpu_timing=True (issue 38 part 4; tests/python/test_gpu_timing.py
    has the stand-in device): where no CUDA device can be timed, setup
    raises RuntimeError with the C core's reason and starts nothing."""
    from spanscope import _ext
    if _ext.device_available(_ext.DEVICE_EVENTS) is None:
        pytest.skip("a CUDA device can be timed here")
    with pytest.raises(RuntimeError, match="gpu_timing"):
        sp.setup(output=None, use_gpu_timing=True)
    assert not sp.is_configured()


# -- the environment ------------------------------------------------------------------

def test_instrument_region_factory_and_environment_setup(tmp_path, monkeypatch):
    module = types.ModuleType("instrumented")

    def work():
        return 1

    def _private():
        return 2

    module.work, module._private = work, _private
    sp.setup(output=None)
    changed = sp.instrument(module, include=["*"], exclude=["_*"])
    assert set(changed) == {"work"}
    assert module.work() == 1 and module._private() == 2
    assert sp.recorded_regions() == ("instrumented.work",)
    sp.finalize(verbose=False)

    ProfileManager._reset()
    monkeypatch.setenv("SCOPE_PROFILER_OUTPUT", str(tmp_path / "env.h5"))
    monkeypatch.setenv("SCOPE_PROFILER_AUTO_FINALIZE", "false")
    sp.setup_from_env()
    with sp.region_factory("iteration")(step=1):
        pass
    sp.finalize(verbose=False)
    assert sp.read(tmp_path / "env.h5")["iteration"].num_calls == 1
    assert json.loads(_index(tmp_path / "env.h5")["iteration"]["event_metadata"]) == [{"step": 1}]


def test_environment_precedence_and_bad_values(tmp_path, monkeypatch):
    cfg = _toml(tmp_path, '[profiling]\nlabel = "from-toml"\nrecursive_profile = false\n')
    monkeypatch.setenv("SPANSCOPE_CONFIG", str(cfg))
    monkeypatch.setenv("SCOPE_PROFILER_RECURSIVE", "0")
    monkeypatch.setenv("SPANSCOPE_RECURSIVE", "yes")        # SPANSCOPE_ wins over the alias
    monkeypatch.setenv("SPANSCOPE_OUTPUT", str(tmp_path / "env.h5"))
    monkeypatch.setenv("SPANSCOPE_ENABLE_TAGS", "lib, other")
    sp.setup_from_env()
    c = ProfileManager.get_config()
    assert c.label == "from-toml"          # the file
    assert c.recursive_profile is True     # the variable beats the file
    assert c.enable_tags == ("lib", "other")
    assert c.file_path == str(tmp_path / "env.h5")
    sp.setup_from_env(label="kw", output=None, replace=True)  # keywords beat both
    c = ProfileManager.get_config()
    assert c.label == "kw" and c.deactivate_file_output
    monkeypatch.setenv("SPANSCOPE_AUTO_FINALIZE", "maybe")
    with pytest.raises(ValueError, match="SPANSCOPE_AUTO_FINALIZE=maybe"):
        sp.setup_from_env(replace=True)


def test_c_auto_setup_reads_the_same_variables(tmp_path):
    """A C-only view: sps_setup_from_env through ctypes, in a child."""
    import subprocess
    out = tmp_path / "c.h5"
    code = (
        "import ctypes, spanscope._ext as e, os\n"
        "lib = ctypes.CDLL(os.path.join(os.path.dirname(e.__file__), 'libspanscope.so.1'))\n"
        "err = ctypes.create_string_buffer(512)\n"
        "assert lib.sps_setup_from_env(err, 512) == 0, err.value\n"
        "r = lib.sps_region(b'c_region')\n"
        "lib.sps__begin(r); lib.sps__end(r)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "SCOPE_PROFILER_OUTPUT": str(out),
           "SPANSCOPE_AUTO_FINALIZE": "on", "SPANSCOPE_LABEL": "from-c"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert sp.read(out)["c_region"].num_calls == 1
    assert sp.read(out).metadata["label"] == "from-c"
    # SPANSCOPE_CONFIG is read by the C core too (docs/configuration.md): a
    # missing file is SPS_EIO naming it, and no session
    env["SPANSCOPE_CONFIG"] = str(tmp_path / "x.toml")
    code_fail = code.split("assert lib.sps_setup_from_env")[0] + (
        "lib.sps_err_name.restype = ctypes.c_char_p\n"
        "rc = lib.sps_setup_from_env(err, 512)\n"
        "print(lib.sps_err_name(rc).decode(), err.value.decode())\n"
        "assert lib.sps_is_active() == 0\n")
    res = subprocess.run([sys.executable, "-c", code_fail], check=True, env=env,
                         capture_output=True, text=True)
    assert res.stdout.startswith("SPS_EIO ") and "x.toml" in res.stdout, res.stdout
    # a real file: its [profiling] label reaches /metadata (no SPANSCOPE_LABEL)
    del env["SPANSCOPE_LABEL"]
    out.unlink()
    env["SPANSCOPE_CONFIG"] = str(_toml(tmp_path, '[profiling]\nlabel = "from-toml"\n'))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert sp.read(out)["c_region"].num_calls == 1
    assert sp.read(out).metadata["label"] == "from-toml"
    # an unknown key: an error naming it
    _toml(tmp_path, '[profiling]\nlabell = "x"\n')
    res = subprocess.run([sys.executable, "-c", code_fail], check=True, env=env,
                         capture_output=True, text=True)
    assert res.stdout.startswith("SPS_EINVAL ") and "'labell'" in res.stdout, res.stdout


# -- pause, resume, sample_every ---------------------------------------------------------

def test_pause_and_resume_stop_recording_python_and_c_regions():
    with pytest.raises(RuntimeError, match="setup"):
        sp.ProfileManager.pause()
    sp.setup(output=None)
    ProfileManager.resume()  # before pause: harmless
    c_id = _ext.region_new("c.kernel").id
    with sp.region("work"):
        pass
    ProfileManager.pause()
    ProfileManager.pause()  # twice: harmless
    assert ProfileManager.is_paused() and sp.is_active()
    for _ in range(5):
        with sp.region("work"):
            pass
        _ext.begin(c_id)
        _ext.end(c_id)
    ProfileManager.resume()
    with sp.region("work"):
        pass
    _ext.begin(c_id)
    _ext.end(c_id)
    assert ProfileManager.get_region("work").num_calls == 2
    assert ProfileManager.get_region("c.kernel").num_calls == 1
    assert ProfileManager.counters()["misuse"] == 0


def test_pause_refuses_inside_an_open_region_but_not_the_session_root():
    sp.setup(output=None)
    with sp.region("outer"):
        with pytest.raises(RuntimeError, match="cannot pause while profiling scopes are "
                                               "active: 'outer'"):
            ProfileManager.pause()
    with sp.session(output=None, verbose=False, replace=True):
        ProfileManager.pause()
        with sp.region("skipped"):
            pass
        ProfileManager.resume()
    assert ProfileManager.get_region("skipped").num_calls == 0
    assert ProfileManager.get_region("scope_profiler.session").num_calls == 1


def test_pause_refuses_while_another_thread_holds_a_region_open():
    """scope-profiler's pause checks every region of every thread: a worker
    inside a region makes pause() raise naming it (and the calling
    thread's own open region too); once it has closed, pause works."""
    import threading
    sp.setup(output=None)
    opened, release, closed = threading.Event(), threading.Event(), threading.Event()

    def worker():
        with sp.region("worker.step"):
            with sp.region("worker.inner"):
                opened.set()
                release.wait(30)
        closed.set()

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert opened.wait(30)
        with pytest.raises(RuntimeError, match="cannot pause while profiling scopes are "
                                               "active: 'worker.step', 'worker.inner'$"):
            ProfileManager.pause()
        assert not ProfileManager.is_paused()
        with sp.region("main.phase"):
            with pytest.raises(RuntimeError, match="'main.phase'"):
                ProfileManager.pause()
    finally:
        release.set()
        t.join(30)
    assert closed.is_set()
    ProfileManager.pause()  # nothing open anywhere now
    assert ProfileManager.is_paused()
    with sp.region("worker.step"):
        pass
    ProfileManager.resume()
    assert ProfileManager.get_region("worker.step").num_calls == 1
    assert ProfileManager.get_region("worker.inner").num_calls == 1
    assert ProfileManager.counters()["misuse"] == 0


def test_sample_every_profiles_the_selected_steps():
    sp.setup(output=None)
    seen = []
    with ProfileManager.sample_every(3, start=1) as profile_step:
        for t in range(10):
            with profile_step(t) as selected:
                seen.append(selected)
                with sp.region("advance"):
                    pass
    assert seen == [t >= 1 and (t - 1) % 3 == 0 for t in range(10)]
    assert ProfileManager.get_region("advance").num_calls == 3  # steps 1, 4, 7
    assert not ProfileManager.is_paused()  # the state before it came back
    ProfileManager.pause()
    with ProfileManager.sample_every(2) as profile_step:
        with profile_step(0):
            pass
    assert ProfileManager.is_paused()
    ProfileManager.resume()
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError):
            with ProfileManager.sample_every(bad):
                pass
    with pytest.raises(TypeError, match="timestep"):
        with ProfileManager.sample_every(2) as profile_step:
            with profile_step("3"):
                pass


# -- regions: keywords, tags, opt-in tags ---------------------------------------------------

def test_region_keywords_and_tags_are_persisted(tmp_path):
    p = tmp_path / "tags.h5"
    sp.setup(file_path=str(p))

    def helper():
        pass

    with ProfileManager.region("io", functions=[helper], tags=("io", "disk")):
        pass
    with ProfileManager.profile_region(region_name="plain"):
        pass
    assert ProfileManager.region("io") is ProfileManager.region("io", tags=("io", "disk"))
    assert ProfileManager.region("io").tags == ("io", "disk")
    with pytest.raises(ValueError, match="already has tags"):
        ProfileManager.region("io", tags=("net",))
    with pytest.raises(TypeError):
        ProfileManager.region("bad", functions=[3])

    @ProfileManager.profile("deco", tags=["compute"])
    def deco():
        return 7

    assert deco() == 7
    sp.finalize(verbose=False)
    ix = _index(p)
    assert ix["io"]["tags"] == '["io", "disk"]' and ix["plain"]["tags"] == "[]"
    assert ix["deco"]["tags"] == '["compute"]'
    scope_profiler = pytest.importorskip("scope_profiler")
    assert scope_profiler.read_h5(str(p))["io"][0].tags == ("io", "disk")


def test_opt_in_tags_are_off_unless_the_run_enables_them():
    sp.register_opt_in_tag("mylib")

    @sp.profile("mylib.solve", tags=("mylib",))
    def solve():
        return 1

    sp.setup(output=None)
    assert solve() == 1
    with sp.region("mylib.io", tags=("mylib",)):
        pass
    with sp.region("app"):
        pass
    assert sp.recorded_regions() == ("app",)
    sp.setup(output=None, enable_tags=["mylib"], replace=True)
    solve()
    assert ProfileManager.get_region("mylib.solve").num_calls == 1
    sp.setup(output=None, enable_tags="*", replace=True)
    solve()
    assert ProfileManager.get_region("mylib.solve").num_calls == 1
    # a tag registered after the decoration is picked up at once
    sp.setup(output=None, replace=True)

    @sp.profile("late", tags=("latelib",))
    def late():
        pass

    late()
    sp.register_opt_in_tag("latelib")
    late()
    assert ProfileManager.get_region("late").num_calls == 1
    with pytest.raises(TypeError):
        sp.register_opt_in_tag("")


def test_region_tags_filter_records_only_matching_regions():
    sp.setup(output=None, region_tags=["hot"])
    with sp.region("a", tags=("hot",)):
        pass
    with sp.region("b"):
        pass
    assert sp.recorded_regions() == ("a",)


# -- per-call metadata -------------------------------------------------------------------------

def test_scoped_metadata_round_trips_per_call(tmp_path):
    output = tmp_path / "metadata.h5"
    sp.setup(output=output)
    with sp.metadata(step=1, phase="warmup"):
        with sp.region("work"):
            pass
    with sp.metadata(step=2):
        with sp.metadata(phase="solve"):
            with sp.region("work"):
                pass
    with sp.region("bare"):
        pass
    sp.finalize(verbose=False)
    expected = [{"step": 1, "phase": "warmup"}, {"step": 2, "phase": "solve"}]
    ix = _index(output)
    assert json.loads(ix["work"]["event_metadata"]) == expected
    assert ix["bare"]["event_metadata"] == "[]"
    scope_profiler = pytest.importorskip("scope_profiler")
    assert scope_profiler.read_h5(str(output))["work"][0].event_metadata == tuple(expected)
    # the metadata was the period's: the next checkpoint writes none
    with sp.region("work"):
        pass
    sp.finalize(verbose=False)
    assert _index(output)["work"]["event_metadata"] == "[]"


def test_scoped_metadata_rejects_aggregation_mode():
    sp.setup(output=None, aggregation_mode=True)
    with pytest.raises(RuntimeError, match="requires per-call data"):
        with sp.metadata(step=1):
            pass


def test_profile_metadata_callback_and_outcome(tmp_path):
    output = tmp_path / "decorated.h5"
    sp.setup(output=output)

    @sp.profile("work", metadata=lambda value: {"input": value}, record_outcome=True)
    def work(value):
        if value < 0:
            raise ValueError("negative")
        return value

    assert work(3) == 3
    with pytest.raises(ValueError):
        work(-1)
    assert work.__name__ == "work"
    sp.finalize(verbose=False)
    assert json.loads(_index(output)["work"]["event_metadata"]) == [
        {"input": 3, "status": "ok"},
        {"input": -1, "status": "error", "exception": "ValueError"}]
    with pytest.raises(TypeError, match="metadata must be"):
        sp.profile("x", metadata=3)


# -- source capture -----------------------------------------------------------------------------

def test_capture_region_source_records_with_blocks_and_functions(tmp_path):
    p = tmp_path / "src.h5"
    sp.setup(file_path=str(p), capture_region_source=True)

    @sp.profile("decorated")
    def decorated():
        return 1

    decorated()
    with sp.region("block"):
        x = 1  # noqa: F841
    sp.finalize(verbose=False)
    ix = _index(p)
    assert ix["block"]["source_files"].endswith("test_manager_api.py")
    assert 'with sp.region("block"):\n        x = 1' in ix["block"]["source_texts"]
    assert ix["block"]["source_lines"] > 0
    assert "def decorated():" in ix["decorated"]["source_texts"]
    scope_profiler = pytest.importorskip("scope_profiler")
    block = scope_profiler.read_h5(str(p))["block"][0]
    assert "with sp.region" in block.source_text


def test_metadata_detail_full_records_the_environment(tmp_path, monkeypatch):
    import os
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    p = tmp_path / "full.h5"
    sp.setup(file_path=str(p), metadata_detail="full")
    with sp.region("r"):
        pass
    sp.finalize(verbose=False)
    md = sp.read(p).metadata
    assert md["working_directory"] == os.getcwd()
    assert md["SLURM_JOB_ID"] == "4242"
    assert "numpy" in json.loads(md["modules"])
    src = _index(p)["r"]["source_files"]
    assert os.path.isabs(src)  # full: absolute source paths
    # minimal (the default) records none of it, and relative paths
    sp.setup(file_path=str(p), replace=True)
    with sp.region("r"):
        pass
    sp.finalize(verbose=False)
    assert "working_directory" not in sp.read(p).metadata
    assert not os.path.isabs(_index(p)["r"]["source_files"])


def test_without_capture_the_file_and_line_are_kept_but_no_text(tmp_path):
    p = tmp_path / "nosrc.h5"
    sp.setup(file_path=str(p))
    with sp.region("block"):
        pass
    sp.finalize(verbose=False)
    b = _index(p)["block"]
    assert b["source_files"].endswith("test_manager_api.py") and b["source_lines"] > 0
    assert b["source_texts"] == ""


# -- asyncio tasks -------------------------------------------------------------------------------

def test_track_async_writes_the_task_table(tmp_path):
    import asyncio
    p = tmp_path / "tasks.h5"
    with sp.session(file_path=str(p), track_async=True, verbose=False):
        async def worker(i):
            with sp.region("work"):
                await asyncio.sleep(0.02)
            return i

        async def main():
            return await asyncio.gather(*(worker(i) for i in range(3)))

        assert asyncio.run(main()) == [0, 1, 2]
    assert ProfileManager.get_config().track_threads  # implied, as in scope-profiler
    with h5py.File(p) as f:
        t = {k: f["task_table"][k][()] for k in f["task_table"]}
    coro = [c.decode().rpartition(".")[2] for c in t["coro_name"]]  # qualnames
    assert coro[:4] == ["main", "worker", "worker", "worker"]
    workers = [i for i, c in enumerate(coro) if c == "worker"]
    assert (t["steps"][workers] >= 2).all()          # started, resumed after the sleep
    # the await: suspended for a while, but not necessarily for the whole
    # sleep, since the timer starts inside the step before it, and a step
    # preempted on a loaded machine ends late
    assert (t["suspended_ns"][workers] > 0).all()
    assert (t["done_ns"][workers] - t["created_ns"][workers] >= 20_000_000).all()
    assert set(t["thread_index"]) == {0}
    # the hooks came out with the session: a later loop is not followed
    import asyncio as aio
    assert aio.BaseEventLoop.create_task.__name__ == "create_task"
    assert "spanscope" not in (aio.BaseEventLoop.create_task.__module__ or "")
    # each call carries its task and the time that task awaited inside it
    res = sp.read(p)
    work = res["work"]
    with h5py.File(p) as f:
        task_ids = f["events/task_ids"][()]
        await_ns = f["events/await_ns"][()]
    first = work.first_event
    wt = task_ids[first:first + work.num_calls]
    wa = await_ns[first:first + work.num_calls]
    assert sorted(wt) == workers                      # one call per worker, each its own
    assert (wa > 0).all() and (wa <= work.durations_ns).all()
    root = res["scope_profiler.session"]
    assert task_ids[root.first_event] == -1            # outside every task
    assert await_ns[root.first_event] == 0
    scope_profiler = pytest.importorskip("scope_profiler")
    region = scope_profiler.read_h5(str(p))["work"][0]
    assert sorted(region.task_ids) == workers
    assert (region.await_times_ns >= 4_000_000).all()
    tasks = scope_profiler.read_h5(str(p)).tasks[0]
    names = [x.name for x in tasks]  # asyncio numbers tasks process-wide
    assert names == [n.decode() for n in t["name"]] and len(set(names)) == len(names)
    assert all(n.startswith("Task-") for n in names)


# -- live region views ---------------------------------------------------------------------------

def test_live_region_views_are_numpy_arrays_over_the_current_period():
    sp.setup(output=None)
    import time
    t0 = time.perf_counter_ns()
    for _ in range(4):
        with sp.region("r"):
            pass
    r = ProfileManager.get_region("r")
    assert r.ptr == 4 and r.capacity >= r.ptr
    starts, ends = r.start_times, r.end_times
    assert starts.dtype == np.int64 and ends.dtype == np.int64 and len(starts) == 4
    assert (starts >= t0).all() and (ends >= starts).all()  # raw perf_counter_ns values
    assert np.array_equal(r.get_durations_numpy(), ends[:r.ptr] - starts[:r.ptr])
    sp.finalize(verbose=False)
    assert r.ptr == 0 and r.num_calls == 4  # num_calls keeps counting


# -- reset, deactivation, scripts ---------------------------------------------------------------

def test_reset_keeps_the_instrumentation():
    @sp.profile("kept")
    def kept():
        return 5

    sp.setup(output=None)
    kept()
    sp.reset()
    assert not sp.is_configured() and not sp.is_active()
    assert kept() == 5
    sp.setup(output=None)
    kept()
    assert ProfileManager.get_region("kept").num_calls == 1


def test_deactivated_profiling_records_nothing_and_finalize_returns_empty_results():
    sp.setup(deactivate_profiling=True)
    with sp.region("x"):
        pass
    assert not sp.is_active()
    assert sp.finalize(verbose=False) is None
    # return_results: an empty, usable result set (scope-profiler's), not None
    res = sp.finalize(verbose=False, return_results=True)
    assert res is not None and res.region_names == [] and res.summary() == []
    assert sp.last_results() is res


def test_profile_script_and_command(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("import spanscope as sp\n"
                      "def helper():\n    return 1\n"
                      "with sp.region('work'):\n    helper()\n")
    results = sp.profile_script(script, output=tmp_path / "script.h5")
    assert results["work"].num_calls == 1
    # as scope-profiler's profile_script: no region around a script that is
    # not traced recursively, only its explicit ones
    assert set(sp.read(tmp_path / "script.h5").regions) == {"work"}
    results = sp.profile_script(script, output=tmp_path / "rec.h5", recursive_profile=True)
    assert results["__main__.helper"].num_calls == 1
    # the script's own code only: no runpy, importlib or posixpath regions
    names = set(sp.read(tmp_path / "rec.h5").regions)
    assert not [n for n in names if n.startswith(("runpy.", "importlib.", "posixpath."))]
    # and the filter ends with the script: a recursive decorator traces everything
    sp.setup(output=None, replace=True)

    @sp.profile("outer", recursive=True)
    def outer():
        import posixpath
        return posixpath.join("a", "b")

    outer()
    assert "posixpath.join" in sp.recorded_regions()


APP = """import json
import sys
import spanscope as sp
def helper(n):
    return sum(range(n))
def main():
    with sp.region("work"):
        helper(100)
    helper(10)
    json.dumps({"a": 1})
    print("mpi_calls", sp.ProfileManager.get_config().profile_mpi_calls)
main()
if len(sys.argv) > 1:
    if sys.argv[1] == "raise":
        raise RuntimeError("the script failed")
    sys.exit(int(sys.argv[1]))
"""


def _app(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(APP)
    return script


def test_profile_command_runs_a_script_as_scope_profiler_does(tmp_path, monkeypatch, capfd):
    """profile_command(command, output=, recursive=, all=, mpi_calls=) as
    scope-profiler's: `python -m spanscope run -q -o OUT ...` in a child
    process, the CompletedProcess back with the profile loaded."""
    monkeypatch.chdir(tmp_path)
    script = _app(tmp_path)
    done = sp.profile_command([sys.executable, str(script)], output=tmp_path / "plain.h5")
    assert done.returncode == 0
    assert done.args[1:5] == ["-m", "spanscope", "run", "-q"]
    res = done.profile_results
    assert {r.name for r in res.get_regions()} == {"work"}  # explicit regions only
    assert res["work"].num_calls == 1
    # recursive: the script's functions are regions, not the standard library's
    done = sp.profile_command([str(script)], output=tmp_path / "rec.h5", recursive=True)
    assert done.returncode == 0
    res = done.profile_results
    names = {r.name for r in res.get_regions()}
    assert {"__main__.main", "__main__.helper", "work"} <= names
    assert res["__main__.helper"].num_calls == 2
    assert not [n for n in names if n.startswith(("json.", "runpy.", "importlib."))]
    # all: the standard library's too (scope-profiler's --all)
    done = sp.profile_command(["python3", str(script)], output=tmp_path / "all.h5", all=True)
    names = {r.name for r in done.profile_results.get_regions()}
    assert {"__main__.helper", "json.dumps"} <= names
    # mpi_calls: the run is set up with profile_mpi_calls
    capfd.readouterr()
    done = sp.profile_command([str(script)], output=tmp_path / "mpi.h5", mpi_calls=True)
    assert done.returncode == 0 and "mpi_calls True" in capfd.readouterr().out
    # the default output, as scope-profiler's
    done = sp.profile_command([str(script)])
    assert (tmp_path / "profiling_data.h5").exists()
    assert done.profile_results["work"].num_calls == 1
    # .json: scope-profiler's JSON profile, read back
    done = sp.profile_command([str(script)], output=tmp_path / "run.json")
    assert json.loads((tmp_path / "run.json").read_text())
    assert done.profile_results["work"].num_calls == 1


def test_profile_command_of_a_failing_script(tmp_path):
    """A script that exits non-zero or raises: its status comes back and
    profile_results is None (scope-profiler loads only after rc 0)."""
    script = _app(tmp_path)
    done = sp.profile_command([str(script), "3"], output=tmp_path / "exit3.h5")
    assert done.returncode == 3 and done.profile_results is None
    assert (tmp_path / "exit3.h5").exists()  # finalized all the same
    done = sp.profile_command([str(script), "raise"], output=tmp_path / "raised.h5")
    assert done.returncode == 1 and done.profile_results is None
    done = sp.profile_command([str(tmp_path / "missing.py")], output=tmp_path / "m.h5")
    assert done.returncode == 1 and done.profile_results is None
    with pytest.raises(ValueError, match="requires a Python script"):
        sp.profile_command([sys.executable])


def test_profile_command_of_a_program_that_is_not_python(tmp_path):
    """A native program, a shell script or a command on PATH: not
    profile_command's (scope-profiler's runs scripts), a clear
    FeatureNotAvailableError pointing at `spanscope run -- CMD`, nothing run."""
    sh = tmp_path / "job.sh"
    sh.write_text("#!/bin/sh\ntouch ran\n")
    sh.chmod(0o755)
    for command in (["/bin/true"], [str(sh)],
                    ["ls", "-l"]):
        with pytest.raises(FeatureNotAvailableError, match=r"spanscope run \[options\] --"):
            sp.profile_command(command, output=tmp_path / "x.h5")
    assert not (tmp_path / "ran").exists() and not (tmp_path / "x.h5").exists()


def test_python_m_spanscope_run_writes_the_file(tmp_path):
    """`python -m spanscope run -o x.h5 script.py args`: the script runs as
    __main__ with its arguments, the file is written (and read by the real
    scope-profiler's read_h5 where installed), the summary printed unless
    -q; bad usage and programs that are not Python exit 2 with one line."""
    import subprocess
    from pathlib import Path
    script = _app(tmp_path)
    out = tmp_path / "x.h5"
    p = subprocess.run([sys.executable, "-m", "spanscope", "run", "--recursive", "-o", str(out),
                        str(script), "0"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "__main__.helper" in p.stdout  # the summary table
    with h5py.File(out) as f:
        names = set(f["region_table/names"].asstr()[()])
    assert {"app.py", "work", "__main__.main", "__main__.helper"} <= names
    try:
        import scope_profiler
    except ImportError:
        scope_profiler = None
    if scope_profiler is not None:
        assert scope_profiler.read_h5(str(out))["__main__.helper"].num_calls == 2
    q = subprocess.run([sys.executable, "-m", "spanscope", "run", "-q", "-o",
                        str(tmp_path / "q.h5"), str(script)],
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0 and "__main__" not in q.stdout and "region" not in q.stdout
    console = Path(sys.executable).parent / "spanscope"  # the pip install's command
    if console.exists():
        c = subprocess.run([str(console), "run", "-q", "-o", str(tmp_path / "c.h5"), str(script)],
                           capture_output=True, text=True, timeout=120)
        assert c.returncode == 0 and (tmp_path / "c.h5").exists(), c.stderr
    for argv, code, message in ((["/bin/true"], 2, "spanscope run [options] --"),
                                (["--include"], 2, "--include"),  # no pattern
                                ([], 2, "script")):
        r = subprocess.run([sys.executable, "-m", "spanscope", "run", *argv],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == code and message in r.stderr, (argv, r.stderr)


def test_finalize_native_traces_says_it_is_not_available():
    sp.setup(output=None)
    with pytest.raises(FeatureNotAvailableError, match="native_traces"):
        sp.finalize(native_traces=".")
