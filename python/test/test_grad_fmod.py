"""Gradient checks of Mod on run-time values (lib/Importer/
LogicConverters.cpp: float fmod as x - trunc(x / y) * y): tidal's autodiff
vs torch.fmod's in float64 (gradcheck_support: every gradient to 1e-4
relative). Inputs keep x / y away from integers, where fmod jumps.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()


def fmod_cases(rng):
    cases = []
    for j, (sx, sy) in enumerate([((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((5, 2), (1, 2))]):
        y = (rng.uniform(0.6, 1.6, sy) * np.sign(rng.standard_normal(sy))).astype(np.float32)
        # x = y_broadcast * (k + f) with f in [0.2, 0.8]: far from the jumps.
        k = rng.integers(-3, 4, sx)
        f = rng.uniform(0.2, 0.8, sx)
        x = (np.broadcast_to(y, sx) * (k + f)).astype(np.float32)
        cases.append(Case(f"fmod_{j}", [Node("Mod", ["x", "y"], ["z"], {"fmod": 1})], ["z"],
                          lambda T: [torch.fmod(T["x"], T["y"])], params={"x": x, "y": y}, opset=13))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradFmodTest(unittest.TestCase):
    def test_grad_fmod(self):
        gs.check_family(self, "fmod", fmod_cases(gs.rng_for("fmod")))


if __name__ == "__main__":
    unittest.main()
