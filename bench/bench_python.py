"""Python-face benchmarks: ns per region call, side by side with floors and a
pure-Python reference, all measured in one run.

    python bench/bench_python.py [--quick] [--json out.json]

Each figure is the median over REPS repetitions of a timed loop (these are
shared, noisy VMs); every loop's own overhead (a bare ``for`` over the same
range) is measured too and subtracted.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

from spanscope import ProfileManager, _ext


class PyRegion:
    """The pure-Python reference: scope-profiler's TimeOnly region, written the
    way pure-Python profilers do it (perf_counter_ns, preallocated numpy
    buffers, a stack of open slots)."""

    __slots__ = ("start_times", "end_times", "ptr", "stack")

    def __init__(self, capacity=1 << 22):
        self.start_times = np.empty(capacity, dtype=np.int64)
        self.end_times = np.zeros(capacity, dtype=np.int64)
        self.ptr = 0
        self.stack = []

    def __enter__(self):
        slot = self.ptr
        if slot >= len(self.start_times):
            self.ptr = slot = 0  # the benchmark wraps instead of growing
        self.ptr = slot + 1
        self.stack.append(slot)
        self.start_times[slot] = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        self.end_times[self.stack.pop()] = time.perf_counter_ns()
        return False


def timed(fn, n, reps):
    """Median ns per iteration of fn(n) over reps runs."""
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn(n)
        out.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--queries", type=int, metavar="CALLS",
                    help="only the query benchmark, on a session of CALLS calls")
    args = ap.parse_args()
    if args.queries:
        return bench_queries(args.queries, 5 if args.quick else 11, args.json)
    n = 50_000 if args.quick else 300_000
    reps = 5 if args.quick else 11

    ProfileManager.setup(output=None, overflow="spill")
    reg = ProfileManager.region("bench")
    floor_cm = _ext.ClockPair()
    ref = PyRegion()
    region = ProfileManager.region

    def empty(k):
        for _ in range(k):
            pass

    def with_floor(k):
        for _ in range(k):
            with floor_cm:
                pass

    def with_region(k):
        for _ in range(k):
            with reg:
                pass

    def with_lookup(k):
        for _ in range(k):
            with region("bench"):
                pass

    def with_ref(k):
        for _ in range(k):
            with ref:
                pass

    def f():
        return None

    deco = ProfileManager.profile("deco")(f)

    class RefDeco:
        def __init__(self, func):
            self.func, self.r = func, PyRegion()

        def __call__(self, *a, **kw):
            with self.r:
                return self.func(*a, **kw)

    ref_deco = RefDeco(f)

    def call_plain(k):
        for _ in range(k):
            f()

    def call_deco(k):
        for _ in range(k):
            deco()

    def call_ref_deco(k):
        for _ in range(k):
            ref_deco()

    def callee():
        return None

    def traced_loop(k):
        for _ in range(k):
            callee()

    rec_loop = ProfileManager.profile("rec", recursive=True)(traced_loop)

    def run_rec(k):
        rec_loop(k)

    def run_noop_hook(k):
        _ext._noop_profile(True)
        try:
            traced_loop(k)
        finally:
            _ext._noop_profile(False)

    def py_hook(frame, event, arg):  # pure-Python reference tracer
        if event == "call":
            ref.__enter__()
        elif event == "return":
            ref.__exit__(None, None, None)

    def run_py_hook(k):
        sys.setprofile(py_hook)
        try:
            traced_loop(k)
        finally:
            sys.setprofile(None)

    loop = timed(empty, n, reps)
    m = {name: timed(fn, n, reps) - loop for name, fn in [
        ("floor_with", with_floor), ("with_region", with_region),
        ("with_region_lookup", with_lookup), ("ref_with", with_ref),
        ("plain_call", call_plain), ("decorated_call", call_deco), ("ref_decorated", call_ref_deco),
        ("noop_hook_call", run_noop_hook), ("recursive_call", run_rec), ("ref_py_hook", run_py_hook),
    ]}
    pair = statistics.median(_ext._floor_pair_ns(n) for _ in range(reps))
    calls = reg.num_calls
    assert calls >= n * reps * 2, f"recorded {calls} calls: the benchmark did not record"
    ProfileManager._reset()
    hooks = bench_hooks(n, reps, loop, traced_loop)

    rows = [
        ("with floor: C context manager reading the clock twice", m["floor_with"], "", ""),
        ("with region (region object held)", m["with_region"],
         f"{m['with_region'] / m['floor_with']:.2f}x floor", "target <= 1.3x"),
        ("with region(name), region = ProfileManager.region", m["with_region_lookup"],
         f"{m['with_region_lookup'] / m['floor_with']:.2f}x floor", "includes the name lookup"),
        ("with pure-Python reference region", m["ref_with"],
         f"{m['ref_with'] / m['with_region']:.1f}x ours", "target >= 5x"),
        ("call floor: undecorated function", m["plain_call"], "", ""),
        ("@profile decorated call", m["decorated_call"],
         f"{m['decorated_call'] / m['plain_call']:.2f}x floor", "target <= 1.5x"),
        ("  vs undecorated call + two clock reads", m["plain_call"] + pair,
         f"{m['decorated_call'] / (m['plain_call'] + pair):.2f}x",
         f"clock pair alone: {pair:.1f} ns"),
        ("pure-Python reference decorator", m["ref_decorated"],
         f"{m['ref_decorated'] / m['decorated_call']:.1f}x ours", "target >= 5x"),
        ("trace floor: call under a no-op C profile hook", m["noop_hook_call"], "", ""),
        ("recursive=True traced call", m["recursive_call"],
         f"{m['recursive_call'] / m['noop_hook_call']:.2f}x floor", "target <= 1.5x"),
        ("pure-Python sys.setprofile reference", m["ref_py_hook"],
         f"{m['ref_py_hook'] / m['recursive_call']:.1f}x ours", "target >= 5x"),
    ]
    lookup = bench_lookup(n, reps)
    prof = bench_profiler(n, reps, loop)
    torch_rf = bench_torch(max(n // 15, 2000), reps)
    print(f"Python {sys.version.split()[0]} ({sys.executable})")
    print(f"Python face: ns per call, median of {reps} runs of {n} calls "
          f"(loop overhead {loop:.1f} ns subtracted)")
    w = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{w}}  {'ns':>8}  {'ratio':>14}  note")
    for name, ns, ratio, note in rows:
        print(f"{name:<{w}}  {ns:8.1f}  {ratio:>14}  {note}")
    print()
    print_hooks(hooks, reps, n)
    print()
    print_lookup(lookup)
    print()
    print(f"torch-style face (spanscope.profiler), inside profile(): ns per span, median of "
          f"{reps} runs of {n} spans")
    rows = [
        ("with region (ProfileManager, region object held)", prof["pm_with"], "", ""),
        ("with record_function(name)", prof["rf_with"],
         f"{prof['rf_with'] / prof['pm_with']:.2f}x region", "target <= 1.2x"),
        ("with ProfileManager.region(name)", prof["pm_lookup"],
         f"{prof['pm_lookup'] / prof['pm_with']:.2f}x region", "same lookup as record_function"),
        ("@record_function(name) decorated call", prof["rf_deco"], "", "the C wrapper of @profile"),
    ]
    w = max(len(r[0]) for r in rows)
    for name, ns, ratio, note in rows:
        print(f"{name:<{w}}  {ns:8.1f}  {ratio:>14}  {note}")
    rf = prof["rf_with"]
    if "ns" in torch_rf:
        t = torch_rf["ns"]
        print(f"{'torch ' + torch_rf['version'] + ': with torch.profiler.record_function(name)':<{w}}"
              f"  {t:8.1f}  {t / rf:>9.0f}x ours  target >= 50x (inside torch.profiler.profile(), "
              f"{torch_rf['spans']} spans)")
    else:
        print(f"{'torch: with torch.profiler.record_function(name)':<{w}}  {'':>8}  {'':>14}  "
              f"not measured: {torch_rf['why']}")
    print(f"trace of {prof['spans']} spans (export_chrome_trace): " + ", ".join(
        f"{ext} {b / prof['spans']:.1f} B/span in {t:.2f} s" for ext, (b, t) in prof["trace"].items()))
    print(f"key_averages().table() over {prof['spans']} spans: {prof['table_s']:.3f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"python": sys.version.split()[0], "n": n, "reps": reps, "loop_ns": loop,
                       "clock_pair_ns": pair, "ns": m, "hooks": hooks,
                       "lookup": lookup, "profiler": prof, "torch": torch_rf}, fh, indent=2)


# -- the recursive tracer's hooks (issue 13, part 3) ------------------------------

def bench_hooks(n, reps, loop, traced_loop):
    """The recursive tracer under each hook this Python offers
    (PyEval_SetProfile; sys.monitoring on 3.12+), interleaved rep by rep:
    ns per traced call of a one-line function inside one outermost call
    ("call"), and ns per outermost call of an empty recursive function
    ("outer": what installing and removing the hook costs).  Returns
    {hook: {"call": ns, "outer": ns}} and the default hook."""
    default = _ext.trace_hook()
    hooks = ["setprofile"] + (["monitoring"] if sys.version_info >= (3, 12) else [])
    ProfileManager.setup(output=None, overflow="spill")
    rec = ProfileManager.profile("rec.hook", recursive=True)(traced_loop)
    outer = ProfileManager.profile("rec.outer", recursive=True)(lambda: None)
    k_outer = max(n // 10, 1000)

    def outer_loop(k):
        for _ in range(k):
            outer()

    samples = {h: {"call": [], "outer": []} for h in hooks}
    try:
        for _ in range(reps):
            for h in hooks:
                _ext.set_trace_hook(h)
                samples[h]["call"].append(timed(rec, n, 1) - loop)
                samples[h]["outer"].append(timed(outer_loop, k_outer, 1) - loop)
    finally:
        _ext.set_trace_hook(default)
        ProfileManager._reset()
    out = {h: {k: statistics.median(v) for k, v in d.items()} for h, d in samples.items()}
    return {"default": default, "per_hook": out}


def print_hooks(r, reps, n):
    """The table of bench_hooks' figures."""
    per = r["per_hook"]
    print(f"recursive tracer per hook: ns, median of {reps} interleaved runs "
          f"(default hook here: {r['default']})")
    names = {"setprofile": "PyEval_SetProfile", "monitoring": "sys.monitoring"}
    base = per["setprofile"]
    for h, f in per.items():
        ratio = "" if h == "setprofile" else (
            f"  ({f['call'] / base['call']:.2f}x / {f['outer'] / base['outer']:.2f}x setprofile)")
        print(f"  {names[h]:<18} traced call {f['call']:7.1f}   outermost call "
              f"(hook on + off) {f['outer']:8.1f}{ratio}")


