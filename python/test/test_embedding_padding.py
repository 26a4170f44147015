"""nn.Embedding's padding_idx in tidal.compile: ONNX keeps no padding_idx,
so tidal.compile passes tidalc --embedding-padding for each embedding that
has one, and the padding row is read but not trained through its lookups,
as in PyTorch. A bag-of-words classifier whose padded positions are
averaged in (so the padding row gets a gradient unless it is masked)
trains step for step like torch.optim; the same ONNX model compiled without
the option trains the padding row (what the option fixes)."""
import copy
import os
import tempfile
import unittest
import warnings

import numpy as np

import support

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None


@unittest.skipIf(torch is None, "needs PyTorch")
@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class EmbeddingPaddingTest(unittest.TestCase):
    def test_padding_row_is_not_trained(self):
        import tidal

        class BagOfWords(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(20, 6, padding_idx=3)
                self.out = nn.Linear(6, 3)

            def forward(self, ids):
                return self.out(self.emb(ids).mean(1))

        torch.manual_seed(0)
        model = BagOfWords()
        with torch.no_grad():
            model.emb.weight[3] = 0.5  # a non-zero padding row: it must stay
        ref = copy.deepcopy(model)
        g = torch.Generator().manual_seed(1)
        batches = []
        for _ in range(3):
            ids = torch.randint(0, 20, (4, 7), generator=g)
            ids[:, 5:] = 3
            batches.append((ids, torch.randint(0, 3, (4,), generator=g)))
        with tempfile.TemporaryDirectory(prefix="tidal-padding-") as work, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = tidal.compile(model, (batches[0][0],), loss="cross-entropy",
                                    optimizer=tidal.optim.SGD(lr=0.5), threads=1, work_dir=work)
            # The same model without the option (an ONNX path gets none).
            plain = tidal.compile(os.path.join(work, "model.onnx"), loss="cross-entropy",
                                  optimizer=tidal.optim.SGD(lr=0.5), threads=1, batch_size=4,
                                  work_dir=os.path.join(work, "plain"))
            opt = torch.optim.SGD(ref.parameters(), lr=0.5)
            for step, (ids, y) in enumerate(batches):
                ours = trainer.step(ids.numpy(), y.numpy())
                plain.step(ids.numpy(), y.numpy())
                opt.zero_grad()
                loss = nn.functional.cross_entropy(ref(ids), y)
                loss.backward()
                opt.step()
                self.assertAlmostEqual(ours, float(loss), delta=1e-6, msg=f"step {step}")
            trained = trainer.state_dict()
            for name, want in ref.state_dict().items():
                np.testing.assert_allclose(trained[name].numpy(), want.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
            np.testing.assert_array_equal(trained["emb.weight"][3].numpy(), np.full(6, 0.5, np.float32))
            moved = plain.state_dict()["emb.weight"][3].numpy()
            self.assertGreater(float(np.abs(moved - 0.5).max()), 1e-3, "without the option the row trains")


if __name__ == "__main__":
    unittest.main()
