"""Writes OUTDIR/*.onnx for functions.test: models calling model-local
functions (ModelProto.functions), as PyTorch's dynamo exporter writes aten
ops, with attribute references, defaults (IR 9 attribute_proto), nested
calls, an omitted optional input, an If in a body; the flat model they
expand to; and the forms tidal rejects."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
DOMAIN = "pkg.test"


def fn(name, inputs, outputs, nodes, attributes=(), defaults=(), opset=OPSET):
    f = helper.make_function(DOMAIN, name, list(inputs), list(outputs), list(nodes),
                             [helper.make_opsetid("", opset), helper.make_opsetid(DOMAIN, 1)], list(attributes))
    data = f.SerializeToString()
    for d in defaults:  # FunctionProto.attribute_proto = 11 (IR 9), unknown to onnx 1.12's Python
        body = d.SerializeToString()
        data += bytes([11 << 3 | 2]) + _varint(len(body)) + body
    return data


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def ref(name, attr_type, ref_name):
    a = onnx.AttributeProto()
    a.name, a.type, a.ref_attr_name = name, attr_type, ref_name
    return a


def linear_act():
    # y = LeakyRelu(x W + b, alpha = @alpha); alpha defaults to 0.5.
    leaky = helper.make_node("LeakyRelu", ["h"], ["y"], name="act")
    leaky.attribute.append(ref("alpha", onnx.AttributeProto.FLOAT, "alpha"))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
             helper.make_node("Add", ["xw", "b"], ["h"], name="bias"), leaky]
    return fn("LinearAct", ["x", "w", "b"], ["y"], nodes, ["alpha"],
              [helper.make_attribute("alpha", 0.5)])


def block():
    # Two LinearAct calls, the second with the default alpha; a Clip whose
    # optional min is omitted in the call (input "" -> no lower bound).
    nodes = [helper.make_node("LinearAct", ["x", "w1", "b1"], ["h"], domain=DOMAIN, alpha=0.1),
             helper.make_node("LinearAct", ["h", "w2", "b2"], ["y0"], domain=DOMAIN),
             helper.make_node("ClipMax", ["y0", "", "hi"], ["y"], domain=DOMAIN)]
    return fn("Block", ["x", "w1", "b1", "w2", "b2", "hi"], ["y"], nodes)


def clip_max():
    return fn("ClipMax", ["x", "lo", "hi"], ["y"], [helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")])


def weights():
    rng = np.random.default_rng(0)
    return [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
            for n, s in (("w1", (4, 6)), ("b1", (6,)), ("w2", (6, 3)), ("b2", (3,)))] + \
        [numpy_helper.from_array(np.array(0.75, np.float32), "hi")]


def save(path, nodes, functions=(), opset=OPSET):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    graph = helper.make_graph(nodes, "functions", [x], [y], weights())
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(DOMAIN, 1)])
    m.ir_version = 9
    data = m.SerializeToString()
    for f in functions:  # ModelProto.functions = 25
        data += _varint(25 << 3 | 2) + _varint(len(f)) + f
    with open(path, "wb") as out:
        out.write(data)


def main(out):
    os.makedirs(out, exist_ok=True)
    call = [helper.make_node("Block", ["x", "w1", "b1", "w2", "b2", "hi"], ["y"], name="blk", domain=DOMAIN)]
    save(f"{out}/calls.onnx", call, [linear_act(), block(), clip_max()])
    flat = [helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("Add", ["a", "b1"], ["b"]),
            helper.make_node("LeakyRelu", ["b"], ["h"], alpha=0.1),
            helper.make_node("MatMul", ["h", "w2"], ["c"]), helper.make_node("Add", ["c", "b2"], ["d"]),
            helper.make_node("LeakyRelu", ["d"], ["y0"], alpha=0.5),
            helper.make_node("Clip", ["y0", "", "hi"], ["y"])]
    save(f"{out}/flat.onnx", flat)
    # An If in a body whose branches read a value of the body ("t").
    then_g = helper.make_graph([helper.make_node("Identity", ["t"], ["r"])], "then", [],
                               [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["t"], ["r"])], "else", [],
                               [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
    pick = fn("Pick", ["x"], ["y"], [
        helper.make_node("Relu", ["x"], ["t"]),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(False), "c")),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)])
    save(f"{out}/branch.onnx", [helper.make_node("Pick", ["x"], ["p"], domain=DOMAIN),
                                helper.make_node("MatMul", ["p", "w1"], ["q"]),
                                helper.make_node("MatMul", ["q", "w2"], ["y"])], [pick])
    # Errors: a function calling itself; a body on another opset.
    selfish = fn("Loop1", ["x"], ["y"], [helper.make_node("Loop1", ["x"], ["y"], domain=DOMAIN)])
    save(f"{out}/recursive.onnx", [helper.make_node("Loop1", ["x"], ["y"], name="outer", domain=DOMAIN)], [selfish])
    # Each level calls the one below twice: 2^30 nodes if expanded.
    levels = [fn("L0", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])])]
    for k in range(1, 31):
        levels.append(fn(f"L{k}", ["x"], ["y"], [helper.make_node(f"L{k - 1}", ["x"], ["t"], domain=DOMAIN),
                                                  helper.make_node(f"L{k - 1}", ["t"], ["y"], domain=DOMAIN)]))
    save(f"{out}/doubling.onnx", [helper.make_node("L30", ["x"], ["y"], name="top", domain=DOMAIN)], levels)
    old = fn("Old", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], opset=13)
    save(f"{out}/other_opset.onnx", [helper.make_node("Old", ["x"], ["y"], domain=DOMAIN)], [old])


if __name__ == "__main__":
    main(sys.argv[1])
