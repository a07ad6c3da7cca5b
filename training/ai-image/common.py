"""Shared by train.py, export.py and evaluate.py: the v2 view model and the deterministic view
selection that server/src/detectors/image/ai-image-model.ts reproduces.

v1 (64x64 native-resolution NPR patches) did not learn: the training set (dataset10000) was
resized to 256x256 with Lanczos by its authors, which erases the up-sampling trace NPR reads, and
a 64x64 tile of a 12 MP photo shows nothing like a 64x64 tile of a 256x256 thumbnail. v2 works in
the training set's own domain instead: every image is seen as 256x256 square views (Lanczos
down-scaling, like the dataset), and a small CNN reads colour, content and fine texture of the
whole view, with a fixed high-pass residual beside the RGB channels.

Views: the short side s = min(w, h); n = min(3, ceil(long / short - 0.01)) squares of side s,
evenly spaced along the long side (offsets round(i * (long - s) / (n - 1))), each resized to
256x256 (Lanczos 3). The image logit is the mean of the view logits.
"""
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

SIZE = 256
MAX_VIEWS = 3
MIN_SIDE = 128  # smaller images are not scored (far outside the training domain)


class ViewNet(nn.Module):
    """6 input channels: centred RGB and its high-pass residual x - mean3x3(x) (x4), then eight
    conv-BN-ReLU blocks (16 -> 192 channels, six stride-2), global mean, linear -> logit."""
    def __init__(self):
        super().__init__()
        def block(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        cfg = [(16, 2), (32, 2), (64, 2), (64, 1), (128, 2), (128, 1), (192, 2), (192, 1)]
        layers, c = [], 6
        for o, s in cfg:
            layers.append(block(c, o, s)); c = o
        self.features = nn.Sequential(*layers)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(c, 1)

    def forward(self, x):
        hp = x - F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
        f = self.features(torch.cat([x - 0.5, hp * 4.0], dim=1))
        return self.head(self.drop(f.mean(dim=(2, 3))))[:, 0]


def view_boxes(w, h):
    """(left, top, side) of each square view."""
    s, long = min(w, h), max(w, h)
    n = min(MAX_VIEWS, max(1, math.ceil(long / s - 0.01)))
    offs = [0] if n == 1 else [round(i * (long - s) / (n - 1)) for i in range(n)]
    return [(o, 0, s) if w >= h else (0, o, s) for o in offs]


def select_views(img):
    """img: HxWx3 uint8 RGB. Returns Nx3x256x256 float32 in [0, 1] (empty when too small)."""
    h, w = img.shape[:2]
    if min(h, w) < MIN_SIDE:
        return np.zeros((0, 3, SIZE, SIZE), np.float32)
    pil = Image.fromarray(img)
    out = []
    for left, top, s in view_boxes(w, h):
        v = pil.crop((left, top, left + s, top + s))
        if s != SIZE:
            v = v.resize((SIZE, SIZE), Image.LANCZOS)
        out.append(np.asarray(v))
    return np.stack(out).transpose(0, 3, 1, 2).astype(np.float32) / 255.0
