"""Fused batch-norm epilogues (tidal-fuse-epilogues) change no value.

ResNet-20 (BatchNorm + ReLU) and mobilenet_mini14 (BatchNorm + ReLU6, which
PyTorch exports as Clip) from tidal.training.CASES are compiled for the cpu
target with `--fuse-epilogues on` (the default) and `off`, trained three
shuffled steps, and compared: the per-step losses and every saved tensor
must be bitwise equal, and the fused program must really carry the fused
epilogue (`relu = true`, `clip_min`/`clip_max`) with no relu or clip left
behind the normalizations it fused.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import os
import re
import shutil
import tempfile
import unittest

import support
from tidal import training

_SKIP = support.skip_reason("tidalc")
STEPS = 3
# case -> the attribute the fused normalizations carry
CASES = {"resnet20_momentum": "relu = true", "mobilenet_mini14_momentum": "clip_max = 6.0"}


@unittest.skipIf(_SKIP, _SKIP)
class FuseEpiloguesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-epilogue-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_fused_equals_unfused(self):
        for name, attr in CASES.items():
            case = training.CASES_BY_NAME[name]
            with self.subTest(case=name):
                work = os.path.join(self.tmp, name)
                os.makedirs(work, exist_ok=True)
                model = os.path.join(work, "model.onnx")
                training.export_case(case, model)
                flags = training.tidalc_flags(case)
                inputs = training.write_inputs(case, work)

                ir = {}
                for mode in ("on", "off"):
                    proc = support.run_tidalc([model, "--emit", "mlir", "--stop-after", "tidal-fuse-epilogues",
                                               "--fuse-epilogues", mode] + flags, timeout=300)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    ir[mode] = proc.stdout
                fused = len(re.findall(r"tidal\.batch_norm_training [^\n]*" + re.escape(attr), ir["on"]))
                self.assertGreater(fused, 0, f"{name}: no '{attr}' epilogue fused")
                activation = "tidal.relu " if "relu" in attr else "tidal.clip "
                self.assertEqual(ir["off"].count(activation) - ir["on"].count(activation), fused,
                                 f"{name}: each fused epilogue replaces one {activation.strip()}")

                runs = {}
                for mode in ("on", "off"):
                    exe = os.path.join(work, f"train_{mode}")
                    proc = support.run_tidalc([model, "-o", exe, "--fuse-epilogues", mode] + flags, timeout=300)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    runs[mode] = support.train_saving(exe, inputs, work, mode, STEPS)
                (on_log, on_saved), (off_log, off_saved) = runs["on"], runs["off"]
                self.assertEqual([l["loss"] for l in on_log], [l["loss"] for l in off_log], name)
                self.assertEqual(sorted(on_saved), sorted(off_saved), name)
                for key, value in off_saved.items():
                    self.assertEqual(on_saved[key], value, f"{name}: '{key}' differs with fused epilogues")


if __name__ == "__main__":
    unittest.main()
