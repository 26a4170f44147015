"""TopK with K above 64 (torch.sort, argsort, a large topk), imported as a
bitonic sorting network (lib/Importer/TopKSort.cpp): tidal's values,
indices and gradients vs a stable torch.sort in float64 (ties to the lower
index, ONNX's rule), as test_grad_layout.py checks the k-rounds form
(gradcheck_support: every gradient to 1e-4 relative). The indices weigh the
values (w = v * (i + 1)), so a wrong index fails the loss.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch

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


if __name__ == "__main__":
    unittest.main()
