"""The call graph (scope-profiler's fluid layout)."""

from __future__ import annotations


import numpy as np

from spanscope.plots._figure import DEFAULT_CMAP, _check_output, _colors, _finish, _new_figure, _write_data
from spanscope.plots._runs import _Calls, _Run, _as_runs, _need_events, _pick_ranks, _select


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


def _fluid_layout(run: "_Run", calls: "_Calls", node_of: np.ndarray, edges: dict,
                  names: list[str]):
    """The compact call graph's positions in the fluid layout, {node:
    (x, y)}, or None for fewer than two nodes (then the layered layout, as
    scope-profiler).  The input is scope-profiler's: the regions in the
    order of their first call on the rank (by the file's call ids, as
    scope-profiler's call_graph orders them; a file without them: by start,
    a caller before its callee at the same start), the edges sorted by
    (caller name, callee name)."""
    ids = run.res.events.call_ids
    if ids is not None:
        order = np.argsort(np.asarray(ids)[calls.event], kind="stable")
    else:
        order = np.lexsort((calls.depth, calls.start))
    nodes = list(dict.fromkeys(int(node_of[i]) for i in order.tolist()))
    if len(nodes) < 2:
        return None
    index = {node: i for i, node in enumerate(nodes)}
    named = sorted(edges, key=lambda e: (names[e[0]], names[e[1]]))
    points = _fluid_positions(len(nodes), [(index[a], index[b]) for a, b in named])
    return {node: (float(points[i, 0]), float(points[i, 1])) for node, i in index.items()}


def plot_callgraph(profiling_data, rank=0, include=None, exclude=None, filepath=None,
                   show=False, verbose=True, cmap=DEFAULT_CMAP, data_filepath=None,
                   data_format="csv", backend="matplotlib", return_fig=False,
                   compact=False, fluid=False):
    """The call graph of one run and rank, from the fold's parents (no
    timestamps drawn): a node per call (compact: per region, the edges
    labelled with their call counts), callers above callees, one layer per
    depth, coloured by region.  fluid: the compact graph (fluid implies
    compact, as in scope-profiler) in scope-profiler's deterministic
    force-directed layout (_fluid_layout): the same input gives the same
    positions, and the picture has scope-profiler's shape."""
    _check_output(backend, filepath, data_filepath, data_format)
    compact = compact or fluid
    runs = _as_runs(profiling_data)
    if len(runs) != 1:
        raise ValueError("plot_callgraph draws one run")
    run = runs[0]
    _need_events(run, "a call graph")
    names = _select(run, include, exclude)
    (rank,) = _pick_ranks(run, [rank])
    calls = _Calls(run, names, [rank])
    if not calls.start.size:
        raise ValueError(f"{run.label}: no calls on rank {rank}")
    parent = np.asarray(run.res.events.parent, dtype=np.int64)
    pos_of = {int(e): i for i, e in enumerate(calls.event)}
    # a call's caller: its nearest ancestor among the calls drawn
    caller = np.full(calls.event.size, -1)
    for i, e in enumerate(calls.event.tolist()):
        p = int(parent[e])
        while p >= 0 and p not in pos_of:
            p = int(parent[p])
        caller[i] = pos_of.get(p, -1)
    if compact:
        node_of = calls.name
        labels = names
        edges: dict[tuple[int, int], int] = {}
        for i, c in enumerate(caller.tolist()):
            if c >= 0:
                k = (int(node_of[c]), int(node_of[i]))
                edges[k] = edges.get(k, 0) + 1
        layer = {}
        for i in np.argsort(calls.depth, kind="stable").tolist():
            layer.setdefault(int(node_of[i]), int(calls.depth[i]))
        nodes = sorted(layer, key=lambda n: (layer[n], n))
    else:
        order = np.lexsort((calls.start, calls.depth))
        nodes = order.tolist()
        labels = [calls.names[k] for k in calls.name]
        layer = {i: int(calls.depth[i]) for i in nodes}
        edges = {(int(c), i): 1 for i, c in enumerate(caller.tolist()) if c >= 0}
    per_layer: dict[int, list] = {}
    for n in nodes:
        per_layer.setdefault(layer[n], []).append(n)
    xy = {}
    for d, ns in per_layer.items():
        for j, n in enumerate(ns):
            xy[n] = ((j + 1) / (len(ns) + 1), -d)
    xlim, ylim = (0, 1), (-(len(per_layer) - 1) - 0.6, 0.6)
    width = max(len(v) for v in per_layer.values())
    figsize = (max(8, 1.3 * width), max(3, 1.2 * len(per_layer) + 1))
    fluid_xy = _fluid_layout(run, calls, node_of, edges, names) if fluid else None
    if fluid_xy is not None:  # two regions at least, as scope-profiler's
        xy = fluid_xy
        xlim, ylim = (-1.25, 1.25), (-1.2, 1.2)
        figsize = (max(8.0, 0.9 * len(nodes) + 4), max(6.0, 0.6 * len(nodes) + 4))
    colors = _colors(cmap, names)
    fig = _new_figure(figsize, show, backend)
    ax = fig.subplots()
    rows = []
    for (a, b), cnt in edges.items():
        ax.annotate("", xy=xy[b], xytext=xy[a],
                    arrowprops=dict(arrowstyle="->", color="#777", shrinkA=12, shrinkB=12))
        if compact:
            ax.text((xy[a][0] + xy[b][0]) / 2, (xy[a][1] + xy[b][1]) / 2, f"{cnt}x",
                    fontsize=7, color="#555", ha="center")
        rows.append((labels[a], labels[b], cnt))
    for n in nodes:
        name = labels[n]
        ax.text(*xy[n], name, ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round,pad=0.3", fc=colors[name], ec="#444"))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_axis_off()
    ax.set_title(f"Call graph: {run.label}" + (f" (rank {rank})" if run.num_ranks > 1 else "")
                 + (", fluid layout" if fluid_xy is not None else ""))
    _write_data(data_filepath, data_format, "callgraph", ("caller", "callee", "calls"), rows)
    return _finish(fig, [ax], filepath, show, verbose, return_fig)
