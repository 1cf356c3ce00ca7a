"""The Python frames of a native run's samples (docs/native-run.md,
"Python programs in a native run").

``spanscope run --sample-hz N -- CMD`` (and ``--follow``) profiles its
processes through a preloaded library, which sets the session up and starts
the stack sampler before ``main``: before any Python interpreter exists.
Such a sampler sees a Python program's native frames only (the eval loop).
When the tool is the Python package's, it puts ``spanscope/_follow_boot``
first on ``PYTHONPATH``; that folder's ``sitecustomize`` calls
:func:`attach` at the start of every interpreter the preloaded library
profiles (it checks which before importing spanscope), and attach installs
this package's frame walker into the running sampler, so that the samples
carry the Python frames, as under ``spanscope run script.py``.
"""

from __future__ import annotations

import os
import sys


def attach() -> bool:
    """Installs the Python frame walker into this process's running sampler:
    the sampler is stopped, given the walker and started again at its rate
    (the walker cannot change under a running sampler; the samples taken so
    far stay, and the few microseconds between are not sampled).  Returns
    whether it did; False when nothing samples here.  Never raises: a
    failure is one line on stderr and the process keeps its native frames."""
    try:
        from spanscope import _ext

        hz = _ext.sampling_hz()
        if hz <= 0:
            return False
        _ext.sampling_stop()
        _ext.sampling_start(hz)
        return True
    except Exception as error:  # noqa: BLE001 - never break the program
        try:
            sys.stderr.write(f"spanscope: run: process {os.getpid()}: its samples keep "
                             f"native frames only: {error}\n")
        except (OSError, ValueError):
            pass
        return False
