"""--threads auto on a busy machine (docs/executable.md "Threads on a busy
machine"): with every core taken by spinning processes the team shrinks
(the log, the trace and the summary say so), and the run trains the values
a fixed thread count trains, up to float32 rounding. The speed-up itself
is measured by bench/cpu_load.py, not here."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import support

CPUS = len(os.sched_getaffinity(0))


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
@unittest.skipIf(CPUS < 2, "one CPU: nothing to adapt")
class ThreadsAutoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        w = cls.work.name
        rng = np.random.default_rng(0)
        np.save(os.path.join(w, "x.npy"), rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
        np.save(os.path.join(w, "y.npy"), rng.integers(0, 10, 64).astype(np.int64))
        cls.exe = os.path.join(w, "train")
        proc = support.run_tidalc([support.model_path("lenet.onnx"), "-o", cls.exe, "--batch-size", "16", "--loss",
                                   "cross-entropy", "--optimizer", "sgd", "--lr", "0.01"])
        assert proc.returncode == 0, support.describe(proc)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def train(self, tag, threads, steps):
        w = self.work.name
        log, trace = os.path.join(w, f"{tag}.jsonl"), os.path.join(w, f"{tag}.json")
        proc = subprocess.run([self.exe, "--input", f"input={w}/x.npy", "--input", f"label={w}/y.npy",
                               "--steps", str(steps), "--threads", threads, "--log", log, "--trace", trace,
                               "--quiet"], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, OMP_NUM_THREADS=str(CPUS)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        return support.log_lines(log), summary, events

    def test_a_busy_machine_shrinks_the_team(self):
        steps = 400
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(CPUS)]
        try:
            log, summary, events = self.train("busy", "auto", steps)
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        threads = [entry["threads"] for entry in log]
        self.assertEqual(threads[0], CPUS)
        self.assertLess(min(threads), CPUS, f"the team never shrank: {threads}")
        self.assertGreaterEqual(int(summary["thread_changes"]), 1)
        self.assertLess(float(summary["threads_mean"]), CPUS)
        counts = [e["args"]["threads"] for e in events if e.get("name") == "threads" and e.get("ph") == "C"]
        self.assertEqual(counts[0], CPUS)
        self.assertIn(min(threads), counts)
        self.assertTrue(any(e.get("cat") == "threads" for e in events))

        # The same run at a fixed count: the same losses up to rounding.
        fixed, fixed_summary, _ = self.train("fixed", str(CPUS), steps)
        self.assertNotIn("threads_mean", fixed_summary)
        self.assertEqual({entry["threads"] for entry in fixed}, {CPUS})
        np.testing.assert_allclose([e["loss"] for e in log], [e["loss"] for e in fixed], rtol=1e-3)

    def test_forward_mode_adapts_too(self):
        w = self.work.name
        exe = os.path.join(w, "forward")
        proc = support.run_tidalc([support.model_path("lenet.onnx"), "-o", exe, "--mode", "forward", "--batch-size", "16"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        x = np.random.default_rng(1).standard_normal((16384, 1, 28, 28)).astype(np.float32)
        np.save(os.path.join(w, "xf.npy"), x)
        log = os.path.join(w, "forward.jsonl")
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(CPUS)]
        try:
            proc = subprocess.run([exe, "--input", f"input={w}/xf.npy", "--threads", "auto", "--log", log,
                                   "--output-dir", os.path.join(w, "fwd-out"), "--quiet"], capture_output=True,
                                  text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS=str(CPUS)))
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        threads = [entry["threads"] for entry in support.log_lines(log)]
        self.assertEqual(len(threads), 1024)
        self.assertEqual(threads[0], CPUS)
        self.assertLess(min(threads), CPUS, f"the team never shrank: {sorted(set(threads))}")

    def test_a_library_trainer_adapts_too(self):
        """tidal.Trainer(threads="auto"): the same governor after each step;
        counters() reports the count."""
        from tidal.trainer import Trainer

        w = self.work.name
        lib = os.path.join(w, "liblenet.so")
        proc = support.run_tidalc([support.model_path("lenet.onnx"), "-o", lib, "--emit", "lib", "--batch-size",
                                   "16", "--loss", "cross-entropy", "--optimizer", "sgd", "--lr", "0.01"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        x = np.load(os.path.join(w, "x.npy"))
        y = np.load(os.path.join(w, "y.npy"))
        with self.assertRaises(ValueError):
            Trainer(lib, threads=-3)
        trainer = Trainer(lib, threads="auto")
        # It starts at the cores this process may use, whatever OpenMP's
        # count in the process (importing torch may have lowered it).
        self.assertEqual(trainer.counters()["threads"], CPUS)
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(CPUS)]
        seen = set()
        try:
            for i in range(400):
                r = slice((i % 4) * 16, (i % 4) * 16 + 16)
                self.assertTrue(np.isfinite(trainer.step(x[r], y[r])))
                seen.add(trainer.counters()["threads"])
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        self.assertLess(min(seen), max(seen), f"the team never shrank: {seen}")


if __name__ == "__main__":
    unittest.main()