def bench_torch(k, reps):
    """torch's own record_function inside torch.profiler.profile() (CPU
    activity only), ns per span, median of reps runs of k spans: the
    issue's comparison, measured in the same run as ours.  {"why": ...}
    when torch does not import for this Python."""
    try:
        import torch
        import torch.profiler as tp
    except Exception as e:  # ImportError, or a broken install's OSError
        return {"why": f"torch is not installed for Python {sys.version.split()[0]} ({e})"[:160]}
    rf = tp.record_function

    def spans(m):
        for _ in range(m):
            with rf("bench.torch"):
                pass

    with tp.profile(activities=[tp.ProfilerActivity.CPU]):
        spans(min(k, 1000))  # warm-up
        ns = statistics.median(timed(spans, k, 1) for _ in range(reps))
    return {"ns": ns, "spans": k, "version": torch.__version__}


# -- the lookup form against a held region, and scope-profiler (issue 12, part 7) --

def _lookup_loops(pm, reg):
    """The four loops: a bare for, a held region, the seed page's lookup
    form `with ProfileManager.region(name):` (the global, the attribute,
    the call: all of it per iteration), for the manager class pm."""
    def empty(k):
        for _ in range(k):
            pass

    def held(k):
        for _ in range(k):
            with reg:
                pass

    def by_name(k):
        for _ in range(k):
            with pm.region("bench.lookup"):
                pass
    return empty, held, by_name


