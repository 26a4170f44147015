"""Writes OUTDIR/*.onnx for grid-sample.test: GridSample as F.grid_sample
exports it (opset 16), its opset-20 spelling, and the forms tidal rejects."""
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


if __name__ == "__main__":
    main(sys.argv[1])
