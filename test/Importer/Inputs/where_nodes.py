"""Writes OUTDIR/*.onnx for where.test: Where with branches of different
float types, as torch 1.13 exports torch.where(c, x, 0.0) (a float64 scalar
constant beside float32), and with a float64 graph input (refused)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs):
    graph = helper.make_graph(nodes, "where", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    zero = helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0.0, np.float32), "z"))
    point5 = helper.make_node("Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, np.float64), "h"))
    nodes = [zero, point5, helper.make_node("Greater", ["x", "zero"], ["c"]),
             helper.make_node("Where", ["c", "x", "half"], ["y"], name="mask")]
    save(os.path.join(out, "f64_scalar.onnx"), nodes, [x])
    d = helper.make_tensor_value_info("d", TensorProto.DOUBLE, ["N", 4])
    nodes = [zero, helper.make_node("Greater", ["x", "zero"], ["c"]),
             helper.make_node("Where", ["c", "x", "d"], ["y"], name="mask")]
    save(os.path.join(out, "f64_input.onnx"), nodes, [x, d])


if __name__ == "__main__":
    main(sys.argv[1])
