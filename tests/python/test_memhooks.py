"""The memory sources of the per-span values (python/spanscope/_memhooks.c,
docs/memory.md): Python's allocators and numpy's array data reach the
calling thread's counters (sps_mem_thread_counts, read with
_ext.mem_thread_counts), with known sizes, thread by thread, and the hooks
install and uninstall cleanly."""
import gc
import os
import subprocess
import sys
import threading
import pathlib
import tracemalloc

import pytest

from spanscope import _ext

np = pytest.importorskip("numpy")  # install-deps installs it
np_core = np._core if hasattr(np, "_core") else np.core  # numpy 2 / 1.x

KEYS = ("alloc_bytes", "free_bytes", "allocs", "frees", "live_bytes")


def _diff(a, b):
    return {k: b[k] - a[k] for k in KEYS}


def measure(fn, *args):
    """(fn(*args), the counters' change over the call); the result stays
    alive, so its blocks count as allocated and not freed. The collector is
    off meanwhile: a collection would free unrelated objects."""
    was = gc.isenabled()
    gc.disable()
    try:
        c0 = _ext.mem_thread_counts()
        r = fn(*args)
        c1 = _ext.mem_thread_counts()
    finally:
        if was:
            gc.enable()
    return r, _diff(c0, c1)


def overhead():
    """What a measure() of nothing costs (the counters' dict, the call)."""
    _, d = measure(int, 0)  # int(0) is the cached small int: no allocation
    return d


@pytest.fixture(autouse=True)
def _no_hooks_left():
    """A failed test leaves neither tracemalloc nor our hooks behind."""
    yield
    if tracemalloc.is_tracing():
        tracemalloc.stop()
    if _ext.mem_hooks_active():
        _ext.mem_hooks_uninstall()


@pytest.fixture
def hooks():
    """Python's and numpy's hooks installed for the test, and gone after."""
    assert not _ext.mem_hooks_active()
    info = _ext.mem_hooks_install()
    yield info
    if _ext.mem_hooks_active():
        _ext.mem_hooks_uninstall()


def _exact(fn, *args, tries=5):
    """The bytes fn(*args) allocated, net of the measuring itself: the
    smallest over a few tries (a try can catch an unrelated allocation of
    the interpreter's, never miss one of fn's)."""
    best = None
    for _ in range(tries):
        base = overhead()
        r, d = measure(fn, *args)
        net = d["alloc_bytes"] - base["alloc_bytes"]
        if best is None or net < best[0]:
            best = (net, r, d)
        del r
    return best


def test_counters_are_zero_sum_without_hooks():
    """Without hooks nothing feeds the counters: two readings are equal."""
    assert not _ext.mem_hooks_active()
    a = _ext.mem_thread_counts()
    b = bytes(100_000)  # noqa: F841 - allocated between the readings
    c = _ext.mem_thread_counts()
    assert set(a) == set(KEYS)
    assert _diff(a, c) == dict.fromkeys(KEYS, 0)


@pytest.mark.parametrize("n", [1_000, 10_000, 100_000, 3_000_000])
def test_bytes_object_exact(hooks, n):
    """bytes(n) is one PyObject_Malloc of sys.getsizeof(result) bytes (its
    header and n + 1 bytes of data): counted exactly, and its free too."""
    net, r, d = _exact(bytes, n)
    assert net == sys.getsizeof(r)
    assert d["allocs"] - overhead()["allocs"] == 1
    size = sys.getsizeof(r)
    c0 = _ext.mem_thread_counts()
    del r
    c1 = _ext.mem_thread_counts()
    freed = _diff(c0, c1)
    assert freed["frees"] >= 1
    assert size <= freed["free_bytes"] <= size + 512


def test_list_at_least_its_items(hooks):
    """[None] * n allocates its item array (8 bytes an item) and the list
    (from the free list or the allocator): at least 8 n bytes."""
    n = 50_000
    base = overhead()["alloc_bytes"]
    lst, d = measure(lambda: [None] * n)
    assert 8 * n <= d["alloc_bytes"] - base <= 8 * n + 200
    # a list of n distinct bytes objects: each one counted
    objs, d = measure(lambda: [bytes(100 + (i % 7)) for i in range(1000)])
    want = sum(sys.getsizeof(o) for o in objs)
    assert d["alloc_bytes"] - base >= want
    assert d["allocs"] >= 1000
    del lst, objs


