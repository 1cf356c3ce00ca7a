"""The IPython / Jupyter magics (spanscope.integrations.ipython_magics).

Two halves:

* in process, through IPython's own test shell (``globalipapp``), the
  behaviour scope-profiler 0.7.5's tests pin down for its magics: what each
  records, prints and raises;
* a real Jupyter kernel: a notebook written here with nbformat that loads
  the extension and runs every magic, executed by nbclient on an ipykernel
  of this interpreter, and each cell's outputs checked (the HTML table, the
  inline timeline image, the DataFrame, the errors).

IPython, ipykernel, nbclient, nbformat, pandas, line_profiler and
matplotlib come with the ``notebook`` extra; scripts/install-deps.sh
installs them.
"""

import json
import marshal
import os
import sys

import pytest

IPython = pytest.importorskip("IPython", reason="the 'notebook' extra is not installed")

from IPython.core.error import UsageError  # noqa: E402
from IPython.testing import globalipapp  # noqa: E402

from spanscope import ProfileManager  # noqa: E402
from spanscope.integrations import ipython_magics  # noqa: E402
from spanscope.integrations.ipython_magics import ScopeMagics  # noqa: E402


@pytest.fixture
def shell():
    ip = globalipapp.get_ipython()
    ip.register_magics(ScopeMagics)
    magics = ip.magics_manager.registry["ScopeMagics"]
    magics._runs.clear()
    magics._order.clear()
    yield ip
    ProfileManager.reset()


def _magics(shell):
    return shell.magics_manager.registry["ScopeMagics"]


COMPUTE_CELL = (
    "from spanscope import ProfileManager\n"
    "\n"
    '@ProfileManager.profile("compute")\n'
    "def compute(n):\n"
    "    total = 0\n"
    "    for i in range(n):\n"
    "        total += i * i\n"
    "    return total\n"
    "\n"
    "compute_result = compute(100)\n"
)

RECURSIVE_CELL = (
    "def inner(n):\n"
    "    return sum(i * i for i in range(n))\n"
    "\n"
    "def outer(n):\n"
    "    return inner(n) + inner(n)\n"
    "\n"
    "recursive_result = outer(200)\n"
)

FAILING_CELL = (
    'def work():\n    return sum(range(1000))\n\nwork()\nraise ValueError("kaboom")\n'
)


# -- in process: scope-profiler's behaviour --------------------------------------

def test_scope_cell_records_and_prints(shell, capsys):
    shell.run_cell_magic("scope", "warmup", "x = sum(range(1000))")
    magics = _magics(shell)
    assert magics._order == ["warmup"]
    (region,) = magics._runs["warmup"].get_regions(include="warmup")
    assert region.num_calls == 1
    assert shell.user_ns["x"] == sum(range(1000))
    out = capsys.readouterr().out
    assert out.startswith("%%scope 'warmup'\n")
    assert "warmup" in out.split("\n", 1)[1]  # the table's row


def test_scope_cell_default_name_and_quiet(shell, capsys):
    shell.run_cell_magic("scope", "-q", "pass")
    assert _magics(shell)._order == ["cell"]
    assert capsys.readouterr().out == ""


def test_scope_timeit_runs_n_times(shell, capsys):
    shell.run_line_magic("scope_timeit", "-n 5 1 + 1")
    (region,) = _magics(shell)._runs["timeit"].get_regions(include="timeit")
    assert region.num_calls == 5
    out = capsys.readouterr().out
    assert "%scope_timeit '1 + 1' (5 runs)" in out
    with pytest.raises(UsageError):
        shell.run_line_magic("scope_timeit", "-n 5")
    with pytest.raises(UsageError):
        shell.run_line_magic("scope_timeit", "-n 0 1 + 1")


def test_scope_last_and_lookup_errors(shell, capsys):
    with pytest.raises(UsageError, match="no spanscope runs recorded yet"):
        shell.run_line_magic("scope_last", "")
    shell.run_cell_magic("scope", "first", "pass")
    shell.run_cell_magic("scope", "second", "pass")
    capsys.readouterr()
    shell.run_line_magic("scope_last", "")
    out = capsys.readouterr().out
    assert "second" in out and "first" not in out
    shell.run_line_magic("scope_last", "first")
    assert "'first' (last)" in capsys.readouterr().out
    with pytest.raises(UsageError, match="available: first, second"):
        shell.run_line_magic("scope_last", "missing")


