"""Names and metadata from others' files are data, never code, in every
output spanscope writes (issue 15 part 3).

The files are hostile_names.py's: a recording by spanscope's own writer
with hostile names, label, thread name and metadata; one "from others"
(h5py) that adds invalid UTF-8 and a 1 MiB name; a Chrome trace with all
of them (raw invalid bytes in the JSON text) and its Perfetto conversion.
Each output is checked for what its format needs: JSON parses (strict
UTF-8) and gives the names back as the readers give them; SVG parses as
XML; the HTML page has only its own script elements and the names only
as data; terminal text holds no control a terminal acts on, and a 1 MiB
name leaves its lines short.  The HTML page in a real browser:
test_html_chromium.py.
"""
import contextlib
import gzip
import io
import json
import pstats
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest

import hostile_names as H
from conftest import BUILD

h5py = pytest.importorskip("h5py")
import spanscope  # noqa: E402
from spanscope import ProfileManager  # noqa: E402

CLI = BUILD / "spanscope"
# the longest line a terminal output may have with a 1 MiB name in it
MAX_LINE = 1000


def cli(*args, ok=True):
    if not CLI.exists():
        pytest.skip(f"no command-line tool at {CLI}")
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, timeout=120)
    if ok:
        assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    own = H.write_own_h5(d / "own.h5")
    ProfileManager._reset()
    foreign, names = H.write_foreign_h5(d / "foreign.h5", d)
    ProfileManager._reset()
    trace = H.write_chrome_trace(d / "trace.json")
    # a second rank of the foreign file, for merges
    rank1 = d / "foreign_r1.h5"
    shutil.copy(foreign, rank1)
    with h5py.File(rank1, "r+") as f:
        f["metadata"].attrs["rank"] = np.int64(1)
    return dict(dir=d, own=own, foreign=foreign, foreign_names=names, trace=trace,
                rank1=rank1)


@pytest.fixture(scope="module")
def pftrace(files):
    out = files["dir"] / "trace.pftrace"
    cli("convert", files["trace"], out)
    return out


# --------------------------------------------------------------------------
# what each format must be
# --------------------------------------------------------------------------

def own_names():
    return set(H.TEXT_NAMES) | {"child"}


def check_json(path, names):
    """path is valid JSON in strict UTF-8, holds no raw ESC, C1 control or
    U+2028/2029 (escaped instead), and has every one of names as a string
    somewhere (whole: data formats do not cut)."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")  # strict: invalid UTF-8 was replaced
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", text.replace("\n", "")), path
    doc = json.loads(text)
    found = set()

    def walk(x):
        if isinstance(x, str):
            found.add(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                found.add(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    missing = [n[:40] for n in names if n not in found]
    assert not missing, (path, missing)
    return doc, found


def check_terminal(text, what):
    """No control a terminal acts on (C0 but newline, DEL, C1), valid
    text, and short lines whatever the names' length."""
    assert not H.terminal_unsafe(text), (what, H.terminal_unsafe(text))
    longest = max((len(line) for line in text.splitlines()), default=0)
    assert longest < MAX_LINE, (what, longest)


