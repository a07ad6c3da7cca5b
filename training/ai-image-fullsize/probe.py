"""Cheap probes on the prepared data (no CNN):
 1. shortcut probe on the RAW files: format (PNG), width, height, bytes per pixel, EXIF present ->
    logistic regression, 5-fold CV AUC (shows what the processing must remove);
 2. shortcut probe on the PROCESSED training patches: patch mean, std, JPEG blockiness at the
    strongest 8x8 phase, and the processing parameters (scale, JPEG q) -> image-level LR AUC,
    leave-one-generator-out;
 3. hand-made forensic features (NPR and high-pass residual energy, radial spectrum of the
    residual, spectral peaks at N/2, N/4) -> LR, leave-one-generator-out AUC per generator
    (each generator's images against the real images of one camera fold, trained on the rest);
 4. (--ml72) the same feature model fitted on everything, scored on the ML72 set as-is
    (transfer check only; nothing is chosen from it).
Writes /work/data/ai-fullsize/probe.json.
"""
import json
import os
import sys
from collections import defaultdict

import numpy as np
from PIL import Image
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, os.path.dirname(__file__))
from common import grid_patches, to_rgb  # noqa: E402

ROOT = '/work/data/ai-fullsize'


def blockiness(g):
    # g: N x H x W float gray. Ratio of mean |column diff| at the strongest phase mod 8 to the mean.
    dc = np.abs(np.diff(g, axis=2)).mean(axis=1)  # N x (W-1)
    dr = np.abs(np.diff(g, axis=1)).mean(axis=2)
    def ph(d):
        m = np.stack([d[:, k::8].mean(1) for k in range(8)], 1)
        return m.max(1) / (m.mean(1) + 1e-6)
    return (ph(dc) + ph(dr)) / 2


