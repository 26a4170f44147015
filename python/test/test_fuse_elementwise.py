"""Fused element-wise chains (tidal-fuse-elementwise) change no value.

Each case of tidal.training.CASES below is compiled for the cpu target with
`--fuse-elementwise on` (the default) and `off`, trained three shuffled
steps, and compared: the per-step losses and every saved tensor must be
bitwise equal, and the fused program must really contain fused chains (a
case without any would test nothing).

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
CASES = ["resnet20_momentum", "transformer17_adamw", "activation_mlp_adamw", "regressor_adam"]


@unittest.skipIf(_SKIP, _SKIP)
class FuseElementwiseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-fuse-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_fused_equals_unfused(self):
        for name in CASES:
            case = training.CASES_BY_NAME[name]
            with self.subTest(case=name):
                work = os.path.join(self.tmp, name)
                os.makedirs(work, exist_ok=True)
                model = os.path.join(work, "model.onnx")
                training.export_case(case, model)
                flags = training.tidalc_flags(case)
                inputs = training.write_inputs(case, work)

                proc = support.run_tidalc([model, "--emit", "mlir", "--stop-after",
                                           "tidal-fuse-elementwise"] + flags, timeout=300)
                self.assertEqual(proc.returncode, 0, support.describe(proc))
                fused = len(re.findall(r"tidal\.fused_elementwise", proc.stdout))
                self.assertGreater(fused, 0, f"{name}: nothing fused")

                runs = {}
                for mode in ("on", "off"):
                    exe = os.path.join(work, f"train_{mode}")
                    proc = support.run_tidalc([model, "-o", exe, "--fuse-elementwise", mode] + flags, timeout=300)
                    self.assertEqual(proc.returncode, 0, support.describe(proc))
                    runs[mode] = support.train_saving(exe, inputs, work, mode, STEPS)
                (on_log, on_saved), (off_log, off_saved) = runs["on"], runs["off"]
                self.assertEqual([l["loss"] for l in on_log], [l["loss"] for l in off_log], name)
                self.assertEqual(sorted(on_saved), sorted(off_saved), name)
                for key, value in off_saved.items():
                    self.assertEqual(on_saved[key], value, f"{name}: '{key}' differs with fused chains")


if __name__ == "__main__":
    unittest.main()
