"""``spanscope run --follow``: a Python process tree profiled into one file
(docs/process-trees.md, "spanscope run --follow").

The root -- the ``spanscope run`` process -- calls :meth:`FollowRun.start`: it makes a
parts directory beside the output (``OUT.parts-XXXXXX``) and puts into the
environment every child inherits

- ``SPANSCOPE_FOLLOW``: the parts directory;
- ``SPANSCOPE_FOLLOW_SETTINGS``: what the children record (JSON: the file
  stem, recursive tracing and its filters, aggregation mode, label, tags);
- ``PYTHONPATH`` with ``spanscope/_follow_boot`` first: its
  ``sitecustomize`` calls :func:`bootstrap` when any Python interpreter of
  the tree starts (``subprocess``, shell pipelines, multiprocessing's
  ``spawn`` and the ``forkserver``'s server, which all start
  ``sys.executable`` afresh), then runs the ``sitecustomize`` it hides.

Forked children (``os.fork``, multiprocessing's ``fork`` start method, the
fork server's workers) inherit the Python state, and an
``os.register_at_fork`` hook (:func:`_after_fork_in_child`) gives each its
own session at once.  multiprocessing's forked workers end with
``os._exit``, which skips ``atexit``: the hook also registers, through
``multiprocessing.util.register_after_fork``, a
``multiprocessing.util.Finalize`` that the worker's ``_bootstrap`` runs
when its work is done (the registry of finalizers is cleared just before
the after-fork callbacks run, so it cannot be registered earlier).  Other
processes finalize at exit (``setup(auto_finalize=True)``).

Each process records its own part, ``PARTS/STEM.pid<PID>.h5``, under a rank
of its own: the root takes 0, every other process the lowest free number,
claimed by creating ``PARTS/rank<N>.json`` exclusively (``O_EXCL``), which
also records its pid, parent pid, how it started and its command line.
The merge (the C ``sps_merge``, ``_ext.merge``) needs one rank per input,
so the ranks run 0..n-1 in start order and each process is one process of
the merged timeline; the root's part carries ``/metadata``
``follow_processes``, the JSON table of them all (rank, pid, ppid, start,
argv), and so does a merged ``.h5`` (written there after the merge, which
keeps only the lowest rank's own attributes).  A forked child begins again
the calls open on the forking thread (an at-fork ``before`` hook reads
them), so that its ends of them match.

The root's :meth:`FollowRun.end` recovers the parts of children that ended
without writing theirs (their crash-safe live directories, ``spanscope
recover``), writes its own part, then merges every part it finds (it
waits for no process) into the output, removes the parts directory, or
keeps it and says where when the merge fails.

Native children of a Python parent (a C program run through
``subprocess``) are not followed here: the native runner's preloaded
library (``SPANSCOPE_RUN=1`` and ``LD_PRELOAD``) will set their sessions up;
:func:`part_path` and :func:`claim_rank`'s file protocol are what it needs
to join (see docs/process-trees.md).
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager

from spanscope import _ext

#: the parts directory; set in every process of a followed tree
ENV_DIR = "SPANSCOPE_FOLLOW"
#: the children's settings (JSON object)
ENV_SETTINGS = "SPANSCOPE_FOLLOW_SETTINGS"
#: the directory whose sitecustomize starts every Python child's session
BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_follow_boot")

#: the settings a child takes from SPANSCOPE_FOLLOW_SETTINGS (and their types)
_CHILD_SETTINGS = {"stem": str, "recursive": bool, "all": bool, "include": list,
                   "exclude": list, "aggregation_mode": bool, "label": str,
                   "enable_tags": list, "region_tags": list}

#: multiprocessing's helper processes, which run none of the program's code
#: and live until the root ends (after the merge): not profiled
_HELPERS = ("multiprocessing.forkserver import main",
            "multiprocessing.resource_tracker import main",
            "multiprocessing.semaphore_tracker import main")


class _State:
    """This process's part of the tree (copied into forked children)."""

    following = False     # this process is in a followed tree
    pid = None            # the pid whose session records the part below
    rank = None
    part = None
    settings: dict = {}
    tracing = False       # the recursive tracer runs on this process's main thread
    fork_open: list = []  # the forking thread's open calls, read just before a fork