class _Page(HTMLParser):
    """The elements, attributes and script contents of an HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.scripts, self._script = [], [], [], None
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag == "script":
            self._script = [dict(attrs), ""]

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data
        else:
            self.text.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append(self._script)
            self._script = None


def check_html(path, names):
    """The page parses to spanscope's own elements only: its two scripts
    (the JSON data blob and the page's code) or one (the comparison page's
    sort code with its data), no <img>, <i> or on* attribute a name could
    have brought, no raw U+2028/2029 or '<' inside a script; the data blob
    gives every name back; the names show as text."""
    raw = path.read_bytes()
    page = _Page()
    page.feed(raw.decode("utf-8"))
    assert "img" not in page.tags and "i" not in page.tags, path
    assert not [a for a, _ in page.attrs if a.startswith("on")], path
    assert not [v for a, v in page.attrs if a == "id" and v == H.INJECTED], path
    kinds = [a.get("type") for a, _ in page.scripts]
    assert kinds.count("application/json") == 1 and len(kinds) <= 2, (path, kinds)
    for attrs, body in page.scripts:
        assert "\u2028" not in body and "\u2029" not in body
        if attrs.get("type") == "application/json":
            assert "<" not in body  # every '<' of a name is \u003c
            data = json.loads(body)
            got = set(data.get("names", []))
            for run in data.get("runs", []) if isinstance(data.get("runs"), list) else []:
                if isinstance(run, dict):
                    got |= set(run.get("names", []))
            if got:
                missing = [n[:40] for n in names if n not in got]
                assert not missing, (path, missing)
    shown = "".join(page.text)
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", shown), path
    # the names are there as text (cut or whole), never as markup
    assert "</script><script>" in shown or "&lt;/script" not in raw.decode(), path


# --------------------------------------------------------------------------
# readers: the names come back as data
# --------------------------------------------------------------------------

def test_readers_give_the_names_back(files):
    r = spanscope.read_h5(str(files["own"]))
    assert set(r.region_names) >= own_names()
    r = spanscope.read_h5(str(files["foreign"]))
    assert set(r.region_names) == set(files["foreign_names"])
    assert H.BIG_NAME in r.region_names  # whole
    assert "lone\ufffd" in r.region_names and "surrogate\ufffd\ufffd\ufffd" in r.region_names
    assert r.label == H.LABEL


# --------------------------------------------------------------------------
# JSON writers
# --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["own", "foreign"])
def test_json_writers_of_the_python_faces(files, which, tmp_path):
    path = files[which]
    names = own_names() if which == "own" else set(files["foreign_names"])
    out = spanscope.export_chrome_trace(str(path), tmp_path / "t.json")
    check_json(out[0] if isinstance(out, list) else tmp_path / "t.json", names)
    out = spanscope.export_speedscope(str(path), tmp_path / "s.speedscope.json")
    check_json(out[0] if isinstance(out, list) else tmp_path / "s.speedscope.json", names)
    res = spanscope.read_h5(str(path))
    spanscope.write_json(res, tmp_path / "p.json")
    _, strings = check_json(tmp_path / "p.json", names)
    assert H.LABEL in strings
    back = spanscope.read_json(tmp_path / "p.json")
    assert set(back.region_names) == set(res.region_names)


@pytest.mark.parametrize("which", ["own", "foreign", "trace"])
def test_cli_convert_and_export_write_valid_json(files, which, tmp_path):
    src = files[which]
    names = {"own": own_names(), "foreign": set(files["foreign_names"]),
             "trace": set(H.trace_names())}[which]
    for name in ("c.json", "c.json.gz"):
        if which == "trace" and name == "c.json":
            continue
        cli("convert", src, tmp_path / name)
        check_json(tmp_path / name, names)
    cli("export", "chrome", src, "-o", tmp_path / "e.trace.json")
    check_json(tmp_path / "e.trace.json", names)
    cli("export", "speedscope", src, "-o", tmp_path / "e.speedscope.json")
    check_json(tmp_path / "e.speedscope.json", names)
    if which == "trace":
        doc, _ = check_json(tmp_path / "c.json.gz", names)
        meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
        assert any(H.repaired(H.THREAD_NAME.encode() + b"\xff") == e["args"].get("name")
                   for e in meta)


def test_cli_export_json_through_the_package(files, tmp_path):
    import os
    import sys
    if not CLI.exists():
        pytest.skip(f"no command-line tool at {CLI}")
    env = dict(os.environ, SPANSCOPE_PYTHON=sys.executable)
    p = subprocess.run([str(CLI), "export", "json", str(files["foreign"]), "-o",
                        str(tmp_path / "e.json")], capture_output=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    _, strings = check_json(tmp_path / "e.json", set(files["foreign_names"]))
    assert H.LABEL in strings


@pytest.mark.filterwarnings("ignore:Glyph")  # the controls have no glyph: drawn as boxes
def test_plot_data_files_keep_the_names(files, tmp_path):
    """The numbers behind a plot (csv, json, parquet): the names come back
    whole through each format's own reader."""
    import csv
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from spanscope import plots
    names = set(files["foreign_names"])
    formats = ["csv", "json"]
    try:
        import pyarrow.parquet as pq
        formats.append("parquet")
    except ImportError:
        pq = None
    for fmt in formats:
        out = tmp_path / f"d.{fmt}"
        plots.plot_durations(str(files["foreign"]), filepath=str(tmp_path / "d.png"),
                             verbose=False, data_filepath=str(out), data_format=fmt)
        if fmt == "csv":
            csv.field_size_limit(1 << 24)  # the reader's limit, for the 1 MiB name
            with open(out, newline="", encoding="utf-8") as f:
                cells = {c for row in csv.reader(f) for c in row}
        elif fmt == "json":
            cells = check_json(out, set())[1]
        else:
            cells = {str(v) for col in pq.read_table(out).to_pydict().values() for v in col}
        assert names <= cells, (fmt, [n[:40] for n in names - cells])


