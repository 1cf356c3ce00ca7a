"""scope-profiler 0.7.5's ``native_trace`` API: the per-rank files its C and
Fortran region APIs write, read into :class:`ProfilingResults`.

spanscope's scope-profiler C face (``include/scope_profiler.h``, in
libspanscope; docs/scope-profiler-c.md) writes either kind of file
``sp_finalize()`` writes: ``<prefix>_rank<NNNNN>.h5`` (a schema-3 profile,
read here by the C reader through :func:`read_h5`) or, with
``SP_OUTPUT_TRACE``, scope-profiler's binary native trace
``<prefix>_rank<NNNNN>.spt``::

    char[8]   "SCOPEPRF"
    int32     format version (1 or 2)
    int32     rank
    int64     number of regions
    per region:
        int32     length of the name in bytes, then the name (UTF-8)
        - version 2 only: int32 length + source file path, int32 line (-1: none)
        int64     number of calls
        int64[]   start timestamps, ns
        int64[]   end timestamps, ns

in the writer's byte order (the version field tells which).  The reader of
that format is :func:`read_trace`, in Python: the format is a flat list of
arrays that numpy reads without a copy loop, spanscope's C core has no use
for it (it never reads scope-profiler's traces otherwise), and the reader
checks every field against the bytes that are left before it uses it (a
count or a length larger than the rest of the file, a negative one, a name
that is not UTF-8, a region twice, an end before its start, bytes after the
last region: :class:`TraceFormatError`), so a hostile file costs at most
its own size in memory and raises.

``c_source_path()`` and ``c_include_dir()`` give what scope-profiler's C
tests and build recipes compile (``cc -I$(c_include_dir) prog.c
$(c_source_path)``): a translation unit with no profiler in it that forwards
every ``sp_*`` function to the libspanscope shipped in this package, loaded
with ``dlopen`` when the program first calls it; ``fortran_source_path()``
the same for Fortran (one ``.F90``: the forwarding module and
``scope_profiler.f90``).  A program built so records through spanscope.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from spanscope.results._regions import MPIRegion, Region
from spanscope.results._profiling import ProfilingResults, read_h5
from spanscope.results._jsonio import write_h5_profile

__all__ = [
    "C_DIR", "FORMAT_VERSION", "FORTRAN_DIR", "HDF5_SUFFIX", "KNOWN_FORMAT_VERSIONS",
    "MAGIC", "RANK_HDF5_GLOB", "TRACE_SUFFIX", "TraceFormatError", "c_include_dir",
    "c_source_path", "convert_traces", "find_traces", "fortran_source_path", "load_traces",
    "read_native_h5", "read_native_ranks", "read_trace", "write_results",
]

_PKG = Path(__file__).resolve().parent.parent

#: Directory holding the C sources shipped with the package (the forwarding
#: ``scope_profiler.c``).
C_DIR = _PKG / "native" / "c"

#: Directory holding the Fortran source shipped with the package.
FORTRAN_DIR = _PKG / "native" / "fortran"

MAGIC = b"SCOPEPRF"
"""First eight bytes of every trace file."""

FORMAT_VERSION = 2
"""Newest trace layout, the one the C face's ``SP_OUTPUT_TRACE`` writes
(version 1 has no per-region source location)."""

KNOWN_FORMAT_VERSIONS = (1, 2)
"""Trace format versions :func:`read_trace` accepts."""

TRACE_SUFFIX = ".spt"
"""Extension ``sp_finalize`` gives a binary trace."""

HDF5_SUFFIX = ".h5"
"""Extension ``sp_finalize`` gives a directly written HDF5 profile."""

RANK_HDF5_GLOB = f"*_rank[0-9]*{HDF5_SUFFIX}"
"""How :func:`find_traces` recognises per-rank HDF5 output in a directory
(a merged profile in the same directory is not swallowed as an input)."""


class TraceFormatError(ValueError):
    """A file is not a scope-profiler native trace, is truncated or
    inconsistent, or two inputs claim the same rank."""


def c_include_dir() -> Path:
    """Directory holding ``scope_profiler.h`` (and ``spanscope.h``,
    ``scope_profiler.hpp``, ``scope_profiler_mpi.hpp``), for the compiler's
    ``-I``."""
    return _PKG / "include"


def c_source_path() -> Path:
    """Path to ``scope_profiler.c``, the translation unit to compile into a C
    or C++ program next to ``-I$(c_include_dir)``::

        cc -std=c99 -I"$(python -c 'import spanscope.results as r; print(r.c_include_dir())')" \\
           prog.c "$(python -c 'import spanscope.results as r; print(r.c_source_path())')"

    It holds no profiler: it forwards every ``sp_*`` function to the
    libspanscope of this package (found next to the file, or
    ``$SPANSCOPE_LIBRARY``), loaded at the first call.  As in a
    scope-profiler build without ``SP_USE_HDF5``, a profiler writes the
    ``.spt`` trace; compile with ``-DSP_USE_HDF5`` for the ``.h5`` default."""
    return C_DIR / "scope_profiler.c"


def fortran_source_path() -> Path:
    """Path to the Fortran ``scope_profiler`` module to compile into a
    program (``gfortran prog.f90`` with this file first): spanscope's
    ``scope_profiler.f90`` over ISO_C_BINDING, preceded by a module that
    forwards its C calls to this package's libspanscope (loaded with
    ``dlopen``), so that it needs no C compiler and no ``-lspanscope``.
    Profilers write the ``.spt`` trace, as scope-profiler's Fortran API."""
    return FORTRAN_DIR / "scope_profiler.F90"


