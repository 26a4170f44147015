"""Per-op gradient checks, Einsum, ConvTranspose, Resize, element indexing
(gathers, scatters, TopK, CumSum) and the rearrangements (DepthToSpace,
SpaceToDepth, GlobalMaxPool, Shrink, ThresholdedRelu): tidal's automatic
differentiation vs PyTorch (the method: grad_cases_support.py).

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval; skips otherwise.
"""

import unittest

import numpy as np
import torch
import torch.nn.functional as F

import support  # noqa: F401  (sys.path set-up)
import gradcheck_support as gs
from gradcheck_support import Case, Node
from grad_cases_support import GradFamilyTest, f32, i64, randn

_SKIP = gs.skip_reason()


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
        # Three operands, contracted left to right.
        ("bi,ij,bj->b", (2, 3), (3, 4), (2, 4)),  # a bilinear form
        ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),  # a matrix chain
        ("bqd,bkd,bkv->bqv", (2, 3, 4), (2, 5, 4), (2, 5, 6)),  # unnormalised attention
        ("i,i,i->", (3,), (3,), (3,)),
    ]
    cases = []
    for j, (eq, sa, sb, *more) in enumerate(forms):
        params = {"a": randn(rng, *sa)}
        ins = ["a"]
        if sb is not None:
            params["b"] = randn(rng, *sb)
            ins.append("b")
        for k, shape in enumerate(more):
            params["c" + str(k)] = randn(rng, *shape)
            ins.append("c" + str(k))
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
    ScatterElements vs torch.scatter / scatter_add / scatter_reduce (amax,
    amin), ScatterND vs index_put and scatter_reduce,
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
    # Reduction max and min (opset 18): the gradient is shared among the
    # data and update elements equal to the result, as torch.scatter_reduce
    # shares it; values on a coarse grid make those ties common.
    grid = lambda *s: (rng.integers(-3, 4, size=s) * 0.5).astype(np.float32)  # noqa: E731
    dup4 = np.array([[0, 2, 2, 0, 3], [1, 1, 1, 3, 0]], dtype=np.int64)
    for mode, torch_mode in (("max", "amax"), ("min", "amin")):
        cases.append(Case(f"scatter_elements_{mode}", [Node("ScatterElements", ["x", "i", "u"], ["y"],
                                                            {"axis": 1, "reduction": mode})], ["y"],
                          lambda T, m=torch_mode: [T["x"].scatter_reduce(1, T["i"], T["u"], m)],
                          params={"x": grid(2, 4), "u": grid(2, 5)}, inputs={"i": dup4}, opset=18))
    nd_rows = np.array([[2], [0], [2], [-1]], dtype=np.int64)
    cases.append(Case("scatter_nd_max", [Node("ScatterND", ["x", "i", "u"], ["y"], {"reduction": "max"})], ["y"],
                      lambda T: [T["x"].scatter_reduce(0, (T["i"][:, :1] % 4).expand(4, 3), T["u"], "amax")],
                      params={"x": grid(4, 3), "u": grid(4, 3)}, inputs={"i": nd_rows}, opset=18))
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


@unittest.skipIf(_SKIP, _SKIP)
class GradLayoutTest(GradFamilyTest):
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


if __name__ == "__main__":
    unittest.main()
