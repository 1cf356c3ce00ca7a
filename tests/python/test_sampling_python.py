"""The Python frames of the stack sampler (python/spanscope/_sampler.c;
docs/sampling.md, "Python frames without the GIL").

The walker runs inside the SIGPROF handler of the sampled thread, GIL or
not.  These tests drive it three ways:

* _ext._sampler_walk(): the same walk, called directly in this thread;
* _ext._sampler_probe_thread(ident): the walk in another thread's own signal
  handler (a real-time signal sent once), whether that thread holds the GIL,
  sleeps with it released, or burns CPU in C with it released;
* _ext.sampling_start(): the C sampler itself (src/ext/sampler.c) at up to
  5000 Hz, in a subprocess so that a crash is a failed test, not a dead
  pytest.

and name the words with _ext._sampler_describe(), the describe finalize
runs, after the code objects may be gone.
"""
import asyncio
import gc
import hashlib
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import time

import pytest

from spanscope import _ext

if sysconfig.get_config_var("Py_GIL_DISABLED") or sys.version_info >= (3, 14):
    # pragma: no cover - the package's CI runs 3.10 to 3.13 with a GIL
    pytest.skip("the Python frame walker knows CPython 3.10-3.13 with a GIL; here samples "
                "keep native frames only (docs/sampling.md)", allow_module_level=True)

QUALNAMES = sys.version_info >= (3, 11)  # 3.10's code objects have no co_qualname


def fname(func):
    """The function name the walker reports for func's frames."""
    code = func.__code__
    return code.co_qualname if QUALNAMES else code.co_name


def described(words):
    return [_ext._sampler_describe(w) for w in words]


def here():
    """The line this is called from."""
    return sys._getframe(1).f_lineno


