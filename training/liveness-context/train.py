"""Trains face-liveness-context: a small CNN that scores the context of a face (a 112 x 112 luma
crop of side S x the face box, S = 2; prepare.py) as live (0) or presentation attack (1).

Where the texture model (face-liveness-pad) looks inside the face for the medium's texture, this
one looks around it, for the medium's frame: a paper margin or a screen bezel, fingers holding
it, a second background inside the scene, the perspective of a flat plane, glare.

Run:  taskset -c 0 env MAX_SECONDS=3300 /usr/bin/python3 training/liveness-context/train.py
(one thread; resumes from /work/data/pad2/ckpt.pt; checkpoints every CKPT_SECONDS; evaluates
validation AUC every EVAL_SECONDS and keeps the best as best.pt; picks up shards prepare.py
writes later at each checkpoint)

TURN_P (2.0.0: 0.3): the share of training crops turned by a quarter turn (90 or 270 degrees),
live and attack alike: a phone frame stored without its orientation tag shows the face on its
side, and 1.0.0, trained upright only, reads the scene around such a face as an attack
(MODEL_CARD.md, stop 39). With TURN_P > 0 every evaluation also scores the validation crops
turned both ways, and the checkpoint kept is the best mean of the upright and turned AUCs.
BASELINE=<exported .onnx>: no training; scores that model (with its mirror, as shipped) on the
validation crops upright and turned, for a rule that compares with it on the same crops.

3.0.0 (stop 42) fine-tunes 2.0.0 on real webcam captures beside the simulated ones:
INIT=<exported .onnx> starts from that model (its BatchNorms were folded into the convolutions, so
they stay frozen as the identity plus a bias); EXTRA=<npz> (nuaa.py fit.npz) supplies EXTRA_SHARE
of every batch; SELECT=<npz> (nuaa.py select.npz, people never trained on) is scored at every
evaluation, and the checkpoint kept is the best mean of the simulated AUCs and its AUC.
"""
import glob, importlib.util, json, os, time
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
# shared with face-liveness-pad (loaded by path: that folder's train.py and prepare.py must not shadow these)
_spec = importlib.util.spec_from_file_location('folded_onnx', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'liveness', 'folded_onnx.py'))
_folded = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_folded)
load_folded, frozen_norms = _folded.load_folded, _folded.frozen_norms

torch.set_num_threads(1)
WORK = os.environ.get('WORK', '/work/data/pad2')
SIDE = 112
MAX_SECONDS = float(os.environ.get('MAX_SECONDS', '3300'))
CKPT_SECONDS = float(os.environ.get('CKPT_SECONDS', '180'))
EVAL_SECONDS = float(os.environ.get('EVAL_SECONDS', '300'))
BATCH = int(os.environ.get('BATCH', '64'))
LR = float(os.environ.get('LR', '3e-3'))
SPECIES = ['live', 'print-am', 'print-fm', 'screen', 'phone', 'poster']
TURN_P = float(os.environ.get('TURN_P', '0'))
INIT = os.environ.get('INIT')
EXTRA = os.environ.get('EXTRA')
EXTRA_SHARE = float(os.environ.get('EXTRA_SHARE', '0.3'))
SELECT = os.environ.get('SELECT')


class ContextNet(nn.Module):
    """Luma crop [B,1,112,112] in 0..1 -> attack logit [B,1]."""

    def __init__(self):
        super().__init__()
        def block(i, o, s): return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        # space-to-depth 2 (every pixel reaches the first convolution), then strided 3x3 convs:
        # the cues are coarse (edges, margins, bezels, blobs), and one thread must train it fast
        self.features = nn.Sequential(
            nn.PixelUnshuffle(2),  # 4 x 56 x 56
            block(4, 32, 2),       # 28
            block(32, 48, 1),
            block(48, 64, 2),      # 14
            block(64, 96, 1),
            block(96, 128, 2),     # 7
            block(128, 160, 1),
        )
        self.head = nn.Linear(2 * 160, 1)

    def forward(self, x):
        f = self.features(x - 0.5)
        f = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
        return self.head(f)


def shard_names():
    return sorted(n for n in glob.glob(os.path.join(WORK, 'shard-*.npz')) if not n.endswith('.tmp.npz'))


