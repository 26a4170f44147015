"""The hand-written networks of the real-model suite (tidal.real_models):
sequence models (nn.Transformer encoder/decoder classifiers, a GPT-2-style
LM, a BERT-style encoder, LSTM/GRU classifiers) and a small U-Net, at the
sizes the suite trains. Built through tidal.real_models, which seeds them.
"""
import math
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

# The suite's class count (tidal.real_models.CLASSES).
CLASSES = 10

SEQ, FEATURES, D_MODEL, HEADS, FFN = 16, 32, 64, 4, 128


class EncoderClassifier(nn.Module):
    """nn.TransformerEncoder (2 post-norm layers) over projected features,
    mean-pooled, then a linear classifier."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEATURES, D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, x):
        return self.head(self.encoder(self.proj(x)).mean(dim=1))


class Seq2SeqClassifier(nn.Module):
    """nn.Transformer (1 encoder and 1 decoder layer, causal target mask as
    a bool buffer) over projected source and target features; the decoder
    output is mean-pooled and classified."""

    TGT = 8

    def __init__(self):
        super().__init__()
        self.src_proj = nn.Linear(FEATURES, D_MODEL)
        self.tgt_proj = nn.Linear(FEATURES, D_MODEL)
        self.transformer = nn.Transformer(D_MODEL, HEADS, 1, 1, FFN, dropout=0.0, batch_first=True)
        self.register_buffer("causal", torch.triu(torch.ones(self.TGT, self.TGT, dtype=torch.bool), 1))
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, src, tgt):
        out = self.transformer(self.src_proj(src), self.tgt_proj(tgt), tgt_mask=self.causal)
        return self.head(out.mean(dim=1))


class DecoderClassifier(nn.Module):
    """nn.TransformerDecoder (2 layers, pre-norm, GELU) whose learned
    queries (a parameter expanded over the batch, as DETR's) cross-attend
    to the projected input; the queries' outputs are flattened and classified."""

    QUERIES = 4

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEATURES, D_MODEL)
        self.queries = nn.Parameter(torch.randn(self.QUERIES, D_MODEL) * 0.02)
        layer = nn.TransformerDecoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers=2)
        self.head = nn.Linear(self.QUERIES * D_MODEL, CLASSES)

    def forward(self, x):
        memory = self.proj(x)
        q = self.queries.unsqueeze(0).expand(x.shape[0], -1, -1)
        return self.head(self.decoder(q, memory).flatten(1))


class CausalSelfAttention(nn.Module):
    """GPT-2's attention: fused qkv projection, causal mask (a bool buffer,
    as Hugging Face's `bias`), scaled dot product, output projection."""

    def __init__(self, d, heads, block):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(block, block, dtype=torch.bool)).view(1, 1, block, block))

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(n, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(~self.bias[:, :, :t, :t], float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(n, t, d))


class GPTBlock(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, block)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A GPT-2-style decoder LM: token and learned position embeddings, 2
    pre-norm blocks, final LayerNorm, the output projection tied to the
    token embedding; forward(input_ids, labels) returns the mean next-token
    cross-entropy (labels shifted inside, as Hugging Face's GPT2LMHeadModel)."""

    VOCAB, BLOCK, D, HEADS, LAYERS = 96, 16, 64, 4, 2

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(self.VOCAB, self.D)
        self.wpe = nn.Embedding(self.BLOCK, self.D)
        self.h = nn.ModuleList(GPTBlock(self.D, self.HEADS, self.BLOCK) for _ in range(self.LAYERS))
        self.ln_f = nn.LayerNorm(self.D)
        self.lm_head = nn.Linear(self.D, self.VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, input_ids, labels):
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        shift_logits = logits[:, :-1, :].reshape(-1, self.VOCAB)
        return F.cross_entropy(shift_logits, labels[:, 1:].reshape(-1))


class RMSNorm(nn.Module):
    """LLaMA's RMSNorm: x / sqrt(mean(x^2) + eps) * weight."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def _rotate(x, cos, sin):
    """Rotary position embedding, the half-split form of Hugging Face's LLaMA."""
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.heads = heads
        self.input_norm = RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.post_norm = RMSNorm(d)
        self.gate, self.up = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((block, block), float("-inf")), 1), persistent=False)

    def mlp(self, y):
        return self.down(F.silu(self.gate(y)) * self.up(y))

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        hd = d // self.heads
        y = self.input_norm(x)
        q, k, v = (p(y).view(b, t, self.heads, hd).transpose(1, 2) for p in (self.q, self.k, self.v))
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        att = (q @ k.transpose(-2, -1) / math.sqrt(hd) + self.mask[:t, :t]).softmax(-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.post_norm(x))


