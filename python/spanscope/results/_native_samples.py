"""scope-profiler 0.7.5's ``native_samples`` API: line profiles of native (C,
C++, Fortran) regions from the sampler's ``.sps`` files, and the same view
of a spanscope file's own stack samples.

spanscope's scope-profiler C face (``sp_start_sampling(hz)``,
``SCOPE_PROFILER_SAMPLE_HZ``; docs/scope-profiler-c.md) runs spanscope's
sampler (every thread's CPU time, docs/sampling.md) and ``sp_finalize()``
writes ``<prefix>_rank<NNNNN>.sps`` next to the trace, in scope-profiler's
format: per timer period its region (the innermost open one) and the
innermost native frame's module and address.  This module reads that file
and maps the addresses to ``file:line`` with the program's debug info
(build with ``-g``) through ``llvm-symbolizer`` or ``addr2line`` (``atos``
on macOS), after the run, never in it.  Layout, native byte order::

    char[8]   "SCOPESMP"
    int32     format version (1)
    int32     rank
    int32     sampling rate [Hz]
    int64     timer ticks in total, whether or not they landed in a region
    int32     number of regions
    per region:  int32 name length, char[] name
    int32     number of modules
    per module:  int32 path length, char[] path, uint64 load address
    int64     number of samples
    per sample:  int32 region, int32 module (-1 if unknown), uint64 address

The reader checks every count and length against the bytes left before it
uses it: a truncated, oversized or foreign file is a
:class:`SampleFormatError`, never a read past its end.

A spanscope file (``.h5``) with ``/samples`` gives the same per-region
table through :func:`file_line_profile`: its samples carry Python frames
with their lines already, and native frames as module and offset, which
are symbolised here the same way.  ``spanscope native-lines PATH...``
prints either.
"""

from __future__ import annotations

import linecache
import os
import platform
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spanscope.results._samples import NATIVE, read_stack_samples

__all__ = [
    "KNOWN_FORMAT_VERSIONS", "LineStat", "MAGIC", "SAMPLES_SUFFIX", "SampleFile",
    "SampleFormatError", "SymbolizerError", "file_line_profile", "find_sample_files",
    "format_line_profile", "line_profile", "read_samples", "symbolize",
]

MAGIC = b"SCOPESMP"
SAMPLES_SUFFIX = ".sps"
KNOWN_FORMAT_VERSIONS = (1,)

_SAMPLE = np.dtype([("region", "i4"), ("module", "i4"), ("ip", "u8")])
#: what symbolize gives an address it cannot name
_UNKNOWN = ("??", "??", 0)


class SampleFormatError(ValueError):
    """A file is not a scope-profiler sample file, or is truncated."""


class SymbolizerError(RuntimeError):
    """No tool is available to map addresses to source lines."""


@dataclass
class SampleFile:
    """One rank's raw samples: the rank, the rate (Hz), the timer ticks in
    all, the region names (a sample's region indexes them, -1 none), the
    modules as (path, load address) and the samples (a structured array:
    region, module, ip)."""

    rank: int
    hz: int
    ticks: int
    regions: list
    modules: list  # (path, load address)
    samples: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class LineStat:
    """Samples attributed to one source line of one region."""

    file: str
    line: int
    function: str
    samples: int


class _Reader:
    """Reads scope-profiler's sample layout off a bytes object, every
    field checked against the bytes left."""

    def __init__(self, path: Path, buf: bytes):
        self.path, self.buf, self.at = path, buf, 0

    def fail(self, what: str = "truncated sample file"):
        raise SampleFormatError(f"{self.path}: {what}")

    def take(self, fmt: str) -> int:
        dt = np.dtype(fmt)
        if self.at + dt.itemsize > len(self.buf):
            self.fail()
        v = np.frombuffer(self.buf, dtype=dt, count=1, offset=self.at)[0]
        self.at += dt.itemsize
        return int(v)

    def count(self, fmt: str, each: int) -> int:
        """A count field; more items of at least each bytes than the bytes
        left is a truncated file (so no loop runs past the end)."""
        n = self.take(fmt)
        if n < 0 or n * each > len(self.buf) - self.at:
            self.fail(f"a count of {n} does not fit the file (truncated or not a sample file)")
        return n

    def text(self) -> str:
        n = self.take("i4")
        if n < 0 or self.at + n > len(self.buf):
            self.fail()
        s = self.buf[self.at:self.at + n].decode("utf-8", "replace")
        self.at += n
        return s


