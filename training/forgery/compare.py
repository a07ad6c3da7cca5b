"""Scores two localisers on the same held-out samples: v1 (rebuilt by from_onnx.py) against v2.

/usr/bin/python3 training/forgery/compare.py --data /work/data/forgery-src/dataset10000 \
    --old /work/data/forgery-work-v2/v1.pt --new /work/data/forgery-work-v2/final.pt --batches 50

Test photos, seed 3 (the first 20 batches are export.py's 320 test samples): image AUC per
version, by kind of tampering, and a paired bootstrap of the AUC difference. Also asks, on the
validation photos only (seed 2), whether a logistic model over several statistics of the map
would rank images better than the mean of its top 1 % (5-fold cross-validated).
"""
import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

from model import Localiser
from train import fixed_set, load

torch.set_num_threads(1)


def logit(p):
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def maps(model, data):
    model.eval()
    out, kinds = [], []
    with torch.no_grad():
        for x, _, k in data:
            out.append(torch.sigmoid(model(x)).flatten(1))
            kinds += k
    return torch.cat(out), np.array(kinds)


def features(p):
    flat = p.sort(dim=1, descending=True).values
    n = flat.shape[1]
    top = lambda frac: flat[:, :max(1, int(n * frac))].mean(1).numpy()
    return np.stack([logit(top(0.01)), logit(top(0.001)), logit(top(0.05)), logit(top(0.2)), logit(p.mean(1).numpy()), (p >= 0.5).float().mean(1).numpy()], 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', required=True)
    parser.add_argument('--old', required=True)
    parser.add_argument('--new', required=True)
    parser.add_argument('--batches', type=int, default=50)
    args = parser.parse_args()
    models = {}
    for name, path in (('v1', args.old), ('v2', args.new)):
        models[name] = Localiser()
        models[name].load_state_dict(torch.load(path))
    validation = fixed_set(load(os.path.join(args.data, 'validation/real')), 2, 20)
    test = fixed_set(load(os.path.join(args.data, 'test/real')), 3, args.batches)
    scores = {}
    for name, model in models.items():
        p, kinds = maps(model, test)
        labels = kinds != 'authentic'
        s = p.flatten(1).topk(max(1, p.shape[1] // 100), dim=1).values.mean(1).numpy()
        scores[name] = s
        line = f'{name}: test image AUC {roc_auc_score(labels, s):.4f} on {len(s)} samples (first 320: {roc_auc_score(labels[:320], s[:320]):.4f})'
        for kind in ('splice', 'copy-move', 'removal'):
            keep = (kinds == kind) | (kinds == 'authentic')
            line += f'; {kind} {roc_auc_score(labels[keep], s[keep]):.3f}'
        print(line, flush=True)
        vp, vk = maps(model, validation)
        vf, vl = features(vp), vk != 'authentic'
        single = roc_auc_score(vl, vf[:, 0])
        pooled = cross_val_predict(LogisticRegression(C=1.0, max_iter=2000), vf, vl, cv=5, method='predict_proba')[:, 1]
        print(f'{name}: validation top-1 % AUC {single:.4f}; logistic over 6 map statistics, 5-fold CV AUC {roc_auc_score(vl, pooled):.4f}', flush=True)
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(2000):
        i = rng.integers(len(labels), size=len(labels))
        if labels[i].all() or not labels[i].any():
            continue
        diffs.append(roc_auc_score(labels[i], scores['v2'][i]) - roc_auc_score(labels[i], scores['v1'][i]))
    diffs = np.array(diffs)
    print(f'AUC v2 - v1: {np.mean(diffs):+.4f}, 95 % bootstrap interval [{np.quantile(diffs, 0.025):+.4f}, {np.quantile(diffs, 0.975):+.4f}], P(v2 <= v1) {np.mean(diffs <= 0):.3f}')


if __name__ == '__main__':
    main()