def run_script(body, timeout=120):
    """Runs body in a fresh interpreter (the package importable as here);
    returns the CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------
# The walk in this thread
# ---------------------------------------------------------------------------

def test_walk_gives_functions_files_and_lines_innermost_first():
    def inner():
        line = here(); words = _ext._sampler_walk()  # noqa: E702 (one line)
        return line, words

    def outer():
        line = here(); result = inner()  # noqa: E702
        return line, result

    line = here(); oline, (iline, words) = outer()  # noqa: E702
    got = described(words)
    assert got[0] == (fname(inner), __file__, iline)
    assert got[1] == (fname(outer), __file__, oline)
    me = fname(test_walk_gives_functions_files_and_lines_innermost_first)
    assert got[2] == (me, __file__, line)
    # the rest is pytest's own frames, down to the bottom of the stack
    assert len(got) > 3 and all(g is not None and g[2] > 0 for g in got)
    assert [g[0] for g in got[3:]].count(me) == 0


def test_walk_writes_at_most_max_words():
    full = _ext._sampler_walk(max=4096)
    assert len(_ext._sampler_walk(max=1)) == 1
    assert len(_ext._sampler_walk(max=3)) == 3
    assert len(full) == len(_ext._sampler_walk(max=len(full)))
    with pytest.raises(ValueError, match="max must be 1 to 4096"):
        _ext._sampler_walk(max=0)
    with pytest.raises(ValueError):
        _ext._sampler_walk(max=4097)


def test_describe_of_words_not_the_walkers_is_none():
    assert _ext._sampler_describe(0) is None
    assert _ext._sampler_describe(12345) is None           # no tag bit
    assert _ext._sampler_describe(1 << 63) is None         # slot 0: "?"
    assert _ext._sampler_describe((1 << 63) | (0x7FFFFFFF << 32) | 7) is None
    with pytest.raises(OverflowError):
        _ext._sampler_describe(-1)
    with pytest.raises(TypeError):
        _ext._sampler_describe("word")


def test_generator_and_nested_generator_frames():
    def gen():
        line = here(); yield line, _ext._sampler_walk()  # noqa: E702

    def outer_gen():
        line = here(); inner = yield from gen()  # noqa: E702,F841
        yield line

    g = outer_gen()
    line = here(); gline, words = next(g)  # noqa: E702
    oline = next(g)
    got = described(words)
    assert got[0] == (fname(gen), __file__, gline)
    assert got[1] == (fname(outer_gen), __file__, oline)
    assert got[2] == (fname(test_generator_and_nested_generator_frames), __file__, line)


def test_coroutine_frames_under_the_event_loop():
    async def leaf():
        await asyncio.sleep(0)
        line = here(); return line, _ext._sampler_walk()  # noqa: E702

    async def main():
        line = here(); result = await leaf()  # noqa: E702
        return line, result

    mline, (lline, words) = asyncio.run(main())
    got = described(words)
    assert got[0] == (fname(leaf), __file__, lline)
    assert got[1] == (fname(main), __file__, mline)
    names = [g[0] for g in got]
    # the event loop's frames, then this test's
    assert fname(test_coroutine_frames_under_the_event_loop) in names[2:]
    assert any(f.endswith(os.path.join("asyncio", "events.py")) for _, f, _ in got)


def test_deep_recursion_is_cut_at_max():
    depth = 400

    def recurse(n, m):
        if n == 0:
            line = here(); return line, _ext._sampler_walk(max=m)  # noqa: E702
        return recurse(n - 1, m)

    rline = recurse.__code__.co_firstlineno + 3
    line, words = recurse(depth, 50)
    got = described(words)
    assert len(got) == 50
    assert got[0] == (fname(recurse), __file__, line)
    assert all(g == (fname(recurse), __file__, rline) for g in got[1:])

    _, words = recurse(depth, 4096)
    got = described(words)
    assert [g[0] for g in got].count(fname(recurse)) == depth + 1
    assert got[depth + 1][0] == fname(test_deep_recursion_is_cut_at_max)


def test_lambdas_created_and_freed_keep_their_names():
    """describe names a frame from the table, after its code is gone."""
    words = []
    for i in range(3000):
        f = eval(compile("lambda: _ext._sampler_walk(max=1)", f"<lambda-{i % 7}>", "eval"),
                 {"_ext": _ext})
        words.append((i, f()[0]))
        del f
    gc.collect()
    for i, w in words:
        assert _ext._sampler_describe(w) == ("<lambda>", f"<lambda-{i % 7}>", 1)


def test_a_new_code_object_at_a_freed_ones_address_is_not_the_old_one():
    words, addresses = [], []
    for i in range(3000):
        ns = {"_ext": _ext}
        src = f"def f_{i}():\n    return _ext._sampler_walk(max=1)\n"
        exec(compile(src, f"<def-{i}>", "exec"), ns)
        f = ns.pop(f"f_{i}")
        addresses.append(id(f.__code__))
        words.append((i, f()[0]))
        del f, ns
    # the allocator did hand freed code objects' memory to new ones
    assert len(set(addresses)) < len(addresses)
    for i, w in words:
        assert _ext._sampler_describe(w) == (f"f_{i}", f"<def-{i}>", 2)


def test_names_with_non_ascii_characters():
    # names of each width a str stores: Latin-1, UCS-2, UCS-4 (file names
    # are kept as given; identifiers are NFKC-normalised by the compiler)
    for name, file in [("größe", "<dätei>"), ("größe_λ", "<λ-file>"),
                       ("f", "<file-\U0001d4d5-λ>")]:
        ns = {"_ext": _ext}
        exec(compile(f"def {name}():\n    return _ext._sampler_walk(max=1)\n", file, "exec"), ns)
        (w,) = ns[name]()
        assert _ext._sampler_describe(w) == (name, file, 2)


def test_a_full_code_table_gives_unnamed_frames_not_a_crash():
    """150 000 distinct code objects: more than the table's 131 072 slots.
    Those that find no slot are "?" (None here), counted, and the rest keep
    their names."""
    r = run_script("""
        from spanscope import _ext
        words = []
        for b in range(150):
            src = "".join(f"def f{b}_{i}():\\n    return w(max=1)[0]\\n" for i in range(1000))
            ns = {"w": _ext._sampler_walk}
            exec(compile(src, f"<batch-{b}>", "exec"), ns)
            for i in range(1000):
                words.append((b, i, ns[f"f{b}_{i}"]()))
        unnamed = 0
        for b, i, w in words:
            d = _ext._sampler_describe(w)
            if d is None:
                unnamed += 1
                # the line is still there: "?" is the code object's name
                assert w >> 63 == 1 and (w >> 32) & 0x7FFFFFFF == 0
                assert w & 0xFFFFFFFF == 2 * i + 2
            else:
                assert d == (f"f{b}_{i}", f"<batch-{b}>", 2 * i + 2), (d, b, i)
        st = _ext.sampling_stats()
        assert st["python_frames_unnamed"] == unnamed, (st, unnamed)
        assert st["python_code_objects"] + unnamed == len(words), st
        # the walk goes on: known code keeps its name, new code is "?"
        assert _ext._sampler_describe(words[0][2]) == ("f0_0", "<batch-0>", 2)
        assert len(_ext._sampler_walk()) >= 1
        print(unnamed)
    """)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) > 0


# ---------------------------------------------------------------------------
# The walk in another thread's signal handler
# ---------------------------------------------------------------------------

class Worker(threading.Thread):
    """A thread running body(stop) until stopped."""

    def __init__(self, body):
        super().__init__(daemon=True)
        self.body = body
        self.stop = threading.Event()
        self.started_running = threading.Event()

    def run(self):
        self.started_running.set()
        self.body(self.stop)

    def __enter__(self):
        self.start()
        self.started_running.wait(10)
        time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(10)


def probe_until(worker, want, tries=200):
    """Probes worker until want(frames) holds; returns those frames."""
    last = None
    for _ in range(tries):
        words = _ext._sampler_probe_thread(worker.ident)
        assert words is not None, "the walk faulted"
        last = described(words)
        if want(last):
            return last
        time.sleep(0.002)
    pytest.fail(f"no probe matched; the last gave {last}")


def sleeper(stop):
    while not stop.is_set():
        time.sleep(0.5)  # SLEEP_LINE: the GIL is released here


SLEEP_LINE = sleeper.__code__.co_firstlineno + 2


def test_a_thread_sleeping_without_the_gil_shows_its_frames():
    with Worker(sleeper) as w:
        got = probe_until(w, lambda g: g and g[0][2] == SLEEP_LINE)
    assert got[0] == (fname(sleeper), __file__, SLEEP_LINE)
    assert got[1] == (fname(Worker.run), __file__, Worker.run.__code__.co_firstlineno + 2)
    assert got[-1][0] == fname(threading.Thread._bootstrap)


def waiter(stop):
    stop.wait()  # WAIT_LINE: threading's Python frames over a lock, no GIL


def test_a_thread_waiting_in_threading_shows_threadings_frames_too():
    line = waiter.__code__.co_firstlineno + 1
    with Worker(waiter) as w:
        got = described(_ext._sampler_probe_thread(w.ident))
    names = [g[0] for g in got]
    i = names.index(fname(waiter))
    assert got[i] == (fname(waiter), __file__, line)
    assert names[:i] and names[i - 1] == fname(threading.Event.wait)
    assert all(g[1] == threading.__file__ for g in got[:i])


def hasher(stop):
    data = b"x" * (1 << 22)
    while not stop.is_set():
        hashlib.sha256(data).digest()  # HASH_LINE: CPU in C, GIL released


HASH_LINE = hasher.__code__.co_firstlineno + 3


def test_a_thread_burning_cpu_in_c_without_the_gil_shows_its_frames():
    with Worker(hasher) as w:
        got = probe_until(w, lambda g: g and g[0][2] == HASH_LINE)
    assert got[0] == (fname(hasher), __file__, HASH_LINE)


def spinner(stop):
    n = 0
    while not stop.is_set():
        n += 1


def test_a_thread_holding_the_gil_shows_its_frames():
    first = spinner.__code__.co_firstlineno
    with Worker(spinner) as w:
        got = probe_until(w, lambda g: g and g[0][0] == fname(spinner))
    assert got[0][1] == __file__ and first + 2 <= got[0][2] <= first + 3


def test_a_thread_running_no_python_code_gives_no_frames():
    # a thread whose function is a builtin: a thread state, no frame
    import _thread
    ident = _thread.start_new_thread(time.sleep, (5.0,))  # alive while probed
    time.sleep(0.05)
    assert _ext._sampler_probe_thread(ident) == []


def test_lines_while_a_tracer_runs():
    # 3.10 reads the frame's f_lineno while tracing; 3.11 builds a line
    # array for traced code, which PyCode_Addr2Line then reads instead
    def traced():
        x = 1  # noqa: F841
        line = here(); words = _ext._sampler_walk(max=2)  # noqa: E702
        return line, words

    def tracer(frame, event, arg):
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        line, words = traced()
    finally:
        sys.settrace(old)
    got = described(words)
    assert got[0] == (fname(traced), __file__, line)
    assert got[1][0] == fname(test_lines_while_a_tracer_runs)


def test_probe_argument_errors():
    with pytest.raises(ValueError, match="max must be"):
        _ext._sampler_probe_thread(threading.get_ident(), max=0)
    with pytest.raises(ValueError, match="timeout"):
        _ext._sampler_probe_thread(threading.get_ident(), timeout=0)
    # this thread itself: the signal is handled before pthread_kill returns
    got = described(_ext._sampler_probe_thread(threading.get_ident()))
    assert got[0] == (fname(test_probe_argument_errors), __file__, here() - 1)


def test_stress_probes_while_threads_make_and_drop_code():
    """Hundreds of walks in other threads' signal handlers while they compile,
    run and free code objects: never a crash (a fault in the walk is caught
    and counted; none is expected)."""
    r = run_script("""
        import random, sys, threading, time
        from spanscope import _ext
        sys.setswitchinterval(0.0005)  # the probing thread gets the GIL often
        stop = threading.Event()
        def churn(k):
            i = 0
            while not stop.is_set():
                ns = {}
                exec(compile(f"def g_{k}_{i}(n):\\n    return sum(x for x in range(n))\\n"
                             f"h = lambda: g_{k}_{i}(50)\\n", f"<churn-{k}-{i}>", "exec"), ns)
                ns["h"](); del ns
                i += 1
        ts = [threading.Thread(target=churn, args=(k,), daemon=True) for k in range(4)]
        for t in ts: t.start()
        probes = faults = frames = 0
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            words = _ext._sampler_probe_thread(random.choice(ts).ident)
            probes += 1
            if words is None:
                faults += 1
                continue
            for w in words:
                frames += 1
                d = _ext._sampler_describe(w)
                assert d is None or isinstance(d[0], str)
        stop.set()
        for t in ts: t.join()
        print(probes, faults, frames)
    """)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    probes, faults, frames = map(int, r.stdout.split())
    assert probes >= 50 and frames >= probes
    assert faults <= probes // 100  # a fault is caught, and rare


# ---------------------------------------------------------------------------
# The C sampler with the walker (sampling_start)
# ---------------------------------------------------------------------------

def read_samples(path):
    """The file's samples as a list of (tid, [(kind, function, file, line),
    ...] innermost first) per sample, with the group's attributes."""
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        g = f["samples"]
        col = {k: g[k][:] for k in g}
        attrs = dict(g.attrs)

    def s(v):
        return v.decode() if isinstance(v, bytes) else str(v)

    frames = [(int(k), s(fn), s(fi), int(ln)) for k, fn, fi, ln in
              zip(col["frame_kinds"], col["frame_functions"], col["frame_files"],
                  col["frame_lines"])]
    off, sf = col["stack_offsets"], col["stack_frames"]
    out = []
    for tid, st in zip(col["tids"], col["stacks"]):
        out.append((int(tid), [frames[i] for i in sf[off[st]:off[st + 1]]]))
    return out, attrs


