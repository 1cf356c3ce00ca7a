"""``python -m spanscope COMMAND ...``: the ``spanscope`` command
(spanscope._cli.main), as ``python -m scope_profiler`` is scope-profiler's:
``run`` (a Python script run and profiled) and the other Python
subcommands here, the rest by the C tool shipped in the package."""

import sys

from spanscope._cli import entry, main  # noqa: F401  (main: scope-profiler's __main__.main)

if __name__ == "__main__":
    sys.exit(entry())