def test_scope_compare(shell, capsys):
    shell.run_cell_magic("scope", "baseline", "x = sum(range(1000))")
    with pytest.raises(UsageError):  # one run only
        shell.run_line_magic("scope_compare", "")
    shell.run_cell_magic("scope", "candidate", "y = sum(range(2000))")
    with pytest.raises(UsageError):  # one name only
        shell.run_line_magic("scope_compare", "baseline")
    capsys.readouterr()
    shell.run_line_magic("scope_compare", "--metric calls --sort name")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "'baseline' -> 'candidate'"
    assert out[1].split() == ["region", "calls", "(a)", "calls", "(b)", "delta", "delta", "[%]"]
    rows = {line.split()[0]: line.split()[1:] for line in out[3:] if line.strip()
            and not line.strip().startswith("Only")}
    assert rows["scope_profiler.session"] == ["1", "1", "+0", "+0%"]
    assert rows["baseline"] == ["1", "-", "-1", "-100%"]
    assert rows["candidate"] == ["-", "1", "+1", "-"]
    assert "  Only in a: baseline" in out
    assert "  Only in b: candidate" in out


def test_compare_rows_sorting_and_errors():
    from spanscope import MPIRegion, ProfilingResults, Region

    def run(**totals):
        return ProfilingResults({n: MPIRegion(n, {0: Region([0], [t])})
                                 for n, t in totals.items()})
    a, b = run(x=100, y=1000, z=50), run(x=400, y=900)
    rows = ipython_magics.compare_rows(a, b)
    assert [r["name"] for r in rows] == ["x", "y", "z"]  # |delta|: 300, 100, 50 ns
    assert rows[0]["pct"] == pytest.approx(300.0)
    assert rows[2]["b"] is None and rows[2]["delta"] == pytest.approx(-50e-9)
    rows = ipython_magics.compare_rows(a, b, sort="pct")
    assert [r["name"] for r in rows] == ["x", "z", "y"]  # 300 %, 100 %, 10 %
    with pytest.raises(ValueError, match="metric must be one of"):
        ipython_magics.compare_rows(a, b, metric="median")
    with pytest.raises(ValueError, match="sort must be one of"):
        ipython_magics.compare_rows(a, b, sort="size")
    assert "(no regions to compare)" in ipython_magics.format_compare_table([], "total", "t")


def test_scope_line_prints_line_stats(shell, capsys):
    pytest.importorskip("line_profiler", reason="the 'notebook' extra is not installed")
    shell.run_cell_magic("scope_line", "demo", COMPUTE_CELL)
    assert _magics(shell)._order == ["demo"]
    assert shell.user_ns["compute_result"] == sum(i * i for i in range(100))
    (compute,) = _magics(shell)._runs["demo"].get_regions(include="compute$")
    assert compute.num_calls == 1
    out = capsys.readouterr().out
    assert "%%scope_line 'demo'" in out
    assert "Function: compute" in out
    assert "Line #" in out
    # the loop's line ran 100 times
    (loop,) = [line for line in out.splitlines() if "total += i * i" in line]
    assert loop.split()[1] == "100"
    assert "ipython_magics.py" not in out
    # the hook is gone from the namespace and the transformer from the shell
    assert ipython_magics._LINE_HOOK not in shell.user_ns
    assert not any(isinstance(t, ipython_magics._LineProfileTransformer)
                   for t in shell.ast_transformers)


def test_scope_line_with_block_in_a_function_and_quiet(shell, capsys):
    pytest.importorskip("line_profiler", reason="the 'notebook' extra is not installed")
    cell = ("import spanscope\n"
            "def step():\n"
            "    with spanscope.region('inner'):\n"
            "        return sum(range(10))\n"
            "def untouched():\n"
            "    return 1\n"
            "step(); untouched()\n")
    shell.run_cell_magic("scope_line", "-q", cell)
    out = capsys.readouterr().out
    assert "Function: step" in out
    assert "Function: untouched" not in out
    assert "%%scope_line" not in out
    shell.run_cell_magic("scope_line", "-q -Q demo", COMPUTE_CELL)
    assert capsys.readouterr().out == ""


def test_scope_recursive(shell, capsys):
    before = sys.getprofile()
    shell.run_cell_magic("scope_recursive", "explore", RECURSIVE_CELL)
    results = _magics(shell)._runs["explore"]
    names = {region.name for region in results.get_regions()}
    assert {"__main__.outer", "__main__.inner"} <= names
    (inner,) = results.get_regions(include=r"__main__\.inner$")
    assert inner.num_calls == 2
    assert "%%scope_recursive 'explore'" in capsys.readouterr().out
    assert shell.user_ns["recursive_result"] == 2 * sum(i * i for i in range(200))
    assert sys.getprofile() is before
    # nothing stays registered: no decorator left behind by the magic
    count = sum(len(v) for v in ProfileManager._decorated.values())
    shell.run_cell_magic("scope_recursive", "-q", "pass")
    assert sum(len(v) for v in ProfileManager._decorated.values()) == count


