"""The ``spanscope`` command of a ``pip install`` (pyproject.toml
``[project.scripts]``): runs the C tool shipped in the wheel
(``spanscope/bin/spanscope``), the same binary CMake installs, and does
itself the subcommands that are Python's: ``plot`` (``spanscope.plots``,
over matplotlib or plotly), ``export json`` (scope-profiler's JSON,
``spanscope.write_json``), ``run`` (a Python script run and profiled,
scope-profiler's ``run``; also ``python -m spanscope run``) and ``tui`` (the
terminal browser, ``spanscope.integrations.tui``, over textual).  The C tool
hands plot and export json back here (``python_command``).  Errors: one
line ``spanscope: ...`` on stderr, exit
status 1 for bad data and 2 for bad usage or a missing feature, as the C
tool's (tools/cli.h).
"""

from __future__ import annotations

import os
import sys

EXIT_DATA = 1
EXIT_USAGE = 2


def _die(code: int, message: str) -> int:
    sys.stderr.write(f"spanscope: {message}\n")
    return code


def _binary() -> str | None:
    """The C tool: the wheel's, else $SPANSCOPE_CLI."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "spanscope")
    for path in (here, os.environ.get("SPANSCOPE_CLI", "")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _plot(argv: list[str]) -> int:
    # What a plot needs (matplotlib, or plotly for --backend plotly, pyarrow
    # for parquet data) is checked by spanscope.plots.main, which knows the
    # options: one line naming the extra to install, exit status 1.
    try:
        from spanscope import plots
    except ImportError as error:
        return _die(EXIT_USAGE, f"plot: the plots (spanscope.plots) are not available "
                                f"in this version of spanscope yet ({error})")
    main = getattr(plots, "main", None)
    if main is None:
        return _die(EXIT_USAGE, "plot: spanscope.plots has no main(argv) in this version yet")
    try:
        rc = main(argv)
    except SystemExit as stop:  # argparse
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    return int(rc or 0)


_JSON_HELP = """usage: spanscope export json FILE -o OUT [--ranks R[,R...]]
                             [--include PATTERN]... [--exclude PATTERN]...
                             [--gzip] [--indent N]

