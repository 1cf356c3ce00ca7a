"""scope-profiler's JSON profile (format "scope-profiler-profile", version 1)
both ways, and the format dispatch of its profile_io module.

A JSON profile is one document: the run's metadata, then one row per
(region, rank) with the calls' start and end times in integer nanoseconds
and the optional per-call columns.  ``write_json`` writes what
``scope_profiler.read_json`` reads and ``read_json`` reads what
``scope_profiler.write_json`` writes (``.json.gz`` gzip-compressed).

Reading JSON is the one parse of a JSON document (Python's json module);
the regions' nesting and exclusive times then come from the C fold, as
for every other source.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np

from spanscope import _ext
from spanscope._base.atomic import write_replacing, write_text_replacing

from spanscope.results._profiling import ProfilingResults, read_h5, read_h5_summary
from spanscope.results._likwid import LikwidDataError, likwid_document, likwid_from_document
from spanscope.results._lines import append_line_profile
from spanscope.results._regions import MPIRegion, Region, TaskInfo, ThreadInfo

__all__ = [
    "FORMAT_NAME", "FORMAT_VERSION", "JSONProfileError", "build_json_document",
    "export_json", "is_json_path", "load", "load_json", "profile_format", "read_json",
    "read_profile", "read_profile_summary", "sniff_profile_format", "write_h5_profile",
    "write_json",
]

FORMAT_NAME = "scope-profiler-profile"
FORMAT_VERSION = 1
JSON_SUFFIXES = (".json", ".json.gz")
HTML_SUFFIXES = (".html", ".htm")
FORMAT_HDF5, FORMAT_JSON, FORMAT_HTML = "hdf5", "json", "html"
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_GZIP_MAGIC = b"\x1f\x8b"


class JSONProfileError(ValueError):
    """The file is not a scope-profiler JSON profile (or of a newer version)."""


def is_json_path(path) -> bool:
    return Path(path).name.lower().endswith(JSON_SUFFIXES)


def _exporter_name() -> str:
    return f"spanscope@{_ext.version}"


def _ints(values) -> list:
    return [int(v) for v in np.asarray(values, dtype=np.int64).tolist()]


def _metadata_value(value):
    """A metadata value made JSON-safe (numpy scalars and arrays, bytes,
    non-finite floats as None)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        return [_metadata_value(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_metadata_value(v) for v in value]
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _region_row(name: str, rank: int, region: Region) -> dict:
    """One rank's share of one region, as scope-profiler writes it."""
    row: dict = {"name": name, "rank": int(rank)}
    if region.source_file is not None:
        row["source_file"] = region.source_file
    if region.source_lineno is not None:
        row["source_lineno"] = int(region.source_lineno)
    if region.source_text is not None:
        row["source_text"] = region.source_text
    if region.tags:
        row["tags"] = list(region.tags)
    agg = region.stored_summary
    if agg is not None:
        row["aggregate"] = {k: int(v) if float(v).is_integer() else float(v)
                            for k, v in agg.items()}
        if not region.has_event_data:
            row["event_data_available"] = False
        return row
    row["start_times_ns"] = _ints(region.start_times_ns)
    row["end_times_ns"] = _ints(region.end_times_ns)
    if any(region.event_metadata):
        row["event_metadata"] = list(region.event_metadata)
    for key, col in (("gpu_durations_ns", region.gpu_durations_ns),
                     ("call_ids", region.call_ids), ("parent_ids", region.parent_ids),
                     ("thread_ids", region.thread_ids), ("task_ids", region.task_ids),
                     ("await_ns", region.await_times_ns)):
        if col is not None:
            row[key] = _ints(col)
    # the fold's total, so a reader need not fold again (as the HDF5 column)
    row["exclusive_total_ns"] = int(np.sum(region.exclusive_durations_ns))
    return row


def _ns(seconds) -> int:
    return -1 if seconds is None else round(float(seconds) * 1e9)


_THREAD_FIELDS = (
    ("index", lambda t: int(t.index)), ("name", lambda t: t.name),
    ("ident", lambda t: int(t.ident)), ("native_id", lambda t: int(t.native_id)),
    ("daemon", lambda t: bool(t.daemon)), ("start_ns", lambda t: _ns(t.start_time)),
    ("end_ns", lambda t: _ns(t.end_time)), ("cpu_ns", lambda t: _ns(t.cpu_time)))
_TASK_FIELDS = (
    ("index", lambda t: int(t.index)), ("kind", lambda t: t.kind), ("name", lambda t: t.name),
    ("coro_name", lambda t: t.coro_name), ("thread_index", lambda t: int(t.thread_index)),
    ("created_ns", lambda t: _ns(t.created_time)), ("done_ns", lambda t: _ns(t.done_time)),
    ("steps", lambda t: int(t.steps)), ("running_ns", lambda t: _ns(t.running_time)),
    ("suspended_ns", lambda t: _ns(t.awaiting_time)))


def _ranks(ranks):
    if ranks is None:
        return None
    return {int(ranks)} if isinstance(ranks, (int, np.integer)) else {int(r) for r in ranks}


def build_json_document(results: ProfilingResults, include=None, exclude=None,
                        ranks=None) -> dict:
    """The JSON document of one run (regions filtered as get_regions does,
    kept in the run's own order; ranks: the ranks to keep)."""
    sel_ranks = _ranks(ranks)
    selected = {r.name for r in results.get_regions(include, exclude)}
    rows = []
    for name in results.region_names:
        if name not in selected:
            continue
        region = results[name]
        for rank in sorted(region.regions):
            if sel_ranks is None or rank in sel_ranks:
                rows.append(_region_row(name, rank, region.regions[rank]))
    doc = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
           "exporter": _exporter_name(), "time_unit": "nanoseconds",
           "num_ranks": int(results.num_ranks),
           "event_data_available": bool(results.has_event_data),
           "metadata": {k: _metadata_value(v) for k, v in results.metadata.items()},
           "regions": rows}
    for key, lanes, fields in (("threads", results.threads, _THREAD_FIELDS),
                               ("tasks", results.tasks, _TASK_FIELDS)):
        part = {str(rank): [{n: f(t) for n, f in fields} for t in rows_]
                for rank, rows_ in sorted(lanes.items())
                if sel_ranks is None or rank in sel_ranks}
        if part:
            doc[key] = part
    # scope-profiler's "likwid" (rank -> tag -> counters, non-finite as null)
    # and "line_profile" (rank -> records) members
    likwid = likwid_document(results.get_likwid_regions(), sel_ranks)
    if likwid:
        doc["likwid"] = likwid
    lines = _line_profile_document(getattr(results, "_line_profile", None) or {}, sel_ranks)
    if any(lines.values()):
        doc["line_profile"] = lines
    return doc


