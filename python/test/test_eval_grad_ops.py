"""Every gradient op of the evaluator against central finite differences.

Each case pairs a forward op with its backward op on float64 tensors. The
scalar `L = sum(forward(x) * r)`, for a fixed random cotangent `r`, has
dL/dx equal to the backward op applied to `r`; both are computed with
`tidal-eval` only: the backward op once, and L at x +- h e_i for every
element i (all perturbed copies in one generated function, so one
evaluation per differentiated input). Cases cover conv (1-D/2-D/3-D,
strides, padding, dilation, groups), max/average pooling (ceil_mode,
count_include_pad, dilations), batch/layer norm, softmax/log_softmax,
the two losses (weights, ignore_index, every reduction), slice with
negative steps, gather with repeated indices, broadcast_to (as the
backward of reduce_sum), the element-wise backwards and dropout.

Needs TIDAL_BUILD_DIR with bin/tidal-eval.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import support

H = 1e-6
RTOL = 1e-5
ATOL = 1e-7


def ty(shape, elem="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def arr(values):
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if len(values) else "") + ">"


def window_out(size, k, s, pb, pe, d=1, ceil=False):
    """PyTorch's (and ONNX's) output size of a sliding window."""
    eff = d * (k - 1) + 1
    num = size + pb + pe - eff
    out = (-(-num // s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + pb:
        out -= 1
    return out


class Case:
    """A forward body (computing `%@y` from `%@<arg>`) and backward body
    (computing one result per differentiated argument) over named inputs.
    `%@` marks the values that each finite-difference copy renames."""

    def __init__(self, name, inputs, wrt, forward, y_shape, backward, results, elem_types=None, fd_calls=False):
        self.name = name
        self.inputs = inputs  # {name: np.ndarray}, float64 or int64
        self.wrt = wrt  # names to differentiate for, in the order of `results`
        self.forward = forward
        self.y_shape = y_shape
        self.backward = backward
        self.results = results  # SSA names (without %) of the backward results
        self.fd_calls = fd_calls  # one evaluation per perturbation (random ops)


def _type_of(a):
    return ty(a.shape, "i64" if a.dtype == np.int64 else ("i1" if a.dtype == np.bool_ else "f64"))


class Evaluator:
    def __init__(self, tmp):
        self.tmp = tmp
        self.count = 0

    def run(self, text, func, args):
        """Evaluates @func of `text` on `args` (a list of arrays, bound by
        position); returns the result arrays."""
        self.count += 1
        d = os.path.join(self.tmp, f"run{self.count}")
        os.makedirs(d)
        path = os.path.join(d, "f.mlir")
        with open(path, "w") as f:
            f.write(text)
        argv = [support.tool("tidal-eval"), path, "--function", func, "--output-dir", os.path.join(d, "out"), "--seed", "7"]
        for i, a in enumerate(args):
            npy = os.path.join(d, f"a{i}.npy")
            np.save(npy, a)
            argv += ["--arg", f"%{i}={npy}"]
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if proc.returncode != 0:
            raise AssertionError(f"tidal-eval failed on {func}: {proc.stderr.strip()}\n{text[:3000]}")
        with open(os.path.join(d, "out", "manifest.json")) as f:
            manifest = json.load(f)
        return [np.load(os.path.join(d, "out", r["file"])) for r in manifest["results"]]


def backward_text(case, r_shape):
    names = list(case.inputs)
    params = ", ".join(f"%{n}: {_type_of(case.inputs[n])}" for n in names)
    params += f", %r: {ty(r_shape)}"
    body = case.backward.replace("%@", "%")
    rtypes = [ty(case.inputs[n].shape) for n in case.wrt]
    return (
        f"func.func @bwd({params}) -> ({', '.join(rtypes)}) {{\n{body}\n"
        f"  return {', '.join('%' + r for r in case.results)} : {', '.join(rtypes)}\n}}\n"
    )


def loss_lines(prefix, y_shape):
    rank = len(y_shape)
    return (
        f"  %{prefix}fd_prod = tidal.mul %{prefix}y, %{prefix}r : ({ty(y_shape)}, {ty(y_shape)}) -> {ty(y_shape)}\n"
        f"  %{prefix}fd_loss = tidal.reduce_sum %{prefix}fd_prod {{axes = {arr(range(rank))}, keepdims = false}} : ({ty(y_shape)}) -> tensor<f64>\n"
    )


def fd_text(case, wrt, copies):
    """@fd(%stack: [copies, shape...], the other inputs..., %r) -> [copies]:
    the loss of each copy of `wrt` taken from the stack."""
    x = case.inputs[wrt]
    others = [n for n in case.inputs if n != wrt]
    params = [f"%stack: {ty((copies,) + x.shape)}"] + [f"%{n}: {_type_of(case.inputs[n])}" for n in others]
    params.append(f"%r: {ty(case.y_shape)}")
    lines = []
    for k in range(copies):
        p = f"k{k}_"
        starts = [k] + [0] * x.ndim
        ends = [k + 1] + list(x.shape)
        lines.append(
            f"  %{p}fd_slice = tidal.slice %stack {{starts = {arr(starts)}, ends = {arr(ends)}, steps = {arr([1] * (x.ndim + 1))}}}"
            f" : ({ty((copies,) + x.shape)}) -> {ty((1,) + x.shape)}"
        )
        lines.append(f"  %{p}{wrt} = tidal.reshape %{p}fd_slice {{shape = {arr(x.shape)}}} : ({ty((1,) + x.shape)}) -> {ty(x.shape)}")
        for n in others + ["r"]:
            t = ty(case.y_shape) if n == "r" else _type_of(case.inputs[n])
            lines.append(f"  %{p}{n} = tidal.identity %{n} : {t}")
        lines.append(case.forward.replace("%@", f"%{p}"))
        lines.append(loss_lines(p, case.y_shape))
        lines.append(f"  %{p}fd_l = tidal.reshape %{p}fd_loss {{shape = {arr([1])}}} : (tensor<f64>) -> {ty((1,))}")
    parts = ", ".join(f"%k{k}_fd_l" for k in range(copies))
    lines.append(f"  %all = tidal.concat {parts} {{axis = 0 : i64}} : ({', '.join([ty((1,))] * copies)}) -> {ty((copies,))}")
    lines.append(f"  return %all : {ty((copies,))}")
    return f"func.func @fd({', '.join(params)}) -> {ty((copies,))} {{\n" + "\n".join(lines) + "\n}\n"


def single_text(case):
    """@fwd(inputs..., %r) -> loss, for one evaluation per perturbation."""
    params = ", ".join(f"%{n}: {_type_of(case.inputs[n])}" for n in case.inputs)
    params += f", %r: {ty(case.y_shape)}"
    body = case.forward.replace("%@", "%") + "\n" + loss_lines("", case.y_shape)
    return f"func.func @fwd({params}) -> tensor<f64> {{\n{body}  return %fd_loss : tensor<f64>\n}}\n"


def check_case(test, ev, case, rng):
    r = rng.standard_normal(case.y_shape)
    names = list(case.inputs)
    analytic = ev.run(backward_text(case, case.y_shape), "bwd", [case.inputs[n] for n in names] + [r])
    checked = 0
    for wrt, got in zip(case.wrt, analytic):
        x = case.inputs[wrt]
        n = x.size
        if case.fd_calls:
            text = single_text(case)
            losses = []
            for i in range(n):
                for sign in (1, -1):
                    xp = x.copy().reshape(-1)
                    xp[i] += sign * H
                    args = [xp.reshape(x.shape) if m == wrt else case.inputs[m] for m in names] + [r]
                    losses.append(float(ev.run(text, "fwd", args)[0]))
            losses = np.array(losses)
        else:
            stack = np.repeat(x.reshape(1, -1), 2 * n, axis=0)
            for i in range(n):
                stack[2 * i, i] += H
                stack[2 * i + 1, i] -= H
            stack = stack.reshape((2 * n,) + x.shape)
            others = [case.inputs[m] for m in names if m != wrt]
            losses = ev.run(fd_text(case, wrt, 2 * n), "fd", [stack] + others + [r])[0]
        numeric = ((losses[0::2] - losses[1::2]) / (2 * H)).reshape(x.shape)
        test.assertEqual(got.shape, x.shape, f"{case.name}: d/d{wrt} shape")
        test.assertGreater(float(np.abs(numeric).max()), 1e-3, f"{case.name}: d/d{wrt} is zero, a vacuous check")
        err = np.abs(got - numeric)
        bad = err > ATOL + RTOL * np.abs(numeric) + 1e-6 * max(1.0, float(np.abs(numeric).max()))
        test.assertFalse(
            bad.any(),
            f"{case.name}: d/d{wrt} disagrees with finite differences at "
            f"{np.argwhere(bad)[:5].tolist()}: backward {got[bad][:5]}, numeric {numeric[bad][:5]}",
        )
        checked += n
    return checked


# --- the cases ------------------------------------------------------------


def conv_case(name, x_shape, w_shape, strides, pads, dilations, group, rng):
    k = len(x_shape) - 2
    out = [x_shape[0], w_shape[0]] + [
        window_out(x_shape[2 + i], w_shape[2 + i], strides[i], pads[i], pads[k + i], dilations[i]) for i in range(k)
    ]
    attrs = f"{{dilations = {arr(dilations)}, pads = {arr(pads)}, strides = {arr(strides)}, group = {group} : i64}}"
    fwd = f"  %@y = tidal.conv %@x, %@w {attrs} : ({ty(x_shape)}, {ty(w_shape)}) -> {ty(out)}"
    bwd = (
        f"  %gx = tidal.conv_backward_data %r, %w {attrs} : ({ty(out)}, {ty(w_shape)}) -> {ty(x_shape)}\n"
        f"  %gw = tidal.conv_backward_weights %r, %x {attrs} : ({ty(out)}, {ty(x_shape)}) -> {ty(w_shape)}"
    )
    inputs = {"x": rng.standard_normal(x_shape), "w": rng.standard_normal(w_shape)}
    return Case(name, inputs, ["x", "w"], fwd, tuple(out), bwd, ["gx", "gw"])


def max_pool_case(name, x_shape, kernel, strides, pads, dilations, ceil, rng):
    k = len(kernel)
    out = list(x_shape[:2]) + [
        window_out(x_shape[2 + i], kernel[i], strides[i], pads[i], pads[k + i], dilations[i], ceil) for i in range(k)
    ]
    attrs = (
        f"{{kernel_shape = {arr(kernel)}, strides = {arr(strides)}, pads = {arr(pads)}, "
        f"dilations = {arr(dilations)}, ceil_mode = {str(ceil).lower()}}}"
    )
    fwd = f"  %@y = tidal.max_pool %@x {attrs} : ({ty(x_shape)}) -> {ty(out)}"
    bwd = f"  %gx = tidal.max_pool_backward %r, %x {attrs} : ({ty(out)}, {ty(x_shape)}) -> {ty(x_shape)}"
    # Distinct values, so that no perturbation changes a window's maximum.
    x = rng.permutation(int(np.prod(x_shape))).reshape(x_shape) * 0.1 + rng.uniform(0, 0.01, x_shape)
    return Case(name, {"x": x}, ["x"], fwd, tuple(out), bwd, ["gx"])


def avg_pool_case(name, x_shape, kernel, strides, pads, ceil, include, rng):
    k = len(kernel)
    out = list(x_shape[:2]) + [
        window_out(x_shape[2 + i], kernel[i], strides[i], pads[i], pads[k + i], 1, ceil) for i in range(k)
    ]
    attrs = (
        f"{{kernel_shape = {arr(kernel)}, strides = {arr(strides)}, pads = {arr(pads)}, "
        f"ceil_mode = {str(ceil).lower()}, count_include_pad = {str(include).lower()}}}"
    )
    fwd = f"  %@y = tidal.average_pool %@x {attrs} : ({ty(x_shape)}) -> {ty(out)}"
    bwd = f"  %gx = tidal.average_pool_backward %r {attrs} : ({ty(out)}) -> {ty(x_shape)}"
    return Case(name, {"x": rng.standard_normal(x_shape)}, ["x"], fwd, tuple(out), bwd, ["gx"])


def batch_norm_case(rng):
    xs, c = (3, 2, 2, 2), (2,)
    bn = (
        "tidal.batch_norm_training {x}, {s}, {b}, {rm}, {rv} {{epsilon = 1.0e-05 : f32, momentum = 0.9 : f32}}"
        f" : ({ty(xs)}, {ty(c)}, {ty(c)}, {ty(c)}, {ty(c)}) -> ({ty(xs)}, {ty(c)}, {ty(c)}, {ty(c)}, {ty(c)})"
    )
    fwd = "  %@y, %@nm, %@nv, %@bm, %@bv = " + bn.format(x="%@x", s="%@scale", b="%@bias", rm="%@rm", rv="%@rv")
    bwd = (
        "  %y, %nm, %nv, %bm, %bv = " + bn.format(x="%x", s="%scale", b="%bias", rm="%rm", rv="%rv") + "\n"
        f"  %gx, %gs, %gb = tidal.batch_norm_backward %r, %x, %scale, %bm, %bv {{epsilon = 1.0e-05 : f32}}"
        f" : ({ty(xs)}, {ty(xs)}, {ty(c)}, {ty(c)}, {ty(c)}) -> ({ty(xs)}, {ty(c)}, {ty(c)})"
    )
    inputs = {
        "x": rng.standard_normal(xs),
        "scale": rng.standard_normal(c),
        "bias": rng.standard_normal(c),
        "rm": np.zeros(c),
        "rv": np.ones(c),
    }
    return Case("batch_norm", inputs, ["x", "scale", "bias"], fwd, xs, bwd, ["gx", "gs", "gb"])


def layer_norm_case(name, xs, axis, ss, rng):
    stat = tuple(xs[:axis]) + (1,) * (len(xs) - axis)
    ln = (
        "tidal.layer_norm {x}, {s}, {b} {{axis = " + str(axis) + " : i64, epsilon = 1.0e-05 : f32}}"
        f" : ({ty(xs)}, {ty(ss)}, {ty(ss)}) -> ({ty(xs)}, {ty(stat)}, {ty(stat)})"
    )
    fwd = "  %@y, %@m, %@i = " + ln.format(x="%@x", s="%@scale", b="%@bias")
    bwd = (
        "  %y, %m, %i = " + ln.format(x="%x", s="%scale", b="%bias") + "\n"
        f"  %gx, %gs, %gb = tidal.layer_norm_backward %r, %x, %scale, %m, %i {{axis = {axis} : i64}}"
        f" : ({ty(xs)}, {ty(xs)}, {ty(ss)}, {ty(stat)}, {ty(stat)}) -> ({ty(xs)}, {ty(ss)}, {ty(ss)})"
    )
    inputs = {"x": rng.standard_normal(xs), "scale": rng.standard_normal(ss), "bias": rng.standard_normal(ss)}
    return Case(name, inputs, ["x", "scale", "bias"], fwd, xs, bwd, ["gx", "gs", "gb"])


def softmax_case(name, op, xs, axis, rng):
    fwd = f"  %@y = tidal.{op} %@x {{axis = {axis} : i64}} : {ty(xs)}"
    bwd = (
        f"  %y = tidal.{op} %x {{axis = {axis} : i64}} : {ty(xs)}\n"
        f"  %gx = tidal.{op}_backward %r, %y {{axis = {axis} : i64}} : {ty(xs)}"
    )
    return Case(name, {"x": rng.standard_normal(xs)}, ["x"], fwd, xs, bwd, ["gx"])


def loss_attrs(reduction, ignore):
    a = f"reduction = #tidal<reduction {reduction}>"
    if ignore is not None:
        a += f", ignore_index = {ignore} : i64"
    return "{" + a + "}"


def sce_case(reduction, weighted, ignore, rng):
    ss, ls, cs = (3, 4, 2), (3, 2), (4,)
    y_shape = ls if reduction == "none" else ()
    labels = rng.integers(0, 4, ls).astype(np.int64)
    if ignore is not None:
        labels[0, 1] = ignore
        labels[2, 0] = ignore
    inputs = {"s": rng.standard_normal(ss), "l": labels}
    w_arg, w_ty = "", ""
    if weighted:
        inputs["w"] = rng.uniform(0.5, 2.0, cs)
        w_arg, w_ty = ", {w}", f", {ty(cs)}"
    attrs = loss_attrs(reduction, ignore)
    w_arg = w_arg.replace("{w}", "$w")
    sce = (
        "tidal.softmax_cross_entropy_loss $s, $l" + w_arg + f" {attrs}"
        f" : ({ty(ss)}, {ty(ls, 'i64')}{w_ty}) -> ({ty(y_shape)}, {ty(ss)})"
    )

    def sub(t, p):
        return t.replace("$s", p + "s").replace("$l", p + "l").replace("$w", p + "w")

    fwd = "  %@y, %@lp = " + sub(sce, "%@")
    bwd = (
        "  %y, %lp = " + sub(sce, "%") + "\n"
        "  %gs = tidal.softmax_cross_entropy_loss_backward %r, %lp, %l" + sub(w_arg, "%") + f" {attrs}"
        f" : ({ty(y_shape)}, {ty(ss)}, {ty(ls, 'i64')}{w_ty}) -> {ty(ss)}"
    )
    name = f"sce_{reduction}{'_weighted' if weighted else ''}{'_ignore' if ignore is not None else ''}"
    return Case(name, inputs, ["s"], fwd, y_shape, bwd, ["gs"])


def nll_case(reduction, weighted, ignore, rng):
    xs, ts, cs = (3, 4, 2), (3, 2), (4,)
    y_shape = ts if reduction == "none" else ()
    target = rng.integers(0, 4, ts).astype(np.int64)
    if ignore is not None:
        target[1, 1] = ignore
    inputs = {"x": rng.standard_normal(xs), "t": target}
    w_arg, w_ty = "", ""
    if weighted:
        inputs["w"] = rng.uniform(0.5, 2.0, cs)
        w_arg, w_ty = ", {w}", f", {ty(cs)}"
    attrs = loss_attrs(reduction, ignore)
    fwd = (
        "  %@y = tidal.nll_loss %@x, %@t" + w_arg.replace("{w}", "%@w") + f" {attrs}"
        f" : ({ty(xs)}, {ty(ts, 'i64')}{w_ty}) -> {ty(y_shape)}"
    )
    bwd = (
        "  %gx = tidal.nll_loss_backward %r, %t" + w_arg.replace("{w}", "%w") + f" {attrs}"
        f" : ({ty(y_shape)}, {ty(ts, 'i64')}{w_ty}) -> {ty(xs)}"
    )
    name = f"nll_{reduction}{'_weighted' if weighted else ''}{'_ignore' if ignore is not None else ''}"
    return Case(name, inputs, ["x"], fwd, y_shape, bwd, ["gx"])


def slice_case(rng):
    xs, ys = (5, 6), (3, 3)
    attrs = f"{{starts = {arr([4, 1])}, ends = {arr([-1, 6])}, steps = {arr([-2, 2])}}}"
    fwd = f"  %@y = tidal.slice %@x {attrs} : ({ty(xs)}) -> {ty(ys)}"
    bwd = f"  %gx = tidal.slice_backward %r {attrs} : ({ty(ys)}) -> {ty(xs)}"
    return Case("slice_negative_steps", {"x": rng.standard_normal(xs)}, ["x"], fwd, ys, bwd, ["gx"])


def gather_case(rng):
    ds, ish, ys = (3, 4), (3, 2), (3, 3, 2)
    idx = np.array([[0, 3], [3, -3], [0, 0]], np.int64)
    fwd = f"  %@y = tidal.gather %@x, %@i {{axis = 1 : i64}} : ({ty(ds)}, {ty(ish, 'i64')}) -> {ty(ys)}"
    bwd = f"  %gx = tidal.gather_backward %r, %i {{axis = 1 : i64}} : ({ty(ys)}, {ty(ish, 'i64')}) -> {ty(ds)}"
    return Case("gather_repeated", {"x": rng.standard_normal(ds), "i": idx}, ["x"], fwd, ys, bwd, ["gx"])


def broadcast_case(rng):
    xs, ys = (2, 3, 4), (1, 3, 1)
    fwd = f"  %@y = tidal.reduce_sum %@x {{axes = {arr([0, 2])}, keepdims = true}} : ({ty(xs)}) -> {ty(ys)}"
    bwd = f"  %gx = tidal.broadcast_to %r : ({ty(ys)}) -> {ty(xs)}"
    return Case("broadcast_to", {"x": rng.standard_normal(xs)}, ["x"], fwd, ys, bwd, ["gx"])


def pointwise_case(op, saved_is_output, rng, attrs=""):
    xs = (8,)
    x = rng.uniform(0.1, 1.5, xs) * rng.choice([-1.0, 1.0], xs)
    fwd = f"  %@y = tidal.{op} %@x {attrs} : {ty(xs)}"
    saved = "%y" if saved_is_output else "%x"
    bwd = f"  %y = tidal.{op} %x {attrs} : {ty(xs)}\n  %gx = tidal.{op}_backward %r, {saved} {attrs} : {ty(xs)}"
    return Case(op, {"x": x}, ["x"], fwd, xs, bwd, ["gx"])


def dropout_case(rng):
    xs = (10,)
    d = f"tidal.dropout {{x}} {{{{ratio = 0.3 : f32, training = true}}}} : ({ty(xs)}) -> ({ty(xs)}, {ty(xs, 'i1')})"
    fwd = "  %@y, %@m = " + d.format(x="%@x")
    bwd = (
        "  %y, %m = " + d.format(x="%x") + "\n"
        f"  %gx = tidal.dropout_backward %r, %m {{ratio = 0.3 : f32}} : ({ty(xs)}, {ty(xs, 'i1')}) -> {ty(xs)}"
    )
    # The mask is drawn from the seed, the same in every evaluation.
    return Case("dropout", {"x": rng.standard_normal(xs)}, ["x"], fwd, xs, bwd, ["gx"], fd_calls=True)


def all_cases(rng):
    cases = [
        conv_case("conv1d_strided_padded", (2, 2, 7), (3, 2, 3), [2], [2, 1], [1], 1, rng),
        conv_case("conv2d_grouped_dilated", (1, 4, 5, 6), (4, 2, 2, 3), [2, 1], [1, 0, 0, 1], [1, 2], 2, rng),
        conv_case("conv3d", (1, 1, 3, 4, 3), (2, 1, 2, 2, 2), [1, 2, 1], [0, 1, 1, 1, 0, 1], [1, 1, 2], 1, rng),
        conv_case("conv2d_depthwise", (2, 3, 4, 4), (3, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 3, rng),
        max_pool_case("max_pool_ceil_dilated", (1, 2, 5, 5), [2, 3], [2, 2], [1, 1, 0, 1], [2, 1], True, rng),
        max_pool_case("max_pool_1d", (2, 1, 9), [3], [2], [1, 1], [1], False, rng),
        avg_pool_case("avg_pool_ceil", (1, 1, 6, 5), [3, 2], [2, 2], [1, 0, 0, 0], True, False, rng),
        avg_pool_case("avg_pool_ceil_include_pad", (1, 1, 6, 5), [3, 2], [2, 2], [1, 0, 1, 1], True, True, rng),
        avg_pool_case("avg_pool_include_pad", (1, 2, 5), [3], [2], [1, 1], False, True, rng),
        batch_norm_case(rng),
        layer_norm_case("layer_norm_axis1", (2, 3, 4), 1, (3, 4), rng),
        layer_norm_case("layer_norm_last", (3, 5), 1, (5,), rng),
        softmax_case("softmax", "softmax", (3, 4), 1, rng),
        softmax_case("log_softmax", "log_softmax", (3, 4), 0, rng),
        slice_case(rng),
        gather_case(rng),
        broadcast_case(rng),
        pointwise_case("relu", True, rng),
        pointwise_case("leaky_relu", False, rng, "{alpha = 0.2 : f32}"),
        pointwise_case("sigmoid", True, rng),
        pointwise_case("tanh", True, rng),
        pointwise_case("erf", False, rng),
        dropout_case(rng),
    ]
    for reduction in ("none", "sum", "mean"):
        for weighted, ignore in ((False, None), (True, None), (True, 2), (False, 1)):
            cases.append(sce_case(reduction, weighted, ignore, rng))
            cases.append(nll_case(reduction, weighted, ignore, rng))
    # Last, so that the cases above keep their random draws.
    cases.append(pointwise_case("gelu", False, rng))
    return cases


_SKIP = support.skip_reason("tidal-eval")


@unittest.skipIf(_SKIP, _SKIP)
class EvalGradOpsTest(unittest.TestCase):
    def test_eval_grad_ops_finite_differences(self):
        rng = np.random.default_rng(0)
        cases = all_cases(rng)
        elements = 0
        with tempfile.TemporaryDirectory(prefix="tidal-eval-fd-") as tmp:
            ev = Evaluator(tmp)
            for case in cases:
                with self.subTest(case=case.name):
                    elements += check_case(self, ev, case, rng)
        print(
            f"\n[eval grad ops] {len(cases)} forward/backward pairs, {elements} gradient elements "
            f"checked against central differences (h={H:g}, rtol={RTOL:g}, atol={ATOL:g}), "
            f"{ev.count} evaluations",
            file=sys.stderr,
        )


if __name__ == "__main__":
    unittest.main()
