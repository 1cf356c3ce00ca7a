"""Plots of a recording, as scope-profiler 0.7.5 offers them
(``scope_profiler.plotting_scripts``), drawn with matplotlib or plotly.

Every function takes what scope-profiler's takes first -- one run or a
sequence of runs -- where a run is a path (``.h5``: read by
:func:`spanscope.read`) or the :class:`spanscope.Results` it returns, and
keeps scope-profiler's keyword names (``ranks``, ``include``, ``exclude``,
``filepath``, ``show``, ``verbose``, ``cmap``, ``data_filepath``,
``data_format``, ``backend``, ``return_fig``, ...).  ``filepath`` picks the
format by its suffix (``.png``, ``.svg``, ``.pdf``, whatever matplotlib
writes).  Each returns the matplotlib ``Figure`` (scope-profiler returns
None unless ``return_fig``; with ``return_fig=True`` it is
``(figure, axes)`` as there).  Durations are in seconds, as in
scope-profiler; times on a time axis are seconds since the run's first
start.

``backend="plotly"`` draws the same plot as a ``plotly.graph_objects.Figure``
(returned, with or without ``return_fig``, as scope-profiler's): a
``filepath`` ending in ``.html`` is written by ``write_html``, any other
(``.png``, ``.svg``, ...) by ``write_image``, which needs kaleido -- a
RuntimeError naming it when the export fails.  Each plot computes its data
once and draws it through one set of drawing calls (matplotlib's Axes
methods), which :class:`_PlotlyAxes` turns into plotly traces.

``data_filepath`` writes the numbers behind the plot: ``data_format``
``"csv"``, ``"json"`` (scope-profiler's plot-data envelope) or
``"parquet"`` (the csv's columns, typed, written with pyarrow).

The data are the C reader's (``spanscope.read``: per call start, duration,
self time, thread, and the one fold's parent); nothing here parses a file
or re-derives nesting: a call's depth and stack are its chain of fold
parents.

matplotlib is the optional ``plot`` extra (``pip install 'spanscope[plot]'``),
plotly the ``plotly`` extra and pyarrow the ``parquet`` extra, each
imported when a plot needs it; without it the plot raises ImportError
naming the extra.

From the command line (``spanscope plot`` calls :func:`main`)::

    python -m spanscope.plots gantt run.h5 -o gantt.svg
    python -m spanscope.plots speedup r1.h5 r2.h5 r4.h5 -o speedup.png
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spanscope._atomic import write_text_replacing

__all__ = [
    "DEFAULT_CMAP", "FLAME_CMAP", "KINDS", "main",
    "plot_gantt", "plot_flame", "plot_flame_chart", "plot_flame_graph",
    "plot_durations", "plot_duration_histogram", "plot_rank_heatmap",
    "plot_imbalance", "plot_duration_timeseries", "plot_speedup",
    "plot_scaling_efficiency", "plot_timeline_density", "plot_weak_scaling",
    "plot_weak_scaling_efficiency", "plot_callgraph", "plot_likwid", "plot_perf_events",
    "plot_roofline", "available_likwid_metrics", "available_perf_event_metrics",
    "collect_region_statistics", "write_region_statistics_json", "collect_roofline_points",
]

#: scope-profiler's default colour maps
DEFAULT_CMAP = "tab20"
FLAME_CMAP = "tab20"

_EXTRA = "pip install 'spanscope[plot]'"
_PLOTLY_EXTRA = "pip install 'spanscope[plotly]'"
_PARQUET_EXTRA = "pip install 'spanscope[parquet]'"
_NS = 1e-9  # seconds per ns: scope-profiler's plots are in seconds
_DURATION_METRICS = ("total", "avg", "min", "max", "first", "last")
_SCALING_X_FIELDS = ("num_ranks", "num_nodes", "omp_num_threads", "total_cores")
_BACKENDS = ("matplotlib", "plotly")
#: what plotly writes: .html by write_html, the rest by write_image (kaleido)
_PLOTLY_SUFFIXES = ("html", "htm", "png", "jpg", "jpeg", "webp", "svg", "pdf", "eps")
_DATA_FORMATS = ("csv", "json", "parquet")


# --- matplotlib, figures, output ----------------------------------------------
#
# Every plot computes its data once and draws it on "axes" with the subset
# of matplotlib's Axes methods listed in _PlotlyAxes: with
# backend="matplotlib" those are matplotlib's own axes, with "plotly" the
# _PlotlyAxes below, which turn the same calls into plotly traces.  So
# there is one drawing per plot, not one per backend.

def _mpl():
    """matplotlib's Figure class, imported now: the optional `plot` extra.
    ImportError naming the extra when it is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "spanscope.plots needs matplotlib, the optional 'plot' extra: "
            f"{_EXTRA}") from exc
    return Figure


def _go():
    """plotly.graph_objects, imported now: the optional `plotly` extra.
    ImportError naming the extra when it is not installed."""
    try:
        import plotly.graph_objects as go
    except ImportError as exc:
        raise ImportError(
            "spanscope.plots' backend='plotly' needs plotly, the optional "
            f"'plotly' extra: {_PLOTLY_EXTRA}") from exc
    return go


def _new_figure(figsize, show: bool, backend: str = "matplotlib"):
    """A new figure of figsize (inches): for matplotlib a pyplot one (so
    that plt.show() shows it) when shown, else a bare Figure that no global
    state keeps alive; for plotly a _PlotlyFigure (100 px an inch)."""
    if backend == "plotly":
        return _PlotlyFigure(figsize)
    Figure = _mpl()
    if show:
        import matplotlib.pyplot as plt
        return plt.figure(figsize=figsize)
    return Figure(figsize=figsize)


def _check_output(backend: str, filepath, data_filepath=None, data_format="csv") -> None:
    """ValueError for a backend other than matplotlib or plotly, an output
    path whose suffix that backend cannot write, or a data_format other
    than csv, json, parquet; ImportError naming the extra when the backend
    (or pyarrow, for parquet data) is not installed.  Called before
    anything is read or drawn."""
    if data_filepath is not None:
        if data_format not in _DATA_FORMATS:
            raise ValueError(f"data_format={data_format!r}: spanscope writes "
                             f"{', '.join(repr(f) for f in _DATA_FORMATS)}")
        if data_format == "parquet":
            _pyarrow()
    if backend not in _BACKENDS:
        raise ValueError(f"backend={backend!r}: spanscope.plots draws with "
                         f"{' or '.join(repr(b) for b in _BACKENDS)}")
    if backend == "plotly":
        _go()
        supported = _PLOTLY_SUFFIXES
    elif filepath is not None:
        supported = tuple(_mpl()().canvas.get_supported_filetypes())
    else:
        _mpl()
        return
    if filepath is None:
        return
    fmt = Path(filepath).suffix.lower().lstrip(".")
    if fmt not in supported:
        raise ValueError(
            f"{filepath}: cannot tell the image format from the suffix "
            f"(one of: {', '.join('.' + k for k in sorted(supported))})")


# The most characters a label drawn in a plot keeps (a region name from a
# file may be 1 MiB long: whole, it makes the figure too large to draw).
_LABEL_CHARS = 120


def _cut_label(text: str) -> str:
    return text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS - 1] + "\u2026"


def _cut_labels(fig) -> None:
    """Cuts every text of the matplotlib figure (tick labels, legend
    entries, titles, annotations) to _LABEL_CHARS characters, ending in
    an ellipsis: no name from a file may make the figure undrawable."""
    from matplotlib.text import Text
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_text() for t in axis.get_ticklabels()]  # formatted now
            if any(len(x) > _LABEL_CHARS for x in labels):  # fixed labels, cut
                axis.set_ticks(axis.get_ticklocs(), [_cut_label(x) for x in labels])
    for t in fig.findobj(Text):
        text = t.get_text()
        if len(text) > _LABEL_CHARS:
            t.set_text(_cut_label(text))


def _finish(fig, axes, filepath, show, verbose, return_fig):
    """Saves the figure to filepath (format by suffix), shows it if asked.
    matplotlib: returns fig, or (fig, axes) with return_fig (scope-profiler's
    form); plotly: returns the plotly Figure either way (as scope-profiler)."""
    if isinstance(fig, _PlotlyFigure):
        return fig.finish(filepath, show, verbose)
    _cut_labels(fig)
    if filepath is not None:
        path = Path(filepath)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, bbox_inches="tight")
        if verbose:
            print(f"spanscope.plots: wrote {path}")
    if show:
        import matplotlib.pyplot as plt
        plt.show()
    return (fig, axes) if return_fig else fig


# --- plotly: the same drawing calls as plotly traces ---------------------------

def _rgba(color: str, alpha: float) -> str:
    """'#rrggbb' as plotly's 'rgba(r,g,b,alpha)'."""
    c = color.lstrip("#")
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


_DASH = {"--": "dash", ":": "dot", "-.": "dashdot", "-": None, None: None}
_XANCHOR = {"center": "center", "left": "left", "right": "right"}
_YANCHOR = {"center": "middle", "center_baseline": "middle", "top": "top",
            "bottom": "bottom", "baseline": "bottom"}


