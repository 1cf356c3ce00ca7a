"""Where a region's time went, from the command line (issue 34 part 2):
the stack samples of an .h5 in `spanscope report`, `spanscope html`,
`spanscope export speedscope` (a sampled profile per sampled thread,
checked field by field against speedscope's file-format schema),
`spanscope export folded` (Brendan Gregg's folded stacks, by region with
--by-region) and `spanscope export svg --from samples`.

The recording is made by a small C program linked against the build's
libspanscope: three burners of known CPU cost, two in regions and one
outside every span, sampled at 1 kHz of CPU time.
"""
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("SPS_BUILD", Path(__file__).parents[2] / "build"))
ROOT = Path(__file__).parents[2]
CLI = BUILD / "spanscope"

PROGRAM = r"""
#include <spanscope.h>
#include <stdint.h>
#include <time.h>

static volatile uint64_t sink;
static volatile int ms_solve = 240, ms_io = 120, ms_idle = 90;

static int64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define BURNER(name, mul)                                                \
    __attribute__((noinline)) void name(int ms) {                        \
        int64_t end = cpu_ns() + (int64_t)ms * 1000000;                  \
        uint64_t x = sink;                                               \
        while (cpu_ns() < end)                                           \
            for (int i = 0; i < 100000; i++) x = x * (mul) + 1;          \
        sink = x;                                                        \
    }
BURNER(burn_solve, 6364136223846793005ull)
BURNER(burn_io, 2862933555777941757ull)
BURNER(burn_idle, 3935559000370003845ull)

int main(int argc, char **argv) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = argv[1];
    cfg.sample_hz = argc > 2 ? 1000 : 0;
    if (sps_setup(&cfg)) return 3;
    sps_region_t step = sps_region("step"), solve = sps_region("solve"),
                 io = sps_region("io");
    for (int i = 0; i < 4; i++) {
        sps_begin(step);
        sps_begin(solve);
        burn_solve(ms_solve / 4);
        sps_end(solve);
        sps_begin(io);
        burn_io(ms_io / 4);
        sps_end(io);
        sps_end(step);
        burn_idle(ms_idle / 4);
    }
    if (sps_finalize() || sps_shutdown()) return 4;
    return 0;
}
"""


