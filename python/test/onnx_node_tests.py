"""The ONNX backend node tests (libonnx-testdata) as tidal's tests see them.

Shared by test_node_import.py (does tidalc import each model, or reject it
cleanly?) and test_eval_node.py (does the reference evaluator reproduce each
model's expected outputs?): where the models live, which of them tidal's op
set covers, which need compile-time operands bound, and how to read a test's
data.
"""

import os

import onnx
from onnx import defs, numpy_helper

from tidal.ops import NODE_TEST_OPS, op_types

NODE_DIR = "/usr/share/libonnx-testdata/data/node"
MIN_OPSET = 13

# In-set models that tidalc rejects on purpose: {name: reason}. Keep short;
# every entry needs a reason a user would accept.
EXPECTED_UNSUPPORTED = {
    "test_identity_opt": "an optional-typed graph input; tidal handles tensors only",
    "test_identity_sequence": "a sequence-typed graph input; tidal handles tensors only",
    "test_maxpool_with_argmax_2d_precomputed_pads": "MaxPool's Indices output (PyTorch never exports it)",
    "test_maxpool_with_argmax_2d_precomputed_strides": "MaxPool's Indices output (PyTorch never exports it)",
    "test_max_float16": "float16 arithmetic: tidal's kernels compute float32 and float64",
    "test_min_float16": "float16 arithmetic: tidal's kernels compute float32 and float64",
    "test_mod_mixed_sign_float16": "float16 arithmetic: tidal's kernels compute float32 and float64",
    "test_gridsample_bicubic": "GridSample's bicubic mode (bilinear and nearest are supported)",
    "test_einsum_batch_diagonal": "Einsum with a repeated index in one operand (a diagonal): not an attention form",
    "test_resize_tf_crop_and_resize": "Resize with a region of interest (tf_crop_and_resize): PyTorch never exports it",
    "test_scatternd_multiply": "ScatterND with reduction 'mul' (none, add, max and min are supported; PyTorch's index_put_ exports none and add)",
    "test_lstm_with_peepholes": "LSTM peephole weights (input P): PyTorch's nn.LSTM has none and never exports them",
    "test_cast_FLOAT_to_STRING": "string tensors: tidal handles numeric tensors only",
    "test_cast_STRING_to_FLOAT": "string tensors: tidal handles numeric tensors only",
    "test_castlike_FLOAT_to_STRING": "string tensors: tidal handles numeric tensors only",
    "test_castlike_FLOAT_to_STRING_expanded": "string tensors: tidal handles numeric tensors only",
    "test_castlike_STRING_to_FLOAT": "string tensors: tidal handles numeric tensors only",
    "test_castlike_STRING_to_FLOAT_expanded": "string tensors: tidal handles numeric tensors only",
    "test_nonzero_example": ("NonZero's indices as a graph output, whose number depends on the data: tidal imports "
                             "NonZero as x[mask] that a reduction or loss sums away"),
}

# Operand positions whose values tidal must know at compile time.
COMPILE_TIME_OPERANDS = {
    "Reshape": (1,),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "ReduceSum": (1,),
    "ReduceMean": (1,),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "Dropout": (1, 2),
    "Clip": (1, 2),
    "Pad": (1, 2, 3),
    "Tile": (1,),
    "Trilu": (1,),
    "ReduceL1": (1,),
    "ReduceL2": (1,),
    "ReduceSumSquare": (1,),
    "ReduceMax": (1,),
    "ReduceMin": (1,),
    "ReduceProd": (1,),
    "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,),
    "Expand": (1,),
    "ConstantOfShape": (0,),
    "Range": (0, 1, 2),
    "Resize": (1, 2, 3),
    "CumSum": (1,),
    "TopK": (1,),
    "OneHot": (1, 2),
    "Loop": (0, 1),
    "AffineGrid": (1,),
    "DFT": (1, 2),
    "STFT": (1, 2, 3),
    "HannWindow": (0,),
    "HammingWindow": (0,),
    "BlackmanWindow": (0,),
    "MelWeightMatrix": (0, 1, 2, 3, 4),
    "Col2Im": (1, 2),
}


def default_opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return max(versions) if versions else 0


def changed_since_min_opset(model, ops):
    """Ops (default domain) whose definition at the model's opset differs
    from their definition at MIN_OPSET."""
    opset = default_opset(model)
    if opset == 0 or opset >= MIN_OPSET:  # 0: no ai.onnx import at all
        return []
    changed = []
    for op in sorted(ops):
        try:
            old = defs.get_schema(op, opset).since_version
            new = defs.get_schema(op, MIN_OPSET).since_version
        except Exception:  # SchemaError: not an ai.onnx op (Adam, ...)
            continue
        if old != new:
            changed.append(op)
    return changed