def read_samples(path) -> SampleFile:
    """Reads one ``.sps`` file written by ``sp_finalize()``.

    Raises
    ------
    SampleFormatError
        If the file is not a sample file, is truncated, or is of a newer
        format version.
    OSError
        If it cannot be read.
    """
    path = Path(path)
    buf = path.read_bytes()
    if buf[:8] != MAGIC:
        raise SampleFormatError(f"{path}: not a scope-profiler sample file")
    r = _Reader(path, buf)
    r.at = 8
    version = r.take("i4")
    if version not in KNOWN_FORMAT_VERSIONS:
        raise SampleFormatError(
            f"{path}: unsupported sample format version {version} "
            f"(this reader reads versions {KNOWN_FORMAT_VERSIONS})")
    rank = r.take("i4")
    hz = r.take("i4")
    ticks = r.take("i8")
    regions = [r.text() for _ in range(r.count("i4", 4))]
    modules = []
    for _ in range(r.count("i4", 12)):
        mpath = r.text()
        modules.append((mpath, r.take("u8")))
    n = r.count("i8", _SAMPLE.itemsize)
    if r.at + n * _SAMPLE.itemsize != len(buf):
        raise SampleFormatError(f"{path}: truncated or oversized sample file")
    samples = np.frombuffer(buf, dtype=_SAMPLE, count=n, offset=r.at).copy()
    return SampleFile(rank, hz, ticks, regions, modules, samples)


def find_sample_files(inputs) -> list:
    """Collects ``.sps`` files from paths, directories, or a mix of both
    (sorted, each once).  FileNotFoundError for a path that does not exist
    or a directory without any."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    found = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            here = sorted(p.glob(f"*{SAMPLES_SUFFIX}"))
            if not here:
                raise FileNotFoundError(f"no {SAMPLES_SUFFIX} files in {p}")
            found.extend(here)
        elif p.exists():
            found.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return sorted(set(found))


def _run(command: list) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _symbolize_atos(module: str, base: int, addresses: list) -> list:
    """macOS: ``atos`` reads the executable's debug map (no dSYM needed)."""
    out = _run(["atos", "-o", module, "-l", hex(base), *(hex(a) for a in addresses)])
    res = []
    for text in out.splitlines():  # "func (in module) (file.c:12)"
        m = re.match(r"^(.*?) \(in .*?\)(?: \((.*):(\d+)\))?\s*$", text)
        res.append(_UNKNOWN if m is None else
                   (m.group(1), m.group(2) or "??", int(m.group(3) or 0)))
    return res


def _symbolize_elf(module: str, base: int, addresses: list) -> list:
    """llvm-symbolizer or GNU addr2line, on offsets into the module (the
    load address subtracted: position-independent code)."""
    tool = shutil.which("llvm-symbolizer") or shutil.which("addr2line")
    if tool is None:
        raise SymbolizerError("neither llvm-symbolizer nor addr2line is installed")
    offsets = [hex(a - base) for a in addresses]
    res = []
    if os.path.basename(tool).startswith("llvm-symbolizer"):
        out = _run([tool, "--functions=linkage", "--demangle", "-e", module, *offsets])
        for block in out.strip().split("\n\n"):
            lines = block.splitlines()
            func = lines[0] if lines else "??"
            # "file:line:column" (or "file:line"; "??:0:0" unknown)
            m = re.match(r"^(.*?):(\d+)(?::\d+)?$", lines[1] if len(lines) > 1 else "")
            res.append((func, m.group(1) or "??", int(m.group(2))) if m else (func, "??", 0))
    else:
        lines = _run([tool, "-f", "-C", "-e", module, *offsets]).splitlines()
        for func, where in zip(lines[0::2], lines[1::2]):
            file, _, line = where.rpartition(":")
            m = re.match(r"\d+", line)
            res.append((func, file or "??", int(m.group()) if m else 0))
    if len(res) != len(addresses):  # a tool's output of another shape
        return [_UNKNOWN] * len(addresses)
    return res


def symbolize(module: str, base: int, addresses: list) -> list:
    """Maps absolute addresses in one module (loaded at base) to
    ``(function, file, line)``; ``("??", "??", 0)`` for what it cannot
    name.  Needs the program built with ``-g`` for lines (without debug
    info the line is 0).  SymbolizerError when no tool is installed."""
    if not addresses or not Path(module).is_file():  # linux-vdso.so.1 and such
        return [_UNKNOWN] * len(addresses)
    try:
        if platform.system() == "Darwin" and shutil.which("atos"):
            return _symbolize_atos(module, base, addresses)
        return _symbolize_elf(module, base, addresses)
    except (subprocess.CalledProcessError, OSError):
        return [_UNKNOWN] * len(addresses)


