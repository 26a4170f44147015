#!/usr/bin/python3
"""Models nobody here wrote: does tidal import, compile and train them?

    /usr/bin/python3 bench/model_triage.py [--models a,b,...] [--opset 17]
        [--train] [--threads 1] [--tidalc PATH] [--workdir DIR]

Exports each architecture below from PyTorch in training mode (dropout and
stochastic depth off, symbolic batch) at `--opset`, and compiles it with
`tidalc --emit plan` (loss cross-entropy over its [N, 10] logits, SGD).
Prints one line per model: `ok`, the export's error (PyTorch's own limits),
or tidalc's one-line error (the op and node that stop it). With `--train`
the models that compile are also trained 5 steps with SGD and AdamW against
PyTorch float32/float64 through tidal.real_training.evaluate (the rule of
python/test/test_real_models.py: 10x PyTorch's own spread, at least 1e-4).

The list is torchvision families and layer kinds outside the real-model
suite (python/tidal/real_models.py), at sizes that compile in seconds:
what a user would try next. A model that matches PyTorch here is a
candidate for the suite; one that does not is a finding. This is a
benchmark, not a test.
"""

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tidal import real_models, real_training  # noqa: E402
from tidal.real_models import CLASSES, Input, RealModel  # noqa: E402


def _tv():
    import torchvision.models as tvm

    return tvm


class Logits(nn.Module):
    """A dense-prediction or feature net made a classifier: flatten, linear."""

    def __init__(self, net, features):
        super().__init__()
        self.net, self.fc = net, nn.Linear(features, CLASSES)

    def forward(self, x):
        y = self.net(x)
        return self.fc(torch.flatten(y["out"] if isinstance(y, dict) else y, 1))


def _video(kind):
    from torchvision.models.video.resnet import (BasicBlock, BasicStem, Conv2Plus1D, Conv3DSimple, R2Plus1dStem,
                                                 VideoResNet)

    conv, stem = (Conv3DSimple, BasicStem) if kind == "r3d" else (Conv2Plus1D, R2Plus1dStem)
    return VideoResNet(BasicBlock, [conv] * 4, [1, 1, 1, 1], stem, num_classes=CLASSES)


def _efficientnet_v2():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, _ = _efficientnet_conf("efficientnet_v2_s")
    setting = setting[:4]
    for stage in setting:
        stage.num_layers = 1
    return EfficientNet(setting, 0.0, stochastic_depth_prob=0.0, num_classes=CLASSES, last_channel=256)


def _seg(name):
    seg = getattr(_tv().segmentation, name)
    kw = {"aux_loss": False} if name != "lraspp_mobilenet_v3_large" else {}
    return Logits(seg(num_classes=4, weights_backbone=None, **kw), 4 * 32 * 32)


def _layers(*mods, features):
    return nn.Sequential(*mods, nn.Flatten(), nn.Linear(features, CLASSES))


def _img(hw):
    return (Input("input", (3, hw, hw)),)


MODELS = [
    RealModel("efficientnet_v2", "torchvision", _efficientnet_v2, _img(32)),
    RealModel("mobilenet_v3_large", "torchvision",
              lambda: _tv().mobilenet_v3_large(num_classes=CLASSES, width_mult=0.5), _img(32)),
    RealModel("resnet50", "torchvision", lambda: _tv().resnet50(num_classes=CLASSES), _img(64)),
    RealModel("squeezenet1_1", "torchvision", lambda: _tv().squeezenet1_1(num_classes=CLASSES), _img(64)),
    RealModel("lraspp", "torchvision", lambda: _seg("lraspp_mobilenet_v3_large"), _img(32)),
    RealModel("deeplabv3", "torchvision", lambda: _seg("deeplabv3_mobilenet_v3_large"), _img(32)),
    RealModel("r3d_18", "torchvision", lambda: _video("r3d"), (Input("input", (3, 4, 32, 32)),)),
    RealModel("r2plus1d_18", "torchvision", lambda: _video("r2plus1d"), (Input("input", (3, 4, 32, 32)),)),
    RealModel("pixel_shuffle", "layers", lambda: _layers(nn.Conv2d(3, 16, 3, padding=1), nn.PixelShuffle(2),
                                                         nn.Conv2d(4, 4, 3), features=4 * 14 * 14), _img(8)),
    RealModel("group_norm_prelu", "layers", lambda: _layers(nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8), nn.PReLU(),
                                                            features=8 * 6 * 6), _img(8)),
    RealModel("local_response_norm", "layers", lambda: _layers(nn.Conv2d(3, 8, 3, 2), nn.LocalResponseNorm(3),
                                                               nn.ReLU(), features=8 * 15 * 15), _img(32)),
    RealModel("reflect_pad", "layers", lambda: _layers(nn.ReplicationPad2d(1), nn.Conv2d(3, 4, 3, padding=1,
                                                                                            padding_mode="reflect"),
                                                         features=4 * 10 * 10), _img(8)),
]


def export(model, path, opset):
    m = real_models.build(model.name)
    x = real_models.example_inputs(model.name, 2)
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, x, buf, opset_version=opset, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=[i.name for i in model.inputs],
                          output_names=["output"], dynamic_axes={i.name: {0: "N"} for i in model.inputs})
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--train", action="store_true", help="also train against PyTorch")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"))
    parser.add_argument("--workdir", help="keep the exports and logs here (default: a temp dir)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")  # the exporter's tracer warnings
    chosen = [m for m in MODELS if not args.models or m.name in args.models.split(",")]
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-triage-")
    os.makedirs(work, exist_ok=True)
    for m in chosen:
        real_models.MODELS[m.name] = m  # so that build/dataset/evaluate know it
    for m in chosen:
        path = os.path.join(work, m.name + ".onnx")
        try:
            export(m, path, args.opset)
        except Exception as err:  # noqa: BLE001  (PyTorch's exporter refuses many ways)
            print(f"{m.name:22s} export: {type(err).__name__}: {str(err).splitlines()[0][:160]}", flush=True)
            continue
        proc = subprocess.run([args.tidalc, path, "--loss", "cross-entropy", "--batch-size", "4", "--emit", "plan",
                               "-o", path + ".plan.json"], capture_output=True, text=True)
        line = "compiles" if proc.returncode == 0 else proc.stderr.strip().splitlines()[-1][:200]
        if proc.returncode == 0 and args.train:
            r = real_training.evaluate(m.name, args.tidalc, os.path.join(work, m.name), threads=args.threads,
                                       opset=args.opset)
            line = "trains, matches PyTorch" if r.failure == "ok" else r.failure[:200]
        print(f"{m.name:22s} {line}", flush=True)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
