#!/usr/bin/env python3
"""Runs spanscope's C benchmarks and prints a table (``make bench``).

    python bench/run.py --build build [--quick] [--json PATH]

Drives build/bench/bench_core (linked with the shared library) and
build/bench/bench_core_static (static library).  Each measurement runs in
several fresh processes with several repetitions each; the table shows the
median of all repetitions (these are noisy shared VMs).  The results, every
sample included, go to BUILD/bench/results.json.  Standard library only.
"""
import argparse
import json
import math
import os
import platform
import shutil
import re
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1024 * 1024
HAVE_X86 = platform.machine() in ("x86_64", "AMD64", "i686", "i386")


def machine_info():
    info = {"model": "unknown", "nproc": os.cpu_count(),
            "kernel": platform.release(), "hypervisor": None}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() == "Hypervisor vendor":
                info["hypervisor"] = val.strip()
            if key.strip() == "Model name" and info["model"] == "unknown":
                info["model"] = val.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def build_type(build):
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            m = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", f.read(), re.M)
            return m.group(1) if m else ""
    except OSError:
        return ""


class Runner:
    def __init__(self, bindir, verbose):
        self.bindir = bindir
        self.verbose = verbose

    def run(self, binary, *args, env=None, fatal=True):
        cmd = [os.path.join(self.bindir, binary)] + [str(a) for a in args]
        if self.verbose:
            print("  $ " + " ".join(cmd), file=sys.stderr)
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, **env) if env else None)
        if p.returncode != 0:
            msg = "%s failed (exit %d): %s" % (" ".join(cmd), p.returncode,
                                                p.stderr.strip())
            if not fatal:
                return {"_error": msg}
            sys.exit("run.py: " + msg)
        try:
            res = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            sys.exit("run.py: cannot parse the output of %s:\n%s" %
                     (" ".join(cmd), p.stdout))
        res["_wall_s"] = round(time.monotonic() - t0, 3)
        return res

    def repeat(self, procs, binary, *args, env=None):
        """Runs procs fresh processes; returns their results."""
        return [self.run(binary, *args, env=env) for _ in range(procs)]


def pooled(results, key):
    out = []
    for r in results:
        v = r[key]
        out.extend(v if isinstance(v, list) else [v])
    return out


def med(xs):
    return statistics.median(xs)


