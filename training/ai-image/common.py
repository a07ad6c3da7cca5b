"""Shared by train.py, export.py and evaluate.py: the patch model and the deterministic patch
selection that server/src/detectors/image/ai-image-model.ts reproduces.

Input: native-resolution 64x64 RGB patches scaled to [0, 1]. The network computes the NPR
residual itself (Tan et al., "Rethinking the Up-Sampling Operations in CNN-based Generative
Network for Generalizable Deepfake Detection", CVPR 2024, §3: x - up2(down2(x)), nearest), so
the server only cuts patches. Patch choice follows PatchCraft's rich-texture idea (Zhong et al.
2023, §3.1): the patches with the most high-frequency energy carry the generator's trace.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PATCH = 64
MAX_PATCHES = 32


class NPR(nn.Module):
    def forward(self, x):
        down = x[:, :, ::2, ::2]
        up = down.repeat_interleave(2, dim=2).repeat_interleave(2, dim=3)
        return x - up


class PatchNet(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        w = width
        def block(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.npr = NPR()
        self.features = nn.Sequential(
            block(6, w, 1),                            # 64: one full-resolution layer reads the residual per pixel
            block(w, 2 * w, 2), block(2 * w, 2 * w, 1),  # 32
            block(2 * w, 4 * w, 2), block(4 * w, 4 * w, 1),  # 16
            block(4 * w, 8 * w, 2), block(8 * w, 8 * w, 1),  # 8
        )
        self.head = nn.Linear(8 * w, 1)

    def forward(self, x):
        # NPR residual (scaled: it is small) beside the centred patch itself: the residual carries
        # the up-sampling trace, the patch the colour and texture context it is read in.
        r = torch.cat([self.npr(x) * 8.0, x - 0.5], dim=1)
        f = self.features(r)
        f = f.mean(dim=(2, 3))
        return self.head(f)[:, 0]


def texture_scores(img):
    """img: HxWx3 uint8. Grid of non-overlapping PATCH tiles; score = mean |horizontal| +
    |vertical| neighbour difference of the luma-free channel sum (integer arithmetic, same in TS)."""
    h, w, _ = img.shape
    s = img.astype(np.int32).sum(axis=2)
    dx = np.zeros_like(s); dx[:, 1:] = np.abs(s[:, 1:] - s[:, :-1])
    dy = np.zeros_like(s); dy[1:, :] = np.abs(s[1:, :] - s[:-1, :])
    d = dx + dy
    gh, gw = h // PATCH, w // PATCH
    out = []
    for gy in range(gh):
        for gx in range(gw):
            tile = d[gy * PATCH:(gy + 1) * PATCH, gx * PATCH:(gx + 1) * PATCH]
            out.append((int(tile.sum()), gy, gx))
    return out


def select_patches(img, max_patches=MAX_PATCHES):
    """Top max_patches tiles by texture (ties: raster order). Returns Nx3xPxP float32 in [0,1]."""
    scores = texture_scores(img)
    scores.sort(key=lambda t: (-t[0], t[1], t[2]))
    chosen = scores[:max_patches]
    patches = [img[gy * PATCH:(gy + 1) * PATCH, gx * PATCH:(gx + 1) * PATCH] for _, gy, gx in chosen]
    if not patches:
        return np.zeros((0, 3, PATCH, PATCH), np.float32)
    return (np.stack(patches).transpose(0, 3, 1, 2).astype(np.float32) / 255.0)


def trimmed_mean(logits, trim=0.125):
    v = np.sort(np.asarray(logits, np.float64))
    k = int(len(v) * trim)
    v = v[k:len(v) - k] if len(v) - 2 * k > 0 else v
    return float(v.mean())
