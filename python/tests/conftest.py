"""Shared setup of the Python tests: where the CLI, the traces and the example
scripts are, and verbs to run the CLI and the capture.

ctest runs these with PYTHONPATH=build/python and DTRCHECK_BINARY,
DTRCHECK_SHARED_DIR and DTRCHECK_SOURCE_DIR set (CMakeLists.txt); by hand:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("DTRCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BINARY = Path(os.environ.get("DTRCHECK_BINARY", SOURCE / "build" / "dtrcheck"))
TRACES = Path(os.environ.get("DTRCHECK_SHARED_DIR", SOURCE.parent / "shared")) / "traces"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
EXAMPLES = SOURCE / "examples"
RESNET32 = TRACES / "resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log"

# Subprocesses run in other directories: make the module path absolute.
os.environ["PYTHONPATH"] = os.pathsep.join(
    os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


def cli(*args, code: int = 0) -> subprocess.CompletedProcess:
    """Runs the dtrcheck CLI; checks its exit status."""
    p = subprocess.run([str(BINARY), *map(str, args)], capture_output=True, text=True)
    assert p.returncode == code, f"dtrcheck {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}"
    return p


def cli_json(*args) -> list:
    """The JSON objects a --json command prints, one per line."""
    return [json.loads(line) for line in cli(*args, "--json").stdout.splitlines() if line.strip()]


def capture_cli(script, output, *extra) -> subprocess.CompletedProcess:
    """`python3 -m dtrcheck.capture SCRIPT -o OUTPUT`, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "dtrcheck.capture", str(script), "-o", str(output), *extra],
                          capture_output=True, text=True, env=os.environ.copy())


@pytest.fixture(scope="session")
def captured(tmp_path_factory):
    """The two example models captured once each: {"resnet": path, "lstm": path}."""
    out = tmp_path_factory.mktemp("captured")
    paths = {}
    for name in ("resnet", "lstm"):
        path = out / f"{name}.log"
        p = capture_cli(EXAMPLES / f"{name}.py", path)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith(f"wrote {path}:")
        paths[name] = path
    return paths


def need_traces():
    if not RESNET32.exists():
        pytest.skip(f"the public DTR traces are not in {TRACES}")