def test_merges_write_valid_json_and_h5(files, tmp_path):
    names = set(files["foreign_names"])
    out = tmp_path / "m.json"
    from spanscope import profiler
    profiler.merge_distributed_traces([files["foreign"], files["rank1"]], out)
    check_json(out, names)
    cli("merge", "-o", tmp_path / "m2.json", files["trace"], files["rank1"])
    check_json(tmp_path / "m2.json", names | set(H.trace_names()))
    cli("merge", "-o", tmp_path / "m.h5", files["foreign"], files["rank1"])
    assert set(spanscope.read_h5(str(tmp_path / "m.h5")).region_names) == names


def test_torch_style_profile_writes_valid_json(tmp_path):
    from spanscope import profiler as tp
    handler = tp.tensorboard_trace_handler(tmp_path / "tb")
    with tp.profile(on_trace_ready=handler) as prof:
        for n in H.TEXT_NAMES:
            with tp.record_function(n):
                pass
    prof.export_chrome_trace(str(tmp_path / "p.json"))
    check_json(tmp_path / "p.json", set(H.TEXT_NAMES))
    (written,) = list((tmp_path / "tb").iterdir())
    check_json(written, set(H.TEXT_NAMES))
    table = prof.key_averages().table(row_limit=100)
    check_terminal(table, "key_averages().table()")
    assert "%s%n%x{0}{name}" in table  # a format string is printed as itself
    prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    for line in lines:  # one stack a line: frames without blanks, a count
        assert re.fullmatch(r"thread_\d+(;[^\s;]+)+ \d+", line), line
    assert any(line.split(" ")[0].endswith(";tab_nl_next") for line in lines)
    prof.export_chrome_trace(str(tmp_path / "p.pftrace"))
    cli("convert", tmp_path / "p.pftrace", tmp_path / "back.json.gz")
    check_json(tmp_path / "back.json.gz", set(H.TEXT_NAMES))


# --------------------------------------------------------------------------
# Perfetto, pstats, SVG
# --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["own", "foreign", "trace"])
def test_perfetto_round_trip(files, which, tmp_path):
    names = {"own": own_names(), "foreign": set(files["foreign_names"]),
             "trace": set(H.trace_names())}[which]
    cli("convert", files[which], tmp_path / "p.pftrace")
    cli("convert", tmp_path / "p.pftrace", tmp_path / "back.json.gz")
    check_json(tmp_path / "back.json.gz", names)


@pytest.mark.parametrize("which", ["own", "foreign", "trace"])
def test_pstats_and_flame_graph(files, which, tmp_path):
    src = files[which]
    names = {"own": own_names(), "foreign": set(files["foreign_names"]),
             "trace": set(H.trace_names())}[which]
    cli("export", "prof", src, "-o", tmp_path / "c.prof")
    cli("export", "svg", src, "-o", tmp_path / "c.svg")
    outs = [tmp_path / "c.prof", tmp_path / "c.svg"]
    if which != "trace":
        outs += [*spanscope.export_prof(str(src), tmp_path / "p.prof"),
                 *spanscope.export_flamegraph_svg(str(src), tmp_path / "p.svg")]
    for out in outs:
        if out.suffix == ".prof":
            st = pstats.Stats(str(out))
            got = {fn for (_, _, fn) in st.stats}
            want = names - {"child"}  # a child is named by its call path there
            assert want <= got, (out, [n[:40] for n in want - got])
            buf = io.StringIO()
            pstats.Stats(str(out), stream=buf).print_stats()  # the user's view
        else:
            raw = out.read_bytes()
            raw.decode("utf-8")
            root = ET.fromstring(raw)  # well-formed XML, entities and all
            assert not [e for e in root.iter() if e.tag.endswith("script")]
            text = "".join(root.itertext())
            assert "</script><script>" in text  # the name, as text
            assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", text)


# --------------------------------------------------------------------------
# HTML pages
# --------------------------------------------------------------------------