class Llama(nn.Module):
    """A LLaMA-style decoder LM: RMSNorm, rotary position embeddings,
    SwiGLU MLPs, no biases, the output projection tied to the token
    embedding; forward(input_ids, labels) returns the mean next-token
    cross-entropy (labels shifted inside)."""

    VOCAB, BLOCK, D, HEADS, LAYERS = 96, 16, 64, 4, 2

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(self.VOCAB, self.D)
        self.layers = nn.ModuleList(LlamaBlock(self.D, self.HEADS, self.BLOCK) for _ in range(self.LAYERS))
        self.norm = RMSNorm(self.D)
        self.lm_head = nn.Linear(self.D, self.VOCAB, bias=False)
        self.lm_head.weight = self.embed.weight
        hd = self.D // self.HEADS
        freq = torch.outer(torch.arange(self.BLOCK).float(), 1.0 / 10000 ** (torch.arange(0, hd, 2).float() / hd))
        angles = torch.cat((freq, freq), dim=-1)[None, None]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, input_ids, labels):
        t = input_ids.shape[1]
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, self.cos[:, :, :t], self.sin[:, :, :t])
        logits = self.lm_head(self.norm(x))
        return F.cross_entropy(logits[:, :-1, :].reshape(-1, self.VOCAB), labels[:, 1:].reshape(-1))


class MoEFeedForward(nn.Module):
    """A Mixtral-style sparse MLP: a router picks the top 2 of 4 SwiGLU
    experts per token (torch.topk), their softmaxed scores weigh the
    experts' outputs (scattered into a dense [.., experts] weight, every
    expert computed: the small-model form of the dispatch). `aux` is
    Mixtral's load-balancing loss of the last call (F.one_hot of the chosen
    experts: the fraction of tokens routed to each expert times its mean
    router probability, times the expert count)."""

    EXPERTS, TOP = 4, 2

    def __init__(self, d):
        super().__init__()
        self.router = nn.Linear(d, self.EXPERTS, bias=False)
        self.gate = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(self.EXPERTS))
        self.up = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(self.EXPERTS))
        self.down = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(self.EXPERTS))

    def forward(self, x):
        logits = self.router(x)
        scores, chosen = logits.topk(self.TOP, dim=-1)
        weights = torch.zeros(x.shape[:-1] + (self.EXPERTS,), dtype=x.dtype).scatter(-1, chosen, scores.softmax(-1))
        routed = F.one_hot(chosen.reshape(-1, self.TOP), self.EXPERTS).to(x.dtype)  # [tokens, top, experts]
        probs = logits.softmax(-1).reshape(-1, self.EXPERTS)
        self.aux = (routed.mean(0) * probs.mean(0)).sum() * self.EXPERTS
        out = 0
        for e in range(self.EXPERTS):
            expert = self.down[e](F.silu(self.gate[e](x)) * self.up[e](x))
            out = out + weights[..., e:e + 1] * expert
        return out


class MoEBlock(LlamaBlock):
    def __init__(self, d, heads, block):
        super().__init__(d, heads, block)
        del self.gate, self.up, self.down
        self.moe = MoEFeedForward(d)

    def mlp(self, y):
        return self.moe(y)


class MoE(Llama):
    """The LLaMA-style LM with Mixtral-style top-2-of-4 expert MLPs; the loss
    adds Mixtral's router load-balancing loss (coefficient 0.02)."""

    VOCAB, BLOCK, D, HEADS, LAYERS = 96, 16, 32, 4, 2
    AUX = 0.02

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(MoEBlock(self.D, self.HEADS, self.BLOCK) for _ in range(self.LAYERS))

    def forward(self, input_ids, labels):
        loss = super().forward(input_ids, labels)
        return loss + self.AUX * sum(layer.moe.aux for layer in self.layers)