Writes FILE as scope-profiler's JSON (spanscope.write_json), which
scope-profiler's read_json and spanscope.read_json read back.  OUT ending
in .json or .json.gz (gzip) is the file; any other OUT is a directory, as
in scope-profiler, which gets profile.json (--gzip: profile.json.gz).
--indent N indents the JSON by N spaces (default: one line).
"""


def _parse_ranks(spec: str, limit: int = 4096) -> list[int] | None:
    """Ranks like "0,2-3" (the C tool's cli_parse_ranks: comma-separated
    ranks and inclusive ranges, at most limit of them); None when spec is
    not such a list."""
    out: list[int] = []
    for part in spec.split(","):
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            return None
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a or len(out) + (b - a + 1) > limit:
            return None
        out.extend(range(a, b + 1))
    return out


def _export_json(argv: list[str]) -> int:
    """export json FILE -o OUT [...]: argv after "export"."""
    args = {"include": [], "exclude": []}
    pos: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            sys.stdout.write(_JSON_HELP)
            return 0
        if a == "--gzip":
            args["gzip"] = True
            i += 1
            continue
        key = {"-o": "out", "--output": "out", "--ranks": "ranks", "--indent": "indent",
               "--include": "include", "--exclude": "exclude"}.get(a.split("=", 1)[0])
        if key:
            if "=" in a and a.startswith("--"):
                value = a.split("=", 1)[1]
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                return _die(EXIT_USAGE, f"export: {a} needs a value")
            if key in ("include", "exclude"):
                args[key].append(value)
            else:
                args[key] = value
        elif a.startswith("-") and a != "-":
            return _die(EXIT_USAGE, f"export: unknown option '{a}' (see spanscope export json --help)")
        else:
            pos.append(a)
        i += 1
    if pos[:1] == ["json"]:
        pos = pos[1:]
    if len(pos) != 1:
        return _die(EXIT_USAGE, "export: needs FORMAT and one FILE (see spanscope export --help)")
    if "out" not in args:
        return _die(EXIT_USAGE, "export: needs -o OUT (see spanscope export --help)")
    ranks = None
    if "ranks" in args:
        ranks = _parse_ranks(args["ranks"])
        if ranks is None:
            return _die(EXIT_USAGE, "export: --ranks needs ranks like 0,2-3 (at most 4096), "
                                    f"got '{args['ranks']}'")
    indent = None
    if "indent" in args:
        if not args["indent"].isdigit():
            return _die(EXIT_USAGE, f"export: --indent needs a number of spaces, "
                                    f"got '{args['indent']}'")
        indent = int(args["indent"])
    out = args["out"]
    if not out.endswith((".json", ".json.gz")):
        # scope-profiler's form: -o names a directory, which gets profile.json
        out = os.path.join(out, "profile.json" + (".gz" if args.get("gzip") else ""))
    elif args.get("gzip") and not out.endswith(".gz"):
        out += ".gz"
    import spanscope

    write_json = getattr(spanscope, "write_json", None)
    if write_json is None:
        return _die(EXIT_USAGE, "export: json (scope-profiler's JSON) lands with the "
                                "results API: spanscope.write_json is not available yet")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spanscope-export-") as tmp:
        try:
            results = _load_any(spanscope, pos[0], tmp)
            os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
            write_json(results, out, include=args["include"] or None,
                       exclude=args["exclude"] or None, ranks=ranks, indent=indent)
        except (OSError, ValueError, KeyError) as error:
            return _die(EXIT_DATA, f"export: {pos[0]}: {error}")
    return 0


def _load_any(spanscope, path: str, tmpdir: str):
    """The results of a profile (.h5, scope-profiler's JSON) or of a trace
    (Chrome JSON, Perfetto): a trace becomes an .h5 first, written by the C
    tool's convert (the one fold gives its calls parents and self times)."""
    if not path.endswith(".pftrace"):
        try:
            return spanscope.load(path)
        except spanscope.JSONProfileError:
            pass  # JSON, but a trace's, not scope-profiler's profile
    exe = _binary()
    if exe is None:
        raise OSError("a trace needs the spanscope binary to become a profile "
                      "(set SPANSCOPE_CLI, or run spanscope convert FILE run.h5 first)")
    import subprocess

    out = os.path.join(tmpdir, "trace.h5")
    p = subprocess.run([exe, "convert", path, out], capture_output=True, text=True)
    if p.returncode != 0:
        raise OSError(p.stderr.strip().removeprefix("spanscope: ") or "convert failed")
    return spanscope.read_h5(out)


def _run_parser():
    """``spanscope run``'s options: scope-profiler 0.7.5's ``run`` (its
    __main__._parse_run_args), same names and meanings."""
    import argparse

    p = argparse.ArgumentParser(
        prog="spanscope run",
        description="Run a Python script with its regions recorded (scope-profiler's "
                    "`run`): explicit regions, or every function with --recursive.")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--outfile", default=None,
                     help="the profile (default: profiling_data.h5); .json / .json.gz "
                          "writes scope-profiler's JSON, .html the report")
    out.add_argument("--no-output", action="store_true",
                     help="keep the results in memory, write no file")
    p.add_argument("--config", metavar="FILE",
                   help="TOML file with the settings ([profiling] table)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not print the summary table after the run")
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--recursive", action="store_true", default=None,
                     help="every Python function of the script is a region")
    rec.add_argument("--no-recursive", dest="recursive", action="store_false",
                     help="explicit regions only, over the configuration file")
    p.add_argument("--all", action="store_true",
                   help="with recursive tracing, the standard library's and installed "
                        "packages' functions too")
    p.add_argument("--include", dest="include_patterns", action="append", default=[],
                   metavar="GLOB", help="with recursive tracing, record only functions whose "
                                        "name (module.qualname) matches (repeatable)")
    p.add_argument("--exclude", dest="exclude_patterns", action="append", default=[],
                   metavar="GLOB", help="with recursive tracing, leave out functions whose "
                                        "name matches (repeatable)")
    p.add_argument("--entrypoint", metavar="NAME",
                   help="record the function named NAME under that name (implies "
                        "--recursive)")
    p.add_argument("--line-profile", action="store_true", default=None,
                   help="also collect line-by-line timings of the profiled functions with "
                        "line_profiler (use_line_profiler; needs the line_profiler package: "
                        "spanscope[line-profiler]); `spanscope line-profile FILE` prints "
                        "them (docs/line-profiles.md)")
    p.add_argument("--memory-profile", action="store_true", default=None,
                   help="record allocations with memray (use_memray; needs the memray "
                        "package: spanscope[memray]); writes an adjacent .memray.bin "
                        "capture (docs/memray.md)")
    p.add_argument("--buffer-limit", type=int, default=None,
                   help="accepted for compatibility (spanscope's buffers are chunked)")
    p.add_argument("--aggregation-mode", action="store_true", default=None,
                   help="statistics per region only, no per-call events")
    p.add_argument("--label", default=None, help="the run's label in the profile")
    p.add_argument("--tag", dest="region_tags", action="append", default=None,
                   metavar="TAG", help="record only regions carrying this tag (repeatable)")
    p.add_argument("--enable-tag", dest="enable_tags", action="append", default=None,
                   metavar="TAG", help="record the regions of this opt-in tag (repeatable)")
    mpi = p.add_mutually_exclusive_group()
    mpi.add_argument("--mpi-calls", dest="mpi_calls", action="store_true", default=None,
                     help="record mpi4py's calls as regions (profile_mpi_calls)")
    mpi.add_argument("--no-mpi-calls", dest="mpi_calls", action="store_false",
                     help="do not record mpi4py's calls (default)")
    p.add_argument("--follow", action="store_true",
                   help="profile the script's Python child processes too (os.fork, "
                        "subprocess, multiprocessing with fork, spawn, forkserver) and "
                        "merge every process's part into the one output: .h5, or a "
                        "trace (.json / .json.gz Chrome trace JSON, .pftrace), one "
                        "process each (docs/process-trees.md)")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("script_args", nargs=argparse.REMAINDER,
                   help="its arguments (sys.argv[1:] in the script)")
    return p