def bench_lookup(n, reps):
    """ns per call of `with region:` and `with ProfileManager.region(name):`
    for spanscope and, when installed, scope-profiler 0.7.5, interleaved rep
    by rep in this one run (drift on a shared VM hits all alike); the loop
    overhead of each rep is subtracted.  Returns best-of-reps and median
    figures and the ratios the issue asks for."""
    ours_pm = ProfileManager
    ours_pm.setup(output=None)
    loops = {"ours": _lookup_loops(ours_pm, ours_pm.region("bench.lookup"))}
    try:
        import scope_profiler
        sp_pm = scope_profiler.ProfileManager
        sp_pm.setup(deactivate_file_output=True, replace=True)
        loops["sp"] = _lookup_loops(sp_pm, sp_pm.region("bench.lookup"))
    except ImportError:
        sp_pm = None
    samples = {f"{who}_{kind}": [] for who in loops for kind in ("held", "by_name")}
    for _ in range(reps):
        for who, (empty, held, by_name) in loops.items():
            for kind, fn in (("held", held), ("by_name", by_name)):
                base = timed(empty, n, 1)
                samples[f"{who}_{kind}"].append(timed(fn, n, 1) - base)
                # scope-profiler's buffers grow with every call: start it afresh
                if who == "sp":
                    sp_pm.setup(deactivate_file_output=True, replace=True)
                    loops["sp"] = _lookup_loops(sp_pm, sp_pm.region("bench.lookup"))
    out = {"best": {k: min(v) for k, v in samples.items()},
           "median": {k: statistics.median(v) for k, v in samples.items()}}
    for stat in ("best", "median"):
        f = out[stat]
        f["by_name_over_held"] = f["ours_by_name"] / f["ours_held"]
        if sp_pm is not None:
            f["sp_held_over_ours"] = f["sp_held"] / f["ours_held"]
            f["sp_by_name_over_ours"] = f["sp_by_name"] / f["ours_by_name"]
    ProfileManager._reset()
    if sp_pm is not None:
        sp_pm._reset()
    return out


