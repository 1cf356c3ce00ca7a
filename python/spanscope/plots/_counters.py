"""Hardware-counter plots: LIKWID (available_likwid_metrics, plot_likwid,
collect_roofline_points, plot_roofline: the results' LIKWID data) and perf
events (another integration)."""

from __future__ import annotations


import numpy as np

from spanscope.plots._figure import (DEFAULT_CMAP, _check_output, _colors, _finish,
                                      _new_figure, _write_data)
from spanscope.plots._runs import _axes_grid


# --- hardware counters: another integration ------------------------------------------

def _counters_missing(what: str):
    """The error of every counter plot: the results accessors' own
    (IntegrationNotAvailableError, a NotImplementedError)."""
    from spanscope.results._errors import _counters_unavailable
    raise _counters_unavailable(f"perf/LIKWID counter data for {what}")


def available_perf_event_metrics(profiling_data):
    """Not available yet: needs the perf integration (IntegrationNotAvailableError)."""
    _counters_missing("available_perf_event_metrics")


def plot_perf_events(profiling_data, metric="ipc", ranks=None, include=None, exclude=None,
                     labels=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                     backend="matplotlib"):
    """scope-profiler's signature; not available yet: needs the perf
    integration (IntegrationNotAvailableError)."""
    _counters_missing("plot_perf_events")


# --- LIKWID (results/_likwid.py) ----------------------------------------------------

def _likwid_runs(profiling_data) -> list:
    """profiling_data as (label, ProfilingResults) pairs: results as given
    (a non-root rank's are skipped: rank 0 draws), a path read with its
    LIKWID groups (read_profile), or a sequence of either; labels told
    apart when two runs share one.  ValueError for nothing given."""
    import os

    from spanscope.results import ProfilingResults, read_profile
    items = (list(profiling_data) if isinstance(profiling_data, (list, tuple))
             else [profiling_data])
    if not items:
        raise ValueError("No profiling data provided.")
    runs = []
    for it in items:
        if isinstance(it, (str, os.PathLike)):
            it = read_profile(it)
        if not isinstance(it, ProfilingResults):
            raise TypeError("the LIKWID plots take ProfilingResults or paths of profiles, "
                            f"not {type(it).__name__}")
        if it.is_root:
            runs.append(it)
    labels = [r.display_label for r in runs]
    seen: dict = {}
    for i, lab in enumerate(list(labels)):
        if labels.count(lab) > 1:
            seen[lab] = seen.get(lab, 0) + 1
            labels[i] = f"{lab} ({seen[lab]})"
    return list(zip(labels, runs))


def _likwid_selected(name: str, include=None, exclude=None) -> bool:
    from spanscope.results._likwid import _selected
    return _selected(name, include, exclude)


def available_likwid_metrics(profiling_data) -> list:
    """The LIKWID derived metrics and event labels the runs recorded (what
    plot_likwid's ``metric`` takes): the union over runs, ranks and regions,
    in LIKWID's order, metrics before events; [] without LIKWID data."""
    names: list = []
    for _, run in _likwid_runs(profiling_data):
        for regions in run.get_likwid_regions().values():
            for result in regions.values():
                for name in (*result.metric_names, *result.event_labels):
                    if name not in names:
                        names.append(name)
    return names


def _likwid_value(result, metric: str) -> float:
    """A region's metric (or event label), averaged over its threads; NaN
    when the region does not have it."""
    for names, values in ((result.metric_names, result.metrics),
                          (result.event_labels, result.events)):
        if metric in names:
            row = np.asarray(values[names.index(metric)], dtype=float)
            return float(np.nanmean(row)) if row.size and np.isfinite(row).any() else float("nan")
    return float("nan")


