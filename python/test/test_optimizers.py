"""The whole training step (forward, loss, backward, optimizer update)
against torch.optim: an MLP compiled with each --optimizer is run for a few
steps through tidal-eval, feeding each step's new parameters and optimizer
state into the next, and compared with the same model trained by PyTorch
1.13's torch.optim from the same weights on the same mini-batches: per-step
loss and final weights to 1e-4 relative (SPEC section 5).
"""

import json
import os
import re
import tempfile
import unittest

import numpy as np
import torch
from onnx import numpy_helper
import onnx

import support
from gradcheck_support import function_arguments, rel_err

TOLERANCE = 1e-4
STEPS = 4
BATCH = 4

CONFIGS = [
    ("sgd", ["--lr", "0.1"], lambda p: torch.optim.SGD(p, lr=0.1)),
    ("sgd_wd", ["--lr", "0.1", "--weight-decay", "0.01"], lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.01)),
    ("momentum", ["--lr", "0.05", "--momentum", "0.9"], lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    ("nesterov", ["--lr", "0.05", "--momentum", "0.9", "--nesterov", "--weight-decay", "5e-4"],
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)),
    ("adam", ["--optimizer", "adam", "--lr", "0.01"], lambda p: torch.optim.Adam(p, lr=0.01)),
    ("adam_wd", ["--optimizer", "adam", "--lr", "0.01", "--weight-decay", "0.1", "--beta1", "0.8", "--eps", "1e-6"],
     lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, betas=(0.8, 0.999), eps=1e-6)),
    ("adamw", ["--optimizer", "adamw", "--lr", "0.01"], lambda p: torch.optim.AdamW(p, lr=0.01)),
]

DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}


def zeros_for(mlir_type):
    m = re.fullmatch(r"tensor<(?:([0-9x]+)x)?(f32|f64|i64|i32)>", mlir_type)
    if not m:
        raise ValueError(f"unexpected optimizer state type {mlir_type}")
    shape = [int(d) for d in m.group(1).split("x")] if m.group(1) else []
    return np.zeros(shape, DTYPES[m.group(2)])


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


@unittest.skipIf(support.skip_reason("tidalc", "tidal-eval"), support.skip_reason("tidalc", "tidal-eval"))
class OptimizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-opt-")
        cls.onnx_path = os.path.join(cls.tmp, "mlp.onnx")
        torch.onnx.export(make_model(), torch.zeros(BATCH, 6), cls.onnx_path, opset_version=13,
                          input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        rng = np.random.default_rng(7)
        cls.batches = [(rng.standard_normal((BATCH, 6)).astype(np.float32), rng.integers(0, 3, BATCH))
                       for _ in range(STEPS)]

    def run_tidal(self, name, flags):
        work = os.path.join(self.tmp, name)
        os.makedirs(work, exist_ok=True)
        mlir_path = os.path.join(work, "step.mlir")
        proc = support.run_tidalc([self.onnx_path, "--emit", "mlir", "--batch-size", str(BATCH),
                                   "--loss", "cross-entropy", *flags, "-o", mlir_path])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        with open(mlir_path) as f:
            args = function_arguments(f.read())
        model = onnx.load(self.onnx_path)
        values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        for ty, arg, role in args:
            if role == "optimizer_state":
                values[arg] = zeros_for(ty)
        losses = []
        for step, (x, y) in enumerate(self.batches):
            values["input"], values["label"] = x, y.astype(np.int64)
            argv = [support.tool("tidal-eval"), mlir_path]
            for i, (_, arg, _) in enumerate(args):
                path = os.path.join(work, f"arg{i}.npy")
                np.save(path, values[arg])
                argv += ["--arg", f"{arg}={path}"]
            out = os.path.join(work, f"out{step}")
            proc = support.run(argv + ["--output-dir", out])
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            with open(os.path.join(out, "manifest.json")) as f:
                for r in json.load(f)["results"]:
                    value = np.load(os.path.join(out, r["file"]))
                    if r["role"] == "loss":
                        losses.append(float(value))
                    else:
                        self.assertIn(r["role"], ("param", "optimizer_state", "state"), r)
                        values[r["name"]] = value
        return losses, values

    def run_torch(self, make_optimizer):
        model = make_model()
        opt = make_optimizer(model.parameters())
        losses = []
        for x, y in self.batches:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y))
            loss.backward()
            opt.step()
            losses.append(float(loss))
        return losses, {k: v.detach().numpy() for k, v in model.state_dict().items()}, opt

    def test_optimizers_match_torch(self):
        for name, flags, make_optimizer in CONFIGS:
            with self.subTest(optimizer=name):
                ours_losses, ours = self.run_tidal(name, flags)
                ref_losses, ref, opt = self.run_torch(make_optimizer)
                loss_err = max(abs(a - b) / abs(b) for a, b in zip(ours_losses, ref_losses))
                self.assertLess(loss_err, TOLERANCE, f"{name}: losses {ours_losses} vs {ref_losses}")
                worst = 0.0
                for pname, value in ref.items():
                    err = rel_err(ours[pname], value)
                    worst = max(worst, err)
                    self.assertLess(err, TOLERANCE, f"{name}: {pname} after {STEPS} steps")
                # Optimizer state under PyTorch's names (momentum_buffer, exp_avg, exp_avg_sq).
                params = dict(zip(ref.keys(), opt.param_groups[0]["params"]))
                for pname, p in params.items():
                    for key, value in opt.state[p].items():
                        if value is None:  # SGD without momentum keeps None
                            continue
                        if key == "step":
                            self.assertEqual(int(ours["optimizer.step"]), int(value), name)
                            continue
                        self.assertLess(rel_err(ours[f"{pname}.{key}"], value.numpy()), TOLERANCE,
                                        f"{name}: {pname}.{key}")
                print(f"  {name}: {STEPS} steps, max loss error {loss_err:.2e}, max weight error {worst:.2e}")


if __name__ == "__main__":
    unittest.main()
