"""The start-up hook of ``spanscope run``'s Python interpreters.

- ``spanscope run --follow SCRIPT`` (spanscope._follow) puts this directory
  first on PYTHONPATH, so every Python interpreter of the followed process
  tree imports this module at start-up (site.py imports ``sitecustomize``)
  and starts recording its own part of the profile
  (spanscope._follow.bootstrap) before its program runs.
- A sampling native run (``spanscope run --sample-hz N [--follow] -- CMD``,
  spanscope._run_attach) puts it there too: in the processes its preloaded
  library profiles (which hold their session already) this module only
  installs the Python frame walker into the running sampler.

Then the ``sitecustomize`` this one hides -- the next one on sys.path, if
any -- is run, so an installation's own start-up code still runs.  Nothing
here may stop the interpreter: every failure is one line on stderr."""

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


def _native_run() -> bool:
    """True in a process a native run's preloaded library profiles (every
    process of a --follow tree, else the command's own pid, which a
    script's interpreter keeps): its Python frames are joined to its
    samples, and it has its session already.  Elsewhere (a plain run's
    other processes, say a Python --follow run started inside one) False,
    having imported nothing (spanscope costs ~50 ms)."""
    env = os.environ
    if env.get("SPANSCOPE_RUN") != "1":
        return False
    if env.get("SPANSCOPE_RUN_FOLLOW") != "1" and \
            env.get("SPANSCOPE_RUN_PID") != str(os.getpid()):
        return False
    try:
        from spanscope import _run_attach
    except Exception:  # another Python, without spanscope: native frames only
        return True
    _run_attach.attach()
    return True


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


if not _native_run():
    _follow()
_chain()
