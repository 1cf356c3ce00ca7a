"""NVTX emission from Python (issue 38 part 1, docs/nvtx-itt.md): the torch
face's emit_nvtx() and the scope-profiler face's use_nvtx=True, each in a
subprocess whose NVTX_INJECTION64_PATH names the test NVTX tool built from
tests/c/nvtx_inject.c (it records every push, pop, domain and registered
string; the child reads it back through ctypes) -- and without any tool,
where emission is a no-op and the profile is as without it.  Plus the
extension's generic switch: names, errors, on/off twice."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import BUILD
from spanscope import _ext

TOOL = BUILD / "tests" / "c" / "libsps_nvtx_inject.so"

needs_nvtx = pytest.mark.skipif("nvtx" not in _ext.emit_available(),
                                reason="this spanscope was built without nvtx3 headers")

# The child's helpers: the tool's record as [(kind, tid, domain, name)].
PRELUDE = textwrap.dedent("""
    import ctypes, json, os, sys, threading
    TOOL = ctypes.CDLL(os.environ["NVTX_INJECTION64_PATH"])
    TOOL.nvtx_inject_event.argtypes = [ctypes.c_int, ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_long), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    TOOL.nvtx_inject_domains.argtypes = [ctypes.c_char_p]
    TOOL.nvtx_inject_registrations.argtypes = [ctypes.c_char_p, ctypes.c_char_p]

    def events():
        out = []
        for i in range(TOOL.nvtx_inject_count()):
            k = ctypes.create_string_buffer(1)
            tid = ctypes.c_long()
            dom = ctypes.create_string_buffer(96)
            name = ctypes.create_string_buffer(96)
            assert TOOL.nvtx_inject_event(i, k, ctypes.byref(tid), dom, name, 96) == 0
            out.append([k.raw.decode(), tid.value, dom.value.decode(), name.value.decode()])
        return out

    def registrations(name):
        return TOOL.nvtx_inject_registrations(b"spanscope", name.encode())

    def report(**kw):
        kw["events"] = events()
        kw["domains"] = TOOL.nvtx_inject_domains(b"spanscope")
        print(json.dumps(kw))
""")


def run_child(body, tool=True):
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    if tool:
        if not TOOL.exists():
            pytest.fail(f"the test NVTX tool is not built: {TOOL} (build the C tests)")
        env["NVTX_INJECTION64_PATH"] = str(TOOL)
    code = (PRELUDE if tool else "import json, sys\n") + textwrap.dedent(body)
    with tempfile.TemporaryDirectory() as cwd:  # a default output lands there, not in the tree
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def pushes(events):
    return [e[3] for e in events if e[0] == "P"]


# -- the extension's switch ---------------------------------------------------------------

def test_emit_set_names_and_errors():
    assert set(_ext.emit_available()) <= {"nvtx", "itt"}
    with pytest.raises(ValueError, match="unknown emitter 'cuda'"):
        _ext.emit_set("cuda", True)
    with pytest.raises(TypeError):
        _ext.emit_set(1, True)
    assert _ext.emit_active() == []
    if "itt" not in _ext.emit_available():
        with pytest.raises(RuntimeError, match="itt emission is not built"):
            _ext.emit_set("itt", True)


@needs_nvtx
def test_emit_set_on_twice_off_twice():
    assert _ext.emit_set("nvtx", True) is False
    assert _ext.emit_set("nvtx", True) is True
    assert _ext.emit_active() == ["nvtx"]
    assert _ext.emit_set("nvtx", False) is True
    assert _ext.emit_set("nvtx", False) is False
    assert _ext.emit_active() == []


# -- the torch face ------------------------------------------------------------------------

@needs_nvtx
def test_emit_nvtx_ranges_nesting_and_threads():
    out = run_child("""
        from spanscope import _ext
        from spanscope.profiler import emit_nvtx, profile, record_function
        with record_function("before"):      # off: no range
            pass
        with emit_nvtx(record_shapes=True):   # no profile: ranges all the same
            with record_function("outer"):
                with record_function("inner"):
                    pass
            with emit_nvtx():                 # nesting: the inner exit keeps it on
                pass
            assert _ext.emit_active() == ["nvtx"]
            with profile() as p:
                def work(i):
                    for _ in range(50):
                        with record_function("thread %d" % i):
                            with record_function("shared"):
                                pass
                ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
                [t.start() for t in ts]
                [t.join() for t in ts]
        assert _ext.emit_active() == []
        with record_function("after"):       # off again
            pass
        shared = [e for e in p.key_averages() if e.key == "shared"][0].count
        e = emit_nvtx()
        with e:
            try:
                with e:
                    pass
                reentrant = True
            except RuntimeError:
                reentrant = False
        report(shared=shared, reentrant=reentrant, active=_ext.emit_active(),
               regs={n: registrations(n) for n in ("outer", "inner", "shared", "thread 0")},
               tids=sorted({e[1] for e in events()}))
    """)
    ev = out["events"]
    assert all(e[2] == "spanscope" for e in ev), ev[:5]
    names = pushes(ev)
    assert names[:2] == ["outer", "inner"]
    assert [e[0] for e in ev[:4]] == ["P", "P", "O", "O"]
    assert "before" not in names and "after" not in names
    assert out["shared"] == 150  # recorded by the profile as without emission
    for i in range(3):
        mine = [e for e in ev if e[3] == "thread %d" % i]
        assert len(mine) == 50
        tid = mine[0][1]
        seq = [(e[0], e[3]) for e in ev if e[1] == tid]
        assert seq == [("P", "thread %d" % i), ("P", "shared"), ("O", ""), ("O", "")] * 50
    assert out["regs"] == {"outer": 1, "inner": 1, "shared": 1, "thread 0": 1}
    assert out["domains"] == 1
    assert out["reentrant"] is False and out["active"] == []


@needs_nvtx
def test_emit_nvtx_disabled_emits_nothing():
    out = run_child("""
        from spanscope.profiler import emit_nvtx, record_function
        with emit_nvtx(enabled=False):
            with record_function("quiet"):
                pass
        report()
    """)
    assert out["events"] == []


@needs_nvtx
def test_emit_nvtx_without_a_tool_is_a_no_op_that_records():
    out = run_child("""
        from spanscope import _ext
        from spanscope.profiler import emit_nvtx, profile, record_function
        with emit_nvtx():
            assert _ext.emit_active() == ["nvtx"]
            with profile() as p:
                for _ in range(200):
                    with record_function("plain"):
                        with record_function("leaf"):
                            pass
        avg = {e.key: e.count for e in p.key_averages()}
        print(json.dumps({"plain": avg.get("plain"), "leaf": avg.get("leaf"),
                          "active": _ext.emit_active()}))
    """, tool=False)
    assert out == {"plain": 200, "leaf": 200, "active": []}


# -- the scope-profiler face -----------------------------------------------------------

@needs_nvtx
def test_use_nvtx_ranges_for_the_session(tmp_path):
    out = run_child(f"""
        import spanscope as sp
        from spanscope import _ext
        sp.setup(file_path={str(tmp_path / "o.h5")!r}, use_nvtx=True)
        on_in_run = _ext.emit_active()
        with sp.region("solve"):
            with sp.region("step"):
                pass
        sp.pause()
        paused_active = _ext.emit_active()
        with sp.region("while paused"):
            pass
        sp.resume()
        with sp.region("solve"):
            pass
        results = sp.finalize(verbose=False, return_results=True)
        sp.reset()                            # the run ends: the emitter goes off
        with sp.region("after"):
            pass
        report(on_in_run=on_in_run, paused_active=paused_active,
               active=_ext.emit_active(), regs=registrations("solve"))
    """)
    assert out["on_in_run"] == ["nvtx"] and out["paused_active"] == []
    assert out["active"] == []
    names = pushes(out["events"])
    assert names == ["solve", "step", "solve"], names
    assert all(e[2] == "spanscope" for e in out["events"])
    assert out["regs"] == 1 and out["domains"] == 1
    assert (tmp_path / "o.h5").exists()


@needs_nvtx
def test_use_nvtx_keeps_an_emitter_turned_on_before(tmp_path):
    out = run_child("""
        import spanscope as sp
        from spanscope import _ext
        _ext.emit_set("nvtx", True)
        sp.setup(output=None, use_nvtx=True)
        sp.finalize(verbose=False)
        sp.reset()
        report(active=_ext.emit_active())
    """)
    assert out["active"] == ["nvtx"]


def test_use_nvtx_where_nvtx_is_not_built():
    if "nvtx" in _ext.emit_available():
        pytest.skip("this build has NVTX (the error path is for builds without nvtx3)")
    import spanscope as sp
    from spanscope.options import FeatureNotAvailableError
    with pytest.raises(FeatureNotAvailableError, match="without NVTX"):
        sp.setup(output=None, use_nvtx=True)


@needs_nvtx
def test_emit_nvtx_record_shapes_labels_the_ranges():
    """emit_nvtx(record_shapes=True): a record_function with args carries
    their shapes, torch's "NAME, sizes = [[2, 3], []]"; one without args,
    and every range once the context is left, carries the name only."""
    out = run_child("""
        import numpy as np
        from spanscope import profiler as P
        a = np.zeros((2, 3))
        with P.emit_nvtx(record_shapes=True):
            with P.record_function("mm", args={"x": a, "n": 4}):
                pass
            with P.record_function("plain"):
                pass
            with P.record_function("listed", args=[a, np.ones(5)]):
                pass
        with P.emit_nvtx():
            with P.record_function("mm", args={"x": a}):
                pass
        report()
    """)
    assert pushes(out["events"]) == ["mm, sizes = [[2, 3], []]", "plain",
                                     "listed, sizes = [[2, 3], [5]]", "mm"]
