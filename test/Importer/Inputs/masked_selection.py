"""Writes OUTDIR/*.onnx for masked-selection.test: boolean-mask indexing
(NonZero -> Transpose -> GatherND, a 1-D mask's indices in Gather) reduced
to a loss or a mean, and what tidal rejects."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def save(path, nodes, inputs, inits=(), out="out", opset=13, out_type=F):
    graph = helper.make_graph(nodes, "masked", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(out, out_type, None)], list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def select(x, mask, out, tag):
    """x[mask] as PyTorch exports it."""
    return [helper.make_node("NonZero", [mask], [f"nz_{tag}"], name=f"nz_{tag}"),
            helper.make_node("Transpose", [f"nz_{tag}"], [f"idx_{tag}"], perm=[1, 0]),
            helper.make_node("GatherND", [x, f"idx_{tag}"], [out], name=f"sel_{tag}")]


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    rows = [("x", F, [6, 5]), ("y", I64, [6]), ("m", B, [6])]
    # F.cross_entropy(x[m], y[m]) (PyTorch writes ignore_index -100).
    save(p("rows_loss.onnx"), select("x", "m", "xs", "x") + select("y", "m", "ys", "y") + [
        helper.make_node("SoftmaxCrossEntropyLoss", ["xs", "ys"], ["out"], ignore_index=-100)], rows)
    # x[m].mean() with m over [2, 3] of a [2, 3, 4] tensor.
    save(p("tokens_mean.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("ReduceMean", ["xs"], ["out"], keepdims=0)], [("x", F, [2, 3, 4]), ("m", B, [2, 3])])
    # x[:, m].max(): a 1-D mask's indices squeezed to a list, then Gather.
    save(p("columns_max.onnx"), [
        helper.make_node("NonZero", ["m"], ["nz"], name="nz"),
        helper.make_node("Transpose", ["nz"], ["t"]),
        helper.make_node("Squeeze", ["t", "one"], ["list"]),
        helper.make_node("Gather", ["x", "list"], ["xs"], axis=1),
        helper.make_node("ReduceMax", ["xs"], ["out"], keepdims=0)],
        [("x", F, [2, 3, 4]), ("m", B, [3])], [numpy_helper.from_array(np.array([1], np.int64), "one")])
    # Row-wise ops keep the selection: softmax(relu(x[m] @ w), 1).sum(1), then summed.
    w = numpy_helper.from_array(np.ones((5, 3), np.float32), "w")
    save(p("rowwise.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("MatMul", ["xs", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Softmax", ["r"], ["s"], axis=1),
        helper.make_node("ReduceSum", ["s", "ax1"], ["rs"], keepdims=0),
        helper.make_node("ReduceSum", ["rs"], ["out"], keepdims=0)],
        [("x", F, [6, 5]), ("m", B, [6])], [w, numpy_helper.from_array(np.array([1], np.int64), "ax1")])
    # A mask known at compile time (an int64 initializer: non-zero elements).
    save(p("constant_mask.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("ReduceSum", ["xs"], ["out"], keepdims=0)], [("x", F, [4, 2])],
        [numpy_helper.from_array(np.array([0, 2, 0, 1], np.int64), "m")])

    # DeBERTa's loss: idx = (y >= 0).nonzero(); gather(x, 0, idx.expand(idx.size(0), 5)),
    # y.gather(0, idx.view(-1)), as torch 1.13 exports it (the count through Shape,
    # Gather, Unsqueeze, Concat and Expand's -1 handling).
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(  # noqa: E731
        np.array(v, np.int64), name))
    deberta = [
        c("zero", 0), helper.make_node("GreaterOrEqual", ["y", "zero"], ["labelled"]),
        helper.make_node("NonZero", ["labelled"], ["nz"], name="nz"),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("Shape", ["idx"], ["idx_shape"]), c("first", 0),
        helper.make_node("Gather", ["idx_shape", "first"], ["count"], axis=0), c("ax0", [0]),
        helper.make_node("Unsqueeze", ["count", "ax0"], ["count1"]), c("classes", [5]),
        helper.make_node("Concat", ["count1", "classes"], ["target"], axis=0), c("flat", [-1]),
        helper.make_node("Reshape", ["target", "flat"], ["target2"]),
        helper.make_node("Shape", ["target2"], ["target_rank"]),
        helper.make_node("ConstantOfShape", ["target_rank"], ["ones"],
                         value=numpy_helper.from_array(np.array([1], np.int64))),
        c("minus", -1), helper.make_node("Mul", ["ones", "minus"], ["minus_ones"]),
        helper.make_node("Equal", ["target2", "minus_ones"], ["is_minus"]),
        helper.make_node("Where", ["is_minus", "ones", "target2"], ["expand_to"]),
        helper.make_node("Expand", ["idx", "expand_to"], ["idx_wide"], name="expand"),
        helper.make_node("GatherElements", ["x", "idx_wide"], ["xs"], axis=0, name="rows"),
        helper.make_node("Reshape", ["idx", "flat"], ["list"]),
        helper.make_node("GatherElements", ["y", "list"], ["ys"], axis=0),
        helper.make_node("SoftmaxCrossEntropyLoss", ["xs", "ys"], ["out"], ignore_index=-100)]
    save(p("deberta_loss.onnx"), deberta, [("x", F, [6, 5]), ("y", I64, [6])])
    # x[m].view(x[m].size(0), -1): the count stands for the selected axis.
    save(p("count_reshape.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Shape", ["xs"], ["sh"]), c("first", [0]),
        helper.make_node("Gather", ["sh", "first"], ["k"], axis=0), c("rest", [-1]),
        helper.make_node("Concat", ["k", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["xs", "target"], ["xr"]),
        helper.make_node("ReduceSum", ["xr"], ["out"], keepdims=0)], [("x", F, [6, 2, 3]), ("m", B, [6])])

    # Rejected.
    # The count computed with (x[m].size(0) + 1).
    save(p("count_arith.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Shape", ["xs"], ["sh"]), c("one", [1]),
        helper.make_node("Add", ["sh", "one"], ["grown"], name="grow"),
        helper.make_node("Cast", ["grown"], ["out"], to=F)], [("x", F, [6, 5]), ("m", B, [6])])
    # The count as a graph output (x[m].size(0)).
    save(p("count_output.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Shape", ["xs"], ["sh"]), c("first", 0),
        helper.make_node("Gather", ["sh", "first"], ["out"], axis=0)], [("x", F, [6, 5]), ("m", B, [6])],
         out_type=I64)
    # The shape holding the count indexed by a run-time index: not folded, so
    # the node would compute with it.
    save(p("count_runtime.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Shape", ["xs"], ["sh"]),
        helper.make_node("Gather", ["sh", "i"], ["picked"], axis=0, name="pick"),
        helper.make_node("Cast", ["picked"], ["out"], to=F)], [("x", F, [6, 5]), ("m", B, [6]), ("i", I64, [1])])
    save(p("output.onnx"), select("x", "m", "out", "x"), [("x", F, [6, 5]), ("m", B, [6])])
    save(p("shape.onnx"), [helper.make_node("NonZero", ["m"], ["nz"], name="nz"),
                           helper.make_node("Shape", ["nz"], ["sh"], name="shape"),
                           helper.make_node("Cast", ["sh"], ["out"], to=F)], [("m", B, [6])])
    save(p("softmax0.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Softmax", ["xs"], ["s"], axis=0, name="sm"),
        helper.make_node("ReduceSum", ["s"], ["out"], keepdims=0)], [("x", F, [6, 5]), ("m", B, [6])])
    save(p("spans.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("Add", ["xs", "b"], ["s"], name="add"),
        helper.make_node("ReduceSum", ["s"], ["out"], keepdims=0)], [("x", F, [6, 5]), ("m", B, [6]),
                                                                     ("b", F, [6, 1])])
    save(p("two_masks.onnx"), select("x", "m", "xs", "x") + select("x", "k", "xk", "k") + [
        helper.make_node("Mul", ["xs", "xk"], ["s"], name="mul"),
        helper.make_node("ReduceSum", ["s"], ["out"], keepdims=0)], [("x", F, [6, 5]), ("m", B, [6]),
                                                                     ("k", B, [6])])
    save(p("leading.onnx"), select("x", "m", "xs", "x") + [
        helper.make_node("ReduceSum", ["xs"], ["out"], keepdims=0)], [("x", F, [6, 5]), ("m", B, [5])])


if __name__ == "__main__":
    main(sys.argv[1])
