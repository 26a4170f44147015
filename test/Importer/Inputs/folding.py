"""Writes OUTDIR/*.onnx for shape-folding.test: masks computed from
constants with Mod, Equal, Not, And, Or and ScatterND (as Swin
Transformer's exported attention mask is), and a Mod of a graph input."""
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


if __name__ == "__main__":
    main(sys.argv[1])
