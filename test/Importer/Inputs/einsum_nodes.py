"""Writes OUTDIR/*.onnx for einsum.test: Einsum forms (attention scores,
ellipses in both operands and in one) and those tidal rejects."""
import os
import sys

from onnx import TensorProto, helper


def save(path, equation, shapes):
    names = ["a", "b", "c"][:len(shapes)]
    node = helper.make_node("Einsum", names, ["y"], name="ein", equation=equation)
    graph = helper.make_graph([node], "einsum",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    save(p("attention.onnx"), "bhqd,bhkd->bhqk", [[2, 3, 4, 5], [2, 3, 6, 5]])
    save(p("ellipsis.onnx"), "...qd,...kd->...qk", [[2, 3, 4, 5], [2, 3, 6, 5]])
    save(p("ellipsis_one.onnx"), "...ij,jk", [[2, 3, 4], [4, 5]])
    save(p("diagonal.onnx"), "ii->i", [[3, 3]])
    save(p("two_ellipses.onnx"), "...i...->i", [[2, 3, 4]])
    save(p("bilinear.onnx"), "bi,ij,bj->b", [[2, 3], [3, 4], [2, 4]])


if __name__ == "__main__":
    main(sys.argv[1])
