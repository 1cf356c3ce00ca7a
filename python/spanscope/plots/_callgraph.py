"""The call graph, as scope-profiler 0.7.5's plot_callgraph draws it: from
the results' call_graph() (the stored call/parent ids, the C fold's
nesting), a node per call or (compact / fluid) per region, with
scope-profiler's deterministic fluid layout."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spanscope.plots._figure import DEFAULT_CMAP, _check_output, _colors, _new_figure, _write_data


# --- call graph -------------------------------------------------------------------

#: scope-profiler's fluid layout: steps, start temperature, edge rest length
_FLUID_STEPS = 120
_FLUID_TEMPERATURE = 0.08
_FLUID_REST = 0.8


def _fluid_positions(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """scope-profiler 0.7.5's deterministic force-directed layout of n
    nodes (plot_callgraph(fluid=True)), the same algorithm step for step:
    start on the unit circle in node order; 120 steps of inverse-square
    repulsion between every pair plus a spring along each edge (in the
    order given) pulling it to length 0.8, each step's move clipped to a
    temperature falling linearly from 0.08; then centred and scaled into
    [-1, 1].  No randomness: the same input gives the same positions.
    Returns an (n, 2) array."""
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    points = np.column_stack((np.cos(angles), np.sin(angles))).astype(float)
    for step in range(_FLUID_STEPS):
        delta = points[:, None, :] - points[None, :, :]
        distance = np.maximum(np.linalg.norm(delta, axis=2), 1e-3)
        force = (delta / distance[:, :, None] ** 2).sum(axis=1)
        for left, right in edges:
            vector = points[right] - points[left]
            length = max(float(np.linalg.norm(vector)), 1e-3)
            pull = vector * (length - _FLUID_REST) / length
            force[left] += pull
            force[right] -= pull
        temperature = _FLUID_TEMPERATURE * (1.0 - step / _FLUID_STEPS)
        points += np.clip(force, -temperature, temperature)
    points -= points.mean(axis=0)
    points /= max(float(np.abs(points).max()), 1e-6)
    return points


def _as_results(profiling_data):
    """profiling_data as one scope-profiler ProfilingResults: a one-element
    sequence is unwrapped (more: ValueError), a path read with read_h5, a
    spanscope Results viewed as ProfilingResults."""
    from spanscope.results import ProfilingResults, Results, read_h5
    if isinstance(profiling_data, Sequence) and not isinstance(profiling_data, (str, bytes)):
        if len(profiling_data) != 1:
            raise ValueError("callgraph accepts one profiling file at a time")
        profiling_data = profiling_data[0]
    if isinstance(profiling_data, ProfilingResults):
        return profiling_data
    if isinstance(profiling_data, Results):
        return ProfilingResults._from_model(profiling_data)
    if isinstance(profiling_data, (str, os.PathLike)):
        return read_h5(profiling_data)
    raise TypeError("plot_callgraph takes a profile's path, its ProfilingResults or the "
                    f"Results of spanscope.read, not {type(profiling_data).__name__}")


def _compact(results, nodes: list[dict], rank: int, include, exclude):
    """scope-profiler's compact graph: (regions, edges, edge_counts) with a
    region dict per name in order of first call (name, depth, calls,
    total/exclusive/average duration in s, source) and the distinct
    (caller, callee) name pairs, sorted."""
    by_name = {r.name: r for r in results.get_regions(include=include, exclude=exclude)}
    regions, seen = [], set()
    for node in nodes:
        name = node["name"]
        if name in seen:
            continue
        seen.add(name)
        r = by_name[name].regions.get(rank) if name in by_name else None
        calls = r.num_calls if r is not None else 0
        total = float(r.total_duration) if r is not None else 0.0
        source = (f"{r.source_file}:{r.source_lineno}"
                  if r is not None and r.has_source else "")
        regions.append({"name": name, "depth": node["depth"], "calls": calls,
                        "total_duration": total,
                        "exclusive_duration": (float(np.sum(r.exclusive_durations))
                                               if r is not None else 0.0),
                        "average_duration": total / calls if calls else 0.0,
                        "source": source})
    counts: dict[tuple[str, str], int] = {}
    by_id = {node["call_id"]: node for node in nodes}
    for node in nodes:
        parent = by_id.get(node["parent_id"])
        if parent is not None:
            edge = (parent["name"], node["name"])
            counts[edge] = counts.get(edge, 0) + 1
    return regions, sorted(counts), counts


def _write_callgraph_data(data_filepath, data_format, compact, nodes, edges) -> None:
    """scope-profiler's callgraph data: compact, the edges (csv/parquet:
    parent, child; json: regions and edges); else a row per call (call_id,
    parent_id, name, depth; json: "calls")."""
    if data_filepath is None:
        return
    if compact:
        header, rows = ("parent", "child"), [list(e) for e in edges]
        payload = {"regions": nodes,
                   "edges": [{"parent": p, "child": c} for p, c in edges]}
    else:
        header = ("call_id", "parent_id", "name", "depth")
        rows = [[n["call_id"], n["parent_id"], n["name"], n["depth"]] for n in nodes]
        payload = {"calls": [dict(zip(header, row)) for row in rows]}
    if data_format != "json":
        _write_data(data_filepath, data_format, "callgraph", header, rows)
        return
    path = Path(data_filepath)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": "scope-profiler-plot-data", "format_version": 1, "plot": "callgraph",
           **payload}
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _rank_suffix(num_ranks, rank) -> str:
    """" (rank N)" after a title, nothing for a one-rank run."""
    return "" if num_ranks == 1 else f" (rank {rank})"


def plot_callgraph(profiling_data, rank=0, include=None, exclude=None, filepath=None,
                   show=False, verbose=True, cmap=DEFAULT_CMAP, data_filepath=None,
                   data_format="csv", backend="matplotlib", return_fig=False,
                   compact=False, fluid=False):
    """The explicit call graph of one run and rank, without timestamps
    (scope-profiler 0.7.5's plot_callgraph): from the results'
    ``call_graph()`` -- the stored call and parent ids, the one fold's
    nesting -- a node per call (labelled "name #call_id"), callers above
    callees, or with ``compact`` a node per region and an edge per distinct
    caller/callee pair.  ``fluid`` (implies compact) places the nodes with
    scope-profiler's deterministic force-directed layout, centred in
    [-1, 1].

    profiling_data: a ProfilingResults (also one held in memory: an
    in-memory finalize's), a path, a spanscope Results, or a one-element
    sequence of them (more: ValueError "one profiling file at a time").
    ValueError "No calls recorded" when the rank / filters leave none.
    data_filepath: the graph's data (see _write_callgraph_data).  Returns
    None, or with ``return_fig`` (figure, axis) for matplotlib, the plotly
    Figure for plotly.  backend="pyvis" is not available in spanscope
    (ValueError)."""
    if backend == "plotly":
        try:
            import plotly.graph_objects  # noqa: F401
        except ImportError as exc:
            raise ImportError("plotly is required for the callgraph plot: "
                              "pip install 'spanscope[plotly]'") from exc
    _check_output(backend, filepath, data_filepath, data_format)
    results = _as_results(profiling_data)
    nodes = results.call_graph(rank=rank, include=include, exclude=exclude)
    if not nodes:
        raise ValueError("No calls recorded for the requested rank or filters.")
    compact = compact or fluid
    edges = None
    if compact:
        nodes, edges, _ = _compact(results, nodes, rank, include, exclude)
    key = (lambda n: n["name"]) if compact else (lambda n: n["call_id"])
    graph_edges = edges if compact else [(n["parent_id"], n["call_id"]) for n in nodes
                                         if n["parent_id"] is not None]
    positions = None
    if fluid and len(nodes) >= 2:
        index = {key(n): i for i, n in enumerate(nodes)}
        points = _fluid_positions(len(nodes), [(index[a], index[b]) for a, b in graph_edges])
        positions = {key(n): (float(points[i, 0]), float(points[i, 1]))
                     for i, n in enumerate(nodes)}
    if positions is None:
        positions = {key(n): (i, -n["depth"]) for i, n in enumerate(nodes)}
    _write_callgraph_data(data_filepath, data_format, compact, nodes, edges)
    title = "Call graph" + _rank_suffix(results.num_ranks, rank)
    labels = [n["name"] if compact else f"{n['name']}\n#{n['call_id']}" for n in nodes]
    if backend == "plotly":
        import plotly.graph_objects as go
        figure = go.Figure()
        for a, b in graph_edges:
            if a in positions and b in positions:
                (x0, y0), (x1, y1) = positions[a], positions[b]
                figure.add_trace(go.Scatter(x=[x0, x1], y=[y0, y1], mode="lines",
                                            line={"color": "#999"}, showlegend=False))
        figure.add_trace(go.Scatter(
            x=[positions[key(n)][0] for n in nodes], y=[positions[key(n)][1] for n in nodes],
            text=[n["name"] if compact else f"{n['name']} ({n['call_id']})" for n in nodes],
            mode="markers+text", textposition="bottom center", showlegend=False))
        figure.update_layout(title=title, xaxis_visible=False, yaxis_visible=False)
        if filepath is not None:
            out = Path(filepath)
            out.parent.mkdir(parents=True, exist_ok=True)
            if out.suffix.lower() in (".html", ".htm"):
                figure.write_html(str(out))
            else:
                figure.write_image(str(out))
            if verbose:
                print(f"spanscope.plots: wrote {out}")
        if show:
            figure.show()
        return figure if return_fig else None
    names = sorted({n["name"] for n in nodes})
    colors = _colors(cmap, names)
    fig = _new_figure((max(8, len(nodes) * 0.8), max(3, 2 + max(n["depth"] for n in nodes))),
                      show)
    axis = fig.subplots()
    for a, b in graph_edges:
        if a in positions and b in positions:
            (x0, y0), (x1, y1) = positions[a], positions[b]
            axis.plot([x0, x1], [y0, y1], color="#999999", linewidth=1, zorder=1)
    axis.scatter([positions[key(n)][0] for n in nodes], [positions[key(n)][1] for n in nodes],
                 c=[colors[n["name"]] for n in nodes], s=140, zorder=2)
    for n, label in zip(nodes, labels):
        x, y = positions[key(n)]
        axis.text(x, y - 0.12, label, ha="center", va="top", fontsize=8)
    axis.set_title(title)
    axis.set_axis_off()
    fig.tight_layout()
    if filepath is not None:
        out = Path(filepath)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, bbox_inches="tight")
        if verbose:
            print(f"spanscope.plots: wrote {out}")
    if show:
        import matplotlib.pyplot as plt
        plt.show()
    return (fig, axis) if return_fig else None
