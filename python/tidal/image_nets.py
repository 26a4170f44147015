"""The hand-written image networks of the real-model suite
(tidal.real_models): a small U-Net, a convolutional VAE, a spatial
transformer and a deformable CNN. Built through tidal.real_models, which
seeds them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from tidal import current_exporter
from tidal.real_model_nets import CLASSES


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


class DeformableCNN(nn.Module):
    """A CNN with a modulated deformable convolution (DCNv2, Zhu et al.,
    2019) as torchvision.ops.DeformConv2d is used: a 3x3 conv predicts
    each tap's (dy, dx) offset and a sigmoid mask from the features, and
    torchvision.ops.deform_conv2d samples there (DeformConv, opset 19,
    exported as torchvision writes it: tidal.current_exporter).
    forward(x [N, 3, 16, 16])."""

    def __init__(self):
        super().__init__()
        # Registers torch.ops.torchvision here, not while forward is traced
        # (the import's own checks call ops the tracer would record).
        import torchvision  # noqa: F401

        current_exporter.register()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.offset = nn.Conv2d(8, 27, 3, padding=1)  # 18 offsets + 9 mask logits
        nn.init.normal_(self.offset.weight, std=0.05)
        self.weight = nn.Parameter(torch.randn(16, 8, 3, 3) * 0.1)
        self.bias = nn.Parameter(torch.zeros(16))
        self.head = nn.Sequential(nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(16, CLASSES))

    def forward(self, x):
        h = self.stem(x)
        o = self.offset(h)
        offset, mask = o[:, :18], torch.sigmoid(o[:, 18:])
        # torchvision.ops.deform_conv2d's own op: its Python wrapper first
        # calls torchvision::_cuda_version, which the tracer cannot export.
        h = torch.ops.torchvision.deform_conv2d(h, self.weight, offset, mask, self.bias, 1, 1, 1, 1, 1, 1, 1, 1, True)
        return self.head(h)