class _PlotlyAxes:
    """One panel of a _PlotlyFigure, taking the matplotlib Axes calls the
    plots make (same arguments, the subset they use) and keeping them as
    plotly traces, annotations and axis settings for _PlotlyFigure.build."""

    def __init__(self, fig: "_PlotlyFigure", index: int):
        self.figure = fig
        self.index = index          # 0-based panel (subplot row)
        self.traces: list = []
        self.annotations: list[dict] = []
        self.hlines: list[dict] = []
        self.xaxis: dict = {}
        self.yaxis: dict = {}
        self.title = ""

    # names of this panel's axes in plotly's layout ("x", "x2", ...)
    def _axis_ref(self, letter: str) -> str:
        return letter if self.index == 0 else f"{letter}{self.index + 1}"

    def _named(self, label) -> dict:
        """A trace's name and legend keys: a labelled trace is in the
        legend once per figure (by name), an unlabelled one never, as
        matplotlib's legend takes only labelled artists."""
        if not label or str(label).startswith("_"):
            return {"showlegend": False}
        label = str(label)
        first = label not in self.figure.legend_names
        self.figure.legend_names.add(label)
        return {"name": label, "legendgroup": label, "showlegend": first}

    def broken_barh(self, xranges, yrange, facecolors=None, edgecolor=None,
                    linewidth=None, label=None, **_):
        go = _go()
        y0, h = yrange
        starts = [float(a) for a, _ in xranges]
        widths = [float(w) for _, w in xranges]
        line = {"width": 0} if edgecolor in (None, "none") else \
            {"color": edgecolor, "width": linewidth or 1}
        self.traces.append(go.Bar(
            orientation="h", base=starts, x=widths, y=[y0 + h / 2] * len(widths),
            width=h, marker={"color": facecolors, "line": line}, customdata=starts,
            hovertemplate=(f"{label}<br>" if label else "")
            + "start %{customdata:.6g} s<br>duration %{x:.6g} s<extra></extra>",
            **self._named(label)))

    def bar(self, x, height, width=0.8, bottom=None, color=None, label=None,
            edgecolor=None, **_):
        go = _go()
        kw = {} if bottom is None else {"base": list(np.asarray(bottom, dtype=float))}
        line = {"color": edgecolor, "width": 1} if edgecolor else {"width": 0}
        self.traces.append(go.Bar(
            x=list(np.asarray(x, dtype=float)), y=list(np.asarray(height, dtype=float)),
            width=width, marker={"color": color, "line": line}, **kw,
            **self._named(label)))

    def plot(self, x, y, marker=None, color=None, label=None, linewidth=None,
             linestyle=None, **_):
        go = _go()
        line = {"color": color, "dash": _DASH.get(linestyle)}
        if linewidth:
            line["width"] = linewidth
        self.traces.append(go.Scatter(
            x=list(x), y=list(np.asarray(y, dtype=float)),
            mode="lines+markers" if marker else "lines", line=line,
            **self._named(label)))

    def fill_between(self, x, y1, y2, color=None, alpha=1.0, **_):
        go = _go()
        fill = _rgba(color, alpha) if color and color.startswith("#") else color
        self.traces.append(go.Scatter(x=list(x), y=list(y1), mode="lines",
                                      line={"width": 0}, showlegend=False,
                                      hoverinfo="skip"))
        self.traces.append(go.Scatter(x=list(x), y=list(y2), mode="lines",
                                      line={"width": 0}, fill="tonexty", fillcolor=fill,
                                      showlegend=False, hoverinfo="skip"))

    def axhline(self, y, color=None, linestyle=None, linewidth=None, **_):
        self.hlines.append({"y": float(y), "line_color": color,
                            "line_dash": _DASH.get(linestyle),
                            "line_width": linewidth or 1})

    def imshow(self, m, cmap=None, extent=None, **_):
        """A heatmap of m, row 0 on top (matplotlib's origin='upper');
        extent (left, right, bottom, top) places the cells as there."""
        go = _go()
        m = np.asarray(m, dtype=float)
        rows, cols = m.shape
        if extent is None:
            extent = (-0.5, cols - 0.5, rows - 0.5, -0.5)
        left, right, bottom, top = extent
        xs = left + (np.arange(cols) + 0.5) * (right - left) / max(cols, 1)
        ys = top + (np.arange(rows) + 0.5) * (bottom - top) / max(rows, 1)
        trace = go.Heatmap(z=m, x=list(xs), y=list(ys), colorscale=_colorscale(cmap),
                           showscale=False)
        self.traces.append(trace)
        self.yaxis["autorange"] = "reversed"
        return trace

    def text(self, x, y, s, ha="left", va="baseline", fontsize=None, color=None,
             bbox=None, **_):
        a = {"x": float(x), "y": float(y), "text": str(s), "showarrow": False,
             "xanchor": _XANCHOR.get(ha, "center"), "yanchor": _YANCHOR.get(va, "middle"),
             "font": {k: v for k, v in (("size", fontsize), ("color", color)) if v}}
        if bbox:
            a["bgcolor"] = bbox.get("fc") or bbox.get("facecolor")
            a["bordercolor"] = bbox.get("ec") or bbox.get("edgecolor")
            a["borderpad"] = 3
        self.annotations.append(a)

    def annotate(self, text, xy, xytext=None, arrowprops=None, **_):
        """An arrow from xytext to xy (arrowprops: an arrow), as the call
        graph's edges."""
        a = {"x": float(xy[0]), "y": float(xy[1]), "text": str(text),
             "showarrow": arrowprops is not None}
        if xytext is not None and arrowprops is not None:
            a.update(ax=float(xytext[0]), ay=float(xytext[1]),
                     axref=self._axis_ref("x"), ayref=self._axis_ref("y"),
                     arrowhead=2, arrowcolor=arrowprops.get("color", "#777"),
                     standoff=12, startstandoff=12)
        self.annotations.append(a)

    def set_title(self, title, **_):
        self.title = str(title)

    def set_xlabel(self, label, **_):
        self.xaxis["title"] = {"text": str(label)}

    def set_ylabel(self, label, **_):
        self.yaxis["title"] = {"text": str(label)}

    @staticmethod
    def _ticks(axis: dict, ticks, labels=None, rotation=None):
        axis["tickmode"] = "array"
        axis["tickvals"] = [float(t) for t in ticks]
        if labels is not None:
            axis["ticktext"] = [str(t) for t in labels]
        if rotation:
            axis["tickangle"] = -float(rotation)

    def set_xticks(self, ticks, labels=None, rotation=None, **_):
        self._ticks(self.xaxis, ticks, labels, rotation)

    def set_yticks(self, ticks, labels=None, rotation=None, **_):
        self._ticks(self.yaxis, ticks, labels, rotation)

    def set_xlim(self, lo, hi=None):
        self.xaxis["range"] = [float(lo), float(hi)]

    def set_ylim(self, lo, hi=None):
        """(lo, hi) with lo > hi: the axis reversed, as in matplotlib."""
        self.yaxis.pop("autorange", None)
        self.yaxis["range"] = [float(lo), float(hi)]

    def set_xscale(self, scale):
        self.xaxis["type"] = scale

    def set_yscale(self, scale):
        self.yaxis["type"] = scale

    def grid(self, visible=True, axis="both", **_):
        if axis in ("both", "x"):
            self.xaxis["showgrid"] = bool(visible)
        if axis in ("both", "y"):
            self.yaxis["showgrid"] = bool(visible)

    def legend(self, handles=None, title=None, **_):
        """Shows the figure's legend (its labelled traces), titled."""
        self.figure.legend_title = title or self.figure.legend_title
        self.figure.show_legend = True

    def set_axis_off(self):
        self.xaxis.update(visible=False)
        self.yaxis.update(visible=False)


class _PlotlyFigure:
    """A plotly figure being drawn: panels stacked vertically (subplots),
    built into a plotly.graph_objects.Figure by build()."""

    def __init__(self, figsize):
        _go()
        # plotly's margins take ~160 px: a short panel (one rank's heatmap)
        # keeps room for its cells
        self.size_px = (int(figsize[0] * 100), max(int(figsize[1] * 100), 360))
        self.axes: list[_PlotlyAxes] = []
        self.legend_names: set[str] = set()
        self.legend_title = None
        self.show_legend = False
        self.colorbars: list[tuple] = []

    def subplots(self, nrows=1, ncols=1, squeeze=True):
        """nrows panels in one column: one _PlotlyAxes (squeeze and one),
        else an array of shape (nrows, 1) as matplotlib's."""
        if ncols != 1:
            raise ValueError("spanscope's plotly figures stack panels in one column")
        new = [_PlotlyAxes(self, len(self.axes) + i) for i in range(nrows)]
        self.axes += new
        if squeeze and nrows == 1:
            return new[0]
        out = np.empty((nrows, 1), dtype=object)
        for i, a in enumerate(new):
            out[i, 0] = a
        return out

    def colorbar(self, mappable, ax=None, label=None, **_):
        self.colorbars.append((mappable, ax, label))

    def build(self):
        """The plotly Figure: a subplot per panel with its traces, titles,
        axes, text and lines; one legend; colour bars beside their panel."""
        _go()
        from plotly.subplots import make_subplots
        n = max(len(self.axes), 1)
        fig = make_subplots(rows=n, cols=1, subplot_titles=[a.title for a in self.axes],
                            vertical_spacing=min(0.3 / n, 0.12) if n > 1 else 0.0)
        # before the traces go in: add_trace copies them
        for trace, ax, label in self.colorbars:
            dom = fig.layout["yaxis" if ax.index == 0 else f"yaxis{ax.index + 1}"].domain
            trace.update(showscale=True, colorbar={
                "title": {"text": label or ""}, "y": (dom[0] + dom[1]) / 2,
                "len": dom[1] - dom[0], "yanchor": "middle"})
        for a in self.axes:
            row = a.index + 1
            for t in a.traces:
                fig.add_trace(t, row=row, col=1)
            fig.update_xaxes(row=row, col=1, **a.xaxis)
            fig.update_yaxes(row=row, col=1, **a.yaxis)
            for h in a.hlines:
                fig.add_hline(row=row, col=1, **h)
            xr, yr = a._axis_ref("x"), a._axis_ref("y")
            for ann in a.annotations:
                fig.add_annotation(xref=xr, yref=yr, **ann)
        fig.update_layout(width=self.size_px[0], height=self.size_px[1],
                          barmode="overlay", showlegend=self.show_legend,
                          legend_title_text=self.legend_title,
                          hoverlabel={"align": "left"}, template="plotly_white")
        return fig

    def finish(self, filepath, show, verbose):
        """Builds the figure, writes filepath (.html: write_html; else
        write_image, which needs kaleido: RuntimeError naming it when the
        export fails, as scope-profiler's), shows it if asked; returns it."""
        fig = self.build()
        if filepath is not None:
            path = Path(filepath)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix.lower() in (".html", ".htm"):
                fig.write_html(str(path))
            else:
                try:
                    fig.write_image(str(path))
                except Exception as exc:
                    raise RuntimeError(
                        f"{path}: plotly image export failed ({type(exc).__name__}: "
                        f"{exc}). For PNG/SVG/PDF export install kaleido "
                        "(pip install -U kaleido), or write an .html file instead."
                    ) from exc
            if verbose:
                print(f"spanscope.plots: wrote {path}")
        if show:
            fig.show()
        return fig


