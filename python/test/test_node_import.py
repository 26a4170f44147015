"""tidalc against the official ONNX backend node tests (libonnx-testdata).

Every model under /usr/share/libonnx-testdata/data/node/*/model.onnx is run
through `tidalc MODEL --emit mlir` (no --batch-size: these models have static
shapes). The expected outcome comes from the model itself:

  out of set      it uses an op outside tidal's set (tidal.ops.NODE_TEST_OPS):
                  exit 1, one `MODEL: error: ...` line naming such an op type
                  (or another defect the importer may meet first: "opset"
                  for an old opset with changed ops, or the quoted name of a
                  sequence/optional/string graph input)
  old opset       opset < 13 and an op whose definition changed by opset 13
                  (the importer accepts older opsets only where nothing
                  changed): exit 1, one error line mentioning the opset
  runtime operand an operand that tidal needs at compile time (a Reshape
                  shape, Slice starts, Squeeze axes, Dropout ratio, ...) is a
                  graph input, i.e. only known at run time: exit 1 with one
                  error line (exit 0 is accepted too: e.g. an inference-mode
                  Dropout ignores its ratio)
  expected unsupported  listed in EXPECTED_UNSUPPORTED with its reason:
                  exit 1 with one error line (an entry that now imports is
                  stale and fails the test, so the list stays honest)
  in set          everything else: exit 0

Anything else (a signal, another exit status, a timeout, a multi-line or
unprefixed stderr) is a failure. The test prints the counts per category and
lists the failures by name.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips when the tool or the data is
absent.
"""

import collections
import os
import subprocess
import sys
import tempfile
import unittest
from multiprocessing.pool import ThreadPool

import support

import onnx

from onnx_node_tests import (
    EXPECTED_UNSUPPORTED,
    NODE_DIR,
    bind_runtime_operands,
    classify,
)

TIMEOUT_S = 30
THREADS = 2


def judge(path, category, detail, proc):
    """None when the outcome fits the category, else why not."""
    if proc is None:
        return f"timed out after {TIMEOUT_S} s"
    if proc.returncode < 0:
        return f"killed by signal {-proc.returncode}"
    if category == "in_set":
        if proc.returncode != 0:
            return f"exit {proc.returncode}: {proc.stderr.strip()[:300]}"
        return None
    if category == "runtime_operand" and proc.returncode == 0:
        return None
    if category == "expected_unsupported" and proc.returncode == 0:
        return "imports now: remove it from EXPECTED_UNSUPPORTED"
    problem = support.one_line_error_problem(proc, path)
    if problem:
        return f"{problem}: {proc.stderr.strip()[:300]!r}"
    line = proc.stderr
    if category == "out_of_set" and not any(op in line for op in detail):
        return f"error names none of {', '.join(detail)}: {line.strip()!r}"
    if category == "old_opset" and "opset" not in line:
        return f"error does not mention the opset: {line.strip()!r}"
    return None


def run_one(args):
    tidalc, path = args
    try:
        return subprocess.run(
            [tidalc, path, "--emit", "mlir", "--stop-after", "import"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return None
    except OSError as err:  # tidalc vanished (rebuilt) mid-run
        return subprocess.CompletedProcess([tidalc, path], 127, "", f"cannot run {tidalc}: {err}\n")


def _skip_reason():
    if not os.path.isdir(NODE_DIR):
        return f"{NODE_DIR} is absent (install libonnx-testdata)"
    return support.skip_reason("tidalc")


_SKIP = _skip_reason()


@unittest.skipIf(_SKIP, _SKIP)
class NodeImportTest(unittest.TestCase):
    def test_node_models(self):
        cases = []
        for name in sorted(os.listdir(NODE_DIR)):
            path = os.path.join(NODE_DIR, name, "model.onnx")
            if not os.path.isfile(path):
                continue
            category, detail = classify(name, onnx.load(path))
            cases.append((name, path, category, detail))
        self.assertGreater(len(cases), 0)
        for name in EXPECTED_UNSUPPORTED:
            self.assertTrue(any(c[0] == name for c in cases), f"EXPECTED_UNSUPPORTED names unknown model {name}")

        with ThreadPool(THREADS) as pool:
            tidalc = support.tool("tidalc")
            procs = pool.map(run_one, [(tidalc, c[1]) for c in cases])

        counts = collections.Counter()
        failures = []
        rebound = []
        for (name, path, category, detail), proc in zip(cases, procs):
            problem = judge(path, category, detail, proc)
            if problem:
                failures.append(f"{name} [{category}]: {problem}")
                counts["failures"] += 1
                continue
            imported = proc.returncode == 0
            counts[category + ("_imported" if imported else "_rejected")] += 1
            if category == "runtime_operand" and not imported:
                rebound.append(name)

        # A compile-time operand fed by a graph input is rejected clearly
        # above; bound to the test's own values, the model must import.
        with tempfile.TemporaryDirectory() as tmp:
            bound_paths = []
            for name in rebound:
                out = os.path.join(tmp, name + ".onnx")
                bind_runtime_operands(os.path.join(NODE_DIR, name, "model.onnx"), out)
                bound_paths.append(out)
            with ThreadPool(THREADS) as pool:
                bound_procs = pool.map(run_one, [(tidalc, p) for p in bound_paths])
        for name, proc in zip(rebound, bound_procs):
            if proc is None or proc.returncode != 0:
                err = "timed out" if proc is None else proc.stderr.strip()[:300]
                failures.append(f"{name} [runtime_operand, bound]: {err}")
                counts["failures"] += 1
            else:
                counts["runtime_operand_bound_imported"] += 1

        in_set = sum(1 for c in cases if c[2] != "out_of_set")
        summary = [
            f"total {len(cases)}",
            f"in set {in_set}",
            f"imported {counts['in_set_imported'] + counts['runtime_operand_imported']}",
            f"imported once compile-time inputs are bound {counts['runtime_operand_bound_imported']}",
            f"expected-unsupported {counts['expected_unsupported_rejected']}",
            f"old-opset rejected {counts['old_opset_rejected']}",
            f"runtime-operand rejected {counts['runtime_operand_rejected']}",
            f"out of set rejected cleanly {counts['out_of_set_rejected']}",
            f"failures {counts['failures']}",
        ]
        print("\n[node tests] " + ", ".join(summary), file=sys.stderr)
        for f in failures:
            print(f"  FAIL {f}", file=sys.stderr)
        if failures:
            names = ", ".join(f.split(" ", 1)[0] for f in failures[:20])
            self.fail(f"{len(failures)} node-test models misbehaved (listed above): {names}")


if __name__ == "__main__":
    unittest.main()