#: options of ``run`` (Python's and the native one) that take the next
#: argument as their value (tools/cmd_run.c's takes_value, the same list)
_RUN_VALUE_OPTIONS = ("-o", "--output", "--outfile", "--label", "--memory-limit",
                      "--sample-hz", "--config", "--include", "--exclude", "--entrypoint",
                      "--buffer-limit", "--tag", "--enable-tag")


def _native_run(argv: list[str], what: str = "native") -> bool:
    """Whether ``run`` ARGV is ``run [options] -- CMD ...`` with CMD not a
    Python script (no .py/.pyw suffix): the C tool's native run
    (docs/native-run.md), as tools/cmd_run.c decides it.  what="help":
    whether -h/--help comes among the options (before the script or --)."""
    skip = False
    for k, a in enumerate(argv):
        if skip:
            skip = False
        elif a == "--":
            return (what == "native" and k + 1 < len(argv)
                    and not argv[k + 1].endswith((".py", ".pyw")))
        elif not a.startswith("-") or a == "-":
            return False  # the script
        elif what == "help" and a in ("-h", "--help"):
            return True
        else:
            skip = a in _RUN_VALUE_OPTIONS
    return False


def _run_native(argv: list[str]) -> int:
    """``run [options] -- CMD ...``: the C tool runs CMD (it execs it, so
    CMD's output, signals and exit status are its own).  The console script
    (and ``python -m spanscope``) becomes the tool, as entry() does for the
    C subcommands; called as main(["run", ...]) it runs as a child."""
    exe = _binary()
    if exe is None:
        return _die(EXIT_USAGE, "run: running a program (run -- CMD) needs the spanscope "
                                "binary (spanscope/bin/spanscope) or SPANSCOPE_CLI")
    if argv == ["--usage-native"]:  # run --help: the native run's usage first
        return _run_binary(exe, ["run", "--usage-native"])
    if sys.argv[1:] == ["run", *argv]:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(exe, [exe, "run", *argv])
    return _run_binary(exe, ["run", *argv])


