"""The hand-written transformer networks of the real-model suite
(tidal.real_models): nn.Transformer encoder/decoder classifiers, GPT-2-style
LMs (plain and on a padded batch), LLaMA-style LMs (dense and mixture of
experts) and a BERT-style encoder, at the sizes the suite trains; and the
suite's shared sizes. The recurrent, image and recommender networks are in
recurrent_nets.py, image_nets.py and recommender_nets.py. Built through
tidal.real_models, which seeds them.
"""
import math

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


class PaddedSelfAttention(CausalSelfAttention):
    """CausalSelfAttention with a padding mask: an additive -1e4 bias on the
    padded keys (as Hugging Face builds it from attention_mask)."""

    def forward(self, x, key_bias):
        n, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(n, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads)) + key_bias
        att = att.masked_fill(~self.bias[:, :, :t, :t], -1e4)
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(n, t, d))


class GPTPadded(GPT):
    """The GPT-2-style LM on a padded batch, as Hugging Face runs it:
    position_ids = attention_mask.cumsum(-1) - 1 (an integer CumSum; 1 on
    the padding), padded keys masked in attention, padded labels ignored
    (-100) in the loss. forward(input_ids, attention_mask, labels)."""

    def __init__(self):
        super().__init__()
        for block in self.h:
            old = block.attn
            block.attn = PaddedSelfAttention(self.D, self.HEADS, self.BLOCK)
            block.attn.load_state_dict(old.state_dict())

    def forward(self, input_ids, attention_mask, labels):
        position_ids = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)
        key_bias = (1.0 - attention_mask[:, None, None, :].to(self.wte.weight.dtype)) * -1e4
        x = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            x = x + block.attn(block.ln_1(x), key_bias)
            x = x + block.mlp(block.ln_2(x))
        logits = self.lm_head(self.ln_f(x))
        targets = labels.masked_fill(attention_mask == 0, -100)[:, 1:].reshape(-1)
        return F.cross_entropy(logits[:, :-1, :].reshape(-1, self.VOCAB), targets, ignore_index=-100)


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


class BertMLM(Bert):
    """BERT's masked-language-model objective as training scripts write it:
    the chosen tokens replaced by [MASK] (id 1), the encoder, an LM head
    tied to the word embeddings, and the loss over the chosen positions
    only: F.cross_entropy(logits[chosen], input_ids[chosen]) (NonZero and
    GatherND, lib/Importer/MaskedSelection.cpp).
    forward(input_ids, mlm_mask 0/1) -> the loss."""

    MASK_ID = 1

    def __init__(self):
        super().__init__()
        # Every id is a token here: no padding row (ONNX keeps no
        # padding_idx, so tidal would train that row where PyTorch does not).
        self.word_embeddings = nn.Embedding(self.VOCAB, self.D)
        nn.init.normal_(self.word_embeddings.weight, std=0.02)
        self.transform = nn.Linear(self.D, self.D)
        self.transform_norm = nn.LayerNorm(self.D, eps=1e-12)
        self.lm_bias = nn.Parameter(torch.zeros(self.VOCAB))

    def forward(self, input_ids, mlm_mask):
        t = input_ids.shape[1]
        chosen = mlm_mask.bool()
        ids = torch.where(chosen, torch.full_like(input_ids, self.MASK_ID), input_ids)
        x = self.emb_norm(self.word_embeddings(ids) + self.position_embeddings(self.position_ids[:, :t])
                          + self.token_type_embeddings(torch.zeros_like(ids)))
        no_padding = torch.zeros(1, 1, 1, t, dtype=x.dtype)
        for layer in self.layers:
            x = layer(x, no_padding)
        h = self.transform_norm(F.gelu(self.transform(x[chosen])))  # [chosen tokens, d]
        logits = h @ self.word_embeddings.weight.t() + self.lm_bias
        return F.cross_entropy(logits, input_ids[chosen])
