"""spanscope.results' native_trace API (scope-profiler's): the .spt reader
on well-formed and hostile bytes, find/load/convert over .spt and per-rank
.h5 files, and the shipped C and Fortran sources (a program compiled from
c_source_path() / fortran_source_path() alone records through the
package's libspanscope)."""

import os
import random
import shutil
import struct
import subprocess

import numpy as np
import pytest

from spanscope.results import (TraceFormatError, c_include_dir, c_source_path, convert_traces,
                               find_traces, fortran_source_path, load_traces, read_h5,
                               read_trace)
from spanscope.results import _native

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
FC = shutil.which("gfortran")


def trace_bytes(rank, regions, version=2, order="<"):
    """A .spt file's bytes: regions name -> (starts, ends[, file, line])."""
    out = [b"SCOPEPRF", struct.pack(order + "iiq", version, rank, len(regions))]
    for name, spec in regions.items():
        starts, ends = spec[0], spec[1]
        raw = name.encode()
        out.append(struct.pack(order + "i", len(raw)) + raw)
        if version >= 2:
            source = (spec[2] if len(spec) > 2 and spec[2] else "").encode()
            line = spec[3] if len(spec) > 3 and spec[3] is not None else -1
            out.append(struct.pack(order + "i", len(source)) + source)
            out.append(struct.pack(order + "i", line))
        out.append(struct.pack(order + "q", len(starts)))
        out.append(np.asarray(starts, dtype=order + "i8").tobytes())
        out.append(np.asarray(ends, dtype=order + "i8").tobytes())
    return b"".join(out)


# -- the reader ------------------------------------------------------------

@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("version", [1, 2])
def test_read_trace_either_version_and_byte_order(tmp_path, order, version):
    path = tmp_path / "t_rank00003.spt"
    path.write_bytes(trace_bytes(3, {"solve": ([10, 30], [20, 45], "s.c", 7),
                                     "io": ([50], [60])}, version, order))
    rank, regions = read_trace(path)
    assert rank == 3
    assert list(regions) == ["solve", "io"]
    starts, ends = regions["solve"]
    assert starts.dtype == np.int64 and starts.dtype.isnative
    assert starts.tolist() == [10, 30] and ends.tolist() == [20, 45]
    if version == 2:
        assert (regions["solve"].source_file, regions["solve"].source_lineno) == ("s.c", 7)
    else:
        assert regions["solve"].source_file is None
    assert regions["io"].source_file is None and regions["io"].source_lineno is None


def test_constants_are_scope_profilers():
    assert _native.MAGIC == b"SCOPEPRF"
    assert _native.FORMAT_VERSION == 2
    assert _native.KNOWN_FORMAT_VERSIONS == (1, 2)
    assert issubclass(TraceFormatError, ValueError)


@pytest.mark.parametrize("data, message", [
    (b"SCOPEPRF\x02\x00", "too short"),
    (b"NOTATRCE" + bytes(16), "not a scope-profiler native trace"),
    (b"SCOPEPRF" + struct.pack("<iiq", 99, 0, 0), "unsupported trace format version 99"),
    (b"SCOPEPRF" + struct.pack("<iiq", 2, 0, 1 << 60), "regions announced"),
    (b"SCOPEPRF" + struct.pack("<iiq", 2, 0, -1), "regions announced"),
    (trace_bytes(0, {"a": ([1], [2])}) + b"\x00", "trailing byte"),
    (trace_bytes(0, {"a": ([5], [2])}), "ends before it starts"),
])
def test_read_trace_refuses(tmp_path, data, message):
    path = tmp_path / "bad.spt"
    path.write_bytes(data)
    with pytest.raises(TraceFormatError, match=message):
        read_trace(path)


def test_read_trace_refuses_inconsistent_fields(tmp_path):
    path = tmp_path / "bad.spt"
    good = trace_bytes(0, {"ab": ([1], [2])})
    name_len = 24                      # offset of the first name length
    calls = name_len + 4 + 2 + 4 + 4   # name, source length, line
    cases = {
        "negative region name length":
            good[:name_len] + struct.pack("<i", -5) + good[name_len + 4:],
        "truncated": good[:calls] + struct.pack("<q", 1 << 59) + good[calls + 8:],
        "not UTF-8": good[:name_len + 4] + b"\xff\xfe" + good[name_len + 6:],
    }
    for message, data in cases.items():
        path.write_bytes(data)
        with pytest.raises(TraceFormatError, match=message):
            read_trace(path)
    # a region twice
    one = trace_bytes(0, {"ab": ([1], [2])})
    path.write_bytes(one[:16] + struct.pack("<q", 2) + one[24:] + one[24:])
    with pytest.raises(TraceFormatError, match="appears twice"):
        read_trace(path)


