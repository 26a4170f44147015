#!/usr/bin/python3
"""Write the ONNX files that tidal's lit and Python tests read.

    /usr/bin/python3 python/tools/gen_test_models.py OUTDIR   (PYTHONPATH=python)
    /usr/bin/python3 python/tools/gen_test_models.py --list

The build runs this (target `tidal-test-models`) into build/test/Models, so no
binary model is checked in. Every file is deterministic: fixed seeds, and a
file whose bytes would not change is not rewritten (its timestamp stays).

Well-formed models (all with a symbolic batch "N" on dim 0):
  mlp.onnx               zoo `mlp`, opset 13: Gemm/Relu digits classifier
  lenet.onnx             zoo `lenet`, opset 13: Conv/MaxPool/Flatten/Gemm
  vgg_bn13.onnx          zoo `vgg_bn`, opset 13: 5-output BatchNormalization
                         (the opset-9 training form, no training_mode)
  vgg_bn15.onnx          zoo `vgg_bn`, opset 15: 3-output BatchNormalization,
                         training_mode=1
  resnet20.onnx          zoo `resnet20`, opset 13: residual Adds, GlobalAveragePool
  transformer13.onnx     zoo `transformer_block`, opset 13: LayerNorm decomposed
                         (ReduceMean/Sub/Pow/Sqrt/Div), Shape->Gather->Unsqueeze
                         ->Concat->Reshape subgraphs, erf GELU
  transformer17.onnx     the same at opset 17: LayerNormalization
  mlp_with_loss.onnx     zoo `mlp_with_loss`, opset 13: inputs (input, target),
                         outputs (loss = SoftmaxCrossEntropyLoss, output)
  shape_subgraph.onnx    hand-made: x[N,4,6] -> Shape -> Gather(0) -> Unsqueeze
                         -> Concat([24]) -> Reshape, i.e. y = x.reshape(N, 24)

Malformed models; each must make `tidalc FILE --emit mlir --batch-size 8`
exit 1 with one stderr line `FILE: error: ...` (apart from its defect each is
well-formed and has a symbolic batch, so the defect is what gets reported):
  truncated.onnx         mlp.onnx's bytes cut in half (does not parse)
  garbage.onnx           4 KiB of random bytes (does not parse)
  empty.onnx             0 bytes (parses as an empty ModelProto: no graph)
  unsupported_op.onnx    Relu -> Unique (node "unique0") -> Relu
  opset23.onnx           a valid Relu model that imports opset 23 (past 22)
  opset11_unsqueeze.onnx opset 11, Unsqueeze-11 with the `axes` attribute
  dangling_edge.onnx     Add node "add0" reads "ghost", which nothing produces
  unresolved_shape.onnx  Reshape "reshape0" whose shape is a graph input
  symbolic_dim.onnx      input x["N", "seq"]: a symbolic non-batch dimension
  no_graph_output.onnx   a graph that declares no outputs
  cycle.onnx             two nodes feeding each other ("add0" <-> "relu0")
  bad_attr.onnx          Conv "conv0" with kernel_shape [5,5] but a 3x3 weight

Models with a standard ONNX training_info (SPEC section 1, docs/training-info.md),
all a hand-made MLP x[N,4] -> Gemm(W1,B1) -> Relu -> Gemm(W2,B2) -> y[N,3]
(opset 13 plus ai.onnx.preview.training 1) whose algorithm graph computes a
loss, differentiates it with Gradient and updates W1, B1, W2, B2 with an
ai.onnx.preview.training optimizer whose state (V/H buffers, the iteration
count T) lives in the algorithm's initializers, T += 1 each step:
  ti_momentum.onnx       SoftmaxCrossEntropyLoss(y, label[N]) in the algorithm;
                         one 4-tensor Momentum (standard)
  ti_nesterov.onnx       mean squared error (Sub/Mul/ReduceMean against
                         target[N,3]); one Momentum per tensor, nesterov; R, T
                         and the buffers are initializers of the inference graph
  ti_adam.onnx           mean squared error; one 4-tensor Adam
  ti_adagrad.onnx        the inference graph outputs the loss itself (loss, y);
                         the algorithm holds only Gradient and a 4-tensor Adagrad

Malformed training_info models (the checker accepts them all; it ignores
training_info), each ti_momentum.onnx with one defect:
  ti_two_entries.onnx    two training_info entries
  ti_initialization.onnx a non-empty initialization graph and binding
  ti_unknown_op.onnx     algorithm node "unique_alg" is Unique
  ti_unknown_domain.onnx algorithm node "custom0" in domain com.example
  ti_no_gradient.onnx    the Gradient node removed (the bindings of its
                         outputs kept out)
  ti_y_not_scalar.onnx   Gradient "grad0" differentiates y [N,3]
  ti_y_not_computed.onnx Gradient "grad0" differentiates "nowhere"
  ti_xs_intermediate.onnx Gradient "grad0" xs names "h", a Relu output
  ti_key_not_initializer.onnx update_binding key "h"
  ti_value_not_produced.onnx update_binding W1 <- "ghost"
  ti_binding_type.onnx   update_binding W1 <- W2_new (4x8 vs 8x3)
  ti_duplicate_key.onnx  update_binding names W1 twice
  ti_momentum_no_mode.onnx Momentum "opt0" without its mode attribute
  ti_momentum_count.onnx Momentum "opt0" missing one V input
  ti_no_training_opset.onnx the ai.onnx.preview.training opset not imported
  ti_gradient_inputs.onnx Gradient "grad0" fed other tensors than its xs
  ti_gradient_in_graph.onnx a Gradient "grad_inf" in the inference graph

`MODELS` below is the machine-readable form of this list; the Python tests
import it (`expect` holds substrings the error line must contain; each entry
is a tuple of alternatives, one of which must appear).
"""

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Optional, Tuple

