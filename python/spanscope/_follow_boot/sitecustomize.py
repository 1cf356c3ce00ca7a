"""``spanscope run --follow``'s start-up hook (spanscope._follow): the run
puts this directory first on PYTHONPATH, so every Python interpreter of the
followed process tree imports this module at start-up (site.py imports
``sitecustomize``) and starts recording its own part of the profile
(spanscope._follow.bootstrap) before its program runs.  Then the
``sitecustomize`` this one hides -- the next one on sys.path, if any -- is
run, so an installation's own start-up code still runs.  Nothing here may
stop the interpreter: every failure is one line on stderr."""

import os
import sys


def _follow() -> None:
    if not os.environ.get("SPANSCOPE_FOLLOW"):
        return
    try:
        from spanscope import _follow
    except Exception as error:  # another Python, without spanscope: run unprofiled
        sys.stderr.write(f"spanscope: --follow: process {os.getpid()} "
                         f"({sys.executable}) is not profiled: {error}\n")
        return
    _follow.bootstrap()


def _chain() -> None:
    """Runs the next ``sitecustomize`` on sys.path (past this directory)."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # as site.py reports a failing sitecustomize
        sys.stderr.write(f"Error in sitecustomize ({spec.origin}): {error!r}\n")


_follow()
_chain()
