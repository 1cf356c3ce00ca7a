"""scope-profiler 0.7.5's hardware-counter result types, for the day the
perf_event / LIKWID integration lands (another issue).

They exist now so that programs written for scope-profiler keep working
under ``import spanscope as sp``: ``isinstance(x, sp.LikwidRegionResult)``,
``except sp.PerfEventError:`` and type annotations resolve.  spanscope
records and reads no counter values yet: every function that would return
or draw them raises :class:`spanscope.IntegrationNotAvailableError`, and
nothing here builds an instance from a file.  The fields are
scope-profiler's (``likwid_data.LikwidRegionResult``,
``perf_events.PerfEventTotals``) so code that constructs them by hand, as
its tests do, keeps the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["LikwidRegionResult", "PerfEventError", "PerfEventTotals"]


class PerfEventError(RuntimeError):
    """A requested kernel performance event could not be opened or read
    (scope-profiler's name and base).  spanscope raises it once its
    perf_event integration exists; until then the counter functions raise
    IntegrationNotAvailableError."""


@dataclass
class PerfEventTotals:
    """Aggregated perf_event counts of one region: its calls and the
    counts by event name (scope-profiler's fields)."""

    calls: int
    values: dict[str, int]


@dataclass
class LikwidRegionResult:
    """Counter results of one LIKWID marker region (scope-profiler's
    fields): per-thread arrays share one thread axis, ``events[e, t]`` and
    ``metrics[m, t]`` being thread t's (runtime ``times[t]`` s, CPU
    ``cpus[t]``)."""

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
        """Unique per-event labels: a name that occurs once as is, a
        repeated one with its counter ("CAS_COUNT_RD:MBOX0C0"), or its
        position where counter names are unknown ("NAME#3"), as
        scope-profiler labels them."""
        labels = []
        for index, name in enumerate(self.event_names):
            if self.event_names.count(name) == 1:
                labels.append(name)
            elif index < len(self.counter_names):
                labels.append(f"{name}:{self.counter_names[index]}")
            else:
                labels.append(f"{name}#{index}")
        return labels

    def as_dict(self) -> dict:
        """The fields as a plain dict (with event_labels), as scope-profiler's."""
        return {"tag": self.tag, "group_id": self.group_id, "group_name": self.group_name,
                "cpus": list(self.cpus), "times": self.times,
                "call_counts": self.call_counts, "event_names": list(self.event_names),
                "counter_names": list(self.counter_names),
                "event_labels": self.event_labels, "events": self.events,
                "metric_names": list(self.metric_names), "metrics": self.metrics,
                "source": self.source}
