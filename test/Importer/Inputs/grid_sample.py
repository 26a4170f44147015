"""Writes OUTDIR/*.onnx for grid-sample.test: GridSample as F.grid_sample
exports it (opset 16), its opset-20 spelling, AffineGrid (opset 20), and
the forms tidal rejects."""
import os
import sys

from onnx import TensorProto, helper


def save(path, opset=16, x_shape=("N", 3, 5, 6), grid_shape=("N", 4, 7, 2), **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", **attrs)
    graph = helper.make_graph([node], "grid_sample",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
                               helper.make_tensor_value_info("grid", TensorProto.FLOAT, list(grid_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    save(f"{out}/bilinear.onnx")
    save(f"{out}/nearest_border.onnx", mode="nearest", padding_mode="border", align_corners=1)
    save(f"{out}/linear20.onnx", opset=20, mode="linear", padding_mode="reflection")
    save(f"{out}/bicubic.onnx", mode="bicubic")
    save(f"{out}/volumetric.onnx", opset=20, x_shape=("N", 3, 4, 5, 6), grid_shape=("N", 2, 3, 4, 3))
    save(f"{out}/volumetric16.onnx", opset=16, x_shape=("N", 3, 4, 5, 6), grid_shape=("N", 2, 3, 4, 3))
    main_affine(out)


def affine(path, size=(2, 3, 2, 3), theta_shape=(2, 2, 3), size_input=False, **attrs):
    from onnx import numpy_helper
    import numpy as np
    inputs = [helper.make_tensor_value_info("theta", TensorProto.FLOAT, list(theta_shape))]
    inits = []
    if size_input:
        inputs.append(helper.make_tensor_value_info("size", TensorProto.INT64, [len(size)]))
    else:
        inits.append(numpy_helper.from_array(np.array(size, np.int64), "size"))
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], name="ag", **attrs)
    graph = helper.make_graph([node], "affine_grid", inputs,
                              [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main_affine(out):
    affine(f"{out}/affine.onnx", align_corners=1)
    affine(f"{out}/affine_size_input.onnx", size_input=True)
    affine(f"{out}/affine_bad_theta.onnx", theta_shape=(2, 3, 3))


if __name__ == "__main__":
    main(sys.argv[1])
