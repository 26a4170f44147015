"""End-to-end training cases: the same model trained by PyTorch and by tidal.

A `Case` names a zoo model, an ONNX opset, a data set, a loss, a
torch.optim optimizer with its hyper-parameters, the batch size and the
step count. This module gives everything but the tidal run itself:

- `export_case`: the zoo model (seeded) exported in training mode; its
  initializers are the PyTorch weights, under the PyTorch names.
- `dataset`: the data arrays by ONNX input name, plus `label`.
- `reference`: PyTorch's trajectory (per-step losses; final weights,
  BatchNorm running statistics and optimizer state by ONNX initializer
  name) in float32 or float64, on the mini-batches tidal's executable
  takes: file order, batch b = rows b*B .. b*B+B-1, the last partial batch
  dropped, epochs cycling. `reference_variants`: the same in float32 with
  another summation order (channels-last), for conv nets.
- `tidalc_flags` / `compare`: the compile flags for the case, and the
  comparison of a tidal trajectory with PyTorch's (SPEC section 5).

    /usr/bin/python3 -m tidal.training [CASE ...]          PyTorch's own spreads
    /usr/bin/python3 -m tidal.training --write DIR CASE    model.onnx, the .npy inputs
                                                          and the tidalc/run commands
"""

import argparse
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

from tidal import export, zoo

TOLERANCE = 1e-4  # SPEC section 5: relative, L2 norm of the difference / L2 norm
# Where rounding compounds, we may deviate from PyTorch float32 by up to this
# many times PyTorch's own spread: the largest difference between any two of
# its float32, float64 and float32 channels-last runs.
SPREAD_FACTOR = 10.0


@dataclass(frozen=True)
class Case:
    name: str
    model: str  # zoo name
    data: str  # key of DATASETS
    loss: str  # "cross-entropy" | "mse"
    optimizer: str  # "sgd" | "adam" | "adamw"
    # torch.optim keyword arguments (lr, momentum, nesterov, weight_decay, betas, eps)
    hparams: Dict[str, object] = field(default_factory=dict)
    batch: int = 16
    steps: int = 20
    opset: int = 13
    # Held to TOLERANCE outright; otherwise to SPREAD_FACTOR x PyTorch's spread.
    well_conditioned: bool = False


@dataclass
class Trajectory:
    losses: List[float]
    weights: Dict[str, np.ndarray]  # by ONNX initializer name


# --- data sets ----------------------------------------------------------------


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images / 16.0).astype(np.float32), d.target.astype(np.int64)  # [1797, 8, 8] in [0, 1]


def digits():
    """scikit-learn digits, 64 features in [0, 1]."""
    images, y = _digits()
    return {"input": images.reshape(len(images), 64)}, y


# The upscaled digits get a little noise: blocks of equal pixels would make
# max pooling break exact ties, which rounding decides either way.


def digits28(n=150):
    """The first `n` digits upscaled 3x (24x24), padded to 1x28x28, plus noise."""
    images, y = _digits()
    big = np.pad(np.kron(images[:n], np.ones((3, 3))), ((0, 0), (2, 2), (2, 2)))
    big += np.random.default_rng(3).normal(0.0, 0.05, big.shape)
    return {"input": big[:, None].astype(np.float32)}, y[:n]


def digits_rgb32(n=100):
    """The first `n` digits upscaled 4x to 32x32, three differently scaled
    channels plus noise, normalised to mean 0 and std 1 per channel."""
    images, y = _digits()
    big = np.kron(images[:n], np.ones((4, 4)))
    rgb = np.stack([big, 0.5 * big + 0.25, 1.0 - big], axis=1)
    rgb += np.random.default_rng(4).normal(0.0, 0.05, rgb.shape)
    rgb = (rgb - rgb.mean(axis=(0, 2, 3), keepdims=True)) / rgb.std(axis=(0, 2, 3), keepdims=True)
    return {"input": rgb.astype(np.float32)}, y[:n]


