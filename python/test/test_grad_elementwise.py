"""Per-op gradient checks, element-wise arithmetic and math, the activations,
max/min/where/expand and the variadic ops, Pad, and the ops imported as
compositions (DecomposedConverters.cpp): tidal's automatic differentiation
vs PyTorch (the method: grad_cases_support.py).

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
from grad_cases_support import (GradFamilyTest, away_from_zero, const_node, f32, i64, positive, random_shape, randn,
                                simple)

_SKIP = gs.skip_reason()


# --- element-wise ------------------------------------------------------------------

BINARY = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b,
    "Pow": lambda a, b: torch.pow(a, b),
}

BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (3, 1)),
    ((1, 4), (3, 1)),
    ((2, 3, 4), ()),
    ((), (3,)),
    ((2, 1, 4), (1, 3, 1)),
    ((5,), (2, 1, 5)),
]


def binary_case(name, rng, op, sa, sb):
    if op == "Pow":
        a, b = positive(rng, *sa), f32(rng.uniform(-2.0, 2.0, sb))
    elif op == "Div":
        a, b = randn(rng, *sa), away_from_zero(rng, *sb)
    else:
        a, b = randn(rng, *sa), randn(rng, *sb)
    fn = BINARY[op]
    return Case(name, [Node(op, ["a", "b"], ["y"])], ["y"], lambda T: [fn(T["a"], T["b"])], params={"a": a, "b": b})


UNARY = {
    "Relu": (lambda x: F.relu(x), "normal", {}),
    "LeakyRelu": (lambda x: F.leaky_relu(x, float(np.float32(0.1))), "normal", {"alpha": 0.1}),
    "LeakyRelu_default": (lambda x: F.leaky_relu(x, float(np.float32(0.01))), "normal", {}),
    "Sigmoid": (torch.sigmoid, "normal", {}),
    "Tanh": (torch.tanh, "normal", {}),
    "Erf": (torch.erf, "normal", {}),
    "Exp": (torch.exp, "normal", {}),
    "Log": (torch.log, "positive", {}),
    "Sqrt": (torch.sqrt, "positive", {}),
    "Neg": (torch.neg, "normal", {}),
    "Identity": (lambda x: x, "normal", {}),
}


def unary_case(name, rng, key, shape):
    fn, dist, attrs = UNARY[key]
    op = key.split("_")[0]
    x = positive(rng, *shape, lo=0.2, hi=3.0) if dist == "positive" else randn(rng, *shape, scale=1.5)
    return Case(name, [Node(op, ["x"], ["y"], dict(attrs))], ["y"], lambda T: [fn(T["x"])], params={"x": x})


# --- the activation family and element-wise math ---------------------------------

SIXTH = float(np.float32(1.0 / 6.0))


def activation_cases(rng):
    """One case per op form, each on random shapes of rank 1-3."""
    forms = [
        # (name, op, attrs, torch ref, opset, input distribution)
        ("hardsigmoid_torch", "HardSigmoid", {"alpha": SIXTH, "beta": 0.5}, F.hardsigmoid, 13, "wide"),
        ("hardsigmoid_onnx", "HardSigmoid", {}, lambda x: torch.clamp(float(np.float32(0.2)) * x + 0.5, 0, 1), 13, "wide"),
        ("hardswish", "HardSwish", {}, F.hardswish, 14, "wide"),
        ("elu", "Elu", {"alpha": 0.7}, lambda x: F.elu(x, float(np.float32(0.7))), 13, "normal"),
        ("elu_default", "Elu", {}, F.elu, 13, "normal"),
        ("selu", "Selu", {}, F.selu, 13, "normal"),
        ("celu", "Celu", {"alpha": 1.5}, lambda x: F.celu(x, 1.5), 13, "normal"),
        ("softplus", "Softplus", {}, F.softplus, 13, "wide"),
        ("softsign", "Softsign", {}, F.softsign, 13, "normal"),
        ("abs", "Abs", {}, torch.abs, 13, "nonzero"),
        ("reciprocal", "Reciprocal", {}, torch.reciprocal, 13, "nonzero"),
        ("sin", "Sin", {}, torch.sin, 13, "wide"),
        ("cos", "Cos", {}, torch.cos, 13, "wide"),
    ]
    cases = []
    for name, op, attrs, fn, opset, dist in forms:
        for j in range(2):
            shape = random_shape(rng, 1 + j)
            if dist == "nonzero":
                x = away_from_zero(rng, *shape)
            else:
                x = randn(rng, *shape, scale=4.0 if dist == "wide" else 1.5)
            cases.append(
                Case(f"{name}_{j}", [Node(op, ["x"], ["y"], dict(attrs))], ["y"], lambda T, fn=fn: [fn(T["x"])], params={"x": x}, opset=opset)
            )
    # Clip with compile-time bounds (nn.ReLU6 exports Clip(x, 0, 6)); absent
    # bounds are unbounded.
    for j, (lo, hi) in enumerate([(0.0, 6.0), (-0.5, None), (None, 0.25)]):
        x = randn(rng, 3, 5, scale=4.0)
        frozen, ins = {}, ["x", "", ""]
        if lo is not None:
            frozen["lo"], ins[1] = f32(lo), "lo"
        if hi is not None:
            frozen["hi"], ins[2] = f32(hi), "hi"
        while ins[-1] == "":
            ins.pop()
        ref = lambda T, lo=lo, hi=hi: [F.hardtanh(T["x"], lo, hi) if lo is not None and hi is not None else torch.clamp(T["x"], lo, hi)]
        cases.append(Case(f"clip_{j}", [Node("Clip", ins, ["y"])], ["y"], ref, params={"x": x}, frozen=frozen))
    # Zero-gradient ops inside a product: d(x * f(x))/dx = f(x).
    for op, fn in (("Sign", torch.sign), ("Floor", torch.floor), ("Ceil", torch.ceil), ("Round", torch.round)):
        x = randn(rng, 4, 3, scale=3.0)
        nodes = [Node(op, ["x"], ["f"]), Node("Mul", ["x", "f"], ["y"])]
        cases.append(Case(f"{op.lower()}_product", nodes, ["y"], lambda T, fn=fn: [T["x"] * fn(T["x"])], params={"x": x}))
    return cases


# --- max, min, where, expand and the variadic ops ----------------------------------


def logic_cases(rng):
    cases = []
    # Max/Min with broadcasting, ties included (PyTorch halves the gradient).
    for op, fn in (("Max", torch.maximum), ("Min", torch.minimum)):
        for j, (sa, sb) in enumerate([((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5))]):
            a, b = randn(rng, *sa), randn(rng, *sb)
            if sa == sb:
                a[0, :2] = b[0, :2]  # ties
            cases.append(Case(f"{op.lower()}_{j}", [Node(op, ["a", "b"], ["y"])], ["y"],
                              lambda T, fn=fn: [fn(T["a"], T["b"])], params={"a": a, "b": b}))
    # Variadic forms: a chain in input order.
    a, b, c = randn(rng, 2, 3), randn(rng, 3), randn(rng, 2, 1)
    cases.append(Case("max3", [Node("Max", ["a", "b", "c"], ["y"])], ["y"],
                      lambda T: [torch.maximum(torch.maximum(T["a"], T["b"]), T["c"])], params={"a": a, "b": b, "c": c}))
    cases.append(Case("sum3", [Node("Sum", ["a", "b", "c"], ["y"])], ["y"],
                      lambda T: [T["a"] + T["b"] + T["c"]], params={"a": a.copy(), "b": b.copy(), "c": c.copy()}))
    cases.append(Case("mean3", [Node("Mean", ["a", "b", "c"], ["y"])], ["y"],
                      lambda T: [(T["a"] + T["b"] + T["c"]) / 3], params={"a": a.copy(), "b": b.copy(), "c": c.copy()}))
    # Where on a run-time mask (a causal mask from Less of two inputs), with
    # broadcasting of both sides, as attention code writes it.
    i = np.arange(5, dtype=np.int64)
    x, fill = randn(rng, 2, 5, 5), randn(rng, 1)
    nodes = [Node("Less", ["row", "col"], ["m"]), Node("Where", ["m", "fill", "x"], ["y"])]
    cases.append(Case("where_causal", nodes, ["y"],
                      lambda T: [torch.where(T["row"] < T["col"], T["fill"], T["x"])],
                      params={"x": x, "fill": fill}, inputs={"row": i.reshape(5, 1), "col": i.reshape(1, 5)}))
    # Where with a mask from Equal/Not/And/Or on inputs.
    p, q = i.reshape(5, 1) % 2, i.reshape(1, 5) % 3
    nodes = [Node("Equal", ["p", "q"], ["e"]), Node("Not", ["e"], ["n"]), Node("Greater", ["p", "q"], ["g"]),
             Node("Or", ["n", "g"], ["o"]), Node("Xor", ["o", "e"], ["z"]), Node("And", ["z", "o"], ["m"]),
             Node("Where", ["m", "x", "w"], ["y"])]
    def ref_mask(T):
        e = T["p"] == T["q"]
        o = (~e) | (T["p"] > T["q"])
        m = (o ^ e) & o
        return [torch.where(m, T["x"], T["w"])]
    cases.append(Case("where_logic", nodes, ["y"], ref_mask, params={"x": randn(rng, 5, 5), "w": randn(rng, 5)},
                      inputs={"p": p, "q": q}))
    # Expand of a run-time value (ViT's class token: [1, 1, D] to [N, 1, D]).
    t = randn(rng, 1, 1, 4)
    cases.append(Case("expand_token", [Node("Expand", ["t", "shape"], ["y"])], ["y"],
                      lambda T: [T["t"].expand(3, 1, 4)], params={"t": t}, consts={"shape": i64([3, 1, 4])}))
    cases.append(Case("expand_rank_up", [Node("Expand", ["t", "shape"], ["y"])], ["y"],
                      lambda T: [T["t"].expand(2, 3, 4)], params={"t": randn(rng, 3, 1)}, consts={"shape": i64([2, 1, 4])}))
    # Cast: masks cast to float scale x (BERT's padding mask, from an int64
    # input); a cast to float64 and back (CastLike) passes the gradient
    # through.
    D, FL = onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT
    nodes = [Node("Less", ["row", "col"], ["m"]), Node("Cast", ["m"], ["mf"], {"to": FL}),
             Node("Cast", ["ids"], ["idf"], {"to": FL}), Node("Mul", ["x", "mf"], ["xm"]),
             Node("Mul", ["xm", "idf"], ["y"])]
    cases.append(Case("cast_masks", nodes, ["y"],
                      lambda T: [T["x"] * (T["row"] < T["col"]).double() * T["ids"].double()],
                      params={"x": randn(rng, 2, 5, 5)},
                      inputs={"row": i.reshape(5, 1), "col": i.reshape(1, 5), "ids": (i.reshape(1, 5) % 3)}))
    nodes = [Node("Cast", ["x"], ["xd"], {"to": D}), Node("CastLike", ["xd", "x"], ["xl"]),
             Node("Mul", ["xl", "w"], ["y"])]
    cases.append(Case("cast_round_trip", nodes, ["y"], lambda T: [T["x"] * T["w"]], opset=15,
                      params={"x": randn(rng, 3, 4), "w": randn(rng, 4)}))
    return cases


# --- Pad ---------------------------------------------------------------------------


def pad_cases(rng):
    """Pad in every mode against F.pad (reflect, replicate), negative pads
    (a crop) included. (onnx 1.12's checker rejects opset 18's axes input:
    test/Importer covers it.)"""
    cases = []
    forms = [
        ("constant", (2, 3, 4, 5), [0, 0, 1, 2, 0, 0, 2, 1], 0.5, 13, None),
        ("reflect", (2, 3, 4, 5), [0, 0, 2, 1, 0, 0, 1, 3], None, 13, None),
        ("edge", (1, 2, 3, 3), [0, 0, 2, 3, 0, 0, 1, 4], None, 13, None),
        ("constant", (3, 4), [1, -1, 2, 2], 0.0, 13, None),
        ("reflect", (2, 5, 6), [0, 1, 2, 0, 2, 1], None, 13, None),
    ]
    mode_torch = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}
    for j, (mode, shape, pads, value, opset, axes) in enumerate(forms):
        x = randn(rng, *shape)
        rank = len(shape)
        full = [0] * (2 * rank)
        for k, a in enumerate(axes if axes is not None else range(rank)):
            full[a % rank], full[rank + a % rank] = pads[k], pads[len(pads) // 2 + k]
        consts = {"pads": i64(pads)}
        ins = ["x", "pads"]
        if value is not None:
            consts["value"] = f32(value)
            ins.append("value")
        if axes is not None:
            while len(ins) < 3:
                ins.append("")
            consts["axes"] = i64(axes)
            ins.append("axes")

        def ref(T, full=full, mode=mode, value=value, rank=rank):
            y = T["x"]
            tp = []  # F.pad: last dimension first
            for d in reversed(range(rank)):
                tp += [full[d], full[rank + d]]
            if mode == "constant":
                return [F.pad(y, tp, mode="constant", value=value or 0.0)]
            # F.pad's reflect/replicate pad only the trailing dims; the
            # leading pads here are zero.
            k = next(d for d in range(rank) if full[d] or full[rank + d])
            lead = y.shape[:k]
            z = y.reshape((-1,) + tuple(y.shape[k:])) if k > 0 else y.unsqueeze(0)
            z = F.pad(z if z.dim() > 2 else z.unsqueeze(0), tp[: 2 * (rank - k)], mode=mode_torch[mode])
            return [z.reshape(tuple(lead) + tuple(z.shape[-(rank - k):]))]
        cases.append(Case(f"pad_{mode}_{j}", [Node("Pad", ins, ["y"], {"mode": mode})], ["y"], ref,
                          params={"x": x}, consts=consts, opset=opset))
    return cases


# --- ops imported as compositions (DecomposedConverters.cpp) -----------------------


def decomposed_cases(rng):
    cases = []
    x = randn(rng, 2, 6, 3, 4)
    # InstanceNormalization (also what GroupNorm exports as at opset 13).
    cases.append(Case("instance_norm", [Node("InstanceNormalization", ["x", "s", "b"], ["y"], {"epsilon": 1e-5})], ["y"],
                      lambda T: [F.instance_norm(T["x"], weight=T["s"], bias=T["b"], eps=1e-5)],
                      params={"x": x, "s": randn(rng, 6, shift=1.0), "b": randn(rng, 6)}))
    # GroupNormalization: opset 18 (scale/bias per group) and 21 (per channel).
    s3, b3 = randn(rng, 3, shift=1.0), randn(rng, 3)
    cases.append(Case("group_norm18", [Node("GroupNormalization", ["x", "s", "b"], ["y"], {"num_groups": 3, "epsilon": 1e-5})],
                      ["y"], lambda T: [F.group_norm(T["x"], 3, T["s"].repeat_interleave(2), T["b"].repeat_interleave(2), 1e-5)],
                      params={"x": x.copy(), "s": s3, "b": b3}, opset=18))
    cases.append(Case("group_norm21", [Node("GroupNormalization", ["x", "s", "b"], ["y"], {"num_groups": 2})],
                      ["y"], lambda T: [F.group_norm(T["x"], 2, T["s"], T["b"], 1e-5)],
                      params={"x": x.copy(), "s": randn(rng, 6, shift=1.0), "b": randn(rng, 6)}, opset=21))
    g = randn(rng, 3, 7, scale=2.0)
    cases.append(Case("gelu20", [Node("Gelu", ["x"], ["y"])], ["y"], lambda T: [F.gelu(T["x"])], params={"x": g}, opset=20))
    cases.append(Case("gelu20_tanh", [Node("Gelu", ["x"], ["y"], {"approximate": "tanh"})], ["y"],
                      lambda T: [F.gelu(T["x"], approximate="tanh")], params={"x": g.copy()}, opset=20))
    cases.append(Case("prelu", [Node("PRelu", ["x", "w"], ["y"])], ["y"],
                      lambda T: [torch.where(T["x"] > 0, T["x"], T["w"] * T["x"])], params={"x": x.copy(), "w": f32(rng.uniform(0.05, 0.3, (6, 1, 1)))}))
    m = randn(rng, 2, 5, 5)
    cases.append(Case("trilu_upper", [Node("Trilu", ["x", "k"], ["y"])], ["y"], lambda T: [torch.triu(T["x"], 1)],
                      params={"x": m}, consts={"k": i64(1)}, opset=14))
    cases.append(Case("trilu_lower", [Node("Trilu", ["x"], ["y"], {"upper": 0})], ["y"], lambda T: [torch.tril(T["x"])],
                      params={"x": m.copy()}, opset=14))
    t = randn(rng, 2, 3)
    cases.append(Case("tile", [Node("Tile", ["x", "r"], ["y"])], ["y"], lambda T: [T["x"].repeat(2, 3)],
                      params={"x": t}, consts={"r": i64([2, 3])}))
    for op, fn in (("ReduceL1", lambda v: v.abs().sum(1, keepdim=True)), ("ReduceL2", lambda v: v.pow(2).sum(1, keepdim=True).sqrt()),
                   ("ReduceSumSquare", lambda v: v.pow(2).sum(1, keepdim=True))):
        cases.append(Case(op.lower(), [Node(op, ["x"], ["y"], {"axes": [1]})], ["y"], lambda T, fn=fn: [fn(T["x"])],
                          params={"x": away_from_zero(rng, 3, 4)}))
    return cases


@unittest.skipIf(_SKIP, _SKIP)
class GradElementwiseTest(GradFamilyTest):
    def test_grad_binary(self):
        rng = gs.rng_for("binary")
        cases = []
        for op in BINARY:
            for i, (sa, sb) in enumerate(BROADCAST_SHAPES):
                cases.append(binary_case(f"{op.lower()}_{i}", rng, op, sa, sb))
        # Pow with a constant exponent, as exported for x**2.
        x = randn(rng, 3, 4)
        cases.append(simple("pow_const2", [const_node("two", 2.0), Node("Pow", ["x", "two"], ["y"])], lambda T: [T["x"] ** 2], params={"x": x}))
        x = randn(rng, 2, 5)
        pow3 = [const_node("e", 3.0), Node("Pow", ["x", "e"], ["y"])]
        cases.append(simple("pow_const3_negative_base", pow3, lambda T: [T["x"] ** 3], params={"x": x}))
        x = positive(rng, 4)
        cases.append(simple("pow_const_half", [const_node("e", 0.5), Node("Pow", ["x", "e"], ["y"])], lambda T: [T["x"] ** 0.5], params={"x": x}))
        from onnx import numpy_helper

        x = randn(rng, 3, 2)
        cases.append(
            Case(
                "pow_int64_exponent",
                [Node("Constant", [], ["e"], dict(value=numpy_helper.from_array(np.array(3, dtype=np.int64)))), Node("Pow", ["x", "e"], ["y"])],
                ["y"],
                lambda T: [T["x"] ** 3],
                params={"x": x},
            )
        )
        self.check("binary", cases)

    def test_grad_unary(self):
        rng = gs.rng_for("unary")
        cases = []
        for key in UNARY:
            for j in range(3):
                shape = random_shape(rng, 1 + j)
                cases.append(unary_case(f"{key.lower()}_{j}", rng, key, shape))
        self.check("unary", cases)

    def test_grad_activations(self):
        self.check("activations", activation_cases(gs.rng_for("activations")))

    def test_grad_logic(self):
        self.check("logic", logic_cases(gs.rng_for("logic")))

    def test_grad_pad(self):
        self.check("pad", pad_cases(gs.rng_for("pad")))

    def test_grad_decomposed(self):
        self.check("decomposed", decomposed_cases(gs.rng_for("decomposed")))


if __name__ == "__main__":
    unittest.main()
