"""tidal.plan, tidal.plot and tidal.budget_curve (docs/plots.md): plans read
back with the figures they state (occupancy recomputed from the tensors
meets the stated peaks), pictures that are real PNGs with content, one-line
CLI errors, and budget curves whose budgets fall."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import support

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image
except ImportError:  # pragma: no cover
    matplotlib = None

FLAGS = ["--batch-size", "8", "--loss", "cross-entropy"]
SIM = ["--target", "sim"]
# tag: (model, extra tidalc flags); ResNet-20 at batch 8 needs 13.3 MiB all on the device.
PLANS = {
    "cpu": ("resnet20.onnx", []),
    "all-device": ("lenet.onnx", SIM),
    "swaps": ("resnet20.onnx", SIM + ["--device-memory", "5MiB"]),
    "recompute": ("resnet20.onnx", SIM + ["--device-memory", "9MiB", "--swap", "off"]),
    "host": ("resnet20.onnx", SIM + ["--device-memory", "1700000"]),  # streamed parameters, a host layer
    "all-host": ("mlp.onnx", SIM + ["--device-memory", "1"]),  # every kernel on the host
}


def python(*args, timeout=120):
    return subprocess.run([sys.executable, "-m"] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=support.PYTHON_DIR))


def check_png(test, path):
    with open(path, "rb") as f:
        data = f.read()
    test.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), f"{path} is not a PNG")
    test.assertGreater(len(data), 15000, path)
    image = matplotlib.image.imread(path)
    test.assertGreater(image.shape[0], 300)
    test.assertGreater(image.shape[1], 500)
    test.assertGreater(float(image[..., :3].std()), 0.05, f"{path}: nearly uniform")
    colours = {tuple(p) for p in (image[::5, ::5, :3] * 255).astype(int).reshape(-1, 3)}
    test.assertGreater(len(colours), 20, f"{path}: a blank or nearly blank picture")


NO_MATPLOTLIB = "needs matplotlib (python3-matplotlib)" if matplotlib is None else None
needs_matplotlib = unittest.skipIf(matplotlib is None, NO_MATPLOTLIB)


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class PlanPlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from tidal import plan
        cls.plan_module = plan
        cls.work = tempfile.TemporaryDirectory()
        cls.paths = {}
        for tag, (model, extra) in PLANS.items():
            path = os.path.join(cls.work.name, f"{tag}.json")
            proc = support.run_tidalc([support.model_path(model), "--emit", "plan", "-o", path] + FLAGS + extra)
            assert proc.returncode == 0, support.describe(proc)
            cls.paths[tag] = path
        cls.plans = {tag: plan.load(path) for tag, path in cls.paths.items()}

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def path(self, name):
        return os.path.join(self.work.name, name)

    def test_occupancy_meets_the_stated_peaks(self):
        for tag, plan in self.plans.items():
            with self.subTest(tag=tag):
                occ = plan.occupancy()
                self.assertEqual(len(occ.device), plan.positions)
                # From the tensors' homes and buffer lifetimes alone: the
                # highest byte in use is the packed arena, the stated peak.
                self.assertEqual(occ.device_peak, plan.device_peak)
                self.assertEqual(occ.host_peak, plan.host_peak)
                if plan.on_device:
                    self.assertEqual(occ.device, plan.live_bytes)
                    self.assertEqual(occ.host, plan.host_live_bytes or [0] * plan.positions)
                    self.assertLessEqual(plan.device_peak, plan.budget or plan.device_peak)
                else:
                    self.assertEqual(occ.host, plan.live_bytes)
                    self.assertEqual(set(occ.device), {0})
                # The bytes live reach the lower bound; the arena is above it only where packing misses it.
                self.assertEqual(max(plan.live_bytes), plan.arenas["step"]["lower_bound_bytes"])
                self.assertLessEqual(max(plan.live_bytes), plan.arenas["step"]["bytes"])
        host = self.plans["host"].occupancy()
        self.assertLess(max(host.device), host.device_peak, "this plan's packing is above its lower bound")

    def test_objects(self):
        cpu, swaps, recompute, host = (self.plans[t] for t in ("cpu", "swaps", "recompute", "host"))
        for plan in self.plans.values():
            self.assertEqual([op.position for op in plan.ops], list(range(1, plan.positions - 1)))
            ids = {t.id for t in plan.tensors}
            self.assertTrue(all(set(op.reads + op.writes) <= ids for op in plan.ops))
            self.assertTrue(all(op.end_us >= op.start_us for op in plan.ops))
        self.assertIsNone(cpu.budget)
        self.assertFalse(cpu.on_device or cpu.swaps or cpu.host_ops)
        self.assertEqual({t.placement for t in cpu.tensors} - {"constant"}, {"host"})
        self.assertEqual(len(swaps.swaps), 20)
        for s in swaps.swaps:
            self.assertLess(s.offload, s.offload_wait)
            self.assertLessEqual(s.offload_wait, s.off_device[1])
            self.assertTrue(all(p.position < p.wait for p in s.prefetches))
        # Every offloaded copy is live at once at the host arena's peak.
        self.assertEqual(max(swaps.occupancy().host), sum(s.bytes for s in swaps.swaps))
        self.assertEqual(len(recompute.recomputations), len(recompute.clones))
        for r in recompute.recomputations:
            self.assertLess(r.dropped[0], r.dropped[1])
            self.assertEqual(r.dropped[1], r.position)
            self.assertIsNotNone(recompute.op_at(r.position).recompute_of)
        self.assertGreater(len(host.host_layers), 0)
        self.assertTrue(all(op.device == "host" for op in host.host_layers))
        self.assertEqual(len(host.streamed), 65)  # every parameter
        self.assertGreater(len(host.sent_to_host), 0)
        self.assertTrue(all(t.space == "host" for t in host.streamed))
        self.assertEqual(len(self.plans["all-host"].host_ops), len(self.plans["all-host"].ops) - sum(
            op.op in ("tidal.offload", "tidal.prefetch", "tidal.wait") or not op.kernel
            for op in self.plans["all-host"].ops))
        self.assertEqual(self.plans["all-host"].device_peak, 0)

    def test_summary_and_load(self):
        summary = self.plans["swaps"].summary()
        self.assertIn("20 swaps", summary)
        self.assertIn("resnet20.onnx on sim", summary)
        self.assertLessEqual(len(summary.splitlines()), 6)
        self.assertIn(f"{len(self.plans['host'].host_layers)} layers", self.plans["host"].summary())
        self.assertLessEqual(len(self.plans["cpu"].summary().splitlines()), 3)
        with open(self.paths["swaps"]) as f:
            doc = json.load(f)
        self.assertEqual(self.plan_module.load(doc).device_peak, self.plans["swaps"].device_peak)
        with self.assertRaisesRegex(self.plan_module.PlanError, "version 2"):
            self.plan_module.load(dict(doc, version=2))
        with self.assertRaisesRegex(self.plan_module.PlanError, "malformed plan"):
            self.plan_module.load(dict(doc, schedule=[{"op": "x"}]))

    @needs_matplotlib
    def test_pictures(self):
        for tag, plan in self.plans.items():
            with self.subTest(tag=tag):
                out = self.path(f"{tag}.png")
                plan.plot(out)
                check_png(self, out)
        out = self.path("cli.png")
        proc = python("tidal.plot", self.paths["host"], "-o", out, "--title", "host layers")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        check_png(self, out)
        svg = self.path("swaps.svg")
        self.assertEqual(python("tidal.plot", self.paths["swaps"], "-o", svg).returncode, 0)
        with open(svg) as f:
            self.assertIn("<svg", f.read(2000))

    def test_cli_errors_are_one_line(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        other = self.path("other.json")
        with open(other, "w") as f:
            json.dump({"format": "something-else"}, f)
        out = self.path("x.png")
        for args, text in [(["/nonexistent/plan.json", "-o", out], "cannot read"), ([bad, "-o", out], "not JSON"),
                           ([other, "-o", out], "not a tidal plan")] + ([] if matplotlib is None else [
                               ([self.paths["cpu"], "-o", "/nonexistent/dir/x.png"], "/nonexistent/dir/x.png")]):
            with self.subTest(args=args):
                proc = python("tidal.plot", *args)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                self.assertIn(text, proc.stderr)
        proc = python("tidal.budget_curve", support.model_path("mlp.onnx"), "--target", "cpu", "-o", out)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)

    def curve(self, name, model, flags):
        out = self.path(f"{name}.png")
        proc = python("tidal.budget_curve", support.model_path(model), "-o", out, "--points", "3", *flags)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        check_png(self, out)
        with open(self.path(f"{name}.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 3)
        budgets = [int(r["budget_bytes"]) for r in rows]
        self.assertEqual(budgets, sorted(set(budgets), reverse=True))
        for r in rows:
            self.assertLessEqual(int(r["device_peak_bytes"]), int(r["budget_bytes"]))
            self.assertEqual(r["measured_ms"], "")
        # The first budget is the all-device peak: nothing moves.
        self.assertEqual(int(rows[0]["device_peak_bytes"]), budgets[0])
        self.assertEqual([int(rows[0][k]) for k in ("swaps", "recomputations", "host_ops")], [0, 0, 0])
        return rows

    @needs_matplotlib
    def test_budget_curve_device_placement(self):
        # With every op on the device the swap loop takes the same steps
        # first at a smaller budget, so the predicted time cannot fall.
        rows = self.curve("device", "resnet20.onnx", FLAGS + ["--placement", "device"])
        times = [float(r["predicted_ms"]) for r in rows]
        self.assertEqual(times, sorted(times))
        self.assertGreater(int(rows[-1]["swaps"]), int(rows[1]["swaps"]))
        floor = support.run_tidalc([support.model_path("resnet20.onnx"), "--emit", "plan", "-o", self.path("f.json"),
                                    "--target", "sim", "--placement", "device", "--device-memory",
                                    str(int(rows[-1]["budget_bytes"]) - 1)] + FLAGS)
        self.assertIn(f"the smallest budget its plan reaches is {rows[-1]['budget_bytes']} bytes", floor.stderr)

    @needs_matplotlib
    def test_budget_curve_bisects_without_a_stated_floor(self):
        fake = self.path("tidalc-no-floor")
        with open(fake, "w") as f:
            f.write(f"#!/bin/sh\n{support.tool('tidalc')} \"$@\" 2>\"{fake}.err\"; rc=$?\n"
                    f"sed 's/: the smallest budget.*//' \"{fake}.err\" >&2; exit $rc\n")
        os.chmod(fake, 0o755)
        out = self.path("bisect.png")
        proc = subprocess.run([sys.executable, "-m", "tidal.budget_curve", support.model_path("lenet.onnx"), "-o", out,
                               "--points", "2", "--placement", "device"] + FLAGS, capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, PYTHONPATH=support.PYTHON_DIR, TIDAL_TIDALC=fake))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bisection", proc.stdout)
        with open(self.path("bisect.csv")) as f:
            rows = list(csv.DictReader(f))
        largest, smallest = int(rows[0]["budget_bytes"]), int(rows[-1]["budget_bytes"])
        stated = support.run_tidalc([support.model_path("lenet.onnx"), "--emit", "plan", "-o", self.path("1.json"),
                                     "--target", "sim", "--placement", "device", "--device-memory", "1"] + FLAGS)
        floor = int(re.search(r"smallest budget its plan reaches is ([0-9]+) bytes", stated.stderr).group(1))
        self.assertGreaterEqual(smallest, floor)
        self.assertLessEqual(smallest, floor + max(64, largest // 256))

    @needs_matplotlib
    def test_budget_curve_auto_placement(self):
        # The digits MLP fits 1 byte with every kernel on the host. Host
        # ops overlap device ops, and on sim both run on the same CPU, so the
        # predicted time is not monotone here; what the planner does is.
        rows = self.curve("auto", "mlp.onnx", FLAGS)
        self.assertEqual(int(rows[-1]["budget_bytes"]), 1)
        self.assertEqual(int(rows[-1]["device_peak_bytes"]), 0)
        self.assertGreater(int(rows[-1]["host_ops"]), int(rows[1]["host_ops"]))


if __name__ == "__main__":
    unittest.main()
