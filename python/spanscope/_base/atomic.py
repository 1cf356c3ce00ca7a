"""The one way the Python faces write a file themselves (JSON documents,
plot data, stacks, copies): under the library's temporary name
(``PATH.tmp-PID``, as every C writer spells it), renamed into place, so
that a full disk, a quota or an I/O error leaves no partial file and no
temporary one behind (docs/robustness.md, "Failing disks").

The error is the OSError the operating system gave, with its errno (and so
its subclass: ``PermissionError``, ``FileNotFoundError``), and the C
writers' wording: ``"no space left on device (writing OUT)"`` with
``filename`` the output's path, not the temporary one.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable


def write_replacing(out, write: Callable[[Path], None]) -> Path:
    """Calls ``write(tmp)`` to write the whole file at a temporary path next
    to ``out``, then renames it to ``out``.  On any failure the temporary
    file is removed; an OSError with an errno is raised again as
    ``OSError(errno, "<cause> (writing OUT)", OUT)``.  Returns ``out`` as a
    Path."""
    out = Path(out)
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, out)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno:
            cause = os.strerror(exc.errno)
            raise OSError(exc.errno, f"{cause[:1].lower()}{cause[1:]} (writing {out})",
                          str(out)) from exc
        raise
    return out


def write_text_replacing(out, text: str) -> Path:
    """write_replacing for a text file (UTF-8)."""
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
    return write_replacing(out, write)