def run(*args, check=True):
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(sampled .h5, the same program's .h5 without samples)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    if not (BUILD / "libspanscope.so").exists() or not CLI.exists():
        pytest.skip(f"no build at {BUILD} (make build)")
    d = tmp_path_factory.mktemp("samples_views")
    (d / "prog.c").write_text(PROGRAM)
    exe = d / "prog"
    # -rdynamic: the burners in the dynamic symbol table as well
    subprocess.run([cc, "-O2", "-g", "-rdynamic", "-I", str(ROOT / "include"),
                    str(d / "prog.c"), "-o", str(exe), "-L", str(BUILD), "-lspanscope",
                    f"-Wl,-rpath,{BUILD}"], check=True)
    sampled, plain = d / "sampled.h5", d / "plain.h5"
    subprocess.run([str(exe), str(sampled), "sample"], check=True, timeout=120)
    subprocess.run([str(exe), str(plain)], check=True, timeout=120)
    return sampled, plain


def fn_of(label):
    """A frame label's function: "burn_solve (/x/prog.c:23)" (a -g build's
    line, libdw) and "burn_solve (prog)" (its module) both give burn_solve."""
    return label.split(" (", 1)[0]


def is_native_label(label, fn):
    """Whether label is fn's, with its line in prog.c or its module prog."""
    return re.fullmatch(rf"{re.escape(fn)} \((prog|\S*prog\.c:\d+)\)", label) is not None


def total_weight(path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        return int(f["samples/weights"][:].sum())


def report_blocks(text):
    """The samples section of a report as {block head: [function, ...]}
    (the functions of its rows, heaviest first)."""
    sec = text.split("Where the time went (samples)\n", 1)[1]
    blocks = {}
    for chunk in sec.split("\n\n")[1:]:
        lines = chunk.strip("\n").splitlines()
        head = lines[0].split(": ", 1)[0]
        assert lines[1].split()[:3] == ["samples", "CPU", "ms"]
        blocks[head] = [ln.split("%", 1)[1].strip() for ln in lines[2:]]
    return blocks


def test_report_shows_where_each_regions_time_went(recorded):
    sampled, plain = recorded
    out = run("report", sampled).stdout
    blocks = report_blocks(out)
    assert is_native_label(blocks["solve"][0], "burn_solve"), blocks["solve"][0]
    assert is_native_label(blocks["io"][0], "burn_io")
    assert is_native_label(blocks["(outside every span)"][0], "burn_idle")
    assert not any("burn_io" in f or "burn_idle" in f for f in blocks["solve"])
    assert not any("burn_solve" in f for f in blocks["io"])
    # the heaviest region first, the samples outside every span last
    heads = list(blocks)
    assert heads[0] == "solve" and heads[-1] == "(outside every span)"
    # a region's rows add up to its samples
    sec = out.split("Where the time went (samples)\n", 1)[1]
    for chunk in sec.split("\n\n")[1:]:
        lines = chunk.strip("\n").splitlines()
        n = int(lines[0].split(": ", 1)[1].split()[0])
        assert sum(int(ln.split()[0]) for ln in lines[2:]) == n
    assert "Where the time went" not in run("report", plain).stdout


def parse_folded(path):
    rows = []
    for line in Path(path).read_text().splitlines():
        stack, _, w = line.rpartition(" ")
        assert stack and int(w) >= 1, line
        rows.append((stack.split(";"), int(w)))
    return rows


def test_export_folded(recorded, tmp_path):
    sampled, plain = recorded
    total = total_weight(sampled)
    run("export", "folded", sampled, "-o", tmp_path / "a.folded")
    rows = parse_folded(tmp_path / "a.folded")
    assert sum(w for _, w in rows) == total
    leaves = {}
    for frames, w in rows:
        assert is_native_label(frames[-1], fn_of(frames[-1])) or \
            not frames[-1].startswith("burn_")
        leaves[fn_of(frames[-1])] = leaves.get(fn_of(frames[-1]), 0) + w
        assert frames[0] != "solve"  # no region before the stack
    assert leaves["burn_solve"] > leaves["burn_io"] > 0
    assert leaves.get("burn_idle", 0) > 0
    # main is an outer frame of every burner's stack
    assert all(any(f.startswith("main (") for f in fr) for fr, _ in rows
               if fr[-1].startswith("burn_"))

    run("export", "folded", sampled, "-o", tmp_path / "r.folded", "--by-region")
    rows = parse_folded(tmp_path / "r.folded")
    assert sum(w for _, w in rows) == total
    by = {}
    for frames, w in rows:
        key = (frames[0], fn_of(frames[-1]))
        by[key] = by.get(key, 0) + w
    assert by[("solve", "burn_solve")] >= 0.9 * leaves["burn_solve"]
    assert by[("io", "burn_io")] >= 0.9 * leaves["burn_io"]
    assert by[("[no region]", "burn_idle")] >= 0.9 * leaves["burn_idle"]

    # a file without samples: a clear refusal, no output
    p = run("export", "folded", plain, "-o", tmp_path / "none.folded", check=False)
    assert p.returncode == 2 and "no stack samples" in p.stderr
    assert not (tmp_path / "none.folded").exists()


def test_export_speedscope_sampled_profiles_follow_the_schema(recorded, tmp_path):
    """speedscope's file-format-schema.json (draft-06), SampledProfile:
    type "sampled", name (string), unit (one of the schema's units),
    startValue and endValue (numbers), samples (arrays of numbers: frame
    indexes, outermost first) and weights (numbers), all required."""
    sampled, _ = recorded
    out = tmp_path / "s.speedscope.json"
    run("export", "speedscope", sampled, "-o", out)
    doc = json.loads(out.read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = doc["shared"]["frames"]
    assert all(isinstance(f["name"], str) and set(f) <= {"name", "file", "line", "col"}
               and isinstance(f.get("file", ""), str)
               and isinstance(f.get("line", 0), (int, float)) for f in frames)
    types = [p["type"] for p in doc["profiles"]]
    assert "evented" in types  # the spans stay
    prof = [p for p in doc["profiles"] if p["type"] == "sampled"]
    assert len(prof) == 1  # one thread sampled
    p = prof[0]
    assert {"type", "name", "unit", "startValue", "endValue", "samples", "weights"} <= set(p)
    assert isinstance(p["name"], str) and "samples" in p["name"]
    assert p["unit"] in {"bytes", "microseconds", "milliseconds", "nanoseconds", "none",
                         "seconds"}
    assert len(p["samples"]) == len(p["weights"]) > 0
    assert all(isinstance(w, int) and w >= 1 for w in p["weights"])
    assert sum(p["weights"]) == total_weight(sampled) == p["endValue"] - p["startValue"]
    for stack in p["samples"]:
        assert stack and all(isinstance(i, int) and 0 <= i < len(frames) for i in stack)
    names = [[frames[i]["name"] for i in s] for s in p["samples"]]
    leaves = {s[-1] for s in names}
    assert {"burn_solve", "burn_io", "burn_idle"} <= leaves
    assert all(s.index("main") < len(s) - 1 for s in names if s[-1].startswith("burn_"))
    burn = next(f for f in frames if f["name"] == "burn_solve")
    # a native frame: its source file and line (a -g build, libdw), else its module
    assert burn["file"].endswith("prog.c") or burn["file"].endswith("prog"), burn


def test_export_svg_from_samples(recorded, tmp_path):
    sampled, plain = recorded
    out = tmp_path / "f.svg"
    run("export", "svg", sampled, "-o", out, "--from", "samples")
    svg = ET.parse(out).getroot()
    titles = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")]
    for fn in ("burn_solve", "burn_io", "burn_idle"):
        assert any(" samples, " in t and is_native_label(t.rsplit(" (", 1)[0], fn)
                   for t in titles), fn
    root = titles[0]
    assert f"({total_weight(sampled)} samples, " in root
    run("export", "svg", sampled, "-o", out, "--from", "samples", "--by-region")
    titles = [t.text for t in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}title")]
    assert any(t.startswith("solve (") for t in titles)
    assert any(t.startswith("[no region] (") for t in titles)
    # from spans (the default): regions, no functions
    run("export", "svg", sampled, "-o", out)
    text = out.read_text()
    assert "<title>solve (" in text and "burn_solve" not in text
    p = run("export", "svg", sampled, "-o", out, "--from", "stacks", check=False)
    assert p.returncode == 2 and "--from needs spans or samples" in p.stderr
    p = run("export", "speedscope", sampled, "-o", out, "--from", "samples", check=False)
    assert p.returncode == 2 and "--from samples is for svg" in p.stderr
    p = run("export", "svg", plain, "-o", tmp_path / "n.svg", "--from", "samples",
            check=False)
    assert p.returncode == 2 and "no stack samples" in p.stderr


def test_html_page_has_the_table_per_region(recorded, tmp_path):
    sampled, plain = recorded
    page = tmp_path / "p.html"
    run("html", sampled, "-o", page)
    text = page.read_text()
    sec = text.split('<h2 id="samples">Where the time went (samples)</h2>', 1)[1]
    for head, fn in (("solve", "burn_solve"), ("io", "burn_io"),
                     ("(outside every span)", "burn_idle")):
        block = sec.split(f"<h3>{head} <", 1)[1].split("</table>", 1)[0]
        cells = re.findall(r'<td class="fn">([^<]*)</td>', block)
        assert cells and is_native_label(cells[0], fn), cells[:3]
    run("html", plain, "-o", page)
    assert "Where the time went" not in page.read_text()


def test_folded_from_a_trace_is_refused(recorded, tmp_path):
    """Samples live in the .h5: a trace converted to JSON has none to fold."""
    sampled, _ = recorded
    trace = tmp_path / "t.json"
    run("export", "chrome", sampled, "-o", trace)
    p = run("export", "folded", trace, "-o", tmp_path / "t.folded", check=False)
    assert p.returncode == 2 and "stack samples come only in a spanscope .h5" in p.stderr
