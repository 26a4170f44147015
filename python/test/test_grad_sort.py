"""TopK with K above 64 (torch.sort, argsort, a large topk), imported as a
bitonic sorting network (lib/Importer/TopKSort.cpp): tidal's values,
indices and gradients vs a stable torch.sort in float64 (ties to the lower
index, ONNX's rule), as test_grad_layout.py checks the k-rounds form
(gradcheck_support: every gradient to 1e-4 relative). The indices weigh the
values (w = v * (i + 1)), so a wrong index fails the loss.

Integer TopK (pack_padded_sequence sorts lengths) runs the same network on
float64: an int64 sort of 100 values with ties, compiled in forward mode,
gives exactly NumPy's stable order and values.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import os
import tempfile
import unittest

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import compiled_support as cs
import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()


def topk_ref(x, k, axis, largest):
    order = torch.sort(x, dim=axis, descending=bool(largest), stable=True).indices.narrow(axis, 0, k)
    return torch.gather(x, axis, order), order


def sort_cases(rng):
    cases = []
    # (shape, k, axis, largest): n = 100 pads to 128; 65 of 65 (no padding);
    # the first axis of three; n = 200, the smallest.
    forms = [((3, 100), 80, 1, 1), ((2, 65), 65, 1, 0), ((70, 2, 3), 66, 0, 1), ((1, 200), 150, -1, 0)]
    for j, (shape, k, axis, largest) in enumerate(forms):
        x = rng.standard_normal(shape).astype(np.float32)
        if j == 1:  # ties: a few values repeated
            x[:, 10:20] = x[:, 0:1]
        def ref(T, k=k, axis=axis, largest=largest):
            values, order = topk_ref(T["x"], k, axis, largest)
            return [values, values * (order.double() + 1.0)]
        nodes = [Node("TopK", ["x", "k"], ["v", "i"], {"axis": axis, "largest": largest}),
                 Node("Add", ["i", "one"], ["j"]), Node("Cast", ["j"], ["f"], {"to": 1}),
                 Node("Mul", ["v", "f"], ["w"])]
        cases.append(Case(f"sort_{j}", nodes, ["v", "w"], ref, params={"x": x},
                          consts={"k": np.array([k], np.int64), "one": np.array(1, np.int64)}))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradSortTest(unittest.TestCase):
    def test_grad_sort(self):
        gs.check_family(self, "sort", sort_cases(gs.rng_for("sort")))

    def test_integer_sort_is_exact(self):
        x = np.random.default_rng(0).integers(-20, 30, (2, 100)).astype(np.int64)
        k = numpy_helper.from_array(np.array([80], np.int64), "k")
        graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"])], "sort",
                                  [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 100])],
                                  [helper.make_tensor_value_info("v", TensorProto.INT64, None),
                                   helper.make_tensor_value_info("i", TensorProto.INT64, None)], [k])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        with tempfile.TemporaryDirectory(prefix="tidal-int-sort-") as work:
            path, exe = os.path.join(work, "sort.onnx"), os.path.join(work, "forward")
            onnx.save(model, path)
            self.assertIsNone(cs.tidalc(path, exe, "--mode", "forward"))
            error, out = cs.run_forward(exe, {"x": x}, ["v", "i"], work)
            self.assertIsNone(error)
        order = np.argsort(-x, axis=1, kind="stable")[:, :80]
        np.testing.assert_array_equal(out["i"], order)
        np.testing.assert_array_equal(out["v"], np.take_along_axis(x, order, 1))
        self.assertEqual(out["v"].dtype, np.int64)


if __name__ == "__main__":
    unittest.main()
