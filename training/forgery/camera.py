"""v4: crops of full-size camera photos as the service's localiser sees them.

The rasters come from camera-rasters.ts: camera originals, re-saved copies and forgeries made at
the camera's own size (server/scripts/camera-forgery-set.py), decoded and scaled to at most
1 MP exactly as runLocaliser does. Up to v3 every training photo was a 256 px ImageNet/COCO
thumbnail, so the noise of a scaled camera photo looked suspicious to the model (untouched
full-size photos scored up to 0.84) and it could only corroborate above 0.3 MP.
"""
import csv
import os

import cv2
import numpy as np
import torch


def load_camera(folder):
    """[(rgb uint8 HxWx3, mask float32 HxW or None, kind)] from a camera-rasters.ts folder."""
    rasters = []
    with open(os.path.join(folder, 'index.csv')) as handle:
        for row in csv.DictReader(handle):
            image = cv2.cvtColor(cv2.imread(os.path.join(folder, row['raster']), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
            mask = None
            if row['label'] == '1':
                mask = (cv2.imread(os.path.join(folder, row['raster'][:-4] + '_mask.png'), cv2.IMREAD_GRAYSCALE) > 127).astype(np.float32)
            rasters.append((image, mask, row['kind']))
    return rasters


def camera_batch(rng, rasters, count, crop):
    """`count` crops of `crop` px: a forgery's crop keeps its region in view 80 % of the time."""
    xs, ms, kinds = [], [], []
    for _ in range(count):
        image, mask, kind = rasters[rng.integers(len(rasters))]
        h, w = image.shape[:2]
        size = min(crop, h, w)
        if mask is not None and rng.random() < 0.8:
            ys, xs_ = np.nonzero(mask)
            cy = int(np.clip(ys.mean() - size / 2 + rng.integers(-size // 4, size // 4 + 1), 0, h - size))
            cx = int(np.clip(xs_.mean() - size / 2 + rng.integers(-size // 4, size // 4 + 1), 0, w - size))
        else:
            cy, cx = int(rng.integers(0, h - size + 1)), int(rng.integers(0, w - size + 1))
        patch = image[cy:cy + size, cx:cx + size]
        target = mask[cy:cy + size, cx:cx + size] if mask is not None else np.zeros((size, size), np.float32)
        if size < crop:  # a raster narrower than the crop (never at 1 MP, but a 4:1 panorama could be)
            patch = cv2.resize(patch, (crop, crop), interpolation=cv2.INTER_CUBIC)
            target = cv2.resize(target, (crop, crop), interpolation=cv2.INTER_NEAREST)
        if rng.random() < 0.5:  # mirror: the camera's noise has no left or right
            patch, target = patch[:, ::-1], target[:, ::-1]
        if kind == 'camera-forged' and target.sum() == 0:
            kind = 'outside'
        xs.append(np.ascontiguousarray(patch))
        ms.append(np.ascontiguousarray(target))
        kinds.append('authentic' if kind != 'camera-forged' and kind != 'outside' else kind)
    x = torch.from_numpy(np.stack(xs)).permute(0, 3, 1, 2).float() / 255
    m = torch.from_numpy(np.stack(ms))[:, None]
    return x, m, kinds


def whole_image_scores(model, rasters, image_score):
    """The image-level score of every raster, whole (the service tiles it; a fully convolutional
    map differs only near tile borders; the model needs sides that are multiples of 8), and its label."""
    model.eval()
    scores, labels = [], []
    with torch.no_grad():
        for image, mask, kind in rasters:
            h, w = image.shape[:2]
            x = torch.from_numpy(image[:h - h % 8, :w - w % 8].copy()).permute(2, 0, 1)[None].float() / 255
            scores.append(image_score(torch.sigmoid(model(x))).item())
            labels.append(int(kind == 'camera-forged'))
    model.train()
    return np.array(scores), np.array(labels)
