"""pytest plugin of the harness: records every test's outcome to a JSON file.

Loaded with ``-p outcomes_plugin`` (this directory on PYTHONPATH); the file
is SPS_SUITE_OUTCOMES.  It holds {"tests": {nodeid: {"outcome": passed |
failed | skipped, "message": first line of the failure}}, "collect_errors":
{module nodeid: message}}.  A test fails if any of its phases (setup, call,
teardown) failed; xfail counts as skipped, xpass as passed.
"""

import json
import os

_tests = {}
_collect_errors = {}


def _message(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = f"{crash.message}"
    else:
        text = str(report.longrepr)
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if crash is None and lines else (lines[0] if lines else ""))[:400]


def pytest_runtest_logreport(report):
    entry = _tests.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.failed and entry["outcome"] != "failed":
        entry["outcome"] = "failed"
        entry["message"] = f"[{report.when}] " + _message(report)
    elif report.skipped and report.when in ("setup", "call") and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"


def pytest_collectreport(report):
    if report.failed:
        _collect_errors[report.nodeid] = _message(report)


def pytest_sessionfinish(session):
    path = os.environ.get("SPS_SUITE_OUTCOMES")
    if not path or hasattr(session.config, "workerinput"):
        return
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"tests": _tests, "collect_errors": _collect_errors}, f, indent=0,
                  sort_keys=True)