def print_lookup(r):
    """The lookup table of bench_lookup's figures."""
    b, m = r["best"], r["median"]
    print("the lookup form against a held region, and scope-profiler 0.7.5 in the same run: "
          "ns per call (best of reps / median)")
    rows = [("with region (held)", "ours_held", ""),
            ("with ProfileManager.region(name)", "ours_by_name",
             f"{b['by_name_over_held']:.2f}x / {m['by_name_over_held']:.2f}x held  target <= 1.2x")]
    if "sp_held" in b:
        rows += [("scope-profiler: with region (held)", "sp_held",
                  f"{b['sp_held_over_ours']:.1f}x / {m['sp_held_over_ours']:.1f}x ours  "
                  "target >= 5x"),
                 ("scope-profiler: with ProfileManager.region(name)", "sp_by_name",
                  f"{b['sp_by_name_over_ours']:.1f}x / {m['sp_by_name_over_ours']:.1f}x ours  "
                  "target >= 5x")]
    else:
        rows.append(("scope-profiler", None, "not installed: no comparison"))
    w = max(len(x[0]) for x in rows)
    for name, key, note in rows:
        figs = f"{b[key]:7.1f} / {m[key]:7.1f}" if key else " " * 17
        print(f"{name:<{w}}  {figs}  {note}")


