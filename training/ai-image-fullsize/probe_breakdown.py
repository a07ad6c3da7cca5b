"""Which trivial feature carries the label in probe.py's 'processed' shortcut probe: image-level
leave-one-generator-out AUC of (a) processing parameters only (resample scale, JPEG q: not visible
to the model as such), (b) patch mean + std only, (c) blockiness only. Appends to probe.json."""
import json, os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
from probe import blockiness, per_image, logo, ROOT
items = json.load(open(ROOT + '/index.json'))
d = np.load(ROOT + '/aug.npz')
x, img, info = d['x'], d['img'], d['info']
feats = []
for i in range(0, len(x), 2048):
    xb = x[i:i + 2048].astype(np.float32)
    feats.append(np.stack([xb.mean((1, 2, 3)), xb.std((1, 2, 3)), blockiness(xb.mean(1))], 1))
f = np.concatenate(feats)
keep = f[:, 1] >= 2.0
f, img, info = f[keep], img[keep], info[keep]
n = len(items)
valid = np.array(['skip' not in it for it in items])
out = json.load(open(ROOT + '/probe.json')) if os.path.exists(ROOT + '/probe.json') else {}
for name, cols in (('params_scale_q', info), ('mean_std', f[:, :2]), ('blockiness', f[:, 2:3]), ('std_only', f[:, 1:2])):
    Xi, cnt = per_image(cols, img, n)
    r = logo(Xi, items, valid & (cnt > 0))
    out['trivial_breakdown_logo_' + name] = r
    print(name, r['mean'], {k: v['auc'] for k, v in r.items() if k != 'mean'}, flush=True)
json.dump(out, open(ROOT + '/probe.json', 'w'), indent=1)
