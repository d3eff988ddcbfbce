"""Records the aten operators of a PyTorch program as a DTR trace.

The trace format is docs/trace_format.md; the C++ parser model/trace_parser.cc
reads it. How a PyTorch program maps onto it:

- A trace *name* stands for one tensor object (one TensorImpl). Every tensor
  an operator returns gets a fresh name ``xN`` (N counts names from 0); a
  tensor first seen as an argument becomes a CONSTANT (weights, inputs,
  optimizer state made before the capture) or, if a live named tensor already
  uses its storage (``p.data``, autograd's hidden copies), a COPY of that name.
- A name is RELEASEd when its tensor object dies (a weakref callback). PyTorch
  keeps the Python object of a tensor alive as long as C++ holds the tensor
  (autograd's saved tensors and gradient buffers included), so this is when
  the tensor itself goes. The RELEASE lines of tensors that died since the
  last operator are written before the next one, in the order they died.
- Sizes are storage sizes in bytes (``storage.nbytes()``), so a view that
  shares its argument's storage is an ALIAS of that argument, and a narrow
  view of a large buffer still counts the buffer.
- An operator that writes an argument (schema ``Tensor(a!)``: ``add_``,
  ``relu_``, ``copy_``) is a MUTATE of that argument: a new storage of the
  argument's storage size, which the argument's name is rebound to. Other live
  names on the same storage (the base of an in-place op on a view, the other
  views) are then rebound to it too, with COPY_FROM, so the old storage is
  released as it is in PyTorch, where there is only one. An operator that
  both writes arguments and returns new tensors is a CALL for its new
  results, carrying the TIME, then a MUTATE with TIME 0.
- A write into the storage of a CONSTANT (the optimizer updating a parameter,
  a running statistic) is *rebound* instead: the operator's CALL gets one more
  result, an ALIAS of the written argument (no new bytes), then ``COPY_FROM``
  rebinds the argument's name to it and the temporary name is RELEASEd. A
  MUTATE would add a new storage while the old one, pinned as a constant,
  stays in memory for good in simrd's RuntimeV2 (RuntimeV1 frees it), so a
  trace with an optimizer step would need more memory than its own baseline.
  The alias makes the storage graph cyclic (the gradient's storage, computed
  from the parameter, becomes a parent of the parameter's), but every such
  cycle passes through a pinned storage, which is never evicted, so simrd's
  evicted regions never walk it. A written argument whose storage changed is
  rebound the same way (``set_``: an ALIAS of the argument whose storage it
  took; ``resize_`` to a new size: a new storage of that size). A storage
  swapped outside any operator (``x.data = y``) is rebound with COPY_FROM
  before the tensor's next use.
- Operators that return no new tensor and write nothing (``item``,
  ``is_nonzero``, ``equal``) leave no line; nor do the profiler's own
  operators (namespace ``profiler``).

Invariants: every live name is in exactly one storage's ``names`` list, and a
storage is in the table exactly while it has a live name; ``live_bytes`` is
the sum of the table's storage sizes.
"""

from __future__ import annotations

import functools
import json
import time
import weakref
from dataclasses import dataclass, field

import torch
from torch.utils._pytree import tree_flatten

from . import cost

# Operators of these namespaces are run but not recorded.
_SKIPPED_NAMESPACES = ("profiler",)


class CaptureError(Exception):
    """A program that cannot be captured; the message is one line."""


@dataclass
class _Entry:
    name: str
    ref: weakref.ref


@dataclass
class _Storage:
    nbytes: int
    names: list = field(default_factory=list)  # live names on it, oldest first
    constant: bool = False  # made by a CONSTANT line: pinned in the replay


class _StorageKey:
    """A storage's identity, its address, holding the storage alive.

    An address names a storage only while the storage lives: once freed, a
    new storage may get it. The recorder keeps a key for as long as a live
    name is on the storage (and its in-flight lists), so the storage cannot be
    freed and its address reused meanwhile, even when a tensor's storage was
    swapped outside any operator and its name is rebound only at its next use.
    """

    __slots__ = ("address", "storage")

    def __init__(self, address: int, storage):
        self.address = address
        self.storage = storage

    def __eq__(self, other) -> bool:
        return isinstance(other, _StorageKey) and other.address == self.address

    def __hash__(self) -> int:
        return hash(self.address)


