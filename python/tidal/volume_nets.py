"""The volumetric (3-D) networks of the real-model suite
(tidal.real_models): the models whose activations outgrow a GPU first.
A 3-D U-Net (Çiçek et al., 2016) segmenting voxels, and VoxelMorph
(Balakrishnan et al., 2019): a 3-D U-Net predicts a displacement field
that warps the moving volume onto the fixed one through F.grid_sample on
5-D tensors (ONNX GridSample-20, exported as the current exporters write
it: tidal.current_exporter), trained on image similarity plus flow
smoothness. Built through tidal.real_models, which seeds them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from tidal import current_exporter


def _block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1), nn.BatchNorm3d(cout), nn.ReLU(),
                         nn.Conv3d(cout, cout, 3, padding=1), nn.BatchNorm3d(cout), nn.ReLU())


class UNet3D(nn.Module):
    """Two levels of max-pooling, a transposed-convolution and a trilinear
    upsampling path with skip concatenations. forward(x [N, cin, 16, 16,
    16]) -> [N, cout, 16, 16, 16]."""

    SIZE = 16

    def __init__(self, cin=1, cout=1, width=4):
        super().__init__()
        self.e1, self.e2, self.bottom = _block(cin, width), _block(width, 2 * width), _block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose3d(4 * width, 2 * width, 2, 2)
        self.d2 = _block(4 * width, 2 * width)
        self.d1 = _block(3 * width, width)
        self.out = nn.Conv3d(width, cout, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(F.max_pool3d(a, 2))
        c = self.bottom(F.max_pool3d(b, 2))
        d = self.d2(torch.cat([self.up2(c), b], 1))
        up = F.interpolate(d, scale_factor=2, mode="trilinear", align_corners=False)
        return self.out(self.d1(torch.cat([up, a], 1)))


class VoxelMorph(nn.Module):
    """VoxelMorph: flow = UNet3D([moving, fixed]) (3 channels, small at
    initialisation), warped = grid_sample(moving, identity + flow) with
    align_corners=True, loss = MSE(warped, fixed) + 0.01 * the mean squared
    spatial differences of the flow. forward(moving, fixed [N, 1, 16, 16,
    16]) -> loss."""

    SIZE = 16

    def __init__(self):
        super().__init__()
        current_exporter.register()
        self.unet = UNet3D(cin=2, cout=3)
        nn.init.normal_(self.unet.out.weight, std=1e-2)
        nn.init.zeros_(self.unet.out.bias)
        s = self.SIZE
        axis = torch.arange(s, dtype=torch.float32)
        zz, yy, xx = torch.meshgrid(axis, axis, axis, indexing="ij")
        self.register_buffer("identity", torch.stack([zz, yy, xx]).unsqueeze(0), persistent=False)

    def forward(self, moving, fixed):
        flow = self.unet(torch.cat([moving, fixed], 1))
        locs = self.identity + flow  # voxel (z, y, x) positions
        grid = 2.0 * locs / (self.SIZE - 1) - 1.0
        grid = grid.permute(0, 2, 3, 4, 1).flip(-1)  # (x, y, z) last
        warped = F.grid_sample(moving, grid, mode="bilinear", padding_mode="border", align_corners=True)
        smooth = sum(((flow.narrow(d, 1, self.SIZE - 1) - flow.narrow(d, 0, self.SIZE - 1)) ** 2).mean()
                     for d in (2, 3, 4))
        return ((warped - fixed) ** 2).mean() + 0.01 * smooth
