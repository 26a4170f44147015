"""The graph networks of the real-model suite (tidal.real_models): message
passing over edge lists as PyTorch Geometric runs it (no dense adjacency).
A batch of small graphs is one big graph: node ids are offset by each
graph's position in the batch, messages are gathered from the source nodes
(index_select) and summed at the destination nodes with scatter_add_ over
an index broadcast to the messages (torch_geometric.utils.scatter's sum),
which PyTorch exports as ONNX Gather and ScatterElements(reduction "add");
the max aggregation is scatter_reduce(amax, include_self=False) into
zeros, ScatterElements(reduction "max") at opset 18, exported as the
dynamo exporter writes it (tidal.current_exporter).
Built through tidal.real_models, which seeds them.
"""
import torch
import torch.nn as nn

from tidal import current_exporter
from tidal.real_model_nets import CLASSES


def scatter_sum(src, index, nodes):
    """Sums the rows of src [E, F] into `nodes` rows by index [E]."""
    out = torch.zeros(nodes, src.shape[1], dtype=src.dtype)
    return out.scatter_add_(0, index[:, None].expand_as(src), src)


def scatter_max(src, index, nodes):
    """The largest of the rows of src [E, F] per index [E]; 0 for a node no
    row reaches (torch_geometric.utils.scatter's max)."""
    out = torch.zeros(nodes, src.shape[1], dtype=src.dtype)
    return out.scatter_reduce(0, index[:, None].expand_as(src), src, "amax", include_self=False)


class SAGEConv(nn.Module):
    """GraphSAGE (Hamilton et al., 2017), PyG's SAGEConv: lin_l(aggregate
    of the neighbours' features) + lin_r(own features), the aggregate their
    mean or their element-wise max."""

    def __init__(self, f_in, f_out, aggr="mean"):
        super().__init__()
        self.aggr = aggr
        self.lin_l = nn.Linear(f_in, f_out)
        self.lin_r = nn.Linear(f_in, f_out, bias=False)

    def forward(self, h, src, dst):
        n = h.shape[0]
        messages = h.index_select(0, src)
        if self.aggr == "max":
            return self.lin_l(scatter_max(messages, dst, n)) + self.lin_r(h)
        summed = scatter_sum(messages, dst, n)
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
    """A SAGEConv (mean), a GINConv (sum) and a SAGEConv (max) layer with
    ReLU, a global mean pool per graph, a linear classifier. forward(x [N, 12, 8] node
    features, edges [N, 24, 2] (source, destination) node ids per graph)."""

    NODES, EDGES, FEATURES, HIDDEN = 12, 24, 8, 32

    def __init__(self):
        super().__init__()
        current_exporter.register()
        self.sage = SAGEConv(self.FEATURES, self.HIDDEN)
        self.gin = GINConv(self.HIDDEN, self.HIDDEN)
        self.sage_max = SAGEConv(self.HIDDEN, self.HIDDEN, aggr="max")
        self.out = nn.Linear(self.HIDDEN, CLASSES)

    def forward(self, x, edges):
        b = x.shape[0]
        h = x.reshape(b * self.NODES, self.FEATURES)
        ids = (edges + (torch.arange(b) * self.NODES)[:, None, None]).reshape(-1, 2)
        src, dst = ids[:, 0], ids[:, 1]
        h = torch.relu(self.sage(h, src, dst))
        h = torch.relu(self.gin(h, src, dst))
        h = torch.relu(self.sage_max(h, src, dst))
        return self.out(h.reshape(b, self.NODES, self.HIDDEN).mean(1))


class NodeClassifier(nn.Module):
    """Node classification as PyTorch Geometric's examples train it: two
    SAGEConv (mean) layers over each graph's nodes, the loss over the
    training nodes only (F.cross_entropy(out[train_mask], y[train_mask]):
    NonZero and GatherND, lib/Importer/MaskedSelection.cpp).
    forward(x [N, 12, 8], edges [N, 24, 2], labels [N, 12] class ids,
    train_mask [N, 12] 0/1) -> the loss."""

    NODES, EDGES, FEATURES, HIDDEN = 12, 24, 8, 32

    def __init__(self):
        super().__init__()
        self.sage1 = SAGEConv(self.FEATURES, self.HIDDEN)
        self.sage2 = SAGEConv(self.HIDDEN, CLASSES)

    def forward(self, x, edges, labels, train_mask):
        b = x.shape[0]
        h = x.reshape(b * self.NODES, self.FEATURES)
        ids = (edges + (torch.arange(b) * self.NODES)[:, None, None]).reshape(-1, 2)
        src, dst = ids[:, 0], ids[:, 1]
        out = self.sage2(torch.relu(self.sage1(h, src, dst)), src, dst)
        mask = train_mask.reshape(-1).bool()
        return torch.nn.functional.cross_entropy(out[mask], labels.reshape(-1)[mask])
