"""spanscope's pytest plugin: the time of each test's phases as regions.

scope-profiler 0.7.5's plugin (``scope_profiler.pytest_plugin``), with its
options, over spanscope, plus pytest-xdist.  pytest loads it through the
``pytest11`` entry point ``spanscope``; it does nothing -- no hooks of its
own run, nothing is imported beyond this module, nothing is printed --
unless ``--scope-profile`` or ``--spanscope`` is given.

Options (the group "spanscope (scope-profiler)" of ``pytest --help``):

``--scope-profile``
    record the selected tests (scope-profiler's switch).
``--scope-profile-out PATH``
    the HDF5 file (default ``pytest-profile.h5``).
``--scope-profile-config FILE``
    a TOML profiling configuration (``spanscope.options``' ``[profiling]``
    table), checked as ``ProfileManager.setup(config_path=FILE)`` checks it.
    ``deactivate_profiling`` records nothing and ``deactivate_file_output``
    writes no file; the file path and label are the plugin's (as in
    scope-profiler, where ``--scope-profile-out`` and ``label="pytest"``
    override the file's).
``--scope-profile-phases {call,all}``
    the test call only (default), or setup, call and teardown.
``--spanscope[=FILE]``
    spanscope's spelling: ``--scope-profile`` with the output FILE (default
    ``pytest-profile.h5``).  Give FILE with ``=``: a test path after a bare
    ``--spanscope`` is refused rather than taken for the output.
``--spanscope-top N``
    how many tests and regions the end-of-session summary lists (default
    10; 0: no summary).

Each recorded phase of a test is one call of the region
``pytest::<nodeid>::<phase>`` (scope-profiler's names), timed on the clock
of spanscope's regions (``time.perf_counter_ns``).  The file holds those
regions only, exactly as scope-profiler's plugin keeps a ProfileManager of
its own: the code under test may set up, record and finalize
``spanscope.ProfileManager`` itself, and neither disturbs the other.  The
file is written at the end of the session (also when tests failed) by
``spanscope.write_profile`` (the C writer: scope-profiler's schema 3).

Under pytest-xdist (``-n N``) each worker ``gwK`` writes its part,
``gwK.h5`` in a temporary folder beside the output, as rank K; the
controller merges the parts with ``spanscope.merge_results`` into the one
requested file (rank K of it is worker gwK, its thread ids the worker's)
and removes them.  scope-profiler refuses xdist.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time

import pytest

#: the name the recorder is registered under in pytest's plugin manager
RECORDER_NAME = "spanscope-recorder"
#: the output file when none is named
DEFAULT_OUTPUT = "pytest-profile.h5"
#: scope-profiler's region names: f"{REGION_PREFIX}{nodeid}::{phase}"
REGION_PREFIX = "pytest::"
_PHASES = ("setup", "call", "teardown")
_PART_DIR_KEY = "spanscope_part_dir"


#: scope-profiler's own plugin (its ``pytest11`` entry point): it registers
#: the same four options, so the two cannot both be active
SCOPE_PROFILER_PLUGIN = "scope_profiler"


def pytest_addhooks(pluginmanager) -> None:
    """Takes scope-profiler's options over when scope-profiler is installed
    too: its plugin, not loaded yet, is blocked; loaded before this one
    (entry points load in no set order), it is unregistered -- its options
    stay, and this plugin reads them.  ``-p no:spanscope`` gives
    scope-profiler's plugin back."""
    if pluginmanager.get_plugin(SCOPE_PROFILER_PLUGIN) is None:
        pluginmanager.set_blocked(SCOPE_PROFILER_PLUGIN)
    else:
        pluginmanager.unregister(name=SCOPE_PROFILER_PLUGIN)


def _add(group, *names, **attrs) -> None:
    """group.addoption, skipping an option scope-profiler's plugin added
    already (same group, same names: pytest says ValueError)."""
    try:
        group.addoption(*names, **attrs)
    except ValueError as error:
        if "already added" not in str(error):
            raise


