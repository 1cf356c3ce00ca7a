"""Figures and output: matplotlib and plotly (the same drawing calls as plotly
traces), colours and legends, writing the data behind a plot."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np



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
