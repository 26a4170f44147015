"""Writes OUTDIR/*.onnx for shape-folding.test: masks computed from
constants with Mod, Equal, Not, And, Or and ScatterND (as Swin
Transformer's exported attention mask is), a Mod of a graph input, Size
and EyeLike of a graph input (they need only its type) and float Mod."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def const(name, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name + "_c",
                            value=numpy_helper.from_array(np.array(values, dtype=dtype), name))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] + "_n", **attrs)


def save(path, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "folding", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6])
    ys = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 6]) for n in ("y", "py", "c")]
    nodes = [
        const("a", [-3, -1, 0, 1, 3, 4]),
        const("b", [2, 2, 2, -2, -2, 3]),
        const("one", [1]),
        node("Mod", ["a", "b"], ["m_py"]),  # Python's %: [1, 1, 0, -1, -1, 1]
        node("Mod", ["a", "b"], ["m_c"], fmod=1),  # C's fmod: [-1, -1, 0, 1, 1, 1]
        node("Equal", ["m_py", "m_c"], ["same"]),  # [F, F, T, F, F, T]
        node("Not", ["same"], ["differ"]),
        node("Equal", ["m_py", "one"], ["is_one"]),  # [T, T, F, F, F, T]
        node("And", ["differ", "is_one"], ["both"]),  # [T, T, F, F, F, F]
        node("Or", ["both", "same"], ["either"]),  # [T, T, T, F, F, T]
        node("Cast", ["either"], ["mask"], to=TensorProto.FLOAT),
        const("zeros", np.zeros(6), np.float32),
        const("where", [[3], [4]]),
        const("updates", [5.0, 7.0], np.float32),
        node("ScatterND", ["zeros", "where", "updates"], ["bias"]),  # [0, 0, 0, 5, 7, 0]
        node("Mul", ["x", "mask"], ["masked"]),
        node("Add", ["masked", "bias"], ["y"]),
        node("Cast", ["m_py"], ["m_py_f"], to=TensorProto.FLOAT),
        node("Mul", ["x", "m_py_f"], ["py"]),
        node("Cast", ["m_c"], ["m_c_f"], to=TensorProto.FLOAT),
        node("Mul", ["x", "m_c_f"], ["c"]),
    ]
    save(os.path.join(out, "masks.onnx"), nodes, [x], ys)

    # Mod of data: tidal folds Mod only when its inputs are constants.
    i = helper.make_tensor_value_info("i", TensorProto.INT64, ["N", 6])
    nodes = [
        const("two", [2]),
        node("Mod", ["i", "two"], ["parity"]),
        node("Cast", ["parity"], ["pf"], to=TensorProto.FLOAT),
        node("Mul", ["x", "pf"], ["y"]),
    ]
    save(os.path.join(out, "mod_of_data.onnx"), nodes, [x, i], ys[:1])

    # Size (x.numel() / 6 = N) and EyeLike of x's type; float Mod (C's fmod,
    # as ONNX requires for floats).
    sq = helper.make_tensor_value_info("sq", TensorProto.FLOAT, [6, 6])
    nodes = [
        node("Size", ["x"], ["numel"]),
        node("Cast", ["numel"], ["numel_f"], to=TensorProto.FLOAT),
        node("Mul", ["x", "numel_f"], ["scaled"]),
        node("EyeLike", ["sq"], ["eye"], k=1),
        node("MatMul", ["scaled", "eye"], ["shifted"]),
        const("fa", [-3.5, 2.5, 7.0, -1.0, 0.5, 5.0], np.float32),
        const("fb", [2.0, -2.0, 3.0, 3.0, 0.25, 5.0], np.float32),
        node("Mod", ["fa", "fb"], ["fm"], fmod=1),  # [-1.5, 0.5, 1, -1, 0, 0]
        node("Add", ["shifted", "fm"], ["y"]),
    ]
    save(os.path.join(out, "size_eye.onnx"), nodes, [x, sq], ys[:1])
    nodes[-2] = node("Mod", ["fa", "fb"], ["fm"])  # fmod 0: not defined for floats
    save(os.path.join(out, "float_mod_python.onnx"), nodes, [x, sq], ys[:1])

    # A fold that fails names its node (it used to leave the output
    # undefined and blame the consumer).
    nodes = [
        const("n", [4, 5]),
        const("z", [2, 0]),
        node("Mod", ["n", "z"], ["r"]),
        node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        node("Mul", ["x", "rf"], ["y"]),
    ]
    save(os.path.join(out, "mod_by_zero.onnx"), nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])])


if __name__ == "__main__":
    main(sys.argv[1])