def pytest_addoption(parser) -> None:
    """Registers the options; none of them turns anything on by default."""
    # scope-profiler's group name: getgroup returns its group when its
    # plugin came first, so a name both add is a ValueError (_add) and
    # not argparse's conflict when the parser is built
    group = parser.getgroup("scope-profiler", "spanscope (scope-profiler)")
    _add(group, "--scope-profile", action="store_true",
         help="record the selected tests' phases with spanscope")
    _add(group, "--scope-profile-out", default=None, metavar="PATH",
         help=f"HDF5 output path (default: {DEFAULT_OUTPUT})")
    _add(group, "--scope-profile-config", default=None, metavar="FILE",
         help="TOML profiling configuration to apply")
    _add(group, "--scope-profile-phases", choices=("call", "all"), default="call",
         help="profile the test call only, or setup/call/teardown (default: call)")
    group.addoption("--spanscope", nargs="?", const="", default=None, metavar="FILE",
                    help="--scope-profile, writing FILE (give it as --spanscope=FILE; "
                         f"default: {DEFAULT_OUTPUT})")
    group.addoption("--spanscope-top", type=int, default=10, metavar="N",
                    help="tests and regions listed in the end-of-session summary "
                         "(default: 10; 0: none)")


def _output_path(config) -> str:
    """The requested output: --spanscope=FILE or --scope-profile-out (the
    two must agree when both are given), else DEFAULT_OUTPUT."""
    alias = config.getoption("--spanscope")
    out = config.getoption("--scope-profile-out")
    if alias:
        if "::" in alias or alias.endswith(".py") or os.path.isdir(alias):
            raise pytest.UsageError(
                f"--spanscope {alias!r} looks like a test path, not an output file; "
                "name the file as --spanscope=FILE, or put --spanscope after the tests")
        # DEFAULT_OUTPUT: scope-profiler's plugin added the option, with
        # that default, so it may not have been given
        if out not in (None, DEFAULT_OUTPUT) and os.path.abspath(out) != os.path.abspath(alias):
            raise pytest.UsageError(
                f"--spanscope={alias} and --scope-profile-out {out} name two different "
                "output files; give one")
        out = alias
    return out if out is not None else DEFAULT_OUTPUT


def _settings(config, path: str) -> dict:
    """The run's checked settings: the configuration file's, with the
    plugin's file path and label over them (scope-profiler passes both as
    keywords, which win over the file).  A bad file is a UsageError."""
    from spanscope.options import FeatureNotAvailableError, load_profiling_config, resolve

    settings = {}
    cfg = config.getoption("--scope-profile-config")
    try:
        if cfg is not None:
            settings.update(load_profiling_config(cfg))
        settings.update(file_path=path, label="pytest")
        return resolve(settings)
    except (OSError, ValueError, TypeError, FeatureNotAvailableError) as error:
        what = f"--scope-profile-config {cfg}" if cfg is not None else f"output {path}"
        raise pytest.UsageError(f"{what}: {error}") from None


def _xdist_controller(config) -> bool:
    """Whether this process hands the tests to pytest-xdist workers."""
    if hasattr(config, "workerinput"):
        return False
    return (config.pluginmanager.hasplugin("xdist")
            and getattr(config.option, "dist", "no") != "no"
            and bool(getattr(config.option, "tx", None)))


def pytest_configure(config) -> None:
    """Registers the recorder when --scope-profile or --spanscope is given."""
    if not (config.getoption("--scope-profile") or config.getoption("--spanscope") is not None):
        return
    top = config.getoption("--spanscope-top")
    if top < 0:
        raise pytest.UsageError(f"--spanscope-top must be >= 0, got {top}")
    path = _output_path(config)
    if path.lower().endswith((".html", ".htm")):
        raise pytest.UsageError(
            f"{path}: the pytest plugin writes HDF5 (or scope-profiler's JSON for .json); "
            "render an HTML report from it with `spanscope html`")
    settings = _settings(config, path)
    folder = os.path.dirname(os.path.abspath(path))
    writes = not settings["deactivate_profiling"] and not settings["deactivate_file_output"]
    if writes and not os.path.isdir(folder):
        raise pytest.UsageError(f"--scope-profile-out {path}: the folder {folder} does not exist")
    phases = (("call",) if config.getoption("--scope-profile-phases") == "call" else _PHASES)
    config.pluginmanager.register(
        _Recorder(config, path, phases, settings, writes, top), RECORDER_NAME)