def test_alloc_free_balance(hooks):
    """Allocations and frees under the hooks balance: after everything made
    in between is gone, the live bytes are back within the readings' own
    few objects; a bytearray grown by appends is reallocated (a free of
    the old size and an allocation of the new each time)."""
    gc.collect()
    c0 = _ext.mem_thread_counts()

    def work():
        ba = bytearray()
        for _ in range(2000):
            ba += b"x" * 97
        stuff = [bytes(i) for i in range(300)] + [list(range(i)) for i in range(100)]
        d = {i: str(i) * 3 for i in range(2000)}
        return len(ba) + len(stuff) + len(d)

    assert work() == 2000 * 97 + 400 + 2000
    gc.collect()
    c1 = _ext.mem_thread_counts()
    d = _diff(c0, c1)
    assert d["alloc_bytes"] > 2000 * 97  # the work was seen
    assert d["frees"] > 2000
    assert abs(d["live_bytes"]) < 4096, d


def test_block_from_before_install_is_not_a_free():
    """A block allocated before the hooks and freed under them is not in
    the table: its free is not counted (the counters would go negative)."""
    big = bytes(2_000_000)
    _ext.mem_hooks_install(numpy=False)
    try:
        c0 = _ext.mem_thread_counts()
        del big
        c1 = _ext.mem_thread_counts()
    finally:
        _ext.mem_hooks_uninstall()
    assert _diff(c0, c1)["free_bytes"] < 2_000_000


def test_block_alive_at_uninstall_is_dropped():
    """A block still live at uninstall is dropped from the table (and said
    so); freed later, nothing counts it, and a new installation starts
    empty."""
    _ext.mem_hooks_install(numpy=False)
    keep = bytes(3_000_000)
    out = _ext.mem_hooks_uninstall()
    assert out["python_bytes_dropped"] >= 3_000_000
    assert out["python_blocks_dropped"] >= 1
    assert out["untracked"] == 0
    _ext.mem_hooks_install(numpy=False)
    try:
        c0 = _ext.mem_thread_counts()
        del keep
        c1 = _ext.mem_thread_counts()
    finally:
        _ext.mem_hooks_uninstall()
    assert _diff(c0, c1)["free_bytes"] < 3_000_000


def test_install_uninstall_twice():
    """Install, uninstall, install again, uninstall: each time counted
    while installed and not after; a second install or uninstall in a row
    is an error."""
    for _ in range(2):
        assert _ext.mem_hooks_active() is False
        info = _ext.mem_hooks_install()
        assert info["python"] is True and info["numpy"] is True
        assert info["numpy_reason"] == "installed"
        assert info["numpy_scope"] == "all threads"
        assert info["malloc_counted"] is False  # no libspanscope_malloc here
        assert _ext.mem_hooks_active() is True
        with pytest.raises(RuntimeError, match="already installed"):
            _ext.mem_hooks_install()
        net, r, _ = _exact(bytes, 500_000)
        assert net == sys.getsizeof(r)
        del r
        out = _ext.mem_hooks_uninstall()
        assert set(out) == {"python_blocks_dropped", "python_bytes_dropped",
                            "numpy_restored", "numpy_blocks_dropped",
                            "numpy_bytes_dropped", "untracked"}
        assert out["numpy_restored"] is True
        assert _ext.mem_hooks_active() is False
        with pytest.raises(RuntimeError, match="not installed"):
            _ext.mem_hooks_uninstall()
        _, d = measure(bytes, 500_000)
        assert d["alloc_bytes"] == 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="nothing to install"):
        _ext.mem_hooks_install(python=False, numpy=False)
    with pytest.raises(TypeError):
        _ext.mem_hooks_install(pyhton=True)
    assert not _ext.mem_hooks_active()


def test_tracemalloc_over_ours():
    """tracemalloc started after our hooks chains them: both count; ours
    cannot be taken out from under it (a clear error, nothing changed),
    and can once it stops."""
    _ext.mem_hooks_install(numpy=False)
    tracemalloc.start()
    try:
        net, r, _ = _exact(bytes, 400_000)
        assert net >= 400_000
        assert tracemalloc.get_traced_memory()[0] >= 400_000
        del r
        with pytest.raises(RuntimeError, match="tracemalloc"):
            _ext.mem_hooks_uninstall()
        assert _ext.mem_hooks_active()
    finally:
        tracemalloc.stop()
    _ext.mem_hooks_uninstall()
    assert not _ext.mem_hooks_active()


