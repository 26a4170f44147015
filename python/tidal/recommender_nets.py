"""The recommender networks of the real-model suite (tidal.real_models):
DLRM-style models over nn.EmbeddingBag, with fixed-size bags and with bags
of different sizes given by offsets. Built through tidal.real_models, which
seeds them.
"""
import torch
import torch.nn as nn

from tidal.real_model_nets import CLASSES


class DLRM(nn.Module):
    """A DLRM-style recommender (Naumov et al., 2019): a bottom MLP over
    dense features; one nn.EmbeddingBag per sparse feature over a fixed-size
    bag of ids (sum pooling, one table mean), which PyTorch exports as an
    ONNX Loop over the bags; the pairwise dot products of the bottom output
    and the pooled embeddings (bmm, the upper triangle gathered); a top MLP.
    forward(dense [N, 8], sparse [N, 3, 4] ids)."""

    DENSE, TABLES, ROWS, DIM, BAG = 8, 3, 50, 16, 4

    def __init__(self):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(self.DENSE, 32), nn.ReLU(), nn.Linear(32, self.DIM), nn.ReLU())
        self.tables = nn.ModuleList(nn.EmbeddingBag(self.ROWS, self.DIM, mode="mean" if t == 1 else "sum")
                                    for t in range(self.TABLES))
        n = self.TABLES + 1
        upper = [i * n + j for i in range(n) for j in range(i + 1, n)]
        self.register_buffer("pairs", torch.tensor(upper, dtype=torch.int64), persistent=False)
        self.top = nn.Sequential(nn.Linear(self.DIM + len(upper), 32), nn.ReLU(), nn.Linear(32, CLASSES))

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        pooled = [table(sparse[:, t]) for t, table in enumerate(self.tables)]
        z = torch.stack([x] + pooled, dim=1)
        interactions = torch.bmm(z, z.transpose(1, 2)).flatten(1)[:, self.pairs]
        return self.top(torch.cat([x, interactions], dim=1))


class DLRMBags(nn.Module):
    """DLRM's production form: nn.EmbeddingBag over bags of different sizes
    given by offsets (empty bags allowed), which PyTorch exports as a Loop
    whose slice bounds are data (imported as a segment sum / mean). Per
    table the ids are the batch's [N, 4] ids flattened and the offsets the
    exclusive cumulative sum of a `lengths` input (an integer CumSum), so
    bag n holds lengths[n] consecutive ids and the last bag the rest.
    forward(dense [N, 8], sparse [N, 2, 4] ids, lengths [N, 2] in 0..4)."""

    DENSE, TABLES, ROWS, DIM, BAG = 8, 2, 50, 16, 4

    def __init__(self):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(self.DENSE, 32), nn.ReLU(), nn.Linear(32, self.DIM), nn.ReLU())
        self.tables = nn.ModuleList(nn.EmbeddingBag(self.ROWS, self.DIM, mode="sum" if t == 0 else "mean")
                                    for t in range(self.TABLES))
        self.top = nn.Sequential(nn.Linear(self.DIM * (self.TABLES + 1), 32), nn.ReLU(), nn.Linear(32, CLASSES))

    def forward(self, dense, sparse, lengths):
        x = self.bottom(dense)
        pooled = []
        for t, table in enumerate(self.tables):
            lens = lengths[:, t]
            offsets = torch.cumsum(lens, 0) - lens
            pooled.append(table(sparse[:, t].reshape(-1), offsets))
        return self.top(torch.cat([x] + pooled, dim=1))
