"""Writes OUTDIR/*.onnx: models at opsets 13-23 written with onnx.helper
directly (onnx 1.12 writes any opset number; its checker knows only up to
17, so it is not run), for opsets.test and opset-errors.test."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=21):
    graph = helper.make_graph(nodes, "opsets", inputs, outputs, list(inits))
    # IR version 10 is the one ONNX pairs with opsets 21-23; 8 before.
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 8
    return m


def fin(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def out(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def weight(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


def reduce18():
    """ReduceMean-18/ReduceSum-13 with axes as an input: from an
    initializer, from a Constant node (PyTorch 2.x), absent with and without
    noop_with_empty_axes."""
    nodes = [
        node("ReduceMean", ["x", "last"], ["y1"], "rm_axes", keepdims=0),
        helper.make_node("Constant", [], ["one"], name="c_one",
                         value=helper.make_tensor("one", TensorProto.INT64, [1], [1])),
        node("ReduceMean", ["x", "one"], ["y2"], "rm_const", keepdims=1),
        node("ReduceMean", ["x"], ["y3"], "rm_noop", noop_with_empty_axes=1),
        node("ReduceMean", ["x"], ["y4"], "rm_all", keepdims=0),
        node("ReduceSum", ["x", "outer"], ["y5"], "rs_axes", keepdims=0),
        node("ReduceMean", ["x", "none"], ["y6"], "rm_empty", keepdims=0),
    ]
    return model(nodes, [fin("x", ["N", 3, 4])], [out(f"y{i}") for i in range(1, 7)],
                 [ints("last", [-1]), ints("outer", [0, 2]), ints("none", [])], opset=18)


def reduce_extremes(opset):
    """ReduceMax/Min/Prod/LogSum/LogSumExp with axes as an input (opset 18
    on), absent with noop_with_empty_axes, and ArgMax/ArgMin with a negative
    axis and select_last_index."""
    nodes = [
        node("ReduceMax", ["x", "last"], ["y1"], "rmax", keepdims=0),
        node("ReduceMin", ["x"], ["y2"], "rmin_noop", noop_with_empty_axes=1),
        helper.make_node("Constant", [], ["one"], name="c_one",
                         value=helper.make_tensor("one", TensorProto.INT64, [1], [1])),
        node("ReduceProd", ["x", "one"], ["y3"], "rprod"),
        node("ReduceLogSumExp", ["x", "outer"], ["y4"], "rlse", keepdims=0),
        node("ReduceLogSum", ["x"], ["y5"], "rls_all", keepdims=0),
        node("ArgMax", ["x"], ["i1"], "amax", axis=-1, select_last_index=1),
        node("ArgMin", ["x"], ["i2"], "amin", axis=1, keepdims=0),
    ]
    return model(nodes, [fin("x", ["N", 3, 4])], [out(f"y{i}") for i in range(1, 6)] + [
        helper.make_tensor_value_info(i, TensorProto.INT64, None) for i in ("i1", "i2")],
        [ints("last", [-1]), ints("outer", [0, 2])], opset=opset)


def split(opset):
    """Split-18: num_outputs with an uneven last chunk (7 = 3 + 3 + 1), and
    sizes as an input."""
    nodes = [
        node("Split", ["x"], ["a", "b", "c"], "split_n", axis=1, num_outputs=3),
        node("Split", ["x", "sizes"], ["d", "e"], "split_sizes", axis=-1),
    ]
    return model(nodes, [fin("x", ["N", 7])], [out(n) for n in "abcde"], [ints("sizes", [2, 5])], opset=opset)


def shapes19():
    """Opset 19's AveragePool (dilations), Shape (start/end), Cast
    (saturate), Identity and Reshape, and opset 20's ConstantOfShape, as a
    PyTorch-style dynamic-batch reshape."""
    nodes = [
        node("AveragePool", ["x"], ["p"], "pool", kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 1]),
        node("Shape", ["p"], ["batch"], "shape", start=0, end=1),
        node("ConstantOfShape", ["one"], ["rest"], "fill",
             value=helper.make_tensor("v", TensorProto.INT64, [1], [18])),
        node("Concat", ["batch", "rest"], ["target"], "concat", axis=0),
        node("Cast", ["target"], ["target64"], "cast", to=TensorProto.INT64, saturate=1),
        node("Reshape", ["p", "target64"], ["r"], "reshape"),
        node("Identity", ["r"], ["y"], "identity"),
    ]
    return model(nodes, [fin("x", ["N", 2, 6, 6])], [out("y")], [ints("one", [1])], opset=20)


def mlp(opset):
    """The same Gemm/Relu MLP (same weights and names) at any opset."""
    nodes = [
        node("Gemm", ["input", "w1", "b1"], ["h"], "fc1", transB=1),
        node("Relu", ["h"], ["a"], "relu1"),
        node("Gemm", ["a", "w2", "b2"], ["output"], "fc2", transB=1),
    ]
    inits = [weight("w1", (16, 8), 1), weight("b1", (16,), 2), weight("w2", (4, 16), 3), weight("b2", (4,), 4)]
    return model(nodes, [fin("input", ["N", 8])], [out("output")], inits, opset=opset)


def cnn(opset):
    """Conv -> BatchNormalization (training) -> Relu -> MaxPool -> Flatten ->
    Gemm. Opset 13 uses PyTorch's five-output BN-9 form, later opsets BN-15
    with training_mode=1 and three outputs."""
    bn_outs = ["bn", "m_out", "v_out"] + (["saved_m", "saved_v"] if opset < 14 else [])
    bn_attrs = dict(epsilon=1e-5, momentum=0.9)
    if opset >= 14:
        bn_attrs["training_mode"] = 1
    nodes = [
        node("Conv", ["input", "cw", "cb"], ["c"], "conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], bn_outs, "bn", **bn_attrs),
        node("Relu", ["bn"], ["r"], "relu"),
        node("MaxPool", ["r"], ["p"], "pool", kernel_shape=[2, 2], strides=[2, 2]),
        node("Flatten", ["p"], ["f"], "flatten", axis=1),
        node("Gemm", ["f", "fw", "fb"], ["output"], "fc", transB=1),
    ]
    inits = [weight("cw", (4, 1, 3, 3), 5), weight("cb", (4,), 6),
             numpy_helper.from_array(np.ones(4, np.float32), "scale"),
             numpy_helper.from_array(np.zeros(4, np.float32), "bias"),
             numpy_helper.from_array(np.zeros(4, np.float32), "mean"),
             numpy_helper.from_array(np.ones(4, np.float32), "var"),
             weight("fw", (3, 64), 7), weight("fb", (3,), 8)]
    return model(nodes, [fin("input", ["N", 1, 8, 8])], [out("output")], inits, opset=opset)


def pad18():
    """Pad-18 with axes naming two dimensions, at opset 19."""
    nodes = [node("Pad", ["x", "pads", "", "axes"], ["y"], "pad", mode="reflect")]
    return model(nodes, [fin("x", ["N", 3, 5])], [out("y")], [ints("pads", [1, 2, 2, 1]), ints("axes", [1, -1])],
                 opset=19)


def one(op, opset, ins=("x",), outs=("y",), inits=(), shape=("N", 4), **attrs):
    return model([node(op, list(ins), list(outs), op.lower() + "0", **attrs)], [fin("x", list(shape))],
                 [out(o) for o in outs], inits, opset=opset)


MODELS = {
    "reduce18.onnx": reduce18,
    "reduce_extremes18.onnx": lambda: reduce_extremes(18),
    "reduce_extremes21.onnx": lambda: reduce_extremes(21),
    "split18.onnx": lambda: split(18),
    "split21.onnx": lambda: split(21),
    "shapes20.onnx": shapes19,
    "pad19.onnx": pad18,
    **{f"mlp{o}.onnx": (lambda o=o: mlp(o)) for o in (13, 18, 19, 20, 21, 22)},
    **{f"cnn{o}.onnx": (lambda o=o: cnn(o)) for o in (13, 15, 21, 22)},
    # Errors.
    "relu23.onnx": lambda: one("Relu", 23),
    "layernorm16.onnx": lambda: one("LayerNormalization", 16, ins=("x", "s"), inits=[weight("s", (4,), 9)]),
    "softmax11.onnx": lambda: one("Softmax", 11),
    "hardswish13.onnx": lambda: one("HardSwish", 13),
    "regex20.onnx": lambda: one("RegexFullMatch", 20, pattern="a+"),
    "split18_bad_count.onnx": lambda: one("Split", 18, outs=("a", "b"), axis=1, num_outputs=3),
    "split18_too_many.onnx": lambda: one("Split", 18, outs=("a", "b", "c", "d"), shape=("N", 5), axis=1,
                                         num_outputs=4),
    "split18_both.onnx": lambda: one("Split", 18, ins=("x", "sizes"), outs=("a", "b"), inits=[ints("sizes", [2, 2])],
                                     axis=1, num_outputs=2),
    "split18_neither.onnx": lambda: one("Split", 18, outs=("a", "b"), axis=1),
    "reducemax20_bool.onnx": lambda: model(
        [node("ReduceMax", ["b"], ["y"], "rmax_bool", keepdims=0)],
        [helper.make_tensor_value_info("b", TensorProto.BOOL, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, None)], opset=20),
    "pad19_wrap.onnx": lambda: one("Pad", 19, ins=("x", "pads"), inits=[ints("pads", [0, 1, 0, 2])], mode="wrap"),
    "pad19_wrap_too_wide.onnx": lambda: one("Pad", 19, ins=("x", "pads"), inits=[ints("pads", [0, 5, 0, 0])],
                                            mode="wrap"),
}

if __name__ == "__main__":
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name, build in MODELS.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(build().SerializeToString())