def _nulls(values) -> list:
    """A float column as JSON: NaN and inf as null (strict JSON has neither)."""
    return [None if not math.isfinite(v) else v
            for v in np.asarray(values, dtype=float).reshape(-1).tolist()]


def _line_profile_document(line_profile: dict, ranks) -> dict:
    """Line-profiler records (rank -> list of dicts), scope-profiler's fields."""
    return {str(rank): [{"region": r.get("region", ""), "filename": r.get("filename", ""),
                         "function": r.get("function", ""),
                         "first_lineno": int(r.get("first_lineno", 0)),
                         "line_numbers": _ints(r.get("line_numbers", ())),
                         "hits": _ints(r.get("hits", ())),
                         "times": _nulls(r.get("times", ())),
                         "unit": float(r.get("unit", 1.0))} for r in records]
            for rank, records in sorted(line_profile.items())
            if ranks is None or rank in ranks}


def _line_profile_from_document(doc: dict, where: str) -> dict:
    """_line_profile_document's member back (null times as NaN)."""
    out = {}
    for rank, records in (doc.get("line_profile") or {}).items():
        try:
            out[int(rank)] = [{
                "region": r.get("region", ""), "filename": r.get("filename", ""),
                "function": r.get("function", ""), "first_lineno": int(r.get("first_lineno", 0)),
                "line_numbers": np.asarray(r.get("line_numbers", ()), dtype=np.int64),
                "hits": np.asarray(r.get("hits", ()), dtype=np.int64),
                "times": np.array([math.nan if v is None else v for v in r.get("times", ())],
                                  dtype=float),
                "unit": float(r.get("unit", 1.0))} for r in records]
        except (AttributeError, TypeError, ValueError) as exc:
            raise JSONProfileError(f"{where}: line_profile of rank {rank!r} cannot be "
                                   f"read: {exc}") from exc
    return out


