"""Writes OUTDIR/*.onnx for col2im.test: Col2Im (F.fold) as PyTorch 2.x
exports it at opset 18, and the forms tidal rejects with a reason."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, x_shape, image, block, opset=18, **attrs):
    inits = [numpy_helper.from_array(np.array(image, np.int64), "image"),
             numpy_helper.from_array(np.array(block, np.int64), "block")]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], name="fold", **attrs)
    graph = helper.make_graph([node], "col2im", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    # 3 channels, 2x2 blocks, stride 2, pad 1 on a 5x5 image: 3x3 blocks.
    save(p("fold.onnx"), [2, 12, 9], [5, 5], [2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
    # Dilation 2, stride 2 on a 6-wide image: blocks at columns 0 and 2
    # reach up to column 4; column 5 is a zero.
    save(p("fold_dilated.onnx"), [1, 4, 8], [4, 6], [1, 2], dilations=[1, 2], strides=[1, 2])
    save(p("fold_count.onnx"), [2, 12, 8], [5, 5], [2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
    save(p("fold_channels.onnx"), [2, 10, 9], [5, 5], [2, 2], strides=[2, 2], pads=[1, 1, 1, 1])
    save(p("fold_big_block.onnx"), [2, 25, 1], [3, 3], [5, 5])


if __name__ == "__main__":
    main(sys.argv[1])
