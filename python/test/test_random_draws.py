"""Random draws (RandomNormal[Like], RandomUniform[Like], Bernoulli) in a
compiled executable: exactly the values tidal.random_draws computes from
(seed, step, stream, element) as docs/runtime-abi.md defines them, in
forward mode (a batch is a step) and in training (--seed), and correct in
distribution (mean, spread, Bernoulli's rate).

Needs TIDAL_BUILD_DIR with bin/tidalc."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import support
from tidal import random_draws

_SKIP = support.skip_reason("tidalc")
WIDTH = 2000


def save(path, nodes, inputs, outputs, inits=()):
    m = helper.make_model(helper.make_graph(nodes, "draws", inputs, outputs, list(inits)),
                          opset_imports=[helper.make_opsetid("", 15)])
    m.ir_version = 8
    onnx.save(m, path)


def value(name, elem=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


@unittest.skipIf(_SKIP, _SKIP)
class RandomDrawsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tidal-random-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_ok(self, argv, timeout=300):
        proc = support.run(argv, timeout=timeout)
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        return proc

    def test_forward_draws_are_the_documented_stream(self):
        # Streams in program order: normal 0, uniform 1, Bernoulli's draw 2.
        n = helper.make_node
        save(self.path("fw.onnx"), [
            n("RandomNormalLike", ["x"], ["eps"], mean=0.5, scale=2.0),
            n("RandomUniformLike", ["x"], ["u"], low=-1.0, high=3.0, dtype=TensorProto.DOUBLE),
            n("Bernoulli", ["p"], ["coin"]),
            n("Add", ["x", "eps"], ["y"]),
        ], [value("x", shape=["N", WIDTH]), value("p", shape=["N", WIDTH])],
            [value("y"), value("u", TensorProto.DOUBLE), value("coin")])
        batch, batches = 3, 2
        x = np.zeros((batch * batches, WIDTH), np.float32)
        p = np.full((batch * batches, WIDTH), 0.3, np.float32)
        np.save(self.path("x.npy"), x)
        np.save(self.path("p.npy"), p)
        exe = self.path("fw.exe")
        self.run_ok([support.tool("tidalc"), self.path("fw.onnx"), "--mode", "forward", "--batch-size",
                     str(batch), "-o", exe])
        out = self.path("out")
        self.run_ok([exe, "--input", f"x={self.path('x.npy')}", "--input", f"p={self.path('p.npy')}",
                     "--output-dir", out, "--quiet"])
        y, u, coin = (np.load(os.path.join(out, f"{k}.npy")) for k in ("y", "u", "coin"))
        shape = (batch, WIDTH)
        for step in range(batches):
            rows = slice(step * batch, (step + 1) * batch)
            np.testing.assert_array_equal(y[rows], random_draws.normal(shape, 0, step, 0, 0.5, 2.0))
            np.testing.assert_array_equal(
                u[rows], random_draws.uniform(shape, 0, step, 1, -1.0, 3.0, dtype=np.float64))
            want = (random_draws.uniform(shape, 0, step, 2) < 0.3).astype(np.float32)
            np.testing.assert_array_equal(coin[rows], want)
        # Different steps draw different values; the distributions hold.
        self.assertFalse(np.array_equal(y[:batch], y[batch:]))
        self.assertAlmostEqual(float(y.mean()), 0.5, delta=5 * 2.0 / np.sqrt(y.size))
        self.assertAlmostEqual(float(y.std()), 2.0, delta=0.05)
        self.assertTrue(u.min() >= -1.0 and u.max() < 3.0)
        self.assertAlmostEqual(float(u.mean()), 1.0, delta=5 * (4 / np.sqrt(12)) / np.sqrt(u.size))
        self.assertAlmostEqual(float(coin.mean()), 0.3, delta=5 * np.sqrt(0.21 / coin.size))

    def test_training_draws_follow_the_seed(self):
        # loss = mean((x * w + eps)^2), eps = RandomNormalLike(x): the first
        # step's loss, from the initial w, in NumPy with the executable's
        # noise for --seed S at step 0.
        n = helper.make_node
        w = np.linspace(0.5, 1.5, 8, dtype=np.float32).reshape(1, 8)
        save(self.path("train.onnx"), [
            n("RandomNormalLike", ["x"], ["eps"]),
            n("Mul", ["x", "w"], ["xw"]),
            n("Add", ["xw", "eps"], ["y"]),
            n("Mul", ["y", "y"], ["sq"]),
            n("ReduceMean", ["sq"], ["loss"], keepdims=0),
        ], [value("x", shape=["N", 8])], [value("loss", shape=[])], [numpy_helper.from_array(w, "w")])
        x = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
        np.save(self.path("x.npy"), x)
        exe = self.path("train.exe")
        self.run_ok([support.tool("tidalc"), self.path("train.onnx"), "--batch-size", "4", "--loss", "output",
                     "--optimizer", "sgd", "--lr", "0.01", "-o", exe])
        losses = {}
        for seed in (0, 7):
            log = self.path(f"log{seed}.jsonl")
            self.run_ok([exe, "--input", f"x={self.path('x.npy')}", "--steps", "2", "--seed", str(seed),
                         "--log", log])
            with open(log) as f:
                losses[seed] = [json.loads(line)["loss"] for line in f if line.strip()]
            eps = random_draws.normal((4, 8), seed, 0, 0).astype(np.float64)
            want = np.mean((x[:4].astype(np.float64) * w + eps) ** 2)
            self.assertAlmostEqual(losses[seed][0], want, delta=1e-5 * want)
        self.assertNotEqual(losses[0][0], losses[7][0])


if __name__ == "__main__":
    unittest.main()
