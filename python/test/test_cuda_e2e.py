"""Training on an NVIDIA GPU (issue 7; SPEC sections 1, 2 and 5).

On a machine with a usable GPU and a tidalc built with nvcc:
- every case of tidal.training.CASES compiled with `--target cuda` trains
  like PyTorch (test_train_e2e.CaseTests: the loss, weights, running
  statistics and optimizer state, to PyTorch's own float32 spread);
- for LeNet, ResNet-20 and the transformer block, plans at the no-swap
  peak, halfway down and at the smallest budget the planner reaches, each
  with auto placement (host optimizer where it pays) and all-device
  placement, give bitwise the same losses and saved tensors as each other
  (the CUDA kernels are deterministic and no plan changes the arithmetic),
  with the measured device peak within every budget and tensors moving
  below the peak.
Skips, stating why, where tidalc cannot link --target cuda executables or
the executable finds no usable GPU (exit 2, "no usable CUDA device").

Needs TIDAL_BUILD_DIR with bin/tidalc.

TIDAL_CUDA_PREBUILD=1 compiles every executable and runs none (no GPU
needed): with scripts/tidalc_replay.py recording, this is how
scripts/gpu_pack.sh prepares the executables for a GPU machine that has no
tidalc (docs/cuda.md, "Running the GPU checks").
"""

import json
import os
import re
import shutil
import tempfile
import unittest

import support
from tidal import training
from test_train_e2e import CaseTests

_SKIP = support.skip_reason("tidalc")
PLAN_CASES = ("lenet_momentum", "resnet20_momentum", "transformer17_adamw")
STEPS = 3
PREBUILD = os.environ.get("TIDAL_CUDA_PREBUILD") == "1"
_gpu_reason = None


def gpu_skip_reason():
    """Why --target cuda executables cannot run here, or None (probed once:
    compile the smallest case and run one step)."""
    global _gpu_reason
    if _gpu_reason is not None:
        return _gpu_reason or None
    work = tempfile.mkdtemp(prefix="tidal-cuda-probe-")
    try:
        case = training.CASES_BY_NAME["mlp_digits_sgd"]
        model = os.path.join(work, "model.onnx")
        training.export_case(case, model)
        exe = os.path.join(work, "train")
        proc = support.run_tidalc([model, "-o", exe, "--target", "cuda"] + training.tidalc_flags(case), timeout=300)
        if proc.returncode != 0:
            _gpu_reason = "tidalc cannot build --target cuda executables: " + proc.stderr.strip().splitlines()[-1]
            return _gpu_reason
        if PREBUILD:
            _gpu_reason = ""
            return None
        proc = support.run([exe] + training.write_inputs(case, work) + ["--steps", "1", "--quiet"], timeout=300)
        if proc.returncode == 2 and "no usable CUDA device" in proc.stderr:
            _gpu_reason = proc.stderr.strip().splitlines()[-1]
            return _gpu_reason
        _gpu_reason = ""
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


@unittest.skipIf(_SKIP, _SKIP)
class CudaE2ETest(CaseTests, unittest.TestCase):
    TIDALC_FLAGS = ["--target", "cuda"]
    LABEL = "cuda"

    @classmethod
    def setUpClass(cls):
        reason = gpu_skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        super().setUpClass()

    def check_case(self, name):
        if PREBUILD:
            self.executable(training.CASES_BY_NAME[name])
            return
        super().check_case(name)


@unittest.skipIf(_SKIP, _SKIP)
class CudaPlansTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        reason = gpu_skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        cls.tmp = tempfile.mkdtemp(prefix="tidal-cuda-plans-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def smallest_budget(self, model, flags):
        proc = support.run_tidalc([model, "--emit", "plan", "-o", os.devnull, "--target", "cuda",
                                   "--device-memory", "1", "--host-layers", "off"] + flags, timeout=600)
        match = re.search(r"the smallest budget its plan reaches is (\d+) bytes", proc.stderr)
        self.assertIsNotNone(match, support.describe(proc))
        return int(match.group(1))

    def test_plans_are_bitwise_equal_within_budget(self):
        for name in PLAN_CASES:
            case = training.CASES_BY_NAME[name]
            with self.subTest(case=name):
                work = os.path.join(self.tmp, name)
                os.makedirs(work, exist_ok=True)
                model = os.path.join(work, "model.onnx")
                training.export_case(case, model)
                inputs = training.write_inputs(case, work)
                flags = training.tidalc_flags(case)
                plan = os.path.join(work, "plan.json")
                proc = support.run_tidalc([model, "-o", plan, "--emit", "plan", "--target", "cuda"] + flags,
                                          timeout=600)
                self.assertEqual(proc.returncode, 0, support.describe(proc))
                with open(plan) as f:
                    peak = json.load(f)["predicted"]["peak_device_bytes"]
                exes = {}
                for placement in ("auto", "device"):
                    extra = ["--placement", placement]
                    smallest = self.smallest_budget(model, extra + flags)
                    for budget in sorted({peak, (peak + smallest) // 2, smallest}, reverse=True):
                        tag = f"{placement}_{budget}"
                        exe = os.path.join(work, f"train_{tag}")
                        proc = support.run_tidalc([model, "-o", exe, "--target", "cuda", "--device-memory",
                                                   str(budget)] + extra + flags, timeout=600)
                        self.assertEqual(proc.returncode, 0, support.describe(proc))
                        exes[tag] = (exe, budget)
                if PREBUILD:
                    continue
                runs = {}
                for tag, (exe, budget) in exes.items():
                    log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
                    proc = support.run([exe] + inputs + ["--steps", str(STEPS), "--shuffle", "--seed", "5",
                                                         "--log", log, "--save", out, "--quiet"], timeout=600)
                    self.assertEqual(proc.returncode, 0, f"{tag}: {support.describe(proc)}")
                    lines = support.log_lines(log)
                    for line in lines:
                        self.assertLessEqual(line["device_peak_bytes"], budget, tag)
                        if budget < peak:
                            self.assertGreater(line["bytes_to_host"], 0, f"{tag}: nothing moved below the peak")
                    runs[tag] = ([l["loss"] for l in lines], support.saved_initializers(out))
                first_tag, (first_losses, first_saved) = next(iter(runs.items()))
                for tag, (losses, saved) in runs.items():
                    self.assertEqual(losses, first_losses, f"{name}: losses of {tag} vs {first_tag}")
                    for key, value in first_saved.items():
                        self.assertEqual(saved[key], value, f"{name}: '{key}' of {tag} vs {first_tag}")


if __name__ == "__main__":
    unittest.main()
