"""tidal.imagenet: the direct ONNX writer against torch's export.

ResNet-50 ([3, 4, 6, 3]) and a short [3, 8, 2, 3] net (the stage-2 width of
the deep variants) are exported by torch 1.13 with tidal.export's settings
and written by `imagenet.write_onnx`. The two must be the same graph: every
node byte for byte (op type, attributes, node and value names), the same
graph inputs and outputs, opset and initializer names, shapes and order.
Given the module's weights, the initializers are byte-equal too. tidalc
must plan the torch file, the direct file and the direct file with external
data identically (peak device bytes, lower bound, arenas, swaps, step time)
at batch 16 on the sim target, with and without swapping.

The torch half needs torch and onnx only; the plans need TIDAL_BUILD_DIR
with bin/tidalc and skip without it.
"""

import json
import os
import tempfile
import unittest
from unittest import mock

import support  # noqa: F401  (sets sys.path)

import numpy as np
import onnx
from onnx import numpy_helper

from tidal import imagenet

_SKIP_TIDALC = support.skip_reason("tidalc")
PLAN_FLAGS = ["--emit", "plan", "--target", "sim", "--batch-size", "16", "--loss", "cross-entropy",
              "--optimizer", "sgd", "--lr", "0.01", "--momentum", "0.9"]
# 12 GiB holds ResNet-50 at batch 16 without swaps (~1.5 GiB); 700 MiB needs
# some (the smallest budget the planner reaches is ~400 MiB).
BUDGETS = ("12GiB", "700MiB")
# (stage-3 blocks, stage-2 blocks): ResNet-50, and the deep variants' stage 2.
NETS = {"resnet50": (6, None), "stage2x8_n2": (2, 8)}


def _inits(model):
    return [(i.name, tuple(i.dims), i.data_type) for i in model.graph.initializer]


class ImagenetResnetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tidal-imagenet-")
        cls.paths = {}
        for name, (n, s2) in NETS.items():
            torch_path = os.path.join(cls.tmp.name, f"{name}_torch.onnx")
            imagenet.export_torch(n, torch_path, stage2_blocks=s2)
            state = {k: v.numpy() for k, v in imagenet.bottleneck_resnet(n, s2).state_dict().items()}
            same = os.path.join(cls.tmp.name, f"{name}_same.onnx")
            imagenet.write_onnx(same, n, s2, weights=state, external_data="never")
            rand = os.path.join(cls.tmp.name, f"{name}_random.onnx")
            imagenet.write_onnx(rand, n, s2, external_data="never")
            ext = os.path.join(cls.tmp.name, f"{name}_external.onnx")
            imagenet.write_onnx(ext, n, s2, external_data="always")
            cls.paths[name] = {"torch": torch_path, "same": same, "random": rand, "external": ext}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_graph_matches_torch_export(self):
        for name, paths in self.paths.items():
            ref = onnx.load(paths["torch"], load_external_data=False)
            for kind in ("same", "random", "external"):
                with self.subTest(net=name, writer=kind):
                    got = onnx.load(paths[kind], load_external_data=False)
                    self.assertEqual([n.op_type for n in got.graph.node], [n.op_type for n in ref.graph.node])
                    for a, b in zip(got.graph.node, ref.graph.node):
                        self.assertEqual(a.SerializeToString(), b.SerializeToString(), f"node {b.name}")
                    self.assertEqual(list(got.graph.input), list(ref.graph.input))
                    self.assertEqual(list(got.graph.output), list(ref.graph.output))
                    self.assertEqual(list(got.opset_import), list(ref.opset_import))
                    self.assertEqual(got.ir_version, ref.ir_version)
                    self.assertEqual(got.graph.name, ref.graph.name)
                    self.assertEqual(_inits(got), _inits(ref))

    def test_module_weights_are_written_exactly(self):
        for name, paths in self.paths.items():
            with self.subTest(net=name):
                ref = onnx.load(paths["torch"]).graph.initializer
                got = onnx.load(paths["same"]).graph.initializer
                for a, b in zip(got, ref):
                    self.assertEqual(numpy_helper.to_array(a).tobytes(), numpy_helper.to_array(b).tobytes(), a.name)

    def test_files_are_valid_onnx(self):
        for name, paths in self.paths.items():
            for kind in ("same", "random", "external"):
                with self.subTest(net=name, writer=kind):
                    # A path, so that the checker resolves the external data.
                    onnx.checker.check_model(paths[kind], full_check=True)
        ext = onnx.load(self.paths["resnet50"]["external"], load_external_data=False)
        self.assertTrue(all(i.data_location == onnx.TensorProto.EXTERNAL for i in ext.graph.initializer))
        self.assertTrue(os.path.exists(self.paths["resnet50"]["external"] + ".data"))
        rand = onnx.load(self.paths["resnet50"]["random"]).graph.initializer
        ext = onnx.load(self.paths["resnet50"]["external"]).graph.initializer
        for a, b in zip(rand, ext):  # same seed: the same random weights
            self.assertEqual(a.raw_data, b.raw_data, a.name)

    def test_random_weights_scale(self):
        inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(self.paths["resnet50"]["random"]).graph.initializer}
        w = inits["layer3.0.conv2.weight"]  # 256 x 256 x 3 x 3: kaiming fan_out std sqrt(2 / 2304)
        self.assertAlmostEqual(float(w.std()), np.sqrt(2 / 2304), delta=0.002)
        np.testing.assert_array_equal(inits["bn1.running_var"], np.ones(64, np.float32))
        np.testing.assert_array_equal(inits["bn1.bias"], np.zeros(64, np.float32))

    def test_depths_and_parameters(self):
        # torchvision's ResNet-50/101/152 parameter counts.
        for n, layers, depth, params in ((6, (3, 4, 6, 3), 50, 25_557_032), (23, (3, 4, 23, 3), 101, 44_549_160),
                                         (36, (3, 8, 36, 3), 152, 60_192_808)):
            with self.subTest(depth=depth):
                self.assertEqual(imagenet.stage_blocks(n), layers)
                self.assertEqual(imagenet.depth(layers), depth)
                self.assertEqual(imagenet.param_count(layers), params)
        model = imagenet.bottleneck_resnet(6)
        self.assertEqual(sum(p.numel() for p in model.parameters()), 25_557_032)
        self.assertEqual(imagenet.stage3_for_depth(1517), 491)
        self.assertEqual(imagenet.depth(imagenet.stage_blocks(491)), 1517)
        self.assertEqual(imagenet.depth(imagenet.stage_blocks(imagenet.stage3_for_depth(2500))), 2501)

    def test_external_data_choice(self):
        path = os.path.join(self.tmp.name, "limit.onnx")
        with mock.patch.object(imagenet, "INLINE_LIMIT", 1 << 20):
            info = imagenet.write_onnx(path, 1, external_data="auto")
            self.assertEqual(info.external_data, path + ".data")
            with self.assertRaisesRegex(ValueError, "2 GiB"):
                imagenet.write_onnx(path, 1, external_data="never")
        info = imagenet.write_onnx(path, 1, external_data="auto")
        self.assertIsNone(info.external_data)
        self.assertEqual(info.file_bytes, os.path.getsize(path))
        self.assertGreater(info.file_bytes, info.initializer_bytes)

    @unittest.skipIf(_SKIP_TIDALC, _SKIP_TIDALC)
    def test_tidalc_plans_are_identical(self):
        def plan(path, budget):
            out = path + f".{budget}.plan.json"
            proc = support.run_tidalc([path, "-o", out, "--device-memory", budget] + PLAN_FLAGS)
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            with open(out) as f:
                p = json.load(f)
            return {
                "predicted": p["predicted"],
                "lower_bound_bytes": p["lower_bound_bytes"],
                "arenas": p["arenas"],
                "ops": [(s["op"], s["name"]) for s in p["schedule"]],
                "swaps": [(t["name"], t["swaps"]) for t in p["tensors"] if t["swaps"]],
            }

        for name, paths in self.paths.items():
            for budget in BUDGETS:
                ref = plan(paths["torch"], budget)
                if budget == "12GiB":
                    self.assertFalse(ref["swaps"], f"{name} at {budget} should not swap")
                else:
                    self.assertTrue(ref["swaps"], f"{name} at {budget} should swap")
                for kind in ("random", "external"):
                    with self.subTest(net=name, budget=budget, writer=kind):
                        got = plan(paths[kind], budget)
                        self.assertEqual(got["predicted"]["peak_device_bytes"], ref["predicted"]["peak_device_bytes"])
                        self.assertEqual(got["lower_bound_bytes"], ref["lower_bound_bytes"])
                        self.assertEqual(got, ref)


if __name__ == "__main__":
    unittest.main()
