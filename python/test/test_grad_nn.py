"""Per-op gradient checks, convolutions, pooling, batch and layer
normalisation, GEMM and MatMul: tidal's automatic differentiation vs PyTorch
(the method: grad_cases_support.py).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import math
import unittest

import numpy as np
import torch
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node
from grad_cases_support import GradFamilyTest, const_node, positive, randn, torch_pads

_SKIP = gs.skip_reason()


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


@unittest.skipIf(_SKIP, _SKIP)
class GradNNTest(GradFamilyTest):
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


if __name__ == "__main__":
    unittest.main()
