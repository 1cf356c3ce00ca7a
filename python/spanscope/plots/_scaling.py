"""Across runs: speedup and strong/weak scaling efficiency."""

from __future__ import annotations


import numpy as np

from spanscope.plots._figure import DEFAULT_CMAP, _SCALING_X_FIELDS, _check_output, _colors, _finish, _new_figure, _write_data
from spanscope.plots._runs import _Run, _as_runs, _metric_s, _pick_ranks, _select


# --- across runs: speedup, efficiency -------------------------------------------

#: scope-profiler's axis labels of the scaling x fields
_X_LABELS = {"num_ranks": "MPI ranks", "num_nodes": "nodes",
             "omp_num_threads": "OpenMP threads",
             "total_cores": "MPI ranks \u00d7 OpenMP threads"}


def _x_label(x_field: str) -> str:
    """The axis label of x_field (scope-profiler's), else the field's name."""
    return _X_LABELS.get(x_field, x_field)


def _x_value(run: _Run, x_field: str):
    """A run's x-axis value, as scope-profiler's _speedup_x_value: num_ranks
    (the ranks in the file), num_nodes (/metadata; a one-rank run is on
    one node), omp_num_threads, total_cores = ranks x omp_num_threads, or
    any other /metadata attribute.  ValueError "'<field>' not found in
    metadata for <file>" when the file lacks it."""
    path = run.res.path
    if x_field == "num_ranks":
        return run.num_ranks
    if x_field == "num_nodes":
        v = run.metadata("num_nodes")
        if v is None and run.num_ranks == 1:
            return 1
        if v is None:
            raise ValueError(f"'num_nodes' not found in metadata for {path}: older "
                             "scope-profiler versions did not record the node count of "
                             "a multi-rank run")
        return int(v)
    if x_field in ("omp_num_threads", "total_cores"):
        omp = run.metadata("omp_num_threads")
        if omp is None:
            raise ValueError(f"'omp_num_threads' not found in metadata for {path}")
        return int(omp) * (run.num_ranks if x_field == "total_cores" else 1)
    v = run.metadata(x_field)
    if v is None:
        raise ValueError(f"Metadata field {x_field!r} not found for {path}. "
                         f"Available fields: {sorted(run.res.metadata)}")
    return int(v) if x_field in _SCALING_X_FIELDS else v


def _scaling(profiling_data, x_field, ranks, include, exclude, what):
    """The runs, the regions common to all, the sorted x values and per
    region {x: mean call duration (s), averaged over the runs at x}."""
    runs = _as_runs(profiling_data)
    if len(runs) < 2:
        raise ValueError(f"{what} needs at least two runs")
    common = None
    for run in runs:
        sel = _select(run, include, exclude)
        common = sel if common is None else [n for n in common if n in sel]
    if not common:
        raise ValueError("no region is common to every run")
    xs = [_x_value(run, x_field) for run in runs]
    keys = sorted(set(xs)) if x_field in _SCALING_X_FIELDS else list(dict.fromkeys(xs))
    if len(keys) < 2:
        raise ValueError(f"{what}: every run has {x_field}={keys[0]}: nothing to compare")
    means = {n: {} for n in common}
    for run, x in zip(runs, xs):
        rk = _pick_ranks(run, ranks) if ranks is not None else run.ranks
        for n in common:
            v = _metric_s(run, n, rk, "avg")
            if np.isfinite(v) and v > 0:
                means[n].setdefault(x, []).append(v)
    means = {n: {x: float(np.mean(v)) for x, v in d.items()} for n, d in means.items()}
    return runs, common, keys, means


#: kind -> (what it is called, its y label, its ideal line: "linear" x/base or 1)
_SCALING_KINDS = {
    "speedup": ("speedup", "speedup over the baseline", "linear"),
    "efficiency": ("scaling efficiency", "parallel efficiency (speedup / ideal)", "one"),
    "weak": ("weak scaling", "runtime / baseline runtime", "one"),
    "weak_efficiency": ("weak-scaling efficiency", "baseline runtime / runtime", "one"),
}


def _scaling_y(kind: str, base_s: float, t_s: float, x, base_x) -> float:
    """The y of one point: speedup T0/T, strong efficiency T0/T / (x/x0),
    weak scaling T/T0, weak efficiency T0/T."""
    if kind == "speedup" or kind == "weak_efficiency":
        return base_s / t_s
    if kind == "efficiency":
        return base_s / t_s / (x / base_x)
    return t_s / base_s


