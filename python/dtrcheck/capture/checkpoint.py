"""A checkpoint plan applied to a model for the duration of a capture.

A plan is a list of module paths under the model (``["layer1.0", "layer2"]``,
the names of ``model.named_modules()``). While the capture runs, each named
module's ``forward`` is replaced, on the instance, by one that runs the
original through ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``;
when the capture stops, the instance attribute is removed again (or the one
the user had set is put back), so the model is as it was.

Why non-reentrant (torch 1.13):
- the gradients are those of the plain step even when no input of the module
  requires grad (the reentrant form then gives its parameters no gradient);
- the autograd nodes that run in the backward are the ones the forward made,
  so backward operators keep the MODULE of the forward operator that made
  them (attribution.py); the reentrant form builds a second graph during the
  backward, inside a nested torch.autograd.backward, whose nodes are never
  tagged;
- it takes keyword arguments and any outputs (tensors, tuples, dicts, other
  objects), and works with torch.autograd.grad.

The recomputation runs inside the backward (PHASE backward). While it runs,
the module's path is pushed on the module stack, so its operators name the
module they recompute (or its submodules) as MODULE, and the line of the
module's forward as SOURCE.

Limits, those of torch.utils.checkpoint: a module whose forward changes
state (BatchNorm's running statistics in training mode) changes it again when
recomputed; a forward that takes a different path when run again (on global
state, not on the RNG, which is restored) does not compute the same thing.

Invariant: a plan's paths name distinct submodules of the model, not the
model itself, none inside another.
"""

from __future__ import annotations

import json

import torch
import torch.utils.checkpoint

from .recorder import CaptureError

_ABSENT = object()


def read_plan(spec) -> list:
    """The module paths of a plan: a list of strings as is; a dtrcheck.Plan's
    modules; a string is a comma-separated list of paths, or ``@FILE``, a JSON
    list of module paths or what ``dtrcheck plan --json`` prints."""
    if spec is None:
        return []
    if hasattr(spec, "module_paths"):  # dtrcheck.plan()'s result
        return spec.module_paths()
    if isinstance(spec, str):
        if spec.startswith("@"):
            return _read_plan_file(spec[1:])
        return [p.strip() for p in spec.split(",") if p.strip()]
    paths = list(spec)
    for p in paths:
        if not isinstance(p, str):
            raise CaptureError(f"checkpoint: module paths are strings, got {type(p).__name__} {p!r}")
    return paths


def _read_plan_file(path: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except OSError as e:
        raise CaptureError(f"{path}: cannot read the checkpoint plan: {e.strerror}") from e
    except ValueError as e:
        raise CaptureError(f"{path}: the checkpoint plan is not JSON: {str(e).splitlines()[0]}") from e
    if isinstance(value, dict) and isinstance(value.get("modules"), list):  # dtrcheck plan --json
        value = [m.get("module") if isinstance(m, dict) else None for m in value["modules"]]
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise CaptureError(f"{path}: the checkpoint plan must be a JSON list of module paths "
                           "or the output of dtrcheck plan --json")
    return value


class CheckpointPlan:
    """Module paths whose forward runs under torch.utils.checkpoint while applied."""

    def __init__(self, model: torch.nn.Module, paths, module_stack=None):
        """Checks paths against model (see the invariant); raises CaptureError
        naming the first bad path. module_stack: the capture's ModuleStack,
        on which the recomputation pushes the module's path."""
        modules = dict(model.named_modules())
        seen = []
        for path in paths:
            if path == "":
                raise CaptureError("checkpoint: '' is the model itself; name submodules to checkpoint")
            if path not in modules:
                raise CaptureError(f"checkpoint: '{path}' names no submodule of the model "
                                   f"({type(model).__name__})")
            for other in seen:
                if other == path:
                    raise CaptureError(f"checkpoint: '{path}' is named twice")
                if path.startswith(other + ".") or other.startswith(path + "."):
                    outer, inner = (other, path) if path.startswith(other + ".") else (path, other)
                    raise CaptureError(f"checkpoint: '{inner}' is inside '{outer}'; "
                                       "name one or the other")
            seen.append(path)
        self.modules = [(path, modules[path]) for path in seen]
        self.module_stack = module_stack
        self._saved: list = []  # (module, the forward in its __dict__ before, or _ABSENT)
        self.calls = {path: 0 for path in seen}  # forward calls of each module while applied

    def apply(self) -> None:
        for path, module in self.modules:
            self._saved.append((module, module.__dict__.get("forward", _ABSENT)))
            module.forward = self._checkpointed(path, module.forward)

    def uncalled(self) -> list:
        """Paths whose module was never called while applied: a container such
        as nn.ModuleList, whose children its parent calls one by one, or a
        module the step does not use. Wrapping them checkpoints nothing."""
        return [path for path, n in self.calls.items() if n == 0]

    def restore(self) -> None:
        for module, forward in reversed(self._saved):
            if forward is _ABSENT:
                module.__dict__.pop("forward", None)
            else:
                module.forward = forward
        self._saved = []

    def _checkpointed(self, path: str, forward):
        stack = self.module_stack

        def run(*args, **kwargs):
            if stack is not None:
                stack.paths.append(path)
            try:
                return forward(*args, **kwargs)
            finally:
                if stack is not None:
                    stack.paths.pop()

        def checkpointed_forward(*args, **kwargs):
            self.calls[path] += 1
            # kwargs go through a closure: checkpoint() would take a
            # `preserve_rng_state` of the module's as its own.
            return torch.utils.checkpoint.checkpoint(lambda *a: run(*a, **kwargs), *args,
                                                     use_reentrant=False)

        return checkpointed_forward
