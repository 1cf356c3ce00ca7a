"""The start-up hook of ``spanscope run``'s Python interpreters.

- ``spanscope run --follow SCRIPT`` (spanscope._follow) puts this directory
  first on PYTHONPATH, so every Python interpreter of the followed process
  tree imports this module at start-up (site.py imports ``sitecustomize``)
  and starts recording its own part of the profile
  (spanscope._follow.bootstrap) before its program runs.
- A native run (``spanscope run [--follow] -- CMD``) puts it there too: in
  the processes its preloaded library profiles (which hold their session
  already) this module makes the library's signal handlers known to Python
  and, when the run samples, installs the Python frame walker into the
  running sampler (spanscope._run_attach).

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


#: the signals the native library may handle (include/spanscope.h, sps_signals)
_RUN_SIGNALS = ("SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM",
                "SIGXCPU")


def _native_signals(lib) -> None:
    """The run's library set its signal handlers up before this interpreter
    existed, so Python took them for a foreign C handler: signal.signal()
    returned None for them (code that restores what it replaced, such as
    multiprocessing's fork server, then fails) and SIGINT raised no
    KeyboardInterrupt.  Each such signal gets what Python gives it without
    the run (SIGINT its KeyboardInterrupt, the others their default), then
    the library installs its handlers again over them (sps_signals), which
    chain to Python's as they do under ProfileManager."""
    import signal

    fixed = False
    for name in _RUN_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is None:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT
                          else signal.SIG_DFL)
            fixed = True
    if fixed and lib.sps_signals(None) != 0:
        sys.stderr.write(f"spanscope: run: process {os.getpid()}: its signals no longer "
                         f"write the profile\n")


def _native_run() -> bool:
    """True in a process a native run's preloaded library profiles (every
    process of a --follow tree, else the command's own pid, which a
    script's interpreter keeps): it has its session already; its signal
    handlers are made known to Python, and when it samples, spanscope's
    Python frame walker joins the sampler (spanscope._run_attach; importing
    spanscope costs ~50 ms, so only then).  Elsewhere (a plain run's other
    processes, say a Python --follow run started inside one) False, having
    done nothing."""
    env = os.environ
    if env.get("SPANSCOPE_RUN") != "1":
        return False
    if env.get("SPANSCOPE_RUN_FOLLOW") != "1" and \
            env.get("SPANSCOPE_RUN_PID") != str(os.getpid()):
        return False
    try:
        import ctypes

        lib = ctypes.CDLL("libspanscope.so.1")  # the preloaded one (its soname)
        _native_signals(lib)
        if lib.sps_sampling_hz() <= 0:
            return True
    except Exception as error:  # noqa: BLE001 - never stop the interpreter
        sys.stderr.write(f"spanscope: run: process {os.getpid()}: {error}\n")
        return True
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
