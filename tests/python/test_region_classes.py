"""scope-profiler's region classes (region_profiler's DisabledProfileRegion,
TimeOnlyProfileRegion, ThreadedProfileRegion, ...) as kinds of spanscope's
one live Region: isinstance follows the session's settings and the
region's tags; a disabled session's wrap() hands the function back."""
import threading

import numpy as np
import pytest

import spanscope as sp
from spanscope import ProfileManager
from spanscope.profile_manager import (AggregateProfileRegion, BaseProfileRegion,
                                       DisabledProfileRegion, FullProfileRegion,
                                       LineProfilerRegion, Region, ThreadedProfileRegion,
                                       TimeOnlyProfileRegion)
from spanscope.profile_manager import _regions

KINDS = (DisabledProfileRegion, TimeOnlyProfileRegion, ThreadedProfileRegion,
         AggregateProfileRegion, FullProfileRegion, LineProfilerRegion)


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.setattr(_regions, "_OPT_IN_TAGS", set())
    yield
    ProfileManager._reset()


def _kinds(region):
    return [k.__name__ for k in KINDS if isinstance(region, k)]


@pytest.mark.parametrize("settings, kind", [
    ({}, "TimeOnlyProfileRegion"),
    ({"deactivate_profiling": True}, "DisabledProfileRegion"),
    ({"track_threads": True}, "ThreadedProfileRegion"),
    ({"track_async": True}, "ThreadedProfileRegion"),
    ({"aggregation_mode": True}, "AggregateProfileRegion"),
])
def test_each_session_mode_gives_exactly_one_kind(settings, kind):
    ProfileManager.setup(output=None, **settings)
    region = ProfileManager.region("r")
    assert _kinds(region) == [kind]
    assert isinstance(region, BaseProfileRegion) and type(region) is Region


def test_no_session_and_opt_in_tags_are_disabled_and_follow_the_settings():
    region = ProfileManager.region("before")
    assert _kinds(region) == ["DisabledProfileRegion"]
    ProfileManager.setup(output=None)
    tagged = ProfileManager.region("lib.kernel", tags=("lib",))
    assert isinstance(tagged, TimeOnlyProfileRegion)
    sp.register_opt_in_tag("lib")
    assert _kinds(tagged) == ["DisabledProfileRegion"]
    ProfileManager.setup(output=None, enable_tags=["lib"], replace=True)
    assert isinstance(ProfileManager.region("lib.kernel", tags=("lib",)), TimeOnlyProfileRegion)


def test_the_kinds_are_not_constructors_and_not_regions_of_other_objects():
    with pytest.raises(TypeError, match="ProfileManager.region"):
        TimeOnlyProfileRegion("x")
    assert not isinstance(object(), DisabledProfileRegion)
    assert issubclass(ThreadedProfileRegion, BaseProfileRegion)


def test_a_deactivated_session_wraps_nothing_but_decorators_follow_the_next_one():
    ProfileManager.setup(output=None, deactivate_profiling=True)
    region = ProfileManager.region("off")

    def func():
        return 7

    assert region.wrap(func) is func
    assert region.capacity == 0 and region.start_times.nbytes == 0
    decorated = ProfileManager.profile("deco")(func)
    with region:
        pass
    assert decorated() == 7 and region.num_calls == 0
    with pytest.raises(TypeError, match="callable"):
        region.wrap(3)
    ProfileManager.setup(output=None, replace=True)
    decorated()
    assert ProfileManager.get_region("deco").num_calls == 1
    active = ProfileManager.region("on")
    assert active.wrap(func) is not func and active.wrap(func)() == 7


def test_metadata_is_not_computed_for_a_disabled_decorated_function():
    sp.register_opt_in_tag("lib")
    seen = []

    @ProfileManager.profile("lib.solve", tags=("lib",), metadata=lambda: seen.append(1) or {})
    def solve():
        return 1

    ProfileManager.setup(output=None)
    assert solve() == 1 and seen == []
    ProfileManager.setup(output=None, enable_tags=["lib"], replace=True)
    assert solve() == 1 and seen == [1]


def test_threaded_views_name_the_threads_and_open_calls():
    ProfileManager.setup(output=None, track_threads=True)
    region = ProfileManager.region("live")
    barrier = threading.Barrier(3)

    def work():
        barrier.wait()
        with region:
            pass

    threads = [threading.Thread(target=work, name=f"w{i}") for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert isinstance(region, ThreadedProfileRegion)
    assert region.num_calls == 3
    assert sorted(t.name for t in region.threads) == ["w0", "w1", "w2"]
    assert region.open_slots().size == 0
    with region:
        held = region.open_slots()
        assert held.dtype == np.int64 and held.size == 1
    assert region.open_slots().size == 0


def test_source_capture_parses_a_file_once(tmp_path):
    path = tmp_path / "withs.py"
    path.write_text("with a:\n    pass\nx = 1\nwith b:\n    y = 2\n    z = 3\n")
    assert _regions._with_source(str(path), 4) == "with b:\n    y = 2\n    z = 3\n"
    assert _regions._with_source(str(path), 3) == "x = 1\n"
    assert str(path) in _regions._with_source.cache
    assert _regions._with_source(str(tmp_path / "missing.py"), 1) is None


def test_source_helpers_of_region_profiler(tmp_path):
    path = tmp_path / "withs.py"
    path.write_text("with a:\n    pass\n")
    assert _regions.call_site_source(str(path), 1) == "with a:\n    pass\n"
    filename, first, text = _regions.function_source(_kinds)
    assert filename == __file__ and text.startswith("def _kinds(region):")
    assert first == _kinds.__code__.co_firstlineno
    assert _regions.function_source(len) is None
    assert _regions.function_source(eval("lambda: 1")) is None
