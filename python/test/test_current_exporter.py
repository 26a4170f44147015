"""tidal.current_exporter: the forms PyTorch 2.x exports that torch 1.13
cannot, and finish(). F.fold and torch.atan2 are written (Col2Im in the
pending domain, atan2 as Atan + Where), finish() moves Col2Im into ONNX's
domain and rewrites the model to opset 18, and the compiled forward pass
computes what PyTorch computes. (STFT, the FFTs, scatter_reduce,
deform_conv2d and 5-D grid_sample are exercised by the real-model suite's
keyword_cnn, fnet, graph_sage_gin, dcn and voxelmorph.)"""
import os
import tempfile
import unittest
import warnings

import numpy as np

import support

try:
    import onnx
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None


@unittest.skipIf(torch is None, "needs PyTorch and onnx")
@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class CurrentExporterTest(unittest.TestCase):
    def test_fold_and_atan2_export_finish_and_compute(self):
        from tidal import current_exporter, opset_upgrade

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.lin(x)
                return F.fold(y.view(-1, 4, 2), (3, 2), (2, 2)).flatten(1) + torch.atan2(y, x)[:, :6]

        current_exporter.register()
        torch.manual_seed(0)
        net, x = Net(), torch.randn(4, 8)
        x[0, 0] = -1.0  # a point in atan2's left half-plane
        with tempfile.TemporaryDirectory(prefix="tidal-current-exporter-") as work:
            path = os.path.join(work, "net.onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(net, (x,), path, opset_version=17, input_names=["x"],
                                  dynamic_axes={"x": {0: "N"}})
            raw = onnx.load(path)
            self.assertIn(current_exporter.PENDING, {n.domain for n in raw.graph.node})
            done = current_exporter.finish(raw)
            self.assertEqual(opset_upgrade.default_opset(done), 18)
            col2im = [n for n in done.graph.node if n.op_type == "Col2Im"]
            self.assertEqual([n.domain for n in col2im], [""])
            self.assertNotIn(current_exporter.PENDING, {o.domain for o in done.opset_import})
            self.assertIn("Atan", {n.op_type for n in done.graph.node})
            self.assertIs(current_exporter.finish(done), done)  # nothing pending: unchanged
            onnx.save(done, path)
            exe = os.path.join(work, "forward")
            proc = support.run_tidalc([path, "--mode", "forward", "--batch-size", "4", "-o", exe])
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            np.save(os.path.join(work, "x.npy"), x.numpy())
            out = os.path.join(work, "out")
            proc = support.run([exe, "--input", "x=" + os.path.join(work, "x.npy"), "--output-dir", out, "--quiet"])
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            got = np.load(os.path.join(out, os.listdir(out)[0]))
            with torch.no_grad():
                want = net(x).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
