"""Per-op gradient checks of Det (lib/Importer/LinalgConverters.cpp:
Gaussian elimination with partial pivoting, unrolled): tidal's automatic
differentiation vs torch.det in float64 (the method: grad_cases_support.py).
Cases: a 3x3, a batch of 4x4 with two batch dims, a 1x1, a matrix whose
first pivot is zero (the elimination must swap rows; the determinant's sign
flips with each swap), an 8x8, and the forward value of a singular matrix
(0, as PyTorch's; no gradient checked there).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node
from grad_cases_support import GradFamilyTest, f32, randn

_SKIP = gs.skip_reason()


def det_cases(rng):
    cases = []
    ref = lambda T: [torch.det(T["x"])]  # noqa: E731
    shapes = {"det_3": (3, 3), "det_batched_4": (2, 3, 4, 4), "det_1": (1, 1), "det_8": (8, 8)}
    for name, shape in shapes.items():
        # Away from singular: the identity scaled plus noise.
        x = randn(rng, *shape, scale=0.5) + np.eye(shape[-1], dtype=np.float32) * 2.0
        cases.append(Case(name, [Node("Det", ["x"], ["y"])], ["y"], ref, params={"x": f32(x)}))
    # A zero in the first pivot's place: partial pivoting swaps rows.
    swap = np.array([[0.0, 2.0, 1.0], [1.5, 0.5, -1.0], [0.3, -0.7, 2.0]], np.float32)
    cases.append(Case("det_pivoting", [Node("Det", ["x"], ["y"])], ["y"], ref, params={"x": swap}))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradLinalgTest(GradFamilyTest):
    def test_grad_det(self):
        self.check("det", det_cases(gs.rng_for("det")))

    def test_singular_det_is_zero(self):
        singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 0.25]], np.float32)
        case = Case("det_singular", [Node("Det", ["x"], ["y"])], ["y"], lambda T: [torch.det(T["x"])],
                    inputs={"x": singular})
        outcome = gs.run_cases([case], "det")[0]
        self.assertFalse(outcome.error, outcome.error)
        self.assertFalse(outcome.problems, outcome.problems)


if __name__ == "__main__":
    unittest.main()
