"""ProfileManager.run_script and set_config, and `spanscope run --include /
--exclude / --entrypoint`, tried as scope-profiler 0.7.5's users call them
(its tests/test_run_script*.py and its `run` command): the regions and call
counts of a script compared with what the real scope-profiler's run_script
records for the same script, where it is installed; the tracer's glob
filters compared with Python's fnmatch on patterns where fnmatch(3) would
answer otherwise."""
import fnmatch
import json
import subprocess
import sys
import types

import h5py
import pytest

import spanscope as sp
from spanscope import ProfileManager, ProfilingOptions, _ext

APP = '''\
import sys

class Solver:
    def step(self, i):
        return helper(i) + tiny(i)

def helper(x):
    return x * 2

def tiny(x):
    return x + 1

def main(n):
    s = Solver()
    total = 0
    for i in range(n):
        total += s.step(i)
    with open(sys.argv[2], "w") as f:
        f.write(str(total))
    return total

if __name__ == "__main__":
    main(int(sys.argv[1]))
'''

# The same run, under the profiler named by argv[1]; prints {region: calls}.
RUNNER = '''\
import json, sys
which, script, out, kw = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if which == "spanscope":
    from spanscope import ProfileManager as PM
else:
    from scope_profiler import ProfileManager as PM
PM.setup(file_path=out)
PM.run_script(script, ["4", out + ".total"], **kw)
PM.finalize(verbose=False)
import h5py
with h5py.File(out) as f:
    names = f["region_table/names"].asstr()[()]
    ix = f["rank_region_index"]
    calls = {str(names[r]): int(c) for r, c in zip(ix["region_ids"][()],
                                                   ix["event_counts"][()]) if c}
print(json.dumps(calls))
'''

CASES = [
    {},
    {"region_name": "whole"},
    {"include_patterns": ["*.helper", "*Solver*"]},
    {"exclude_patterns": ["*.tiny", "*.<module>"]},
    {"include_patterns": ["__main__.[!h]*"], "exclude_patterns": ["*.Solver"]},
    {"entrypoint": "main"},
    {"entrypoint": "main", "exclude_patterns": ["*.main"]},  # filtered before renamed
    {"only_user_code": False, "include_patterns": ["posixpath.*"]},
    {"recursive": False},
]

EXPECTED = {  # what scope-profiler 0.7.5 records (checked against it below)
    0: {"app.py": 1, "__main__.<module>": 1, "__main__.Solver": 1, "__main__.main": 1,
        "__main__.Solver.step": 4, "__main__.helper": 4, "__main__.tiny": 4},
    2: {"app.py": 1, "__main__.Solver": 1, "__main__.Solver.step": 4, "__main__.helper": 4},
    5: {"app.py": 1, "__main__.<module>": 1, "__main__.Solver": 1, "main": 1,
        "__main__.Solver.step": 4, "__main__.helper": 4, "__main__.tiny": 4},
    8: {},
}
if sys.version_info < (3, 11):
    # 3.10 code objects have no co_qualname: the tracer names a method by its
    # co_name, as scope-profiler's does there ("__main__.step"), and the
    # patterns on "Solver" then match its class body only
    EXPECTED = {
        0: {"app.py": 1, "__main__.<module>": 1, "__main__.Solver": 1, "__main__.main": 1,
            "__main__.step": 4, "__main__.helper": 4, "__main__.tiny": 4},
        2: {"app.py": 1, "__main__.Solver": 1, "__main__.helper": 4},
        5: {"app.py": 1, "__main__.<module>": 1, "__main__.Solver": 1, "main": 1,
            "__main__.step": 4, "__main__.helper": 4, "__main__.tiny": 4},
        8: {},
    }


