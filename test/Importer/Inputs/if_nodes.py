"""Writes OUTDIR/*.onnx for if-inlining.test: If nodes as PyTorch exports
them for `squeeze(dim)` (a test of a dimension's size), an If listed before
the node whose output its branch reads, an If inside a branch, and an If
whose condition is data."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def const(name, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name + "_c",
                            value=numpy_helper.from_array(np.array(values, dtype=dtype), name))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] + "_n", **attrs)


def branch(name, nodes, out):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])


def squeeze_if(x, dim, out, tag, shape_of=None):
    """If(Shape(x)[dim] == 1) Squeeze(x, dim) else Identity(x), as PyTorch's
    squeeze(dim) exports when the size is not known to the exporter (the
    shape tested is `shape_of`'s, of x's shape, when given)."""
    return [
        node("Shape", [shape_of or x], [f"{tag}_shape"]),
        const(f"{tag}_dim", dim),
        node("Gather", [f"{tag}_shape", f"{tag}_dim"], [f"{tag}_size"], axis=0),
        const(f"{tag}_one", 1),
        node("Equal", [f"{tag}_size", f"{tag}_one"], [f"{tag}_cond"]),
        helper.make_node("If", [f"{tag}_cond"], [out], name=f"{tag}_if",
                         then_branch=branch(f"{tag}_then", [const(f"{tag}_axes", [dim]),
                                                             node("Squeeze", [x, f"{tag}_axes"], [f"{tag}_sq"])],
                                            f"{tag}_sq"),
                         else_branch=branch(f"{tag}_else", [node("Identity", [x], [f"{tag}_id"])], f"{tag}_id")),
    ]


def save(path, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "if_nodes", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def fin(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    # relu(x) squeezed at dim 1 when its size is 1: x [N, 1, 4] takes the
    # then branch, x [N, 3, 4] the else branch; the If is listed before the
    # Relu whose output its branches read (and the condition tests x).
    nodes = squeeze_if("r", 1, "y", "s", shape_of="x")
    nodes.insert(0, nodes.pop())  # the If first in the file
    # (r ends a longer chain than the condition's, so that only the
    # branch's read of r orders the If after it)
    nodes += [node("Neg", ["x"], ["n1"]), node("Neg", ["n1"], ["n2"]), node("Relu", ["n2"], ["n3"]),
              node("Neg", ["n3"], ["n4"]), node("Relu", ["n4"], ["r"])]
    save(os.path.join(out, "squeeze_taken.onnx"), nodes, [fin("x", ["N", 1, 4])], [fin("y", None)])
    save(os.path.join(out, "squeeze_not_taken.onnx"), nodes, [fin("x", ["N", 3, 4])], [fin("y", None)])

    # An If inside the taken branch: squeeze dim 1, then (inside) dim 1 again.
    inner = squeeze_if("o_sq", 1, "o_inner", "i")
    outer = [
        node("Shape", ["x"], ["o_shape"]), const("o_dim", 1),
        node("Gather", ["o_shape", "o_dim"], ["o_size"], axis=0), const("o_one", 1),
        node("Equal", ["o_size", "o_one"], ["o_cond"]),
        helper.make_node("If", ["o_cond"], ["y"], name="o_if",
                         then_branch=branch("o_then", [const("o_axes", [1]), node("Squeeze", ["x", "o_axes"], ["o_sq"])]
                                            + inner, "o_inner"),
                         else_branch=branch("o_else", [node("Identity", ["x"], ["o_id"])], "o_id")),
    ]
    save(os.path.join(out, "nested.onnx"), outer, [fin("x", ["N", 1, 1, 4])], [fin("y", None)])

    # The condition is data: both branches computed, a where selects.
    nodes = [
        node("ReduceSum", ["x"], ["total"], keepdims=0),
        const("zero", 0.0, np.float32),
        node("Greater", ["total", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["y"], name="data_if",
                         then_branch=branch("d_then", [node("Relu", ["x"], ["d_relu"])], "d_relu"),
                         else_branch=branch("d_else", [node("Neg", ["x"], ["d_neg"])], "d_neg")),
    ]
    save(os.path.join(out, "data_condition.onnx"), nodes, [fin("x", ["N", 4])], [fin("y", None)])

    # ... and refused when the branches' outputs differ in shape.
    nodes = [
        node("ReduceSum", ["x"], ["total2"], keepdims=0),
        const("zero2", 0.0, np.float32),
        node("Greater", ["total2", "zero2"], ["positive2"]),
        const("first", [1], np.int64),
        helper.make_node("If", ["positive2"], ["y"], name="shapes_if",
                         then_branch=branch("s_then", [node("Relu", ["x"], ["s_relu"])], "s_relu"),
                         else_branch=branch("s_else", [node("ReduceSum", ["x", "first"], ["s_sum"])], "s_sum")),
    ]
    save(os.path.join(out, "data_condition_shapes.onnx"), nodes, [fin("x", ["N", 4])], [fin("y", None)])

    # A branch with an operator tidal does not read names that node.
    nodes = squeeze_if("x", 1, "y", "h")
    nodes[-1].attribute[1].g.node[0].op_type = "Unique"  # then_branch's first node
    save(os.path.join(out, "unsupported_in_branch.onnx"), nodes, [fin("x", ["N", 1, 4])], [fin("y", None)])


if __name__ == "__main__":
    main(sys.argv[1])