def _write_document(filepath, document: dict, indent=None) -> Path:
    out = Path(filepath)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=indent, allow_nan=False)
    if not out.name.lower().endswith(".gz"):
        return write_text_replacing(out, text)

    def write_gz(tmp: Path) -> None:
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                   mtime=0) as f:
            f.write(text.encode("utf-8"))
    write_replacing(out, write_gz)
    return out


def write_json(results: ProfilingResults, filepath, *, include=None, exclude=None,
               ranks=None, indent: int | None = None) -> Path:
    """Writes one run as a scope-profiler JSON profile (gzip for a .gz
    name); returns the path."""
    return _write_document(filepath, build_json_document(results, include, exclude, ranks),
                           indent)


def export_json(profiling_data, filepath, ranks=None, include=None, exclude=None,
                verbose: bool = True, indent: int | None = None) -> list[Path]:
    """write_json for one run or several (the run's display label added to
    the stem of each file when several); non-root results write nothing."""
    runs = [profiling_data] if isinstance(profiling_data, ProfilingResults) \
        else list(profiling_data)
    runs = [r for r in runs if r.is_root]
    if not runs:
        return []
    base = Path(filepath)
    stem, dot, ext = base.name.partition(".")
    suffix = f".{ext}" if dot else ".json"
    labels, seen = [], {}
    for r in runs:
        lab = "".join(c if c.isalnum() or c in "-_" else "_" for c in r.display_label)
        seen[lab] = seen.get(lab, 0) + 1
        labels.append(lab if seen[lab] == 1 else f"{lab}_{seen[lab]}")
    written = []
    for lab, run in zip(labels, runs):
        name = f"{stem}_{lab}{suffix}" if len(runs) > 1 else f"{stem}{suffix}"
        out = write_json(run, base.with_name(name), include=include, exclude=exclude,
                         ranks=ranks, indent=indent)
        written.append(out)
        if verbose:
            print(f"Wrote {out}")
    return written


