"""bench/gpu_bench.py (issue 7): its pieces that need no GPU, and a smoke run.

The unit tests cover what turns tidalc's and the executable's output into
rows: the floor from tidalc's error, the --log summary, the bandwidth
arithmetic, the budgets, the table (ratios, failed rows), the checkpoint
segmentation of the PyTorch peer (it must compute the model's forward), and
the rows of failed configurations, with a fake tidalc whose executables
fail or log given figures. The smoke test runs the whole script with
--target sim --torch-device cpu on LeNet; it needs TIDAL_BUILD_DIR with
bin/tidalc and skips otherwise.
"""

import argparse
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

import support

_spec = importlib.util.spec_from_file_location("gpu_bench", os.path.join(support.REPO_ROOT, "bench", "gpu_bench.py"))
gpu_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_bench)

_SKIP = support.skip_reason("tidalc")
MIB = 2**20

FLOOR_ERROR = ("lenet.onnx: error: device memory budget 1 bytes is too small for @train_step: the smallest budget "
               "its plan reaches is 5666112 bytes (1 tensors swapped, 0 recomputed; the peak is at op 74)\n")


def log_line(step, ms, peak=1000, to_host=0, to_device=0, copy_seconds=None, loss=2.5):
    line = {"step": step, "loss": loss, "step_ms": ms, "device_peak_bytes": peak, "host_peak_bytes": 64,
            "bytes_to_host": to_host, "bytes_to_device": to_device}
    if copy_seconds is not None:
        line["copy_seconds"] = copy_seconds
    return line


class ParseTest(unittest.TestCase):
    def test_floor_from_tidalc_error(self):
        self.assertEqual(gpu_bench.parse_floor(FLOOR_ERROR), 5666112)
        self.assertIsNone(gpu_bench.parse_floor("m.onnx: error: unsupported op 'Foo'\n"))
        self.assertIsNone(gpu_bench.parse_floor(""))
        self.assertIsNone(gpu_bench.parse_floor(None))

    def test_one_line_error(self):
        stderr = "warning: something\ntrain: error: op '/fc1/Gemm' (gemm): CUDA error: out of memory\n\n"
        self.assertEqual(gpu_bench.one_line_error(stderr, 2),
                         "exit 2: train: error: op '/fc1/Gemm' (gemm): CUDA error: out of memory")
        # A Python child's traceback: its last line, the exception.
        self.assertEqual(gpu_bench.one_line_error("Traceback (most recent call last):\n  File x, in error_handler\n"
                                                  "RuntimeError: CUDA error: an illegal memory access\n"),
                         "RuntimeError: CUDA error: an illegal memory access")
        # No line says error: the last one; no stderr: the status alone.
        self.assertEqual(gpu_bench.one_line_error("a\nSegmentation fault\n", -11), "signal 11: Segmentation fault")
        self.assertEqual(gpu_bench.one_line_error("", 1), "exit 1")
        self.assertEqual(gpu_bench.one_line_error("/tmp/w/m.onnx: error: x\n", 1, strip="/tmp/w/"),
                         "exit 1: m.onnx: error: x")
        self.assertEqual(len(gpu_bench.one_line_error("error " + "x" * 2000)), 400)


class LogTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tidal-gpu-bench-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write(self, lines, tail=""):
        path = os.path.join(self.tmp, "log.jsonl")
        with open(path, "w") as f:
            f.write("".join(json.dumps(l) + "\n" for l in lines) + tail)
        return path

    def test_summary_after_warmup(self):
        lines = [log_line(1, 500.0, peak=900, loss=2.25),  # warm-up: slow, not timed
                 log_line(2, 9.0, 1000, 100, 300, 2e-6), log_line(3, 7.0, 1000, 100, 300, 2e-6),
                 log_line(4, 8.0, 1000, 100, 500, 4e-6)]
        s = gpu_bench.summarize_log(gpu_bench.read_log(self.write(lines, tail='{"step": 5, "lo')), warmup=1)
        self.assertEqual(s["steps_logged"], 4)  # the torn last line is dropped
        self.assertEqual(s["steps_timed"], 3)
        self.assertEqual(s["step_ms"], 8.0)
        self.assertEqual(s["device_peak_bytes"], 1000)
        self.assertEqual(s["bytes_moved"], 400)  # median of 400, 400, 600
        self.assertEqual((s["bytes_to_host"], s["bytes_to_device"]), (100, 300))
        self.assertEqual(s["loss0"], 2.25)
        # 1,400 bytes in 8 microseconds: 0.175 GB/s.
        self.assertAlmostEqual(s["copy_gbps"], 1400 / 8e-6 / 1e9)
        self.assertIsNone(s["copy_note"])

    def test_copy_bandwidth_unknown(self):
        s = gpu_bench.summarize_log([log_line(1, 5.0, to_host=10)], warmup=3)  # too few steps: all are timed
        self.assertEqual(s["steps_timed"], 1)
        self.assertIsNone(s["copy_gbps"])
        self.assertEqual(s["copy_note"], "the log has no copy_seconds")
        s = gpu_bench.summarize_log([log_line(1, 5.0, copy_seconds=0.0)], warmup=0)
        self.assertIsNone(s["copy_gbps"])
        self.assertEqual(s["copy_note"], "no copies")
        s = gpu_bench.summarize_log([log_line(1, 5.0, to_device=8, copy_seconds=0.0)], warmup=0)
        self.assertEqual(s["copy_note"], "copy_seconds is 0")
        with self.assertRaises(ValueError):
            gpu_bench.summarize_log([], warmup=0)


class ArithmeticTest(unittest.TestCase):
    def test_gbps(self):
        self.assertAlmostEqual(gpu_bench.gbps(256 * MIB, 10.0), 256 * MIB / 0.01 / 1e9)
        self.assertIsNone(gpu_bench.gbps(1, 0.0))

    def test_pinned_reference_is_the_mix_at_pinned_rates(self):
        # 1 GB at 10 GB/s (0.1 s) and 3 GB at 30 GB/s (0.1 s): 4 GB in 0.2 s.
        self.assertAlmostEqual(gpu_bench.pinned_reference_gbps(1e9, 3e9, h2d_gbps=30.0, d2h_gbps=10.0), 20.0)
        self.assertAlmostEqual(gpu_bench.pinned_reference_gbps(0, 5e8, h2d_gbps=25.0, d2h_gbps=None), 25.0)
        self.assertIsNone(gpu_bench.pinned_reference_gbps(0, 0, 25.0, 25.0))
        self.assertIsNone(gpu_bench.pinned_reference_gbps(1, 1, None, None))  # not measured (smoke mode)

    def test_budgets(self):
        self.assertEqual(gpu_bench.budgets(100, 60, 5), [100, 90, 80, 70, 60])
        self.assertEqual(gpu_bench.budgets(100, 60, 2), [100, 60])
        self.assertEqual(gpu_bench.budgets(100, 60, 1), [100])
        self.assertEqual(gpu_bench.budgets(100, None, 5), [100])
        self.assertEqual(gpu_bench.budgets(100, 100, 5), [100])
        self.assertEqual(gpu_bench.budgets(10, 9, 5), [10, 9])
        self.assertEqual(gpu_bench.budget_name(100, 100, 60), "tidal peak (0.00 MiB)")
        self.assertEqual(gpu_bench.budget_name(60 * MIB, 100 * MIB, 60 * MIB), "tidal floor (60.00 MiB)")
        self.assertEqual(gpu_bench.budget_name(80 * MIB, 100 * MIB, 60 * MIB), "tidal budget 80.00 MiB")