def _run(argv: list[str]) -> int:
    """run [options] SCRIPT [ARGS...]: SCRIPT as __main__ in a session
    (ProfileManager.setup, then ProfileManager._exec_script, the body of
    profile_script and run_script), finalized when it ends, however it
    ends.  --include / --exclude / --entrypoint are run_script's filters
    (--entrypoint implies --recursive, as in scope-profiler; the patterns
    apply to recursive tracing only).  The
    script's own exit status is the command's (SystemExit and exceptions
    pass through, after the profile is written).  Any other program:
    ``run [options] -- CMD ...``, the C tool's (_run_native)."""
    # run [options] -- CMD: any program, the C tool's (unless it handed this
    # run over itself: a Python script after "--")
    if not os.environ.pop("SPANSCOPE_RUN_FORWARDED", None):
        if _native_run(argv):
            return _run_native(argv)
        if _native_run(argv, "help") and _binary():
            _run_native(["--usage-native"])
    try:
        args = _run_parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help, or bad usage
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    from spanscope.options import FeatureNotAvailableError
    from spanscope.profile_manager import ProfileManager
    from spanscope.profile_manager._scripts import _check_python_script

    try:
        _check_python_script(args.script)
    except FeatureNotAvailableError as error:
        return _die(EXIT_USAGE, f"run: {error}")
    if not os.path.isfile(args.script):
        return _die(EXIT_DATA, f"run: can't open file {args.script!r}")
    setup = {"replace": True,
             "recursive_profile": (True if args.recursive or args.all or args.entrypoint
                                   else args.recursive),
             "use_line_profiler": args.line_profile, "use_memray": args.memory_profile,
             "buffer_limit": args.buffer_limit, "aggregation_mode": args.aggregation_mode,
             "profile_mpi_calls": args.mpi_calls, "label": args.label,
             "region_tags": args.region_tags, "enable_tags": args.enable_tags,
             "config_path": args.config}
    if args.no_output:
        setup["deactivate_file_output"] = True
    elif args.outfile is not None:
        setup["file_path"] = args.outfile
    follow = None  # --follow: every process its part, merged at the end (_follow.py)
    if args.follow:
        from spanscope._follow import FollowRun
        if args.no_output:
            return _die(EXIT_USAGE, "run: --follow merges into a file: --no-output "
                                    "cannot be used with it")
        try:
            follow = FollowRun.start(args.outfile or "profiling_data.h5", {
                "recursive": setup["recursive_profile"], "all": args.all,
                "include": args.include_patterns, "exclude": args.exclude_patterns,
                "aggregation_mode": args.aggregation_mode, "label": args.label,
                "enable_tags": args.enable_tags, "region_tags": args.region_tags})
        except (ValueError, OSError) as error:
            return _die(EXIT_USAGE, f"run: --follow: {error}")
        setup["file_path"] = follow.part
    from contextlib import nullcontext
    try:
        with follow.session_rank() if follow else nullcontext():
            # the environment and SPANSCOPE_CONFIG's file under the options
            # given here (docs/configuration.md: what a C program's auto-setup
            # reads, read the same way); a stray variable's warning is one
            # line, as the C tool's
            import warnings
            with warnings.catch_warnings(record=True) as stray:
                warnings.simplefilter("always", RuntimeWarning)
                ProfileManager.setup_from_env(
                    **{k: v for k, v in setup.items() if v is not None})
            for w in stray:
                sys.stderr.write(f"spanscope: {w.message}\n")
    except FeatureNotAvailableError as error:
        if follow is not None:
            follow.abandon()
        return _die(EXIT_USAGE, f"run: {error}")
    except (TypeError, ValueError, OSError, ImportError, RuntimeError) as error:
        # ImportError: --memory-profile without memray, --line-profile without line_profiler
        if follow is not None:
            follow.abandon()
        return _die(EXIT_USAGE, f"run: {error}")
    if follow is not None:  # a configuration file's settings reach the children too
        follow.configured(ProfileManager.get_config())
    recursive = (args.all or args.entrypoint is not None
                 or ProfileManager.get_config().recursive_profile)
    lines = getattr(ProfileManager, "_line_run", None)
    tracing = nullcontext()
    if recursive and lines is not None:
        # --line-profile --recursive: the traced functions' lines too, under
        # their regions, with the tracer's own filters (scope-profiler's run)
        from spanscope.profile_manager._scripts import _system_prefixes
        tracing = lines.trace_recursive(None if args.all else _system_prefixes(),
                                        tuple(args.include_patterns),
                                        tuple(args.exclude_patterns), args.entrypoint)
    try:
        with tracing:
            ProfileManager._exec_script(
                args.script, args.script_args, recursive,
                only_user_code=not args.all, include_patterns=tuple(args.include_patterns),
                exclude_patterns=tuple(args.exclude_patterns), entrypoint=args.entrypoint,
                root_region=False)  # scope-profiler's run: explicit regions only unless recursive
    finally:
        if follow is None:
            ProfileManager.finalize(verbose=not args.quiet, return_results=args.no_output)
        elif follow.end(ProfileManager):  # the root: merged every part
            for line in follow.report():
                sys.stderr.write(f"spanscope: {line}\n")
            if not args.quiet and follow.error is None and follow.out_path.endswith(".h5"):
                from spanscope.results import read_h5
                read_h5(follow.out_path).print_summary()
    return EXIT_DATA if follow is not None and follow.error is not None else 0