def load(names):
    xs, ys, sp, val = [], [], [], []
    for name in names:
        z = np.load(name)
        xs.append(z['x']); ys.append(z['y']); sp.append(z['species']); val.append(z['val'])
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(sp), np.concatenate(val)


def to_tensor(x):
    return torch.from_numpy(x).float().div_(255).unsqueeze(1)


def train_batch(x, y, idx, rng):
    t = to_tensor(x[idx])
    flip = torch.from_numpy(rng.random(len(idx)) < 0.5)
    t[flip] = t[flip].flip(3)
    # exposure and contrast: the same range for live and attack crops
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (len(idx), 1, 1, 1))).float()
    off = torch.from_numpy(rng.uniform(-0.08, 0.08, (len(idx), 1, 1, 1))).float()
    gamma = torch.from_numpy(np.exp(rng.uniform(-0.25, 0.25, (len(idx), 1, 1, 1)))).float()
    t = ((t.clamp(1e-4, 1) ** gamma) * gain + off).clamp_(0, 1)
    if TURN_P > 0:  # (no draws otherwise: 1.0.0's random stream is unchanged)
        turn = rng.random(len(idx)) < TURN_P
        clockwise = rng.random(len(idx)) < 0.5
        for chosen, k in ((turn & clockwise, 3), (turn & ~clockwise, 1)):  # rot90 turns anticlockwise
            m = torch.from_numpy(chosen)
            if m.any(): t[m] = torch.rot90(t[m], k, (2, 3))
    return t, torch.from_numpy(y[idx].astype(np.float32)).unsqueeze(1)


def auc(scores, labels):
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(labels, scores))


@torch.no_grad()
def logits_of(model, x, flip=False):
    was = model.training
    model.eval()
    out = np.zeros(len(x), np.float64)
    for s in range(0, len(x), 256):
        t = to_tensor(x[s:s + 256])
        v = model(t).squeeze(1)
        if flip: v = 0.5 * (v + model(t.flip(3)).squeeze(1))
        out[s:s + 256] = v.numpy()
    model.train(was)
    return out


def per_species(logits, y, sp):
    per = {}
    for k, name in enumerate(SPECIES[1:], 1):
        m = (sp == 0) | (sp == k)
        if (sp == k).any() and (sp == 0).any(): per[name] = round(auc(logits[m], y[m]), 4)
    return per


def load_shipped(path):
    """A ContextNet carrying an exported ONNX's weights; the mirror is applied by the caller."""
    model = ContextNet()
    return load_folded(model, list(model.features[1:]), path)


def turned(x):
    """Every crop turned 90 degrees clockwise, then every crop turned 270 degrees: [2n, H, W]."""
    return np.ascontiguousarray(np.concatenate([np.rot90(x, 3, (1, 2)), np.rot90(x, 1, (1, 2))]))


def evaluate(model, x, y, sp, flip=False):
    lg = logits_of(model, x, flip)
    return round(auc(lg, y), 4), per_species(lg, y, sp), lg


def evaluate_turned(model, xt, y, sp, flip=False):
    """AUC and per-species AUC on the crops turned both ways (xt = turned(x))."""
    lg = logits_of(model, xt, flip)
    yy, ss = np.concatenate([y, y]), np.concatenate([sp, sp])
    return round(auc(lg, yy), 4), per_species(lg, yy, ss)


