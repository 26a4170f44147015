"""Data-parallel training across processes (tidalc --distributed mpi,
docs/distributed.md), on this machine's loopback with mpirun
--oversubscribe and one kernel thread per rank:

- 2 and 4 ranks follow the single-process run of the same global batch:
  per-step losses and final weights (optimizer state included) within
  float32 summation-order tolerance, for zoo models without BatchNorm
  (each rank's BatchNorm statistics are its own, as in PyTorch DDP) and
  for VGG-BN with --sync-batch-norm; on the cpu and the sim target;
- a repeated run is bit-identical, and every rank ends with the same bits
  (rank 0's --save against the others' final all-reduced state is
  implied: the run shares rank 0's initial weights and adds gradients in
  rank order);
- one rank compiled as --ranks 1 is the plain program, bit for bit;
- a program started on the wrong number of ranks says so; a killed rank
  ends the whole run with an error instead of a hang.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import support

MPIRUN = shutil.which("mpirun")
_SKIP = support.skip_reason("tidalc") or (None if MPIRUN else "mpirun is not installed (openmpi-bin)")
STEPS = 6
# Open MPI refuses to run as root without this consent.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMP_NUM_THREADS": "1",
           "TIDAL_COMM_TIMEOUT": "60"}


def saved_arrays(path):
    """Every initializer of the ONNX file at `path`, as arrays by name."""
    import onnx
    from onnx import numpy_helper
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


def mpirun(ranks, argv, timeout=300):
    return subprocess.run([MPIRUN, "--oversubscribe", "-n", str(ranks)] + argv, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **MPI_ENV))


class DataParallelCase(unittest.TestCase):
    """Compiling, training and comparing data-parallel runs (no tests of its
    own: DataParallelTest here, NcclDataParallelTest in
    test_data_parallel_cuda.py)."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="tidal-dp-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def compile_case(self, name, ranks_list, flags_for_ranks=()):
        """Exports zoo case `name`; compiles it for one process and for each
        of `ranks_list` ranks (with `flags_for_ranks` added); returns (dir,
        data flags, {ranks: exe})."""
        from tidal import training
        case = training.CASES_BY_NAME[name]
        work = os.path.join(self.work, "_".join([name] + [f.strip("-") for f in flags_for_ranks]))
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "model.onnx")
        training.export_case(case, model)
        flags = training.tidalc_flags(case)
        inputs = training.write_inputs(case, work)
        exes = {}
        for ranks in [0] + list(ranks_list):
            exe = os.path.join(work, f"train{ranks}")
            # The cuda target's collectives are NCCL's; the others' MPI's.
            backend = "nccl" if "cuda" in flags_for_ranks else "mpi"
            extra = ["--distributed", backend, "--ranks", str(ranks)] + list(flags_for_ranks) if ranks else []
            proc = support.run_tidalc([model, "-o", exe] + flags + extra, timeout=600)
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            exes[ranks] = exe
        return work, inputs, exes

    def train(self, exe, inputs, work, tag, ranks=None):
        """Trains STEPS shuffled steps; returns (losses, saved tensors)."""
        log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
        argv = [exe] + inputs + ["--steps", str(STEPS), "--shuffle", "--seed", "5", "--log", log, "--save", out,
                                 "--quiet", "--threads", "1"]
        if ranks:
            proc = mpirun(ranks, argv)
        else:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                                  env=dict(os.environ, OMP_NUM_THREADS="1"))
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}: {support.describe(proc)}")
        return [line["loss"] for line in support.log_lines(log)], saved_arrays(out)

    def check_case(self, name, ranks_list, flags_for_ranks=()):
        work, inputs, exes = self.compile_case(name, ranks_list, flags_for_ranks)
        base_losses, base_saved = self.train(exes[0], inputs, work, "single")
        self.assertEqual(len(base_losses), STEPS)
        for ranks in ranks_list:
            with self.subTest(model=name, ranks=ranks):
                losses, saved = self.train(exes[ranks], inputs, work, f"r{ranks}", ranks)
                self.assertEqual(len(losses), STEPS, "only rank 0 logs, every step")
                np.testing.assert_allclose(losses, base_losses, rtol=2e-5, atol=1e-6,
                                           err_msg="global mean losses differ from one process")
                self.assertEqual(sorted(saved), sorted(base_saved))
                for key, ref in base_saved.items():
                    if ref.dtype.kind != "f" or not ref.size:
                        np.testing.assert_array_equal(saved[key], ref, err_msg=key)
                        continue
                    # Relative, with an absolute floor for tensors that are
                    # rounding noise (the key bias's gradient is zero in
                    # exact arithmetic: softmax ignores a shift of the keys).
                    ref, ours = ref.astype(np.float64), saved[key].astype(np.float64)
                    diff, bound = np.linalg.norm(ours - ref), 1e-4 * np.linalg.norm(ref) + 1e-7 * np.sqrt(ref.size)
                    self.assertLessEqual(diff, bound, f"{key}: |difference| {diff:.2e}, |ref| {np.linalg.norm(ref):.2e}")
        return work, inputs, exes


