#!/usr/bin/python3
"""Hugging Face transformers models nobody here wrote: does tidal compile
them and compute what PyTorch computes?

    /usr/bin/python3 -m venv --system-site-packages /tmp/hf-venv
    /tmp/hf-venv/bin/pip install transformers==4.30.2
    /tmp/hf-venv/bin/python bench/hf_triage.py [--only bert,gpt2] [--opset 17]
        [--tidalc PATH] [--workdir DIR] [--batch 2] [--train]

Each model is built from a tiny configuration of its own architecture
(random weights, no download: 2 layers, width 32-64, dropout 0; the
padding token outside the ids drawn, since nn.Embedding's padding_idx
does not survive the export: PyTorch warns that ONNX updates that row in
training), wrapped
to return its main output tensor (logits), exported with torch 1.13's
exporter in training mode with a symbolic batch (the forms current PyTorch
writes that torch 1.13 cannot are registered: tidal.current_exporter),
compiled with `tidalc --mode forward`, run on fixed inputs and compared
with PyTorch (`ok` below 1e-4 max |difference| relative to the output's
scale). One line per model: `ok`, `MISMATCH`, the export's error
(PyTorch's own limits), or tidalc's one-line error naming the node that
stops it. A benchmark, not a test: transformers is not a dependency.

With `--train`, every model that computes its own loss from labels (the
classifiers, language models, seq2seq, segmentation, audio) is trained
instead, by the real-model suite's harness (tidal.real_training: 5 steps of
SGD and of AdamW from the same weights and data, tidal against PyTorch
float32, within 10x PyTorch's own float32/float64 spread): the model is
registered as a real model for the run, `forward(*inputs)` returning
`model(..., labels=...).loss`.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
import onnx  # noqa: E402

from tidal import current_exporter  # noqa: E402

T = 8  # sequence length
SMALL = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def text_ids(batch, vocab=96):
    g = torch.Generator().manual_seed(0)
    return torch.randint(3, vocab, (batch, T), generator=g)


def mask(batch):
    m = torch.ones(batch, T, dtype=torch.int64)
    m[0, T - 2:] = 0  # one padded sequence
    return m


def cases(tf):
    """name -> (build() -> module, inputs(batch) -> {name: tensor}, output attr)."""
    enc = dict(vocab_size=97, pad_token_id=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
               max_position_embeddings=64, **SMALL)
    text = lambda b: {"input_ids": text_ids(b), "attention_mask": mask(b)}  # noqa: E731
    ids_only = lambda b: {"input_ids": text_ids(b)}  # noqa: E731
    image = lambda size, ch=3: (lambda b: {"pixel_values": torch.randn(b, ch, size, size,  # noqa: E731
                                                                        generator=torch.Generator().manual_seed(1))})
    seq2seq = lambda b: {"input_ids": text_ids(b), "attention_mask": mask(b),  # noqa: E731
                         "decoder_input_ids": text_ids(b)[:, :5]}
    c = {
        "bert": (lambda: tf.BertForSequenceClassification(tf.BertConfig(**enc)), text, "logits"),
        # Positions count on from the padding id: room for 96 + T of them.
        "roberta": (lambda: tf.RobertaForSequenceClassification(tf.RobertaConfig(
            **{**enc, "max_position_embeddings": 128})), text, "logits"),
        "distilbert": (lambda: tf.DistilBertForSequenceClassification(tf.DistilBertConfig(
            vocab_size=97, pad_token_id=96, dim=32, n_layers=2, n_heads=4, hidden_dim=64, dropout=0.0, attention_dropout=0.0,
            seq_classif_dropout=0.0)), text, "logits"),
        "albert": (lambda: tf.AlbertForSequenceClassification(tf.AlbertConfig(
            embedding_size=16, classifier_dropout_prob=0.0, **enc)), text, "logits"),
        "electra": (lambda: tf.ElectraForSequenceClassification(tf.ElectraConfig(
            embedding_size=16, **enc)), text, "logits"),
        "deberta_v2": (lambda: tf.DebertaV2ForSequenceClassification(tf.DebertaV2Config(
            relative_attention=True, position_buckets=16, pos_att_type=["p2c", "c2p"], **enc)), text, "logits"),
        "gpt2": (lambda: tf.GPT2LMHeadModel(tf.GPT2Config(
            vocab_size=97, pad_token_id=96, n_embd=32, n_layer=2, n_head=4, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0)), text, "logits"),
        "opt": (lambda: tf.OPTForCausalLM(tf.OPTConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
            max_position_embeddings=64, word_embed_proj_dim=32, dropout=0.0, attention_dropout=0.0)), text,
            "logits"),
        "bloom": (lambda: tf.BloomForCausalLM(tf.BloomConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, n_layer=2, n_head=4, hidden_dropout=0.0, attention_dropout=0.0)),
            text, "logits"),
        "gpt_neox": (lambda: tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=64)), text, "logits"),
        "llama": (lambda: tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=64)), text, "logits"),
        "t5": (lambda: tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=97, pad_token_id=96, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, dropout_rate=0.0,
            relative_attention_num_buckets=8, decoder_start_token_id=96)), seq2seq, "logits"),
        "bart": (lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=97, pad_token_id=96, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
            dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)), seq2seq, "logits"),
        "gpt_neo": (lambda: tf.GPTNeoForCausalLM(tf.GPTNeoConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
            window_size=4, max_position_embeddings=64, embed_dropout=0.0, attention_dropout=0.0, resid_dropout=0.0)),
            text, "logits"),
        "gptj": (lambda: tf.GPTJForCausalLM(tf.GPTJConfig(
            vocab_size=97, pad_token_id=96, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)), text, "logits"),
        "codegen": (lambda: tf.CodeGenForCausalLM(tf.CodeGenConfig(
            vocab_size=97, pad_token_id=96, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64,
            n_ctx=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)), text, "logits"),
        "xglm": (lambda: tf.XGLMForCausalLM(tf.XGLMConfig(
            vocab_size=97, pad_token_id=96, d_model=32, num_layers=2, attention_heads=4, ffn_dim=64,
            max_position_embeddings=128, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)), text,
            "logits"),
        "mpnet": (lambda: tf.MPNetForSequenceClassification(tf.MPNetConfig(
            **{**enc, "max_position_embeddings": 128})), text, "logits"),
        "funnel": (lambda: tf.FunnelForSequenceClassification(tf.FunnelConfig(
            vocab_size=96, block_sizes=[1, 1], d_model=32, n_head=4, d_head=8, d_inner=64,
            hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)), text, "logits"),
        "mobilebert": (lambda: tf.MobileBertForSequenceClassification(tf.MobileBertConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, embedding_size=16, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=32, intra_bottleneck_size=16, true_hidden_size=16,
            num_feedforward_networks=2, max_position_embeddings=64, **SMALL)), text, "logits"),
        "convbert": (lambda: tf.ConvBertForSequenceClassification(tf.ConvBertConfig(
            embedding_size=16, **enc)), text, "logits"),
        "squeezebert": (lambda: tf.SqueezeBertForSequenceClassification(tf.SqueezeBertConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, embedding_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64, max_position_embeddings=64, **SMALL)), text, "logits"),
        "longformer": (lambda: tf.LongformerForSequenceClassification(tf.LongformerConfig(
            attention_window=4, **{**enc, "max_position_embeddings": 128})), text, "logits"),
        "xlnet": (lambda: tf.XLNetForSequenceClassification(tf.XLNetConfig(
            vocab_size=97, pad_token_id=96, d_model=32, n_layer=2, n_head=4, d_inner=64, dropout=0.0,
            summary_last_dropout=0.0)), text,
            "logits"),
        "pegasus": (lambda: tf.PegasusForConditionalGeneration(tf.PegasusConfig(
            vocab_size=97, pad_token_id=96, d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
            max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            decoder_start_token_id=0)), seq2seq, "logits"),
        "marian": (lambda: tf.MarianMTModel(tf.MarianConfig(
            vocab_size=97, pad_token_id=96, d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
            max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            decoder_start_token_id=0)), seq2seq, "logits"),
        "deit": (lambda: tf.DeiTForImageClassification(tf.DeiTConfig(
            image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, **SMALL)), image(32), "logits"),
        "beit": (lambda: tf.BeitForImageClassification(tf.BeitConfig(
            image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, use_relative_position_bias=True, drop_path_rate=0.0, **SMALL)), image(32),
            "logits"),
        "poolformer": (lambda: tf.PoolFormerForImageClassification(tf.PoolFormerConfig(
            hidden_sizes=[16, 32], depths=[1, 1], num_encoder_blocks=2, patch_sizes=[7, 3], strides=[4, 2],
            padding=[2, 1], drop_path_rate=0.0)), image(32), "logits"),
        "regnet": (lambda: tf.RegNetForImageClassification(tf.RegNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8)), image(32), "logits"),
        "efficientnet": (lambda: tf.EfficientNetForImageClassification(tf.EfficientNetConfig(
            image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320, dropout_rate=0.0,
            drop_connect_rate=0.0)), image(32), "logits"),
        # MAE's patch shuffle draws noise: passed in, so both sides agree.
        "vit_mae": (lambda: tf.ViTMAEModel(tf.ViTMAEConfig(
            image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, mask_ratio=0.75, **SMALL)),
            lambda b: {**image(32)(b), "noise": torch.rand(b, 16, generator=torch.Generator().manual_seed(4))},
            "last_hidden_state"),
        "hubert": (lambda: tf.HubertForSequenceClassification(tf.HubertConfig(
            vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=4, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0)),
            lambda b: {"input_values": torch.randn(b, 400, generator=torch.Generator().manual_seed(2))}, "logits"),
        "vit": (lambda: tf.ViTForImageClassification(tf.ViTConfig(
            image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, **SMALL)), image(32), "logits"),
        "swin": (lambda: tf.SwinForImageClassification(tf.SwinConfig(
            image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0)), image(32), "logits"),
        "convnext": (lambda: tf.ConvNextForImageClassification(tf.ConvNextConfig(
            hidden_sizes=[16, 32], depths=[1, 1], num_stages=2)), image(32), "logits"),
        "resnet": (lambda: tf.ResNetForImageClassification(tf.ResNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")), image(32), "logits"),
        "mobilevit": (lambda: tf.MobileViTForImageClassification(tf.MobileViTConfig(
            image_size=32, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32],
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0)),
            image(32), "logits"),
        "segformer": (lambda: tf.SegformerForSemanticSegmentation(tf.SegformerConfig(
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2],
            decoder_hidden_size=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            classifier_dropout_prob=0.0, drop_path_rate=0.0)), image(32), "logits"),
        "clip_vision": (lambda: tf.CLIPVisionModel(tf.CLIPVisionConfig(
            image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4)), image(32), "pooler_output"),
        "clip_text": (lambda: tf.CLIPTextModel(tf.CLIPTextConfig(
            vocab_size=97, pad_token_id=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64)), ids_only, "pooler_output"),
        "wav2vec2": (lambda: tf.Wav2Vec2ForSequenceClassification(tf.Wav2Vec2Config(
            vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=4, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0, do_stable_layer_norm=True)),
            lambda b: {"input_values": torch.randn(b, 400, generator=torch.Generator().manual_seed(2))}, "logits"),
        "whisper": (lambda: tf.WhisperForConditionalGeneration(tf.WhisperConfig(
            vocab_size=97, pad_token_id=96, num_mel_bins=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, d_model=32,
            max_source_positions=16, max_target_positions=16, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0, bos_token_id=2, eos_token_id=2, decoder_start_token_id=2,
            suppress_tokens=[], begin_suppress_tokens=[])),
            lambda b: {"input_features": torch.randn(b, 16, 32, generator=torch.Generator().manual_seed(3)),
                       "decoder_input_ids": text_ids(b)[:, :4]}, "logits"),
    }
    # Added in the thirteenth session (2026-11-29): more architectures.
    bart_like = dict(vocab_size=97, pad_token_id=96, d_model=32, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                     max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                     decoder_start_token_id=2, bos_token_id=0, eos_token_id=2)
    w2v = dict(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
               conv_dim=[16, 16], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
               num_conv_pos_embedding_groups=4, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
               feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0)
    audio_in = lambda b: {"input_values": torch.randn(b, 400, generator=torch.Generator().manual_seed(2))}  # noqa: E731
    c.update({
        "roformer": (lambda: tf.RoFormerForSequenceClassification(tf.RoFormerConfig(embedding_size=32, **enc)), text,
            "logits"),
        "megatron_bert": (lambda: tf.MegatronBertForSequenceClassification(tf.MegatronBertConfig(**enc)), text,
            "logits"),
        "ernie": (lambda: tf.ErnieForSequenceClassification(tf.ErnieConfig(**enc)), text, "logits"),
        "esm": (lambda: tf.EsmForSequenceClassification(tf.EsmConfig(**{**enc, "max_position_embeddings": 128},
            position_embedding_type="rotary")), text, "logits"),
        "rembert": (lambda: tf.RemBertForSequenceClassification(tf.RemBertConfig(input_embedding_size=16,
            output_embedding_size=16, classifier_dropout_prob=0.0, **enc)), text, "logits"),
        "nezha": (lambda: tf.NezhaForSequenceClassification(tf.NezhaConfig(classifier_dropout=0.0, **enc)), text,
            "logits"),
        "big_bird": (lambda: tf.BigBirdForSequenceClassification(tf.BigBirdConfig(attention_type="original_full",
            **enc)), text, "logits"),
        "xlm": (lambda: tf.XLMForSequenceClassification(tf.XLMConfig(vocab_size=97, emb_dim=32, n_layers=2,
            n_heads=4, dropout=0.0, attention_dropout=0.0, max_position_embeddings=64, summary_first_dropout=0.0)),
            text, "logits"),
        "ctrl": (lambda: tf.CTRLLMHeadModel(tf.CTRLConfig(vocab_size=97, n_embd=32, n_layer=2, n_head=4, dff=64,
            n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0)), text, "logits"),
        "mbart": (lambda: tf.MBartForConditionalGeneration(tf.MBartConfig(**bart_like)), seq2seq, "logits"),
        "blenderbot": (lambda: tf.BlenderbotForConditionalGeneration(tf.BlenderbotConfig(**bart_like)), seq2seq,
            "logits"),
        "m2m_100": (lambda: tf.M2M100ForConditionalGeneration(tf.M2M100Config(**{**bart_like, "pad_token_id": 1})),
            seq2seq, "logits"),
        "prophetnet": (lambda: tf.ProphetNetForConditionalGeneration(tf.ProphetNetConfig(vocab_size=97,
            pad_token_id=1, hidden_size=32, encoder_ffn_dim=64, decoder_ffn_dim=64, num_encoder_layers=2,
            num_decoder_layers=2, num_encoder_attention_heads=4, num_decoder_attention_heads=4,
            max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, ngram=2,
            num_buckets=8, relative_max_distance=16, decoder_start_token_id=2)), seq2seq, "logits"),
        "mt5": (lambda: tf.MT5ForConditionalGeneration(tf.MT5Config(vocab_size=97, pad_token_id=96, d_model=32,
            d_kv=8, d_ff=64, num_layers=2, num_heads=4, dropout_rate=0.0, decoder_start_token_id=0)), seq2seq,
            "logits"),
        "switch_transformers": (lambda: tf.SwitchTransformersForConditionalGeneration(tf.SwitchTransformersConfig(vocab_size=97, pad_token_id=96, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, num_experts=4, expert_capacity=8, dropout_rate=0.0, decoder_start_token_id=0, encoder_sparse_step=1, decoder_sparse_step=1)), seq2seq, "logits"),
        "levit": (lambda: tf.LevitForImageClassification(tf.LevitConfig(image_size=32, hidden_sizes=[16, 32, 48],
            num_attention_heads=[1, 2, 3], depths=[1, 1, 1], key_dim=[8, 8, 8], drop_path_rate=0.0)), image(32),
            "logits"),
        "swinv2": (lambda: tf.Swinv2ForImageClassification(tf.Swinv2Config(image_size=32, patch_size=4, embed_dim=16,
            depths=[1, 1], num_heads=[1, 2], window_size=4, drop_path_rate=0.0)), image(32), "logits"),
        "convnextv2": (lambda: tf.ConvNextV2ForImageClassification(tf.ConvNextV2Config(num_stages=2,
            hidden_sizes=[16, 32], depths=[1, 1], drop_path_rate=0.0)), image(32), "logits"),
        "focalnet": (lambda: tf.FocalNetForImageClassification(tf.FocalNetConfig(image_size=32, patch_size=4,
            embed_dim=16, depths=[1, 1], focal_levels=[2, 2], focal_windows=[3, 3], drop_path_rate=0.0)), image(32),
            "logits"),
        "van": (lambda: tf.VanForImageClassification(tf.VanConfig(image_size=32, hidden_sizes=[16, 32], depths=[1,
            1], mlp_ratios=[2, 2], drop_path_rate=0.0, dropout_rate=0.0)), image(32), "logits"),
        "bit": (lambda: tf.BitForImageClassification(tf.BitConfig(embedding_size=16, hidden_sizes=[16, 32],
            depths=[1, 1], layer_type="preactivation", num_groups=4)), image(32), "logits"),
        "mobilenet_v2_hf": (lambda: tf.MobileNetV2ForImageClassification(tf.MobileNetV2Config(image_size=32,
            depth_multiplier=0.35, classifier_dropout_prob=0.0)), image(32), "logits"),
        "glpn": (lambda: tf.GLPNForDepthEstimation(tf.GLPNConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2,
            1], hidden_sizes=[16, 32], num_attention_heads=[1, 2], decoder_hidden_size=16, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0, drop_path_rate=0.0)), image(32), "predicted_depth"),
        "yolos": (lambda: tf.YolosForObjectDetection(tf.YolosConfig(image_size=[32, 32], patch_size=8,
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, num_detection_tokens=4,
            **{"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})), image(32), "logits"),
        "sew": (lambda: tf.SEWForSequenceClassification(tf.SEWConfig(squeeze_factor=2, **w2v)), audio_in, "logits"),
        "wavlm": (lambda: tf.WavLMForSequenceClassification(tf.WavLMConfig(num_buckets=16, max_bucket_distance=32,
            **w2v)), audio_in, "logits"),
        "unispeech": (lambda: tf.UniSpeechForSequenceClassification(tf.UniSpeechConfig(**w2v)), audio_in, "logits"),
        "ast": (lambda: tf.ASTForAudioClassification(tf.ASTConfig(hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64, num_mel_bins=16, max_length=32, patch_size=8,
            frequency_stride=8, time_stride=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)),
            lambda b: {"input_values": torch.randn(b, 32, 16, generator=torch.Generator().manual_seed(4))}, "logits"),
        "imagegpt": (lambda: tf.ImageGPTForImageClassification(tf.ImageGPTConfig(vocab_size=17, n_positions=16,
            n_embd=32, n_layer=2, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)),
            lambda b: {"input_ids": torch.randint(0, 16, (b, 16), generator=torch.Generator().manual_seed(5))},
            "logits"),
    })
    return c


class Wrapped(torch.nn.Module):
    def __init__(self, model, names, out):
        super().__init__()
        self.model, self.names, self.out = model, names, out

    def forward(self, *args):
        return getattr(self.model(**dict(zip(self.names, args))), self.out)


def run_case(name, case, tidalc, work, opset, batch):
    build, inputs, out = case
    torch.manual_seed(0)
    try:
        # Training mode, as exported (batch statistics in BatchNorm; the
        # configurations have no dropout).
        model = build().train()
    except Exception as err:  # this transformers lacks the architecture
        return "build: " + str(err).split("\n")[0][:100]
    feed = inputs(batch)
    names = list(feed)
    wrapped = Wrapped(model, names, out)
    path = os.path.join(work, name + ".onnx")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.no_grad():
                want = wrapped(*feed.values()).numpy()
            torch.onnx.export(wrapped, tuple(feed.values()), path, opset_version=opset, input_names=names,
                              output_names=["y"], dynamic_axes={n: {0: "N"} for n in names + ["y"]},
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        onnx.save(current_exporter.finish(onnx.load(path)), path)
    except Exception as err:  # PyTorch's exporter refuses the model
        return "export: " + str(err).split("\n")[0][:110]
    exe = os.path.join(work, name)
    proc = subprocess.run([tidalc, path, "--mode", "forward", "--batch-size", str(batch), "-o", exe],
                          capture_output=True, text=True)
    if proc.returncode:
        return "tidalc: " + proc.stderr.strip().split("\n")[0].replace(path + ": error: ", "")[:220]
    argv = [exe, "--output-dir", os.path.join(work, name + "_out"), "--quiet"]
    for n, v in feed.items():
        np.save(os.path.join(work, f"{name}_{n}.npy"), v.numpy())
        argv += ["--input", f"{n}={os.path.join(work, f'{name}_{n}.npy')}"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode:
        return "run: " + proc.stderr.strip().split("\n")[0][:200]
    out_dir = os.path.join(work, name + "_out")
    got = np.load(os.path.join(out_dir, sorted(os.listdir(out_dir))[0]))
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got - want))) / scale
    return f"ok ({err:.1e})" if err < 1e-4 else f"MISMATCH (max |difference| / scale {err:.2e})"


# --train: (inputs as real-model Inputs without the batch dimension, the
# HF keyword of each, where the labels come from).
def train_spec(name):
    """(Inputs, keywords, labels) for training `name`, or None."""
    from tidal.real_models import Input

    ids = Input("input_ids", (T,), torch.int64, 96)
    label2 = Input("labels", (), torch.int64, 2)
    specs = {
        "classify": ((ids, label2), ("input_ids", "labels")),
        "lm": ((ids,), ("input_ids",)),
        "seq2seq": ((ids, Input("labels", (5,), torch.int64, 96)), ("input_ids", "labels")),
        "image": ((Input("pixel_values", (3, 32, 32)), label2), ("pixel_values", "labels")),
        "segment": ((Input("pixel_values", (3, 32, 32)), Input("labels", (8, 8), torch.int64, 2)),
                    ("pixel_values", "labels")),
        "audio": ((Input("input_values", (400,)), label2), ("input_values", "labels")),
        "whisper": ((Input("input_features", (16, 32)), Input("labels", (4,), torch.int64, 96)),
                    ("input_features", "labels")),
    }
    kind = {"bert": "classify", "roberta": "classify", "distilbert": "classify", "albert": "classify",
            "electra": "classify", "deberta_v2": "classify", "gpt2": "lm", "opt": "lm", "bloom": "lm",
            "gpt_neox": "lm", "llama": "lm", "t5": "seq2seq", "bart": "seq2seq", "vit": "image", "swin": "image",
            "convnext": "image", "resnet": "image", "mobilevit": "image", "segformer": "segment",
            "wav2vec2": "audio", "whisper": "whisper", "gpt_neo": "lm", "gptj": "lm", "codegen": "lm",
            "xglm": "lm", "mpnet": "classify", "funnel": "classify", "mobilebert": "classify",
            "convbert": "classify", "squeezebert": "classify", "longformer": "classify", "xlnet": "classify",
            "pegasus": "seq2seq", "marian": "seq2seq", "deit": "image", "beit": "image", "poolformer": "image",
            "regnet": "image", "efficientnet": "image", "hubert": "audio",
            "roformer": "classify", "megatron_bert": "classify", "ernie": "classify", "esm": "classify",
            "rembert": "classify", "nezha": "classify", "big_bird": "classify", "xlm": "classify", "ctrl": "lm",
            "mbart": "seq2seq", "blenderbot": "seq2seq", "m2m_100": "seq2seq", "mt5": "seq2seq",
            "switch_transformers": "seq2seq", "levit": "image", "swinv2": "image", "convnextv2": "image",
            "focalnet": "image", "van": "image", "bit": "image", "mobilenet_v2_hf": "image", "sew": "audio",
            "wavlm": "audio", "unispeech": "audio"}.get(name)
    return specs[kind] if kind else None


class LossOf(torch.nn.Module):
    """forward(*inputs) -> the HF model's loss (labels = input_ids for a
    causal LM)."""

    def __init__(self, model, keywords):
        super().__init__()
        self.model, self.keywords = model, keywords

    def forward(self, *args):
        kw = dict(zip(self.keywords, args))
        if "labels" not in kw:
            kw["labels"] = kw["input_ids"]
        return self.model(**kw).loss


def train_case(name, case, tidalc, work, opset):
    from unittest import mock

    from tidal import real_models, real_training

    spec = train_spec(name)
    if spec is None:
        return "no loss of its own (not trained)"
    inputs, keywords = spec
    build = case[0]
    key = "hf_" + name  # apart from the suite's own names (and their data rules)
    entry = real_models.RealModel(key, "hf", lambda: LossOf(build(), keywords), inputs, loss="output",
                                  outputs=("loss",), min_opset=opset, note="transformers " + name)
    with mock.patch.dict(real_models.MODELS, {key: entry}):
        result = real_training.evaluate(key, tidalc, os.path.join(work, name), threads=1)
    if result.failure != "ok":
        return result.failure[:220]
    worst = max(r.comparison.loss_dev for r in result.optimizers.values() if r.comparison)
    return f"trains ok (SGD and AdamW, 5 steps; loss within {worst:.1e} of PyTorch's)"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--only", default="", help="comma-separated model names")
    p.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"))
    p.add_argument("--workdir", default=None)
    p.add_argument("--train", action="store_true", help="train (5 steps, SGD and AdamW) against PyTorch")
    args = p.parse_args(argv)
    try:
        import transformers as tf
    except ImportError:
        print("transformers is not installed (see this script's docstring)", file=sys.stderr)
        return 2
    tf.logging.set_verbosity_error()
    current_exporter.register()
    all_cases = cases(tf)
    names = [n for n in args.only.split(",") if n] or list(all_cases)
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-hf-triage-")
    os.makedirs(work, exist_ok=True)
    outcomes = {}
    for n in names:
        if args.train:
            outcomes[n] = train_case(n, all_cases[n], args.tidalc, work, args.opset)
        else:
            outcomes[n] = run_case(n, all_cases[n], args.tidalc, work, args.opset, args.batch)
        print(f"{n:14s} {outcomes[n]}", flush=True)
    if args.train:
        trained = sum(o.startswith("trains ok") for o in outcomes.values())
        print(f"{trained} of {sum(not o.startswith('no loss') for o in outcomes.values())} models with a loss train"
              f" matching PyTorch; transformers {tf.__version__}, torch {torch.__version__}")
        return 0
    ok = sum(o.startswith("ok") for o in outcomes.values())
    exported = sum(not o.startswith(("export", "build")) for o in outcomes.values())
    print(f"{ok} of {exported} exported models match PyTorch ({len(outcomes) - exported} not exportable or built);"
          f" transformers {tf.__version__}, torch {torch.__version__}, opset {args.opset}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
