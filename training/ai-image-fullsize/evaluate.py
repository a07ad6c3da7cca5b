"""Scores images the way the server should (common.grid_boxes on the decoded image, no resize,
mean of patch logits), on:
  - validation (held-out generators sd3, dall-e-2, glid-3, dit-other + held-out cameras) under the
    three conditions of common.CONDITIONS: fits Platt calibration (pooled) and thresholds there;
  - per held-out generator: AUC of its images against the held-out real images;
  - (--final) ML72/AI-Image-Classifier-Playground public/images and ../shared/data/ai-image/photos,
    as they are, scored ONCE with the validation-chosen calibration and thresholds.
Writes figures.json beside this file.
Usage: /usr/bin/python3 evaluate.py --ckpt /work/data/ai-fullsize/run/best.pt [--final]
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np
import torch
from PIL import Image
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, '..')]
from ai_image_shared import lowest_pure  # noqa: E402
from common import CONDITIONS, GRID_MAX, P, PatchNet, condition, grid_patches, to_rgb  # noqa: E402

Image.MAX_IMAGE_PIXELS = 200_000_000
ROOT = '/work/data/ai-fullsize'
ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default=ROOT + '/run/best.pt')
ap.add_argument('--final', action='store_true')
ap.add_argument('--grid', type=int, default=GRID_MAX)
ap.add_argument('--limit', type=int, default=0, help='smoke test: first N validation images of each class')
args = ap.parse_args()
torch.set_num_threads(1)
model = PatchNet().to(memory_format=torch.channels_last)
ck = torch.load(args.ckpt)
model.load_state_dict(ck['model'])
model.eval()
print('checkpoint step', ck.get('step'), 'monitoring val', ck.get('val'), flush=True)


@torch.no_grad()
def score_arr(arr):
    g = grid_patches(arr, P, args.grid)
    if len(g) == 0:
        return None
    x = (torch.from_numpy(g).float() / 255.0).contiguous(memory_format=torch.channels_last)
    return float(model(x).mean())


def score_file(path, cond='asis'):
    try:
        im = to_rgb(Image.open(path))
    except Exception as e:
        print('unreadable', path, e)
        return None
    return score_arr(np.asarray(condition(im, cond)))


items = json.load(open(ROOT + '/index.json'))
val = [it for it in items if it['split'] == 'val' and 'skip' not in it]
if args.limit:
    val = [it for it in val if it['label'] == 0][:args.limit] + [it for it in val if it['label'] == 1][::max(1, 206 // args.limit)]
t0 = time.time()
rows = []  # (logit, label, cond, group)
for cond in CONDITIONS:
    for it in val:
        s = score_file(os.path.join(ROOT, 'src', it['path']), cond)
        if s is not None:
            rows.append((s, it['label'], cond, it['group']))
    print(cond, 'scored', f'{time.time() - t0:.0f}s', flush=True)
s_all = np.array([r[0] for r in rows]); y_all = np.array([r[1] for r in rows])
conds = np.array([r[2] for r in rows]); groups = np.array([r[3] for r in rows])

lr = LogisticRegression(C=1e4).fit(s_all[:, None], y_all)
a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])


def cal(s):
    return 1 / (1 + np.exp(-(a * np.asarray(s) + b)))


p_all = cal(s_all)
# manipulated: above the highest validation real image (all conditions), and at least 20 images
# above it; authentic: the highest score under which at most 1 % of the images are AI (>= 20).
order = np.sort(p_all[y_all == 0])
top_real = float(order[-1])
manip = float(np.nextafter(top_real, 1.0)) if (p_all > top_real).sum() >= 20 else 1.0


auth = lowest_pure(-p_all, y_all == 1)
auth = 0.0 if auth is None else -auth
if auth >= manip:
    auth, manip = 0.0, 1.0


def rates(p, y):
    p, y = np.asarray(p), np.asarray(y)
    ai, real = p > manip if manip < 1 else np.zeros(len(p), bool), p <= auth
    decided = ai | real
    wrong = (ai & (y == 0)) | (real & (y == 1))
    out = {'n': int(len(y)), 'nAi': int((y == 1).sum()), 'nReal': int((y == 0).sum()),
           'auc': round(float(roc_auc_score(y, p)), 4) if len(set(y)) == 2 else None,
           'realCalledAi': round(float(ai[y == 0].mean()), 4) if (y == 0).any() else None,
           'aiCalledReal': round(float(real[y == 1].mean()), 4) if (y == 1).any() else None,
           'aiCalledAi': round(float(ai[y == 1].mean()), 4) if (y == 1).any() else None,
           'realCalledReal': round(float(real[y == 0].mean()), 4) if (y == 0).any() else None,
           'decided': round(float(decided.mean()), 4),
           'wrongAmongDecided': round(float(wrong.sum() / max(1, decided.sum())), 4)}
    return out


fig = {'checkpoint': {'step': ck.get('step'), 'monitoringVal': ck.get('val')},
       'grid': {'tile': P, 'max': args.grid},
       'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6), 'fittedOn': 'validation, three conditions pooled'},
       'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4),
                      'rule': 'manipulated: just above the highest validation real image (any condition); authentic: <= 1 % of the images below it are AI'},
       'validation': {'pooled': rates(p_all, y_all)}}
for c in CONDITIONS:
    m = conds == c
    fig['validation'][c] = rates(p_all[m], y_all[m])
# held-out generators, each against the held-out cameras
gens = sorted(set(groups[y_all == 1]))
fig['heldOutGenerators'] = {}
for g in gens:
    fig['heldOutGenerators'][g] = {}
    for c in CONDITIONS:
        m = (conds == c) & ((groups == g) | (y_all == 0))
        fig['heldOutGenerators'][g][c] = rates(p_all[m], y_all[m])['auc']
fig['heldOutGeneratorMeanAuc'] = {c: round(float(np.mean([fig['heldOutGenerators'][g][c] for g in gens])), 4) for c in CONDITIONS}
print(json.dumps(fig, indent=1), flush=True)

if args.final:
    def score_set(pairs):
        s, y, names = [], [], []
        for path, lab in pairs:
            v = score_file(path)
            if v is not None:
                s.append(v); y.append(lab); names.append(os.path.basename(path))
        p = cal(s)
        r = rates(p, y)
        r['scores'] = {n: round(float(q), 4) for n, q in zip(names, p)}
        return r
    base = ROOT + '/src/ML72+AI-Image-Classifier-Playground/public/images'
    pairs = [(os.path.join(base, sub, f), lab) for lab, sub in ((1, 'ai'), (0, 'real')) for f in sorted(os.listdir(os.path.join(base, sub)))]
    fig['ml72'] = score_set(pairs)
    print('ML72', {k: v for k, v in fig['ml72'].items() if k != 'scores'}, flush=True)
    sh = os.path.join(HERE, '../../../shared/data/ai-image/photos')
    pairs = [(os.path.join(sh, r[0]), int(r[1])) for r in csv.reader(open(os.path.join(sh, 'labels.csv'))) if r and r[0] != 'file']
    fig['sharedPhotos'] = score_set(pairs)
    print('shared photos', {k: v for k, v in fig['sharedPhotos'].items() if k != 'scores'}, flush=True)
out = os.path.join(HERE, 'figures.json' if args.final else 'figures-validation.json') if not args.limit else '/tmp/figures-smoke.json'
json.dump(fig, open(out, 'w'), indent=1)
print('wrote', out)
