"""Trains face-liveness-pad: a patch-based CNN presentation-attack detector.

Method: local-patch CNN after Atoum, Liu, Jourabloo & Liu, "Face Anti-Spoofing Using Patch and
Depth-Based CNNs", IJCB 2017, §3.1 (the patch stream): random patches of the face at native
resolution, so the network sees the medium's texture (halftone, dithering, subpixel moire)
rather than the face's shape, and the face's score is the mean of its patches' scores. The
input is luma only, plus a fixed Laplacian high-pass channel computed inside the network.

Data: prepare.py's shards ($WORK, default /work/data/pad): one live and one simulated attack per
real photo, split by identity; the eval simulator's identities are excluded. Patches are placed
as inference places them for each crop's face side (`box`).

Run (2.0.0):  WORK=/work/data/pad2 MAX_SECONDS=3300 EVAL_SECONDS=300 /usr/bin/python3 training/liveness/train.py
(one thread; resumes from $WORK/ckpt.pt; checkpoints every CKPT_SECONDS; evaluates validation AUC
every EVAL_SECONDS on five patches per crop and keeps the best as best.pt).
WORK=... BASELINE=<shipped .onnx> scores a shipped version on the same validation crops and stops.

3.0.0 attempt (stop 42) fine-tunes 2.0.0 on real webcam captures beside the simulated ones, as
face-liveness-context 3.0.0 does: INIT=<exported .onnx> starts from that model (folded BatchNorms
frozen); EXTRA=<npz> (training/liveness-context/nuaa.py patch-crops: fit-patch.npz) supplies
EXTRA_SHARE of every batch; SELECT=<npz> (select-patch.npz, people never trained on) is scored at
every evaluation, and the checkpoint kept is the best mean of the validation AUC and its AUC.
"""
import glob, json, os, time
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from folded_onnx import frozen_norms, load_folded

torch.set_num_threads(1)
WORK = os.environ.get('WORK', '/work/data/pad')
P = 128                       # patch side (model input)
CROP = 256                    # stored crop side
SHIFT = 64                    # training patch centres lie within +-SHIFT of the crop centre (at most)
EVAL_UNITS = [(0, 0), (-1, -1), (1, -1), (-1, 1), (1, 1)]  # five patches, in units of the inference offset
GRID3_UNITS = [(ux, uy) for uy in (-1, 0, 1) for ux in (-1, 0, 1)]  # the 3x3 grid layout, in the same units
WEBCAM_BELOW = 280            # crops whose face is under 280 px are webcam captures (prepare.py: 170-270)
MAX_SECONDS = float(os.environ.get('MAX_SECONDS', '3900'))
CKPT_SECONDS = float(os.environ.get('CKPT_SECONDS', '180'))
EVAL_SECONDS = float(os.environ.get('EVAL_SECONDS', '360'))
BATCH = int(os.environ.get('BATCH', '64'))
LR = float(os.environ.get('LR', '2e-3'))
SPECIES = ['live', 'print-am', 'print-fm', 'screen', 'phone']
INIT = os.environ.get('INIT')
EXTRA = os.environ.get('EXTRA')
EXTRA_SHARE = float(os.environ.get('EXTRA_SHARE', '0.3'))
SELECT = os.environ.get('SELECT')


class PadNet(nn.Module):
    """Luma patch [B,1,128,128] in 0..1 -> spoof logit [B,1]."""

    def __init__(self):
        super().__init__()
        def block(i, o, s): return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        # Space-to-depth first: every pixel reaches the first convolution unresampled (halftone
        # and subpixel periods of 2-7 px survive); strided convolutions keep one thread fast.
        self.features = nn.Sequential(
            nn.PixelUnshuffle(2),
            block(8, 32, 2), block(32, 64, 2), block(64, 96, 1), block(96, 128, 2),
        )
        self.head = nn.Linear(2 * 128, 1)

    def forward(self, x):
        x = x - 0.5
        # 4-neighbour Laplacian (zero border), written with shifts: a 1-channel convolution is slow here
        p = F.pad(x, (1, 1, 1, 1))
        hp = (4 * x - p[:, :, :-2, 1:-1] - p[:, :, 2:, 1:-1] - p[:, :, 1:-1, :-2] - p[:, :, 1:-1, 2:]) * 4.0
        f = self.features(torch.cat([x, hp], 1))
        f = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
        return self.head(f)


def shard_names():
    return sorted(n for n in glob.glob(os.path.join(WORK, 'shard-*.npz')) if not n.endswith('.tmp.npz'))