def storage_of(t: torch.Tensor):
    """(identity, size in bytes) of the storage under t."""
    get = getattr(t, "untyped_storage", None)
    try:
        s = get() if get is not None else t.storage()
        return _StorageKey(s._cdata, s), int(s.nbytes())
    except (RuntimeError, NotImplementedError, AttributeError):
        # No storage (sparse and other layouts): the tensor is its own storage.
        return ("tensor", id(t)), int(t.numel() * t.element_size())


class Recorder:
    """Turns dispatched operators into trace lines (see the module docstring).

    clock: "flops" (a deterministic estimate) or "measured" (nanoseconds);
    see cost.py. attribution: an Attribution (attribution.py) whose keys go
    on every CALL and MUTATE line, or None for none.
    """

    def __init__(self, clock: str = "flops", attribution=None):
        if clock not in cost.CLOCKS:
            raise CaptureError(f"time must be one of {', '.join(cost.CLOCKS)}, got '{clock}'")
        self.clock = clock
        self.attribution = attribution
        self.lines: list[str] = []
        self.backward_seen = False
        self.live_bytes = 0
        self.peak_bytes = 0  # largest live_bytes after any operator
        self.operators = 0   # operators that left lines
        self.skipped = 0     # operators that left none
        self.constants = 0
        self.closed = False
        self._next = 0
        self._by_id: dict[int, _Entry] = {}
        self._key_of: dict[str, object] = {}  # live name -> storage identity
        self._storages: dict[object, _Storage] = {}
        self._pending: list[str] = []  # names whose tensor died since the last flush
        self._memory_line: dict[str, int] = {}  # name -> index of the MEMORY line that sized it
        self._roles: dict[str, str] = {}  # name -> ROLE, added to its MEMORY line by close()
        self._constant_names: list[str] = []
        self._emit({"ANNOTATION": "START", "INSTRUCTION": "ANNOTATE"})

    # ---- lines -----------------------------------------------------------

    def _emit(self, obj: dict) -> None:
        # Sorted keys, no spaces: the style of the published DTR logs.
        self.lines.append(json.dumps(obj, sort_keys=True, separators=(",", ":")))

    def _fresh(self) -> str:
        name = f"x{self._next}"
        self._next += 1
        return name

    def flush(self) -> None:
        """Writes the RELEASE lines of tensors that died since the last call."""
        pending, self._pending = self._pending, []
        for name in pending:
            self._emit({"INSTRUCTION": "RELEASE", "NAME": name})

    def annotate_backward(self) -> None:
        """The BACKWARD annotation, once, before the first backward pass."""
        if self.backward_seen or self.closed:
            return
        self.flush()
        self.backward_seen = True
        self._emit({"ANNOTATION": "BACKWARD", "INSTRUCTION": "ANNOTATE"})

    def _memory(self, name: str, nbytes: int) -> None:
        self._memory_line[name] = len(self.lines)
        self._emit({"INSTRUCTION": "MEMORY", "MEMORY": str(nbytes), "NAME": name})

    def set_roles(self, pairs) -> None:
        """Gives the names of tensors a ROLE (pairs of tensor, role); a tensor
        never named, or already given a role, is passed over."""
        for t, role in pairs:
            e = self._lookup(t)
            if e is not None and e.name not in self._roles:
                self._roles[e.name] = role

    def close(self, roles: bool = False) -> None:
        """Ends the trace: later deaths are not recorded; live names stay referenced.

        roles: write the ROLE key on MEMORY lines: those set_roles gave, and
        "input" for every other CONSTANT.
        """
        self.flush()
        self.closed = True
        self._by_id.clear()  # drops the weakrefs, so their callbacks never run
        if roles:
            for name in self._constant_names:
                self._roles.setdefault(name, "input")
            for name, role in self._roles.items():
                i = self._memory_line[name]
                line = json.loads(self.lines[i])
                line["ROLE"] = role
                self.lines[i] = json.dumps(line, sort_keys=True, separators=(",", ":"))

    # ---- names and storages ---------------------------------------------

    def _lookup(self, t: torch.Tensor):
        e = self._by_id.get(id(t))
        if e is not None and e.ref() is t:
            return e
        return None

    def _attach(self, name: str, key, nbytes: int, constant: bool = False) -> None:
        st = self._storages.get(key)
        if st is None:
            st = self._storages[key] = _Storage(nbytes, constant=constant)
            self.live_bytes += nbytes
        st.names.append(name)
        self._key_of[name] = key

    def _move(self, name: str, key, nbytes: int) -> None:
        """Moves a live name to storage key (of nbytes bytes now)."""
        old = self._key_of[name]
        if old == key:
            st = self._storages[key]
            self.live_bytes += nbytes - st.nbytes  # resized in place
            st.nbytes = nbytes
            return
        self._detach(name)
        self._attach(name, key, nbytes)

    def _detach(self, name: str) -> None:
        key = self._key_of.pop(name, None)
        if key is None:
            return
        st = self._storages[key]
        st.names.remove(name)
        if not st.names:
            del self._storages[key]
            self.live_bytes -= st.nbytes

    def _died(self, name: str, ident: int, ref: weakref.ref) -> None:
        if self.closed:
            return
        e = self._by_id.get(ident)
        if e is not None and e.ref is ref:
            del self._by_id[ident]
        self._detach(name)
        self._pending.append(name)

    def _register(self, t: torch.Tensor, key, nbytes: int, constant: bool = False) -> str:
        name = self._fresh()
        ident = id(t)
        ref = weakref.ref(t, functools.partial(self._died, name, ident))
        self._by_id[ident] = _Entry(name, ref)
        self._attach(name, key, nbytes, constant)
        return name

    def _rebind_outside(self, e: _Entry, key, nbytes: int) -> None:
        # The tensor behind e now uses another storage, changed outside any
        # operator (`x.data = y`): rebind its name to a tensor of that storage.
        st = self._storages.get(key)
        if st is not None and st.names:
            self._emit({"DST": e.name, "INSTRUCTION": "COPY_FROM", "SRC": st.names[0]})
            self._move(e.name, key, nbytes)
            return
        tmp = self._fresh()
        self.constants += 1
        self._constant_names.append(tmp)
        self._emit({"INSTRUCTION": "CONSTANT", "NAME": tmp})
        self._memory(tmp, nbytes)
        self._emit({"DST": e.name, "INSTRUCTION": "COPY_FROM", "SRC": tmp})
        self._emit({"INSTRUCTION": "RELEASE", "NAME": tmp})
        self._detach(e.name)
        self._attach(e.name, key, nbytes, constant=True)

    def name_input(self, t: torch.Tensor) -> str:
        """The name of a tensor argument, declaring it first if it is new."""
        key, nbytes = storage_of(t)
        e = self._lookup(t)
        if e is not None:
            if self._key_of[e.name] != key:
                self._rebind_outside(e, key, nbytes)
            return e.name
        st = self._storages.get(key)
        src = st.names[0] if st is not None and st.names else None
        name = self._register(t, key, nbytes, constant=src is None)
        if src is not None:
            self._emit({"DST": name, "INSTRUCTION": "COPY", "SRC": src})
        else:
            self.constants += 1
            self._constant_names.append(name)
            self._emit({"INSTRUCTION": "CONSTANT", "NAME": name})
            self._memory(name, nbytes)
            self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        return name

    def declare(self, tensors) -> None:
        """Names tensors up front (a model's parameters and buffers), in order."""
        self.flush()
        for t in tensors:
            self.name_input(t)

    # ---- operators -------------------------------------------------------

    @staticmethod
    def _written(func, args, kwargs) -> list:
        """Tensors the operator writes (schema Tensor(a!)), each once, in order."""
        out, seen = [], set()
        for i, a in enumerate(func._schema.arguments):
            info = a.alias_info
            if info is None or not info.is_write:
                continue
            value = args[i] if i < len(args) and not a.kwarg_only else kwargs.get(a.name)
            for t in tree_flatten(value)[0]:
                if isinstance(t, torch.Tensor) and id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
        return out

    def on_op(self, func, args, kwargs):
        """Runs one dispatched operator and records it; returns its result."""
        self.flush()
        if self.attribution is not None:
            self.attribution.resolve()
        if func.namespace in _SKIPPED_NAMESPACES:
            return func(*args, **kwargs)
        args = _numbers_as_tensors(func, args)
        name = func.overloadpacket.__name__
        inputs = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        arg_names = [self.name_input(t) for t in inputs]
        index_of: dict[int, int] = {}
        for i, t in enumerate(inputs):
            index_of.setdefault(id(t), i)
        in_keys = [self._key_of[n] for n in arg_names]  # before the operator runs
        written = self._written(func, args, kwargs)

        start = time.perf_counter_ns()
        out = func(*args, **kwargs)
        elapsed = time.perf_counter_ns() - start

        # New results: (tensor, alias index or -1, nbytes, size line).
        results = []
        new_keys = set()
        for o in tree_flatten(out)[0]:
            if not isinstance(o, torch.Tensor) or id(o) in index_of or self._lookup(o) is not None:
                continue  # not a tensor, an argument returned as is, or an older tensor
            key, nbytes = storage_of(o)
            alias = in_keys.index(key) if key in in_keys else -1
            if alias == -1 and key in self._storages:
                raise CaptureError(
                    f"operator {func.name()} returned a tensor sharing the storage of "
                    f"'{self._storages[key].names[0]}', which is not among its arguments: "
                    "the trace format cannot express that")
            shared = alias == -1 and key in new_keys  # a second result on one new storage
            new_keys.add(key)
            results.append((o, alias, key, nbytes, 0 if shared else nbytes))

        # Written arguments: mutated, or rebound (see the module docstring).
        mutated, rebound = [], []
        for t in written:
            i = index_of[id(t)]
            key, nbytes = storage_of(t)
            old = self._storages[in_keys[i]]
            if key == in_keys[i] and nbytes == old.nbytes:
                if old.constant:
                    rebound.append((arg_names[i], i, key, nbytes))
                else:
                    mutated.append(i)
            else:
                alias = -1 if key == in_keys[i] or key not in in_keys else in_keys.index(key)
                rebound.append((arg_names[i], alias, key, nbytes))

        if not results and not rebound and not mutated:
            self.skipped += 1
            return out
        self.operators += 1
        all_views = not written and all(r[1] != -1 for r in results)
        if self.clock == "measured":
            spent = max(1, elapsed)
        else:
            spent = cost.estimate(name, args, inputs, [r[0] for r in results], all_views)

        keys = {}
        if self.attribution is not None:
            keys = self.attribution.keys(inputs, [r[0] for r in results] + written)

        if results or rebound:
            names = [self._register(o, key, nbytes) for o, _, key, nbytes, _ in results]
            temps = [self._fresh() for _ in rebound]
            self._emit({"ARGS": arg_names, "INSTRUCTION": "CALL", "NAME": name,
                        "RESULT": names + temps, "TIME": str(spent), **keys})
            spent = 0
            sizes = [(n, a, m) for n, (_, a, _, _, m) in zip(names, results)]
            sizes += [(n, a, nbytes) for n, (_, a, _, nbytes) in zip(temps, rebound)]
            for n, alias, size in sizes:
                self._memory(n, size)
                self._emit({"ALIAS": str(alias), "INSTRUCTION": "ALIAS", "NAME": n})
            for tmp, (arg, _, key, nbytes) in zip(temps, rebound):
                self._emit({"DST": arg, "INSTRUCTION": "COPY_FROM", "SRC": tmp})
                self._emit({"INSTRUCTION": "RELEASE", "NAME": tmp})
                self._move(arg, key, nbytes)
        if mutated:
            if results or rebound:  # the CALL line above starts the module calls
                keys.pop("ENTER", None)
            self._emit({"ARGS": arg_names, "INSTRUCTION": "MUTATE", "MUTATE": mutated,
                        "NAME": name, "TIME": str(spent), **keys})
            for i in mutated:
                for other in list(self._storages[in_keys[i]].names):
                    if other != arg_names[i]:
                        self._emit({"DST": other, "INSTRUCTION": "COPY_FROM", "SRC": arg_names[i]})
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        return out


