"""/metadata through the library's one reader (sps_metadata_read, exposed
as _ext.read_metadata and used by spanscope.results.read): the same
attributes and values h5py sees, for spanscope's own files and for files
with attributes of every kind someone else may have written."""

import h5py
import numpy as np
import pytest

from spanscope import ProfileManager, _ext
from spanscope.results import read


def _h5py_meta(path):
    """/metadata as h5py reads it, strings decoded."""
    with h5py.File(path, "r") as f:
        out = {}
        for k, v in f["metadata"].attrs.items():
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
            elif isinstance(v, np.ndarray) and v.dtype.kind in "OS":
                v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
            out[k] = v
        return out


def _recording(tmp_path):
    path = tmp_path / "meta.h5"
    ProfileManager.setup(file_path=str(path), label="run-7")
    with ProfileManager.region("work"):
        pass
    ProfileManager.finalize(verbose=False)
    return path


def test_spanscope_file_matches_h5py(tmp_path):
    path = _recording(tmp_path)
    ours, theirs = _ext.read_metadata(str(path)), _h5py_meta(path)
    assert set(ours) == set(theirs)
    assert list(ours) == sorted(ours)  # name order, as h5py lists them
    for k, v in theirs.items():
        assert ours[k] == v, k
        assert type(ours[k]) is (str if isinstance(v, str) else int), k
    assert ours["label"] == "run-7"
    assert ours["start_time_ns"] <= ours["finalize_time_ns"]
    res = read(path)
    assert res.metadata == ours


def test_every_kind_of_attribute(tmp_path):
    path = _recording(tmp_path)
    with h5py.File(path, "a") as f:
        a = f["metadata"].attrs
        a["modules"] = np.array(["numpy", "caf\u00e9"], dtype=h5py.string_dtype())
        a["fixed"] = np.bytes_(b"fixed-text")
        a["bad_utf8"] = np.bytes_(b"x\xffy")
        a["ints"] = np.arange(4, dtype=np.int32)
        a["big"] = np.uint64(2**64 - 1)
        a["ratio"] = 0.25
        a["floats"] = np.array([1.5, -2.0])
        a["empty"] = np.array([], dtype=np.int64)
        a["flag"] = True                                  # an enum: left out
        a["pair"] = np.array((1, 2.0), dtype="i8,f8")     # compound: left out
    m = _ext.read_metadata(str(path))
    assert m["modules"] == ["numpy", "caf\u00e9"]
    assert m["fixed"] == "fixed-text"
    assert m["bad_utf8"] == "x\ufffdy"                     # invalid UTF-8 -> U+FFFD
    assert m["ints"] == [0, 1, 2, 3]
    assert m["big"] == 2**63 - 1                           # clamped to int64
    assert m["ratio"] == 0.25 and isinstance(m["ratio"], float)
    assert m["floats"] == [1.5, -2.0]
    assert m["empty"] == []
    assert "flag" not in m and "pair" not in m
    res = read(path)
    assert isinstance(res.metadata["modules"], np.ndarray)  # arrays as h5py gives them
    assert list(res.metadata["modules"]) == ["numpy", "caf\u00e9"]
    assert list(res.metadata["ints"]) == [0, 1, 2, 3]
    assert res.metadata["label"] == "run-7"


def test_no_metadata_group_and_bad_files(tmp_path):
    bare = tmp_path / "bare.h5"
    with h5py.File(bare, "w") as f:
        f.create_dataset("x", data=[1])
    assert _ext.read_metadata(str(bare)) == {}
    with pytest.raises(OSError):
        _ext.read_metadata(str(tmp_path / "missing.h5"))
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not hdf5 at all, just text" * 10)
    with pytest.raises(ValueError, match="not an HDF5 file"):
        _ext.read_metadata(str(junk))
