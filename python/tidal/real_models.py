"""The real-model suite: small versions of the architectures PyTorch users bring.

Every entry builds a real architecture (torchvision's classification
families through torchvision's own classes, VisionTransformer, Swin
Transformer, nn.Transformer*, GPT-2- and LLaMA-style LMs, a mixture of
experts, a BERT-style
encoder, a U-Net, a VAE, a spatial transformer, LSTM, GRU and RNN classifiers) at a size where 5 training steps take seconds on 2 cores,
with example inputs and a loss form:

- "cross-entropy": the model returns class logits [N, 10]; tidalc adds the
  loss and the int64 `label` input [N].
- "mse": the model returns a tensor; tidalc adds the loss and a `label`
  input of the same shape.
- "output": the model computes its own loss (the GPT LM's token
  cross-entropy, as Hugging Face models do) and returns it as a scalar;
  its targets are ordinary inputs.

`size="small"` (the default; the test suite and the benchmark) shrinks the
depth and width through the constructors' own parameters where the named
configuration would be slow; `size="full"` is the named configuration
(`torchvision.models.resnet18(num_classes=10)`, ...) at an input size its
exporter accepts. Both have the same ops. Dropout is disabled (p=0, and
stochastic depth 0): SPEC section 5 compares random ops with them off.

    real_models.build(name, size) -> nn.Module (seeded, train mode)
    real_models.example_inputs(name, batch, size) -> tensors for tracing
    real_models.dataset(name, samples, size) -> ({input: array}, label or None)
    real_models.export(name, path, opset=13, size=...) -> onnx.ModelProto
"""

import contextlib
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple
from unittest import mock

import numpy as np
import onnx
import torch
import torch.nn as nn

from tidal import export as zoo_export
from tidal import zoo
from tidal.spectral_nets import FNet, KeywordCNN
from tidal.volume_nets import UNet3D, VoxelMorph
from tidal.graph_nets import GraphClassifier, NodeClassifier
from tidal.image_nets import STN, DeformableCNN, UNet, VAE
from tidal.real_model_nets import (CLASSES, FEATURES, GPT, SEQ, Bert, BertMLM, DecoderClassifier, EncoderClassifier,
                                   GPTPadded, Llama, MoE, Seq2SeqClassifier)
from tidal.recommender_nets import DLRM, DLRMBags
from tidal.recurrent_nets import PackedLSTM, RNNClassifier, ScriptedCell

SEED = 0
DATA_SEED = 1234
SIZES = ("small", "full")


@dataclass(frozen=True)
class Input:
    """A data input: ONNX name, shape without the batch dimension, dtype, and
    for integer inputs the value range [0, high) (token ids, 0/1 masks)."""

    name: str
    shape: Tuple[int, ...]
    dtype: torch.dtype = torch.float32
    high: int = 0


@dataclass(frozen=True)
class RealModel:
    name: str
    family: str  # "torchvision", "transformer", "rnn", "unet", "vae", "stn", "recommender", "audio", "graph", "dcn", "volume"
    build: Callable[[], nn.Module]  # the small version
    inputs: Tuple[Input, ...]
    loss: str = "cross-entropy"  # | "mse" | "output"
    # What the small version changes against the named configuration.
    note: str = ""
    # The named configuration and its input shapes, where it differs.
    full: Optional[Callable[[], nn.Module]] = None
    full_inputs: Optional[Tuple[Input, ...]] = None
    batch: int = 4
    outputs: Tuple[str, ...] = field(default=("output",))
    # The lowest opset the model exports at (GridSample needs 16).
    min_opset: int = 13

    def inputs_for(self, size: str) -> Tuple[Input, ...]:
        return self.full_inputs if size == "full" and self.full_inputs else self.inputs

    def builder(self, size: str) -> Callable[[], nn.Module]:
        return self.full if size == "full" and self.full else self.build


# --- helpers ----------------------------------------------------------------------


def _no_dropout(model: nn.Module) -> nn.Module:
    """Sets every dropout probability to 0 (SPEC 5: compare with them off)."""
    for m in model.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)):
            m.p = 0.0
        if isinstance(m, (nn.LSTM, nn.GRU, nn.RNN)):
            m.dropout = 0.0
    return model


