"""The results API's exceptions (scope-profiler's names and bases) and the
errors of integrations that have not landed."""

from __future__ import annotations

import numpy as np

__all__ = ["CorruptProfileError", "EventDataUnavailableError", "HDF5SchemaError", "IntegrationNotAvailableError", "NestingError", "SummaryDataUnavailable"]


NS_PER_SECOND = 1e9
#: thread/task table value of a time that was never taken (still running)
UNKNOWN = -1


# --------------------------------------------------------------------------
# Exceptions (scope-profiler's names and bases)
# --------------------------------------------------------------------------

class EventDataUnavailableError(RuntimeError):
    """Per-call event data was asked of summary-only results."""


class CorruptProfileError(OSError):
    """The file cannot be read as a profile: not HDF5, truncated, corrupt, or
    not of a scope-profiler schema.  An OSError, as in scope-profiler; the
    message names the file and what is wrong with it (the C reader's)."""


class SummaryDataUnavailable(ValueError):
    """A summary-only read found no fixed-size statistics to read."""


class HDF5SchemaError(ValueError):
    """The file's scope_profiler_schema is not one this reader knows (a
    ValueError, as scope-profiler raises it for a newer schema)."""


class NestingError(ValueError):
    """Recorded intervals of one lane overlap without one holding the other,
    so there is no call stack to reconstruct."""


class IntegrationNotAvailableError(NotImplementedError):
    """A results accessor of an integration spanscope does not have yet."""


def _counters_unavailable(what: str):
    return IntegrationNotAvailableError(
        f"{what} is not available yet: spanscope reads no {what.split()[0]} data "
        "until the hardware-counters integration (perf_event / LIKWID) lands")


# --------------------------------------------------------------------------
# Region: one region on one rank
# --------------------------------------------------------------------------

def _i64(a):
    return None if a is None else np.asarray(a, dtype=np.int64)

