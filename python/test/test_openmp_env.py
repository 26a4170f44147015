"""The executable under OpenMP settings a shared machine may carry
(docs/executable.md "Threads"): OMP_DYNAMIC=true once hung the first
oneDNN convolution (its kernels wait at barriers for the team they were
planned for, and a dynamic team is smaller); OMP_THREAD_LIMIT below
--threads, and a passive wait policy, must train the same values."""
import os
import subprocess
import tempfile
import unittest

import numpy as np

import support


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class OpenMpEnvironmentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        w = cls.work.name
        rng = np.random.default_rng(0)
        np.save(os.path.join(w, "x.npy"), rng.standard_normal((16, 1, 28, 28)).astype(np.float32))
        np.save(os.path.join(w, "y.npy"), rng.integers(0, 10, 16).astype(np.int64))
        cls.exes = {}
        for target, extra in {"cpu": [], "sim": ["--target", "sim", "--device-memory", "4MiB"]}.items():
            exe = os.path.join(w, f"train_{target}")
            proc = support.run_tidalc([support.model_path("lenet.onnx"), "-o", exe, "--batch-size", "8", "--loss",
                                       "cross-entropy"] + extra)
            assert proc.returncode == 0, support.describe(proc)
            cls.exes[target] = exe

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def train(self, target, env):
        w = self.work.name
        out = os.path.join(w, f"out_{target}_{len(env)}.onnx")
        proc = subprocess.run([self.exes[target], "--input", f"input={w}/x.npy", "--input", f"label={w}/y.npy",
                               "--steps", "3", "--threads", "2", "--save", out, "--quiet"],
                              capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return support.saved_initializers(out)

    def test_settings_train_the_same_values(self):
        for target in ("cpu", "sim"):
            reference = self.train(target, {})
            for env in ({"OMP_DYNAMIC": "true"}, {"OMP_THREAD_LIMIT": "1"}, {"OMP_WAIT_POLICY": "passive"}):
                with self.subTest(target=target, env=env):
                    got = self.train(target, env)
                    self.assertEqual(sorted(got), sorted(reference))
                    for name in reference:
                        np.testing.assert_allclose(np.frombuffer(got[name], np.float32),
                                                   np.frombuffer(reference[name], np.float32),
                                                   rtol=1e-5, atol=1e-6, err_msg=name)


if __name__ == "__main__":
    unittest.main()
