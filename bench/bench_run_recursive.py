#!/usr/bin/env python3
"""What `spanscope run --recursive` costs a whole run, against cProfile.

    python bench/bench_run_recursive.py [--python PY] [--runs N] [--fib N] [--hooks]
                                        [--json PATH]

Runs one script, fib(N) (N = 30 by default: 2 692 537 Python calls), as
separate processes of the interpreter PY (default: this one):

  bare        PY fib.py
  cProfile    PY -m cProfile -o OUT.pstats fib.py   (nothing printed)
  spanscope   PY -m spanscope run --recursive -q -o OUT.h5 fib.py
  sps default PY -m spanscope run --recursive -q fib.py (profiling_data.h5)

and the same commands on an empty script (start-up and shut-down alone).
Every round runs each variant once, in ABBA order (the order reversed every
other round), after one untimed warm-up round; the tables show medians over
the rounds (these are shared, noisy VMs).

Each run is split in three by the script itself: it writes
time.monotonic_ns() (a system-wide clock, the parent's too) when it starts
and when fib returns to the file named by $SPS_BENCH_MARKS.  So:

  start-up  from the spawn to the script's first line (interpreter,
            imports, session set-up, the tracer switched on),
  script    the script's own time (fib under the tracer),
  finalize  from fib's return to the process's exit (the tracer off, the
            profile analysed and written, interpreter shut-down).

"added" is a variant's median minus the bare run's median; per call, it is
divided by the calls fib(N) makes.  The targets (issue 35, part 7b): the
tracer's added time per call <= 0.5 x cProfile's, and the whole run's added
wall time <= 1 x cProfile's.  Standard library only; prints the CPU model and
the load average before and after.  --hooks adds the tracer alone per hook
(setprofile, the frame evaluation hook, sys.monitoring on 3.12+) against
cProfile, in one process, in thread CPU time.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

FIB = """\
import os, time
_t0, _c0, _h0 = time.monotonic_ns(), time.process_time_ns(), time.thread_time_ns()


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


fib({n})
_t1, _c1, _h1 = time.monotonic_ns(), time.process_time_ns(), time.thread_time_ns()
with open(os.environ["SPS_BENCH_MARKS"], "w") as _f:
    _f.write("%d %d %d %d %d %d" % (_t0, _t1, _c0, _c1, _h0, _h1))
"""

EMPTY = """\
import os, time
_t0, _c0, _h0 = time.monotonic_ns(), time.process_time_ns(), time.thread_time_ns()
with open(os.environ["SPS_BENCH_MARKS"], "w") as _f:
    _f.write("%d %d %d %d %d %d" % (_t0, time.monotonic_ns(), _c0, time.process_time_ns(),
                                    _h0, time.thread_time_ns()))
"""


def fib_calls(n):
    """Calls fib(n) makes, itself included: 2 fib(n+1) - 1."""
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def cpu_model():
    """The CPU's model name (/proc/cpuinfo, else platform), and the CPU count."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip(), os.cpu_count()
    except OSError:
        pass
    return platform.processor() or platform.machine(), os.cpu_count()


def variants(py, tmp):
    """(name, argv builder(script, tag)) of each variant, bare first."""
    def out(tag, ext):
        return os.path.join(tmp, "out-%s%s" % (tag, ext))
    return [
        ("bare", lambda s, t: [py, s]),
        ("cProfile -o", lambda s, t: [py, "-m", "cProfile", "-o", out(t, ".pstats"), s]),
        ("spanscope -o X.h5", lambda s, t: [py, "-m", "spanscope", "run", "--recursive", "-q",
                                            "-o", out(t, ".h5"), s]),
        ("spanscope (default output)",
         lambda s, t: [py, "-m", "spanscope", "run", "--recursive", "-q", s]),
    ]


