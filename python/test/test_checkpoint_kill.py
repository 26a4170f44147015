"""Crash safety of periodic checkpoints (docs/executable.md "Checkpoints
and --resume"): training runs are killed with SIGKILL at random moments,
during checkpoint writes included, and rerun with the same command line and
--resume until they finish; every finished run's weights and optimizer
state must equal the uninterrupted run's bit for bit. A model with Dropout
(random state) trained on shuffled data (data order) with Adam (optimizer
state) covers everything a checkpoint has to carry.

Also: a checkpoint write that fails (a file-size limit, as a full disk)
gives one error line and leaves the last good checkpoint intact.
"""
import os
import random
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import numpy as np

import support

TRIALS = 20


def export_model(path):
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 384), nn.ReLU(), nn.Dropout(0.25), nn.Linear(384, 384), nn.ReLU(),
                          nn.Dropout(0.25), nn.Linear(384, 10))
    model.train()
    torch.onnx.export(model, (torch.randn(32, 64),), path, input_names=["input"], output_names=["output"],
                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class CheckpointKillTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="tidal-kill-")
        model = os.path.join(cls.work, "model.onnx")
        export_model(model)
        cls.exe = os.path.join(cls.work, "train")
        proc = support.run_tidalc([model, "-o", cls.exe, "--batch-size", "32", "--loss", "cross-entropy",
                                   "--optimizer", "adam", "--lr", "0.001"], timeout=600)
        assert proc.returncode == 0, support.describe(proc)
        rng = np.random.default_rng(3)
        np.save(os.path.join(cls.work, "x.npy"), rng.standard_normal((200, 64)).astype(np.float32))
        np.save(os.path.join(cls.work, "y.npy"), rng.integers(0, 10, 200).astype(np.int64))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def argv(self, ckdir, save, steps=40):
        w = self.work
        return [self.exe, "--input", f"input={w}/x.npy", "--input", f"label={w}/y.npy", "--steps", str(steps),
                "--shuffle", "--seed", "7", "--checkpoint-every", "2", "--resume", ckdir, "--save", save, "--quiet",
                "--threads", "1"]

    def test_killed_runs_resume_bit_identical(self):
        ref_dir, ref = os.path.join(self.work, "ref_ck"), os.path.join(self.work, "ref.onnx")
        start = time.monotonic()
        proc = subprocess.run(self.argv(ref_dir, ref), capture_output=True, text=True, timeout=300)
        duration = time.monotonic() - start
        self.assertEqual(proc.returncode, 0, proc.stderr)
        expected = support.saved_initializers(ref)
        self.assertIn("checkpoints 20", proc.stdout)

        rng = random.Random(11)
        kills = during_write = resumed = 0
        for trial in range(TRIALS):
            ckdir, out = os.path.join(self.work, f"ck{trial}"), os.path.join(self.work, f"out{trial}.onnx")
            for attempt in range(12):
                p = subprocess.Popen(self.argv(ckdir, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
                if attempt < 10:
                    # Most kills land past the first checkpoint; a few early.
                    time.sleep(rng.uniform(0.0, duration))
                if p.poll() is None and attempt < 10:
                    p.send_signal(signal.SIGKILL)
                    p.communicate()
                    kills += 1
                    if os.path.isdir(ckdir) and any(".tmp." in name for name in os.listdir(ckdir)):
                        during_write += 1
                    continue
                stdout, stderr = p.communicate(timeout=300)
                self.assertEqual(p.returncode, 0, stderr)
                resumed += "resuming from" in stderr
                break
            with self.subTest(trial=trial):
                got = support.saved_initializers(out)
                self.assertEqual(sorted(got), sorted(expected))
                for name, value in expected.items():
                    self.assertEqual(got[name], value, name)
        print(f"\n{TRIALS} trials: {kills} SIGKILLs ({during_write} during a checkpoint write), "
              f"{resumed} finished runs resumed from a checkpoint; all bit-identical")
        self.assertGreaterEqual(kills, TRIALS)
        self.assertGreaterEqual(during_write, 1)

    def test_sim_target_resumes_bit_identical(self):
        """On a device target the checkpoint reads the weights from device
        memory and --resume writes them back there."""
        exe = os.path.join(self.work, "train_sim")
        proc = support.run_tidalc([os.path.join(self.work, "model.onnx"), "-o", exe, "--batch-size", "32", "--loss",
                                   "cross-entropy", "--optimizer", "adam", "--lr", "0.001", "--target", "sim",
                                   "--device-memory", "64MiB"], timeout=600)
        self.assertEqual(proc.returncode, 0, support.describe(proc))

        def run(steps, ckdir, save):
            argv = [exe] + self.argv(ckdir, save, steps=steps)[1:]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return proc

        whole = os.path.join(self.work, "sim_whole.onnx")
        run(8, os.path.join(self.work, "sim_whole_ck"), whole)
        ckdir, part = os.path.join(self.work, "sim_ck"), os.path.join(self.work, "sim_part.onnx")
        run(5, ckdir, part)
        os.remove(os.path.join(ckdir, "step-000000000005.onnx"))
        proc = run(8, ckdir, part)
        self.assertIn("(step 4 of 8)", proc.stderr)
        self.assertEqual(support.saved_initializers(part), support.saved_initializers(whole))

    def test_failed_checkpoint_write_keeps_the_last_good_one(self):
        ckdir, out = os.path.join(self.work, "full_ck"), os.path.join(self.work, "full.onnx")
        proc = subprocess.run(self.argv(ckdir, out, steps=2), capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        good = os.path.join(ckdir, "step-000000000002.onnx")
        with open(good, "rb") as f:
            good_bytes = f.read()
        limit = len(good_bytes) // 2

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

        proc = subprocess.run(self.argv(ckdir, out, steps=6), capture_output=True, text=True, timeout=300,
                              preexec_fn=small_files)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 2, proc.stderr)
        self.assertIn(f"resuming from {good} (step 2 of 6)", lines[0])
        self.assertIn(f"error: checkpoint at step 4: {ckdir}/step-000000000004.onnx: cannot write: File too large "
                      f"(the earlier checkpoints in {ckdir} are intact)", proc.stderr)
        self.assertEqual(sorted(os.listdir(ckdir)), ["step-000000000002.onnx"])
        with open(good, "rb") as f:
            self.assertEqual(f.read(), good_bytes)


if __name__ == "__main__":
    unittest.main()
