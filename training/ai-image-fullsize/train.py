"""Trains PatchNet on native-resolution 96x96 patches (prepare.py's aug.npz), one thread.

/usr/bin/python3 train.py --minutes 50 [--resume]
Checkpoints every --eval-minutes to /work/data/ai-fullsize/run/{last,best}.pt; best = highest mean
validation AUC over two validation conditions (held-out generators sd3, dall-e-2, glid-3,
dit-other; held-out cameras), image logit = mean of grid-patch logits (at most 8 per image and two
conditions while training, for time; evaluate.py uses the full grid and all conditions).
Patches are 96x96 in aug.npz; training reads a random 64x64 crop of each batch (one offset per
batch), the network is fully convolutional and is applied to 96x96 tiles.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score

sys.path.insert(0, os.path.dirname(__file__))
from common import CONDITIONS, PatchNet  # noqa: E402

ROOT = '/work/data/ai-fullsize'
RUN = ROOT + '/run'


def load_train():
    items = json.load(open(ROOT + '/index.json'))
    d = np.load(ROOT + '/aug.npz')
    x, img = d['x'], d['img']
    std = x.reshape(len(x), -1).astype(np.float32).std(1)
    split = np.array([it['split'] for it in items])
    y_img = np.array([it['label'] for it in items])
    keep = (std >= 2.0) & (split[img] == 'train')
    x, img = x[keep], img[keep]
    y = y_img[img]
    # sampling weights: classes balanced; inside AI, families weighted by 1/sqrt(count);
    # inside real, camera groups by 1/sqrt(count)
    grp = np.array([it['group'] for it in items])[img]
    w = np.zeros(len(x))
    for lab in (0, 1):
        m = y == lab
        gs, cnt = np.unique(grp[m], return_counts=True)
        c = dict(zip(gs, cnt))
        wl = np.array([1 / math.sqrt(c[g]) for g in grp[m]])
        w[m] = 0.5 * wl / wl.sum()
    return x, y, w, items


def load_val(max_per_image=8, conditions=('asis', 'down75_jpeg85')):
    items = json.load(open(ROOT + '/index.json'))
    y_img = np.array([it['label'] for it in items])
    out = {}
    for c in conditions:
        d = np.load(ROOT + f'/valgrid_{c}.npz')
        x, img = d['x'], d['img']
        sel = []
        for i in np.unique(img):
            idx = np.nonzero(img == i)[0]
            if len(idx) > max_per_image:
                idx = idx[np.linspace(0, len(idx) - 1, max_per_image).round().astype(int)]
            sel.append(idx)
        sel = np.concatenate(sel)
        out[c] = (x[sel], img[sel])
    return out, y_img


@torch.no_grad()
def score(model, x, bs=256):
    model.eval()
    out = []
    for i in range(0, len(x), bs):
        out.append(model((torch.from_numpy(x[i:i + bs]).float() / 255.0).contiguous(memory_format=torch.channels_last)))
    model.train()
    return torch.cat(out).numpy()


def image_logits(patch_logits, img):
    ids = np.unique(img)
    return ids, np.array([patch_logits[img == i].mean() for i in ids])


def validate(model, val, y_img):
    res = {}
    for c, (x, img) in val.items():
        ids, s = image_logits(score(model, x), img)
        res[c] = round(float(roc_auc_score(y_img[ids], s)), 4)
    res['mean'] = round(float(np.mean([res[c] for c in val])), 4)
    return res


def augment(xb):
    # flips and 90-degree turns (the grid of a photo can be in any orientation)
    if np.random.rand() < 0.5:
        xb = xb.flip(3)
    if np.random.rand() < 0.5:
        xb = xb.flip(2)
    if np.random.rand() < 0.5:
        xb = xb.transpose(2, 3)
    return xb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--minutes', type=float, default=50)
    ap.add_argument('--eval-minutes', type=float, default=7)
    ap.add_argument('--crop', type=int, default=64)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--resume', action='store_true')
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    np.random.seed(0)
    os.makedirs(RUN, exist_ok=True)
    x, y, w, items = load_train()
    val, y_img = load_val()
    print('train patches', len(x), 'AI share', y.mean().round(3), 'val images', {c: len(np.unique(v[1])) for c, v in val.items()}, flush=True)
    model = PatchNet().to(memory_format=torch.channels_last)
    print('params', sum(p.numel() for p in model.parameters()), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
    step, spent, best, history = 0, 0.0, -1.0, []
    if args.resume and os.path.exists(RUN + '/last.pt'):
        ck = torch.load(RUN + '/last.pt')
        model.load_state_dict(ck['model']); opt.load_state_dict(ck['opt'])
        step, spent, best, history = ck['step'], ck['spent'], ck['best'], ck['history']
        print('resumed at step', step, 'spent', round(spent / 60, 1), 'min', flush=True)
    budget = args.minutes * 60
    t_last = time.time()
    t_eval = spent
    losses = []
    rng = np.random.default_rng(step)
    while spent < budget:
        frac = spent / budget
        lr = args.lr * min(1.0, frac / 0.05 + 0.02) * (0.5 * (1 + math.cos(math.pi * frac)) if frac > 0.05 else 1.0)
        for g in opt.param_groups:
            g['lr'] = lr
        idx = rng.choice(len(x), args.batch, p=w)
        ox, oy = rng.integers(0, x.shape[-1] - args.crop + 1, 2)
        xb = torch.from_numpy(x[idx, :, oy:oy + args.crop, ox:ox + args.crop]).float() / 255.0
        xb = augment(xb).contiguous(memory_format=torch.channels_last)
        yb = torch.from_numpy(y[idx]).float()
        loss = F.binary_cross_entropy_with_logits(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
        losses.append(loss.item()); step += 1
        now = time.time(); spent += now - t_last; t_last = now
        if step % 100 == 0:
            print(f'step {step} loss {np.mean(losses[-100:]):.4f} lr {lr:.5f} {spent / 60:.1f} min {step * args.batch / spent:.0f} patch/s', flush=True)
        if spent - t_eval >= args.eval_minutes * 60 or spent >= budget:
            t_eval = spent
            v = validate(model, val, y_img)
            history.append(dict(step=step, minutes=round(spent / 60, 1), loss=round(float(np.mean(losses[-200:])), 4), val=v))
            print('VAL', history[-1], flush=True)
            if v['mean'] > best:
                best = v['mean']
                torch.save(dict(model=model.state_dict(), step=step, val=v), RUN + '/best.pt')
            torch.save(dict(model=model.state_dict(), opt=opt.state_dict(), step=step, spent=spent, best=best, history=history), RUN + '/last.pt')
            json.dump(history, open(RUN + '/history.json', 'w'), indent=1)
            t_last = time.time()  # validation time is not training time
    print('done', step, 'best', best, flush=True)


if __name__ == '__main__':
    main()
