"""The real-model suite's pipeline: export, tidalc, train, compare with PyTorch.

For one model of tidal.real_models, `evaluate` runs every stage and stops at
the first that fails, naming it:

- export: tidal.real_models.export (training mode, no constant folding);
- compile: `tidalc model.onnx -o train --batch-size B --loss L --optimizer O
  ...` (tidal.training.tidalc_flags); the reason is tidalc's one-line error,
  shortened to "operator X (opset N)" for an unsupported op;
- run: `train --input ... --steps S --threads T --log --save --quiet`;
- numerics: the logged losses and the saved weights, BatchNorm statistics
  and optimizer state against PyTorch float32, within 10x PyTorch's own
  spread (float32 vs float64, plus float32 channels-last for image models;
  at least 1e-4): tidal.training.compare, the rule of
  python/test/test_train_e2e.py and docs/correctness.md; after the last
  step, and (SGD) after step 1 alone (`--steps 1`), where the spread is
  only one forward and backward pass's rounding, so that drift on
  ill-conditioned models (the mobile nets' BatchNorm on 1x1 maps, where
  PyTorch's own float32 and float64 runs differ by 10% by step 3) cannot
  hide a wrong gradient.

Every optimizer (SGD with momentum and AdamW by default) starts from the
same exported weights and trains on the same mini-batches as PyTorch.
"""

import os
import re
import subprocess
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from tidal import ops as tidal_ops
from tidal import opset_upgrade, real_models, training

STEPS = 5
THREADS = 2
OPTIMIZERS: Dict[str, Dict[str, object]] = {
    "sgd": {"lr": 0.01, "momentum": 0.9},
    "adamw": {"lr": 1e-3, "weight_decay": 0.01},
}
STAGES = ("export", "compile", "run", "numerics", "ok")

_UNSUPPORTED = re.compile(r"operator (\S+) \(opset (\d+)\) is not supported")
_NODE = re.compile(r"node '([^']*)'")


def case(name: str, optimizer: str, steps: int = STEPS, batch: Optional[int] = None,
         opset: int = 13) -> training.Case:
    """The training.Case (loss, optimizer, batch, steps) of `name` and `optimizer`."""
    s = real_models.spec(name)
    return training.Case(f"{name}/{optimizer}", name, "real", s.loss, optimizer, dict(OPTIMIZERS[optimizer]),
                         batch=batch or s.batch, steps=steps, opset=opset)


# --- names --------------------------------------------------------------------------------


