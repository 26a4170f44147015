"""Writes OUTDIR/*.onnx for loop-unrolling.test: ONNX Loop and Scan nodes
whose trip count the bound shapes decide (unrolled), and the forms tidal
rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value, elem=I64):
    arr = np.array(value, dtype={I64: np.int64, BOOL: np.bool_, F: np.float32}[elem])
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))


def save(path, nodes, inputs, outputs, inits=(), opset=16):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def accumulate_body(cond_out=None, extra=()):
    """body(i, cond, acc) -> (cond, acc + x * i, relu(acc)): x and w are
    read from the enclosing graph."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F),
             helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
             helper.make_node("MatMul", ["acc", "w"], ["aw"]),
             helper.make_node("Relu", ["aw"], ["scan"])]
    nodes += list(extra)
    if cond_out is None:
        nodes.append(helper.make_node("Identity", ["cond"], ["cond_out"]))
    else:
        nodes += cond_out
    return helper.make_graph(nodes, "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F, None)],
                             [vi("cond_out", BOOL, []), vi("acc_out", F, None), vi("scan", F, None)])


def loop_model(path, trip=3, cond_out=None, extra=(), trip_from_data=False, cond_input=True):
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")
    nodes = [const("zero", np.zeros((2, 4)), F)]
    if trip_from_data:
        nodes += [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  helper.make_node("Cast", ["s"], ["trip"], to=I64)]
    elif trip is not None:
        nodes.append(const("trip", trip))
    nodes.append(const("true", True, BOOL))
    body = accumulate_body(cond_out, extra)
    nodes.append(helper.make_node("Loop", ["trip" if trip is not None or trip_from_data else "",
                                           "true" if cond_input else "", "zero"], ["acc_final", "scans"],
                                  name="loop", body=body))
    save(path, nodes, [vi("x", F, [2, 4])], [vi("acc_final", F, None), vi("scans", F, None)], [w])


def embedding_bag_like(path):
    """nn.EmbeddingBag(mode='sum') over fixed-size bags as PyTorch exports
    it: the offsets are shape computations, the body slices the indices."""
    weight = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "weight")
    offsets = numpy_helper.from_array(np.array([0, 2, 4, 6], dtype=np.int64), "offsets")
    body = helper.make_graph([
        helper.make_node("Gather", ["offsets", "i"], ["start"], axis=0),
        helper.make_node("Add", ["i", "one"], ["i1"]),
        helper.make_node("Gather", ["offsets", "i1"], ["end"], axis=0),
        helper.make_node("Unsqueeze", ["start", "axes"], ["start1"]),
        helper.make_node("Unsqueeze", ["end", "axes"], ["end1"]),
        helper.make_node("Slice", ["flat", "start1", "end1", "axes"], ["bag"]),
        helper.make_node("Gather", ["weight", "bag"], ["rows"], axis=0),
        helper.make_node("ReduceSum", ["rows", "axes"], ["summed"], keepdims=0),
        helper.make_node("Identity", ["cond"], ["cond_out"])],
        "bag", [vi("i", I64, []), vi("cond", BOOL, [])], [vi("cond_out", BOOL, []), vi("summed", F, None)])
    nodes = [const("one", 1), const("axes", [0]), const("flat_shape", [-1]),
             helper.make_node("Reshape", ["idx", "flat_shape"], ["flat"]),
             helper.make_node("Shape", ["idx"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["bags"], axis=0),
             const("zero", 0), const("true", True, BOOL),
             helper.make_node("Loop", ["bags", "true"], ["out"], name="bag_loop", body=body)]
    save(path, nodes, [vi("idx", I64, ["N", 2])], [vi("out", F, None)], [weight, offsets])


def embedding_bag_offsets(path, reduce="ReduceSum", extra_mul=False, reduce_axis=0):
    """nn.EmbeddingBag(idx, offsets) as PyTorch exports it: bounds =
    Concat(offsets, [P]), a Loop over the bags whose body slices idx between
    bounds[i] and bounds[i + 1] (data), gathers the rows and reduces them.
    With `extra_mul` the body scales the rows (per_sample_weights' shape),
    with `reduce_axis` 1 it sums each row instead: neither is the segment
    form."""
    weight = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "weight")
    body_nodes = [
        helper.make_node("Gather", ["bounds", "i"], ["start"], axis=0),
        helper.make_node("Gather", ["nexts", "i"], ["end"], axis=0),
        helper.make_node("Unsqueeze", ["start", "axes"], ["start1"]),
        helper.make_node("Unsqueeze", ["end", "axes"], ["end1"]),
        helper.make_node("Slice", ["idx", "start1", "end1", "axes"], ["bag"]),
        helper.make_node("Gather", ["weight", "bag"], ["rows"], axis=0)]
    rows = "rows"
    if extra_mul:
        body_nodes.append(helper.make_node("Mul", ["rows", "rows"], ["rows2"]))
        rows = "rows2"
    if reduce == "ReduceSum":
        body_nodes.append(helper.make_node("ReduceSum", [rows, "raxes"], ["pooled"], keepdims=0))
    else:
        body_nodes.append(helper.make_node(reduce, [rows], ["pooled"], axes=[0], keepdims=0))
    body_nodes.append(helper.make_node("Identity", ["cond"], ["cond_out"]))
    body = helper.make_graph(body_nodes, "bag", [vi("i", I64, []), vi("cond", BOOL, [])],
                             [vi("cond_out", BOOL, []), vi("pooled", F, None)])
    nodes = [const("axes", [0]), const("raxes", [reduce_axis]), const("true", True, BOOL), const("total", [8]),
             const("one", [1]),
             const("big", [1 << 40]), const("bags", 3),
             helper.make_node("Concat", ["offsets", "total"], ["bounds"], axis=0),
             helper.make_node("Slice", ["bounds", "one", "big", "axes"], ["nexts"]),
             helper.make_node("Loop", ["bags", "true"], ["out"], name="bag_loop", body=body)]
    save(path, nodes, [vi("idx", I64, [8]), vi("offsets", I64, [3])], [vi("out", F, None)], [weight])


