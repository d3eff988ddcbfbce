"""The capture context manager: one training step in, a DTR trace out.

    with Capture("model.log", model=model) as cap:
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

While the block runs, a TorchDispatchMode sees every aten operator (forward,
backward and the optimizer's updates) and a Recorder (recorder.py) writes the
trace lines. On leaving the block without an exception the trace is checked
(a step must call backward) and, if a path was given, written atomically: to
a temporary file in the same directory, then renamed into place, so a failed
capture never leaves a half-written trace.

For the duration of the block:
- torch.autograd.backward and torch.autograd.grad are wrapped to write the
  BACKWARD annotation before the first backward pass (Tensor.backward calls
  torch.autograd.backward) and to hook the autograd nodes they run;
- global nn.Module forward hooks, and patches of record_function,
  Optimizer._optimizer_step_code and nn.Module.zero_grad, tell which module,
  phase and optimizer each operator belongs to (attribution.py);
- the modules a checkpoint plan names run under torch.utils.checkpoint
  (checkpoint.py);
- Python's cyclic garbage collector is paused, so that tensors die at the
  same points on every run and the trace is reproducible. A tensor kept only
  by a reference cycle therefore stays live until the end of the trace.
"""

from __future__ import annotations

import gc
import os
import tempfile

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .attribution import Attribution
from .checkpoint import CheckpointPlan, read_plan
from .recorder import CaptureError, Recorder


class _RecordingMode(TorchDispatchMode):
    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.recorder.on_op(func, args, kwargs or {})


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: str, text: str) -> None:
    """Writes text to path via a temporary file in the same directory and a rename.

    The file gets the mode a plain open() would give it (0666 less the umask),
    not mkstemp's 0600. A write that fails (a full disk, a file size limit, a
    folder that is not there) raises CaptureError "PATH: cannot write
    (REASON)" and leaves path as it was, with no temporary beside it.
    """
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(e, OSError):
            raise CaptureError(f"{path}: cannot write ({e.strerror or e})") from e
        raise