def _record(tmp_path, which, kw, k):
    script = tmp_path / "app.py"
    script.write_text(APP)
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    out = tmp_path / f"{which}{k}.h5"
    p = subprocess.run([sys.executable, str(runner), which, str(script), str(out),
                        json.dumps(kw)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / f"{which}{k}.h5.total").read_text() == "22"  # the script ran
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("k", range(len(CASES)))
def test_run_script_records_what_scope_profiler_records(tmp_path, k):
    kw = CASES[k]
    ours = _record(tmp_path, "spanscope", kw, k)
    if k in EXPECTED:
        assert ours == EXPECTED[k]
    if k == 1:
        assert ours["whole"] == 1 and "app.py" not in ours
    if k == 6:
        assert "main" not in ours and "__main__.main" not in ours
    if k == 7:
        assert ours["posixpath.abspath"] == 1 and not [n for n in ours if n.startswith(
            "__main__.")]
    pytest.importorskip("scope_profiler")
    assert ours == _record(tmp_path, "scope_profiler", kw, k)


def test_run_script_in_process_after_setup(tmp_path):
    """setup(), run_script(), finalize(return_results=True): the results hold
    the script's regions; sys.argv is the script's while it runs and ours
    after; the filters end with the script (a recursive decorator afterwards
    traces every function again)."""
    script = tmp_path / "app.py"
    script.write_text(APP)
    argv = list(sys.argv)
    sp.setup(output=None)
    ProfileManager.run_script(str(script), ["3", str(tmp_path / "t")],
                              include_patterns="*.helper", entrypoint="main")
    res = sp.finalize(verbose=False, return_results=True)
    # one str is one pattern; the entrypoint is filtered by its own name first
    assert {r.name: r.num_calls for r in res.get_regions()} == {"app.py": 1,
                                                               "__main__.helper": 3}
    ProfileManager.run_script(str(script), ["3", str(tmp_path / "t")],
                              include_patterns=("*.helper", "*.main"), entrypoint="main")
    res = sp.finalize(verbose=False, return_results=True)
    assert sys.argv == argv
    assert {r.name: r.num_calls for r in res.get_regions()} == {
        "app.py": 1, "main": 1, "__main__.helper": 3}
    assert (tmp_path / "t").read_text() == str(sum(2 * i + i + 1 for i in range(3)))

    sp.setup(output=None, replace=True)

    def leaf():
        return 1

    @sp.profile("outer", recursive=True)
    def outer():
        return leaf()

    outer()
    res = sp.finalize(verbose=False, return_results=True)
    assert any(r.name.endswith(".leaf") for r in res.get_regions())


def test_run_script_bad_arguments(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    sp.setup(output=None)
    with pytest.raises(TypeError, match="include_patterns"):
        ProfileManager.run_script(str(script), include_patterns=[1])
    with pytest.raises(TypeError, match="exclude_patterns"):
        ProfileManager.run_script(str(script), exclude_patterns=3)
    with pytest.raises(TypeError, match="entrypoint"):
        ProfileManager.run_script(str(script), entrypoint=5)
    with pytest.raises(TypeError, match="tuple of str"):
        _ext.set_trace_filters(["x"], (), None)
    with pytest.raises(FileNotFoundError):
        ProfileManager.run_script(str(tmp_path / "missing.py"))


def test_run_script_exception_still_clears_the_filters(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise KeyError('x')\nf()\n")
    sp.setup(output=None)
    with pytest.raises(KeyError):
        ProfileManager.run_script(str(script), exclude_patterns=["*"])
    res = sp.finalize(verbose=False, return_results=True)
    assert {r.name for r in res.get_regions()} == {"boom.py"}
    sp.setup(output=None, replace=True)

    def leaf():
        return 1

    deco = sp.profile("outer", recursive=True)(lambda: leaf())
    deco()
    res = sp.finalize(verbose=False, return_results=True)
    assert any(r.name.endswith(".leaf") for r in res.get_regions())


# -- the glob rules: Python's fnmatch, not fnmatch(3) ------------------------------

QUALNAMES = ["a", "b", "c", "ab", "bx", "xb", "^x", "a\\b", "a\\*", "[x", "]q", "-z",
             ":", "a.b", "\u00e9b", "\u00e9", "A", "z", "a-c"]
PATTERNS = [
    "m.[^a]*",     # fnmatch(3): negation; Python: the set of '^' and 'a'
    "m.[!a]*",
    "m.a\\*",      # fnmatch(3): an escaped '*'; Python: a backslash, then anything
    "m.a\\b",
    "m.[z-a]",     # a reversed range: Python drops it (matches nothing)
    "m.[!z-a]",    # ... and its negation matches any one character
    "m.[a-]*",
    "m.[]a]*",
    "m.[!]a]*",
    "m.[*",        # no closing bracket: a literal '['
    "m.[[:alpha:]]*",
    "m.?b",        # '?' is one character, also a non-ASCII one
    "m.[a--c]",
    "m.*.*",
    "m.[A]",       # case-sensitive on POSIX
    "m.*",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_trace_filters_match_as_pythons_fnmatch(pattern):
    """Functions with these qualnames in a module named "m", called under a
    recursive region with the pattern as include, then as exclude: the
    recorded names are those fnmatch.fnmatch accepts (scope-profiler's
    test), whatever fnmatch(3) would say."""
    g = {"__name__": "m"}
    funcs = []
    for q in QUALNAMES:
        code = compile("def f():\n    return 1\n", "<filters>", "exec")
        fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        # the tracer reads co_qualname, co_name on 3.10 (which has no co_qualname)
        named = (fcode.replace(co_qualname=q) if sys.version_info >= (3, 11)
                 else fcode.replace(co_name=q))
        funcs.append(types.FunctionType(named, g))

    def call_all():
        for f in funcs:
            f()

    for include in (True, False):
        sp.setup(output=None, replace=True)
        root = sp.profile("root", recursive=True)(call_all)
        pats = (pattern,)
        _ext.set_trace_filters(pats if include else (), () if include else pats, None)
        try:
            root()
        finally:
            _ext.set_trace_filters((), (), None)
        res = sp.finalize(verbose=False, return_results=True)
        got = {r.name for r in res.get_regions()} - {"root"}
        want = {"m." + q for q in QUALNAMES if fnmatch.fnmatch("m." + q, pattern) == include}
        assert got == want, pattern


def test_trace_filters_change_applies_to_code_traced_before():
    """The decision is cached per code object; a new filter (a new
    generation) decides again."""
    def leaf():
        return 1

    def body():
        leaf()

    name = f"{__name__}.{leaf.__qualname__ if sys.version_info >= (3, 11) else 'leaf'}"
    for exclude, recorded in (((), True), (("*.leaf",), False), ((), True)):
        sp.setup(output=None, replace=True)
        root = sp.profile("root", recursive=True)(body)
        _ext.set_trace_filters((), exclude, None)
        try:
            root()
            root()
        finally:
            _ext.set_trace_filters((), (), None)
        res = sp.finalize(verbose=False, return_results=True)
        names = {r.name: r.num_calls for r in res.get_regions()}
        assert (names.get(name) == 2) is recorded, (exclude, names)


# -- the command line ------------------------------------------------------------

def _run_cli(tmp_path, *argv):
    script = tmp_path / "app.py"
    script.write_text(APP)
    return subprocess.run([sys.executable, "-m", "spanscope", "run", "-q", *argv,
                           str(script), "4", str(tmp_path / "total")],
                          capture_output=True, text=True, timeout=120)


def _calls(path):
    with h5py.File(path) as f:
        names = f["region_table/names"].asstr()[()]
        ix = f["rank_region_index"]
        return {str(names[r]): int(c) for r, c in zip(ix["region_ids"][()],
                                                      ix["event_counts"][()]) if c}


def test_cli_run_include_exclude_entrypoint(tmp_path):
    out = tmp_path / "inc.h5"
    p = _run_cli(tmp_path, "--recursive", "-o", str(out), "--include", "*.helper",
                 "--include", "*.Solver.*")
    assert p.returncode == 0, p.stderr
    # 3.10: the method is "__main__.step" (co_name), which "*.Solver.*" misses
    step = {"__main__.Solver.step": 4} if sys.version_info >= (3, 11) else {}
    assert _calls(out) == {"app.py": 1, **step, "__main__.helper": 4}
    out = tmp_path / "exc.h5"
    p = _run_cli(tmp_path, "--recursive", "-o", str(out), "--exclude", "*.tiny",
                 "--exclude=*Solver*")
    assert p.returncode == 0, p.stderr
    step = {} if sys.version_info >= (3, 11) else {"__main__.step": 4}
    assert _calls(out) == {"app.py": 1, "__main__.<module>": 1, "__main__.main": 1,
                           "__main__.helper": 4, **step}
    # --entrypoint implies --recursive, as in scope-profiler
    out = tmp_path / "entry.h5"
    p = _run_cli(tmp_path, "-o", str(out), "--entrypoint", "main", "--include", "*.main")
    assert p.returncode == 0, p.stderr
    assert _calls(out) == {"app.py": 1, "main": 1}
    assert (tmp_path / "total").read_text() == "22"
    p = subprocess.run([sys.executable, "-m", "spanscope", "run", "--help"],
                       capture_output=True, text=True, timeout=120)
    helps = " ".join(p.stdout.split()).split("--include GLOB")[1].split("--line-profile")[0]
    assert "--entrypoint NAME" in helps and "not available" not in helps


# -- set_config --------------------------------------------------------------------

def test_set_config_starts_a_fresh_run(tmp_path):
    """set_config(ProfilingOptions | mapping): the configuration of a new run
    that records at once, fresh regions (what the old run held is dropped),
    decorators bound again, no RuntimeError for an unfinalized run."""
    @sp.profile("deco")
    def deco():
        return 1

    sp.setup(file_path=str(tmp_path / "old.h5"))
    with sp.region("old"):
        pass
    ProfileManager.set_config(ProfilingOptions(file_path=str(tmp_path / "a.h5"), label="A"))
    assert not (tmp_path / "old.h5").exists()  # dropped, not written
    assert sp.is_active() and ProfileManager.get_config().label == "A"
    assert "old" not in sp.recorded_regions()
    deco()
    with sp.region("new"):
        pass
    sp.finalize(verbose=False)
    with h5py.File(tmp_path / "a.h5") as f:
        names = set(f["region_table/names"].asstr()[()])
    assert {"deco", "new"} <= names and "old" not in names

    ProfileManager.set_config({"output": None, "aggregation_mode": True})
    assert ProfileManager.get_config().aggregation_mode is True
    deco()
    res = sp.finalize(verbose=False, return_results=True)
    assert res["deco"].num_calls == 1

    ProfileManager.set_config({"deactivate_profiling": True, "output": None})
    assert sp.is_configured() and not sp.is_active()


def test_set_config_bad_input():
    with pytest.raises(TypeError, match="ProfilingOptions or a mapping"):
        ProfileManager.set_config("profiling.toml")
    with pytest.raises(TypeError, match="auto_finalize"):
        ProfileManager.set_config({"auto_finalize": True})
    with pytest.raises(TypeError, match="recursive_profile"):
        ProfileManager.set_config({"recursive_profil": True})


def test_run_script_and_set_config_have_scope_profilers_signatures():
    import inspect
    scope_profiler = pytest.importorskip("scope_profiler")
    theirs = scope_profiler.ProfileManager
    missing = [n for n in dir(theirs) if not n.startswith("_")
               and not hasattr(ProfileManager, n)]
    assert "run_script" not in missing and "set_config" not in missing
    mine = inspect.signature(ProfileManager.run_script)
    ref = inspect.signature(theirs.run_script)
    assert [(p.name, p.default) for p in mine.parameters.values()] == \
        [(p.name, p.default) for p in ref.parameters.values()]
    assert list(inspect.signature(ProfileManager.set_config).parameters) == ["config"]
