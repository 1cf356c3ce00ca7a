"""Configuration without code, read the same by both faces (issue 35).

The C core resolves the settings with one table and its own strict TOML
reader (src/api/env.c: what ``sps_setup_from_env`` and ``spanscope config``
use); the Python face's ``setup_from_env`` reads the variables through the
same C reader (``_ext.env_read``) and the TOML file with tomllib
(options.load_profiling_config).  This table-driven test runs both on the
same files and environments and compares the resolved settings key by key:
the C side's as ``spanscope config --json`` prints them, the Python side's
as ``ProfileManager.setup_from_env()`` resolved them for a real session.
Files and variables that one face refuses, the other refuses too.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess

import pytest

from spanscope import ProfileManager
from spanscope import _cli
from spanscope.options import CONFIG_FIELDS, _perf_events

HERE = pathlib.Path(__file__).parent
BUILD = pathlib.Path(os.environ.get("SPS_BUILD", HERE.parent.parent / "build"))


def _tool() -> str:
    """The C tool of the installed package, else the build tree's."""
    path = _cli._binary() or str(BUILD / "spanscope")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no spanscope tool (looked for {path}; build first)")
    return path


def _clean_env(extra: dict) -> dict:
    """The environment without any SPANSCOPE_*/SCOPE_PROFILER_* setting,
    plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_"))}
    env.update(extra)
    return env


def c_resolve(extra_env: dict):
    """The C side: (settings by [profiling] key, settings by variable) as
    `spanscope config --json` resolves them, or the error line."""
    proc = subprocess.run([_tool(), "config", "--json"], env=_clean_env(extra_env),
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        assert proc.returncode == 1, proc.stderr
        return None, proc.stderr.strip()
    doc = json.loads(proc.stdout)
    by_key = {s["toml"]: s for s in doc["settings"] if s["toml"]}
    by_env = {s["env"]: s for s in doc["settings"] if s["env"]}
    return (by_key, by_env), None


def py_resolve(monkeypatch, extra_env: dict):
    """The Python side: ProfileManager.setup_from_env's resolved settings
    (a real session, finalized without a file), or the exception."""
    for k in list(os.environ):
        if k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")):
            monkeypatch.delenv(k)
    for k, v in extra_env.items():
        monkeypatch.setenv(k, v)
    try:
        ProfileManager.setup_from_env()
    except (ValueError, TypeError) as e:
        return None, e
    settings = dict(ProfileManager._settings)
    ProfileManager._reset()
    return settings, None


def _norm_compression(v):
    if isinstance(v, str):
        v = v.strip().lower()
        if v in ("", "none"):
            return None
    return v


def compare(c, py):
    """Asserts that every [profiling] setting the Python face has resolves
    alike on both sides (the C face's no-file default aside)."""
    by_key, _ = c
    assert set(by_key) == set(CONFIG_FIELDS), \
        "the C table's [profiling] keys are options.py's settings"
    for key in sorted(CONFIG_FIELDS):
        cs = by_key[key]
        cv, pv = cs["value"], py[key]
        if key == "file_path":
            dfo = by_key["deactivate_file_output"]
            if cs["from"] == "default" and dfo["from"] == "default":
                # the one default each face sets its own way: Python writes
                # profiling_data.h5, the C auto-setup no file
                assert cv is None and pv == "profiling_data.h5" and not py[
                    "deactivate_file_output"]
                continue
            c_eff = None if dfo["value"] else cv
            py_eff = None if py["deactivate_file_output"] else os.fspath(pv)
            assert c_eff == py_eff, (key, cs, pv)
            continue
        if key == "deactivate_file_output" and by_key["file_path"]["from"] == "default" \
                and cs["from"] == "default":
            assert cv is False and pv is False
            continue
        if key == "enable_tags":
            assert tuple(cv) == tuple(pv), (key, cs, pv)
        elif key == "perf_events":
            assert tuple(cv) == (_perf_events(pv) if pv else ()), (key, cs, pv)
        elif key == "hdf5_compression":
            assert _norm_compression(cv) == _norm_compression(pv), (key, cs, pv)
        elif key == "memory_profile_path":
            assert cv is None and pv is None  # set by setup from the capture only
        else:
            assert cv == pv and type(cv) is type(pv), (key, cs, pv)


GOOD_FILES = {
    "empty": "",
    "comments": "# nothing but comments\n\n   # here\n",
    "basic": """
[profiling]
file_path = "run.h5"
label = "nightly"
aggregation_mode = true
memory_limit = 1_048_576
chunk_size = 65536
overflow = "drop"
spill_dir = "/tmp"
""",
    "top_level": 'label = "top"\nmemory_limit = 16777216\n',
    "groups": """
[profiling]
label = 'lit\\eral'
[profiling.hdf5]
compression = "none"
[profiling.memray]
enabled = false
native_traces = true
""",
    "inline_group": '[profiling]\nhdf5 = { compression = "gzip" }\nmetadata_detail = "full"\n',
    "dotted": '[profiling]\nmemray.enabled = false\nmemray.follow_fork = true\n',
    "tags_list": '[profiling]\nenable_tags = ["io", "net"]\nrecursive_profile = true\n',
    "tags_str": '[profiling]\nenable_tags = "io, net,,x"\ncapture_region_source = true\n',
    "no_file": '[profiling]\nfile_path = "x.h5"\ndeactivate_file_output = true\n',
    "unicode": '[profiling]\nlabel = "r\\u00e9sum\\u00e9 \\U0001F600 \\"q\\""\n'
               'file_path = "dir/ü.h5"\n',
    "python_only": """
[profiling]
track_threads = true
buffer_limit = 4096
output_mode = "direct"
deactivate_profiling = false
""",
    "deactivated": "[profiling]\ndeactivate_profiling = true\nlabel = 'off'\n",
}

ENVS = {
    "none": {},
    "vars": {"SPANSCOPE_LABEL": "from-env", "SPANSCOPE_MEMORY_LIMIT": "8388608",
             "SPANSCOPE_AGGREGATION_MODE": "off", "SPANSCOPE_ENABLE_TAGS": "a,b"},
    "aliases": {"SCOPE_PROFILER_OUTPUT": "alias.h5", "SCOPE_PROFILER_RECURSIVE": "TRUE",
                "SCOPE_PROFILER_LABEL": "alias-label", "SPANSCOPE_LABEL": "wins"},
    "no_output": {"SPANSCOPE_OUTPUT": "none", "SPANSCOPE_DEACTIVATE_PROFILING": "yes"},
    "output": {"SPANSCOPE_OUTPUT": "env.h5"},
    "empty_config": {"SPANSCOPE_CONFIG": "", "SPANSCOPE_LABEL": "no file"},
}


@pytest.mark.parametrize("env_name", sorted(ENVS))
@pytest.mark.parametrize("file_name", [None, *sorted(GOOD_FILES)])
def test_same_settings(tmp_path, monkeypatch, file_name, env_name):
    env = dict(ENVS[env_name])
    if file_name is not None:
        path = tmp_path / "profiling.toml"
        path.write_text(GOOD_FILES[file_name], encoding="utf-8")
        env["SPANSCOPE_CONFIG"] = str(path)
    monkeypatch.chdir(tmp_path)
    c, c_err = c_resolve(env)
    py, py_err = py_resolve(monkeypatch, env)
    assert c_err is None, c_err
    assert py_err is None, py_err
    compare(c, py)
    # what the file set is reported as coming from the file, unless a
    # variable set it
    _, by_env = c
    for var, value in env.items():
        if var.startswith("SPANSCOPE_"):
            assert by_env[var]["from"] == "env" and by_env[var]["via"] == var
        elif var.replace("SCOPE_PROFILER_", "SPANSCOPE_") not in env:
            assert by_env[var.replace("SCOPE_PROFILER_", "SPANSCOPE_")]["from"] == "alias"


BAD = {
    # name: (file text or None, variables, what the C message holds)
    "unknown_key": ("[profiling]\nfile_pth = 'x.h5'\n", {}, ":2: unknown profiling setting "
                    "'file_pth' (did you mean 'file_path'?)"),
    "unknown_group_key": ("[profiling.memray]\nenabeld = true\n", {},
                          ":2: unknown [memray] profiling setting 'enabeld'"),
    "both_ways": ("[profiling]\nuse_memray = false\n[profiling.memray]\nenabled = false\n", {},
                  "set both directly and as memray.enabled"),
    "bool_as_string": ("[profiling]\naggregation_mode = 'yes'\n", {},
                       "'aggregation_mode' must be a boolean"),
    "negative_limit": ("[profiling]\nmemory_limit = -1\n", {}, "'memory_limit' must be a whole"),
    "float_limit": ("[profiling]\nchunk_size = 1.5\n", {}, "'chunk_size' must be a whole"),
    "label_int": ("[profiling]\nlabel = 5\n", {}, "'label' must be a string"),
    "tags_of_ints": ("[profiling]\nenable_tags = [1, 2]\n", {}, "must hold non-empty strings"),
    "unclosed_string": ('[profiling]\nlabel = "abc\n', {}, ":2: a string is not closed"),
    "unclosed_array": ("[profiling]\nenable_tags = ['a',\n", {}, "an array is not closed"),
    "twice": ("[profiling]\nlabel = 'a'\nlabel = 'b'\n", {}, ":3: 'label' is defined twice"),
    "not_toml": ("[profiling]\nlabel = yes please\n", {}, "needs quotes"),
    "bad_utf8": (b"[profiling]\nlabel = '\xff'\n", {}, ":2: byte 0xff is not UTF-8"),
    "nul_byte": (b"[profiling]\nlabel = 'a\x00'\n", {}, ":2: a NUL byte"),
    "huge_int": ("[profiling]\nmemory_limit = 99999999999999999999999\n", {}, "out of range"),
    "bad_env_bool": (None, {"SPANSCOPE_AGGREGATION_MODE": "maybe"},
                     "SPANSCOPE_AGGREGATION_MODE=maybe"),
    "bad_env_limit": (None, {"SPANSCOPE_MEMORY_LIMIT": "lots"}, "SPANSCOPE_MEMORY_LIMIT=lots"),
    "missing_file": ("MISSING", {}, "missing.toml"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_same_refusals(tmp_path, monkeypatch, name):
    text, env, want = BAD[name]
    env = dict(env)
    if text == "MISSING":
        env["SPANSCOPE_CONFIG"] = str(tmp_path / "missing.toml")
    elif text is not None:
        path = tmp_path / "bad.toml"
        (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
        env["SPANSCOPE_CONFIG"] = str(path)
    monkeypatch.chdir(tmp_path)
    c, c_err = c_resolve(env)
    assert c is None, f"C accepted {name}"
    assert want in c_err, c_err
    if "SPANSCOPE_CONFIG" in env and text not in ("MISSING",):
        assert env["SPANSCOPE_CONFIG"] in c_err  # the file is named
    py, py_err = py_resolve(monkeypatch, env)
    assert py is None and py_err is not None, f"Python accepted {name}: {py}"
    if "SPANSCOPE_CONFIG" in env:  # the file: checked by the same C reader, same words
        assert want in str(py_err), py_err


def test_huge_int_refused_by_python_too(tmp_path, monkeypatch):
    """tomllib reads integers of any size; the Python face refuses the file
    all the same: the C core's reader checks it first."""
    path = tmp_path / "big.toml"
    path.write_text("[profiling]\nmemory_limit = 99999999999999999999999\n")
    monkeypatch.setenv("SPANSCOPE_CONFIG", str(path))
    with pytest.raises((OverflowError, ValueError)):
        ProfileManager.setup_from_env()


def test_outside_the_subset_is_refused_with_the_line(tmp_path, monkeypatch):
    """TOML that the C reader does not take (multi-line strings, dates,
    hexadecimal integers, arrays of tables) is refused naming the file and
    the line, never read another way (docs/configuration.md), by both faces."""
    cases = {
        '[profiling]\nlabel = """x"""\n': ":2: multi-line strings",
        "[profiling]\nmemory_limit = 0x10\n": ":2: '0x10': hexadecimal",
        "[profiling]\nlabel = 1979-05-27\n": ":2: '1979-05-27': dates and times",
        "[[profiling]]\n": ":1: arrays of tables",
    }
    for text, want in cases.items():
        path = tmp_path / "x.toml"
        path.write_text(text)
        c, err = c_resolve({"SPANSCOPE_CONFIG": str(path)})
        assert c is None and f"{path}{want}" in err, err
        # and the Python face, whose setup_from_env has the C reader check
        # the file before tomllib reads it
        monkeypatch.setenv("SPANSCOPE_CONFIG", str(path))
        with pytest.raises(ValueError, match=re.escape(f"{path}{want}")):
            ProfileManager.setup_from_env()


def test_tool_table_lists_every_python_setting_and_variable():
    """`spanscope config --json --all` lists every [profiling] key of
    options.py and every variable the Python package reads."""
    c, err = c_resolve({})
    assert err is None
    by_key, by_env = c
    assert set(by_key) == set(CONFIG_FIELDS)
    import re
    pkg = pathlib.Path(__file__).resolve().parents[2] / "python" / "spanscope"
    names = set()
    for f in pkg.rglob("*.py"):
        names |= set(re.findall(r"environ(?:\.get)?\(?\[?\s*[\"'](SPANSCOPE_[A-Z0-9_]+)",
                                f.read_text(encoding="utf-8", errors="replace")))
    proc = subprocess.run([_tool(), "config", "--json", "--all"], env=_clean_env({}),
                          capture_output=True, text=True, check=True)
    listed = {s["env"] for s in json.loads(proc.stdout)["settings"] if s["env"]}
    assert names, "found no variable read by the package"
    assert names <= listed, sorted(names - listed)


def test_unknown_variable_is_a_warning_naming_it(tmp_path):
    proc = subprocess.run([_tool(), "config"], env=_clean_env({"SPANSCOPE_LABLE": "x"}),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "unknown variable SPANSCOPE_LABLE" in proc.stderr
    assert "did you mean SPANSCOPE_LABEL?" in proc.stderr


def test_sample_hz_starts_the_sampler_in_both_faces(monkeypatch):
    """SPANSCOPE_SAMPLE_HZ: the C auto-setup passes it to sps_setup
    (cfg.sample_hz); the Python face's setup_from_env starts the sampler at
    the same rate."""
    from spanscope import _ext
    c, err = c_resolve({"SPANSCOPE_SAMPLE_HZ": "250"})
    assert err is None and c[1]["SPANSCOPE_SAMPLE_HZ"]["value"] == 250
    for k in list(os.environ):
        if k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SCOPE_PROFILER_SAMPLE_HZ", "250")
    ProfileManager.setup_from_env(output=None)
    try:
        assert _ext.sampling_hz() == 250
    finally:
        _ext.sampling_stop()
        ProfileManager._reset()
    monkeypatch.setenv("SCOPE_PROFILER_SAMPLE_HZ", "20000")
    with pytest.raises(ValueError, match="SCOPE_PROFILER_SAMPLE_HZ=20000"):
        ProfileManager.setup_from_env()
    c, err = c_resolve({"SCOPE_PROFILER_SAMPLE_HZ": "x"})
    assert c is None and "SCOPE_PROFILER_SAMPLE_HZ=x" in err


def test_docs_list_every_setting():
    """docs/configuration.md holds the tables `spanscope config --markdown`
    prints, verbatim (regenerate them after changing src/api/env.c)."""
    docs = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    proc = subprocess.run([_tool(), "config", "--markdown"], env=_clean_env({}),
                          capture_output=True, text=True, check=True)
    assert proc.stdout.strip() in docs, \
        "docs/configuration.md is out of date: rerun spanscope config --markdown"


def test_python_face_warns_of_an_unknown_variable(monkeypatch):
    """setup_from_env names a SPANSCOPE_* variable no setting has in a
    RuntimeWarning (the C auto-setup in a line on stderr) and goes on."""
    for k in list(os.environ):
        if k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SPANSCOPE_LABLE", "x")
    monkeypatch.setenv("SPANSCOPE_SIGNALS", "none")  # known: no warning
    with pytest.warns(RuntimeWarning, match="unknown variable SPANSCOPE_LABLE") as rec:
        ProfileManager.setup_from_env(output=None)
    ProfileManager._reset()
    assert not [w for w in rec if "SPANSCOPE_SIGNALS" in str(w.message)]


@pytest.mark.parametrize("body", [
    "[profiling]\nlabel = 1979-05-27\n",                        # a TOML date: outside the subset
    "[profiling]\nlabel = \"a\"\n[profiling.gpu]\nnvtx = 1\n",  # a wrong type in a group
    "[profiling]\nfile_pth = \"x.h5\"\n",                        # an unknown key
    "[profiling]\nuse_nvtx = true\n[profiling.gpu]\nnvtx = false\n",  # set twice
])
def test_setup_config_path_refuses_what_c_refuses(tmp_path, body):
    """ProfileManager.setup(config_path=...) checks the file with the C
    core's strict reader too (_ext.config_check, sps_config_check): a file
    the C auto-setup refuses is refused in code, with scope-profiler's
    "invalid profiling TOML" where tomllib refuses it and the C reader's
    own line (FILE:LINE) where only the C reader does."""
    from spanscope.options import load_profiling_config

    cfg = tmp_path / "c.toml"
    cfg.write_text(body)
    _, c_err = c_resolve({"SPANSCOPE_CONFIG": str(cfg)})
    assert c_err, "the C reader accepted it"
    with pytest.raises(ValueError) as e:
        load_profiling_config(cfg)
    assert str(cfg) in str(e.value), str(e.value)
    if "1979" in body:  # tomllib takes the date: the C reader's line is the error
        c_line = c_err.splitlines()[-1].split(": ", 1)[-1]
        assert "invalid profiling TOML" in str(e.value) and c_line in str(e.value), \
            (c_err, str(e.value))


def test_setup_config_path_missing_file(tmp_path):
    from spanscope.options import load_profiling_config

    with pytest.raises(ValueError, match="could not read profiling config"):
        load_profiling_config(tmp_path / "none.toml")


def _run_script(tmp_path, args, extra_env):
    """`python -m spanscope run -q ARGS...` in tmp_path with a clean
    environment plus extra_env: the CompletedProcess."""
    import sys

    return subprocess.run([sys.executable, "-m", "spanscope", "run", "-q", *args],
                          cwd=tmp_path, env=_clean_env(extra_env), capture_output=True,
                          text=True, timeout=120)


def _label_and_calls(path):
    """(the file's /metadata label, {region: calls}) of a written profile."""
    from spanscope.results import read_h5
    import h5py

    with h5py.File(path) as f:
        label = f["metadata"].attrs.get("label")
    res = read_h5(str(path))
    return label, {name: res[name].num_calls for name in res.region_names}


def test_spanscope_run_of_a_script_reads_the_environment(tmp_path):
    """`spanscope run SCRIPT` is configured without code as a C program's
    auto-setup is: SPANSCOPE_CONFIG's file < the SPANSCOPE_* variables <
    the command's own options.  Before, it took its options and the file
    of --config only: SPANSCOPE_OUTPUT=x.h5 wrote profiling_data.h5."""
    (tmp_path / "app.py").write_text(
        "import spanscope\nfor _ in range(3):\n    with spanscope.region('step'):\n"
        "        pass\n")
    (tmp_path / "cfg.toml").write_text('[profiling]\nlabel = "from-file"\n'
                                       'file_path = "file.h5"\n')
    # the variables, over the file named by SPANSCOPE_CONFIG
    run = _run_script(tmp_path, ["app.py"], {"SPANSCOPE_CONFIG": "cfg.toml",
                                             "SPANSCOPE_OUTPUT": "env.h5",
                                             "SPANSCOPE_LABEL": "from-env"})
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "file.h5").exists() and not (tmp_path / "profiling_data.h5").exists()
    assert _label_and_calls(tmp_path / "env.h5") == ("from-env", {"step": 3})
    # the file's settings where no variable sets them
    run = _run_script(tmp_path, ["app.py"], {"SPANSCOPE_CONFIG": "cfg.toml"})
    assert run.returncode == 0, run.stderr
    assert _label_and_calls(tmp_path / "file.h5") == ("from-file", {"step": 3})
    # the command's options over both
    run = _run_script(tmp_path, ["-o", "cli.h5", "--label", "from-cli", "app.py"],
                      {"SPANSCOPE_CONFIG": "cfg.toml", "SPANSCOPE_OUTPUT": "env2.h5",
                       "SPANSCOPE_LABEL": "from-env"})
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "env2.h5").exists()
    assert _label_and_calls(tmp_path / "cli.h5") == ("from-cli", {"step": 3})
    # SPANSCOPE_OUTPUT=none: no file
    run = _run_script(tmp_path, ["app.py"], {"SPANSCOPE_OUTPUT": "none"})
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "profiling_data.h5").exists()


def test_spanscope_run_of_a_script_bad_and_stray_variables(tmp_path):
    """A bad variable stops the run before the script, naming it (exit
    status 2, as a bad option); a stray SPANSCOPE_* variable is one warning
    line, and the run goes on."""
    (tmp_path / "app.py").write_text("open('ran', 'w').close()\n")
    run = _run_script(tmp_path, ["app.py"], {"SPANSCOPE_MEMORY_LIMIT": "lots"})
    assert run.returncode == 2
    assert "SPANSCOPE_MEMORY_LIMIT=lots" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "ran").exists()
    run = _run_script(tmp_path, ["app.py"], {"SPANSCOPE_OUTPTU": "x.h5"})
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "ran").exists() and (tmp_path / "profiling_data.h5").exists()
    lines = [ln for ln in run.stderr.splitlines() if "SPANSCOPE_OUTPTU" in ln]
    assert lines == [lines[0]] and lines[0].startswith("spanscope: unknown variable "), \
        run.stderr
