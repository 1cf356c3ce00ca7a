"""Hardware-counter plots: LIKWID and perf events (another integration)."""

from __future__ import annotations


from spanscope.plots._figure import DEFAULT_CMAP


# --- hardware counters: another integration ------------------------------------------

def _counters_missing(what: str):
    """The error of every counter plot: the results accessors' own
    (IntegrationNotAvailableError, a NotImplementedError)."""
    from spanscope.results._errors import _counters_unavailable
    raise _counters_unavailable(f"perf/LIKWID counter data for {what}")


def available_likwid_metrics(profiling_data):
    """Not available yet: needs the LIKWID integration (IntegrationNotAvailableError)."""
    _counters_missing("available_likwid_metrics")


def plot_likwid(profiling_data, metric=None, **kwargs):
    """Not available yet: needs the LIKWID integration (IntegrationNotAvailableError)."""
    _counters_missing("plot_likwid")


def available_perf_event_metrics(profiling_data):
    """Not available yet: needs the perf integration (IntegrationNotAvailableError)."""
    _counters_missing("available_perf_event_metrics")


def plot_perf_events(profiling_data, metric="ipc", ranks=None, include=None, exclude=None,
                     labels=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                     backend="matplotlib"):
    """scope-profiler's signature; not available yet: needs the perf
    integration (IntegrationNotAvailableError)."""
    _counters_missing("plot_perf_events")


def collect_roofline_points(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                            ranks=None, include=None, exclude=None):
    """scope-profiler's signature; not available yet: roofline points are
    LIKWID FLOP/s and bandwidth metrics (IntegrationNotAvailableError)."""
    _counters_missing("collect_roofline_points")


def plot_roofline(profiling_data, *, flops_metric=None, bandwidth_metric=None,
                  peak_flops=None, peak_bandwidth=None, ranks=None, include=None,
                  exclude=None, filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                  data_filepath=None, data_format="csv", backend="matplotlib"):
    """scope-profiler's signature; not available yet: a roofline needs FLOP
    and byte counters from the LIKWID integration
    (IntegrationNotAvailableError)."""
    _counters_missing("plot_roofline")
