"""Drafts expected_failures.txt: classifies each test that passes on
scope-profiler and fails on spanscope.

    python classify.py --wheel-dir REAL --baseline B.json [B2.json...] --mapped M.json \\
        [--rules rules.tsv] [--out expected_failures.txt] [--usage usage.json]

Categories, in this order of precedence:

private      the test (its body, the module-level helpers and fixtures it
             uses, its module's imports) uses a scope_profiler name outside
             the public API (public_api.txt plus scope_profiler.__all__),
             or a private attribute (`_x`) of a public object; the reason
             lists those names.
issue-33/34/38  the test is about a feature another open issue delivers
             (FEATURES below: LIKWID, perf events, memray; native samples,
             line profiles; NVTX, GPU timing).
improvement / bug   from --rules (`<regex on nodeid>\\t<category>\\t<reason>`
             a line, first match wins); a test no rule matches is a `bug`
             with its failure message as the reason.

The static analysis needs the real scope_profiler importable (REAL on
sys.path) to tell a re-export of a public object from a private name.
"""

import argparse
import ast
import importlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate_mapping import public_names  # noqa: E402

# (regex on the test's nodeid or on the scope_profiler names it uses, category)
FEATURES = [
    (r"likwid|perf_event|PerfEvent|memray|Memray", "issue-33",
     "LIKWID / perf events / memray (issue 33)"),
    (r"native_sample|line_profile|LineProfiler|scope_line|line_profiler", "issue-34",
     "native samples / line profiles (issue 34)"),
    (r"nvtx|NVTX|CUDA|gpu_timing|gpu_summary|GPUOptions|\bgpu\b|_gpu|gpu_", "issue-38",
     "NVTX / GPU timing (issue 38)"),
]