def forensic_features(x):
    """x: N x 3 x P x P uint8 -> N x F features."""
    x = x.astype(np.float32) / 255.0
    g = x.mean(1)
    up = x[:, :, 0::2, 0::2].repeat(2, 2).repeat(2, 3)
    npr = np.abs(x - up).mean((2, 3))  # N x 3
    pad = np.pad(g, ((0, 0), (1, 1), (1, 1)), mode='edge')
    mean3 = sum(pad[:, i:i + g.shape[1], j:j + g.shape[2]] for i in range(3) for j in range(3)) / 9
    hp = g - mean3
    hpe = np.abs(hp).mean((1, 2))[:, None]
    F = np.abs(np.fft.fftshift(np.fft.fft2(hp), axes=(1, 2))) ** 2
    n = g.shape[1]
    yy, xx = np.mgrid[:n, :n] - n // 2
    r = np.sqrt(yy ** 2 + xx ** 2) / (n // 2)
    bands = [np.log(F[:, (r >= a) & (r < b)].mean(1) + 1e-12) for a, b in zip(np.linspace(0, 1.0, 9)[:-1], np.linspace(0, 1.0, 9)[1:])]
    med = np.median(F.reshape(len(F), -1), 1) + 1e-12
    c = n // 2
    peaks = [np.log(F[:, c, 0] / med + 1e-9), np.log(F[:, 0, c] / med + 1e-9), np.log(F[:, 0, 0] / med + 1e-9),
             np.log(F[:, c, c // 2] / med + 1e-9), np.log(F[:, c // 2, c] / med + 1e-9)]
    return np.concatenate([np.log(npr + 1e-6), np.log(hpe + 1e-6), np.stack(bands, 1), np.stack(peaks, 1),
                           np.log((npr.mean(1, keepdims=True) + 1e-6) / (hpe + 1e-6))], 1)


def trivial_features(x, info):
    x = x.astype(np.float32)
    g = x.mean(1)
    return np.stack([x.mean((1, 2, 3)), x.std((1, 2, 3)), blockiness(g), info[:, 0], info[:, 1]], 1)


def per_image(feat, img, n):
    out = np.zeros((n, feat.shape[1]), np.float32)
    cnt = np.zeros(n)
    np.add.at(out, img, feat)
    np.add.at(cnt, img, 1)
    return out / np.maximum(cnt, 1)[:, None], cnt


def lr():
    return make_pipeline(StandardScaler(), LogisticRegression(C=0.3, max_iter=2000))


def logo(Xi, items, valid):
    """Leave-one-generator-out: for each generator family, train on the other families and the
    real images of the other camera folds; test the family against the held-out camera fold."""
    y = np.array([it['label'] for it in items])
    fam = np.array([it['group'] if it['label'] == 1 else '' for it in items])
    fold = np.array([it['fold'] for it in items])
    gens = sorted(set(fam[y == 1]))
    res = {}
    for k, gname in enumerate(gens):
        f = k % 5
        test = valid & (((y == 1) & (fam == gname)) | ((y == 0) & (fold == f)))
        train = valid & (((y == 1) & (fam != gname)) | ((y == 0) & (fold != f)))
        m = lr().fit(Xi[train], y[train])
        s = m.predict_proba(Xi[test])[:, 1]
        res[gname] = dict(auc=round(float(roc_auc_score(y[test], s)), 4), n_ai=int(((y == 1) & test).sum()), n_real=int(((y == 0) & test).sum()))
    res['mean'] = round(float(np.mean([v['auc'] for v in res.values()])), 4)
    return res


def main():
    items = json.load(open(ROOT + '/index.json'))
    d = np.load(ROOT + '/aug.npz')
    x, img, info = d['x'], d['img'], d['info']
    flat = x.reshape(len(x), -1).astype(np.float32).std(1) < 2.0  # as train.py: flat patches left out
    x, img, info = x[~flat], img[~flat], info[~flat]
    n = len(items)
    y = np.array([it['label'] for it in items])
    out = {}
    # 1. raw files
    survey = {l.split('\t')[0]: l.rstrip('\n').split('\t') for l in open(ROOT + '/survey.tsv')}
    raw = []
    for it in items:
        r = survey[it['path']]
        w, h, b = int(r[3]), int(r[4]), int(r[5])
        raw.append([r[1] == 'PNG', np.log(w), np.log(h), np.log(b / (w * h)), bool(r[6] or r[7])])
    raw = np.array(raw, np.float32)
    valid = np.array(['skip' not in it for it in items])
    skf = StratifiedKFold(5, shuffle=True, random_state=0)
    s = np.zeros(n)
    for tr, te in skf.split(raw, y):
        s[te] = lr().fit(raw[tr], y[tr]).predict_proba(raw[te])[:, 1]
    out['shortcut_raw_files_cv_auc'] = round(float(roc_auc_score(y, s)), 4)
    print('raw-file shortcut probe (format, size, bytes/px, EXIF) CV AUC', out['shortcut_raw_files_cv_auc'], flush=True)
    # 2. processed patches, trivial features
    tf = trivial_features(x, info)
    Ti, cnt = per_image(tf, img, n)
    valid &= cnt > 0
    s = np.zeros(n)
    for tr, te in skf.split(Ti, y):
        s[te] = lr().fit(Ti[tr], y[tr]).predict_proba(Ti[te])[:, 1]
    out['shortcut_processed_cv_auc'] = round(float(roc_auc_score(y[valid], s[valid])), 4)
    # patch level, without the processing params
    idx = np.random.RandomState(0).choice(len(x), min(20000, len(x)), replace=False)
    yp = y[img[idx]]
    sp = np.zeros(len(idx))
    for tr, te in skf.split(tf[idx], yp):
        sp[te] = lr().fit(tf[idx][tr][:, :3], yp[tr]).predict_proba(tf[idx][te][:, :3])[:, 1]
    out['shortcut_processed_patch_auc_mean_std_blockiness'] = round(float(roc_auc_score(yp, sp)), 4)
    sp = np.zeros(len(idx))
    for tr, te in skf.split(tf[idx], yp):
        sp[te] = lr().fit(tf[idx][tr][:, 2:3], yp[tr]).predict_proba(tf[idx][te][:, 2:3])[:, 1]
    out['shortcut_processed_patch_auc_blockiness_only'] = round(float(roc_auc_score(yp, sp)), 4)
    print('processed shortcut probe', {k: v for k, v in out.items() if 'processed' in k}, flush=True)
    # 3. forensic features
    ff = np.concatenate([forensic_features(x[i:i + 4096]) for i in range(0, len(x), 4096)])
    Fi, _ = per_image(ff, img, n)
    out['forensic_logo'] = logo(Fi, items, valid)
    out['trivial_logo'] = logo(Ti, items, valid)
    print('forensic LOGO', out['forensic_logo'], flush=True)
    print('trivial LOGO', out['trivial_logo']['mean'], flush=True)
    if '--ml72' in sys.argv:
        m = lr().fit(Fi[valid], y[valid])
        base = ROOT + '/src/ML72+AI-Image-Classifier-Playground/public/images'
        ys, ss = [], []
        for lab, sub in ((1, 'ai'), (0, 'real')):
            for f in sorted(os.listdir(os.path.join(base, sub))):
                g = grid_patches(np.asarray(to_rgb(Image.open(os.path.join(base, sub, f)))))
                ss.append(m.predict_proba(forensic_features(g).mean(0, keepdims=True))[0, 1]); ys.append(lab)
        out['ml72_feature_probe_auc'] = round(float(roc_auc_score(ys, ss)), 4)
        print('ML72 (feature probe, transfer check)', out['ml72_feature_probe_auc'])
    json.dump(out, open(ROOT + '/probe.json', 'w'), indent=1)


if __name__ == '__main__':
    main()
