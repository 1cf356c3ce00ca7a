"""The sample files the Python tests share: scope-profiler 0.7.5's schema-1
layout as its own tests write it with h5py, and files the real
scope-profiler writes in a child process.  One writer of each, imported by
the tests (test_html_options.py, test_analysis_names.py,
test_results_api.py, test_summary_text.py) instead of a copy in each.
"""
import subprocess
import sys
import textwrap

import numpy as np


def write_schema1(path, rank_regions, metadata=None, sources=None):
    """A schema-1 file as scope-profiler's tests write it
    (tests/test_html_report.py, test_inspection.py): one group per rank,
    rank{R}/regions/{name}/start_times and end_times in ns (int64).

    rank_regions: {rank: {name: (starts, ends)}}; metadata: /metadata's
    attributes (a list or tuple as an array of str, as test_inspection.py
    writes "modules"); sources: {name: (file, lineno, text)} as the region
    group's source_file/source_lineno/source_text attributes.  Returns path.
    """
    import h5py  # the tests that call this skip without it (importorskip)

    sources = sources or {}
    with h5py.File(path, "w") as f:
        if metadata:
            g = f.create_group("metadata")
            for k, v in metadata.items():
                if isinstance(v, (list, tuple)):
                    g.attrs.create(k, list(v), dtype=h5py.string_dtype())
                else:
                    g.attrs[k] = v
        for rank, regions in rank_regions.items():
            rg = f.create_group(f"rank{rank}").create_group("regions")
            for name, (s, e) in regions.items():
                x = rg.create_group(name)
                x.create_dataset("start_times", data=np.asarray(s, dtype=np.int64))
                x.create_dataset("end_times", data=np.asarray(e, dtype=np.int64))
                if name in sources:
                    x.attrs["source_file"], x.attrs["source_lineno"], \
                        x.attrs["source_text"] = sources[name]
    return path


def run_script(script, directory, runs, name="gen.py"):
    """Writes script (Python source) to directory/name and runs it once per
    item of runs, a sequence of argument lists, in a child process with
    this interpreter (cwd directory; a failure raises CalledProcessError).
    The real scope-profiler's files are written this way, so that its
    ProfileManager never shares a process with spanscope's."""
    gen = directory / name
    gen.write_text(script)
    for args in runs:
        subprocess.run([sys.executable, str(gen), *map(str, args)], check=True,
                       cwd=directory, timeout=120)


# A step loop recorded by the real scope-profiler: argv OUT LABEL [source]
# (source: capture_region_source=True); regions step > assemble, solve.
STEPS_SCRIPT = textwrap.dedent('''
    import sys
    from scope_profiler import ProfileManager as PM
    out, label = sys.argv[1], sys.argv[2]
    kw = dict(capture_region_source=True) if "source" in sys.argv[3:] else {}
    PM.setup(file_path=out, label=label, **kw)
    for i in range(4):
        with PM.region("step"):
            with PM.region("assemble"):
                sum(range(3000 * (i + 1)))
            with PM.region("solve"):
                sum(range(700))
    PM.finalize(verbose=False)
''')


def scope_profiler_steps(directory, labels, source=False):
    """The paths of files the real scope-profiler 0.7.5 wrote by
    STEPS_SCRIPT, directory/{label}.h5 for each label (its label set),
    with the regions' source captured when source is true."""
    paths = [directory / f"{label}.h5" for label in labels]
    run_script(STEPS_SCRIPT, directory,
               [(p, label, *(["source"] if source else [])) for p, label in zip(paths, labels)])
    return paths
