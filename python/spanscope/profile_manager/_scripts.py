"""Running code under a session: run(func), profile_script / run_script
(a script as __main__, optionally every function a region), profile_command
(a child process under ``spanscope run``), setup_from_env.
_ScriptsMixin holds ProfileManager's class methods for them."""

from __future__ import annotations

import os
import runpy
import sys

from spanscope import _ext
from spanscope.options import FeatureNotAvailableError
from spanscope.profile_manager._session import _output_kind


_ZERO_TOUCH = ("a program that is not Python runs under `spanscope run [options] -- "
               "PROGRAM ARGS...` (the native runner, docs/native-run.md)")


def _check_python_script(path: str) -> None:
    """Raises FeatureNotAvailableError when path names a program that is
    not a Python script -- an executable file (ELF), a script for another
    interpreter (a #! line without "python"), or a command found on PATH
    and not as a file -- which the native runner (``spanscope run -- CMD``,
    docs/native-run.md) profiles.  A path that names
    nothing is left to the runner, which says it cannot open it."""
    if not os.path.isfile(path):
        import shutil
        if shutil.which(path):
            raise FeatureNotAvailableError(
                f"{path!r} is a command, not a Python script: {_ZERO_TOUCH}")
        return
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return  # the runner reports it
    first = head.split(b"\n", 1)[0]
    if head.startswith(b"\x7fELF") or (first.startswith(b"#!") and b"python" not in first):
        raise FeatureNotAvailableError(f"{path!r} is not a Python script: {_ZERO_TOUCH}")


def _system_prefixes() -> tuple:
    """Resolved directories of the standard library and installed packages
    (what profile_script's recursive tracing leaves out)."""
    import site
    import sysconfig
    out = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            out.add(os.path.realpath(paths[key]))
    try:
        out.update(os.path.realpath(p) for p in site.getsitepackages())
        out.add(os.path.realpath(site.getusersitepackages()))
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    return tuple(sorted(out))


def _patterns(value, what: str) -> tuple:
    """run_script's include/exclude patterns as a tuple of str: one str is
    one pattern (not its characters); TypeError for anything else."""
    if isinstance(value, str):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be an iterable of str, not "
                        f"{type(value).__name__}") from None
    bad = [p for p in out if not isinstance(p, str)]
    if bad:
        raise TypeError(f"{what} must hold str patterns, not {type(bad[0]).__name__}")
    return out


