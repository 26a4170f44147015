"""End to end: tidal's generated executable trains like PyTorch (issue 4).

Each case of tidal.training.CASES is exported from PyTorch in training mode,
compiled with `tidalc model.onnx -o train --batch-size B --loss ...
--optimizer ... --lr ...`, and run as
`train --input input=X.npy --input label=Y.npy --steps S --log log.jsonl
--save out.onnx --quiet`. Its per-step losses (from the log) and final
weights, BatchNorm running statistics and optimizer state (from the --save
file) are compared with torch.optim's on the same weights and mini-batches
(SPEC section 5, tidal.training.compare): well-conditioned cases to 1e-4
relative at every step; the BatchNorm nets to 10x PyTorch's own spread
(float32 vs float64 vs float32 channels-last; at least 1e-4), step by step.
A one-step run is held to 1e-4 throughout (its optimizer state holds the
gradients). A table of the deviations goes to stderr; docs/correctness.md.

Also: --save + --init resumes bit for bit, and --epochs --shuffle --seed is
reproducible and visits every row once per epoch.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import json
import os
import shutil
import sys
import tempfile
import unittest
from dataclasses import replace

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import support
from tidal import training

_SKIP = support.skip_reason("tidalc")


def read_log(path):
    """[(step, loss)] from a --log file."""
    with open(path) as f:
        return [(int(r["step"]), float(r["loss"])) for r in map(json.loads, filter(str.strip, f))]


def read_saved(path):
    """({initializer name: array}, metadata_props) of a --save file."""
    model = onnx.load(path)
    onnx.checker.check_model(model)
    return ({i.name: numpy_helper.to_array(i) for i in model.graph.initializer},
            {p.key: p.value for p in model.metadata_props})


class CaseTests:
    """Every training case against PyTorch, for a target: mixed into a
    unittest.TestCase that sets TIDALC_FLAGS (added to each case's flags)
    and ENV (added to the executables' environment). Also used by
    test_emulated_kernels.py (sim with the CUDA kernels' host emulation) and
    test_cuda_e2e.py (a GPU)."""

    TIDALC_FLAGS = []
    ENV = {}
    LABEL = "e2e"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-e2e-")
        cls.exes = {}  # case name -> executable
        cls.full_runs = {}  # case name -> (losses, saved initializers)
        cls.rows = []

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if cls.rows:
            print(f"\n[{cls.LABEL}] tidal vs PyTorch float32, max relative deviation; for scale PyTorch's float32 vs"
                  " float64 and its spread over f32, f64 and f32 channels-last runs:", file=sys.stderr)
            print("  " + training.Comparison.HEADER + f" | {'step 1':>8s}  worst tensor", file=sys.stderr)
            for row in cls.rows:
                print("  " + row, file=sys.stderr)

    # --- helpers -----------------------------------------------------------

    def workdir(self, name):
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def executable(self, case):
        """Compiles `case` once; returns (exe, input flags, PyTorch -> ONNX names)."""
        if case.name not in self.exes:
            work = self.workdir(case.name)
            model = os.path.join(work, "model.onnx")
            _, name_map = training.export_case(case, model)
            exe = os.path.join(work, "train")
            flags = training.tidalc_flags(case) + self.TIDALC_FLAGS
            proc = support.run_tidalc([model, "-o", exe] + flags, timeout=300)
            if proc.returncode != 0 or not os.access(exe, os.X_OK):
                self.fail(f"{case.name}: tidalc {' '.join(flags)} failed: {support.describe(proc)}")
            self.exes[case.name] = (exe, training.write_inputs(case, work), name_map)
        return self.exes[case.name]

    def train(self, case, tag, args, inputs=None):
        """Runs the case's executable; returns (logged [(step, loss)], saved (inits, metadata))."""
        exe, input_flags, _ = self.executable(case)
        work = self.workdir(os.path.join(case.name, tag))
        log, out = os.path.join(work, "log.jsonl"), os.path.join(work, "out.onnx")
        argv = [exe] + (inputs or input_flags) + list(args) + ["--log", log, "--save", out, "--quiet"]
        proc = support.run(argv, timeout=300, env=self.ENV)
        if proc.returncode != 0:
            self.fail(f"{case.name}: {' '.join(argv)}: {support.describe(proc)}")
        return read_log(log), read_saved(out)

    def full_run(self, case):
        """The case's `--steps S` run, cached: (losses, saved initializers)."""
        if case.name not in self.full_runs:
            logged, (inits, meta) = self.train(case, "full", ["--steps", str(case.steps)])
            self.assertEqual([s for s, _ in logged], list(range(1, case.steps + 1)), f"{case.name}: logged steps")
            self.assertEqual(meta.get("tidal.steps_done"), str(case.steps), f"{case.name}: tidal.steps_done")
            self.full_runs[case.name] = ([l for _, l in logged], inits)
        return self.full_runs[case.name]

    # --- tidal vs PyTorch --------------------------------------------------

    def compare(self, case, losses, inits):
        name_map = self.executable(case)[2]
        return training.compare(case, training.Trajectory(losses, inits),
                                training.reference(case, torch.float32, name_map),
                                training.reference(case, torch.float64, name_map),
                                training.reference_variants(case, name_map))

    def check_case(self, name):
        case = training.CASES_BY_NAME[name]
        # The first step alone, which no rounding drift can excuse: the loss,
        # the new weights and running statistics, and the optimizer state
        # (which holds the gradients) to 1e-4.
        first = replace(case, steps=1, well_conditioned=True)
        logged, (inits, _) = self.train(case, "step1", ["--steps", "1"])
        step1 = self.compare(first, [l for _, l in logged], inits)
        result = self.compare(case, *self.full_run(case))
        self.rows.append(result.row() + f" | {step1.weight_dev:8.1e}  {step1.weight_dev_name}")
        summary = (f"{name}: {case.steps} steps, max loss deviation {result.loss_dev:.3g} (PyTorch f32 vs f64"
                   f" {result.loss_f64:.3g}, spread {result.loss_spread:.3g}), worst tensor {result.weight_dev_name}"
                   f" {result.weight_dev:.3g} (PyTorch's spread {result.weight_spread:.3g}); after step 1: worst tensor"
                   f" {step1.weight_dev_name} {step1.weight_dev:.3g} (spread {step1.weight_spread:.3g})")
        problems = [f"after step 1: {p}" for p in step1.problems] + result.problems
        if problems:
            shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
            self.fail(summary + "\n  " + "\n  ".join(shown))

    def test_mlp_digits_sgd(self):
        self.check_case("mlp_digits_sgd")

    def test_mlp_digits_nesterov(self):
        self.check_case("mlp_digits_nesterov")

    def test_lenet_momentum(self):
        self.check_case("lenet_momentum")

    def test_vgg_bn13_momentum_wd(self):
        self.check_case("vgg_bn13_momentum_wd")

    def test_vgg_bn15_momentum_wd(self):
        self.check_case("vgg_bn15_momentum_wd")

    def test_resnet20_momentum(self):
        self.check_case("resnet20_momentum")

    def test_regressor_adam(self):
        self.check_case("regressor_adam")

    def test_transformer13_adamw(self):
        self.check_case("transformer13_adamw")

    def test_transformer17_adamw(self):
        self.check_case("transformer17_adamw")

    def test_mobilenet_mini14_momentum(self):
        self.check_case("mobilenet_mini14_momentum")

    def test_activation_mlp_adamw(self):
        self.check_case("activation_mlp_adamw")



@unittest.skipIf(_SKIP, _SKIP)
class TrainE2ETest(CaseTests, unittest.TestCase):
    """The cpu target, and the executable's own guarantees."""

    # --- the executable's own guarantees --------------------------------------

    def test_resume_is_bitwise(self):
        # Adam (moments and step count) and BatchNorm + momentum (buffers and
        # running statistics): K steps, --save, --init, S - K steps == S steps.
        for name in ("regressor_adam", "vgg_bn13_momentum_wd"):
            case = training.CASES_BY_NAME[name]
            k = case.steps // 2
            with self.subTest(case=name):
                full_losses, full = self.full_run(case)
                first, (_, meta) = self.train(case, "half", ["--steps", str(k)])
                self.assertEqual(meta.get("tidal.steps_done"), str(k))
                half_path = os.path.join(self.workdir(os.path.join(name, "half")), "out.onnx")
                second, (resumed, meta) = self.train(case, "resumed", ["--init", half_path, "--steps", str(case.steps - k)])
                self.assertEqual(meta.get("tidal.steps_done"), str(case.steps))
                self.assertEqual([s for s, _ in first + second], list(range(1, case.steps + 1)), "logged step numbers")
                self.assertEqual([l for _, l in first + second], full_losses, f"losses of {k} + {case.steps - k} steps vs {case.steps}")
                self.assertEqual(sorted(resumed), sorted(full), "initializer names")
                differ = [n for n in full if resumed[n].tobytes() != full[n].tobytes()]
                self.assertFalse(differ, f"initializers not bitwise equal after resuming: {differ}")

    def test_epochs_shuffle_reproducible(self):
        case = training.CASES_BY_NAME["mlp_digits_sgd"]
        inputs, label = training.dataset(case)
        work = self.workdir("shuffle")
        x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(x, inputs["input"][:150])  # 9 batches of 16 per epoch, 6 rows dropped
        np.save(y, label[:150])
        data = ["--input", f"input={x}", "--input", f"label={y}"]
        runs = [self.train(case, f"shuffle{i}", ["--epochs", "2", "--shuffle", "--seed", str(seed)], data)
                for i, seed in enumerate((7, 7, 8))]
        plain, _ = self.train(case, "plain", ["--epochs", "2"], data)
        (log_a, (w_a, _)), (log_b, (w_b, _)), (log_c, _) = runs
        self.assertEqual([s for s, _ in log_a], list(range(1, 19)), "2 epochs of 9 batches")
        self.assertEqual(log_a, log_b, "same seed, different losses")
        self.assertFalse([n for n in w_a if w_a[n].tobytes() != w_b[n].tobytes()], "same seed, different weights")
        self.assertNotEqual(log_a, log_c, "--seed 7 and --seed 8 gave the same losses")
        self.assertNotEqual(log_a, plain, "--shuffle gave the file-order losses")

    def test_shuffle_visits_every_row_once_per_epoch(self):
        # With lr ~0 the weights stay put, so an epoch's mean batch loss is
        # the mean per-sample loss over the rows it visited: over all 160
        # rows (10 batches of 16) exactly when the epoch is a permutation.
        # (tidalc rejects --lr 0, which torch.optim accepts; 1e-30 leaves
        # every float32 weight of this model unchanged.)
        case = replace(training.CASES_BY_NAME["mlp_digits_sgd"], name="mlp_lr0", hparams={"lr": 1e-30})
        inputs, label = training.dataset(case)
        work = self.workdir("permutation")
        x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(x, inputs["input"][:160])
        np.save(y, label[:160])
        logged, _ = self.train(case, "run", ["--epochs", "2", "--shuffle", "--seed", "3"],
                               ["--input", f"input={x}", "--input", f"label={y}"])
        losses = np.array([l for _, l in logged], dtype=np.float64)
        self.assertEqual(len(losses), 20)
        with torch.no_grad():
            model = training.zoo.build(case.model).double()
            per_sample = torch.nn.functional.cross_entropy(
                model(torch.from_numpy(inputs["input"][:160]).double()), torch.from_numpy(label[:160]), reduction="none")
        expected = float(per_sample.mean())
        in_order = [float(per_sample[b * 16:(b + 1) * 16].mean()) for b in range(10)]
        for epoch in range(2):
            mean = float(losses[epoch * 10:(epoch + 1) * 10].mean())
            self.assertLess(abs(mean - expected) / expected, 1e-5, f"epoch {epoch + 1}: mean loss {mean} vs {expected}")
        self.assertFalse(np.allclose(losses[:10], in_order, rtol=1e-5), "epoch 1 is in file order")
        self.assertFalse(np.allclose(losses[:10], losses[10:], rtol=1e-5), "epochs 1 and 2 have the same order")


if __name__ == "__main__":
    unittest.main()
