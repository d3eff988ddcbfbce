"""`python3 -m dtrcheck.capture SCRIPT.py -o model.log`: the script contract.

SCRIPT.py is run once (as a module named ``__dtrcheck_capture__``, so an
``if __name__ == "__main__":`` block in it does not run) after
``torch.manual_seed(seed)``. It must define, at module level:

- ``model``: the torch.nn.Module being trained. Its parameters, then its
  buffers, are the trace's first CONSTANTs.
- ``step()``: a function of no arguments that runs one training step (the
  forward pass, ``loss.backward()``, and usually ``optimizer.step()``) and
  returns the loss tensor.

Everything at module level (building the model, the optimizer, the data) runs
before the capture; only ``step()`` is recorded. Inputs and any other tensor
made before the capture become CONSTANTs when the step first uses them.

A script that cannot be captured is one CaptureError, whose message names the
script (and the line, for an exception), and no trace is written: the script
raises, defines no ``model`` or ``step``, its step never calls backward, or
returns something other than a tensor.
"""

from __future__ import annotations

import os
import runpy
import traceback

import torch

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


def capture_script(path: str, output: str | None = None, *, time: str = "flops",
                   seed: int = 0) -> Capture:
    """Runs SCRIPT's step() under a Capture; writes the trace to output if given.

    Returns the finished Capture. Raises CaptureError (one line) if the script
    breaks the contract in the module docstring.
    """
    if not os.path.isfile(path):
        raise CaptureError(f"{path}: no such script")
    torch.manual_seed(seed)
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
    cap = Capture(None, model=model, time=time)
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
    if output is not None:
        cap.save(output)
    return cap