def _read_document(path: Path) -> dict:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                doc = json.load(f)
        else:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError, gzip.BadGzipFile, EOFError) as exc:
        raise JSONProfileError(f"{path} is not a scope-profiler JSON profile: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise JSONProfileError(f"{path} is not a scope-profiler JSON profile (written by "
                               "`scope-profiler export json` or `-o <name>.json`).")
    try:
        version = int(doc.get("format_version", 0))
    except (TypeError, ValueError):
        raise JSONProfileError(f"{path}: format_version is not an integer") from None
    if version > FORMAT_VERSION:
        raise JSONProfileError(f"{path} uses JSON profile format version {version}; this "
                               f"package reads versions through {FORMAT_VERSION}.")
    return doc


def _region_from_row(row: dict, where: str) -> Region:
    src = dict(source_file=row.get("source_file"), source_lineno=row.get("source_lineno"),
               source_text=row.get("source_text"), tags=tuple(row.get("tags", ())))
    if row.get("aggregate") is not None:
        return Region(np.empty(0, np.int64), np.empty(0, np.int64),
                      aggregate=dict(row["aggregate"]),
                      event_data_available=bool(row.get("event_data_available", True)), **src)

    def col(key):
        v = row.get(key)
        return None if v is None else np.asarray(v, dtype=np.int64)
    try:
        return Region(np.asarray(row.get("start_times_ns", ()), dtype=np.int64),
                      np.asarray(row.get("end_times_ns", ()), dtype=np.int64),
                      gpu_durations=col("gpu_durations_ns"), call_ids=col("call_ids"),
                      parent_ids=col("parent_ids"), thread_ids=col("thread_ids"),
                      task_ids=col("task_ids"), await_times=col("await_ns"),
                      event_metadata=row.get("event_metadata"), **src)
    except (TypeError, ValueError, OverflowError) as exc:
        raise JSONProfileError(f"{where}: bad region row {row.get('name')!r}: {exc}") from exc


def _lanes(doc: dict, key: str, cls, fields) -> dict:
    out = {}
    for rank, rows in (doc.get(key) or {}).items():
        infos = [cls(r.get("index"), int(rank), *(r.get(n) for n, _ in fields[1:]))
                 for r in rows]
        if infos:
            out[int(rank)] = infos
    return out


def load_json(file_path, verbose: bool = False) -> dict:
    """A JSON profile as ProfilingResults' arguments."""
    path = Path(file_path)
    if not path.exists():
        raise FileNotFoundError(f"JSON profile not found: {path}")
    doc = _read_document(path)
    per: dict[str, dict[int, Region]] = {}
    totals: dict[str, dict[int, int]] = {}
    for row in doc.get("regions", ()):
        if not isinstance(row, dict) or "name" not in row or "rank" not in row:
            raise JSONProfileError(f"{path}: a region row lacks its name or rank")
        name, rank = str(row["name"]), int(row["rank"])
        if verbose:
            print(f"name = {name!r}, rank = {rank}")
        per.setdefault(name, {})[rank] = _region_from_row(row, str(path))
        if row.get("exclusive_total_ns") is not None:
            totals.setdefault(name, {})[rank] = int(row["exclusive_total_ns"])
    try:
        likwid = likwid_from_document(doc, str(path))
    except LikwidDataError as exc:
        raise JSONProfileError(str(exc)) from exc
    return {"regions": {n: MPIRegion(n, r) for n, r in per.items()},
            "likwid": likwid, "line_profile": _line_profile_from_document(doc, str(path)),
            "metadata": dict(doc.get("metadata") or {}),
            "num_ranks": int(doc.get("num_ranks", 0)) or None,
            "threads": _lanes(doc, "threads", ThreadInfo, _THREAD_FIELDS),
            "tasks": _lanes(doc, "tasks", TaskInfo, _TASK_FIELDS),
            "file_path": path, "exclusive_totals": totals,
            "event_data_available": bool(doc.get("event_data_available", True))}


def read_json(file_path, verbose: bool = False) -> ProfilingResults:
    """Reads a scope-profiler JSON profile.  FileNotFoundError,
    JSONProfileError (a ValueError) for a file that is not one."""
    return ProfilingResults(**load_json(file_path, verbose=verbose))


# --------------------------------------------------------------------------
# profile_io: which reader or writer
# --------------------------------------------------------------------------

def profile_format(path) -> str:
    """"json", "html" or "hdf5", by the file's name."""
    if is_json_path(path):
        return FORMAT_JSON
    if Path(path).name.lower().endswith(HTML_SUFFIXES):
        return FORMAT_HTML
    return FORMAT_HDF5


def sniff_profile_format(path) -> str:
    """The format of the file's contents (HDF5 signature, gzip or "{": JSON,
    "<": HTML), else by its name.  FileNotFoundError when it is missing."""
    with Path(path).open("rb") as f:
        head = f.read(8)
    if head.startswith(_HDF5_MAGIC):
        return FORMAT_HDF5
    if head.startswith(_GZIP_MAGIC) or head.lstrip().startswith(b"{"):
        return FORMAT_JSON
    if head.lstrip()[:1] == b"<":
        return FORMAT_HTML
    return profile_format(path)


def _html_refused(path):
    return ValueError(f"{str(path)!r} is an HTML report, which is write-only: it renders a "
                      "run rather than storing it. Read the .h5 or .json profile it was "
                      "made from.")


def load(path, verbose: bool = False) -> ProfilingResults:
    """Reads a profile whatever its format (by its contents: HDF5 or JSON).
    FileNotFoundError; ValueError for an HTML report."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No profile at {str(path)!r}")
    kind = sniff_profile_format(path)
    if kind == FORMAT_HTML:
        raise _html_refused(path)
    return read_json(path, verbose) if kind == FORMAT_JSON else read_h5(path, verbose)


def read_profile(file_path, verbose: bool = False) -> ProfilingResults:
    """read_json or read_h5, by the file's name."""
    if profile_format(file_path) == FORMAT_JSON:
        return read_json(file_path, verbose)
    return read_h5(file_path, verbose)


def read_profile_summary(file_path, **kwargs) -> ProfilingResults:
    """read_h5_summary for HDF5, read_json (whole) for JSON."""
    if profile_format(file_path) == FORMAT_JSON:
        return read_json(file_path)
    return read_h5_summary(file_path, **kwargs)


def write_h5_profile(results: ProfilingResults, file_path) -> Path:
    """Writes results as HDF5 (schema 3) at file_path: a copy of the .h5 the
    results were read from, else their calls written in C.  Returns the
    Path.  (write_profile, which picks the format by the name, is
    _inspection's: it also renders HTML.)"""
    model = getattr(results, "model", None)
    src = None if model is None else Path(getattr(model, "path", "") or "")
    out = Path(file_path)
    if model is not None and src.suffix in (".h5", ".hdf5") and src.exists():
        if out.resolve() != src.resolve():  # the very file: nothing is re-derived
            write_replacing(out, lambda tmp: shutil.copyfile(src, tmp))
        return out
    return _write_h5(results, out)


def _write_h5(results: ProfilingResults, out: Path) -> Path:
    """The calls of results (held in Python: JSON, merged, built by hand)
    as a schema-3 .h5, written in C (sps_spans_write_h5: the spans folded
    by the one fold, as `spanscope convert` writes a trace)."""
    names, idx, ranks, threads, starts, ends = [], [], [], [], [], []
    for k, name in enumerate(results.region_names):
        names.append(name)
        for rank, region in results[name].regions.items():
            s = np.asarray(region.start_times_ns, dtype=np.int64)
            e = np.asarray(region.end_times_ns, dtype=np.int64)
            t = region.thread_ids
            t = np.zeros(len(s), np.int64) if t is None else np.asarray(t, dtype=np.int64)
            starts.append(s), ends.append(e), threads.append(t)
            idx.append(np.full(len(s), k, np.uint32))
            ranks.append(np.full(len(s), int(rank), np.int64))

    def cat(parts, dtype):
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0, dtype),
                                    dtype=dtype)

    meta = getattr(results, "metadata", None) or {}
    t0, t1 = meta.get("start_time_ns"), meta.get("finalize_time_ns")
    times = {}
    if isinstance(t0, (int, np.integer)) and isinstance(t1, (int, np.integer)):
        times = {"start_time_ns": int(t0), "finalize_time_ns": int(t1)}
    regions = [results[name] for name in names]
    _ext.spans_write_h5(
        os.fspath(out), names, cat(idx, np.uint32), cat(ranks, np.int64),
        cat(threads, np.int64), cat(starts, np.int64), cat(ends, np.int64), **times,
        label=getattr(results, "label", None) or None,
        source_files=[r.source_file or None for r in regions],
        source_lines=np.array([-1 if r.source_lineno is None else int(r.source_lineno)
                               for r in regions], np.int64),
        source_texts=[r.source_text or None for r in regions],
        tags=[json.dumps(list(r.tags)) if r.tags else None for r in regions],
        # the run's other metadata strings (source, source_language, a C
        # trace's facts); numbers and the writer's own keys are its own
        metadata={str(k): v for k, v in meta.items() if isinstance(v, str)})
    # the line profiles (a JSON profile's, a merge's): rank<N>/line_profile
    for rank, records in sorted((getattr(results, "_line_profile", None) or {}).items()):
        append_line_profile(out, rank, records)
    return out
