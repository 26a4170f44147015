"""The real-model suite (python/tidal/real_models.py) in the test suite.

Every model is either expected to train or expected to fail with a named
reason, so that this file fails when a model starts or stops compiling,
training or matching PyTorch; it cannot pass silently:

Each model runs twice: as exported at opset 13, and converted to opset 21
(NEWEST_OPSET, python/tidal/opset_upgrade.py); both must behave as listed.

- EXPECTED_TO_TRAIN: export, compile, train 5 steps in tidal with SGD
  (momentum) and with AdamW, and match PyTorch float32 within 10x PyTorch's
  own spread (float32 vs float64, plus float32 channels-last for image
  models; at least 1e-4), per step for the loss and for every final weight,
  BatchNorm statistic and optimizer-state tensor: tidal.real_training.evaluate,
  the rule of test_train_e2e.py (docs/correctness.md).
- EXPECTED_FAILURES: the first failing stage and a substring of its reason
  ("compile: operator Pad"). When a model stops failing that way (an op
  lands), the test fails and asks for the model to move to
  EXPECTED_TO_TRAIN; when it fails otherwise, it fails too.

SLOW models are exported and compiled, but trained only with
TIDAL_REAL_MODELS_SLOW=1 (otherwise that test is skipped after the compile
check, saying so). Without it the file takes about 2 minutes on 2 cores.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise. The benchmark with
timings, RSS and the coverage table is bench/real_models.py.
"""

import os
import shutil
import sys
import tempfile
import unittest
import warnings

import onnx
import support

from tidal import export as zoo_export
from tidal import real_models, real_training

_SKIP = support.skip_reason("tidalc")
NEWEST_OPSET = 21
SLOW_ENV = "TIDAL_REAL_MODELS_SLOW"

EXPECTED_TO_TRAIN = [
    "gnn_node",
    "bert_mlm",
    "resnext50_32x4d",
    "wide_resnet50_2",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "densenet121",
    "squeezenet1_0",
    "shufflenet_v2_x0_5",
    "regnet_y_400mf",
    "googlenet",
    "vgg11_bn",
    "alexnet",
    "efficientnet_b0",
    "convnext_tiny",
    "vit",
    "swin_t",
    "transformer_encoder",
    "transformer",
    "transformer_decoder",
    "lstm",
    "gru",
    "rnn",
    "gpt2",
    "llama",
    "moe",
    "bert",
    "unet",
    "vae",
    "stn",
    "resnet18",
    "mnasnet0_5",
    "inception_v3",
    "dlrm",
    "scripted_cell",
    "packed_lstm",
    "dlrm_bags",
    "gpt2_padded",
    "keyword_cnn",
    "fnet",
    "graph_sage_gin",
    "dcn",
    "unet3d",
    "voxelmorph",
]

# model -> "<first failing stage>: <substring of the reason>"
EXPECTED_FAILURES = {
}

# The executables run on one thread: tidal's --threads 2 step slows down
# ~70x when another process holds one of 2 cores (bench/README.md, "Real
# models"). The thread count changes only the summation order (results are
# bit-identical from run to run at a given count).
THREADS = 1

# Trained only with TIDAL_REAL_MODELS_SLOW=1: their float64 references and
# tidal runs take most of a minute each on 2 cores.
SLOW = ("wide_resnet50_2", "inception_v3", "resnext50_32x4d", "googlenet")


