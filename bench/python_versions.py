"""The issue's cost targets per Python version, from bench_python.py's JSON
files (scripts/check-pythons.sh --bench, so make bench-pythons):

    python bench/python_versions.py build/pythons/bench-3.10.json ...

One row per file: the held `with region` and `with record_function(name)`
inside one profile() (target: record_function <= 1.2 x region), torch's
record_function in the same run where torch is installed (target: torch
>= 50 x ours), and the recursive tracer's traced call per hook with the
one the version uses by default."""
import json
import sys


def row(path):
    with open(path) as f:
        d = json.load(f)
    prof, torch_rf, hooks = d["profiler"], d.get("torch", {}), d.get("hooks", {})
    rf, pm = prof["rf_with"], prof["pm_with"]
    ratio = rf / pm
    if "ns" in torch_rf:
        t = torch_rf["ns"]
        torch_col = f"{t:9.0f} {t / rf:6.0f}x {'met' if t / rf >= 50 else 'MISSED':>6}"
    else:
        torch_col = f"{'not installed':>23}"
    per = hooks.get("per_hook", {})
    hook_col = "  ".join(f"{h} {v['call']:.0f}/{v['outer']:.0f}" for h, v in per.items())
    return (f"{d.get('python', '?'):<8} {pm:7.1f} {rf:7.1f} {ratio:5.2f}x "
            f"{'met' if ratio <= 1.2 else 'MISSED':>6}  {torch_col}   "
            f"{hooks.get('default', '?'):<10}  {hook_col}")


def main(paths):
    print("Python face per version: ns per span (median), targets of issue 13 part 4")
    print(f"{'python':<8} {'region':>7} {'rec_fn':>7} {'ratio':>6} {'<=1.2':>6}  "
          f"{'torch ns':>9} {'ratio':>7} {'>=50':>6}   {'hook':<10}  "
          "recursive: traced call / outermost call ns, per hook")
    for p in paths:
        print(row(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
