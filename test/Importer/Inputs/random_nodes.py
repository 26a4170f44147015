"""Writes OUTDIR/*.onnx for random.test: the random nodes as PyTorch exports
them (torch.randn_like, torch.rand_like, torch.randn(shape),
torch.bernoulli) and the forms tidal rejects with a reason."""
import os
import sys

from onnx import TensorProto, helper


def save(path, nodes, outputs, x_type=TensorProto.FLOAT):
    x = helper.make_tensor_value_info("x", x_type, ["N", 4])
    outs = [helper.make_tensor_value_info(o, TensorProto.DOUBLE if o == "u" else TensorProto.FLOAT, None)
            for o in outputs]
    m = helper.make_model(helper.make_graph(nodes, "random", [x], outs),
                          opset_imports=[helper.make_opsetid("", 15)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    n = helper.make_node
    save(f"{out}/draws.onnx", [
        n("RandomNormalLike", ["x"], ["eps"], name="eps"),
        n("RandomUniformLike", ["x"], ["u"], name="u", low=-1.0, high=3.0, dtype=TensorProto.DOUBLE),
        n("RandomNormal", [], ["fixed"], name="fixed", shape=[2, 5], mean=0.5, scale=2.0, seed=3.0),
        n("Bernoulli", ["x"], ["coin"], name="coin"),
    ], ["eps", "u", "fixed", "coin"])
    save(f"{out}/no_shape.onnx", [n("RandomNormal", [], ["y"], name="r")], ["y"])
    save(f"{out}/int_dtype.onnx", [n("RandomUniformLike", ["x"], ["y"], name="r", dtype=TensorProto.INT32)], ["y"])
    save(f"{out}/int_like.onnx", [n("RandomNormalLike", ["x"], ["y"], name="r")], ["y"], x_type=TensorProto.INT64)
    save(f"{out}/int_bernoulli.onnx", [n("Bernoulli", ["x"], ["y"], name="r")], ["y"], x_type=TensorProto.INT64)


if __name__ == "__main__":
    main(sys.argv[1])
