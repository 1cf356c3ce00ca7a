import os
import pathlib

import pytest

try:  # test_c_h5.py needs only h5py; the other files need the package
    from spanscope import ProfileManager
except ImportError:  # pragma: no cover - reported by the tests that need it
    ProfileManager = None

HERE = pathlib.Path(__file__).parent
BUILD = pathlib.Path(os.environ.get("SPS_BUILD", HERE.parent.parent / "build"))


def _stop_recording_profile():
    """A test that failed inside a torch-style profile leaves it recording."""
    import sys
    prof = sys.modules.get("spanscope.profiler")
    rec = getattr(prof, "_recording_profile", None)
    if rec is not None:
        try:
            rec.stop()
        finally:
            prof._recording_profile = None


@pytest.fixture(autouse=True)
def _fresh_profiler():
    """Every test starts and ends with no session, no recording profile and
    an empty registry."""
    if ProfileManager is not None:
        _stop_recording_profile()
        ProfileManager._reset()
    yield
    if ProfileManager is not None:
        _stop_recording_profile()
        ProfileManager._reset()


@pytest.fixture
def build_dir():
    return BUILD


def build_c_lib(tmp_path_factory, source: str):
    """Compiles source into a shared library linked against the installed
    package's libspanscope (so it records into the Python session) and
    loads it with ctypes; skips the test without a C compiler."""
    import ctypes
    import shutil
    import subprocess

    import spanscope
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    pkg = pathlib.Path(spanscope.__file__).parent
    d = tmp_path_factory.mktemp("clib")
    src = d / "k.c"
    src.write_text(source)
    so = d / "libk.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", str(pkg / "include"), str(src),
                    "-o", str(so), "-L", str(pkg), "-l:libspanscope.so.1",
                    f"-Wl,-rpath,{pkg}"], check=True)
    return ctypes.CDLL(str(so))