def bench_profiler(n, reps, loop):
    """record_function against a ProfileManager region in one profile() run,
    then the trace size per span of the last window."""
    import os
    import tempfile

    from spanscope import profiler
    rf = profiler.record_function
    region = ProfileManager.region

    def rf_with(k):
        for _ in range(k):
            with rf("bench.rf"):
                pass

    def pm_lookup(k):
        for _ in range(k):
            with region("bench.pm"):
                pass

    @rf("bench.deco")
    def g():
        return None

    def rf_deco(k):
        for _ in range(k):
            g()

    out = {}
    with profiler.profile():
        reg = region("bench.pm")

        def pm_with(k):
            for _ in range(k):
                with reg:
                    pass
        # interleaved, so drift on a noisy VM hits all alike
        samples = {"rf_with": [], "pm_with": [], "pm_lookup": [], "rf_deco": []}
        for _ in range(reps):
            for name, fn in (("rf_with", rf_with), ("pm_with", pm_with),
                             ("pm_lookup", pm_lookup), ("rf_deco", rf_deco)):
                samples[name].append(timed(fn, n, 1) - loop)
        out.update({k: statistics.median(v) for k, v in samples.items()})
    spans_n = 200_000
    with profiler.profile() as p:
        for i in range(spans_n // 2):
            with rf("outer"):
                with rf("inner"):
                    pass
    out["spans"] = len(p.events())
    t0 = time.perf_counter()
    p.key_averages().table()
    out["table_s"] = time.perf_counter() - t0
    out["trace"] = {}
    with tempfile.TemporaryDirectory() as d:
        for ext in (".json", ".json.gz", ".pftrace"):
            path = os.path.join(d, "t" + ext)
            t0 = time.perf_counter()
            p.export_chrome_trace(path)
            out["trace"][ext] = (os.path.getsize(path), time.perf_counter() - t0)
    return out


# -- queries (issue 11, part 3) -------------------------------------------------

def bench_queries(calls, reps, json_path=None):
    """What a query costs after k new calls on a session of `calls` calls:
    get_durations_numpy() (the whole answer, copied) and num_calls, median
    wall ns over reps, with the k calls recorded before each query untimed."""
    ProfileManager.setup(output=None)
    r = ProfileManager.region("bench.query")
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        with r:
            pass
    record_s = (time.perf_counter_ns() - t0) / 1e9
    t0 = time.perf_counter_ns()
    first = len(r.get_durations_numpy())
    first_ms = (time.perf_counter_ns() - t0) / 1e6
    rows = []

    def one(k, fn):
        out = []
        for _ in range(reps):
            for _ in range(k):
                with r:
                    pass
            t = time.perf_counter_ns()
            fn()
            out.append(time.perf_counter_ns() - t)
        return statistics.median(out)

    for k in (0, 1, 10, 100, 1000, 10000):
        rows.append((k, one(k, r.get_durations_numpy), one(k, lambda: r.num_calls)))
    # the copy's floor: a fresh int64 array of the answer's size, filled
    answer = r.get_durations_numpy()
    floor = []
    for _ in range(reps):
        t = time.perf_counter_ns()
        answer.copy()
        floor.append(time.perf_counter_ns() - t)
    copy_floor = statistics.median(floor)
    info = _ext.query_info()
    ProfileManager._reset()
    print(f"Python face, queries on a session of {first} calls (recorded in {record_s:.1f} s; "
          f"first get_durations_numpy {first_ms:.1f} ms; kept {info['bytes'] / 2**20:.0f} MiB); "
          f"median of {reps}, wall")
    print(f"{'new calls k':>12}  {'get_durations_numpy':>20}  {'num_calls':>10}   "
          f"(copy floor: numpy copy of {len(answer)} int64, {copy_floor / 1e6:.3f} ms)")
    for k, d, c in rows:
        print(f"{k:>12}  {d / 1e6:17.3f} ms  {c / 1e3:7.2f} us")
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"calls": first, "first_ms": first_ms, "record_s": record_s,
                       "copy_floor_ns": copy_floor,
                       "kept_bytes": info["bytes"],
                       "rows": [{"k": k, "durations_ns": d, "num_calls_ns": c}
                                for k, d, c in rows]}, fh, indent=2)


if __name__ == "__main__":
    main()