def python_frames(stack):
    return [(fn, fi, ln) for kind, fn, fi, ln in stack if kind == 1]


def test_sampling_start_argument_and_state_errors():
    with pytest.raises(ValueError, match="hz must be 1 to 10000"):
        _ext.sampling_start(0)
    with pytest.raises(ValueError, match="hz must be 1 to 10000"):
        _ext.sampling_start(hz=10001)
    with pytest.raises(TypeError):
        _ext.sampling_start(hz="fast")
    # no session here (conftest's fixture closes every session)
    with pytest.raises(RuntimeError, match=r"SPS_ENOSESSION"):
        _ext.sampling_start(1000)
    assert _ext.sampling_hz() == 0
    assert _ext.sampling_stop() is None  # not sampling: nothing to do
    st = _ext.sampling_stats()
    assert set(st) == {"taken", "lost", "walk_faults", "threads", "python_code_objects",
                       "python_frames_unnamed", "python_names_not_copied"}
    assert all(isinstance(v, int) and v >= 0 for v in st.values())


def test_sampling_twice_and_in_an_aggregate_session(tmp_path):
    r = run_script(f"""
        from spanscope import _ext
        _ext.setup(file_path={str(tmp_path / 'a.h5')!r})
        _ext.sampling_start(200)
        assert _ext.sampling_hz() == 200
        try:
            _ext.sampling_start(300)
        except RuntimeError as e:
            print('twice:', e)
        assert _ext.sampling_hz() == 200
        _ext.sampling_stop()
        assert _ext.sampling_hz() == 0
        _ext.finalize({str(tmp_path / 'a.h5')!r}, False)
        _ext.shutdown()
        _ext.setup(file_path={str(tmp_path / 'b.h5')!r}, aggregate=True)
        try:
            _ext.sampling_start(100)
        except RuntimeError as e:
            print('aggregate:', e)
        _ext.finalize({str(tmp_path / 'b.h5')!r}, False)
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("twice: ") and "SPS_EACTIVE" in lines[0]
    assert lines[1].startswith("aggregate: ") and "SPS_EMODE" in lines[1]


SAMPLED_SCRIPT = """
import hashlib, sys, threading, time
from spanscope import _ext

def spin(sec):
    t = time.process_time(); n = 0
    while time.process_time() - t < sec:  # SPIN_LINE
        n += 1
    return n

def spin_in_thread(sec):
    return spin(sec)

def hasher(sec):
    data = b"x" * (1 << 20)
    t = time.process_time()
    while time.process_time() - t < sec:
        hashlib.sha256(data).digest()  # HASH_LINE: the GIL released

_ext.setup(file_path=sys.argv[1])
_ext.sampling_start(int(sys.argv[2]))
spin(0.3)
# threads started after sampling began
t1 = threading.Thread(target=spin_in_thread, args=(0.3,))
t2 = threading.Thread(target=hasher, args=(0.3,))
t1.start(); t2.start(); t1.join(); t2.join()
print(t1.native_id, t2.native_id, threading.get_native_id())
_ext.sampling_stop()
st = _ext.sampling_stats()
print(st["taken"], st["walk_faults"], st["threads"])
_ext.finalize(sys.argv[1], False)
"""


def script_line(marker):
    for i, text in enumerate(SAMPLED_SCRIPT.splitlines(), start=1):
        if marker in text:
            return i
    raise AssertionError(marker)


@pytest.mark.parametrize("hz", [1000, 5000])
def test_samples_name_python_functions_and_lines(tmp_path, hz):
    out = tmp_path / "s.h5"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", SAMPLED_SCRIPT, str(out), str(hz)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (t1, t2, main), (taken, faults, threads) = [list(map(int, l.split()))
                                                for l in r.stdout.splitlines()]
    assert taken > 0 and threads >= 3
    samples, _ = read_samples(out)
    assert samples
    spin_line, hash_line = script_line("# SPIN_LINE"), script_line("# HASH_LINE")
    by_tid = {}
    for tid, stack in samples:
        by_tid.setdefault(tid, []).append(python_frames(stack))
    # the main thread: spin under <module>, at the loop's lines
    # (a sample may land on the function's entry, its def line, or its first
    # and last lines: nearly all are in the loop)
    def_line = script_line("def spin(")
    main_py = [p for p in by_tid[main] if p and p[0][0] == "spin"]
    assert len(main_py) >= len(by_tid[main]) // 2
    for p in main_py:
        assert p[0][1] == "<string>" and def_line <= p[0][2] <= def_line + 4
        assert p[-1][0] == "<module>"
    in_loop = [p for p in main_py if p[0][2] in (spin_line, spin_line + 1)]
    assert len(in_loop) >= 0.9 * len(main_py)
    # a thread started later: spin under spin_in_thread under threading's frames
    th_py = [p for p in by_tid[t1] if p and p[0][0] == "spin"]
    assert th_py and all(p[1][0] == "spin_in_thread" for p in th_py)
    assert all(p[-1][1] == threading.__file__ for p in th_py)
    # a thread computing in C with the GIL released still shows its frames
    h_py = [p for p in by_tid[t2] if p and p[0][0] == "hasher"]
    assert h_py and any(p[0][2] == hash_line for p in h_py)


CHURN_SCRIPT = """
import sys, threading, time
from spanscope import _ext
stop = threading.Event()

def churn(k):
    i = 0
    while not stop.is_set():
        ns = {}
        src = (f"def g_{k}_{i}(n):\\n    return sum(x * x for x in range(n))\\n"
               f"h = lambda: g_{k}_{i}(200)\\n")
        exec(compile(src, f"<churn-{k}-{i}>", "exec"), ns)
        ns["h"]()
        del ns
        i += 1

_ext.setup(file_path=sys.argv[1])
_ext.sampling_start(5000)
ts = [threading.Thread(target=churn, args=(k,)) for k in range(6)]
for t in ts: t.start()
time.sleep(float(sys.argv[2]))
stop.set()
for t in ts: t.join()
_ext.sampling_stop()
st = _ext.sampling_stats()
print(st["taken"], st["walk_faults"], st["python_code_objects"])
_ext.finalize(sys.argv[1], False)
"""


def test_stress_sampling_at_5000_hz_while_threads_make_and_drop_code(tmp_path):
    out = tmp_path / "churn.h5"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", CHURN_SCRIPT, str(out), "3"], env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, (r.returncode, r.stderr)
    taken, faults, codes = map(int, r.stdout.split())
    assert taken > 100 and codes > 10
    samples, _ = read_samples(out)
    names = {fn for _, stack in samples for fn, _, _ in python_frames(stack)}
    # the churned functions and lambdas were sampled and named after they died
    assert any(n.startswith("g_") for n in names) and "<lambda>" in names
    for _, stack in samples:
        for fn, fi, ln in python_frames(stack):
            if fn.startswith("g_"):  # g_K_I, or its generator expression's frame
                base, _, rest = fn.partition(".")
                assert rest in ("", "<locals>.<genexpr>"), fn
                k, i = base[2:].split("_")
                # line 2, or 1: the def line, where the frame's RESUME is; a
                # generator expression's frame caught before its RESUME (at
                # RETURN_GENERATOR, 3.12) is at no line: 0, "unknown"
                assert fi == f"<churn-{k}-{i}>", (fn, fi, ln)
                assert ln in (1, 2) or (rest and ln == 0), (fn, fi, ln)
