"""tidal.plan, tidal.plot and tidal.budget_curve (docs/plots.md): plans
read back with the figures they state, pictures that are real PNGs with
content, one-line CLI errors, and a budget curve whose budgets fall."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

import support

try:
    import matplotlib  # noqa: F401
except ImportError:  # pragma: no cover
    matplotlib = None

MODEL = "resnet20.onnx"
FLAGS = ["--batch-size", "8", "--loss", "cross-entropy"]


def png_check(test, path):
    with open(path, "rb") as f:
        data = f.read()
    test.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), path)
    test.assertGreater(len(data), 20000)
    import matplotlib.image
    image = matplotlib.image.imread(path)
    colours = {tuple((pixel * 255).astype(int)) for pixel in image[::7, ::7].reshape(-1, image.shape[-1])}
    test.assertGreater(len(colours), 20, "a blank or nearly blank picture")


@unittest.skipIf(matplotlib is None, "needs matplotlib (python3-matplotlib)")
@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class PlanPlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from tidal import plan
        cls.plan_module = plan
        cls.work = tempfile.TemporaryDirectory()
        cls.plans = {}
        for tag, extra in {"cpu": [], "swaps": ["--target", "sim", "--device-memory", "5MiB"],
                           "recompute": ["--target", "sim", "--device-memory", "9MiB", "--swap", "off"],
                           "host": ["--target", "sim", "--device-memory", "1700000"]}.items():
            path = os.path.join(cls.work.name, f"{tag}.json")
            proc = support.run_tidalc([support.model_path(MODEL), "--emit", "plan", "-o", path] + FLAGS + extra)
            assert proc.returncode == 0, support.describe(proc)
            cls.plans[tag] = path

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def test_occupancy_reaches_the_stated_peaks(self):
        for tag, path in self.plans.items():
            with self.subTest(tag=tag):
                plan = self.plan_module.load(path)
                occupancy = plan.occupancy()
                if plan.target == "cpu":
                    self.assertEqual(max(occupancy["host"]) + 128, plan.host_peak)  # + the constants
                else:
                    # The stated peak is the packed arena: the live bytes'
                    # maximum when packing meets its lower bound.
                    self.assertLessEqual(max(occupancy["device"]), plan.device_peak)
                    if tag != "host":
                        self.assertEqual(max(occupancy["device"]), plan.device_peak)
                    self.assertLessEqual(plan.device_peak, plan.budget or plan.device_peak)
                    self.assertLessEqual(max(occupancy["host"]), plan.host_peak)
        swaps = self.plan_module.load(self.plans["swaps"])
        self.assertGreater(len(swaps.swaps), 0)
        self.assertTrue(all(s.offload < min(s.prefetches) for s in swaps.swaps if s.prefetches))
        self.assertEqual(max(swaps.occupancy()["host"]), sum(s.bytes for s in swaps.swaps))
        self.assertGreater(len(self.plan_module.load(self.plans["recompute"]).recomputations), 0)
        self.assertGreater(len(self.plan_module.load(self.plans["host"]).host_ops), 0)
        self.assertIn("20 swaps", swaps.summary())

    def test_pictures(self):
        for tag, path in self.plans.items():
            with self.subTest(tag=tag):
                out = os.path.join(self.work.name, f"{tag}.png")
                self.plan_module.load(path).plot(out)
                png_check(self, out)
        out = os.path.join(self.work.name, "cli.png")
        proc = subprocess.run([sys.executable, "-m", "tidal.plot", self.plans["swaps"], "-o", out],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=support.PYTHON_DIR))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        png_check(self, out)

    def test_cli_errors_are_one_line(self):
        bad = os.path.join(self.work.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        other = os.path.join(self.work.name, "other.json")
        with open(other, "w") as f:
            json.dump({"format": "something-else"}, f)
        for path, text in [("/nonexistent/plan.json", "cannot read"), (bad, "not JSON"),
                           (other, "not a tidal plan")]:
            with self.subTest(path=path):
                proc = subprocess.run([sys.executable, "-m", "tidal.plot", path, "-o",
                                       os.path.join(self.work.name, "x.png")], capture_output=True, text=True,
                                      env=dict(os.environ, PYTHONPATH=support.PYTHON_DIR))
                self.assertEqual(proc.returncode, 1)
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                self.assertIn(text, proc.stderr)

    def test_budget_curve(self):
        out = os.path.join(self.work.name, "curve.png")
        proc = subprocess.run([sys.executable, "-m", "tidal.budget_curve", support.model_path(MODEL), "-o", out,
                               "--points", "3"] + FLAGS, capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=support.PYTHON_DIR), timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        png_check(self, out)
        with open(os.path.join(self.work.name, "curve.csv")) as f:
            rows = list(csv.DictReader(f))
        budgets = [int(r["budget_bytes"]) for r in rows]
        self.assertEqual(len(rows), 3)
        self.assertEqual(budgets, sorted(budgets, reverse=True))
        for r in rows:
            self.assertLessEqual(int(r["device_peak_bytes"]), int(r["budget_bytes"]))
        # The smallest budget needs more of the planner's mechanisms.
        self.assertGreater(int(rows[-1]["swaps"]) + int(rows[-1]["host_ops"]), int(rows[0]["swaps"]))


if __name__ == "__main__":
    unittest.main()
