"""Capture a PyTorch training step as a DTR trace (docs/trace_format.md).

    from dtrcheck.capture import Capture
    with Capture("model.log", model=model):
        loss_fn(model(x), y).backward()
        optimizer.step()

or, for a script defining ``model`` and ``step()``, or a training script as
it is (captured from its first forward to the end of its first optimizer step):

    /usr/bin/python3 -m dtrcheck.capture SCRIPT.py -o model.log

With ``checkpoint=["layer1", "layer2"]`` (``--checkpoint layer1,layer2``) the
named submodules run under torch.utils.checkpoint during the capture only
(checkpoint.py), to check what a checkpoint plan saves.

See docs/python.md for the contract and what each trace line means.
"""

from .cost import CLOCKS
from .recorder import CaptureError, Recorder
from .script import capture_script
from .session import Capture, write_atomically

__all__ = ["CLOCKS", "Capture", "CaptureError", "Recorder", "capture_script", "write_atomically"]