class _Token:
    """A weak-referenceable key for multiprocessing.util.register_after_fork."""


_TOKEN = _Token()


def _warn(message: str) -> None:
    try:
        sys.stderr.write(f"spanscope: --follow: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: nothing to say it on
        pass


# ---------------------------------------------------------------------------
# names and ranks
# ---------------------------------------------------------------------------

def part_path(parts_dir: str, stem: str, pid: int) -> str:
    """The part a process of pid writes: ``PARTS/STEM.pid<PID>.h5``."""
    return os.path.join(parts_dir, f"{stem}.pid{pid}.h5")


def _part_re(stem: str):
    return re.compile(re.escape(stem) + r"\.pid(\d+)\.h5")


def claim_rank(parts_dir: str, info: dict, first: int = 0) -> int:
    """Claims the lowest free rank >= first in parts_dir by creating
    ``rank<N>.json`` exclusively (O_CREAT|O_EXCL: two processes never get
    one rank) and writes info (with ``rank`` added) into it as JSON.
    Returns the rank; OSError when the directory cannot be written."""
    n = first
    while True:
        path = os.path.join(parts_dir, f"rank{n}.json")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            n += 1
            continue
        with os.fdopen(fd, "w") as f:
            json.dump({**info, "rank": n}, f)
        return n


def _claims(parts_dir: str) -> list:
    """The rank<N>.json records of parts_dir, by rank (unreadable ones --
    a process killed while it wrote its claim -- left out)."""
    out = []
    for name in os.listdir(parts_dir):
        if not re.fullmatch(r"rank\d+\.json", name):
            continue
        try:
            with open(os.path.join(parts_dir, name)) as f:
                rec = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("rank"), int):
            out.append(rec)
    return sorted(out, key=lambda r: r["rank"])


@contextmanager
def session_rank(rank: int):
    """While it is entered, the sessions ProfileManager.setup starts record
    under ``rank`` (``sps_config_t.rank``; size rank + 1, which the merge
    replaces by the number of its inputs).  ProfileManager.setup has no
    rank setting, so its call of ``_ext.setup`` gets the keywords here."""
    real = _ext.setup

    def setup(*args, **kwargs):
        kwargs.setdefault("rank", rank)
        kwargs.setdefault("size", rank + 1)
        return real(*args, **kwargs)

    _ext.setup = setup
    try:
        yield
    finally:
        _ext.setup = real


# ---------------------------------------------------------------------------
# the root
# ---------------------------------------------------------------------------

#: the output formats of the merge (sps_merge), by suffix
MERGE_SUFFIXES = (".h5", ".json", ".json.gz", ".pftrace")