def sample_rows():
    return [
        {"name": "torch plain", "kind": "torch plain", "step_ms": 10.0, "peak_bytes": 100 * MIB, "bytes_moved": 0,
         "loss0": 2.302585},
        gpu_bench.failed_row("torch checkpoint", "RuntimeError: CUDA out of memory.", "torch checkpoint"),
        {"name": "tidal floor (50.00 MiB)", "kind": "tidal", "step_ms": 15.0, "peak_bytes": 50 * MIB,
         "bytes_moved": 8 * MIB, "copy_gbps": 20.0, "copy_fraction": 0.8, "loss0": 2.302586, "notes": "budget x | y"},
    ]


class TableTest(unittest.TestCase):
    def test_markdown_rows_and_ratios(self):
        text = gpu_bench.format_model_table("resnet20", sample_rows(), markdown=True)
        lines = text.splitlines()
        self.assertEqual(lines[0], "### resnet20")
        self.assertEqual(lines[1], "| " + " | ".join(gpu_bench.COLUMNS) + " |")
        self.assertEqual(lines[3], "| torch plain | 10.00 | 1.00 | 100.00 | 1.00 | 0.00 | n/a | n/a | 2.30259 |  |")
        self.assertEqual(lines[4], "| torch checkpoint | - | - | - | - | - | - | - | - | "
                                   "FAILED: RuntimeError: CUDA out of memory. |")
        self.assertEqual(lines[5], "| tidal floor (50.00 MiB) | 15.00 | 1.50 | 50.00 | 0.50 | 8.00 | 20.00 | 80% | "
                                   "2.30259 | budget x \\| y |")
        for line in lines[1:2] + lines[3:]:  # every row has all the columns
            self.assertEqual(line.count(" | "), len(gpu_bench.COLUMNS) - 1, line)

    def test_ratios_without_torch_plain(self):
        rows = sample_rows()
        rows[0] = gpu_bench.failed_row("torch plain", "exit 1: boom", "torch plain")
        cells = gpu_bench.table_cells(rows)
        self.assertEqual(cells[0][-1], "FAILED: exit 1: boom")
        self.assertEqual(cells[2][1:5], ["15.00", "n/a", "50.00", "n/a"])

    def test_plain_text_is_aligned(self):
        text = gpu_bench.format_model_table("lenet", sample_rows(), markdown=False, error="data: boom")
        lines = text.splitlines()
        self.assertEqual(lines[:2], ["== lenet", "model error: data: boom"])
        col = lines[2].index("step ms")
        self.assertTrue(all(l[col - 2:col] == "  " for l in lines[2:]), text)
        self.assertTrue(lines[4].startswith("torch plain "))


class CheckpointSegmentsTest(unittest.TestCase):
    """The checkpointed PyTorch peer computes the model's forward: same
    output and the same gradients as the plain module."""

    def test_segments_compute_the_forward(self):
        import torch
        from tidal import zoo

        for name in ("lenet", "vgg_bn", "resnet20", "transformer_block", "mlp"):
            with self.subTest(model=name):
                entry = zoo.MODELS[name]
                x = torch.randn((3,) + tuple(entry.inputs[0][1]), generator=torch.Generator().manual_seed(5))
                plain = zoo.build(name)
                ckpt = zoo.build(name)
                blocks, head = gpu_bench.checkpoint_segments(name, ckpt)
                self.assertGreaterEqual(len(blocks), 2)
                want = plain(x)
                got = gpu_bench.checkpointed_forward(blocks, head, x)
                self.assertTrue(torch.equal(want, got), f"{name}: output differs")
                want.square().sum().backward()
                got.square().sum().backward()
                for (pname, p), q in zip(plain.named_parameters(), ckpt.parameters()):
                    self.assertTrue(torch.allclose(p.grad, q.grad, rtol=1e-5, atol=1e-7), f"{name}: {pname}")

    def test_unknown_model(self):
        with self.assertRaises(ValueError):
            gpu_bench.checkpoint_segments("no_such_model", None)


