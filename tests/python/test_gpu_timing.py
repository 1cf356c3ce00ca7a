"""scope-profiler's CUDA-event timing on spanscope (issue 38 part 4;
docs/device.md "gpu_timing"): use_gpu_timing, gpu_timing_backend,
gpu_sync_on_exit, the region kinds and the GPU summary.

Without a GPU (this machine, CI): setup(use_gpu_timing=True) raises
RuntimeError with the C core's one line saying why, as scope-profiler's
backends raise RuntimeError where CUDA is not available.  With the
stand-in libcudart of tests/c/fake_cudart.c (SPANSCOPE_CUDART_LIB, in a
child process: the library is loaded once per process), whose fake device
the child drives through ctypes (fake_cudart_work queues device work), the
whole path runs: an event pair per call, the finalize writing each call's
device time into /events/gpu_durations and gpu_count / gpu_total, the
results and the printed summary showing it."""
import json
import os
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import spanscope as sp
from conftest import BUILD
from spanscope import FeatureNotAvailableError, ProfileManager, _ext
from spanscope.options import ProfilingConfig
from spanscope.profile_manager import (CUDATimingNVTXProfileRegion, CUDATimingProfileRegion,
                                       NVTXProfileRegion, TimeOnlyProfileRegion)

FAKE = BUILD / "tests" / "c" / "libsps_fake_cudart.so"


@pytest.fixture(autouse=True)
def _clean():
    yield
    ProfileManager._reset()


def run_child(body, tmp_path, sync=None):
    """Runs body in a child Python whose libcudart is the stand-in; the
    child prints one JSON line, returned as a dict."""
    if not FAKE.exists():
        pytest.fail(f"the stand-in libcudart is not built: {FAKE} (build the C tests)")
    env = dict(os.environ, SPANSCOPE_CUDART_LIB=str(FAKE))
    env.pop("SPANSCOPE_GPU_SYNC_ON_EXIT", None)
    prelude = textwrap.dedent("""
        import ctypes, json, os, sys
        import spanscope as sp
        from spanscope import ProfileManager
        FAKE = ctypes.CDLL(os.environ["SPANSCOPE_CUDART_LIB"])
        FAKE.fake_cudart_work.argtypes = [ctypes.c_uint64]
        FAKE.fake_cudart_count.restype = ctypes.c_long
        def work(ns):
            FAKE.fake_cudart_work(ns)
    """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = [line for line in proc.stdout.splitlines() if line.startswith("{")][-1]
    return json.loads(last), proc.stdout


# -- no GPU here -----------------------------------------------------------------------

def test_without_a_gpu_setup_raises_runtime_error_saying_why():
    why = _ext.device_available(_ext.DEVICE_EVENTS)
    if why is None:
        pytest.skip("a CUDA device is present: use_gpu_timing works here")
    assert why.startswith("gpu_timing: ") and "\n" not in why
    assert "no CUDA device" in why or "libcudart not found" in why
    for backend in ("auto", "cuda", "torch", "cupy"):
        with pytest.raises(RuntimeError, match="CUDA-event timing requested") as info:
            sp.setup(output=None, use_gpu_timing=True, gpu_timing_backend=backend)
        assert why in str(info.value)
        assert f"gpu_timing_backend={backend!r}" in str(info.value)
        assert not sp.is_configured()  # nothing started
    # deactivated profiling never times anything: no device needed (as scope-profiler)
    sp.setup(output=None, use_gpu_timing=True, deactivate_profiling=True)
    sp.finalize(verbose=False)
    # and a run without it is not affected
    sp.setup(output=None)
    with sp.region("fine"):
        pass
    sp.finalize(verbose=False)


# -- the options -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["auto", "cuda", "torch", "pytorch", "cupy", "TORCH", "CuPy"])
def test_every_backend_name_scope_profiler_accepts_is_accepted(name):
    config = ProfilingConfig(gpu_timing_backend=name)
    assert config.gpu_timing_backend == name  # as given, as scope-profiler keeps it
    assert config.use_gpu_timing is False
    assert ProfilingConfig(gpu_timing_backend=None).gpu_timing_backend == "auto"


def test_an_unknown_backend_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match=r"Unknown gpu_timing_backend 'opencl'; expected 'auto', "
                                         r"'cuda', 'torch', 'pytorch', 'cupy'"):
        sp.setup(output=None, gpu_timing_backend="opencl")
    with pytest.raises(ValueError, match="Unknown gpu_timing_backend"):
        ProfilingConfig(use_gpu_timing=True, gpu_timing_backend="metal")


class _Backend:
    name = "custom"

    def record_event(self):
        return 0

    def elapsed_time_ns(self, start, end):
        return end - start


def test_backend_objects_are_checked_as_scope_profiler_checks_them():
    class Half:
        def record_event(self):
            return 0

    with pytest.raises(TypeError, match="must provide record_event"):
        ProfilingConfig(gpu_timing_backend=Half())
    # a complete one: kept while GPU timing is off, refused clearly when on
    assert isinstance(ProfilingConfig(gpu_timing_backend=_Backend()).gpu_timing_backend,
                      _Backend)
    with pytest.raises(FeatureNotAvailableError, match="records CUDA events from its C core"):
        sp.setup(output=None, use_gpu_timing=True, gpu_timing_backend=_Backend())
    assert not sp.is_configured()


def test_gpu_sync_on_exit_needs_use_gpu_timing():
    with pytest.raises(ValueError, match="gpu_sync_on_exit requires use_gpu_timing=True"):
        sp.setup(output=None, gpu_sync_on_exit=True)
    with pytest.raises(ValueError, match="gpu_sync_on_exit requires use_gpu_timing=True"):
        ProfilingConfig(gpu_sync_on_exit=True)


