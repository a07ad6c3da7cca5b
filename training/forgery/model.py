"""A small fully-convolutional forgery localiser on noise residuals.

The input is RGB in 0..1. Three fixed SRM high-pass filters (Fridrich & Kodovsky 2012, the
three Zhou et al., CVPR 2018 use) and three constrained convolutions (Bayar & Stamm, IEEE TIFS
2018: each kernel's centre is -1 and the rest sums to 1, so it can only learn prediction-error
filters) turn content into residuals where splices, copy-moves and inpainting leave
inconsistencies; a light encoder-decoder turns them into a tampering map at 1/4 of the input's
resolution. Fully convolutional: any size that is a multiple of 8 runs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

SRM = [
    [[0, 0, 0, 0, 0], [0, -1, 2, -1, 0], [0, 2, -4, 2, 0], [0, -1, 2, -1, 0], [0, 0, 0, 0, 0]],
    [[-1, 2, -2, 2, -1], [2, -6, 8, -6, 2], [-2, 8, -12, 8, -2], [2, -6, 8, -6, 2], [-1, 2, -2, 2, -1]],
    [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 1, -2, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
]
SRM_SCALE = [4.0, 12.0, 2.0]


class ConstrainedConv(nn.Conv2d):
    """Bayar & Stamm's constrained convolution, applied to the grey image."""

    def __init__(self, out_channels=3):
        super().__init__(1, out_channels, 5, padding=2, bias=False)

    def constrained_weight(self):
        w = self.weight
        centre = torch.zeros_like(w)
        centre[:, :, 2, 2] = 1
        off = w * (1 - centre)
        off = off / (off.sum(dim=(2, 3), keepdim=True) + 1e-6)
        return off - centre

    def forward(self, x):
        return F.conv2d(x, self.constrained_weight(), padding=2)


def block(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class Localiser(nn.Module):
    def __init__(self):
        super().__init__()
        srm = torch.tensor(SRM, dtype=torch.float32) / torch.tensor(SRM_SCALE)[:, None, None]
        self.register_buffer('srm', srm[:, None])  # 3 x 1 x 5 x 5, applied to grey
        self.constrained = ConstrainedConv(3)
        self.stem = nn.Sequential(nn.Conv2d(3 + 3 + 3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))  # rgb, srm, constrained
        self.down1 = block(16, 32, 2)          # 1/2
        self.down2 = block(32, 48, 2)          # 1/4
        self.down3 = block(48, 64, 2)          # 1/8
        self.context = nn.Sequential(nn.Conv2d(64, 64, 3, padding=2, dilation=2), nn.ReLU(inplace=True))
        self.up = block(64 + 48, 48)
        self.head = nn.Conv2d(48, 1, 1)

    def forward(self, x):
        grey = 0.299 * x[:, 0:1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:3]
        residuals = torch.cat([x - 0.5, F.conv2d(grey, self.srm, padding=2) * 4, self.constrained(grey) * 4], 1)
        s0 = self.stem(residuals)
        s1 = self.down1(s0)
        s2 = self.down2(s1)
        s3 = self.context(self.down3(s2))
        up = F.interpolate(s3, scale_factor=2.0, mode='nearest')
        return self.head(self.up(torch.cat([up, s2], 1)))  # logits at 1/4 resolution
