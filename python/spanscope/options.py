"""Settings of a profiling run: scope-profiler 0.7.5's ``ProfilingOptions``
and its option groups, the TOML file's ``[profiling]`` table, and the rules
that check them.

Precedence (lowest first), as in scope-profiler: the defaults, the TOML file
(``config_path=``), ``options=`` (a :class:`ProfilingOptions`), keywords.
``setup_from_env`` adds the environment between the file and ``options``:
the file it names (``SPANSCOPE_CONFIG``) < the other variables < keywords
(docs/python.md, "Configuration").  The C core reads the same file and
variables from one table with the same key names (src/api/env.c;
docs/configuration.md, ``spanscope config``); tests/python/test_config_same.py
checks that both faces resolve them alike.

Nothing here records anything: the manager (profile_manager.py) turns the
checked settings into one ``_ext.setup`` call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def _tomllib():
    """The TOML parser, imported on first use (start-up: only a run with a
    TOML configuration needs it): tomllib, or on Python 3.10, which has none,
    tomli (the same parser, a dependency there, as scope-profiler's); None
    when neither is there."""
    try:
        import tomllib
    except ModuleNotFoundError:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:  # pragma: no cover
            tomllib = None
    return tomllib


__all__ = ["ProfilingOptions", "ProfilingConfig", "MemrayOptions", "GPUOptions",
           "HDF5Options", "FeatureNotAvailableError", "load_profiling_config",
           "LAUNCHER_ENV_VARS"]


class FeatureNotAvailableError(NotImplementedError):
    """A scope-profiler option whose feature spanscope does not provide yet
    (memray, NVTX, GPU timing, perf/LIKWID counters, line profiling, MPI
    call profiling).  A NotImplementedError, so existing handlers keep
    working."""


#: The option groups' short names -> the flat ``setup()`` keywords (the TOML
#: ``[profiling.memray|gpu|hdf5]`` tables; each group class's ``_FIELD_MAP``).
_GROUP_FIELD_MAPS: dict[str, dict[str, str]] = {
    "memray": {
        "enabled": "use_memray", "path": "memory_profile_path",
        "native_traces": "memray_native_traces",
        "trace_python_allocators": "memray_trace_python_allocators",
        "follow_fork": "memray_follow_fork",
    },
    "gpu": {
        "timing": "use_gpu_timing", "backend": "gpu_timing_backend",
        "sync_on_exit": "gpu_sync_on_exit", "nvtx": "use_nvtx",
    },
    "hdf5": {
        "compression": "hdf5_compression",
        "compression_level": "hdf5_compression_level",
        "chunk_size": "hdf5_chunk_size",
    },
}

#: The option classes (dataclasses: ProfilingOptions and its groups) live in
#: spanscope._option_classes and resolve here on first use (__getattr__):
#: building them, and importing dataclasses (which imports inspect, ast,
#: dis, tokenize), took about a third of `import spanscope`, which every
#: `spanscope run` pays (issue 35 part 7b).
_CLASS_NAMES = frozenset({"_OptionGroup", "MemrayOptions", "GPUOptions", "HDF5Options",
                          "ProfilingOptions", "_OPTION_GROUPS"})


def __getattr__(name):
    if name in _CLASS_NAMES:
        from spanscope import _option_classes
        value = getattr(_option_classes, name)
        globals()[name] = value  # the next use is a plain lookup
        return value
    raise AttributeError(f"module 'spanscope.options' has no attribute {name!r}")


#: The defaults of the settings (what an unset field means).
DEFAULTS: dict[str, Any] = {
    "file_path": "profiling_data.h5", "label": None, "use_likwid": False,
    "perf_events": None, "use_line_profiler": False, "use_memray": False,
    "memory_profile_path": None, "memray_native_traces": False,
    "memray_trace_python_allocators": False, "memray_follow_fork": False,
    "deactivate_profiling": False, "use_nvtx": False, "use_gpu_timing": False,
    "gpu_timing_backend": "auto", "deactivate_file_output": False,
    "recursive_profile": False, "aggregation_mode": False, "profile_mpi_calls": False,
    "track_threads": False, "track_async": False, "capture_region_source": False,
    "metadata_detail": "minimal", "buffer_limit": 1024, "output_mode": "auto",
    "hdf5_compression": "auto", "hdf5_compression_level": None, "hdf5_chunk_size": None,
    "enable_tags": (), "gpu_sync_on_exit": False,
    "memory_limit": 0, "chunk_size": 0, "overflow": "spill", "spill_dir": None,
}
#: Every flat setting name (spanscope._option_classes checks that
#: ProfilingOptions declares exactly these, groups aside).
CONFIG_FIELDS = frozenset(DEFAULTS)

#: Features another piece of work delivers: the option, when turned on,
#: raises FeatureNotAvailableError naming the feature.
_NOT_AVAILABLE: dict[str, str] = {}

#: gpu_timing_backend's names (scope-profiler's "auto", "torch", "pytorch",
#: "cupy", and "cuda"), any case.  spanscope has one backend for all of
#: them: CUDA events recorded from C through libcudart, loaded at run time
#: (src/ext/gpu_timing.c, docs/device.md "gpu_timing"), on the default
#: stream -- torch's and cupy's current stream unless the program switched
#: to one of its own.  torch or cupy need not be installed.
GPU_TIMING_BACKENDS = ("auto", "cuda", "torch", "pytorch", "cupy")


def _check_gpu_backend(o: dict) -> None:
    """gpu_timing_backend: a name of GPU_TIMING_BACKENDS (None: "auto"), in
    scope-profiler's words when it is not one.  A backend object is
    checked as scope-profiler checks it (record_event() and
    elapsed_time_ns() or TypeError); a complete one is accepted only
    without use_gpu_timing (spanscope records its events in C, not through
    Python objects: FeatureNotAvailableError)."""
    backend = o["gpu_timing_backend"]
    if backend is None:
        o["gpu_timing_backend"] = "auto"
        return
    if isinstance(backend, str):
        if backend.lower() not in GPU_TIMING_BACKENDS:
            raise ValueError(
                f"Unknown gpu_timing_backend {backend!r}; expected 'auto', 'cuda', 'torch', "
                "'pytorch', 'cupy', or a backend object.")
        return
    for attr in ("record_event", "elapsed_time_ns"):
        if not callable(getattr(backend, attr, None)):
            raise TypeError("gpu_timing_backend objects must provide record_event() and "
                            "elapsed_time_ns(start_event, end_event).")
    if o["use_gpu_timing"]:
        raise FeatureNotAvailableError(
            f"gpu_timing_backend={backend!r}: spanscope records CUDA events from its C core "
            "(libcudart), not through a Python backend object; use "
            f"gpu_timing_backend='auto' (or one of {', '.join(GPU_TIMING_BACKENDS[1:])})")

_BOOLS = {"use_likwid", "use_line_profiler", "use_memray", "memray_native_traces",
          "memray_trace_python_allocators", "memray_follow_fork", "deactivate_profiling",
          "use_nvtx", "use_gpu_timing", "deactivate_file_output", "recursive_profile",
          "aggregation_mode", "profile_mpi_calls", "track_threads", "track_async",
          "capture_region_source", "gpu_sync_on_exit"}


def unknown_setting_error(names, extra=()) -> str:
    """"Unknown profiling setting(s): 'x' (did you mean 'y'?)" for names."""
    known = sorted(CONFIG_FIELDS | set(extra))
    parts = []
    import difflib

    for name in sorted(names):
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return "Unknown profiling setting(s): " + ", ".join(parts)


def _flatten_groups(table: dict, where: str) -> dict:
    """The [profiling.memray|gpu|hdf5] sub-tables expanded to flat names."""
    flat = {k: v for k, v in table.items() if k not in _GROUP_FIELD_MAPS}
    for name, field_map in _GROUP_FIELD_MAPS.items():
        sub = table.get(name)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise ValueError(f"{where}: profiling setting {name!r} must be a TOML table")
        unknown = sorted(set(sub) - set(field_map))
        if unknown:
            raise ValueError(f"{where}: unknown [{name}] profiling setting(s): "
                             + ", ".join(unknown))
        for key, value in sub.items():
            flat_key = field_map[key]
            if flat_key in flat:
                raise ValueError(f"{where}: profiling setting {flat_key!r} is set both "
                                 f"directly and as {name}.{key}")
            flat[flat_key] = value
    return flat


def load_profiling_config(path) -> dict:
    """The ``[profiling]`` table of the TOML file at path (a top-level table
    is accepted for small files), groups flattened, read with tomllib
    (scope-profiler's errors), then checked by the C core's strict reader
    (``_ext.config_check``, what the C auto-setup and ``spanscope run
    --config`` read): a file either face refuses is refused by both.
    ValueError (naming the file) when it cannot be read or parsed, or
    names an unknown setting; the message of an unknown one suggests the
    closest valid name."""
    tomllib = _tomllib()
    if tomllib is None:  # pragma: no cover
        raise RuntimeError("reading a TOML configuration needs Python 3.11's tomllib "
                           "or, on Python 3.10, the tomli package (pip install tomli)")
    where = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except OSError as e:
        raise ValueError(f"could not read profiling config {where!r}: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"invalid profiling TOML {where!r}: {e}") from e
    table = raw.get("profiling", raw)
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [profiling] must be a TOML table")
    flat = _flatten_groups(table, where)
    unknown = set(flat) - CONFIG_FIELDS
    if unknown:
        raise ValueError(f"{where}: " + unknown_setting_error(unknown))
    # then the C core's strict reader (what the C auto-setup and `spanscope
    # run --config` read): what it refuses beyond the above, in its words
    from spanscope import _ext
    try:
        _ext.config_check(where)
    except (OSError, ValueError) as e:
        raise ValueError(f"invalid profiling TOML {where!r}: {e}") from e
    return flat


def _check_types(o: dict) -> None:
    """TypeError for a setting of the wrong type."""
    for key in _BOOLS:
        if not isinstance(o[key], bool):
            raise TypeError(f"{key} must be a bool, not {type(o[key]).__name__}")
    fp = o["file_path"]
    if fp is not None and not isinstance(fp, (str, os.PathLike)):
        raise TypeError(f"file_path must be a str or os.PathLike, not {type(fp).__name__}")
    if o["label"] is not None and not isinstance(o["label"], str):
        raise TypeError(f"label must be a str, not {type(o['label']).__name__}")
    for key in ("memory_limit", "chunk_size", "buffer_limit"):
        v = o[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise TypeError(f"{key} must be a non-negative int, not {v!r}")
    tags = o["enable_tags"]
    if isinstance(tags, str):
        tags = tuple(t.strip() for t in tags.split(",") if t.strip())
    elif tags is None:
        tags = ()
    else:
        tags = tuple(tags)
    for t in tags:
        if not isinstance(t, str) or not t:
            raise TypeError(f"enable_tags must hold non-empty strings, not {t!r}")
    o["enable_tags"] = tags


def _perf_events(events) -> tuple:
    """scope-profiler's perf_events value, normalised as its
    validate_events does (a str is one name; lower case; unique): () when
    None.  The names themselves are checked by the C core at setup (perf
    stat's names, and libpfm4's where it is installed: more than
    scope-profiler's ten), which raises ValueError naming an unknown one."""
    if events is None:
        return ()
    if isinstance(events, str):
        events = [events]
    if not isinstance(events, (list, tuple)) or not events:
        raise ValueError("perf_events must be a non-empty list of event names")
    names = tuple(str(e).strip().lower() for e in events)
    if not all(names) or len(set(names)) != len(names):
        raise ValueError("perf_events must contain unique, non-empty event names")
    if any("," in n for n in names):
        raise ValueError(f"perf_events: an event name holds no comma: {names!r}")
    return names


def _check_values(o: dict) -> None:
    """ValueError for a bad value and for the combinations scope-profiler
    rejects, in scope-profiler's words; then FeatureNotAvailableError for a
    feature that is not there yet."""
    o["perf_events"] = _perf_events(o["perf_events"]) or None  # off: None, as the default
    if o["overflow"] not in ("spill", "drop", "grow"):
        raise ValueError(f"overflow must be one of 'drop', 'grow', 'spill', not {o['overflow']!r}")
    comp = o["hdf5_compression"]
    if isinstance(comp, str):
        comp = comp.strip().lower()
        if comp in ("", "none"):
            comp = None
    if comp not in (None, "auto", "gzip", "lzf", "zstd"):
        raise ValueError("hdf5_compression must be None, 'auto', 'gzip', 'lzf', or "
                         f"'zstd', got {comp!r}")
    level, chunk = o["hdf5_compression_level"], o["hdf5_chunk_size"]
    # the values first, in scope-profiler's words (a bad value is a
    # ValueError whatever spanscope provides), then what is not there yet
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk <= 0):
        raise ValueError("hdf5_chunk_size must be a positive integer or None")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise ValueError("hdf5_compression_level must be an integer or None")
    if comp == "gzip" and level is not None and not 0 <= level <= 9:
        raise ValueError("GZIP compression level must be between 0 and 9")
    if comp == "zstd" and level is not None and not 1 <= level <= 22:
        raise ValueError("Zstandard compression level must be between 1 and 22")
    if comp == "lzf" and level is not None:
        raise ValueError("LZF compression does not accept a compression level")
    if comp in ("lzf", "zstd"):
        raise FeatureNotAvailableError(
            f"hdf5_compression={comp!r} is not available yet in spanscope (gzip+shuffle "
            "only): use 'gzip', 'auto' or None")
    o["hdf5_compression"] = comp
    if o["output_mode"] not in ("auto", "direct", "parallel"):
        raise ValueError("output_mode must be 'auto', 'direct', or 'parallel', "
                         f"got {o['output_mode']!r}")
    if o["metadata_detail"] not in ("minimal", "full"):
        raise ValueError("metadata_detail must be 'minimal' or 'full', "
                         f"got {o['metadata_detail']!r}")
    if o["gpu_sync_on_exit"] and not o["use_gpu_timing"]:
        raise ValueError("gpu_sync_on_exit requires use_gpu_timing=True")
    counters = (o["use_line_profiler"] or o["use_gpu_timing"] or o["use_likwid"]
                or o["use_nvtx"] or bool(o["perf_events"]))
    if o["aggregation_mode"] and counters:
        raise ValueError("aggregation_mode cannot be combined with line, GPU, NVTX, "
                         "LIKWID, or perf events")
    if o["track_async"]:
        o["track_threads"] = True  # a task lane lies on a thread, as in scope-profiler
    if (o["track_threads"] or o["track_async"]) and (counters or o["aggregation_mode"]):
        raise ValueError("track_threads/track_async cannot be combined with line, GPU, "
                         "NVTX, LIKWID, perf events, or aggregation profiling")
    _check_gpu_backend(o)
    for key, feature in _NOT_AVAILABLE.items():
        v = o[key]
        if v not in (None, False, (), []):
            raise FeatureNotAvailableError(
                f"{key}={v!r}: {feature} is not available yet in spanscope")
    if o["hdf5_compression_level"] is not None or o["hdf5_chunk_size"] is not None:
        raise FeatureNotAvailableError(
            "hdf5_compression_level / hdf5_chunk_size are not available yet in spanscope "
            "(gzip level and chunking are the writer's own)")


def resolve(settings: dict) -> dict:
    """The full, checked settings: DEFAULTS updated with settings (flat
    names, None meaning unset).  TypeError for an unknown name (with a
    "did you mean" hint) or a wrong type, ValueError for a bad value or a
    rejected combination, FeatureNotAvailableError for a feature that is
    not there yet."""
    unknown = set(settings) - CONFIG_FIELDS
    if unknown:
        raise TypeError(unknown_setting_error(unknown))
    o = dict(DEFAULTS)
    o.update({k: v for k, v in settings.items() if v is not None})
    _check_types(o)
    _check_values(o)
    return o


#: The per-rank variables by which an MPI launch is recognised (scope-profiler's
#: profile_config re-exports mpi_launch.LAUNCHER_ENV_VARS; spanscope._base.mpi).
from spanscope._base.mpi import LAUNCHER_ENV_VARS  # noqa: E402


class ProfilingConfig(Mapping):
    """The configuration of one profiling run, as scope-profiler 0.7.5's
    ``ProfilingConfig(file_path="profiling_data.h5", label=None, ...)``: the
    keywords (``setup()``'s settings) checked and completed with the
    defaults by the same rules as ``setup()`` (TypeError for an unknown
    name or a wrong type, ValueError for a bad value,
    FeatureNotAvailableError for a feature spanscope does not provide yet).

    Each setting is a read-only attribute (``config.file_path`` is a str,
    ``config.label``); the object is also a mapping of them, which
    ``ProfileManager.set_config(config)`` and ``setup(**config)`` take.
    Constructing one is local: it records nothing and starts no MPI, so
    several coexist independently."""

    __slots__ = ("_values",)

    def __init__(self, file_path="profiling_data.h5", label=None, **settings):
        """See the class.  ``settings``: any other setup() setting by its
        flat name (``aggregation_mode=True``, ``buffer_limit=4096``, ...)."""
        values = resolve({"file_path": file_path, "label": label, **settings})
        if values["file_path"] is not None:
            values["file_path"] = os.fspath(values["file_path"])
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(f"no profiling setting {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("a ProfilingConfig is read-only; build another one "
                             "(or call setup()) to change a setting")

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def as_dict(self) -> dict:
        """Every setting, resolved, as a new dict."""
        return dict(self._values)

    def __repr__(self):
        return f"ProfilingConfig(file_path={self.file_path!r}, label={self.label!r})"

