"""Trains the forgery localiser on manipulations made on the fly from real photos.

/usr/bin/python3 training/forgery/train.py --data /work/data/forgery-src/dataset10000 --minutes 40

Real photos: the `real` folders of dataset10000 (ImageNet/COCO photos, see manifest.json);
train/ makes training samples, validation/ the validation set (calibration, thresholds),
test/ the held-out figures. Splits are by source photo. Checkpoints every few minutes to
--work and resumes from the last one.
"""
import argparse
import glob
import json
import os
import time

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score

from manipulations import tamper
from model import Localiser

torch.set_num_threads(1)


def load(folder):
    images = []
    for path in sorted(glob.glob(os.path.join(folder, '*'))):
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is not None and image.shape[:2] == (256, 256):
            images.append(image)
    return images


def batch_of(rng, images, count, crop=None):
    xs, ms, kinds = [], [], []
    for _ in range(count):
        a, b = rng.integers(len(images), size=2)
        image, mask, kind = tamper(rng, images[a], images[b])
        if crop:
            # A crop keeps the tampered region in view most of the time (it covers half the side).
            ys, xs_ = np.nonzero(mask)
            if len(ys) and rng.random() < 0.8:
                cy, cx = int(np.clip(ys.mean() - crop / 2 + rng.integers(-crop // 4, crop // 4 + 1), 0, 256 - crop)), int(np.clip(xs_.mean() - crop / 2 + rng.integers(-crop // 4, crop // 4 + 1), 0, 256 - crop))
            else:
                cy, cx = rng.integers(0, 256 - crop + 1, 2)
            image, mask = image[cy:cy + crop, cx:cx + crop], mask[cy:cy + crop, cx:cx + crop]
            if kind != 'authentic' and mask.sum() == 0:
                kind = 'outside'
        xs.append(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        ms.append(mask)
        kinds.append(kind)
    x = torch.from_numpy(np.stack(xs)).permute(0, 3, 1, 2).float() / 255
    m = torch.from_numpy(np.stack(ms))[:, None]
    return x, m, kinds


def image_score(probabilities):
    """Mean of the top 1 % of the map's cells: the image-level score the service uses."""
    flat = probabilities.flatten(1)
    k = max(1, flat.shape[1] // 100)
    return flat.topk(k, dim=1).values.mean(1)


def evaluate(model, data):
    model.eval()
    scores, labels, tp, fp, fn = [], [], 0.0, 0.0, 0.0
    with torch.no_grad():
        for x, m, kinds in data:
            p = torch.sigmoid(model(x))
            target = F.avg_pool2d(m, 4) > 0.5
            predicted = p > 0.5
            tp += (predicted & target).sum().item()
            fp += (predicted & ~target).sum().item()
            fn += (~predicted & target).sum().item()
            scores += image_score(p).tolist()
            labels += [k != 'authentic' for k in kinds]
    model.train()
    f1 = 2 * tp / max(1, 2 * tp + fp + fn)
    return {'pixelF1': f1, 'imageAuc': roc_auc_score(labels, scores)}, np.array(scores), np.array(labels)


def fixed_set(images, seed, batches, size=16):
    rng = np.random.default_rng(seed)
    return [batch_of(rng, images, size) for _ in range(batches)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', required=True)
    parser.add_argument('--work', default='/work/data/forgery-work')
    parser.add_argument('--minutes', type=float, default=40)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    train_images = load(os.path.join(args.data, 'train/real'))
    validation = fixed_set(load(os.path.join(args.data, 'validation/real')), 1, 10)
    print(f'{len(train_images)} training photos', flush=True)

    model = Localiser()
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    state_path = os.path.join(args.work, 'last.pt')
    step, elapsed = 0, 0.0
    if os.path.exists(state_path):
        state = torch.load(state_path)
        model.load_state_dict(state['model'])
        optimiser.load_state_dict(state['optimiser'])
        step, elapsed = state['step'], state['elapsed']
        print(f'resumed at step {step}, {elapsed / 60:.1f} min', flush=True)
    rng = np.random.default_rng(1000 + step)
    budget = args.minutes * 60
    started, last_save = time.time() - elapsed, time.time()
    pos_weight = torch.tensor(4.0)
    while time.time() - started < budget:
        x, m, _ = batch_of(rng, train_images, 16, crop=128)
        target = F.avg_pool2d(m, 4)
        logits = model(x)
        bce = F.binary_cross_entropy_with_logits(logits, target, pos_weight=pos_weight)
        p = torch.sigmoid(logits)
        dice = 1 - (2 * (p * target).sum() + 1) / (p.sum() + target.sum() + 1)
        loss = bce + 0.5 * dice
        for group in optimiser.param_groups:  # cosine decay over the budget
            group['lr'] = 2e-3 * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * min(1.0, (time.time() - started) / budget))))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        step += 1
        if step % 50 == 0:
            print(f'step {step} loss {loss.item():.4f} {(time.time() - started) / 60:.1f} min', flush=True)
        if time.time() - last_save > 360:
            torch.save({'model': model.state_dict(), 'optimiser': optimiser.state_dict(), 'step': step, 'elapsed': time.time() - started}, state_path)
            last_save = time.time()
            metrics, _, _ = evaluate(model, validation)
            print(f'validation {json.dumps(metrics)}', flush=True)
    torch.save({'model': model.state_dict(), 'optimiser': optimiser.state_dict(), 'step': step, 'elapsed': time.time() - started}, state_path)
    torch.save(model.state_dict(), os.path.join(args.work, 'final.pt'))
    metrics, _, _ = evaluate(model, validation)
    print(f'final validation {json.dumps(metrics)} after {step} steps', flush=True)


if __name__ == '__main__':
    main()
