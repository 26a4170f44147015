"""Gradient checks of LpNormalization, MeanVarianceNormalization and Hardmax
(lib/Importer/NormalizationConverters.cpp): tidal's autodiff vs
torch.autograd in float64 of ONNX's definitions, as the per-op gradient
checks (grad_cases_support.py) check the other ops (gradcheck_support:
every gradient to 1e-4 relative).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()


def lp(x, p, axis):
    norm = x.abs().sum(axis, keepdim=True) if p == 1 else (x * x).sum(axis, keepdim=True).sqrt()
    return x / norm


def mvn(x, axes):
    m = x.mean(axes, keepdim=True)
    var = (x * x).mean(axes, keepdim=True) - m * m
    return (x - m) / (var.sqrt() + 1e-9)


def hardmax(x, axis):
    return F.one_hot(x.argmax(axis), x.shape[axis]).movedim(-1, axis).to(x.dtype)


def normalization_cases(rng):
    cases = []
    for p in (1, 2):
        for j, (shape, axis) in enumerate([((4, 6), -1), ((3, 5, 2), 1), ((2, 3, 4), 0)]):
            x = rng.standard_normal(shape).astype(np.float32)
            cases.append(Case(f"lp{p}_{j}", [Node("LpNormalization", ["x"], ["y"], {"p": p, "axis": axis})], ["y"],
                              lambda T, p=p, axis=axis: [lp(T["x"], p, axis)], params={"x": x}, opset=13))
    for j, (shape, axes) in enumerate([((2, 3, 4, 5), None), ((3, 4, 5), [1, 2]), ((6, 4), [0])]):
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
        attrs = {} if axes is None else {"axes": axes}
        ref_axes = [0, 2, 3] if axes is None else axes
        cases.append(Case(f"mvn_{j}", [Node("MeanVarianceNormalization", ["x"], ["y"], attrs)], ["y"],
                          lambda T, a=ref_axes: [mvn(T["x"], a)], params={"x": x}, opset=13))
    # Hardmax passes no gradient: d(x * hardmax(x))/dx = hardmax(x).
    for j, (shape, axis) in enumerate([((4, 6), -1), ((3, 5, 2), 1)]):
        x = rng.standard_normal(shape).astype(np.float32)
        nodes = [Node("Hardmax", ["x"], ["h"], {"axis": axis}), Node("Mul", ["x", "h"], ["y"])]
        cases.append(Case(f"hardmax_{j}", nodes, ["y"], lambda T, axis=axis: [T["x"] * hardmax(T["x"], axis)],
                          params={"x": x}, opset=13))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradNormalizationTest(unittest.TestCase):
    def test_grad_normalization(self):
        gs.check_family(self, "normalization", normalization_cases(gs.rng_for("normalization")))


if __name__ == "__main__":
    unittest.main()
