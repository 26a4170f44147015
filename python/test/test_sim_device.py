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
It then does the same halfway down with the MILP planner, at the smallest
budget under a GPU-like cost model
(where recomputation and delayed copies win), and at the smallest budget that
recomputation alone reaches (--swap off: nothing moves, the plan lists its
recomputations). Every op stays on the device (`--placement device`);
test_sim_placement.py covers placement.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import json
import os
import re
import shutil
import tempfile
import unittest
import zlib

import support
from tidal import training

_SKIP = support.skip_reason("tidalc")
STEPS = 3
# Cases where no tensor idle across the peak can be recomputed from
# operands still live at its next use.
RECOMPUTE_NOTHING = ("regressor_adam",)
CASES = ["lenet_momentum", "vgg_bn13_momentum_wd", "resnet20_momentum", "transformer17_adamw", "regressor_adam"]


saved = support.saved_initializers
log_lines = support.log_lines


@unittest.skipIf(_SKIP, _SKIP)
class SimDeviceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-sim-")
        # An H100-like device over PCIe (docs/cost-model.md) as the compute
        # profile of the sim target.
        cls.gpu_profile = os.path.join(cls.tmp, "gpu.json")
        device = {"name": "H100-like", "gflops": 50000, "gbytes_per_s": 2800, "op_overhead_us": 5}
        with open(cls.gpu_profile, "w") as f:
            json.dump({"format": "tidal-device-profile", "version": 1, "host": dict(device, threads=1),
                       "device": device, "link": {"name": "PCIe", "gbytes_per_s": 50, "latency_us": 10}}, f)

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
                # Swaps and recomputation alone: placement has its own test
                # (test_sim_placement.py).
                flags = training.tidalc_flags(case) + ["--placement", "device"]
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
                smallest = self.smallest_budget(model, plan_path, flags)
                self.assertLess(smallest, peak, f"{name}: no swap lowers the peak {peak}")

                def check(budget, extra, what, moves=True):
                    tag = f"{budget}_{zlib.crc32(' '.join(extra).encode())}"
                    exe = os.path.join(work, f"train_sim_{tag}")
                    proc = self.tidalc([model, "-o", exe, "--target", "sim", "--device-memory", str(budget)] +
                                       extra + flags)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    sim_log, sim_saved = self.train(exe, inputs, work, f"sim_{tag}",
                                                    env={"TIDAL_SIM_LINK_GBPS": "2"})
                    what = f"{name} at {budget} bytes {what} (no-swap peak {peak})"
                    self.assertEqual([l["loss"] for l in sim_log], [l["loss"] for l in cpu_log], what)
                    self.assertEqual(sorted(sim_saved), sorted(cpu_saved), what)
                    for key, value in cpu_saved.items():
                        self.assertEqual(sim_saved[key], value, f"{what}: '{key}' differs from the cpu run")
                    # Every copy the plan states happens, and no other.
                    plan_at = os.path.join(work, f"plan_{tag}.json")
                    proc = self.tidalc([model, "-o", plan_at, "--emit", "plan", "--target", "sim", "--device-memory",
                                        str(budget)] + extra + flags)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    with open(plan_at) as f:
                        to_host, to_device = support.planned_copy_bytes(json.load(f))
                    for line in sim_log:
                        self.assertLessEqual(line["device_peak_bytes"], budget, what)
                        self.assertGreater(line["device_peak_bytes"], 0, what)
                        self.assertEqual((line["bytes_to_host"], line["bytes_to_device"]), (to_host, to_device), what)
                        if moves:
                            self.assertGreater(line["bytes_to_host"], 0, what)
                        else:
                            self.assertEqual(line["bytes_to_host"], 0, what)

                for budget in (peak, (peak + smallest) // 2, smallest):
                    check(budget, [], f"(smallest {smallest})", moves=budget < peak)

                # The optimal mode, halfway down.
                check((peak + smallest) // 2, ["--planner", "milp"], "with the MILP planner")
                # A GPU-like cost model (fast kernels, a slow link): the
                # planner recomputes, delays copies and swaps together.
                gpu = ["--device-profile", self.gpu_profile]
                smallest_gpu = self.smallest_budget(model, plan_path, gpu + flags)
                check(smallest_gpu, gpu, "with a GPU-like cost model")
                # Recomputation alone: nothing moves.
                alone = ["--swap", "off"]
                smallest_rc = self.smallest_budget(model, plan_path, alone + flags)
                if smallest_rc < peak:
                    check(smallest_rc, alone, "by recomputation alone", moves=False)
                    recomputed = self.recomputations(model, plan_path, smallest_rc, alone + flags)
                    self.assertGreater(recomputed, 0, name)
                else:
                    self.assertIn(name, RECOMPUTE_NOTHING, f"{name}: recomputation lowers nothing")

    def smallest_budget(self, model, plan_path, flags):
        """The smallest budget the planner reaches, from its error for 1 byte."""
        proc = self.tidalc([model, "-o", plan_path + ".tiny", "--emit", "plan", "--target", "sim",
                            "--device-memory", "1", "--host-layers", "off"] + flags)
        self.assertNotEqual(proc.returncode, 0)
        found = re.search(r"the smallest budget its plan reaches is (\d+) bytes", proc.stderr)
        self.assertIsNotNone(found, proc.stderr)
        self.assertFalse(os.path.exists(plan_path + ".tiny"))
        return int(found.group(1))

    def recomputations(self, model, plan_path, budget, flags):
        out = plan_path + f".{budget}"
        proc = self.tidalc([model, "-o", out, "--emit", "plan", "--target", "sim", "--device-memory",
                            str(budget)] + flags)
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        with open(out) as f:
            plan = json.load(f)
        clones = {op["position"] for op in plan["schedule"] if "recompute_of" in op}
        listed = {r["position"] for t in plan["tensors"] for r in t["recomputations"]}
        self.assertEqual(listed, clones)
        return len(clones)

if __name__ == "__main__":
    unittest.main()
