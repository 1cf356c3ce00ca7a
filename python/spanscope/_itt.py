"""spanscope.profiler.itt: torch.profiler.itt's helpers (is_available,
range_push, range_pop, mark, range).

Intel ITT ranges are emitted by the device integration (NVTX/ITT/GPU, its
own issue), which this spanscope does not have yet.  Until it lands,
``is_available()`` is False -- what torch's own stub answers in a build
without ITT -- and the others raise ``FeatureNotAvailableError`` (a
``NotImplementedError``, so a ``RuntimeError`` as torch's stub raises)
naming the missing feature: never a silent no-op that would leave a VTune
timeline empty without a word.
"""

from __future__ import annotations

import contextlib

from spanscope.options import FeatureNotAvailableError

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]

_WHY = ("ITT ranges are not available in this spanscope yet: ITT/NVTX emission comes with "
        "the device integration (its own issue); spanscope.profiler.itt.is_available() "
        "tells when it is")


def is_available() -> bool:
    """Whether ITT ranges can be emitted: False until the device
    integration provides them."""
    return False


def range_push(msg: str) -> int:
    """torch.profiler.itt.range_push: raises FeatureNotAvailableError (no ITT)."""
    raise FeatureNotAvailableError(f"itt.range_push({msg!r}): {_WHY}")


def range_pop() -> int:
    """torch.profiler.itt.range_pop: raises FeatureNotAvailableError (no ITT)."""
    raise FeatureNotAvailableError(f"itt.range_pop(): {_WHY}")


def mark(msg: str) -> None:
    """torch.profiler.itt.mark: raises FeatureNotAvailableError (no ITT)."""
    raise FeatureNotAvailableError(f"itt.mark({msg!r}): {_WHY}")


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001 -- torch's name
    """torch.profiler.itt.range: range_push(msg.format(*args, **kwargs)) on
    entry, range_pop() on exit; raises on entry while ITT is unavailable."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
