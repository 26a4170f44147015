"""gen_test_models.py: each file is what its docstring says, reproducibly.

Needs only torch and onnx (no tidal build).
"""

import os
import tempfile
import unittest

import support

import onnx
from onnx import shape_inference

import gen_test_models as gen


def _load(path):
    with open(path, "rb") as f:
        return f.read()


class GenTestModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tidal-gen-")
        gen.generate(cls.tmp.name)
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_writes_every_listed_file(self):
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(gen.MODELS))

    def test_valid_models_pass_the_checker(self):
        for name in gen.valid_models():
            with self.subTest(model=name):
                model = onnx.load(self.path(name))
                onnx.checker.check_model(model, full_check=True)
                for vi in list(model.graph.input) + list(model.graph.output):
                    dims = vi.type.tensor_type.shape.dim
                    if dims:
                        self.assertEqual(dims[0].dim_param, "N", f"{vi.name} has no symbolic batch")

    def test_zoo_files_carry_their_opset(self):
        for name, spec in gen.MODELS.items():
            if spec.zoo:
                with self.subTest(model=name):
                    model = onnx.load(self.path(name))
                    self.assertEqual(model.opset_import[0].version, spec.zoo[1])

    def test_shape_subgraph_infers_n_by_24(self):
        model = shape_inference.infer_shapes(onnx.load(self.path("shape_subgraph.onnx")), strict_mode=True)
        ops = [n.op_type for n in model.graph.node if n.op_type != "Constant"]
        self.assertEqual(ops, ["Shape", "Gather", "Unsqueeze", "Concat", "Reshape"])
        dims = [d.dim_param or d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, ["N", 24])

    def test_unparsable_files(self):
        self.assertEqual(os.path.getsize(self.path("empty.onnx")), 0)
        mlp = _load(self.path("mlp.onnx"))
        truncated = _load(self.path("truncated.onnx"))
        self.assertTrue(mlp.startswith(truncated))
        self.assertLess(len(truncated), len(mlp))
        for name in ("truncated.onnx", "garbage.onnx"):
            with self.subTest(model=name):
                with self.assertRaises(Exception):
                    onnx.load(self.path(name))
        # An empty protobuf parses: it is a ModelProto with no graph.
        self.assertFalse(onnx.load(self.path("empty.onnx")).HasField("graph"))

    def test_malformed_models_have_their_defect(self):
        def model(name):
            return onnx.load(self.path(name))

        self.assertIn("Unique", [n.op_type for n in model("unsupported_op.onnx").graph.node])
        self.assertEqual(model("opset23.onnx").opset_import[0].version, 23)
        m = model("opset11_unsqueeze.onnx")
        self.assertEqual(m.opset_import[0].version, 11)
        self.assertEqual([a.name for a in m.graph.node[0].attribute], ["axes"])
        with self.assertRaises(onnx.checker.ValidationError):
            onnx.checker.check_model(model("dangling_edge.onnx"))
        self.assertEqual(model("unresolved_shape.onnx").graph.input[1].name, "shape")
        dims = [d.dim_param for d in model("symbolic_dim.onnx").graph.input[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, ["N", "seq"])
        self.assertEqual(len(model("no_graph_output.onnx").graph.output), 0)
        with self.assertRaises(onnx.checker.ValidationError):
            onnx.checker.check_model(model("cycle.onnx"))
        with self.assertRaises(Exception):
            shape_inference.infer_shapes(model("bad_attr.onnx"), strict_mode=True)

    def test_deterministic_and_not_rewritten(self):
        with tempfile.TemporaryDirectory() as other:
            gen.generate(other)
            for name in gen.MODELS:
                self.assertEqual(_load(os.path.join(other, name)), _load(self.path(name)), name)
            stamp = {n: os.stat(os.path.join(other, n)).st_mtime_ns for n in gen.MODELS}
            gen.generate(other)
            again = {n: os.stat(os.path.join(other, n)).st_mtime_ns for n in gen.MODELS}
            self.assertEqual(stamp, again, "unchanged files must not be rewritten")

    def test_list_matches(self):
        proc = support.run([support.sys.executable, os.path.join(support.PYTHON_DIR, "tools", "gen_test_models.py"), "--list"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), list(gen.MODELS))


if __name__ == "__main__":
    unittest.main()
