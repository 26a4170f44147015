"""What the per-op gradient checks share (test_grad_nn.py,
test_grad_elementwise.py, test_grad_layout.py, test_grad_losses.py): input
makers and the family check. The method:

Each case is a tiny ONNX graph (onnx.helper, opset 13-17) computing
loss = sum_k ReduceSum(out_k * C_k) with a fixed random C_k per output, the
op's float operands as initializers (trainable parameters). It is compiled
with `tidalc --emit mlir --stop-after tidal-autodiff`, evaluated with
`tidal-eval`, and every gradient (and every new BatchNorm running statistic)
is compared with torch.autograd of the same computation in float64 to 1e-4
relative (SPEC section 5). Exactly the expected set of gradient results must
exist: one per trainable initializer, none for graph inputs, integer
operands, frozen initializers or running statistics.

The cases of one test (one op family) are batched into one model per opset;
a batch that fails to compile or evaluate is re-run case by case, so that a
failure names its op, attributes and shapes.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np

import gradcheck_support as gs
from gradcheck_support import Case, Node

INT64_MAX = np.iinfo(np.int64).max


def random_shape(rng, rank, lo=1, hi=5):
    return tuple(int(d) for d in rng.integers(lo, hi + 1, rank))


def simple(name, nodes, ref, **kw):
    """A case whose one weighed output is the value "y"."""
    return Case(name, nodes, ["y"], ref, **kw)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def i64(a):
    return np.asarray(a, dtype=np.int64)


def randn(rng, *shape, scale=1.0, shift=0.0):
    return f32(rng.standard_normal(shape) * scale + shift)


def positive(rng, *shape, lo=0.5, hi=2.0):
    return f32(rng.uniform(lo, hi, shape))


def away_from_zero(rng, *shape, lo=0.5, hi=2.0):
    return f32(rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape))


def torch_pads(pads, nd):
    """ONNX pads [b1..bn, e1..en] -> F.pad's (last-dim-first) tuple."""
    out = []
    for i in reversed(range(nd)):
        out += [pads[i], pads[i + nd]]
    return out


def const_node(out, value):
    from onnx import numpy_helper

    return Node("Constant", [], [out], dict(value=numpy_helper.from_array(f32(value))))


class GradFamilyTest(unittest.TestCase):
    def check(self, family, cases):
        names = [c.name for c in cases]
        self.assertEqual(len(names), len(set(names)), "case names must be unique")
        outcomes = gs.run_cases(cases, family)
        worst = max((o.max_err for o in outcomes if not o.error and not o.problems), default=0.0)
        bad = [o for o in outcomes if o.error or o.problems]
        print(f"\n  {family}: {len(outcomes)} cases, {len(outcomes) - len(bad)} pass, max relative error {worst:.2e}", end="")
        for o in outcomes:
            with self.subTest(case=o.case.name):
                if o.error:
                    self.fail(f"{o.case.describe()}\n{o.error}")
                if o.problems:
                    self.fail(f"{o.case.describe()}\n" + "\n".join(o.problems))
