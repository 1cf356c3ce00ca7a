"""Reading a spanscope (or scope-profiler schema-3) HDF5 file for analysis.

``read(path)`` returns :class:`Results`: per-region numpy arrays and the
statistics the writer stored, plus ``summary()``, the same table the
``spanscope report`` command prints (rendered by the C reader).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from spanscope import _ext

__all__ = ["Results", "RegionData", "read"]


@dataclass
class RegionData:
    """One region's calls on one rank (ns, CLOCK_MONOTONIC timeline)."""

    name: str
    rank: int
    start_ns: np.ndarray
    durations_ns: np.ndarray
    call_ids: np.ndarray | None = None
    parent_ids: np.ndarray | None = None
    thread_ids: np.ndarray | None = None
    exclusive_total_ns: int = -1

    @property
    def end_ns(self) -> np.ndarray:
        return self.start_ns + self.durations_ns

    @property
    def num_calls(self) -> int:
        return int(self.durations_ns.size)

    @property
    def total_ns(self) -> int:
        return int(self.durations_ns.sum())

    @property
    def mean_ns(self) -> float:
        return float(self.durations_ns.mean()) if self.durations_ns.size else 0.0


@dataclass
class Results:
    """The contents of one file."""

    path: str
    region_names: list[str]
    regions: dict[str, dict[int, RegionData]] = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    aggregate: dict[str, dict[str, int]] = field(default_factory=dict)
    #: counter name -> {"times_ns", "values", "ranks"} numpy arrays (time order)
    counters: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> RegionData:
        """The region on rank 0 (or its only rank)."""
        per_rank = self.regions[name]
        return per_rank[0] if 0 in per_rank else next(iter(per_rank.values()))

    def __contains__(self, name: str) -> bool:
        return name in self.regions

    def summary(self, sort: str = "self", top: int = 0) -> str:
        """The file's report: call tree, flat view sorted by ``sort`` (self,
        total, calls, mean, max, name) cut to ``top`` rows (0: all), per-rank
        view for several ranks, counters.  The very text ``spanscope report
        PATH --sort SORT --top TOP`` prints: one C function makes both.
        ValueError for an unknown sort key."""
        return _ext.report(self.path, sort, top)

    def print_summary(self, **kw) -> None:
        print(self.summary(**kw), end="")


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _counters(g) -> dict:
    """/counters as {name: {"times_ns", "values", "ranks"}}."""
    names = [_text(n) for n in g["names"][()]]
    series = g["series"][()]
    cols = {k: g[k][()] for k in ("times_ns", "values", "ranks")}
    out = {}
    for i, name in enumerate(names):
        sel = series == i
        out[name] = {k: v[sel] for k, v in cols.items()}
    return out


def read(path) -> Results:
    """Reads a schema-3 HDF5 file written by spanscope or scope-profiler.

    Raises OSError if the file cannot be opened and ValueError if it is not a
    valid schema-3 file (the C reader validates it first).
    """
    import h5py

    path = os.fspath(path)
    _ext.report(path, "self", 1)  # the C reader validates: one clear error
    # /metadata through the library's one reader (arrays as numpy, as h5py)
    meta = {k: np.asarray(v) if isinstance(v, list) else v
            for k, v in _ext.read_metadata(path).items()}
    with h5py.File(path, "r") as f:
        names = [_text(n) for n in f["region_table/names"][()]]
        idx = f["rank_region_index"]
        ev = f["events"]
        res = Results(path, names, metadata=meta)
        region_ids = idx["region_ids"][()]
        ranks = idx["ranks"][()]
        offsets = idx["event_offsets"][()]
        counts = idx["event_counts"][()]
        excl = idx["exclusive_totals"][()] if "exclusive_totals" in idx else None
        deltas = ev["start_deltas"][()]
        durs = ev["durations"][()]
        opt = {k: ev[k][()] for k in ("call_ids", "parent_ids", "thread_ids") if k in ev}
        if _text(f.attrs.get("storage_layout", "columnar")) == "aggregate":
            for i, rid in enumerate(region_ids):
                res.aggregate[names[int(rid)]] = {
                    k: int(idx[f"aggregate_{k}"][i]) for k in
                    ("counts", "totals", "minimums", "maximums", "exclusives")
                    if f"aggregate_{k}" in idx}
        if "counters" in f:
            res.counters = _counters(f["counters"])
        for i, rid in enumerate(region_ids):
            sl = slice(int(offsets[i]), int(offsets[i]) + int(counts[i]))
            name = names[int(rid)]
            res.regions.setdefault(name, {})[int(ranks[i])] = RegionData(
                name, int(ranks[i]), np.cumsum(deltas[sl]), durs[sl],
                *(opt[k][sl] if k in opt else None for k in ("call_ids", "parent_ids", "thread_ids")),
                exclusive_total_ns=int(excl[i]) if excl is not None else -1)
    return res
