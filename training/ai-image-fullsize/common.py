"""Shared by prepare.py, train.py, evaluate.py and export.py: the patch network, the fixed
inference grid and the augmentation applied identically to BOTH classes.

Inference contract (what the server must reproduce):
  decoded 8-bit RGB in stored orientation (no EXIF rotation, alpha dropped, grey replicated),
  NO resize. Tile P = 96. nx = min(GRID_MAX, floor(W / P)), ny = min(GRID_MAX, floor(H / P));
  left_i = round(i * (W - P) / (nx - 1)) (0 when nx == 1), top_j likewise. The patches
  (ny * nx of them, row-major) are values / 255, NCHW float32. Image logit = mean of patch logits.
  Images with a side under P are not scored.
"""
import io
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

P = 96
GRID_MAX = 4

KERNELS = [Image.BILINEAR, Image.BICUBIC, Image.LANCZOS, Image.BOX, Image.HAMMING]


class PatchNet(nn.Module):
    """Residual-only input (no raw RGB, so colour and content carry less):
    NPR (Tan et al., CVPR 2024): x - nearest-upsample(x[::2, ::2]) and a 3x3 high-pass
    x - mean3x3(x), each x8. One full-resolution conv layer (pixel relationships), then six
    conv-BN-ReLU blocks (three stride 2), global mean, dropout, linear -> logit. Fully
    convolutional: trained on 64x64 crops, applied to 96x96 tiles."""

    def __init__(self, width=(16, 32, 32, 64, 64, 128, 128)):
        super().__init__()

        def block(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

        w = width
        self.features = nn.Sequential(
            block(6, w[0], 1),
            block(w[0], w[1], 2), block(w[1], w[2], 1),
            block(w[2], w[3], 2), block(w[3], w[4], 1),
            block(w[4], w[5], 2), block(w[5], w[6], 1),
        )
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(w[6], 1)

    def forward(self, x):
        # x: N x 3 x H x W in [0, 1], H and W even
        down = F.avg_pool2d(x, 1, 2)  # x[:, :, ::2, ::2]
        up = F.interpolate(down, scale_factor=2.0, mode='nearest')
        npr = x - up
        hp = x - F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
        f = self.features(torch.cat([npr * 8.0, hp * 8.0], dim=1))
        return self.head(self.drop(f.mean(dim=(2, 3))))[:, 0]


def grid_boxes(w, h, p=P, gmax=GRID_MAX):
    if w < p or h < p:
        return []
    nx, ny = min(gmax, w // p), min(gmax, h // p)
    xs = [0] if nx == 1 else [round(i * (w - p) / (nx - 1)) for i in range(nx)]
    ys = [0] if ny == 1 else [round(j * (h - p) / (ny - 1)) for j in range(ny)]
    return [(x, y) for y in ys for x in xs]


def grid_patches(arr, p=P, gmax=GRID_MAX):
    """arr: HxWx3 uint8 -> Nx3xPxP uint8 (row-major grid)."""
    h, w = arr.shape[:2]
    boxes = grid_boxes(w, h, p, gmax)
    if not boxes:
        return np.zeros((0, 3, p, p), np.uint8)
    return np.stack([arr[y:y + p, x:x + p] for x, y in boxes]).transpose(0, 3, 1, 2).copy()


def to_rgb(im):
    if im.mode in ('RGBA', 'LA') or (im.mode == 'P' and 'transparency' in im.info):
        im = im.convert('RGBA')
        bg = Image.new('RGB', im.size, (255, 255, 255))
        bg.paste(im, mask=im.split()[3])
        return bg
    return im.convert('RGB')


def jpeg(im, q, sub):
    b = io.BytesIO()
    im.save(b, 'JPEG', quality=q, subsampling=sub)
    b.seek(0)
    return Image.open(b).convert('RGB')


def pre_jpeg(crop, rng):
    """A JPEG history at native resolution (p 0.9, q 70-98) for both classes: camera photos all
    have one, generator PNGs none, so without it 'was a JPEG once' would carry the label."""
    if rng.random() < 0.9:
        return jpeg(crop, rng.randint(70, 98), 2 if rng.random() < 0.7 else 0)
    return crop


def augment_region(im, rng, region=224):
    """One augmented view of a random region of `im` (PIL RGB), processed the same way whatever
    the class: a native-resolution JPEG history (pre_jpeg), then with p 0.75 a resample (target short side log-uniform 384-1280 px; when that would
    not shrink the image, a factor U(0.5, 0.95) instead, so both classes are resampled equally
    often) with a random kernel; then with p 0.85 JPEG q 65-100 (4:2:0 p 0.7, else 4:4:4).
    Returns an RGB uint8 array of at most region x region."""
    w, h = im.size
    short = min(w, h)
    info = {}
    if rng.random() < 0.75:
        target = math.exp(rng.uniform(math.log(384), math.log(1280)))
        s = target / short
        if s >= 1:
            s = rng.uniform(0.5, 0.95)
        rw, rh = min(w, math.ceil(region / s)), min(h, math.ceil(region / s))
        x0, y0 = rng.randint(0, w - rw), rng.randint(0, h - rh)
        crop = pre_jpeg(im.crop((x0, y0, x0 + rw, y0 + rh)), rng)
        ow, oh = max(1, round(rw * s)), max(1, round(rh * s))
        crop = crop.resize((ow, oh), rng.choice(KERNELS))
        info['scale'] = s
    else:
        rw, rh = min(w, region), min(h, region)
        x0, y0 = rng.randint(0, w - rw), rng.randint(0, h - rh)
        crop = pre_jpeg(im.crop((x0, y0, x0 + rw, y0 + rh)), rng)
        info['scale'] = 1.0
    if rng.random() < 0.85:
        q = rng.randint(65, 100)
        sub = 2 if rng.random() < 0.7 else 0
        crop = jpeg(crop, q, sub)
        info['q'] = q
    else:
        info['q'] = 0
    return np.asarray(crop), info


def random_patches(arr, rng, n, p=P):
    h, w = arr.shape[:2]
    if h < p or w < p:
        return []
    out = []
    for _ in range(n):
        x, y = rng.randint(0, w - p), rng.randint(0, h - p)
        out.append(arr[y:y + p, x:x + p].transpose(2, 0, 1))
    return out


# Validation conditions, applied identically to both classes on the whole image.
def condition(im, name):
    if name == 'asis':
        return im
    if name == 'jpeg90':
        return jpeg(im, 90, 2)
    if name == 'down75_jpeg85':
        w, h = im.size
        return jpeg(im.resize((round(w * 0.75), round(h * 0.75)), Image.BICUBIC), 85, 2)
    raise ValueError(name)


CONDITIONS = ['asis', 'jpeg90', 'down75_jpeg85']
