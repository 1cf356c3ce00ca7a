"""The HTML report with hostile names, opened in a real browser (issue 15
part 3): headless Chromium loads the page, runs its script and dumps the
DOM.  No name may run as script (each hostile name would set the title to
hostile_names.INJECTED and add an element with that id), the page's own
script must have run (the timeline's canvas says how many spans it drew;
on the comparison page the table sorts on a click), and the browser logs
no JavaScript error.  Skipped when /usr/bin/chromium (or chromium on the
PATH) is missing.
"""
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

import hostile_names as H
from conftest import BUILD

pytest.importorskip("h5py")
from spanscope import ProfileManager  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium: the browser check of the HTML page "
                                       "needs /usr/bin/chromium")
CLI = BUILD / "spanscope"

# Appended to a copy of the comparison page (whose script only waits for
# clicks): sorts the table by name twice and writes the order it saw.
_PROBE = ("<script>(function(){var th=document.querySelector('table#cmp thead th');"
          "var first=function(){return document.querySelector('table#cmp tbody tr td')"
          ".getAttribute('data-v');};th.click();var a=first();th.click();var b=first();"
          "document.body.setAttribute('data-probe',a!==b?'sorted':'unsorted');})();"
          "</script></body>")


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements = []  # (tag, {attr: value})

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))


def load(page):
    """(dumped DOM elements, title, console lines) of page in Chromium."""
    p = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=2000", "--dump-dom", page.as_uri()],
        capture_output=True, timeout=60)
    dom = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0 and "<body" in dom, p.stderr.decode(errors="replace")[-2000:]
    parsed = _Dom()
    parsed.feed(dom)
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    console = [line for line in p.stderr.decode("utf-8", "replace").splitlines()
               if ":CONSOLE" in line]
    return parsed.elements, title.group(1) if title else "", console


def assert_nothing_injected(elements, title, console, page):
    assert title != H.INJECTED, page
    assert not [a for _, a in elements if a.get("id") == H.INJECTED], page
    assert not [t for t, _ in elements if t in ("img", "i")], page
    errors = [c for c in console if re.search(r"Uncaught|Error", c)]
    assert not errors, (page, errors)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    if not CLI.exists():
        pytest.skip(f"no command-line tool at {CLI}")
    d = tmp_path_factory.mktemp("chromium")
    own = H.write_own_h5(d / "own.h5")
    ProfileManager._reset()
    foreign, _ = H.write_foreign_h5(d / "foreign.h5", d)
    ProfileManager._reset()
    out = {}
    for name, args in (("own", [own]), ("foreign", [foreign]), ("compare", [own, foreign])):
        out[name] = d / f"{name}.html"
        subprocess.run([str(CLI), "html", *map(str, args), "-o", str(out[name])],
                       check=True, timeout=120)
    return out


@pytest.mark.parametrize("which", ["own", "foreign"])
def test_single_page_runs_its_script_and_no_name(pages, which):
    elements, title, console = load(pages[which])
    assert_nothing_injected(elements, title, console, which)
    drawn = [a.get("data-drawn") for t, a in elements if t == "canvas"]
    assert drawn and int(drawn[0]) > 0, drawn  # the page's own script drew the timeline
    # the names are in the table as text
    names = [a.get("data-v") for t, a in elements if t == "td" and "data-v" in a]
    assert any(n.startswith("</script><script>") for n in names)


def test_comparison_page_runs_its_script_and_no_name(pages, tmp_path):
    probe = tmp_path / "compare.html"
    probe.write_bytes(pages["compare"].read_bytes().replace(b"</body>", _PROBE.encode(), 1))
    elements, title, console = load(probe)
    assert_nothing_injected(elements, title, console, "compare")
    body = [a for t, a in elements if t == "body"]
    assert body and body[0].get("data-probe") == "sorted", body
