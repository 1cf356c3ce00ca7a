"""spanscope.profiler.itt: torch.profiler.itt's helpers (is_available,
range_push, range_pop, mark, range) -- Intel ITT tasks and markers with any
name, for Intel VTune Profiler (docs/nvtx-itt.md).

They go to the ITT domain ``"spanscope"`` -- the domain of ``emit_itt()``'s
region tasks -- through the extension (``_itt_ext.c``), which embeds the
static part of Intel's ittnotify: it loads the collector named by
``INTEL_LIBITTNOTIFY64`` (VTune sets it) on the first call and does nothing
without one, so the helpers are cheap no-ops when no VTune is attached, as
torch's are.  Each thread has its own stack of ranges: ``range_pop`` ends
the innermost range its own thread pushed.

In a build without ITT (CMake ``SPS_ITT=OFF``) ``is_available()`` is False
and the others raise ``FeatureNotAvailableError`` (a
``NotImplementedError``) naming the missing feature: never a silent no-op
that would leave a VTune timeline empty without a word.
"""

from __future__ import annotations

import contextlib

from spanscope import _ext
from spanscope.options import FeatureNotAvailableError

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_WHY = ("this spanscope was built without ITT (CMake option SPS_ITT=OFF, the vendored "
        "ittnotify); spanscope.profiler.itt.is_available() tells when it is there")


def is_available() -> bool:
    """Whether ITT ranges can be emitted: True when this spanscope was built
    with ITT (the default).  Whether VTune is attached is another matter:
    without a collector the ranges cost almost nothing and go nowhere."""
    return bool(_ext.itt_built())


def _need(what: str) -> None:
    if not _ext.itt_built():
        raise FeatureNotAvailableError(f"itt.{what}: {_WHY}")


def range_push(msg: str) -> int:
    """Begins an ITT task named ``msg`` (a str) in the domain "spanscope"
    on this thread; returns the zero-based depth of the range it starts
    (torch's documented answer)."""
    _need(f"range_push({msg!r})")
    return _ext.itt_range_push(msg)


def range_pop() -> int:
    """Ends this thread's innermost range begun by :func:`range_push`;
    returns the zero-based depth of the range it ended, or -1 when this
    thread has none open (nothing is ended then)."""
    _need("range_pop()")
    return _ext.itt_range_pop()


def mark(msg: str) -> None:
    """An instantaneous event named ``msg`` (an ITT marker of thread scope
    in the domain "spanscope")."""
    _need(f"mark({msg!r})")
    _ext.itt_mark(msg)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001 -- torch's name
    """torch.profiler.itt.range: ``range_push(msg.format(*args, **kwargs))``
    on entry, ``range_pop()`` on exit (also when the body raises)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
