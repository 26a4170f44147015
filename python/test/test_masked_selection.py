"""Boolean-mask indexing in a training step (lib/Importer/MaskedSelection.cpp):
modules whose loss reads x[mask] (the mask a graph input or computed from
the step's own values) train with tidal.compile as with torch.optim, step
for step: losses and weights agree to float32 rounding. Each case covers
forms the importer keeps apart: rows selected by an input mask into
cross-entropy and a mean, masks computed from the softmax and a rectifier (log over
the kept elements only: no log(0) reaches the gradient), tokens of a [B, T]
mask through a LayerNorm and a Linear, a 1-D mask over columns
(x[:, m], the mask computed from the input) into max and sum, masked_select,
DeBERTa's labelled rows (NonZero's indices expanded by their own count:
Shape of the indices as a compile-time count), and steps that keep one row
or none."""
import copy
import unittest
import warnings

import numpy as np

import support

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None

STEPS = 4


def _rows():
    class Rows(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden, self.out = nn.Linear(8, 16), nn.Linear(16, 5)

        def forward(self, x, y, mask):
            out = self.out(torch.relu(self.hidden(x)))
            p, r = torch.softmax(out, -1), out * (out > 0).float()  # exact zeros whose gradient multiplies
            return (F.cross_entropy(out[mask], y[mask]) - 0.5 * torch.log(p[p > 0.3]).mean()
                    + 0.1 * ((out[mask] - 1.0) ** 2).sum(1).mean() - 0.05 * torch.log(r[r > 0]).mean())

    def batch(g, step):
        x, y = torch.randn(12, 8, generator=g), torch.randint(0, 5, (12,), generator=g)
        mask = torch.rand(12, generator=g) > 0.4
        if step == STEPS - 1:  # one row kept
            mask[:] = False
            mask[5] = True
        return x, y, mask
    return Rows(), batch


def _tokens():
    class Tokens(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.head = nn.LayerNorm(6), nn.Linear(6, 7)

        def forward(self, x, labels, mask):
            h = self.norm(x)[mask]  # [kept tokens, 6]
            return F.cross_entropy(self.head(torch.tanh(h)), labels[mask], label_smoothing=0.0)

    def batch(g, step):
        x, labels = torch.randn(3, 5, 6, generator=g), torch.randint(0, 7, (3, 5), generator=g)
        mask = torch.rand(3, 5, generator=g) > 0.5
        mask[0, 0] = True
        return x, labels, mask
    return Tokens(), batch


def _columns():
    class Columns(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            h = torch.sigmoid(self.lin(x))  # [2, 3, 4]
            kept = h[:, x[0, :, 0] > 0]  # a 1-D mask over the columns, from the data
            sel = torch.masked_select(h, h > 0.5)
            return kept.max() + kept.sum() * 0.25 + sel.sum() * 0.1

    def batch(g, step):
        x = torch.randn(2, 3, 4, generator=g)
        x[0, 1, 0] = 1.0  # at least one column kept
        if step == STEPS - 1:
            x[0, :, 0] = torch.tensor([-1.0, 1.0, -1.0])  # one column kept
        return (x,)
    return Columns(), batch


def _deberta():
    class LabelledRows(nn.Module):
        """DeBERTa-v2's classification loss: the labelled rows by nonzero(),
        gathered with the indices expanded by their own count."""

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 5)

        def forward(self, x, labels):
            logits = self.lin(x)
            idx = (labels >= 0).nonzero()
            rows = torch.gather(logits, 0, idx.expand(idx.size(0), logits.size(1)))
            return F.cross_entropy(rows.view(-1, 5), labels.gather(0, idx.view(-1)))

    def batch(g, step):
        labels = torch.randint(0, 5, (10,), generator=g)
        labels[torch.rand(10, generator=g) > 0.6] = -100  # unlabelled rows
        labels[step] = 2
        return torch.randn(10, 8, generator=g), labels
    return LabelledRows(), batch


def _empty():
    class Empty(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x, m):
            return self.lin(x)[m].sum() + (self.lin(x) ** 2).mean()

    def batch(g, step):
        m = torch.rand(6, generator=g) > 0.5
        if step % 2:
            m[:] = False  # no row kept: the masked sum is 0
        return torch.randn(6, 3, generator=g), m
    return Empty(), batch


@unittest.skipIf(torch is None, "needs PyTorch")
@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class MaskedSelectionTrainingTest(unittest.TestCase):
    def train_both(self, make):
        import tidal
        torch.manual_seed(0)
        model, batch = make()
        ref = copy.deepcopy(model)
        g = torch.Generator().manual_seed(1)
        batches = [batch(g, s) for s in range(STEPS)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = tidal.compile(model, batches[0], loss="output", optimizer=tidal.optim.SGD(lr=0.1), threads=1)
        opt = torch.optim.SGD(ref.parameters(), lr=0.1)
        for step, inputs in enumerate(batches):
            ours = trainer.step(tuple(t.numpy() for t in inputs), None)
            opt.zero_grad()
            loss = ref(*inputs)
            loss.backward()
            opt.step()
            self.assertTrue(np.isfinite(ours), f"step {step}: {ours}")
            self.assertAlmostEqual(ours, float(loss), delta=2e-6 * max(1.0, abs(float(loss))), msg=f"step {step}")
        trained = trainer.state_dict()
        for name, want in ref.state_dict().items():
            np.testing.assert_allclose(trained[name].numpy(), want.numpy(), rtol=1e-5, atol=2e-6, err_msg=name)

    def test_rows_into_cross_entropy_and_means(self):
        self.train_both(_rows)

    def test_token_mask_through_layer_norm(self):
        self.train_both(_tokens)

    def test_columns_max_sum_and_masked_select(self):
        self.train_both(_columns)

    def test_deberta_labelled_rows_by_their_count(self):
        self.train_both(_deberta)

    def test_steps_that_keep_no_row(self):
        self.train_both(_empty)


if __name__ == "__main__":
    unittest.main()