class _ScriptsMixin:
    """ProfileManager's runners: run, profile_script, run_script, profile_command, setup_from_env.
    Mixed into ProfileManager (profile_manager/__init__.py), whose class
    attributes hold the state; every method is a classmethod of it."""

    # -- running code under a session ---------------------------------------
    @classmethod
    def run(cls, func, *args, output=None, **kwargs):
        """Runs func(*args) in a session (no file unless output= names one)
        and returns its value; the results are in last_results()."""
        kwargs.setdefault("verbose", False)
        kwargs.setdefault("return_results", True)
        with cls.session(output=output, **kwargs) as s:
            value = func(*args)
        cls._last_results = s.results
        return value

    @classmethod
    def profile_script(cls, script_path, *, script_args=None, output=None, **kwargs):
        """Runs the Python script at script_path as __main__ in a session
        (with recursive_profile=True every function of the script becomes a
        region) and returns the results."""
        if output is not None:
            kwargs["output"] = output
        cls.setup(**kwargs)
        try:
            # as scope-profiler's profile_script (run_script): a root region
            # around the script only when tracing recursively
            cls._exec_script(script_path, script_args, cls._recursive_default,
                             only_user_code=True, root_region=False)
        finally:
            results = cls.finalize(verbose=False, return_results=True)
        return results

    @classmethod
    def run_script(cls, script_path, script_args=None, region_name=None,
                   only_user_code: bool = True, recursive: bool = True,
                   include_patterns=(), exclude_patterns=(), entrypoint=None) -> None:
        """Runs the Python script at script_path as __main__ in the session
        set up (scope-profiler 0.7.5's run_script; call setup() before and
        finalize() after).  With recursive=True (the default) every Python
        function it calls becomes a region named "<module>.<qualname>",
        inside a root region named region_name (default: the script's file
        name); only the script's own code with only_user_code (the standard
        library and installed packages left out), everything without.
        include_patterns / exclude_patterns are glob patterns (Python's
        fnmatch rules) on those names: a function is recorded when it
        matches an include pattern (none given: every function does) and no
        exclude pattern.  entrypoint: the function whose name (co_name)
        equals it is recorded under that name.  The filters are decided in
        the C tracer once per function, not per call.  recursive=False runs
        the script plainly: only its explicit regions record, no root region,
        and the filters do nothing (as in scope-profiler).  sys.argv is
        [script_path, *script_args] while it runs."""
        include_patterns = _patterns(include_patterns, "include_patterns")
        exclude_patterns = _patterns(exclude_patterns, "exclude_patterns")
        if entrypoint is not None and not isinstance(entrypoint, str):
            raise TypeError(f"entrypoint must be a str or None, not {type(entrypoint).__name__}")
        if region_name is not None and not isinstance(region_name, str):
            raise TypeError(f"region_name must be a str or None, not {type(region_name).__name__}")
        cls._exec_script(script_path, script_args, bool(recursive), bool(only_user_code),
                         region_name=region_name, root_region=bool(recursive),
                         include_patterns=include_patterns, exclude_patterns=exclude_patterns,
                         entrypoint=entrypoint)

    @classmethod
    def _exec_script(cls, script_path, script_args, recursive: bool,
                     only_user_code: bool, *, region_name=None, root_region: bool = True,
                     include_patterns=(), exclude_patterns=(), entrypoint=None) -> None:
        """Runs the script as __main__ in the session set up, inside a
        region named region_name (default: its file name) -- without one
        when neither root_region nor recursive (run_script's plain run) --
        the one body of run_script, profile_script
        and ``spanscope run``.  recursive: every function it calls becomes a
        region ("<module>.<qualname>"), only its own code with only_user_code
        (the standard library and installed packages left out,
        scope-profiler's default), everything without (scope-profiler's
        ``run --all``); include_patterns / exclude_patterns / entrypoint are
        the tracer's name filters (tuples of str, str or None: see
        run_script).  sys.argv and sys.path are the script's while it runs;
        the tracer's filters are cleared after, however it ends."""
        script_path = os.path.abspath(os.fspath(script_path))
        old_argv, old_path = sys.argv, list(sys.path)
        sys.argv = [script_path, *(script_args or [])]
        sys.path.insert(0, os.path.dirname(script_path))
        try:
            name = region_name or os.path.basename(script_path)
            root = cls.region(name) if root_region or recursive else None
            if recursive:
                _ext.set_trace_skip(_system_prefixes() if only_user_code else None)
                _ext.set_trace_filters(tuple(include_patterns), tuple(exclude_patterns),
                                       entrypoint)
                runner = root.wrap(runpy.run_path, recursive=True)
                runner(script_path, run_name="__main__")
            elif root is not None:
                with root:
                    runpy.run_path(script_path, run_name="__main__")
            else:
                runpy.run_path(script_path, run_name="__main__")
        finally:
            _ext.set_trace_skip(None)
            _ext.set_trace_filters((), (), None)
            sys.argv, sys.path[:] = old_argv, old_path

    @classmethod
    def profile_command(cls, command, *, output=None, recursive=False, all=False,
                        mpi_calls=False):
        """Runs a Python script under ``spanscope run`` in a child process,
        as scope-profiler runs ``scope-profiler run``: ``command`` is the
        script and its arguments (a leading ``sys.executable``, ``python``
        or ``python3`` is dropped); ``recursive`` makes every function of the
        script a region, ``all`` those of the standard library and installed
        packages too, ``mpi_calls`` records mpi4py's calls
        (profile_mpi_calls).  The profile goes to ``output`` (default
        profiling_data.h5; .json / .html render that format).  Returns the
        subprocess.CompletedProcess with ``profile_results``: the profile
        read back (spanscope.load) when the script exited with 0 and wrote a
        file that is not HTML, else None.  ValueError without a script;
        FeatureNotAvailableError for a program that is not a Python script
        (``spanscope run -- CMD`` runs those: docs/native-run.md)."""
        command = [os.fspath(value) for value in command]
        if command and (command[0] == sys.executable
                        or os.path.basename(command[0]) in {"python", "python3"}):
            command = command[1:]
        if not command:
            raise ValueError("profile_command() requires a Python script path")
        _check_python_script(command[0])
        output_path = os.fspath(output) if output is not None else "profiling_data.h5"
        options = []
        if recursive or all:
            options.append("--recursive")
        if all:
            options.append("--all")
        if mpi_calls:
            options.append("--mpi-calls")
        import subprocess

        completed = subprocess.run([sys.executable, "-m", "spanscope", "run", "-q",
                                    "-o", output_path, *options, *command], check=False)
        completed.profile_results = None
        if (completed.returncode == 0 and os.path.exists(output_path)
                and _output_kind(output_path) != "html"):
            from spanscope.results import load  # numpy, h5py: only here

            completed.profile_results = load(output_path)
        return completed

    @classmethod
    def setup_from_env(cls, **overrides):
        """setup() configured without code, as the C core's auto-setup
        (sps_setup_from_env) configures a C program, from the same table
        (docs/configuration.md; ``spanscope config`` lists it): lowest first,
        the defaults < the ``[profiling]`` table of the TOML file
        SPANSCOPE_CONFIG names < the SPANSCOPE_* variables (each with
        scope-profiler's SCOPE_PROFILER_* name as an alias) < the keywords
        given here.  The variables are read by the C core's reader
        (_ext.env_read: SPANSCOPE_OUTPUT, _LABEL, _RECURSIVE,
        _AUTO_FINALIZE, _AGGREGATION_MODE, _DEACTIVATE_PROFILING,
        _MEMORY_LIMIT, _ENABLE_TAGS, _SAMPLE_HZ), the file by
        options.load_profiling_config after the C core's strict reader
        checked it (a file C refuses is refused here in the same words);
        tests/python/test_config_same.py
        checks that both faces resolve the same files and environments
        alike.  SPANSCOPE_SAMPLE_HZ (not 0) starts the stack sampler at
        that rate, as the C auto-setup does.  ValueError naming the variable,
        or the file and the key, for a bad one; a RuntimeWarning naming each
        SPANSCOPE_* variable that no setting has."""
        env = _ext.env_read()
        sample_hz = env.pop("sample_hz", 0)
        for name in env.pop("unknown_variables", ()):
            # a warning, not an error (as the C auto-setup's): a stray
            # variable must not stop a run
            import warnings
            warnings.warn(f"unknown variable {name} in the environment, ignored "
                          "(spanscope config lists the known ones)", RuntimeWarning,
                          stacklevel=2)
        for key, value in env.items():
            if key == "enable_tags":
                value = tuple(t.strip() for t in value.split(",") if t.strip())
            if key == "config_path" and not value:
                continue  # SPANSCOPE_CONFIG="": no file (as in C)
            if key == "output" and ("file_path" in overrides
                                    or "deactivate_file_output" in overrides):
                continue  # an explicit destination wins over the variable
            overrides.setdefault(key, value)
        run = cls.setup(**overrides)
        if sample_hz and not cls._deactivated:
            _ext.sampling_start(sample_hz)
        return run
