"""The Python example of README.md runs as written."""

import os
import re
import subprocess
import sys

from conftest import SOURCE


def example(name: str) -> str:
    text = (SOURCE / "README.md").read_text()
    m = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert m, f"no example '{name}' in README.md"
    return m.group(1)


def test_the_overhead_plot_example_runs(tmp_path):
    (tmp_path / "examples").symlink_to(SOURCE / "examples")
    code = example("overhead-plot")
    assert len(code.strip().splitlines()) < 15
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    png = (tmp_path / "overhead.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000
    assert (tmp_path / "resnet.log").read_text().startswith('{"ANNOTATION":"START"')
