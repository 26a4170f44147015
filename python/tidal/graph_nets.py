"""The graph networks of the real-model suite (tidal.real_models): message
passing over edge lists as PyTorch Geometric runs it (no dense adjacency).
A batch of small graphs is one big graph: node ids are offset by each
graph's position in the batch, messages are gathered from the source nodes
(index_select) and summed at the destination nodes with scatter_add_ over
an index broadcast to the messages (torch_geometric.utils.scatter's sum),
which PyTorch exports as ONNX Gather and ScatterElements(reduction "add").
Built through tidal.real_models, which seeds them.
"""
import torch
import torch.nn as nn

from tidal.real_model_nets import CLASSES


def scatter_sum(src, index, nodes):
    """Sums the rows of src [E, F] into `nodes` rows by index [E]."""
    out = torch.zeros(nodes, src.shape[1], dtype=src.dtype)
    return out.scatter_add_(0, index[:, None].expand_as(src), src)


class SAGEConv(nn.Module):
    """GraphSAGE's mean aggregator (Hamilton et al., 2017), PyG's SAGEConv:
    lin_l(mean of the neighbours' features) + lin_r(own features)."""

    def __init__(self, f_in, f_out):
        super().__init__()
        self.lin_l = nn.Linear(f_in, f_out)
        self.lin_r = nn.Linear(f_in, f_out, bias=False)

    def forward(self, h, src, dst):
        n = h.shape[0]
        summed = scatter_sum(h.index_select(0, src), dst, n)
        degree = scatter_sum(torch.ones(dst.shape[0], 1, dtype=h.dtype), dst, n).clamp(min=1)
        return self.lin_l(summed / degree) + self.lin_r(h)


class GINConv(nn.Module):
    """GIN (Xu et al., 2019): MLP((1 + eps) * h + sum of the neighbours),
    eps learned."""

    def __init__(self, f_in, f_out):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(f_in, f_out), nn.ReLU(), nn.Linear(f_out, f_out))

    def forward(self, h, src, dst):
        return self.mlp((1 + self.eps) * h + scatter_sum(h.index_select(0, src), dst, h.shape[0]))


class GraphClassifier(nn.Module):
    """A SAGEConv (mean) and a GINConv (sum) layer with ReLU, a global mean
    pool per graph, a linear classifier. forward(x [N, 12, 8] node
    features, edges [N, 24, 2] (source, destination) node ids per graph)."""

    NODES, EDGES, FEATURES, HIDDEN = 12, 24, 8, 32

    def __init__(self):
        super().__init__()
        self.sage = SAGEConv(self.FEATURES, self.HIDDEN)
        self.gin = GINConv(self.HIDDEN, self.HIDDEN)
        self.out = nn.Linear(self.HIDDEN, CLASSES)

    def forward(self, x, edges):
        b = x.shape[0]
        h = x.reshape(b * self.NODES, self.FEATURES)
        ids = (edges + (torch.arange(b) * self.NODES)[:, None, None]).reshape(-1, 2)
        src, dst = ids[:, 0], ids[:, 1]
        h = torch.relu(self.sage(h, src, dst))
        h = torch.relu(self.gin(h, src, dst))
        return self.out(h.reshape(b, self.NODES, self.HIDDEN).mean(1))
