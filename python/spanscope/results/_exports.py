"""Exports of a recording for other tools, with scope-profiler 0.7.5's
signatures: ``export_speedscope``, ``export_prof``, ``load_prof``,
``to_pstats``, ``export_flamegraph_svg``, ``export_chrome_trace``.

A thin face: every document is written in C (``sps_export``,
``src/api/export.c``; nesting and self time from the one fold), and this
module only names the output files the way scope-profiler does (a
``_rank<N>`` suffix per rank for ``.prof`` and SVG, the input's stem when
several runs are exported) and turns a results object into its file.
"""

from __future__ import annotations

import contextlib
import os
import pstats
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from spanscope import _ext

__all__ = [
    "export_speedscope", "export_prof", "load_prof", "to_pstats",
    "export_flamegraph_svg", "export_chrome_trace",
]


_TRACE_OR_H5 = (".h5", ".hdf5", ".json", ".json.gz", ".pftrace", ".perfetto-trace")


def _source_path(run, tmp: str, k: int) -> str:
    """The file to export a run from: a path; a results object's .h5 (or
    trace); else, for spanscope's ProfilingResults held in Python (read from
    JSON, merged), an .h5 of its calls written in C to tmp
    (write_h5_profile)."""
    if isinstance(run, (str, os.PathLike)):
        return os.fspath(run)
    model = getattr(run, "model", None)
    for value in (getattr(model, "path", None), *(getattr(run, a, None) for a in
                  ("path", "file_path", "filename", "source_path"))):
        if (isinstance(value, (str, os.PathLike)) and os.path.exists(value)
                and os.fspath(value).endswith(_TRACE_OR_H5)
                and not (hasattr(run, "region_names") and os.fspath(value).endswith(".json"))):
            return os.fspath(value)  # a scope-profiler JSON profile is not a trace
    if hasattr(run, "region_names") and hasattr(run, "metadata"):
        from spanscope.results._jsonio import write_h5_profile
        label = _slug(getattr(run, "label", None) or "results")
        out = Path(tmp) / str(k) / f"{label}.h5"
        out.parent.mkdir()
        return os.fspath(write_h5_profile(run, out))
    raise TypeError(
        f"spanscope exports read a profile: pass its path or results "
        f"(got {type(run).__name__})"
    )


@contextlib.contextmanager
def _as_paths(profiling_data):
    """The files of the runs (see _source_path), temporaries removed after."""
    runs = ([profiling_data] if isinstance(profiling_data, (str, os.PathLike))
            or not isinstance(profiling_data, Sequence) else list(profiling_data))
    with tempfile.TemporaryDirectory(prefix="spanscope-export-") as tmp:
        yield [_source_path(run, tmp, k) for k, run in enumerate(runs)]


