"""The ``spanscope`` command of a ``pip install`` (pyproject.toml
``[project.scripts]``): runs the C tool shipped in the wheel
(``spanscope/bin/spanscope``), the same binary CMake installs, and does
itself the two subcommands that are Python's: ``plot`` (``spanscope.plots``,
over matplotlib or plotly) and ``export json`` (scope-profiler's JSON,
``spanscope.write_json``).  The C tool hands those two back here
(``python_command``).  Errors: one line ``spanscope: ...`` on stderr, exit
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

Writes FILE as scope-profiler's JSON (spanscope.write_json), which
scope-profiler's read_json and spanscope.read_json read back.
"""


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
        key = {"-o": "out", "--output": "out", "--ranks": "ranks",
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
        try:
            ranks = [int(r) for r in args["ranks"].split(",")]
        except ValueError:
            return _die(EXIT_USAGE, f"export: --ranks needs ranks like 0,1, got '{args['ranks']}'")
    import spanscope

    write_json = getattr(spanscope, "write_json", None)
    if write_json is None:
        return _die(EXIT_USAGE, "export: json (scope-profiler's JSON) lands with the "
                                "results API: spanscope.write_json is not available yet")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spanscope-export-") as tmp:
        try:
            results = _load_any(spanscope, pos[0], tmp)
            write_json(results, args["out"], include=args["include"] or None,
                       exclude=args["exclude"] or None, ranks=ranks)
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


def python_command(argv: list[str]) -> int:
    """Runs a subcommand that is Python's: argv[0] is "plot" or "export"."""
    if not argv:
        return _die(EXIT_USAGE, "missing command (see spanscope --help)")
    if argv[0] == "plot":
        return _plot(argv[1:])
    if argv[0] == "export":
        return _export_json(argv[1:])
    return _die(EXIT_USAGE, f"{argv[0]}: not a Python subcommand")


def _is_python_command(argv: list[str]) -> bool:
    if argv[:1] == ["plot"]:
        return True
    positional = [a for a in argv[1:] if not a.startswith("-")]
    return argv[:1] == ["export"] and positional[:1] == ["json"]


def main(argv: list[str] | None = None) -> int:
    """The console script: the C tool, or plot / export json here."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if _is_python_command(argv):
        return python_command(argv)
    exe = _binary()
    if exe is None:
        return _die(EXIT_USAGE, "the spanscope binary is not in this installation "
                                "(spanscope/bin/spanscope); build it with CMake or "
                                "set SPANSCOPE_CLI")
    sys.stdout.flush()
    os.execv(exe, [exe, *argv])
    return EXIT_USAGE  # not reached


if __name__ == "__main__":
    sys.exit(main())