def test_scope_agg_counts_without_events(shell, capsys):
    pytest.importorskip("pandas", reason="the 'notebook' extra is not installed")
    cell = ("from spanscope import ProfileManager\n"
            "for _ in range(25):\n"
            '    with ProfileManager.profile_region("hot"):\n'
            "        pass\n")
    shell.run_cell_magic("scope_agg", "hotloop", cell)
    (hot,) = _magics(shell)._runs["hotloop"].get_regions(include="hot$")
    assert hot.num_calls == 25
    assert "%%scope_agg 'hotloop'" in capsys.readouterr().out
    frame = shell.run_line_magic("scope_df", "--events")
    assert frame.empty
    assert list(frame.columns)[:6] == ["name", "rank", "call_index", "start", "end", "duration"]
    assert "aggregation mode" in capsys.readouterr().out


@pytest.mark.parametrize("magic", ["scope", "scope_agg", "scope_recursive"])
def test_failing_cell_keeps_the_partial_run(shell, magic, capsys):
    shell.run_cell_magic(magic, "boom", FAILING_CELL)
    assert _magics(shell)._order == ["boom"]
    out = capsys.readouterr().out
    assert "kaboom" in out
    assert f"%%{magic} 'boom'" in out
    if magic == "scope_recursive":
        assert "ipython_magics.py" not in out
        assert 'raise ValueError("kaboom")' in out
        (work,) = _magics(shell)._runs["boom"].get_regions(include=r"__main__\.work$")
        assert work.num_calls == 1


def test_scope_load_df_export_reset(shell, tmp_path, capsys):
    pandas = pytest.importorskip("pandas", reason="the 'notebook' extra is not installed")
    path = tmp_path / "cluster_run.h5"
    with ProfileManager.session(file_path=str(path), verbose=False):
        with ProfileManager.region("solve"):
            sum(range(1000))
    shell.run_line_magic("scope_load", str(path))
    assert _magics(shell)._order == ["cluster_run"]
    assert "%scope_load" in capsys.readouterr().out
    shell.run_line_magic("scope_load", f"-q -n baseline {path}")
    assert capsys.readouterr().out == ""
    with pytest.raises(FileNotFoundError):
        shell.run_line_magic("scope_load", str(tmp_path / "absent.h5"))

    shell.run_cell_magic("scope", "-q run_a", "x = sum(range(1000))")
    frame = shell.run_line_magic("scope_df", "")
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["name"]) == ["scope_profiler.session", "run_a"]
    assert frame["num_calls"].tolist() == [1, 1]
    assert list(shell.run_line_magic("scope_df", "--include run_a")["name"]) == ["run_a"]
    assert "rank" in shell.run_line_magic("scope_df", "--per-rank").columns
    events = shell.run_line_magic("scope_df", "-n baseline --events")
    assert list(events["name"]) == ["scope_profiler.session", "solve"]
    with pytest.raises(UsageError):
        shell.run_line_magic("scope_df", "--events --per-rank")

    shell.run_line_magic("scope_export", f"{tmp_path / 'run.prof'}")
    written = list(tmp_path.glob("run*.prof"))
    assert written
    shell.run_line_magic("scope_export", f"--no-call-paths -n run_a {tmp_path / 'flat.prof'}")
    (flat,) = tmp_path.glob("flat*.prof")
    with open(flat, "rb") as f:
        names = {key[2] for key in marshal.load(f)}
    assert "run_a" in names and not any(" > " in n for n in names)
    shell.run_line_magic("scope_export", f"-n baseline {tmp_path / 'b.speedscope.json'}")
    doc = json.loads((tmp_path / "b.speedscope.json").read_text())
    assert "solve" in [frame["name"] for frame in doc["shared"]["frames"]]
    assert "wrote" in capsys.readouterr().out

    shell.run_line_magic("scope_reset", "baseline")
    assert _magics(shell)._order == ["cluster_run", "run_a"]
    with pytest.raises(UsageError):
        shell.run_line_magic("scope_reset", "baseline")
    shell.run_line_magic("scope_reset", "")
    assert _magics(shell)._runs == {} and _magics(shell)._order == []


