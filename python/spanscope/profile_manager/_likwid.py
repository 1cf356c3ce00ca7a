"""The LIKWID side of a ``use_likwid=True`` run, as scope-profiler drives it.

scope-profiler's ``use_likwid=True`` brackets every region call with LIKWID's
marker API through pylikwid (``markerstartregion(name)`` /
``markerstopregion(name)``, region name = LIKWID tag), under
``likwid-perfctr -m`` (or ``likwid-mpirun -marker``), and at ``finalize()``
closes the markers and stores what LIKWID measured under
``rank<N>/likwid/regions/<tag>`` of the rank's file.  :class:`LikwidRun` is
that, for spanscope's regions:

* ``LikwidRun()`` imports pylikwid (a clear ImportError saying what to
  install when it cannot) and calls ``markerinit()`` (``markerthreadinit()``
  too: pylikwid's markers need it on the calling thread);
* :meth:`LikwidRun.start` / :meth:`LikwidRun.stop` are a region call's
  markers (LIKWID's misuse rules: stopping a tag not started warns on
  stderr);
* :meth:`LikwidRun.finish` closes the markers once and collects, richest
  first (results/_likwid.py): the perfmon read-back in a child process
  (names and derived metrics), else LIKWID's marker file, else the
  ``markergetregion`` snapshots taken before closing; then writes them into
  the HDF5 file spanscope's finalize wrote (``append_likwid_results``),
  with the ``LIKWID_*`` environment as attributes.

Outside ``likwid-perfctr -m`` LIKWID's own ``markerinit()`` says "Running
without Marker API" and counts nothing; :meth:`finish` then writes nothing
and says why.  The session calls these at setup, at each region call and
at finalize (docs/likwid.md, "use_likwid=True").
"""

from __future__ import annotations

import sys

from spanscope.results._likwid import (LikwidRegionResult, append_likwid_results,
                                       collect_marker_results_isolated,
                                       collect_region_snapshots, import_pylikwid,
                                       likwid_environment, markers_available,
                                       parse_marker_file, snapshots_to_results)

__all__ = ["LikwidRun"]


class LikwidRun:
    """LIKWID's marker API for one use_likwid=True run (see the module).

    ``pylikwid`` may be given (a stand-in with pylikwid's functions, for
    tests); by default it is imported, ImportError telling what to do."""

    def __init__(self, pylikwid=None):
        self._lk = import_pylikwid() if pylikwid is None else pylikwid
        self._closed = False
        self._started: set = set()  # the tags started: the ones to snapshot
        self._lk.markerinit()
        self._lk.markerthreadinit()

    @property
    def measuring(self) -> bool:
        """Whether LIKWID counts: the process runs under likwid-perfctr -m
        (markers_available) and finish() has not closed the markers."""
        return not self._closed and markers_available()

    def start(self, name: str) -> None:
        """LIKWID_MARKER_START(name) on the calling thread (nothing once closed)."""
        if not self._closed:
            self._started.add(name)
            self._lk.markerstartregion(name)

    def stop(self, name: str) -> None:
        """LIKWID_MARKER_STOP(name) on the calling thread (nothing once closed)."""
        if not self._closed:
            self._lk.markerstopregion(name)

    def collect(self, region_names) -> list[LikwidRegionResult]:
        """Closes the markers (once: a second call returns []) and returns
        LIKWID's results: the isolated perfmon read-back, else the marker
        file, else the marker-API snapshots of region_names taken before
        closing (those of region_names that were started).  [] outside
        likwid-perfctr -m."""
        if self._closed:
            return []
        if not markers_available():
            self._closed = True
            self._lk.markerclose()
            return []
        # only tags LIKWID saw: markergetregion of another one creates it
        # (LIKWID then warns "Skipping region ... for evaluation")
        names = [n for n in region_names if n in self._started]
        snapshots = collect_region_snapshots(self._lk, names)
        self._closed = True
        self._lk.markerclose()
        results = collect_marker_results_isolated()
        if results:
            return results
        return parse_marker_file() or snapshots_to_results(snapshots)

    def finish(self, h5_path, region_names, rank: int = 0) -> list[LikwidRegionResult]:
        """collect(region_names), written into the HDF5 file h5_path as
        ``rank<rank>/likwid`` (with the LIKWID_* environment) when there is
        something; returns the results.  Outside likwid-perfctr -m: one line
        on stderr, nothing written."""
        under = markers_available()
        results = self.collect(region_names)
        if not under:
            print("spanscope: use_likwid=True but the process was not started under "
                  "likwid-perfctr -m (or likwid-mpirun -marker): no LIKWID counters",
                  file=sys.stderr)
            return []
        if results and h5_path is not None:
            append_likwid_results(h5_path, rank, results, likwid_environment())
        return results
