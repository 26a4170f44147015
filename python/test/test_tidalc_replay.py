"""scripts/tidalc_replay.py and TIDAL_EXPORT_CACHE: how the GPU checks carry
tidalc's results to a machine without tidalc (docs/cuda.md, "Running the
GPU checks").

A recording of a plan, an executable and a failing call, replayed in
another directory, gives the same exit statuses and diagnostics, the same
plan bytes, and an executable linked again from the recorded object that
trains bit for bit like one tidalc linked; an unrecorded call fails with one
line; the export cache hands back the exported bytes.

Needs TIDAL_BUILD_DIR with bin/tidalc and lib/libtidalrt*.a.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import support
from tidal import training

_SKIP = support.skip_reason("tidalc")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "scripts", "tidalc_replay.py")


@unittest.skipIf(_SKIP, _SKIP)
class TidalcReplayTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tidal-replay-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def shim(self, mode, args, cwd):
        env = dict(os.environ, TIDAL_REPLAY=mode, TIDAL_REPLAY_DIR=os.path.join(self.tmp, "rec"),
                   TIDAL_REAL_TIDALC=support.tool("tidalc"),
                   TIDAL_REPLAY_RUNTIME_DIR=os.path.join(support.BUILD_DIR, "lib"))
        return subprocess.run([sys.executable, SHIM] + args, cwd=cwd, capture_output=True, text=True,
                              env=env, timeout=300)

    def test_record_then_replay(self):
        case = training.CASES_BY_NAME["mlp_digits_sgd"]
        cache = os.path.join(self.tmp, "onnx")
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        os.makedirs(a)
        os.makedirs(b)
        old = os.environ.get("TIDAL_EXPORT_CACHE")
        os.environ["TIDAL_EXPORT_CACHE"] = cache
        try:
            training.export_case(case, os.path.join(a, "m.onnx"))
            self.assertEqual(len(os.listdir(cache)), 1)
            training.export_case(case, os.path.join(b, "m.onnx"))  # from the cache
        finally:
            if old is None:
                del os.environ["TIDAL_EXPORT_CACHE"]
            else:
                os.environ["TIDAL_EXPORT_CACHE"] = old
        with open(os.path.join(a, "m.onnx"), "rb") as fa, open(os.path.join(b, "m.onnx"), "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

        flags = ["--target", "sim"] + training.tidalc_flags(case)
        calls = [["m.onnx", "-o", "plan.json", "--emit", "plan"] + flags,
                 ["m.onnx", "-o", "train"] + flags,
                 ["m.onnx", "-o", "small.json", "--emit", "plan", "--device-memory", "1", "--host-layers", "off"] + flags]
        recorded = [self.shim("record", c, a) for c in calls]
        self.assertEqual([p.returncode for p in recorded[:2]], [0, 0], [support.describe(p) for p in recorded])
        self.assertEqual(recorded[2].returncode, 1, support.describe(recorded[2]))
        replayed = [self.shim("replay", c, b) for c in calls]
        for r, p in zip(recorded, replayed):
            self.assertEqual((p.returncode, p.stdout, p.stderr), (r.returncode, r.stdout, r.stderr))
        with open(os.path.join(a, "plan.json"), "rb") as fa, open(os.path.join(b, "plan.json"), "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

        losses = []
        for d in (a, b):
            inputs = training.write_inputs(case, d)
            log = os.path.join(d, "log.jsonl")
            proc = support.run([os.path.join(d, "train")] + inputs + ["--steps", "3", "--log", log, "--quiet"],
                               timeout=120)
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            losses.append([l["loss"] for l in support.log_lines(log)])
        self.assertEqual(len(losses[0]), 3)
        self.assertEqual(losses[0], losses[1])

        missing = self.shim("replay", ["m.onnx", "-o", "x", "--target", "cpu"], b)
        self.assertEqual(missing.returncode, 3)
        self.assertEqual(len(missing.stderr.strip().splitlines()), 1, missing.stderr)
        self.assertIn("no recording of tidalc", missing.stderr)


if __name__ == "__main__":
    unittest.main()
