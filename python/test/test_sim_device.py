"""Training on the simulated device under a memory budget (issue 6, SPEC 4).

Each case of tidal.training.CASES below is compiled for the cpu target and
for `--target sim` at three device budgets: the step's own peak (no swaps),
halfway down, and the smallest budget the planner reaches (read from the
error it gives for a 1-byte budget). Each sim executable trains three
shuffled steps over a throttled link (TIDAL_SIM_LINK_GBPS=2), so offloads and
prefetches really overlap the kernels on other threads. Then:
- the losses and every saved tensor are bitwise equal to the cpu run's;
- the device peak that the runtime measured (the highest device byte any
  kernel or copy touched, from its bounds-checked ranges) never exceeds the
  budget;
- below the no-swap peak, tensors really move (bytes_to_host > 0).

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import json
import os
import re
import shutil
import tempfile
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

import support
from tidal import training

_SKIP = support.skip_reason("tidalc")
STEPS = 3
CASES = ["lenet_momentum", "vgg_bn13_momentum_wd", "resnet20_momentum", "transformer17_adamw", "regressor_adam"]


def saved(path):
    return {i.name: numpy_helper.to_array(i).tobytes() for i in onnx.load(path).graph.initializer}


def log_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@unittest.skipIf(_SKIP, _SKIP)
class SimDeviceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-sim-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tidalc(self, args):
        proc = support.run_tidalc(args, timeout=300)
        return proc

    def train(self, exe, inputs, work, tag, env=None):
        log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
        argv = [exe] + inputs + ["--steps", str(STEPS), "--shuffle", "--seed", "11", "--log", log, "--save", out,
                                 "--quiet"]
        proc = support.subprocess.run(argv, capture_output=True, text=True, timeout=600,
                                      env=dict(os.environ, **(env or {})))
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}: {proc.stderr}")
        return log_lines(log), saved(out)

    def test_sim_budgets_bitwise_equal_to_cpu(self):
        for name in CASES:
            case = training.CASES_BY_NAME[name]
            with self.subTest(case=name):
                work = os.path.join(self.tmp, name)
                os.makedirs(work, exist_ok=True)
                model = os.path.join(work, "model.onnx")
                training.export_case(case, model)
                flags = training.tidalc_flags(case)
                inputs = training.write_inputs(case, work)
                cpu_exe = os.path.join(work, "train_cpu")
                proc = self.tidalc([model, "-o", cpu_exe] + flags)
                self.assertEqual(proc.returncode, 0, support.describe(proc))
                cpu_log, cpu_saved = self.train(cpu_exe, inputs, work, "cpu")

                # The no-swap peak, and the smallest budget the planner reaches.
                plan_path = os.path.join(work, "plan.json")
                proc = self.tidalc([model, "-o", plan_path, "--emit", "plan", "--target", "sim"] + flags)
                self.assertEqual(proc.returncode, 0, support.describe(proc))
                with open(plan_path) as f:
                    peak = json.load(f)["predicted"]["peak_device_bytes"]
                proc = self.tidalc([model, "-o", plan_path + ".tiny", "--emit", "plan", "--target", "sim",
                                    "--device-memory", "1"] + flags)
                self.assertNotEqual(proc.returncode, 0)
                found = re.search(r"the smallest budget its plan reaches is (\d+) bytes", proc.stderr)
                self.assertIsNotNone(found, proc.stderr)
                smallest = int(found.group(1))
                self.assertLess(smallest, peak, f"{name}: no swap lowers the peak {peak}")
                self.assertFalse(os.path.exists(plan_path + ".tiny"))

                for budget in (peak, (peak + smallest) // 2, smallest):
                    exe = os.path.join(work, f"train_sim_{budget}")
                    proc = self.tidalc([model, "-o", exe, "--target", "sim", "--device-memory", str(budget)] + flags)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    sim_log, sim_saved = self.train(exe, inputs, work, f"sim_{budget}",
                                                    env={"TIDAL_SIM_LINK_GBPS": "2"})
                    what = f"{name} at {budget} bytes (no-swap peak {peak}, smallest {smallest})"
                    self.assertEqual([l["loss"] for l in sim_log], [l["loss"] for l in cpu_log], what)
                    self.assertEqual(sorted(sim_saved), sorted(cpu_saved), what)
                    for key, value in cpu_saved.items():
                        self.assertEqual(sim_saved[key], value, f"{what}: '{key}' differs from the cpu run")
                    for line in sim_log:
                        self.assertLessEqual(line["device_peak_bytes"], budget, what)
                        self.assertGreater(line["device_peak_bytes"], 0, what)
                        if budget < peak:
                            self.assertGreater(line["bytes_to_host"], 0, what)
                            self.assertEqual(line["bytes_to_host"], line["bytes_to_device"], what)


if __name__ == "__main__":
    unittest.main()