def run_once(argv, cwd, marks):
    """One process: (wall s, CPU s of the child, start-up s, script s,
    finalize s, the script's CPU s: the process's, all its threads, the
    script's CPU s: its own thread's, the recording thread).
    Raises RuntimeError when it fails."""
    env = dict(os.environ, SPS_BENCH_MARKS=marks)
    if os.path.exists(marks):
        os.unlink(marks)
    t0 = time.monotonic_ns()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    t3 = time.monotonic_ns()
    p.returncode = os.waitstatus_to_exitcode(status)
    out = p.stdout.read()
    err = p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    if p.returncode != 0 or not os.path.exists(marks):
        raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(argv), p.returncode,
                                                    out.decode(errors="replace"),
                                                    err.decode(errors="replace")))
    with open(marks) as f:
        t1, t2, c1, c2, h1, h2 = (int(x) for x in f.read().split())
    return ((t3 - t0) / 1e9, ru.ru_utime + ru.ru_stime, (t1 - t0) / 1e9, (t2 - t1) / 1e9,
            (t3 - t2) / 1e9, (c2 - c1) / 1e9, (h2 - h1) / 1e9)


def measure(py, runs, n, log=sys.stderr):
    """{script: {variant: [samples]}} for the fib and the empty script."""
    tmp = tempfile.mkdtemp(prefix="sps-bench-run-")
    scripts = {"fib": os.path.join(tmp, "fib.py"), "empty": os.path.join(tmp, "empty.py")}
    with open(scripts["fib"], "w") as f:
        f.write(FIB.format(n=n))
    with open(scripts["empty"], "w") as f:
        f.write(EMPTY)
    marks = os.path.join(tmp, "marks")
    vs = variants(py, tmp)
    res = {s: {name: [] for name, _ in vs} for s in scripts}
    order = [(s, name, build) for s in scripts for name, build in vs]
    for r in range(runs + 1):  # round 0: warm-up (page cache, pyc files)
        seq = order if r % 2 else order[::-1]
        for s, name, build in seq:
            sample = run_once(build(scripts[s], "%s-%d" % (s, r)), tmp, marks)
            if r:
                res[s][name].append(sample)
        if r:
            print("round %d/%d done" % (r, runs), file=log, flush=True)
        for f in os.listdir(tmp):  # outputs of this round
            if f.startswith("out-") or f == "profiling_data.h5":
                os.unlink(os.path.join(tmp, f))
    return res


# --hooks: the tracer alone, in one process, per hook: fib(N) bare, under
# cProfile and under each hook of spanscope's tracer (a recursive root
# region around it), interleaved round by round (ABBA), CPU time of the
# thread (time.thread_time_ns: less moved by other processes than wall
# time), medians; ns added per call over the bare run.
HOOKS_SCRIPT = """\
import cProfile, json, statistics, sys, time
from spanscope import ProfileManager, _ext
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
N, rounds = int(sys.argv[1]), int(sys.argv[2])
default = _ext.trace_hook()
hooks = []
for h in ("setprofile", "evalframe", "monitoring"):  # those this build and Python have
    try:
        _ext.set_trace_hook(h)
        hooks.append(h)
    except ValueError:
        pass
_ext.set_trace_hook(default)
ProfileManager.setup(output=None)
@ProfileManager.profile("root", recursive=True)
def traced():
    fib(N)
def bare():
    fib(N)
def cprof():
    p = cProfile.Profile()
    p.enable()
    fib(N)
    p.disable()
def with_hook(h):
    def f():
        _ext.set_trace_hook(h)
        try:
            traced()
        finally:
            _ext.set_trace_hook(default)
    return f
vs = [("bare", bare), ("cProfile", cprof)] + [(h, with_hook(h)) for h in hooks]
res = {k: [] for k, _ in vs}
for r in range(rounds + 1):
    for k, f in (vs if r % 2 else vs[::-1]):
        t = time.thread_time_ns()
        f()
        if r:
            res[k].append(time.thread_time_ns() - t)
print(json.dumps({"python": sys.version.split()[0], "default": default,
                  "median_ns": {k: statistics.median(v) for k, v in res.items()}}))
"""


