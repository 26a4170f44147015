"""Writes OUTDIR/*.onnx for nan-inf.test: IsNaN and IsInf (both signs, one
sign, neither) as torch.isnan / torch.isinf / torch.isposinf export them,
and a float16 input, which is refused."""
import os
import sys

from onnx import TensorProto, helper


def save(path, op, elem=TensorProto.FLOAT, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "nan_inf", [helper.make_tensor_value_info("x", elem, ["N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    save(f"{out}/isnan.onnx", "IsNaN")
    save(f"{out}/isinf.onnx", "IsInf")
    save(f"{out}/isneginf.onnx", "IsInf", detect_positive=0)
    save(f"{out}/isinf_neither.onnx", "IsInf", detect_positive=0, detect_negative=0)
    # float16 (onnx 1.17's test_isnan_float16): no kernel compares it.
    save(f"{out}/isnan_f16.onnx", "IsNaN", elem=TensorProto.FLOAT16)


if __name__ == "__main__":
    main(sys.argv[1])
