"""Gradient checks of LpPool, GlobalLpPool and LRN
(lib/Importer/WindowConverters.cpp) and of Col2Im against F.fold
(lib/Importer/ConvTransposeConverter.cpp): tidal's autodiff vs torch.autograd in
float64 of ONNX's definitions, as the per-op gradient checks
(grad_cases_support.py) check the other ops (gradcheck_support: every
gradient to 1e-4 relative).

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


def lp_pool(x, p, kernel, strides, pads):
    """(sum over the window of |x|^p)^(1/p), zero padding counted."""
    k = len(kernel)
    padded = F.pad(x.abs() ** p, [v for d in reversed(range(k)) for v in (pads[d], pads[k + d])])
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d}[k]
    window = float(np.prod(kernel))
    return (pool(padded, kernel, strides) * window) ** (1.0 / p)


def lrn(x, size, alpha, beta, bias):
    """ONNX's LRN: channels c - floor((size-1)/2) .. c + ceil((size-1)/2)."""
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = F.pad((x * x).transpose(1, -1), [before, after]).transpose(1, -1)
    total = sum(sq.narrow(1, k, x.shape[1]) for k in range(size))
    return x / (bias + alpha / size * total) ** beta


def window_cases(rng):
    cases = []
    for j, (shape, p, kernel, strides, pads) in enumerate([
            ((2, 3, 5, 6), 2, [2, 3], [1, 2], [1, 0, 0, 1]),
            ((2, 2, 7), 3, [3], [2], [1, 1]),
            ((1, 3, 4, 4), 1, [2, 2], [2, 2], [0, 0, 0, 0])]):
        x = (rng.standard_normal(shape) + np.sign(rng.standard_normal(shape)) * 0.5).astype(np.float32)
        attrs = {"p": p, "kernel_shape": kernel, "strides": strides, "pads": pads}
        cases.append(Case(f"lppool_{j}", [Node("LpPool", ["x"], ["y"], attrs)], ["y"],
                          lambda T, a=(p, kernel, strides, pads): [lp_pool(T["x"], *a)], params={"x": x},
                          opset=13))
    for j, (shape, p) in enumerate([((2, 3, 4, 5), 2), ((3, 2, 6), 3)]):
        x = (rng.standard_normal(shape) + 0.5).astype(np.float32)
        dims = list(range(2, len(shape)))
        cases.append(Case(f"globallppool_{j}", [Node("GlobalLpPool", ["x"], ["y"], {"p": p})], ["y"],
                          lambda T, p=p, dims=dims: [(T["x"].abs() ** p).sum(dims, keepdim=True) ** (1.0 / p)],
                          params={"x": x}, opset=13))
    for j, (shape, size, alpha, beta, bias) in enumerate([
            ((2, 6, 3, 4), 3, 1e-3, 0.75, 1.0), ((2, 5, 4), 4, 0.1, 0.5, 2.0), ((1, 7, 2, 2), 5, 1e-4, 0.75, 1.0)]):
        x = rng.standard_normal(shape).astype(np.float32) * 2
        attrs = {"size": size, "alpha": alpha, "beta": beta, "bias": bias}
        cases.append(Case(f"lrn_{j}", [Node("LRN", ["x"], ["y"], attrs)], ["y"],
                          lambda T, a=(size, alpha, beta, bias): [lrn(T["x"], *a)], params={"x": x}, opset=13))
    for j, (channels, image, block, attrs) in enumerate([
            (3, [5, 5], [2, 2], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
            (2, [4, 7], [2, 3], {"dilations": [1, 2], "strides": [1, 2]}),  # column 6 unreached
            (1, [6, 6], [3, 3], {})]):
        t = lambda d: (image[d] + (attrs.get("pads", [0] * 4)[d] * 2)  # noqa: E731
                       - attrs.get("dilations", [1, 1])[d] * (block[d] - 1) - 1) // attrs.get("strides", [1, 1])[d] + 1
        x = rng.standard_normal((2, channels * block[0] * block[1], t(0) * t(1))).astype(np.float32)
        fold_args = {"kernel_size": block, "dilation": attrs.get("dilations", 1), "stride": attrs.get("strides", 1),
                     "padding": attrs.get("pads", [0, 0])[:2]}
        cases.append(Case(f"col2im_{j}", [Node("Col2Im", ["x", "image", "block"], ["y"], attrs)], ["y"],
                          lambda T, image=image, a=fold_args: [F.fold(T["x"], image, **a)], params={"x": x},
                          consts={"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, opset=18))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradWindowTest(unittest.TestCase):
    def test_grad_window(self):
        gs.check_family(self, "window", window_cases(gs.rng_for("window")))


if __name__ == "__main__":
    unittest.main()
