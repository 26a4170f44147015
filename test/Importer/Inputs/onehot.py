"""Writes OUTDIR/*.onnx for onehot.test: OneHot as PyTorch exports
F.one_hot (int64 values [0, 1], axis -1), with float values and a middle
axis, and the forms tidal rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, depth=5, values=(0, 1), vtype=np.int64, axis=-1, depth_input=False, out_type=TensorProto.INT64):
    idx = helper.make_tensor_value_info("idx", TensorProto.INT64, ["N", 3])
    inputs, inits = [idx], [numpy_helper.from_array(np.array(values, vtype), "values")]
    if depth_input:
        inputs.append(helper.make_tensor_value_info("depth", TensorProto.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(depth, np.int64), "depth"))
    node = helper.make_node("OneHot", ["idx", "depth", "values"], ["y"], name="hot", axis=axis)
    graph = helper.make_graph([node], "onehot", inputs, [helper.make_tensor_value_info("y", out_type, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    save(os.path.join(out, "one_hot.onnx"))
    save(os.path.join(out, "float_axis1.onnx"), depth=4, values=(-1.0, 2.0), vtype=np.float32, axis=1,
         out_type=TensorProto.FLOAT)
    save(os.path.join(out, "depth_input.onnx"), depth_input=True)
    save(os.path.join(out, "bad_depth.onnx"), depth=0)
    save(os.path.join(out, "bad_axis.onnx"), axis=3)


if __name__ == "__main__":
    main(sys.argv[1])
