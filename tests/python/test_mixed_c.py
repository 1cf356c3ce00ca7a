"""C regions and Python regions of one process land in one session and one
file, on one clock, nested as they ran."""
import pytest
from conftest import build_c_lib

import spanscope
from spanscope import ProfileManager

C_SOURCE = r"""
#include <spanscope.h>
void c_kernel(int n) {
    for (int i = 0; i < n; i++) {
        SPS_REGION("c.kernel");
        volatile double x = 0;
        for (int k = 0; k < 1000; k++) x += k;
    }
}
"""


@pytest.fixture(scope="module")
def c_lib(tmp_path_factory):
    return build_c_lib(tmp_path_factory, C_SOURCE)


def test_c_regions_share_the_python_session(c_lib, tmp_path):
    p = tmp_path / "mixed.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("py.outer"):
        c_lib.c_kernel(10)
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    outer, kernel = res["py.outer"], res["c.kernel"]
    assert kernel.num_calls == 10
    # nested under the Python region, by the file's call tree and by time
    assert (kernel.parent_ids == outer.call_ids[0]).all()
    assert outer.start_ns[0] <= kernel.start_ns.min()
    assert kernel.end_ns.max() <= outer.end_ns[0]


def test_c_regions_record_only_while_python_profiles(c_lib):
    c_lib.c_kernel(3)  # no session: nothing recorded, nothing crashes
    ProfileManager.setup(output=None)
    c_lib.c_kernel(4)
    assert ProfileManager.get_region("c.kernel").num_calls == 4
