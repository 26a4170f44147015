"""ONNX's own Loop and Scan node tests, compiled and run.

libonnx-testdata's test_loop11 (a trip count and condition given as
inputs, a loop-carried value and a scan output) and test_scan9_sum (two
states, one scan input, one scan output) are at opsets 11 and 9, below the
opset 13 tidal starts at, so the sweep of test_compiled_node.py leaves them
out. Here each is upgraded to opset 13 with onnx's version converter (Loop
and Scan did not change in between), its inputs bound as the sweep binds
them, and it goes through the same check: compiled with
`tidalc --mode forward`, run, every output compared with ONNX's expected
one. Loop and Scan are unrolled at import (lib/Importer/LoopUnrolling.cpp).

A torch.jit.script for-loop over a dimension of its input exports as Loop
(the trip count a Shape of the input), and a scripted torch.split by a size
computed from the input's shape as SplitToSequence + SequenceAt
(lib/Importer/SequenceOps.cpp), and ifs on data conditions as If (both
branches computed, a where selects): compiled in forward mode at batch 2,
each output equals PyTorch's. nn.EmbeddingBag with an offsets input (bags
of different sizes, an empty one and a trailing empty one) exports a Loop
whose slice bounds are data, imported as a segment reduction
(lib/Importer/SegmentLoops.cpp): sum and mean equal PyTorch's.
"""

import os
import shutil
import tempfile
import unittest

import numpy as np
import onnx
from onnx import version_converter

import compiled_support as cs
import onnx_node_tests
import support
import test_compiled_node
import test_eval_node

CASES = ("test_loop11", "test_scan9_sum")


@unittest.skipIf(support.skip_reason("tidalc", "tidal-eval"), support.skip_reason("tidalc", "tidal-eval"))
@unittest.skipUnless(all(os.path.isdir(os.path.join(onnx_node_tests.NODE_DIR, c)) for c in CASES),
                     "libonnx-testdata's Loop and Scan node tests are not installed")
class UpgradedLoopNodeTest(unittest.TestCase):
    def test_loop_and_scan_match_onnx(self):
        saved = onnx_node_tests.NODE_DIR, test_eval_node.NODE_DIR
        with tempfile.TemporaryDirectory(prefix="tidal-loop-nodes-") as work:
            for name in CASES:
                shutil.copytree(os.path.join(saved[0], name), os.path.join(work, name))
                path = os.path.join(work, name, "model.onnx")
                model = version_converter.convert_version(onnx.load(path), 13)
                onnx.checker.check_model(model)
                onnx.save(model, path)
            onnx_node_tests.NODE_DIR = test_eval_node.NODE_DIR = work
            try:
                cases = {c[0]: c for c in test_eval_node.candidates()}
                self.assertEqual(sorted(cases), sorted(CASES))
                for name in CASES:
                    with self.subTest(name=name):
                        outcome, detail, compared, _ = test_compiled_node.run_case(cases[name])
                        self.assertEqual((outcome, detail), ("passed", ""))
                        self.assertEqual(compared, 2)
            finally:
                onnx_node_tests.NODE_DIR, test_eval_node.NODE_DIR = saved


try:
    import torch
except ImportError:  # the scripted-loop test needs Debian's torch
    torch = None

if torch is not None:
    class _Scripted(torch.nn.Module):
        """h_t = tanh(W (x_t + mean_t(h)) + b) + h, over the sequence."""

        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            h = x
            for i in range(x.shape[1]):
                h = torch.tanh(self.linear(h[:, i:i + 1, :].squeeze(1) + h.mean(1))).unsqueeze(1) + h
            return h

    class _ScriptedIf(torch.nn.Module):
        """Two ifs on data (one takes its then branch, the other its else)."""

        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)

        def forward(self, x):
            if x.sum() > 0:
                y = torch.relu(self.a(x))
            else:
                y = torch.tanh(self.b(x))
            if x.sum() < 0:
                y = y * 3
            else:
                y = y - self.a(y)
            return y

    class _Bags(torch.nn.Module):
        def __init__(self, mode):
            super().__init__()
            self.bags = torch.nn.EmbeddingBag(10, 4, mode=mode)

        def forward(self, idx, offsets):
            return self.bags(idx, offsets)

    class _ScriptedSplit(torch.nn.Module):
        """The halves of x along dim 1, multiplied."""

        def forward(self, x):
            parts = torch.split(x, x.shape[1] // 2, dim=1)
            return parts[0] * parts[1]


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
@unittest.skipIf(torch is None, "needs torch (Debian's python3-torch)")
class ScriptedLoopTest(unittest.TestCase):
    def test_script_loop_matches_torch(self):
        self.check(_Scripted(), "Loop")

    def test_script_data_if_matches_torch(self):
        self.check(_ScriptedIf(), "If")

    def test_script_split_matches_torch(self):
        self.check(_ScriptedSplit(), "SplitToSequence")

    def check(self, module, op):
        torch.manual_seed(0)
        module = torch.jit.script(module)
        x = torch.randn(2, 4, 4)
        with tempfile.TemporaryDirectory(prefix="tidal-scripted-") as work:
            path = os.path.join(work, "scripted.onnx")
            torch.onnx.export(module, (x,), path, opset_version=13, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "N"}})
            self.assertIn(op, {n.op_type for n in onnx.load(path).graph.node})
            exe = os.path.join(work, "forward")
            error = cs.tidalc(path, exe, "--mode", "forward", "--batch-size", "2")
            self.assertIsNone(error)
            error, results = cs.run_forward(exe, {"x": x.numpy()}, ["y"], work)
            self.assertIsNone(error)
            np.testing.assert_allclose(results["y"], module(x).detach().numpy(), rtol=1e-5, atol=1e-6)


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
@unittest.skipIf(torch is None, "needs torch (Debian's python3-torch)")
class EmbeddingBagOffsetsTest(unittest.TestCase):
    def test_sum_and_mean_match_torch(self):
        idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        offsets = torch.tensor([0, 4, 4, 6, 8])  # an empty bag, a trailing empty bag
        for mode in ("sum", "mean"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory(prefix="tidal-bags-") as work:
                torch.manual_seed(0)
                module = _Bags(mode)
                path = os.path.join(work, "bags.onnx")
                torch.onnx.export(module, (idx, offsets), path, opset_version=13, input_names=["idx", "offsets"],
                                  output_names=["y"])
                self.assertIn("Loop", {n.op_type for n in onnx.load(path).graph.node})
                exe = os.path.join(work, "forward")
                self.assertIsNone(cs.tidalc(path, exe, "--mode", "forward"))
                error, results = cs.run_forward(exe, {"idx": idx.numpy(), "offsets": offsets.numpy()}, ["y"], work)
                self.assertIsNone(error)
                np.testing.assert_allclose(results["y"], module(idx, offsets).detach().numpy(), rtol=1e-6,
                                           atol=1e-6)


if __name__ == "__main__":
    unittest.main()
