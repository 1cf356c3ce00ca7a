"""ProfilingOptions and its option groups (scope-profiler 0.7.5's
dataclasses), imported on first use through spanscope.options, which holds
the rules and the defaults (its __getattr__ says why).  The classes keep
spanscope.options as their module: their repr, pickles and documentation
name them there."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from spanscope.options import CONFIG_FIELDS, _GROUP_FIELD_MAPS


@dataclass
class _OptionGroup:
    """A group of prefixed settings; ``_FIELD_MAP`` maps its short names to
    the flat ``setup()`` keywords."""

    _FIELD_MAP: ClassVar[dict[str, str]] = {}

    def to_kwargs(self) -> dict:
        """This group's explicitly-set fields, under their flat names."""
        return {self._FIELD_MAP[f.name]: v for f in fields(self)
                if (v := getattr(self, f.name)) is not None}


@dataclass
class MemrayOptions(_OptionGroup):
    """``use_memray``, ``memory_profile_path``, ``memray_*`` as one group
    (the TOML ``[profiling.memray]`` table)."""

    enabled: bool | None = None
    path: str | None = None
    native_traces: bool | None = None
    trace_python_allocators: bool | None = None
    follow_fork: bool | None = None

    _FIELD_MAP: ClassVar[dict[str, str]] = _GROUP_FIELD_MAPS["memray"]


@dataclass
class GPUOptions(_OptionGroup):
    """``use_gpu_timing``, ``gpu_timing_backend``, ``gpu_sync_on_exit``,
    ``use_nvtx`` as one group (``[profiling.gpu]``)."""

    timing: bool | None = None
    backend: Any = None
    nvtx: bool | None = None
    sync_on_exit: bool | None = None

    _FIELD_MAP: ClassVar[dict[str, str]] = _GROUP_FIELD_MAPS["gpu"]


@dataclass
class HDF5Options(_OptionGroup):
    """``hdf5_compression``, ``hdf5_compression_level``, ``hdf5_chunk_size``
    as one group (``[profiling.hdf5]``)."""

    compression: str | None = None
    compression_level: int | None = None
    chunk_size: int | None = None

    _FIELD_MAP: ClassVar[dict[str, str]] = _GROUP_FIELD_MAPS["hdf5"]


_OPTION_GROUPS: dict[str, type[_OptionGroup]] = {
    "memray": MemrayOptions, "gpu": GPUOptions, "hdf5": HDF5Options,
}


@dataclass
class ProfilingOptions:
    """A bag of ``setup()`` settings to reuse or pass around; every field
    defaults to None ("unset: let the file or the default decide").
    scope-profiler 0.7.5's fields, then spanscope's own (memory_limit,
    chunk_size, overflow, spill_dir).  Setting one thing both directly and
    on a group raises ValueError."""

    file_path: str | None = None
    label: str | None = None
    use_likwid: bool | None = None
    perf_events: Any = None
    use_line_profiler: bool | None = None
    use_memray: bool | None = None
    memory_profile_path: str | None = None
    memray_native_traces: bool | None = None
    memray_trace_python_allocators: bool | None = None
    memray_follow_fork: bool | None = None
    deactivate_profiling: bool | None = None
    use_nvtx: bool | None = None
    use_gpu_timing: bool | None = None
    gpu_timing_backend: Any = None
    deactivate_file_output: bool | None = None
    recursive_profile: bool | None = None
    aggregation_mode: bool | None = None
    profile_mpi_calls: bool | None = None
    track_threads: bool | None = None
    track_async: bool | None = None
    capture_region_source: bool | None = None
    metadata_detail: str | None = None
    buffer_limit: int | None = None
    output_mode: str | None = None
    hdf5_compression: str | None = None
    hdf5_compression_level: int | None = None
    hdf5_chunk_size: int | None = None
    enable_tags: Any = None
    memray: MemrayOptions | None = None
    gpu: GPUOptions | None = None
    hdf5: HDF5Options | None = None
    gpu_sync_on_exit: bool | None = None
    # spanscope's own
    memory_limit: int | None = None
    chunk_size: int | None = None
    overflow: str | None = None
    spill_dir: str | None = None

    def to_kwargs(self) -> dict:
        """The explicitly-set fields as ``setup()`` keywords, groups
        expanded; ValueError for a setting given both ways."""
        kwargs = {f.name: v for f in fields(self)
                  if f.name not in _OPTION_GROUPS and (v := getattr(self, f.name)) is not None}
        for name in _OPTION_GROUPS:
            group = getattr(self, name)
            if group is None:
                continue
            if not isinstance(group, _OPTION_GROUPS[name]):
                raise TypeError(f"ProfilingOptions.{name} must be a "
                                f"{_OPTION_GROUPS[name].__name__}, not {type(group).__name__}")
            for key, value in group.to_kwargs().items():
                if key in kwargs:
                    raise ValueError(f"{key!r} is set both directly and on the {name!r} "
                                     "option group; set it in one place")
                kwargs[key] = value
        return kwargs


for _cls in (_OptionGroup, MemrayOptions, GPUOptions, HDF5Options, ProfilingOptions):
    _cls.__module__ = "spanscope.options"
del _cls

# ProfilingOptions declares the settings spanscope.options knows, groups
# aside, and the groups its maps (one list in two places: checked here, at
# the first use, and by tests/python/test_options.py)
if ({f.name for f in fields(ProfilingOptions)} - set(_OPTION_GROUPS) != CONFIG_FIELDS
        or set(_OPTION_GROUPS) != set(_GROUP_FIELD_MAPS)):
    raise RuntimeError("spanscope: ProfilingOptions and spanscope.options.DEFAULTS differ")