def _worker_index(workerid: str) -> int:
    """gw3 -> 3: the worker's rank in the merged file."""
    digits = workerid.lstrip("gw")
    return int(digits) if digits.isdigit() else 0


class _Recorder:
    """The plugin's state while it is on: the phases' calls of this process
    (name -> [starts], [ends], [thread ids]) and, at the end, the results."""

    def __init__(self, config, path, phases, settings, writes, top) -> None:
        self.config = config
        self.path = path
        self.phases = frozenset(phases)
        self.record = not settings["deactivate_profiling"]
        self.writes = writes
        self.top = top
        self.calls: dict[str, tuple[list, list, list]] = {}
        self.started_ns = time.perf_counter_ns()
        self.results = None
        self.problems: list[str] = []
        self.wrote = None
        self.workers = 0
        self.nodes_down: list[str] = []  # xdist: the workers that finished
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        self.controller = _xdist_controller(config)
        self.part_dir = None
        if self.worker is not None:
            self.part_dir = config.workerinput.get(_PART_DIR_KEY)
        elif self.controller and self.record:
            # beside the output (one file system for the merge), or in the
            # temporary folder when no file is written (the parts still
            # give the summary)
            where = os.path.dirname(os.path.abspath(path)) if self.writes else None
            self.part_dir = tempfile.mkdtemp(prefix=".spanscope-parts-", dir=where)

    # -- recording (workers and a plain session; the controller runs no test)
    def _timed(self, item, phase):
        if phase not in self.phases or not self.record:
            yield
            return
        start = time.perf_counter_ns()
        yield
        end = time.perf_counter_ns()
        starts, ends, threads = self.calls.setdefault(
            f"{REGION_PREFIX}{item.nodeid}::{phase}", ([], [], []))
        starts.append(start)
        ends.append(end)
        threads.append(threading.get_native_id())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._timed(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._timed(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        yield from self._timed(item, "teardown")

    # -- xdist: where the workers put their parts
    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        if self.part_dir is not None:
            node.workerinput[_PART_DIR_KEY] = self.part_dir

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        self.nodes_down.append(node.workerinput.get("workerid", "?"))

    # -- the end
    def _own_results(self, rank: int):
        """This process's calls as scope-profiler's ProfilingResults, rank
        `rank`, in the order the regions were first entered."""
        from spanscope import MPIRegion, ProfilingResults, Region

        regions = {name: MPIRegion(name, {rank: Region(starts, ends, thread_ids=threads)})
                   for name, (starts, ends, threads) in self.calls.items()}
        meta = {"label": "pytest", "start_time_ns": self.started_ns,
                "finalize_time_ns": time.perf_counter_ns()}
        # ranks 0..rank: a merge of workers gw0, gw2 (gw1 crashed) holds 3
        return ProfilingResults(regions, metadata=meta, num_ranks=rank + 1,
                                file_path=self.path)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        """Writes the profile (also when tests failed): a worker its part, a
        plain session the file, the xdist controller the merge of the parts."""
        from spanscope import write_profile

        if self.worker is not None:
            if self.part_dir is not None and self.record:
                part = os.path.join(self.part_dir, f"{self.worker}.h5")
                try:
                    write_profile(self._own_results(_worker_index(self.worker)), part)
                except (OSError, ValueError):
                    pass  # the controller reports the missing part
            return
        if not self.record:
            return
        try:
            if self.controller:
                self.results = self._merge_parts()
            else:
                self.results = self._own_results(0)
            if self.writes and self.results is not None:
                write_profile(self.results, self.path)
                self.wrote = self.path
        except (OSError, ValueError) as error:
            self.problems.append(f"could not write {self.path}: {error}")
        finally:
            if self.part_dir is not None:
                shutil.rmtree(self.part_dir, ignore_errors=True)

    def _merge_parts(self):
        """The workers' parts as one result set (spanscope.merge_results:
        rank K is worker gwK), or None when there is nothing to merge."""
        from spanscope import merge_results, read_h5

        if self.part_dir is None:
            return None
        names = sorted((n for n in os.listdir(self.part_dir) if n.endswith(".h5")),
                       key=lambda n: _worker_index(n[:-3]))
        parts = [read_h5(os.path.join(self.part_dir, n)) for n in names]
        self.workers = len(parts)
        missing = sorted(set(self.nodes_down) - {n[:-3] for n in names}, key=_worker_index)
        if missing:
            self.problems.append(f"no profile part from worker(s) {', '.join(missing)} "
                                 "(crashed, or could not write it): their tests are "
                                 "not in the file")
        if not parts:
            return None
        merged = merge_results(*parts, label="pytest", file_path=self.path)
        merged.metadata["start_time_ns"] = min(p.metadata.get("start_time_ns", 0)
                                               for p in parts)
        merged.metadata["finalize_time_ns"] = max(p.metadata.get("finalize_time_ns", 0)
                                                  for p in parts)
        return merged

    def pytest_terminal_summary(self, terminalreporter) -> None:
        """The slowest tests and regions, then where the profile went."""
        if self.worker is not None or not self.record:
            return
        tr = terminalreporter
        if self.results is not None and self.top > 0 and self.results.region_names:
            for line_kind, lines in _summary(self.results, self.top, self.controller):
                tr.write_sep("=", f"spanscope: {line_kind}")
                for line in lines:
                    tr.write_line(line)
        for problem in self.problems:
            tr.write_line(f"spanscope: {problem}", red=True)
        if self.wrote is not None:
            n = 0 if self.results is None else len(self.results.region_names)
            by = f" from {self.workers} workers" if self.controller else ""
            tr.write_line(f"spanscope: wrote {self.wrote} ({n} regions{by})")


def _summary(results, top: int, per_worker: bool):
    """[(title, lines)]: the `top` slowest tests (their recorded phases
    added up) and the `top` slowest regions (calls, total, mean, max)."""
    tests: dict[str, list] = {}  # test id -> [total s, {phase: s}, ranks]
    rows = []
    for region in results.get_regions():
        name = region.name
        test, _, phase = name[len(REGION_PREFIX):].rpartition("::")
        total = float(region.total_duration)
        entry = tests.setdefault(test, [0.0, {}, set()])
        entry[0] += total
        entry[1][phase] = entry[1].get(phase, 0.0) + total
        entry[2].update(region.ranks)
        rows.append((total, int(region.num_calls), float(region.max_duration), name))
    out = []
    slow = sorted(tests.items(), key=lambda kv: -kv[1][0])[:top]
    lines = []
    for test, (total, phases, ranks) in slow:
        where = (" [" + ",".join(f"gw{r}" for r in sorted(ranks)) + "]") if per_worker else ""
        parts = ", ".join(f"{p} {s:.4f}s" for p, s in phases.items()) if len(phases) > 1 else ""
        lines.append(f"{total:10.4f}s  {test}{where}" + (f"  ({parts})" if parts else ""))
    out.append((f"slowest tests ({len(slow)} of {len(tests)})", lines))
    rows.sort(key=lambda r: -r[0])
    lines = [f"{'total [s]':>10}  {'calls':>5}  {'mean [s]':>10}  {'max [s]':>10}  region"]
    for total, calls, longest, name in rows[:top]:
        mean = total / calls if calls else 0.0
        lines.append(f"{total:10.4f}  {calls:5d}  {mean:10.4f}  {longest:10.4f}  {name}")
    out.append((f"slowest regions ({min(top, len(rows))} of {len(rows)})", lines))
    return out
