"""Writes OUTDIR/*.onnx: models whose ConvTranspose, Resize, CumSum,
Scatter*, DepthToSpace or Cast use a form tidal rejects, for
op-errors.test."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, inits=(), opset=16):
    graph = helper.make_graph(nodes, "op_errors", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def fin(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def arr(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def main(out):
    os.makedirs(out, exist_ok=True)
    w = arr("w", np.zeros((2, 3, 3, 3)), np.float32)
    x = fin("x", [1, 2, 4, 4])
    # An output_shape more than a stride past what the weights reach.
    save(f"{out}/convt_shape.onnx", [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                                      strides=[2, 2], output_shape=[12, 12])], [x], [w])
    save(f"{out}/convt_outpad.onnx", [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                                                       strides=[2, 2], output_padding=[2, 2])], [x], [w])
    roi = arr("roi", [0, 0, 0, 0, 1, 1, 1, 1], np.float32)
    scales = arr("scales", [1, 1, 2, 2], np.float32)
    sizes = arr("sizes", [1, 2, 8, 8], np.int64)
    save(f"{out}/resize_crop.onnx", [helper.make_node("Resize", ["x", "roi", "scales"], ["y"], name="rs",
                                                      coordinate_transformation_mode="tf_crop_and_resize")],
         [x], [roi, scales])
    save(f"{out}/resize_both.onnx", [helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], name="rs")],
         [x], [roi, scales, sizes])
    save(f"{out}/resize_runtime.onnx", [helper.make_node("Resize", ["x", "", "s"], ["y"], name="rs")],
         [x, fin("s", [4])])
    save(f"{out}/cumsum_bool.onnx", [helper.make_node("CumSum", ["i", "axis"], ["y"], name="cs")],
         [fin("i", [3, 4], TensorProto.BOOL)], [arr("axis", 1, np.int64)])
    idx = fin("idx", [2, 1], TensorProto.INT64)
    save(f"{out}/scatter_mul.onnx", [helper.make_node("ScatterElements", ["x2", "idx", "u"], ["y"], name="sc",
                                                      axis=0, reduction="mul")],
         [fin("x2", [3, 1]), idx, fin("u", [2, 1])])
    save(f"{out}/scatter_shape.onnx", [helper.make_node("ScatterElements", ["x2", "idx", "u"], ["y"], name="sc")],
         [fin("x2", [3, 1]), idx, fin("u", [2, 2])])
    save(f"{out}/gathernd_deep.onnx", [helper.make_node("GatherND", ["x", "nd"], ["y"], name="g")],
         [x, fin("nd", [2, 5], TensorProto.INT64)])
    save(f"{out}/d2s_channels.onnx", [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)], [x])
    save(f"{out}/cast_string.onnx", [helper.make_node("Cast", ["x"], ["y"], name="c", to=TensorProto.STRING)], [x])


if __name__ == "__main__":
    main(sys.argv[1])