def _tv():
    import torchvision.models as tvm  # noqa: deferred: only the vision builders need it

    return tvm


def _image(hw: int) -> Tuple[Input, ...]:
    return (Input("input", (3, hw, hw)),)


# --- torchvision --------------------------------------------------------------------


def _resnet(layers, block="basic", **kw):
    from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet

    return ResNet(BasicBlock if block == "basic" else Bottleneck, layers, num_classes=CLASSES, **kw)


def _regnet_small():
    from torchvision.models.regnet import BlockParams, RegNet

    params = BlockParams.from_init_params(depth=5, w_0=16, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=CLASSES)


def _vgg_small():
    """VGG-11 with BN at 1/8 width on 32x32: the exporter cannot upsample the
    1x1 feature map to the 7x7 that AdaptiveAvgPool2d((7, 7)) asks for, so
    the pool is to 1x1 and the classifier (same layers) 64 -> 128 -> 128."""
    from torchvision.models.vgg import VGG, make_layers

    cfg = [8, "M", 16, "M", 32, 32, "M", 64, 64, "M", 64, 64, "M"]
    model = VGG(make_layers(cfg, batch_norm=True), num_classes=CLASSES, dropout=0.0)
    model.avgpool = nn.AdaptiveAvgPool2d((1, 1))
    model.classifier = nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(True), nn.Dropout(0.0),
        nn.Linear(128, 128), nn.ReLU(True), nn.Dropout(0.0),
        nn.Linear(128, CLASSES),
    )
    return model


def _alexnet_small():
    """AlexNet on 64x64: its features end at 1x1, so the pool is to 1x1
    (not the exporter-refused 6x6 upsampling) and the classifier (same
    layers) 256 -> 256 -> 256."""
    model = _tv().alexnet(num_classes=CLASSES, dropout=0.0)
    model.avgpool = nn.AdaptiveAvgPool2d((1, 1))
    model.classifier = nn.Sequential(
        nn.Dropout(0.0), nn.Linear(256, 256), nn.ReLU(True),
        nn.Dropout(0.0), nn.Linear(256, 256), nn.ReLU(True),
        nn.Linear(256, CLASSES),
    )
    return model


def _efficientnet_small():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.5, depth_mult=0.5)
    return EfficientNet(setting, 0.0, stochastic_depth_prob=0.0, num_classes=CLASSES, last_channel=last)


def _convnext_small():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    setting = [CNBlockConfig(24, 48, 1), CNBlockConfig(48, 96, 1), CNBlockConfig(96, 192, 1),
               CNBlockConfig(192, None, 1)]
    return ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=CLASSES)


def _swin_small():
    """Swin-T's blocks (shifted windows: the attention mask and the cyclic
    shift, relative position bias) at 1/4 width, window 4 on 32x32 (8x8
    tokens), two blocks in the first two stages, one in the last two."""
    from torchvision.models.swin_transformer import SwinTransformer

    return SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2, 1, 1], num_heads=[1, 2, 4, 8],
                           window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=CLASSES)


