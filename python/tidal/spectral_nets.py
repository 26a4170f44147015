"""The real-model suite's networks built on Fourier transforms
(tidal.real_models): a keyword-spotting CNN whose log-mel front end is
inside the model (torch.stft with a Hann window, the power spectrum, a mel
filter bank, log), as torchaudio's MelSpectrogram builds it; and FNet
(Lee-Thorp et al., 2021), a transformer encoder whose attention is the real
part of a 2-D DFT over the sequence and hidden axes (torch.fft.fft2).
Built through tidal.real_models, which seeds them.

torch 1.13 (Debian's) exports neither aten::stft nor the complex FFTs:
tidal.current_exporter registers what current PyTorch writes for them at
opset 17, so the suite's models are exported as a PyTorch 2.x user's
would be.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from tidal import current_exporter
from tidal.real_model_nets import CLASSES


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
        current_exporter.register()
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
        current_exporter.register()
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
