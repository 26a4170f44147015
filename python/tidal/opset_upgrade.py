"""Rewrite an ONNX model from opset 13-20 to a newer opset, up to 21.

    /usr/bin/python3 -m tidal.opset_upgrade IN.onnx OUT.onnx [--opset 21]

onnx 1.12's version converter (Debian's) stops at opset 17 and torch 1.13
exports up to 17, so tests that need opset 18-21 models of the zoo export at
13 and rewrite them here. Only the operator forms that changed between 13 and
21 for what PyTorch exports are rewritten, as onnx's version converter and
PyTorch 2.x write them:

- ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
  ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (18): the `axes` attribute
  becomes an int64 initializer input.
- Split (18) without sizes: `num_outputs` = the number of outputs.
- GridSample (20): mode "bilinear" is called "linear", "bicubic" "cubic".
- BatchNormalization (14): PyTorch's five-output training form (opset 9)
  becomes `training_mode=1` with three outputs; the saved mean and variance
  outputs must be unused.
- DFT (20): the `axis` attribute (default 1) becomes an int64 input
  (input 2, after a possibly empty dft_length).

Every other operator tidal reads changes at most its element types between
13 and 21. An operator whose semantics change otherwise (GroupNormalization
at 21, LpPool at 18, ...) raises ValueError rather than being left wrong.
Subgraphs (If branches, Loop and Scan bodies) are rewritten the same way;
there an `axes` input is a Constant node, not an initializer.
"""

import argparse
import copy
import sys

import numpy as np
from onnx import helper, numpy_helper

MAX_OPSET = 21
REDUCE_AXES_INPUT_AT_18 = frozenset(
    "ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare".split()
)
# Operators whose meaning changes between 13 and 21 in a way not rewritten
# here, with the opset of the change.
UNHANDLED = {"GroupNormalization": 21, "LpPool": 18, "CenterCropPad": 18}
# The IR version ONNX pairs with each opset (onnx.helper.VERSION_TABLE).
IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10}


def default_opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else 0


def _attr(node, name):
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def _drop_attr(node, name):
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)


def _upgrade_graph(graph, source, target, what, outer=frozenset()):
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    taken = set(outer) | used | {i.name for i in graph.initializer} | {o for node in graph.node for o in node.output}
    taken |= {i.name for i in graph.input}
    nested = bool(outer)
    constants = {}  # node index -> Constant nodes to put before it (subgraphs)

    def fresh(base):
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    for index, node in enumerate(graph.node):
        who = f"{what} node {node.name or index!r} ({node.op_type})"
        for a in node.attribute:
            for k, sub in enumerate([a.g] if a.HasField("g") else list(a.graphs)):
                _upgrade_graph(sub, source, target, f"{who} {a.name}" + (f"[{k}]" if a.graphs else ""),
                               outer=taken | {name for name in used})
        if node.domain not in ("", "ai.onnx"):
            continue
        changed_at = UNHANDLED.get(node.op_type)
        if changed_at is not None and source < changed_at <= target:
            raise ValueError(f"{who}: its opset-{changed_at} form is not rewritten")
        if node.op_type in REDUCE_AXES_INPUT_AT_18 and source < 18 <= target:
            axes = _attr(node, "axes")
            if axes is not None:
                name = fresh(f"{node.name or node.op_type}_axes")
                value = numpy_helper.from_array(np.array(list(axes.ints), dtype=np.int64), name)
                if nested:
                    constants.setdefault(index, []).append(helper.make_node("Constant", [], [name], value=value))
                else:
                    graph.initializer.append(value)
                node.input.append(name)
                _drop_attr(node, "axes")
        elif node.op_type == "Split" and source < 18 <= target:
            has_sizes = len(node.input) > 1 and node.input[1]
            if not has_sizes and _attr(node, "split") is None:
                node.attribute.append(helper.make_attribute("num_outputs", len(node.output)))
        elif node.op_type == "GridSample" and source < 20 <= target:
            mode = _attr(node, "mode")
            renamed = {b"bilinear": b"linear", b"bicubic": b"cubic"}
            if mode is not None and mode.s in renamed:
                mode.s = renamed[mode.s]
            elif mode is None:  # the default became "linear" under its new name
                node.attribute.append(helper.make_attribute("mode", "linear"))
        elif node.op_type == "DFT" and source < 20 <= target:
            axis = _attr(node, "axis")
            name = fresh(f"{node.name or node.op_type}_axis")
            value = numpy_helper.from_array(np.array(axis.i if axis is not None else 1, dtype=np.int64), name)
            if nested:
                constants.setdefault(index, []).append(helper.make_node("Constant", [], [name], value=value))
            else:
                graph.initializer.append(value)
            while len(node.input) < 2:
                node.input.append("")
            node.input.append(name)
            _drop_attr(node, "axis")
        elif node.op_type == "BatchNormalization" and source < 14 <= target:
            outputs = list(node.output)
            if len([o for o in outputs[1:] if o]) == 0:
                continue  # inference form: training_mode defaults to 0
            if any(o and o in used for o in outputs[3:]):
                raise ValueError(f"{who}: the saved mean/variance outputs are used; BatchNormalization-14 has none")
            del node.output[3:]
            node.attribute.append(helper.make_attribute("training_mode", 1))
    if constants:
        nodes = []
        for index, node in enumerate(graph.node):
            nodes += constants.get(index, []) + [node]
        del graph.node[:]
        graph.node.extend(nodes)


def upgrade(model, target=MAX_OPSET):
    """A copy of `model` (an onnx.ModelProto at opset 13 or newer) at
    default-domain opset `target`."""
    source = default_opset(model)
    if not 13 <= source <= target <= MAX_OPSET:
        raise ValueError(f"can rewrite opsets 13..{MAX_OPSET} upwards, not {source} to {target}")
    out = copy.deepcopy(model)
    _upgrade_graph(out.graph, source, target, "graph")
    for i, info in enumerate(out.training_info):
        _upgrade_graph(info.algorithm, source, target, f"training_info[{i}] algorithm")
    for o in out.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target
    out.ir_version = max(out.ir_version, IR_VERSION.get(target, out.ir_version))
    return out


def main(argv=None):
    import onnx

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--opset", type=int, default=MAX_OPSET)
    args = p.parse_args(argv)
    try:
        model = upgrade(onnx.load(args.input), args.opset)
    except ValueError as e:
        print(f"{args.input}: error: {e}", file=sys.stderr)
        return 1
    onnx.save(model, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