def test_every_truncation_and_random_corruption_raises_only_trace_format_error(tmp_path):
    """Hostile input: a cut or flipped file raises TraceFormatError (or reads,
    when the flip happens to leave it consistent), never anything else."""
    good = trace_bytes(1, {"solve": (np.arange(0, 50, 5), np.arange(2, 52, 5), "x.c", 3),
                           "io": ([100], [110])})
    path = tmp_path / "c.spt"
    for cut in range(len(good)):
        path.write_bytes(good[:cut])
        with pytest.raises(TraceFormatError):
            read_trace(path)
    rng = random.Random(7)
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(8, len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            rank, regions = read_trace(path)
        except TraceFormatError:
            continue
        for starts, ends in regions.values():
            assert len(starts) == len(ends) and (ends >= starts).all()


# -- finding and loading ----------------------------------------------------

def test_find_traces(tmp_path):
    with pytest.raises(FileNotFoundError, match="no .spt traces"):
        find_traces(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        find_traces(tmp_path / "nope.spt")
    (tmp_path / "a_rank00001.spt").write_bytes(trace_bytes(1, {}))
    (tmp_path / "run_rank00000.h5").write_bytes(b"")
    (tmp_path / "merged.h5").write_bytes(b"")   # not a per-rank file: left alone
    found = find_traces([tmp_path, tmp_path / "a_rank00001.spt"])
    assert [p.name for p in found] == ["a_rank00001.spt", "run_rank00000.h5"]


def test_load_traces_merges_ranks_and_sets_metadata(tmp_path):
    (tmp_path / "t_rank00000.spt").write_bytes(
        trace_bytes(0, {"step": ([100, 200], [150, 260], "c.c", 4)}))
    (tmp_path / "t_rank00001.spt").write_bytes(
        trace_bytes(1, {"step": ([90], [95]), "io": ([300], [310])}, version=1))
    results = load_traces(tmp_path, label="two")
    assert results.num_ranks == 2
    assert sorted(results.region_names) == ["io", "step"]
    assert results["step"].num_calls == 3
    assert results["step"].source_file == "c.c"
    assert results.metadata["source"] == "native"
    assert results.metadata["trace_format_version"] == 2
    assert results.metadata["start_time_ns"] == 90
    assert results.label == "two"


def test_load_traces_refuses_two_files_of_one_rank(tmp_path):
    for name in ("a_rank00000.spt", "b_rank00000.spt"):
        (tmp_path / name).write_bytes(trace_bytes(0, {"x": ([1], [2])}))
    with pytest.raises(TraceFormatError, match="both claim rank 0"):
        load_traces(tmp_path)


def test_convert_traces_writes_a_profile_read_h5_reads(tmp_path):
    (tmp_path / "t_rank00000.spt").write_bytes(
        trace_bytes(0, {"outer": ([0], [100]), "inner": ([10, 50], [20, 70], "k.c", 9)}))
    (tmp_path / "t_rank00001.spt").write_bytes(trace_bytes(1, {"outer": ([5], [80])}))
    (tmp_path / "out").mkdir()
    out = convert_traces(tmp_path, tmp_path / "out" / "merged.h5")
    back = read_h5(out)
    assert back.num_ranks == 2
    assert back.summary() == load_traces(tmp_path, label="merged").summary()
    assert back["inner"].source_lineno == 9
    assert back["inner"][0].exclusive_durations_ns.tolist() == [10, 20]
    assert back["outer"][0].exclusive_durations_ns.tolist() == [70]


# -- the shipped sources ------------------------------------------------------

def test_shipped_files_are_in_the_package():
    inc = c_include_dir()
    for header in ("scope_profiler.h", "scope_profiler.hpp", "scope_profiler_mpi.hpp",
                   "spanscope.h"):
        assert (inc / header).is_file(), header
    assert c_source_path().is_file()
    assert fortran_source_path().is_file()
    assert (fortran_source_path().parent / "scope_profiler_module.inc").is_file()
    assert c_source_path().parent == _native.C_DIR


PROGRAM = r"""
#include "scope_profiler.h"
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank = argc > 1 ? argv[1][0] - '0' : 0, i, id;
    printf("init %d\n", sp_init("prog", rank));
    id = SP_REGION_AT("work");
    for (i = 0; i < 3 + rank; ++i) { sp_begin(id); sp_end(id); }
    printf("calls %lld format %d path %s\n", (long long)sp_num_calls(id),
           (int)sp_current_output_format(), sp_output_path() ? sp_output_path() : "-");
    return sp_finalize();
}
"""


def build_c(tmp_path, *flags, source=None):
    prog = tmp_path / "prog.c"
    prog.write_text(PROGRAM)
    exe = tmp_path / "prog"
    subprocess.run([CC, "-std=c99", "-O1", f"-I{c_include_dir()}", str(prog),
                    str(source or c_source_path()), "-lm", "-o", str(exe), *flags],
                   check=True, capture_output=True, text=True)
    return exe


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_the_forwarding_unit_compiles_clean():
    for std in ("-std=c99", "-std=c11"):
        r = subprocess.run([CC, std, "-Wall", "-Wextra", "-pedantic", "-O2",
                            f"-I{c_include_dir()}", "-c", str(c_source_path()), "-o", os.devnull],
                           capture_output=True, text=True)
        assert r.returncode == 0 and "warning" not in r.stderr.lower(), r.stderr


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_a_c_program_built_from_the_unit_records_through_spanscope(tmp_path):
    exe = build_c(tmp_path)
    for rank in "01":
        out = subprocess.run([str(exe), rank], cwd=tmp_path, check=True, capture_output=True,
                             text=True).stdout
        assert "init 0" in out and f"path prog_rank0000{rank}.spt" in out and "format 1" in out
    rank, regions = read_trace(tmp_path / "prog_rank00001.spt")
    assert rank == 1 and len(regions["work"][0]) == 4
    assert regions["work"].source_file.endswith("prog.c")
    results = load_traces(tmp_path)
    assert results["work"].num_calls == 3 + 4


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_sp_use_hdf5_writes_the_h5_that_mixes_with_traces(tmp_path):
    exe = build_c(tmp_path, "-DSP_USE_HDF5")
    subprocess.run([str(exe), "0"], cwd=tmp_path, check=True, capture_output=True)
    trace = build_c(tmp_path)
    subprocess.run([str(trace), "1"], cwd=tmp_path, check=True, capture_output=True)
    assert sorted(p.name for p in find_traces(tmp_path)) == ["prog_rank00000.h5",
                                                            "prog_rank00001.spt"]
    results = load_traces(tmp_path)
    assert results.num_ranks == 2
    assert results["work"].num_calls_per_rank() == {0: 3, 1: 4}


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
def test_without_a_library_every_call_is_a_no_op(tmp_path):
    """A copy of the unit away from the package, no SPANSCOPE_LIBRARY, and
    no libspanscope on the loader's path: one message, nothing recorded."""
    copy = tmp_path / "elsewhere" / "scope_profiler.c"
    copy.parent.mkdir()
    shutil.copy(c_source_path(), copy)
    exe = build_c(tmp_path, source=copy)
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPANSCOPE_LIBRARY", "LD_LIBRARY_PATH")}
    r = subprocess.run([str(exe)], cwd=tmp_path, capture_output=True, text=True, env=env)
    if "cannot load libspanscope" not in r.stderr:
        pytest.skip("a libspanscope is installed on the loader's path")
    assert r.returncode == 0 and "init 1" in r.stdout and "calls 0" in r.stdout
    assert not list(tmp_path.glob("*.spt"))
    # and SPANSCOPE_LIBRARY names the library
    env["SPANSCOPE_LIBRARY"] = str(c_include_dir().parent / "libspanscope.so.1")
    r = subprocess.run([str(exe)], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "calls 3" in r.stdout, r.stderr


FORTRAN = """
program prog
   use scope_profiler
   implicit none
   integer :: id, i
   call sp_init("fprog", rank=2)
   id = sp_region("loop", file="prog.f90", line=6)
   do i = 1, 5
      call sp_begin(id)
      call sp_end(id)
   end do
   call sp_finalize()
end program prog
"""


@pytest.mark.skipif(FC is None, reason="no Fortran compiler on PATH")
def test_a_fortran_program_built_from_the_module_alone(tmp_path):
    r = subprocess.run([FC, "-c", "-Wall", "-Wextra", "-std=f2008", "-O2", "-J", str(tmp_path),
                        "-o", str(tmp_path / "m.o"), str(fortran_source_path())],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr
    (tmp_path / "prog.f90").write_text(FORTRAN)
    subprocess.run([FC, "-O1", "-std=f2008", "-fcheck=all", "-o", str(tmp_path / "prog"),
                    str(fortran_source_path()), str(tmp_path / "prog.f90")],
                   cwd=tmp_path, check=True, capture_output=True)
    subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, check=True)
    rank, regions = read_trace(tmp_path / "fprog_rank00002.spt")
    assert rank == 2
    assert len(regions["loop"][0]) == 5
    assert (regions["loop"].source_file, regions["loop"].source_lineno) == ("prog.f90", 6)
