import os
import pathlib

import pytest

try:  # test_c_h5.py needs only h5py; the other files need the package
    from spanscope import ProfileManager
except ImportError:  # pragma: no cover - reported by the tests that need it
    ProfileManager = None

HERE = pathlib.Path(__file__).parent
BUILD = pathlib.Path(os.environ.get("SPS_BUILD", HERE.parent.parent / "build"))


@pytest.fixture(autouse=True)
def _fresh_profiler():
    """Every test starts and ends with no session and an empty registry."""
    if ProfileManager is not None:
        ProfileManager._reset()
    yield
    if ProfileManager is not None:
        ProfileManager._reset()


@pytest.fixture
def build_dir():
    return BUILD
