"""The real-model suite's networks built on Fourier transforms
(tidal.real_models): a keyword-spotting CNN whose log-mel front end is
inside the model (torch.stft with a Hann window, the power spectrum, a mel
filter bank, log), as torchaudio's MelSpectrogram builds it; and FNet
(Lee-Thorp et al., 2021), a transformer encoder whose attention is the real
part of a 2-D DFT over the sequence and hidden axes (torch.fft.fft2).
Built through tidal.real_models, which seeds them.

torch 1.13 (Debian's) exports neither aten::stft nor the complex FFTs.
`register_spectral_export()` registers what current PyTorch writes for
them at opset 17: PyTorch 2.x's TorchScript exporter's STFT (on the
[batch, length] signal, the window cast to the signal's type, transposed
to torch's [batch, frequencies, frames, 2]); and for fft2(x).real, the
dynamo exporter's form (torchlib's _fft_r2c and real): the real signal
unsqueezed to [..., 1], one DFT per transformed axis, the real part
gathered from the last axis. The suite's models are so exported as a
current PyTorch user's would be.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from tidal.real_model_nets import CLASSES

_REGISTERED = False


def _stft_symbolic(g, signal, n_fft, hop_length, win_length, window, normalized, onesided, return_complex):
    """aten::stft -> ONNX STFT, as PyTorch 2.x's symbolic_opset17 writes it
    for a [batch, length] signal and a window of n_fft samples."""
    from torch.onnx import symbolic_helper as sh

    n_fft = sh._get_const(n_fft, "i", "n_fft")
    hop = sh._maybe_get_const(hop_length, "i")
    hop = hop if isinstance(hop, int) else n_fft // 4
    if sh._maybe_get_const(return_complex, "b") is True:
        raise RuntimeError("STFT export needs return_complex=False")
    if sh._is_none(window):
        window = g.op("Constant", value_t=torch.ones(n_fft))
    from torch.onnx import _type_utils
    to = _type_utils.JitScalarType.from_name(signal.type().scalarType()).onnx_type()
    window = g.op("Cast", window, to_i=to)
    side = sh._maybe_get_const(onesided, "b")
    out = g.op("STFT", signal, g.op("Constant", value_t=torch.tensor(hop, dtype=torch.int64)), window,
               g.op("Constant", value_t=torch.tensor(n_fft, dtype=torch.int64)),
               onesided_i=0 if side is False else 1)
    out = g.op("Transpose", out, perm_i=[0, 2, 1, 3])
    if sh._maybe_get_const(normalized, "b") is True:
        out = g.op("Div", out, g.op("Constant", value_t=torch.tensor(math.sqrt(n_fft))))
    return out


def _fft2_symbolic(g, x, s, dim, norm):
    """aten::fft_fft2 of a real tensor (no s, no norm) -> one DFT per axis."""
    from torch.onnx import symbolic_helper as sh

    if not sh._is_none(s) or not (sh._is_none(norm) or sh._maybe_get_const(norm, "s") == "backward"):
        raise RuntimeError("fft2 export: only the default s and norm")
    dims = sh._get_const(dim, "is", "dim")
    y = g.op("Unsqueeze", x, g.op("Constant", value_t=torch.tensor([-1])))
    for d in dims:  # counted from the back, the parts axis shifts them by one
        y = g.op("DFT", y, axis_i=d - 1 if d < 0 else d, onesided_i=0)
    return y


def _real_symbolic(g, x):
    """aten::real of a [..., 2] (real, imaginary) tensor."""
    return g.op("Gather", x, g.op("Constant", value_t=torch.tensor(0)), axis_i=-1)


def register_spectral_export():
    """Lets torch.onnx.export (torch 1.13) export torch.stft,
    torch.fft.fft2 of a real tensor and .real at opset 17+."""
    global _REGISTERED
    if not _REGISTERED:
        torch.onnx.register_custom_op_symbolic("aten::stft", _stft_symbolic, 17)
        torch.onnx.register_custom_op_symbolic("aten::fft_fft2", _fft2_symbolic, 17)
        torch.onnx.register_custom_op_symbolic("aten::real", _real_symbolic, 17)
        _REGISTERED = True


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate):
    """Triangular filters on the HTK mel scale, [n_freqs, n_mels] (the
    definition of torchaudio.functional.melscale_fbanks, norm None)."""
    def to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    freqs = torch.linspace(0, sample_rate // 2, n_freqs, dtype=torch.float64)
    mels = torch.linspace(to_mel(f_min), to_mel(f_max), n_mels + 2, dtype=torch.float64)
    points = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    diff = points[1:] - points[:-1]
    slopes = points.unsqueeze(0) - freqs.unsqueeze(1)
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    return torch.clamp(torch.minimum(down, up), min=0.0).to(torch.float32)


class KeywordCNN(nn.Module):
    """Keyword spotting on raw audio: torch.stft (n_fft 128, hop 32, Hann,
    centred with reflection padding) -> power -> 20 mel bands -> log ->
    two conv/BN/ReLU blocks -> global average -> linear.
    forward(wave [N, 1024] samples at 8 kHz)."""

    SAMPLES, N_FFT, HOP, MELS, RATE = 1024, 128, 32, 20, 8000

    def __init__(self):
        super().__init__()
        register_spectral_export()
        self.register_buffer("window", torch.hann_window(self.N_FFT), persistent=False)
        self.register_buffer("mel", melscale_fbanks(self.N_FFT // 2 + 1, 0.0, self.RATE / 2, self.MELS, self.RATE),
                             persistent=False)
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, CLASSES)

    def forward(self, wave):
        spec = torch.stft(wave, self.N_FFT, self.HOP, window=self.window, center=True, pad_mode="reflect",
                          return_complex=False)  # [N, 65, frames, 2]
        power = spec.pow(2).sum(-1)
        mel = torch.matmul(power.transpose(1, 2), self.mel)  # [N, frames, 20]
        x = torch.log(mel + 1e-6).unsqueeze(1)
        return self.fc(self.features(x).flatten(1))


class FNetLayer(nn.Module):
    """Fourier mixing in place of attention: x + Re(fft2(x)) over the
    sequence and hidden axes, LayerNorm; then a GELU feed-forward block."""

    def __init__(self, d, ffn):
        super().__init__()
        self.mix_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ffn)
        self.output = nn.Linear(ffn, d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x):
        x = self.mix_norm(x + torch.fft.fft2(x, dim=(-1, -2)).real)
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class FNet(nn.Module):
    """An FNet encoder classifier (Lee-Thorp et al., 2021): word and learned
    position embeddings, LayerNorm, 2 Fourier-mixing layers, the tanh pooler
    on the first token, a linear classifier. forward(input_ids)."""

    VOCAB, SEQ, D, FFN, LAYERS = 128, 16, 64, 128, 2

    def __init__(self):
        super().__init__()
        register_spectral_export()
        self.word_embeddings = nn.Embedding(self.VOCAB, self.D)
        self.position_embeddings = nn.Embedding(self.SEQ, self.D)
        self.emb_norm = nn.LayerNorm(self.D, eps=1e-12)
        self.layers = nn.ModuleList(FNetLayer(self.D, self.FFN) for _ in range(self.LAYERS))
        self.pooler = nn.Linear(self.D, self.D)
        self.classifier = nn.Linear(self.D, CLASSES)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        positions = torch.arange(t, device=input_ids.device)
        x = self.emb_norm(self.word_embeddings(input_ids) + self.position_embeddings(positions))
        for layer in self.layers:
            x = layer(x)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))