def test_the_gpu_group_and_the_toml_table(tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text("[profiling.gpu]\ntiming = false\nbackend = 'cupy'\n")
    sp.setup(config_path=toml, output=None)
    assert ProfileManager.get_config().gpu_timing_backend == "cupy"
    sp.finalize(verbose=False)
    kw = sp.GPUOptions(timing=False, backend="torch", sync_on_exit=None).to_kwargs()
    assert kw == {"use_gpu_timing": False, "gpu_timing_backend": "torch"}


# -- with the stand-in libcudart --------------------------------------------------------

def test_each_call_gets_its_device_time_in_the_file_and_the_summary(tmp_path):
    out, printed = run_child("""
        from spanscope.profile_manager import (CUDATimingProfileRegion,
                                               TimeOnlyProfileRegion)
        sp.setup(file_path="gpu.h5", use_gpu_timing=True, gpu_timing_backend="torch")
        outer = sp.region("outer")
        assert isinstance(outer, CUDATimingProfileRegion)
        assert isinstance(outer, TimeOnlyProfileRegion)
        for i in range(3):
            with outer:
                work(1_000_000)          # 1 ms of device work
                with sp.region("inner"):
                    work(250_000 * (i + 1))
        with sp.region("cpu only"):      # no device work: 0 ns
            pass
        syncs_before = FAKE.fake_cudart_count(5)
        res = sp.finalize(verbose=True, return_results=True)
        print(json.dumps({
            "syncs_before": syncs_before,
            "live": FAKE.fake_cudart_count(2),
            "outer_total": res["outer"].gpu_total_duration,
            "inner_avg": res["inner"].gpu_average_duration,
            "has": [res[n].has_gpu_timing for n in ("outer", "inner", "cpu only")],
        }))
    """, tmp_path)
    assert out["syncs_before"] == 0  # nothing waited before the finalize
    with h5py.File(tmp_path / "gpu.h5") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        gpu = f["events/gpu_durations"][()]
        assert gpu.dtype == np.int64
        stats = f["summary_statistics"][()] if "summary_statistics" in f else None
    expected_outer = [1_000_000 + 250_000 * (i + 1) for i in range(3)]
    expected_inner = [250_000 * (i + 1) for i in range(3)]
    assert sorted(gpu.tolist()) == sorted(expected_outer + expected_inner + [0])
    assert out["outer_total"] == pytest.approx(sum(expected_outer) / 1e9)
    assert out["inner_avg"] == pytest.approx(sum(expected_inner) / 3 / 1e9)
    assert out["has"] == [True, True, True]
    assert set(names) >= {"outer", "inner", "cpu only"}
    del stats
    # the summary finalize printed has scope-profiler's GPU columns
    assert "gpu total [s]" in printed and "gpu avg [s]" in printed


def test_gpu_sync_on_exit_waits_at_every_end(tmp_path):
    out, _ = run_child("""
        sp.setup(output=None, use_gpu_timing=True, gpu_sync_on_exit=True)
        for i in range(5):
            with sp.region("synced"):
                work(10_000)
        syncs = FAKE.fake_cudart_count(5)
        assert os.environ.get("SPANSCOPE_GPU_SYNC_ON_EXIT") is None  # put back
        sp.finalize(verbose=False)
        print(json.dumps({"syncs": syncs}))
    """, tmp_path)
    assert out["syncs"] == 5


def test_gpu_timing_with_nvtx_and_a_new_setup(tmp_path):
    out, _ = run_child("""
        from spanscope import _ext
        from spanscope.profile_manager import (CUDATimingNVTXProfileRegion,
                                               CUDATimingProfileRegion, NVTXProfileRegion)
        kinds = []
        nvtx = "nvtx" in _ext.emit_available()
        if nvtx:
            sp.setup(output=None, use_gpu_timing=True, use_nvtx=True)
            r = sp.region("both")
            kinds.append([isinstance(r, CUDATimingNVTXProfileRegion),
                          isinstance(r, CUDATimingProfileRegion), isinstance(r, NVTXProfileRegion)])
            with r:
                work(5)
            sp.finalize(verbose=False)
        sp.setup(output=None, replace=True)  # a run without: the collector is stopped
        r = sp.region("plain")
        kinds.append([isinstance(r, CUDATimingProfileRegion)])
        records = FAKE.fake_cudart_count(3)
        with r:
            work(5)
        print(json.dumps({"kinds": kinds, "nvtx": nvtx,
                          "more": FAKE.fake_cudart_count(3) - records}))
    """, tmp_path)
    if out["nvtx"]:
        assert out["kinds"][0] == [True, True, False]
    assert out["kinds"][-1] == [False]
    assert out["more"] == 0  # no event recorded after the GPU run ended


def test_the_region_kinds_in_this_process():
    sp.setup(output=None, use_gpu_timing=False)
    r = sp.region("k")
    assert isinstance(r, TimeOnlyProfileRegion)
    assert not isinstance(r, (CUDATimingProfileRegion, CUDATimingNVTXProfileRegion,
                              NVTXProfileRegion))
    assert issubclass(CUDATimingNVTXProfileRegion, CUDATimingProfileRegion)
    assert issubclass(CUDATimingProfileRegion, TimeOnlyProfileRegion)
    with pytest.raises(TypeError, match="kind of a live region"):
        CUDATimingProfileRegion("x")
    sp.finalize(verbose=False)
