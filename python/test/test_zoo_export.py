"""Zoo exports: well-formed ONNX, within tidal's op set, in training form.

Needs only torch and onnx (no tidal build).
"""

import collections
import os
import subprocess
import sys
import tempfile
import unittest

import support  # noqa: F401  (sets sys.path)

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from tidal import export, zoo
from tidal.ops import FOLDED_SHAPE_OPS, SUPPORTED_OPS, UNROLLED_OPS, op_types

OPSETS = (13, 17)
# Left out of the export loop (every name x OPSETS) to keep it quick on a
# 2-core CI machine: zoo.DEEP (resnet1202: torch 1.13's exporter is
# super-linear in the graph size, minutes per opset) and resnet110 (~2 s per
# opset). Both are the ResNet20 class with more blocks per stage, so
# resnet20 and resnet56, exported here, cover the same ops, names and forms;
# test_cifar_resnet_depths still builds them.
SLOW_EXPORTS = tuple(zoo.DEEP) + ("resnet110",)


def _dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class ZooExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tidal-zoo-")
        cls.models = {}
        for name in (n for n in zoo.names() if n not in SLOW_EXPORTS):
            for opset in OPSETS:
                path = os.path.join(cls.tmp.name, f"{name}_{opset}.onnx")
                cls.models[name, opset] = export.export(name, path, opset=opset)
        cls.folded_seen = collections.defaultdict(set)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        if cls.folded_seen:
            report = "; ".join(f"{k[0]}@{k[1]}: {' '.join(sorted(v))}" for k, v in sorted(cls.folded_seen.items()))
            print(f"\n[zoo] compile-time shape ops in the exports: {report}", file=sys.stderr)

    def test_checker_and_reload(self):
        for (name, opset), model in self.models.items():
            with self.subTest(model=name, opset=opset):
                onnx.checker.check_model(model, full_check=True)
                self.assertEqual(
                    [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")], [opset]
                )

    def test_ops_within_tidal_set(self):
        for (name, opset), model in self.models.items():
            with self.subTest(model=name, opset=opset):
                ops = op_types(model.graph)
                outside = ops - SUPPORTED_OPS - FOLDED_SHAPE_OPS - UNROLLED_OPS
                self.assertFalse(outside, f"{name}@{opset} uses ops tidal does not support: {sorted(outside)}")
                folded = ops & FOLDED_SHAPE_OPS
                if folded:
                    self.folded_seen[name, opset] |= folded

    def test_io_names_and_dynamic_batch(self):
        for (name, opset), model in self.models.items():
            entry = zoo.MODELS[name]
            with self.subTest(model=name, opset=opset):
                self.assertEqual([i.name for i in model.graph.input], [n for n, _, _ in entry.inputs])
                self.assertEqual([o.name for o in model.graph.output], list(entry.outputs))
                for vi, (_, shape, _) in zip(model.graph.input, entry.inputs):
                    self.assertEqual(_dims(vi), ["N"] + list(shape))
                for vi in model.graph.output:
                    if vi.name in entry.scalar_outputs:
                        self.assertEqual(_dims(vi), [])
                    else:
                        self.assertEqual(_dims(vi)[0], "N")
                # Parameters live in initializers, not graph inputs.
                self.assertFalse({i.name for i in model.graph.initializer} & {i.name for i in model.graph.input})

    def test_initializers_match_a_fresh_model(self):
        # Tracing in train mode moves BatchNorm running statistics; the export
        # must carry the freshly initialised values (what PyTorch starts from).
        for (name, opset), model in self.models.items():
            with self.subTest(model=name, opset=opset):
                state = zoo.build(name).state_dict()
                inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
                trainable = [k for k in state if not k.endswith("num_batches_tracked")]
                self.assertEqual(sorted(inits), sorted(trainable))
                for key, value in inits.items():
                    np.testing.assert_array_equal(value, state[key].numpy(), err_msg=key)

    def test_batchnorm_training_form(self):
        for opset, outputs, mode in ((13, 5, None), (15, 3, 1), (17, 3, 1)):
            for name in ("vgg_bn", "resnet20"):
                model = self.models.get((name, opset)) or export.export_model(name, opset)
                with self.subTest(model=name, opset=opset):
                    bns = [n for n in model.graph.node if n.op_type == "BatchNormalization"]
                    self.assertTrue(bns)
                    for bn in bns:
                        self.assertEqual(len(bn.output), outputs)
                        attrs = _attrs(bn)
                        self.assertEqual(attrs.get("training_mode"), mode)
                        self.assertAlmostEqual(attrs["momentum"], 0.9, places=6)
                        self.assertAlmostEqual(attrs["epsilon"], 1e-5, places=9)
                    # No BN folded into a Conv: every Conv feeds a BN here.
                    self.assertEqual(len(bns), sum(n.op_type == "Conv" for n in model.graph.node))

    def test_cifar_resnet_depths(self):
        # 6n+2 weighted layers on the main path (He et al. 2016): the stem
        # conv, two convs per basic block and the final Linear; the 1x1
        # projection shortcuts (one per stage change) are not counted.
        for name, depth in (("resnet20", 20), ("resnet56", 56), ("resnet110", 110), ("resnet1202", 1202)):
            with self.subTest(model=name):
                model = zoo.build(name)
                convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
                main = [m for m in convs if m.kernel_size == (3, 3)]
                linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
                self.assertEqual(len(main) + len(linears), depth)
                self.assertEqual(len(convs) - len(main), 2)
                self.assertEqual(zoo.MODELS[name].inputs, (("input", (3, 32, 32), torch.float32),))
                self.assertEqual(model(torch.zeros(2, 3, 32, 32)).shape, (2, 10))

    def test_transformer_layer_norm_forms(self):
        ops13 = op_types(self.models["transformer_block", 13].graph)
        ops17 = op_types(self.models["transformer_block", 17].graph)
        self.assertNotIn("LayerNormalization", ops13)
        self.assertTrue({"ReduceMean", "Sub", "Pow", "Sqrt", "Div"} <= ops13)
        self.assertIn("LayerNormalization", ops17)
        self.assertNotIn("ReduceMean", ops17)
        for ops in (ops13, ops17):
            self.assertTrue({"Erf", "Softmax", "MatMul"} <= ops)

    def test_transformer_shape_subgraph(self):
        # Reshape <- Concat <- Unsqueeze <- Gather <- Shape, as the tidal
        # importer must fold once the batch size is bound.
        for opset in OPSETS:
            graph = self.models["transformer_block", opset].graph
            producer = {out: n for n in graph.node for out in n.output}

            def chain(name):
                node = producer.get(name)
                return node.op_type if node else "input"

            found = False
            for reshape in (n for n in graph.node if n.op_type == "Reshape"):
                concat = producer.get(reshape.input[1])
                if concat is None or concat.op_type != "Concat":
                    continue
                for piece in concat.input:
                    unsq = producer.get(piece)
                    if unsq is None or unsq.op_type != "Unsqueeze":
                        continue
                    gather = producer.get(unsq.input[0])
                    if gather is not None and gather.op_type == "Gather" and chain(gather.input[0]) == "Shape":
                        found = True
            self.assertTrue(found, f"no Shape->Gather->Unsqueeze->Concat->Reshape at opset {opset}")

    def test_loss_model(self):
        model = self.models["mlp_with_loss", 13]
        sce = [n for n in model.graph.node if n.op_type == "SoftmaxCrossEntropyLoss"]
        self.assertEqual(len(sce), 1)
        self.assertEqual(_attrs(sce[0]).get("reduction", b"mean"), b"mean")
        self.assertEqual(model.graph.output[0].name, "loss")
        self.assertEqual(sce[0].output[0], "loss")
        target = model.graph.input[1]
        self.assertEqual(target.type.tensor_type.elem_type, onnx.TensorProto.INT64)

    def test_static_batch_export(self):
        model = export.export_model("lenet", 13, batch=4)
        self.assertEqual(_dims(model.graph.input[0]), [4, 1, 28, 28])
        self.assertEqual(_dims(model.graph.output[0]), [4, 10])
        # Without a dynamic batch the tracer bakes sizes in: no Shape ops.
        self.assertNotIn("Shape", op_types(export.export_model("transformer_block", 13, batch=4).graph))

    def test_deterministic(self):
        for name in ("vgg_bn", "transformer_block"):
            a = export.export_model(name, 13).SerializeToString()
            b = export.export_model(name, 13).SerializeToString()
            self.assertEqual(a, b, name)

    def test_cli(self):
        env = dict(os.environ, PYTHONPATH=support.PYTHON_DIR)
        out = os.path.join(self.tmp.name, "cli_mlp.onnx")
        proc = subprocess.run(
            [sys.executable, "-m", "tidal.export", "mlp", out, "--opset", "17"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(onnx.load(out).opset_import[0].version, 17)
        bad = subprocess.run(
            [sys.executable, "-m", "tidal.export", "mlp", out + ".bad", "--opset", "19"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.assertEqual(bad.returncode, 1)
        self.assertEqual(len(bad.stderr.splitlines()), 1, bad.stderr)
        self.assertFalse(os.path.exists(out + ".bad"))


if __name__ == "__main__":
    unittest.main()