def _import_native(argv: list[str]) -> int:
    """import-native INPUTS... [-o OUT.h5] [--label L] [--merge PROFILE.h5] [-q]:
    scope-profiler's `import-native`: the per-rank files of the C and
    Fortran region APIs (.spt traces, *_rank<NNNNN>.h5 profiles, folders of
    them) as one HDF5 profile (spanscope.results.convert_traces), optionally
    merged with a profile of the run's Python side; prints its summary."""
    import argparse

    p = argparse.ArgumentParser(
        prog="spanscope import-native",
        description="Merge the per-rank files written by the C and Fortran region APIs "
                    "(*.spt traces, *_rank<NNNNN>.h5 profiles, folders of them) into one "
                    "HDF5 profile (scope-profiler's import-native).")
    p.add_argument("inputs", nargs="+", help="*.spt traces, *_rank<NNNNN>.h5 profiles, "
                                             "and/or folders holding them")
    p.add_argument("-o", "--output", default="profiling_data.h5",
                   help="the HDF5 file to write (default: profiling_data.h5)")
    p.add_argument("--label", default=None, help="the run's name in summaries and charts")
    p.add_argument("--merge", metavar="PROFILE.h5", default=None,
                   help="a profile of the run's Python side to combine the native output with")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the summary")
    try:
        args = p.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    from spanscope.results import (TraceFormatError, convert_traces, load_traces,
                                   merge_results, read_h5, write_profile)
    try:
        if args.merge is None:
            path = convert_traces(args.inputs, args.output, label=args.label)
        else:
            path = write_profile(merge_results(read_h5(args.merge), load_traces(args.inputs),
                                               label=args.label, file_path=args.output),
                                 args.output)
    except (OSError, ValueError, TraceFormatError) as error:
        return _die(EXIT_DATA, f"import-native: {error}")
    if not args.quiet:
        read_h5(path).print_summary()
        print(f"\nwrote {path}")
    return 0


