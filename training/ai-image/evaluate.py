"""Scores images the way the server does (texture-chosen 64x64 patches at native resolution,
trimmed mean of patch logits), fits Platt calibration and thresholds on the validation split,
and reports AUCs: test split, and each dcsan/imagen generator (none of them trained on) against
the test split's real images. Writes figures.json beside this file.
Usage: python3 evaluate.py [--ckpt /work/data/ai-image/ckpt.pt]"""
import argparse, glob, json, os, re
from collections import defaultdict
import cv2
import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from common import PatchNet, select_patches, trimmed_mean

ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default='/work/data/ai-image/ckpt.pt')
ap.add_argument('--data', default='/work/data/ai-image')
ap.add_argument('--max-per-generator', type=int, default=60)
ap.add_argument('--max-validation', type=int, default=500, help='per class')
args = ap.parse_args()
torch.set_num_threads(1); cv2.setNumThreads(1)
model = PatchNet(); model.load_state_dict(torch.load(args.ckpt)['model']); model.eval()

def read_rgb(path):
    im = cv2.imread(path, cv2.IMREAD_COLOR)  # 8-bit, 3 channels, like the server's decoder
    return None if im is None else cv2.cvtColor(im, cv2.COLOR_BGR2RGB)

@torch.no_grad()
def score(path):
    img = read_rgb(path)
    if img is None: return None
    p = select_patches(img)
    if len(p) == 0: return None
    return trimmed_mean(model(torch.from_numpy(p)).numpy())

def split(name, limit=None):
    out = []
    for label, cls in ((0, 'real'), (1, 'fake')):
        for f in sorted(glob.glob(f'{args.data}/dataset10000/{name}/{cls}/*.jpg'))[:limit]:
            s = score(f)
            if s is not None: out.append((s, label))
    return np.array(out)

val = split('validation', args.max_validation); print('validation', len(val), flush=True)
test = split('test'); print('test', len(test), flush=True)
lr = LogisticRegression(C=1e4).fit(val[:, :1], val[:, 1])
a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
cal = lambda s: 1 / (1 + np.exp(-(a * s + b)))
pv = cal(val[:, 0]); yv = val[:, 1]
# Thresholds on validation: decide only where validation supports it. 'manipulated' is the
# lowest score above which at most 1% of the validation images are real (and at least 20
# images fall); 'authentic' likewise for generated images below it. Where no such score
# exists the model never decides that way (1 and 0): it stays a reported signal.
def lowest_pure(p, wrong, max_wrong=0.01, min_count=20):
    order = np.argsort(-p); best = None; bad = 0
    for i, j in enumerate(order, 1):
        bad += wrong[j]
        if i >= min_count and bad / i <= max_wrong: best = float(p[j])
    return best
manip = lowest_pure(pv, yv == 0)
auth = lowest_pure(-pv, yv == 1)
manip = 1.0 if manip is None else manip
auth = 0.0 if auth is None else -auth
if auth > manip: auth, manip = 0.0, 1.0
def rates(p, y):
    return {'auc': round(float(roc_auc_score(y, p)), 4),
            'accuracyAt0.5': round(float(((p > 0.5) == y).mean()), 4),
            'realCalledAi': round(float((p[y == 0] >= manip).mean()), 4),
            'aiCalledReal': round(float((p[y == 1] <= auth).mean()), 4),
            'decided': round(float(((p >= manip) | (p <= auth)).mean()), 4), 'n': int(len(y))}
figures = {'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6)},
           'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
           'validation': rates(pv, yv), 'test': rates(cal(test[:, 0]), test[:, 1])}
print(json.dumps(figures, indent=1), flush=True)

# Unseen generators: dcsan/imagen renders, generator from the file prefix.
PREFIX = {'ldif': 'latent-diffusion', 'dmin': 'dalle-mini', 'glid': 'glid-3', 'midj': 'midjourney',
          'disco': 'disco-diffusion', 'simu': 'simulacra', 'stab': 'stable-diffusion', 'dal2': 'dall-e-2',
          'mdif': 'majesty-diffusion'}
by_gen = defaultdict(list)
for f in sorted(glob.glob(f'{args.data}/output/renders/*/*')):
    m = re.match(r'([a-z]+\d?)', os.path.basename(f))
    key = m.group(1) if m else ''
    key = key if key in PREFIX else re.sub(r'\d$', '', key)
    if key in PREFIX: by_gen[PREFIX[key]].append(f)
reals = test[test[:, 1] == 0, 0]
gens = {}
rng = np.random.default_rng(0)
for gen, files in sorted(by_gen.items()):
    files = [files[i] for i in sorted(rng.choice(len(files), min(len(files), args.max_per_generator), replace=False))]
    s = [x for x in (score(f) for f in files) if x is not None]
    y = np.r_[np.zeros(len(reals)), np.ones(len(s))]
    p = cal(np.r_[reals, s])
    gens[gen] = {'auc': round(float(roc_auc_score(y, p)), 4), 'n': len(s), 'calledAi': round(float((cal(np.array(s)) >= manip).mean()), 4)}
    print(gen, gens[gen], flush=True)
figures['unseenGenerators'] = gens
figures['unseenGeneratorMeanAuc'] = round(float(np.mean([g['auc'] for g in gens.values()])), 4)
json.dump(figures, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'figures.json'), 'w'), indent=1)
print('mean unseen-generator AUC', figures['unseenGeneratorMeanAuc'])
