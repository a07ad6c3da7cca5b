"""v4 attempt, diagnostic: v3's image score at native resolution against the service's 1 MP scale.

/usr/bin/python3 training/forgery/native_probe.py <weights.pt> <camera-forgery-set folder> <camera-rasters.ts folder of that set>

For every forgery of the set (server/scripts/camera-forgery-set.py) and its own untouched and
re-saved files: (1) the top-1 % mean of the map on a 512 px tile centred on the forgery's mask, the
same tile for all three files, at native resolution and at the 1 MP scale; (2) the top-1 % mean
over the whole image (1024 px tiles, no overlap) at both scales. Prints the AUC of forged against
untouched for each. Run on the fitting half only (MODEL_CARD.md, "v4 attempt").
"""
import sys

import cv2
import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from model import Localiser
from train import image_score

torch.set_num_threads(2)  # after train's import, which sets one thread
READ = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION


def probabilities(model, image):
    x = torch.from_numpy(cv2.cvtColor(image, cv2.COLOR_BGR2RGB).copy()).permute(2, 0, 1)[None].float() / 255
    with torch.no_grad():
        return torch.sigmoid(model(x)).flatten(1)


def tile_at(image, cy, cx, size=512):
    h, w = image.shape[:2]
    size = min(size, h - h % 8, w - w % 8)
    y, x = int(np.clip(cy - size // 2, 0, h - size)), int(np.clip(cx - size // 2, 0, w - size))
    return image[y:y + size, x:x + size]


def whole(model, image, tile=1024):
    h, w = image.shape[:2]
    values = []
    for y in range(0, h - h % 8, tile):
        for x in range(0, w - w % 8, tile):
            t = image[y:min(y + tile, h), x:min(x + tile, w)]
            t = t[:t.shape[0] - t.shape[0] % 8, :t.shape[1] - t.shape[1] % 8]
            if min(t.shape[:2]) >= 64:
                values.append(probabilities(model, t))
    return image_score(torch.cat(values, 1)).item()


def main():
    weights, folder, rasters = sys.argv[1:4]
    model = Localiser()
    model.load_state_dict(torch.load(weights))
    model.eval()
    name = folder.rstrip('/').split('/')[-1]
    forged = sorted(line.split(',')[0][1:-4] for line in open(f'{folder}/labels.csv') if line.startswith('f') and not line.startswith('file'))
    scores = {key: [] for key in ('tile native', 'tile 1 MP', 'whole native', 'whole 1 MP')}
    labels = []
    for index in forged:
        mask = cv2.imread(f'{folder}/masks/f{index}_gt.png', cv2.IMREAD_GRAYSCALE)
        ys, xs = np.nonzero(mask > 127)
        for prefix, label in (('f', 1), ('u', 0), ('r', 0)):
            full = cv2.imread(f'{folder}/{prefix}{index}.jpg', READ)
            small = cv2.imread(f'{rasters}/{name}-{prefix}{index}.png', cv2.IMREAD_COLOR)
            scale = small.shape[0] / mask.shape[0]
            scores['tile native'].append(image_score(probabilities(model, tile_at(full, ys.mean(), xs.mean()))).item())
            scores['tile 1 MP'].append(image_score(probabilities(model, tile_at(small, ys.mean() * scale, xs.mean() * scale))).item())
            scores['whole native'].append(whole(model, full))
            scores['whole 1 MP'].append(whole(model, small))
            labels.append(label)
    for key, values in scores.items():
        values, y = np.array(values), np.array(labels)
        print(f'{key}: AUC {roc_auc_score(y, values):.3f}, median forged {np.median(values[y == 1]):.3f}, untouched {np.median(values[y == 0]):.3f}')


if __name__ == '__main__':
    main()
