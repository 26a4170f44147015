"""DeformConv (lib/Importer/DeformConvConverter.cpp) against
torchvision.ops.deform_conv2d under torch.autograd in float64: the output
and the gradients of the input, the weights, the offsets, the mask and the
bias, with offsets reaching past the image, strides, padding, dilation,
groups and several offset groups (gradcheck_support: every gradient to
1e-4 relative).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval, and torchvision;
skips otherwise.
"""

import unittest

import numpy as np

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

try:
    from torchvision.ops import deform_conv2d
except ImportError:  # pragma: no cover
    deform_conv2d = None

_SKIP = gs.skip_reason() or (None if deform_conv2d else "torchvision is not installed")


def out_size(size, k, stride, pad, dil):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def deform_cases(rng):
    cases = []
    for j, (n, c, h, w, m, k, stride, pad, dil, group, og, with_mask) in enumerate([
            (2, 4, 6, 7, 6, (3, 3), 1, 1, 1, 1, 1, True),
            (1, 4, 7, 6, 4, (3, 2), 2, 1, 1, 2, 2, True),   # groups, offset groups, stride
            (2, 3, 8, 8, 5, (2, 2), 1, 0, 2, 1, 1, False),  # dilation, DCNv1 (no mask)
            (1, 6, 5, 5, 4, (3, 3), 1, 2, 1, 2, 3, True)]):
        oh, ow = out_size(h, k[0], stride, pad, dil), out_size(w, k[1], stride, pad, dil)
        taps = k[0] * k[1]
        params = {
            "x": rng.standard_normal((n, c, h, w)).astype(np.float32),
            "w": (rng.standard_normal((m, c // group, *k)) * 0.5).astype(np.float32),
            # Up to 2.5 pixels: samples cross pixel borders and the image edge.
            "off": rng.uniform(-2.5, 2.5, size=(n, og * taps * 2, oh, ow)).astype(np.float32),
            "b": rng.standard_normal(m).astype(np.float32),
        }
        inputs = ["x", "w", "off", "b"]
        if with_mask:
            params["mask"] = rng.uniform(0.0, 1.0, size=(n, og * taps, oh, ow)).astype(np.float32)
            inputs.append("mask")
        attrs = {"strides": [stride] * 2, "pads": [pad] * 4, "dilations": [dil] * 2, "group": group,
                 "offset_group": og}

        def ref(T, stride=stride, pad=pad, dil=dil, with_mask=with_mask):
            return [deform_conv2d(T["x"], T["off"], T["w"], T["b"], stride=stride, padding=pad, dilation=dil,
                                  mask=T["mask"] if with_mask else None)]
        cases.append(Case(f"deform_conv_{j}", [Node("DeformConv", inputs, ["y"], attrs)], ["y"], ref,
                          params=params, opset=19))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradDeformConvTest(unittest.TestCase):
    def test_grad_deform_conv(self):
        gs.check_family(self, "deform_conv", deform_cases(gs.rng_for("deform_conv")))


if __name__ == "__main__":
    unittest.main()