class FollowRun:
    """The root's side of a followed run (``spanscope run --follow``):
    :meth:`start` before the root's session, :meth:`session_rank` around its
    ProfileManager.setup, :meth:`end` where the run finalizes."""

    def __init__(self, out_path: str, parts_dir: str, part: str, saved: dict):
        # the merged file, absolute: the script may change the directory
        self.out_path = os.path.abspath(out_path)
        self._shown = out_path        # as given, for the messages
        self.parts_dir = parts_dir
        self.part = part              # the root's own part
        self._saved = saved           # the environment before start()
        self.merged = 0               # processes merged, after end()
        self.missing: list = []       # claims of processes that left no part
        self.error = None             # why the merge failed, after end()
        self.processes: list = []     # /metadata follow_processes, after end()
        self.recovered: list = []     # pids whose parts were recovered, after end()

    @classmethod
    def start(cls, out_path: str, settings: dict) -> "FollowRun":
        """In the root, before its session: checks out_path's format (one of
        MERGE_SUFFIXES, else ValueError), makes the parts directory beside
        it (``OUT.parts-XXXXXX``), claims rank 0, sets the environment the
        children inherit (the module's docstring) and arms the at-fork
        hook.  settings: the children's (keys of _CHILD_SETTINGS);
        aggregation_mode is refused (ValueError: an aggregate file has no
        calls for the merge)."""
        import tempfile

        if settings.get("aggregation_mode"):
            raise ValueError("--aggregation-mode keeps statistics only, and the merge "
                             "joins calls: it cannot be used with --follow")
        if not out_path.endswith(MERGE_SUFFIXES):
            raise ValueError(f"{out_path!r}: the merged profile is .h5, or a trace: "
                             f".json, .json.gz (Chrome trace JSON), .pftrace (Perfetto)")
        out_dir = os.path.dirname(os.path.abspath(out_path))
        if not os.path.isdir(out_dir):
            raise OSError(f"{out_dir!r}: no such directory")
        parts = tempfile.mkdtemp(prefix=os.path.basename(out_path) + ".parts-", dir=out_dir)
        stem = "part"
        settings = {**settings, "stem": stem}
        claim_rank(parts, _process_info("root"))
        saved = {k: os.environ.get(k) for k in (ENV_DIR, ENV_SETTINGS, "PYTHONPATH")}
        os.environ[ENV_DIR] = parts
        os.environ[ENV_SETTINGS] = json.dumps(settings)
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = BOOT_DIR + (os.pathsep + old if old else "")
        _State.following = True
        _State.pid = os.getpid()
        _State.rank = 0
        _State.settings = settings
        _State.part = part_path(parts, stem, os.getpid())
        # with --recursive the script runs under the tracer, and so do the
        # children forked from it (they inherit it)
        _State.tracing = bool(settings.get("recursive") or settings.get("all"))
        return cls(out_path, parts, _State.part, saved)

    def configured(self, config) -> None:
        """After the root's setup: the settings a configuration file gave
        the root (--config, SPANSCOPE_CONFIG) reach the children too
        (recursive tracing, the label), unless the command line set them."""
        s = dict(_State.settings)
        if s.get("recursive") is None and getattr(config, "recursive_profile", False):
            s["recursive"] = True
            _State.tracing = True
        if s.get("label") is None and getattr(config, "label", None) is not None:
            s["label"] = str(config.label)
        _State.settings = s
        os.environ[ENV_SETTINGS] = json.dumps(s)

    @staticmethod
    def session_rank():
        """The root's session records as rank 0 (see session_rank)."""
        return session_rank(0)

    def abandon(self) -> None:
        """The run did not start (its setup failed): the environment back,
        the parts directory removed."""
        import shutil
        self._restore()
        shutil.rmtree(self.parts_dir, ignore_errors=True)

    def _restore(self) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def end(self, manager) -> bool:
        """Where the run finalizes.  In a forked child that ran the root's
        code on (os.fork in the script): writes the child's part only.  In
        the root: recovers the parts of children that ended without writing
        them (:meth:`_recover`), writes its own part (with /metadata
        follow_processes, see :func:`note_processes`) through
        manager.finalize, then merges every part found (:meth:`merge`).
        Returns whether this process is the root (the one to report)."""
        if not is_root():
            finish_part()
            return False
        try:
            # the parts of children that ended without writing them, first:
            # follow_processes lists them too
            self.recovered = self._recover(_State.settings.get("stem", "part"),
                                           _claims(self.parts_dir))
            self.processes = note_processes()
            manager.finalize(verbose=False)
        finally:
            # the run is over: the root's session ends (a finalize lets it
            # record on), its crash-safe directory goes with it, and a
            # process it forks from now on (a reader's isolated child)
            # records nothing into the parts directory
            _ext.shutdown()
            _State.following = False
            self._restore()
            self.merge()
        return True

    def merge(self) -> None:
        """Merges every part in the parts directory into out_path
        (``_ext.merge``, the C sps_merge; the format by out_path's
        extension), the root's first (the clocks' reference), the others
        by rank; sets merged, missing and error.  On success removes the
        parts directory, on failure keeps it."""
        stem = _State.settings.get("stem", "part")
        pattern = _part_re(stem)
        claims = _claims(self.parts_dir)
        rank_of = {c.get("pid"): c["rank"] for c in claims}
        found = []
        for name in os.listdir(self.parts_dir):
            m = pattern.fullmatch(name)
            if m:
                pid = int(m.group(1))
                found.append((rank_of.get(pid, 1 << 40), pid,
                              os.path.join(self.parts_dir, name)))
        found.sort()
        have = {pid for _, pid, _ in found}
        self.missing = [c for c in claims if c.get("pid") not in have]
        if not found:
            self.error = f"no process wrote its part into {self.parts_dir}"
            return
        try:
            _ext.merge(os.fspath(self.out_path), [p for _, _, p in found])
        except (ValueError, OSError, MemoryError) as error:
            self.error = str(error) or type(error).__name__
            return
        if self.out_path.endswith(".h5") and self.processes:
            self._keep_processes()
        import shutil
        shutil.rmtree(self.parts_dir, ignore_errors=True)
        self.merged = len(found)

    def _recover(self, stem: str, claims: list) -> list:
        """The parts of processes that ended without writing theirs (an
        os._exit outside multiprocessing, SIGKILL, a crash) written from the
        crash-safe live directories they left (PART.live-<pid>, when the
        session kept one: SPANSCOPE_CRASH_SAFE) by the C tool's ``recover``
        (sps_recover keeps the session's rank).  Processes still running are
        left alone.  Returns the pids recovered."""
        exe = _tool()
        done = []
        for c in claims:
            pid = c.get("pid")
            part = part_path(self.parts_dir, stem, pid)
            if (exe is None or c["rank"] == 0 or os.path.exists(part) or _alive(pid)
                    or not os.path.isdir(f"{part}.live-{pid}")):
                continue
            import subprocess
            p = subprocess.run([exe, "recover", "-q", part], capture_output=True, text=True)
            if p.returncode == 0 and os.path.exists(part):
                done.append(pid)
        return done

    def _keep_processes(self) -> None:
        """The merged .h5's /metadata follow_processes: the merge keeps only
        the lowest rank's own attributes (src/formats/merge_h5.c), not
        those a session adds with sps_metadata_set, so the root's table is
        written into the merged file here (h5py) when it is not there."""
        import h5py
        with h5py.File(self.out_path, "r+") as f:
            meta = f.require_group("metadata")
            if "follow_processes" not in meta.attrs:
                meta.attrs["follow_processes"] = json.dumps(self.processes)

    def report(self) -> list:
        """The lines the run prints about the merge (stderr)."""
        if self.error is not None:
            return [f"run: --follow: the merge failed: {self.error}; the processes' "
                    f"parts are kept in {self.parts_dir}"]
        lines = [f"run: --follow: merged {self.merged} "
                 f"{'process' if self.merged == 1 else 'processes'} into {self._shown}"]
        if self.recovered:
            n = len(self.recovered)
            lines.append(f"run: --follow: recovered the part of {n} "
                         f"{'process' if n == 1 else 'processes'} that ended without "
                         f"writing it (spanscope recover): pid "
                         f"{', '.join(str(p) for p in self.recovered)}")
        if self.missing:
            pids = ", ".join(str(c.get("pid")) for c in self.missing)
            lines.append(f"run: --follow: {len(self.missing)} "
                         f"{'process' if len(self.missing) == 1 else 'processes'} "
                         f"left no part (still running, killed, or ended by os._exit): "
                         f"pid {pids}")
        return lines


