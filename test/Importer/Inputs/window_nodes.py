"""Writes OUTDIR/*.onnx for window.test: LpPool, GlobalLpPool and LRN
nodes, and the forms tidal rejects with a reason."""
import os
import sys

from onnx import TensorProto, helper


def save(path, node, shape, opset=18):
    graph = helper.make_graph([node], "window", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    x = [2, 3, 6, 6]
    save(p("lppool2.onnx"), helper.make_node("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 3], strides=[2, 3],
                                             pads=[1, 0, 1, 0]), x)
    save(p("lppool3.onnx"), helper.make_node("LpPool", ["x"], ["y"], name="lp", p=3, kernel_shape=[2, 2]), x)
    save(p("globallppool.onnx"), helper.make_node("GlobalLpPool", ["x"], ["y"], name="glp", p=1), x)
    save(p("lrn.onnx"), helper.make_node("LRN", ["x"], ["y"], name="lrn", size=4, alpha=0.01, beta=0.5, bias=2.0), x)
    save(p("lppool_dilations.onnx"), helper.make_node("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2],
                                                      dilations=[2, 2]), x)
    save(p("lppool_ceil.onnx"), helper.make_node("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2], ceil_mode=1),
         x)
    save(p("lppool_p0.onnx"), helper.make_node("LpPool", ["x"], ["y"], name="lp", kernel_shape=[2, 2], p=0), x)
    save(p("lrn_no_size.onnx"), helper.make_node("LRN", ["x"], ["y"], name="lrn"), x)


if __name__ == "__main__":
    main(sys.argv[1])
