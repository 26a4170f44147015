"""GridSample (F.grid_sample) against torch.autograd in float64: the
output, and the gradients of both the input and the grid, for bilinear and
nearest sampling, zeros, border and reflection padding, both
align_corners, on grids reaching past the image, for images (opset 16) and
volumes (5-D, trilinear, opset 20) (gradcheck_support: every gradient to
1e-4 relative).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()


def grid_sample_cases(rng):
    cases = []
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                n, c, h, w, ho, wo = 2, 3, int(rng.integers(3, 7)), int(rng.integers(3, 7)), 4, 5
                x = rng.standard_normal((n, c, h, w)).astype(np.float32)
                # Past [-1, 1] by up to 30%, so that padding matters.
                grid = rng.uniform(-1.3, 1.3, size=(n, ho, wo, 2)).astype(np.float32)
                attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
                ref = (lambda T, mode=mode, padding=padding, align=align:
                       [F.grid_sample(T["x"], T["grid"], mode=mode, padding_mode=padding, align_corners=bool(align))])
                # Nearest sampling passes no gradient to the grid (PyTorch's is
                # zero): tidal makes none, so the grid is a frozen input there.
                params, frozen = ({"x": x, "grid": grid}, {}) if mode == "bilinear" else ({"x": x}, {"grid": grid})
                cases.append(Case(f"{mode}_{padding}_align{align}", [Node("GridSample", ["x", "grid"], ["y"], attrs)],
                                  ["y"], ref, params=params, frozen=frozen, opset=16))
    # Volumes: a 5-D X and a grid of (x, y, z).
    for mode in ("bilinear", "nearest"):
        for padding, align in (("zeros", 0), ("border", 1), ("reflection", 0)):
            n, c, d, h, w = 2, 2, int(rng.integers(3, 5)), int(rng.integers(3, 5)), int(rng.integers(3, 5))
            x = rng.standard_normal((n, c, d, h, w)).astype(np.float32)
            grid = rng.uniform(-1.3, 1.3, size=(n, 2, 3, 4, 3)).astype(np.float32)
            attrs = {"mode": "linear" if mode == "bilinear" else mode, "padding_mode": padding,
                     "align_corners": align}
            ref = (lambda T, mode=mode, padding=padding, align=align:
                   [F.grid_sample(T["x"], T["grid"], mode=mode, padding_mode=padding, align_corners=bool(align))])
            params, frozen = ({"x": x, "grid": grid}, {}) if mode == "bilinear" else ({"x": x}, {"grid": grid})
            cases.append(Case(f"volume_{mode}_{padding}_align{align}",
                              [Node("GridSample", ["x", "grid"], ["y"], attrs)], ["y"], ref, params=params,
                              frozen=frozen, opset=20))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradGridSampleTest(unittest.TestCase):
    def test_grad_grid_sample(self):
        gs.check_family(self, "grid_sample", grid_sample_cases(gs.rng_for("grid_sample")))


if __name__ == "__main__":
    unittest.main()