_NUMBER_DTYPES = ((bool, torch.bool), (int, torch.int64), (float, torch.float64), (complex, torch.complex128))


def _numbers_as_tensors(func, args: tuple) -> tuple:
    """For an operator with no tensor argument: args with a Python number
    where the schema wants a Tensor replaced by a 0-dim tensor of Python's
    dtype for it; any other operator's args as they are.

    torch 1.13 hands a dispatch mode a wrapped number (the tensor PyTorch
    makes of the 2.0 in ``x * 2.0``) as the Python number. Beside a tensor
    (``mul``), the operator takes it back as it is, and the trace has no line
    for it; alone, the operator fails: torch.utils.checkpoint's ``detach()``
    of every tensor autograd saves, mul's ``other`` included. The tensor made
    here is a CONSTANT of the trace, where it is first used."""
    if any(isinstance(a, torch.Tensor) for a in tree_flatten(args)[0]):
        return args
    schema = func._schema.arguments
    out = None
    for i, value in enumerate(args):
        if i >= len(schema) or not isinstance(value, (bool, int, float, complex)):
            continue
        if str(schema[i].type) != "Tensor":
            continue
        dtype = next(d for kind, d in _NUMBER_DTYPES if isinstance(value, kind))
        if out is None:
            out = list(args)
        out[i] = torch.tensor(value, dtype=dtype)
    return args if out is None else tuple(out)