def test_refused_while_tracemalloc_traces():
    """tracemalloc started first would remove ours when it stops: refused,
    with the reason, and nothing installed."""
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="tracemalloc is tracing"):
            _ext.mem_hooks_install()
        assert not _ext.mem_hooks_active()
        # numpy's handler alone does not touch Python's allocators
        assert _ext.mem_hooks_install(python=False)["numpy"] is True
        _ext.mem_hooks_uninstall()
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------------
# numpy (NEP 49 data-memory handler)


SCOPES = {True: "all threads", "context": "this context"}


@pytest.mark.parametrize("mode", [True, "context"])
@pytest.mark.parametrize("make,nbytes,exact", [
    (lambda: np.empty(1_000_000, dtype=np.uint8), 1_000_000, True),
    (lambda: np.zeros((100, 100)), 80_000, True),
    (lambda: np.arange(250_000, dtype=np.float32), 1_000_000, True),
    # ones fills through a temporary 0-d array of the value: freed again
    (lambda: np.ones(12_345, dtype=np.int32), 49_380, False),
    (lambda: np.ones((300, 300)) @ np.ones((300, 300)), 720_000, False),
])
def test_numpy_arrays_exact(make, nbytes, exact, mode):
    """With numpy's handler alone (python=False), in either mode, array data
    is what is counted: exactly the array's nbytes where numpy allocates
    nothing else, at least that otherwise, and what stays live is exactly
    the array's; its free is its nbytes."""
    info = _ext.mem_hooks_install(python=False, numpy=mode)
    try:
        assert info == {"python": False, "numpy": True, "numpy_reason": "installed",
                        "numpy_scope": SCOPES[mode], "malloc_counted": False}
        a, d = measure(make)
        assert a.nbytes == nbytes
        assert d["live_bytes"] == nbytes
        if exact:
            assert d["alloc_bytes"] == nbytes
            assert d["allocs"] == 1
        else:
            assert d["alloc_bytes"] >= nbytes
        c0 = _ext.mem_thread_counts()
        del a
        c1 = _ext.mem_thread_counts()
        assert _diff(c0, c1)["free_bytes"] == nbytes
        assert _diff(c0, c1)["frees"] == 1
    finally:
        _ext.mem_hooks_uninstall()


def test_numpy_with_python_hooks(hooks):
    """Both on: at least the array's data, and its object too; numpy's
    default handler is patched in place, so it keeps its name."""
    assert hooks["numpy_scope"] == "all threads"
    a, d = measure(np.empty, 2_000_000, np.uint8)
    assert d["alloc_bytes"] >= 2_000_000 + 50
    assert d["allocs"] >= 2
    assert np_core.multiarray.get_handler_name(a) == "default_allocator"


def test_numpy_context_mode_names_its_handler():
    """numpy='context': our own handler, named after the one it chains, is
    this context's; another thread's arrays keep numpy's default."""
    _ext.mem_hooks_install(python=False, numpy="context")
    try:
        a = np.empty(10)
        assert np_core.multiarray.get_handler_name(a) == "spanscope+default_allocator"
        seen = {}
        t = threading.Thread(target=lambda: seen.setdefault(
            "name", np_core.multiarray.get_handler_name()))
        t.start()
        t.join()
        assert seen["name"] == "default_allocator"
    finally:
        _ext.mem_hooks_uninstall()
    assert np_core.multiarray.get_handler_name() == "default_allocator"


def test_bad_numpy_argument():
    with pytest.raises(ValueError, match="'context'"):
        _ext.mem_hooks_install(numpy="everywhere")
    assert not _ext.mem_hooks_active()


