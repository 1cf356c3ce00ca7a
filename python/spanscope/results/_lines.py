"""Line profiles: scope-profiler 0.7.5's line-profiler records on spanscope.

A ``use_line_profiler=True`` run hands the functions of each region to the
real line_profiler (``line_profiler.LineProfiler``, one per region;
profile_manager/_lines.py drives it).  What line_profiler measured travels
as scope-profiler's *records*, one per (region, function)::

    {"region": str, "filename": str, "function": str, "first_lineno": int,
     "line_numbers": int64[n], "hits": int64[n], "times": float64[n],
     "unit": float,                       # seconds per unit of ``times``
     "source": str, "source_first_lineno": int}   # when it could be read

and every way they travel is here:

* **from line_profiler** -- :func:`records_from_stats` turns a
  ``LineStats`` (``LineProfiler.get_stats()``) into records, minus an
  earlier snapshot (a finalize is a checkpoint: each file holds what ran in
  its period), with the function's source read at once
  (:func:`line_profile_source`, as scope-profiler stores it so that a
  report shows the code on any machine);
* **HDF5** -- scope-profiler's layout, ``rank<N>/line_profile/<index>/``
  with attributes ``region``, ``filename``, ``function``, ``first_lineno``,
  ``unit`` (and ``source``, ``source_first_lineno``) and datasets
  ``line_numbers`` (int64), ``hits`` (int64), ``times`` (float64):
  :func:`write_line_profile`, :func:`append_line_profile`,
  :func:`read_line_profile_file` (which checks everything it reads: a
  malformed group is a :class:`LineProfileDataError` naming it);
* **text** -- :func:`format_line_profile`, the tables of scope-profiler's
  ``line-profile`` subcommand (line, hits, time, per hit, % time, source:
  every line of the function, the ones that never ran without timings).
"""

from __future__ import annotations

import linecache
import os
import re

import numpy as np

from spanscope.results._errors import CorruptProfileError

__all__ = ["LINE_PROFILE_GROUP", "LineProfileDataError", "append_line_profile",
           "format_line_profile", "line_profile_rows", "line_profile_source",
           "read_line_profile_file", "read_line_profile_group", "records_from_stats",
           "write_line_profile"]

#: the group of a rank<N> group that holds its line profiles
LINE_PROFILE_GROUP = "line_profile"
#: scope-profiler's bound on a stored source (an HDF5 attribute)
MAX_STORED_SOURCE_CHARS = 60_000
#: a reader's bound on one record's lines (a function of a million lines is
#: not a Python function: the file is hostile or corrupt)
MAX_RECORD_LINES = 1_000_000
#: what a line of no source shows (scope-profiler's words)
_NO_SOURCE = "<source unavailable>"


class LineProfileDataError(CorruptProfileError):
    """A ``rank<N>/line_profile`` group that is not scope-profiler's layout
    (a missing or mistyped dataset, arrays of different lengths, a bad
    attribute); the message names the group."""


# --------------------------------------------------------------------------
# from line_profiler
# --------------------------------------------------------------------------

def line_profile_source(record: dict) -> dict:
    """The profiled function's source lines, to store with its timings, as
    scope-profiler's ``ProfileManager._line_profile_source``: from the
    lower of ``first_lineno`` and the first timed line to the last timed
    line, read (linecache) from ``record["filename"]`` as it was run.
    ``{"source": text, "source_first_lineno": n}``, or {} when the source
    cannot be read or is longer than an attribute may hold."""
    numbers = [int(n) for n in record["line_numbers"]]
    if not numbers:
        return {}
    first = min(int(record["first_lineno"]), *numbers)
    lines = [linecache.getline(str(record["filename"]), n).rstrip("\n")
             for n in range(first, max(numbers) + 1)]
    source = "\n".join(lines)
    if not source.strip() or len(source) > MAX_STORED_SOURCE_CHARS:
        return {}
    return {"source": source, "source_first_lineno": first}