def test_html_pages(files, tmp_path):
    cli("html", files["own"], "-o", tmp_path / "own.html")
    check_html(tmp_path / "own.html", own_names())
    cli("html", files["foreign"], "-o", tmp_path / "foreign.html")
    check_html(tmp_path / "foreign.html", set(files["foreign_names"]))
    cli("html", files["trace"], "-o", tmp_path / "trace.html")
    check_html(tmp_path / "trace.html", set(H.trace_names()))
    cli("html", files["own"], files["foreign"], "-o", tmp_path / "cmp.html")
    check_html(tmp_path / "cmp.html", set())
    out = spanscope.create_html_report(str(files["foreign"]), tmp_path / "py.html")
    check_html(out, set(files["foreign_names"]))
    out = spanscope.create_html_report([str(files["own"]), str(files["foreign"])],
                                       tmp_path / "pycmp.html", individual_reports=False)
    check_html(out, set())


# --------------------------------------------------------------------------
# terminal outputs
# --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["own", "foreign", "trace"])
def test_cli_terminal_outputs(files, which):
    src = files[which]
    for args in (("report", src), ("report", src, "--flat"), ("inspect", src),
                 ("diff", files["own"], src), ("check", files["own"], src)):
        p = cli(*args, ok=args[0] != "check")
        check_terminal(p.stdout.decode("utf-8"), args[:1])
        check_terminal(p.stderr.decode("utf-8"), args[:1])
    if which == "own":  # the counter table names the counters, cleaned
        report = cli("report", src).stdout.decode()
        assert "Counters" in report and "osc?]0;title?" in report.split("Counters")[1]
    out = cli("inspect", src).stdout.decode()
    if which == "trace":
        assert "?[31m</script>" in out  # the thread name, ESC shown as '?'


@pytest.mark.parametrize("which", ["own", "foreign"])
def test_python_terminal_outputs(files, which, capfd):
    path = str(files[which])
    res = spanscope.read_h5(path)
    res.print_summary()
    spanscope.inspect_file(path, source=[H.TEXT_NAMES[5], "no-such\x1b[2J"])
    r = spanscope.read(path)
    r.print_summary()
    text = r.summary()
    out, err = capfd.readouterr()
    for t in (out, err, text):
        check_terminal(t, which)
    assert "?[2J?[31mclear-red" in out  # shown, visibly, not acted on
    if which == "foreign":
        assert "BBB..." in out  # the 1 MiB name, cut


def test_finalize_verbose_table(tmp_path, capfd):
    ProfileManager.setup(file_path=str(tmp_path / "v.h5"), label=H.LABEL)
    for n in H.TEXT_NAMES:
        with ProfileManager.region(n):
            pass
    ProfileManager.finalize(verbose=True)
    out, err = capfd.readouterr()
    check_terminal(out + err, "finalize(verbose=True)")
    assert "osc?]0;title?" in out
    assert "label</script>?]0;t?" in out  # the label in the Info box


def test_terminal_text_rule():
    t = spanscope.results._table.terminal_text
    assert t("a\x1b[2J\x00b\u009bc\x7f") == "a?[2J?b?c?"
    assert t("s\udcffx") == "s\ufffd\ufffd\ufffdx"  # a lone surrogate: its 3 bytes
    assert t("x" * 10, 6) == "xxx..."
    assert t(H.BIG_NAME, 100) == "B" * 97 + "..."


@pytest.mark.filterwarnings("ignore:Glyph")  # the controls have no glyph: drawn as boxes
def test_plots_do_not_crash(files, tmp_path):
    """matplotlib draws the names as text (a 1 MiB name cut: whole, it made
    the figure too large to draw)."""
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from spanscope import plots
    path = str(files["foreign"])
    plots.plot_gantt(path, filepath=str(tmp_path / "g.png"), verbose=False)
    plots.plot_flame_graph(path, filepath=str(tmp_path / "f.png"), verbose=False)
    plots.plot_durations(path, filepath=str(tmp_path / "d.png"), verbose=False)
    plots.plot_flame_chart(path, filepath=str(tmp_path / "c.png"), verbose=False)
    plots.plot_duration_histogram(path, filepath=str(tmp_path / "h.png"), verbose=False)
    for name in ("g.png", "f.png", "d.png", "c.png", "h.png"):
        assert (tmp_path / name).stat().st_size > 0
