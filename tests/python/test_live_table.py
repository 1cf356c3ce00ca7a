"""The live summary table (ProfileManager.summary) gives "% session" over
the threads that ran each region, as `spanscope report` does: four
threads running one loop for most of the session read about 90 %, not
350 %.  finalize(verbose=True) prints print_summary's table now (issue
12), where "% session" is wall-clock coverage: the last test."""

import re
import threading
import time

import spanscope as sp
from spanscope import ProfileManager


def _pct(table: str, name: str) -> list[float]:
    return [float(m) for m in re.findall(rf"^\s*{name}\s+\d+\s+([\d.]+)%", table, re.M)]


def _four_threads(seconds=0.1):
    def work():
        with sp.region("loop"):
            t = time.perf_counter()
            while time.perf_counter() - t < seconds:
                pass
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with sp.region("main only"):
        pass


def test_summary_divides_by_the_threads_that_ran_a_region():
    ProfileManager.setup(output=None)
    _four_threads()
    table = ProfileManager.summary()
    loop = _pct(table, "loop")
    assert loop and all(25.0 < p <= 100.0 for p in loop), table
    # the whole session's time for one thread: "main only" is tiny
    assert all(p < 5.0 for p in _pct(table, "main only")), table


def test_finalize_table_is_print_summarys_with_coverage(capfd, tmp_path):
    """finalize(verbose=True) prints scope-profiler's table (issue 12), whose
    "% session" is a path's wall-clock coverage of the session region: four
    threads in one loop cover it once, so the loop reads at most 100 %
    (the C table read its total over the threads' time)."""
    with ProfileManager.session(file_path=str(tmp_path / "a.h5"), verbose=True):
        _four_threads()
    out = capfd.readouterr().out
    # a thread's calls are roots of its own lane, as in scope-profiler
    m = re.search(r"^\s*│ loop \(4x\)\s+([\d.]+)%", out, re.M)
    assert m, out
    assert 25.0 < float(m.group(1)) <= 100.0, out
