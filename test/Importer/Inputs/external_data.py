"""Writes OUTDIR/ext.onnx whose Reshape target shape and weight live in
OUTDIR/ext.bin (ONNX external data), plus variants whose external data is
missing, too short, a directory or outside the model's directory, and
OUTDIR/ext_large.onnx, whose 4 GiB weight is a sparse file."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def external(name, array, location, offset, length=None):
    t = numpy_helper.from_array(array, name)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(length if length is not None
                                      else array.nbytes))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


def model(shape_tensor, weight_tensor):
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape0"),
         helper.make_node("MatMul", ["r", "w"], ["y"], name="matmul0")],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [shape_tensor, weight_tensor])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
shape = np.array([6, 4], dtype=np.int64)
weight = np.arange(20, dtype=np.float32).reshape(4, 5)
with open(os.path.join(out, "ext.bin"), "wb") as f:
    f.write(shape.tobytes())
    f.write(weight.tobytes())
cases = {
    "ext.onnx": ("ext.bin", 0),
    "ext_missing.onnx": ("nowhere.bin", 0),
    "ext_short.onnx": ("ext.bin", 10_000),
    "ext_escape.onnx": ("../ext.bin", 0),
}
os.makedirs(os.path.join(out, "dir.bin"), exist_ok=True)
cases["ext_dir.onnx"] = ("dir.bin", 0)
for name, (location, weight_offset) in cases.items():
    m = model(external("shape", shape, "ext.bin", 0),
              external("w", weight, location, shape.nbytes + weight_offset))
    onnx.save(m, os.path.join(out, name))

# A 4 GiB parameter in a sparse file: an argument's values are read at run
# time, so importing it must neither read nor map them.
rows, cols = 1 << 16, 1 << 14
with open(os.path.join(out, "large.bin"), "wb") as f:
    f.truncate(rows * cols * 4)
big = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[rows, cols])
big.data_location = TensorProto.EXTERNAL
for key, value in (("location", "large.bin"), ("offset", "0"),
                   ("length", str(rows * cols * 4))):
    entry = big.external_data.add()
    entry.key, entry.value = key, value
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "big"], ["y"], name="matmul0")],
    "large",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, rows])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [big])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "ext_large.onnx"))
