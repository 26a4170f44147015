"""The static memory plan (issue 5): same results, fewer bytes.

Bitwise: each training case of tidal.training.CASES is compiled twice, with
the default plan (`--schedule memory --memory-plan packed`: reordered ops,
shared bytes, in-place updates) and with the unplanned baseline
(`--schedule program --memory-plan slots`: the pipeline's order, every
tensor its own bytes), and trained for a few shuffled steps from the same
weights; the losses in the logs and every initializer and optimizer-state
tensor in the --save files must be bitwise equal. A graph with random
training-mode dropout checks that rescheduling keeps the masks.

The plan: for every zoo model at a small batch, `tidalc --emit plan` must be
consistent (the arena holds every tensor; no two tensors live at the same
position overlap, checked here independently of the compiler's verifier),
within 5% of its lower bound, and below the no-reuse baseline.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import support
from tidal import export, training, zoo

_SKIP = support.skip_reason("tidalc")

PLANNED = ["--schedule", "memory", "--memory-plan", "packed"]
UNPLANNED = ["--schedule", "program", "--memory-plan", "slots"]
STEPS = 3

# The cases run bitwise (the rest of CASES repeat these models).
BITWISE_CASES = ["mlp_digits_nesterov", "lenet_momentum", "vgg_bn13_momentum_wd", "resnet20_momentum",
                 "regressor_adam", "transformer17_adamw"]


def saved_tensors(path):
    model = onnx.load(path)
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def logged_losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def dropout_model(path):
    """x[N,32] -> Dropout(0.5, training) -> MatMul W[32,10] -> logits."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((32, 10)).astype(np.float32) * 0.1, "w")
    ratio = numpy_helper.from_array(np.array(0.5, np.float32), "ratio")
    training_mode = numpy_helper.from_array(np.array(True), "training_mode")
    nodes = [
        helper.make_node("Dropout", ["x", "ratio", "training_mode"], ["d"], name="drop1"),
        helper.make_node("Relu", ["d"], ["r"], name="relu"),
        helper.make_node("Dropout", ["r", "ratio", "training_mode"], ["d2"], name="drop2"),
        helper.make_node("MatMul", ["d2", "w"], ["logits"], name="fc"),
    ]
    graph = helper.make_graph(nodes, "dropout_net",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 32])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
                              [w, ratio, training_mode])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def check_plan_consistent(test, plan, name):
    """Every tensor fits its arena, and tensors sharing bytes are never live
    at the same position unless one was written in place over, or is a view
    of, the other."""
    arenas = {a["name"]: a["bytes"] for a in plan["arenas"]}
    end = plan["positions"]["exit"]
    tensors = plan["tensors"]
    by_id = {t["id"]: t for t in tensors}

    def root(t):
        # Views and in-place results share their source's bytes by design.
        while "view_of" in t or "in_place_of" in t:
            t = by_id[t.get("view_of", t.get("in_place_of"))]
        return t["id"]

    spans = []
    for t in tensors:
        home = t["home"]
        test.assertIn(home["arena"], arenas, f"{name}: {t['name']}")
        test.assertLessEqual(home["offset"] + t["bytes"], arenas[home["arena"]], f"{name}: {t['name']} fits")
        if home["arena"] != "step" or t["bytes"] == 0:
            continue
        last = t["last_use"]
        if t.get("role") in ("param", "state", "optimizer_state"):
            last = end
        spans.append((t["first_use"], last, home["offset"], home["offset"] + t["bytes"], root(t), t["name"]))
    # Sweep positions; at each one the live tensors of different roots must
    # not overlap.
    spans.sort()
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if b[0] > a[1]:
                break
            if a[4] != b[4] and a[2] < b[3] and b[2] < a[3]:
                test.fail(f"{name}: {a[5]} and {b[5]} overlap in bytes while both are live at {b[0]}")