def records_from_stats(stats, region: str, previous: dict | None = None, skip=None,
                       recorded_path=None) -> list[dict]:
    """Records of one region from line_profiler's ``LineStats``
    (``stats.timings``: ``(filename, first_lineno, function) -> [(lineno,
    hits, time), ...]``, ``stats.unit``: seconds per time unit).

    ``previous`` is an earlier snapshot of the same profiler (the ``totals``
    of :func:`stats_totals`): only what ran since then is kept, lines and
    functions that did not run since are left out.  ``skip(filename)``
    true drops a function (spanscope's own frames); ``recorded_path(
    filename)`` is the name stored (metadata_detail: relative or absolute),
    the source being read from the file as it was run.  Records are in
    (filename, first line, function) order."""
    previous = previous or {}
    unit = float(getattr(stats, "unit", 1.0))
    out = []
    for key in sorted(stats.timings, key=lambda k: (str(k[0]), int(k[1]), str(k[2]))):
        filename, first_lineno, function = key
        if skip is not None and skip(str(filename)):
            continue
        rows = []
        for lineno, hits, elapsed in stats.timings[key]:
            old_hits, old_time = previous.get((key, int(lineno)), (0, 0))
            hits, elapsed = int(hits) - old_hits, float(elapsed) - old_time
            if hits > 0 or elapsed > 0:
                rows.append((int(lineno), hits, elapsed))
        if not rows:
            continue
        rows.sort()
        record = {
            "region": str(region),
            "filename": str(filename),
            "function": str(function),
            "first_lineno": int(first_lineno),
            "line_numbers": np.asarray([r[0] for r in rows], dtype=np.int64),
            "hits": np.asarray([r[1] for r in rows], dtype=np.int64),
            "times": np.asarray([r[2] for r in rows], dtype=np.float64),
            "unit": unit,
        }
        record.update(line_profile_source(record))
        if recorded_path is not None:
            record["filename"] = str(recorded_path(str(filename)))
        out.append(record)
    return out


def stats_totals(stats) -> dict:
    """``{(key, lineno): (hits, time)}`` of a ``LineStats``: the snapshot
    :func:`records_from_stats` subtracts at the next checkpoint."""
    return {(key, int(lineno)): (int(hits), float(elapsed))
            for key, rows in stats.timings.items() for lineno, hits, elapsed in rows}


# --------------------------------------------------------------------------
# HDF5
# --------------------------------------------------------------------------

def _source_attrs(record) -> dict:
    if not record.get("source"):
        return {}
    return {"source": str(record["source"]),
            "source_first_lineno": int(record["source_first_lineno"])}


def write_line_profile(group, records, *, compression=None, compression_level=None,
                       chunk_size=None) -> None:
    """Writes one rank's records into ``group`` (an open h5py group: the
    rank's ``rank<N>``) as scope-profiler's writer does:
    ``line_profile/<index>`` per record, its attributes and its three
    datasets.  Nothing for no records.  ``compression`` "gzip" (level
    ``compression_level``, chunks of ``chunk_size`` lines) compresses the
    datasets; None: plain."""
    if not records:
        return
    if compression not in (None, "gzip"):
        raise ValueError(f"compression must be None or 'gzip', not {compression!r}")
    profile = group.create_group(LINE_PROFILE_GROUP)
    for index, record in enumerate(records):
        g = profile.create_group(str(index))
        for key in ("region", "filename", "function"):
            g.attrs[key] = str(record[key])
        g.attrs["first_lineno"] = int(record["first_lineno"])
        g.attrs["unit"] = float(record["unit"])
        for key, value in _source_attrs(record).items():
            g.attrs[key] = value
        for key, dtype in (("line_numbers", np.int64), ("hits", np.int64),
                           ("times", np.float64)):
            data = np.asarray(record[key], dtype=dtype)
            options = {}
            if compression == "gzip" and len(data):
                options = {"compression": "gzip", "shuffle": True,
                           "compression_opts": compression_level,
                           "chunks": (min(len(data), int(chunk_size or len(data))),)}
            g.create_dataset(key, data=data, **options)