def _vision_models() -> List[RealModel]:
    tv = _tv
    i32, i64, i139 = _image(32), _image(64), _image(139)
    return [
        RealModel("resnet18", "torchvision", lambda: _resnet([1, 1, 1, 1]), i64,
                  note="one BasicBlock per stage (resnet18: 2); 64x64 (at 32x32 layer4's maps are 1x1 and"
                       " BatchNorm normalizes 4 values, where PyTorch's own runs drift apart)",
                  full=lambda: tv().resnet18(num_classes=CLASSES)),
        RealModel("resnext50_32x4d", "torchvision", lambda: _resnet([1, 1, 1, 1], "bottleneck", groups=32,
                                                                    width_per_group=4), i32,
                  note="one Bottleneck per stage (3, 4, 6, 3)",
                  full=lambda: tv().resnext50_32x4d(num_classes=CLASSES)),
        RealModel("wide_resnet50_2", "torchvision", lambda: _resnet([1, 1, 1, 1], "bottleneck",
                                                                    width_per_group=128), i32,
                  note="one Bottleneck per stage (3, 4, 6, 3)",
                  full=lambda: tv().wide_resnet50_2(num_classes=CLASSES)),
        RealModel("mobilenet_v2", "torchvision", lambda: tv().mobilenet_v2(num_classes=CLASSES, width_mult=0.5), i32,
                  note="width_mult 0.5", full=lambda: tv().mobilenet_v2(num_classes=CLASSES)),
        RealModel("mobilenet_v3_small", "torchvision",
                  lambda: tv().mobilenet_v3_small(num_classes=CLASSES, width_mult=0.5), i32,
                  note="width_mult 0.5", full=lambda: tv().mobilenet_v3_small(num_classes=CLASSES)),
        RealModel("densenet121", "torchvision",
                  lambda: tv().DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16,
                                        num_classes=CLASSES), i64,
                  note="growth 8, blocks (2, 2, 2, 2), 16 initial features (32; 6, 12, 24, 16; 64); 64x64 (at"
                       " 32x32 the last block's maps are 1x1: BatchNorm over 4 values)",
                  full=lambda: tv().densenet121(num_classes=CLASSES)),
        RealModel("squeezenet1_0", "torchvision", lambda: tv().squeezenet1_0(num_classes=CLASSES), i32),
        RealModel("shufflenet_v2_x0_5", "torchvision", lambda: tv().shufflenet_v2_x0_5(num_classes=CLASSES), i64),
        RealModel("regnet_y_400mf", "torchvision", _regnet_small, i64,
                  note="RegNetY design space, depth 5, w0 16, wa 8, wm 2 (16; 48, 27.89, 2.09); group width 8, SE 0.25;"
                       " 64x64 (at 32x32 the last stage's maps are 1x1: BatchNorm over 4 values)",
                  full=lambda: tv().regnet_y_400mf(num_classes=CLASSES)),
        RealModel("googlenet", "torchvision",
                  lambda: tv().googlenet(num_classes=CLASSES, aux_logits=False, init_weights=True), i32,
                  note="aux_logits=False"),
        RealModel("inception_v3", "torchvision",
                  lambda: tv().inception_v3(num_classes=CLASSES, aux_logits=False, init_weights=True), i139,
                  note="aux_logits=False; 139x139 (at 75x75, its smallest input, the last blocks' maps are 1x1"
                       " and BatchNorm normalizes 4 values: PyTorch's own runs drift apart)"),
        RealModel("mnasnet0_5", "torchvision", lambda: tv().mnasnet0_5(num_classes=CLASSES), i64,
                  note="64x64 (at 32x32 its last stages' maps are 1x1: BatchNorm over 4 values)"),
        RealModel("vgg11_bn", "torchvision", _vgg_small, i32,
                  note="1/8 width; 1x1 pool and a 128-wide classifier at 32x32 (the 7x7 pool needs 224x224)",
                  full=lambda: tv().vgg11_bn(num_classes=CLASSES), full_inputs=_image(224)),
        RealModel("alexnet", "torchvision", _alexnet_small, i64,
                  note="1x1 pool and a 256-wide classifier at 64x64 (the 6x6 pool needs ~224x224)",
                  full=lambda: tv().alexnet(num_classes=CLASSES), full_inputs=_image(224)),
        RealModel("efficientnet_b0", "torchvision", _efficientnet_small, i32,
                  note="width and depth multipliers 0.5; stochastic depth 0",
                  full=lambda: tv().efficientnet_b0(num_classes=CLASSES, stochastic_depth_prob=0.0)),
        RealModel("convnext_tiny", "torchvision", _convnext_small, i32,
                  note="one block per stage, widths 24-192 (3, 3, 9, 3; 96-768); stochastic depth 0",
                  full=lambda: tv().convnext_tiny(num_classes=CLASSES, stochastic_depth_prob=0.0)),
        RealModel("vit", "transformer",
                  lambda: tv().VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                                 hidden_dim=64, mlp_dim=128, num_classes=CLASSES), i32,
                  note="torchvision VisionTransformer: image 32, patch 8, 2 layers, hidden 64, 4 heads, MLP 128"),
        RealModel("swin_t", "transformer", _swin_small, i32,
                  note="embed 24 (96), depths 2, 2, 1, 1 (2, 2, 6, 2), window 4 (7) on 32x32; stochastic depth 0",
                  full=lambda: tv().swin_t(num_classes=CLASSES, stochastic_depth_prob=0.0), full_inputs=_image(224)),
    ]


