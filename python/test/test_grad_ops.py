"""Per-op gradient checks: tidal's automatic differentiation vs PyTorch.

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

import math
import unittest

import numpy as np
import onnx
import torch
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node

_SKIP = gs.skip_reason()
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


# --- Conv ------------------------------------------------------------------------


def conv_case(name, rng, n, cin, cout, spatial, kernel, strides, pads, dilations, group, bias=True, frozen=()):
    nd = len(spatial)
    x = randn(rng, n, cin, *spatial)
    w = randn(rng, cout, cin // group, *kernel, scale=1.0 / math.sqrt(cin // group * np.prod(kernel)))
    params = {"x": x, "w": w}
    if bias:
        params["b"] = randn(rng, cout)
    frozen_vals = {k: params.pop(k) for k in frozen}
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads), dilations=list(dilations), group=group)
    ins = ["x", "w"] + (["b"] if bias else [])

    def ref(T):
        xp = F.pad(T["x"], torch_pads(pads, nd))
        conv = F.conv1d if nd == 1 else F.conv2d
        return [conv(xp, T["w"], T["b"] if bias else None, stride=list(strides), dilation=list(dilations), groups=group)]

    return Case(name, [Node("Conv", ins, ["y"], attrs)], ["y"], ref, params=params, frozen=frozen_vals)


def conv_cases():
    rng = gs.rng_for("conv")
    cases = []
    # Random 2-D and 1-D configurations.
    for i in range(10):
        nd = 2 if i < 6 else 1
        group = int(rng.choice([1, 1, 2, 3]))
        cin, cout = group * int(rng.integers(1, 3)), group * int(rng.integers(1, 3))
        kernel = [int(rng.integers(1, 4)) for _ in range(nd)]
        strides = [int(rng.integers(1, 3)) for _ in range(nd)]
        dil = [int(rng.integers(1, 3)) for _ in range(nd)]
        pads = [int(rng.integers(0, 3)) for _ in range(2 * nd)]
        spatial = [(k - 1) * d + 1 + int(rng.integers(0, 5)) for k, d in zip(kernel, dil)]
        n = int(rng.integers(1, 3))
        cases.append(conv_case(f"conv{nd}d_r{i}", rng, n, cin, cout, spatial, kernel, strides, pads, dil, group, bias=bool(i % 3)))
    # Fixed configurations for the features named in the contract.
    cases += [
        conv_case("conv2d_plain", rng, 2, 3, 4, [6, 5], [3, 3], [1, 1], [0, 0, 0, 0], [1, 1], 1),
        conv_case("conv2d_s2_p1", rng, 2, 3, 4, [7, 8], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1),
        conv_case("conv2d_asym_pads", rng, 1, 2, 3, [5, 6], [3, 2], [1, 2], [0, 2, 1, 0], [1, 1], 1),
        conv_case("conv2d_dilated", rng, 2, 2, 2, [7, 7], [3, 3], [1, 1], [2, 2, 2, 2], [2, 2], 1),
        conv_case("conv2d_depthwise", rng, 2, 4, 4, [5, 5], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 4),
        conv_case("conv2d_depthwise_mult2", rng, 1, 3, 6, [6, 5], [3, 3], [2, 1], [1, 0, 1, 0], [1, 1], 3),
        conv_case("conv2d_groups2_nobias", rng, 2, 4, 6, [5, 5], [2, 2], [1, 1], [0, 0, 0, 0], [1, 1], 2, bias=False),
        conv_case("conv2d_1x1_s2", rng, 2, 3, 5, [6, 6], [1, 1], [2, 2], [0, 0, 0, 0], [1, 1], 1),
        conv_case("conv2d_pad_gt_kernel", rng, 1, 2, 2, [3, 4], [2, 2], [1, 1], [3, 2, 1, 3], [1, 1], 1),
        conv_case("conv1d_s2_asym", rng, 2, 3, 4, [9], [3], [2], [2, 1], [1], 1),
        conv_case("conv1d_depthwise_dil", rng, 2, 3, 3, [10], [3], [1], [2, 2], [2], 3, bias=False),
        conv_case("conv2d_larger", rng, 3, 8, 6, [12, 11], [3, 3], [2, 1], [1, 1, 1, 1], [1, 1], 2),
        conv_case("conv2d_5x5_p2", rng, 2, 1, 4, [9, 9], [5, 5], [1, 1], [2, 2, 2, 2], [1, 1], 1),
    ]
    return cases


# --- pooling ---------------------------------------------------------------------


def pool_out(size, k, s, pb, pe, d, ceil):
    eff = (k - 1) * d + 1
    num = size + pb + pe - eff
    return (-(-num // s) if ceil else num // s) + 1


def windows_ok(size, k, s, pb, pe, d, ceil):
    """Every window intersects the input and starts before the right
    padding (where ONNX's and PyTorch's ceil_mode agree)."""
    out = pool_out(size, k, s, pb, pe, d, ceil)
    if out < 1:
        return False
    for i in range(out):
        start = i * s
        if start >= pb + size:
            return False
        if not any(pb <= start + j * d < pb + size for j in range(k)):
            return False
    return True


def maxpool_case(name, rng, n, c, spatial, kernel, strides, pads, ceil, dil=None):
    nd = len(spatial)
    dil = dil or [1] * nd
    x = randn(rng, n, c, *spatial)
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads), ceil_mode=int(ceil))
    if any(d != 1 for d in dil):
        attrs["dilations"] = list(dil)

    def ref(T):
        xp = F.pad(T["x"], torch_pads(pads, nd), value=-math.inf)
        pool = F.max_pool1d if nd == 1 else F.max_pool2d
        return [pool(xp, list(kernel), list(strides), 0, list(dil), ceil_mode=bool(ceil))]

    return Case(name, [Node("MaxPool", ["x"], ["y"], attrs)], ["y"], ref, params={"x": x})


def avgpool_case(name, rng, n, c, spatial, kernel, strides, pads, ceil, include):
    nd = len(spatial)
    x = randn(rng, n, c, *spatial)
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads), ceil_mode=int(ceil), count_include_pad=int(include))
    symmetric = pads[:nd] == pads[nd:] and all(p <= k // 2 for p, k in zip(pads[:nd], kernel))

    def ref(T):
        x = T["x"]
        if symmetric:  # PyTorch's own padding and divisor rules
            pool = F.avg_pool1d if nd == 1 else F.avg_pool2d
            return [pool(x, list(kernel), list(strides), list(pads[:nd]), ceil_mode=bool(ceil), count_include_pad=bool(include))]
        assert not ceil
        x2 = x if nd == 2 else x.unsqueeze(2)
        k2, s2 = ([1] if nd == 1 else []) + list(kernel), ([1] if nd == 1 else []) + list(strides)
        padarg = torch_pads(pads, nd)
        total = F.avg_pool2d(F.pad(x2, padarg), k2, s2, divisor_override=1)
        if include:
            y = total / float(np.prod(kernel))
        else:
            ones = torch.ones_like(x2)
            y = total / F.avg_pool2d(F.pad(ones, padarg), k2, s2, divisor_override=1)
        return [y if nd == 2 else y.squeeze(2)]

    return Case(name, [Node("AveragePool", ["x"], ["y"], attrs)], ["y"], ref, params={"x": x})


def random_pool_config(rng, nd, symmetric):
    while True:
        kernel = [int(rng.integers(1, 4)) for _ in range(nd)]
        strides = [int(rng.integers(1, k + 1)) for k in kernel]
        if symmetric:
            p = [int(rng.integers(0, k // 2 + 1)) for k in kernel]
            pads = p + p
        else:
            pads = [int(rng.integers(0, k)) for k in kernel] + [int(rng.integers(0, k)) for k in kernel]
        spatial = [k + int(rng.integers(0, 5)) for k in kernel]
        ceil = int(rng.integers(0, 2))
        if all(windows_ok(spatial[i], kernel[i], strides[i], pads[i], pads[i + nd], 1, ceil) for i in range(nd)):
            return kernel, strides, pads, spatial, ceil


def pool_cases():
    rng = gs.rng_for("pool")
    cases = []
    for i in range(6):
        nd = 2 if i < 4 else 1
        kernel, strides, pads, spatial, ceil = random_pool_config(rng, nd, symmetric=False)
        cases.append(maxpool_case(f"maxpool{nd}d_r{i}", rng, 2, 2, spatial, kernel, strides, pads, ceil))
    cases += [
        maxpool_case("maxpool2d_2x2", rng, 2, 3, [6, 6], [2, 2], [2, 2], [0, 0, 0, 0], 0),
        maxpool_case("maxpool2d_3x3_s2_p1", rng, 2, 2, [7, 6], [3, 3], [2, 2], [1, 1, 1, 1], 0),
        maxpool_case("maxpool2d_overlap_ceil", rng, 1, 2, [7, 8], [3, 3], [2, 2], [0, 0, 0, 0], 1),
        maxpool_case("maxpool2d_asym_pads_ceil", rng, 1, 2, [6, 7], [3, 2], [2, 2], [1, 0, 0, 1], 1),
        maxpool_case("maxpool2d_dilated", rng, 1, 2, [7, 7], [2, 2], [1, 1], [0, 0, 0, 0], 0, dil=[2, 2]),
        maxpool_case("maxpool1d_s1", rng, 2, 3, [8], [3], [1], [1, 1], 0),
        maxpool_case("maxpool2d_larger", rng, 3, 4, [11, 13], [3, 3], [2, 2], [1, 1, 1, 1], 1),
        maxpool_case("maxpool2d_stride_gt_kernel", rng, 2, 2, [8, 7], [2, 2], [3, 3], [0, 0, 0, 0], 0),
    ]
    for i in range(8):
        nd = 2 if i < 6 else 1
        symmetric = i % 2 == 0
        while True:
            kernel, strides, pads, spatial, ceil = random_pool_config(rng, nd, symmetric)
            if symmetric:
                # PyTorch's ceil_mode rule (the last window starts inside
                # the input or the left padding) must give the ONNX size.
                break
            if not ceil:
                break
        include = int(rng.integers(0, 2))
        cases.append(avgpool_case(f"avgpool{nd}d_r{i}", rng, 2, 2, spatial, kernel, strides, pads, ceil, include))
    cases += [
        avgpool_case("avgpool2d_2x2", rng, 2, 3, [6, 6], [2, 2], [2, 2], [0, 0, 0, 0], 0, 0),
        avgpool_case("avgpool2d_p1_include", rng, 2, 2, [5, 6], [3, 3], [2, 2], [1, 1, 1, 1], 0, 1),
        avgpool_case("avgpool2d_p1_exclude", rng, 2, 2, [5, 6], [3, 3], [2, 2], [1, 1, 1, 1], 0, 0),
        avgpool_case("avgpool2d_ceil_exclude", rng, 1, 2, [6, 7], [3, 3], [2, 2], [1, 1, 1, 1], 1, 0),
        avgpool_case("avgpool2d_ceil_include", rng, 1, 2, [6, 7], [3, 3], [2, 2], [1, 1, 1, 1], 1, 1),
        avgpool_case("avgpool2d_ceil_nopad", rng, 1, 2, [7, 5], [2, 2], [2, 2], [0, 0, 0, 0], 1, 0),
        avgpool_case("avgpool2d_asym_exclude", rng, 1, 2, [5, 6], [3, 2], [1, 2], [2, 0, 0, 1], 0, 0),
        avgpool_case("avgpool2d_asym_include", rng, 1, 2, [5, 6], [3, 2], [1, 2], [2, 0, 0, 1], 0, 1),
        avgpool_case("avgpool1d_p1", rng, 2, 3, [7], [3], [2], [1, 1], 0, 0),
        avgpool_case("avgpool2d_stride_gt_kernel", rng, 2, 2, [8, 7], [2, 2], [3, 3], [0, 0, 0, 0], 0, 0),
    ]
    for shape in ([2, 3, 4, 5], [2, 3, 7], [1, 4, 1, 1], [3, 2, 2, 3]):
        x = randn(rng, *shape)
        cases.append(
            Case(
                f"gap_{'x'.join(map(str, shape))}",
                [Node("GlobalAveragePool", ["x"], ["y"])],
                ["y"],
                lambda T: [T["x"].mean(dim=tuple(range(2, T["x"].dim())), keepdim=True)],
                params={"x": x},
            )
        )
    # Drop cases whose ONNX output size PyTorch does not reproduce.
    kept = []
    for c in cases:
        node = c.nodes[0]
        if node.op in ("MaxPool", "AveragePool"):
            nd = len(node.attrs["kernel_shape"])
            pads = node.attrs["pads"]
            expect = [
                pool_out(
                    c.params["x"].shape[2 + i],
                    node.attrs["kernel_shape"][i],
                    node.attrs["strides"][i],
                    pads[i],
                    pads[i + nd],
                    node.attrs.get("dilations", [1] * nd)[i],
                    node.attrs["ceil_mode"],
                )
                for i in range(nd)
            ]
            if list(c.output_shapes()[0][2:]) != expect:
                continue
        kept.append(c)
    return kept


# --- normalisation ---------------------------------------------------------------


def batchnorm_case(name, rng, shape, momentum, eps, opset):
    c = shape[1]
    x = randn(rng, *shape, scale=1.5, shift=0.7)
    params = {"x": x, "scale": randn(rng, c, shift=1.0), "bias": randn(rng, c)}
    state = {"mean": randn(rng, c, scale=0.3), "var": positive(rng, c)}
    if opset >= 15:
        outs, attrs = ["y", "new_mean", "new_var"], dict(epsilon=eps, momentum=momentum, training_mode=1)
    else:  # the opset-9 five-output form: training mode
        outs, attrs = ["y", "new_mean", "new_var", "saved_mean", "saved_var"], dict(epsilon=eps, momentum=momentum)
    node = Node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], outs, attrs)

    def ref(T):
        y = F.batch_norm(T["x"], T["mean"], T["var"], T["scale"], T["bias"], training=True, momentum=1.0 - float(np.float32(momentum)), eps=eps)
        return [y]

    # Running statistics are initializers too, but state, not parameters.
    case = Case(name, [node], ["y"], ref, params=params, opset=opset, state=["mean", "var"])
    case.consts.update(state)
    return case


def layernorm_case(name, rng, shape, axis, eps, bias=True, shift=0.5):
    x = randn(rng, *shape, scale=2.0, shift=shift)
    norm_shape = list(shape[axis:])
    params = {"x": x, "scale": randn(rng, *norm_shape, shift=1.0)}
    ins = ["x", "scale"]
    if bias:
        params["b"] = randn(rng, *norm_shape)
        ins.append("b")

    def ref(T):
        return [F.layer_norm(T["x"], norm_shape, T["scale"], T["b"] if bias else None, eps)]

    return Case(name, [Node("LayerNormalization", ins, ["y"], dict(axis=axis, epsilon=eps))], ["y"], ref, params=params, opset=17)


def const_node(out, value):
    from onnx import numpy_helper

    return Node("Constant", [], [out], dict(value=numpy_helper.from_array(f32(value))))


def layernorm13_case(name, rng, shape, eps):
    """LayerNorm as torch 1.13 exports it at opset 13."""
    x = randn(rng, *shape, scale=2.0, shift=0.5)
    d = shape[-1]
    params = {"x": x, "scale": randn(rng, d, shift=1.0), "b": randn(rng, d)}
    nodes = [
        Node("ReduceMean", ["x"], ["mean"], dict(axes=[-1])),
        Node("Sub", ["x", "mean"], ["centred"]),
        const_node("two", 2.0),
        Node("Pow", ["centred", "two"], ["sq"]),
        Node("ReduceMean", ["sq"], ["var"], dict(axes=[-1])),
        const_node("eps", eps),
        Node("Add", ["var", "eps"], ["var_eps"]),
        Node("Sqrt", ["var_eps"], ["std"]),
        Node("Div", ["centred", "std"], ["normed"]),
        Node("Mul", ["normed", "scale"], ["scaled"]),
        Node("Add", ["scaled", "b"], ["y"]),
    ]
    return Case(name, nodes, ["y"], lambda T: [F.layer_norm(T["x"], [d], T["scale"], T["b"], eps)], params=params, opset=13)


def gelu_case(name, rng, shape, commuted=False):
    """nn.GELU() as torch 1.13 exports it (tidal-fuse-gelu makes it one
    tidal.gelu); `commuted` swaps every commutative operand and multiplies
    by 1/sqrt(2) instead of dividing."""
    x = randn(rng, *shape, scale=2.0)
    if commuted:
        scale = [const_node("rsqrt2", 1.0 / np.sqrt(2.0)), Node("Mul", ["rsqrt2", "x"], ["d"])]
        tail = [Node("Add", ["one", "e"], ["a"]), Node("Mul", ["a", "x"], ["m"]), Node("Mul", ["half", "m"], ["y"])]
    else:
        scale = [const_node("sqrt2", np.sqrt(2.0)), Node("Div", ["x", "sqrt2"], ["d"])]
        tail = [Node("Add", ["e", "one"], ["a"]), Node("Mul", ["x", "a"], ["m"]), Node("Mul", ["m", "half"], ["y"])]
    nodes = scale + [Node("Erf", ["d"], ["e"]), const_node("one", 1.0), const_node("half", 0.5)] + tail
    return Case(name, nodes, ["y"], lambda T: [F.gelu(T["x"])], params={"x": x})


# --- linear algebra --------------------------------------------------------------


def gemm_case(name, rng, m, k, n, trans_a=0, trans_b=0, alpha=1.0, beta=1.0, c_shape="N"):
    a = randn(rng, *((k, m) if trans_a else (m, k)))
    b = randn(rng, *((n, k) if trans_b else (k, n)))
    params = {"a": a, "b": b}
    cshape = {"N": (n,), "1N": (1, n), "M1": (m, 1), "MN": (m, n), "scalar": (), "1": (1,), None: None}[c_shape]
    ins = ["a", "b"]
    if cshape is not None:
        params["c"] = randn(rng, *cshape)
        ins.append("c")
    attrs = {}
    if trans_a:
        attrs["transA"] = 1
    if trans_b:
        attrs["transB"] = 1
    if alpha != 1.0:
        attrs["alpha"] = alpha
    if beta != 1.0:
        attrs["beta"] = beta
    al, be = float(np.float32(alpha)), float(np.float32(beta))

    def ref(T):
        A = T["a"].t() if trans_a else T["a"]
        B = T["b"].t() if trans_b else T["b"]
        y = al * (A @ B)
        if cshape is not None:
            y = y + be * T["c"]
        return [y]

    return Case(name, [Node("Gemm", ins, ["y"], attrs)], ["y"], ref, params=params)


def matmul_case(name, rng, sa, sb):
    params = {"a": randn(rng, *sa), "b": randn(rng, *sb)}
    return Case(name, [Node("MatMul", ["a", "b"], ["y"])], ["y"], lambda T: [torch.matmul(T["a"], T["b"])], params=params)


def linalg_cases():
    rng = gs.rng_for("linalg")
    cases = []
    for i in range(6):
        m, k, n = (int(v) for v in rng.integers(1, 6, 3))
        cases.append(
            gemm_case(
                f"gemm_r{i}",
                rng,
                m,
                k,
                n,
                trans_a=i % 2,
                trans_b=(i // 2) % 2,
                alpha=[1.0, 0.5, -1.25][i % 3],
                beta=[1.0, 2.0, 0.75][(i + 1) % 3],
                c_shape=["N", "1N", "M1", "MN", "scalar", "1"][i],
            )
        )
    cases += [
        gemm_case("gemm_transB_bias", rng, 4, 6, 3, trans_b=1, c_shape="N"),
        gemm_case("gemm_transA_transB_1N", rng, 3, 5, 4, trans_a=1, trans_b=1, alpha=0.5, beta=-2.0, c_shape="1N"),
        gemm_case("gemm_M1_beta", rng, 4, 2, 5, beta=3.0, c_shape="M1"),
        gemm_case("gemm_no_c", rng, 3, 4, 2, alpha=2.0, c_shape=None),
        gemm_case("gemm_transA_transB_MN", rng, 5, 3, 4, trans_a=1, trans_b=1, alpha=-0.5, beta=0.25, c_shape="MN"),
    ]
    shapes = [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (3, 4, 2)),
        ((3, 4), (2, 4, 5)),
        ((2, 3, 4), (4, 2)),
        ((4,), (4, 3)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
        ((1, 3, 4), (2, 4, 1)),
        ((2, 3, 5, 7), (7, 4)),
    ]
    for sa, sb in shapes:
        cases.append(matmul_case(f"matmul_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}", rng, sa, sb))
    return cases


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


# --- Einsum ------------------------------------------------------------------------


def einsum_cases(rng):
    forms = [
        ("bhqd,bhkd->bhqk", (2, 3, 4, 5), (2, 3, 6, 5)),  # attention scores
        ("bhqk,bhkd->bhqd", (2, 3, 4, 6), (2, 3, 6, 5)),  # attention values
        ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
        ("ij,jk", (3, 4), (4, 5)),  # implicit output: ik
        ("bnd,hd->bnh", (2, 3, 4), (5, 4)),  # a linear layer
        ("ij,ij->i", (3, 4), (3, 4)),  # row-wise dot
        ("ijk,ik->j", (2, 3, 4), (2, 4)),  # contracted and summed letters
        ("bij->bji", (2, 3, 4), None),
        ("ijk->k", (2, 3, 4), None),
        # Ellipses: letters of their own, right-aligned.
        ("...qd,...kd->...qk", (2, 3, 4, 5), (2, 3, 6, 5)),
        ("...ij,jk->...ik", (2, 3, 4), (4, 5)),  # in one operand only
        ("b...d,bd->b...", (2, 3, 4, 5), (2, 5)),
        ("...ij,...jk", (2, 3, 4), (2, 4, 5)),  # implicit: ...ik
        ("...ji->...ij", (2, 3, 4), None),
    ]
    cases = []
    for j, (eq, sa, sb) in enumerate(forms):
        params = {"a": randn(rng, *sa)}
        ins = ["a"]
        if sb is not None:
            params["b"] = randn(rng, *sb)
            ins.append("b")
        ref = lambda T, eq=eq, ins=ins: [torch.einsum(eq, *[T[n] for n in ins])]
        cases.append(Case(f"einsum_{j}", [Node("Einsum", ins, ["y"], {"equation": eq})], ["y"], ref, params=params))
    return cases


# --- ConvTranspose and Resize ------------------------------------------------------


def conv_transpose_cases(rng):
    """ConvTranspose against F.conv_transpose1d/2d: strides, asymmetric pads
    (PyTorch takes symmetric ones: the reference crops), output_padding,
    dilations, groups, bias, auto_pad and output_shape."""
    cases = []
    forms = [
        # (x shape, w shape, attrs, bias)
        ((2, 3, 4, 5), (3, 4, 3, 3), {}, True),
        ((2, 4, 3, 3), (4, 2, 2, 2), {"strides": [2, 2]}, True),  # U-Net's up-conv
        ((1, 2, 4, 5), (2, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, False),
        ((2, 4, 3, 4), (4, 1, 3, 2), {"strides": [1, 2], "dilations": [2, 1], "group": 2}, True),
        ((1, 6, 3, 3), (6, 1, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "group": 6}, True),  # depthwise
        ((2, 2, 4, 3), (2, 3, 3, 3), {"strides": [2, 2], "pads": [0, 1, 2, 0]}, True),  # asymmetric
        ((2, 3, 7), (3, 2, 4), {"strides": [3], "pads": [1, 2], "output_padding": [2]}, True),  # 1-D
        ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, False),
        ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [2, 2], "output_shape": [6, 7]}, True),
    ]
    for j, (xs, ws, attrs, bias) in enumerate(forms):
        params = {"x": randn(rng, *xs), "w": randn(rng, *ws)}
        ins = ["x", "w"]
        if bias:
            params["b"] = randn(rng, ws[1] * attrs.get("group", 1))
            ins.append("b")
        k = len(xs) - 2

        def ref(T, attrs=attrs, bias=bias, k=k):
            strides = attrs.get("strides", [1] * k)
            dil = attrs.get("dilations", [1] * k)
            outpad = attrs.get("output_padding", [0] * k)
            pads = list(attrs.get("pads", [0] * (2 * k)))
            x, w = T["x"], T["w"]
            full = [strides[d] * (x.shape[2 + d] - 1) + outpad[d] + (w.shape[2 + d] - 1) * dil[d] + 1
                    for d in range(k)]
            if "output_shape" in attrs or attrs.get("auto_pad", "NOTSET").startswith("SAME"):
                want = attrs.get("output_shape", [x.shape[2 + d] * strides[d] for d in range(k)])
                for d in range(k):
                    total = full[d] - want[d]
                    upper = attrs.get("auto_pad") == "SAME_UPPER"
                    pads[d] = total // 2 if upper else total - total // 2
                    pads[k + d] = total - total // 2 if upper else total // 2
            fn = F.conv_transpose1d if k == 1 else F.conv_transpose2d
            y = fn(x, w, T["b"] if bias else None, stride=strides, output_padding=outpad,
                   groups=attrs.get("group", 1), dilation=dil)
            for d in range(k):  # PyTorch pads symmetrically: crop here
                y = y.narrow(2 + d, pads[d], full[d] - pads[d] - pads[k + d])
            return [y]
        cases.append(Case(f"convt_{j}", [Node("ConvTranspose", ins, ["y"], attrs)], ["y"], ref, params=params))
    return cases


def resize_cases(rng):
    """Resize as PyTorch exports nn.Upsample / F.interpolate, against
    F.interpolate: nearest (asymmetric, floor), bilinear and bicubic with
    align_corners False (half_pixel / pytorch_half_pixel) and True,
    downsampling, scales and sizes inputs."""
    cases = []
    forms = [
        # (x shape, attrs, scales or None, sizes or None, torch kwargs)
        ((2, 3, 3, 4), {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
         [1, 1, 2, 2], None, {"scale_factor": 2, "mode": "nearest"}),
        ((1, 2, 5, 4), {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
         None, [1, 2, 7, 3], {"size": (7, 3), "mode": "nearest"}),
        ((2, 2, 3, 4), {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
         [1, 1, 2, 2], None, {"scale_factor": 2, "mode": "bilinear", "align_corners": False}),
        ((1, 2, 4, 3), {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
         None, [1, 2, 7, 5], {"size": (7, 5), "mode": "bilinear", "align_corners": False}),
        ((1, 3, 3, 5), {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
         None, [1, 3, 6, 8], {"size": (6, 8), "mode": "bilinear", "align_corners": True}),
        ((2, 1, 6, 8), {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
         None, [2, 1, 3, 5], {"size": (3, 5), "mode": "bilinear", "align_corners": False}),  # down
        ((1, 2, 4, 4), {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel", "cubic_coeff_a": -0.75},
         None, [1, 2, 8, 6], {"size": (8, 6), "mode": "bicubic", "align_corners": False}),
        ((1, 1, 3, 4), {"mode": "cubic", "coordinate_transformation_mode": "align_corners", "cubic_coeff_a": -0.75},
         None, [1, 1, 5, 7], {"size": (5, 7), "mode": "bicubic", "align_corners": True}),
        ((2, 3, 5), {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
         [1, 1, 1.5], None, {"scale_factor": 1.5, "mode": "linear", "align_corners": False}),
    ]
    for j, (xs, attrs, scales, sizes, kw) in enumerate(forms):
        consts = {"roi": f32([])}
        if scales is not None:
            consts["scales"] = np.asarray(scales, dtype=np.float32)
            ins = ["x", "roi", "scales"]
        else:
            consts["scales"] = f32([])
            consts["sizes"] = i64(sizes)
            ins = ["x", "roi", "scales", "sizes"]
        ref = lambda T, kw=kw: [F.interpolate(T["x"], **kw)]
        cases.append(Case(f"resize_{j}", [Node("Resize", ins, ["y"], attrs)], ["y"], ref,
                          params={"x": randn(rng, *xs)}, consts=consts))
    return cases


# --- element indexing and CumSum ----------------------------------------------------


def indexing_cases(rng):
    """GatherElements vs torch.gather, GatherND vs advanced indexing,
    ScatterElements vs torch.scatter / scatter_add, ScatterND vs index_put,
    TopK vs a stable sort (ties to the lower index), CumSum vs torch.cumsum
    (exclusive and reverse built from it); run-time indices (graph inputs)
    with negative entries."""
    cases = []
    idx = rng.integers(-4, 4, size=(3, 2)).astype(np.int64)  # into axis 1 of [3, 4]
    cases.append(Case("gather_elements", [Node("GatherElements", ["x", "i"], ["y"], {"axis": 1})], ["y"],
                      lambda T: [torch.gather(T["x"], 1, T["i"] % 4)], params={"x": randn(rng, 3, 4)},
                      inputs={"i": idx}))
    idx0 = rng.integers(0, 2, size=(2, 3, 4)).astype(np.int64)  # into axis 0 of [2, 3, 5]
    cases.append(Case("gather_elements_axis0", [Node("GatherElements", ["x", "i"], ["y"], {"axis": 0})], ["y"],
                      lambda T: [torch.gather(T["x"], 0, T["i"])], params={"x": randn(rng, 2, 3, 5)},
                      inputs={"i": idx0}))
    nd = np.array([[[0, 1], [2, -1]], [[1, 0], [-3, 2]]], dtype=np.int64)  # [2, 2, 2] into [3, 4, 5]
    cases.append(Case("gather_nd", [Node("GatherND", ["x", "i"], ["y"])], ["y"],
                      lambda T: [T["x"][T["i"][..., 0] % 3, T["i"][..., 1] % 4]], params={"x": randn(rng, 3, 4, 5)},
                      inputs={"i": nd}))
    bnd = np.array([[[1], [0]], [[2], [2]]], dtype=np.int64)  # batch_dims 1: [2, 2, 1] into [2, 3, 4]
    cases.append(Case("gather_nd_batch", [Node("GatherND", ["x", "i"], ["y"], {"batch_dims": 1})], ["y"],
                      lambda T: [torch.stack([T["x"][b][T["i"][b, :, 0]] for b in range(2)])],
                      params={"x": randn(rng, 2, 3, 4)}, inputs={"i": bnd}))
    perm = np.array([[2, 0, 1, 3], [1, 3, 0, 2]], dtype=np.int64)  # unique per row
    cases.append(Case("scatter_elements", [Node("ScatterElements", ["x", "i", "u"], ["y"], {"axis": 1})], ["y"],
                      lambda T: [T["x"].scatter(1, T["i"], T["u"])],
                      params={"x": randn(rng, 2, 5), "u": randn(rng, 2, 4)}, inputs={"i": perm}))
    dup = np.array([[0, 0, 2], [1, 1, 1]], dtype=np.int64)
    cases.append(Case("scatter_elements_add", [Node("ScatterElements", ["x", "i", "u"], ["y"],
                                                    {"axis": 1, "reduction": "add"})], ["y"],
                      lambda T: [T["x"].scatter_add(1, T["i"], T["u"])],
                      params={"x": randn(rng, 2, 4), "u": randn(rng, 2, 3)}, inputs={"i": dup}, opset=16))
    rows = np.array([[2], [0]], dtype=np.int64)
    def index_put(T):
        y = T["x"].clone()
        y[T["i"][:, 0]] = T["u"]
        return [y]
    cases.append(Case("scatter_nd_rows", [Node("ScatterND", ["x", "i", "u"], ["y"])], ["y"], index_put,
                      params={"x": randn(rng, 4, 3), "u": randn(rng, 2, 3)}, inputs={"i": rows}))
    cells = np.array([[1, 2], [0, 0], [1, -1]], dtype=np.int64)
    def index_add(T):
        i = T["i"] % torch.tensor([2, 4])
        return [T["x"].index_put((i[:, 0], i[:, 1]), T["u"], accumulate=True)]
    cases.append(Case("scatter_nd_add", [Node("ScatterND", ["x", "i", "u"], ["y"], {"reduction": "add"})], ["y"],
                      index_add, params={"x": randn(rng, 2, 4), "u": randn(rng, 3)}, inputs={"i": cells}, opset=16))
    # TopK: the values' gradient lands on the elements chosen; ties go to
    # the lower index (ONNX's rule: a stable sort's order, which
    # torch.topk does not promise); the indices weigh the values.
    def topk_ref(x, k, axis, largest):
        order = torch.sort(x, dim=axis, descending=bool(largest), stable=True).indices.narrow(axis, 0, k)
        return torch.gather(x, axis, order), order
    for j, (shape, k, axis, largest) in enumerate([((3, 7), 3, 1, 1), ((5, 4), 2, 0, 0), ((2, 3, 6), 1, -1, 1),
                                                   ((4, 5), 5, 1, 0)]):
        def ref(T, k=k, axis=axis, largest=largest):
            values, order = topk_ref(T["x"], k, axis, largest)
            return [values, values * order.double()]
        cases.append(Case(f"topk_{j}", [Node("TopK", ["x", "k"], ["v", "i"], {"axis": axis, "largest": largest}),
                                        Node("Cast", ["i"], ["f"], {"to": 1}), Node("Mul", ["v", "f"], ["w"])],
                          ["v", "w"], ref, params={"x": randn(rng, *shape)}, consts={"k": i64([k])}))
    ties = np.array([[1, 3, 3, 2, 3], [0, 0, 0, 5, 0]], dtype=np.float32)
    for largest in (1, 0):
        def ref(T, largest=largest):
            values, order = topk_ref(T["x"], 3, 1, largest)
            return [values * (order.double() + 1.0)]
        cases.append(Case(f"topk_ties_{largest}", [Node("TopK", ["x", "k"], ["v", "i"], {"axis": 1, "largest": largest}),
                                                   Node("Add", ["i", "one"], ["j"]), Node("Cast", ["j"], ["g"], {"to": 1}),
                                                   Node("Mul", ["v", "g"], ["w"])],
                          ["w"], ref, params={"x": ties}, consts={"k": i64([3]), "one": i64(1)}))
    for j, (shape, axis, excl, rev) in enumerate([((3, 7), 1, 0, 0), ((5, 2, 3), 0, 1, 0), ((2, 9), -1, 0, 1),
                                                  ((4, 6), 1, 1, 1), ((1,), 0, 0, 0)]):
        def ref(T, axis=axis, excl=excl, rev=rev):
            x = T["x"]
            if rev:
                x = x.flip(axis)
            y = torch.cumsum(x, axis)
            if excl:
                y = y - x
            return [y.flip(axis) if rev else y]
        cases.append(Case(f"cumsum_{j}", [Node("CumSum", ["x", "axis"], ["y"], {"exclusive": excl, "reverse": rev})],
                          ["y"], ref, params={"x": randn(rng, *shape)}, consts={"axis": i64(axis)}))
    return cases


# --- DepthToSpace, SpaceToDepth, GlobalMaxPool, Shrink, ThresholdedRelu -------------


def rearrange_cases(rng):
    """Against nn.PixelShuffle (CRD), ONNX's DCR and SpaceToDepth orders,
    adaptive_max_pool2d(1), Hardshrink/Softshrink and F.threshold."""
    cases = []
    cases.append(Case("pixel_shuffle", [Node("DepthToSpace", ["x"], ["y"], {"blocksize": 2, "mode": "CRD"})], ["y"],
                      lambda T: [F.pixel_shuffle(T["x"], 2)], params={"x": randn(rng, 2, 8, 3, 4)}))

    def dcr(T):
        x = T["x"]
        n, c, h, w = x.shape
        y = x.reshape(n, 3, 3, c // 9, h, w).permute(0, 3, 4, 1, 5, 2)
        return [y.reshape(n, c // 9, h * 3, w * 3)]
    cases.append(Case("depth_to_space_dcr", [Node("DepthToSpace", ["x"], ["y"], {"blocksize": 3})], ["y"], dcr,
                      params={"x": randn(rng, 1, 18, 2, 3)}))
    def space_to_depth(T):  # ONNX's order (block offsets outermost), not PixelUnshuffle's
        x = T["x"]
        n, c, h, w = x.shape
        y = x.reshape(n, c, h // 2, 2, w // 2, 2).permute(0, 3, 5, 1, 2, 4)
        return [y.reshape(n, c * 4, h // 2, w // 2)]
    cases.append(Case("space_to_depth", [Node("SpaceToDepth", ["x"], ["y"], {"blocksize": 2})], ["y"],
                      space_to_depth, params={"x": randn(rng, 2, 3, 4, 6)}))
    cases.append(Case("global_max_pool", [Node("GlobalMaxPool", ["x"], ["y"])], ["y"],
                      lambda T: [F.adaptive_max_pool2d(T["x"], 1)], params={"x": randn(rng, 2, 3, 5, 4)}))
    cases.append(Case("global_max_pool_1d", [Node("GlobalMaxPool", ["x"], ["y"])], ["y"],
                      lambda T: [F.adaptive_max_pool1d(T["x"], 1)], params={"x": randn(rng, 2, 3, 7)}))
    cases.append(Case("hardshrink", [Node("Shrink", ["x"], ["y"], {"lambd": 0.5})], ["y"],
                      lambda T: [F.hardshrink(T["x"], 0.5)], params={"x": randn(rng, 4, 5)}))
    cases.append(Case("softshrink", [Node("Shrink", ["x"], ["y"], {"lambd": 0.3, "bias": 0.3})], ["y"],
                      lambda T: [F.softshrink(T["x"], 0.3)], params={"x": randn(rng, 4, 5)}))
    cases.append(Case("thresholded_relu", [Node("ThresholdedRelu", ["x"], ["y"], {"alpha": 0.4})], ["y"],
                      lambda T: [F.threshold(T["x"], 0.4, 0.0)], params={"x": randn(rng, 4, 5)}))
    return cases


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


# --- the tests ---------------------------------------------------------------------


@unittest.skipIf(_SKIP, _SKIP)
class GradOpsTest(unittest.TestCase):
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

    def test_grad_conv(self):
        self.check("conv", conv_cases())

    def test_grad_pool(self):
        self.check("pool", pool_cases())

    def test_grad_batchnorm(self):
        rng = gs.rng_for("batchnorm")
        cases = [
            batchnorm_case("bn15_nchw", rng, (2, 3, 4, 5), 0.9, 1e-5, 15),
            batchnorm_case("bn15_nc", rng, (6, 4), 0.9, 1e-5, 15),
            batchnorm_case("bn15_ncl_m08", rng, (3, 2, 5), 0.8, 1e-3, 15),
            batchnorm_case("bn15_n1", rng, (1, 3, 3, 2), 0.9, 1e-5, 15),
            batchnorm_case("bn13_nchw", rng, (2, 3, 3, 4), 0.9, 1e-5, 13),
            batchnorm_case("bn13_nc", rng, (5, 3), 0.7, 1e-4, 13),
            batchnorm_case("bn17_ncl", rng, (4, 3, 3), 0.9, 1e-5, 17),
        ]
        self.check("batchnorm", cases)

    def test_grad_layernorm(self):
        rng = gs.rng_for("layernorm")
        cases = [
            layernorm_case("ln17_last", rng, (2, 3, 5), -1, 1e-5),
            layernorm_case("ln17_axis1", rng, (2, 3, 4), 1, 1e-5),
            layernorm_case("ln17_2d_nobias", rng, (4, 6), -1, 1e-3, bias=False),
            layernorm_case("ln17_axis_m2", rng, (2, 2, 3, 4), -2, 1e-5),
            layernorm13_case("ln13_decomposed", rng, (2, 3, 8), 1e-5),
            layernorm13_case("ln13_decomposed_2d", rng, (4, 5), 1e-5),
            gelu_case("gelu_exported", rng, (3, 4, 5)),
            gelu_case("gelu_commuted", rng, (7,), commuted=True),
            layernorm_case("ln17_offset", rng, (3, 16), -1, 1e-5, shift=30.0),
        ]
        self.check("layernorm", cases)

    def test_grad_linalg(self):
        self.check("linalg", linalg_cases())

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

    def test_grad_einsum(self):
        self.check("einsum", einsum_cases(gs.rng_for("einsum")))

    def test_grad_conv_transpose(self):
        self.check("conv transpose", conv_transpose_cases(gs.rng_for("convt")))

    def test_grad_resize(self):
        self.check("resize", resize_cases(gs.rng_for("resize")))

    def test_grad_indexing(self):
        self.check("indexing", indexing_cases(gs.rng_for("indexing")))

    def test_grad_rearrange(self):
        self.check("rearrange", rearrange_cases(gs.rng_for("rearrange")))

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
        cases.append(conv_case("frozen_conv_weight", rng, 2, 2, 3, [5, 5], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1, frozen=("w",)))
        g = gemm_case("frozen_gemm_bias", rng, 3, 4, 2, trans_b=1, c_shape="N")
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