def _tool():
    """The C tool shipped in the package (spanscope/bin/spanscope), else
    $SPANSCOPE_CLI, else None."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "spanscope")
    for path in (here, os.environ.get("SPANSCOPE_CLI", "")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _alive(pid) -> bool:
    """Whether process pid still runs (a zombie -- ended, not yet waited
    for -- does not)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not os.path.isdir("/proc")  # no /proc entry on Linux: gone


def is_root() -> bool:
    """Whether this process is the one that called FollowRun.start (a
    forked child of it runs the root's code on, and must not merge)."""
    return _State.following and _State.rank == 0 and _State.pid == os.getpid()


def note_processes() -> list:
    """In the root, just before its part is written: /metadata
    follow_processes, the JSON list of the processes whose parts exist
    (and the root's), each {rank, pid, ppid, start, argv}; returns it."""
    parts = os.environ.get(ENV_DIR)
    if not parts or not os.path.isdir(parts):
        return []
    stem = _State.settings.get("stem", "part")
    table = [c for c in _claims(parts)
             if c["rank"] == 0 or os.path.exists(part_path(parts, stem, c.get("pid", -1)))]
    try:
        _ext.metadata_set("follow_processes", json.dumps(table))
    except RuntimeError:  # no session (profiling deactivated)
        pass
    return table