def smooth_regression(n=300):
    """x uniform in [-1, 1]^8, y = sin(pi x0) cos(x1) + x2 x3 / 2 + mean(x) / 10."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.0, 1.0, (n, 8))
    y = np.sin(np.pi * x[:, 0]) * np.cos(x[:, 1]) + 0.5 * x[:, 2] * x[:, 3] + 0.1 * x.mean(axis=1)
    return {"input": x.astype(np.float32)}, y[:, None].astype(np.float32)


def sequences(n=44):
    """Random [16, 64] sequences; the target tanh(x A) is a smooth map of them."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, 16, 64))
    a = rng.standard_normal((64, 64)) / 8.0
    return {"input": x.astype(np.float32)}, np.tanh(x @ a).astype(np.float32)


DATASETS = {
    "digits": digits,
    "digits28": digits28,
    "digits_rgb32": digits_rgb32,
    "smooth_regression": smooth_regression,
    "sequences": sequences,
}

# Learning rates are small enough that PyTorch's float32 and float64 runs stay
# close for several steps even on the BatchNorm nets (whose float32
# rounding compounds fastest), so that early steps are compared tightly.
_VGG = dict(model="vgg_bn", data="digits_rgb32", loss="cross-entropy", optimizer="sgd",
            hparams={"lr": 0.005, "momentum": 0.9, "weight_decay": 5e-4}, batch=8, steps=20)
CASES = [
    Case("mlp_digits_sgd", "mlp", "digits", "cross-entropy", "sgd", {"lr": 0.5},
         batch=16, steps=25, well_conditioned=True),
    Case("mlp_digits_nesterov", "mlp", "digits", "cross-entropy", "sgd",
         {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}, batch=16, steps=25, well_conditioned=True),
    Case("lenet_momentum", "lenet", "digits28", "cross-entropy", "sgd", {"lr": 0.05, "momentum": 0.9},
         batch=16, steps=20, well_conditioned=True),
    Case("vgg_bn13_momentum_wd", opset=13, **_VGG),
    Case("vgg_bn15_momentum_wd", opset=15, **_VGG),
    Case("resnet20_momentum", "resnet20", "digits_rgb32", "cross-entropy", "sgd",
         {"lr": 0.002, "momentum": 0.9}, batch=4, steps=20),
    Case("regressor_adam", "regressor", "smooth_regression", "mse", "adam", {"lr": 0.003},
         batch=16, steps=25, well_conditioned=True),
    Case("transformer13_adamw", "transformer_block", "sequences", "mse", "adamw",
         {"lr": 0.001, "weight_decay": 0.05}, batch=8, steps=20, well_conditioned=True),
    Case("transformer17_adamw", "transformer_block", "sequences", "mse", "adamw",
         {"lr": 0.001, "weight_decay": 0.05}, batch=8, steps=20, opset=17, well_conditioned=True),
    # Real-model layers: MobileNetV2/V3 blocks (ReLU6 as Clip, HardSwish from
    # opset 14, depthwise convolutions, squeeze-excitation with
    # HardSigmoid), and an MLP through every smooth activation.
    Case("mobilenet_mini14_momentum", "mobilenet_mini", "digits_rgb32", "cross-entropy", "sgd",
         {"lr": 0.01, "momentum": 0.9}, batch=8, steps=10, opset=14),
    Case("activation_mlp_adamw", "activation_mlp", "digits", "cross-entropy", "adamw",
         {"lr": 0.002, "weight_decay": 0.01}, batch=16, steps=20, well_conditioned=True),
]
CASES_BY_NAME = {c.name: c for c in CASES}

_dataset_cache: Dict[str, Tuple[Dict[str, np.ndarray], np.ndarray]] = {}


def dataset(case: Case) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
    """({ONNX input name: array}, label) for `case`; dim 0 counts samples."""
    if case.data not in _dataset_cache:
        _dataset_cache[case.data] = DATASETS[case.data]()
    return _dataset_cache[case.data]


def batch_rows(samples: int, batch: int, steps: int):
    """The row ranges of `steps` mini-batches in file order (SPEC section 2)."""
    per_epoch = samples // batch
    if per_epoch == 0:
        raise ValueError(f"{samples} samples hold no batch of {batch}")
    for g in range(steps):
        b = g % per_epoch
        yield slice(b * batch, b * batch + batch)


# --- the PyTorch side -----------------------------------------------------------


def make_optimizer(case: Case, params):
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[case.optimizer]
    return cls(params, **case.hparams)