@unittest.skipIf(_SKIP, _SKIP)
class RealModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        warnings.filterwarnings("ignore")  # the exporter's tracer warnings, once per model
        cls.tmp = tempfile.mkdtemp(prefix="tidal-real-")
        cls.rows = []

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if cls.rows:
            print("\n[real models] tidal vs PyTorch float32 over 5 steps, max relative deviation; PyTorch's float32 vs"
                  " float64 and its spread:", file=sys.stderr)
            for row in cls.rows:
                print("  " + row, file=sys.stderr)

    def test_lists_cover_the_suite(self):
        listed = list(EXPECTED_TO_TRAIN) + list(EXPECTED_FAILURES)
        self.assertEqual(len(listed), len(set(listed)), "a model is in both lists (or twice in one)")
        self.assertEqual(sorted(listed), sorted(real_models.names()),
                         "every real model must be in EXPECTED_TO_TRAIN or EXPECTED_FAILURES")
        for reason in EXPECTED_FAILURES.values():
            self.assertIn(reason.split(":")[0], real_training.STAGES[:-1], reason)
        self.assertFalse(set(SLOW) - set(real_models.names()), "SLOW names an unknown model")

    # --- one model --------------------------------------------------------------

    def check(self, name, upgrade=None):
        self.upgrade = upgrade
        work = os.path.join(self.tmp, name + (f"-opset{upgrade}" if upgrade else ""))
        tidalc = support.tool("tidalc")
        early = EXPECTED_FAILURES.get(name, "").split(":")[0] in ("export", "compile")
        if name in SLOW and not early and not os.environ.get(SLOW_ENV):
            result, _ = real_training.export_and_compile(name, tidalc, work, upgrade=upgrade)
            self.assertNotIn(result.stage, ("export", "compile"), f"{name} no longer compiles: {result.failure}"
                             + (f"\n  tidalc: {result.compile_error}" if result.compile_error else ""))
            self.skipTest(f"{name} compiles; training it needs {SLOW_ENV}=1")
        if name in EXPECTED_FAILURES:
            self.check_failure(name, work, tidalc)
            return
        result = self.evaluate(name, work, tidalc)
        self.assertEqual(result.failure, "ok", f"{name} is in EXPECTED_TO_TRAIN but failed at {result.failure}"
                         + (f"\n  tidalc: {result.compile_error}" if result.compile_error else ""))

    def check_failure(self, name, work, tidalc):
        expected = EXPECTED_FAILURES[name]
        stage = expected.split(":")[0]
        if stage in ("export", "compile"):
            result, _ = real_training.export_and_compile(name, tidalc, work, upgrade=self.upgrade)
        else:
            result = self.evaluate(name, work, tidalc)
        if real_training.STAGES.index(result.stage) > real_training.STAGES.index(stage):
            self.fail(f"{name} now gets past '{expected}' ({result.failure}): train it and move it to"
                      " EXPECTED_TO_TRAIN (or give its new failure in EXPECTED_FAILURES)")
        self.assertIn(expected, result.failure,
                      f"{name}: expected to fail with '{expected}', failed with '{result.failure}'"
                      + (f"\n  tidalc: {result.compile_error}" if result.compile_error else ""))

    def evaluate(self, name, work, tidalc):
        result = real_training.evaluate(name, tidalc, work, threads=THREADS, upgrade=self.upgrade)
        for r in result.optimizers.values():
            if r.comparison is not None:
                self.rows.append(r.comparison.row() + f"  [{r.stage}]" +
                                 (f" opset {self.upgrade}" if self.upgrade else ""))
        return result


class ModulesAsFunctionsTest(unittest.TestCase):
    """The suite's transformers exported with every module an ONNX function
    (export_modules_as_functions, opset 15): tidal expands the calls
    (lib/Importer/FunctionInlining.cpp) and trains as from the flat export."""

    @classmethod
    def setUpClass(cls):
        warnings.filterwarnings("ignore")
        cls.tmp = tempfile.mkdtemp(prefix="tidal-real-fn-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, name):
        tidalc = support.tool("tidalc")
        work = os.path.join(self.tmp, name)
        with zoo_export.export_options(export_modules_as_functions=True):
            result = real_training.evaluate(name, tidalc, work, threads=THREADS, opset=15)
        proto = onnx.load(os.path.join(work, "model.onnx"))
        self.assertGreater(len(proto.functions), 0, "the export holds no functions")
        self.assertEqual(result.failure, "ok", f"{name} as functions failed at {result.failure}"
                         + (f"\n  tidalc: {result.compile_error}" if result.compile_error else ""))

    @unittest.skipIf(_SKIP, _SKIP)
    def test_gpt2(self):
        self.check("gpt2")

    @unittest.skipIf(_SKIP, _SKIP)
    def test_transformer_encoder(self):
        self.check("transformer_encoder")


def _add_tests():
    for name in real_models.names():
        def test(self, name=name):
            self.check(name)
        test.__doc__ = f"real model {name}"
        setattr(RealModelsTest, f"test_{name}", test)

        # The same export converted to the newest opset tidal reads
        # (Reduce*/Split/Pad/Resize axes and sizes as inputs, ...).
        def test_newest(self, name=name):
            self.check(name, upgrade=NEWEST_OPSET)
        test_newest.__doc__ = f"real model {name} at opset {NEWEST_OPSET}"
        setattr(RealModelsTest, f"test_{name}_opset{NEWEST_OPSET}", test_newest)


_add_tests()

if __name__ == "__main__":
    unittest.main()
