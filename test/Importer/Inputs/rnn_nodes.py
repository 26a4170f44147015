"""Writes OUTDIR/*.onnx for rnn.test: ONNX RNN nodes as PyTorch's nn.RNN
exports them (tanh, relu; forward, bidirectional, batch-first), and the
forms tidal rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SEQ, INPUT, HIDDEN = 3, 2, 4


def rnn_model(path, dirs=1, layout=0, bias=True, lens=False, **attrs):
    x_shape = ["N", SEQ, INPUT] if layout else [SEQ, 2, INPUT]  # layout 0: the batch is dim 1, static
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((dirs, HIDDEN, INPUT)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((dirs, HIDDEN, HIDDEN)).astype(np.float32), "R")]
    ins = ["x", "W", "R"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal((dirs, 2 * HIDDEN)).astype(np.float32), "B"))
        ins.append("B")
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    if lens:  # packed sequences: sequence_lens a graph input
        ins += ["lens"] if bias else ["", "lens"]
        graph_inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [2]))
    node = helper.make_node("RNN", ins, ["y", "y_h"], name="rnn", hidden_size=HIDDEN, layout=layout, **attrs)
    graph = helper.make_graph([node], "rnn", graph_inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    rnn_model(os.path.join(out, "tanh.onnx"))
    rnn_model(os.path.join(out, "relu_bidirectional.onnx"), dirs=2, layout=1, direction="bidirectional",
              activations=["Relu", "Relu"])
    rnn_model(os.path.join(out, "mixed_bidirectional.onnx"), dirs=2, bias=False, direction="bidirectional",
              activations=["Tanh", "Relu"])
    rnn_model(os.path.join(out, "sigmoid.onnx"), activations=["Sigmoid"])
    rnn_model(os.path.join(out, "three_activations.onnx"), dirs=2, direction="bidirectional",
              activations=["Tanh", "Tanh", "Tanh"])
    rnn_model(os.path.join(out, "clip.onnx"), clip=1.0)
    rnn_model(os.path.join(out, "lens_bidirectional.onnx"), dirs=2, direction="bidirectional", lens=True)


if __name__ == "__main__":
    main(sys.argv[1])
