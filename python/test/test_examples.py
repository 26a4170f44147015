"""The examples in examples/ run, in a small size, and do what they say:
the digits MLP learns (and PyTorch agrees with its weights), the
character GPT's loss falls and it writes text from its vocabulary, the
ResNet trains on the sim device within a third of its memory and its plan
is drawn."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import support

EXAMPLES = os.path.join(support.REPO_ROOT, "examples")


def run_example(name, *args, timeout=600):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([support.PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name)] + list(args), capture_output=True,
                          text=True, timeout=timeout, env=env)


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class ExamplesTest(unittest.TestCase):
    def test_digits_mlp(self):
        proc = run_example("digits_mlp.py", "--epochs", "4", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        accuracy = float(re.search(r"PyTorch, with the weights tidal trained: test accuracy ([0-9.]+)",
                                   proc.stdout).group(1))
        self.assertGreater(accuracy, 0.85, proc.stdout)
        tidal_accuracy = float(re.findall(r"eval_accuracy ([0-9.]+)", proc.stdout)[-1])
        self.assertAlmostEqual(accuracy, tidal_accuracy, delta=0.01)

    def test_digits_mlp_on_the_sim_device(self):
        proc = run_example("digits_mlp.py", "--epochs", "1", "--quiet", "--target", "sim", "--device-memory",
                           "64KiB")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        peak = int(re.search(r"device peak ([0-9]+) bytes", proc.stdout).group(1))
        self.assertLessEqual(peak, 64 * 1024)

    def test_char_gpt(self):
        proc = run_example("char_gpt.py", "--steps", "40", "--sample", "60", "--width", "48", "--context", "32")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        first, last = map(float, re.search(r"first loss ([0-9.]+), last loss ([0-9.]+)", proc.stdout).groups())
        self.assertLess(last, first * 0.8, proc.stdout)
        text = proc.stdout.split("--- sample ---\n", 1)[1]
        self.assertGreaterEqual(len(text), 60)
        with open("/usr/share/common-licenses/GPL-3", encoding="utf-8") as f:
            vocabulary = set(f.read())
        self.assertTrue(set(text.rstrip("\n")) <= vocabulary, text)

    def test_resnet_on_the_sim_device_at_a_third_of_its_memory(self):
        with tempfile.TemporaryDirectory() as work:
            picture = os.path.join(work, "plan.png")
            proc = run_example("resnet_sim.py", "--steps", "3", "--batch", "8", "-o", picture)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            self.assertIn("weights equal the cpu target's: True", proc.stdout)
            peak, budget = map(int, re.search(r"measured device peak ([0-9]+) bytes \(budget ([0-9]+)\)",
                                              proc.stdout).groups())
            self.assertLessEqual(peak, budget)
            self.assertGreater(int(re.search(r"([0-9]+) swaps", proc.stdout).group(1)), 0)
            with open(picture, "rb") as f:
                self.assertTrue(f.read(8) == b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
