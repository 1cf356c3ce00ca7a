"""sps_spans_write_h5's metadata (the span set's meta_keys/meta_values,
_ext.spans_write_h5(metadata=...)): more /metadata strings in a file
written from spans held in Python, the writer's own keys kept its own."""

import numpy as np
import pytest

from spanscope import _ext


def _write(path, **kw):
    _ext.spans_write_h5(str(path), ["a"], np.array([0], np.uint32), np.array([0]),
                        np.array([0]), np.array([10]), np.array([20]), **kw)


def test_metadata_strings_reach_the_file(tmp_path):
    p = tmp_path / "m.h5"
    _write(p, label="L", metadata={"source": "c", "source_language": "C99",
                                   "label": "not this", "rank": "7"})
    meta = _ext.read_metadata(str(p))
    assert meta["source"] == "c" and meta["source_language"] == "C99"
    assert meta["label"] == "L" and meta["rank"] == 0  # the writer's own keys win


@pytest.mark.parametrize("bad", [{"a": 1}, {1: "a"}, ["a", "b"]])
def test_metadata_must_be_str_to_str(tmp_path, bad):
    with pytest.raises(TypeError, match="metadata must be a dict of str to str"):
        _write(tmp_path / "m.h5", metadata=bad)
    assert not (tmp_path / "m.h5").exists()
