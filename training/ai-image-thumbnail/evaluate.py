"""Out-of-fold figures of train.py's five folds: the CNN alone, the statistics' logistic refitted
on the training folds, and the two fused; Platt calibration of the CNN on its out-of-fold logits;
the fusion the server ships (fused log-odds = weight * Platt log-odds of the CNN + the statistics'
log-odds, weight = median of the per-fold weights chosen on inner validation); thresholds chosen
on the out-of-fold fused scores as training/ai-image/evaluate.py does. Writes figures.json.
Usage: /usr/bin/python3 evaluate.py [--work /work/data/ai-image-thumbnail]"""
import argparse, json, os, sys
import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ai_image_shared import validation_thresholds  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument('--work', default='/work/data/ai-image-thumbnail')
ap.add_argument('--tag', default='')
args = ap.parse_args()

rows = json.load(open(os.path.join(args.work, 'features.json')))
y = np.array([r['label'] for r in rows], np.int64)
n = len(y)
cnn, stats, fused_fold, fused_lr2 = (np.full(n, np.nan) for _ in range(4))
folds = []
for k in range(5):
    ck = torch.load(os.path.join(args.work, f'fold{k}{args.tag}.pt'))
    idx = np.array(ck['test_idx']); c = np.array(ck['cnn_test']); s = np.array(ck['stats_test'])
    a, b = ck['platt']; w = ck['weight']; w1, w2, c0 = ck['lr2']
    cnn[idx], stats[idx] = c, s
    fused_fold[idx] = w * (a * c + b) + s
    fused_lr2[idx] = w1 * c + w2 * s + c0
    folds.append({'fold': k, 'heldOut': len(idx), 'epoch': ck['epoch'], 'innerValidationAuc': round(float(ck['inner_val_auc']), 4),
                  'cnnAuc': round(float(roc_auc_score(y[idx], c)), 4), 'statisticsAuc': round(float(roc_auc_score(y[idx], s)), 4),
                  'fusedAuc': round(float(roc_auc_score(y[idx], fused_fold[idx])), 4), 'weight': w,
                  'platt': [round(a, 4), round(b, 4)], 'minutes': round(ck['minutes'], 1)})
assert not np.isnan(cnn).any()

lr = LogisticRegression(C=1e4).fit(cnn[:, None], y)
a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
weight = float(np.median([f['weight'] for f in folds]))
sig = lambda z: 1 / (1 + np.exp(-z))
p_fused = sig(fused_fold)  # the honest out-of-fold fused score (per-fold Platt and weight)


def thresholds(p):
    return validation_thresholds(p, y)


def rates(p, auth, manip):
    called_ai, called_real = p >= manip, p <= auth
    decided = called_ai | called_real
    wrong = (called_ai & (y == 0)) | (called_real & (y == 1))
    return {'auc': round(float(roc_auc_score(y, p)), 4), 'accuracyAt0.5': round(float(((p > 0.5) == y).mean()), 4),
            'realCalledAi': round(float(called_ai[y == 0].mean()), 4), 'aiCalledReal': round(float(called_real[y == 1].mean()), 4),
            'decided': round(float(decided.mean()), 4), 'calledAi': round(float(called_ai.mean()), 4),
            'calledReal': round(float(called_real.mean()), 4), 'wrongAmongDecided': round(float(wrong.sum() / max(1, decided.sum())), 4),
            'n': int(n)}


auth, manip = thresholds(p_fused)
ca, cm = thresholds(sig(a * cnn + b))
sa, sm = thresholds(sig(stats))
figures = {
    'protocol': '5-fold stratified by file (seed 18), every figure out-of-fold: each file scored by the fold model that never saw it; '
                'epoch, Platt and fusion weight chosen on an inner 20 % split of the training folds',
    'folds': folds,
    'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6), 'fittedOn': 'out-of-fold CNN logits (2000)'},
    'fusionWeight': weight,
    'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4), 'chosenOn': 'out-of-fold fused scores'},
    'outOfFold': {
        'cnn': rates(sig(a * cnn + b), ca, cm) | {'ownThresholds': [round(ca, 4), round(cm, 4)]},
        'statistics': rates(sig(stats), sa, sm) | {'ownThresholds': [round(sa, 4), round(sm, 4)]},
        'fused': rates(p_fused, auth, manip),
        'fusedTwoInputLogistic': {'auc': round(float(roc_auc_score(y, fused_lr2)), 4)},
    },
}
# The shipped form: one Platt (a, b) and the median weight for every file, thresholds on it.
p_ship = sig(weight * (a * cnn + b) + stats)
auth, manip = thresholds(p_ship)
figures['thresholds'] = {'authentic': round(auth, 4), 'manipulated': round(manip, 4),
                         'chosenOn': 'out-of-fold scores in the shipped form (global Platt, median fold weight)'}
figures['shippedFormOutOfFold'] = rates(p_ship, auth, manip) | {
    'note': 'out-of-fold CNN logits and statistics, combined with the Platt and weight fitted on all out-of-fold scores (3 parameters)'}
figures['outOfFold']['fusedAtShippedThresholds'] = rates(p_fused, auth, manip)

# Thumbnails of other sizes (measured only: the server does not let them decide): each held-out
# image up-sampled (bicubic) to s x s and resized back to 32 with Lanczos, as the server does.
from PIL import Image
from common import FlipAverage, ThumbNet
pixels = np.fromfile(os.path.join(args.work, 'pixels.u8'), np.uint8).reshape(-1, 32, 32, 3)
resized = {}
for side in (40, 48):
    logits = np.zeros(n)
    for k in range(5):
        ck = torch.load(os.path.join(args.work, f'fold{k}{args.tag}.pt'))
        net = ThumbNet(tuple(int(w) for w in ck['widths'].split(',')), ck['blocks']); net.load_state_dict(ck['model']); net.eval()
        idx = np.array(ck['test_idx'])
        imgs = np.stack([np.asarray(Image.fromarray(pixels[i]).resize((side, side), Image.BICUBIC).resize((32, 32), Image.LANCZOS)) for i in idx])
        with torch.no_grad():
            logits[idx] = FlipAverage(net)(torch.from_numpy(imgs.astype(np.float32).transpose(0, 3, 1, 2) / 255)).numpy()
    resized[f'{side}px'] = {'cnnAuc': round(float(roc_auc_score(y, logits)), 4)}
figures['resizedInputs'] = resized | {'note': 'CIFAKE images up-sampled to the size and resized back to 32x32: '
                                              'a round trip, not real thumbnails of that size; the server reports these with weight 0'}
print(json.dumps(figures, indent=1))
np.save(os.path.join(args.work, f'oof{args.tag}.npy'), np.c_[cnn, stats, fused_fold])
if not args.tag:
    json.dump(figures, open(os.path.join(HERE, 'figures.json'), 'w'), indent=1)