def _label(path: str) -> str:
    """A run's label: its file name without the extension(s)."""
    name = os.path.basename(path)
    for ext in (".json.gz", ".h5", ".hdf5", ".json", ".pftrace", ".perfetto-trace"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        n = seen.get(label, 0)
        seen[label] = n + 1
        out.append(label if n == 0 else f"{label}_{n + 1}")
    return out


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "run"


def _ranks(ranks) -> list[int]:
    if ranks is None:
        return [0]
    if isinstance(ranks, int):
        return [ranks]
    return [int(r) for r in ranks]


def _patterns(p) -> list[str] | None:
    if p is None:
        return None
    return [p] if isinstance(p, str) else list(p)


def _out_name(base: Path, default_suffix: str, multiple: bool, label: str,
              rank: int | None, whole_tail: bool) -> Path:
    if whole_tail:  # ".speedscope.json": everything after the first dot
        stem, dot, ext = base.name.partition(".")
        suffix = f".{ext}" if dot else default_suffix
    else:
        stem, suffix = base.stem, base.suffix or default_suffix
    parts = [stem]
    if multiple:
        parts.append(_slug(label))
    if rank is not None:
        parts.append(f"rank{rank}")
    return base.with_name("_".join(parts) + suffix)


def _export(fmt, profiling_data, filepath, ranks, include, exclude, per_rank,
            suffix, whole_tail, verbose, note, **kw) -> list[Path]:
    with _as_paths(profiling_data) as paths:
        return _export_paths(fmt, paths, filepath, ranks, include, exclude, per_rank,
                             suffix, whole_tail, verbose, note, **kw)


def _export_paths(fmt, paths, filepath, ranks, include, exclude, per_rank,
                  suffix, whole_tail, verbose, note, **kw) -> list[Path]:
    if not paths:
        return []
    labels = _unique([_label(p) for p in paths])
    base = Path(filepath)
    base.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for label, path in zip(labels, paths):
        groups = [[r] for r in _ranks(ranks)] if per_rank else [_ranks(ranks)]
        for group in groups:
            rank = group[0] if per_rank else None
            out = _out_name(base, suffix, len(paths) > 1, label, rank, whole_tail)
            extra = dict(kw)
            if per_rank:
                extra["root_name"] = f"<{label} rank {rank}>"
            else:
                extra["doc_name"] = label
            _ext.export(path, str(out), fmt, ranks=group, include=_patterns(include),
                        exclude=_patterns(exclude), **extra)
            written.append(out)
            if verbose:
                print(f"Wrote {out}{note.format(out=out)}")
    return written


def export_speedscope(profiling_data, filepath, ranks=None, include=None, exclude=None,
                      verbose: bool = True) -> list[Path]:
    """speedscope JSON files, one per run, one evented profile per thread of
    each selected rank (default rank 0); as scope-profiler 0.7.5's."""
    return _export("speedscope", profiling_data, filepath, ranks, include, exclude,
                   False, ".speedscope.json", True, verbose,
                   " (view at https://www.speedscope.app)")


def export_prof(profiling_data, filepath, ranks=None, include=None, exclude=None,
                call_paths: bool = True, verbose: bool = True) -> list[Path]:
    """cProfile ``.prof`` files, one per run and rank (``_rank<N>``), that
    ``pstats`` and ``snakeviz`` open; as scope-profiler 0.7.5's."""
    return _export("prof", profiling_data, filepath, ranks, include, exclude, True,
                   ".prof", False, verbose, " (view with: snakeviz {out})",
                   call_paths=bool(call_paths))


def load_prof(filepath) -> pstats.Stats:
    """A ``.prof`` file read back as ``pstats.Stats``."""
    return pstats.Stats(str(filepath))


def to_pstats(profiling_data, ranks=None, include=None, exclude=None,
              call_paths: bool = True) -> dict[tuple[str, int], pstats.Stats]:
    """``pstats.Stats`` per (run label, rank), as scope-profiler 0.7.5's
    (written by the C exporter to a temporary file and loaded)."""
    with _as_paths(profiling_data) as paths:
        return _to_pstats(paths, ranks, include, exclude, call_paths)


def _to_pstats(paths, ranks, include, exclude, call_paths):
    labels = _unique([_label(p) for p in paths])
    out = {}
    with tempfile.TemporaryDirectory(prefix="spanscope-pstats-") as tmp:
        for label, path in zip(labels, paths):
            for rank in _ranks(ranks):
                prof = os.path.join(tmp, "stats.prof")
                _ext.export(path, prof, "prof", ranks=[rank], include=_patterns(include),
                            exclude=_patterns(exclude), call_paths=bool(call_paths),
                            root_name=f"<{label} rank {rank}>")
                out[(label, rank)] = pstats.Stats(prof)
    return out


def export_flamegraph_svg(profiling_data, filepath, ranks=None, include=None, exclude=None,
                          call_paths: bool = True, width: int = 1200,
                          threshold: float = 0.001, scalable: bool = True,
                          verbose: bool = True) -> list[Path]:
    """Flame graph SVG files, one per run and rank (``_rank<N>``): the
    call-path tree of the ``.prof`` export drawn as frames (no script, no
    flameprof needed); as scope-profiler 0.7.5's."""
    return _export("svg", profiling_data, filepath, ranks, include, exclude, True, ".svg",
                   False, verbose, "", call_paths=bool(call_paths), width=int(width),
                   threshold=float(threshold), scalable=bool(scalable))


def export_chrome_trace(profiling_data, filepath, ranks=None, include=None, exclude=None,
                        verbose: bool = True) -> list[Path]:
    """Chrome trace JSON files, one per run, the selected ranks (default 0)
    as processes; the same writer as ``spanscope convert``."""
    return _export("chrome", profiling_data, filepath, ranks, include, exclude, False,
                   ".trace.json", True, verbose,
                   " (open with Perfetto or chrome://tracing)")
