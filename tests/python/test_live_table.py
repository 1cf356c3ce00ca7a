"""The live summary table (ProfileManager.summary, the table finalize
prints) gives "% session" over the threads that ran each region, as
`spanscope report` does: four threads running one loop for most of the
session read about 90 %, not 350 %."""

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


def test_finalize_table_counts_the_period_threads(capfd, tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "a.h5"))
    _four_threads()
    ProfileManager.finalize(verbose=True)
    first = capfd.readouterr()
    text = first.out + first.err
    loop = _pct(text, "loop")
    assert loop and all(25.0 < p <= 100.0 for p in loop), text
    # the next period: one thread ran the loop
    with sp.region("loop"):
        t = time.perf_counter()
        while time.perf_counter() - t < 0.05:
            pass
    ProfileManager.finalize(verbose=True)
    second = capfd.readouterr()
    text = second.out + second.err
    loop = _pct(text, "loop")
    assert loop and all(p <= 100.0 for p in loop), text