def main():
    # Validation during training = the validation crops of the shards present at the first start
    # (a fixed set, so evaluations compare); shards written later add training crops only (their
    # validation crops join the final figures in export.py).
    names = shard_names()
    fixed = os.path.join(WORK, 'val-shards.json')
    if os.path.exists(fixed): val_names = json.load(open(fixed))
    else: val_names = names; json.dump(names, open(fixed, 'w'))
    x, y, sp, val = load(names)
    in_fixed = np.concatenate([np.full(len(np.load(n)['y']), n in val_names) for n in names])
    tr = np.flatnonzero(~val); va = np.flatnonzero(val & in_fixed)
    xv, yv, spv = x[va], y[va], sp[va]
    print(f'train {len(tr)} crops, val {len(va)} crops ({int(yv.sum())} attacks)', flush=True)
    xvt = turned(xv) if TURN_P > 0 or os.environ.get('BASELINE') else None
    if os.environ.get('BASELINE'):
        shipped = load_shipped(os.environ['BASELINE'])
        a, per, _ = evaluate(shipped, xv, yv, spv, flip=True)
        at, per_t = evaluate_turned(shipped, xvt, yv, spv, flip=True)
        print('baseline', os.environ['BASELINE'], 'val AUC', a, per, 'turned', at, per_t, flush=True)
        return
    model = load_shipped(INIT).train() if INIT else ContextNet()
    extra = np.load(EXTRA) if EXTRA else None
    n_extra = int(round(BATCH * EXTRA_SHARE)) if EXTRA else 0
    select = np.load(SELECT) if SELECT else None
    if extra is not None: print(f'extra {len(extra["y"])} crops ({int(extra["y"].sum())} attacks), {n_extra} per batch', flush=True)
    print('parameters', sum(p.numel() for p in model.parameters()), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=5e-4)
    state = {'step': 0, 'elapsed': 0.0, 'best': -1.0, 'history': [], 'shards': names}
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
        done = elapsed >= MAX_SECONDS or os.path.exists(os.path.join(WORK, 'STOP'))
        if done or time.time() - last_eval >= EVAL_SECONDS:
            a, per, _ = evaluate(model, xv, yv, spv)
            at, per_t = evaluate_turned(model, xvt, yv, spv) if xvt is not None else (None, None)
            sel = round(auc(logits_of(model, select['x']), select['y']), 4) if select is not None else None
            parts = [v for v in (a, at, sel) if v is not None]
            score = sum(parts) / len(parts)
            state['history'].append([state['step'], round(elapsed), a, per, len(tr), len(va)] + ([at, per_t] if at is not None else []) + ([sel] if sel is not None else []))
            print(f'step {state["step"]} {elapsed:.0f}s loss {np.mean(losses[-200:]) if losses else 0:.4f} val AUC {a} {per} (val {len(va)})'
                  + (f' turned {at} {per_t}' if at is not None else '') + (f' select {sel}' if sel is not None else ''), flush=True)
            if score > state['best']:
                state['best'] = score
                torch.save({'model': model.state_dict(), 'step': state['step'], 'auc': a, 'per': per, 'turnedAuc': at, 'turnedPer': per_t, 'selectAuc': sel, 'shards': names}, os.path.join(WORK, 'best.pt'))
            last_eval = time.time()
        if done or time.time() - last_ckpt >= CKPT_SECONDS:
            state['elapsed'] = time.time() - start
            state['shards'] = names
            torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'state': state}, ckpt + '.tmp')
            os.replace(ckpt + '.tmp', ckpt)
            last_ckpt = time.time()
            new = [n for n in shard_names() if n not in names]
            if new and not done:
                x2, y2, sp2, val2 = load(new)
                base = len(x)
                tr = np.concatenate([tr, base + np.flatnonzero(~val2)])
                x, y, sp = np.concatenate([x, x2]), np.concatenate([y, y2]), np.concatenate([sp, sp2])
                names = names + new
                print(f'loaded {len(new)} new shards: train {len(tr)} crops, val {len(va)}', flush=True)
        if done: break
        lr = LR * 0.5 * (1 + np.cos(np.pi * min(1.0, elapsed / MAX_SECONDS)))
        lr = lr * min(1.0, (state['step'] + 1) / 200)
        for g in opt.param_groups: g['lr'] = lr
        idx = rng.choice(tr, BATCH - n_extra, replace=False)
        xb, yb = train_batch(x, y, idx, rng)
        if n_extra:
            xe, ye = train_batch(extra['x'], extra['y'], rng.choice(len(extra['y']), n_extra, replace=False), rng)
            xb, yb = torch.cat([xb, xe]), torch.cat([yb, ye])
        if INIT: frozen_norms(model)
        loss = F.binary_cross_entropy_with_logits(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
        losses.append(loss.item()); state['step'] += 1
        if state['step'] % 100 == 0:
            print(f'step {state["step"]} {elapsed:.0f}s loss {np.mean(losses[-100:]):.4f} lr {lr:.2e} {state["step"] * BATCH / max(elapsed, 1):.0f} crops/s', flush=True)
    json.dump({'steps': state['step'], 'trainSeconds': round(state['elapsed']), 'best': state['best'], 'history': state['history'], 'shards': names},
              open(os.path.join(WORK, 'train-summary.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
