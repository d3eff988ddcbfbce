"""`python3 -m dtrcheck.capture SCRIPT.py -o model.log`: the two ways a script is taken.

A script that defines ``step`` at module level (see ``_binds_step``; the
script's syntax tree is read before it runs) follows the step() contract. It is run once (as a module named ``__dtrcheck_capture__``, so an
``if __name__ == "__main__":`` block in it does not run) after
``torch.manual_seed(seed)``, and must define, at module level:

- ``model``: the torch.nn.Module being trained. Its parameters, then its
  buffers, are the trace's first CONSTANTs.
- ``step()``: a function of no arguments that runs one training step (the
  forward pass, ``loss.backward()``, and usually ``optimizer.step()``) and
  returns the loss tensor.

Everything at module level (building the model, the optimizer, the data) runs
before the capture; only ``step()`` is recorded. Inputs and any other tensor
made before the capture become CONSTANTs when the step first uses them.

Any other script is run as it is, as ``python3 SCRIPT.py`` would run it
(``__name__`` is ``"__main__"``, so its main block runs; ``sys.argv`` is
``[SCRIPT]``; the script's directory is first on ``sys.path``), after
``torch.manual_seed(seed)``. The capture opens at the first forward call of
an nn.Module that has parameters, made while no other module's forward is
running; that module is the model (its parameters, then buffers, are the
first CONSTANTs). It ends when the first optimizer step returns: the script
is stopped there, by an exception of a private BaseException subclass that
only this module catches, so the rest of the training loop does not run. A
script that never steps an optimizer is captured to its end.

A script that cannot be captured is one CaptureError, whose message names the
script (and the line, for an exception), and no trace is written: the script
raises, defines no ``model`` or ``step``, its step never calls backward, or
returns something other than a tensor; run as it is, it never calls the
forward of a module with parameters, or never calls backward once it has.
"""

from __future__ import annotations

import ast
import os
import runpy
import sys
import traceback

import torch

from .checkpoint import read_plan
from .recorder import CaptureError
from .session import Capture


def _where(path: str, tb) -> str:
    """'SCRIPT:LINE' of the innermost frame of the traceback inside the script."""
    line = None
    target = os.path.realpath(path)
    for frame in traceback.extract_tb(tb):
        if os.path.realpath(frame.filename) == target:
            line = frame.lineno
    return f"{path}:{line}" if line is not None else path


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _FirstStepDone(BaseException):
    """Stops a script at the end of its first optimizer step (a BaseException,
    so the script's own ``except Exception`` does not catch it)."""


def _binds_step(statements) -> bool:
    """Whether module-level statements define ``step``: a def, an assignment
    or an import of that name, also inside a module-level if, try or with (a
    loop variable such as ``for step in range(n)`` does not count)."""
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = node.name == "step"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = any((a.asname or a.name.split(".")[0]) == "step" for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = any(isinstance(n, ast.Name) and n.id == "step" for t in targets for n in ast.walk(t))
        elif isinstance(node, ast.If):
            found = _binds_step(node.body) or _binds_step(node.orelse)
        elif isinstance(node, ast.Try):
            found = any(_binds_step(b) for b in (node.body, node.orelse, node.finalbody)) or any(
                _binds_step(h.body) for h in node.handlers)
        elif isinstance(node, ast.With):
            found = _binds_step(node.body)
        else:
            found = False
        if found:
            return True
    return False


def _defines_step(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), filename=path)
    except (SyntaxError, ValueError):
        return True  # the step() contract's run reports the error as it always has
    return _binds_step(tree.body)


def capture_script(path: str, output: str | None = None, *, time: str = "flops",
                   seed: int = 0, checkpoint=None) -> Capture:
    """Captures SCRIPT (see the module docstring); writes the trace to output if given.

    checkpoint: module paths under the script's model to run under
    torch.utils.checkpoint during the capture (see Capture and checkpoint.py).

    Returns the finished Capture. Raises CaptureError (one line) if the script
    cannot be captured.
    """
    if not os.path.isfile(path):
        raise CaptureError(f"{path}: no such script")
    checkpoint = read_plan(checkpoint)
    torch.manual_seed(seed)
    if _defines_step(path):
        cap = _capture_step(path, time, checkpoint)
    else:
        cap = _capture_as_it_is(path, time, checkpoint)
    if output is not None:
        cap.save(output)
    return cap


def _capture_step(path: str, time: str, checkpoint: list) -> Capture:
    try:
        namespace = runpy.run_path(path, run_name="__dtrcheck_capture__")
    except Exception as e:  # the user's code: any exception is its failure
        raise CaptureError(f"{_where(path, e.__traceback__)}: the script raised {_describe(e)}") from e
    model = namespace.get("model")
    if not isinstance(model, torch.nn.Module):
        what = "no 'model'" if model is None else f"'model' as a {type(model).__name__}"
        raise CaptureError(f"{path}: the script defines {what}; it must define model, a torch.nn.Module")
    step = namespace.get("step")
    if not callable(step):
        raise CaptureError(f"{path}: the script defines no function step() (one training step)")
    cap = Capture(None, model=model, time=time, checkpoint=checkpoint)
    try:
        with cap:
            loss = step()
            returned = type(loss).__name__
            is_tensor = isinstance(loss, torch.Tensor)
            del loss
    except CaptureError as e:
        raise CaptureError(f"{path}: {e}") from e
    except Exception as e:
        raise CaptureError(f"{_where(path, e.__traceback__)}: step() raised {_describe(e)}") from e
    if not is_tensor:
        raise CaptureError(f"{path}: step() returned {returned}; it must return the loss tensor")
    return cap


def _capture_as_it_is(path: str, time: str, checkpoint: list) -> Capture:
    cap = Capture(None, time=time, checkpoint=checkpoint)
    attribution = cap.attribution

    def open_at_first_model(module):
        if cap._mode is None and any(p.requires_grad for p in module.parameters()):
            attribution.on_top_level_call = None
            cap._open(module)

    def stop_after_step(optimizer):
        cap._stop()
        raise _FirstStepDone()

    attribution.on_top_level_call = open_at_first_model
    attribution.on_step_end = stop_after_step
    attribution.modules.install()  # before the script runs: its first forward opens the capture
    argv, sys_path = sys.argv[:], sys.path[:]
    sys.argv[:] = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except _FirstStepDone:
        pass
    except CaptureError as e:
        cap._stop(type(e))
        raise CaptureError(f"{path}: {e}") from e
    except SystemExit as e:
        if e.code not in (None, 0):
            cap._stop(type(e))
            raise CaptureError(f"{path}: the script exited with status {e.code}") from e
    except Exception as e:  # the user's code: any exception is its failure
        cap._stop(type(e))
        raise CaptureError(f"{_where(path, e.__traceback__)}: the script raised {_describe(e)}") from e
    finally:
        sys.argv[:], sys.path[:] = argv, sys_path
        attribution.modules.uninstall()
    if cap._mode is None:
        raise CaptureError(f"{path}: the script never called the forward of a torch.nn.Module with "
                           "parameters to train, so there is no step to capture")
    cap._stop()
    if not cap.recorder.backward_seen:
        raise CaptureError(f"{path}: the script never called backward() after the first forward of its "
                           f"model ({type(cap.model).__name__}), so there is no training step to capture")
    return cap