def load(names):
    """-> crops, labels, species, validation flags, face sides (v1 shards have none: 480, its ±60 px patches)."""
    xs, ys, sp, val, box = [], [], [], [], []
    for name in names:
        z = np.load(name)
        xs.append(z['x']); ys.append(z['y']); sp.append(z['species']); val.append(z['val'])
        box.append(z['box'] if 'box' in z.files else np.full(len(z['y']), 480, np.uint16))
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(sp), np.concatenate(val), np.concatenate(box)


def inference_offset(box):
    """The service's patch offset for a face of this side (liveness-model.ts: min(60, 0.125 x Human's
    box), the box ~0.97 x the face image's side)."""
    return np.minimum(60, np.round(0.125 * 0.97 * box.astype(np.float64))).astype(np.int64)


def patches(x, centres):
    """x [n,CROP,CROP] uint8, centres [n,2] offsets from the crop centre -> float tensor [n,1,P,P]."""
    out = np.empty((len(x), P, P), np.uint8)
    for k, (dx, dy) in enumerate(centres):
        t = CROP // 2 + dy - P // 2; l = CROP // 2 + dx - P // 2
        out[k] = x[k, t:t + P, l:l + P]
    return torch.from_numpy(out).float().div_(255).unsqueeze(1)


def train_batch(x, y, box, idx, rng):
    # centres around the inference patches' spread for the face's size, never past +-SHIFT
    reach = np.minimum(SHIFT, inference_offset(box[idx]) + 12)[:, None]
    centres = np.round(rng.uniform(-1, 1, (len(idx), 2)) * reach).astype(np.int64)
    t = patches(x[idx], centres)
    flip = torch.from_numpy(rng.random(len(idx)) < 0.5)
    t[flip] = t[flip].flip(3)
    # exposure: the same gain/offset range for live and attack patches
    gain = torch.from_numpy(rng.uniform(0.8, 1.2, (len(idx), 1, 1, 1))).float()
    off = torch.from_numpy(rng.uniform(-0.06, 0.06, (len(idx), 1, 1, 1))).float()
    t = (t * gain + off).clamp_(0, 1)
    return t, torch.from_numpy(y[idx].astype(np.float32)).unsqueeze(1)


def auc(scores, labels):
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(labels, scores))


@torch.no_grad()
def evaluate(model, x, y, sp, box):
    """Mean logit over the EVAL_UNITS patches at each crop's inference offset -> AUC, AUC per
    species and per capture (studio / webcam), logits."""
    model.eval()
    logits = np.zeros(len(x), np.float64)
    offset = inference_offset(box)
    for s in range(0, len(x), 128):
        xb, ob = x[s:s + 128], offset[s:s + 128]
        total = 0
        for ux, uy in EVAL_UNITS:
            total = total + model(patches(xb, np.stack([ux * ob, uy * ob], 1))).squeeze(1).numpy()
        logits[s:s + 128] = total / len(EVAL_UNITS)
    model.train()
    per = {}
    for k, name in enumerate(SPECIES[1:], 1):
        m = (sp == 0) | (sp == k)
        if (sp == k).any(): per[name] = round(auc(logits[m], y[m]), 4)
    webcam = box < WEBCAM_BELOW
    for name, m in (('studio', ~webcam), ('webcam', webcam)):
        if len(set(y[m])) == 2: per[name] = round(auc(logits[m], y[m]), 4)
    return round(auc(logits, y), 4), per, logits


def load_shipped(path):
    """A PadNet carrying an exported ONNX's weights, to score a shipped version in the same run on the same crops."""
    model = PadNet()
    return load_folded(model, [m for m in model.features if isinstance(m, nn.Sequential)], path)


