"""Gradient checks of the trigonometric, inverse and hyperbolic ops (Tan, Asin,
Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh): tidal's autodiff vs
torch.autograd in float64, as the per-op gradient checks
(grad_cases_support.py) check the other ops (gradcheck_support: tiny ONNX
graphs, every gradient to 1e-4 relative). Each input is drawn inside the
op's domain and away from its poles.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()

# (op, torch reference, input range)
FORMS = [
    ("Tan", torch.tan, (-1.2, 1.2)),
    ("Asin", torch.asin, (-0.9, 0.9)),
    ("Acos", torch.acos, (-0.9, 0.9)),
    ("Atan", torch.atan, (-4.0, 4.0)),
    ("Sinh", torch.sinh, (-3.0, 3.0)),
    ("Cosh", torch.cosh, (-3.0, 3.0)),
    ("Asinh", torch.asinh, (-4.0, 4.0)),
    ("Acosh", torch.acosh, (1.1, 4.0)),
    ("Atanh", torch.atanh, (-0.9, 0.9)),
]


def trig_cases(rng):
    cases = []
    for op, fn, (lo, hi) in FORMS:
        for j, shape in enumerate([(7,), (3, 5), (2, 3, 4)]):
            x = rng.uniform(lo, hi, size=shape).astype(np.float32)
            cases.append(Case(f"{op.lower()}_{j}", [Node(op, ["x"], ["y"])], ["y"],
                              lambda T, fn=fn: [fn(T["x"])], params={"x": x}))
        # Composed: d(f(x) * x)/dx, so the forward value enters the gradient.
        x = rng.uniform(lo, hi, size=(4, 3)).astype(np.float32)
        nodes = [Node(op, ["x"], ["f"]), Node("Mul", ["f", "x"], ["y"])]
        cases.append(Case(f"{op.lower()}_product", nodes, ["y"], lambda T, fn=fn: [fn(T["x"]) * T["x"]],
                          params={"x": x}))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradTrigTest(unittest.TestCase):
    def test_grad_trig(self):
        gs.check_family(self, "trig", trig_cases(gs.rng_for("trig")))


if __name__ == "__main__":
    unittest.main()