def runtime_operands(model):
    """'Op.input[i]' entries whose value is needed at compile time but only
    flows from graph inputs (not initializers/Constants/Shape)."""
    graph = model.graph
    known = {i.name for i in graph.initializer}
    for node in graph.node:  # nodes are topologically sorted in these models
        if node.op_type in ("Constant", "Shape") or (
            node.input and all((not x) or x in known for x in node.input)
        ):
            known.update(node.output)
    found = []
    for node in graph.node:
        for pos in COMPILE_TIME_OPERANDS.get(node.op_type, ()):
            if pos < len(node.input) and node.input[pos] and node.input[pos] not in known:
                found.append(f"{node.op_type}.input[{pos}]")
    return found


def untyped_inputs(model):
    """Quoted names of graph inputs that no tensor compiler can take:
    sequences, optionals, maps and string tensors."""
    names = []
    for vi in model.graph.input:
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or tt.elem_type == onnx.TensorProto.STRING:
            names.append(f"'{vi.name}'")
    return names


def non_tensor_io(model):
    """Graph inputs and outputs typed as sequences, optionals or maps
    ("input 'x'", ...): a tidal step takes and returns tensors."""
    found = [f"input '{vi.name}'" for vi in model.graph.input if not vi.type.HasField("tensor_type")]
    found += [f"output '{vi.name}'" for vi in model.graph.output
              if vi.type.WhichOneof("value") not in (None, "tensor_type")]
    return found


def classify(name, model):
    """(category, detail) for one node-test model. For "out_of_set", detail
    lists what the error may name: an unsupported op type, or another defect
    the importer may meet first (an old opset, a non-tensor or string input)."""
    ops = op_types(model.graph)
    outside = sorted(ops - NODE_TEST_OPS)
    if outside:
        other = untyped_inputs(model)
        if changed_since_min_opset(model, ops):
            other.append("opset")
        return "out_of_set", outside + other
    changed = changed_since_min_opset(model, ops)
    if changed:
        return "old_opset", changed
    if name in EXPECTED_UNSUPPORTED:
        return "expected_unsupported", EXPECTED_UNSUPPORTED[name]
    io = non_tensor_io(model)
    if io:
        return "expected_unsupported", (f"graph {', '.join(io)} not a tensor: a tidal step takes and returns tensors"
                                        " (sequences inside the graph are lists at import)")
    runtime = runtime_operands(model)
    if runtime:
        return "runtime_operand", runtime
    if name in EXPECTED_UNSUPPORTED:
        return "expected_unsupported", EXPECTED_UNSUPPORTED[name]
    return "in_set", []


FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
               onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)


def bind_runtime_operands(path, out_path):
    """Writes a copy of the model at `path` whose integer and scalar graph
    inputs (shapes, axes, starts, split sizes, dropout ratio), and the float
    ones read at compile time (Resize's scales), are initializers holding
    the values of the test's own test_data_set_0, as a user would bind
    them. Returns the bound input names."""
    model = onnx.load(path)
    data_dir = os.path.join(os.path.dirname(path), "test_data_set_0")
    compile_time = {node.input[pos] for node in model.graph.node
                    for pos in COMPILE_TIME_OPERANDS.get(node.op_type, ()) if pos < len(node.input)}
    bound = []
    for k, vi in enumerate(model.graph.input):
        tt = vi.type.tensor_type
        if tt.elem_type in FLOAT_TYPES and len(tt.shape.dim) > 0 and vi.name not in compile_time:
            continue
        pb = os.path.join(data_dir, f"input_{k}.pb")
        if not os.path.isfile(pb):
            continue
        tensor = read_tensor(pb)
        tensor.name = vi.name
        model.graph.initializer.append(tensor)
        bound.append(vi.name)
    onnx.save(model, out_path)
    return bound


def read_tensor(pb_path):
    """The onnx.TensorProto stored at `pb_path`."""
    tensor = onnx.TensorProto()
    with open(pb_path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def test_data(model_path, data_set=0):
    """({input name: array}, [(output name, array)]) of a node test's
    test_data_set_N, inputs named as the graph's inputs, outputs in the
    graph's output order."""
    model = onnx.load(model_path)
    data_dir = os.path.join(os.path.dirname(model_path), f"test_data_set_{data_set}")
    inputs = {}
    for k, vi in enumerate(model.graph.input):
        pb = os.path.join(data_dir, f"input_{k}.pb")
        if os.path.isfile(pb):
            inputs[vi.name] = numpy_helper.to_array(read_tensor(pb))
    outputs = []
    for k, vi in enumerate(model.graph.output):
        pb = os.path.join(data_dir, f"output_{k}.pb")
        if os.path.isfile(pb):
            outputs.append((vi.name, numpy_helper.to_array(read_tensor(pb))))
    return inputs, outputs


def load_case(name, bind, work):
    """(model path, model, inputs, outputs) of node test `name`: its own
    model, or with `bind` a copy in directory `work` whose compile-time
    operands are bound (bind_runtime_operands); inputs and outputs as
    test_data gives them."""
    path = os.path.join(NODE_DIR, name, "model.onnx")
    inputs, outputs = test_data(path)
    if bind:
        bound = os.path.join(work, "model.onnx")
        bind_runtime_operands(path, bound)
        path = bound
    return path, onnx.load(path), inputs, outputs
