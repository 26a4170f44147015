"""tidalc --emit mlir on the test models: the import contract.

Well-formed models must import with static shapes, the right argument roles
and the expected tidal ops, in IR that tidal-opt re-parses. Malformed ones
must fail with exit 1 and exactly one `FILE: error: ...` line on stderr,
without writing an output file.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-opt; skips otherwise.
"""

import os
import re
import tempfile
import unittest

import support

import onnx

import gen_test_models as gen
from tidal import export

BATCH = 8
FLOAT_TYPES = {
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.BFLOAT16,
}

# Ops each well-formed model must import to (a subset of what appears).
EXPECTED_OPS = {
    "mlp.onnx": ["gemm", "relu"],
    "lenet.onnx": ["conv", "relu", "max_pool", "gemm"],
    "vgg_bn13.onnx": ["conv", "batch_norm_training", "relu", "max_pool", "gemm"],
    "vgg_bn15.onnx": ["conv", "batch_norm_training", "relu", "max_pool", "gemm"],
    "resnet20.onnx": ["conv", "batch_norm_training", "relu", "add", "global_average_pool", "gemm"],
    "transformer13.onnx": ["matmul", "add", "softmax", "erf", "reduce_mean", "sqrt", "transpose", "reshape"],
    "transformer17.onnx": ["layer_norm", "matmul", "add", "softmax", "erf", "transpose", "reshape"],
    "mlp_with_loss.onnx": ["gemm", "relu", "softmax_cross_entropy_loss"],
    "shape_subgraph.onnx": ["reshape"],
    "ti_momentum.onnx": ["gemm", "softmax_cross_entropy_loss", "gradient", "onnx_momentum"],
    "ti_nesterov.onnx": ["gemm", "reduce_mean", "gradient", "onnx_momentum"],
    "ti_adam.onnx": ["gemm", "gradient", "onnx_adam"],
    "ti_adagrad.onnx": ["gemm", "gradient", "onnx_adagrad"],
}

# Result types that some tidal.reshape must have once the batch is bound.
EXPECTED_RESHAPES = {
    "transformer13.onnx": [f"tensor<{BATCH}x16x4x16xf32>", f"tensor<{BATCH}x16x64xf32>"],
    "transformer17.onnx": [f"tensor<{BATCH}x16x4x16xf32>", f"tensor<{BATCH}x16x64xf32>"],
    "shape_subgraph.onnx": [f"tensor<{BATCH}x24xf32>"],
}

# Models whose integer shape computations must fold away entirely.
SHAPE_FOLDED = ("transformer13.onnx", "transformer17.onnx", "shape_subgraph.onnx")

_SKIP = support.skip_reason("tidalc", "tidal-opt")


def expected_roles(model):
    """{name: role} that @main's arguments must carry for `model`. With a
    training_info (docs/training-info.md), its algorithm graph's inputs and
    initializers count too: what Gradient differentiates is a param, what
    update_binding updates otherwise is optimizer_state, and every other float
    initializer is a constant (the algorithm says what is trained)."""
    graphs = [model.graph] + [ti.algorithm for ti in model.training_info]
    inits = {i.name: i for g in graphs for i in g.initializer}
    differentiated, updated = set(), set()
    for ti in model.training_info:
        updated.update(b.key for b in ti.update_binding)
        for node in ti.algorithm.node:
            if node.op_type == "Gradient":
                differentiated.update(s.decode() for a in node.attribute if a.name == "xs" for s in a.strings)
    state = set()
    for g in graphs:
        for node in g.node:
            if node.op_type == "BatchNormalization":
                state.update(node.input[3:5])
    roles = {i.name: "input" for g in graphs for i in g.input if i.name not in inits}
    for name, init in inits.items():
        if name in state:
            roles[name] = "state"
        elif name in differentiated:
            roles[name] = "param"
        elif name in updated:
            roles[name] = "optimizer_state"
        elif init.data_type in FLOAT_TYPES and not model.training_info:
            roles[name] = "param"
        else:
            roles[name] = "constant"
    return roles


