"""Real models on the simulated device under a tight budget: the ops the
real-model suite brought (ConvTranspose as conv_backward_data, Resize's
gathers, Cast, Where on masks, scatter-adds, LSTM's unrolled steps) go
through placement, swapping/recomputation and the device runtime, and the
trained weights are bit-equal to the cpu target's (SPEC: the sim target
computes exactly what cpu does).

Each model compiles for cpu, for sim at half its lower bound
(`--device-memory`; the planner must swap or recompute to fit) and for sim
at the smallest budget the planner reports (streamed parameters, the host
optimizer, swaps and recomputation together), trains 3 steps of AdamW from
the same data, and every --save file must hold the cpu run's bits. Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

import support

from tidal import real_models, real_training, training

_SKIP = support.skip_reason("tidalc")
MODELS = ("unet", "gpt2", "bert", "lstm", "mobilenet_v3_small")
STEPS = 3


@unittest.skipIf(_SKIP, _SKIP)
class RealModelsSimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        warnings.filterwarnings("ignore")
        cls.tmp = tempfile.mkdtemp(prefix="tidal-real-sim-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_ok(self, argv):
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}\n{proc.stderr}")
        return proc.stdout

    def check(self, name):
        work = os.path.join(self.tmp, name)
        os.makedirs(work)
        model = os.path.join(work, "model.onnx")
        proto = real_models.export(name, model)
        freeze = real_training.freeze_list(name, proto, real_training.onnx_name_map(name, proto, "small"), "small")
        c = real_training.case(name, "adamw", STEPS)
        flags = training.tidalc_flags(c) + (["--freeze", ",".join(freeze)] if freeze else [])
        tidalc = support.tool("tidalc")
        plan = os.path.join(work, "plan.json")
        self.run_ok([tidalc, model, "-o", plan, "--emit", "plan", "--target", "sim"] + flags)
        with open(plan) as f:
            lower = json.load(f)["lower_bound_bytes"]
        budget = str(lower // 2)
        # The plan at that budget fits it by swapping or recomputing.
        self.run_ok([tidalc, model, "-o", plan, "--emit", "plan", "--target", "sim",
                     "--device-memory", budget] + flags)
        with open(plan) as f:
            fitted = json.load(f)
        device = [a["bytes"] for a in fitted["arenas"] if a["space"] == "device"]
        self.assertTrue(device and max(device) <= int(budget), f"{name}: device arenas {device} > {budget}")
        moved = sum(len(t.get("swaps") or []) + len(t.get("recomputations") or []) for t in fitted["tensors"])
        self.assertGreater(moved, 0, f"{name}: nothing swapped or recomputed at {budget} bytes")
        # And at the smallest budget auto reaches (streamed parameters,
        # the host optimizer, swaps and recomputation together).
        proc = subprocess.run([tidalc, model, "-o", os.path.join(work, "x.json"), "--emit", "plan", "--target",
                               "sim", "--device-memory", "1", "--host-layers", "off"] + flags, capture_output=True,
                              text=True, timeout=600)
        found = re.search(r"the smallest budget its plan reaches is (\d+) bytes", proc.stderr)
        self.assertIsNotNone(found, proc.stderr)
        smallest = found.group(1)
        self.assertLess(int(smallest), int(budget), name)
        data = real_training.write_data(name, work, c.batch * STEPS)
        saved = {}
        for target, b in (("cpu", None), ("sim", budget), ("sim", smallest)):
            tag = f"{target}-{b}"
            exe = os.path.join(work, f"train-{tag}")
            extra = ["--target", "sim", "--device-memory", b] if b else []
            self.run_ok([tidalc, model, "-o", exe] + flags + extra)
            out = os.path.join(work, f"{tag}.onnx")
            self.run_ok([exe, "--steps", str(STEPS), "--quiet", "--threads", "1", "--save", out] + data)
            saved[tag] = real_training.read_saved(out)
        cpu = saved.pop("cpu-None")
        for tag, values in saved.items():
            self.assertEqual(sorted(cpu), sorted(values))
            for key, value in cpu.items():
                self.assertTrue(np.array_equal(value, values[key], equal_nan=True),
                                f"{name}: {key} differs between cpu and {tag} bytes")


def _add_tests():
    for name in MODELS:
        def test(self, name=name):
            self.check(name)
        test.__doc__ = f"{name} on the sim device at half its lower bound, bit-equal to cpu"
        setattr(RealModelsSimTest, f"test_{name}", test)


_add_tests()

if __name__ == "__main__":
    unittest.main()
