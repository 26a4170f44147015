"""Gradient checks of DFT and STFT (lib/Importer/SpectralConverters.cpp):
tidal's autodiff of its matmul and convolution forms vs torch.autograd
through torch.fft in float64 of ONNX's definitions (gradcheck_support:
every gradient to 1e-4 relative). A window produced by HannWindow is
folded into the STFT's kernels; one computed from a parameter is
multiplied in at run time and gets its own gradient.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()


def as_complex(x):
    """ONNX's [..., 1 or 2] layout as a complex tensor."""
    return torch.complex(x[..., 0], x[..., 1]) if x.shape[-1] == 2 else x[..., 0].to(torch.complex128)


def as_pairs(z):
    return torch.stack([z.real, z.imag], dim=-1)


def dft(x, axis, length, inverse=False, onesided=False):
    """ONNX DFT: the signal truncated or zero-padded to `length` along
    `axis` (counted without the parts), onesided keeps length // 2 + 1."""
    z = as_complex(x)
    y = (torch.fft.ifft if inverse else torch.fft.fft)(z, n=length, dim=axis)
    if onesided:
        y = y.narrow(axis, 0, length // 2 + 1)
    return as_pairs(y)


def stft(x, step, window, length, onesided=True):
    """ONNX STFT: frames of len(window) samples `step` apart, each times
    the window, transformed over `length` samples."""
    z = as_complex(x if x.dim() == 3 else x.unsqueeze(-1))
    frames = 1 + (z.shape[1] - length) // step
    w = window.shape[0]
    rows = torch.stack([z[:, f * step:f * step + w] * window for f in range(frames)], dim=1)
    y = torch.fft.fft(rows, n=length, dim=-1)
    if onesided:
        y = y[..., :length // 2 + 1]
    return as_pairs(y)


def spectral_cases(rng):
    cases = []
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    for j, (shape, axis, length, inverse, onesided) in enumerate([
            ((2, 8, 1), 1, None, False, True),     # rfft, as torch.fft.rfft exports
            ((2, 6, 2), 1, None, False, False),    # complex fft
            ((3, 5, 4, 2), 1, 8, True, False),     # inverse along a middle axis, zero-padded
            ((2, 3, 7, 1), 2, 5, False, False),    # truncated
            ((4, 6, 1), 0, None, False, True)]):   # the first axis
        n = length or shape[axis]
        attrs = {"axis": axis, "inverse": int(inverse), "onesided": int(onesided)}
        consts, ins = {}, ["x"]
        if length:
            consts["n"] = np.array(length, np.int64)
            ins.append("n")
        cases.append(Case(f"dft_{j}", [Node("DFT", ins, ["y"], attrs)], ["y"],
                          lambda T, a=(axis, n, inverse, onesided): [dft(T["x"], *a)],
                          params={"x": normal(*shape)}, consts=consts, opset=17))
    # torch.stft's export: [batch, length], a folded Hann window.
    hann = torch.hann_window(16, dtype=torch.float64)
    cases.append(Case("stft_hann", [Node("HannWindow", ["wn"], ["w"]), Node("STFT", ["x", "step", "w", "len"], ["y"])],
                      ["y"], lambda T: [stft(T["x"], 4, hann, 16)],
                      params={"x": normal(2, 40)},
                      consts={"wn": np.array(16, np.int64), "step": np.array(4, np.int64),
                              "len": np.array(16, np.int64)}, opset=17))
    # A complex signal, a window computed from a parameter, shorter than the
    # frame (zero-padded transform), two-sided.
    cases.append(Case("stft_param_window",
                      [Node("Sigmoid", ["v"], ["w"]), Node("STFT", ["x", "step", "w", "len"], ["y"], {"onesided": 0})],
                      ["y"], lambda T: [stft(T["x"], 3, torch.sigmoid(T["v"]), 8, onesided=False)],
                      params={"x": normal(2, 20, 2), "v": normal(6)},
                      consts={"step": np.array(3, np.int64), "len": np.array(8, np.int64)}, opset=17))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradSpectralTest(unittest.TestCase):
    def test_grad_spectral(self):
        gs.check_family(self, "spectral", spectral_cases(gs.rng_for("spectral")))


if __name__ == "__main__":
    unittest.main()