SEED = 1234
IR_VERSION = 8  # onnx 1.12's newest; opsets 13-17 all fit in it


@dataclass(frozen=True)
class TestModel:
    kind: str  # "valid" or "malformed"
    doc: str
    # zoo models: (zoo name, opset); hand-made ones: a builder name.
    zoo: Optional[Tuple[str, int]] = None
    builder: Optional[str] = None
    # malformed only: alternatives that the one error line must contain.
    expect: Tuple[Tuple[str, ...], ...] = field(default_factory=tuple)


MODELS = {
    "mlp.onnx": TestModel("valid", "digits MLP", zoo=("mlp", 13)),
    "lenet.onnx": TestModel("valid", "LeNet-5", zoo=("lenet", 13)),
    "vgg_bn13.onnx": TestModel("valid", "VGG+BN, 5-output BatchNormalization", zoo=("vgg_bn", 13)),
    "vgg_bn15.onnx": TestModel("valid", "VGG+BN, training_mode=1", zoo=("vgg_bn", 15)),
    "resnet20.onnx": TestModel("valid", "CIFAR ResNet-20", zoo=("resnet20", 13)),
    "transformer13.onnx": TestModel("valid", "encoder block, decomposed LayerNorm", zoo=("transformer_block", 13)),
    "transformer17.onnx": TestModel("valid", "encoder block, LayerNormalization", zoo=("transformer_block", 17)),
    "mlp_with_loss.onnx": TestModel("valid", "MLP with its cross-entropy loss", zoo=("mlp_with_loss", 13)),
    "shape_subgraph.onnx": TestModel("valid", "reshape to [N, 24] computed from Shape", builder="shape_subgraph"),
    "truncated.onnx": TestModel("malformed", "mlp.onnx cut in half", builder="truncated"),
    "garbage.onnx": TestModel("malformed", "random bytes", builder="garbage"),
    "empty.onnx": TestModel("malformed", "0 bytes", builder="empty"),
    "unsupported_op.onnx": TestModel(
        "malformed", "Unique between Relus", builder="unsupported_op", expect=(("Unique",), ("unique0",))
    ),
    "opset23.onnx": TestModel("malformed", "opset 23", builder="opset23", expect=(("23",),)),
    "opset11_unsqueeze.onnx": TestModel(
        "malformed", "Unsqueeze-11 with an axes attribute", builder="opset11_unsqueeze", expect=(("11",), ("Unsqueeze",))
    ),
    "dangling_edge.onnx": TestModel(
        "malformed", "input 'ghost' has no producer", builder="dangling_edge", expect=(("add0", "ghost"),)
    ),
    "unresolved_shape.onnx": TestModel(
        "malformed", "Reshape shape from a graph input", builder="unresolved_shape", expect=(("reshape0", "shape"),)
    ),
    "symbolic_dim.onnx": TestModel("malformed", "symbolic non-batch dim", builder="symbolic_dim", expect=(("seq",),)),
    "no_graph_output.onnx": TestModel("malformed", "graph with no outputs", builder="no_graph_output"),
    "cycle.onnx": TestModel("malformed", "a cycle add0 <-> relu0", builder="cycle", expect=(("cycle",),)),
    "bad_attr.onnx": TestModel(
        "malformed", "Conv kernel_shape disagrees with its weight", builder="bad_attr", expect=(("conv0",),)
    ),
    "ti_momentum.onnx": TestModel("valid", "training_info: cross-entropy, 4-tensor Momentum", builder="ti_momentum"),
    "ti_nesterov.onnx": TestModel("valid", "training_info: MSE, per-tensor Nesterov Momentum", builder="ti_nesterov"),
    "ti_adam.onnx": TestModel("valid", "training_info: MSE, Adam", builder="ti_adam"),
    "ti_adagrad.onnx": TestModel("valid", "training_info: loss output, Adagrad", builder="ti_adagrad"),
    "ti_two_entries.onnx": TestModel(
        "malformed", "two training_info entries", builder="ti_two_entries", expect=(("2 training_info",),)
    ),
    "ti_initialization.onnx": TestModel(
        "malformed", "an initialization graph", builder="ti_initialization", expect=(("initialization",),)
    ),
    "ti_unknown_op.onnx": TestModel(
        "malformed", "Unique in the algorithm", builder="ti_unknown_op", expect=(("unique_alg",), ("Unique",))
    ),
    "ti_unknown_domain.onnx": TestModel(
        "malformed", "a com.example op in the algorithm", builder="ti_unknown_domain", expect=(("custom0",), ("com.example",))
    ),
    "ti_no_gradient.onnx": TestModel(
        "malformed", "an algorithm without Gradient", builder="ti_no_gradient", expect=(("no Gradient",),)
    ),
    "ti_y_not_scalar.onnx": TestModel(
        "malformed", "Gradient of a non-scalar", builder="ti_y_not_scalar", expect=(("grad0",), ("scalar",))
    ),
    "ti_y_not_computed.onnx": TestModel(
        "malformed", "Gradient of an unknown tensor", builder="ti_y_not_computed", expect=(("grad0",), ("nowhere",))
    ),
    "ti_xs_intermediate.onnx": TestModel(
        "malformed", "Gradient xs names an intermediate", builder="ti_xs_intermediate", expect=(("grad0",), ("'h'",))
    ),
    "ti_key_not_initializer.onnx": TestModel(
        "malformed", "update_binding key is not an initializer", builder="ti_key_not_initializer", expect=(("'h'",), ("initializer",))
    ),
    "ti_value_not_produced.onnx": TestModel(
        "malformed", "update_binding value is not computed", builder="ti_value_not_produced", expect=(("ghost",),)
    ),
    "ti_binding_type.onnx": TestModel(
        "malformed", "update_binding type mismatch", builder="ti_binding_type", expect=(("W1",), ("W2_new",), ("type",))
    ),
    "ti_duplicate_key.onnx": TestModel(
        "malformed", "update_binding names a key twice", builder="ti_duplicate_key", expect=(("W1",), ("twice",))
    ),
    "ti_momentum_no_mode.onnx": TestModel(
        "malformed", "Momentum without mode", builder="ti_momentum_no_mode", expect=(("opt0",), ("mode",))
    ),
    "ti_momentum_count.onnx": TestModel(
        "malformed", "Momentum with a missing input", builder="ti_momentum_count", expect=(("opt0",), ("inputs",))
    ),
    "ti_no_training_opset.onnx": TestModel(
        "malformed", "training domain not imported", builder="ti_no_training_opset", expect=(("ai.onnx.preview.training",),)
    ),
    "ti_gradient_inputs.onnx": TestModel(
        "malformed", "Gradient inputs are not its xs", builder="ti_gradient_inputs", expect=(("grad0",), ("xs",))
    ),
    "ti_gradient_in_graph.onnx": TestModel(
        "malformed", "Gradient outside the algorithm", builder="ti_gradient_in_graph", expect=(("grad_inf",), ("algorithm",))
    ),
}