def _profile(counts: dict) -> dict:
    return {region: [LineStat(file, line, func, n)
                     for (func, file, line), n in counter.most_common()]
            for region, counter in counts.items()}


def line_profile(samples: SampleFile) -> dict:
    """A rank's samples as per-line statistics of each region:
    ``{region name: [LineStat, ...]}``, hottest line first.  Counts are
    samples of the line itself (timer periods); code without debug info
    (a library such as libm) is ``??:0``.  Samples outside every region
    are left out."""
    s = samples.samples
    places: dict = {}
    for m, (mpath, base) in enumerate(samples.modules):
        ips = np.unique(s["ip"][s["module"] == m])
        if ips.size:
            addrs = [int(a) for a in ips]
            places[m] = dict(zip(addrs, symbolize(mpath, base, addrs)))
    counts: dict = {}
    for region, module, ip in zip(s["region"].tolist(), s["module"].tolist(),
                                  s["ip"].tolist()):
        if not 0 <= region < len(samples.regions):
            continue
        place = places.get(module, {}).get(ip, _UNKNOWN)
        counts.setdefault(samples.regions[region], Counter())[place] += 1
    return _profile(counts)


def file_line_profile(path, rank=None) -> dict:
    """line_profile's view of a spanscope file's own stack samples (its
    /samples: with_samples=True, sps_sampling_start, the instrumented
    library): per region its self samples by leaf frame, ``{region:
    [LineStat]}``, hottest first, each counting the samples' timer
    periods.  A Python frame keeps its file and line; a native frame is
    symbolised from its module and offset (``-g`` for lines; else
    function ``??`` or the sampler's name, ``??:0``).  rank: only that
    rank's samples."""
    s = read_stack_samples(path)
    sel = np.ones(len(s), bool) if rank is None else s.ranks == int(rank)
    leaf = {}
    for k in np.unique(s.stacks[sel]).tolist():
        fr = s.stack(k)
        leaf[k] = int(fr[0]) if len(fr) else -1
    native = {}
    for f in sorted({f for f in leaf.values() if f >= 0 and s.kinds[f] == NATIVE}):
        native.setdefault(s.modules[f], []).append(f)
    place = {}
    for module, frames in native.items():
        addrs = [int(s.addresses[f]) for f in frames]
        try:
            named = symbolize(module, 0, addrs)
        except SymbolizerError:
            named = [_UNKNOWN] * len(addrs)
        for f, (func, file, line) in zip(frames, named):
            place[f] = (func if func != "??" else s.functions[f], file, line)
    counts: dict = {}
    for r, k, w in zip(s.regions[sel].tolist(), s.stacks[sel].tolist(),
                       s.weights[sel].tolist()):
        if r < 0:
            continue
        f = leaf[k]
        where = _UNKNOWN if f < 0 else place.get(f, s.frame(f))
        counts.setdefault(s.region_names[r], Counter())[where] += w
    return _profile(counts)


def _table(rows: list, headers: list, right: set) -> str:
    """rows under headers in tabulate's "simple" layout: columns two spaces
    apart, a dashed rule under the headers, the columns in right aligned
    to the right."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values):
        return "  ".join(v.rjust(w) if i in right else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] +
                     [line(r) for r in cells])


def format_line_profile(profile: dict, top: int = 10, source: bool = True) -> str:
    """Renders :func:`line_profile` output as plain-text tables, one per
    region: ``<region>  (<n> samples)`` over the columns line (file's base
    name and line), function, samples, % region and (source) the line's
    text, at most top rows each."""
    blocks = []
    for region, stats in profile.items():
        total = sum(s.samples for s in stats) or 1
        rows = []
        for st in stats[:top]:
            row = [f"{st.file.rsplit('/', 1)[-1]}:{st.line}", st.function, st.samples,
                   f"{100 * st.samples / total:5.1f}%"]
            if source:
                row.append(linecache.getline(st.file, st.line).strip() if st.line > 0 else "")
            rows.append(row)
        headers = ["line", "function", "samples", "% region"] + (["source"] if source else [])
        blocks.append(f"{region}  ({total} samples)\n" + _table(rows, headers, {2, 3}))
    return "\n\n".join(blocks)
