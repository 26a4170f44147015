"""Writes OUTDIR/*.onnx for spectral.test: DFT (opsets 17 and 20), STFT as
PyTorch exports torch.stft (a [batch, length] signal, a folded window), the
window functions and MelWeightMatrix folded to constants, and the forms
tidal rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "spectral", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def f32(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    # DFT-17 of a real signal along axis 1 (next to the parts: no transpose).
    save(p("dft_real.onnx"), [helper.make_node("DFT", ["x"], ["y"], name="dft", axis=1, onesided=1)],
         [value("x", [2, 8, 1])])
    # DFT-20, axis 1 as an input, of a complex [2, 6, 4, 2] padded to 8.
    save(p("dft_axis.onnx"), [helper.make_node("DFT", ["x", "n", "a"], ["y"], name="dft")],
         [value("x", [2, 6, 4, 2])], [i64("n", 8), i64("a", 1)], opset=20)
    # The inverse, truncating 6 samples to 4.
    save(p("dft_inverse.onnx"), [helper.make_node("DFT", ["x", "n"], ["y"], name="dft", inverse=1)],
         [value("x", [2, 6, 2])], [i64("n", 4)])
    # torch.stft as PyTorch exports it: [batch, length], a Hann window.
    save(p("stft.onnx"), [helper.make_node("HannWindow", ["w_n"], ["w"], name="hann"),
                          helper.make_node("STFT", ["x", "step", "w", "len"], ["y"], name="stft")],
         [value("x", [2, 64])], [i64("w_n", 32), i64("step", 16), i64("len", 32)])
    # A window computed from data: multiplied into the kernels at run time.
    save(p("stft_data_window.onnx"), [helper.make_node("Sigmoid", ["v"], ["w"], name="sig"),
                                      helper.make_node("STFT", ["x", "step", "w"], ["y"], name="stft", onesided=0)],
         [value("x", [2, 40, 2]), value("v", [8])], [i64("step", 8)])
    # Window functions, folded (multiplied by x so that they are used).
    for op, n, periodic in [("HannWindow", 4, 1), ("HammingWindow", 3, 0), ("BlackmanWindow", 4, 1)]:
        save(p(f"{op.lower()}.onnx"), [helper.make_node(op, ["n"], ["w"], name="win", periodic=periodic),
                                       helper.make_node("Mul", ["x", "w"], ["y"], name="mul")],
             [value("x", [n])], [i64("n", n)])
    save(p("mel.onnx"), [helper.make_node("MelWeightMatrix", ["m", "d", "r", "lo", "hi"], ["w"], name="mel"),
                         helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
         [value("x", [2, 9])], [i64("m", 4), i64("d", 16), i64("r", 8000), f32("lo", 0.0), f32("hi", 4000.0)])

    # Rejected, with the reason.
    save(p("dft_parts_axis.onnx"), [helper.make_node("DFT", ["x"], ["y"], name="dft", axis=-1)],
         [value("x", [2, 8, 1])])
    save(p("dft_parts3.onnx"), [helper.make_node("DFT", ["x"], ["y"], name="dft")], [value("x", [2, 8, 3])])
    save(p("dft_data_length.onnx"), [helper.make_node("DFT", ["x", "n"], ["y"], name="dft")],
         [value("x", [2, 8, 1]), value("n", [], TensorProto.INT64)])
    save(p("stft_complex_onesided.onnx"), [helper.make_node("STFT", ["x", "step"], ["y"], name="stft")],
         [value("x", [2, 40, 2])], [i64("step", 8)])
    save(p("stft_long_window.onnx"), [helper.make_node("STFT", ["x", "step", "w", "len"], ["y"], name="stft")],
         [value("x", [2, 64])], [i64("step", 8), f32("w", np.ones(16)), i64("len", 8)])
    save(p("window_data_size.onnx"), [helper.make_node("HannWindow", ["n"], ["w"], name="hann"),
                                      helper.make_node("Mul", ["x", "w"], ["y"], name="mul")],
         [value("x", [4]), value("n", [], TensorProto.INT64)])


if __name__ == "__main__":
    main(sys.argv[1])
