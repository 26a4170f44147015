"""Writes OUTDIR/*.onnx: nodes that break their operator's ONNX schema
(too few or too many inputs or outputs, a required input left empty, an
attribute of the wrong type, an unknown or missing attribute), for
schema-errors.test. Each must be one error line, never a crash."""
import os
import sys

from onnx import TensorProto, helper


def save(path, node, inputs=("x",), opset=17):
    vis = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in inputs]
    graph = helper.make_graph([node], "schema_errors", vis,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    n = helper.make_node
    # One too few inputs, for every operator whose converter reads a second
    # input unconditionally (the Reshape and Slice forms crashed tidalc).
    for op in ["Reshape", "Slice", "Expand", "Tile", "Gather", "Conv", "Gemm", "MatMul",
               "Add", "Where", "Pad", "Unsqueeze", "Resize", "GatherElements",
               "ScatterElements", "Einsum", "CumSum", "Range", "ConstantOfShape",
               "LayerNormalization", "BatchNormalization", "LSTM", "GRU", "RNN"]:
        save(f"{out}/few_{op}.onnx", n(op, ["x"] if op not in ("Einsum", "Range", "ConstantOfShape") else [], ["y"], name="n"))
    save(f"{out}/many_relu.onnx", n("Relu", ["x", "x"], ["y"], name="n"))
    save(f"{out}/no_output.onnx", n("Relu", ["x"], [], name="n"))
    save(f"{out}/many_outputs.onnx", n("Relu", ["x"], ["y", "z"], name="n"))
    save(f"{out}/empty_required.onnx", n("Add", ["x", ""], ["y"], name="n"))
    save(f"{out}/perm_float.onnx", n("Transpose", ["x"], ["y"], name="n", perm=1.0))
    save(f"{out}/axis_string.onnx", n("Softmax", ["x"], ["y"], name="n", axis="one"))
    save(f"{out}/unknown_attr.onnx", n("Relu", ["x"], ["y"], name="n", alpha=0.5))
    save(f"{out}/twice.onnx", n("Softmax", ["x"], ["y"], name="n", axis=1), opset=17)
    with open(f"{out}/twice.onnx", "rb") as f:
        import onnx
        m = onnx.load_from_string(f.read())
    m.graph.node[0].attribute.append(helper.make_attribute("axis", 0))
    onnx.save(m, f"{out}/twice.onnx")
    save(f"{out}/missing_attr.onnx", n("Cast", ["x"], ["y"], name="n"))


if __name__ == "__main__":
    main(sys.argv[1])