class BertLayer(nn.Module):
    """A post-norm BERT layer, attention written out as Hugging Face's."""

    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ffn)
        self.output = nn.Linear(ffn, d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, additive_mask):
        n, t, d = x.shape
        split = lambda z: z.view(n, t, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + additive_mask
        ctx = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(n, t, d)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class Bert(nn.Module):
    """A BERT-style encoder classifier: word, learned position (position_ids
    buffer) and token-type embeddings, LayerNorm, 2 layers with the padding
    mask as an additive (1 - mask) * -10000 bias, the tanh pooler on [CLS],
    a linear classifier. forward(input_ids, token_type_ids, attention_mask)."""

    VOCAB, MAX_POS, TYPES, D, HEADS, FFN, LAYERS = 128, 32, 2, 64, 4, 128, 2

    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(self.VOCAB, self.D, padding_idx=0)
        self.position_embeddings = nn.Embedding(self.MAX_POS, self.D)
        self.token_type_embeddings = nn.Embedding(self.TYPES, self.D)
        self.register_buffer("position_ids", torch.arange(self.MAX_POS).unsqueeze(0))
        self.emb_norm = nn.LayerNorm(self.D, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(self.D, self.HEADS, self.FFN) for _ in range(self.LAYERS))
        self.pooler = nn.Linear(self.D, self.D)
        self.classifier = nn.Linear(self.D, CLASSES)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, input_ids, token_type_ids, attention_mask):
        t = input_ids.shape[1]
        x = (self.word_embeddings(input_ids) + self.position_embeddings(self.position_ids[:, :t])
             + self.token_type_embeddings(token_type_ids))
        x = self.emb_norm(x)
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


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


def _conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    """A small U-Net on 3x32x32: two max-pool downsamplings (8, 16, 32
    channels), one ConvTranspose2d and one bilinear nn.Upsample + conv
    upsampling, each concatenated with its skip; a 1x1 conv to 3 output
    channels, trained with MSE against the target image."""

    def __init__(self, cin=3, cout=3):
        super().__init__()
        self.enc1, self.enc2, self.mid = _conv_block(cin, 8), _conv_block(8, 16), _conv_block(16, 32)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec2 = _conv_block(32, 16)
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(16, 8, 1))
        self.dec1 = _conv_block(16, 8)
        self.out = nn.Conv2d(8, cout, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.out(d1)


class VAE(nn.Module):
    """A convolutional variational autoencoder on 3x32x32: two stride-2 convs
    to a 16-d latent (mean and log-variance), the reparameterisation
    z = mu + eps * exp(logvar / 2) with eps = torch.randn_like(mu) (ONNX
    RandomNormalLike), two ConvTranspose2d back to the image; the loss (inside
    the model) is the reconstruction MSE plus 0.01 x the KL divergence.

    Outside an ONNX export eps is not torch's but tidal's own draw for that
    step (tidal.random_draws: seed 0, stream 0, the step counted by forward
    calls), so that a PyTorch reference sees the noise the executable draws."""

    LATENT = 16

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 4, 2, 1), nn.ReLU())
        self.stats = nn.Linear(32 * 8 * 8, 2 * self.LATENT)
        self.expand = nn.Linear(self.LATENT, 32 * 8 * 8)
        self.dec = nn.Sequential(nn.ReLU(), nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(16, 3, 4, 2, 1), nn.Sigmoid())
        self.steps = 0

    def noise_like(self, mu):
        if torch.onnx.is_in_onnx_export():
            return torch.randn_like(mu)
        from tidal import random_draws  # noqa: deferred: only references need it

        eps = random_draws.normal(tuple(mu.shape), step=self.steps, dtype=mu.detach().numpy().dtype)
        self.steps += 1
        return torch.from_numpy(eps)

    def forward(self, x):
        h = self.enc(x).flatten(1)
        mu, logvar = self.stats(h).chunk(2, dim=1)
        z = mu + self.noise_like(mu) * torch.exp(0.5 * logvar)
        recon = self.dec(self.expand(z).view(-1, 32, 8, 8))
        kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu * mu - logvar.exp(), dim=1))
        return torch.mean((recon - x) ** 2) + 0.01 * kl


class STN(nn.Module):
    """A spatial transformer classifier (Jaderberg et al., 2015) on 3x32x32:
    a localisation CNN regresses an affine theta (near the identity), the
    sampling grid is theta applied to the output pixels' normalised
    coordinates (F.affine_grid written out: torch 1.13 cannot export it),
    F.grid_sample (ONNX GridSample, opset 16) warps the image bilinearly
    with zero padding, and a small CNN classifies the warped image."""

    SIZE = 32

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(3, 8, 5, 2, 2), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6))
        with torch.no_grad():
            self.loc[-1].weight.mul_(0.1)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.cls = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, CLASSES))
        # (x, y, 1) of every output pixel, align_corners=False.
        c = (2 * torch.arange(self.SIZE, dtype=torch.float32) + 1) / self.SIZE - 1
        ys, xs = torch.meshgrid(c, c, indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys, torch.ones_like(xs)], -1).reshape(-1, 3), persistent=False)

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = (self.base @ theta.transpose(1, 2)).view(-1, self.SIZE, self.SIZE, 2)
        return self.cls(F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False))


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
