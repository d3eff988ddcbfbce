"""The TIME of a captured operator.

Two clocks, chosen with ``time=`` (``--time`` on the command line):

``"flops"`` (the default): a deterministic estimate from shapes alone, so the
same script gives the same trace on every machine and every run.

- matrix products and convolutions: 2 x multiply-accumulates
  (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``addbmm``, ``mv``, ``addmv``,
  ``dot``, ``vdot``, ``convolution``; ``convolution_backward`` counts one
  forward convolution per gradient it computes, plus the bias gradient);
- an operator whose every result is a view of an argument (``view``, ``t``,
  ``detach``, ``slice``, ...): 1;
- everything else: the number of elements it reads and writes (the numel of
  its tensor arguments plus that of its results), a memory-bound cost;
- never less than 1.

``"measured"``: wall-clock nanoseconds of the operator on this machine
(``time.perf_counter_ns`` around the call), at least 1. Not reproducible:
use it to compare budgets on one trace, not to compare captures.
"""

from __future__ import annotations

import math

import torch

CLOCKS = ("flops", "measured")


def _numel(t: torch.Tensor) -> int:
    return int(t.numel())


def _conv_macs(inp: torch.Tensor, weight: torch.Tensor, out_numel: int, transposed: bool) -> int:
    # weight is [C_out, C_in / groups, k...] (or [C_in, C_out / groups, k...]
    # transposed): each output (input, when transposed) element takes
    # prod(weight.shape[1:]) multiply-accumulates.
    per = math.prod(weight.shape[1:])
    return (inp.numel() if transposed else out_numel) * per


def _product_macs(name: str, args) -> int | None:
    """Multiply-accumulates of the matrix-product family, None for other ops."""
    try:
        if name == "mm":
            a, b = args[0], args[1]
            return a.shape[0] * a.shape[1] * b.shape[1]
        if name in ("addmm",):
            a, b = args[1], args[2]
            return a.shape[0] * a.shape[1] * b.shape[1]
        if name == "bmm":
            a, b = args[0], args[1]
            return a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
        if name in ("baddbmm", "addbmm"):
            a, b = args[1], args[2]
            return a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
        if name == "mv":
            return args[0].numel()
        if name == "addmv":
            return args[1].numel()
        if name in ("dot", "vdot"):
            return args[0].numel()
    except (AttributeError, IndexError, TypeError):
        return None
    return None


def estimate(name: str, args, inputs, outputs, all_views: bool) -> int:
    """The deterministic TIME of one operator (see the module docstring).

    name: the operator's name (``func.overloadpacket.__name__``); args: its
    positional arguments as dispatched; inputs / outputs: its tensor
    arguments and results, flattened; all_views: every result is a view of an
    argument and nothing is written.
    """
    if all_views:
        return 1
    macs = _product_macs(name, args)
    if macs is None and name in ("convolution", "_convolution") and len(args) > 6:
        out_numel = sum(_numel(o) for o in outputs)
        macs = _conv_macs(args[0], args[1], out_numel, bool(args[6]))
    if macs is None and name == "convolution_backward" and len(args) > 10:
        grad_out, inp, weight = args[0], args[1], args[2]
        transposed, mask = bool(args[7]), args[10]
        one = _conv_macs(inp, weight, grad_out.numel(), transposed)
        macs = one * (int(bool(mask[0])) + int(bool(mask[1])))
        if mask[2]:
            macs += grad_out.numel()
    if macs is not None:
        return max(1, 2 * int(macs))
    return max(1, sum(_numel(t) for t in inputs) + sum(_numel(t) for t in outputs))