def _fail(path, what: str) -> TraceFormatError:
    return TraceFormatError(f"{path}: {what}")


class _RegionTrace:
    """One region of a trace: unpacks as ``(start_times, end_times)`` (int64
    ns arrays), with ``source_file`` / ``source_lineno`` attributes (None
    when the trace has no location for it)."""

    __slots__ = ("end_times", "source_file", "source_lineno", "start_times")

    def __init__(self, start_times, end_times, source_file=None, source_lineno=None):
        self.start_times = start_times
        self.end_times = end_times
        self.source_file = source_file
        self.source_lineno = source_lineno

    def __getitem__(self, index):
        return (self.start_times, self.end_times)[index]

    def __iter__(self):
        return iter((self.start_times, self.end_times))

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        return (f"_RegionTrace(calls={len(self.start_times)}, source_file={self.source_file!r}, "
                f"source_lineno={self.source_lineno!r})")


class _Cursor:
    """Bounds-checked reads from a trace's bytes."""

    def __init__(self, path, data: bytes, order: str) -> None:
        self.path, self.data, self.order, self.pos = path, data, order, 0

    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or n > self.left():
            raise _fail(self.path, f"truncated trace file ({what}: {n} bytes wanted, "
                                   f"{self.left()} left)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def i32(self, what: str) -> int:
        return struct.unpack(self.order + "i", self.take(4, what))[0]

    def i64(self, what: str) -> int:
        return struct.unpack(self.order + "q", self.take(8, what))[0]

    def text(self, what: str) -> str:
        n = self.i32(what + " length")
        if n < 0:
            raise _fail(self.path, f"negative {what} length {n}")
        raw = self.take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _fail(self.path, f"{what} is not UTF-8 ({exc})") from exc

    def times(self, n: int, what: str) -> np.ndarray:
        raw = self.take(8 * n, what)
        return np.frombuffer(raw, dtype=self.order + "i8").astype(np.int64)


def read_trace(path) -> tuple:
    """Reads one rank's ``.spt`` trace (format version 1 or 2, either byte
    order).

    Returns ``(rank, regions)``: ``regions`` maps a region name to its
    ``(start_times, end_times)`` int64 ns arrays, in the file's order; each
    value also has ``.source_file`` / ``.source_lineno`` (None in a
    version-1 trace or for a region with no location).

    Raises :class:`TraceFormatError` when the file is not a trace, is
    truncated, has bytes after its last region, names a format version this
    reader does not know, or is inconsistent (a negative count or length, a
    name that is not UTF-8, a region twice, an end before its start);
    ``FileNotFoundError`` / ``OSError`` when it cannot be read."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) < 24:
        raise _fail(path, "too short to be a trace file")
    if data[:8] != MAGIC:
        raise _fail(path, f"not a scope-profiler native trace (expected {MAGIC!r}, "
                          f"found {data[:8]!r})")
    order = version = None
    for o in ("<", ">"):
        v = struct.unpack(o + "i", data[8:12])[0]
        if v in KNOWN_FORMAT_VERSIONS:
            order, version = o, v
            break
    if order is None:
        little = struct.unpack("<i", data[8:12])[0]
        raise _fail(path, f"unsupported trace format version {little} (this reader reads "
                          f"versions {KNOWN_FORMAT_VERSIONS})")
    cur = _Cursor(path, data, order)
    cur.pos = 12
    rank = cur.i32("rank")
    num_regions = cur.i64("number of regions")
    # a region takes at least 12 bytes (version 1) or 20 (version 2's source fields)
    smallest = 12 if version == 1 else 20
    if num_regions < 0 or num_regions * smallest > cur.left():
        raise _fail(path, f"truncated trace file ({num_regions} regions announced, "
                          f"{cur.left()} bytes left)")
    regions: dict = {}
    for _ in range(num_regions):
        name = cur.text("region name")
        source_file = source_lineno = None
        if version >= 2:
            source_file = cur.text("source file path") or None
            line = cur.i32("source line")
            if line >= 0:
                source_lineno = line
        calls = cur.i64("number of calls")
        if calls < 0 or calls * 16 > cur.left():
            raise _fail(path, f"truncated trace file (region {name!r}: {calls} calls "
                              f"announced, {cur.left()} bytes left)")
        starts = cur.times(calls, f"start times of {name!r}")
        ends = cur.times(calls, f"end times of {name!r}")
        if name in regions:
            raise _fail(path, f"region {name!r} appears twice")
        bad = np.flatnonzero(ends < starts)
        if bad.size:
            raise _fail(path, f"region {name!r}: call {int(bad[0])} ends before it starts")
        regions[name] = _RegionTrace(starts, ends, source_file, source_lineno)
    if cur.left():
        raise _fail(path, f"{cur.left()} trailing byte(s) after the last region")
    return rank, regions


def find_traces(inputs) -> list:
    """The native output files among inputs (a path or a sequence of paths):
    files as given, and in each directory (not recursively) its ``*.spt``
    traces and ``*_rank<NNNNN>.h5`` profiles.  Returns the Paths sorted,
    without duplicates.  FileNotFoundError when an input does not exist or
    a directory holds neither kind of file."""
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    found = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            in_dir = sorted([*path.glob(f"*{TRACE_SUFFIX}"), *path.glob(RANK_HDF5_GLOB)])
            if not in_dir:
                raise FileNotFoundError(f"no {TRACE_SUFFIX} traces and no per-rank "
                                        f"{HDF5_SUFFIX} profiles in {path}")
            found.extend(in_dir)
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")
    return sorted(set(found))


def read_native_h5(path) -> tuple:
    """Reads a per-rank ``.h5`` the C face writes (or any profile: a merged
    one contributes all its ranks) with :func:`read_h5`.  Returns
    ``(ranks, metadata)``: rank -> {region name: Region}, and the file's
    run metadata."""
    results = read_h5(path)
    ranks: dict = {}
    for region in results.get_regions():
        for rank, data in region.regions.items():
            ranks.setdefault(int(rank), {})[region.name] = data
    return ranks, dict(results.metadata)


def read_native_ranks(path) -> tuple:
    """Reads one native output file, ``.h5`` (:func:`read_native_h5`) or
    ``.spt`` (:func:`read_trace`: one rank, no metadata).  Returns
    ``(ranks, metadata)`` as :func:`read_native_h5` does."""
    if Path(path).suffix == HDF5_SUFFIX:
        return read_native_h5(path)
    rank, regions = read_trace(path)
    return {rank: {name: Region(t.start_times, t.end_times, source_file=t.source_file,
                                source_lineno=t.source_lineno)
                   for name, t in regions.items()}}, {}


def load_traces(inputs, label: str | None = None) -> ProfilingResults:
    """Reads native output (``.spt`` traces and per-rank ``.h5`` profiles, mixed
    freely; see :func:`find_traces`) into one :class:`ProfilingResults`, every
    rank of the run in it.  The metadata is the lowest rank's ``.h5``
    metadata (if any), with ``source="native"``, ``trace_format_version``,
    ``start_time_ns`` (the earliest call) and ``label``.  TraceFormatError
    when two files claim the same rank (or a trace is invalid)."""
    per_region: dict = {}
    seen: dict = {}
    file_metadata: dict = {}
    metadata_rank = None
    earliest = None
    for path in find_traces(inputs):
        ranks, metadata = read_native_ranks(path)
        for rank, regions in sorted(ranks.items()):
            if rank in seen:
                raise TraceFormatError(
                    f"{path} and {seen[rank]} both claim rank {rank}; pass the MPI rank to "
                    "sp_init() so each rank writes its own")
            seen[rank] = path
            if metadata and (metadata_rank is None or rank < metadata_rank):
                file_metadata, metadata_rank = metadata, rank
            for name, region in regions.items():
                per_region.setdefault(name, {})[rank] = region
                starts = region.start_times_ns
                if starts.size:
                    first = int(starts.min())
                    earliest = first if earliest is None else min(earliest, first)
    metadata = dict(file_metadata)
    metadata.update({"source": "native", "trace_format_version": FORMAT_VERSION})
    if earliest is not None:
        metadata["start_time_ns"] = earliest
    if label is not None:
        metadata["label"] = label
    return ProfilingResults(
        {name: MPIRegion(name, dict(sorted(ranks.items()))) for name, ranks in per_region.items()},
        metadata=metadata, num_ranks=len(seen), file_path=label or "native_trace")


def write_results(results, output_path) -> Path:
    """Writes any :class:`ProfilingResults` as a standard (schema-3) HDF5
    profile at output_path, as :func:`spanscope.results.write_profile`
    writes ``.h5`` (the calls written in C); returns the Path."""
    return write_h5_profile(results, Path(output_path))


def convert_traces(inputs, output_path, label: str | None = None) -> Path:
    """Native output (see :func:`load_traces`) as one standard HDF5 profile at
    output_path (label: the run's name, default the output file's stem), read
    by :func:`read_h5`, ``spanscope report`` and every scope-profiler
    command; returns the Path."""
    output_path = Path(output_path)
    return write_results(load_traces(inputs, label=label or output_path.stem), output_path)
