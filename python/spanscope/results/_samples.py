"""Stack samples of a recording (``with_samples=True``, ``sps_sampling_start``;
docs/sampling.md): :class:`Samples`, ``Results.samples``.

The sampler takes a sample per period of each thread's CPU time; the file's
``/samples`` group holds them, each with its time, thread, rank, the region
of the innermost span open on its thread then (its *self* samples), its
stack (an index into a table of interned stacks, frames innermost first)
and its weight: the timer periods it stands for (the kernel checks CPU
timers at its tick, so at a rate above the tick one sample stands for
several periods).  A sample of weight ``w`` is ``w / hz`` seconds of CPU.

``read_stack_samples(path)`` reads them through the C reader (``sps_samples_read``,
which checks every index once); the arrays are read-only views of the C
reader's arrays.  Everything here is plain numpy on those columns.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from spanscope import _ext

__all__ = ["SampleLine", "Samples", "read_stack_samples", "frame_label"]

_COLUMNS = ("times_ns", "threads", "tids", "ranks", "regions", "call_ids", "stacks",
            "weights")
_FRAME_COLUMNS = ("lines", "kinds", "addresses")

#: Samples.kinds value of a native frame (C, C++, Fortran, the runtime's own)
NATIVE = 0
#: Samples.kinds value of a Python frame
PYTHON = 1


def frame_label(function: str, file: str, line: int, module: str = "") -> str:
    """A frame as one line of text: ``function (file:line)`` for a frame
    with a source line (Python's; a native one from a ``-g`` build),
    ``function (module)`` for a native frame without one, else the
    function alone."""
    if file:
        return f"{function} ({file}:{line})" if line else f"{function} ({file})"
    if module:
        return f"{function} ({os.path.basename(module)})"
    return function


@dataclass(frozen=True)
class SampleLine:
    """The self samples of one region at one place: its leaf frame
    (function, file, line; a native frame has file "" and line 0, and
    module its object file), the samples (their weights summed: timer
    periods) and the CPU seconds they stand for (``samples / hz``; NaN
    when the rate is unknown)."""

    function: str
    file: str
    line: int
    module: str
    samples: int
    seconds: float


class Samples:
    """A recording's stack samples, as numpy columns.

    Per sample (arrays of ``len(self)``): ``times_ns`` (CLOCK_MONOTONIC ns,
    the events' timeline), ``threads`` (the file's thread index, -1 for a
    thread without spans), ``tids`` (the OS thread id), ``ranks``,
    ``regions`` (index into ``region_names``, -1 outside every span),
    ``call_ids`` (-1 none), ``stacks`` (index into the stack table) and
    ``weights`` (timer periods, >= 1).

    The stack table: stack ``k`` is the frames
    ``stack_frames[stack_offsets[k]:stack_offsets[k + 1]]``, innermost
    first.  Per frame: ``functions``, ``files``, ``modules`` (lists of
    str), ``lines``, ``kinds`` (0 native, 1 Python) and ``addresses`` (a
    native frame's offset in its module).

    ``hz``: the rate sampled at (0: unknown; then seconds are NaN);
    ``lost``: samples the sampler dropped (a full ring).
    """

    def __init__(self, columns: dict, region_names, hz: int = 0, lost: int = 0):
        for k in _COLUMNS + ("stack_offsets", "stack_frames") + _FRAME_COLUMNS:
            setattr(self, k, np.asarray(columns[k], dtype=np.int64))
        self.functions = list(columns["functions"])
        self.files = list(columns["files"])
        self.modules = list(columns["modules"])
        self.region_names = list(region_names)
        self.hz = int(hz)
        self.lost = int(lost)
        n = len(self.times_ns)
        if any(len(getattr(self, k)) != n for k in _COLUMNS):
            raise ValueError("samples: the per-sample columns differ in length")
        nf = len(self.functions)
        if any(len(x) != nf for x in (self.files, self.modules, self.lines, self.kinds,
                                      self.addresses)):
            raise ValueError("samples: the per-frame columns differ in length")
        if len(self.stack_offsets) == 0:
            self.stack_offsets = np.zeros(1, np.int64)
        self._frame_keys = None

    # -- construction ------------------------------------------------------
    @classmethod
    def empty(cls, hz: int = 0) -> "Samples":
        """No samples (a recording made without the sampler)."""
        cols = {k: np.zeros(0, np.int64) for k in _COLUMNS + ("stack_frames",) +
                _FRAME_COLUMNS}
        cols["stack_offsets"] = np.zeros(1, np.int64)
        cols.update(functions=[], files=[], modules=[])
        return cls(cols, [], hz)

    @classmethod
    def _from_ext(cls, d: dict) -> "Samples":
        cols = {k: (v if isinstance(v, list) else np.frombuffer(v, dtype=np.int64))
                for k, v in d.items() if k not in ("region_names", "hz", "lost")}
        return cls(cols, d["region_names"], d["hz"], d["lost"])

    def select(self, mask) -> "Samples":
        """The samples where mask (a boolean array, or indexes) holds; the
        stack and frame tables are shared."""
        cols = {k: getattr(self, k)[mask] for k in _COLUMNS}
        cols.update({k: getattr(self, k) for k in ("stack_offsets", "stack_frames") +
                     _FRAME_COLUMNS})
        cols.update(functions=self.functions, files=self.files, modules=self.modules)
        return Samples(cols, self.region_names, self.hz, self.lost)

    def with_regions(self, region_names) -> "Samples":
        """The same samples with their regions named by region_names: each
        sample's region index mapped by name (a name region_names lacks is
        added at its end)."""
        names = list(region_names)
        index = {n: i for i, n in enumerate(names)}
        for n in self.region_names:
            if n not in index:
                index[n] = len(names)
                names.append(n)
        remap = np.array([index[n] for n in self.region_names] + [-1], np.int64)
        out = self.select(slice(None))
        out.regions = remap[self.regions] if len(self.regions) else self.regions.copy()
        out.region_names = names
        return out

    @staticmethod
    def concat(parts) -> "Samples":
        """One Samples of parts, one after another: their regions united by
        name, stack and frame tables appended (indexes shifted); hz is the
        first known rate, lost summed."""
        parts = [p for p in parts if p is not None]
        if not parts:
            return Samples.empty()
        names: list = []
        for p in parts:
            names += [n for n in p.region_names if n not in names]
        cols: dict = {k: [] for k in _COLUMNS + ("stack_frames",) + _FRAME_COLUMNS}
        offsets = [np.zeros(1, np.int64)]
        funcs, files, mods = [], [], []
        nstacks = nframes = nsf = 0
        for p in parts:
            q = p.with_regions(names)
            for k in _COLUMNS:
                cols[k].append(getattr(q, k))
            cols["stacks"][-1] = q.stacks + nstacks
            cols["stack_frames"].append(q.stack_frames + nframes)
            offsets.append(q.stack_offsets[1:] + nsf)
            for k in _FRAME_COLUMNS:
                cols[k].append(getattr(q, k))
            funcs += q.functions
            files += q.files
            mods += q.modules
            nstacks += len(q.stack_offsets) - 1
            nframes += len(q.functions)
            nsf += len(q.stack_frames)
        out = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in cols.items()}
        out["stack_offsets"] = np.concatenate(offsets)
        out.update(functions=funcs, files=files, modules=mods)
        hz = next((p.hz for p in parts if p.hz), 0)
        return Samples(out, names, hz, sum(p.lost for p in parts))

    # -- reading -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.times_ns)

    def __repr__(self) -> str:
        return (f"<Samples: {len(self)} samples, {int(self.weights.sum())} periods at "
                f"{self.hz} Hz, {len(self.region_names)} regions>")

    @property
    def cpu_seconds(self) -> float:
        """The CPU time the samples stand for: their weights over hz (NaN
        when the rate is unknown)."""
        return self.seconds(int(self.weights.sum()))

    def seconds(self, periods) -> float:
        """periods (summed weights) in CPU seconds; NaN without a rate."""
        return float(periods) / self.hz if self.hz else math.nan

    def stack(self, k: int) -> np.ndarray:
        """Frame indexes of stack k, innermost first."""
        return self.stack_frames[self.stack_offsets[k]:self.stack_offsets[k + 1]]

    def frame(self, f: int) -> tuple:
        """Frame f as (function, file, line)."""
        return (self.functions[f], self.files[f], int(self.lines[f]))

    def frames(self, i: int) -> list:
        """Sample i's stack as (function, file, line) tuples, innermost
        first (a native frame: file "" and line 0; ``frame_modules`` gives
        its module).  IndexError for a sample that is not there."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"sample {i} of {len(self)}")
        return [self.frame(int(f)) for f in self.stack(int(self.stacks[i]))]

    def frame_modules(self, i: int) -> list:
        """The modules of sample i's frames (innermost first; "" for
        Python frames)."""
        return [self.modules[int(f)] for f in self.stack(int(self.stacks[i]))]

    def labels(self, i: int) -> list:
        """Sample i's frames as text (frame_label), innermost first."""
        return [frame_label(self.functions[f], self.files[f], int(self.lines[f]),
                            self.modules[f]) for f in self.stack(int(self.stacks[i])).tolist()]

    def region(self, i: int):
        """The name of the region sample i belongs to (the innermost span
        open on its thread), None outside every span."""
        r = int(self.regions[i])
        return self.region_names[r] if r >= 0 else None

    def _keys(self) -> np.ndarray:
        """A key per frame index: frames of the same (function, file, line,
        module) share it (the file may hold one place under several
        indexes: stacks are interned by their raw words)."""
        if self._frame_keys is None:
            index: dict = {}
            self._frame_keys = np.fromiter(
                (index.setdefault((fn, fl, int(ln), md), len(index))
                 for fn, fl, ln, md in zip(self.functions, self.files, self.lines.tolist(),
                                           self.modules)),
                np.int64, len(self.functions))
            self._key_frame = np.zeros(len(index), np.int64)
            self._key_frame[self._frame_keys[::-1]] = np.arange(len(self.functions))[::-1]
        return self._frame_keys

    def stack_keys(self, n: int = 0) -> list:
        """Per stack of the table, the tuple of its innermost n frames'
        keys (n 0: all its frames), outermost last."""
        keys = self._keys()
        out = []
        for k in range(len(self.stack_offsets) - 1):
            fr = self.stack(k)
            if n:
                fr = fr[:n]
            out.append(tuple(keys[fr].tolist()))
        return out

    def grouped(self, n: int = 0, rank=None) -> dict:
        """The samples grouped by region and by the innermost n frames of
        their stacks (n 0: the whole stack): {(region name or None,
        frames): periods}, frames a tuple of frame indexes (one per distinct
        place), innermost first.  rank: only that rank's samples."""
        sel = np.ones(len(self), bool) if rank is None else self.ranks == int(rank)
        per_stack = self.stack_keys(n)
        out: dict = {}
        names = self.region_names
        for r, s, w in zip(self.regions[sel].tolist(), self.stacks[sel].tolist(),
                           self.weights[sel].tolist()):
            key = (names[r] if r >= 0 else None,
                   tuple(int(self._key_frame[k]) for k in per_stack[s]))
            out[key] = out.get(key, 0) + w
        return out

    def by_region(self, rank=None) -> dict:
        """Where each region's own time went: {region name: [SampleLine]}
        -- its self samples (those taken while it was the innermost open
        span) grouped by their leaf frame (function, file, line), the
        most samples first.  Samples outside every span are under None.
        rank: only that rank's samples (None: all)."""
        out: dict = {}
        for (region, frames), w in self.grouped(1, rank).items():
            if frames:
                f = frames[0]
                leaf = (self.functions[f], self.files[f], int(self.lines[f]), self.modules[f])
            else:
                leaf = ("?", "", 0, "")
            out.setdefault(region, []).append(SampleLine(*leaf, w, self.seconds(w)))
        for lines in out.values():
            lines.sort(key=lambda s: (-s.samples, s.function, s.file, s.line))
        return dict(sorted(out.items(), key=lambda kv: -sum(s.samples for s in kv[1])))

    def folded(self, thread_prefix: bool = True) -> dict:
        """The samples as folded stacks: {"frame;frame;...": periods},
        frames outermost first as frame_label text (';' in a name as ':',
        line breaks and controls as '?': the frames sps_export_stacks
        writes), each line first naming its thread (``thread_<tid>``)
        unless thread_prefix is False."""
        per_stack = []
        for k in range(len(self.stack_offsets) - 1):
            fr = self.stack(k).tolist()[::-1]
            per_stack.append(";".join(_folded_safe(frame_label(
                self.functions[f], self.files[f], int(self.lines[f]), self.modules[f]))
                for f in fr) or "?")
        out: dict = {}
        for t, s, w in zip(self.tids.tolist(), self.stacks.tolist(), self.weights.tolist()):
            key = f"thread_{t};{per_stack[s]}" if thread_prefix else per_stack[s]
            out[key] = out.get(key, 0) + w
        return out

    def to_dataframe(self):
        """One row per sample: time_ns, thread, tid, rank, region (name,
        None outside spans), call_id, weight, seconds, and the leaf frame
        (function, file, line, module, kind).  Needs pandas (the notebook
        extra): ImportError without it."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Samples.to_dataframe needs pandas (pip install "
                              "'spanscope[notebook]')") from e
        leaf = np.full(len(self), -1, np.int64)
        if len(self):
            starts = self.stack_offsets[self.stacks]
            ends = self.stack_offsets[self.stacks + 1]
            has = ends > starts
            leaf[has] = self.stack_frames[starts[has]]

        def col(values, default):
            return [values[f] if f >= 0 else default for f in leaf.tolist()]
        return pd.DataFrame({
            "time_ns": self.times_ns, "thread": self.threads, "tid": self.tids,
            "rank": self.ranks,
            "region": [self.region_names[r] if r >= 0 else None
                       for r in self.regions.tolist()],
            "call_id": self.call_ids, "weight": self.weights,
            "seconds": self.weights / self.hz if self.hz else np.full(len(self), np.nan),
            "function": col(self.functions, "?"), "file": col(self.files, ""),
            "line": col(self.lines.tolist(), 0), "module": col(self.modules, ""),
            "kind": col(self.kinds.tolist(), NATIVE),
        })


def _folded_safe(s: str) -> str:
    """A frame of a folded-stack line: ';' splits frames and a line break
    ends the line, so neither stays: ';' as ':', controls as '?' (as the
    C library's folded stacks, sps_export_stacks, write them)."""
    return "".join("?" if (ord(c) < 32 or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029")
                   else c for c in s.replace(";", ":"))


def read_stack_samples(path) -> Samples:
    """The stack samples of the spanscope file at path (its /samples
    group; an empty Samples when it has none).  OSError when the file
    cannot be read, ValueError when it is not a valid file."""
    return Samples._from_ext(_ext.read_samples(os.fspath(path)))
