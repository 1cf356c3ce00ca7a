"""The declared name mapping of scope-profiler 0.7.5 onto spanscope.

``generate_mapping.py`` builds a ``scope_profiler`` package from this table:
for every module of scope-profiler's wheel, each of that module's public
names is bound to the object of the same name in the first spanscope
module below that has it (searched in order); a name no module has is left
out.  Nothing else: no wrappers, no defaults, no renames.
"""

# searched after a module's own entries: spanscope's public import paths.
# A module that does not import (not there yet, moved, or its optional
# dependency missing) is skipped.
COMMON = [
    "spanscope",
    "spanscope.profile_manager",
    "spanscope.options",
    "spanscope.results",
    "spanscope.plots",
    "spanscope.mpi_wrappers",
    "spanscope.profiler",
]

# spanscope's private modules, searched (before COMMON) only for the
# scope_profiler modules of the same subject, so that a same-named constant
# of an unrelated module (the JSON format's FORMAT_VERSION for the native
# trace's) is never bound
_MODEL = ["spanscope.results._model", "spanscope.results._profiling",
          "spanscope.results._regions", "spanscope.results._errors"]
_PLOTS = ["spanscope.plots", "spanscope.plots._figure", "spanscope.plots._timeline",
          "spanscope.plots._distributions", "spanscope.plots._scaling",
          "spanscope.plots._statistics", "spanscope.plots._counters",
          "spanscope.plots._callgraph", "spanscope.plots._runs"]

# scope_profiler module -> spanscope modules searched first (then COMMON,
# except for the modules in ONLY: those search their entry alone)
TABLE = {
    "scope_profiler": ["spanscope"],
    "scope_profiler.__main__": ["spanscope.__main__", "spanscope._cli"],
    "scope_profiler.pytest_plugin": ["spanscope.integrations.pytest_plugin"],
    "scope_profiler.ipython_magics": ["spanscope.integrations.ipython_magics"],
    "scope_profiler.tui": ["spanscope.integrations.tui"],
    "scope_profiler.mcp_server": ["spanscope.integrations.mcp_server"],
    "scope_profiler.mcp_server.__main__": ["spanscope.integrations.mcp_server.__main__",
                                          "spanscope.integrations.mcp_server.server"],
    "scope_profiler.mcp_server.server": ["spanscope.integrations.mcp_server.server"],
    "scope_profiler.mcp_server.tools": ["spanscope.integrations.mcp_server.tools"],
    "scope_profiler.plotting_scripts": _PLOTS,
    "scope_profiler.call_stack": ["spanscope.results._calls"],
    "scope_profiler.h5reader": _MODEL,
    "scope_profiler.results": _MODEL,
    "scope_profiler.region": _MODEL,
    "scope_profiler.mpi_region": _MODEL,
    "scope_profiler.json_export": ["spanscope.results._jsonio"],
    "scope_profiler.profile_io": ["spanscope.results._jsonio"],
    "scope_profiler.summary": ["spanscope.results._table", "spanscope.results._counters"],
    "scope_profiler.concurrency": ["spanscope.profile_manager._tasks"] + _MODEL,
    "scope_profiler.inspection": ["spanscope.results._inspection"],
    "scope_profiler.html_report": ["spanscope.results._inspection"],
    "scope_profiler.prof_export": ["spanscope.results._exports"],
    "scope_profiler.speedscope_export": ["spanscope.results._exports"],
    "scope_profiler.chrome_trace_export": ["spanscope.results._exports"],
    "scope_profiler.likwid_data": ["spanscope.results._likwid", "spanscope.results._counters"],
    "scope_profiler.native_trace": ["spanscope.results._native"],
    "scope_profiler.native_samples": ["spanscope.results._native_samples"],
    "scope_profiler.perf_events": ["spanscope.results._counters"],
    "scope_profiler.memray": ["spanscope.results._memray"],
    "scope_profiler.mpi_launch": ["spanscope._base.mpi"],
    "scope_profiler.profile_manager": ["spanscope.profile_manager",
                                       "spanscope.profile_manager._session",
                                       "spanscope.profile_manager._scripts",
                                       "spanscope.profile_manager._regions"],
    "scope_profiler.region_profiler": ["spanscope.profile_manager._regions"],
    "scope_profiler.profile_config": ["spanscope.options"],
}

# modules whose names come from their TABLE entry alone: the integrations,
# whose same-named objects elsewhere in spanscope (a `main`, a `run`) would
# be different things
ONLY = {
    "scope_profiler.__main__",
    "scope_profiler.pytest_plugin",
    "scope_profiler.ipython_magics",
    "scope_profiler.tui",
    "scope_profiler.mcp_server",
    "scope_profiler.mcp_server.__main__",
    "scope_profiler.mcp_server.server",
    "scope_profiler.mcp_server.tools",
}

# the plotting_scripts.* submodules search spanscope.plots first
PREFIX_TABLE = {
    "scope_profiler.plotting_scripts.": _PLOTS,
}

# data files of the package the tests read, mapped to spanscope's files
# (paths relative to the repository root, tried in order; the first that
# exists is linked).  Absent: the file is left out.
DATA_FILES = {
    "c/scope_profiler.h": ["include/scope_profiler.h"],
    "c/scope_profiler.hpp": ["include/scope_profiler.hpp"],
    "c/scope_profiler_mpi.hpp": ["include/scope_profiler_mpi.hpp"],
    "c/scope_profiler_hdf5.h": ["include/scope_profiler_hdf5.h"],
    "c/scope_profiler_impl.h": ["include/scope_profiler_impl.h"],
    "fortran/scope_profiler.f90": ["include/scope_profiler.f90", "fortran/scope_profiler.f90",
                                   "src/fortran/scope_profiler.f90"],
}

# copied from the wheel as they are: the test suite itself and its fixtures
COPIED = ["tests"]


def search_path(module: str) -> list:
    """The spanscope modules searched, in order, for `module`'s names."""
    first = list(TABLE.get(module, []))
    if not first:
        for prefix, mods in PREFIX_TABLE.items():
            if module.startswith(prefix):
                first = list(mods)
    if module in ONLY:
        return first
    return first + [m for m in COMMON if m not in first]

# modules that run as scripts (`python -m scope_profiler`): running the
# mapping's module runs this spanscope module as a script.  Only these; a
# module not listed does nothing when run.
SCRIPTS = {
    "scope_profiler.__main__": "spanscope.__main__",
    "scope_profiler.mcp_server.__main__": "spanscope.integrations.mcp_server.__main__",
    "scope_profiler.mcp_server.server": "spanscope.integrations.mcp_server.server",
}
