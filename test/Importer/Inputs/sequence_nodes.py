"""Writes OUTDIR/*.onnx for sequences.test: ONNX sequence operators as
torch.jit.script exports use them (unbind as SplitToSequence with split 1
and keepdims 0, a list built in a Loop, torch.split by a computed size),
the other sequence operators, SequenceMap, and the forms tidal rejects."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name):
    return helper.make_tensor_sequence_value_info(name, F, None)


def const(name, value, elem=I64):
    arr = np.array(value, dtype={I64: np.int64, BOOL: np.bool_, F: np.float32}[elem])
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))


def save(path, nodes, outputs, inputs=None, opset=17):
    inputs = inputs or [vi("x", F, ["N", 4, 3])]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def unbind_loop(path):
    """outs = [relu(t) for t in x.unbind(1)]; stack(outs, 1): a Loop whose
    state is a sequence (SequenceAt by the iteration number, SequenceInsert)."""
    body = helper.make_graph([
        helper.make_node("SequenceAt", ["parts", "i"], ["t"]),
        helper.make_node("Relu", ["t"], ["r"]),
        helper.make_node("SequenceInsert", ["acc", "r"], ["acc_out"]),
        helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", BOOL, []), seq_vi("acc")],
        [vi("cond_out", BOOL, []), seq_vi("acc_out")])
    nodes = [const("true", True, BOOL), const("one", 1),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("SplitToSequence", ["x", "one"], ["parts"], axis=1, keepdims=0),
             helper.make_node("SequenceLength", ["parts"], ["n"]),
             helper.make_node("Loop", ["n", "true", "empty"], ["outs"], name="loop", body=body),
             helper.make_node("ConcatFromSequence", ["outs"], ["y"], axis=1, new_axis=1)]
    save(path, nodes, [vi("y", F, None)])


def list_ops(path):
    """SequenceConstruct, Insert (front), Erase (-1), At (-1), Length as a
    constant, SplitToSequence by sizes [1, 3] (keepdims ignored), Identity
    of a sequence, ConcatFromSequence along an existing axis."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
             helper.make_node("Exp", ["x"], ["c"]),
             helper.make_node("SequenceConstruct", ["a", "b"], ["s0"]),
             const("zero", 0), const("minus1", -1),
             helper.make_node("SequenceInsert", ["s0", "c", "zero"], ["s1"]),     # [c, a, b]
             helper.make_node("SequenceErase", ["s1", "minus1"], ["s2"]),         # [c, a]
             helper.make_node("Identity", ["s2"], ["s3"]),
             helper.make_node("SequenceAt", ["s3", "minus1"], ["last"]),          # a
             helper.make_node("SequenceLength", ["s3"], ["len"]),
             helper.make_node("Cast", ["len"], ["lenf"], to=F),
             helper.make_node("Mul", ["last", "lenf"], ["y1"]),
             const("sizes", [1, 3]),
             helper.make_node("SplitToSequence", ["x", "sizes"], ["pieces"], axis=1, keepdims=0),
             helper.make_node("ConcatFromSequence", ["pieces"], ["y2"], axis=-2),
             helper.make_node("ConcatFromSequence", ["s3"], ["y3"], axis=0)]
    save(path, nodes, [vi("y1", F, None), vi("y2", F, None), vi("y3", F, None)])


def sequence_map(path):
    """SequenceMap over the chunks of x (split 2 along axis 1) with a tensor
    beside: each chunk times w."""
    body = helper.make_graph([helper.make_node("Mul", ["chunk", "scale"], ["scaled"])], "map",
                             [vi("chunk", F, None), vi("scale", F, None)], [vi("scaled", F, None)])
    nodes = [const("two", 2), const("w", [[1.0, 2.0, 3.0]], F),
             helper.make_node("SplitToSequence", ["x", "two"], ["chunks"], axis=1),
             helper.make_node("SequenceMap", ["chunks", "w"], ["mapped"], name="map", body=body),
             helper.make_node("ConcatFromSequence", ["mapped"], ["y"], axis=1)]
    save(path, nodes, [vi("y", F, None)])


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    unbind_loop(p("unbind_loop.onnx"))
    list_ops(p("list_ops.onnx"))
    sequence_map(p("sequence_map.onnx"))
    # A constant split to a sequence: its elements stay constants, so one
    # can be a shape (torch 1.13's repeat_interleave loops over its split
    # repeats): x [N, 4, 3] reshaped to [N, 3, 4] by element 1 of
    # [[0, 4, 3], [0, 3, 4]].
    nodes = [helper.make_node("Constant", [], ["shapes"], value=helper.make_tensor(
                 "shapes", I64, [2, 3], [0, 4, 3, 0, 3, 4])),
             helper.make_node("SplitToSequence", ["shapes"], ["s"], axis=0, keepdims=0), const("one", 1),
             helper.make_node("SequenceAt", ["s", "one"], ["shape"]),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    save(p("constant_sequence.onnx"), nodes, [vi("y", F, None)])
    # Rejected: a position from data, a sequence as graph output, a position
    # past the end, a sequence where a tensor is expected, keepdims 0 with
    # pieces of 2.
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
             helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Cast", ["total"], ["pos"], to=I64),
             helper.make_node("SequenceAt", ["s", "pos"], ["y"], name="at_data")]
    save(p("position_from_data.onnx"), nodes, [vi("y", F, None)])
    save(p("sequence_output.onnx"), [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1)], [seq_vi("s")])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1), const("nine", 9),
             helper.make_node("SequenceAt", ["s", "nine"], ["y"], name="at_nine")]
    save(p("position_past_end.onnx"), nodes, [vi("y", F, None)])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
             helper.make_node("Relu", ["s"], ["y"], name="relu_of_sequence")]
    save(p("sequence_as_tensor.onnx"), nodes, [vi("y", F, None)])
    nodes = [const("two", 2), helper.make_node("SplitToSequence", ["x", "two"], ["s"], name="split2", axis=1,
                                                keepdims=0),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)]
    save(p("keepdims_pieces.onnx"), nodes, [vi("y", F, None)])


if __name__ == "__main__":
    main(sys.argv[1])