#: matplotlib's tab20 and tab10, for the plotly backend without matplotlib
_TAB20 = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
          "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2",
          "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5")
_QUALITATIVE = {"tab20": _TAB20, "tab10": _TAB20[::2]}


def _colorscale(cmap):
    """A plotly colorscale for a matplotlib colour map name: sampled from
    matplotlib when it is installed, else plotly's scale of that name."""
    try:
        import matplotlib
        from matplotlib.colors import to_hex
    except ImportError:
        return cmap
    try:
        cm = matplotlib.colormaps[cmap]
    except KeyError as exc:
        raise ValueError(f"unknown colour map {cmap!r}") from exc
    return [[float(t), to_hex(cm(float(t)))] for t in np.linspace(0, 1, 11)]


def _pyarrow():
    """pyarrow and pyarrow.parquet, imported now: the optional `parquet`
    extra.  ImportError naming the extra when it is not installed."""
    try:
        import pyarrow
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "data_format='parquet' needs pyarrow, the optional 'parquet' extra: "
            f"{_PARQUET_EXTRA}") from exc
    return pyarrow, pq


def _plain(v):
    """A numpy scalar as the Python value (for pyarrow's type inference)."""
    return v.item() if isinstance(v, np.generic) else v


def _write_data(data_filepath, data_format: str, plot: str, header, rows) -> None:
    """Writes the numbers behind a plot: csv (a header and rows), json
    (scope-profiler's envelope: format, format_version, plot, columns,
    rows) or parquet (the csv's columns, typed; pyarrow).  ValueError for
    another format."""
    if data_filepath is None:
        return
    path = Path(data_filepath)
    path.parent.mkdir(parents=True, exist_ok=True)
    if data_format == "csv":
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
    elif data_format == "json":
        doc = {"format": "scope-profiler-plot-data", "format_version": 1, "plot": plot,
               "columns": list(header), "rows": [list(r) for r in rows]}
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    elif data_format == "parquet":
        pa, pq = _pyarrow()
        cols = {h: [_plain(r[i]) for r in rows] for i, h in enumerate(header)}
        table = pa.table(cols)
        # the plot's kind, as the json envelope names it
        table = table.replace_schema_metadata({"format": "scope-profiler-plot-data",
                                               "plot": plot})
        pq.write_table(table, path)
    else:
        raise ValueError(f"data_format={data_format!r}: spanscope writes "
                         f"{', '.join(repr(f) for f in _DATA_FORMATS)}")


def _colors(cmap: str, names: Sequence[str]) -> dict[str, str]:
    """A colour per region name: a qualitative map (tab20, ...) gives its
    own colours in order, cycling past its size; a continuous one is
    sampled evenly.  Without matplotlib (the plotly backend alone): tab20
    and tab10 from their table, other maps from plotly's scale of that
    name.  ValueError for an unknown map."""
    n = len(names)
    try:
        import matplotlib
        from matplotlib.colors import ListedColormap, to_hex
    except ImportError:
        if cmap in _QUALITATIVE:
            q = _QUALITATIVE[cmap]
            return {name: q[i % len(q)] for i, name in enumerate(names)}
        from plotly.colors import sample_colorscale
        try:
            cols = sample_colorscale(cmap, list(np.linspace(0, 1, max(n, 1))),
                                     colortype="tuple")
        except Exception as exc:
            raise ValueError(f"unknown colour map {cmap!r}") from exc
        return {name: "#%02x%02x%02x" % tuple(int(round(255 * v)) for v in c[:3])
                for name, c in zip(names, cols)}
    try:
        cm = matplotlib.colormaps[cmap]
    except KeyError as exc:
        raise ValueError(f"unknown colour map {cmap!r}") from exc
    if isinstance(cm, ListedColormap) and cm.N <= 40:
        cols = [cm.colors[i % cm.N] for i in range(n)]
    else:
        cols = [cm(x) for x in np.linspace(0, 1, max(n, 1))]
    return {name: to_hex(c) for name, c in zip(names, cols)}


def _legend(fig, ax, colors: dict[str, str]) -> None:
    """A legend of region colours (patches), right of the axes; plotly: the
    figure's legend of its traces, which carry the region names."""
    if isinstance(ax, _PlotlyAxes):
        ax.legend(title="region")
        return
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=c, edgecolor="none", label=n) for n, c in colors.items()]
    if handles:
        ax.legend(handles=handles, title="region", loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)


# --- runs: spanscope.read's Results and what the plots need of them --------

class _Run:
    """One recording as the plots use it: its Results and, computed once
    from the fold's parents, each event's depth and region name."""

    def __init__(self, res, label: str):
        self.res = res
        self.label = label
        self.ranks = sorted({r for per in res.regions.values() for r in per})
        self.num_ranks = len(self.ranks)
        self._depth = None

    @property
    def aggregate(self) -> bool:
        return self.res.layout == "aggregate"

    def depth(self) -> np.ndarray:
        """Per file-wide event, its depth in its thread's call tree (0: a
        root): the length of its chain of fold parents."""
        if self._depth is None:
            parent = np.asarray(self.res.events.parent, dtype=np.int64)
            depth = np.zeros(parent.size, dtype=np.int64)
            p = parent.copy()
            while True:
                up = p >= 0
                if not up.any():
                    break
                depth += up
                p = np.where(up, parent[np.where(up, p, 0)], -1)
            self._depth = depth
        return self._depth

    def t0_ns(self) -> int:
        """The run's first start (the time axes' zero)."""
        firsts = [int(r.start_ns.min()) for per in self.res.regions.values()
                  for r in per.values() if r.start_ns is not None and r.start_ns.size]
        return min(firsts) if firsts else 0

    def metadata(self, key):
        v = self.res.metadata.get(key)
        if isinstance(v, np.ndarray) and v.size == 1:
            v = v.reshape(()).item()
        return v


def _label_of(res) -> str:
    lab = res.metadata.get("label")
    if isinstance(lab, (str, bytes)) and lab:
        return lab.decode() if isinstance(lab, bytes) else lab
    return Path(res.path).stem


def _as_runs(profiling_data) -> list[_Run]:
    """profiling_data as runs: a path, a spanscope Results, a results
    object of a file (anything with a ``file_path``, as scope-profiler's
    ProfilingResults: that file, read by spanscope.read), or a sequence of
    them.  TypeError for anything else; the reader's OSError/ValueError
    for a file it cannot read."""
    from spanscope.results import Results, read
    items = (list(profiling_data) if isinstance(profiling_data, (list, tuple))
             else [profiling_data])
    runs = []
    for it in items:
        fp = getattr(it, "file_path", None)
        if not isinstance(it, (Results, str, os.PathLike)) and isinstance(fp, (str, os.PathLike)):
            it = fp  # scope-profiler's results: the same file through the C reader
        if isinstance(it, (str, os.PathLike)):
            it = read(it)
        if not isinstance(it, Results):
            raise TypeError("spanscope.plots takes paths of recordings or the "
                            f"Results of spanscope.read, not {type(it).__name__}")
        runs.append(it)
    labels = [_label_of(r) for r in runs]
    stems = list(labels)
    seen: dict[str, int] = {}
    for i, lab in enumerate(stems):  # the same stem twice: tell them apart
        if stems.count(lab) > 1:
            seen[lab] = seen.get(lab, 0) + 1
            labels[i] = f"{lab} ({seen[lab]})"
    return [_Run(r, lab) for r, lab in zip(runs, labels)]


def _normalize_ranks(ranks) -> list[int] | None:
    if ranks is None:
        return None
    if isinstance(ranks, (int, np.integer)):
        return [int(ranks)]
    return [int(r) for r in ranks]


def _pick_ranks(run: _Run, ranks) -> list[int]:
    """The run's ranks that ranks selects (None: all); ValueError naming
    those the run does not have."""
    want = _normalize_ranks(ranks)
    if want is None:
        return list(run.ranks)
    bad = [r for r in want if r not in run.ranks]
    if bad:
        raise ValueError(f"{run.label}: no rank {bad} (it has ranks {run.ranks})")
    return want


def _select(run: _Run, include=None, exclude=None) -> list[str]:
    """The run's region names that include/exclude keep (regular
    expressions, matched at the start as scope-profiler's get_regions
    does), in order of first start.  ValueError when none is left."""
    inc = [include] if isinstance(include, str) else include
    exc = [exclude] if isinstance(exclude, str) else exclude
    names = []
    for name, per in run.res.regions.items():
        if inc is not None and not any(re.match(p, name) for p in inc):
            continue
        if exc is not None and any(re.match(p, name) for p in exc):
            continue
        names.append(name)
    if not names:
        raise ValueError(f"{run.label}: no regions matched the selected filters")

    def first(name):
        st = [int(r.start_ns.min()) for r in run.res.regions[name].values()
              if r.start_ns is not None and r.start_ns.size]
        return min(st) if st else np.iinfo(np.int64).max
    return sorted(names, key=first)


def _need_events(run: _Run, what: str) -> None:
    if run.aggregate:
        raise ValueError(f"{run.label}: an aggregate file keeps no per-call events, "
                         f"and {what} needs them")


def _durations_s(run: _Run, name: str, ranks: list[int]) -> np.ndarray:
    """The calls' durations (s) of region name over ranks, pooled."""
    per = run.res.regions.get(name, {})
    parts = [per[r].durations_ns for r in ranks if r in per]
    if not parts:
        return np.zeros(0)
    return np.concatenate(parts).astype(np.float64) * _NS


