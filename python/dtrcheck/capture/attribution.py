"""Where each recorded operator comes from, and what each long-lived tensor is.

The keys written on the trace lines are listed in docs/trace_format.md
("Attribution keys"). How they are found, under PyTorch 1.13:

- MODULE: global forward pre/post hooks keep the stack of nn.Module calls;
  an operator run in a forward is attributed to the innermost module on the
  stack that has a name under the model (``layer3.1.conv2``; ``""`` for the
  model itself). A module outside the model names nothing: its operators
  take the innermost named module around it, or no MODULE at all.
- The autograd node of a forward operator: the node is attached to the
  operator's results only after the dispatch mode returns, so the results
  (and written arguments) of each operator are kept as weak references and
  their ``grad_fn`` is looked at when the next operator starts (or the
  backward pass does). The first operator to give a node its grad_fn names
  it: its (MODULE, SOURCE) goes into the node's ``metadata`` dict, so the
  node carries it and nothing here keeps a node alive. A view written in
  place also names its base's new node (CopySlices). (The profiler links
  forward and backward by the node's sequence number, which PyTorch 1.13
  does not show to Python.)
- Backward operators: when a backward pass starts, every node reachable
  from its roots gets a pre-hook (the node starts: its operators are the
  node's) and a post-hook (it ended: later operators belong to no node
  until the next pre-hook, except the engine's sum of a gradient the node
  returned with another one, which is the receiving node's). AccumulateGrad
  nodes get only the pre-hook,
  attributed to the module of their parameter: a post-hook would keep a
  second reference to the incoming gradient while the node runs, and
  AccumulateGrad steals the gradient only when it holds the sole reference,
  so the trace itself would change.
- SOURCE: the innermost Python frame outside torch's package and outside
  dtrcheck.capture, as ``file:line`` (relative to the current directory
  when under it). For an operator run by a node, the SOURCE of the forward
  operator that made the node.
- PHASE: see ``phase``.
- ENTER: the named modules whose call the pre-hook saw since the operator
  recorded before, on the next forward operator: where each module call
  starts, so that a plan names only modules the step calls, once.

Invariant: ``modules.paths`` has one entry per module call in progress
(pushed by the pre-hook, popped by the post-hook), each the innermost named
path at that depth or None, and one more for each checkpointed forward
running (checkpoint.py pushes the module's path around it, so that its
recomputation in the backward, which calls the forward without the hooks,
is attributed to the module).
"""

from __future__ import annotations

import functools
import os
import sys
import weakref

import torch

# The key under which a node's (module, source) is stored in its metadata.
_NODE_KEY = "dtrcheck.capture"
_HOOKED_KEY = "dtrcheck.capture.hooked"

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_CAPTURE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_UNSEEN = object()


