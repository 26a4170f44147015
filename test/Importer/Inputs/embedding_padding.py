"""Writes OUTDIR/embedding.onnx for embedding-padding.test: an embedding
lookup (Gather on axis 0 of the initializer `emb.weight`) summed, and a
Gather on axis 1 of `proj`."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def main(out):
    os.makedirs(out, exist_ok=True)
    nodes = [helper.make_node("Gather", ["emb.weight", "ids"], ["e"], name="lookup"),
             helper.make_node("ReduceSum", ["e"], ["s"], keepdims=0),
             helper.make_node("Gather", ["proj", "ids"], ["p"], name="columns", axis=1),
             helper.make_node("ReduceSum", ["p"], ["t"], keepdims=0),
             helper.make_node("Add", ["s", "t"], ["loss"])]
    inits = [numpy_helper.from_array(np.ones((5, 4), np.float32), "emb.weight"),
             numpy_helper.from_array(np.ones((4, 5), np.float32), "proj")]
    graph = helper.make_graph(nodes, "embedding", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
                              [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(os.path.join(out, "embedding.onnx"), "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