def _metric_s(run: _Run, name, ranks: list[int], metric: str) -> float:
    """One duration statistic (s) of a region over ranks: total, avg, min,
    max (pooled calls; aggregate files: the stored statistics), first or
    last (the chronologically first/last call).  name may be a list of
    regions (a combine_regions bar): their calls pooled as if they were one
    region's.  NaN without calls."""
    members = [name] if isinstance(name, str) else list(name)
    regs = [run.res.regions[n][r] for n in members if n in run.res.regions
            for r in ranks if r in run.res.regions[n]]
    if run.aggregate:
        a = [r.aggregate for r in regs if r.aggregate and r.aggregate["counts"]]
        if not a:
            return float("nan")
        if metric == "total":
            return sum(x["totals"] for x in a) * _NS
        if metric == "avg":
            return sum(x["totals"] for x in a) / sum(x["counts"] for x in a) * _NS
        if metric == "min":
            return min(x["minimums"] for x in a) * _NS
        if metric == "max":
            return max(x["maximums"] for x in a) * _NS
        raise ValueError(f"metric {metric!r} needs per-call events; "
                         f"{run.label} is an aggregate file")
    regs = [r for r in regs if r.durations_ns.size]
    if not regs:
        return float("nan")
    if metric in ("first", "last"):
        pick = min if metric == "first" else max
        starts = [(int(r.start_ns.min() if metric == "first" else r.start_ns.max()), r)
                  for r in regs]
        t, r = pick(starts, key=lambda x: x[0])
        i = int(np.argmin(r.start_ns) if metric == "first" else np.argmax(r.start_ns))
        return float(r.durations_ns[i]) * _NS
    d = np.concatenate([r.durations_ns for r in regs]).astype(np.float64) * _NS
    return float({"total": d.sum, "avg": d.mean, "min": d.min, "max": d.max}[metric]())


def _check_metric(metric: str, allowed=_DURATION_METRICS) -> None:
    if metric not in allowed:
        raise ValueError(f"metric {metric!r}: one of {', '.join(allowed)}")


class _Calls:
    """The selected calls of one run as flat arrays (ns), with each call's
    region name index (into names), rank, thread and depth."""

    def __init__(self, run: _Run, names: list[str], ranks: list[int]):
        idx = {n: i for i, n in enumerate(names)}
        depth = run.depth()
        cols = {k: [] for k in ("start", "dur", "name", "rank", "thread", "depth", "event")}
        for name in names:
            for rank, r in run.res.regions[name].items():
                if rank not in ranks or not r.durations_ns.size:
                    continue
                n = r.durations_ns.size
                ev = np.arange(r.first_event, r.first_event + n)
                cols["start"].append(np.asarray(r.start_ns))
                cols["dur"].append(np.asarray(r.durations_ns))
                cols["name"].append(np.full(n, idx[name]))
                cols["rank"].append(np.full(n, rank))
                cols["thread"].append(np.zeros(n, np.int64) if r.thread_ids is None
                                      else np.asarray(r.thread_ids))
                cols["depth"].append(depth[ev])
                cols["event"].append(ev)
        for k, v in cols.items():
            setattr(self, k, np.concatenate(v).astype(np.int64) if v else np.zeros(0, np.int64))
        self.names = names


def _lanes(calls: _Calls):
    """(rank, thread) pairs in order, each with its calls' indices."""
    keys = sorted(set(zip(calls.rank.tolist(), calls.thread.tolist())))
    return [(rk, th, np.flatnonzero((calls.rank == rk) & (calls.thread == th)))
            for rk, th in keys]


def _lane_label(run: _Run, rank: int, thread: int, nthreads: int) -> str:
    parts = []
    if run.num_ranks > 1:
        parts.append(f"rank {rank}")
    if nthreads > 1 or not parts:
        parts.append(f"thread {thread}")
    return " / ".join(parts)


def _axes_grid(fig, n: int):
    """n axes stacked vertically (a list, even for one)."""
    axs = fig.subplots(n, 1, squeeze=False)
    return [a[0] for a in axs]


# --- gantt / flame chart ---------------------------------------------------------

def _draw_bars(ax, calls: _Calls, sel, y0: float, t0: int, colors, names,
               height=0.8, labels=False, x_span=None):
    """Draws the calls sel as bars at y = y0 + depth (s since t0), coloured
    by region; with labels, writes the region's name inside bars wide
    enough for it (x_span: the axis' width in s)."""
    for ni in np.unique(calls.name[sel]):
        s = sel[calls.name[sel] == ni]
        for d in np.unique(calls.depth[s]):
            sd = s[calls.depth[s] == d]
            xs = [((st - t0) * _NS, du * _NS) for st, du in zip(calls.start[sd], calls.dur[sd])]
            ax.broken_barh(xs, (y0 + d - height / 2, height),
                           facecolors=colors[names[ni]], edgecolor="none",
                           label=names[ni])
            if labels and x_span:
                for st, du in zip(calls.start[sd], calls.dur[sd]):
                    if du * _NS > x_span * 0.012 * max(4, len(names[ni])):
                        ax.text((st - t0 + du / 2) * _NS, y0 + d, names[ni], ha="center",
                                va="center", fontsize=7, clip_on=True)


def _window(calls: _Calls, t0: int, min_duration, start_time, end_time, max_depth=None):
    """Indices of the calls inside the window: duration >= min_duration,
    overlapping [start_time, end_time] (s since t0), depth <= max_depth."""
    keep = calls.dur * _NS >= min_duration
    if start_time is not None:
        keep &= (calls.start + calls.dur - t0) * _NS >= start_time
    if end_time is not None:
        keep &= (calls.start - t0) * _NS <= end_time
    if max_depth is not None:
        keep &= calls.depth <= max_depth
    return np.flatnonzero(keep)


def _aggregate_calls(calls: _Calls, sel: np.ndarray, n: int) -> _Calls:
    """Every n consecutive calls of a region on a lane at one depth as one
    bar from the first's start to the last's end (scope-profiler's
    aggregate_calls, for runs of millions of calls)."""
    out = _Calls.__new__(_Calls)
    out.names = calls.names
    keys = [calls.rank[sel], calls.thread[sel], calls.name[sel], calls.depth[sel]]
    o = sel[np.lexsort([calls.start[sel]] + keys[::-1])]
    k = np.stack([a[o] for a in (calls.rank, calls.thread, calls.name, calls.depth)])
    new_key = np.ones(o.size, dtype=bool)
    new_key[1:] = (k[:, 1:] != k[:, :-1]).any(axis=0)
    run_start = np.maximum.accumulate(np.where(new_key, np.arange(o.size), 0))
    first = (np.arange(o.size) - run_start) % n == 0  # a bar starts every n calls
    g = np.cumsum(first) - 1
    heads = o[first]
    last_end = np.zeros(heads.size, dtype=np.int64)
    np.maximum.at(last_end, g, calls.start[o] + calls.dur[o])
    for attr in ("name", "rank", "thread", "depth", "event", "start"):
        setattr(out, attr, getattr(calls, attr)[heads])
    out.dur = last_end - out.start
    return out