def _plot_scaling(profiling_data, x_field, ranks, include, exclude, filepath, show,
                  verbose, cmap, data_filepath, data_format, backend, return_fig,
                  kind: str):
    _check_output(backend, filepath, data_filepath, data_format)
    what, ylabel, ideal_kind = _SCALING_KINDS[kind]
    if kind == "efficiency" and x_field not in _SCALING_X_FIELDS:
        raise ValueError(f"scaling efficiency needs x_field one of {', '.join(_SCALING_X_FIELDS)}")
    runs, names, keys, means = _scaling(profiling_data, x_field, ranks, include, exclude, what)
    numeric = x_field in _SCALING_X_FIELDS
    pos = {k: (k if numeric else i) for i, k in enumerate(keys)}
    base = keys[0]
    if numeric and base <= 0:
        raise ValueError("scaling x values must be positive")
    colors = _colors(cmap, names)
    fig = _new_figure((max(8, 1.2 * len(keys) + 4), 5), show, backend)
    ax = fig.subplots()
    rows = []
    for n in names:
        b = means[n].get(base)
        if not b:
            continue
        ks = [k for k in keys if k in means[n]]
        sp = [b / means[n][k] for k in ks]
        ys = [_scaling_y(kind, b, means[n][k], k, base) for k in ks]
        ax.plot([pos[k] for k in ks], ys, marker="o", color=colors[n], label=n)
        rows += [(n, k, means[n][k], s, y) for k, s, y in zip(ks, sp, ys)]
    if not rows:
        raise ValueError(f"{what}: no region has calls at the baseline {x_field}={base}")
    xs = [pos[k] for k in keys]
    linear = ideal_kind == "linear" and numeric
    ideal = [k / base for k in keys] if linear else [1.0] * len(keys)
    ax.plot(xs, ideal, linestyle="--", color="grey", label="ideal")
    ax.set_xticks(xs, [str(k) for k in keys])
    ax.set_xlabel(_x_label(x_field))
    ax.set_ylabel(f"{ylabel} ({x_field}={base})")
    ax.set_title(f"{what[0].upper()}{what[1:]} (baseline: {_x_label(x_field)} = {base})")
    ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(alpha=0.3)
    col = {"speedup": "speedup", "efficiency": "efficiency", "weak": "relative_runtime",
           "weak_efficiency": "efficiency"}[kind]
    _write_data(data_filepath, data_format, {"efficiency": "scaling_efficiency",
                                             "weak": "weak_scaling",
                                             "weak_efficiency": "weak_scaling_efficiency"
                                             }.get(kind, kind),
                ("region", x_field, "mean_duration_s", "speedup", col), rows)
    return _finish(fig, [ax], filepath, show, verbose, return_fig)


def plot_speedup(profiling_data, x_field="num_ranks", ranks=None, include=None,
                 exclude=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                 data_filepath=None, data_format="csv", backend="matplotlib",
                 return_fig=False):
    """Each region's speedup across runs, T(baseline) / T(x) of its mean
    call duration, against x_field (num_ranks, num_nodes, omp_num_threads,
    total_cores, or another /metadata attribute: then in the runs' order),
    the baseline the smallest x, with the ideal line."""
    return _plot_scaling(profiling_data, x_field, ranks, include, exclude, filepath, show,
                         verbose, cmap, data_filepath, data_format, backend, return_fig,
                         kind="speedup")


def plot_scaling_efficiency(profiling_data, x_field="num_ranks", ranks=None, include=None,
                            exclude=None, filepath=None, show=False, verbose=True,
                            cmap=DEFAULT_CMAP, data_filepath=None, data_format="csv",
                            backend="matplotlib", return_fig=False):
    """Parallel efficiency across runs: the speedup divided by the ideal
    one (x / baseline x); 1 is perfect scaling."""
    return _plot_scaling(profiling_data, x_field, ranks, include, exclude, filepath, show,
                         verbose, cmap, data_filepath, data_format, backend, return_fig,
                         kind="efficiency")


def plot_weak_scaling(profiling_data, x_field="num_ranks", ranks=None, include=None,
                      exclude=None, filepath=None, show=False, verbose=True,
                      cmap=DEFAULT_CMAP, data_filepath=None, data_format="csv",
                      backend="matplotlib", return_fig=False):
    """Weak scaling: each region's mean call duration at each scale over
    the baseline's (the smallest x); ideal is a flat 1."""
    return _plot_scaling(profiling_data, x_field, ranks, include, exclude, filepath, show,
                         verbose, cmap, data_filepath, data_format, backend, return_fig,
                         kind="weak")


def plot_weak_scaling_efficiency(profiling_data, x_field="num_ranks", ranks=None,
                                 include=None, exclude=None, work_per_rank=None,
                                 filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                                 data_filepath=None, data_format="csv", backend="matplotlib",
                                 return_fig=False):
    """Weak-scaling efficiency: the baseline's mean call duration over the
    one at each scale (1 is ideal).  work_per_rank, one value per run, is
    checked: runs doing different work per rank are a ValueError, as in
    scope-profiler."""
    if work_per_rank is not None:
        work = [float(w) for w in work_per_rank]
        n = len(_as_runs(profiling_data))
        if len(work) != n:
            raise ValueError(f"work_per_rank has {len(work)} values for {n} runs")
        if not np.allclose(work, work[0], rtol=1e-9):
            raise ValueError("work_per_rank differs between the runs: weak-scaling "
                             f"efficiency compares runs of equal work per rank ({work})")
    return _plot_scaling(profiling_data, x_field, ranks, include, exclude, filepath, show,
                         verbose, cmap, data_filepath, data_format, backend, return_fig,
                         kind="weak_efficiency")