def load_public(wheel_dir: Path):
    """The public API: {(module, name)}, the documented modules, and the
    public objects by id (to recognise a re-export)."""
    sys.path.insert(0, str(wheel_dir))
    import scope_profiler
    public = {("scope_profiler", n) for n in scope_profiler.__all__}
    public.add(("scope_profiler", "__version__"))
    whole = set()
    for line in (HERE / "public_api.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        mod, name = line.split(":")
        if name == "*":
            whole.add(mod)
            src = wheel_dir.joinpath(*mod.split("."))
            src = src / "__init__.py" if src.is_dir() else src.with_suffix(".py")
            for n in public_names(src.read_text(encoding="utf-8"), mod):
                public.add((mod, n))
        else:
            public.add((mod, name))
    objects = {}
    for mod, name in public:
        try:
            objects[id(getattr(importlib.import_module(mod), name))] = (mod, name)
        except Exception:
            pass
    return public, whole, objects


class Usage:
    """The scope_profiler names one test module uses, per top-level def."""

    def __init__(self, path: Path, wheel_dir: Path, cache: dict):
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.path = path
        self.wheel_dir = wheel_dir
        self.cache = cache      # path -> Usage, shared: test modules import each other
        self.test_imports = {}  # local name -> (Usage of another test module, its name)
        self.aliases = {}       # local name -> ("mod", module) | ("obj", module, name)
        self.defs = {}          # top-level function/class name -> node
        self.module_level = set()
        # names bound to other packages (os, sys, np, ...): their `_x` are not ours
        self.foreign = {"self", "cls"}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                self.foreign |= {(a.asname or a.name).split(".")[0] for a in node.names
                                 if not a.name.startswith("scope_profiler")}
            elif isinstance(node, ast.ImportFrom) and not node.level \
                    and not (node.module or "").startswith("scope_profiler"):
                self.foreign |= {a.asname or a.name for a in node.names}
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[node.name] = node
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom):
                other = self._test_module(node)
                if other is not None:
                    # a helper of another test module: its module's imports
                    # run here too, its helpers' names are this test's
                    self.module_level |= other.module_level
                    for a in node.names:
                        self.test_imports[a.asname or a.name] = (other, a.name)
                    continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.module_level |= self._bind(node, self.aliases)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.module_level |= self._names(node, self.aliases)

    def _test_module(self, node):
        """The Usage of the test module `node` imports from, if it is one."""
        if node.level:
            base = self.path.parent
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*(node.module or "").split("."))
        elif (node.module or "").startswith("scope_profiler.tests"):
            target = self.wheel_dir.joinpath(*node.module.split("."))
        else:
            return None
        target = target.with_suffix(".py")
        if not target.is_file():
            return None
        if target not in self.cache:
            self.cache[target] = Usage(target, self.wheel_dir, self.cache)
        return self.cache[target]

    def _is_module(self, dotted: str) -> bool:
        p = self.wheel_dir.joinpath(*dotted.split("."))
        return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()

    def _bind(self, node, aliases) -> set:
        used = set()
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "scope_profiler":
                    continue
                if a.asname:
                    aliases[a.asname] = ("mod", a.name)
                else:
                    aliases["scope_profiler"] = ("mod", "scope_profiler")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level or not mod.startswith("scope_profiler") or mod.startswith(
                    "scope_profiler.tests"):
                return used
            for a in node.names:
                local = a.asname or a.name
                if self._is_module(f"{mod}.{a.name}"):
                    aliases[local] = ("mod", f"{mod}.{a.name}")
                else:
                    aliases[local] = ("obj", mod, a.name)
                    used.add((mod, a.name))
        return used

    def _names(self, node, aliases) -> set:
        """(module, name) pairs and private attributes used under `node`."""
        used = set()
        local = dict(aliases)
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                used |= self._bind(sub, local)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                    and sub.attr.startswith("_") and not sub.attr.startswith("__") \
                    and sub.value.id not in local and sub.value.id not in self.foreign \
                    and sub.value.id not in self.defs:
                # `results._is_root = False`: a private attribute of an object
                # the test holds (a scope_profiler object: the test's own
                # helpers are defs, other packages are imports)
                used.add(("(object)", f"{sub.value.id}.{sub.attr}"))
            if isinstance(sub, ast.Attribute):
                chain = []
                cur = sub
                while isinstance(cur, ast.Attribute):
                    chain.append(cur.attr)
                    cur = cur.value
                if not isinstance(cur, ast.Name) or cur.id not in local:
                    continue
                chain.reverse()
                target = local[cur.id]
                if target[0] == "mod":
                    mod = target[1]
                    while chain and self._is_module(f"{mod}.{chain[0]}"):
                        mod = f"{mod}.{chain.pop(0)}"
                    if chain:
                        used.add((mod, chain[0]))
                        if len(chain) > 1 and chain[1].startswith("_") \
                                and not chain[1].startswith("__"):
                            used.add((mod, f"{chain[0]}.{chain[1]}"))
                else:
                    used.add((target[1], target[2]))
                    if chain[0].startswith("_") and not chain[0].startswith("__"):
                        used.add((target[1], f"{target[2]}.{chain[0]}"))
            elif isinstance(sub, ast.Name) and sub.id in local and local[sub.id][0] == "obj":
                used.add((local[sub.id][1], local[sub.id][2]))
            elif isinstance(sub, ast.Call):
                # monkeypatch.setattr("scope_profiler.x.y", ...) / (module, "name", ...)
                f = sub.func
                if isinstance(f, ast.Attribute) and f.attr in ("setattr", "delattr") and sub.args:
                    first = sub.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                            and first.value.startswith("scope_profiler."):
                        mod, _, name = first.value.rpartition(".")
                        used.add((mod, name))
                    elif isinstance(first, ast.Name) and first.id in local and len(sub.args) > 1 \
                            and isinstance(sub.args[1], ast.Constant):
                        t = local[first.id]
                        if t[0] == "mod":
                            used.add((t[1], sub.args[1].value))
                        else:
                            used.add((t[1], f"{t[2]}.{sub.args[1].value}"))
        return used

    def for_test(self, funcname: str, classname: str | None) -> set:
        """Names used by one test: its def (or class) and the top-level defs
        it reaches by name (helpers, fixtures by argument name).  The
        module's own statements and imports are self.module_level."""
        start = classname or funcname
        seen, todo, used = set(), [start], set()
        while todo:
            name = todo.pop()
            if name in seen or name not in self.defs:
                continue
            seen.add(name)
            node = self.defs[name]
            used |= self._names(node, self.aliases)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id in self.test_imports:
                    other, oname = self.test_imports[sub.id]
                    if other is not self:
                        used |= other.for_test(oname, None)
                if isinstance(sub, ast.Name) and sub.id in self.defs:
                    todo.append(sub.id)
                elif isinstance(sub, ast.arg) and sub.arg in self.defs:
                    todo.append(sub.arg)
        return used


# the suite's own isolation hook: its conftest.py calls it around every
# test, so the suite cannot run without it (spanscope's ProfileManager has
# it); a test calling it too is not testing a private helper
HARNESS = {("scope_profiler", "ProfileManager._reset"),
           ("scope_profiler.profile_manager", "ProfileManager._reset")}