@pytest.mark.parametrize("mode", [True, "context"])
def test_numpy_resize_realloc(mode):
    """ndarray.resize reallocates the data: the old size freed, the new one
    allocated; the array's free then balances it."""
    _ext.mem_hooks_install(python=False, numpy=mode)
    try:
        c0 = _ext.mem_thread_counts()
        a = np.zeros(1000, dtype=np.uint8)
        a.resize(300_000, refcheck=False)
        c1 = _ext.mem_thread_counts()
        d = _diff(c0, c1)
        assert d["live_bytes"] == 300_000
        assert d["alloc_bytes"] == 1000 + 300_000
        assert d["free_bytes"] == 1000
        del a
        c2 = _ext.mem_thread_counts()
        assert _diff(c0, c2)["live_bytes"] == 0
    finally:
        _ext.mem_hooks_uninstall()


def test_numpy_array_outlives_uninstall_all_threads():
    """Default mode: an array allocated under the patch and freed after
    uninstall is freed by numpy's own functions again: dropped (said so),
    not counted; the default handler's functions are back."""
    _ext.mem_hooks_install(python=False)
    a = np.empty(123_456, dtype=np.uint8)
    out = _ext.mem_hooks_uninstall()
    assert out["numpy_restored"] is True
    assert out["numpy_bytes_dropped"] >= 123_456
    assert out["numpy_blocks_dropped"] >= 1
    c0 = _ext.mem_thread_counts()
    del a
    c1 = _ext.mem_thread_counts()
    assert _diff(c0, c1)["free_bytes"] == 0
    b, d = measure(np.empty, 123_456, np.uint8)
    assert d["alloc_bytes"] == 0
    del b


def test_numpy_array_outlives_uninstall_context():
    """numpy='context': an array made through our handler and freed after
    uninstall is freed through our handler still: its free is counted
    (balanced), and the handler that was there before is back."""
    before = np_core.multiarray.get_handler_name()
    _ext.mem_hooks_install(python=False, numpy="context")
    a = np.empty(123_456, dtype=np.uint8)
    out = _ext.mem_hooks_uninstall()
    assert out["numpy_restored"] is True
    assert out["numpy_bytes_dropped"] == 0
    assert np_core.multiarray.get_handler_name() == before
    c0 = _ext.mem_thread_counts()
    del a
    c1 = _ext.mem_thread_counts()
    assert _diff(c0, c1)["free_bytes"] == 123_456
    b, d = measure(np.empty, 123_456, np.uint8)
    assert d["alloc_bytes"] == 0
    del b


def test_numpy_array_from_before_install_not_a_free():
    """An array allocated before the patch and freed under it: not in the
    table, its free not counted."""
    a = np.empty(654_321, dtype=np.uint8)
    _ext.mem_hooks_install(python=False)
    try:
        c0 = _ext.mem_thread_counts()
        del a
        c1 = _ext.mem_thread_counts()
        assert _diff(c0, c1)["free_bytes"] == 0
    finally:
        _ext.mem_hooks_uninstall()


def test_numpy_in_other_threads():
    """Default mode covers every thread: arrays made on four threads at
    once land, exactly, in each one's own counters, and never in the
    installing thread's."""
    _ext.mem_hooks_install(python=False)
    try:
        results = {}
        barrier = threading.Barrier(4)

        def work(k):
            barrier.wait()
            c0 = _ext.mem_thread_counts()
            arrs = [np.empty(100_000 + k, dtype=np.uint8) for _ in range(50)]
            c1 = _ext.mem_thread_counts()
            del arrs
            c2 = _ext.mem_thread_counts()
            results[k] = (_diff(c0, c1), _diff(c1, c2))

        m0 = _ext.mem_thread_counts()
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        m1 = _ext.mem_thread_counts()
        for k in range(4):
            made, freed = results[k]
            assert made["alloc_bytes"] == 50 * (100_000 + k)
            assert made["allocs"] == 50
            assert freed["free_bytes"] == 50 * (100_000 + k)
        assert _diff(m0, m1)["alloc_bytes"] == 0
    finally:
        _ext.mem_hooks_uninstall()