def main_roles(mlir):
    """{tidal.name: (role, type)} for @main's arguments."""
    roles = {}
    for ty, attrs in support.main_arguments(mlir):
        name = support.arg_attr(attrs, "tidal.name")
        role = support.arg_attr(attrs, "tidal.role")
        m = re.fullmatch(r"#tidal<role (\w+)>", role or "")
        roles[name] = (m.group(1) if m else role, ty)
    return roles


@unittest.skipIf(_SKIP, _SKIP)
class ValidModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tidal-import-")
        cls.results = {}
        for name in gen.valid_models():
            path = support.model_path(name)
            cls.results[name] = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH)])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def imported(self, name):
        proc = self.results[name]
        self.assertEqual(proc.returncode, 0, f"{name}: {support.describe(proc)}")
        self.assertEqual(proc.stderr, "", f"{name}: a successful import prints nothing on stderr")
        return proc.stdout

    def test_exit_zero_and_one_main(self):
        for name in gen.valid_models():
            with self.subTest(model=name):
                mlir = self.imported(name)
                self.assertEqual(len(re.findall(r"func\.func\s+(?:\w+\s+)?@main\(", mlir)), 1)

    def test_reparses_with_tidal_opt(self):
        for name in gen.valid_models():
            with self.subTest(model=name):
                path = os.path.join(self.tmp.name, name + ".mlir")
                with open(path, "w") as f:
                    f.write(self.imported(name))
                proc = support.run([support.tool("tidal-opt"), path, "-o", os.devnull])
                self.assertEqual(proc.returncode, 0, f"{name}: {support.describe(proc)}")

    def test_all_tensor_types_static(self):
        for name in gen.valid_models():
            with self.subTest(model=name):
                mlir = self.imported(name)
                types = support.tensor_types(mlir)
                self.assertTrue(types)
                dynamic = sorted({t for t in types if "?" in t or "*" in t})
                self.assertFalse(dynamic, f"{name}: dynamic tensor types {dynamic}")

    def test_argument_roles(self):
        for name in gen.valid_models():
            with self.subTest(model=name):
                model = onnx.load(support.model_path(name))
                got = main_roles(self.imported(name))
                for arg, role in expected_roles(model).items():
                    if role == "constant" and arg not in got:
                        continue  # integer initializers may become constants
                    self.assertIn(arg, got, f"{name}: @main has no argument named '{arg}'")
                    self.assertEqual(got[arg][0], role, f"{name}: argument '{arg}'")
                for inp in model.graph.input:
                    self.assertTrue(
                        got[inp.name][1].startswith(f"tensor<{BATCH}x"),
                        f"{name}: input '{inp.name}' has type {got[inp.name][1]}",
                    )

    def test_batchnorm_models_have_state(self):
        for name in ("vgg_bn13.onnx", "vgg_bn15.onnx", "resnet20.onnx"):
            with self.subTest(model=name):
                roles = [r for r, _ in main_roles(self.imported(name)).values()]
                self.assertEqual(roles.count("state"), 2 * (5 if "vgg" in name else 21))

    def test_expected_ops(self):
        for name, ops in EXPECTED_OPS.items():
            with self.subTest(model=name):
                mlir = self.imported(name)
                for op in ops:
                    self.assertRegex(mlir, r"\btidal\." + op + r"\b", f"{name}: no tidal.{op}")

    def test_static_reshapes_bind_the_batch(self):
        for name, types in EXPECTED_RESHAPES.items():
            with self.subTest(model=name):
                lines = [l for l in self.imported(name).splitlines() if re.search(r"\btidal\.reshape\b", l)]
                for ty in types:
                    self.assertTrue(any(ty in l for l in lines), f"{name}: no tidal.reshape producing {ty}")

    def test_shape_computations_fold(self):
        for name in SHAPE_FOLDED:
            with self.subTest(model=name):
                ints = [t for t in support.tensor_types(self.imported(name)) if re.search(r"[x<]i64>$", t)]
                self.assertFalse(ints, f"{name}: integer tensors left after import: {sorted(set(ints))}")

    def test_output_file_matches_stdout(self):
        out = os.path.join(self.tmp.name, "mlp_o.mlir")
        proc = support.run_tidalc(
            [support.model_path("mlp.onnx"), "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH), "-o", out]
        )
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertEqual(proc.stdout, "")
        with open(out) as f:
            self.assertEqual(f.read(), self.imported("mlp.onnx"))

    def test_freeze(self):
        path = support.model_path("mlp.onnx")
        proc = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH), "--freeze", "fc1.weight,fc1.bias"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        roles = main_roles(proc.stdout)
        self.assertEqual(roles["fc1.weight"][0], "constant")
        self.assertEqual(roles["fc1.bias"][0], "constant")
        self.assertEqual(roles["fc2.weight"][0], "param")
        bad = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH), "--freeze", "no.such.tensor"])
        problem = support.one_line_error_problem(bad, path)
        self.assertIsNone(problem, f"--freeze of an unknown name: {problem}\n{support.describe(bad)}")

    def test_static_batch_model(self):
        path = os.path.join(self.tmp.name, "lenet_b4.onnx")
        export.export("lenet", path, opset=13, batch=4)
        proc = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertEqual(main_roles(proc.stdout)["input"][1], "tensor<4x1x28x28xf32>")
        same = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", "4"])
        self.assertEqual(same.returncode, 0, support.describe(same))
        clash = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH)])
        problem = support.one_line_error_problem(clash, path)
        self.assertIsNone(problem, f"rebinding a static batch: {problem}\n{support.describe(clash)}")

    def test_symbolic_batch_without_batch_size(self):
        # Either a default binding or a clean error; never a crash.
        path = support.model_path("mlp.onnx")
        proc = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import"])
        if proc.returncode != 0:
            problem = support.one_line_error_problem(proc, path)
            self.assertIsNone(problem, f"{problem}\n{support.describe(proc)}")