def plot_likwid(profiling_data, metric, ranks=None, include=None, exclude=None, labels=None,
                filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP, log_scale=False,
                data_filepath=None, data_format="csv", backend="matplotlib",
                return_fig=False):
    """One LIKWID derived metric (``"CPI"``) or event label
    (``"INSTR_RETIRED_ANY"``) as grouped bars: one group per region tag, one
    bar per (run, rank) series, the value averaged over the region's
    hardware threads (scope-profiler's plot_likwid).  ValueError when no run
    has LIKWID data, no series has the ranks asked for, no region is left by
    include/exclude, or labels do not match the series; None for a
    non-root rank's results.  Data: series, region, value."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _likwid_runs(profiling_data)
    if not runs:
        return None
    if not any(run.has_likwid for _, run in runs):
        raise ValueError("None of the selected files recorded LIKWID data. Runs must be "
                         "started under likwid-perfctr/likwid-mpirun with use_likwid=True.")
    want = None if ranks is None else ([int(ranks)] if isinstance(ranks, (int, np.integer))
                                       else [int(r) for r in ranks])
    series = []
    for label, run in runs:
        rks = [r for r in run.likwid_ranks if want is None or r in want]
        for rank in rks:
            values = {tag: _likwid_value(res, metric)
                      for tag, res in run.get_likwid_regions(rank).items()}
            if not values:
                continue
            name = label if len(runs) > 1 or run.num_ranks <= 1 else f"rank {rank}"
            if len(runs) > 1 and len(rks) > 1:
                name = f"{label} (rank {rank})"
            series.append((name, values))
    if not series:
        raise ValueError(f"No LIKWID data found for metric {metric!r} with the requested "
                         "ranks/files.")
    regions = sorted({t for _, v in series for t in v if _likwid_selected(t, include, exclude)})
    if not regions:
        raise ValueError("No regions matched the selected filters.")
    names = [n for n, _ in series]
    if labels is not None:
        names = list(labels)
        if len(names) != len(series):
            raise ValueError("labels must match the number of (file, rank) series.")
    if verbose:
        print(f"Plotting LIKWID metric {metric!r} for: " + ", ".join(names))
    colors = _colors(cmap, names)
    fig = _new_figure((max(10, 0.85 * len(regions) + 2), max(4.5, 2.5 + 0.35 * len(series))),
                      show, backend)
    ax = _axes_grid(fig, 1)[0]
    width = min(0.8 / len(series), 0.35)
    x = np.arange(len(regions))
    rows = []
    for i, (name, (_, values)) in enumerate(zip(names, series)):
        heights = [values.get(t, float("nan")) for t in regions]
        ax.bar(x - 0.5 * width * (len(series) - 1) + i * width, heights, width=width,
               color=colors[name], label=name if len(series) > 1 else None,
               edgecolor="black", alpha=0.8)
        rows += [(name, t, v) for t, v in zip(regions, heights)]
    ax.set_xticks(list(x), regions)
    ax.set_ylabel(metric)
    ax.set_title(f"LIKWID {metric}")
    ax.grid(alpha=0.3)
    if log_scale:
        ax.set_yscale("log")
    if len(series) > 1:
        ax.legend()
    _write_data(data_filepath, data_format, "likwid", ("series", "region", "value"), rows)
    return _finish(fig, [ax], filepath, show, verbose, return_fig)


def _metric_sum(result, metric: str):
    """The sum of a LIKWID rate over the region's threads (a parallel region
    sustains their sum), None unless finite and positive."""
    if metric not in result.metric_names:
        return None
    v = float(np.nansum(np.asarray(result.metrics[result.metric_names.index(metric)], float)))
    return v if np.isfinite(v) and v > 0 else None


def _find_metric(result, requested, kind: str):
    if requested is not None:
        return requested if requested in result.metric_names else None
    for name in result.metric_names:
        n = name.lower().replace(" ", "")
        if kind == "flops" and "flop/s" in n:
            return name
        if kind == "bandwidth" and "bandwidth" in n and "/s" in n:
            return name
    return None


_BYTE_FACTORS = {"t": 1e3, "g": 1.0, "m": 1e-3, "k": 1e-6, "ti": 1024.0, "gi": 2**30 / 1e9,
                 "mi": 2**20 / 1e9, "ki": 2**10 / 1e9, "": 1e-9}


def _to_giga(value: float, metric: str, kind: str):
    """A LIKWID rate in GFLOP/s or GB/s, by the unit its name shows
    ("DP [MFLOP/s]", "Memory bandwidth [MBytes/s]"); None when the unit is
    not one of them."""
    n = metric.lower().replace(" ", "")
    if kind == "flops":
        for unit, f in (("gflop/s", 1.0), ("mflop/s", 1e-3), ("kflop/s", 1e-6),
                        ("flop/s", 1e-9)):
            if unit in n:
                break
        else:
            return None
    else:
        import re
        m = re.search(r"([tgmk]?i?)bytes?/s", n)
        f = None if m is None else _BYTE_FACTORS.get(m.group(1))
        if f is None:
            return None
    v = value * f
    return v if np.isfinite(v) and v > 0 else None


def collect_roofline_points(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                            ranks=None, include=None, exclude=None) -> list:
    """One roofline point per LIKWID region and rank that has a FLOP rate
    and a memory bandwidth (the metrics named, or the first metric with
    "FLOP/s" and the first with "bandwidth" and "/s"): dicts with file,
    region, rank, performance_gflops and bandwidth_gbs (the rates summed
    over the region's threads, in giga units by their LIKWID unit),
    arithmetic_intensity_flops_per_byte (their ratio), runtime_seconds (the
    slowest thread's) and the two metric names, as scope-profiler's."""
    want = None if ranks is None else ([int(ranks)] if isinstance(ranks, (int, np.integer))
                                       else [int(r) for r in ranks])
    points = []
    for label, run in _likwid_runs(profiling_data):
        for rank in run.likwid_ranks:
            if want is not None and rank not in want:
                continue
            for region, result in run.get_likwid_regions(rank).items():
                if not _likwid_selected(region, include, exclude):
                    continue
                fm = _find_metric(result, flops_metric, "flops")
                bm = _find_metric(result, bandwidth_metric, "bandwidth")
                if fm is None or bm is None:
                    continue
                fv, bv = _metric_sum(result, fm), _metric_sum(result, bm)
                perf = None if fv is None else _to_giga(fv, fm, "flops")
                bw = None if bv is None else _to_giga(bv, bm, "bandwidth")
                if perf is None or bw is None:
                    continue
                times = np.asarray(result.times, dtype=float)
                points.append({"file": label, "region": region, "rank": int(rank),
                               "performance_gflops": perf, "bandwidth_gbs": bw,
                               "arithmetic_intensity_flops_per_byte": perf / bw,
                               "runtime_seconds": float(np.nanmax(times)) if times.size
                               else None,
                               "flops_metric": fm, "bandwidth_metric": bm})
    return points


def plot_roofline(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                  peak_flops=None, peak_bandwidth=None, ranks=None, include=None,
                  exclude=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                  data_filepath=None, data_format="csv", backend="matplotlib") -> dict:
    """Attained performance (GFLOP/s) against arithmetic intensity
    (FLOP/byte) of the LIKWID regions (collect_roofline_points), log-log,
    under the roof min(peak_flops, peak_bandwidth * intensity).  Without
    peak_flops / peak_bandwidth (GFLOP/s, GB/s: measured machine ceilings)
    the largest observation stands in and the roof is labelled empirical.
    Returns the payload (points, colors, file_ranks, peak_flops_gflops,
    peak_bandwidth_gbs, empirical_ceilings, roofline); ValueError when no
    point is found or a peak is not positive."""
    _check_output(backend, filepath, data_filepath, data_format)
    if peak_flops is not None and peak_flops <= 0:
        raise ValueError("peak_flops must be positive GFLOP/s")
    if peak_bandwidth is not None and peak_bandwidth <= 0:
        raise ValueError("peak_bandwidth must be positive GB/s")
    points = collect_roofline_points(profiling_data, flops_metric=flops_metric,
                                     bandwidth_metric=bandwidth_metric, ranks=ranks,
                                     include=include, exclude=exclude)
    if not points:
        asked = [f"FLOP metric {flops_metric!r}"] if flops_metric else []
        asked += [f"bandwidth metric {bandwidth_metric!r}"] if bandwidth_metric else []
        raise ValueError("No LIKWID roofline points found for "
                         f"{', '.join(asked) or 'auto-detected FLOP and bandwidth metrics'}.")
    empirical = peak_flops is None or peak_bandwidth is None
    top = float(peak_flops or max(p["performance_gflops"] for p in points))
    bw = float(peak_bandwidth or max(p["bandwidth_gbs"] for p in points))
    ai = [p["arithmetic_intensity_flops_per_byte"] for p in points]
    xs = np.logspace(np.log10(min(ai) / 2), np.log10(max(ai) * 2), 160)
    roof = [{"arithmetic_intensity_flops_per_byte": float(v),
             "performance_gflops": float(min(top, bw * v))} for v in xs]
    files = list(dict.fromkeys(p["file"] for p in points))
    colors = _colors(cmap, files)
    fig = _new_figure((10, 6.5), show, backend)
    ax = _axes_grid(fig, 1)[0]
    for label in files:
        mine = [p for p in points if p["file"] == label]
        ax.plot([p["arithmetic_intensity_flops_per_byte"] for p in mine],
                [p["performance_gflops"] for p in mine], marker="o", linestyle="none",
                color=colors[label], label=label if len(files) > 1 else None)
    ax.plot(xs, [r["performance_gflops"] for r in roof], color="black", linewidth=1.6,
            linestyle="--", label="empirical roof" if empirical else "roofline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Arithmetic intensity [FLOP/byte]")
    ax.set_ylabel("Attained performance [GFLOP/s]")
    ax.set_title("Roofline analysis" + (" (empirical ceilings)" if empirical else ""))
    ax.grid(alpha=0.3)
    ax.legend()
    runs = {label: run.num_ranks for label, run in _likwid_runs(profiling_data)}
    payload = {"points": points, "colors": colors, "file_ranks": runs,
               "peak_flops_gflops": top, "peak_bandwidth_gbs": bw,
               "empirical_ceilings": empirical, "roofline": roof}
    if data_filepath is not None:
        if data_format == "json":
            import json
            from pathlib import Path
            path = Path(data_filepath)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"format": "scope-profiler-plot-data",
                                        "format_version": 1, "plot": "roofline", **payload},
                                       indent=2) + "\n", encoding="utf-8")
        else:
            _write_data(data_filepath, data_format, "roofline", list(points[0]),
                        [[p[k] for k in points[0]] for p in points])
    if verbose:
        print(f"Plotting roofline for {len(points)} LIKWID region/rank point(s)")
    _finish(fig, [ax], filepath, show, verbose, False)
    return payload
