"""Writes OUTDIR/*.onnx for topk.test: TopK as PyTorch exports x.topk(k)
(K a Constant), a K above 64 (torch.sort: a sorting network), and the forms
tidal rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "topk", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def topk_model(path, k, shape=("N", 5), elem=TensorProto.FLOAT, k_input=False, **attrs):
    x = helper.make_tensor_value_info("x", elem, list(shape))
    inputs = [x]
    nodes = []
    if k_input:
        inputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    else:
        nodes.append(helper.make_node("Constant", [], ["k"], name="k_c",
                                      value=numpy_helper.from_array(np.array([k], np.int64), "k")))
    nodes.append(helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top", **attrs))
    outs = [helper.make_tensor_value_info("v", elem, None), helper.make_tensor_value_info("i", TensorProto.INT64, None)]
    save(path, nodes, inputs, outs)


def main(out):
    os.makedirs(out, exist_ok=True)
    topk_model(os.path.join(out, "top2.onnx"), 2)
    topk_model(os.path.join(out, "bottom1_axis0.onnx"), 1, axis=0, largest=0)
    topk_model(os.path.join(out, "k_input.onnx"), 2, k_input=True)
    topk_model(os.path.join(out, "k_too_big.onnx"), 6)
    topk_model(os.path.join(out, "k_above_64.onnx"), 65, shape=("N", 100))
    topk_model(os.path.join(out, "sort_axis0.onnx"), 3, shape=(3, "N"), axis=0, largest=0)
    topk_model(os.path.join(out, "bool_input.onnx"), 2, elem=TensorProto.BOOL)


if __name__ == "__main__":
    main(sys.argv[1])