def _line_profile(argv: list[str]) -> int:
    """line-profile FILE [--ranks R...] [--include P...] [--exclude P...]
    [--function RE] [--region RE]: scope-profiler's `line-profile`, the
    line profiles a use_line_profiler=True run stored, as tables
    (spanscope.results._line_cli).  Exit 1 for a missing or unreadable
    file, 2 for bad usage (a bad rank list or pattern)."""
    import re

    from spanscope.results._line_cli import RankSpecError, main as line_profile_main
    try:
        return line_profile_main(argv)
    except SystemExit as stop:  # argparse: --help, or bad usage
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    except re.error as error:
        return _die(EXIT_USAGE, f"line-profile: bad regular expression: {error}")
    except RankSpecError as error:
        return _die(EXIT_USAGE, f"line-profile: --ranks: {error}")
    except (OSError, ValueError) as error:  # missing, corrupt, not a profile
        return _die(EXIT_DATA, f"line-profile: {error}")


def _native_lines(argv: list[str]) -> int:
    """native-lines INPUTS... [--top N] [--no-source] [--rank R]:
    scope-profiler's `native-lines`, the hottest source lines of each region
    from sampled runs: the .sps files sp_finalize writes when the C face
    samples (sp_start_sampling, SCOPE_PROFILER_SAMPLE_HZ; folders of them),
    and spanscope files with stack samples (.h5: with_samples=True,
    sps_sampling_start), per region its self samples by line
    (spanscope.results._native_samples).  Exit 1 for a missing or bad file,
    2 for bad usage."""
    import argparse

    from spanscope.results import _native_samples as ns
    p = argparse.ArgumentParser(
        prog="spanscope native-lines",
        description="Show which source lines of each region the sampler caught: from the "
                    f"*{ns.SAMPLES_SUFFIX} files of the C face's sampling (sp_start_sampling; "
                    "build the program with -g) and from spanscope files with stack samples.")
    p.add_argument("inputs", nargs="+", help=f"*{ns.SAMPLES_SUFFIX} files, folders holding "
                                             "them, and/or spanscope .h5 files with samples")
    p.add_argument("--top", type=int, default=10, help="lines to show per region (default: 10)")
    p.add_argument("--no-source", action="store_true",
                   help="do not print the source text of each line")
    p.add_argument("--rank", type=int, default=None,
                   help="spanscope files: only this rank's samples (default: all)")
    try:
        args = p.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    if args.top < 1:
        return _die(EXIT_USAGE, "native-lines: --top must be at least 1")
    try:
        # every input checked before any output: a bad one fails the command
        inputs = [(a, None) if os.path.isfile(a) and _is_hdf5(a) else
                  (a, ns.find_sample_files(a)) for a in args.inputs]
        for path, found in inputs:
            if found is None:
                profile = ns.file_line_profile(path, args.rank)
                print(f"{path}  (spanscope stack samples)\n")
                print(ns.format_line_profile(profile, top=args.top, source=not args.no_source))
                print()
                continue
            for sps in found:
                samples = ns.read_samples(sps)
                print(f"{sps}  (rank {samples.rank}, {samples.hz} Hz)\n")
                print(ns.format_line_profile(ns.line_profile(samples), top=args.top,
                                             source=not args.no_source))
                print()
    except ns.SymbolizerError as error:
        return _die(EXIT_USAGE, f"native-lines: {error}")
    except (OSError, ValueError) as error:  # missing, truncated, not a sample file
        return _die(EXIT_DATA, f"native-lines: {error}")
    return 0


