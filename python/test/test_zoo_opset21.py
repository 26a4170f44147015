"""Zoo models at opset 21 train exactly as at opset 13.

Each zoo model is exported at opset 13 (torch 1.13 stops at 17), rewritten to
opset 21 by tidal.opset_upgrade (onnx 1.12 has no converter past 17; its
checker is not run on the result), and compiled by tidalc at both opsets: the
training step (`--emit mlir`) must be identical, text for text. Also checks
the rewrite itself: the changed forms are the opset-18/14 ones and nothing
else moved.
"""

import os
import tempfile
import unittest

import support

import numpy as np
import onnx
from onnx import helper, numpy_helper

from tidal import export, opset_upgrade, zoo

# Exports that take long (see test_zoo_export.py) and repeat resnet20's ops.
SKIP = tuple(zoo.DEEP) + ("resnet56", "resnet110")
BATCH = 4
# Classifiers get cross-entropy; the rest mse over their output.
MSE = ("regressor", "transformer_block")


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _loss_args(name):
    if name == "mlp_with_loss":
        return ["--loss=output"]
    return ["--loss=mse" if name in MSE else "--loss=cross-entropy"]


class UpgradeTest(unittest.TestCase):
    """The rewrite, on hand-made opset-13 nodes."""

    def graph_model(self, nodes, inits=()):
        x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 6, 4])
        outs = [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None)
                for n in nodes for o in n.output if o and o.startswith("y")]
        graph = helper.make_graph(nodes, "g", [x], outs, list(inits))
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    def test_reduce_axes_become_an_input(self):
        m = self.graph_model([helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1, -1], keepdims=0)])
        up = opset_upgrade.upgrade(m, 21)
        node = up.graph.node[0]
        self.assertEqual(list(node.input), ["x", "rm_axes"])
        self.assertNotIn("axes", _attrs(node))
        self.assertEqual(_attrs(node)["keepdims"], 0)
        init = {i.name: numpy_helper.to_array(i) for i in up.graph.initializer}
        np.testing.assert_array_equal(init["rm_axes"], np.array([1, -1], dtype=np.int64))
        self.assertEqual(init["rm_axes"].dtype, np.int64)
        self.assertEqual(opset_upgrade.default_opset(up), 21)
        self.assertEqual(up.ir_version, 10)
        # The input is left alone.
        self.assertEqual(opset_upgrade.default_opset(m), 13)
        self.assertEqual(len(m.graph.node[0].input), 1)

    def test_split_gets_num_outputs(self):
        m = self.graph_model([
            helper.make_node("Split", ["x"], ["y1", "y2", "y3"], name="even", axis=1),
            helper.make_node("Split", ["x", "sizes"], ["y4", "y5"], name="sized", axis=1),
        ], [numpy_helper.from_array(np.array([2, 4], dtype=np.int64), "sizes")])
        up = opset_upgrade.upgrade(m, 18)
        self.assertEqual(_attrs(up.graph.node[0]), {"axis": 1, "num_outputs": 3})
        self.assertEqual(_attrs(up.graph.node[1]), {"axis": 1})
        self.assertEqual(up.ir_version, 8)

    def test_batch_norm_training_form(self):
        names = ["s", "b", "m", "v"]
        inits = [numpy_helper.from_array(np.ones(6, np.float32), n) for n in names]
        train = helper.make_node("BatchNormalization", ["x"] + names, ["y1", "rm", "rv", "sm", "sv"], name="bn",
                                 momentum=0.9)
        infer = helper.make_node("BatchNormalization", ["x"] + names, ["y2"], name="bn_eval")
        up = opset_upgrade.upgrade(self.graph_model([train, infer], inits), 15)
        self.assertEqual(list(up.graph.node[0].output), ["y1", "rm", "rv"])
        self.assertEqual(_attrs(up.graph.node[0])["training_mode"], 1)
        self.assertNotIn("training_mode", _attrs(up.graph.node[1]))

        used_saved = self.graph_model(
            [train, helper.make_node("Identity", ["sm"], ["y3"], name="use")], inits)
        with self.assertRaisesRegex(ValueError, "saved mean/variance"):
            opset_upgrade.upgrade(used_saved, 21)

    def test_loop_body_is_rewritten(self):
        """A Reduce inside a Loop body gets its axes as a Constant node of
        the body (a subgraph's initializer would be read by nothing), named
        apart from the enclosing graph's names."""
        body = helper.make_graph(
            [helper.make_node("ReduceMean", ["x"], ["r"], name="rm", axes=[1]),
             helper.make_node("Identity", ["c"], ["c_out"])],
            "body", [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
                     helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, [])],
            [helper.make_tensor_value_info("c_out", onnx.TensorProto.BOOL, []),
             helper.make_tensor_value_info("r", onnx.TensorProto.FLOAT, None)])
        m = self.graph_model([helper.make_node("Identity", ["x"], ["rm_axes"], name="taken"),
                              helper.make_node("Loop", ["n", ""], ["y"], name="loop", body=body)],
                             [numpy_helper.from_array(np.array(2, dtype=np.int64), "n")])
        up = opset_upgrade.upgrade(m, 18)
        new_body = up.graph.node[1].attribute[0].g
        self.assertEqual([n.op_type for n in new_body.node], ["Constant", "ReduceMean", "Identity"])
        self.assertEqual(list(new_body.node[1].input), ["x", "rm_axes_1"])
        self.assertEqual(list(new_body.node[0].output), ["rm_axes_1"])
        np.testing.assert_array_equal(numpy_helper.to_array(_attrs(new_body.node[0])["value"]), [1])
        self.assertEqual(len(new_body.initializer), 0)
        self.assertEqual(len(body.node), 2)  # the input is left alone

    def test_dft_axis_becomes_an_input(self):
        """DFT-17's axis attribute (default 1) becomes input 2 of DFT-20,
        after an empty dft_length where there was none; tidalc imports both
        forms to the same IR."""
        m = self.graph_model([
            helper.make_node("Unsqueeze", ["x", "last"], ["xc"], name="u"),
            helper.make_node("DFT", ["xc"], ["y1"], name="d1", onesided=1),
            helper.make_node("DFT", ["xc", "n"], ["y2"], name="d2", axis=2, inverse=1),
        ], [numpy_helper.from_array(np.array([-1], np.int64), "last"),
            numpy_helper.from_array(np.array(8, np.int64), "n")])
        m.opset_import[0].version = 17
        up = opset_upgrade.upgrade(m, 21)
        d1, d2 = up.graph.node[1], up.graph.node[2]
        self.assertEqual(list(d1.input), ["xc", "", "d1_axis"])
        self.assertEqual(list(d2.input), ["xc", "n", "d2_axis"])
        self.assertEqual(_attrs(d1), {"onesided": 1})
        self.assertEqual(_attrs(d2), {"inverse": 1})
        inits = {i.name: int(numpy_helper.to_array(i)) for i in up.graph.initializer}
        self.assertEqual((inits["d1_axis"], inits["d2_axis"]), (1, 2))
        if support.skip_reason("tidalc"):
            return
        with tempfile.TemporaryDirectory(prefix="tidal-dft-") as tmp:
            irs = []
            for k, model in enumerate((m, up)):
                path = os.path.join(tmp, f"dft{k}.onnx")
                onnx.save(model, path)
                run = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", "2"])
                self.assertEqual(run.returncode, 0, support.describe(run))
                irs.append(run.stdout)
            self.assertEqual(irs[0], irs[1])

    def test_refuses_what_it_cannot_rewrite(self):
        with self.assertRaisesRegex(ValueError, "13..21"):
            opset_upgrade.upgrade(self.graph_model([]), 22)
        gn = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)
        m = self.graph_model([gn])
        m.opset_import[0].version = 18
        with self.assertRaisesRegex(ValueError, "opset-21 form"):
            opset_upgrade.upgrade(m, 21)


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class ZooOpset21Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tidal-opset21-")
        cls.paths = {}
        for name in (n for n in zoo.names() if n not in SKIP):
            old = export.export_model(name, opset=13)
            new = opset_upgrade.upgrade(old, 21)
            paths = (os.path.join(cls.tmp.name, f"{name}_13.onnx"), os.path.join(cls.tmp.name, f"{name}_21.onnx"))
            onnx.save(old, paths[0])
            onnx.save(new, paths[1])
            cls.paths[name] = paths

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_rewritten_forms(self):
        for name, (old_path, new_path) in self.paths.items():
            old, new = onnx.load(old_path), onnx.load(new_path)
            with self.subTest(model=name):
                self.assertEqual(opset_upgrade.default_opset(new), 21)
                self.assertEqual([n.op_type for n in old.graph.node], [n.op_type for n in new.graph.node])
                # Float initializers (the weights) are untouched.
                floats = lambda m: {i.name: i.SerializeToString() for i in m.graph.initializer  # noqa: E731
                                    if i.data_type == onnx.TensorProto.FLOAT}
                self.assertEqual(floats(old), floats(new))
                for node in new.graph.node:
                    attrs = _attrs(node)
                    if node.op_type == "ReduceMean":
                        self.assertNotIn("axes", attrs)
                        self.assertEqual(len(node.input), 2)
                    if node.op_type == "BatchNormalization":
                        self.assertEqual(attrs.get("training_mode"), 1)
                        self.assertEqual(len(node.output), 3)

    def test_same_training_step(self):
        for name, (old_path, new_path) in self.paths.items():
            with self.subTest(model=name):
                common = ["--emit", "mlir", "--batch-size", str(BATCH)] + _loss_args(name)
                old = support.run_tidalc([old_path] + common)
                new = support.run_tidalc([new_path] + common)
                self.assertEqual(old.returncode, 0, support.describe(old))
                self.assertEqual(new.returncode, 0, support.describe(new))
                self.assertIn("func.func @train_step", old.stdout)
                self.assertEqual(old.stdout, new.stdout, f"{name}: opset 21 compiles to another training step")

    def test_forms_seen(self):
        """The zoo exercises the rewritten forms: ReduceMean (the transformer)
        and five-output BatchNormalization (the conv nets)."""
        ops = set()
        for _, new_path in self.paths.values():
            ops |= {n.op_type for n in onnx.load(new_path).graph.node}
        self.assertTrue({"ReduceMean", "BatchNormalization"} <= ops, sorted(ops))


if __name__ == "__main__":
    unittest.main()