def valid_models():
    return [name for name, m in MODELS.items() if m.kind == "valid"]


def malformed_models():
    return [name for name, m in MODELS.items() if m.kind == "malformed"]


# --- hand-made models -------------------------------------------------------
# onnx/numpy are imported lazily so that `--list` stays fast.


def _h():
    from onnx import TensorProto, helper

    return helper, TensorProto


def _model(nodes, inputs, outputs, initializers=(), opset=13, name="tidal_test"):
    helper, _ = _h()
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(
        graph, producer_name="tidal.gen_test_models", opset_imports=[helper.make_opsetid("", opset)]
    )
    model.ir_version = IR_VERSION
    return model


def _float(name, shape):
    helper, TensorProto = _h()
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _int64_const(node_name, out, values, scalar=False):
    import numpy as np
    from onnx import numpy_helper

    helper, _ = _h()
    array = np.array(values[0] if scalar else values, dtype=np.int64)
    return helper.make_node("Constant", [], [out], name=node_name, value=numpy_helper.from_array(array, out))


def _relu_model(opset):
    helper, _ = _h()
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return _model(nodes, [_float("x", ["N", 4])], [_float("y", ["N", 4])], opset=opset)


def build_shape_subgraph():
    helper, _ = _h()
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape0"),
        _int64_const("const_idx", "idx0", [0], scalar=True),
        helper.make_node("Gather", ["x_shape", "idx0"], ["batch"], name="gather0", axis=0),
        _int64_const("const_axes", "axes0", [0]),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="unsqueeze0"),
        _int64_const("const_rest", "rest", [24]),
        helper.make_node("Concat", ["batch1", "rest"], ["new_shape"], name="concat0", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["y"], name="reshape0"),
    ]
    return _model(nodes, [_float("x", ["N", 4, 6])], [_float("y", ["N", 24])])


