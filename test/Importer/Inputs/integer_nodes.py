"""Writes OUTDIR/*.onnx for integer-ops.test: the integer forms that
PyTorch's pack_padded_sequence(enforce_sorted=False) exports around an LSTM
(TopK sorting the lengths, ScatterElements inverting the permutation) and
lengths.clamp(min=1) (an integer Clip), and the integer CumSum of
EmbeddingBag offsets and HuggingFace's position_ids."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

I64 = TensorProto.INT64


def save(path, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "ints", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def vi(name, shape, elem=I64):
    return helper.make_tensor_value_info(name, elem, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    k = numpy_helper.from_array(np.array([3], np.int64), "k")
    save(os.path.join(out, "topk_int.onnx"), [helper.make_node("TopK", ["len", "k"], ["v", "i"], name="sort_lengths")],
         [vi("len", ["N"])], [vi("v", None), vi("i", None)], [k])
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    save(os.path.join(out, "clip_int.onnx"), [helper.make_node("Clip", ["len", "one"], ["y"], name="clamp")],
         [vi("len", ["N"])], [vi("y", None)], [one])
    save(os.path.join(out, "scatter_int.onnx"),
         [helper.make_node("ScatterElements", ["data", "idx", "upd"], ["y"], name="invert", axis=0)],
         [vi("data", ["N"]), vi("idx", ["N"]), vi("upd", ["N"])], [vi("y", None)])
    save(os.path.join(out, "scatter_int_add.onnx"),
         [helper.make_node("ScatterElements", ["data", "idx", "upd"], ["y"], name="invert", axis=0,
                           reduction="add")],
         [vi("data", ["N"]), vi("idx", ["N"]), vi("upd", ["N"])], [vi("y", None)], opset=16)

    axis = numpy_helper.from_array(np.array(0, np.int64), "axis")
    save(os.path.join(out, "cumsum_int.onnx"), [helper.make_node("CumSum", ["len", "axis"], ["y"], name="offsets")],
         [vi("len", ["N"])], [vi("y", None)], [axis])


if __name__ == "__main__":
    main(sys.argv[1])