@unittest.skipIf(_SKIP, _SKIP)
class MemoryPlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tidal-plan-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compile_and_train(self, model, flags, inputs, work, tag):
        exe = os.path.join(work, f"train_{tag}")
        proc = support.run_tidalc([model, "-o", exe] + flags, timeout=300)
        self.assertEqual(proc.returncode, 0, f"tidalc {' '.join(flags)}: {support.describe(proc)}")
        log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
        argv = [exe] + inputs + ["--steps", str(STEPS), "--shuffle", "--seed", "7", "--log", log, "--save", out,
                                 "--quiet"]
        proc = support.run(argv, timeout=300)
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}: {support.describe(proc)}")
        return logged_losses(log), saved_tensors(out)

    def assert_bitwise(self, name, model, flags, inputs, work, variants):
        base_losses, base_tensors = self.compile_and_train(model, flags + UNPLANNED, inputs, work, "unplanned")
        for tag, extra in variants.items():
            losses, tensors = self.compile_and_train(model, flags + extra, inputs, work, tag)
            self.assertEqual(np.array(losses, np.float64).tobytes(), np.array(base_losses, np.float64).tobytes(),
                             f"{name} ({tag}): losses {losses} vs unplanned {base_losses}")
            self.assertEqual(sorted(tensors), sorted(base_tensors), f"{name} ({tag}): saved tensor names")
            for key, value in base_tensors.items():
                self.assertEqual(tensors[key].tobytes(), value.tobytes(),
                                 f"{name} ({tag}): '{key}' differs from the unplanned run")

    def test_training_is_bitwise_equal_to_unplanned(self):
        for case_name in BITWISE_CASES:
            case = training.CASES_BY_NAME[case_name]
            with self.subTest(case=case_name):
                work = os.path.join(self.tmp, case_name)
                os.makedirs(work, exist_ok=True)
                model = os.path.join(work, "model.onnx")
                training.export_case(case, model)
                variants = {"planned": PLANNED}
                if case_name == "lenet_momentum":
                    variants["planned_no_in_place"] = PLANNED + ["--in-place=false"]
                self.assert_bitwise(case_name, model, training.tidalc_flags(case),
                                    training.write_inputs(case, work), work, variants)

    def test_frozen_and_training_info_models_are_bitwise_equal(self):
        """Arguments that are not trained (frozen initializers, the ONNX
        training_info's learning rate and iteration count) keep their bytes
        for the whole step: they are loaded once, not every step."""
        rng = np.random.default_rng(1)
        work = os.path.join(self.tmp, "training_info")
        os.makedirs(work, exist_ok=True)
        x, target, label = (os.path.join(work, f) for f in ("x.npy", "target.npy", "label.npy"))
        np.save(x, rng.standard_normal((16, 4)).astype(np.float32))
        np.save(target, rng.standard_normal((16, 3)).astype(np.float32))
        np.save(label, rng.integers(0, 3, 16).astype(np.int64))
        models = os.path.join(support.BUILD_DIR, "test", "Models")
        for name in ("ti_momentum", "ti_nesterov", "ti_adagrad", "ti_adam"):
            model = os.path.join(models, f"{name}.onnx")
            proto = onnx.load(model)
            names = {i.name for g in [proto.graph] + [t.algorithm for t in proto.training_info] for i in g.input}
            inputs = ["--input", f"x={x}"] + (["--input", f"target={target}"] if "target" in names
                                              else ["--input", f"label={label}"])
            with self.subTest(model=name):
                sub = os.path.join(work, name)
                os.makedirs(sub, exist_ok=True)
                self.assert_bitwise(name, model, ["--batch-size", "4"], inputs, sub, {"planned": PLANNED})
        case = training.CASES_BY_NAME["lenet_momentum"]
        sub = os.path.join(self.tmp, "lenet_frozen")
        os.makedirs(sub, exist_ok=True)
        model = os.path.join(sub, "model.onnx")
        training.export_case(case, model)
        self.assert_bitwise("lenet_frozen", model,
                            training.tidalc_flags(case) + ["--freeze", "conv1.weight,conv1.bias,fc3.weight"],
                            training.write_inputs(case, sub), sub, {"planned": PLANNED})

    def test_dropout_masks_do_not_depend_on_the_schedule(self):
        work = os.path.join(self.tmp, "dropout")
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "dropout.onnx")
        dropout_model(model)
        rng = np.random.default_rng(5)
        x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(x, rng.standard_normal((24, 32)).astype(np.float32))
        np.save(y, rng.integers(0, 10, 24).astype(np.int64))
        flags = ["--batch-size", "8", "--loss", "cross-entropy", "--lr", "0.1", "--momentum", "0.9"]
        self.assert_bitwise("dropout", model, flags, ["--input", f"x={x}", "--input", f"label={y}"], work,
                            {"planned": PLANNED})

    def test_zoo_plans(self):
        rows = []
        # The deeper ResNets are bench/plan_memory.py's (their export alone
        # takes minutes on two cores).
        for name in ("mlp", "lenet", "vgg_bn", "resnet20", "transformer_block", "mlp_with_loss", "regressor"):
            entry = zoo.MODELS[name]
            with self.subTest(model=name):
                model = os.path.join(self.tmp, f"{name}.onnx")
                export.export(name, model)
                plan_path = os.path.join(self.tmp, f"{name}.plan.json")
                loss = "output" if entry.scalar_outputs else ("mse" if name in ("regressor", "transformer_block")
                                                              else "cross-entropy")
                proc = support.run_tidalc([model, "-o", plan_path, "--emit", "plan", "--batch-size", "4", "--loss",
                                           loss, "--optimizer", "adam"], timeout=300)
                self.assertEqual(proc.returncode, 0, support.describe(proc))
                with open(plan_path) as f:
                    plan = json.load(f)
                check_plan_consistent(self, plan, name)
                peak = plan["predicted"]["peak_host_bytes"]
                bound = plan["lower_bound_bytes"]
                baseline = plan["baseline"]["peak_host_bytes"]
                self.assertLessEqual(bound, peak, f"{name}: the plan beats its own lower bound?")
                self.assertLessEqual(peak, 1.05 * bound, f"{name}: plan {peak} bytes, lower bound {bound}")
                self.assertLess(peak, baseline, f"{name}: plan {peak} bytes, no reuse {baseline}")
                self.assertEqual(max(plan["live_bytes"]) + plan["arenas"][1]["bytes"], bound, name)
                rows.append(f"{name}: plan {peak} B, lower bound {bound} B, no reuse {baseline} B "
                            f"({100 * (1 - peak / baseline):.1f}% saved)")
        print("\n[plan] " + "\n[plan] ".join(rows), file=__import__("sys").stderr)


if __name__ == "__main__":
    unittest.main()
