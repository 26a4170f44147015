"""The executable's progress line (docs/executable.md "Output"): on a
terminal, one line redrawn in place with the epoch, step/steps, loss,
samples/s and ETA; off a terminal (and with --quiet) nothing."""
import os
import pty
import subprocess
import tempfile
import unittest

import numpy as np

import support


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class ProgressLineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        w = cls.work.name
        cls.exe = os.path.join(w, "train")
        proc = support.run_tidalc([support.model_path("mlp.onnx"), "-o", cls.exe, "--batch-size", "4", "--loss",
                                   "cross-entropy"])
        assert proc.returncode == 0, support.describe(proc)
        rng = np.random.default_rng(0)
        np.save(os.path.join(w, "x.npy"), rng.standard_normal((40, 64)).astype(np.float32))
        np.save(os.path.join(w, "y.npy"), rng.integers(0, 10, 40).astype(np.int64))
        cls.args = ["--input", f"input={w}/x.npy", "--input", f"label={w}/y.npy", "--epochs", "2"]

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def run_on_terminal(self, extra=()):
        leader, follower = pty.openpty()
        proc = subprocess.Popen([self.exe] + self.args + list(extra), stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        out = proc.stdout.read().decode()
        proc.stdout.close()
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait()
        os.close(leader)
        self.assertEqual(proc.returncode, 0)
        return out, b"".join(chunks).decode(errors="replace")

    def test_terminal_shows_the_epoch_line(self):
        out, err = self.run_on_terminal()
        self.assertIn("\r\x1b[K", err)  # redrawn in place
        self.assertIn("epoch 2/2 [", err)
        self.assertRegex(err, r"\] 20/20 loss [0-9.e+-]+  [0-9]+ samples/s  ETA [0-9:?]+")
        self.assertTrue(err.endswith("\r\x1b[K"), repr(err[-40:]))  # erased at the end
        self.assertIn("epoch 2 mean_loss", out)  # stdout keeps its lines

    def test_quiet_and_pipes_draw_nothing(self):
        _, err = self.run_on_terminal(["--quiet"])
        self.assertEqual(err, "")
        proc = subprocess.run([self.exe] + self.args, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stderr, "")


if __name__ == "__main__":
    unittest.main()
