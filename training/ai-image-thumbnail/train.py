"""Thumbnail AI-image CNN for CIFAKE-like 32x32 images, trained and measured by 5-fold
cross-validation on the shared CIFAKE development folder (the only CIFAKE-domain data reachable).

CIFAKE: J. J. Bird and A. Lotfi, "CIFAKE: Image Classification and Explainable Identification of
AI-Generated Synthetic Images", IEEE Access 12, 2024 (real = CIFAR-10, fake = Stable Diffusion
1.4 at 32x32; §III the data, §IV a small CNN at native resolution). Network: common.py (He et al.
2016, CIFAR ResNet, §4.2).

Protocol (fixed seed): 5 folds stratified by file. For fold k, the other four folds are split
again (stratified 80/20) into inner-train and inner-validation. The CNN trains on inner-train
with augmentation; the epoch whose inner-validation AUC is highest is kept (so the held-out fold
never chooses anything); the held-out fold is predicted with it (flip-averaged logit). The
statistics' logistic (the six features of ai-image-statistics.ts, standardised, sklearn
LogisticRegression) is refitted on the same training folds; the fusion weight of the CNN's
log-odds (Platt on inner-validation) added to the statistics' log-odds is chosen on
inner-validation too. Every figure in figures.json is out-of-fold.

Inputs: features.ts output (pixels decoded by the server's own decoder, features computed by
the server's own code).
Usage: /usr/bin/python3 train.py [--work /work/data/ai-image-thumbnail] [--epochs 40]
Writes <work>/fold{k}.pt (weights, chosen epoch, held-out scores, fusion; resumable per fold);
evaluate.py turns them into figures.json, export.py into the shipped graph."""
import argparse, io, json, os, time
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler
from common import ThumbNet, FlipAverage

FEATURES = ['spectralTail', 'spectralPeak', 'residualKurtosis', 'residualCorrelation', 'residualLevel', 'saturation']
SEED = 18

ap = argparse.ArgumentParser()
ap.add_argument('--work', default='/work/data/ai-image-thumbnail')
ap.add_argument('--epochs', type=int, default=40)
ap.add_argument('--folds', default='0,1,2,3,4')
ap.add_argument('--widths', default='32,64,128')
ap.add_argument('--blocks', type=int, default=1)
ap.add_argument('--lr', type=float, default=0.05)
ap.add_argument('--tag', default='')
args = ap.parse_args()
torch.set_num_threads(1)

rows = json.load(open(os.path.join(args.work, 'features.json')))
pixels = np.fromfile(os.path.join(args.work, 'pixels.u8'), np.uint8).reshape(-1, 32, 32, 3)
y = np.array([r['label'] for r in rows], np.int64)
X = np.array([[r['features'][f] for f in FEATURES] for r in rows])
folds = list(StratifiedKFold(5, shuffle=True, random_state=SEED).split(X, y))


def augment(batch, rng):
    """Flip, reflect-pad 4 and random 32x32 crop, JPEG re-compression q 70-100 (p 0.5, Pillow),
    Gaussian noise sigma 0-2 grey levels (p 0.3). uint8 NHWC in, float NCHW 0..1 out."""
    out = np.empty((len(batch), 3, 32, 32), np.float32)
    for i, img in enumerate(batch):
        if rng.random() < 0.5: img = img[:, ::-1]
        p = np.pad(img, ((4, 4), (4, 4), (0, 0)), mode='reflect')
        ox, oy = rng.integers(0, 9, 2)
        img = np.ascontiguousarray(p[oy:oy + 32, ox:ox + 32])
        if rng.random() < 0.5:
            buf = io.BytesIO(); Image.fromarray(img).save(buf, 'JPEG', quality=int(rng.integers(70, 101))); buf.seek(0)
            img = np.asarray(Image.open(buf).convert('RGB'))
        x = img.astype(np.float32) / 255
        if rng.random() < 0.3: x = np.clip(x + rng.normal(0, rng.uniform(0, 2 / 255), x.shape).astype(np.float32), 0, 1)
        out[i] = x.transpose(2, 0, 1)
    return torch.from_numpy(out)


def tensor(idx):
    return torch.from_numpy(pixels[idx].astype(np.float32).transpose(0, 3, 1, 2) / 255)