# ---------------------------------------------------------------------------
# the children
# ---------------------------------------------------------------------------

def _process_info(start_kind: str) -> dict:
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)
    return {"pid": os.getpid(), "ppid": os.getppid(), "start": start_kind, "argv": argv}


def _settings_from_env() -> dict:
    """SPANSCOPE_FOLLOW_SETTINGS, checked: ValueError naming it when it is
    not a JSON object of the known settings."""
    raw = os.environ.get(ENV_SETTINGS, "{}")
    try:
        value = json.loads(raw)
    except ValueError as error:
        raise ValueError(f"{ENV_SETTINGS} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{ENV_SETTINGS} must be a JSON object")
    out = {}
    for key, kind in _CHILD_SETTINGS.items():
        if value.get(key) is not None:
            if not isinstance(value[key], kind):
                raise ValueError(f"{ENV_SETTINGS}: {key} must be a {kind.__name__}")
            out[key] = value[key]
    out.setdefault("stem", "part")
    return out


def _start_part(start_kind: str) -> None:
    """Starts this process's session, recording its part under a rank of
    its own (ProfileManager.setup(replace=True, auto_finalize=True) with the
    tree's settings), and writes its ppid, start kind and command line to
    /metadata.  In a forked child it replaces the copy of the parent's
    run."""
    from spanscope.profile_manager import ProfileManager

    parts = os.environ[ENV_DIR]
    s = _settings_from_env()
    info = _process_info(start_kind)
    rank = claim_rank(parts, info, first=1)
    part = part_path(parts, s["stem"], os.getpid())
    setup = {"recursive_profile": bool(s.get("recursive") or s.get("all")),
             "aggregation_mode": s.get("aggregation_mode"), "label": s.get("label"),
             "enable_tags": s.get("enable_tags"), "region_tags": s.get("region_tags")}
    reopen = _State.fork_open if start_kind == "fork" else []
    _State.fork_open = []
    with session_rank(rank):
        ProfileManager.setup(replace=True, auto_finalize=True, file_path=part,
                             **{k: v for k, v in setup.items() if v is not None})
    # the calls open on the forking thread go on in the child, which ends
    # them: they begin again at the child's start (as the core's own fork
    # children do, src/api/fork.c), so that their ends match
    for name in reopen:
        ProfileManager.region(name).__enter__()
    _State.following = True
    _State.pid = os.getpid()
    _State.rank = rank
    _State.part = part
    _State.settings = s
    _ext.metadata_set("ppid", str(info["ppid"]))
    _ext.metadata_set("follow_start", start_kind)
    _ext.metadata_set("argv", json.dumps(info["argv"]))
    if setup["recursive_profile"]:
        from spanscope.profile_manager._scripts import _system_prefixes
        _ext.set_trace_skip(None if s.get("all") else _system_prefixes())
        _ext.set_trace_filters(tuple(s.get("include", ())), tuple(s.get("exclude", ())), None)


def finish_part() -> None:
    """Writes this process's part, once: when its session is still the
    one :func:`_start_part` started and was not finalized since (what
    ``auto_finalize`` does at exit; also the multiprocessing finalizer of
    forked workers, which end with os._exit)."""
    if _State.pid != os.getpid() or not _State.following:
        return
    from spanscope.profile_manager import ProfileManager
    if (ProfileManager._configured and _ext.is_active()
            and not ProfileManager._finalized_since_setup):
        try:
            ProfileManager.finalize(verbose=False)
        except Exception as error:  # noqa: BLE001 - a child must end normally
            _warn(f"process {os.getpid()}: its part was not written: {error}")


def _arm_multiprocessing_finalizer(_token=None) -> None:
    """In a multiprocessing worker, after its _bootstrap cleared the
    finalizers: finish_part as the last of them (lowest priority)."""
    import multiprocessing.util as util
    util.Finalize(None, finish_part, exitpriority=-(1 << 30))