def tidalc_flags(case: Case) -> List[str]:
    """The tidalc options that give `case`'s loss, optimizer and batch."""
    flags = ["--batch-size", str(case.batch), "--loss", case.loss, "--optimizer", case.optimizer]
    for key, value in case.hparams.items():
        if key == "nesterov":
            flags += ["--nesterov"] if value else []
        elif key == "betas":
            flags += ["--beta1", repr(value[0]), "--beta2", repr(value[1])]
        else:
            flags += ["--" + key.replace("_", "-"), repr(value)]
    return flags


def state_names(model: torch.nn.Module) -> List[str]:
    """The model's trained tensors: parameters and BN running statistics."""
    return [k for k in model.state_dict() if not k.endswith("num_batches_tracked")]


def loss_fn(case: Case, output, label):
    if case.loss == "cross-entropy":
        return F.cross_entropy(output, label)
    return F.mse_loss(output, label.to(output.dtype))


_reference_cache: Dict[tuple, Trajectory] = {}


def reference(case: Case, dtype=torch.float32, name_map: Optional[Dict[str, str]] = None,
              channels_last: bool = False) -> Trajectory:
    """PyTorch's trajectory for `case` in `dtype`.

    The weights are by ONNX initializer name (`name_map`, default the
    PyTorch names), plus the optimizer state under the executable's names:
    `<param>.momentum_buffer`, `.exp_avg`, `.exp_avg_sq`, and
    `optimizer.step` for Adam(W). `channels_last` runs a 4-D model in
    PyTorch's NHWC memory format: the same arithmetic summed in another
    order. Cached: cases that differ only in name and opset share a run.
    """
    key = (case.model, case.data, case.loss, case.optimizer, repr(sorted(case.hparams.items())),
           case.batch, case.steps, dtype, repr(sorted((name_map or {}).items())), channels_last)
    if key not in _reference_cache:
        _reference_cache[key] = _train(case, dtype, name_map, channels_last)
    return _reference_cache[key]


def reference_variants(case: Case, name_map: Optional[Dict[str, str]] = None) -> List[Trajectory]:
    """Other float32 PyTorch runs of `case` (another summation order), if any."""
    if all(len(shape) == 3 for _, shape, _ in zoo.MODELS[case.model].inputs):
        return [reference(case, torch.float32, name_map, channels_last=True)]
    return []


