"""Per-op gradient checks, shared weights, Softmax/LogSoftmax, the losses, the
reductions, the shape ops and the gradient graph's structure: tidal's
automatic differentiation vs PyTorch (the method: grad_cases_support.py).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import onnx
import torch
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node
import test_grad_nn  # conv_case, gemm_case (the graph-structure test)
from grad_cases_support import (INT64_MAX, GradFamilyTest, away_from_zero, const_node, i64, positive, random_shape,
                                randn, simple)

_SKIP = gs.skip_reason()


# --- shared weights ----------------------------------------------------------------


def shared_weight_cases(rng):
    """One initializer read by several nodes gets the summed gradient: a
    GPT's token embedding tied to its output projection (Gather, then a
    MatMul by its transpose), and a weight used by two Gemms."""
    emb, tokens = randn(rng, 11, 6), i64(rng.integers(0, 11, (3, 4)))
    nodes = [Node("Gather", ["E", "tok"], ["x"]), Node("ReduceMean", ["x"], ["h"], {"axes": [1], "keepdims": 0}),
             Node("Tanh", ["h"], ["t"]), Node("Transpose", ["E"], ["Et"]), Node("MatMul", ["t", "Et"], ["y"])]
    ref = lambda T: [torch.tanh(T["E"][T["tok"]].mean(1)) @ T["E"].t()]
    cases = [Case("tied_embedding", nodes, ["y"], ref, params={"E": emb}, inputs={"tok": tokens})]
    w, x = randn(rng, 5, 5), randn(rng, 2, 5)
    nodes = [Node("Gemm", ["x", "W"], ["h"], {"transB": 1}), Node("Relu", ["h"], ["r"]),
             Node("Gemm", ["r", "W"], ["y"], {"transB": 1})]
    cases.append(Case("shared_gemm", nodes, ["y"], lambda T: [F.relu(T["x"] @ T["W"].t()) @ T["W"].t()],
                      params={"W": w, "x": x}))
    return cases


def softmax_case(name, rng, op, shape, axis, shift=0.0):
    x = randn(rng, *shape, scale=2.0, shift=shift)
    attrs = {} if axis is None else {"axis": axis}
    dim = -1 if axis is None else axis
    fn = F.softmax if op == "Softmax" else F.log_softmax
    return Case(name, [Node(op, ["x"], ["y"], attrs)], ["y"], lambda T: [fn(T["x"], dim=dim)], params={"x": x})


# --- losses -----------------------------------------------------------------------


def loss_case(name, rng, op, shape, reduction, weight=None, ignore_index=None, log_prob=False, direct=False, shift=0.0):
    """SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss.

    weight: None, "frozen" (a frozen initializer) or "input" (a graph input).
    Labels are always a graph input (int64, no gradient)."""
    n, c = shape[0], shape[1]
    x = randn(rng, *shape, scale=2.0, shift=shift)
    labels = i64(rng.integers(0, c, (n,) + tuple(shape[2:])))
    if ignore_index is not None:
        flat = labels.reshape(-1)
        flat[:: 3] = ignore_index  # some targets ignored, not all
    case = Case(name, [], ["loss"], None, params={"x": x}, inputs={"labels": labels}, direct=direct)
    ins = ["x", "labels"]
    if weight is not None:
        w = positive(rng, c, lo=0.2, hi=2.0)
        (case.frozen if weight == "frozen" else case.inputs)["w"] = w
        ins.append("w")
    attrs = {"reduction": reduction}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    outs = ["loss"] + (["log_prob"] if log_prob else [])
    case.nodes = [Node(op, ins, outs, attrs)]
    case.outputs = outs if not direct else ["loss"]

    def ref(T):
        kw = dict(weight=T.get("w"), reduction=reduction)
        if ignore_index is not None:
            kw["ignore_index"] = ignore_index
        if op == "SoftmaxCrossEntropyLoss":
            loss = F.cross_entropy(T["x"], T["labels"], **kw)
            return [loss] + ([F.log_softmax(T["x"], dim=1)] if log_prob else [])
        return [F.nll_loss(T["x"], T["labels"], **kw)]

    case.ref = ref
    return case


# --- reductions and shape ops -------------------------------------------------------


def reduce_case(name, rng, op, shape, axes, keepdims):
    x = randn(rng, *shape)
    case = Case(name, [], ["y"], None, params={"x": x})
    attrs = {"keepdims": keepdims}
    if op == "ReduceSum":  # opset 13: axes is an input
        ins = ["x"]
        if axes is not None:
            case.consts["axes"] = i64(axes)
            ins.append("axes")
    else:
        ins = ["x"]
        if axes is not None:
            attrs["axes"] = list(axes)
    case.nodes = [Node(op, ins, ["y"], attrs)]
    dims = tuple(range(len(shape))) if not axes else tuple(a % len(shape) for a in axes)

    def ref(T):
        fn = torch.sum if op == "ReduceSum" else torch.mean
        return [fn(T["x"], dim=dims, keepdim=bool(keepdims))]

    case.ref = ref
    return case


def torch_prod(v, dims, keepdim):
    """torch.prod over several dims: one dim at a time (its rule is exact
    with zeros), the last dim first so that the others keep their index."""
    for d in sorted(dims, reverse=True):
        v = torch.prod(v, d, keepdim=True)
    return v if keepdim else v.reshape([n for i, n in enumerate(v.shape) if i not in dims])


def reduce_extreme_cases(rng):
    """ReduceMax/Min against torch.amax/amin (ties split the gradient),
    ReduceProd against torch.prod (zeros: one in a slice gets the product of
    the others, two give 0), ReduceLogSumExp against torch.logsumexp (large
    values too), ReduceLogSum, ArgMax feeding a Gather, at opset 13 (axes an
    attribute) and 18 (axes an input)."""
    cases = []
    forms = [((3, 4), [1], 1), ((2, 3, 4), [0, 2], 0), ((2, 3, 4), None, 1), ((4, 5), [-1], 0), ((2, 2, 3), [1], 1)]
    torch_fn = {"ReduceMax": torch.amax, "ReduceMin": torch.amin}
    for op in ("ReduceMax", "ReduceMin", "ReduceProd"):
        for j, (shape, axes, keep) in enumerate(forms):
            for opset in (13, 18):
                x = randn(rng, *shape) if op != "ReduceProd" else away_from_zero(rng, *shape, lo=0.5, hi=1.5)
                flat = x.reshape(-1)
                if op == "ReduceProd" and j in (0, 4):
                    flat[[1, 5]] = 0.0  # a lone zero in some slices, two in others
                    if j == 4:
                        flat[2] = 0.0
                elif op != "ReduceProd" and j in (0, 1):
                    flat[[3, 7, 9]] = flat.max() if op == "ReduceMax" else flat.min()  # ties
                    flat[0] = flat[1]
                dims = tuple(range(len(shape))) if axes is None else tuple(a % len(shape) for a in axes)
                attrs, ins, consts = {"keepdims": keep}, ["x"], {}
                if axes is not None and opset == 13:
                    attrs["axes"] = list(axes)
                elif axes is not None:
                    ins.append("axes")
                    consts["axes"] = i64(axes)
                if op == "ReduceProd":
                    ref = lambda T, d=dims, k=keep: [torch_prod(T["x"], d, bool(k))]
                else:
                    ref = lambda T, f=torch_fn[op], d=dims, k=keep: [f(T["x"], dim=d, keepdim=bool(k))]
                cases.append(Case(f"{op.lower()}_{j}_o{opset}", [Node(op, ins, ["y"], attrs)], ["y"], ref,
                                  params={"x": x}, consts=consts, opset=opset))
    # noop_with_empty_axes (opset 18): the identity.
    cases.append(Case("reducemax_noop", [Node("ReduceMax", ["x"], ["y"], {"noop_with_empty_axes": 1})], ["y"],
                      lambda T: [T["x"]], params={"x": randn(rng, 2, 3)}, opset=18))
    # A numerically stable softmax as exporters write it: x - max(x).
    nodes = [Node("ReduceMax", ["x"], ["m"], {"axes": [1]}), Node("Sub", ["x", "m"], ["z"]), Node("Exp", ["z"], ["e"]),
             Node("ReduceSum", ["e", "one"], ["s"]), Node("Div", ["e", "s"], ["y"])]
    cases.append(Case("stable_softmax", nodes, ["y"], lambda T: [torch.softmax(T["x"], 1)],
                      params={"x": randn(rng, 3, 5)}, consts={"one": i64([1])}))
    for j, (shape, axes, keep, shift) in enumerate([((3, 4), [1], 1, 0.0), ((2, 3, 4), [0, 2], 0, 0.0),
                                                     ((4, 5), None, 0, 0.0), ((3, 6), [-1], 1, 100.0)]):
        dims = tuple(range(len(shape))) if axes is None else tuple(a % len(shape) for a in axes)
        for opset in (13, 18):
            attrs, ins, consts = {"keepdims": keep}, ["x"], {}
            if axes is not None and opset == 13:
                attrs["axes"] = list(axes)
            elif axes is not None:
                ins.append("axes")
                consts["axes"] = i64(axes)
            cases.append(Case(f"logsumexp_{j}_o{opset}", [Node("ReduceLogSumExp", ins, ["y"], attrs)], ["y"],
                              lambda T, d=dims, k=keep: [torch.logsumexp(T["x"], dim=d, keepdim=bool(k))],
                              params={"x": randn(rng, *shape, scale=2.0, shift=shift)}, consts=dict(consts), opset=opset))
            cases.append(Case(f"logsum_{j}_o{opset}", [Node("ReduceLogSum", ins, ["y"], attrs)], ["y"],
                              lambda T, d=dims, k=keep: [torch.log(torch.sum(T["x"], dim=d, keepdim=bool(k)))],
                              params={"x": positive(rng, *shape)}, consts=dict(consts), opset=opset))
    # ArgMax/ArgMin pick columns: the gradient flows through the Gather only.
    for op, fn in (("ArgMax", torch.argmax), ("ArgMin", torch.argmin)):
        x = randn(rng, 4, 5)
        nodes = [Node(op, ["x"], ["i"], {"axis": 1, "keepdims": 0}), Node("Gather", ["x", "i"], ["y"], {"axis": 1})]
        cases.append(Case(f"{op.lower()}_gather", nodes, ["y"], lambda T, fn=fn: [T["x"][:, fn(T["x"], 1)]],
                          params={"x": x}))
    x = randn(rng, 3, 4)
    x[1, 3] = x[1, 0]  # a tie: the last index
    nodes = [Node("ArgMax", ["x"], ["i"], {"axis": -1, "select_last_index": 1}), Node("Cast", ["i"], ["f"], {"to": onnx.TensorProto.FLOAT}),
             Node("Mul", ["x", "f"], ["y"])]
    last = lambda v: (v.shape[-1] - 1 - torch.argmax(v.flip(-1), -1, keepdim=True)).double()  # noqa: E731
    cases.append(Case("argmax_last_scale", nodes, ["y"], lambda T: [T["x"] * last(T["x"])], params={"x": x}))
    return cases


def reshape_case(name, rng, shape, target):
    x = randn(rng, *shape)
    out = [shape[i] if t == 0 else t for i, t in enumerate(target)]
    return simple(name, [Node("Reshape", ["x", "shape"], ["y"])], lambda T: [T["x"].reshape(out)], params={"x": x}, consts={"shape": i64(target)})


def flatten_case(name, rng, shape, axis):
    x = randn(rng, *shape)
    a = axis % len(shape) if axis < 0 else axis
    outer = int(np.prod(shape[:a]))
    return Case(name, [Node("Flatten", ["x"], ["y"], dict(axis=axis))], ["y"], lambda T: [T["x"].reshape(outer, -1)], params={"x": x})


def transpose_case(name, rng, shape, perm):
    x = randn(rng, *shape)
    attrs = {} if perm is None else {"perm": list(perm)}
    p = list(reversed(range(len(shape)))) if perm is None else list(perm)
    return Case(name, [Node("Transpose", ["x"], ["y"], attrs)], ["y"], lambda T: [T["x"].permute(p)], params={"x": x})


def squeeze_case(name, rng, shape, axes):
    x = randn(rng, *shape)
    case = Case(name, [], ["y"], None, params={"x": x})
    ins = ["x"]
    if axes is not None:
        case.consts["axes"] = i64(axes)
        ins.append("axes")
    case.nodes = [Node("Squeeze", ins, ["y"])]
    out = [d for i, d in enumerate(shape) if not (d == 1 and (axes is None or i in [a % len(shape) for a in axes]))]
    case.ref = lambda T: [T["x"].reshape(out)]
    return case


def unsqueeze_case(name, rng, shape, axes):
    x = randn(rng, *shape)
    rank = len(shape) + len(axes)
    norm = sorted(a % rank for a in axes)
    out = list(shape)
    for a in norm:
        out.insert(a, 1)
    return simple(name, [Node("Unsqueeze", ["x", "axes"], ["y"])], lambda T: [T["x"].reshape(out)], params={"x": x}, consts={"axes": i64(axes)})


def concat_case(name, rng, shapes, axis):
    params = {f"x{i}": randn(rng, *s) for i, s in enumerate(shapes)}
    names = list(params)
    return Case(name, [Node("Concat", names, ["y"], dict(axis=axis))], ["y"], lambda T: [torch.cat([T[n] for n in names], dim=axis)], params=params)


def split_case(name, rng, shape, axis, split=None, parts=None):
    x = randn(rng, *shape)
    case = Case(name, [], [], None, params={"x": x})
    ins = ["x"]
    if split is not None:
        case.consts["split"] = i64(split)
        ins.append("split")
        sizes = list(split)
    else:
        sizes = [shape[axis] // parts] * parts
    outs = [f"y{i}" for i in range(len(sizes))]
    case.nodes = [Node("Split", ins, outs, dict(axis=axis))]
    case.outputs = outs
    case.ref = lambda T: list(torch.split(T["x"], sizes, dim=axis))
    return case


def slice_case(name, rng, shape, starts, ends, axes=None, steps=None):
    x = randn(rng, *shape)
    case = Case(name, [], ["y"], None, params={"x": x}, consts={"starts": i64(starts), "ends": i64(ends)})
    ins = ["x", "starts", "ends"]
    if axes is not None:
        case.consts["axes"] = i64(axes)
        ins.append("axes")
    if steps is not None:
        if axes is None:
            case.consts["axes"] = i64(list(range(len(starts))))
            ins.append("axes")
        case.consts["steps"] = i64(steps)
        ins.append("steps")
    case.nodes = [Node("Slice", ins, ["y"])]
    ax = list(range(len(starts))) if axes is None else [a % len(shape) for a in axes]
    st = [1] * len(starts) if steps is None else list(steps)

    def ref(T):
        y = T["x"]
        for a, s, e, k in zip(ax, starts, ends, st):
            s = max(min(s, 2**62), -(2**62))
            e = max(min(e, 2**62), -(2**62))
            idx = list(range(*slice(s, e, k).indices(shape[a])))
            y = y.index_select(a, torch.tensor(idx, dtype=torch.int64))
        return [y]

    case.ref = ref
    return case


def gather_case(name, rng, shape, axis, indices, as_input=False):
    x = randn(rng, *shape)
    idx = i64(indices)
    case = Case(name, [Node("Gather", ["x", "idx"], ["y"], dict(axis=axis))], ["y"], None, params={"x": x})
    (case.inputs if as_input else case.consts)["idx"] = idx
    a = axis % len(shape)
    out_shape = list(shape[:a]) + list(idx.shape) + list(shape[a + 1 :])

    def ref(T):
        flat = torch.tensor((idx % shape[a]).reshape(-1), dtype=torch.int64)
        return [T["x"].index_select(a, flat).reshape(out_shape)]

    case.ref = ref
    return case


@unittest.skipIf(_SKIP, _SKIP)
class GradLossesTest(GradFamilyTest):
    def test_grad_shared_weights(self):
        self.check("shared weights", shared_weight_cases(gs.rng_for("shared")))

    def test_grad_softmax(self):
        rng = gs.rng_for("softmax")
        cases = []
        for op in ("Softmax", "LogSoftmax"):
            for axis in (0, 1, 2, -1, None):
                cases.append(softmax_case(f"{op.lower()}_axis{axis}", rng, op, random_shape(rng, 3), axis))
            cases.append(softmax_case(f"{op.lower()}_2d", rng, op, (4, 5), None))
            cases.append(softmax_case(f"{op.lower()}_4d_axis1", rng, op, (2, 3, 2, 2), 1))
            # Logits far beyond exp's float32 range (but not saturated):
            # needs the max shift.
            cases.append(softmax_case(f"{op.lower()}_large_logits", rng, op, (3, 6), -1, shift=100.0))
        self.check("softmax", cases)

    def test_grad_losses(self):
        rng = gs.rng_for("losses")
        cases = []
        i = 0
        for op in ("SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"):
            tag = "sce" if op.startswith("Softmax") else "nll"
            for reduction in ("none", "sum", "mean"):
                for shape, weight, ignore in (
                    ((4, 5), None, None),
                    ((4, 5), "frozen", None),
                    ((3, 4, 2), None, 2),
                    ((5, 3), "input", -1),
                ):
                    i += 1
                    cases.append(loss_case(f"{tag}_{reduction}_{i}", rng, op, shape, reduction, weight, ignore))
        cases.append(loss_case("sce_logprob_mean", rng, "SoftmaxCrossEntropyLoss", (3, 4), "mean", log_prob=True))
        cases.append(loss_case("sce_logprob_none_w", rng, "SoftmaxCrossEntropyLoss", (3, 4, 2), "none", weight="frozen", log_prob=True))
        cases.append(loss_case("sce_large_logits", rng, "SoftmaxCrossEntropyLoss", (4, 5), "mean", log_prob=True, shift=100.0))
        self.check("losses", cases)

    def test_grad_losses_direct(self):
        """The loss op's output is the graph's output: no --loss, no C."""
        rng = gs.rng_for("losses_direct")
        cases = [
            loss_case("sce_mean_direct", rng, "SoftmaxCrossEntropyLoss", (4, 6), "mean", direct=True),
            loss_case("sce_sum_direct_w", rng, "SoftmaxCrossEntropyLoss", (4, 6), "sum", weight="frozen", direct=True),
            loss_case("sce_mean_direct_w_ignore", rng, "SoftmaxCrossEntropyLoss", (5, 3, 2), "mean", weight="input", ignore_index=1, direct=True),
            loss_case("nll_mean_direct", rng, "NegativeLogLikelihoodLoss", (4, 5), "mean", direct=True),
            loss_case("nll_sum_direct_ignore", rng, "NegativeLogLikelihoodLoss", (6, 3), "sum", ignore_index=0, direct=True),
            loss_case("nll_mean_direct_w", rng, "NegativeLogLikelihoodLoss", (4, 5, 3), "mean", weight="frozen", direct=True),
        ]
        self.check("losses_direct", cases)

    def test_grad_reduce(self):
        rng = gs.rng_for("reduce")
        cases = []
        for op in ("ReduceSum", "ReduceMean"):
            for j, (rank, axes) in enumerate(((3, [1]), (3, [0, 2]), (3, [-1]), (2, None), (4, [1, -1]), (1, [0]))):
                shape = random_shape(rng, rank, 2)
                for keep in (0, 1):
                    cases.append(reduce_case(f"{op.lower()}_{j}_k{keep}", rng, op, shape, axes, keep))
        x = randn(rng, 2, 3)
        noop = Node("ReduceSum", ["x"], ["y"], dict(keepdims=1, noop_with_empty_axes=1))
        cases.append(simple("reducesum_noop_empty_axes", [noop], lambda T: [T["x"]], params={"x": x}))
        self.check("reduce", cases)

    def test_grad_reduce_extreme(self):
        self.check("reduce extreme", reduce_extreme_cases(gs.rng_for("reduce_extreme")))

    def test_grad_shape_ops(self):
        rng = gs.rng_for("shape_ops")
        cases = [
            reshape_case("reshape_flat", rng, (2, 3, 4), [6, -1]),
            reshape_case("reshape_zero", rng, (2, 3, 4), [0, 4, 3]),
            reshape_case("reshape_expand", rng, (6, 4), [2, 3, 2, 2]),
            flatten_case("flatten_axis1", rng, (2, 3, 4), 1),
            flatten_case("flatten_axis0", rng, (2, 3, 4), 0),
            flatten_case("flatten_axis2", rng, (2, 3, 2, 2), 2),
            flatten_case("flatten_axis_m1", rng, (2, 3, 4), -1),
            transpose_case("transpose_default", rng, (2, 3, 4), None),
            transpose_case("transpose_021", rng, (2, 3, 4), (0, 2, 1)),
            transpose_case("transpose_4d", rng, (2, 3, 2, 4), (2, 0, 3, 1)),
            squeeze_case("squeeze_axes", rng, (2, 1, 3, 1), [1]),
            squeeze_case("squeeze_neg", rng, (1, 3, 1, 2), [0, -2]),
            squeeze_case("squeeze_all", rng, (1, 3, 1, 2), None),
            unsqueeze_case("unsqueeze_0", rng, (3, 4), [0]),
            unsqueeze_case("unsqueeze_multi", rng, (3, 4), [1, -1]),
            concat_case("concat_0", rng, [(2, 3), (1, 3), (3, 3)], 0),
            concat_case("concat_1", rng, [(2, 2, 4), (2, 3, 4)], 1),
            concat_case("concat_neg", rng, [(2, 3, 1), (2, 3, 2), (2, 3, 3)], -1),
            split_case("split_equal", rng, (2, 6), 1, parts=2),
            split_case("split_sizes", rng, (2, 3, 6), -1, split=[1, 3, 2]),
            split_case("split_axis0", rng, (5, 2), 0, split=[2, 3]),
            slice_case("slice_basic", rng, (6, 4), [1], [5], [0]),
            slice_case("slice_reverse", rng, (5, 4), [-1], [-(2**63)], [0], [-1]),
            slice_case("slice_neg_step2", rng, (3, 7), [5], [0], [1], [-2]),
            slice_case("slice_multi", rng, (4, 5, 6), [0, 1, -2], [4, INT64_MAX, -7], [0, 1, -1], [2, 1, -1]),
            slice_case("slice_clamp", rng, (4, 6), [-10, 2], [10, 100], None, None),
            slice_case("slice_neg_step3", rng, (8,), [7], [-9], [0], [-3]),
            gather_case("gather_axis0_repeat", rng, (5, 3), 0, [0, 2, 2, 4, 0]),
            gather_case("gather_axis1_2d", rng, (3, 4), 1, [[0, 3], [3, 3], [1, 0]]),
            gather_case("gather_negative", rng, (5, 2, 3), 0, [-1, 0, -1, 2]),
            gather_case("gather_scalar_idx", rng, (4, 3), 1, 2),
            gather_case("gather_input_idx", rng, (6, 2), 0, [[1, 1], [5, 0]], as_input=True),
            gather_case("gather_axis_m1_2d", rng, (2, 3, 4), -1, [[3, 0, 3], [1, 1, 2]]),
        ]
        x = randn(rng, 3, 4)
        cases.append(Case("identity", [Node("Identity", ["x"], ["y"])], ["y"], lambda T: [T["x"]], params={"x": x}))
        x = randn(rng, 3, 4)
        cases.append(Case("dropout_inference", [Node("Dropout", ["x"], ["y"])], ["y"], lambda T: [T["x"]], params={"x": x}))
        # Training-mode Dropout with ratio 0 (Constant operands, as exported)
        # is the identity; its mask output is not differentiable.
        from onnx import numpy_helper

        x = randn(rng, 4, 3)
        cases.append(
            Case(
                "dropout_training_ratio0",
                [
                    const_node("ratio", 0.0),
                    Node("Constant", [], ["training"], dict(value=numpy_helper.from_array(np.array(True)))),
                    Node("Dropout", ["x", "ratio", "training"], ["y", "mask"], dict(seed=7)),
                ],
                ["y"],
                lambda T: [T["x"]],
                params={"x": x},
            )
        )
        x = randn(rng, 2, 3)
        twice = [Node("Concat", ["x", "x"], ["y"], dict(axis=1))]
        cases.append(simple("concat_same_twice", twice, lambda T: [torch.cat([T["x"], T["x"]], 1)], params={"x": x}))
        x = randn(rng, 2, 3)
        cases.append(Case("add_same_twice", [Node("Add", ["x", "x"], ["y"])], ["y"], lambda T: [T["x"] + T["x"]], params={"x": x}))
        self.check("shape_ops", cases)

    def test_grad_graph_structure(self):
        rng = gs.rng_for("graph_structure")
        cases = []
        # Fan-out: x feeds three ops; w feeds two; gradients must be summed.
        x, w = randn(rng, 3, 4), randn(rng, 4)
        cases.append(
            Case(
                "fanout",
                [
                    Node("Relu", ["x"], ["r"]),
                    Node("Sigmoid", ["x"], ["s"]),
                    Node("Mul", ["x", "x"], ["sq"]),
                    Node("Add", ["r", "s"], ["rs"]),
                    Node("Mul", ["rs", "w"], ["y0"]),
                    Node("Add", ["sq", "w"], ["y1"]),
                ],
                ["y0", "y1", "x"],
                lambda T: [(F.relu(T["x"]) + torch.sigmoid(T["x"])) * T["w"], T["x"] * T["x"] + T["w"], T["x"]],
                params={"x": x, "w": w},
            )
        )
        # A chain where one intermediate feeds two later ops.
        a, b = randn(rng, 2, 3), randn(rng, 3, 3)
        cases.append(
            Case(
                "fanout_chain",
                [Node("MatMul", ["a", "b"], ["h"]), Node("Tanh", ["h"], ["t"]), Node("MatMul", ["t", "b"], ["u"]), Node("Add", ["u", "h"], ["y"])],
                ["y"],
                lambda T: [torch.tanh(T["a"] @ T["b"]) @ T["b"] + T["a"] @ T["b"]],
                params={"a": a, "b": b},
            )
        )
        # Frozen initializers: no gradient for them, correct ones for the rest.
        cases.append(test_grad_nn.conv_case("frozen_conv_weight", rng, 2, 2, 3, [5, 5], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1, frozen=("w",)))
        g = test_grad_nn.gemm_case("frozen_gemm_bias", rng, 3, 4, 2, trans_b=1, c_shape="N")
        g.frozen["c"] = g.params.pop("c")
        cases.append(g)
        # A float graph input (not an initializer): gradients flow through
        # it to the parameters, but it gets none.
        xin, w2 = randn(rng, 3, 4), randn(rng, 4, 2)
        cases.append(
            simple(
                "float_input",
                [Node("MatMul", ["xin", "w"], ["h"]), Node("Mul", ["h", "h"], ["y"])],
                lambda T: [(T["xin"] @ T["w"]) ** 2],
                params={"w": w2},
                inputs={"xin": xin},
            )
        )
        # Integer inputs (indices, labels): no gradient.
        cases.append(gather_case("int_input_gather", rng, (4, 3), 0, [3, 1, 3], as_input=True))
        cases.append(loss_case("int_input_labels", rng, "SoftmaxCrossEntropyLoss", (3, 4), "mean"))
        self.check("graph_structure", cases)


if __name__ == "__main__":
    unittest.main()
