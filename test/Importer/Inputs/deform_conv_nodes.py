"""Writes OUTDIR/*.onnx for deform-conv.test: DeformConv (opset 19) as
torchvision.ops.deform_conv2d exports it, and the forms tidal rejects."""
import os
import sys

from onnx import TensorProto, helper


def save(path, inputs, shapes, opset=19, **attrs):
    node = helper.make_node("DeformConv", inputs, ["y"], name="dcn", **attrs)
    graph = helper.make_graph([node], "deform",
                              [helper.make_tensor_value_info(i, TensorProto.FLOAT, s) for i, s in zip(inputs, shapes)
                               if i],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)  # noqa: E731
    # 2 images of 4 channels 5x5, 6 3x3 filters in 2 groups, 2 offset
    # groups, padding 1: 5x5 outputs, 9 taps.
    save(p("dcn.onnx"), ["x", "w", "off", "b", "mask"],
         [[2, 4, 5, 5], [6, 2, 3, 3], [2, 36, 5, 5], [6], [2, 18, 5, 5]], pads=[1, 1, 1, 1], group=2,
         offset_group=2)
    # A mask without a bias (B is an empty input name).
    save(p("dcn_mask_no_bias.onnx"), ["x", "w", "off", "", "mask"],
         [[1, 3, 6, 6], [4, 3, 2, 2], [1, 8, 5, 5], None, [1, 4, 5, 5]])
    save(p("dcn_no_mask.onnx"), ["x", "w", "off"], [[1, 3, 6, 6], [4, 3, 2, 2], [1, 8, 5, 5]])
    save(p("dcn_bad_offset.onnx"), ["x", "w", "off"], [[1, 3, 6, 6], [4, 3, 2, 2], [1, 8, 4, 4]])
    save(p("dcn_3d.onnx"), ["x", "w", "off"], [[1, 3, 4, 4, 4], [4, 3, 2, 2, 2], [1, 24, 3, 3, 3]])
    save(p("dcn_bad_group.onnx"), ["x", "w", "off"], [[1, 3, 6, 6], [4, 3, 2, 2], [1, 8, 5, 5]], offset_group=2)


if __name__ == "__main__":
    main(sys.argv[1])
