"""The Python package's layers: every module imports only modules of its own
layer or of the layers below it (docs/python.md, "The package"), the way
scripts/check-layers.sh holds the C library to its layers.

Read from the source with ast, so that an import inside a function (made
lazily, to break a cycle) counts as much as one at the top: a cycle hidden
in a function is still a cycle.  Within a package the order of its modules
is declared too: a module imports only the ones before it.
"""

import ast
import pathlib

import pytest

import spanscope

PKG = pathlib.Path(spanscope.__file__).parent

#: bottom up; a module of layer i may import layers 0..i.  Each entry is a
#: module or a package prefix (every module under it).
LAYERS = [
    ["spanscope._ext", "spanscope._base"],
    ["spanscope.options", "spanscope._option_classes"],
    ["spanscope.results"],
    ["spanscope.plots"],
    ["spanscope.profile_manager"],
    ["spanscope.mpi_wrappers"],
    ["spanscope._itt", "spanscope.profiler"],
    ["spanscope"],
    ["spanscope.integrations"],
    # run --follow (_follow) and the start-up hook of the processes it follows
    ["spanscope._follow", "spanscope._follow_boot"],
    ["spanscope.__main__", "spanscope._cli"],
]

#: (module, what it imports) pairs allowed to go up, each with its reason
ALLOWED_UP = {
    # IPython's %load_ext looks for load_ipython_extension in the package
    # itself: the package's hook only forwards, inside the function
    ("spanscope", "spanscope.integrations.ipython_magics"),
}

#: within these packages, module i imports only modules 0..i-1 (and its
#: package's __init__ imports them all)
ORDER = {
    "spanscope._base": ["atomic", "mpi"],
    "spanscope.results": ["_samples", "_model", "_errors", "_regions", "_calls", "_table",
                          "_likwid", "_counters", "_lines", "_profiling", "_jsonio",
                          "_line_cli", "_exports", "_inspection",
                          "_native", "_memray", "_native_samples"],
    "spanscope.plots": ["_figure", "_runs", "_timeline", "_distributions", "_scaling",
                        "_callgraph", "_statistics", "_counters", "_perf", "_cli", "__main__"],
    "spanscope.profile_manager": ["_likwid", "_lines", "_regions", "_tasks", "_session",
                                  "_scripts"],
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(name: str) -> int:
    best, best_len = None, -1
    for i, entries in enumerate(LAYERS):
        for e in entries:
            if (name == e or name.startswith(e + ".")) and len(e) > best_len:
                best, best_len = i, len(e)
    if best is None:
        raise AssertionError(f"{name} is in no layer of test_package_layers.LAYERS")
    return best


def _imports(path: pathlib.Path, modname: str):
    """(line, imported module) for every spanscope import of the file, where
    `from spanscope import X` names spanscope.X when X is a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = modname if path.name == "__init__.py" else modname.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "spanscope":
                    yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if base.split(".")[0] != "spanscope":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                is_module = (PKG.parent / pathlib.Path(*sub.split("."))).with_suffix(".py").exists() \
                    or (PKG.parent / pathlib.Path(*sub.split("."))).is_dir() or a.name == "_ext"
                yield node.lineno, sub if is_module else base


def _files():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_go_only_down(path):
    me = _module_name(path)
    mine = _layer(me)
    bad = []
    for line, target in _imports(path, me):
        if target == me:
            continue
        if _layer(target) > mine and (me, target) not in ALLOWED_UP:
            bad.append(f"line {line}: {me} (layer {mine}) imports {target} "
                       f"(layer {_layer(target)})")
        pkg, _, leaf = me.rpartition(".")
        if path.name == "__init__.py":
            pkg, leaf = me, None
        order = ORDER.get(pkg)
        tpkg, _, tleaf = target.rpartition(".")
        if order and tpkg == pkg and leaf is not None and tleaf in order and leaf in order:
            if order.index(tleaf) >= order.index(leaf):
                bad.append(f"line {line}: {me} imports {target}, which comes after it "
                           f"in {pkg}'s order {order}")
        if target == pkg and leaf is not None and pkg in ORDER:
            bad.append(f"line {line}: {me} imports its own package {pkg} (upward)")
    assert not bad, "\n".join(bad)


def test_every_module_is_in_a_layer_and_its_order():
    for path in _files():
        me = _module_name(path)
        _layer(me)
        pkg, _, leaf = me.rpartition(".")
        if pkg in ORDER and path.name != "__init__.py":
            assert leaf in ORDER[pkg], f"{me}: add it to ORDER[{pkg!r}]"


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule itself: a results module importing the scope-profiler face
    (a layer above) from inside a function is seen, and its layer is above."""
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from spanscope.profile_manager import ProfileManager\n"
                 "from spanscope.results import _table\n")
    imports = sorted(_imports(p, "spanscope.results._model"))
    assert imports == [(2, "spanscope.profile_manager"), (3, "spanscope.results._table")]
    assert _layer("spanscope.profile_manager") > _layer("spanscope.results._model")
    order = ORDER["spanscope.results"]
    assert order.index("_table") > order.index("_model")