def _float_state(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    return {k: v for k, v in model.state_dict().items()
            if v.dtype.is_floating_point and not k.endswith("num_batches_tracked")}


def onnx_name_map(name: str, proto: onnx.ModelProto, size: str = "small") -> Dict[str, str]:
    """{PyTorch float state name: ONNX initializer name}, as
    tidal.training.onnx_name_map: by name, else by a unique equal value (a
    tied weight, such as GPT's lm_head.weight, maps to the one initializer).
    A tensor no initializer holds is left out: a buffer the exporter made a
    constant of the graph (Hugging Face's rotary inv_freq), or a parameter
    the forward pass never reads (XLNet's mask_emb without a permutation
    mask), which neither side trains; so is one whose value only
    initializers named after other tensors share."""
    state = {k: v.detach().numpy() for k, v in _float_state(real_models.build(name, size)).items()}
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    mapping = {}
    for key, value in state.items():
        if key in inits:
            mapping[key] = key
            continue
        same = [n for n, v in inits.items() if v.shape == value.shape and np.array_equal(v, value)]
        if not same and not key.endswith(("running_mean", "running_var")):
            continue
        if len(same) > 1:
            # Several equal values (zeros, ones): an initializer named after
            # another tensor is that tensor's; one the exporter renamed is a
            # candidate. None left: this tensor is unread (BigBird's pooler
            # under a classifier that skips it, VAN's final LayerNorm), or a
            # tie covered by the other name.
            same = [n for n in same if n not in state]
            if not same:
                continue
        if len(same) != 1:
            raise ValueError(f"PyTorch tensor {key} matches {len(same)} ONNX initializers")
        mapping[key] = same[0]
    return mapping


def freeze_list(name: str, proto: onnx.ModelProto, name_map: Dict[str, str], size: str = "small") -> List[str]:
    """Float initializers that PyTorch does not train: neither a parameter
    that requires a gradient nor a BatchNorm running statistic (a float
    buffer such as a mask, a frozen parameter, or a constant the exporter
    stored as an initializer). tidalc trains every
    other float initializer (SPEC section 1), so these get --freeze."""
    model = real_models.build(name, size)
    # A parameter with requires_grad=False (Pegasus' and Marian's sinusoidal
    # positions) is frozen too: ONNX keeps no such flag.
    keep = {name_map[k] for k, p in model.named_parameters() if k in name_map and p.requires_grad}
    keep |= {v for k, v in name_map.items() if k.endswith(("running_mean", "running_var"))}
    return [i.name for i in proto.graph.initializer
            if numpy_helper.to_array(i).dtype.kind == "f" and i.name not in keep]


def padding_list(name: str, proto: onnx.ModelProto, name_map: Dict[str, str], size: str = "small") -> List[str]:
    """tidalc --embedding-padding entries for the model's nn.Embedding
    padding_idx rows (tidal.export.embedding_padding)."""
    from tidal.export import embedding_padding
    return embedding_padding(real_models.build(name, size), proto, name_map)


def missing_ops(proto: onnx.ModelProto) -> List[str]:
    """The model's op types outside tidal.ops' supported and folded sets."""
    known = tidal_ops.SUPPORTED_OPS | tidal_ops.FOLDED_SHAPE_OPS | tidal_ops.FOLDED_SPECTRAL_OPS | {"Shape"}
    return sorted(tidal_ops.op_types(proto.graph) - known)


def short_reason(error_line: str) -> str:
    """"operator X (opset N), node 'NAME'" for an unsupported op; otherwise
    the error text after 'error: '."""
    m = _UNSUPPORTED.search(error_line)
    if m:
        node = _NODE.search(error_line)
        return f"operator {m.group(1)} (opset {m.group(2)})" + (f", node '{node.group(1)}'" if node else "")
    text = error_line.split("error: ", 1)[-1].strip()
    return text[:300]


# --- PyTorch --------------------------------------------------------------------------------


def _tensors(name: str, data: Dict[str, np.ndarray], rows, dtype, channels_last: bool, size: str):
    out = []
    for inp in real_models.spec(name).inputs_for(size):
        t = torch.from_numpy(data[inp.name][rows])
        if t.dtype.is_floating_point:
            t = t.to(dtype)
            if channels_last and t.dim() == 4:
                t = t.contiguous(memory_format=torch.channels_last)
        out.append(t)
    return out


def loss_of(c: training.Case, output, label):
    """The training loss: the model's own (loss "output") or tidalc's."""
    if c.loss == "output":
        return output[0] if isinstance(output, (tuple, list)) else output
    return training.loss_fn(c, output, label)


def reference(name: str, c: training.Case, name_map: Dict[str, str], dtype=torch.float32,
              channels_last: bool = False, size: str = "small", samples: Optional[int] = None) -> training.Trajectory:
    """PyTorch's trajectory: per-step losses; final float state and optimizer
    state under the ONNX / executable names (as tidal.training.reference).
    The data set holds `samples` rows (default: the case's batch x steps),
    as the files the executable reads."""
    model = real_models.build(name, size).to(dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = training.make_optimizer(c, model.parameters())
    samples = samples or c.batch * c.steps
    data, label = real_models.dataset(name, samples, size)
    losses = []
    for rows in training.batch_rows(samples, c.batch, c.steps):
        out = model(*_tensors(name, data, rows, dtype, channels_last, size))
        loss = loss_of(c, out, None if label is None else torch.from_numpy(label[rows]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    state = _float_state(model)
    weights = {name_map[k]: v.detach().contiguous().numpy().copy() for k, v in state.items() if k in name_map}
    for k, p in model.named_parameters():
        for slot, value in opt.state.get(p, {}).items():
            if slot == "step":
                weights["optimizer.step"] = np.array(int(value), np.int64)
            elif value is not None:
                weights[f"{name_map[k]}.{slot}"] = value.detach().contiguous().numpy().copy()
    return training.Trajectory(losses, weights)


def references(name: str, c: training.Case, name_map: Dict[str, str], size: str = "small",
               samples: Optional[int] = None):
    """(float32, float64, [float32 channels-last for 4-D inputs])."""
    f32 = reference(name, c, name_map, torch.float32, size=size, samples=samples)
    f64 = reference(name, c, name_map, torch.float64, size=size, samples=samples)
    image = any(len(i.shape) == 3 for i in real_models.spec(name).inputs_for(size))
    others = [reference(name, c, name_map, torch.float32, channels_last=True, size=size, samples=samples)
              ] if image else []
    return f32, f64, others


# --- tidal ---------------------------------------------------------------------------------


def write_data(name: str, directory: str, samples: int, size: str = "small") -> List[str]:
    """Saves the model's data (and label) as DIR/<input>.npy; returns --input flags."""
    data, label = real_models.dataset(name, samples, size)
    flags = []
    items = list(data.items()) + ([("label", label)] if label is not None else [])
    for key, array in items:
        path = os.path.join(directory, f"{key}.npy")
        np.save(path, array)
        flags += ["--input", f"{key}={path}"]
    return flags


def read_log(path: str) -> List[dict]:
    import json

    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_saved(path: str) -> Dict[str, np.ndarray]:
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


# A runner executes argv and returns (exit status, stderr text); the benchmark
# passes one that also measures peak RSS.
Runner = Callable[[List[str], str], Tuple[int, str]]


def plain_runner(argv: List[str], tag: str, timeout: int = 600) -> Tuple[int, str]:
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return proc.returncode, proc.stderr


@dataclass
class OptimizerResult:
    optimizer: str
    stage: str = "ok"
    reason: str = ""
    compile_s: Optional[float] = None
    losses: List[float] = field(default_factory=list)
    step_ms: List[float] = field(default_factory=list)
    comparison: Optional[training.Comparison] = None
    # The same from the exported weights after one step (`first_step`).
    step1: Optional[training.Comparison] = None
    # Per step: our loss against PyTorch float32, PyTorch's float32 against
    # its float64, and the largest difference between any two PyTorch runs.
    loss_dev_steps: List[float] = field(default_factory=list)
    loss_f64_steps: List[float] = field(default_factory=list)
    loss_spread_steps: List[float] = field(default_factory=list)


@dataclass
class Result:
    name: str
    stage: str = "ok"  # the first stage that failed, or "ok"
    reason: str = ""
    export_s: Optional[float] = None
    compile_s: Optional[float] = None
    compile_error: str = ""
    missing_ops: List[str] = field(default_factory=list)
    nodes: int = 0
    params: int = 0
    freeze: List[str] = field(default_factory=list)
    padding: List[str] = field(default_factory=list)  # tidalc --embedding-padding entries
    optimizers: Dict[str, OptimizerResult] = field(default_factory=dict)
    # {PyTorch state name: ONNX initializer name}; None when it failed.
    name_map: Optional[Dict[str, str]] = field(default=None, repr=False)

    @property
    def failure(self) -> str:
        """'<stage>: <reason>' ('ok' when every stage passed): what the test
        matches its expected reasons against."""
        return "ok" if self.stage == "ok" else f"{self.stage}: {self.reason}"


def _fail(result, stage, reason):
    if result.stage == "ok" or STAGES.index(stage) < STAGES.index(result.stage):
        result.stage, result.reason = stage, reason
    return result


def export_and_compile(name: str, tidalc: str, workdir: str, opset: int = 13, size: str = "small",
                       optimizer: str = "sgd", steps: int = STEPS,
                       upgrade: Optional[int] = None) -> Tuple[Result, Optional[onnx.ModelProto]]:
    """The export and compile stages alone (the --coverage mode). With
    `upgrade`, the export is converted to that opset (tidal.opset_upgrade,
    as onnx's version converter would) before it is compiled."""
    result = Result(name)
    opset = max(opset, real_models.spec(name).min_opset)
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "model.onnx")
    t0 = time.perf_counter()
    try:
        proto = real_models.export(name, path, opset=opset, size=size)
        if upgrade:
            proto = opset_upgrade.upgrade(proto, upgrade)
            onnx.save(proto, path)
    except Exception as err:  # the exporter raises many kinds
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        return _fail(result, "export", f"{type(err).__name__}: {first}"[:300]), None
    result.export_s = time.perf_counter() - t0
    result.nodes = len(proto.graph.node)
    result.params = sum(int(np.prod(i.dims)) for i in proto.graph.initializer if i.data_type == onnx.TensorProto.FLOAT)
    result.missing_ops = missing_ops(proto)
    try:
        result.name_map = onnx_name_map(name, proto, size)
        result.freeze = freeze_list(name, proto, result.name_map, size)
        result.padding = padding_list(name, proto, result.name_map, size)
    except ValueError as err:
        _fail(result, "numerics", f"name map: {err}")
    c = case(name, optimizer, steps, opset=opset)
    exe = os.path.join(workdir, f"train-{optimizer}")
    result.compile_s, err = compile_case(tidalc, path, exe, c, result.freeze, result.padding)
    if err:
        result.compile_error = err
        _fail(result, "compile", short_reason(err))
    return result, proto


def compile_case(tidalc: str, model: str, exe: str, c: training.Case, freeze: Sequence[str] = (),
                 padding: Sequence[str] = ()):
    """Runs tidalc; returns (seconds, None) or (seconds, its error line)."""
    argv = [tidalc, model, "-o", exe] + training.tidalc_flags(c)
    if freeze:
        argv += ["--freeze", ",".join(freeze)]
    if padding:
        argv += ["--embedding-padding", ",".join(padding)]
    # A build in progress replaces tidalc for a moment: wait for it (up to a
    # minute) rather than report a model as failing.
    for attempt in range(61):
        try:
            t0 = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
            break
        except OSError as err:
            if attempt == 60:
                return 0.0, f"cannot run {tidalc}: {err}"
            time.sleep(1.0)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0 or not os.access(exe, os.X_OK):
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        line = next((l for l in lines if "error:" in l), lines[-1] if lines else f"exit status {proc.returncode}")
        if proc.returncode < 0:
            line = f"tidalc killed by signal {-proc.returncode}: {line}"
        return seconds, line.strip()
    return seconds, None


def evaluate(name: str, tidalc: str, workdir: str, optimizers: Sequence[str] = tuple(OPTIMIZERS),
             steps: int = STEPS, threads: int = THREADS, opset: int = 13, size: str = "small",
             runner: Runner = plain_runner, first_step: Sequence[str] = ("sgd",),
             upgrade: Optional[int] = None) -> Result:
    """Every stage for `name` with each optimizer; see the module doc.
    With `upgrade`, tidal trains the export converted to that opset.

    For the optimizers in `first_step`, also runs one step alone and
    compares it by the same rule: there PyTorch's spread is the forward and
    backward passes' rounding only, and the momentum buffer is the gradient,
    so every gradient is held to 1e-4 or 10x PyTorch's spread on it, which
    no drift over later steps can hide. (Not AdamW: its first update is
    lr * sign(gradient) where the gradient is far above eps, so one
    gradient element near zero whose sign rounding flips, in tidal as in
    PyTorch, moves its weight by 2 lr; the spread of three PyTorch runs does
    not bound that. Its moments, the gradient and its square, are
    checked through SGD's.)
    """
    opset = max(opset, real_models.spec(name).min_opset)
    result, proto = export_and_compile(name, tidalc, workdir, opset, size, optimizers[0], steps, upgrade)
    if result.stage in ("export", "compile"):
        return result
    name_map = result.name_map
    c0 = case(name, optimizers[0], steps, opset=opset)
    samples = c0.batch * steps
    flags = write_data(name, workdir, samples, size)
    path = os.path.join(workdir, "model.onnx")
    for opt in optimizers:
        r = OptimizerResult(opt)
        result.optimizers[opt] = r
        c = case(name, opt, steps, opset=opset)
        exe = os.path.join(workdir, f"train-{opt}")
        if opt == optimizers[0]:
            r.compile_s = result.compile_s
        else:
            r.compile_s, err = compile_case(tidalc, path, exe, c, result.freeze, result.padding)
            if err:
                r.stage, r.reason = "compile", short_reason(err)
                _fail(result, "compile", f"{opt}: {r.reason}")
                continue
        log, out = os.path.join(workdir, f"log-{opt}.jsonl"), os.path.join(workdir, f"out-{opt}.onnx")
        for stale in (log, out):
            if os.path.exists(stale):
                os.remove(stale)
        argv = [exe] + flags + ["--steps", str(steps), "--threads", str(threads), "--log", log, "--save", out,
                                "--quiet"]
        rc, err = runner(argv, f"tidal-{opt}")
        if rc != 0:
            r.stage, r.reason = "run", _run_error(rc, err)
            _fail(result, "run", f"{opt}: {r.reason}")
            continue
        entries = read_log(log)
        r.losses = [float(e["loss"]) for e in entries]
        r.step_ms = [float(e["step_ms"]) for e in entries]
        if name_map is None:
            continue  # the name map failed: already a numerics failure
        ours = training.Trajectory(r.losses, read_saved(out))
        f32, f64, others = references(name, c, name_map, size, samples)
        cmp = training.compare(c, ours, f32, f64, others)
        r.comparison = cmp
        r.loss_dev_steps = training.loss_deviations(r.losses, f32.losses)
        r.loss_f64_steps = training.loss_deviations(f32.losses, f64.losses)
        runs = [f32, f64] + others
        r.loss_spread_steps = [training.spread([t.losses[k] for t in runs], training.rel_err)
                               for k in range(len(f32.losses))]
        problems = list(cmp.problems)
        if opt in first_step and steps > 1:
            one = replace(c, steps=1)
            out1 = os.path.join(workdir, f"out1-{opt}.onnx")
            argv1 = [exe] + flags + ["--steps", "1", "--threads", str(threads), "--save", out1, "--quiet"]
            rc, err = runner(argv1, f"tidal-{opt}-step1")
            if rc != 0:
                r.stage, r.reason = "run", "step 1 alone: " + _run_error(rc, err)
                _fail(result, "run", f"{opt}: {r.reason}")
                continue
            # The loss of step 1 is the long run's first (same weights, same batch).
            ours1 = training.Trajectory(r.losses[:1], read_saved(out1))
            r.step1 = training.compare(one, ours1, *references(name, one, name_map, size, samples))
            problems = [f"after step 1: {p}" for p in r.step1.problems] + problems
        if problems:
            r.stage, r.reason = "numerics", problems[0][:300]
            _fail(result, "numerics", f"{opt}: {r.reason}")
    return result


def _run_error(rc: int, err: str) -> str:
    lines = [l for l in err.splitlines() if l.strip()]
    what = f"killed by signal {-rc}" if rc < 0 else f"exit {rc}"
    return f"{what}: {lines[-1].strip() if lines else ''}"[:300]
