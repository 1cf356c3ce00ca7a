"""``spanscope line-profile FILE``: scope-profiler 0.7.5's ``line-profile``
subcommand (its ``line_profile_cli``): the line profiles a
``use_line_profiler=True`` run stored (``rank<N>/line_profile``), printed as
tables (results/_lines.py's :func:`format_line_profile`), from an HDF5
profile or scope-profiler's JSON profile.

Options as scope-profiler's: ``--ranks/--rank/-r`` (default 0; comma lists
and ranges, ``0,2-3``), ``--include/-i`` and ``--exclude/-e`` (regular
expressions on region names, as the other subcommands), ``--function`` and
``--region`` (regular expressions searched in the names).
"""

from __future__ import annotations

import argparse
import sys
from html import escape
from io import StringIO

from spanscope.results._jsonio import read_profile
from spanscope.results._lines import format_line_profile

__all__ = ["RankSpecError", "main", "parse_ranks", "print_line_profile"]


class RankSpecError(ValueError):
    """A ``--ranks`` value that is not a list of ranks and ranges."""


def parse_ranks(spec: str) -> list[int]:
    """Ranks of a specification like ``1-3,5`` (scope-profiler's
    parse_ranks); RankSpecError (a ValueError) naming the part that is not
    a rank or range."""
    ranks = []
    for part in spec.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not lo.strip().isdigit() or (sep and not hi.strip().isdigit()):
            raise RankSpecError(f"not a rank or a range of ranks: {part!r}")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise RankSpecError(f"empty range of ranks: {part!r}")
        if b - a > 1 << 20:
            raise RankSpecError(f"range of ranks too large: {part!r}")
        ranks.extend(range(a, b + 1))
    return ranks


def print_line_profile(file_path, ranks=None, function=None, region=None, include=None,
                       exclude=None, stream=None, display_html=False) -> None:
    """Prints the line profiles stored in one profile (an HDF5 file or
    scope-profiler's JSON) as scope-profiler's ``print_line_profile``:
    ``Line profile: FILE``, then one table per (rank, region, function)
    (:func:`format_line_profile`).  ranks: those only (None: every rank
    that has line profiles).  ``display_html=True`` (a notebook) shows the
    text in a ``<pre>`` block through IPython instead.  FileNotFoundError /
    CorruptProfileError as read_profile."""
    results = read_profile(file_path)
    text = format_line_profile(results.line_profile, str(results.file_path), ranks=ranks,
                               function=function, region=region, include=include,
                               exclude=exclude)
    if display_html:
        from IPython.display import HTML, display
        display(HTML(f"<pre>{escape(text)}</pre>"))
        return
    out = sys.stdout if stream is None else stream
    out.write(text)


def build_parser(prog: str = "spanscope line-profile") -> argparse.ArgumentParser:
    """The subcommand's options (scope-profiler's line-profile)."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Print persisted line-profiler timings from an HDF5 profile.")
    parser.add_argument("file", help="HDF5 profiling file")
    parser.add_argument("--ranks", "--rank", "-r", nargs="*", dest="ranks", default=["0"],
                        metavar="RANK",
                        help="Ranks to include. Supports comma-separated values and ranges "
                             "(default: 0).")
    parser.add_argument("--include", "-i", nargs="*",
                        help="Region names to include (regex patterns).")
    parser.add_argument("--exclude", "-e", nargs="*",
                        help="Region names to exclude (regex patterns).")
    parser.add_argument("--function", help="regular expression selecting function names")
    parser.add_argument("--region", help="regular expression selecting region names")
    return parser


def main(argv=None, stream=None) -> int:
    """``spanscope line-profile`` (scope-profiler's ``line-profile``):
    0 when printed; argparse's exit for bad usage (SystemExit 2);
    RankSpecError for a bad rank list, re.error for a bad pattern, and the
    reader's errors for a missing or corrupt file (the console command
    turns them into one line and an exit status)."""
    args = build_parser().parse_args(argv)
    ranks = None
    if args.ranks:
        ranks = sorted({r for spec in args.ranks for r in parse_ranks(spec)})
    print_line_profile(args.file, ranks=ranks, function=args.function, region=args.region,
                       include=args.include, exclude=args.exclude, stream=stream)
    return 0