def scan_model(path, reverse=False, in_axis=1, out_axis=0, second_length=None):
    """Scan over x [2, 3, 4] along `in_axis`: state s += x_t, out_t = s * 2
    (2: an initializer of the body)."""
    body = helper.make_graph([
        helper.make_node("Add", ["s", "x_t"], ["s_out"]),
        helper.make_node("Mul", ["s_out", "two"], ["y_t"])],
        "scan_body", [vi("s", F, None), vi("x_t", F, None)] + ([vi("z_t", F, None)] if second_length else []),
        [vi("s_out", F, None), vi("y_t", F, None)], [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    shapes = [2, 3, 4]
    nodes = [const("s0", np.zeros((2, 4)), F)]
    inputs = ["s0", "x"]
    graph_inputs = [vi("x", F, shapes)]
    if second_length:
        inputs.append("z")
        graph_inputs.append(vi("z", F, [2, second_length, 4]))
    attrs = dict(num_scan_inputs=len(inputs) - 1, scan_input_axes=[in_axis] * (len(inputs) - 1),
                 scan_output_axes=[out_axis])
    if reverse:
        attrs.update(scan_input_directions=[1] * (len(inputs) - 1), scan_output_directions=[1])
    nodes.append(helper.make_node("Scan", inputs, ["s_final", "ys"], name="scan", body=body, **attrs))
    save(path, nodes, graph_inputs, [vi("s_final", F, None), vi("ys", F, None)])


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    loop_model(p("loop.onnx"))
    # No trip count: runs while i < 4 (5 iterations, i = 0..4).
    loop_model(p("loop_cond.onnx"), trip=None,
               cond_out=[const("four", 4), helper.make_node("Less", ["i", "four"], ["cond_out"])])
    loop_model(p("loop_data_trip.onnx"), trip_from_data=True)
    loop_model(p("loop_data_cond.onnx"),
               cond_out=[helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
                         const("zf", 0.0, F), helper.make_node("Greater", ["total", "zf"], ["cond_out"])])
    loop_model(p("loop_zero.onnx"), trip=0)
    loop_model(p("loop_too_long.onnx"), trip=1 << 20)
    loop_model(p("loop_forever.onnx"), trip=None)
    loop_model(p("loop_bad_body.onnx"), extra=[helper.make_node("Unique", ["w"], ["d"], name="unique")])
    embedding_bag_like(p("embedding_bag.onnx"))
    embedding_bag_offsets(p("embedding_bag_offsets.onnx"))
    embedding_bag_offsets(p("embedding_bag_offsets_mean.onnx"), reduce="ReduceMean")
    embedding_bag_offsets(p("embedding_bag_offsets_weighted.onnx"), extra_mul=True)
    embedding_bag_offsets(p("embedding_bag_offsets_rowsum.onnx"), reduce_axis=1)
    scan_model(p("scan.onnx"))
    scan_model(p("scan_reverse.onnx"), reverse=True, in_axis=-2, out_axis=-1)
    scan_model(p("scan_lengths.onnx"), second_length=2)


if __name__ == "__main__":
    main(sys.argv[1])