class FailedConfigurationTest(unittest.TestCase):
    """Failed configurations become rows with a one-line error."""

    # A stand-in tidalc: --emit plan writes a plan; otherwise -o gets an
    # "executable" whose behaviour FAKE_EXE_MODE picks when it runs.
    FAKE_TIDALC = textwrap.dedent("""\
        #!/bin/sh
        out=""; plan=0; prev=""
        for a in "$@"; do
          [ "$prev" = "-o" ] && out="$a"
          [ "$prev" = "--emit" ] && [ "$a" = "plan" ] && plan=1
          [ "$a" = "--device-memory=fail" ] && { echo "$1: error: unsupported op 'Foo'" >&2; exit 1; }
          prev="$a"
        done
        if [ $plan = 1 ]; then
          echo '{"predicted": {"peak_device_bytes": 4096, "step_time_us": 1500},' > "$out"
          echo ' "tensors": [{"swaps": [1, 2], "recomputations": [{"position": 7}]}]}' >> "$out"
          exit 0
        fi
        cp "$(dirname "$0")/fake_exe" "$out"
        """)
    FAKE_EXE = textwrap.dedent("""\
        #!/bin/sh
        prev=""; log=""
        for a in "$@"; do [ "$prev" = "--log" ] && log="$a"; prev="$a"; done
        if [ "$FAKE_EXE_MODE" = fault ]; then
          echo "train: error: op '/fc1/Gemm' (gemm): CUDA error: out of memory" >&2
          exit 2
        fi
        i=1
        while [ $i -le 4 ]; do
          printf '{"step": %d, "loss": 2.5, "step_ms": %d, "device_peak_bytes": 3000, "host_peak_bytes": 0, ' \\
            $i $((i * 2)) >> "$log"
          echo '"bytes_to_host": 1000000, "bytes_to_device": 3000000, "copy_seconds": 0.0002}' >> "$log"
          i=$((i + 1))
        done
        """)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tidal-gpu-bench-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        for name, text in (("tidalc", self.FAKE_TIDALC), ("fake_exe", self.FAKE_EXE)):
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        self.args = argparse.Namespace(tidalc=os.path.join(self.tmp, "tidalc"), batch=8, target="cuda",
                                       tidalc_flag=[], warmup=1, steps=3, threads=0)

    def config(self, budget=4096, mode="ok", pinned=None):
        with mock.patch.dict(os.environ, {"FAKE_EXE_MODE": mode}):
            return gpu_bench.tidal_config(self.args, os.path.join(self.tmp, "m.onnx"), ("x.npy", "y.npy"), budget,
                                          "tidal peak", self.tmp, gpu_bench.Deadline(60), pinned or {})

    def test_runtime_fault_row(self):
        row = self.config(mode="fault")
        self.assertEqual(row["error"], "run: exit 2: train: error: op '/fc1/Gemm' (gemm): CUDA error: out of memory")
        cells = gpu_bench.table_cells([row])
        self.assertEqual(cells[0][1:9], ["-"] * 8)

    def test_tidalc_error_row(self):
        self.args.tidalc_flag = ["--device-memory=fail"]
        row = self.config()
        self.assertEqual(row["error"], "tidalc --emit plan: exit 1: m.onnx: error: unsupported op 'Foo'")

    def test_figures_from_the_log(self):
        # Copies: 1 MB to the host at 10 GB/s and 3 MB to the device at 30 GB/s
        # take 0.2 ms at the pinned rates; the log says 0.2 ms too: 100%.
        row = self.config(pinned={"h2d_gbps": 30.0, "d2h_gbps": 10.0})
        self.assertNotIn("error", row)
        self.assertEqual(row["step_ms"], 6.0)  # steps 2..4 after 1 warm-up: 4, 6, 8 ms
        self.assertEqual(row["peak_bytes"], 3000)
        self.assertEqual(row["bytes_moved"], 4000000)
        self.assertAlmostEqual(row["copy_gbps"], 20.0)
        self.assertAlmostEqual(row["copy_fraction"], 1.0)
        self.assertEqual(row["plan"]["swaps"], 2)
        self.assertEqual(row["plan"]["recomputed"], 1)
        self.assertIn("2 swaps, 1 recomputed, predicted 1.50 ms", row["notes"])

    def test_torch_child_error_is_one_line(self):
        spec = {"model": "lenet", "config": "plain", "device": "cpu", "batch": 2, "steps": 1, "warmup": 0,
                "x": os.path.join(self.tmp, "missing_x.npy"), "y": os.path.join(self.tmp, "missing_y.npy")}
        result = gpu_bench.run_child(spec, timeout=120)
        self.assertTrue(result["error"].startswith("FileNotFoundError: "), result)
        self.assertNotIn("\n", result["error"])

    def test_time_limit_skips_rows(self):
        proc = subprocess.run([sys.executable, os.path.join(support.REPO_ROOT, "bench", "gpu_bench.py"),
                               "--target", "sim", "--torch-device", "cpu", "--models", "lenet", "--time-limit", "0",
                               "--tidalc", self.args.tidalc, "--markdown"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertNotIn("Traceback", proc.stderr)
        skipped = [l for l in proc.stdout.splitlines() if "FAILED: skipped: --time-limit 0 s reached" in l]
        self.assertEqual([l.split(" | ")[0] for l in skipped],
                         ["| torch plain", "| torch checkpoint", "| torch save_on_cpu", "| tidal"], proc.stdout)


@unittest.skipIf(_SKIP, _SKIP)
class SmokeTest(unittest.TestCase):
    """The whole script, smoke mode: LeNet on the sim target and PyTorch's CPU."""

    def test_smoke(self):
        tmp = tempfile.mkdtemp(prefix="tidal-gpu-bench-smoke-")
        self.addCleanup(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, "out.json")
        proc = subprocess.run(
            [sys.executable, os.path.join(support.REPO_ROOT, "bench", "gpu_bench.py"), "--target", "sim",
             "--torch-device", "cpu", "--models", "lenet", "--points", "2", "--steps", "2", "--warmup", "1",
             "--batch", "32", "--markdown", "--json", out, "--tidalc", support.tool("tidalc")],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, support.describe(proc))
        self.assertNotIn("Traceback", proc.stderr)
        with open(out) as f:
            result = json.load(f)
        rows = result["models"]["lenet"]["rows"]
        self.assertEqual([r.get("error") for r in rows], [None] * len(rows))
        names = [r["name"] for r in rows]
        self.assertEqual(names[:3], ["torch plain", "torch checkpoint", "torch save_on_cpu"])
        self.assertEqual(len(names), 5, names)
        self.assertTrue(names[3].startswith("tidal peak (") and names[4].startswith("tidal floor ("), names)
        plain, peak, floor = rows[0], rows[3], rows[4]
        self.assertIsNone(plain["peak_bytes"])  # no device memory to measure on the CPU
        self.assertLess(floor["budget_bytes"], peak["budget_bytes"])
        for r in (peak, floor):
            self.assertGreater(r["step_ms"], 0)
            self.assertLessEqual(r["peak_bytes"], r["budget_bytes"])
            # Same seeded weights and first batch as PyTorch's.
            self.assertAlmostEqual(r["loss0"], plain["loss0"], delta=1e-4 * abs(plain["loss0"]))
        self.assertEqual(peak["bytes_moved"], 0)
        self.assertGreater(floor["bytes_moved"], 0)
        self.assertGreater(floor["copy_gbps"], 0)
        self.assertIsNone(floor["copy_fraction"])  # no pinned bandwidth in smoke mode
        self.assertIn("### lenet", proc.stdout)
        table = [l for l in proc.stdout.splitlines() if l.startswith(("| torch ", "| tidal "))]
        self.assertEqual(len(table), 5, proc.stdout)
        self.assertIn("pinned bandwidth n/a", proc.stdout)


if __name__ == "__main__":
    unittest.main()
