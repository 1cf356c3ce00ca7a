"""Region statistics without matplotlib: collect_region_statistics and its
JSON file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from spanscope._base.atomic import write_text_replacing
from spanscope.plots._runs import _normalize_ranks


# --- region statistics (no matplotlib) ------------------------------------------

def _stats_runs(profiling_data):
    """profiling_data as scope-profiler ProfilingResults views of the one
    model, non-root sets dropped: a path (read_profile: the C reader), a
    spanscope Results (the reader's model itself), ProfilingResults as is,
    or a sequence of them.  ValueError for an empty sequence, TypeError
    for anything else."""
    from spanscope.results._profiling import ProfilingResults
    from spanscope.results._jsonio import read_profile
    from spanscope.results import Results
    items = (list(profiling_data) if isinstance(profiling_data, (list, tuple))
             else [profiling_data])
    if not items:
        raise ValueError("No profiling data provided.")
    runs = []
    for it in items:
        if isinstance(it, (str, os.PathLike)):
            it = read_profile(it)
        elif isinstance(it, Results):
            it = ProfilingResults._from_model(it)
        elif not isinstance(it, ProfilingResults):
            raise TypeError("collect_region_statistics takes ProfilingResults, spanscope "
                            f"Results or paths of recordings, not {type(it).__name__}")
        runs.append(it)
    return [r for r in runs if r.is_root]


def _duration_stats(values: np.ndarray, first=None, last=None) -> dict:
    """scope-profiler's per-region statistics of durations (s): count,
    average, min, max, first/last (given: pooling loses call order), std
    (population), total; None for each without calls."""
    keys = ("average", "min", "max", "first", "last", "std", "total")
    if values.size == 0:
        return {"count": 0, **{f"{k}_duration_seconds": None for k in keys}}
    return {"count": int(values.size),
            "average_duration_seconds": float(np.mean(values)),
            "min_duration_seconds": float(np.min(values)),
            "max_duration_seconds": float(np.max(values)),
            "first_duration_seconds": first, "last_duration_seconds": last,
            "std_duration_seconds": float(np.std(values)),
            "total_duration_seconds": float(np.sum(values))}


def _first_last(regions: list) -> tuple:
    """The durations (s) of the chronologically first and last call over
    per-rank regions: the earliest-starting one's first, the latest-ending
    one's last; (None, None) without calls."""
    timed = [r for r in regions if r.has_timing]
    if not timed:
        return None, None
    return (min(timed, key=lambda r: r.first_start_time).first_duration,
            max(timed, key=lambda r: r.last_end_time).last_duration)


def _unique_labels(labels) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def collect_region_statistics(profiling_data, ranks=None, include=None, exclude=None,
                              labels=None) -> dict:
    """Per-region duration statistics of one or more runs, as
    scope-profiler's collect_region_statistics returns them:
    ``{"units", "filters", "common_regions", "files": [{"label",
    "file_path", "num_ranks", "total_time_seconds", "region_statistics":
    {name: {count, average/min/max/first/last/std/total_duration_seconds,
    "per_rank": {"0": {...}}}}}]}``, durations in seconds, pooled over the
    selected ranks.  Runs are paths, spanscope Results or ProfilingResults
    (the C reader's arrays; no matplotlib).  Non-root result sets are
    skipped (none left: the envelope with no files).  ValueError when
    labels do not match the runs."""
    runs = _stats_runs(profiling_data)
    sel = _normalize_ranks(ranks)
    envelope = {"units": {"durations": "seconds"},
                "filters": {"include": include, "exclude": exclude, "ranks": sel}}
    if not runs:
        return {**envelope, "common_regions": [], "files": []}
    labels = _unique_labels([r.display_label for r in runs]) if labels is None else list(labels)
    if len(labels) != len(runs):
        raise ValueError("labels must match the number of profiling files.")
    files = []
    for label, run in zip(labels, runs):
        stats = {}
        for region in run.get_regions(include=include, exclude=exclude):
            picked = [k for k in region.regions if sel is None or k in sel]
            per = [region.regions[k] for k in picked]
            durs = [r.durations for r in per if r.durations.size]
            pooled = np.concatenate(durs) if durs else np.array([], dtype=float)
            per_rank = {str(k): _duration_stats(
                region.regions[k].durations,
                region.regions[k].first_duration if region.regions[k].has_timing else None,
                region.regions[k].last_duration if region.regions[k].has_timing else None)
                for k in sorted(picked)}
            stats[region.name] = {**_duration_stats(pooled, *_first_last(per)),
                                  "per_rank": per_rank}
        files.append({"label": label, "file_path": str(Path(run.file_path).resolve()),
                      "num_ranks": run.num_ranks, "total_time_seconds": run.total_time,
                      "region_statistics": stats})
    if len(runs) > 1:
        later = [{r.name for r in run.get_regions(include=include, exclude=exclude)}
                 for run in runs[1:]]
        common = [r.name for r in runs[0].get_regions(include=include, exclude=exclude)
                  if all(r.name in names for names in later)]
    else:
        common = list(files[0]["region_statistics"])
    return {**envelope, "common_regions": common, "files": files}


def write_region_statistics_json(profiling_data, filepath, ranks=None, include=None,
                                 exclude=None, labels=None) -> dict:
    """Writes collect_region_statistics(...) to filepath as JSON in
    scope-profiler's plot-data envelope (format, format_version, plot
    "region_statistics") and returns the payload.  Nothing is written when
    no root result set is left (the other MPI ranks)."""
    payload = collect_region_statistics(profiling_data, ranks=ranks, include=include,
                                        exclude=exclude, labels=labels)
    if not payload["files"]:
        return payload
    doc = {"format": "scope-profiler-plot-data", "format_version": 1,
           "plot": "region_statistics", **payload}
    out = Path(filepath)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_replacing(out, json.dumps(doc, indent=2) + "\n")
    return payload