@unittest.skipIf(_SKIP, _SKIP)
class DataParallelTest(DataParallelCase):
    def test_mlp_nesterov_on_2_and_4_ranks(self):
        work, inputs, exes = self.check_case("mlp_digits_nesterov", [2, 4])
        # Bit-identical when repeated.
        first = saved_arrays(os.path.join(work, "out_r4.onnx"))
        _, again = self.train(exes[4], inputs, work, "r4_again", 4)
        for key in first:
            np.testing.assert_array_equal(np.asarray(again[key]), np.asarray(first[key]), err_msg=key)

    def test_lenet_on_2_ranks(self):
        self.check_case("lenet_momentum", [2])

    def test_regressor_adam_mse_on_2_and_4_ranks(self):
        self.check_case("regressor_adam", [2, 4])

    def test_transformer_adamw_on_2_ranks(self):
        self.check_case("transformer13_adamw", [2])

    def test_sync_batch_norm_on_2_ranks(self):
        # Global BatchNorm statistics: the BN nets follow the single-process
        # run too (running statistics included).
        self.check_case("vgg_bn13_momentum_wd", [2], ["--sync-batch-norm"])

    def test_sharded_optimizer_on_2_and_4_ranks(self):
        # ZeRO stage 1: each rank updates and keeps its chunk of every
        # parameter's optimizer state; --save gathers the whole state.
        self.check_case("mlp_digits_nesterov", [2, 4], ["--shard", "optimizer"])
        work, inputs, exes = self.check_case("regressor_adam", [2, 4], ["--shard", "optimizer"])
        # Saved, then resumed with --init (each rank takes its chunk back):
        # bit for bit the uninterrupted run.
        half = os.path.join(work, "half.onnx")
        argv = [exes[4]] + inputs + ["--shuffle", "--seed", "5", "--quiet", "--threads", "1"]
        self.assertEqual(mpirun(4, argv + ["--steps", "3", "--save", half]).returncode, 0)
        rest = os.path.join(work, "rest.onnx")
        proc = mpirun(4, argv + ["--steps", str(STEPS - 3), "--init", half, "--save", rest])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        whole, resumed = saved_arrays(os.path.join(work, "out_r4.onnx")), saved_arrays(rest)
        self.assertIn("fc1.weight.exp_avg", whole)
        for key in whole:
            np.testing.assert_array_equal(resumed[key], whole[key], err_msg=key)
        # Checkpoints gather the state too; a run resumed from the step-3
        # checkpoint (the newer one removed) ends bit for bit as well.
        ck = os.path.join(work, "ck")
        proc = mpirun(4, argv + ["--steps", str(STEPS), "--checkpoint-dir", ck, "--checkpoint-every", "3"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertEqual(sorted(os.listdir(ck)), ["step-000000000003.onnx", f"step-{STEPS:012d}.onnx"])
        os.remove(os.path.join(ck, f"step-{STEPS:012d}.onnx"))
        again = os.path.join(work, "again.onnx")
        proc = mpirun(4, argv + ["--steps", str(STEPS), "--resume", ck, "--save", again])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        resumed = saved_arrays(again)
        for key in whole:
            np.testing.assert_array_equal(resumed[key], whole[key], err_msg=key)

    def test_sharded_gradients_on_2_and_4_ranks(self):
        # ZeRO stage 2: the gradients are reduce-scattered; same trajectory.
        self.check_case("mlp_digits_nesterov", [2, 4], ["--shard", "gradients"])
        self.check_case("regressor_adam", [4], ["--shard", "gradients"])
        # One bucket per tensor: collectives in flight while later updates
        # reuse the memory of earlier operands (the runtime copies the
        # inputs of an all-gather or a reduce-scatter when it starts one).
        for shard in ("optimizer", "gradients"):
            self.check_case("regressor_adam", [4], ["--shard", shard, "--bucket-size", "1"])

    def test_sim_target_on_2_ranks(self):
        # The simulated device runs the all-reduce kernels on its compute
        # stream; against the cpu target's single process.
        self.check_case("lenet_momentum", [2], ["--target", "sim", "--placement", "device"])

    def test_one_rank_is_the_plain_program(self):
        work, inputs, exes = self.compile_case("mlp_digits_sgd", [1])
        base_losses, base_saved = self.train(exes[0], inputs, work, "plain")
        losses, saved = self.train(exes[1], inputs, work, "one")
        self.assertEqual(losses, base_losses)
        for key in base_saved:
            np.testing.assert_array_equal(np.asarray(saved[key]), np.asarray(base_saved[key]), err_msg=key)
        losses, _ = self.train(exes[1], inputs, work, "one_mpirun", 1)
        self.assertEqual(losses, base_losses)

    def test_per_rank_traces_merge(self):
        # Each rank writes its own --trace (rank 1: FILE.rank1.json) with its
        # all-reduces on a track of their own; the merged trace has one
        # process per rank.
        import json
        work, inputs, exes = self.compile_case("mlp_digits_sgd", [2])
        trace = os.path.join(work, "trace.json")
        proc = mpirun(2, [exes[2]] + inputs + ["--steps", "3", "--trace", trace, "--quiet", "--threads", "1"])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        for rank, path in enumerate([trace, os.path.join(work, "trace.rank1.json")]):
            with open(path) as f:
                events = json.load(f)["traceEvents"]
            reduces = [e for e in events if e.get("cat") == "comm"]
            steps = [e for e in events if e.get("cat") == "step"]
            self.assertEqual(len(steps), 3, path)
            self.assertEqual(len(reduces), 3, "one bucket per step")
            self.assertTrue(all(e["pid"] == rank + 1 and e["tid"] == 2 for e in reduces))
            # Each all-reduce runs inside its step.
            for step, reduce in zip(steps, reduces):
                self.assertGreaterEqual(reduce["ts"], step["ts"] - 1)
                self.assertLessEqual(reduce["ts"] + reduce["dur"], step["ts"] + step["dur"] + 1)
        merged = os.path.join(work, "merged.json")
        script = os.path.join(support.REPO_ROOT, "scripts", "merge_traces.py")
        proc = subprocess.run([sys.executable, script, "-o", merged, trace, os.path.join(work, "trace.rank1.json")],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(merged) as f:
            pids = {e.get("pid") for e in json.load(f)["traceEvents"]}
        self.assertEqual(pids, {1, 2})

    def test_calibrated_network(self):
        # mpirun -np 2 tidal-calibrate --network: rank 0 writes the profile's
        # network section (the all-reduce between the ranks); a step planned
        # with that profile prices its all-reduces at the measured figures.
        import json
        calibrate = support.tool("tidal-calibrate")
        if calibrate is None:
            self.skipTest("tidal-calibrate is not built")
        profile = os.path.join(self.work, "network.json")
        proc = mpirun(2, [calibrate, "--network", "--quick", "-o", profile])
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertIn("mpi (measured, 2 ranks)", proc.stderr)
        with open(profile) as f:
            network = json.load(f)["network"]
        self.assertEqual((network["transport"], network["ranks"]), ("mpi", 2))
        self.assertGreater(network["gbytes_per_s"], 0)
        self.assertGreaterEqual(network["latency_us"], 0)
        work, _, _ = self.compile_case("mlp_digits_sgd", [])
        plan = os.path.join(work, "plan.json")
        from tidal import training
        case = training.CASES_BY_NAME["mlp_digits_sgd"]
        proc = support.run_tidalc([os.path.join(work, "model.onnx"), "-o", plan, "--emit", "plan",
                                   "--distributed", "mpi", "--ranks", "2", "--device-profile", profile] +
                                  training.tidalc_flags(case))
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        with open(plan) as f:
            priced = json.load(f)["cost_model"]["network"]
        self.assertEqual(priced["name"], "mpi (measured)")
        self.assertAlmostEqual(priced["gbytes_per_s"], network["gbytes_per_s"])
        self.assertAlmostEqual(priced["latency_us"], network["latency_us"])
        # One rank has no network to time.
        proc = subprocess.run([calibrate, "--network", "-o", os.path.join(self.work, "x.json")],
                              capture_output=True, text=True, timeout=120, env=dict(os.environ, **MPI_ENV))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("start it with an MPI launcher on 2 or more", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "x.json")))

    def test_wrong_number_of_ranks_and_a_killed_rank(self):
        work, inputs, exes = self.compile_case("mlp_digits_sgd", [2])
        proc = subprocess.run([exes[2]] + inputs + ["--steps", "1"], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, **MPI_ENV))
        self.assertEqual(proc.returncode, 1, support.describe(proc))
        self.assertIn("compiled for 2 ranks (tidalc --ranks 2); start it with mpirun -np 2 (this run has 1)",
                      proc.stderr)
        # Kill rank 1 mid-run: the job ends, with an error, long before the
        # steps could finish.
        argv = [MPIRUN, "--oversubscribe", "-n", "2", exes[2]] + inputs + ["--steps", "100000000", "--quiet",
                                                                           "--threads", "1"]
        job = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, **MPI_ENV))
        try:
            ranks = []
            deadline = time.monotonic() + 60
            while len(ranks) < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
                found = subprocess.run(["pgrep", "-f", exes[2]], capture_output=True, text=True).stdout.split()
                ranks = [int(p) for p in found if int(p) != job.pid]
            self.assertEqual(len(ranks), 2, "the two ranks did not start")
            time.sleep(2)
            os.kill(max(ranks), signal.SIGKILL)
            start = time.monotonic()
            _, err = job.communicate(timeout=120)
            self.assertLess(time.monotonic() - start, 90)
            self.assertNotEqual(job.returncode, 0)
            self.assertRegex(err, r"(?i)signal 9|killed|abort")
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()


if __name__ == "__main__":
    unittest.main()