def main():
    # Validation = the validation identities of the shards present at the first start (a fixed
    # set, so evaluations compare); shards prepare.py writes later add training crops only.
    names = shard_names()
    fixed = os.path.join(WORK, 'val-shards.json')
    if os.path.exists(fixed): val_names = json.load(open(fixed))
    else: val_names = names; json.dump(names, open(fixed, 'w'))
    x, y, sp, val, box = load(names)
    from_val_shard = np.concatenate([np.full(len(np.load(n)['y']), n in val_names) for n in names])
    tr = np.flatnonzero(~val); va = np.flatnonzero(val & from_val_shard)
    xv, yv, spv, boxv = x[va], y[va], sp[va], box[va]
    print(f'train {len(tr)} crops, val {len(va)} crops', flush=True)
    if os.environ.get('BASELINE'):  # score a shipped ONNX on this validation set and stop
        units = {'five': EVAL_UNITS[:], 'grid3': GRID3_UNITS}
        for layout, offsets in units.items():
            EVAL_UNITS[:] = offsets
            a, per, _ = evaluate(load_shipped(os.environ['BASELINE']), xv, yv, spv, boxv)
            print('baseline', os.environ['BASELINE'], layout, 'val AUC', a, per, flush=True)
        return
    model = load_shipped(INIT).train() if INIT else PadNet()
    extra = np.load(EXTRA) if EXTRA else None
    n_extra = int(round(BATCH * EXTRA_SHARE)) if EXTRA else 0
    select = np.load(SELECT) if SELECT else None
    if extra is not None: print(f'extra {len(extra["y"])} crops ({int(extra["y"].sum())} attacks), {n_extra} per batch', flush=True)
    print('parameters', sum(p.numel() for p in model.parameters()), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    state = {'step': 0, 'elapsed': 0.0, 'best': -1.0, 'history': []}
    ckpt = os.path.join(WORK, 'ckpt.pt')
    if os.path.exists(ckpt):
        c = torch.load(ckpt)
        model.load_state_dict(c['model']); opt.load_state_dict(c['opt']); state = c['state']
        print('resumed at step', state['step'], 'elapsed', round(state['elapsed']), flush=True)
    rng = np.random.default_rng(state['step'] + 1)
    start = time.time() - state['elapsed']
    last_ckpt = last_eval = time.time()
    if state['step'] > 0: last_eval = time.time() - EVAL_SECONDS / 2
    losses = []
    while True:
        elapsed = time.time() - start
        done = elapsed >= MAX_SECONDS
        if done or time.time() - last_eval >= EVAL_SECONDS:
            a, per, _ = evaluate(model, xv, yv, spv, boxv)
            sel = evaluate(model, select['x'], select['y'], select['y'], select['box'])[0] if select is not None else None
            score = a if sel is None else (a + sel) / 2
            state['history'].append([state['step'], round(elapsed), a, per] + ([sel] if sel is not None else []))
            print(f'step {state["step"]} {elapsed:.0f}s loss {np.mean(losses[-200:]) if losses else 0:.4f} val AUC {a} {per}' + (f' select {sel}' if sel is not None else ''), flush=True)
            if score > state['best']:
                state['best'] = score
                torch.save({'model': model.state_dict(), 'step': state['step'], 'auc': a, 'per': per, 'selectAuc': sel}, os.path.join(WORK, 'best.pt'))
            last_eval = time.time()
        if done or time.time() - last_ckpt >= CKPT_SECONDS:
            state['elapsed'] = time.time() - start
            torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'state': state}, ckpt + '.tmp')
            os.replace(ckpt + '.tmp', ckpt)
            last_ckpt = time.time()
            new = [n for n in shard_names() if n not in names]
            if new and not done:
                x2, y2, sp2, val2, box2 = load(new)
                tr = np.concatenate([tr, len(x) + np.flatnonzero(~val2)])
                x, y, sp, box = np.concatenate([x, x2]), np.concatenate([y, y2]), np.concatenate([sp, sp2]), np.concatenate([box, box2])
                names = names + new
                print(f'loaded {len(new)} new shards: train {len(tr)} crops', flush=True)
        if done: break
        lr = LR * 0.5 * (1 + np.cos(np.pi * min(1.0, elapsed / MAX_SECONDS)))
        lr = lr * min(1.0, (state['step'] + 1) / 200)
        for g in opt.param_groups: g['lr'] = lr
        idx = rng.choice(tr, BATCH - n_extra, replace=False)
        xb, yb = train_batch(x, y, box, idx, rng)
        if n_extra:
            xe, ye = train_batch(extra['x'], extra['y'], extra['box'], rng.choice(len(extra['y']), n_extra, replace=False), rng)
            xb, yb = torch.cat([xb, xe]), torch.cat([yb, ye])
        if INIT: frozen_norms(model)
        loss = F.binary_cross_entropy_with_logits(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
        losses.append(loss.item()); state['step'] += 1
        if state['step'] % 100 == 0:
            print(f'step {state["step"]} {elapsed:.0f}s loss {np.mean(losses[-100:]):.4f} lr {lr:.2e} {state["step"] * BATCH / max(elapsed, 1):.0f} patches/s', flush=True)
    json.dump({'steps': state['step'], 'trainSeconds': round(state['elapsed']), 'best': state['best'], 'history': state['history']},
              open(os.path.join(WORK, 'train-summary.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
