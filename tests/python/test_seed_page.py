"""The scope-profiler "Profiling regions" page, run against spanscope.

Every code cell of tests/python/data/scope-profiler-regions.txt (a copy of
the seed page) runs in order in one process, with only the import changed,
and must print exactly what the page shows.  Cells are run as a notebook
would: a final bare expression is displayed with repr().
"""
import ast
import contextlib
import io
import pathlib

PAGE = (pathlib.Path(__file__).parent / "data" / "scope-profiler-regions.txt").read_text()

PRELUDE = "import time\nimport numpy as np\nfrom spanscope import ProfileManager\n"

# (cell source exactly as on the page, output exactly as on the page)
CELLS = [
    ('run = ProfileManager.setup(file_path="regions.h5")', ""),
    ('''@ProfileManager.profile("solver")
def solve(A, b):
    return np.linalg.solve(A, b)


A, b = np.eye(3), np.ones(3)
print(solve(A, b))
print(ProfileManager.get_region("solver").num_calls)''', "[1. 1. 1.]\n1\n"),
    ('''@ProfileManager.profile
def solve(A, b):
    return np.linalg.solve(A, b)


# region name: "solve"
print(solve(A, b))
print("solve" in ProfileManager.recorded_regions())''', "[1. 1. 1.]\nTrue\n"),
    ('''def run_pipeline(A, b):
    return sum(b)


@ProfileManager.profile("solve", recursive=True)
def solve(A, b):
    return run_pipeline(A, b)


print(solve(A, b))''', "3.0\n"),
    ('[name for name in ProfileManager.recorded_regions() if "run_pipeline" in name]',
     "['__main__.run_pipeline']\n"),
    ('''def compute_rhs(state):
    return 2.0 * state


def time_step(state, dt):
    with ProfileManager.region("rhs_evaluation"):
        rhs = compute_rhs(state)

    with ProfileManager.region("state_update"):
        state += dt * rhs


time_step(np.ones(3), 0.1)''', ""),
    ('''# Bound methods are created on access, so compare the underlying functions.
ProfileManager.profile_region.__func__ is ProfileManager.region.__func__''', "True\n"),
    ('''def process(chunk):
    time.sleep(0.001)


@ProfileManager.profile("compute")
def compute_batch(data):
    for chunk in data:
        with ProfileManager.region("compute"):
            process(chunk)


# Both the decorator and the context manager contribute
# to the same "compute" region.
compute_batch([1, 2, 3])
print(ProfileManager.get_region("compute").num_calls)''', "4\n"),
    ('ProfileManager.region("foo") is ProfileManager.region("foo")', "True\n"),
    ('''def work():
    time.sleep(0.001)


with ProfileManager.region("outer"):
    with ProfileManager.region("inner"):
        work()''', ""),
    ('''region = ProfileManager.get_region("solver")

# Number of completed calls
print(region.num_calls)

# Durations of buffered (not yet flushed) calls, in nanoseconds
durations = region.get_durations_numpy()
print(durations.shape, durations.dtype)''', "1\n(1,) int64\n"),
    ('''for name, region in ProfileManager.get_all_regions().items():
    print(f"{name}: {region.num_calls} calls")''',
     "solver: 1 calls\nsolve: 2 calls\n__main__.run_pipeline: 1 calls\nrhs_evaluation: 1 calls\n"
     "state_update: 1 calls\ncompute: 4 calls\nfoo: 0 calls\nouter: 1 calls\ninner: 1 calls\n"),
    ('''ProfileManager.finalize(verbose=False)
ProfileManager.setup(file_path="regions.h5")
print(ProfileManager.recorded_regions())
ProfileManager.finalize(verbose=False)''', "()\n"),
]


def run_cell(src: str, ns: dict) -> None:
    """exec a cell like a notebook: a trailing expression is displayed."""
    tree = ast.parse(src)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
        exec(compile(tree, "<cell>", "exec"), ns)
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
        if value is not None:
            print(repr(value))
    else:
        exec(compile(tree, "<cell>", "exec"), ns)


def test_cells_are_the_page_verbatim():
    for src, out in CELLS:
        assert src in PAGE, f"cell not found on the page:\n{src}"
        for line in out.splitlines():
            assert line in PAGE, f"output line not on the page: {line!r}"


def test_seed_page_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__main__"}
    exec(PRELUDE, ns)
    for i, (src, expected) in enumerate(CELLS):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            run_cell(src, ns)
        assert buf.getvalue() == expected, f"cell {i}:\n{src}"
    assert (tmp_path / "regions.h5").exists()