class ModuleStack:
    """The nn.Module calls in progress, as the paths the trace names them by."""

    def __init__(self):
        self.paths: list = []
        self.entered: list = []   # named modules called since the last operator
        self.on_top_level = None  # called with a module entered at depth 0
        self._named: dict = {}    # id(module) -> (module, path)
        self._handles = []

    def name_under(self, root) -> None:
        """Names every module by its qualified name under root ("" for root)."""
        self._named = {id(m): (m, path) for path, m in root.named_modules()}

    def path_of(self, module):
        named = self._named.get(id(module))
        return named[1] if named is not None and named[0] is module else None

    def current(self):
        return self.paths[-1] if self.paths else None

    def install(self) -> None:
        if not self._handles:
            hooks = torch.nn.modules.module
            self._handles = [hooks.register_module_forward_pre_hook(self._enter),
                             hooks.register_module_forward_hook(self._leave)]

    def uninstall(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def _enter(self, module, inputs):
        if not self.paths and self.on_top_level is not None:
            self.on_top_level(module)
        path = self.path_of(module)
        if path is not None:
            self.entered.append(path)
        self.paths.append(path if path is not None else self.current())

    def _leave(self, module, inputs, output):
        if self.paths:
            self.paths.pop()


class Attribution:
    """The MODULE, PHASE and SOURCE of each operator as the Recorder records it,
    and the ROLE of the tensors named in the trace when it ends."""

    def __init__(self):
        self.modules = ModuleStack()
        self.modules.on_top_level = self._top_level_call
        self.root = None          # the model: names modules and parameters
        self.optimizers: list = []
        self.on_top_level_call = None  # called with each module entered at depth 0, before it is pushed
        self.on_step_end = None   # called with an optimizer at the end of each of its steps
        self.active = False
        self._param_names: dict = {}  # id(parameter) -> (parameter, qualified name)
        self._backward_depth = 0
        self._optimizer_depth = 0
        self._after_backward = False  # a backward ended since the last top-level module call
        self._stack_at_backward = 0
        self._node = None         # (module, source) of the node running, or None
        self._handoff: list = []  # (weakref to a gradient a node returned, tag of its edge's node)
        self._pending: list = []  # weakrefs to the last forward operator's results
        self._pending_tag = None
        self._files: dict = {}    # co_filename -> shown path, or None for a skipped file
        self._cwd = os.getcwd() + os.sep
        self._restore: list = []  # (owner, attribute, original) of every patch

    # ---- setup -----------------------------------------------------------

    def set_root(self, model) -> None:
        self.root = model
        self.modules.name_under(model)
        self._param_names = {id(p): (p, n) for n, p in model.named_parameters()}

    def start(self) -> None:
        """Installs the hooks and patches; operators are attributed from now on."""
        self.modules.install()
        self._patch_optimizer()
        self.active = True

    def stop(self) -> None:
        """Removes every hook and patch start() installed."""
        self.active = False
        self.resolve()
        self.modules.uninstall()
        for owner, attribute, original in reversed(self._restore):
            setattr(owner, attribute, original)
        self._restore = []

    def _patch(self, owner, attribute, make) -> None:
        original = owner.__dict__[attribute]
        self._restore.append((owner, attribute, original))
        replacement = make(original)
        functools.update_wrapper(replacement, original)
        setattr(owner, attribute, replacement)

    def _patch_optimizer(self) -> None:
        # Optimizer.step and Optimizer.zero_grad run inside
        # `with torch.autograd.profiler.record_function("Optimizer.step#SGD.step")`
        # (torch/optim/optimizer.py), and every step ends with
        # obj._optimizer_step_code(), its hook for the profiler. A
        # record_function made and never left would leave the count raised.
        me = self

        def counted_init(original):
            # record_function makes its handle, torch.zeros(1), in __init__.
            def __init__(rf, name, *args, **kwargs):
                counted = me.active and isinstance(name, str) and name.startswith("Optimizer.")
                if counted:
                    me._optimizer_depth += 1
                original(rf, name, *args, **kwargs)
                rf._dtrcheck_optimizer = counted
            return __init__

        def counted_exit(original):
            def __exit__(rf, *exc):
                try:
                    return original(rf, *exc)
                finally:
                    if getattr(rf, "_dtrcheck_optimizer", False):
                        me._optimizer_depth -= 1
            return __exit__

        def step_code(original):
            def _optimizer_step_code(optimizer):
                original(optimizer)
                if me.active:
                    if all(o is not optimizer for o in me.optimizers):
                        me.optimizers.append(optimizer)
                    if me.on_step_end is not None:
                        me.on_step_end(optimizer)
            return _optimizer_step_code

        def zero_grad(original):
            def module_zero_grad(module, *args, **kwargs):
                me._optimizer_depth += 1
                try:
                    return original(module, *args, **kwargs)
                finally:
                    me._optimizer_depth -= 1
            return module_zero_grad

        rf = torch.autograd.profiler.record_function
        self._patch(rf, "__init__", counted_init)
        self._patch(rf, "__exit__", counted_exit)
        self._patch(torch.optim.Optimizer, "_optimizer_step_code", step_code)
        self._patch(torch.nn.Module, "zero_grad", zero_grad)

    def _top_level_call(self, module) -> None:
        if self.on_top_level_call is not None:
            self.on_top_level_call(module)
        self._after_backward = False

    # ---- per operator ----------------------------------------------------

    def phase(self) -> str:
        """backward inside torch.autograd.backward/grad; optimizer inside an
        Optimizer's step or zero_grad, nn.Module.zero_grad, or after a
        backward pass ended and before the next top-level module call;
        forward otherwise."""
        if self._backward_depth:
            return "backward"
        if self._optimizer_depth or self._after_backward:
            return "optimizer"
        return "forward"

    def source(self):
        """'file:line' of the innermost frame outside torch and this package."""
        f = sys._getframe(1)
        files = self._files
        while f is not None:
            name = f.f_code.co_filename
            shown = files.get(name, _UNSEEN)
            if shown is _UNSEEN:
                shown = files[name] = self._shown(name)
            if shown is not None:
                return f"{shown}:{f.f_lineno}"
            f = f.f_back
        return None

    def _shown(self, filename: str):
        full = os.path.abspath(filename)
        if full.startswith(_TORCH_DIR) or full.startswith(_CAPTURE_DIR):
            return None
        return full[len(self._cwd):] if full.startswith(self._cwd) else filename

    def keys(self, inputs, tensors) -> dict:
        """The attribution keys of the operator being recorded: inputs are its
        tensor arguments, tensors its results and written arguments (whose
        autograd node it makes)."""
        phase = self.phase()
        entered, self.modules.entered = self.modules.entered, []
        if phase == "backward" and len(self.modules.paths) <= self._stack_at_backward:
            tag = self._node if self._node is not None else self._engine_tag(inputs)
            module, source = tag if tag is not None else (None, None)
            if source is None:
                source = self.source()
        else:
            module, source = self.modules.current(), self.source()
            if phase != "backward":
                self._pending = [weakref.ref(t) for t in tensors]
                self._pending_tag = (module, source)
        out = {"PHASE": phase}
        if module is not None:
            out["MODULE"] = module
        if source is not None:
            out["SOURCE"] = source
        if entered and phase == "forward":
            out["ENTER"] = entered
        return out

    def resolve(self) -> None:
        """Tags the autograd nodes of the last operator's results with its
        (module, source); call before the next operator runs."""
        pending, self._pending = self._pending, []
        for ref in pending:
            t = ref()
            if t is None:
                continue
            self._tag(t.grad_fn)
            if t._is_view():
                # A view written in place gives its base a new node
                # (CopySlices), which runs the in-place operator's backward.
                self._tag(t._base.grad_fn)

    def _tag(self, node) -> None:
        if node is not None:
            md = node.metadata
            if _NODE_KEY not in md:
                md[_NODE_KEY] = self._pending_tag

    # ---- backward --------------------------------------------------------

    def backward_started(self, roots):
        """Hooks the nodes reachable from roots; returns what backward_ended restores."""
        self.resolve()
        self._hook_nodes(roots)
        saved = (self._node, self._stack_at_backward)
        self._node = None
        self._handoff = []
        self._stack_at_backward = len(self.modules.paths)
        self._backward_depth += 1
        return saved

    def backward_ended(self, saved) -> None:
        self._backward_depth -= 1
        self._handoff = []
        self._node, self._stack_at_backward = saved
        if not self._backward_depth:
            self._after_backward = True

    def _hook_nodes(self, roots) -> None:
        todo = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        if todo and not hasattr(todo[0], "register_prehook"):
            return  # a PyTorch without node pre-hooks: backward operators run by no known node
        seen = {id(n): n for n in todo}  # holds the nodes while they are walked
        while todo:
            node = todo.pop()
            edges = [nxt for nxt, _ in node.next_functions]
            for nxt in edges:
                if nxt is not None and id(nxt) not in seen:
                    seen[id(nxt)] = nxt
                    todo.append(nxt)
            md = node.metadata
            if md.get(_HOOKED_KEY):
                continue
            md[_HOOKED_KEY] = True
            node.register_prehook(functools.partial(self._node_started, self._tag_of(node)))
            if getattr(node, "variable", None) is None:  # AccumulateGrad: no post-hook (see above)
                node.register_hook(functools.partial(self._node_ended, [self._tag_of(n) for n in edges]))

    def _tag_of(self, node):
        """(module, source) of the operators a node runs; None if unknown."""
        if node is None:
            return None
        variable = getattr(node, "variable", None)
        if variable is not None:  # AccumulateGrad: its parameter's module, run where backward was called
            module = self._module_of_parameter(variable)
            return None if module is None else (module, None)
        return node.metadata.get(_NODE_KEY)

    def _module_of_parameter(self, p):
        named = self._param_names.get(id(p))
        if named is None or named[0] is not p:
            return None
        return named[1].rpartition(".")[0]

    def _node_started(self, tag, grads):
        if self.active:
            self._node = tag
            self._handoff = []

    def _node_ended(self, edge_tags, grad_inputs, grad_outputs):
        # The engine now adds each gradient the node returned into the input
        # buffer of the node at the other end of its edge: an `add` taking
        # one of them is that node's.
        if self.active:
            self._node = None
            self._handoff = [(weakref.ref(g), tag) for g, tag in zip(grad_inputs, edge_tags)
                             if tag is not None and isinstance(g, torch.Tensor)]

    def _engine_tag(self, inputs):
        for ref, tag in self._handoff:
            g = ref()
            if g is not None and any(t is g for t in inputs):
                return tag
        return None

    # ---- roles -----------------------------------------------------------

    def roles(self) -> list:
        """(tensor, ROLE) pairs, most specific first: the model's parameters
        and buffers, the gradients of the model's parameters and of those the
        optimizers seen stepping optimize, those optimizers' state. A
        parameter outside the model has no name in its roles."""
        out = []
        names = {}
        if self.root is not None:
            for n, p in self.root.named_parameters():
                names[id(p)] = n
                out.append((p, f"parameter {n}"))
            for n, b in self.root.named_buffers():
                out.append((b, f"buffer {n}"))
        params = [p for _, (p, _) in self._param_names.items()]
        for opt in self.optimizers:
            for group in opt.param_groups:
                params.extend(group["params"])

        def named(kind, p):
            n = names.get(id(p))
            return f"{kind} {n}" if n is not None else kind

        seen = set()
        for p in params:
            if id(p) in seen:
                continue
            seen.add(id(p))
            if id(p) not in names:
                out.append((p, "parameter"))
            if p.grad is not None:
                out.append((p.grad, named("gradient", p)))
        for opt in self.optimizers:
            for group in opt.param_groups:
                for p in group["params"]:
                    for key, value in opt.state.get(p, {}).items():
                        if isinstance(value, torch.Tensor):
                            out.append((value, named(f"optimizer {key}", p)))
        return out