def append_line_profile(path, rank: int, records) -> None:
    """Adds one rank's records to the HDF5 profile at ``path``
    (``rank<rank>/line_profile``, the group created when missing).
    ValueError when that rank already has line profiles there."""
    import h5py

    if not records:
        return
    with h5py.File(os.fspath(path), "r+") as f:
        group = f.require_group(f"rank{int(rank)}")
        if LINE_PROFILE_GROUP in group:
            raise ValueError(f"{path}: rank{rank} already holds line profiles")
        write_line_profile(group, records)


def _text_attr(attrs, key: str, where: str, default=None) -> str:
    if key not in attrs:
        if default is None:
            raise LineProfileDataError(f"{where}: no attribute {key!r}")
        return default
    value = attrs[key]
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LineProfileDataError(f"{where}: attribute {key!r} is not UTF-8") from exc
    if isinstance(value, str):
        return value
    raise LineProfileDataError(f"{where}: attribute {key!r} is not text")


def _number_attr(attrs, key: str, where: str, kind, default):
    if key not in attrs:
        return default
    value = attrs[key]
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise LineProfileDataError(f"{where}: attribute {key!r} is not one number")
        value = value.reshape(())[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise LineProfileDataError(f"{where}: attribute {key!r} is not a number")
    out = kind(value)
    if not np.isfinite(out):
        raise LineProfileDataError(f"{where}: attribute {key!r} is not finite")
    return out


def _column(h5py, group, key: str, where: str, kind: str) -> np.ndarray:
    ds = group.get(key)
    if not isinstance(ds, h5py.Dataset):
        raise LineProfileDataError(f"{where}: no dataset {key!r}")
    if ds.ndim != 1:
        raise LineProfileDataError(f"{where}/{key}: not one-dimensional")
    if ds.shape[0] > MAX_RECORD_LINES:
        raise LineProfileDataError(f"{where}/{key}: {ds.shape[0]} lines (more than "
                                   f"{MAX_RECORD_LINES})")
    if ds.dtype.kind not in kind:
        raise LineProfileDataError(f"{where}/{key}: dtype {ds.dtype} is not numeric")
    try:
        return ds[()]
    except (OSError, ValueError, TypeError) as exc:
        raise LineProfileDataError(f"{where}/{key}: cannot be read: {exc}") from exc


def read_line_profile_group(group, where: str = "") -> list[dict]:
    """The records of one ``rank<N>/line_profile`` group (an open h5py
    group), in index order, as scope-profiler's reader returns them
    (attributes decoded, arrays int64 / int64 / float64); a malformed group
    raises :class:`LineProfileDataError` naming it."""
    import h5py

    where = f"{where}{group.name}"
    if not isinstance(group, h5py.Group):
        raise LineProfileDataError(f"{where}: not a group")
    keys = list(group.keys())
    if any(not k.isdigit() for k in keys):
        bad = next(k for k in keys if not k.isdigit())
        raise LineProfileDataError(f"{where}: member {bad!r} is not a record index")
    records = []
    for key in sorted(keys, key=int):
        g = group[key]
        at = f"{where}/{key}"
        if not isinstance(g, h5py.Group):
            raise LineProfileDataError(f"{at}: not a group")
        attrs = g.attrs
        lines = _column(h5py, g, "line_numbers", at, "iu")
        hits = _column(h5py, g, "hits", at, "iu")
        times = _column(h5py, g, "times", at, "iuf")
        if not len(lines) == len(hits) == len(times):
            raise LineProfileDataError(f"{at}: line_numbers, hits and times have "
                                       f"{len(lines)}, {len(hits)} and {len(times)} entries")
        record = {}
        if "source" in attrs and "source_first_lineno" in attrs:
            record["source"] = _text_attr(attrs, "source", at)
            record["source_first_lineno"] = _number_attr(attrs, "source_first_lineno", at,
                                                         int, 0)
        record.update({
            "region": _text_attr(attrs, "region", at, ""),
            "filename": _text_attr(attrs, "filename", at, ""),
            "function": _text_attr(attrs, "function", at, ""),
            "first_lineno": _number_attr(attrs, "first_lineno", at, int, 0),
            "line_numbers": np.asarray(lines, dtype=np.int64),
            "hits": np.asarray(hits, dtype=np.int64),
            "times": np.asarray(times, dtype=np.float64),
            "unit": _number_attr(attrs, "unit", at, float, 1.0),
        })
        records.append(record)
    return records


def read_line_profile_file(path, ranks=None) -> dict:
    """rank -> records of every ``rank<N>/line_profile`` group of an HDF5
    profile (ranks: only those), ranks ascending.  {} without line
    profiles; CorruptProfileError when the file cannot be opened,
    LineProfileDataError for a malformed group."""
    import h5py

    path = os.fspath(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise CorruptProfileError(f"{path}: cannot read its line profiles: {exc}") from exc
    out = {}
    with f:
        for name in f:
            if not (name.startswith("rank") and name[4:].isdigit()):
                continue
            rank = int(name[4:])
            if ranks is not None and rank not in ranks:
                continue
            g = f[name]
            if isinstance(g, h5py.Group) and LINE_PROFILE_GROUP in g:
                out[rank] = read_line_profile_group(g[LINE_PROFILE_GROUP], where=f"{path}:")
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------

def _source_lines(record, first: int, last: int) -> dict:
    """line -> text for first..last: the stored source where the record
    carries it, else the file (linecache), else {}."""
    stored = record.get("source")
    if stored:
        start = int(record.get("source_first_lineno", first))
        text = str(stored).split("\n")
        got = {start + i: t for i, t in enumerate(text)}
        if all(n in got for n in range(first, last + 1)):
            return {n: got[n] for n in range(first, last + 1)}
    filename = str(record["filename"])
    linecache.checkcache(filename)
    return {n: linecache.getline(filename, n) for n in range(first, last + 1)}


def line_profile_rows(record) -> list[tuple]:
    """``(line, hits, time, source)`` for every line from the first timed
    one to the last, as scope-profiler's ``line-profile`` lists them: lines
    that never ran have hits and time None (an unexecuted branch shows),
    the source dedented by the first timed line's indentation (a line
    still indented starts with a zero-width space: tables strip leading
    blanks); ``<source unavailable>`` where no source is found."""
    timed = [int(n) for n in record["line_numbers"]]
    if not timed:
        return []
    first, last = min(timed), max(timed)
    if last - first > MAX_RECORD_LINES:
        raise ValueError(f"line numbers {first}..{last} span more than "
                         f"{MAX_RECORD_LINES} lines")
    sources = {n: t.rstrip("\r\n").expandtabs(4)
               for n, t in _source_lines(record, first, last).items()}
    if not any(sources.values()):
        sources = {n: _NO_SOURCE for n in timed}
    base = sources.get(timed[0], "")
    base_indent = len(base) - len(base.lstrip(" ")) if base else 0
    timings = dict(zip(timed, zip(record["hits"], record["times"])))
    rows = []
    for line, text in sources.items():
        indent = len(text) - len(text.lstrip(" "))
        text = text[min(base_indent, indent):]
        if len(text) - len(text.lstrip(" ")):
            text = "\N{ZERO WIDTH SPACE}" + text
        hits, elapsed = timings.get(line, (None, None))
        rows.append((line, hits, elapsed, text))
    return rows


def _width(text: str) -> int:
    """Columns text takes in the table, measured as tabulate measures it
    (scope-profiler's tables are tabulate's): with the wcwidth package
    installed, terminal columns (a zero-width space none, East Asian wide
    characters two); without it, characters.  Either way the output is
    scope-profiler's, character for character, in the same environment."""
    if text.isascii():
        return len(text)
    global _wcswidth
    if _wcswidth is _UNSET:  # tabulate's own choice (tabulate.WIDE_CHARS_MODE)
        try:
            from wcwidth import wcswidth as _wcswidth
        except ImportError:  # pragma: no cover - depends on the environment
            _wcswidth = None
    if _wcswidth is None:
        return len(text)
    width = _wcswidth(text)
    return len(text) if width < 0 else width


_UNSET = object()
_wcswidth = _UNSET  # imported on first use: no table, no import


def rounded_table(headers, rows) -> list[str]:
    """The lines of a table as tabulate's ``rounded_outline`` prints text
    cells (``disable_numparse``): every cell stripped and left-aligned, a
    column as wide as its widest cell (:func:`_width`) and at least its
    header plus two."""
    table = [[str(c).strip() for c in row] for row in rows]
    heads = [str(h).strip() for h in headers]
    widths = [max([_width(h) + 2] + [_width(row[i]) for row in table])
              for i, h in enumerate(heads)]

    def rule(left, mid, right):
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def line(cells):
        return "│" + "│".join(f" {c}{' ' * (w - _width(c))} "
                              for c, w in zip(cells, widths)) + "│"

    return [rule("╭", "┬", "╮"), line(heads), rule("├", "┼", "┤"),
            *(line(row) for row in table), rule("╰", "┴", "╯")]


def _selected(name: str, include=None, exclude=None) -> bool:
    """scope-profiler's region filter: include / exclude are regular
    expressions matched at the start of the name (a str or a list)."""
    if isinstance(include, str):
        include = [include]
    if isinstance(exclude, str):
        exclude = [exclude]
    if include is not None and not any(re.match(p, name) for p in include):
        return False
    return not (exclude is not None and any(re.match(p, name) for p in exclude))


def _g(value) -> str:
    return f"{value:.6g}"


def format_line_profile(line_profile: dict, title: str, ranks=None, function=None,
                        region=None, include=None, exclude=None) -> str:
    """scope-profiler's ``line-profile`` output for ``line_profile``
    (rank -> records, as ``ProfilingResults.line_profile``): the line
    ``Line profile: <title>``, then per record (rank ascending, then in
    record order) ``Rank R | region | function (file:first line)`` and its
    table (line, hits, time [s], per hit [s], % time of the function's
    time, source); ``No line-profile records matched.`` when none is
    selected.  ranks: those only (None: all); function / region: regular
    expressions searched in the name; include / exclude: the region
    filters of the other subcommands (re.match)."""
    function_re = re.compile(function) if function else None
    region_re = re.compile(region) if region else None
    chosen = line_profile.keys() if ranks is None else ranks
    out = [f"Line profile: {title}"]
    count = 0
    for rank in sorted(chosen):
        for record in line_profile.get(rank, []):
            if function_re and not function_re.search(record["function"]):
                continue
            if region_re and not region_re.search(record["region"]):
                continue
            if not _selected(record["region"], include, exclude):
                continue
            count += 1
            unit = float(record["unit"])
            out.append("")
            out.append(f"Rank {rank} | {record['region']} | {record['function']} "
                       f"({record['filename']}:{record['first_lineno']})")
            total = float(np.asarray(record["times"], dtype=np.float64).sum())
            table = []
            for line, hits, elapsed, text in line_profile_rows(record):
                seconds = float(elapsed) * unit if elapsed is not None else None
                per_hit = seconds / int(hits) if hits and seconds is not None else None
                percent = (float(elapsed) / total * 100
                           if elapsed is not None and total else None)
                table.append([str(int(line)), "" if hits is None else str(int(hits)),
                              "" if seconds is None else _g(seconds),
                              "" if per_hit is None else _g(per_hit),
                              "" if percent is None else f"{percent:.2f}", text])
            out.extend(rounded_table(("line", "hits", "time [s]", "per hit [s]", "% time",
                                      "source"), table))
    if count == 0:
        out.append("")
        out.append("No line-profile records matched.")
    return "\n".join(out) + "\n"
