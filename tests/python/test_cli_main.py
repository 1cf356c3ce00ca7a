"""spanscope._cli.main(argv) called from Python (what scope-profiler's
``__main__.main(argv)`` maps to) runs the command and returns its exit
status with its output on sys.stdout / sys.stderr; only the process's entry
point (the console script, ``python -m spanscope``) replaces the process."""

import subprocess
import sys

import pytest

import spanscope
from spanscope import _cli


@pytest.fixture
def small_h5(tmp_path):
    path = str(tmp_path / "run.h5")
    spanscope.setup(file_path=path)
    for _ in range(3):
        with spanscope.region("solve"):
            pass
    spanscope.finalize(verbose=False)
    return path


def test_main_returns_and_its_output_is_captured(small_h5, capsys):
    assert _cli._binary() is not None, "the package's C tool is missing"
    rc = _cli.main(["report", small_h5])
    out = capsys.readouterr().out
    assert rc == 0
    assert "solve" in out


def test_main_returns_the_tools_failure_status(tmp_path, capsys):
    rc = _cli.main(["report", str(tmp_path / "missing.h5")])
    err = capsys.readouterr().err
    assert rc != 0
    assert "missing.h5" in err


def test_main_accepts_paths(small_h5, capsys):
    import pathlib
    assert _cli.main(["report", pathlib.Path(small_h5)]) == 0
    assert "solve" in capsys.readouterr().out


def test_main_twice_in_one_process(small_h5, capsys):
    """The process is still ours after the first call."""
    assert _cli.main(["report", small_h5]) == 0
    assert _cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "solve" in out and "report" in out


def test_python_m_spanscope_is_the_entry_point(small_h5):
    p = subprocess.run([sys.executable, "-m", "spanscope", "report", small_h5],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "solve" in p.stdout
    bad = subprocess.run([sys.executable, "-m", "spanscope", "no-such-command"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "spanscope:" in bad.stderr


def test_import_native_merges_per_rank_files(tmp_path, capsys):
    """spanscope import-native (scope-profiler's): per-rank .h5 files of the
    C API become one profile holding every rank; a missing input is a data
    error (exit 1) with one line."""
    import numpy as np
    from spanscope import _ext
    for rank in (0, 1):
        _ext.spans_write_h5(str(tmp_path / f"prof_rank{rank:05d}.h5"), ["solve"],
                            np.array([0, 0], np.uint32), np.array([rank, rank]),
                            np.array([0, 0]), np.array([10, 30]), np.array([20, 45]),
                            metadata={"source": "c"})
    out = tmp_path / "all.h5"
    assert _cli.main(["import-native", str(tmp_path), "-o", str(out), "-q"]) == 0
    res = spanscope.read_h5(out)
    assert sorted(res["solve"].ranks) == [0, 1]
    assert res.metadata.get("source") == "native"  # load_traces says so; kept in the .h5
    assert _cli.main(["import-native", str(tmp_path / "none"), "-o", str(out)]) == 1
    assert "import-native:" in capsys.readouterr().err