def is_public(pair, public, whole, objects) -> bool:
    mod, name = pair
    if pair in HARNESS:
        return True
    if name.rsplit(".", 1)[-1].startswith("__"):
        return True                    # __file__, __name__, __func__: Python's, not the API
    if mod == "(object)":
        return False
    while mod.count(".") and not _importable(mod):
        # "scope_profiler.__main__.ProfileManager", "finalize" (a
        # monkeypatch.setattr target string): the object is in the name
        mod, _, head = mod.rpartition(".")
        name = f"{head}.{name}"
    if "." in name:                    # an attribute of an object: `_x` is private
        head, attr = name.split(".", 1)
        return not any(a.startswith("_") and not a.startswith("__") for a in attr.split(".")) \
            and is_public((mod, head), public, whole, objects)
    if pair in public:
        return True
    try:
        obj = getattr(importlib.import_module(mod), name)
    except Exception:
        return False
    return id(obj) in objects          # a re-export of a public object


def _importable(mod: str) -> bool:
    try:
        importlib.import_module(mod)
        return True
    except Exception:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel-dir", type=Path, required=True)
    ap.add_argument("--baseline", type=Path, required=True, nargs="+",
                    help="outcomes on scope-profiler; several runs: a test passing in any "
                         "counts (a timing test that flaked in one run is still listed)")
    ap.add_argument("--mapped", type=Path, required=True)
    ap.add_argument("--rules", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--usage", type=Path, help="write each failing test's names as JSON")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from compare import mapped_outcome

    public, whole, objects = load_public(args.wheel_dir)
    baseline = {"tests": {}}
    for path in args.baseline:
        for nodeid, entry in json.loads(path.read_text())["tests"].items():
            if baseline["tests"].get(nodeid, {}).get("outcome") != "passed":
                baseline["tests"][nodeid] = entry
    mapped = json.loads(args.mapped.read_text())
    rules = []
    if args.rules:
        for line in args.rules.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                rx, cat, reason = line.split("\t")
                rules.append((re.compile(rx), cat, reason))

    usages, lines, dump = {}, [], {}
    for nodeid in sorted(k for k, v in baseline["tests"].items() if v["outcome"] == "passed"):
        outcome, message = mapped_outcome(nodeid, mapped)
        if outcome == "passed":
            continue
        path, _, rest = nodeid.partition("::")
        parts = rest.split("::")
        func = re.sub(r"\[.*", "", parts[-1])
        cls = parts[0] if len(parts) > 1 else None
        file = args.wheel_dir / path
        if file not in usages:
            usages[file] = Usage(file, args.wheel_dir, usages)
        own = usages[file].for_test(func, cls)
        at_import = usages[file].module_level - own

        def privates(pairs):
            return sorted(f"{m}.{n}".replace("scope_profiler.", "", 1).replace("(object).", "", 1)
                          for m, n in pairs
                          if not is_public((m, n), public, whole, objects))
        private, private_import = privates(own), privates(at_import)
        used = own | at_import
        dump[nodeid] = {"message": message, "private": private,
                        "private_at_import": private_import,
                        "used": sorted(f"{m}.{n}" for m, n in used)}
        # a module that does not import fails for its missing name alone:
        # a feature's only when that name is the feature's
        text = message if message.startswith("[collect]") else (
            nodeid + " " + " ".join(f"{m}.{n}" for m, n in own) + " " + message)
        if private:
            cat, reason = "private", "uses " + ", ".join(private)
        elif private_import:
            cat, reason = "private", ("its module imports " + ", ".join(private_import)
                                      + " (the test itself uses public names only)")
        else:
            cat = reason = None
            for rx, c, r in FEATURES:
                if re.search(rx, text):
                    cat, reason = c, r
                    break
            if cat is None:
                for rx, c, r in rules:
                    if rx.search(nodeid) or rx.search(message):
                        cat, reason = c, r
                        break
            if cat is None:
                cat, reason = "bug", "UNGROUPED: " + message
        lines.append(f"{nodeid}\t{cat}\t{' '.join(reason.split())[:300]}")
    header = ("# scope-profiler 0.7.5's tests that pass on scope-profiler and are expected to\n"
              "# fail on spanscope through the name mapping (scripts/scope-profiler-suite.sh).\n"
              "# <nodeid>\\t<category>\\t<reason>; categories: compare.py's CATEGORIES.\n"
              "# Drafted by classify.py; remove a line when its test passes.\n")
    text = header + "".join(line + "\n" for line in lines)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    if args.usage:
        args.usage.write_text(json.dumps(dump, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
