"""Compares the suite's outcomes on scope-profiler and on spanscope.

    python compare.py --baseline B.json --mapped M.json --expected LIST [--write-unlisted F]

B.json and M.json are outcomes_plugin.py's records of the two runs; LIST is
expected_failures.txt (``<nodeid>\\t<category>\\t<reason>`` a line, ``#``
comments).  Prints the counts and the issue's percentage; the last line is
``N passed, N failed`` (failed: unexpected failures).  Exit status 1 when a
test that passes on scope-profiler fails on spanscope without being listed
(a listed test that now passes is a warning: remove it from the list).
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

CATEGORIES = {
    "private": "tests a private helper (a name outside scope-profiler's public API)",
    "issue-33": "a feature issue 33 delivers (LIKWID, perf events, memray)",
    "issue-34": "a feature issue 34 delivers (native samples, line profiles)",
    "issue-38": "a feature issue 38 delivers (NVTX, GPU timing)",
    "improvement": "a deliberate difference, an improvement for a scope-profiler user",
    "bug": "a behaviour bug of spanscope, to fix (remove the line with the fix)",
}


def read_expected(path: Path) -> dict:
    """nodeid -> (category, reason); a bad line is an error naming it."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] not in CATEGORIES or not parts[2].strip():
            raise SystemExit(f"{path}:{n}: expected '<nodeid>\\t<category>\\t<reason>' with a "
                             f"category of {sorted(CATEGORIES)}: {line!r}")
        if parts[0] in out:
            raise SystemExit(f"{path}:{n}: {parts[0]} listed twice")
        out[parts[0]] = (parts[1], parts[2])
    return out


def mapped_outcome(nodeid: str, mapped: dict):
    """(outcome, message) of `nodeid` on spanscope; a test of a module that
    did not import there fails with the module's collection error."""
    if nodeid in mapped["tests"]:
        entry = mapped["tests"][nodeid]
        return entry["outcome"], entry["message"]
    module = nodeid.split("::")[0]
    if module in mapped["collect_errors"]:
        return "failed", "[collect] " + mapped["collect_errors"][module]
    return "failed", "[collect] not collected on spanscope"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--mapped", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--write-unlisted", type=Path,
                    help="write the unexpected failures here, one '<nodeid>\\t<message>' a line")
    args = ap.parse_args(argv)
    baseline = json.loads(args.baseline.read_text())
    mapped = json.loads(args.mapped.read_text())
    expected = read_expected(args.expected)

    base_pass = sorted(k for k, v in baseline["tests"].items() if v["outcome"] == "passed")
    passed, unexpected, now_passes = [], [], []
    by_cat = Counter()
    for nodeid in base_pass:
        outcome, message = mapped_outcome(nodeid, mapped)
        if outcome == "passed":
            passed.append(nodeid)
            if nodeid in expected:
                now_passes.append(nodeid)
        elif nodeid in expected:
            by_cat[expected[nodeid][0]] += 1
        else:
            unexpected.append((nodeid, f"{outcome}: {message}"))
    not_here = sorted(set(expected) - set(base_pass))

    print(f"scope-profiler 0.7.5's suite: {len(baseline['tests'])} tests, "
          f"{len(base_pass)} pass on scope-profiler itself")
    print(f"  pass on spanscope:        {len(passed)}")
    for cat, what in CATEGORIES.items():
        print(f"  expected failure, {cat + ':':13s}{by_cat[cat]:5d}  ({what})")
    print(f"  unexpected failures:      {len(unexpected)}")
    public = len(base_pass) - by_cat["private"]
    others = sum(by_cat[c] for c in ("issue-33", "issue-34", "issue-38"))
    if public - others:
        # issue 32's measure: the features other open issues deliver count
        # when they land (they are listed as such until then)
        print(f"public behaviour: {len(passed)} of the {public - others} tests that test "
              f"scope-profiler's public behaviour and pass on it pass on spanscope "
              f"(the {others} tests of open issues 33, 34 and 38 not counted until they "
              f"land): {100.0 * len(passed) / (public - others):.1f} % (target >= 90 %)")
        print(f"  counting those {others} too: {len(passed)} of {public}, "
              f"{100.0 * len(passed) / public:.1f} %")
    for nodeid in now_passes:
        print(f"warning: now passes, remove from list: {nodeid}")
    if not_here:
        print(f"note: {len(not_here)} listed tests do not pass on scope-profiler here "
              f"(skipped or failing in this environment): not counted")
    for nodeid, message in unexpected:
        print(f"UNEXPECTED FAILURE {nodeid}: {message}")
    if args.write_unlisted:
        args.write_unlisted.write_text("".join(f"{n}\t{m}\n" for n, m in unexpected))
    print(f"{len(passed)} passed, {len(unexpected)} failed")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
