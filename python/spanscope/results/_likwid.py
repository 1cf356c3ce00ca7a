"""LIKWID marker results: scope-profiler 0.7.5's ``likwid_data`` on spanscope.

What LIKWID measured for each marker region (``use_likwid=True`` runs under
``likwid-perfctr -m``, or files LIKWID wrote) as
:class:`LikwidRegionResult`, and every way it travels:

* **from LIKWID** -- three sources, richest first, as scope-profiler reads
  them: the perfmon read-back through pylikwid (:func:`collect_marker_results`,
  run in a child process by :func:`collect_marker_results_isolated`: event
  and counter names, LIKWID's derived metrics), LIKWID's marker file parsed
  here (:func:`parse_marker_file`, lenient as scope-profiler's;
  :func:`read_marker_file`, strict: :class:`LikwidDataError` naming the line),
  and ``markergetregion`` snapshots (:func:`collect_region_snapshots`);
* **HDF5** -- scope-profiler's layout, ``rank<N>/likwid/regions/<tag>/``
  (attributes ``tag``, ``group_id``, ``group_name``, ``source``,
  ``event_names``, ``counter_names``, ``metric_names``; datasets ``cpus``,
  ``times``, ``call_counts``, ``events`` (nevents x nthreads), ``metrics``
  (nmetrics x nthreads)) and the ``LIKWID_*`` environment as attributes of
  ``likwid``: :func:`write_likwid_results`, :func:`read_likwid_file`;
* **JSON** -- :func:`likwid_document` / :func:`likwid_from_document`
  (scope-profiler's ``"likwid"`` member: non-finite values as null);
* **tables** -- :func:`likwid_tables`, :func:`print_likwid_table`,
  :func:`print_likwid_tables` (scope-profiler's summary tables: regions in
  columns, counters in rows, one table per rank and event group).

The LIKWID counters are their own data, beside spanscope's spans: LIKWID
measures per hardware thread and per marker region, spanscope per call.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from spanscope.results._errors import CorruptProfileError

__all__ = [
    "LIKWID_GROUP", "LikwidDataError", "LikwidRegionResult", "collect_marker_results",
    "collect_marker_results_isolated", "collect_region_snapshots", "likwid_document",
    "likwid_environment", "likwid_from_document", "likwid_tables", "markers_available",
    "parse_marker_file", "print_likwid_table", "print_likwid_tables", "read_likwid_file",
    "read_likwid_group", "read_marker_file", "snapshots_to_results", "write_likwid_results",
]

#: Name of the HDF5 group holding the LIKWID results inside a rank group.
LIKWID_GROUP = "likwid"

# what `likwid-perfctr -m` / `likwid-mpirun -marker` set for each process
_ENV_FILEPATH = "LIKWID_FILEPATH"
_ENV_THREADS = "LIKWID_THREADS"
_ENV_EVENTS = "LIKWID_EVENTS"

# the launchers' per-rank variables, dropped for the isolated collector (it
# must not join the rank's MPI job): Open MPI, MPICH/Hydra, Slurm, PMIx
_LAUNCHER_PREFIXES = ("OMPI_", "PMI_", "PMIX_", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                      "HYDRA_", "MV2_", "SLURM_PROCID", "I_MPI_")


class LikwidDataError(ValueError):
    """LIKWID data that cannot be read: a marker file that is truncated or
    not LIKWID's (the message names the file, line and what was expected), or
    a ``likwid`` HDF5 group whose arrays do not fit together."""


@dataclass
class LikwidRegionResult:
    """Counter results of one LIKWID marker region (scope-profiler's
    ``likwid_data.LikwidRegionResult``).

    The per-thread arrays share one thread axis: ``events[e, t]`` and
    ``metrics[m, t]`` belong to the hardware thread whose runtime is
    ``times[t]`` seconds and whose CPU is ``cpus[t]``; ``call_counts[t]`` is
    how often that thread entered the region.  ``event_names`` need not be
    unique (a MEM_DP group programs one event per memory channel; see
    :attr:`event_labels`); ``counter_names`` are the registers (``FIXC0``,
    ``PMC1``).  ``source`` says which reader produced it: ``"full_api"``
    (perfmon read-back: names and metrics), ``"marker_file"`` (LIKWID's file:
    values, events named ``event_<i>``, no metrics) or ``"marker_api"`` (a
    ``markergetregion`` snapshot of the calling thread)."""

    tag: str
    group_id: int = -1
    group_name: str = ""
    cpus: list[int] = field(default_factory=list)
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    call_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    event_names: list[str] = field(default_factory=list)
    counter_names: list[str] = field(default_factory=list)
    events: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    metric_names: list[str] = field(default_factory=list)
    metrics: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    source: str = "full_api"

    @property
    def event_labels(self) -> list[str]:
        """Unique per-event labels: a name that occurs once as is, a repeated
        one with its counter (``CAS_COUNT_RD:MBOX0C0``), or with its position
        where counter names are unknown (``NAME#3``), as scope-profiler."""
        seen = Counter(self.event_names)
        labels = []
        for index, name in enumerate(self.event_names):
            if seen[name] == 1:
                labels.append(name)
            elif index < len(self.counter_names):
                labels.append(f"{name}:{self.counter_names[index]}")
            else:
                labels.append(f"{name}#{index}")
        return labels

    def as_dict(self) -> dict:
        """The fields as a plain dict (with ``event_labels``), as scope-profiler's."""
        return {"tag": self.tag, "group_id": self.group_id, "group_name": self.group_name,
                "cpus": list(self.cpus), "times": self.times,
                "call_counts": self.call_counts, "event_names": list(self.event_names),
                "counter_names": list(self.counter_names),
                "event_labels": self.event_labels, "events": self.events,
                "metric_names": list(self.metric_names), "metrics": self.metrics,
                "source": self.source}


# --------------------------------------------------------------------------
# The environment LIKWID's launchers set
# --------------------------------------------------------------------------

def likwid_environment() -> dict:
    """The ``LIKWID_*`` variables of this process (empty when it was not
    started under ``likwid-perfctr -m``)."""
    return {k: v for k, v in os.environ.items() if k.startswith("LIKWID_")}


def markers_available() -> bool:
    """Whether this process runs under LIKWID's marker API: ``LIKWID_FILEPATH``
    and ``LIKWID_EVENTS`` set (``markerinit()`` silently does nothing
    otherwise)."""
    return bool(os.environ.get(_ENV_FILEPATH) and os.environ.get(_ENV_EVENTS))


def _parse_cpus(value: str) -> list[int]:
    """LIKWID's comma-separated hardware-thread list (bad items skipped)."""
    cpus = []
    for item in value.split(","):
        item = item.strip()
        if item:
            try:
                cpus.append(int(item))
            except ValueError:
                continue
    return cpus


# --------------------------------------------------------------------------
# LIKWID's marker file
# --------------------------------------------------------------------------

def read_marker_file(path) -> list[LikwidRegionResult]:
    """The regions of the marker file LIKWID's ``likwid_markerClose`` writes
    (LIKWID 4.3 to 5.x), strictly::

        <nthreads> <nregions> <ngroups>
        <region_id>:<tag>-<group_id>                 (nregions lines)
        <region_id> <group_id> <cpu> <count> <time> <nevents> <value>...

    One result per region, in region-id order, one thread column per result
    line of the region (LIKWID writes a line with cpu -1 and count 0 for a
    thread that never entered it; it is kept, as scope-profiler keeps it).
    Values are LIKWID's ``%e`` text: 7 significant digits.  Events are named
    ``event_<i>`` (names and metrics live in LIKWID's group files:
    :func:`collect_marker_results`).

    Raises FileNotFoundError for a missing file and :class:`LikwidDataError`
    (naming the file and line) for anything that is not such a file: an
    empty or truncated one, a count that does not match the lines, a region
    line before its header, a number that is not one, NaN call counts."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no LIKWID marker file at {path!r}") from None
    except OSError as exc:
        raise LikwidDataError(f"{path}: cannot read the LIKWID marker file: {exc}") from exc
    text = raw.decode("utf-8", errors="replace")
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]

    def bad(lineno, what):
        return LikwidDataError(f"{path}:{lineno}: not a LIKWID marker file: {what}")

    if not lines:
        raise LikwidDataError(f"{path}: the LIKWID marker file is empty")
    lineno, head = lines[0]
    fields = head.split()
    if len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise bad(lineno, f"expected '<nthreads> <nregions> <ngroups>', got {head[:80]!r}")
    _nthreads, nregions, ngroups = (int(f) for f in fields)
    if len(lines) < 1 + nregions:
        raise bad(lines[-1][0], f"truncated: the header announces {nregions} region(s), "
                  f"the file names {len(lines) - 1}")
    tags: dict[int, str] = {}
    groups: dict[int, int] = {}
    for lineno, line in lines[1:1 + nregions]:
        rid, colon, rest = line.partition(":")
        tag, dash, gid = rest.rpartition("-")
        if not colon or not dash or not rid.strip().isdigit() or not _is_int(gid):
            raise bad(lineno, f"expected '<region_id>:<tag>-<group_id>', got {line[:80]!r}")
        rid_i = int(rid)
        if rid_i in tags:
            raise bad(lineno, f"region id {rid_i} named twice")
        tags[rid_i], groups[rid_i] = tag, int(gid)
        if ngroups and not 0 <= int(gid) < ngroups:
            raise bad(lineno, f"group {gid} of region {tag!r} is not one of the "
                      f"{ngroups} group(s) the header announces")
    per_region: dict[int, list] = {}
    for lineno, line in lines[1 + nregions:]:
        f = line.split()
        if len(f) < 6:
            raise bad(lineno, f"a result line needs at least 6 fields, got {len(f)}: "
                      f"{line[:80]!r}")
        try:
            rid, gid, cpu = int(f[0]), int(f[1]), int(f[2])
            count_f, time, nevents = float(f[3]), float(f[4]), int(f[5])
            values = [float(v) for v in f[6:]]
        except ValueError:
            raise bad(lineno, f"a field is not a number: {line[:80]!r}") from None
        if rid not in tags:
            raise bad(lineno, f"result for region {rid}, which the header does not name")
        if gid != groups[rid]:
            raise bad(lineno, f"region {tags[rid]!r} measured with group {groups[rid]}, "
                      f"this line says {gid}")
        if not math.isfinite(count_f) or count_f < 0 or count_f != int(count_f):
            raise bad(lineno, f"call count {f[3]!r} is not a whole number")
        if nevents < 0 or len(values) != nevents:
            raise bad(lineno, f"announces {nevents} event value(s), holds {len(values)} "
                      "(truncated?)")
        per_region.setdefault(rid, []).append((cpu, int(count_f), time, values))
    if not per_region and nregions:
        raise bad(lines[-1][0], f"truncated: {nregions} region(s) named, no result line")
    out = []
    for rid in sorted(per_region):
        threads = per_region[rid]
        nev = {len(v) for *_, v in threads}
        if len(nev) != 1:
            raise LikwidDataError(f"{path}: region {tags[rid]!r}: its threads hold "
                                  f"different event counts {sorted(nev)}")
        n = nev.pop()
        events = np.array([v for *_, v in threads], dtype=np.float64).T.reshape(n, len(threads))
        out.append(LikwidRegionResult(
            tag=tags[rid], group_id=groups[rid],
            cpus=[c for c, *_ in threads],
            times=np.array([t for _, _, t, _ in threads], dtype=np.float64),
            call_counts=np.array([c for _, c, _, _ in threads], dtype=np.int64),
            event_names=[f"event_{i}" for i in range(n)], events=events,
            metrics=np.zeros((0, len(threads))), source="marker_file"))
    return out


def _is_int(s: str) -> bool:
    s = s.strip()
    return bool(s) and (s.isdigit() or (s[0] == "-" and s[1:].isdigit()))


def parse_marker_file(path=None) -> list[LikwidRegionResult]:
    """LIKWID's marker file read without calling into LIKWID
    (scope-profiler's crash-proof fallback): :func:`read_marker_file` of
    ``path`` (default ``$LIKWID_FILEPATH``), or ``[]`` when there is no file
    or it cannot be read -- at finalize a bad counter file must not cost the
    timing data.  Why it was unreadable goes to stderr in one line; call
    :func:`read_marker_file` to get the error."""
    path = path or os.environ.get(_ENV_FILEPATH)
    if not path or not os.path.exists(path):
        return []
    try:
        return read_marker_file(path)
    except (LikwidDataError, OSError) as exc:
        print(f"spanscope: LIKWID marker file skipped: {exc}", file=sys.stderr)
        return []


# --------------------------------------------------------------------------
# pylikwid: markers and the perfmon read-back
# --------------------------------------------------------------------------

def collect_region_snapshots(pylikwid, region_names: Iterable[str]) -> list[dict]:
    """``markergetregion(tag)`` of each named region, while the markers are
    open (the calling thread's values only): dicts with tag, nevents, events,
    time, count; tags LIKWID does not know or never counted are skipped."""
    snapshots = []
    for tag in region_names:
        try:
            nevents, values, time, count = pylikwid.markergetregion(tag)
        except Exception:  # pylikwid raises for an unknown tag
            continue
        if not nevents or count <= 0:
            continue
        snapshots.append({"tag": tag, "nevents": int(nevents),
                          "events": np.asarray(values, dtype=np.float64),
                          "time": float(time), "count": int(count)})
    return snapshots


def snapshots_to_results(snapshots: Iterable[dict]) -> list[LikwidRegionResult]:
    """Marker-API snapshots as results (one thread column, events named
    ``event_<i>``, ``source="marker_api"``)."""
    results = []
    for snap in snapshots:
        values = np.asarray(snap["events"], dtype=np.float64).reshape(-1, 1)
        results.append(LikwidRegionResult(
            tag=snap["tag"], cpus=[], times=np.array([snap["time"]], dtype=np.float64),
            call_counts=np.array([snap["count"]], dtype=np.int64),
            event_names=[f"event_{i}" for i in range(len(values))], events=values,
            source="marker_api"))
    return results


def collect_marker_results(pylikwid) -> list[LikwidRegionResult]:
    """Every region of the run, read back through LIKWID's perfmon module
    (after ``markerclose()`` wrote the marker file): the event sets of
    ``LIKWID_EVENTS`` are registered again (``|`` separates groups, numbered
    in that order), ``markerreadfile`` reads the file, and each region's
    per-thread times, counts, events (with names and registers) and derived
    metrics come from LIKWID.  ``[]`` when not under the marker API or when
    LIKWID refuses (it must not cost the timing data)."""
    filepath = os.environ.get(_ENV_FILEPATH)
    if not filepath or not os.path.exists(filepath):
        return []
    cpus = _parse_cpus(os.environ.get(_ENV_THREADS, ""))
    event_string = os.environ.get(_ENV_EVENTS, "")
    if not cpus or not event_string:
        return []
    try:
        if pylikwid.init(cpus) != 0:
            return []
    except Exception:
        return []
    try:
        group_names = {}
        for event_set in event_string.split("|"):
            event_set = event_set.strip()
            if not event_set:
                continue
            gid = pylikwid.addeventset(event_set)
            if gid < 0:
                continue
            group_names[gid] = pylikwid.getnameofgroup(gid) or event_set
        pylikwid.markerreadfile(filepath)
        nregions = pylikwid.markernumregions()
        if not isinstance(nregions, int) or nregions <= 0:
            return []
        results = []
        for r in range(nregions):
            gid = pylikwid.markerregiongroup(r)
            nthreads = pylikwid.markerregionthreads(r)
            nevents = pylikwid.markerregionevents(r)
            if nthreads <= 0:
                continue
            try:
                nmetrics = pylikwid.getnumberofmetrics(gid)
            except Exception:
                nmetrics = 0
            events = np.zeros((nevents, nthreads))
            metrics = np.zeros((nmetrics, nthreads))
            times = np.zeros(nthreads)
            counts = np.zeros(nthreads, dtype=np.int64)
            for t in range(nthreads):
                times[t] = pylikwid.markerregiontime(r, t)
                counts[t] = pylikwid.markerregioncount(r, t)
                for e in range(nevents):
                    events[e, t] = pylikwid.markerregionresult(r, e, t)
                for m in range(nmetrics):
                    metrics[m, t] = pylikwid.markerregionmetric(r, m, t)
            results.append(LikwidRegionResult(
                tag=pylikwid.markerregiontag(r), group_id=int(gid),
                group_name=group_names.get(gid, ""),
                cpus=[int(c) for c in (pylikwid.markerregioncpulist(r) or [])],
                times=times, call_counts=counts,
                event_names=[pylikwid.getnameofevent(gid, e) for e in range(nevents)],
                counter_names=[pylikwid.getnameofcounter(gid, e) for e in range(nevents)],
                events=events,
                metric_names=[pylikwid.getnameofmetric(gid, m) for m in range(nmetrics)],
                metrics=metrics, source="full_api"))
        return results
    except Exception:
        return []
    finally:
        try:
            pylikwid.finalize()
        except Exception:
            pass


def _result_to_json(result: LikwidRegionResult) -> dict:
    """A result as plain JSON values (NaN and inf as null)."""
    return {"tag": result.tag, "group_id": int(result.group_id),
            "group_name": result.group_name, "cpus": [int(c) for c in result.cpus],
            "times": _floats(result.times), "call_counts": _ints(result.call_counts),
            "event_names": list(result.event_names),
            "counter_names": list(result.counter_names),
            "events": _matrix(result.events), "metric_names": list(result.metric_names),
            "metrics": _matrix(result.metrics), "source": result.source}


def _result_from_json(payload: dict, where: str = "LIKWID JSON") -> LikwidRegionResult:
    """:func:`_result_to_json` back (null as NaN); LikwidDataError when a
    member is missing or its shape does not fit."""
    if not isinstance(payload, dict):
        raise LikwidDataError(f"{where}: a LIKWID region is not an object")
    try:
        times = _float_column(payload.get("times", ()))
        n = len(times)
        events_names = [str(x) for x in payload.get("event_names", ())]
        metric_names = [str(x) for x in payload.get("metric_names", ())]
        return LikwidRegionResult(
            tag=str(payload["tag"]), group_id=int(payload.get("group_id", -1)),
            group_name=str(payload.get("group_name", "")),
            cpus=[int(c) for c in payload.get("cpus", ())], times=times,
            call_counts=np.asarray(payload.get("call_counts", ()), dtype=np.int64),
            event_names=events_names,
            counter_names=[str(x) for x in payload.get("counter_names", ())],
            events=_float_column(payload.get("events", ()), (len(events_names), n)),
            metric_names=metric_names,
            metrics=_float_column(payload.get("metrics", ()), (len(metric_names), n)),
            source=str(payload.get("source", "full_api")))
    except (KeyError, TypeError, ValueError) as exc:
        raise LikwidDataError(f"{where}: a LIKWID region cannot be read: {exc}") from exc


def _child_environment() -> dict:
    """The isolated collector's environment: this process's import path,
    and no MPI (a child forked from a rank must not join its job)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).strip(os.pathsep)
    env["SPANSCOPE_MPI"] = env["SCOPE_PROFILER_MPI"] = "0"
    for var in list(env):
        if var.startswith(_LAUNCHER_PREFIXES):
            del env[var]
    return env


#: the isolated collector's program (``-c``: ``-m`` of a module the package
#: already imported makes runpy warn)
_CHILD = ("import sys; from spanscope.results._likwid import _subprocess_main; "
          "sys.exit(_subprocess_main())")


def collect_marker_results_isolated(timeout: float = 120.0):
    """:func:`collect_marker_results` in a child process (``python -c``
    running :func:`_subprocess_main` with OUT): re-initializing LIKWID's
    perfmon can abort the process on hosts that cannot count, which at
    finalize would lose the run.  The results, or None when the child gave
    none (crashed, timed out, refused): then parse the marker file."""
    if not markers_available():
        return None
    handle, out_path = tempfile.mkstemp(prefix="likwid_results_", suffix=".json")
    os.close(handle)
    try:
        subprocess.run([sys.executable, "-c", _CHILD, out_path],
                       capture_output=True, env=_child_environment(), timeout=timeout,
                       check=False)
        # not the return code: LIKWID has aborted in teardown after writing;
        # a complete JSON document is the proof
        with open(out_path, encoding="utf-8") as fh:
            payload = json.load(fh)
        results = [_result_from_json(item, out_path) for item in payload]
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        try:
            os.unlink(out_path)
        except OSError:
            pass
    return results or None


def import_pylikwid():
    """``import pylikwid``, preloading ``liblikwid.so`` from the LIKWID
    installation (``LIKWID_LIB``/``LIKWID_HOME``/``LIKWID_ROOT``/
    ``LIKWID_PREFIX``, or beside ``likwid-perfctr``) when only the library
    was not found, as scope-profiler does.  ImportError with what to do."""
    try:
        import pylikwid
    except ImportError as exc:
        if "liblikwid" not in str(exc) or not _preload_liblikwid():
            raise ImportError(_pylikwid_import_error(exc)) from exc
        import pylikwid
    return pylikwid


def _liblikwid_dirs() -> list:
    import shutil
    dirs = []
    for var in ("LIKWID_LIB", "LIKWID_HOME", "LIKWID_ROOT", "LIKWID_PREFIX"):
        root = os.environ.get(var)
        if root:
            dirs += [root, os.path.join(root, "lib"), os.path.join(root, "lib64")]
    perfctr = shutil.which("likwid-perfctr")
    if perfctr:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(perfctr)))
        dirs += [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def _preload_liblikwid() -> bool:
    import ctypes
    import glob
    for directory in _liblikwid_dirs():
        for path in reversed(sorted(glob.glob(os.path.join(directory, "liblikwid.so*")))):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                continue
    return False


def _pylikwid_import_error(exc: ImportError) -> str:
    message = str(exc)
    if "liblikwid" in message:
        home = os.environ.get("LIKWID_HOME") or os.environ.get("LIKWID_ROOT")
        where = f"{home}/lib" if home else "<likwid-prefix>/lib"
        return ("use_likwid=True: pylikwid is installed but LIKWID's library could not "
                f"be loaded ({message}); export LD_LIBRARY_PATH=\"{where}:$LD_LIBRARY_PATH\" "
                "(on a cluster: module load likwid)")
    return ("use_likwid=True needs pylikwid, which could not be imported "
            f"({message}): pip install 'spanscope[likwid]' (it builds against an installed "
            "LIKWID: Debian's likwid package, with LIKWID_PREFIX pointing at a prefix whose "
            "lib/ holds liblikwid.so; see docs/likwid.md)")


# --------------------------------------------------------------------------
# HDF5: scope-profiler's likwid/regions/<tag> layout
# --------------------------------------------------------------------------

def _h5_safe(tag: str) -> str:
    """A tag as an HDF5 group name: "/" would nest groups (the tag attribute
    keeps the real one)."""
    return tag.replace("/", "|")


def write_likwid_results(h5file, results: Iterable[LikwidRegionResult],
                         environment: dict | None = None) -> None:
    """Writes results into an open h5py file or group as scope-profiler
    does: ``likwid`` (replaced if there) with the environment as attributes
    and ``num_regions``, and ``likwid/regions/<tag>`` per region.  A tag
    measured in several event groups keeps its last result, as
    scope-profiler's finalize keys a rank's results by tag."""
    import h5py

    results = list({r.tag: r for r in results}.values())
    if LIKWID_GROUP in h5file:
        del h5file[LIKWID_GROUP]
    grp = h5file.create_group(LIKWID_GROUP)
    for key, value in (environment or {}).items():
        grp.attrs[key] = value
    grp.attrs["num_regions"] = len(results)
    regions = grp.create_group("regions")
    strings = h5py.string_dtype()
    for result in results:
        r = regions.create_group(_h5_safe(result.tag))
        r.attrs["tag"] = result.tag
        r.attrs["group_id"] = result.group_id
        r.attrs["group_name"] = result.group_name
        r.attrs["source"] = result.source
        r.attrs.create("event_names", list(result.event_names), dtype=strings)
        r.attrs.create("counter_names", list(result.counter_names), dtype=strings)
        r.attrs.create("metric_names", list(result.metric_names), dtype=strings)
        n = len(np.asarray(result.times))
        r.create_dataset("cpus", data=np.asarray(result.cpus, dtype=np.int64))
        r.create_dataset("times", data=np.asarray(result.times, dtype=np.float64))
        r.create_dataset("call_counts", data=np.asarray(result.call_counts, dtype=np.int64))
        r.create_dataset("events", data=_as_matrix(result.events, len(result.event_names), n))
        r.create_dataset("metrics", data=_as_matrix(result.metrics, len(result.metric_names), n))


def _as_matrix(values, rows: int, cols: int) -> np.ndarray:
    """values as a float matrix of rows x cols; an empty placeholder of any
    shape (np.zeros(0)) as an empty matrix."""
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return np.zeros((rows, cols)) if rows * cols == 0 else np.zeros((0, cols))
    return a.reshape(rows, -1) if a.ndim == 1 and rows else a


def _decode(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        return [_decode(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_likwid_group(group, where: str = "") -> dict:
    """The results under one ``likwid`` group: tag -> LikwidRegionResult.
    :class:`LikwidDataError` when a region lacks a dataset or its arrays do
    not share one thread axis."""
    out = {}
    regions = group.get("regions")
    if regions is None:
        return out
    for key, r in regions.items():
        at = f"{where}{group.name}/regions/{key}"
        try:
            attrs = r.attrs
            tag = str(_decode(attrs.get("tag", key.replace("|", "/"))))
            times = np.asarray(r["times"][()], dtype=np.float64).reshape(-1)
            n = len(times)
            result = LikwidRegionResult(
                tag=tag, group_id=int(_decode(attrs.get("group_id", -1))),
                group_name=str(_decode(attrs.get("group_name", ""))),
                cpus=[int(c) for c in np.asarray(r["cpus"][()]).reshape(-1)],
                times=times,
                call_counts=np.asarray(r["call_counts"][()], dtype=np.int64).reshape(-1),
                event_names=[str(x) for x in _decode(attrs.get("event_names", []))],
                counter_names=[str(x) for x in _decode(attrs.get("counter_names", []))],
                events=np.asarray(r["events"][()], dtype=np.float64),
                metric_names=[str(x) for x in _decode(attrs.get("metric_names", []))],
                metrics=np.asarray(r["metrics"][()], dtype=np.float64),
                source=str(_decode(attrs.get("source", ""))))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LikwidDataError(f"{at}: not a LIKWID region of scope-profiler's layout "
                                  f"({exc})") from exc
        for what, arr, rows in (("events", result.events, len(result.event_names)),
                                ("metrics", result.metrics, len(result.metric_names))):
            if arr.size == 0:
                continue
            if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] != n:
                raise LikwidDataError(f"{at}: {what} has shape {arr.shape}, expected "
                                      f"({rows}, {n}) for {rows} name(s) and {n} thread(s)")
        if len(result.call_counts) != n or (result.cpus and len(result.cpus) != n):
            raise LikwidDataError(f"{at}: times, call_counts and cpus differ in length "
                                  f"({n}, {len(result.call_counts)}, {len(result.cpus)})")
        out[tag] = result
    return out


def read_likwid_file(path, ranks=None) -> dict:
    """rank -> {tag: LikwidRegionResult} of every ``rank<N>/likwid`` group
    of an HDF5 profile (ranks: only those).  {} without LIKWID data;
    CorruptProfileError when the file cannot be opened, LikwidDataError for
    a malformed likwid group."""
    import h5py

    path = os.fspath(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise CorruptProfileError(f"{path}: cannot read its LIKWID groups: {exc}") from exc
    out = {}
    with f:
        for name in f:
            if not (name.startswith("rank") and name[4:].isdigit()):
                continue
            rank = int(name[4:])
            if ranks is not None and rank not in ranks:
                continue
            g = f[name]
            if isinstance(g, h5py.Group) and LIKWID_GROUP in g:
                out[rank] = read_likwid_group(g[LIKWID_GROUP], where=f"{path}:")
    return dict(sorted(out.items()))


def append_likwid_results(path, rank: int, results: Iterable[LikwidRegionResult],
                          environment: dict | None = None) -> None:
    """Adds one rank's results to an HDF5 profile spanscope wrote
    (``rank<rank>/likwid``), as scope-profiler's writer places them."""
    import h5py

    with h5py.File(os.fspath(path), "a") as f:
        write_likwid_results(f.require_group(f"rank{int(rank)}"), results, environment)


# --------------------------------------------------------------------------
# JSON (scope-profiler's "likwid" member)
# --------------------------------------------------------------------------

def _floats(values) -> list:
    return [None if not math.isfinite(v) else v
            for v in np.asarray(values, dtype=float).reshape(-1).tolist()]


def _ints(values) -> list:
    return np.asarray(values).astype(np.int64, copy=False).reshape(-1).tolist()


def _matrix(values) -> list:
    a = np.asarray(values, dtype=float)
    if a.ndim < 2:
        return [] if a.size == 0 else [_floats(a)]
    return [_floats(row) for row in a]


def _float_column(values, shape=None) -> np.ndarray:
    """A JSON column (null as NaN) as floats; shape: reshaped to it (an
    empty column with an empty shape is an empty matrix; ValueError when
    the values do not fill it)."""
    rows = [[math.nan if v is None else v for v in row] if isinstance(row, list)
            else (math.nan if row is None else row) for row in values]
    a = np.array(rows, dtype=float)
    if shape is None:
        return a
    if a.size == 0 and shape[0] * shape[1] == 0:
        return np.zeros(shape)
    return a.reshape(shape)


def likwid_document(likwid: dict, ranks=None) -> dict:
    """rank -> {tag: result} as JSON ({"<rank>": {tag: {...}}}), ranks: only those."""
    return {str(rank): {tag: _result_to_json(result) for tag, result in sorted(tags.items())}
            for rank, tags in sorted(likwid.items()) if ranks is None or rank in ranks}


def likwid_from_document(document: dict, where: str = "JSON profile") -> dict:
    """:func:`likwid_document`'s member back: rank -> {tag: result}."""
    member = document.get("likwid") or {}
    if not isinstance(member, dict):
        raise LikwidDataError(f"{where}: 'likwid' is not an object")
    out = {}
    for rank, tags in member.items():
        if not isinstance(tags, dict):
            raise LikwidDataError(f"{where}: likwid rank {rank!r} is not an object")
        try:
            r = int(rank)
        except ValueError:
            raise LikwidDataError(f"{where}: likwid rank {rank!r} is not a number") from None
        out[r] = {}
        for tag, entry in tags.items():
            if isinstance(entry, dict):
                entry = {"tag": tag, **entry}
            out[r][tag] = _result_from_json(entry, where)
    return out


# --------------------------------------------------------------------------
# Summary tables (scope-profiler's summary.likwid_tables)
# --------------------------------------------------------------------------

def _selected(name: str, include=None, exclude=None) -> bool:
    if isinstance(include, str):
        include = [include]
    if isinstance(exclude, str):
        exclude = [exclude]
    if include is not None and not any(re.match(p, name) for p in include):
        return False
    return not (exclude is not None and any(re.match(p, name) for p in exclude))


def likwid_tables(results, include=None, exclude=None, ranks=None) -> list:
    """One LIKWID counter table per (rank, event group), as scope-profiler's
    summary builds them: regions (or ``tag@cpu<N>`` per hardware thread when
    a region ran on several) in columns, costliest LIKWID runtime first; rows
    in sections "" (call count, runtime [s]), "Events" (by
    :attr:`LikwidRegionResult.event_labels`) and "Metrics".  Each table is a
    dict with rank, group, columns and sections ((title, [(name, values)]));
    include/exclude are regexes on the tag as for the region table."""
    grouped: dict = {}
    for rank, regions in sorted(results.get_likwid_regions().items()):
        if ranks is not None and rank not in ranks:
            continue
        for tag, result in regions.items():
            if _selected(tag, include, exclude):
                grouped.setdefault((rank, result.group_name), []).append((tag, result))
    built = []
    for (rank, group), entries in sorted(grouped.items()):
        entries.sort(key=lambda it: (-float(np.max(it[1].times)) if len(it[1].times) else 0.0,
                                     it[0]))
        columns: list = []
        info: dict = {}
        events: dict = {}
        metrics: dict = {}
        for tag, result in entries:
            nthreads = len(result.times)
            for t in range(nthreads):
                cpu = result.cpus[t] if t < len(result.cpus) else t
                columns.append(tag if nthreads == 1 else f"{tag}@cpu{cpu}")
                c = len(columns) - 1
                info.setdefault("call count", {})[c] = result.call_counts[t]
                info.setdefault("runtime [s]", {})[c] = result.times[t]
                for name, values in zip(result.event_labels, result.events):
                    events.setdefault(name, {})[c] = values[t]
                for name, values in zip(result.metric_names, result.metrics):
                    metrics.setdefault(name, {})[c] = values[t]

        def dense(rows):
            return [(name, [cells.get(c) for c in range(len(columns))])
                    for name, cells in rows.items()]

        built.append({"rank": rank, "group": group, "columns": columns,
                      "sections": [("", dense(info)), ("Events", dense(events)),
                                   ("Metrics", dense(metrics))]})
    return built


def format_counter(value) -> str:
    """A counter or metric for a table: "-" for none, a whole number as an
    integer (no exponent), else 6 significant digits."""
    if value is None:
        return "-"
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):d}"
    return f"{value:.6g}"


def print_likwid_table(table, title=None, stream=None) -> None:
    """Prints one table of :func:`likwid_tables` (title default "LIKWID
    counters (rank R, group G)"); nothing for a table without columns."""
    stream = sys.stdout if stream is None else stream
    columns = table["columns"]
    if not columns:
        return
    if title is None:
        title = f"LIKWID counters (rank {table['rank']}"
        title += f", group {table['group']})" if table["group"] else ")"
    print(title, file=stream)
    print("=" * len(title), file=stream)
    for heading, rows in table["sections"]:
        if not rows:
            continue
        if heading:
            print(f"  {heading}", file=stream)
        cells = [["counter", *columns]] + [[name, *[format_counter(v) for v in values]]
                                           for name, values in rows]
        widths = [max(len(str(row[i])) for row in cells) for i in range(len(cells[0]))]
        for k, row in enumerate(cells):
            line = "  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w)
                             for i, (v, w) in enumerate(zip(row, widths)))
            print(line.rstrip(), file=stream)
            if k == 0:
                print("-" * len(line), file=stream)
        print(file=stream)
    print(file=stream)


def print_likwid_tables(results, include=None, exclude=None, ranks=None, stream=None) -> None:
    """Prints every table of :func:`likwid_tables` (nothing without LIKWID data)."""
    for table in likwid_tables(results, include=include, exclude=exclude, ranks=ranks):
        print_likwid_table(table, stream=stream)


def _subprocess_main(argv=None) -> int:
    """The isolated collector of :func:`collect_marker_results_isolated`
    (not an API): writes collect_marker_results' results to OUT.json."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) != 1:
        print("usage: _subprocess_main OUT.json", file=sys.stderr)
        return 2
    results = collect_marker_results(import_pylikwid())
    with open(argv[0], "w", encoding="utf-8") as fh:
        json.dump([_result_to_json(r) for r in results], fh)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a child process
    raise SystemExit(_subprocess_main())