def _train(case: Case, dtype, name_map: Optional[Dict[str, str]], channels_last: bool) -> Trajectory:
    model = zoo.build(case.model).to(dtype)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = make_optimizer(case, model.parameters())
    inputs, label = dataset(case)
    names = [n for n, _, _ in zoo.MODELS[case.model].inputs]
    losses = []
    for rows in batch_rows(len(label), case.batch, case.steps):
        xs = [torch.from_numpy(inputs[n][rows]).to(dtype).contiguous(memory_format=fmt) for n in names]
        loss = loss_fn(case, model(*xs), torch.from_numpy(label[rows]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    state = model.state_dict()
    name_map = name_map or {k: k for k in state_names(model)}
    weights = {onnx_name: state[k].detach().contiguous().numpy().copy() for k, onnx_name in name_map.items()}
    for k, p in model.named_parameters():
        for slot, value in opt.state.get(p, {}).items():
            if slot == "step":
                weights["optimizer.step"] = np.array(int(value), np.int64)
            elif value is not None:
                weights[f"{name_map[k]}.{slot}"] = value.detach().contiguous().numpy().copy()
    return Trajectory(losses, weights)


def onnx_name_map(case: Case, proto: onnx.ModelProto) -> Dict[str, str]:
    """{PyTorch state name: ONNX initializer name} for the exported `case`.

    tidal's export keeps the PyTorch names (no constant folding); a renamed
    initializer is found by its value, which must then be unique.
    """
    model = zoo.build(case.model)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    mapping = {}
    for key in state_names(model):
        if key in inits:
            mapping[key] = key
            continue
        same = [n for n, v in inits.items() if v.shape == state[key].shape and np.array_equal(v, state[key])]
        if len(same) != 1:
            raise ValueError(f"{case.model}: PyTorch tensor {key} matches {len(same)} ONNX initializers")
        mapping[key] = same[0]
    return mapping


def export_case(case: Case, path: str) -> Tuple[onnx.ModelProto, Dict[str, str]]:
    """Writes the case's model to `path`; returns it and `onnx_name_map`."""
    proto = export.export(case.model, path, opset=case.opset)
    return proto, onnx_name_map(case, proto)


def write_inputs(case: Case, directory: str) -> List[str]:
    """Saves the case's data as DIR/<name>.npy; returns the --input flags."""
    inputs, label = dataset(case)
    flags = []
    for name, array in list(inputs.items()) + [("label", label)]:
        path = os.path.join(directory, f"{name}.npy")
        np.save(path, array)
        flags += ["--input", f"{name}={path}"]
    return flags


def prepare_case(name: str, directory: str) -> Tuple[Case, str, List[str], List[str]]:
    """Makes `directory` and writes the case `name`'s model (model.onnx) and
    data into it; returns the case, the model's path, its tidalc flags and
    the --input flags (the benchmarks' per-case set-up)."""
    case = CASES_BY_NAME[name]
    os.makedirs(directory)
    model = os.path.join(directory, "model.onnx")
    export_case(case, model)
    return case, model, tidalc_flags(case), write_inputs(case, directory)


# --- comparing trajectories -------------------------------------------------------


def rel_err(ours, ref) -> float:
    """||ours - ref|| / ||ref|| in float64 (absolute when ref is zero)."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape or not np.all(np.isfinite(ours)):
        return float("inf")
    diff = float(np.linalg.norm((ours - ref).ravel()))
    norm = float(np.linalg.norm(ref.ravel()))
    return diff / norm if norm > 0 else diff


def loss_deviations(ours: List[float], ref: List[float]) -> List[float]:
    """Per-step relative loss differences."""
    return [rel_err(a, b) for a, b in zip(ours, ref)]


def spread(runs: Sequence, measure) -> float:
    """The largest `measure(a, b)` over pairs of PyTorch runs."""
    return max((measure(a, b) for i, a in enumerate(runs) for b in runs[i + 1:]), default=0.0)


def loss_bounds(case: Case, spreads: List[float]) -> List[float]:
    """Per-step bounds on our loss deviation from PyTorch float32.

    Well-conditioned cases: TOLERANCE at every step. Otherwise, at step k,
    SPREAD_FACTOR x PyTorch's largest spread up to step k (at least
    TOLERANCE): early steps stay tight while the spread is small, and later
    ones may drift as far as PyTorch's own rounding does.
    """
    if case.well_conditioned:
        return [TOLERANCE] * len(spreads)
    return list(np.maximum(TOLERANCE, SPREAD_FACTOR * np.maximum.accumulate(spreads)))


def weight_bound(spread: float) -> float:
    """The bound on a final tensor's deviation, given PyTorch's spread on it."""
    return max(TOLERANCE, SPREAD_FACTOR * spread)


@dataclass
class Comparison:
    case: Case
    loss_dev: float  # ours vs PyTorch f32, max over steps
    loss_f64: float  # PyTorch f32 vs f64, max over steps
    loss_spread: float  # any two PyTorch runs, max over steps
    weight_dev: float  # worst tensor (relative to its bound), ours vs PyTorch f32
    weight_dev_name: str
    weight_spread: float  # that tensor, any two PyTorch runs
    problems: List[str]

    HEADER = (f"{'case':22s} {'steps':>5s} | {'loss dev':>8s} {'f32/f64':>8s} {'spread':>8s} |"
              f" {'tensor dev':>10s} {'spread':>8s}  worst tensor")

    def row(self) -> str:
        return (f"{self.case.name:22s} {self.case.steps:5d} | {self.loss_dev:8.1e} {self.loss_f64:8.1e}"
                f" {self.loss_spread:8.1e} | {self.weight_dev:10.1e} {self.weight_spread:8.1e}  {self.weight_dev_name}")


def compare(case: Case, ours: Trajectory, f32: Trajectory, f64: Trajectory, others: Sequence[Trajectory] = ()) -> Comparison:
    """Our trajectory against PyTorch float32. PyTorch's spread is the largest
    difference between any two of f32, f64 and the `others` (float32 runs
    in another summation order): what rounding alone does to the run."""
    problems = []
    runs = [f32, f64] + list(others)
    devs = loss_deviations(ours.losses, f32.losses)
    spreads = [spread([r.losses[k] for r in runs], rel_err) for k in range(len(f32.losses))]
    bounds = loss_bounds(case, spreads)
    loss_dev = max(devs, default=0.0) if len(ours.losses) == len(f32.losses) else float("inf")
    if len(ours.losses) != len(f32.losses):
        problems.append(f"{len(ours.losses)} logged losses, expected {len(f32.losses)}")
    bad = [k for k in range(len(devs)) if not devs[k] <= bounds[k]]
    if bad:
        k = bad[0]
        problems.append(
            f"loss at step {k + 1} (of {len(bad)} steps out of bounds): ours {ours.losses[k]!r}, PyTorch f32"
            f" {f32.losses[k]!r}, f64 {f64.losses[k]!r}: relative deviation {devs[k]:.3g} > bound {bounds[k]:.3g}"
            f" (PyTorch's spread so far {max(spreads[:k + 1]):.3g})"
        )
    worst, worst_name, worst_spread = 0.0, "", 0.0
    for name in sorted(f32.weights):
        tensor_spread = spread([r.weights[name] for r in runs], rel_err)
        if name not in ours.weights:
            problems.append(f"no saved initializer {name}")
            continue
        dev = rel_err(ours.weights[name], f32.weights[name])
        if not worst_name or dev / weight_bound(tensor_spread) > worst / weight_bound(worst_spread):
            worst, worst_name, worst_spread = dev, name, tensor_spread
        if not dev <= weight_bound(tensor_spread):
            problems.append(f"final {name} {list(f32.weights[name].shape)}: relative deviation {dev:.3g}"
                            f" > bound {weight_bound(tensor_spread):.3g} (PyTorch's spread {tensor_spread:.3g})")
    return Comparison(case, loss_dev, max(loss_deviations(f32.losses, f64.losses), default=0.0),
                      max(spreads, default=0.0), worst, worst_name, worst_spread, problems)


# --- command line -------------------------------------------------------------------


def _spreads(cases):
    print(f"{'case':22s} {'steps':>5s} {'first loss':>10s} {'last loss':>10s} | loss: {'f32/f64':>8s} {'spread':>8s}"
          f" | tensors: {'f32/f64':>8s} {'spread':>8s}")
    for case in cases:
        f32, f64 = reference(case, torch.float32), reference(case, torch.float64)
        runs = [f32, f64] + reference_variants(case)
        loss_runs = list(zip(*(r.losses for r in runs)))
        print(f"{case.name:22s} {case.steps:5d} {f32.losses[0]:10.4f} {f32.losses[-1]:10.4f} |"
              f" {max(loss_deviations(f32.losses, f64.losses)):14.1e} {max(spread(l, rel_err) for l in loss_runs):8.1e} |"
              f" {max(rel_err(f32.weights[n], f64.weights[n]) for n in f32.weights):17.1e}"
              f" {max(spread([r.weights[n] for r in runs], rel_err) for n in f32.weights):8.1e}")


def _write(case, directory):
    os.makedirs(directory, exist_ok=True)
    model = os.path.join(directory, "model.onnx")
    export_case(case, model)
    inputs = write_inputs(case, directory)
    exe = os.path.join(directory, "train")
    print("tidalc " + shlex.join([model, "-o", exe] + tidalc_flags(case)))
    print(shlex.join([exe] + inputs + ["--steps", str(case.steps), "--log", os.path.join(directory, "log.jsonl"),
                                       "--save", os.path.join(directory, "out.onnx"), "--quiet"]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.training", description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", help=f"case names (default: all): {', '.join(CASES_BY_NAME)}")
    parser.add_argument("--write", metavar="DIR", help="write one case's model and inputs to DIR")
    args = parser.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES_BY_NAME]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}")
    cases = [CASES_BY_NAME[c] for c in args.cases] or CASES
    if args.write:
        if len(cases) != 1:
            parser.error("--write takes exactly one case")
        _write(cases[0], args.write)
    else:
        _spreads(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
