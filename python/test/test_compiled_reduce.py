"""ReduceMax/Min/Prod, ReduceLogSumExp/LogSum and ArgMax/ArgMin compiled:
the executable against the reference evaluator, forward and one SGD step.

The ONNX node tests check these ops' forward results; the gradient tests
(test_grad_losses.py) check their backward graphs in tidal-eval. This runs the
runtime's kernels on a few small networks that train through them (the
backward graphs' equal/cast/where/reduce_prod included), with
test_compiled_random.py's comparison: every output, the logged loss and
every updated weight against tidal-eval to 1e-4 in the L2 norm.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval.
"""

import os
import tempfile
import unittest

import numpy as np

import support
import test_compiled_random as cr
from test_compiled_random import T


class Graph:
    """A fixed network in the shape check_forward/check_training take."""

    def __init__(self, name, build, opset=13):
        b = cr.Builder(sum(map(ord, name)))
        b.opset = opset
        outputs = build(b)
        self.name, self.ops = name, list(b.ops)
        self.forward = b.model(outputs)
        self.inputs = dict(b.data)
        terms = [b.node("ReduceMean", [b.node("Mul", [o.name, o.name])], keepdims=0) for o in outputs]
        while len(terms) > 1:
            terms = [b.node("Add", terms[:2])] + terms[2:]
        self.train = b.model([T(terms[0], ())])
        self.train_inputs = dict(b.data)

    def describe(self):
        return f"{self.name}: " + " ".join(self.ops)

    def train_options(self):
        return ["--optimizer", "sgd", "--lr", str(cr.LR)]


def max_softmax(b):
    """Exported softmax (x - max), ReduceLogSumExp and ReduceMin of a
    linear layer's output; ReLU gives ties at 0 for ReduceMax."""
    x = b.input((4, 6))
    h = b.node("MatMul", [x.name, b.param((6, 5), fan_in=6)])
    m = b.node("ReduceMax", [h], axes=[1])
    e = b.node("Exp", [b.node("Sub", [h, m])])
    s = b.node("Div", [e, b.node("ReduceSum", [e, b.ints([1])])])
    lse = b.node("ReduceLogSumExp", [h], axes=[-1], keepdims=0)
    r = b.node("ReduceMax", [b.node("Relu", [h])], axes=[0, 1], keepdims=0)
    lo = b.node("ReduceMin", [h], axes=[0], keepdims=1)
    return [T(s, (4, 5)), T(lse, (4,)), T(r, ()), T(lo, (1, 5))]


def products(b):
    """ReduceProd of x * w where w holds exact zeros: slices with one zero
    and with two, whose gradients are the product of the others and 0."""
    x = b.input((3, 4, 5))
    w = b.rng.uniform(0.6, 1.4, (4, 5)).astype(np.float32)
    w[0, 1] = w[2, 1] = w[3, 3] = 0.0
    h = b.node("Mul", [x.name, b.init(w)])
    p1 = b.node("ReduceProd", [h], axes=[1], keepdims=0)
    p2 = b.node("ReduceProd", [b.node("Sigmoid", [h])], axes=[0, 2])
    ls = b.node("ReduceLogSum", [b.node("Sigmoid", [h])], axes=[2], keepdims=0)
    return [T(p1, (3, 5)), T(p2, (1, 4, 1)), T(ls, (3, 4))]


def picks(b):
    """ArgMax/ArgMin (select_last_index) choosing columns of a layer's
    output for a Gather; ReduceMax with the axes input at opset 18."""
    x = b.input((5, 4))
    h = b.node("Gemm", [x.name, b.param((4, 6), fan_in=4), b.param((6,), -0.5, 0.5)])
    i = b.node("ArgMax", [h], axis=1, keepdims=0)
    j = b.node("ArgMin", [h], axis=0, keepdims=0, select_last_index=1)
    g = b.node("Gather", [h, i], axis=1)
    k = b.node("Gather", [h, j], axis=0)
    m = b.node("ReduceMax", [h, b.ints([-1])], keepdims=1)
    return [T(g, (5, 5)), T(k, (6, 6)), T(m, (5, 1))]


GRAPHS = [("max_softmax", max_softmax, 13), ("products", products, 13), ("picks", picks, 18)]

_SKIP = support.skip_reason("tidalc", "tidal-eval")


@unittest.skipIf(_SKIP, _SKIP)
class CompiledReduceTest(unittest.TestCase):
    def test_graphs(self):
        worst = 0.0
        for name, build, opset in GRAPHS:
            g = Graph(name, build, opset)
            with self.subTest(graph=name), tempfile.TemporaryDirectory(prefix=f"tidal-reduce-{name}-") as work:
                for kind, check in (("forward", cr.check_forward), ("training", cr.check_training)):
                    os.makedirs(os.path.join(work, kind))
                    problems = check(g, os.path.join(work, kind))
                    worst = max(worst, getattr(problems, "worst", 0.0))
                    self.assertFalse(problems, f"{kind} {g.describe()}\n  " + "\n  ".join(map(str, problems)))
        print(f"\n  compiled reductions: {len(GRAPHS)} graphs, forward and one SGD step,"
              f" largest error {worst:.2g} x tolerance", end="")


if __name__ == "__main__":
    unittest.main()
