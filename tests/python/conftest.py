import os
import pathlib

import pytest

spanscope = pytest.importorskip("spanscope")
from spanscope import ProfileManager  # noqa: E402

HERE = pathlib.Path(__file__).parent
BUILD = pathlib.Path(os.environ.get("SPS_BUILD", HERE.parent.parent / "build"))


@pytest.fixture(autouse=True)
def _fresh_profiler():
    """Every test starts and ends with no session and an empty registry."""
    ProfileManager._reset()
    yield
    ProfileManager._reset()


@pytest.fixture
def build_dir():
    return BUILD