@pytest.mark.parametrize("magic, line, cell", [
    ("scope", "-q", "x = sum(range(100))"),
    ("scope_agg", "-q", "x = sum(range(100))"),
    ("scope_recursive", "-q", "x = sum(range(100))"),
    ("scope_line", "-q -Q", "x = sum(range(100))"),
])
def test_recording_magics_write_nothing_to_disk(shell, tmp_path, monkeypatch, magic, line,
                                                cell):
    if magic == "scope_line":
        pytest.importorskip("line_profiler", reason="the 'notebook' extra is not installed")
    monkeypatch.chdir(tmp_path)
    shell.run_cell_magic(magic, line, cell)
    assert list(tmp_path.iterdir()) == []


def test_summary_html_escapes_and_counts():
    from spanscope import MPIRegion, ProfilingResults, Region

    res = ProfilingResults({
        "scope_profiler.session": MPIRegion("scope_profiler.session", {0: Region([0], [1000])}),
        "<b>&x": MPIRegion("<b>&x", {0: Region([0, 600], [250, 850])}),
    })
    page = ipython_magics.summary_html(res, "%%scope 'a<b'")
    assert "&lt;b&gt;&amp;x" in page and "<b>&x" not in page
    assert "a&lt;b" in page
    assert "<td>2</td><td>5e-07</td><td>50.0</td>" in page  # calls, total, % session


def test_unload_removes_the_magics():
    ip = globalipapp.get_ipython()
    ipython_magics.load_ipython_extension(ip)
    assert "scope" in ip.magics_manager.magics["cell"]
    ipython_magics.unload_ipython_extension(ip)
    assert "scope" not in ip.magics_manager.magics["cell"]
    assert "scope_last" not in ip.magics_manager.magics["line"]
    assert "ScopeMagics" not in ip.magics_manager.registry
    ipython_magics.unload_ipython_extension(ip)  # twice: nothing to do


def test_load_ext_spanscope():
    """``%load_ext spanscope`` loads the same magics, once spanscope's
    __init__ forwards load_ipython_extension to this module."""
    import spanscope
    if not hasattr(spanscope, "load_ipython_extension"):
        pytest.skip("spanscope/__init__.py has no load_ipython_extension hook yet")
    ip = globalipapp.get_ipython()
    ipython_magics.unload_ipython_extension(ip)
    ip.run_line_magic("load_ext", "spanscope")
    try:
        assert isinstance(ip.magics_manager.registry["ScopeMagics"], ScopeMagics)
        assert "scope_compare" in ip.magics_manager.magics["line"]
    finally:
        ip.run_line_magic("unload_ext", "spanscope")
    assert "scope" not in ip.magics_manager.magics["cell"]


# -- a real kernel ------------------------------------------------------------

def _kernel_env(tmp_path, monkeypatch):
    """A kernel spec of this interpreter in a private Jupyter path (works
    as root and without a user's Jupyter setup), and private runtime and
    IPython folders."""
    spec = tmp_path / "jupyter" / "kernels" / "spanscope-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "spanscope test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return "spanscope-test"


def _outputs(cell, kind=None):
    return [o for o in cell.outputs if kind is None or o["output_type"] == kind]


def _text(cell) -> str:
    parts = []
    for o in cell.outputs:
        if o["output_type"] == "stream":
            parts.append(o["text"])
        elif "data" in o:
            parts.append(o["data"].get("text/plain", ""))
        elif o["output_type"] == "error":
            parts.append("\n".join(o["traceback"]))
    return "\n".join(parts)


def _html(cell) -> str:
    return "\n".join(o["data"]["text/html"] for o in cell.outputs
                     if "data" in o and "text/html" in o["data"])


def _images(cell) -> list:
    return [o["data"]["image/png"] for o in cell.outputs
            if "data" in o and "image/png" in o["data"]]