def plot_gantt(profiling_data, ranks=None, include=None, exclude=None, filepath=None,
               show=False, verbose=True, cmap=DEFAULT_CMAP, data_filepath=None,
               data_format="csv", backend="matplotlib", return_fig=False,
               min_duration=0.0, start_time=None, end_time=None, aggregate_calls=1,
               collapse_depth=None):
    """A Gantt chart: one lane per rank and thread (one panel per run),
    every call a bar over its time (s since the run's first start), nested
    calls one row below their parent, coloured by region with a legend.

    min_duration (s) drops shorter calls; start_time/end_time (s) keep the
    calls overlapping that window; collapse_depth keeps depths <= it;
    aggregate_calls=N draws every N consecutive calls of a region as one
    bar.  data_filepath: the bars drawn (run, rank, thread, region, depth,
    start_s, duration_s)."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(aggregate_calls) < 1:
        raise ValueError("aggregate_calls must be at least 1")
    runs = _as_runs(profiling_data)
    prepared, all_names = [], []
    for run in runs:
        _need_events(run, "a Gantt chart")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        calls = _Calls(run, names, _pick_ranks(run, ranks))
        t0 = run.t0_ns()
        sel = _window(calls, t0, min_duration, start_time, end_time, collapse_depth)
        if aggregate_calls > 1:
            calls = _aggregate_calls(calls, sel, int(aggregate_calls))
            sel = np.arange(calls.start.size)
        prepared.append((run, calls, sel, t0))
    if not any(sel.size for *_, sel, _ in prepared):
        raise ValueError("no calls left to draw (filters, window or min_duration)")
    colors = _colors(cmap, all_names)
    heights = []
    for run, calls, sel, _ in prepared:
        lanes = _lanes(calls)
        heights.append(sum(int(calls.depth[i].max()) + 1 if i.size else 1 for *_, i in lanes) or 1)
    fig = _new_figure((12, max(3.0, 1.2 + 0.45 * sum(heights) + 0.6 * len(prepared))),
                      show, backend)
    axes = _axes_grid(fig, len(prepared))
    rows = []
    for ax, (run, calls, sel, t0) in zip(axes, prepared):
        lanes = _lanes(calls)
        nthreads = len({th for _, th, _ in lanes})
        y, ticks, labels = 0.0, [], []
        for rank, thread, idx in lanes:
            idx = np.intersect1d(idx, sel)
            maxd = int(calls.depth[idx].max()) if idx.size else 0
            _draw_bars(ax, calls, idx, y, t0, colors, calls.names)
            for d in range(maxd + 1):
                ticks.append(y + d)
                labels.append(_lane_label(run, rank, thread, nthreads)
                              + (f"  depth {d}" if maxd else ""))
            for i in idx:
                rows.append((run.label, int(rank), int(thread), calls.names[calls.name[i]],
                             int(calls.depth[i]), (calls.start[i] - t0) * _NS,
                             calls.dur[i] * _NS))
            y += maxd + 1.5
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.5, -0.7)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Gantt chart: {run.label}")
        ax.grid(axis="x", alpha=0.3)
        _legend(fig, ax, {n: colors[n] for n in calls.names})
    _write_data(data_filepath, data_format, "gantt",
                ("run", "rank", "thread", "region", "depth", "start_s", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_flame_chart(profiling_data, ranks=None, include=None, exclude=None,
                     filepath=None, show=False, verbose=True, cmap=FLAME_CMAP,
                     data_filepath=None, data_format="csv", backend="matplotlib",
                     return_fig=False):
    """A flame chart: per run and rank (default: rank 0) a panel with time
    (s) across and call depth down (a block of rows per thread), each call
    a bar labelled with its region where it is wide enough.  The depths
    are the fold's nesting."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a flame chart")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        for rank in _pick_ranks(run, ranks if ranks is not None else [run.ranks[0]]):
            calls = _Calls(run, names, [rank])
            if calls.start.size:
                panels.append((run, rank, calls))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    depth_rows = [sum(int(calls.depth[i].max()) + 1 for *_, i in _lanes(calls))
                  for *_, calls in panels]
    fig = _new_figure((12, max(3.0, 1.0 + 0.4 * sum(depth_rows) + 0.9 * len(panels))),
                      show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, rank, calls) in zip(axes, panels):
        t0 = int(calls.start.min())
        span = (int((calls.start + calls.dur).max()) - t0) * _NS
        lanes = _lanes(calls)
        y, ticks, labels = 0.0, [], []
        for _, thread, idx in lanes:
            maxd = int(calls.depth[idx].max())
            _draw_bars(ax, calls, idx, y, t0, colors, calls.names, height=0.92,
                       labels=True, x_span=span)
            for d in range(maxd + 1):
                ticks.append(y + d)
                labels.append((f"thread {thread}  " if len(lanes) > 1 else "") + f"depth {d}")
            for i in idx:
                rows.append((run.label, rank, int(thread), calls.names[calls.name[i]],
                             int(calls.depth[i]), (calls.start[i] - t0) * _NS,
                             calls.dur[i] * _NS))
            y += maxd + 1.5
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.5, -0.6)
        ax.set_xlim(0, span * 1.01 if span > 0 else 1e-9)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Flame chart: {run.label}" + (f" (rank {rank})" if run.num_ranks > 1 else ""))
        _legend(fig, ax, {n: colors[n] for n in calls.names})
    _write_data(data_filepath, data_format, "flame_chart",
                ("run", "rank", "thread", "region", "depth", "start_s", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


#: scope-profiler's plot_flame is the flame chart
plot_flame = plot_flame_chart


def _stacks(run: _Run, rank: int, names: list[str]):
    """The call tree of one rank aggregated by stack (the names from the
    root down, by the fold's parents, over every thread): a list of
    (stack tuple, total inclusive ns, calls), parents before children.
    Calls of regions not in names are left out with their subtrees.  One
    vectorised pass per depth: a stack is (its parent stack, a name)."""
    res, ev = run.res, run.res.events
    nrows, wanted = len(res.rows), set(names)
    region_ids = {n: i for i, n in enumerate(res.region_names)}
    nn = max(len(res.region_names), 1)
    row_ok = np.array([r.name in wanted and r.rank == rank for r in res.rows] + [False])
    row_name = np.array([region_ids[r.name] for r in res.rows] + [0], dtype=np.int64)
    row = np.asarray(ev.row, dtype=np.int64)
    row = np.where(row >= nrows, nrows, row)  # NO_ROW: a call of no row
    ok, name = row_ok[row], row_name[row]
    parent = np.asarray(ev.parent, dtype=np.int64)
    dur = np.asarray(ev.durations_ns, dtype=np.int64)
    depth = run.depth()
    path_of = np.full(parent.size, -1, dtype=np.int64)
    paths: list[tuple] = []
    out = []
    for d in range(int(depth.max()) + 1 if depth.size else 0):
        at = np.flatnonzero((depth == d) & ok)
        if d:
            at = at[path_of[parent[at]] >= 0]  # under a kept parent
        if not at.size:
            break
        pp = path_of[parent[at]] if d else np.full(at.size, -1, dtype=np.int64)
        uniq, inv = np.unique(pp * nn + name[at], return_inverse=True)
        base = len(paths)
        path_of[at] = base + inv
        tot = np.zeros(uniq.size, dtype=np.int64)
        np.add.at(tot, inv, dur[at])
        cnt = np.bincount(inv, minlength=uniq.size)
        for u, t, c in zip(uniq.tolist(), tot.tolist(), cnt.tolist()):
            nm, par = res.region_names[u % nn], u // nn
            paths.append((paths[par] if par >= 0 else ()) + (nm,))
            out.append((paths[-1], t, c))
    return out


def plot_flame_graph(profiling_data, ranks=None, include=None, exclude=None,
                     filepath=None, show=False, verbose=True, cmap=FLAME_CMAP,
                     data_filepath=None, data_format="csv", backend="matplotlib",
                     return_fig=False):
    """An aggregated flame graph per run and rank (default: rank 0): each
    distinct call stack one box whose width is its total inclusive time
    (s), children on top of their parent, widest first."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a flame graph")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        for rank in _pick_ranks(run, ranks if ranks is not None else [run.ranks[0]]):
            st = _stacks(run, rank, names)
            if st:
                panels.append((run, rank, st))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    maxdepth = max(len(p) for *_, st in panels for p, _, _ in st)
    fig = _new_figure((12, max(3.0, 1.0 + (0.45 * maxdepth + 0.9) * len(panels))),
                      show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, rank, st) in zip(axes, panels):
        children: dict[tuple, list] = {}
        for p, tot, n in st:
            children.setdefault(p[:-1], []).append((p, tot, n))
        x_of: dict[tuple, float] = {}
        width = sum(t for p, t, _ in children.get((), [])) * _NS
        order = [()]
        while order:
            parent = order.pop(0)
            x = x_of.get(parent, 0.0)
            for p, tot, n in sorted(children.get(parent, []), key=lambda c: -c[1]):
                w = tot * _NS
                x_of[p] = x
                ax.broken_barh([(x, w)], (len(p) - 1 - 0.46, 0.92),
                               facecolors=colors[p[-1]], edgecolor="white", linewidth=0.5,
                               label=p[-1])
                if width and w > width * 0.011 * max(4, len(p[-1])):
                    ax.text(x + w / 2, len(p) - 1, p[-1], ha="center", va="center",
                            fontsize=7, clip_on=True)
                rows.append((run.label, rank, ";".join(p), len(p) - 1, n, w))
                x += w
                order.append(p)
        depth = max(len(p) for p, _, _ in st)
        ax.set_yticks(range(depth), [f"depth {d}" for d in range(depth)])
        ax.set_ylim(-0.6, depth - 0.4)
        ax.set_xlim(0, width * 1.005 if width > 0 else 1e-9)
        ax.set_xlabel("total time (s)")
        ax.set_title(f"Flame graph: {run.label}" + (f" (rank {rank})" if run.num_ranks > 1 else ""))
        _legend(fig, ax, {n: colors[n] for n in all_names if any(p[-1] == n for p, _, _ in st)})
    _write_data(data_filepath, data_format, "flame_graph",
                ("run", "rank", "stack", "depth", "calls", "total_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


# --- durations, histogram, imbalance, heatmap, time series -----------------------

#: the metrics whose bar is a sum over calls, so it splits into self time
#: plus a segment per child (stack_children): scope-profiler's
_STACKABLE_METRICS = ("avg", "total")
#: the stacked segment of a bar's own (exclusive) time
_SELF_SEGMENT = "self"


def _group_regions(names: list[str], combine_regions) -> tuple[list[str], dict]:
    """scope-profiler's combine_regions: {bar name: regex pattern(s)}
    (matched at the start, as include is).  Every region of names matching
    one of a group's patterns is pooled into one bar of that name, placed
    where its first member was; a region matching several groups belongs to
    the first listed.  Returns the bars' names in order and {bar: [member
    regions]} (a plain region: itself).  ValueError for a group matching
    no region, or for bar names colliding with a region or another group;
    TypeError when combine_regions is not a mapping."""
    members = {n: [n] for n in names}
    if not combine_regions:
        return list(names), members
    if not hasattr(combine_regions, "items"):
        raise TypeError("combine_regions maps a bar's name to regex patterns, "
                        "e.g. {'setup': ['init.*', 'alloc']}, not "
                        f"{type(combine_regions).__name__}")
    claimed: dict[str, str] = {}
    for group, patterns in combine_regions.items():
        pats = [patterns] if isinstance(patterns, str) else list(patterns)
        matches = [n for n in names
                   if n not in claimed and any(re.match(p, n) for p in pats)]
        if not matches:
            raise ValueError(f"combine_regions group {group!r} matched no regions "
                             f"(patterns: {patterns}).")
        for n in matches:
            claimed[n] = group
        members[group] = matches
    bars: list[str] = []
    seen: set[str] = set()
    for n in names:
        g = claimed.get(n)
        if g is None:
            bars.append(n)
        elif g not in seen:
            bars.append(g)
            seen.add(g)
    dup = sorted({b for b in bars if bars.count(b) > 1})
    if dup:
        raise ValueError(f"combine_regions group name(s) {dup} collide with an existing "
                         "region name or another group; pick different names.")
    return bars, members


def _stacked_segments(run: _Run, members: dict, ranks: list[int]) -> dict:
    """Each bar's inclusive time split into self time plus its direct
    children (ns, over ranks), as scope-profiler's stack_children: every
    call of the run (plotted or not: a region filtered out is still
    somebody's child) is credited to the bar its fold parent belongs to;
    a call whose parent is in its own bar (recursion, two members of one
    group) stays in that bar's self time, so the segments add up to the
    time inside the bar, counted once.  {bar: {"self": ns, child bar: ns}}."""
    res, ev = run.res, run.res.events
    bar_of = {m: bar for bar, ms in members.items() for m in ms}
    nrows = len(res.rows)
    bars = list(dict.fromkeys(bar_of.get(r.name, r.name) for r in res.rows))
    index = {b: i for i, b in enumerate(bars)}
    nb = max(len(bars), 1)
    row_bar = np.array([index[bar_of.get(r.name, r.name)] for r in res.rows] + [-1],
                       dtype=np.int64)
    wanted = set(ranks)
    row_ok = np.array([r.rank in wanted for r in res.rows] + [False])
    row = np.asarray(ev.row, dtype=np.int64)
    row = np.where(row >= nrows, nrows, row)  # NO_ROW: a call of no row
    ok = row_ok[row]
    bar = row_bar[row]
    on = ok & (bar >= 0)
    own = np.bincount(bar[on], weights=np.asarray(ev.self_ns)[on].astype(np.float64),
                      minlength=nb)
    out = {b: {_SELF_SEGMENT: float(own[i])} for i, b in enumerate(bars)
           if np.any(bar[on] == i)}
    parent = np.asarray(ev.parent, dtype=np.int64)
    nested = np.flatnonzero(on & (parent >= 0))
    pb, cb = bar[parent[nested]], bar[nested]
    outside = (pb != cb) & (pb >= 0)
    if outside.any():
        dur = np.asarray(ev.durations_ns)[nested][outside].astype(np.float64)
        keys, inv = np.unique(pb[outside] * nb + cb[outside], return_inverse=True)
        sums = np.bincount(inv, weights=dur, minlength=keys.size)
        for k, total in zip(keys.tolist(), sums.tolist()):
            seg = out.setdefault(bars[k // nb], {_SELF_SEGMENT: 0.0})
            seg[bars[k % nb]] = seg.get(bars[k % nb], 0.0) + total
    return out


def _stacked_values(runs, picked, names, members, metric):
    """The stacked bars' heights (s): the segment labels ("self" first,
    then the children by their total over every run, largest first) and per
    run {segment: heights, one per bar of names}; avg divides each bar by
    its calls (as the unstacked bar), NaN for a bar without calls."""
    per_run = [_stacked_segments(run, members, rk) for run, rk in zip(runs, picked)]
    pooled: dict[str, float] = {}
    for segs in per_run:
        for n in names:
            for lab, v in segs.get(n, {}).items():
                if lab != _SELF_SEGMENT:
                    pooled[lab] = pooled.get(lab, 0.0) + v
    labels = [_SELF_SEGMENT] + sorted(pooled, key=lambda lab: (-pooled[lab], lab))
    values = []
    for run, rk, segs in zip(runs, picked, per_run):
        vals = {lab: np.zeros(len(names)) for lab in labels}
        for i, n in enumerate(names):
            for lab, v in segs.get(n, {}).items():
                vals[lab][i] = v * _NS
        if metric == "avg":
            calls = np.array([sum(run.res.regions[m][r].num_calls for m in members[n]
                                  if m in run.res.regions for r in rk
                                  if r in run.res.regions[m]) for n in names], dtype=float)
            for h in vals.values():
                h /= np.where(calls == 0, 1.0, calls)
                h[calls == 0] = np.nan
        values.append(vals)
    return labels, values


def _draw_stack(ax, xs, segs, heights, colors, width, legend):
    """One run's stacked bars: each segment of segs (heights[seg], s) on
    top of those before it, self at the bottom; legend: label them."""
    bottom = np.zeros(len(xs))
    for seg in segs:
        h = np.nan_to_num(heights[seg])
        ax.bar(xs, h, width=width, bottom=bottom, color=colors[seg], edgecolor="black",
               linewidth=0.5, label=seg if legend else None)
        bottom = bottom + h


def _sort_and_limit(names, runs, picked, members, sort_by, top_n) -> list[str]:
    """scope-profiler's order of the bars: as found when neither sort_by
    nor top_n is given; alphabetical for sort_by "name" or top_n alone;
    else by the metric's worst case across runs (the maximum over every
    run plotted together, descending, ties by name); then the first
    top_n."""
    if sort_by is None and top_n is None:
        return names
    if sort_by is None or sort_by == "name":
        ordered = sorted(names)
    else:
        def score(n):
            vals = [_metric_s(run, members[n], rk, sort_by) for run, rk in zip(runs, picked)]
            finite = [v for v in vals if np.isfinite(v)]
            return max(finite) if finite else float("-inf")
        ordered = sorted(names, key=lambda n: (-score(n), n))
    return ordered if top_n is None else ordered[:int(top_n)]


def plot_durations(profiling_data, ranks=None, include=None, exclude=None, labels=None,
                   metric="total", metrics=None, sort_by=None, top_n=None,
                   combine_regions=None, stack_children=False, filepath=None, show=False,
                   verbose=True, cmap=DEFAULT_CMAP, log_scale=False, data_filepath=None,
                   data_format="csv", backend="matplotlib", return_fig=False):
    """Bars of a duration statistic per region (s), one bar per run in
    each region's group: metric is total, avg, min, max, first or last
    (metrics: several, one panel each); sort_by a metric to order the
    regions by (descending, its maximum over the runs) or "name", top_n
    the first N (alphabetically when alone), as scope-profiler orders them;
    labels name the runs.

    combine_regions ({"setup": ["init.*", "alloc"]}: see _group_regions)
    pools regions into one bar.  stack_children splits each bar (total or
    avg only) into the region's self time and a segment per region called
    directly from it, from the fold's parents; colours then name the
    segments (the legend), not the runs.  data_filepath: (metric, run,
    region, duration_s), stacked: (metric, run, region, segment,
    duration_s), a row per bar's self time and per non-empty child."""
    _check_output(backend, filepath, data_filepath, data_format)
    mets = list(metrics) if metrics else [metric]
    for m in mets:
        _check_metric(m)
    if sort_by is not None and sort_by != "name" and sort_by not in _DURATION_METRICS:
        raise ValueError(f"Unknown sort_by {sort_by!r}. Valid options are: "
                         f"{['name', *_DURATION_METRICS]}")
    if stack_children:
        bad = [m for m in mets if m not in _STACKABLE_METRICS]
        if bad:
            raise ValueError(f"stack_children does not apply to metric(s) {bad}: only "
                             f"{sorted(_STACKABLE_METRICS)} decompose into self time "
                             "plus children.")
    runs = _as_runs(profiling_data)
    if labels is not None:
        if len(labels) != len(runs):
            raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
        for run, lab in zip(runs, labels):
            run.label = str(lab)
    if stack_children:
        for run in runs:
            _need_events(run, "stack_children")
    names: list[str] = []
    for run in runs:
        names += [n for n in _select(run, include, exclude) if n not in names]
    names, members = _group_regions(names, combine_regions)
    picked = [_pick_ranks(run, ranks) for run in runs]
    names = _sort_and_limit(names, runs, picked, members, sort_by, top_n)
    run_colors = _colors(cmap, [r.label for r in runs])
    fig = _new_figure((max(8, 0.5 * len(names) * max(1, len(runs)) + 3), 4.5 * len(mets)),
                      show, backend)
    axes = _axes_grid(fig, len(mets))
    rows = []
    width = 0.8 / len(runs)
    # stacked bars of several runs share the segments' colours: a gap tells them apart
    bar_width = width * 0.85 if stack_children and len(runs) > 1 else width
    for ax, m in zip(axes, mets):
        if stack_children:
            segs, stacked = _stacked_values(runs, picked, names, members, m)
            seg_colors = _colors(cmap, segs)
        for k, (run, rk) in enumerate(zip(runs, picked)):
            xs = np.arange(len(names)) + (k - (len(runs) - 1) / 2) * width
            if stack_children:
                _draw_stack(ax, xs, segs, stacked[k], seg_colors, bar_width, legend=k == 0)
                rows += [(m, run.label, n, seg, float(v)) for seg in segs
                         for n, v in zip(names, stacked[k][seg])
                         if seg == _SELF_SEGMENT or v]
            else:
                vals = [_metric_s(run, members[n], rk, m) for n in names]
                ax.bar(xs, np.nan_to_num(vals), width=width, color=run_colors[run.label],
                       label=run.label)
                rows += [(m, run.label, n, v) for n, v in zip(names, vals)]
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_ylabel(f"{m} duration (s)")
        ax.set_title(f"{m} duration per region" + (", children stacked" if stack_children
                                                   else ""))
        if log_scale:
            ax.set_yscale("log")
        if stack_children:
            ax.legend(title="segment", fontsize="small", loc="upper left",
                      bbox_to_anchor=(1.01, 1))
        elif len(runs) > 1:
            ax.legend(title="run", fontsize="small")
        ax.grid(axis="y", alpha=0.3)
    _write_data(data_filepath, data_format, "durations",
                ("metric", "run", "region", "segment", "duration_s") if stack_children
                else ("metric", "run", "region", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_duration_histogram(profiling_data, ranks=None, include=None, exclude=None,
                            bins=30, filepath=None, show=False, verbose=True,
                            cmap=DEFAULT_CMAP, log_scale=False, data_filepath=None,
                            data_format="csv", backend="matplotlib", return_fig=False):
    """Each region's call-duration distribution as a line of counts per
    bin (one panel per run, bins shared within a panel, durations in s;
    log_scale: logarithmic bins and axis)."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(bins) < 1:
        raise ValueError("bins must be at least 1")
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a duration histogram")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        rk = _pick_ranks(run, ranks)
        durs = {n: _durations_s(run, n, rk) for n in names}
        durs = {n: d for n, d in durs.items() if d.size}
        if durs:
            panels.append((run, durs))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    fig = _new_figure((10, 4.0 * len(panels)), show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, durs) in zip(axes, panels):
        allv = np.concatenate(list(durs.values()))
        lo, hi = float(allv.min()), float(allv.max())
        if log_scale:
            lo = max(lo, allv[allv > 0].min() if (allv > 0).any() else 1e-9)
            edges = np.geomspace(lo, max(hi, lo * 1.0001), int(bins) + 1)
        else:
            edges = np.linspace(lo, hi if hi > lo else lo + 1e-9, int(bins) + 1)
        mids = (edges[:-1] + edges[1:]) / 2
        for n, d in durs.items():
            counts, _ = np.histogram(d, bins=edges)
            ax.plot(mids, counts, marker=".", color=colors[n], label=n)
            rows += [(run.label, n, float(a), float(b), int(c))
                     for a, b, c in zip(edges[:-1], edges[1:], counts)]
        if log_scale:
            ax.set_xscale("log")
        ax.set_xlabel("call duration (s)")
        ax.set_ylabel("calls")
        ax.set_title(f"Duration distribution: {run.label}")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    _write_data(data_filepath, data_format, "duration_histogram",
                ("run", "region", "bin_lo_s", "bin_hi_s", "calls"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_imbalance(profiling_data, metric="total", ranks=None, include=None, exclude=None,
                   filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                   log_scale=False, data_filepath=None, data_format="csv",
                   backend="matplotlib", return_fig=False):
    """Each region's duration statistic (avg, min, max or total: s) per
    rank, a line over the ranks with a dashed line at its mean over
    ranks: a straggler rank sits off its region's line."""
    _check_output(backend, filepath, data_filepath, data_format)
    _check_metric(metric, ("avg", "min", "max", "total"))
    runs = _as_runs(profiling_data)
    all_names = []
    for run in runs:
        all_names += [n for n in _select(run, include, exclude) if n not in all_names]
    colors = _colors(cmap, all_names)
    fig = _new_figure((10, 4.5 * len(runs)), show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        rk = _pick_ranks(run, ranks)
        for n in _select(run, include, exclude):
            vals = np.array([_metric_s(run, n, [r], metric) for r in rk])
            ax.plot(rk, vals, marker="o", color=colors[n], label=n)
            if np.isfinite(vals).any():
                ax.axhline(np.nanmean(vals), color=colors[n], linestyle="--", linewidth=0.8)
            rows += [(run.label, n, r, v) for r, v in zip(rk, vals.tolist())]
        ax.set_xticks(rk, [f"rank {r}" for r in rk])
        ax.set_ylabel(f"{metric} duration (s)")
        ax.set_title(f"Imbalance across ranks: {run.label}")
        if log_scale:
            ax.set_yscale("log")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.grid(alpha=0.3)
    _write_data(data_filepath, data_format, "imbalance",
                ("run", "region", "rank", f"{metric}_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_rank_heatmap(profiling_data, ranks=None, include=None, exclude=None,
                      filepath=None, show=False, verbose=True, cmap="viridis",
                      data_filepath=None, data_format="csv", backend="matplotlib",
                      return_fig=False, exclusive=False):
    """A rank-by-region heatmap of total time (s; exclusive: self time, by
    the fold), one panel per run, each cell annotated."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    prepared = []
    for run in runs:
        names = _select(run, include, exclude)
        rk = _pick_ranks(run, ranks)
        m = np.zeros((len(rk), len(names)))
        for j, n in enumerate(names):
            per = run.res.regions[n]
            for i, r in enumerate(rk):
                if r not in per:
                    continue
                reg = per[r]
                if exclusive:
                    if reg.self_ns is not None and reg.self_ns.size:
                        m[i, j] = float(reg.self_ns.sum()) * _NS
                    elif reg.exclusive_total_ns >= 0:
                        m[i, j] = reg.exclusive_total_ns * _NS
                else:
                    m[i, j] = reg.total_ns * _NS
        prepared.append((run, names, rk, m))
    fig = _new_figure((max(6, 0.9 * max(len(p[1]) for p in prepared) + 3),
                       sum(1.5 + 0.45 * len(p[2]) for p in prepared)), show, backend)
    axes = _axes_grid(fig, len(prepared))
    rows = []
    what = "self" if exclusive else "total"
    for ax, (run, names, rk, m) in zip(axes, prepared):
        im = ax.imshow(m, aspect="auto", cmap=cmap)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(rk)), [f"rank {r}" for r in rk])
        for i in range(len(rk)):
            for j in range(len(names)):
                ax.text(j, i, f"{m[i, j]:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] < (m.max() + m.min()) / 2 else "black")
                rows.append((run.label, names[j], rk[i], m[i, j]))
        fig.colorbar(im, ax=ax, label=f"{what} time (s)")
        ax.set_title(f"{what.capitalize()} time per rank and region: {run.label}")
    _write_data(data_filepath, data_format, "rank_heatmap",
                ("run", "region", "rank", f"{what}_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_duration_timeseries(profiling_data, ranks=None, include=None, exclude=None,
                             filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                             log_scale=False, data_filepath=None, data_format="csv",
                             backend="matplotlib", return_fig=False):
    """Each region's call duration (s) over time (s since the run's first
    start): call k's mean over the ranks that made a k-th call, shaded
    between their minimum and maximum (rank imbalance widens the band).
    One panel per run."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    all_names = []
    for run in runs:
        _need_events(run, "a duration time series")
        all_names += [n for n in _select(run, include, exclude) if n not in all_names]
    colors = _colors(cmap, all_names)
    fig = _new_figure((11, 4.5 * len(runs)), show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        rk, t0 = _pick_ranks(run, ranks), run.t0_ns()
        for n in _select(run, include, exclude):
            per = [run.res.regions[n][r] for r in rk if r in run.res.regions[n]]
            per = [p for p in per if p.durations_ns.size]
            if not per:
                continue
            k = max(p.durations_ns.size for p in per)
            st = np.full((len(per), k), np.nan)
            du = np.full((len(per), k), np.nan)
            for i, p in enumerate(per):
                o = np.argsort(p.start_ns, kind="stable")
                st[i, :o.size] = (p.start_ns[o] - t0) * _NS
                du[i, :o.size] = p.durations_ns[o] * _NS
            x, y = np.nanmean(st, axis=0), np.nanmean(du, axis=0)
            lo, hi = np.nanmin(du, axis=0), np.nanmax(du, axis=0)
            ax.plot(x, y, color=colors[n], label=n, linewidth=1)
            if len(per) > 1:
                ax.fill_between(x, lo, hi, color=colors[n], alpha=0.25, linewidth=0)
            rows += [(run.label, n, i, a, b, c, d)
                     for i, (a, b, c, d) in enumerate(zip(x, y, lo, hi))]
        ax.set_xlabel("time since the first start (s)")
        ax.set_ylabel("call duration (s)")
        if log_scale:
            ax.set_yscale("log")
        ax.set_title(f"Call durations over time: {run.label}")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.grid(alpha=0.3)
    _write_data(data_filepath, data_format, "duration_timeseries",
                ("run", "region", "call", "time_s", "mean_s", "min_s", "max_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_timeline_density(profiling_data, ranks=None, include=None, exclude=None,
                          filepath=None, show=False, verbose=True, cmap="magma", bins=200,
                          start_time=None, end_time=None, min_duration=0.0,
                          data_filepath=None, data_format="csv", backend="matplotlib",
                          return_fig=False):
    """Binned region occupancy: per region (a row) and time bin (a column)
    the seconds of its calls that overlap the bin, summed over ranks and
    threads -- readable for runs of millions of calls.  One panel per run."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(bins) < 1:
        raise ValueError("bins must be at least 1")
    runs = _as_runs(profiling_data)
    fig = _new_figure((12, sum(1.5 + 0.35 * len(_select(r, include, exclude)) for r in runs)),
                      show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        _need_events(run, "a timeline density")
        names, t0 = _select(run, include, exclude), run.t0_ns()
        calls = _Calls(run, names, _pick_ranks(run, ranks))
        sel = _window(calls, t0, min_duration, start_time, end_time)
        if not sel.size:
            raise ValueError(f"{run.label}: no calls left to draw")
        s = (calls.start[sel] - t0) * _NS
        e = s + calls.dur[sel] * _NS
        lo = start_time if start_time is not None else 0.0
        hi = end_time if end_time is not None else float(e.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1e-9, int(bins) + 1)
        m = np.zeros((len(names), int(bins)))
        for j in range(int(bins)):  # overlap of every call with bin j
            ov = np.clip(np.minimum(e, edges[j + 1]) - np.maximum(s, edges[j]), 0, None)
            m[:, j] = np.bincount(calls.name[sel], weights=ov, minlength=len(names))
        im = ax.imshow(m, aspect="auto", cmap=cmap, interpolation="nearest",
                       extent=(edges[0], edges[-1], len(names) - 0.5, -0.5))
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Region occupancy over time: {run.label}")
        fig.colorbar(im, ax=ax, label="seconds in bin")
        rows += [(run.label, names[i], float(edges[j]), float(edges[j + 1]), m[i, j])
                 for i in range(len(names)) for j in range(int(bins)) if m[i, j]]
    _write_data(data_filepath, data_format, "timeline_density",
                ("run", "region", "bin_lo_s", "bin_hi_s", "seconds"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


# --- across runs: speedup, efficiency -------------------------------------------

def _x_value(run: _Run, x_field: str):
    """A run's x-axis value: num_ranks (the ranks in the file), or a
    /metadata attribute (num_nodes, omp_num_threads, total_cores = ranks
    x omp_num_threads, or any other).  ValueError naming the run when the
    file lacks it."""
    if x_field == "num_ranks":
        return run.num_ranks
    if x_field == "total_cores":
        omp = run.metadata("omp_num_threads")
        if omp is None:
            raise ValueError(f"{run.label}: 'omp_num_threads' is not in its metadata")
        return run.num_ranks * int(omp)
    v = run.metadata(x_field)
    if v is None:
        raise ValueError(f"{run.label}: {x_field!r} is not in its metadata")
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
    ax.set_xlabel(x_field)
    ax.set_ylabel(f"{ylabel} ({x_field}={base})")
    ax.set_title(f"{what[0].upper()}{what[1:]} by {x_field}")
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


# --- region statistics (no matplotlib) ------------------------------------------

def _stats_runs(profiling_data):
    """profiling_data as scope-profiler ProfilingResults views of the one
    model, non-root sets dropped: a path (read_profile: the C reader), a
    spanscope Results (the reader's model itself), ProfilingResults as is,
    or a sequence of them.  ValueError for an empty sequence, TypeError
    for anything else."""
    from spanscope._results_api import ProfilingResults
    from spanscope._results_json import read_profile
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


# --- hardware counters: another integration ------------------------------------------

def _counters_missing(what: str):
    """The error of every counter plot: the results accessors' own
    (IntegrationNotAvailableError, a NotImplementedError)."""
    from spanscope._results_api import _counters_unavailable
    raise _counters_unavailable(f"perf/LIKWID counter data for {what}")


def available_likwid_metrics(profiling_data):
    """Not available yet: needs the LIKWID integration (IntegrationNotAvailableError)."""
    _counters_missing("available_likwid_metrics")


def plot_likwid(profiling_data, metric=None, **kwargs):
    """Not available yet: needs the LIKWID integration (IntegrationNotAvailableError)."""
    _counters_missing("plot_likwid")


def available_perf_event_metrics(profiling_data):
    """Not available yet: needs the perf integration (IntegrationNotAvailableError)."""
    _counters_missing("available_perf_event_metrics")


def plot_perf_events(profiling_data, metric="ipc", ranks=None, include=None, exclude=None,
                     labels=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                     backend="matplotlib"):
    """scope-profiler's signature; not available yet: needs the perf
    integration (IntegrationNotAvailableError)."""
    _counters_missing("plot_perf_events")


def collect_roofline_points(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                            ranks=None, include=None, exclude=None):
    """scope-profiler's signature; not available yet: roofline points are
    LIKWID FLOP/s and bandwidth metrics (IntegrationNotAvailableError)."""
    _counters_missing("collect_roofline_points")


def plot_roofline(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                  peak_flops=None, peak_bandwidth=None, ranks=None, include=None,
                  exclude=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                  data_filepath=None, data_format="csv", backend="matplotlib"):
    """scope-profiler's signature; not available yet: a roofline needs FLOP
    and byte counters from the LIKWID integration
    (IntegrationNotAvailableError)."""
    _counters_missing("plot_roofline")


# --- command line ------------------------------------------------------------------

#: KIND of `python -m spanscope.plots KIND` -> (function, takes several runs)
KINDS = {
    "gantt": plot_gantt,
    "timeline": plot_gantt,
    "flame": plot_flame_chart,
    "flame-chart": plot_flame_chart,
    "flame-graph": plot_flame_graph,
    "durations": plot_durations,
    "histogram": plot_duration_histogram,
    "imbalance": plot_imbalance,
    "heatmap": plot_rank_heatmap,
    "timeseries": plot_duration_timeseries,
    "density": plot_timeline_density,
    "speedup": plot_speedup,
    "efficiency": plot_scaling_efficiency,
    "weak-scaling": plot_weak_scaling,
    "weak-efficiency": plot_weak_scaling_efficiency,
    "callgraph": plot_callgraph,
}

_HELP = """\
kinds:
  gantt, timeline   a Gantt chart: a lane per rank and thread, nested calls below
  flame, flame-chart  call depth over time (rank 0 unless --ranks)
  flame-graph       stacks aggregated, width = total time
  durations         bars of --metric per region, a bar per FILE
  histogram         call-duration distribution per region (--bins, --log)
  imbalance         --metric per rank per region
  heatmap           total (--exclusive: self) time per rank and region
  timeseries        call duration over time, min-max band over ranks
  density           region occupancy per time bin (--bins)
  speedup           speedup across FILEs by --x-field (two FILEs at least)
  efficiency        parallel efficiency across FILEs by --x-field
  weak-scaling      runtime over the baseline's across FILEs (ideal: 1)
  weak-efficiency   baseline runtime over runtime across FILEs (ideal: 1)
  callgraph         callers above callees, a node per call (--compact: per
                    region; --fluid-callgraph: scope-profiler's force-directed
                    layout of it); one FILE, rank 0 unless --ranks R

The image format is the suffix of -o (.png, .svg, .pdf).  Needs matplotlib:
pip install 'spanscope[plot]'.  --backend plotly writes .html (and, with
kaleido, .png/.svg/.pdf): pip install 'spanscope[plotly]'.  --data-format
parquet needs pyarrow: pip install 'spanscope[parquet]'.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spanscope plot", description="Draws a plot of one or more recordings (.h5).",
        epilog=_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", metavar="KIND", choices=sorted(KINDS), help="the plot (see below)")
    p.add_argument("files", metavar="FILE", nargs="+", help="recordings (.h5)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the image to write (.png, .svg, .pdf; plotly: .html)")
    p.add_argument("--backend", choices=_BACKENDS, default="matplotlib",
                   help="the renderer (default matplotlib; plotly: interactive .html)")
    p.add_argument("--ranks", metavar="R[,R...]", help="ranks to plot (default: all; "
                   "flame plots: rank 0)")
    p.add_argument("--include", action="append", metavar="REGEX",
                   help="only regions matching (repeatable)")
    p.add_argument("--exclude", action="append", metavar="REGEX",
                   help="leave out regions matching (repeatable)")
    p.add_argument("--metric", help="durations: total, avg, min, max, first, last; "
                   "imbalance: total, avg, min, max (default total)")
    p.add_argument("--bins", type=int, help="histogram (30), density (200)")
    p.add_argument("--log", action="store_true", help="logarithmic duration axis")
    p.add_argument("--exclusive", action="store_true", help="heatmap: self time")
    p.add_argument("--x-field", default="num_ranks",
                   help="speedup/efficiency: num_ranks (default), num_nodes, "
                   "omp_num_threads, total_cores or a metadata attribute")
    p.add_argument("--min-duration", type=float, default=0.0, metavar="S",
                   help="gantt, density: leave out calls shorter than S seconds")
    p.add_argument("--compact", "--compact-callgraph", dest="compact", action="store_true",
                   help="callgraph: a node per region")
    p.add_argument("--fluid-callgraph", "--fluid", dest="fluid", action="store_true",
                   help="callgraph: the compact graph in a force-directed layout")
    p.add_argument("--combine-regions", "--combine", dest="combine", action="extend",
                   nargs="+", metavar="NAME=PATTERN[,PATTERN...]",
                   help="durations: pool the regions matching the patterns (regular "
                   "expressions) into one bar NAME (repeatable)")
    p.add_argument("--stack-children", action="store_true",
                   help="durations: split each bar into self time and a segment per "
                   "region called from it (--metric total or avg)")
    p.add_argument("--cmap", help="matplotlib colour map")
    p.add_argument("--data", metavar="FILE",
                   help="also write the plotted numbers (.csv, .json or .parquet)")
    p.add_argument("--data-format", "--format", dest="data_format", choices=_DATA_FORMATS,
                   help="the format of --data (default: its suffix)")
    return p


def _kwargs(kind: str, a) -> dict:
    """The plot function's keywords from the parsed arguments; ValueError
    for an option the kind does not take."""
    kw: dict = {"include": a.include, "exclude": a.exclude, "verbose": False}
    fn = KINDS[kind]
    co = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    if a.ranks:
        try:
            ranks = [int(x) for x in a.ranks.split(",")]
        except ValueError:
            raise ValueError(f"--ranks takes numbers separated by commas, got {a.ranks!r}")
        if "ranks" in co:
            kw["ranks"] = ranks
        elif len(ranks) == 1:  # plot_callgraph: one rank
            kw["rank"] = ranks[0]
        else:
            raise ValueError(f"the {kind} plot draws one rank, got --ranks {a.ranks}")
    combine = _parse_combine(a.combine) if a.combine else None
    for opt, key, val, given in (("--metric", "metric", a.metric, a.metric is not None),
                                 ("--bins", "bins", a.bins, a.bins is not None),
                                 ("--log", "log_scale", a.log, a.log),
                                 ("--exclusive", "exclusive", a.exclusive, a.exclusive),
                                 ("--x-field", "x_field", a.x_field, a.x_field != "num_ranks"),
                                 ("--min-duration", "min_duration", a.min_duration,
                                  a.min_duration != 0.0),
                                 ("--compact", "compact", a.compact, a.compact),
                                 ("--fluid-callgraph", "fluid", a.fluid, a.fluid),
                                 ("--combine-regions", "combine_regions", combine,
                                  combine is not None),
                                 ("--stack-children", "stack_children", a.stack_children,
                                  a.stack_children),
                                 ("--backend", "backend", a.backend,
                                  a.backend != "matplotlib"),
                                 ("--cmap", "cmap", a.cmap, a.cmap is not None)):
        if not given:
            continue
        if key not in co:
            raise ValueError(f"{opt} does not apply to the {kind} plot")
        kw[key] = val
    if a.data_format and not a.data:
        raise ValueError("--data-format needs --data FILE")
    if a.data:
        fmt = a.data_format or Path(a.data).suffix.lower().lstrip(".")
        if fmt not in _DATA_FORMATS:
            raise ValueError(f"--data {a.data}: the suffix must be .csv, .json or .parquet "
                             "(or give --data-format)")
        kw["data_filepath"], kw["data_format"] = a.data, fmt
    return kw


def _parse_combine(specs: list[str]) -> dict[str, list[str]]:
    """--combine-regions NAME=PATTERN[,PATTERN...] specs as plot_durations'
    combine_regions (scope-profiler's parse_region_groups); ValueError for
    a spec without NAME= or patterns, or a NAME given twice."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, patterns = spec.partition("=")
        pats = [x for x in patterns.split(",") if x]
        if not sep or not name or not pats:
            raise ValueError("--combine-regions expects 'NAME=PATTERN1,PATTERN2' "
                             f"(got {spec!r})")
        if name in groups:
            raise ValueError(f"--combine-regions group {name!r} given more than once")
        groups[name] = pats
    return groups


def main(argv: Sequence[str] | None = None) -> int:
    """`spanscope plot KIND FILE... -o OUT [options]` (argv without the
    program's name).  Returns the exit status: 0, 1 for a file that cannot
    be read or plotted, 2 for bad usage; errors are one line on stderr."""
    try:
        a = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return int(e.code or 0)
    try:
        kw = _kwargs(a.kind, a)
        _check_output(kw.get("backend", "matplotlib"), a.output,
                      kw.get("data_filepath"), kw.get("data_format", "csv"))
    except ImportError as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 2
    files = list(a.files)
    try:
        KINDS[a.kind](files if len(files) > 1 else files[0], filepath=a.output, **kw)
    except (OSError, ValueError, ImportError) as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