def spread(xs):
    """A short 'min..max' note for a list of samples."""
    return "%.1f..%.1f" % (min(xs), max(xs)) if len(xs) > 1 else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="CMake build directory")
    ap.add_argument("--quick", action="store_true",
                    help="smaller sizes and fewer repetitions (about 20 s)")
    ap.add_argument("--json", help="where to write the results "
                    "(default BUILD/bench/results.json)")
    ap.add_argument("--big", type=float, default=None,
                    help="calls of the large run (default 1e8, --quick 1e7)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print each command run")
    a = ap.parse_args()

    bindir = os.path.join(a.build, "bench")
    for b in ("bench_core", "bench_core_static"):
        if not os.access(os.path.join(bindir, b), os.X_OK):
            sys.exit("run.py: %s not found: build first (make build, or "
                     "cmake --build %s)" % (os.path.join(bindir, b), a.build))
    json_path = a.json or os.path.join(bindir, "results.json")
    R = Runner(bindir, a.verbose)

    q = a.quick
    procs = 1 if q else 5       # fresh processes per timing
    reps = 5 if q else 11       # batches per process
    pairs = 200000 if q else 1000000
    floor_n = 1000000 if q else 5000000
    mem_n = 1000000 if q else 4000000
    disk_n = 1000000
    big_n = int(a.big if a.big is not None else (1e7 if q else 1e8))
    size_procs = 1 if q else 3

    t_start = time.monotonic()
    mach = machine_info()
    btype = build_type(a.build)
    info = R.run("bench_core", "info")
    clock = info["clock"]
    print("spanscope benchmarks: %s, %s CPUs, kernel %s%s; counter: %s%s" % (
        mach["model"], mach["nproc"], mach["kernel"],
        ", " + mach["hypervisor"] + " guest" if mach["hypervisor"] else "",
        clock, " (SPANSCOPE_CLOCK=%s)" % info["spanscope_clock_env"]
        if info["spanscope_clock_env"] else ""), flush=True)
    if btype and btype not in ("Release", "RelWithDebInfo"):
        print("warning: CMAKE_BUILD_TYPE=%s: timings are not representative"
              % btype, file=sys.stderr)

    rows = []

    def row(name, value, unit, note, samples=None, **extra):
        r = {"benchmark": name, "value": value, "unit": unit, "note": note}
        if samples is not None:
            r["samples"] = [round(x, 4) for x in samples]
        r.update(extra)
        rows.append(r)
        return value

    # --- the floor ------------------------------------------------------
    # Every time is the CPU time of the measuring thread per operation (see
    # bench_core.c: other processes on a shared VM stretch wall-clock batches
    # by up to 3x, CPU time stays put); the wall-clock median is in the note.
    fl = R.repeat(procs, "bench_core", "floor", "--n", floor_n,
                  "--reps", 9 if not q else 5)

    def timed(name, res, key, note, **extra):
        xs = pooled(res, key)
        wall = pooled(res, key + "_wall")
        return row(name, med(xs), "ns", "%s%swall %.1f" % (
            note, "; " if note else "", med(wall)), xs,
            wall_samples=[round(x, 4) for x in wall], **extra)

    floor = timed("floor: 2 timestamp reads (hot path's counter)", fl,
                  "hot_pair_ns", "%s x2, read as sps_begin+sps_end do" % (
                      "rdtsc" if clock == "tsc" else "clock_gettime"))
    if clock == "tsc":
        timed("floor: rdtsc x2", fl, "tsc_pair_ns", "")
    timed("floor: clock_gettime(MONOTONIC) x2", fl, "mono_pair_ns", "reference")
    timed("floor: 2 calls of an empty function", fl, "empty_call_pair_ns",
          "indirect call, no PLT")
    timed("model: 2 inline checks of a global flag", fl,
          "inline_check_pair_ns", "what a header-inlined disabled check costs")
    print("  floor done", file=sys.stderr, flush=True)

    # --- pairs ----------------------------------------------------------
    ratios = {}

    def pair(name, binary, mode, threads, note, env=None):
        res = R.repeat(procs, binary, "pair", "--mode", mode, "--threads",
                       threads, "--n", pairs, "--reps", reps, env=env)
        ratios[(binary, mode, threads, bool(env))] = pooled(res, "ratio")
        return timed(name, res, "ns", note,
                     dropped=sum(r["dropped"] for r in res))

    enabled = pair("enabled pair, 1 thread", "bench_core", "events", 1,
                   "sps_begin+sps_end, shared lib")
    enabled2 = pair("enabled pair, 2 threads (per thread)", "bench_core",
                    "events", 2, "both threads at once")
    pair("enabled pair, static lib", "bench_core_static", "events", 1,
         "no PLT")
    pair("SPS_REGION scope", "bench_core", "scope", 1,
                 "cached id + cleanup")
    disabled = pair("disabled pair (no session)", "bench_core", "disabled", 1,
                    "shared lib")
    disabled_s = pair("disabled pair, static lib", "bench_core_static",
                      "disabled", 1, "no PLT")
    pair("aggregate-mode pair", "bench_core", "aggregate", 1,
               "statistics only, shared lib")
    other = "monotonic" if clock == "tsc" else "tsc"
    if clock == "tsc" or HAVE_X86:
        pair("enabled pair, SPANSCOPE_CLOCK=%s" % other, "bench_core",
             "events", 1, "the other counter", env={"SPANSCOPE_CLOCK": other})
    r1 = ratios[("bench_core", "events", 1, False)]
    r2 = ratios[("bench_core", "events", 2, False)]
    ratio = row("ratio enabled / floor, 1 thread", med(r1), "x",
                "each batch over a floor batch run just before it", r1)
    ratio2 = row("ratio enabled / floor, 2 threads", med(r2), "x",
                 "same, per thread", r2)
    # crash safety (core/crash.c): a session with a file keeps its chunks
    # in shared mappings of its live file; the same run's floor and the
    # same file path with crash safety off
    pair("enabled pair, crash-safe (file path, shared chunks)", "bench_core", "crash", 1,
         "the default with a file path")
    pair("enabled pair, file path, crash safety off", "bench_core", "nocrash", 1,
         "sps_crash_safe(0)")
    rc_ = ratios[("bench_core", "crash", 1, False)]
    rn_ = ratios[("bench_core", "nocrash", 1, False)]
    row("ratio crash-safe / floor, 1 thread", med(rc_), "x",
        "issue 35's target: <= 1.05 x (floor batch just before each batch)", rc_)
    row("ratio crash-safe off / floor, 1 thread", med(rn_), "x", "same run", rn_)
    ro = ratios.get(("bench_core", "events", 1, True))
    if ro:
        row("ratio enabled / floor, SPANSCOPE_CLOCK=%s" % other, med(ro), "x",
            "floor = 2 reads of that counter", ro)
    print("  pairs done", file=sys.stderr, flush=True)

    # --- values per span (cfg.track, docs/values.md) ---------------------
    # each against the time-only pair of the same run (the same process
    # kind, the same repetitions); the ratio is of the medians
    mem_pair = pair("memory-tracked pair, nothing allocated", "bench_core", "memory", 1,
                    "SPS_TRACK_MEMORY: delta value groups, plain hot path")
    mem_alloc_pair = pair("memory-tracked pair, 64 B allocated and freed inside",
                          "bench_core", "memory_alloc", 1,
                          "sps_mem_alloc+sps_mem_free inside: both records carry readings")
    cnt_pair = pair("3 software counters pair", "bench_core", "counters", 1,
                    "task-clock,page-faults,context-switches: one group, one read() "
                    "syscall per record = 2 per span (no rdpmc for software events)")
    row("ratio memory-tracked / time-only pair", mem_pair / enabled, "x",
        "nothing allocated inside (issue 33 target <= 1.05)")
    row("ratio 3 software counters / time-only pair", cnt_pair / enabled, "x",
        "read() per record; rdpmc needs a hardware PMU (none on these VMs)")
    print("  values done", file=sys.stderr, flush=True)

    # --- NVTX emission (issue 38, docs/nvtx-itt.md) ------------------------
    # the pair with SPS_EMIT_NVTX on, against the time-only pair of the same
    # run: no tool attached (nvtx3's no-op), and with the test NVTX tool
    # (tests/c/nvtx_inject.c: a lock and a gettid per push and pop); built
    # where the nvtx3 headers were found (the tool is built with them)
    nvtx_tool = os.path.join(a.build, "tests", "c", "libsps_nvtx_inject.so")
    nvtx_pair = nvtx_tool_pair = nvtx_base = None
    if os.path.exists(nvtx_tool):
        # the time-only pair again, right before: these shared VMs drift
        # within a run more than the difference measured here
        nvtx_base = pair("time-only pair, beside the emit_nvtx rows", "bench_core", "events", 1,
                         "the ratios below are to this one")
        nvtx_pair = pair("emit_nvtx pair, no tool attached", "bench_core", "emit_nvtx", 1,
                         "SPS_EMIT_NVTX on; nvtx3 finds no tool at the first begin and "
                         "the emitter goes idle: the fast path again")
        nvtx_tool_pair = pair("emit_nvtx pair, test NVTX tool", "bench_core", "emit_nvtx", 1,
                              "NVTX_INJECTION64_PATH=tests/c/nvtx_inject.c's library",
                              env={"NVTX_INJECTION64_PATH": os.path.abspath(nvtx_tool)})
        row("ratio emit_nvtx (no tool) / time-only pair", nvtx_pair / nvtx_base, "x",
            "issue 38 target <= 1.1")
        row("ratio emit_nvtx (test tool) / time-only pair", nvtx_tool_pair / nvtx_base, "x",
            "the tool's own cost included (a lock and a gettid per push and pop)")

    # --- scope-profiler's C API over spanscope (bench/bench_scope.c) -------
    # its own interleaved table (text): sp_begin/sp_end and friends beside
    # sps_begin/sps_end of the same process, median ns per pair
    scope_bin = os.path.join(R.bindir, "bench_scope")
    if os.path.exists(scope_bin):
        out = subprocess.run([scope_bin, "--n", str(pairs), "--reps", str(max(int(reps), 5))],
                             capture_output=True, text=True)
        notes = {"sps": "sps_begin+sps_end, the same process",
                 "sp": "scope_profiler.h sp_begin+sp_end (inline)",
                 "sp_call": "exported (sp_begin)/(sp_end), as bind(C) calls them",
                 "checked": "sp_profiler_begin/end (per-thread stack)",
                 "scope": "sp::Scope's pair", "disabled": "sp_begin/sp_end, no session"}
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[0] in notes:
                row("scope-profiler C API: %s pair" % f[0], float(f[1]), "ns",
                    notes[f[0]] + ("" if f[0] == "sps" else " (%+.2f ns vs sps)" % float(f[3])))
        print("  scope-profiler C API done", file=sys.stderr, flush=True)

    # --- -finstrument-functions (libspanscope_instrument, docs/instrument.md)
    # bench_instrument's own table (text): per call of a leaf built with
    # -finstrument-functions, what the hooks add when the leaf is recorded
    # and when it is left out at run time, beside sps_begin+sps_end of the
    # same process; bench_instrument_noop: the compiler's calls of glibc's
    # no-op hooks (the floor of a call left out); bench_instrument_pg under
    # uftrace (Debian uftrace), when it is installed: what uftrace adds to
    # the same leaf built with -pg.  Medians of fresh processes.
    inst = {}

    def inst_table(cmd, env=None):
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, **env) if env else None)
        got = {}
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[0] in ("plain", "recorded", "filtered", "pair",
                                         "noop", "uftrace"):
                got[f[0]] = (float(f[1]), float(f[3]))
        if p.returncode != 0 or not got:
            print("  %s failed (exit %d): %s" % (" ".join(cmd), p.returncode,
                                                  p.stderr.strip()[-300:]),
                  file=sys.stderr)
        return got

    def inst_pool(tables):
        out = {}
        for t in tables:
            for k, (m, add) in t.items():
                out.setdefault(k, []).append(add)
        return {k: med(v) for k, v in out.items()}

    inst_bin = os.path.join(R.bindir, "bench_instrument")
    if os.path.exists(inst_bin):
        irep = str(max(int(reps), 5))
        inst.update(inst_pool([inst_table([inst_bin, "--n", str(pairs), "--reps", irep])
                               for _ in range(procs)]))
        noop_bin = os.path.join(R.bindir, "bench_instrument_noop")
        if os.path.exists(noop_bin):
            inst.update(inst_pool([inst_table([noop_bin, "--n", str(pairs), "--reps", irep])
                                   for _ in range(procs)]))
        pg_bin = os.path.join(R.bindir, "bench_instrument_pg")
        uftrace = shutil.which("uftrace")
        if uftrace and os.path.exists(pg_bin):
            # fewer calls: uftrace writes ~13 B per traced call to its data directory
            un = str(min(pairs, 200000))
            tabs = []
            for _ in range(procs):
                with tempfile.TemporaryDirectory(prefix="spanscope-uftrace-",
                                                 dir=bindir) as ud:
                    tabs.append(inst_table([uftrace, "record", "--no-libcall", "-d",
                                            os.path.join(ud, "data"), pg_bin,
                                            "--n", un, "--reps", "5"]))
            inst.update(inst_pool(tabs))
        if "recorded" in inst and "pair" in inst:
            row("instrumented call, recorded: added", inst["recorded"], "ns",
                "-finstrument-functions leaf, libspanscope_instrument; "
                "%.2f x the pair (%.1f ns, same process)" % (
                    inst["recorded"] / inst["pair"], inst["pair"]))
        if "filtered" in inst:
            row("instrumented call, left out at run time: added", inst["filtered"], "ns",
                "SPANSCOPE_INSTRUMENT_EXCLUDE, inside a recorded call")
        if "noop" in inst:
            row("instrumented call, glibc's no-op hooks: added", inst["noop"], "ns",
                "the compiler's two hook calls alone (floor of a call left out)")
        if "uftrace" in inst:
            row("uftrace on the -pg build: added", inst["uftrace"], "ns",
                "uftrace record --no-libcall, %s calls a batch" % min(pairs, 200000))
        elif not shutil.which("uftrace"):
            print("  uftrace not installed (Debian: uftrace): its comparison is skipped",
                  file=sys.stderr)
        print("  -finstrument-functions done", file=sys.stderr, flush=True)

    # --- memory and disk per call ----------------------------------------
    mres = R.repeat(size_procs, "bench_core", "mem", "--n", mem_n)
    mem = row("memory per recorded call", med(pooled(mres, "bytes_per_call")),
              "B", "RSS growth over %.0e calls, GROW policy" % mem_n,
              pooled(mres, "bytes_per_call"))
    with tempfile.TemporaryDirectory(prefix="spanscope-bench-",
                                     dir=bindir) as tmp:
        disk = {}
        for shape, note in (("loop", "1 region, 10^6 calls"),
                            ("nested", "2 levels: 10^3 x (1 + 10^3) calls"),
                            ("varied", "10^6 calls of 0..~250 ns random work")):
            res = R.repeat(size_procs, "bench_core", "disk", "--shape", shape,
                           "--n", disk_n, "--out",
                           os.path.join(tmp, shape + ".h5"))
            xs = pooled(res, "bytes_per_call")
            disk[shape] = row("file per call, %s" % shape, med(xs), "B",
                              note + ", HDF5 as written", xs,
                              file_bytes=[r["file_bytes"] for r in res])
        print("  sizes done", file=sys.stderr, flush=True)

        # --- the large run ------------------------------------------------
        # SPILL hands every chunk past the 32 MiB pool to the spill writer,
        # which packs it into an unlinked file in $TMPDIR (or /tmp): about
        # 0.7 bytes per call for this loop, 16 at worst (a stream that does
        # not pack is stored raw), until finalize.
        spill_dir = os.environ.get("TMPDIR") or "/tmp"
        need = big_n * 16 + 256 * MIB
        try:
            free = shutil.disk_usage(spill_dir).free
        except OSError:
            free = need
        if free < need:
            big = {"_error": "only %.0f MiB free in %s, the spill file needs "
                   "%.0f MiB" % (free / MIB, spill_dir, need / MIB)}
        else:
            big = R.run("bench_core", "big", "--n", big_n, "--out",
                        os.path.join(tmp, "big.h5"), fatal=False)
    k = round(math.log10(big_n)) if big_n > 0 else 0
    tag = "10^%d" % k if 10 ** k == big_n else "%.0e" % big_n
    big_ok = "_error" not in big
    if big_ok:
        peak_hwm = big["vmhwm_kib"] * 1024
        row("%s calls: recording" % tag, big["record_ns_per_pair"], "ns",
            "per pair, recording thread, default SPILL/32 MiB, spilling included "
            "(the writer's own CPU: below); wall %.1f"
            % big["record_ns_per_pair_wall"])
        row("%s calls: pair while the pool fills" % tag,
            big["first_slices_ns_per_pair"], "ns",
            "per pair, first 2x10^6 pairs")
        row("%s calls: pair while spilling" % tag,
            big["spill_slices_median_ns_per_pair"], "ns",
            "per pair, median slice of 10^6 once the pool is full; wall %.1f"
            % big["spill_slices_median_ns_per_pair_wall"])
        row("%s calls: floor, same run" % tag, big["floor_ns"], "ns",
            "median of %d floor slices between the recorded ones"
            % big["floor_samples"])
        row("%s calls: ratio spilling / floor, same run" % tag,
            big["ratio_spill_floor"], "x",
            "median spilling slice over median floor slice")
        row("%s calls: spill writer CPU" % tag,
            big["record_process_cpu_ns_per_pair"] - big["record_ns_per_pair"],
            "ns", "per pair, on the other core (process CPU - recording thread's)")
        row("%s calls: spill bytes per call" % tag,
            big["spill_bytes_per_call"], "B",
            "%.1f MiB spill file at the end of recording (%.1f MiB on disk)"
            % (big["spill_file_bytes"] / MIB, big["spill_disk_bytes"] / MIB))
        row("%s calls: finalize" % tag, big["finalize_s"], "s",
            "wall; analysis + HDF5 write (CPU %.1f s)" % big["finalize_cpu_s"])
        row("%s calls: finalize rate" % tag, big["calls"] / big["finalize_s"] / 1e6,
            "M/s", "calls per second of finalize, 1 recording thread")
        row("%s calls: peak RSS (VmHWM)" % tag, peak_hwm / MIB, "MiB",
            "incl. finalize; %.1f MiB before sps_setup" %
            (big["vmhwm_before_setup_kib"] / 1024.0))
        row("%s calls: peak RSS (ru_maxrss)" % tag,
            big["maxrss_kib"] / 1024.0, "MiB", "getrusage")
        row("%s calls: file per call" % tag, big["file_bytes_per_call"], "B",
            "%.1f MiB file" % (big["file_bytes"] / MIB))
        row("%s calls: ratio recording / floor" % tag,
            big["ratio_record_floor"], "x",
            "default configuration, spill included; floor of the same run")
    else:
        print("warning: the %s-call run failed: %s" % (tag, big["_error"]),
              file=sys.stderr)
        row("%s calls" % tag, float("nan"), "-", "FAILED: " + big["_error"])

    # --- a small period's finalize: the file's fixed costs alone ---
    with tempfile.TemporaryDirectory(prefix="spanscope-bench-", dir=bindir) as tmp_small:
        small = R.run("bench_core", "small", "--n", 1000, "--reps", 41, "--out",
                      os.path.join(tmp_small, "small.h5"), fatal=False)
    if "_error" not in small:
        row("finalize of a 1 000-call period, 8 regions", small["finalize_ms_median"], "ms",
            "median of 41 periods in one session (a checkpoint's fixed cost)")
    else:
        row("finalize of a 1 000-call period", float("nan"), "-", "FAILED: " + small["_error"])

    # --- many threads: 64 x 2*10^6 calls recorded at once, then finalize ---
    many_t, many_n = 64, (200000 if q else 2000000)
    with tempfile.TemporaryDirectory(prefix="spanscope-bench-", dir=bindir) as tmp_many:
        many = R.run("bench_core", "many", "--threads", many_t, "--n", many_n, "--out",
                     os.path.join(tmp_many, "many.h5"), fatal=False)
    many_ok = "_error" not in many
    mtag = "%d threads x %s" % (many_t, "2x10^5" if q else "2x10^6")
    if many_ok:
        row("%s: record + finalize" % mtag, many["total_s"], "s",
            "wall; recording %.1f s, finalize %.1f s (its analysis %.1f s%s)"
            % (many["record_s"], many["finalize_s"], many.get("analysis_s", float("nan")),
               ", on two cores" if many.get("analysis_two_cores") == 1 else ""))
        row("%s: finalize rate" % mtag, many["finalize_calls_per_s"] / 1e6, "M/s",
            "calls per second of finalize")
        row("%s: peak RSS (VmHWM)" % mtag, many["vmhwm_kib"] / 1024.0, "MiB",
            "%.1f MiB after recording" % (many["vmhwm_after_record_kib"] / 1024.0))
        row("%s: file per call" % mtag, many["file_bytes_per_call"], "B", "")
    else:
        row(mtag, float("nan"), "-", "FAILED: " + many["_error"])

    # --- the table --------------------------------------------------------
    def fmt(v):
        if v != v:
            return "-"
        return "%.3f" % v if abs(v) < 10 else "%.1f" % v
    w0 = max(len(r["benchmark"]) for r in rows)
    w1 = max(len(fmt(r["value"])) for r in rows)
    print()
    print("%-*s  %*s  %-4s  %s" % (w0, "benchmark", w1, "value", "unit", "note"))
    print("-" * (w0 + w1 + 40))
    for r in rows:
        print("%-*s  %*s  %-4s  %s" % (w0, r["benchmark"], w1, fmt(r["value"]),
                                       r["unit"], r["note"]))

    targets = [
        ("memory-tracked pair, nothing allocated <= 1.05 x time-only pair",
         mem_pair / enabled <= 1.05,
         "%.3f x (%.1f ns vs %.1f ns)" % (mem_pair / enabled, mem_pair, enabled)),
        ("3 counters read with rdpmc <= 2 x time-only pair", None,
         "not measured here: rdpmc reads hardware events only, and this machine has no "
         "PMU; software counters (read()): %.1f x" % (cnt_pair / enabled)),
        ("enabled pair <= 1.3 x floor", ratio <= 1.3,
         "%.2f x (%.1f ns vs floor %.1f ns)" % (ratio, enabled, floor)),
        ("enabled pair, 2 threads <= 1.3 x floor", ratio2 <= 1.3,
         "%.2f x (%.1f ns per thread)" % (ratio2, enabled2)),
        ("disabled pair <= 1 ns", disabled <= 1.0,
         "%.2f ns (static lib %.2f ns)" % (disabled, disabled_s)),
        ("<= 16 B per call in memory", mem <= 16.0 + 0.05,
         "%.2f B" % mem),
        ("<= 6 B per call on disk (regular loop)",
         disk["loop"] <= 6 and disk["nested"] <= 6,
         "loop %.2f B, nested %.2f B" % (disk["loop"], disk["nested"])),
        ("peak RSS < 64 MiB for %s calls" % tag,
         (peak_hwm < 64 * MIB) if big_ok else None,
         "%.1f MiB (VmHWM)" % (peak_hwm / MIB) if big_ok else
         "not measured: the run failed"),
        ("finalize >= 25 M calls/s, %s calls" % tag,
         (big["calls"] / big["finalize_s"] >= 25e6) if big_ok else None,
         "%.1f M/s (%.2f s)" % (big["calls"] / big["finalize_s"] / 1e6, big["finalize_s"])
         if big_ok else "not measured"),
        ("%s: record + finalize <= 12 s" % mtag,
         (many["total_s"] <= 12) if many_ok and not q else None,
         "%.1f s, finalize %.1f M/s" % (many["total_s"], many["finalize_calls_per_s"] / 1e6)
         if many_ok else "not measured"),
        ("%s: peak RSS <= 64 MiB" % mtag,
         (many["vmhwm_kib"] <= 64 * 1024) if many_ok else None,
         "%.1f MiB (VmHWM)" % (many["vmhwm_kib"] / 1024.0) if many_ok else "not measured"),
        ("%s calls <= 1.15 x floor, spill included" % tag,
         (big["ratio_record_floor"] <= 1.15) if big_ok else None,
         "%.3f x (floor of the same run)" % big["ratio_record_floor"]
         if big_ok else "not measured: the run failed"),
        ("<= 2 B per call spilled (%s calls)" % tag,
         (big["spill_bytes_per_call"] <= 2.0) if big_ok else None,
         "%.2f B" % big["spill_bytes_per_call"] if big_ok else
         "not measured: the run failed"),
    ]
    targets.append(("emit_nvtx pair, no tool attached <= 1.1 x time-only pair",
                    nvtx_pair / nvtx_base <= 1.1 if nvtx_pair else None,
                    "%.3f x (%.1f ns vs %.1f ns)" % (nvtx_pair / nvtx_base, nvtx_pair, nvtx_base)
                    if nvtx_pair else "not measured: built without the nvtx3 headers"))
    if "recorded" in inst and "pair" in inst:
        targets.append(("instrumented call <= 2 x the region pair",
                        inst["recorded"] <= 2 * inst["pair"],
                        "%.1f ns vs pair %.1f ns (%.2f x)" % (
                            inst["recorded"], inst["pair"], inst["recorded"] / inst["pair"])))
        targets.append(("instrumented call <= 0.5 x uftrace's",
                        inst["recorded"] <= 0.5 * inst["uftrace"] if "uftrace" in inst else None,
                        "%.1f ns vs uftrace %.1f ns (%.2f x)" % (
                            inst["recorded"], inst["uftrace"], inst["recorded"] / inst["uftrace"])
                        if "uftrace" in inst
                        else "not measured: uftrace is not installed, or its run failed"))
    if "filtered" in inst:
        targets.append(("instrumented call left out <= 5 ns", inst["filtered"] <= 5.0,
                        "%.2f ns (glibc's no-op hooks: %s)" % (
                            inst["filtered"], "%.2f ns" % inst["noop"] if "noop" in inst
                            else "not measured")))
    print()
    for name, ok, detail in targets:
        verdict = "n/a" if ok is None else ("met" if ok else "MISSED")
        print("%-7s %-42s %s" % (verdict, name, detail))
    if big_ok:
        print("\n(default-config recording of %s calls: %.1f ns/pair = %.2f x "
              "the floor of the same run; %.2f B per call spilled)"
              % (tag, big["record_ns_per_pair"], big["ratio_record_floor"],
                 big["spill_bytes_per_call"]))

    out = {
        "machine": mach, "build_type": btype, "clock": info,
        "quick": q, "processes": procs, "repetitions": reps,
        "pairs_per_batch": pairs, "big_calls": big_n,
        "rows": rows,
        "targets": [{"target": n, "met": ok, "measured": d}
                    for n, ok, d in targets],
        "raw": {"big": big, "many": many, "mem": mres},
        "wall_s": round(time.monotonic() - t_start, 1),
    }
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(out, f, indent=1)
    print("results: %s (%.0f s)" % (json_path, out["wall_s"]))

    # --- timelines: convert and merge at scale ----------------------------
    here = os.path.dirname(os.path.abspath(__file__))
    print()
    tl = subprocess.call([sys.executable, os.path.join(here, "bench_timeline.py"),
                          "--build", a.build, "--spans", "1e6" if q else "1e7",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "timeline.json")])
    if tl:
        return tl

    # --- finalize against recording, the three workloads (issue 37 part 4,
    # docs/benchmarks.md "Finalize against recording"): ratios per run ---
    print()
    fr = subprocess.call([sys.executable, os.path.join(here, "finalize_ratio.py"),
                          "--bench", os.path.join(a.build, "bench", "bench_core"),
                          "--reps", "1" if q else "3", "--scale", "10" if q else "1",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "finalize_ratio.json")])
    if fr:
        return fr

    # --- MPI: the collective finalize at 1, 2, 4, 8 ranks (docs/mpi.md) ---
    print()
    mp = subprocess.call([sys.executable, os.path.join(here, "bench_mpi.py"),
                          "--build", a.build, "--calls", "100000" if q else "1000000",
                          "--reps", "3" if q else "5",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "mpi.json")])
    if mp:
        return mp
    # rank 0 against the middle ranks, 1 to 64 ranks (issue 37 part 3)
    print()
    ms = subprocess.call([sys.executable, os.path.join(here, "bench_mpi.py"),
                          "--build", a.build, "--scale", "--calls", "20000" if q else "100000",
                          "--reps", "2", "--max-ranks", "16" if q else "64",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "mpi_scale.json")])
    if ms:
        return ms
    # clock alignment with injected drift, both merges (issue 37 parts 2 and 5)
    print()
    dr = subprocess.call([sys.executable, os.path.join(here, "bench_drift.py"),
                          "--build", a.build, "--runs", "1" if q else "3",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "drift.json")])
    if dr:
        return dr

    # --- start-up: what linking libspanscope (and libspanscope_mpi) costs an
    # empty program (docs/mpi.md, "What is loaded"); a few seconds ----------
    print()
    st = subprocess.call([sys.executable, os.path.join(here, "bench_startup.py"),
                          "--build", a.build, "--runs", "20" if q else "50",
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "startup.json")])
    if st:
        return st

    # --- perf_event counters: one reading of a thread's counters, as every
    # begin and end of a session with SPS_TRACK_COUNTERS makes (read() per
    # group, rdpmc where a PMU allows it), beside the clock; its own table
    # (docs/perf-events.md) --------------------------------------------------
    pe = os.path.join(bindir, "bench_perfev")
    if os.path.exists(pe):
        print()
        subprocess.call([pe, "--n", "50000" if q else "200000", "--reps", "5" if q else "9"])
    # --- stack sampling at 1 kHz against the same loop unsampled -----------
    smp = os.path.join(bindir, "bench_sampling")
    if os.path.exists(smp):
        print()
        # many short alternating runs: this machine's noise between runs is
        # larger than the cost measured
        subprocess.call([smp, "--ms", "100" if q else "200", "--reps", "11" if q else "31"])
    # --- spanscope view (issue 36): index build against the finalize, index
    # size, first frame, /api/tiles p50/p95 at ten zooms, the server's peak
    # RSS; 10^7 and 10^8 spans (10^9 under SPANSCOPE_BENCH_BIG=1), --quick
    # 10^7 only (bench/bench_view.c, docs/view.md) ---------------------------
    bv = os.path.join(bindir, "bench_view")
    if os.path.exists(bv):
        print()
        rc = subprocess.call([bv] + (["--spans", "10000000"] if q else []))
        if rc:
            return rc

    # --- the Python face (needs the package installed: make py-install) ----
    pyjson = os.path.join(os.path.dirname(os.path.abspath(json_path)), "python.json")
    cmd = [sys.executable, os.path.join(here, "bench_python.py"), "--json", pyjson]
    if q:
        cmd.append("--quick")
    print()
    try:
        import spanscope  # noqa: F401
    except ImportError:
        print("Python face: not measured (spanscope is not installed for %s)"
              % sys.executable)
        return 0
    rc = subprocess.call(cmd)
    if rc:
        return rc
    # --- stack sampling of a Python loop at 1 kHz (the frame walker) --------
    print()
    rc = subprocess.call([sys.executable, os.path.join(here, "bench_sampling_python.py"),
                          "--json", os.path.join(os.path.dirname(os.path.abspath(json_path)),
                                                 "sampling_python.json")]
                         + (["--quick"] if q else ["--ms", "200", "--reps", "31"]))
    if rc:
        return rc
    # --- line profiles: per line executed, line_profiler alone and
    # use_line_profiler's regions (docs/line-profiles.md) -------------------
    print()
    lp = [sys.executable, os.path.join(here, "bench_line_profile.py"), "--json",
          os.path.join(os.path.dirname(os.path.abspath(json_path)), "line_profile.json")]
    return subprocess.call(lp + (["--quick"] if q else []))


if __name__ == "__main__":
    sys.exit(main())