def build_unsupported_op():
    helper, _ = _h()
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu0"),
        helper.make_node("Unique", ["a"], ["b"], name="unique0"),
        helper.make_node("Relu", ["b"], ["y"], name="relu1"),
    ]
    return _model(nodes, [_float("x", ["N", 10])], [_float("y", ["N", 10])])


def build_opset23():
    return _relu_model(23)


def build_opset11_unsqueeze():
    helper, _ = _h()
    nodes = [helper.make_node("Unsqueeze", ["x"], ["y"], name="unsqueeze0", axes=[1])]
    model = _model(nodes, [_float("x", ["N", 4])], [_float("y", ["N", 1, 4])], opset=11)
    model.ir_version = 6
    return model


def build_dangling_edge():
    helper, _ = _h()
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu0"),
        helper.make_node("Add", ["a", "ghost"], ["y"], name="add0"),
    ]
    return _model(nodes, [_float("x", ["N", 4])], [_float("y", ["N", 4])])


def build_unresolved_shape():
    helper, TensorProto = _h()
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape0")]
    inputs = [_float("x", ["N", 4, 6]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])]
    return _model(nodes, inputs, [_float("y", ["N", 24])])


def build_symbolic_dim():
    helper, _ = _h()
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return _model(nodes, [_float("x", ["N", "seq"])], [_float("y", ["N", "seq"])])


