"""Gradient checking against PyTorch autograd: shared machinery.

The per-op checks (test_grad_nn.py, test_grad_elementwise.py,
test_grad_layout.py, test_grad_losses.py) and test_grad_models.py compile
ONNX graphs with `tidalc --emit mlir --stop-after tidal-autodiff`, evaluate
the resulting `@train_step` with `tidal-eval`, and compare the loss, the
gradients and the new BatchNorm running statistics with PyTorch (float64) to
1e-4 relative (SPEC section 5: ||ours - ref|| / ||ref||).

An op case (`Case`) is a tiny graph: its float inputs are initializers
(trainable parameters), its integer operands are constant initializers or
graph inputs, and each output it names is weighed by its own fixed random
tensor C (a graph input), loss = sum_k ReduceSum(out_k * C_k), so every
output element gets a different upstream gradient. Cases of one opset are
batched into one model (their losses added), so that one tidalc and one
tidal-eval run check many cases; when a batched model fails to compile or
evaluate, each case is run on its own to name the ones at fault.
"""

import json
import os
import re
import tempfile
import zlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import support

TOLERANCE = 1e-4  # SPEC section 5
IR_VERSION = 8
TOOLS = ("tidalc", "tidal-eval")


def skip_reason():
    return support.skip_reason(*TOOLS)


def rng_for(name: str) -> np.random.Generator:
    """A numpy generator seeded from `name` (stable across runs)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def rel_err(ours, ref) -> float:
    """||ours - ref|| / ||ref|| (absolute when ref is zero)."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return float("inf")
    if not np.all(np.isfinite(ours)):
        return float("inf")
    diff = float(np.linalg.norm((ours - ref).ravel()))
    norm = float(np.linalg.norm(ref.ravel()))
    return diff / norm if norm > 0 else diff


# --- reading tidalc's MLIR ----------------------------------------------------


def function_arguments(mlir: str, func: str = "train_step") -> List[Tuple[str, Optional[str], Optional[str]]]:
    """[(type, tidal.name, role)] of `func.func @func`'s arguments."""
    args = []
    for ty, attrs in support.main_arguments(mlir, func):
        role = support.arg_attr(attrs, "tidal.role")
        rm = re.fullmatch(r"#tidal<role (\w+)>", role or "")
        args.append((ty, support.arg_attr(attrs, "tidal.name"), rm.group(1) if rm else role))
    return args


# --- running the tools --------------------------------------------------------


class ToolFailure(Exception):
    """tidalc or tidal-eval failed; the message says which and how."""


@dataclass
class StepResult:
    loss: Optional[np.ndarray]
    gradients: Dict[str, np.ndarray]
    state: Dict[str, np.ndarray]
    other: Dict[str, Tuple[str, np.ndarray]]
    arguments: List[Tuple[str, Optional[str], Optional[str]]]
    roles: List[Optional[str]] = field(default_factory=list)  # results, in order

    def layout_problem(self) -> Optional[str]:
        """None when the results are: the loss, then state, then gradients
        (the contract of --stop-after tidal-autodiff); else what is wrong."""
        roles = "".join({"loss": "L", "state": "S", "gradient": "G"}.get(r or "", "?") for r in self.roles)
        if re.fullmatch(r"LS*G*", roles):
            return None
        return f"results of @train_step have roles {self.roles}; expected loss, then state, then gradients"


def _first_lines(text: str, n: int = 6) -> str:
    lines = text.strip().splitlines()
    head = "\n".join(lines[:n])
    return head + (f"\n... ({len(lines) - n} more lines)" if len(lines) > n else "")


