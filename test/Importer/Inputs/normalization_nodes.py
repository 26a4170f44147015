"""Writes OUTDIR/*.onnx for normalization.test: LpNormalization,
MeanVarianceNormalization and Hardmax nodes, and LpNormalization with a p
tidal rejects."""
import os
import sys

from onnx import TensorProto, helper


def save(path, op, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    save(f"{out}/lp2.onnx", "LpNormalization", axis=1)
    save(f"{out}/lp1.onnx", "LpNormalization", p=1)
    save(f"{out}/mvn.onnx", "MeanVarianceNormalization")
    save(f"{out}/hardmax.onnx", "Hardmax", axis=2)
    save(f"{out}/lp3.onnx", "LpNormalization", p=3)


if __name__ == "__main__":
    main(sys.argv[1])