def test_every_magic_in_a_jupyter_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the 'notebook' extra is not installed")
    nbclient = pytest.importorskip("nbclient", reason="the 'notebook' extra is not installed")
    for module in ("ipykernel", "pandas", "line_profiler", "matplotlib"):
        pytest.importorskip(module, reason="the 'notebook' extra is not installed")
    kernel = _kernel_env(tmp_path, monkeypatch)

    loaded = tmp_path / "cluster_run.h5"
    with ProfileManager.session(file_path=str(loaded), verbose=False):
        with ProfileManager.region("solve"):
            sum(range(1000))
    ProfileManager.reset()
    prof = tmp_path / "exported.prof"

    sources = {
        "load": "%load_ext spanscope.integrations.ipython_magics",
        "scope": "%%scope warmup\nx = sum(range(10000))",
        "timeline": "%%scope -q -t second\ny = sorted(range(5000), reverse=True)",
        "timeit": "%scope_timeit -n 5 sum(range(100))",
        "line": "%%scope_line demo\n" + COMPUTE_CELL,
        "recursive": "%%scope_recursive explore\n" + RECURSIVE_CELL,
        "agg": ("%%scope_agg hotloop\nimport spanscope\nfor _ in range(25):\n"
                "    with spanscope.region('hot'):\n        pass"),
        "failing": "%%scope boom\n" + FAILING_CELL,
        "scope_load": f"%scope_load {loaded}",
        "df": "%scope_df -n warmup",
        "events": "%scope_df -n hotloop --events",
        "last": "%scope_last warmup -p",
        "compare": "%scope_compare warmup second --metric calls",
        "export": f"%scope_export -n warmup --no-call-paths {prof}",
        "reset_one": "%scope_reset warmup",
        "gone": "%scope_last warmup",
        "reset_all": "%scope_reset",
        "unload": "%unload_ext spanscope.integrations.ipython_magics\n%scope_last",
    }
    nb = nbformat.v4.new_notebook()
    for key, source in sources.items():
        cell = nbformat.v4.new_code_cell(source, metadata={"name": key})
        if key in ("failing", "gone", "unload"):
            cell.metadata["tags"] = ["raises-exception"]
        nb.cells.append(cell)
    path = tmp_path / "magics.ipynb"
    nbformat.write(nb, path)

    client = nbclient.NotebookClient(nbformat.read(path, as_version=4), kernel_name=kernel,
                                     timeout=240, resources={"metadata": {"path": str(tmp_path)}})
    done = client.execute()
    cells = {c.metadata["name"]: c for c in done.cells}

    assert not _outputs(cells["load"])

    # the table as HTML, its text beside it
    html = _html(cells["scope"])
    assert "class='spanscope-summary'" in html
    assert "<code>warmup</code>" in html and "<code>scope_profiler.session</code>" in html
    assert "%%scope &#x27;warmup&#x27;" in html
    assert _text(cells["scope"]).startswith("%%scope 'warmup'")
    assert "╭" in _text(cells["scope"])  # print_summary's box

    # -t: the timeline, inline, as an image (PNG), no table with -q
    assert not _html(cells["timeline"])
    (png,) = _images(cells["timeline"])
    assert len(png) > 1000

    assert "(5 runs)" in _text(cells["timeit"])
    assert "<td>5</td>" in _html(cells["timeit"])

    line_text = _text(cells["line"])
    assert "Function: compute" in line_text and "Line #" in line_text
    assert "total += i * i" in line_text
    assert "<code>compute</code>" in _html(cells["line"])

    assert "<code>__main__.inner</code>" in _html(cells["recursive"])
    assert "<code>hot</code>" in _html(cells["agg"])
    assert "<td>25</td>" in _html(cells["agg"])

    (error,) = _outputs(cells["failing"], "error")
    assert error["ename"] == "ValueError" and error["evalue"] == "kaboom"
    assert "<code>boom</code>" in _html(cells["failing"])  # the partial run's table

    assert "<code>solve</code>" in _html(cells["scope_load"])

    (frame,) = _outputs(cells["df"], "execute_result")
    assert "text/html" in frame["data"]  # pandas' own table
    assert "warmup" in frame["data"]["text/plain"]
    assert "num_calls" in frame["data"]["text/plain"]
    assert "aggregation mode" in _text(cells["events"])

    assert "<code>warmup</code>" in _html(cells["last"])
    assert len(_images(cells["last"])) == 1  # -p: the duration bars

    compare = _text(cells["compare"])
    assert compare.startswith("'warmup' -> 'second'")
    assert "calls (a)" in compare

    assert f"wrote {tmp_path / 'exported'}" in _text(cells["export"])
    assert list(tmp_path.glob("exported*.prof"))

    assert "cleared recorded run 'warmup'" in _text(cells["reset_one"])
    # IPython reports a UsageError on stderr, not as an error output
    (usage,) = _outputs(cells["gone"], "stream")
    assert usage["name"] == "stderr"
    assert usage["text"].startswith("UsageError: no recorded run named 'warmup'")
    assert "cleared all recorded spanscope runs" in _text(cells["reset_all"])
    (usage,) = _outputs(cells["unload"], "stream")
    assert "UsageError: Line magic function `%scope_last` not found" in usage["text"]