class Capture:
    """Records the operators run inside a ``with`` block as a DTR trace.

    path: where to write the trace when the block ends without an exception
      (None: keep it in memory; see ``text`` and ``save``).
    model: an nn.Module whose parameters, then buffers, are declared as
      CONSTANTs first, in that order, whether or not the step uses them; it
      names the modules and parameters in the attribution keys. Without it,
      the first module with parameters whose forward is called outside any
      other module's names them (its parameters are not declared up front).
    time: "flops" (deterministic estimate, the default) or "measured"
      (nanoseconds); see cost.py.
    require_backward: raise CaptureError at the end if nothing called
      backward (a training step must).
    checkpoint: module paths under model (a list, a comma-separated string,
      or "@FILE", a JSON list of module paths) whose forward runs under
      torch.utils.checkpoint during the block, and only then; needs model.
      See checkpoint.py for what is supported.
    """

    def __init__(self, path: str | None = None, *, model: torch.nn.Module | None = None,
                 time: str = "flops", require_backward: bool = True, checkpoint=None):
        self.path = path
        self.model = model
        self.require_backward = require_backward
        self.checkpoint = read_plan(checkpoint)
        self._plan = None
        self.attribution = Attribution()
        self.recorder = Recorder(time, self.attribution)
        self._mode = None
        self._saved = None
        self._stopped = False

    # ---- results ---------------------------------------------------------

    @property
    def lines(self) -> list:
        return self.recorder.lines

    @property
    def text(self) -> str:
        return "\n".join(self.recorder.lines) + "\n"

    @property
    def peak_bytes(self) -> int:
        """Largest sum of live storage sizes seen after an operator (PyTorch's side)."""
        return self.recorder.peak_bytes

    def summary(self) -> dict:
        r = self.recorder
        return {"lines": len(r.lines), "operators": r.operators, "skipped": r.skipped,
                "constants": r.constants, "peak_bytes": r.peak_bytes, "clock": r.clock}

    def save(self, path: str) -> None:
        write_atomically(path, self.text)

    # ---- the block -------------------------------------------------------

    def __enter__(self) -> "Capture":
        if self._mode is not None:
            raise CaptureError("a Capture records one block; make a new one")
        if self.model is not None and not isinstance(self.model, torch.nn.Module):
            raise CaptureError(f"model must be a torch.nn.Module, got {type(self.model).__name__}")
        if self.model is None:
            if self.checkpoint:
                raise CaptureError("checkpoint= needs model=, the model whose submodules it names")
            self.attribution.on_top_level_call = self._name_by_first_model
        self._open(self.model)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._stop(exc_type)
        if exc_type is not None:
            return False
        self._finish()
        return False

    def _name_by_first_model(self, module) -> None:
        if self.attribution.root is None and any(True for _ in module.parameters()):
            self.attribution.set_root(module)

    # The steps of a capture, for script.py, which opens it inside a module's
    # forward pre-hook and stops it inside an optimizer step.

    def _open(self, model) -> None:
        """Starts recording: declares model's tensors, installs the hooks and the mode."""
        r, a = self.recorder, self.attribution
        if self.checkpoint:  # checked before anything is installed
            self._plan = CheckpointPlan(model, self.checkpoint, a.modules)
        if model is not None:
            self.model = model
            a.set_root(model)
            r.declare(list(model.parameters()) + list(model.buffers()) + _kept_from_before(model))
        backward, grad = torch.autograd.backward, torch.autograd.grad

        def recording_backward(tensors, *args, **kwargs):
            r.annotate_backward()
            saved = a.backward_started(_tensors(tensors))
            try:
                return backward(tensors, *args, **kwargs)
            finally:
                a.backward_ended(saved)

        def recording_grad(outputs, *args, **kwargs):
            r.annotate_backward()
            saved = a.backward_started(_tensors(outputs))
            try:
                return grad(outputs, *args, **kwargs)
            finally:
                a.backward_ended(saved)

        self._saved = (backward, grad, gc.isenabled())
        torch.autograd.backward, torch.autograd.grad = recording_backward, recording_grad
        gc.disable()
        if self._plan is not None:
            self._plan.apply()
        a.start()
        self._mode = _RecordingMode(r)
        self._mode.__enter__()

    def _stop(self, exc_type=None) -> None:
        """Stops recording and restores what _open changed; with no exception,
        gives the ROLEs. Does nothing the second time."""
        if self._stopped or self._mode is None:
            return
        self._stopped = True
        self._mode.__exit__(exc_type, None, None)
        backward, grad, gc_enabled = self._saved
        torch.autograd.backward, torch.autograd.grad = backward, grad
        self.attribution.stop()
        if self._plan is not None:
            self._plan.restore()
        if gc_enabled:
            gc.enable()
        if exc_type is None:
            self.recorder.set_roles(self.attribution.roles())
        self.recorder.close(roles=exc_type is None)

    def _finish(self) -> None:
        """Checks the stopped capture and writes it to path, if any."""
        uncalled = self._plan.uncalled() if self._plan is not None else []
        if uncalled:
            raise CaptureError(f"checkpoint: '{uncalled[0]}' was never called during the step (a container "
                               "such as nn.ModuleList, or a module the step does not use), so wrapping it "
                               "checkpoints nothing; name the modules it holds instead")
        if self.require_backward and not self.recorder.backward_seen:
            raise CaptureError("the captured step never called backward(): a training step runs "
                               "forward, loss.backward() and usually optimizer.step()")
        if self.path is not None:
            self.save(self.path)


def _kept_from_before(model) -> list:
    """The state optimizers keep for the model's parameters (momentum_buffer,
    exp_avg, ...) when the step starts, in parameter order. Declared as
    CONSTANTs with the parameters: named only when the optimizer step first
    reads them, they would be missing from the trace's memory until then, and
    a peak in the backward would be short of them (resnet18 with Adam: by the
    93.5 MB of its two states). Gradients are not declared: zero_grad() either
    zeroes them first thing (they become CONSTANTs there) or sets them to None
    (set_to_none=True), and a CONSTANT stays allocated to the end in simrd's
    semantics even when released."""
    params = list(model.parameters())
    ids = {id(p) for p in params}
    optimizers = [o for o in gc.get_objects() if issubclass(type(o), torch.optim.Optimizer)
                  and any(id(p) in ids for g in o.param_groups for p in g["params"])]
    out = []
    for o in optimizers:
        for p in params:
            out += [v for v in o.state.get(p, {}).values() if isinstance(v, torch.Tensor)]
    return out


def _tensors(value) -> list:
    """The tensors of backward's first argument: one tensor or a sequence."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []
