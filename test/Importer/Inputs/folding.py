"""Writes OUTDIR/*.onnx for shape-folding.test: masks computed from
constants with Mod, Equal, Not, And, Or and ScatterND (as Swin
Transformer's exported attention mask is), a Mod of a graph input, Size
and EyeLike of a graph input (they need only its type), float Mod, and the
reductions and rounding of shape arithmetic (ReduceProd of a shape, as
nn.EmbeddingBag's export counts elements; Relu(Ceil(a / b)), as ONNX's
Range function computes a trip count)."""
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

    # Mod of data: composed at run time (folded only on constants).
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

    # Shape arithmetic: x [N, 3, 4] -> ReduceProd(Shape) = 12 N elements,
    # ReduceSum / Max / Min over axis 0 of [[3, 4], [1, 7]] (keepdims 0 and
    # 1), Relu(Ceil(-3.5)) and Floor / Abs of [-2.5, 1.5]; each result times x's
    # flattened form (the max: x as pairs), so that the folds show as two
    # constants.
    x3 = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])
    nodes = [
        node("Shape", ["x"], ["shape"]),
        node("ReduceProd", ["shape"], ["count"], keepdims=1),
        const("m", [[3, 4], [1, 7]]),
        const("ax0", [0]),
        node("ReduceSum", ["m", "ax0"], ["msum"], keepdims=0),
        node("ReduceMax", ["m"], ["mmax"], axes=[0], keepdims=1),
        node("ReduceMin", ["m"], ["mmin"], axes=[-1], keepdims=0),
        const("neg", [-3.5, 2.2], np.float32),
        node("Ceil", ["neg"], ["ceiled"]),
        node("Relu", ["ceiled"], ["trips"]),
        const("halves", [-2.5, 1.5], np.float32),
        node("Floor", ["halves"], ["floored"]),
        node("Abs", ["halves"], ["absolute"]),
        node("Concat", ["count", "msum", "mmin"], ["ints"], axis=0),
        node("Cast", ["ints"], ["intsf"], to=TensorProto.FLOAT),
        node("Cast", ["mmax"], ["mmaxf"], to=TensorProto.FLOAT),
        const("one", [1.0], np.float32),
        node("Concat", ["intsf", "trips", "floored", "absolute", "one"], ["all"], axis=0),
        const("flat", [0, -1]),
        node("Reshape", ["x", "flat"], ["xf"]),
        node("Mul", ["xf", "all"], ["y1"]),
        const("pairs", [0, 6, 2]),
        node("Reshape", ["x", "pairs"], ["xp"]),
        node("Mul", ["xp", "mmaxf"], ["y2"]),
    ]
    save(os.path.join(out, "shape_arithmetic.onnx"), nodes, [x3],
         [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ("y1", "y2")])

    # Min, Max (variadic, broadcasting) and CumSum (plain; exclusive and
    # reversed) of integer constants, as torch.diagonal's export computes
    # its lengths: [2, 4], [5, 7], [3, 7, 8], [5, 1, 0], then the first part
    # of a Split ([1, 1]; torch.repeat_interleave's export splits its
    # repeats); the 12 values scale x's flattened form.
    nodes = [
        const("r0", [3, 4]), const("r1", [1, 7]), const("lim", [2, 5]), const("far", [5, 0]),
        const("seq", [3, 4, 1]), const("zero", 0),
        node("Min", ["r0", "lim"], ["mins"]),
        node("Max", ["r0", "r1", "far"], ["maxs"]),
        node("CumSum", ["seq", "zero"], ["sums"]),
        node("CumSum", ["seq", "zero"], ["rsums"], exclusive=1, reverse=1),
        const("one_one_five", [1, 1, 5]), const("sizes", [2, 1]),
        node("Split", ["one_one_five", "sizes"], ["ones", "five"], axis=0),
        node("Concat", ["mins", "maxs", "sums", "rsums", "ones"], ["ints"], axis=0),
        node("Cast", ["ints"], ["scale"], to=TensorProto.FLOAT),
        const("flat", [0, -1]),
        node("Reshape", ["x", "flat"], ["xf"]),
        node("Mul", ["xf", "scale"], ["y"]),
    ]
    save(os.path.join(out, "shape_scans.onnx"), nodes, [x3], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])

    # Float positions from a shape, as XLNet and Funnel compute them:
    # Range(float(T), float(-T), -1.0) for T = 3, then (p - 1) + 0.5 per
    # position: [2.5, 1.5, 0.5, -0.5, -1.5, -2.5], a constant scaling x.
    nodes = [
        node("Shape", ["x"], ["shape"]), const("one_idx", 1), node("Gather", ["shape", "one_idx"], ["t"], axis=0),
        const("two_i", 2), node("Div", ["t", "two_i"], ["half"]),
        node("Neg", ["half"], ["neg_half"]),
        node("Cast", ["half"], ["start"], to=TensorProto.FLOAT), node("Cast", ["neg_half"], ["limit"], to=TensorProto.FLOAT),
        const("step", -1.0, np.float32), node("Range", ["start", "limit", "step"], ["pos"]),
        const("f1", 1.0, np.float32), const("fhalf", 0.5, np.float32),
        node("Sub", ["pos", "f1"], ["pm1"]), node("Add", ["pm1", "fhalf"], ["shifted"]),
        node("Mul", ["x", "shifted"], ["y"]),
    ]
    save(os.path.join(out, "float_positions.onnx"), nodes, [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


if __name__ == "__main__":
    main(sys.argv[1])
