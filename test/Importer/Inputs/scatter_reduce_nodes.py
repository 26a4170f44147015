"""Writes OUTDIR/*.onnx for scatter-reduce.test: ScatterElements and
ScatterND with reduction max and min (opset 18), and what tidal rejects."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, node, data_shape, idx_shape, upd_shape, elem=TensorProto.FLOAT, opset=18, inits=()):
    graph = helper.make_graph(
        [node], "scatter",
        [helper.make_tensor_value_info("x", elem, data_shape), helper.make_tensor_value_info("i", TensorProto.INT64,
                                                                                              idx_shape),
         helper.make_tensor_value_info("u", elem, upd_shape)],
        [helper.make_tensor_value_info("y", elem, None)], list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    save(p("elements_max.onnx"), helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="smax", axis=1,
                                                  reduction="max"), [2, 5], [2, 3], [2, 3])
    save(p("nd_min.onnx"), helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="smin", reduction="min"),
         [4, 3], [2, 1], [2, 3])
    save(p("int_max.onnx"), helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="imax",
                                             reduction="max"), [4], [2], [2], elem=TensorProto.INT64)
    save(p("nd_mul.onnx"), helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="smul", reduction="mul"),
         [4, 3], [2, 1], [2, 3])
    save(p("max_opset16.onnx"), helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="smax",
                                                  reduction="max"), [4], [2], [2], opset=16)


if __name__ == "__main__":
    main(sys.argv[1])