def per_hook(py, n, rounds, calls, out=sys.stdout):
    """Runs HOOKS_SCRIPT in PY and prints its table; returns its figures."""
    p = subprocess.run([py, "-c", HOOKS_SCRIPT, str(n), str(rounds)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("the per-hook run failed:\n" + p.stderr)
    fig = json.loads(p.stdout.strip().splitlines()[-1])
    med = fig["median_ns"]
    bare, cp = med["bare"], med["cProfile"] - med["bare"]
    print("\nThe tracer alone, per hook: fib(%d) in one process, thread CPU time, median of %d "
          "ABBA rounds (Python %s, default hook %s)" % (n, rounds, fig["python"], fig["default"]),
          file=out)
    print("| variant | ns per call | added ns per call | ratio to cProfile's added |", file=out)
    print("|---|---:|---:|---:|", file=out)
    for k, v in med.items():
        add = v - bare
        print("| %s%s | %.1f | %s | %s |" % (
            k, " (default)" if k == fig["default"] else "", v / calls,
            "%.1f" % (add / calls) if k != "bare" else "",
            "%.2fx" % (add / cp) if k != "bare" and cp > 0 else ""), file=out)
    return fig


FIELDS = ("wall", "cpu", "startup", "script", "finalize", "script_cpu", "script_tcpu")


def medians(samples):
    return {k: statistics.median(s[i] for s in samples) for i, k in enumerate(FIELDS)}


def table(res, calls, out=sys.stdout):
    """Prints the tables; returns the figures (a dict) for --json."""
    fib = {name: medians(s) for name, s in res["fib"].items()}
    empty = {name: medians(s) for name, s in res["empty"].items()}
    bare, cp = fib["bare"], fib["cProfile -o"]
    cp_added = cp["wall"] - bare["wall"]
    cp_tracer = cp["script"] - bare["script"]
    figures = {"calls": calls, "fib": fib, "empty": empty}

    def ratio(a, b):
        return "%.2fx" % (a / b) if b > 0 else "-"

    print("\nWhole run, fib: median wall (s), added = median - bare's; ratio to cProfile's added",
          file=out)
    print("| variant | wall s | CPU s | added s | added ns/call | ratio to cProfile |", file=out)
    print("|---|---:|---:|---:|---:|---:|", file=out)
    for name, m in fib.items():
        added = m["wall"] - bare["wall"]
        print("| %s | %.3f | %.3f | %s | %s | %s |" % (
            name, m["wall"], m["cpu"], "%.3f" % added if name != "bare" else "",
            "%.0f" % (added / calls * 1e9) if name != "bare" else "",
            ratio(added, cp_added) if name != "bare" else ""), file=out)

    print("\nWhere the time goes, fib: start-up | script (the tracer) | finalize + exit;"
          " medians (s), added vs bare", file=out)
    print("| variant | start-up | script | finalize | start-up added | tracer added ns/call"
          " | tracer ratio to cProfile | tracer added, thread CPU ns/call | ratio"
          " | process CPU added ns/call | ratio | finalize added |", file=out)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    cp_tracer_cpu = cp["script_cpu"] - bare["script_cpu"]
    cp_tracer_tcpu = cp["script_tcpu"] - bare["script_tcpu"]
    for name, m in fib.items():
        tr = m["script"] - bare["script"]
        trc = m["script_cpu"] - bare["script_cpu"]
        trt = m["script_tcpu"] - bare["script_tcpu"]
        print("| %s | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, m["startup"], m["script"], m["finalize"],
            "%.3f" % (m["startup"] - bare["startup"]) if name != "bare" else "",
            "%.1f" % (tr / calls * 1e9) if name != "bare" else "",
            ratio(tr, cp_tracer) if name != "bare" else "",
            "%.1f" % (trt / calls * 1e9) if name != "bare" else "",
            ratio(trt, cp_tracer_tcpu) if name != "bare" else "",
            "%.1f" % (trc / calls * 1e9) if name != "bare" else "",
            ratio(trc, cp_tracer_cpu) if name != "bare" else "",
            "%.3f" % (m["finalize"] - bare["finalize"]) if name != "bare" else ""), file=out)
    print("(thread CPU: the script's own thread, which the tracer runs on; process CPU: all"
          " threads, with spanscope's background analysis, which does while the script runs"
          " what finalize would do after it)", file=out)

    eb = empty["bare"]
    print("\nEmpty script: medians (s), added vs the bare empty run", file=out)
    print("| variant | wall | start-up | finalize + exit | added wall |", file=out)
    print("|---|---:|---:|---:|---:|", file=out)
    for name, m in empty.items():
        print("| %s | %.3f | %.3f | %.3f | %s |" % (
            name, m["wall"], m["startup"], m["finalize"],
            "%.3f" % (m["wall"] - eb["wall"]) if name != "bare" else ""), file=out)

    sp = fib["spanscope -o X.h5"]
    tr_ratio = (sp["script"] - bare["script"]) / cp_tracer if cp_tracer > 0 else float("nan")
    trc_ratio = ((sp["script_cpu"] - bare["script_cpu"]) / cp_tracer_cpu if cp_tracer_cpu > 0
                 else float("nan"))
    trt_ratio = ((sp["script_tcpu"] - bare["script_tcpu"]) / cp_tracer_tcpu
                 if cp_tracer_tcpu > 0 else float("nan"))
    run_ratio = (sp["wall"] - bare["wall"]) / cp_added if cp_added > 0 else float("nan")
    figures["targets"] = {"tracer_ratio": tr_ratio, "tracer_thread_cpu_ratio": trt_ratio,
                          "process_cpu_ratio": trc_ratio, "run_ratio": run_ratio}
    print("\n| target (issue 35, part 7b) | measured | verdict |", file=out)
    print("|---|---|---|", file=out)
    print("| tracer's added time per call <= 0.5 x cProfile's | %.2f x (%.1f vs %.1f ns) | %s |" % (
        tr_ratio, (sp["script"] - bare["script"]) / calls * 1e9, cp_tracer / calls * 1e9,
        "met" if tr_ratio <= 0.5 else "**missed**"), file=out)
    print("| ... in CPU time (the recording thread's) | %.2f x (%.1f vs %.1f ns) | %s |" % (
        trt_ratio, (sp["script_tcpu"] - bare["script_tcpu"]) / calls * 1e9,
        cp_tracer_tcpu / calls * 1e9, "met" if trt_ratio <= 0.5 else "**missed**"), file=out)
    print("| (process CPU while the script runs, the background analysis included) "
          "| %.2f x (%.1f vs %.1f ns) | - |" % (
              trc_ratio, (sp["script_cpu"] - bare["script_cpu"]) / calls * 1e9,
              cp_tracer_cpu / calls * 1e9), file=out)
    print("| whole run's added wall <= 1 x cProfile's | %.2f x (%.3f vs %.3f s) | %s |" % (
        run_ratio, sp["wall"] - bare["wall"], cp_added,
        "met" if run_ratio <= 1.0 else "**missed**"), file=out)
    return figures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter to measure (spanscope installed in it)")
    ap.add_argument("--runs", type=int, default=9, help="timed rounds (default 9)")
    ap.add_argument("--fib", type=int, default=30, help="fib(N) (default 30)")
    ap.add_argument("--quick", action="store_true", help="3 rounds of fib(27)")
    ap.add_argument("--json", help="write the medians and every sample here")
    ap.add_argument("--hooks", action="store_true",
                    help="also the tracer alone per hook, in one process (fib(N-6), CPU time)")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs, args.fib = 3, 27
    if args.runs < 1 or args.fib < 1:
        ap.error("--runs and --fib must be at least 1")
    ver = subprocess.run([args.python, "-c", "import sys, spanscope; print(sys.version.split()[0],"
                          " spanscope.__version__, spanscope._ext.trace_hook())"],
                         capture_output=True, text=True)
    if ver.returncode != 0:
        sys.exit("bench_run_recursive: spanscope does not import in %s:\n%s"
                 % (args.python, ver.stderr))
    pyver, spsver, hook = ver.stdout.split()
    model, ncpu = cpu_model()
    calls = fib_calls(args.fib)
    load0 = os.getloadavg()
    print("bench_run_recursive: Python %s (%s), spanscope %s, tracer hook %s" % (
        pyver, args.python, spsver, hook))
    print("CPU: %s, %d CPUs; load average %.2f %.2f %.2f" % ((model, ncpu) + load0))
    print("fib(%d): %d calls; %d rounds, ABBA order, medians" % (args.fib, calls, args.runs))
    res = measure(args.python, args.runs, args.fib)
    figures = table(res, calls)
    if args.hooks:
        n = max(args.fib - 6, 1)
        figures["hooks"] = per_hook(args.python, n, max(args.runs, 5), fib_calls(n))
    load1 = os.getloadavg()
    print("\nload average after: %.2f %.2f %.2f" % load1)
    if args.json:
        figures.update(python=pyver, spanscope=spsver, hook=hook, cpu=model, ncpu=ncpu,
                       load_before=load0, load_after=load1,
                       samples={s: {k: v for k, v in d.items()} for s, d in res.items()},
                       fields=FIELDS)
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
