"""The recurrent networks of the real-model suite (tidal.real_models):
nn.LSTM/GRU/RNN classifiers, a cell looped in TorchScript over a list, and
an LSTM over packed sequences. Built through tidal.real_models, which seeds
them.
"""
from typing import List

import torch
import torch.nn as nn

from tidal.real_model_nets import CLASSES, FEATURES


class RNNClassifier(nn.Module):
    """nn.LSTM (2 layers), nn.GRU (1 layer, bidirectional) or nn.RNN (2
    layers, bidirectional, ReLU) over a feature sequence; the last layer's
    final hidden state(s) are classified."""

    def __init__(self, kind):
        super().__init__()
        hidden = 32
        if kind == "lstm":
            self.rnn = nn.LSTM(FEATURES // 2, hidden, num_layers=2, batch_first=True)
            self.directions = 1
        elif kind == "gru":
            self.rnn = nn.GRU(FEATURES // 2, hidden, num_layers=1, batch_first=True, bidirectional=True)
            self.directions = 2
        else:
            self.rnn = nn.RNN(FEATURES // 2, hidden, num_layers=2, nonlinearity="relu", batch_first=True,
                              bidirectional=True)
            self.directions = 2
        self.head = nn.Linear(hidden * self.directions, CLASSES)

    def forward(self, x):
        _, h = self.rnn(x)
        if isinstance(h, tuple):  # LSTM: (h_n, c_n)
            h = h[0]
        last = h[-self.directions:].transpose(0, 1).reshape(x.shape[0], -1)
        return self.head(last)


class ScriptedCell(nn.Module):
    """A hand-written recurrent cell looped in TorchScript, as research code
    writes new cells: per step a layer-normalised minimal GRU (update gate
    and candidate), the steps taken with x.unbind(1) and kept in a list,
    then torch.stack. torch.jit.script exports the loop as an ONNX Loop over
    a SplitToSequence, carrying the list as a sequence."""

    HIDDEN = 32

    def __init__(self):
        super().__init__()
        self.hidden = self.HIDDEN
        self.inp = nn.Linear(FEATURES // 2, 2 * self.HIDDEN)
        self.rec = nn.Linear(self.HIDDEN, 2 * self.HIDDEN, bias=False)
        self.norm = nn.LayerNorm(self.HIDDEN)
        self.head = nn.Linear(self.HIDDEN, CLASSES)

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype)
        outs: List[torch.Tensor] = []
        for step in x.unbind(1):
            gates = self.inp(step) + self.rec(h)
            z = torch.sigmoid(gates[:, :self.hidden])
            candidate = torch.tanh(gates[:, self.hidden:])
            h = self.norm((1 - z) * h + z * candidate)
            outs.append(h)
        return self.head(torch.stack(outs, 1).mean(1))


class PackedLSTM(nn.Module):
    """A bidirectional nn.LSTM over padded sequences of different lengths
    through pack_padded_sequence (enforce_sorted=False) and
    pad_packed_sequence, as NLP code feeds variable-length batches: ONNX
    LSTM with sequence_lens, the lengths sorted (integer TopK) and the
    order restored (integer ScatterElements). The outputs are averaged over
    each sequence's own steps and classified. forward(input [N, T, F],
    lengths [N]); lengths below 1 are taken as 1. The zero initial state is
    passed explicitly: PyTorch's own default for a packed input is traced
    as a constant of the export's batch size."""

    HIDDEN = 32

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(FEATURES // 2, self.HIDDEN, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * self.HIDDEN, CLASSES)

    def forward(self, x, lengths):
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        lengths = lengths.clamp(min=1)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        h0 = torch.zeros(2, x.shape[0], self.HIDDEN, dtype=x.dtype)
        out, _ = self.lstm(packed, (h0, h0))
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.head(out.sum(1) / lengths[:, None].to(x.dtype))