def _is_hdf5(path: str) -> bool:
    """Whether path starts with HDF5's signature (a spanscope file)."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89HDF\r\n\x1a\n"
    except OSError:
        return False


def python_command(argv: list[str]) -> int:
    """Runs a subcommand that is Python's: argv[0] is "plot", "export",
    "run", "tui", "line-profile", "native-lines", or "inspect" of
    scope-profiler's JSON profile."""
    if not argv:
        return _die(EXIT_USAGE, "missing command (see spanscope --help)")
    if argv[0] == "plot":
        return _plot(argv[1:])
    if argv[0] == "export":
        return _export_json(argv[1:])
    if argv[0] == "run":
        return _run(argv[1:])
    if argv[0] == "inspect":
        return _inspect_json(argv[1:])
    if argv[0] == "tui":
        from spanscope.integrations.tui import main as tui_main
        return tui_main(argv[1:])
    if argv[0] == "import-native":
        return _import_native(argv[1:])
    if argv[0] == "line-profile":
        return _line_profile(argv[1:])
    if argv[0] == "native-lines":
        return _native_lines(argv[1:])
    return _die(EXIT_USAGE, f"{argv[0]}: not a Python subcommand")


def _is_json_profile(path: str) -> bool:
    """True when path holds scope-profiler's JSON profile (its document
    starts with the "format" member naming it, as scope-profiler and
    spanscope write it), not a trace's JSON: the first bytes are read,
    inflated for gzip."""
    import gzip
    import re

    from spanscope.results._jsonio import FORMAT_NAME
    if not os.path.isfile(path):  # a FIFO or a device is never opened here
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                head = f.read(4096)
    except (OSError, EOFError):
        return False
    pattern = rb'\A\s*\{\s*"format"\s*:\s*"' + re.escape(FORMAT_NAME.encode()) + rb'"'
    return re.match(pattern, head) is not None


def _inspect_json(argv: list[str]) -> int:
    """inspect FILE for scope-profiler's JSON profile (the C tool reads
    traces' JSON): spanscope.results' inspect_file, as scope-profiler's
    inspect prints it."""
    from spanscope.results import inspect_file
    try:
        inspect_file(argv[0])
    except (OSError, ValueError) as error:
        return _die(EXIT_DATA, f"inspect: {argv[0]}: {error}")
    return 0


def _is_python_command(argv: list[str]) -> bool:
    if argv[:1] in (["plot"], ["run"], ["tui"], ["import-native"], ["line-profile"],
                    ["native-lines"]):
        return True
    if argv[:1] == ["inspect"] and len(argv) == 2 and _is_json_profile(argv[1]):
        return True
    positional = [a for a in argv[1:] if not a.startswith("-")]
    return argv[:1] == ["export"] and positional[:1] == ["json"]


def _forward(stream, out) -> None:
    """Copies the child's stream to out (sys.stdout / sys.stderr as they
    are now: a test's capture, a notebook's cell) as it arrives."""
    for chunk in iter(lambda: stream.read1(65536), b""):
        out.write(chunk.decode("utf-8", errors="replace"))
        out.flush()


