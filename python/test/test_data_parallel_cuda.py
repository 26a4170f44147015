"""Data-parallel training on several GPUs (tidalc --target cuda
--distributed nccl, docs/distributed.md): the ranks' gradients are summed by
NCCL on the GPUs, launched by mpirun with one GPU per rank (the launcher's
local rank picks it). Against the cpu target's single process of the same
global batch, as test_data_parallel.py checks the MPI backend:

- 2 ranks (and 4 where the machine has 4 GPUs) follow the single-process
  run: per-step losses and final weights within float32 summation-order
  tolerance (NCCL's sums are not in rank order), for the MLP, LeNet and
  VGG-BN with --sync-batch-norm;
- ZeRO stage 1 and 2 (--shard optimizer|gradients: NCCL's all-gather and
  reduce-scatter), one bucket per tensor included;
- a repeated run is bit-identical (NCCL's sums are deterministic for a
  fixed number of GPUs).

Skips, naming the reason, without a tidalc that links --distributed nccl
programs, mpirun, or two usable GPUs. TIDAL_CUDA_PREBUILD=1 is not
supported here (the GPU checks run it on the GPU machine itself).
"""
import os
import shutil
import subprocess
import unittest

import numpy as np

import support
from test_data_parallel import MPIRUN, DataParallelCase, saved_arrays, mpirun

_SKIP = support.skip_reason("tidalc") or (None if MPIRUN else "mpirun is not installed (openmpi-bin)")
_gpus = None


def gpu_count():
    """The GPUs nvidia-smi lists (0 without the tool or a driver)."""
    global _gpus
    if _gpus is None:
        tool = shutil.which("nvidia-smi")
        _gpus = 0
        if tool:
            proc = subprocess.run([tool, "-L"], capture_output=True, text=True)
            if proc.returncode == 0:
                _gpus = sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))
    return _gpus


@unittest.skipIf(_SKIP, _SKIP)
class NcclDataParallelTest(DataParallelCase):
    @classmethod
    def setUpClass(cls):
        if gpu_count() < 2:
            raise unittest.SkipTest(f"needs 2 GPUs, one per rank (nvidia-smi lists {gpu_count()})")
        super().setUpClass()

    def ranks(self):
        return [2, 4] if gpu_count() >= 4 else [2]

    def cuda(self, *flags):
        return ["--target", "cuda", "--device-memory", "1GiB"] + list(flags)

    def test_mlp_nesterov_and_a_repeated_run(self):
        work, inputs, exes = self.check_case("mlp_digits_nesterov", self.ranks(), self.cuda())
        first = saved_arrays(os.path.join(work, "out_r2.onnx"))
        _, again = self.train(exes[2], inputs, work, "r2_again", 2)
        for key in first:
            np.testing.assert_array_equal(np.asarray(again[key]), np.asarray(first[key]), err_msg=key)

    def test_lenet(self):
        self.check_case("lenet_momentum", self.ranks(), self.cuda())

    def test_sync_batch_norm(self):
        self.check_case("vgg_bn13_momentum_wd", [2], self.cuda("--sync-batch-norm"))

    def test_sharded_optimizer_and_gradients(self):
        for shard in ("optimizer", "gradients"):
            self.check_case("regressor_adam", self.ranks(), self.cuda("--shard", shard))
            self.check_case("regressor_adam", [2], self.cuda("--shard", shard, "--bucket-size", "1"))

    def test_the_wrong_number_of_ranks(self):
        work, inputs, exes = self.compile_case("mlp_digits_sgd", [2], self.cuda())
        proc = mpirun(1, [exes[2]] + inputs + ["--steps", "1"])
        self.assertEqual(proc.returncode, 1, support.describe(proc))
        self.assertIn("compiled for 2 ranks", proc.stderr)


if __name__ == "__main__":
    unittest.main()
