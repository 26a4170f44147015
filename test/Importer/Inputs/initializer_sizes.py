"""Writes OUTDIR/*.onnx whose initializers hold more or fewer values than
their shapes need: a parameter's raw bytes, its typed values, its external
data's length, and a compile-time constant's (a Reshape target) values."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(weight, shape=None):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul0")]
    inits = [weight]
    if shape is not None:
        nodes.append(helper.make_node("Reshape", ["y", "shape"], ["z"],
                                      name="reshape0"))
        inits.append(shape)
    graph = helper.make_graph(
        nodes, "sizes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("z" if shape is not None else "y",
                                       TensorProto.FLOAT, None)],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
weight = np.arange(20, dtype=np.float32).reshape(4, 5)

raw_short = numpy_helper.from_array(weight, "w")
raw_short.raw_data = raw_short.raw_data[:-4]
onnx.save(model(raw_short), os.path.join(out, "raw_short.onnx"))

typed_short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 5])
typed_short.float_data.extend(weight.flatten()[:19].tolist())
onnx.save(model(typed_short), os.path.join(out, "typed_short.onnx"))

with open(os.path.join(out, "w.bin"), "wb") as f:
    f.write(weight.tobytes())
external = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 5])
external.data_location = TensorProto.EXTERNAL
for key, value in (("location", "w.bin"), ("offset", "0"), ("length", "40")):
    entry = external.external_data.add()
    entry.key, entry.value = key, value
onnx.save(model(external), os.path.join(out, "external_short.onnx"))

shape = TensorProto(name="shape", data_type=TensorProto.INT64, dims=[2])
shape.int64_data.append(10)
onnx.save(model(numpy_helper.from_array(weight, "w"), shape),
          os.path.join(out, "constant_short.onnx"))