def _other_models() -> List[RealModel]:
    feats = (Input("input", (SEQ, FEATURES)),)
    return [
        RealModel("transformer_encoder", "transformer", EncoderClassifier, feats,
                  note="nn.TransformerEncoder, 2 layers, d 64, 4 heads, FFN 128, sequence 16"),
        RealModel("transformer", "transformer", Seq2SeqClassifier,
                  (Input("src", (SEQ, FEATURES)), Input("tgt", (Seq2SeqClassifier.TGT, FEATURES))),
                  note="nn.Transformer, 1+1 layers, d 64, causal target mask, source 16, target 8"),
        RealModel("transformer_decoder", "transformer", DecoderClassifier, feats,
                  note="nn.TransformerDecoder, 2 pre-norm GELU layers, 4 learned queries"),
        RealModel("gpt2", "transformer", GPT,
                  (Input("input_ids", (GPT.BLOCK,), torch.int64, GPT.VOCAB),
                   Input("labels", (GPT.BLOCK,), torch.int64, GPT.VOCAB)),
                  loss="output", outputs=("loss",),
                  note="vocab 96, context 16, d 64, 4 heads, 2 layers, tanh GELU, tied lm_head; loss inside"),
        RealModel("gpt2_padded", "transformer", GPTPadded,
                  (Input("input_ids", (GPT.BLOCK,), torch.int64, GPT.VOCAB),
                   Input("attention_mask", (GPT.BLOCK,), torch.int64, 2),
                   Input("labels", (GPT.BLOCK,), torch.int64, GPT.VOCAB)),
                  loss="output", outputs=("loss",),
                  note="the GPT-2-style LM on a padded batch as Hugging Face runs it: position_ids from"
                       " attention_mask.cumsum(-1) (integer CumSum), padded keys masked, padded labels ignored"),
        RealModel("llama", "transformer", Llama,
                  (Input("input_ids", (Llama.BLOCK,), torch.int64, Llama.VOCAB),
                   Input("labels", (Llama.BLOCK,), torch.int64, Llama.VOCAB)),
                  loss="output", outputs=("loss",),
                  note="LLaMA-style: vocab 96, context 16, d 64, 4 heads, 2 layers, RMSNorm, rotary embeddings,"
                       " SwiGLU, tied lm_head; loss inside"),
        RealModel("moe", "transformer", MoE,
                  (Input("input_ids", (MoE.BLOCK,), torch.int64, MoE.VOCAB),
                   Input("labels", (MoE.BLOCK,), torch.int64, MoE.VOCAB)),
                  loss="output", outputs=("loss",),
                  note="the LLaMA-style LM (d 32) with Mixtral-style MLPs: a top-2-of-4 router (torch.topk),"
                       " SwiGLU experts weighted by the softmaxed scores; loss inside, with Mixtral's load-balancing loss"
                       " (F.one_hot)"),
        RealModel("bert", "transformer", Bert,
                  (Input("input_ids", (SEQ,), torch.int64, Bert.VOCAB),
                   Input("token_type_ids", (SEQ,), torch.int64, Bert.TYPES),
                   Input("attention_mask", (SEQ,), torch.int64, 2)),
                  note="vocab 128, sequence 16 (padded), d 64, 4 heads, FFN 128, 2 layers, pooler + classifier"),
        RealModel("bert_mlm", "transformer", BertMLM,
                  (Input("input_ids", (SEQ,), torch.int64, Bert.VOCAB), Input("mlm_mask", (SEQ,), torch.int64, 2)),
                  loss="output", outputs=("loss",),
                  note="the BERT encoder above with a masked-language-model loss over the chosen tokens only"
                       " (logits[chosen]: NonZero, GatherND), LM head tied to the word embeddings"),
        RealModel("stn", "stn", STN, _image(32), min_opset=16,
                  note="spatial transformer: localisation CNN -> affine theta -> grid (written out) ->"
                       " F.grid_sample (GridSample, opset 16) -> CNN classifier"),
        RealModel("dcn", "dcn", DeformableCNN, _image(16),
                  note="a modulated deformable convolution (DCNv2, torchvision.ops.deform_conv2d: DeformConv,"
                       " opset 19) whose offsets and mask a 3x3 conv predicts, 3 -> 8 -> 16 channels on 16x16"),
        RealModel("unet3d", "volume", UNet3D, (Input("input", (1, 16, 16, 16)),), loss="mse",
                  note="3-D U-Net on 16^3 volumes: 4-8-16 channels, Conv3d/BatchNorm3d, max_pool3d, ConvTranspose3d,"
                       " trilinear upsampling, skip concatenation, MSE"),
        RealModel("voxelmorph", "volume", VoxelMorph,
                  (Input("moving", (1, 16, 16, 16)), Input("fixed", (1, 16, 16, 16))),
                  loss="output", outputs=("loss",),
                  note="VoxelMorph: a 3-D U-Net's displacement field warps the moving volume by F.grid_sample on"
                       " 5-D tensors (GridSample-20, trilinear, border); MSE to the fixed one + flow smoothness inside"),
        RealModel("vae", "vae", VAE, _image(32), loss="output", outputs=("loss",),
                  note="conv VAE 3x32x32 -> 16-d latent -> ConvTranspose2d, torch.randn_like reparameterisation"
                       " (RandomNormalLike; references draw tidal's noise), MSE + 0.01 KL inside"),
        RealModel("unet", "unet", UNet, _image(32), loss="mse",
                  note="8-16-32 channels, ConvTranspose2d + bilinear Upsample, skip concatenation, MSE"),
        RealModel("lstm", "rnn", lambda: RNNClassifier("lstm"), (Input("input", (SEQ, FEATURES // 2)),),
                  note="nn.LSTM 16 -> 32, 2 layers, sequence 16"),
        RealModel("gru", "rnn", lambda: RNNClassifier("gru"), (Input("input", (SEQ, FEATURES // 2)),),
                  note="nn.GRU 16 -> 32, bidirectional, sequence 16"),
        RealModel("rnn", "rnn", lambda: RNNClassifier("rnn"), (Input("input", (SEQ, FEATURES // 2)),),
                  note="nn.RNN 16 -> 32, 2 layers, bidirectional, ReLU, sequence 16"),
        RealModel("packed_lstm", "rnn", PackedLSTM,
                  (Input("input", (SEQ, FEATURES // 2)), Input("lengths", (), torch.int64, SEQ + 1)),
                  note="nn.LSTM 16 -> 32, bidirectional, over padded sequences of lengths 1..16 through"
                       " pack_padded_sequence(enforce_sorted=False) / pad_packed_sequence (LSTM sequence_lens)"),
        RealModel("scripted_cell", "rnn", lambda: torch.jit.script(ScriptedCell()),
                  (Input("input", (SEQ, FEATURES // 2)),),
                  note="a minimal GRU cell with LayerNorm written as a torch.jit.script for-loop over x.unbind(1),"
                       " outputs kept in a list and stacked (ONNX Loop carrying a sequence), 16 -> 32, sequence 16"),
        RealModel("graph_sage_gin", "graph", GraphClassifier,
                  (Input("x", (GraphClassifier.NODES, GraphClassifier.FEATURES)),
                   Input("edges", (GraphClassifier.EDGES, 2), torch.int64, GraphClassifier.NODES)),
                  note="message passing over edge lists as PyTorch Geometric runs it: GraphSAGE mean, GIN sum and"
                       " GraphSAGE max layers (index_select, scatter_add_ and scatter_reduce amax: Gather,"
                       " ScatterElements add and max, opset 18), 12-node graphs with 24 random edges, global mean pool"),
        RealModel("gnn_node", "graph", NodeClassifier,
                  (Input("x", (NodeClassifier.NODES, NodeClassifier.FEATURES)),
                   Input("edges", (NodeClassifier.EDGES, 2), torch.int64, NodeClassifier.NODES),
                   Input("labels", (NodeClassifier.NODES,), torch.int64, CLASSES),
                   Input("train_mask", (NodeClassifier.NODES,), torch.int64, 2)),
                  loss="output", outputs=("loss",),
                  note="node classification as PyTorch Geometric's examples train it: two GraphSAGE (mean) layers,"
                       " the loss over the training nodes only (out[train_mask]: NonZero, GatherND)"),
        RealModel("fnet", "transformer", FNet, (Input("input_ids", (FNet.SEQ,), torch.int64, FNet.VOCAB),),
                  min_opset=17,
                  note="FNet: Fourier mixing (torch.fft.fft2(x).real: DFT over hidden and sequence, opset 17) in place"
                       " of attention, vocab 128, sequence 16, d 64, FFN 128, 2 layers, pooler + classifier"),
        RealModel("keyword_cnn", "audio", KeywordCNN, (Input("wave", (KeywordCNN.SAMPLES,)),), min_opset=17,
                  note="raw audio -> torch.stft (STFT, opset 17; n_fft 128, hop 32, Hann window, centred) -> power ->"
                       " 20 mel bands (a constant filter bank) -> log -> 2 conv/BN/ReLU blocks -> linear"),
        RealModel("dlrm_bags", "recommender", DLRMBags,
                  (Input("dense", (DLRMBags.DENSE,)),
                   Input("sparse", (DLRMBags.TABLES, DLRMBags.BAG), torch.int64, DLRMBags.ROWS),
                   Input("lengths", (DLRMBags.TABLES,), torch.int64, DLRMBags.BAG + 1)),
                  note="DLRM with bags of different sizes: 2 nn.EmbeddingBag tables (sum, mean) over data offsets"
                       " (cumsum of a lengths input; a Loop with data slice bounds, imported as a segment sum)"),
        RealModel("dlrm", "recommender", DLRM,
                  (Input("dense", (DLRM.DENSE,)), Input("sparse", (DLRM.TABLES, DLRM.BAG), torch.int64, DLRM.ROWS)),
                  note="DLRM-style: bottom MLP 8-32-16, 3 nn.EmbeddingBag tables 50x16 over bags of 4 ids (sum, mean,"
                       " sum; ONNX Loop over the bags), dot-product interactions, top MLP 22-32-10"),
    ]


MODELS: Dict[str, RealModel] = {m.name: m for m in _vision_models() + _other_models()}


def names() -> List[str]:
    return list(MODELS)


def spec(name: str) -> RealModel:
    if name not in MODELS:
        raise KeyError(f"unknown real model '{name}' (have: {', '.join(MODELS)})")
    return MODELS[name]


def build(name: str, size: str = "small") -> nn.Module:
    """A freshly seeded instance of `name`, dropout off, in train mode."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    torch.manual_seed(SEED)
    model = _no_dropout(spec(name).builder(size)())
    model.train()
    return model


def example_inputs(name: str, batch: int = 2, size: str = "small") -> Tuple[torch.Tensor, ...]:
    """Deterministic inputs of batch `batch`: rows 0..batch-1 of `dataset`."""
    data, _ = dataset(name, batch, size)
    return tuple(torch.from_numpy(data[i.name]) for i in spec(name).inputs_for(size))


# --- data ---------------------------------------------------------------------------------


def dataset(name: str, samples: int, size: str = "small", seed: int = DATA_SEED):
    """({input name: array}, label or None) with `samples` rows, fixed seed.

    Images and features are standard normal; class labels uniform in 10;
    the U-Net's target is a smooth map of its input; the language models' labels are their
    input ids (shifted inside the model); BERT's sequences are padded (id 0,
    mask 0) after a random length of 8..16, with token type 1 after a random
    split point.
    """
    s = spec(name)
    rng = np.random.default_rng(seed)
    data = {}
    for inp in s.inputs_for(size):
        shape = (samples,) + tuple(inp.shape)
        if inp.dtype.is_floating_point:
            data[inp.name] = rng.standard_normal(shape, dtype=np.float32)
        else:
            data[inp.name] = rng.integers(0, inp.high, shape, dtype=np.int64)
    if name in ("gpt2", "gpt2_padded", "llama", "moe"):
        data["labels"] = data["input_ids"].copy()
    if name == "bert":
        t = s.inputs[0].shape[0]
        lengths = rng.integers(t // 2, t + 1, samples)
        split = rng.integers(1, t // 2 + 1, samples)
        pos = np.arange(t)[None, :]
        mask = (pos < lengths[:, None]).astype(np.int64)
        data["attention_mask"] = mask
        data["input_ids"] = np.where(mask == 1, np.maximum(data["input_ids"], 1), 0)
        data["token_type_ids"] = ((pos >= split[:, None]) & (mask == 1)).astype(np.int64)
    label = None
    if s.loss == "cross-entropy":
        label = rng.integers(0, CLASSES, samples, dtype=np.int64)
    elif s.loss == "mse":
        x = data[s.inputs[0].name]
        label = np.tanh(0.5 * x + 0.25 * np.roll(x, 1, axis=-1)).astype(np.float32)
    return data, label


# --- export -------------------------------------------------------------------------------


def _zoo_entry(name: str, size: str) -> zoo.ZooEntry:
    s = spec(name)
    inputs = s.inputs_for(size)
    ints = [i.high for i in inputs if not i.dtype.is_floating_point]
    return zoo.ZooEntry(
        build=lambda: _no_dropout(s.builder(size)()),
        inputs=tuple((i.name, tuple(i.shape), i.dtype) for i in inputs),
        outputs=s.outputs,
        scalar_outputs=s.outputs if s.loss == "output" else (),
        # zoo.example_inputs draws every integer input from [0, classes):
        # the smallest range keeps each in its own (token types, masks).
        classes=min(ints) if ints else CLASSES,
    )


@contextlib.contextmanager
def as_zoo_model(name: str, size: str = "small"):
    """Registers `name` in tidal.zoo.MODELS (under `name`) for the duration,
    so that tidal.export's exporter serves the real models too."""
    if name in zoo.MODELS:
        raise ValueError(f"real model '{name}' shadows a zoo model")
    with mock.patch.dict(zoo.MODELS, {name: _zoo_entry(name, size)}):
        yield


def export_model(name: str, opset: int = zoo_export.DEFAULT_OPSET, batch: Optional[int] = None,
                 size: str = "small") -> onnx.ModelProto:
    """tidal.export.export_model for a real model: training mode, no
    constant folding, symbolic batch "N" unless `batch`."""
    with as_zoo_model(name, size):
        proto = zoo_export.export_model(name, opset=opset, batch=batch)
    proto.doc_string = f"tidal real model '{name}' ({size}), opset {opset}, training mode"
    return proto


def export(name: str, path: str, opset: int = zoo_export.DEFAULT_OPSET, batch: Optional[int] = None,
           size: str = "small") -> onnx.ModelProto:
    """Exports `name` to `path` (checked and reloaded, as tidal.export.export)."""
    with as_zoo_model(name, size):
        proto = zoo_export.export(name, path, opset=opset, batch=batch)
    return proto


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python3 -m tidal.real_models", description=__doc__.split("\n")[0])
    parser.add_argument("name", nargs="?", choices=names(), help="model (default: list them)")
    parser.add_argument("out", nargs="?", help="output .onnx path")
    parser.add_argument("--opset", type=int, default=zoo_export.DEFAULT_OPSET)
    parser.add_argument("--batch", type=int, default=None, help="static batch size (default: symbolic 'N')")
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args(argv)
    if not args.name:
        for m in MODELS.values():
            params = sum(p.numel() for p in {id(p): p for p in build(m.name).parameters()}.values())
            shapes = ", ".join(f"{i.name} {list(i.shape)}" for i in m.inputs)
            print(f"{m.name:20s} {m.family:12s} {params / 1e6:6.2f}M  {m.loss:13s} {shapes}  {m.note}")
        return 0
    if not args.out:
        parser.error("give an output path")
    try:
        export(args.name, args.out, opset=args.opset, batch=args.batch, size=args.size)
    except (ValueError, onnx.checker.ValidationError) as err:
        print(f"{args.out}: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