def train_step(model_path: str, values: Dict[str, np.ndarray], workdir: str, flags: Sequence[str] = (), timeout: int = 300) -> StepResult:
    """Compile `model_path` to the autodiff stage and evaluate @train_step.

    `values` binds arguments by tidal.name; every argument of @train_step
    must have one (a missing one raises ToolFailure, extra ones are not
    passed).
    """
    mlir_path = os.path.join(workdir, "step.mlir")
    proc = support.run_tidalc([model_path, "--emit", "mlir", "--stop-after", "tidal-autodiff", *flags, "-o", mlir_path], timeout=timeout)
    if proc.returncode != 0:
        raise ToolFailure(f"tidalc{''.join(' ' + f for f in flags)} failed (exit {proc.returncode}):\n{_first_lines(proc.stderr)}")
    with open(mlir_path) as f:
        mlir = f.read()
    try:
        arguments = function_arguments(mlir)
    except ValueError as err:
        raise ToolFailure(f"tidalc: {err}")
    argv = [support.tool("tidal-eval"), mlir_path]
    missing = []
    for i, (_, name, _) in enumerate(arguments):
        if name is None or name not in values:
            missing.append(name or f"#{i}")
            continue
        path = os.path.join(workdir, f"arg{i}.npy")
        np.save(path, values[name])
        argv += ["--arg", f"{name}={path}"]
    if missing:
        raise ToolFailure(f"@train_step has arguments the test cannot bind: {missing}")
    outdir = os.path.join(workdir, "out")
    os.makedirs(outdir, exist_ok=True)
    proc = support.run(argv + ["--output-dir", outdir], timeout=timeout)
    if proc.returncode != 0:
        raise ToolFailure(f"tidal-eval failed (exit {proc.returncode}):\n{_first_lines(proc.stderr)}")
    try:
        with open(os.path.join(outdir, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as err:
        raise ToolFailure(f"tidal-eval: unreadable manifest.json: {err}")
    loss, grads, state, other, roles = None, {}, {}, {}, []
    for r in manifest.get("results", []):
        roles.append(r.get("role"))
        path = r["file"] if os.path.isabs(r["file"]) else os.path.join(outdir, r["file"])
        value = np.load(path)
        role, name = r.get("role"), r.get("name")
        if role == "loss":
            if loss is not None:
                raise ToolFailure("tidal-eval: more than one result of role loss")
            loss = value
        elif role == "gradient":
            if name in grads:
                raise ToolFailure(f"tidal-eval: two gradient results named {name!r}")
            grads[name] = value
        elif role == "state":
            state[name] = value
        else:
            other[name] = (role, value)
    return StepResult(loss, grads, state, other, arguments, roles)


# --- op cases -----------------------------------------------------------------


@dataclass
class Node:
    op: str
    inputs: List[str]  # local names; "" for an absent optional input
    outputs: List[str]
    attrs: Dict[str, object] = field(default_factory=dict)


@dataclass
class Case:
    """One op check. All names are local; `name` prefixes them globally."""

    name: str
    nodes: List[Node]
    # Local value names weighed by C; or (direct=True) one scalar loss.
    outputs: List[str]
    # ref(T) -> list of torch tensors, one per output; T maps local names to
    # float64 tensors (params require grad) and int64 tensors.
    ref: Callable[[Dict[str, torch.Tensor]], List[torch.Tensor]]
    params: Dict[str, np.ndarray] = field(default_factory=dict)
    frozen: Dict[str, np.ndarray] = field(default_factory=dict)
    consts: Dict[str, np.ndarray] = field(default_factory=dict)
    inputs: Dict[str, np.ndarray] = field(default_factory=dict)
    opset: int = 13
    direct: bool = False
    # Local names of BatchNorm running mean/var initializers (role state):
    # their expected new values are T[name] after ref() ran (ref updates the
    # tensors in place, as F.batch_norm does).
    state: List[str] = field(default_factory=list)

    def g(self, local: str) -> str:
        return f"{self.name}.{local}" if local else ""

    def describe(self) -> str:
        shapes = {}
        for d in (self.params, self.frozen, self.consts, self.inputs):
            for k, v in d.items():
                shapes[k] = v.shape
        parts = []
        for n in self.nodes:
            attrs = ", ".join(f"{k}={v}" for k, v in n.attrs.items())
            ins = ", ".join(f"{i}{list(shapes[i]) if i in shapes else ''}" for i in n.inputs)
            if n.op == "Constant":
                ins = repr(numpy_helper.to_array(n.attrs["value"]).tolist())
                attrs = ""
            parts.append(f"{n.op}({ins}{'; ' + attrs if attrs else ''})")
        return f"[{self.name}, opset {self.opset}] " + " -> ".join(parts)

    # -- the PyTorch side --

    def torch_values(self, dtype=torch.float64):
        T = {}
        for k, v in self.params.items():
            T[k] = torch.tensor(v).to(dtype).requires_grad_(True)
        for d in (self.frozen, self.consts, self.inputs):
            for k, v in d.items():
                T[k] = torch.tensor(v).to(dtype) if v.dtype.kind == "f" else torch.tensor(v.astype(np.int64))
        return T

    def reference(self, weights: Optional[List[np.ndarray]] = None, dtype=torch.float64):
        """(loss, {param: grad}, {state: value}, [output arrays]); float64
        unless `dtype` says otherwise (float32: PyTorch's own rounding)."""
        T = self.torch_values(dtype)
        outs = self.ref(T)
        if self.direct:
            assert len(outs) == 1 and outs[0].dim() == 0, f"{self.name}: a direct case returns one scalar"
            loss = outs[0]
        else:
            assert weights is not None and len(weights) == len(outs)
            loss = sum((o * torch.tensor(w).to(dtype)).sum() for o, w in zip(outs, weights))
        names = list(self.params)
        grads = torch.autograd.grad(loss, [T[n] for n in names], allow_unused=True) if names else []
        gmap = {}
        for n, gr in zip(names, grads):
            gmap[n] = np.zeros(self.params[n].shape) if gr is None else gr.detach().double().numpy()
        smap = {n: T[n].detach().double().numpy().copy() for n in self.state}
        return float(loss.detach()), gmap, smap, [o.detach().double().numpy() for o in outs]

    def output_shapes(self):
        T = self.torch_values()
        with torch.no_grad():
            return [tuple(o.shape) for o in self.ref(T)]


def _tensor(name, arr):
    return numpy_helper.from_array(np.array(arr, order="C"), name)


def _vi(name, arr_or_shape, elem=TensorProto.FLOAT):
    shape = arr_or_shape.shape if hasattr(arr_or_shape, "shape") else arr_or_shape
    return helper.make_tensor_value_info(name, elem, list(shape))


def _np_elem(arr):
    if hasattr(helper, "np_dtype_to_tensor_dtype"):  # onnx >= 1.13
        return helper.np_dtype_to_tensor_dtype(arr.dtype)
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]


@dataclass
class Batch:
    """Several cases of one opset in one model."""

    cases: List[Case]
    opset: int
    model: onnx.ModelProto
    values: Dict[str, np.ndarray]  # every graph input and initializer
    weights: Dict[str, List[np.ndarray]]  # case name -> C tensors
    freeze: List[str]


def build_batch(cases: Sequence[Case], rng: np.random.Generator) -> Batch:
    opsets = {c.opset for c in cases}
    assert len(opsets) == 1, "one opset per batch"
    opset = opsets.pop()
    direct = [c for c in cases if c.direct]
    assert not direct or len(cases) == 1, "a direct-loss case is a model on its own"
    nodes, inits, ginputs, values, weights, freeze = [], [], [], {}, {}, []
    partial = []
    for c in cases:
        for n in c.params:
            inits.append(_tensor(c.g(n), c.params[n]))
        for n in c.frozen:
            inits.append(_tensor(c.g(n), c.frozen[n]))
            freeze.append(c.g(n))
        for n in c.consts:
            inits.append(_tensor(c.g(n), c.consts[n]))
        for n, v in c.inputs.items():
            ginputs.append(_vi(c.g(n), v, _np_elem(v)))
        for d in (c.params, c.frozen, c.consts, c.inputs):
            for n, v in d.items():
                values[c.g(n)] = v
        for i, nd in enumerate(c.nodes):
            nodes.append(
                helper.make_node(
                    nd.op,
                    [c.g(x) for x in nd.inputs],
                    [c.g(x) for x in nd.outputs],
                    name=f"{c.name}/{i}:{nd.op}",
                    **nd.attrs,
                )
            )
        if c.direct:
            partial.append(c.g(c.outputs[0]))
            continue
        ws = []
        for k, (out, shape) in enumerate(zip(c.outputs, c.output_shapes())):
            w = rng.standard_normal(shape).astype(np.float32)
            ws.append(w)
            cname = c.g(f"C{k}")
            ginputs.append(_vi(cname, w))
            values[cname] = w
            prod, red = c.g(f"weighted{k}"), c.g(f"partial{k}")
            nodes.append(helper.make_node("Mul", [c.g(out), cname], [prod], name=f"{c.name}/weigh{k}"))
            nodes.append(helper.make_node("ReduceSum", [prod], [red], keepdims=0, name=f"{c.name}/sum{k}"))
            partial.append(red)
        weights[c.name] = ws
    if len(partial) == 1 and direct:
        loss = partial[0]
    else:
        acc = partial[0]
        for i, p in enumerate(partial[1:]):
            nxt = "loss" if i == len(partial) - 2 else f"loss_acc{i}"
            nodes.append(helper.make_node("Add", [acc, p], [nxt], name=f"loss/add{i}"))
            acc = nxt
        if acc != "loss":
            nodes.append(helper.make_node("Identity", [acc], ["loss"], name="loss/identity"))
        loss = "loss"
    graph = helper.make_graph(nodes, "gradcheck", ginputs, [_vi(loss, ())], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tidal.gradcheck")
    model.ir_version = IR_VERSION
    # Debian's onnx 1.12 knows opsets up to 17; tidal reads newer ones
    # without it (lib/Importer/OpVersions.cpp).
    if opset <= onnx.defs.onnx_opset_version():
        onnx.checker.check_model(model)
    return Batch(list(cases), opset, model, values, weights, freeze)


@dataclass
class CaseOutcome:
    case: Case
    error: Optional[str] = None  # a tool failure that this case alone causes
    problems: List[str] = field(default_factory=list)  # wrong values / sets
    max_err: float = 0.0


def _float32_note(case: Case, weights, kind: str, name: str, ref) -> str:
    """How far PyTorch float32 itself is from float64 on this value."""
    try:
        _, g32, s32, _ = case.reference(weights, dtype=torch.float32)
        return f"; PyTorch float32: {rel_err((g32 if kind == 'gradient' else s32)[name], ref):.2g}"
    except Exception:  # noqa: BLE001  (a note only)
        return ""


def check_result(batch: Batch, result: StepResult) -> List[CaseOutcome]:
    """Compares `result` of `batch` case by case with PyTorch."""
    outcomes = []
    expected_grads, expected_state = set(), set()
    total_ref, total_abs = 0.0, 0.0
    for c in batch.cases:
        out = CaseOutcome(c)
        loss, grads, states, outs = c.reference(batch.weights.get(c.name))
        total_ref += loss
        total_abs += abs(loss) if c.direct else sum(float(np.abs(o * w).sum()) for o, w in zip(outs, batch.weights[c.name]))
        for n, ref in grads.items():
            gname = c.g(n)
            expected_grads.add(gname)
            if gname not in result.gradients:
                out.problems.append(f"no gradient result for parameter {gname!r}")
                continue
            ours = result.gradients[gname]
            if ours.shape != ref.shape:
                out.problems.append(f"gradient {gname!r} has shape {list(ours.shape)}, expected {list(ref.shape)}")
                continue
            e = rel_err(ours, ref)
            out.max_err = max(out.max_err, e)
            if not e <= TOLERANCE:
                note = _float32_note(c, batch.weights.get(c.name), "gradient", n, ref)
                out.problems.append(f"gradient {gname!r} {list(ref.shape)}: relative error {e:.3g} (|ref| {np.linalg.norm(ref):.3g}{note})")
        for n, ref in states.items():
            sname = c.g(n)
            expected_state.add(sname)
            if sname not in result.state:
                out.problems.append(f"no state result for running statistic {sname!r}")
                continue
            e = rel_err(result.state[sname], ref)
            out.max_err = max(out.max_err, e)
            if not e <= TOLERANCE:
                note = _float32_note(c, batch.weights.get(c.name), "state", n, ref)
                out.problems.append(f"new running statistic {sname!r}: relative error {e:.3g}{note}")
        extra = [n for n in result.gradients if n.startswith(c.name + ".") and n not in expected_grads]
        if extra:
            out.problems.append(f"unexpected gradient results {sorted(extra)} (inputs, constants, frozen and state get none)")
        outcomes.append(out)
    unknown = [n for n in result.gradients if not any(n.startswith(c.name + ".") for c in batch.cases)]
    unknown_state = [n for n in result.state if n not in expected_state]
    batch_problems = []
    if unknown:
        batch_problems.append(f"gradient results for unknown names {sorted(unknown)}")
    if unknown_state:
        batch_problems.append(f"unexpected state results {sorted(unknown_state)}")
    layout = result.layout_problem()
    if layout:
        batch_problems.append(layout)
    if result.loss is None:
        batch_problems.append("no loss result")
    else:
        if np.asarray(result.loss).shape != ():
            batch_problems.append(f"loss has shape {list(np.asarray(result.loss).shape)}, expected a scalar")
        err = abs(float(np.asarray(result.loss).ravel()[0]) - total_ref)
        if not err <= TOLERANCE * max(total_abs, 1e-30):
            ours = float(np.asarray(result.loss).ravel()[0])
            batch_problems.append(f"loss {ours!r} vs PyTorch {total_ref!r} (error {err:.3g}, scale {total_abs:.3g})")
    if batch_problems:
        for o in outcomes:
            o.problems.extend(f"(batch) {p}" for p in batch_problems)
    return outcomes


def run_batch(cases: Sequence[Case], rng: np.random.Generator, workdir: str) -> List[CaseOutcome]:
    batch = build_batch(cases, rng)
    path = os.path.join(workdir, "model.onnx")
    onnx.save(batch.model, path)
    flags = ["--freeze", ",".join(batch.freeze)] if batch.freeze else []
    result = train_step(path, batch.values, workdir, flags)
    return check_result(batch, result)


def run_cases(cases: Sequence[Case], seed_name: str) -> List[CaseOutcome]:
    """Runs `cases` batched by opset (direct-loss cases alone); a batch that
    fails in a tool is re-run case by case to blame the guilty ones."""
    groups: Dict[Tuple[int, str], List[Case]] = {}
    for c in cases:
        key = (c.opset, c.name if c.direct else "")
        groups.setdefault(key, []).append(c)
    outcomes = []
    for key, group in groups.items():
        rng = rng_for(f"{seed_name}/{key}")
        with tempfile.TemporaryDirectory(prefix="tidal-grad-") as tmp:
            try:
                outcomes += run_batch(group, rng, tmp)
                continue
            except ToolFailure as err:
                if len(group) == 1:
                    outcomes.append(CaseOutcome(group[0], error=str(err)))
                    continue
        for c in group:
            with tempfile.TemporaryDirectory(prefix="tidal-grad-") as tmp:
                try:
                    outcomes += run_batch([c], rng_for(f"{seed_name}/{c.name}"), tmp)
                except ToolFailure as err:
                    outcomes.append(CaseOutcome(c, error=str(err)))
    return outcomes


def check_family(test, family: str, cases: Sequence[Case]) -> None:
    """Runs `cases` (seeded by `family`) and fails `test` with one subtest
    per failing case; prints the family's worst relative error."""
    outcomes = run_cases(cases, family)
    worst = max((o.max_err for o in outcomes if not o.error and not o.problems), default=0.0)
    print(f"\n  {family}: {len(outcomes)} cases, max relative error {worst:.2e}", end="")
    test.assertEqual(len(outcomes), len(cases))
    for o in outcomes:
        with test.subTest(case=o.case.name):
            test.assertFalse(o.error, f"{o.case.describe()}\n{o.error}")
            test.assertFalse(o.problems, f"{o.case.describe()}\n" + "\n".join(o.problems))
