"""Models with ONNX external data (how models over 2 GiB are stored),
through the whole path at a small size: tidalc compiles the external
weights into the executable (it runs with the data file gone), training
matches the same model stored inline bit for bit, --save writes external
data (FILE.onnx.data) when the model came so or with --save-external-data,
onnx.load reads it back, --init resumes from it, and bad external data is
one error line naming the initializer.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import support

_SKIP = support.skip_reason("tidalc")


def mlp(rng):
    """x [N, 16] -> Gemm 64 -> Relu -> Gemm 10; 5 KiB and 2.5 KiB weights."""
    inits = [
        numpy_helper.from_array((rng.standard_normal((64, 16)) * 0.3).astype(np.float32), "fc1.weight"),
        numpy_helper.from_array((rng.standard_normal(64) * 0.1).astype(np.float32), "fc1.bias"),
        numpy_helper.from_array((rng.standard_normal((10, 64)) * 0.2).astype(np.float32), "fc2.weight"),
        numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "fc2.bias"),
    ]
    nodes = [
        helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def weights(path):
    """{name: array} of a saved model (external data read by onnx)."""
    model = onnx.load(path)
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def is_external(path):
    model = onnx.load(path, load_external_data=False)
    return [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]


@unittest.skipIf(_SKIP, _SKIP)
class ExternalDataTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-external-")
        rng = np.random.default_rng(7)
        model = mlp(rng)
        cls.inline = os.path.join(cls.tmp, "inline.onnx")
        onnx.save(model, cls.inline)
        ext_dir = os.path.join(cls.tmp, "ext")
        os.makedirs(ext_dir)
        cls.external = os.path.join(ext_dir, "model.onnx")
        onnx.save_model(model, cls.external, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
        x = rng.standard_normal((32, 16)).astype(np.float32)
        y = rng.integers(0, 10, 32).astype(np.int64)
        cls.x, cls.y = os.path.join(cls.tmp, "x.npy"), os.path.join(cls.tmp, "y.npy")
        np.save(cls.x, x)
        np.save(cls.y, y)
        cls.exe_inline = cls.compile(cls.inline, "train-inline")
        cls.exe_external = cls.compile(cls.external, "train-external")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def compile(cls, model, name):
        exe = os.path.join(cls.tmp, name)
        subprocess.run([support.tool("tidalc"), model, "-o", exe, "--batch-size", "8", "--loss", "cross-entropy",
                        "--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"], check=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return exe

    def train(self, exe, *args, check=True):
        proc = subprocess.run([exe, "--input", f"input={self.x}", "--input", f"label={self.y}", "--steps", "3",
                               "--quiet", "--threads", "1", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        if check:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def out(self, name):
        return os.path.join(self.tmp, name)

    def assert_same_weights(self, a, b):
        wa, wb = weights(a), weights(b)
        self.assertEqual(sorted(wa), sorted(wb))
        for name in wa:
            np.testing.assert_array_equal(wa[name], wb[name], err_msg=name)

    def test_compiled_in_external_weights_train_like_inline_ones(self):
        a = self.train(self.exe_inline, "--save", self.out("a.onnx"))
        # The data file is not needed once compiled: hide it.
        data = os.path.join(os.path.dirname(self.external), "weights.bin")
        os.rename(data, data + ".away")
        try:
            b = self.train(self.exe_external, "--save", self.out("b.onnx"))
        finally:
            os.rename(data + ".away", data)
        loss = [[l for l in p.stdout.splitlines() if l.startswith("final_loss")] for p in (a, b)]
        self.assertEqual(len(loss[0]), 1, a.stdout)
        self.assertEqual(loss[0], loss[1])
        self.assertEqual(is_external(self.out("a.onnx")), [])
        # A model given with external data is saved with external data.
        self.assertEqual(sorted(is_external(self.out("b.onnx"))),
                         ["fc1.weight", "fc1.weight.momentum_buffer", "fc2.weight", "fc2.weight.momentum_buffer"])
        self.assertTrue(os.path.isfile(self.out("b.onnx.data")))
        self.assert_same_weights(self.out("a.onnx"), self.out("b.onnx"))

    def test_save_external_data_and_resume_from_it(self):
        self.train(self.exe_inline, "--save", self.out("c.onnx"), "--save-external-data")
        self.assertIn("fc1.weight", is_external(self.out("c.onnx")))
        self.train(self.exe_inline, "--save", self.out("c_inline.onnx"))
        self.assert_same_weights(self.out("c.onnx"), self.out("c_inline.onnx"))
        # Resuming from external data equals resuming from the inline save.
        self.train(self.exe_inline, "--init", self.out("c.onnx"), "--save", self.out("d.onnx"))
        self.train(self.exe_inline, "--init", self.out("c_inline.onnx"), "--save", self.out("e.onnx"))
        self.assert_same_weights(self.out("d.onnx"), self.out("e.onnx"))
        self.assertNotEqual(weights(self.out("d.onnx"))["fc1.weight"].tolist(),
                            weights(self.out("c.onnx"))["fc1.weight"].tolist())

    def test_bad_external_data_is_one_line(self):
        broken = os.path.join(self.tmp, "broken")
        os.makedirs(broken, exist_ok=True)
        self.train(self.exe_inline, "--save", os.path.join(broken, "m.onnx"), "--save-external-data")
        os.remove(os.path.join(broken, "m.onnx.data"))
        proc = self.train(self.exe_inline, "--init", os.path.join(broken, "m.onnx"), check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn("initializer 'fc", lines[0])
        self.assertIn("m.onnx.data", lines[0])
        proc = self.train(self.exe_inline, "--save-external-data", check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("--save-external-data needs --save", proc.stderr)


if __name__ == "__main__":
    unittest.main()
