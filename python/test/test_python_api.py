"""The Python front end end to end (docs/python.md): tidal.compile on an
nn.Module, fit with a torch DataLoader against torch.optim on the same
batches, state_dict into the module, predict against the module's eval
forward, frozen parameters left as PyTorch leaves them, save/tidal.load
resuming exactly, a device target with BatchNorm, and misuse answered by
TidalError."""
import os
import tempfile
import unittest

import numpy as np

import support

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@unittest.skipIf(torch is None, "needs PyTorch")
@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class PythonApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tidal
        cls.tidal = tidal
        rng = np.random.default_rng(0)
        cls.X = rng.standard_normal((64, 12)).astype(np.float32)
        cls.Y = rng.integers(0, 4, 64).astype(np.int64)

    def mlp(self):
        torch.manual_seed(1)
        return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4))

    def test_fit_with_a_dataloader_matches_torch_optim(self):
        tidal = self.tidal
        model, reference = self.mlp(), self.mlp()
        trainer = tidal.compile(model, (torch.randn(8, 12),), loss="cross-entropy",
                                optimizer=tidal.optim.AdamW(lr=1e-2, weight_decay=0.05))
        data = torch.utils.data.TensorDataset(torch.from_numpy(self.X), torch.from_numpy(self.Y))
        loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=False)
        history = trainer.fit(loader, epochs=3, eval_data=(self.X, self.Y), progress=False)
        self.assertEqual(len(history["loss"]), 3)
        self.assertEqual(trainer.steps, 24)
        opt = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.05)
        losses = []
        for _ in range(3):
            for x, y in loader:
                opt.zero_grad()
                loss = nn.functional.cross_entropy(reference(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        self.assertLess(rel(history["step_loss"], losses), 1e-4)
        state = trainer.state_dict()
        self.assertEqual(list(state), list(reference.state_dict()))
        for key, value in reference.state_dict().items():
            self.assertLess(rel(state[key].numpy(), value.detach().numpy()), 1e-4, key)
        # The state_dict loads into the module (strict), and predict is its
        # eval-mode forward.
        model.load_state_dict(state)
        model.eval()
        with torch.no_grad():
            expected = model(torch.from_numpy(self.X[:8])).numpy()
        self.assertLess(rel(trainer.predict(self.X[:8]), expected), 1e-5)
        result = trainer.evaluate((self.X, self.Y))
        self.assertAlmostEqual(result["accuracy"], history["eval_accuracy"][-1])
        self.assertGreater(result["accuracy"], 0.5)

    def test_frozen_parameters_stay(self):
        """A fine-tuning set-up: the first layer frozen (requires_grad
        False). tidal leaves it as PyTorch does and trains the rest to
        PyTorch's values."""
        tidal = self.tidal
        model, reference = self.mlp(), self.mlp()
        for m in (model, reference):
            m[0].requires_grad_(False)
        frozen = model[0].weight.detach().clone()
        trainer = tidal.compile(model, (torch.randn(8, 12),), optimizer=tidal.optim.SGD(lr=0.1, momentum=0.9))
        opt = torch.optim.SGD([p for p in reference.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
        for k in range(3):
            x, y = self.X[8 * k:8 * k + 8], self.Y[8 * k:8 * k + 8]
            trainer.step(x, y)
            opt.zero_grad()
            nn.functional.cross_entropy(reference(torch.from_numpy(x)), torch.from_numpy(y)).backward()
            opt.step()
        state = trainer.state_dict()
        self.assertTrue(torch.equal(state["0.weight"], frozen))
        for key, value in reference.state_dict().items():
            self.assertLess(rel(state[key].numpy(), value.detach().numpy()), 1e-5, key)
        self.assertGreater(rel(state["2.weight"].numpy(), self.mlp()[2].weight.detach().numpy()), 1e-3)

    def test_save_and_load_resume_exactly(self):
        tidal = self.tidal
        trainer = tidal.compile(self.mlp(), (torch.randn(8, 12),), optimizer=tidal.optim.SGD(lr=0.1, momentum=0.9))
        whole = tidal.compile(self.mlp(), (torch.randn(8, 12),), optimizer=tidal.optim.SGD(lr=0.1, momentum=0.9))
        batches = [(self.X[i:i + 8], self.Y[i:i + 8]) for i in range(0, 64, 8)]
        for x, y in batches[:4]:
            trainer.step(x, y)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "half.onnx")
            trainer.save(path)
            resumed = tidal.load(path)
        self.assertEqual(resumed.steps, 4)
        for x, y in batches[4:]:
            resumed.step(x, y)
        for x, y in batches:
            whole.step(x, y)
        for key, value in whole.state_dict().items():
            # The momentum buffers came back too: bit for bit.
            np.testing.assert_array_equal(resumed.state_dict()[key].numpy(), value.numpy(), key)

    def test_batchnorm_on_the_sim_device(self):
        tidal = self.tidal
        torch.manual_seed(2)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                              nn.Linear(8 * 8 * 8, 5))
        trainer = tidal.compile(model, (torch.randn(4, 3, 8, 8),), optimizer=tidal.optim.SGD(lr=0.05),
                                target="sim", device_memory="256KiB")
        rng = np.random.default_rng(3)
        for _ in range(3):
            trainer.step(rng.standard_normal((4, 3, 8, 8)).astype(np.float32), rng.integers(0, 5, 4))
        counters = trainer.counters()
        self.assertGreater(counters["device_peak_bytes"], 0)
        self.assertLessEqual(counters["device_peak_bytes"], 256 * 1024)
        state = trainer.state_dict()
        self.assertEqual(int(state["1.num_batches_tracked"]), 3)
        self.assertFalse(torch.equal(state["1.running_mean"], torch.zeros(8)))
        model.load_state_dict(state)  # strict: every key is there

    def test_misuse_raises_clear_errors(self):
        tidal = self.tidal
        trainer = tidal.compile(self.mlp(), (torch.randn(8, 12),))
        with self.assertRaisesRegex(tidal.TidalError, r"input 'input' expects float32 \[8, 12\], got float32 \[4, 12\]"):
            trainer.step(self.X[:4], self.Y[:4])
        with self.assertRaisesRegex(tidal.TidalError, r"the model takes 1 inputs"):
            trainer.step((self.X[:8], self.X[:8]), self.Y[:8])
        with self.assertRaisesRegex(tidal.TidalError, r"has no tensor 'nope'"):
            trainer.load_state_dict({"nope": np.zeros(3)})
        with self.assertRaisesRegex(tidal.TidalError, r"does not exist"):
            handle = trainer._handle.handle
            trainer.close()
            trainer._handle.handle = handle  # a stale handle: an error, not a crash
            trainer.step(self.X[:8], self.Y[:8])
        with self.assertRaisesRegex(tidal.TidalError, r"unknown --target 'tpu'"):
            tidal.compile(self.mlp(), (torch.randn(8, 12),), target="tpu")
        with self.assertRaisesRegex(tidal.TidalError, r"no such file"):
            tidal.compile("/nonexistent/model.onnx")


if __name__ == "__main__":
    unittest.main()