def build_no_graph_output():
    helper, _ = _h()
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    return _model(nodes, [_float("x", ["N", 4])], [])


def build_cycle():
    helper, _ = _h()
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="add0"),
        helper.make_node("Relu", ["a"], ["b"], name="relu0"),
    ]
    return _model(nodes, [_float("x", ["N", 4])], [_float("b", ["N", 4])])


def build_bad_attr():
    import numpy as np
    from onnx import numpy_helper

    helper, _ = _h()
    weight = np.random.RandomState(SEED).standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node(
            "Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[5, 5], pads=[1, 1, 1, 1], strides=[1, 1]
        )
    ]
    return _model(
        nodes,
        [_float("x", ["N", 3, 8, 8])],
        [_float("y", ["N", 4, 8, 8])],
        initializers=[numpy_helper.from_array(weight, "w")],
    )


def _does_not_parse(data: bytes) -> bool:
    import onnx

    try:
        onnx.load_from_string(data)
    except Exception:  # protobuf's DecodeError, whatever module it lives in
        return True
    return False


def build_truncated(zoo_bytes):
    data = zoo_bytes["mlp.onnx"]
    cut = len(data) // 2
    # Cutting inside a field makes the protobuf fail to parse; step back a
    # byte at a time in the unlikely case the cut lands on a field boundary.
    while cut > 0 and not _does_not_parse(data[:cut]):
        cut -= 1
    return data[:cut]


def build_garbage(_zoo_bytes):
    import numpy as np

    rng = np.random.RandomState(SEED)
    while True:
        data = rng.bytes(4096)
        if _does_not_parse(data):
            return data


def build_empty(_zoo_bytes):
    return b""


RAW_BUILDERS = {"truncated": build_truncated, "garbage": build_garbage, "empty": build_empty}
# Hand-made models that onnx.checker must accept (the defect is one that only
# a compiler notices). The others are meant to fail the checker too.
CHECKER_CLEAN = {"shape_subgraph", "unsupported_op", "opset11_unsqueeze", "unresolved_shape", "symbolic_dim", "bad_attr"}
# onnx 1.12's checker ignores training_info, so every training_info model
# passes it, however broken its algorithm.
CHECKER_CLEAN |= {spec.builder for spec in MODELS.values() if spec.builder and spec.builder.startswith("ti_")}


def _builder(name):
    """build_<name>: the hand-made models here, the training_info ones in
    training_info_models.py."""
    if name.startswith("ti_"):
        import training_info_models

        return getattr(training_info_models, "build_" + name)
    return globals()["build_" + name]


def generate(outdir: str, verbose: bool = False) -> None:
    import onnx

    from tidal import export

    os.makedirs(outdir, exist_ok=True)
    produced = {}
    for name, spec in MODELS.items():
        if spec.zoo:
            zoo_name, opset = spec.zoo
            produced[name] = export.export_model(zoo_name, opset=opset).SerializeToString()
    for name, spec in MODELS.items():
        if spec.zoo:
            continue
        if spec.builder in RAW_BUILDERS:
            produced[name] = RAW_BUILDERS[spec.builder](produced)
            continue
        model = _builder(spec.builder)()
        if spec.builder in CHECKER_CLEAN:
            onnx.checker.check_model(model)
        produced[name] = model.SerializeToString()
    for name, data in produced.items():
        _write_if_changed(os.path.join(outdir, name), data)
        if verbose:
            print(f"{name}: {len(data)} bytes")


def _write_if_changed(path: str, data: bytes) -> None:
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write tidal's test ONNX models.")
    parser.add_argument("outdir", nargs="?", help="output directory")
    parser.add_argument("--list", action="store_true", help="print the file names, one per line, and exit")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.outdir:
        parser.error("OUTDIR is required")
    generate(args.outdir, verbose=args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
