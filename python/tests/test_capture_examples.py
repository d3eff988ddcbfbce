"""The example models captured as a user would, checked against the CLI and
against PyTorch's own memory accounting."""

import os
import runpy
import subprocess
import tempfile

import pytest
import torch

from conftest import EXAMPLES, capture_cli, cli, cli_json
from dtrcheck.capture import capture_script

# How far below PyTorch's CPU allocator peak the baseline may be (see
# docs/python.md, "Checking a capture"): the allocator also counts scratch
# buffers a kernel allocates and frees inside one operator, which no trace
# line shows. Measured: 8.3% for examples/resnet.py (the peak falls inside
# convolution_backward), 0 for examples/lstm.py. The baseline is never above
# the allocator's peak: every storage in the trace is an allocation.
ALLOCATOR_TOLERANCE = 0.15


def allocator_peak(script) -> int:
    """Peak bytes of PyTorch's CPU allocator over one step of `script`, run
    fresh as the capture runs it, plus the storages that exist before the
    step (the model's parameters and buffers, the script's tensors)."""
    torch.manual_seed(0)
    ns = runpy.run_path(str(script), run_name="__dtrcheck_capture__")
    tensors = [*ns["model"].parameters(), *ns["model"].buffers(),
               *(v for v in ns.values() if isinstance(v, torch.Tensor))]
    before = {t.storage()._cdata: t.storage().nbytes() for t in tensors}
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        ns["step"]()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    live = peak = 0
    for e in sorted(events, key=lambda e: e.start_us()):
        live += e.nbytes()
        peak = max(peak, live)
    return sum(before.values()) + peak


@pytest.mark.parametrize("name", ["resnet", "lstm"])
def test_example_trace_parses_and_passes_at_ratio_one(captured, name):
    info = cli_json("info", captured[name])[0]
    assert info["operators"] > 100 and info["constants"] > 10
    run = cli_json("replay", captured[name], "--ratio", "1.0")[0]
    assert run["result"] == "pass"
    assert run["heuristic_evictions"] == 0  # the budget is the baseline's own peak
    assert run["max_memory"] <= run["budget"]


@pytest.mark.parametrize("name", ["resnet", "lstm"])
def test_example_baseline_is_the_peak_of_live_storages_seen_by_the_capture(captured, name):
    # The replay's baseline (simrd's RuntimeV1, infinite budget) sums the
    # trace's storages; the capture summed PyTorch's live storages itself.
    cap = capture_script(str(EXAMPLES / f"{name}.py"))
    baseline = cli_json("info", captured[name])[0]["baseline_memory"]
    assert baseline == cap.peak_bytes


@pytest.mark.parametrize("name", ["resnet", "lstm"])
def test_example_baseline_is_within_tolerance_below_the_cpu_allocator_peak(captured, name):
    baseline = cli_json("info", captured[name])[0]["baseline_memory"]
    allocator = allocator_peak(EXAMPLES / f"{name}.py")
    assert (1 - ALLOCATOR_TOLERANCE) * allocator <= baseline <= allocator, (baseline, allocator)


@pytest.mark.parametrize("name", ["resnet", "lstm"])
def test_example_sweep_below_the_peak_ends_in_pass_or_oom(captured, name):
    runs = cli_json("sweep", captured[name], "--ratios", "0.2:1.0:0.1", "--heuristic", "DTR,LRU,MSPS")
    assert {r["result"] for r in runs} <= {"pass", "oom"}
    assert "pass" in {r["result"] for r in runs}


def test_resnet_trace_has_in_place_ops_optimizer_updates_and_a_backward_annotation(captured):
    text = captured["resnet"].read_text()
    assert '"INSTRUCTION":"MUTATE"' in text       # relu_ and += on fresh activations
    assert '"INSTRUCTION":"COPY_FROM"' in text     # SGD's updates of the parameters
    assert text.count('"ANNOTATION":"BACKWARD"') == 1
    assert text.index('"NAME":"convolution"') < text.index('"ANNOTATION":"BACKWARD"')
    assert text.index('"ANNOTATION":"BACKWARD"') < text.index('"NAME":"convolution_backward"')


def test_lstm_trace_copies_a_second_view_of_one_input_storage(captured):
    # inputs and targets are two views of one tokens tensor made before the
    # step: the first used is a CONSTANT, the second a COPY of it.
    assert cli_json("info", captured["lstm"])[0]["constants"] >= 1
    assert '"INSTRUCTION":"COPY"' in captured["lstm"].read_text()


def test_capture_with_the_flop_clock_is_reproducible(captured, tmp_path):
    again = tmp_path / "resnet.log"
    assert capture_cli(EXAMPLES / "resnet.py", again).returncode == 0
    assert again.read_text() == captured["resnet"].read_text()


def test_capture_with_the_measured_clock_differs_only_in_time(captured, tmp_path):
    measured = tmp_path / "resnet_measured.log"
    p = capture_cli(EXAMPLES / "resnet.py", measured, "--time", "measured")
    assert p.returncode == 0, p.stderr
    assert "TIME from measured" in p.stdout
    strip = lambda text: [l.split(',"TIME"')[0] for l in text.splitlines()]
    assert strip(measured.read_text()) == strip(captured["resnet"].read_text())
    assert cli_json("replay", measured, "--ratio", "1.0")[0]["result"] == "pass"


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def test_captured_resnet_report_renders_in_the_browser(captured, tmp_path):
    # As tests/browser_check.sh does for the demo: the report of a captured
    # trace, opened in headless Chromium, has its plots and every section.
    out = tmp_path / "report"
    p = cli("report", captured["resnet"], "--ratios", "0.3:1.0:0.1", "--out", out, "--no-proofs", "-j", "2")
    assert f"wrote {out / 'report.html'}" in p.stdout
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-background-networking", f"--user-data-dir={profile}",
                              "--dump-dom", f"file://{out / 'report.html'}"],
                             capture_output=True, text=True, timeout=120).stdout
    assert "resnet.log" in dom
    assert dom.count("<svg") >= 3  # the budget curve, the timeline, a frontier
    assert dom.count("<section id=") == 8
    # The answer first: the headline, then the zoomed budget curve.
    assert dom.index('<section id="answer"') < dom.index('<section id="summary"')
    assert "<dt>passes from</dt>" in dom and "<dt>proven floor</dt>" in dom
    # The curve's line (the atlas's, or the rows joined) and a timeline's memory line.
    assert ('class="atlas-line' in dom or 'class="grid-line' in dom) and 'class="mem run-' in dom
    # One inline script (zoom and readout), nothing loaded.
    assert dom.count("<script") == 1 and "<script src" not in dom and "ERR_" not in dom
