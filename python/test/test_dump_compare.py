"""TIDAL_DUMP_DIR, TIDAL_DEVICE and scripts/compare_dumps.py: comparing two
runs of one plan op by op (docs/cuda.md, "Finding a kernel that differs").

A sim executable dumps every device kernel's output with ops.tsv naming
them; the run with the CUDA kernels' host emulation compares within 1e-5
of the CPU kernels' run, and a corrupted output is found as the first op
past the tolerance. A cuda executable runs its plan on the simulated device
with TIDAL_DEVICE=sim, bit for bit like the cpu target. Bad values are one
error line.

Needs TIDAL_BUILD_DIR with bin/tidalc.
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
COMPARE = os.path.join(ROOT, "scripts", "compare_dumps.py")


@unittest.skipIf(_SKIP, _SKIP)
class DumpCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-dump-")
        cls.case = training.CASES_BY_NAME["mlp_digits_sgd"]
        cls.model = os.path.join(cls.tmp, "m.onnx")
        training.export_case(cls.case, cls.model)
        cls.inputs = training.write_inputs(cls.case, cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compile(self, name, target):
        exe = os.path.join(self.tmp, name)
        proc = support.run_tidalc([self.model, "-o", exe, "--target", target]
                                  + training.tidalc_flags(self.case), timeout=300)
        return exe, proc

    def train(self, exe, env, steps=1):
        log = os.path.join(self.tmp, "log.jsonl")
        proc = support.run([exe] + self.inputs + ["--steps", str(steps), "--log", log, "--quiet"], timeout=120,
                           env=env)
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        return [l["loss"] for l in support.log_lines(log)]

    def compare(self, a, b):
        return subprocess.run([sys.executable, COMPARE, a, b], capture_output=True, text=True, timeout=120)

    def test_dumps_compare_op_by_op(self):
        exe, proc = self.compile("sim", "sim")
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        ref, emu = os.path.join(self.tmp, "ref"), os.path.join(self.tmp, "emu")
        self.train(exe, {"TIDAL_DUMP_DIR": ref})
        self.train(exe, {"TIDAL_DUMP_DIR": emu, "TIDAL_SIM_KERNELS": "emulated"})
        with open(os.path.join(ref, "ops.tsv")) as f:
            ops = f.read().splitlines()
        self.assertEqual(ops[0], "index\tkind\tname")
        self.assertTrue(any("\tgemm\t/fc1/Gemm" in l for l in ops), ops)
        dumped = sorted(n for n in os.listdir(ref) if n.endswith(".bin"))
        self.assertGreater(len(dumped), 10)
        self.assertEqual(dumped, sorted(n for n in os.listdir(emu) if n.endswith(".bin")))
        proc = self.compare(emu, ref)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"{len(dumped)} outputs compared, 0 past 1e-05", proc.stdout)
        # Corrupt one op's output: it is the first past the tolerance.
        victim = dumped[len(dumped) // 2]
        path = os.path.join(emu, victim)
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[0:4] = b"\x00\x00\x80\x7f"  # +inf
            f.seek(0)
            f.write(data)
        proc = self.compare(emu, ref)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        index = int(victim.split("-")[1])
        self.assertIn(f"first past the tolerance: op {index} write", proc.stdout)
        self.assertEqual(self.compare(emu, os.path.join(self.tmp, "none")).returncode, 2)

    def test_cuda_plan_on_the_simulated_device(self):
        exe, proc = self.compile("cuda", "cuda")
        if proc.returncode != 0:
            self.skipTest("tidalc cannot link --target cuda here: " + proc.stderr.strip().splitlines()[-1])
        cpu, proc = self.compile("cpu", "cpu")
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertEqual(self.train(exe, {"TIDAL_DEVICE": "sim"}, steps=3), self.train(cpu, {}, steps=3))

    def test_bad_device_is_one_line(self):
        exe, proc = self.compile("sim", "sim")
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        proc = support.run([exe] + self.inputs + ["--steps", "1", "--quiet"], env={"TIDAL_DEVICE": "tpu"})
        self.assertIsNone(support.one_line_error_problem(proc, require_prefix=False), support.describe(proc))
        self.assertIn("TIDAL_DEVICE must be 'sim' or 'cuda', not 'tpu'", proc.stderr)
        proc = support.run([exe] + self.inputs + ["--steps", "1", "--quiet"],
                           env={"TIDAL_DUMP_DIR": os.path.join(self.tmp, "no", "such", "dir")})
        self.assertIsNone(support.one_line_error_problem(proc, require_prefix=False), support.describe(proc))
        self.assertIn("TIDAL_DUMP_DIR: cannot make", proc.stderr)


if __name__ == "__main__":
    unittest.main()