@torch.no_grad()
def predict(net, idx):
    net.eval(); tta = FlipAverage(net)
    return np.concatenate([tta(tensor(idx[i:i + 256])).numpy() for i in range(0, len(idx), 256)])


def train_fold(k, train_idx):
    rng = np.random.default_rng(SEED + k); torch.manual_seed(SEED + k)
    inner_tr, inner_va = train_test_split(train_idx, test_size=0.2, stratify=y[train_idx], random_state=SEED + k)
    net = ThumbNet(tuple(int(w) for w in args.widths.split(',')), args.blocks)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    bs = 64; steps = args.epochs * (len(inner_tr) // bs)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=steps, pct_start=0.15)
    best = (-1, None, None); history = []
    for epoch in range(args.epochs):
        net.train(); perm = rng.permutation(inner_tr); t0 = time.time(); losses = []
        for s in range(len(inner_tr) // bs):
            b = perm[s * bs:(s + 1) * bs]
            loss = F.binary_cross_entropy_with_logits(net(augment(pixels[b], rng)), torch.from_numpy(y[b]).float())
            opt.zero_grad(); loss.backward(); opt.step(); sched.step(); losses.append(loss.item())
        auc = roc_auc_score(y[inner_va], predict(net, inner_va))
        history.append(round(float(auc), 4))
        if auc > best[0]: best = (auc, epoch + 1, {k2: v.clone() for k2, v in net.state_dict().items()})
        print(f'fold {k} epoch {epoch + 1} loss {np.mean(losses):.4f} inner-val AUC {auc:.4f} ({time.time() - t0:.1f}s)', flush=True)
    net.load_state_dict(best[2])
    return net, inner_tr, inner_va, best[0], best[1], history


def stats_logit(fit_idx, apply_idx):
    sc = StandardScaler().fit(X[fit_idx])
    lr = LogisticRegression(C=10.0, max_iter=1000).fit(sc.transform(X[fit_idx]), y[fit_idx])
    return lr.decision_function(sc.transform(X[apply_idx]))


def platt(logit, label):
    lr = LogisticRegression(C=1e4).fit(logit[:, None], label)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def loglik(z, label):
    return float(np.mean(label * -np.logaddexp(0, -z) + (1 - label) * -np.logaddexp(0, z)))


tag = args.tag
for k in [int(f) for f in args.folds.split(',')]:
    path = os.path.join(args.work, f'fold{k}{tag}.pt')
    if os.path.exists(path):
        print('fold', k, 'done:', path); continue
    train_idx, test_idx = folds[k]
    t0 = time.time()
    net, inner_tr, inner_va, va_auc, epoch, history = train_fold(k, train_idx)
    cnn_va, cnn_te = predict(net, inner_va), predict(net, test_idx)
    # Statistics refitted on the training folds only: on inner-train to fit the fusion on
    # inner-validation, on all four training folds for the held-out fold (as the server's
    # logistic is fitted on every file it has).
    st_va, st_te = stats_logit(inner_tr, inner_va), stats_logit(train_idx, test_idx)
    a, b = platt(cnn_va, y[inner_va])
    weights = np.round(np.arange(0, 3.01, 0.05), 2)
    w = float(weights[np.argmax([loglik(wt * (a * cnn_va + b) + st_va, y[inner_va]) for wt in weights])])
    lr2 = LogisticRegression(C=1e4).fit(np.c_[cnn_va, st_va], y[inner_va])
    torch.save({'model': net.state_dict(), 'fold': k, 'epoch': epoch, 'inner_val_auc': va_auc, 'history': history,
                'widths': args.widths, 'blocks': args.blocks, 'test_idx': test_idx.tolist(),
                'cnn_test': cnn_te.tolist(), 'stats_test': st_te.tolist(), 'platt': [a, b], 'weight': w,
                'lr2': [float(lr2.coef_[0, 0]), float(lr2.coef_[0, 1]), float(lr2.intercept_[0])],
                'minutes': (time.time() - t0) / 60}, path)
    print(f'fold {k}: epoch {epoch} inner-val {va_auc:.4f}; held-out CNN AUC {roc_auc_score(y[test_idx], cnn_te):.4f}, '
          f'statistics {roc_auc_score(y[test_idx], st_te):.4f}, fused (w={w}) {roc_auc_score(y[test_idx], w * (a * cnn_te + b) + st_te):.4f}; '
          f'{(time.time() - t0) / 60:.1f} min', flush=True)