def _before_fork() -> None:
    """os.register_at_fork(before=...): the forking thread's open calls,
    for the child to begin again (see _start_part) -- not for
    multiprocessing's fork start method, whose worker never returns into
    them (it runs its target and ends with os._exit)."""
    _State.fork_open = []
    caller = sys._getframe(1) if hasattr(sys, "_getframe") else None
    if caller is not None and caller.f_globals.get("__name__") == "multiprocessing.popen_fork":
        return
    if _State.following and _State.pid == os.getpid():
        try:
            _State.fork_open = _ext.open_calls() if _ext.is_active() else []
        except Exception:  # noqa: BLE001 - a fork must not fail for it
            _State.fork_open = []


def _after_fork_in_child() -> None:
    """os.register_at_fork(after_in_child=...): a forked child of a followed
    process records its own part from here on."""
    if not _State.following or not os.environ.get(ENV_DIR):
        return
    try:
        _start_part("fork")
        util = sys.modules.get("multiprocessing.util")
        if util is not None:  # a multiprocessing worker, which ends with os._exit
            util.register_after_fork(_TOKEN, _arm_multiprocessing_finalizer)
    except Exception as error:  # noqa: BLE001 - never break the child
        _State.following = False
        _warn(f"forked process {os.getpid()} is not profiled: {error}")


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def _trace_multiprocessing_workers() -> None:
    """With recursive tracing, in an interpreter started afresh (spawn, the
    fork server, subprocess): every multiprocessing process it starts or is
    runs its ``run()`` under the recursive tracer, inside a root region
    named after the main script (the root's is too: the same region on
    every process).  Wraps BaseProcess._bootstrap, which wraps the
    process's own run (subclasses that override run included); a process
    already under the tracer (forked from a traced one) is left alone."""
    from multiprocessing import process

    orig = process.BaseProcess._bootstrap
    if getattr(orig, "_spanscope_follow", False):
        return

    def _bootstrap(self, *args, **kwargs):
        if _State.tracing or _State.pid != os.getpid() or not _ext.is_active():
            return orig(self, *args, **kwargs)
        from spanscope.profile_manager import ProfileManager
        _State.tracing = True
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        region = ProfileManager.region(os.path.basename(main) if main
                                       else "multiprocessing.process")
        self.run = region.wrap(self.run, recursive=True)
        return orig(self, *args, **kwargs)

    _bootstrap._spanscope_follow = True
    process.BaseProcess._bootstrap = _bootstrap


def _is_helper() -> bool:
    """Whether this interpreter is one of multiprocessing's helper
    processes (the fork server, the resource tracker), told by its -c
    command."""
    argv = getattr(sys, "orig_argv", None) or []
    code = argv[argv.index("-c") + 1] if "-c" in argv[:-1] else ""
    return any(h in code for h in _HELPERS)


def bootstrap() -> None:
    """At the start of every Python interpreter of a followed tree (the
    _follow_boot sitecustomize): when SPANSCOPE_FOLLOW names a directory,
    starts this process's session (its part; multiprocessing's fork server
    and resource tracker are left out, but the fork server's workers are
    followed).  Never raises: a process that cannot be profiled runs
    unprofiled, with one line on stderr."""
    parts = os.environ.get(ENV_DIR)
    if not parts:
        return
    if not os.path.isdir(parts):
        _warn(f"{ENV_DIR}={parts!r} is not a directory: process {os.getpid()} "
              f"is not profiled")
        return
    _State.following = True
    try:
        if _settings_from_env().get("recursive") or _settings_from_env().get("all"):
            _trace_multiprocessing_workers()
    except Exception as error:  # noqa: BLE001 - never break the child
        _warn(f"process {os.getpid()}: its multiprocessing workers are not traced: {error}")
    if _is_helper():
        return
    argv = getattr(sys, "orig_argv", None) or []
    kind = "spawn" if any("multiprocessing.spawn import spawn_main" in a for a in argv) \
        else "exec"
    try:
        _start_part(kind)
    except Exception as error:  # noqa: BLE001 - never break the child
        _State.following = False
        _warn(f"process {os.getpid()} is not profiled: {error}")