def _run_binary(exe: str, argv: list[str]) -> int:
    """Runs the C tool as a child and returns its exit status (128 + N when
    a signal N ended it, as a shell reports it), its output copied to this
    process's sys.stdout and sys.stderr.  Ctrl-C here is passed on to it
    (a `spanscope view` server stops), and its status is still returned."""
    import signal
    import subprocess
    import threading

    sys.stdout.flush()
    sys.stderr.flush()
    child = subprocess.Popen([exe, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pumps = [threading.Thread(target=_forward, args=(child.stdout, sys.stdout), daemon=True),
             threading.Thread(target=_forward, args=(child.stderr, sys.stderr), daemon=True)]
    for pump in pumps:
        pump.start()
    while True:
        try:
            rc = child.wait()
            break
        except KeyboardInterrupt:
            child.send_signal(signal.SIGINT)
    for pump in pumps:
        pump.join()
    child.stdout.close()
    child.stderr.close()
    return 128 - rc if rc < 0 else rc


def main(argv: list[str] | None = None) -> int:
    """The ``spanscope`` command, callable from Python: ``main(["report",
    "run.h5"])`` runs it and returns its exit status, its output on
    sys.stdout / sys.stderr (scope-profiler's ``__main__.main(argv)``).
    plot, export json, run and inspect of a JSON profile are done here;
    the rest by the C tool, run as a child process (a scope-profiler JSON
    profile among its input files handed over as .h5; scope-profiler's
    ``report FILE -o PAGE.html`` runs ``html``).  Never replaces the calling process (entry() does,
    for the console script and ``python -m spanscope``)."""
    argv = sys.argv[1:] if argv is None else [os.fspath(a) for a in argv]
    if _is_python_command(argv):
        return python_command(argv)
    exe = _binary()
    if exe is None:
        return _die(EXIT_USAGE, "the spanscope binary is not in this installation "
                                "(spanscope/bin/spanscope); build it with CMake or "
                                "set SPANSCOPE_CLI")
    if argv[:1] == ["report"] and any(a in _OUTPUT_OPTIONS or a.startswith("--output=")
                                      for a in argv[1:]):
        # scope-profiler's `report FILE -o PAGE.html` is spanscope's html page
        # (spanscope's report prints the table and writes no file)
        argv = ["html", *argv[1:]]
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spanscope-json-") as tmp:
        try:
            argv = _json_profiles_as_h5(argv, tmp)
        except (OSError, ValueError) as error:
            return _die(EXIT_DATA, f"{argv[0]}: {error}")
        return _run_binary(exe, argv)


#: options of the C tool whose value is an output path (never an input)
_OUTPUT_OPTIONS = ("-o", "--output")


def _rewritten(argv: list[str]) -> bool:
    """Whether main() hands the C tool other arguments than argv (a JSON
    profile among the inputs, scope-profiler's report -o)."""
    if argv[:1] == ["report"] and any(a in _OUTPUT_OPTIONS or a.startswith("--output=")
                                      for a in argv[1:]):
        return True
    prev = ""
    for a in argv[1:]:
        if prev not in _OUTPUT_OPTIONS and not a.startswith("-") and os.path.isfile(a) \
                and _is_json_profile(a):
            return True
        prev = a
    return False


def _json_profiles_as_h5(argv: list[str], tmpdir: str) -> list[str]:
    """argv with each input file that is scope-profiler's JSON profile
    replaced by the same run as .h5 (write_h5_profile: its calls written
    in C) under tmpdir, named by the JSON file's stem, so that the C tool's
    subcommands (diff, report, merge, convert, ...) read JSON profiles as
    scope-profiler's do (the C tool reads traces' JSON itself)."""
    out, skip = [], False
    for k, a in enumerate(argv):
        if k == 0 or skip or a.startswith("-") or not os.path.isfile(a) \
                or not _is_json_profile(a):
            skip = a in _OUTPUT_OPTIONS
            out.append(a)
            continue
        from spanscope.results import read_json
        from spanscope.results._jsonio import write_h5_profile
        stem = os.path.basename(a).split(".", 1)[0] or "profile"
        sub = os.path.join(tmpdir, str(k))
        os.makedirs(sub)
        out.append(os.fspath(write_h5_profile(read_json(a), os.path.join(sub, stem + ".h5"))))
    return out


def entry() -> int:
    """The process's entry point (the console script, ``python -m
    spanscope``): a subcommand of the C tool replaces this process with it
    (os.execv: its signals, exit status and terminal are the tool's own,
    and no Python waits beside it); the Python subcommands run here."""
    argv = sys.argv[1:]
    exe = _binary()
    if _is_python_command(argv) or exe is None or _rewritten(argv):
        return main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe, *argv])
    return EXIT_USAGE  # not reached


if __name__ == "__main__":
    sys.exit(entry())