@unittest.skipIf(_SKIP, _SKIP)
class MalformedModelsTest(unittest.TestCase):
    def check_clean_failure(self, name, path, proc):
        problem = support.one_line_error_problem(proc, path)
        self.assertIsNone(problem, f"{name}: {problem}\n{support.describe(proc)}")
        self.assertEqual(proc.stdout, "", f"{name}: a failed compile prints no IR")

    def test_malformed_models_fail_cleanly(self):
        for name in gen.malformed_models():
            path = support.model_path(name)
            with self.subTest(model=name), tempfile.TemporaryDirectory() as tmp:
                args = [path, "--emit", "mlir", "--stop-after", "import", "--batch-size", str(BATCH)]
                proc = support.run_tidalc(args, timeout=60)
                self.check_clean_failure(name, path, proc)
                for alternatives in gen.MODELS[name].expect:
                    self.assertTrue(
                        any(a in proc.stderr for a in alternatives),
                        f"{name}: the error should mention {' or '.join(alternatives)}: {proc.stderr!r}",
                    )

                out = os.path.join(tmp, "out.mlir")
                proc = support.run_tidalc(args + ["-o", out], timeout=60)
                self.check_clean_failure(name, path, proc)
                self.assertFalse(os.path.exists(out), f"{name}: -o file created on failure")
                self.assertEqual(os.listdir(tmp), [], f"{name}: temporary files left behind")

                with open(out, "w") as f:
                    f.write("sentinel\n")
                proc = support.run_tidalc(args + ["-o", out], timeout=60)
                self.check_clean_failure(name, path, proc)
                with open(out) as f:
                    self.assertEqual(f.read(), "sentinel\n", f"{name}: an existing -o file was touched")
                self.assertEqual(os.listdir(tmp), ["out.mlir"], f"{name}: temporary files left behind")

    def test_missing_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "does_not_exist.onnx")
            proc = support.run_tidalc([path, "--emit", "mlir", "--stop-after", "import"])
            self.check_clean_failure("missing file", path, proc)

    def test_directory_as_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = support.run_tidalc([tmp, "--emit", "mlir", "--stop-after", "import"])
            self.check_clean_failure("directory", tmp, proc)


if __name__ == "__main__":
    unittest.main()
