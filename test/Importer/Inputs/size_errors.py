"""Writes OUTDIR/*.onnx: models whose tensors no machine can hold, for
size-errors.test."""
import os
import sys

from onnx import TensorProto, helper


def save(path, nodes, shape):
    graph = helper.make_graph(nodes, "size_errors", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    # 2^40 x 2^40 floats: the byte count passes 64 bits.
    save(f"{out}/huge_input.onnx", [helper.make_node("Relu", ["x"], ["y"])], [2**40, 2**40])
    # Each input fits; the product of an outer broadcast does not.
    save(f"{out}/huge_result.onnx", [helper.make_node("Unsqueeze", ["x", "axes"], ["u"]),
                                     helper.make_node("Add", ["u", "x"], ["y"], name="outer")], [2**26])
    m = open(f"{out}/huge_result.onnx", "rb").read()
    import onnx
    model = onnx.load_from_string(m)
    model.graph.initializer.append(helper.make_tensor("axes", TensorProto.INT64, [1], [1]))
    onnx.save(model, f"{out}/huge_result.onnx")
    # A compile-time constant of 2^33 elements is not folded (nor allocated).
    model = onnx.load_from_string(helper.make_model(helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill",
                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
         helper.make_node("Add", ["x", "c"], ["y"])], "size_errors",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("s", TensorProto.INT64, [1], [2**33])]),
        opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    onnx.save(model, f"{out}/huge_constant.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