def test_without_numpy_says_so():
    """numpy=True without numpy installs the Python hooks and says why numpy
    is not hooked (numpy made unimportable after the package's import; the
    package no longer imports it itself, so it is blocked whether it was
    imported or not)."""
    code = (
        "import sys\n"
        "from spanscope import _ext\n"
        "for m in [m for m in sys.modules if m == 'numpy' or m.startswith('numpy.')]:\n"
        "    sys.modules[m] = None\n"
        "sys.modules['numpy'] = None\n"
        "info = _ext.mem_hooks_install()\n"
        "print(info['python'], info['numpy'], info['numpy_reason'])\n"
        "_ext.mem_hooks_uninstall()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True False numpy is not installed"


# ---------------------------------------------------------------------------
# threads


def test_thread_b_never_in_thread_a(hooks):
    """Thread B's allocations land in B's counters, never in A's (torch's
    time-window bug): B holds 16 MB (Python's and numpy's) while A reads
    its counters."""
    ready, done = threading.Event(), threading.Event()
    seen = {}

    def b():
        c0 = _ext.mem_thread_counts()
        blob = bytes(8_000_000)
        arr = np.ones(1_000_000)  # 8 MB more, through numpy's (patched) default handler
        seen["b"] = _diff(c0, _ext.mem_thread_counts())
        ready.set()
        done.wait(30)
        del blob, arr

    a0 = _ext.mem_thread_counts()
    t = threading.Thread(target=b)
    t.start()
    assert ready.wait(30)
    a1 = _ext.mem_thread_counts()
    done.set()
    t.join()
    assert seen["b"]["alloc_bytes"] >= 16_000_000  # the bytes and the array's data
    assert _diff(a0, a1)["alloc_bytes"] < 1_000_000


def test_threads_allocate_at_once(hooks):
    """Four threads allocating and freeing at the same time (the table's
    shards shared, the GIL handed around): each one's allocations and frees
    balance on its own counters, and the table loses nothing."""
    results = []
    barrier = threading.Barrier(4)

    def work(seed):
        barrier.wait()
        gc.collect()
        c0 = _ext.mem_thread_counts()
        keep = []
        for i in range(20_000):
            keep.append(bytes(64 + (i * seed) % 3000))
            if len(keep) > 100:
                keep.pop(0)
        keep.clear()
        c1 = _ext.mem_thread_counts()
        results.append(_diff(c0, c1))

    threads = [threading.Thread(target=work, args=(s,)) for s in (3, 5, 7, 11)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for d in results:
        assert d["allocs"] >= 20_000
        assert d["alloc_bytes"] >= 20_000 * 64
        assert abs(d["live_bytes"]) < 64 * 1024, d


def test_raw_domain_without_the_gil(hooks):
    """PyMem_RawMalloc / PyMem_RawFree called through ctypes.CDLL (which
    lets the GIL go during the call) from four threads at once: the RAW
    hook runs truly in parallel, on a table that grows meanwhile (each
    thread holds 20000 blocks before freeing them), and every block's free
    finds its entry (each thread's live bytes come back to where they were,
    but for the first reading's own dict)."""
    import ctypes
    lib = ctypes.CDLL(None)  # the interpreter's own symbols; calls drop the GIL
    lib.PyMem_RawMalloc.restype = ctypes.c_void_p
    lib.PyMem_RawMalloc.argtypes = [ctypes.c_size_t]
    lib.PyMem_RawFree.argtypes = [ctypes.c_void_p]
    size, blocks = 48, 20_000
    results = []
    barrier = threading.Barrier(4)

    def work(k):
        ptrs = [0] * blocks  # made before the readings: no growth inside
        malloc, free = lib.PyMem_RawMalloc, lib.PyMem_RawFree
        barrier.wait()
        c0 = _ext.mem_thread_counts()
        for i in range(blocks):
            ptrs[i] = malloc(size + k)
        for i in range(blocks):
            free(ptrs[i])
            ptrs[i] = 0  # the pointer's int freed too (0 is a cached int)
        c1 = _ext.mem_thread_counts()
        results.append((k, _diff(c0, c1)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for k, d in results:
        raw = blocks * (size + k)
        # the raw blocks, plus the ints ctypes makes of the pointers (and
        # frees again): everything balanced
        assert d["alloc_bytes"] >= raw and d["free_bytes"] >= raw, d
        assert 0 <= d["live_bytes"] < 1024, d  # c0's dict and its ints live on


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_fork_under_hooks(hooks):
    """A child forked while the hooks are on (and another thread allocates)
    allocates and exits normally: no shard lock is left held."""
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            [bytes(100) for _ in range(100)]

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(5):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                try:
                    x = [bytes(1000) for _ in range(1000)]
                    d = _ext.mem_thread_counts()
                    os._exit(0 if len(x) == 1000 and d["allocs"] > 0 else 3)
                finally:
                    os._exit(4)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        t.join()


# ---------------------------------------------------------------------------
# with libspanscope_malloc preloaded


PRELOADED = r"""
import gc, itertools, sys
from spanscope import _ext
import numpy as np
info = _ext.mem_hooks_install()
assert info["malloc_counted"] is True, info
gc.disable()
def d(fn, *a):
    c0 = _ext.mem_thread_counts(); r = fn(*a); c1 = _ext.mem_thread_counts()
    return r, {k: c1[k] - c0[k] for k in c0}
# once before measuring: CPython 3.10's first bytes(1_000_000) also
# allocates and frees a 58-byte block of its own (every later one does not)
d(bytes, 1_000_000)
_, base = d(int, 0)
# a large bytes object: pymalloc hands it to malloc, so the preload counts
# it (its usable size) and the hook does not: one allocation, not two
b, big = d(bytes, 1_000_000)
assert big["allocs"] - base["allocs"] == 1, big
assert sys.getsizeof(b) <= big["alloc_bytes"] - base["alloc_bytes"] <= sys.getsizeof(b) + 8192
# small ones: pymalloc's, which only the hook sees: counted once each (and
# the list's growth: a few reallocs; itertools.repeat makes no ints)
objs, small = d(lambda: [bytes(50) for _ in itertools.repeat(None, 1000)])
assert 1000 <= small["allocs"] - base["allocs"] <= 1040, small
# an array: its object (pymalloc: the hook), its shape (PyMem_RawMalloc ->
# malloc: the preload) and its data (numpy's handler -> malloc: the
# preload) -- three blocks, once each (five if the malloc'ed two were
# counted twice)
a, arr = d(np.empty, 4_000_000, np.uint8)
assert 1 <= arr["allocs"] - base["allocs"] <= 3, arr
assert 4_000_000 <= arr["alloc_bytes"] - base["alloc_bytes"] <= 4_000_000 + 8192 + 400, arr
# and all of it freed: live back where it was
c0 = _ext.mem_thread_counts()
size = big["alloc_bytes"] - base["alloc_bytes"]
del b, objs, a
c1 = _ext.mem_thread_counts()
assert c1["free_bytes"] - c0["free_bytes"] >= size + 4_000_000 + 1000 * 83, (c0, c1)
_ext.mem_hooks_uninstall()
print("ok")
"""


def _preload_lib():
    build = pathlib.Path(os.environ.get("SPS_BUILD", pathlib.Path(__file__).parents[2] / "build"))
    lib = build / "libspanscope_malloc.so"
    return lib if lib.exists() else None


@pytest.mark.skipif(_preload_lib() is None,
                    reason="no libspanscope_malloc.so in SPS_BUILD (a sanitizer build, or "
                           "SPS_MALLOC_PRELOAD=OFF)")
def test_with_malloc_preloaded():
    """Python's hooks and libspanscope_malloc at once: each block counted
    once, by whichever sees it (malloc's blocks by the preload, pymalloc's
    by the hooks)."""
    env = dict(os.environ, LD_PRELOAD=str(_preload_lib()))
    out = subprocess.run([sys.executable, "-c", PRELOADED], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.skipif(_preload_lib() is None,
                    reason="no libspanscope_malloc.so in SPS_BUILD (a sanitizer build, or "
                           "SPS_MALLOC_PRELOAD=OFF)")
def test_preload_keeps_its_hdf5_to_itself():
    """Preloaded, the library must not put libspanscope's HDF5 into the
    program's global scope: h5py's wheels bundle their own HDF5, whose calls
    it would capture ("Not a datatype"). h5py imports and writes a file."""
    pytest.importorskip("h5py")
    code = ("import h5py, numpy, os, sys, tempfile\n"
            "p = os.path.join(tempfile.mkdtemp(), 'x.h5')\n"
            "with h5py.File(p, 'w') as f: f['a'] = numpy.arange(10)\n"
            "with h5py.File(p) as f: print(int(f['a'][-1]))\n")
    env = dict(os.environ, LD_PRELOAD=str(_preload_lib()))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "9"
