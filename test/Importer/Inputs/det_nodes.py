"""Writes OUTDIR/*.onnx for det.test: Det of a batch of 3x3 matrices, and
what tidal rejects (a non-square input, an order past 64)."""
import os
import sys

from onnx import TensorProto, helper


def save(path, shape, out_shape):
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det")], "det",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    save(os.path.join(out, "det3.onnx"), [2, 3, 3], [2])
    save(os.path.join(out, "rect.onnx"), [2, 3, 4], [2])
    save(os.path.join(out, "large.onnx"), [65, 65], [])


if __name__ == "__main__":
    main(sys.argv[1])
