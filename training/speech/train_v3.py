"""v3 attempt (issue 19): copy-synthesis PAIRS + segment mixing + optional high-resolution front end,
checkpoint chosen on a validation split that includes a whole vocoder family left out of training.

Data: /work/data/speech-v3 (prepare.py with SPEECH_DATA, pairs_v3.py, augment_v3.py).
Split: train.py `split` (v2's untouched 16-system TEST is unchanged and never read here), and additionally the
flow / IAF vocoder family (WaveFlow, ClariNet, ClariNet-GAN) is moved out of training into VALIDATION wherever it was
published, so the checkpoint is chosen on a family the model never saw (leave-one-family-out validation; one fold,
not k-fold: there is CPU for two runs, not for k).

Batches (32): PAIRS of 12 synthetic clips each with a bona fide partner of the same source -- 6 with the aligned recording
(copy-synthesis pair from pairs.json: same crop, same codec copy, same noise/EQ/clipping, so only the synthesis
differs), 6 (mostly TTS pages) with a bona fide clip of the same group (speaker/case) -- plus 8 FREE clips (4 + 4, v2's
weighted sampling) so sources without a partner still appear. In a pair, source identity carries no label.
With probability MIX an aligned synthetic item is replaced by the bona fide crop with 0.3-1.2 s of the vocoded
rendering spliced in (gain-matched, 10 ms crossfades), labelled synthetic (segment mixing, as Self-Blended Images
blend a face with itself). Loss: BCE + 0.5 * softplus(1 - (z_syn - z_real)) over the pairs.

Usage: /usr/bin/python3 train_v3.py <minutes> <tag> <frontend: lfcc|spec> [free-weight]
"""
import json, math, os, sys, time, random, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
os.environ.setdefault('SPEECH_DATA', '/work/data/speech-v3')
from train import LFCC, block, split, eer, windows, HELD_OUT_SYSTEMS, D, SR, WIN
torch.set_num_threads(1)
TRAIN_WIN = 32000
VAL_FAMILY = {'waveflow', 'clarinet', 'clarinet-gan'}  # flow / inverse-autoregressive-flow vocoders: left out of training
MIX = 0.3

def split_v3(meta):
  tr, va, te = split(meta)
  fam = [i for i in tr if meta[i]['label'] == 1 and meta[i]['system'] in VAL_FAMILY]
  tr = [i for i in tr if not (meta[i]['label'] == 1 and meta[i]['system'] in VAL_FAMILY)]
  return tr, va + fam, te

class LogSpec(nn.Module):
  """log power spectrogram in the graph: conv1d DFT (Hann 512, hop 160) -> power -> adjacent bins summed in pairs
  (matmul, 256 -> 128 bands of 31.25 Hz up to 8 kHz; DC dropped) -> log. Higher resolution than 30 cepstra."""
  def __init__(self, n_fft=512, hop=160, bands=128):
    super().__init__()
    n = torch.arange(n_fft).float(); k = torch.arange(n_fft // 2 + 1).float()
    win = 0.5 - 0.5 * torch.cos(2 * math.pi * n / n_fft)
    ang = 2 * math.pi * k[:, None] * n[None, :] / n_fft
    self.register_buffer('kern', torch.cat([torch.cos(ang) * win, -torch.sin(ang) * win])[:, None, :])
    K = n_fft // 2 + 1; per = (K - 1) // bands
    pool = torch.zeros(K, bands)
    for j in range(bands): pool[1 + j * per:1 + (j + 1) * per, j] = 1
    self.register_buffer('pool', pool)
    self.hop, self.K = hop, K
  def forward(self, x):
    s = F.conv1d(x[:, None, :], self.kern, stride=self.hop)
    p = s[:, :self.K] ** 2 + s[:, self.K:] ** 2
    lf = torch.log(torch.matmul(p.transpose(1, 2), self.pool) + 1e-7)  # (B, frames, bands)
    return lf.transpose(1, 2)[:, None]  # (B,1,bands,frames)

class NetV3(nn.Module):
  def __init__(self, frontend='lfcc'):
    super().__init__()
    self.frontend = frontend
    self.fe = LFCC(n_ceps=30) if frontend == 'lfcc' else LogSpec()
    self.bn = nn.BatchNorm2d(1)
    self.cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2), block(16, 32), block(32, 64), block(64, 96))
    self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(96 * 2, 1))
  def forward(self, x):
    h = self.cnn(self.bn(self.fe(x))).mean(2)
    return self.head(torch.cat([h.mean(2), h.amax(2)], 1))[:, 0]

def evaluate(net, clips, idx, max_windows=8):
  net.eval(); sc = []
  with torch.no_grad():
    for i in idx: sc.append(float(net(torch.from_numpy(windows(clips[i], max_windows=max_windows))).mean()))
  net.train(); return np.array(sc)

def cut(x, start, n=TRAIN_WIN):
  """n samples of x from start (tiled if x is short, zero where start runs off either end)"""
  if len(x) < n: x = np.tile(x, int(np.ceil(n / len(x))) + 1)
  y = np.zeros(n, np.float32); a = max(0, start); b = min(len(x), start + n)
  if b > a: y[a - start:b - start] = x[a:b]
  return y

def peak(y):
  pk = np.abs(y).max(); return (y / pk).astype(np.float32) if pk > 0 else y

def augment(y, rng, nrng):
  """v2's waveform augmentation with explicit generators, so a pair gets identical draws"""
  r = rng.random()
  if r < 0.3: y = y + nrng.standard_normal(len(y)).astype(np.float32) * 10 ** rng.uniform(-4, -1.5)
  elif r < 0.4: y = np.clip(y * rng.uniform(1.2, 3), -1, 1)
  if rng.random() < 0.3:
    Y = np.fft.rfft(y); pts = np.array([rng.uniform(-6, 6) for _ in range(8)])
    y = np.fft.irfft(Y * 10 ** (np.interp(np.linspace(0, 7, len(Y)), np.arange(8), pts) / 20), len(y)).astype(np.float32)
  if rng.random() < 0.15:
    Y = np.fft.rfft(y); lo = rng.randrange(0, len(Y)); w = int(len(Y) * rng.uniform(0.04, 0.19))
    Y[lo:lo + w] *= 10 ** (-rng.uniform(20, 40) / 20); y = np.fft.irfft(Y, len(y)).astype(np.float32)
  return peak(y)

def splice(real, syn, rng):
  """real crop with 0.3-1.2 s of the aligned synthetic crop spliced in where the real one has speech energy"""
  n = len(real); L = int(rng.uniform(0.3, 1.2) * SR)
  fr = np.sqrt((real[:n // 160 * 160].reshape(-1, 160) ** 2).mean(1)); loud = np.where(fr > np.median(fr))[0]
  c = int(rng.choice(list(loud))) * 160 if len(loud) else rng.randrange(0, n)
  a = int(np.clip(c - L // 2, 0, n - L)); b = a + L
  g = math.sqrt((real[a:b] ** 2).mean() + 1e-10) / math.sqrt((syn[a:b] ** 2).mean() + 1e-10)
  w = np.ones(n, np.float32) * 0; w[a:b] = 1; f = 160
  w[a:a + f] = np.linspace(0, 1, f); w[b - f:b] = np.linspace(1, 0, f)
  return (real * (1 - w) + syn * g * w).astype(np.float32)

def val_metrics(meta, va, sc, pairs, partner_scores=None):
  y = np.array([meta[i]['label'] for i in va]); s = np.asarray(sc)
  fam = np.array([meta[i]['label'] == 1 and meta[i]['system'] in VAL_FAMILY for i in va])
  real = y == 0
  e_all = eer(s, y); e_fam = eer(np.r_[s[real], s[fam]], np.r_[np.zeros(real.sum()), np.ones(fam.sum())])
  out = {'eer': e_all, 'eerFamily': e_fam, 'criterion': 0.5 * (e_all + e_fam)}
  if partner_scores is not None:  # source-free measure: synthetic scored above its own aligned recording
    wins = [float(s[k] > partner_scores[pairs[str(i)][0]]) for k, i in enumerate(va) if y[k] == 1 and str(i) in pairs and pairs[str(i)][0] in partner_scores]
    out['pairedAccuracy'] = float(np.mean(wins)) if wins else None; out['pairs'] = len(wins)
  return out

if __name__ == '__main__':
  minutes = float(sys.argv[1]); tag = sys.argv[2]; frontend = sys.argv[3]
  free_w = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
  EVAL_EVERY = int(os.environ.get('EVAL_EVERY', 250))
  CK, BEST, LOG = f'{D}/v3ckpt-{tag}.pt', f'{D}/v3best-{tag}.pt', f'{D}/v3log-{tag}.jsonl'
  seed = int.from_bytes(tag.encode(), 'little') % 1000; torch.manual_seed(seed)
  z = np.load(f'{D}/clips.npz'); meta = json.load(open(f'{D}/meta.json'))
  A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  a = np.load(f'{D}/aug.npz'); AA, AO = a['audio'], a['offs']
  aug = {}  # clip -> {copy k: (samples, start in the clip)}
  for j, (s, k, st) in enumerate(zip(a['src'], a['k'], a['start'])): aug.setdefault(int(s), {})[int(k)] = (AA[AO[j]:AO[j + 1]], int(st))
  pairs = json.load(open(f'{D}/pairs.json'))
  tr, va, te = split_v3(meta); trs = set(tr)
  ytr = np.array([meta[i]['label'] for i in tr]); yva = np.array([meta[i]['label'] for i in va])
  # pairing: aligned partner if it is in training, else any training bona fide clip of the same group
  real_by_group = {}
  for i in tr:
    if meta[i]['label'] == 0: real_by_group.setdefault(meta[i]['group'], []).append(i)
  aligned = {i: pairs[str(i)] for i in tr if meta[i]['label'] == 1 and str(i) in pairs and pairs[str(i)][0] in trs}
  pairable = [i for i in tr if meta[i]['label'] == 1 and (i in aligned or meta[i]['group'] in real_by_group)]
  # half of the pair slots go to aligned copy-synthesis pairs, half to group (same speaker/case) pairs; each weighted
  # 1/sqrt(clips of its system) within its half
  al_list = [i for i in pairable if i in aligned]; gr_list = [i for i in pairable if i not in aligned]
  def sysw(idx):
    n = {}
    for i in idx: n[meta[i]['system']] = n.get(meta[i]['system'], 0) + 1
    return [1 / math.sqrt(n[meta[i]['system']]) for i in idx]
  w_al, w_gr = sysw(al_list), sysw(gr_list)
  def weighted(idx, key):
    n = {}
    for i in idx: n[key(meta[i])] = n.get(key(meta[i]), 0) + 1
    return idx, [1 / math.sqrt(n[key(meta[i])]) for i in idx]
  pos, wpos = weighted([i for i in tr if meta[i]['label'] == 1], lambda m: m['system'])
  neg, wneg = weighted([i for i in tr if meta[i]['label'] == 0], lambda m: m['repo'])
  # validation: its clips plus the aligned bona fide partners of its synthetic clips (for the paired accuracy)
  vpart = sorted({pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs} - set(va))
  print(f'train {len(tr)} (bona fide {int((ytr == 0).sum())}) | pairable synthetic {len(pairable)}, aligned {len(aligned)} '
        f'({len({v[0] for v in aligned.values()})} recordings) | val {len(va)} (bona fide {int((yva == 0).sum())}, '
        f'left-out family {sum(1 for i in va if meta[i]["system"] in VAL_FAMILY)}) | test not read ({len(te)})', flush=True)
  print('aligned pairs by system', json.dumps({s: sum(1 for i in aligned if meta[i]['system'] == s) for s in sorted({meta[i]['system'] for i in aligned})}), flush=True)
  net = NetV3(frontend); print('params', sum(p.numel() for p in net.parameters() if p.requires_grad), flush=True)
  ema = NetV3(frontend); ema.load_state_dict(net.state_dict()); [p.requires_grad_(False) for p in ema.parameters()]
  opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=1e-3)
  rng = random.Random(seed); step = 0; best = (9.0, None); spent = 0.0
  if os.path.exists(CK):
    ck = torch.load(CK); net.load_state_dict(ck['net']); ema.load_state_dict(ck['ema']); opt.load_state_dict(ck['opt']); step, best, spent = ck['step'], ck['best'], ck['spent']
    rng = random.Random(seed + step)
  t0 = time.time(); lastck = time.time()
  def src(i, k):  # the clip or its codec copy k, and the copy's start in the clip
    if k is None or k not in aug.get(i, {}): return clips[i], 0
    return aug[i][k]
  def save_ck():
    torch.save({'net': net.state_dict(), 'ema': ema.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0}, CK)
  while spent + (time.time() - t0) < minutes * 60:
    lr = 1e-3 * 0.5 * (1 + math.cos(math.pi * min(1.0, (spent + time.time() - t0) / (minutes * 60))))
    for gparam in opt.param_groups: gparam['lr'] = max(lr, 2e-5)
    xs, ys, wts = [], [], []
    for s in rng.choices(al_list, w_al, k=6) + rng.choices(gr_list, w_gr, k=6):
      k = None if rng.random() < 0.4 else rng.randrange(2)
      sd = rng.randrange(1 << 30)
      if s in aligned:
        r, lag, _ = aligned[s]
        if k is not None and k in aug.get(s, {}) and k in aug.get(r, {}): (xr, str_), (xsy, sts) = aug[r][k], aug[s][k]  # same codec chain
        else: (xr, str_), (xsy, sts) = (clips[r], 0), (clips[s], 0)
        rel = lag + str_ - sts  # syn_copy[u + rel] ~ real_copy[u]
        o = rng.randrange(0, max(1, len(xr) - TRAIN_WIN + 1))
        cr, cs = cut(xr, o), cut(xsy, o + rel)
        if rng.random() < MIX: cs = splice(cr, cs, rng)
      else:
        r = rng.choice(real_by_group[meta[s]['group']])
        xr, _ = src(r, k); xsy, _ = src(s, k)
        cr = cut(xr, rng.randrange(0, max(1, len(xr) - TRAIN_WIN + 1))); cs = cut(xsy, rng.randrange(0, max(1, len(xsy) - TRAIN_WIN + 1)))
      xs += [augment(peak(cr), random.Random(sd), np.random.default_rng(sd)), augment(peak(cs), random.Random(sd), np.random.default_rng(sd))]
      ys += [0.0, 1.0]; wts += [1.0, 1.0]
    for i in rng.choices(pos, wpos, k=4) + rng.choices(neg, wneg, k=4):
      k = None if rng.random() < 0.4 else rng.randrange(2)
      x, _ = src(i, k); sd = rng.randrange(1 << 30)
      xs.append(augment(peak(cut(x, rng.randrange(0, max(1, len(x) - TRAIN_WIN + 1)))), random.Random(sd), np.random.default_rng(sd)))
      ys.append(float(meta[i]['label'])); wts.append(free_w)
    x = torch.from_numpy(np.stack(xs)); yb = torch.tensor(ys); wb = torch.tensor(wts)
    zb = net(x)
    bce = (F.binary_cross_entropy_with_logits(zb, yb, reduction='none') * wb).sum() / wb.sum()
    rank = F.softplus(1 - (zb[1:24:2] - zb[0:24:2])).mean()
    loss = bce + 0.5 * rank
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    with torch.no_grad():
      d = min(0.995, (1 + step) / (10 + step))
      for pe, pn in zip(ema.state_dict().values(), net.state_dict().values()):
        if pe.dtype.is_floating_point: pe.mul_(d).add_(pn, alpha=1 - d)
        else: pe.copy_(pn)
    if step % EVAL_EVERY == 0:
      sc = evaluate(ema, clips, va + vpart, max_windows=2)
      psc = {i: float(v) for i, v in zip(vpart, sc[len(va):])}
      psc.update({i: float(v) for i, v in zip(va, sc[:len(va)]) if meta[i]['label'] == 0})
      vm = val_metrics(meta, va, sc[:len(va)], pairs, psc)
      rec = {'step': step, 't': round(spent + time.time() - t0), 'loss': round(loss.item(), 4), 'bce': round(bce.item(), 4), 'rank': round(rank.item(), 4), **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in vm.items()}}
      print(json.dumps(rec), flush=True); open(LOG, 'a').write(json.dumps(rec) + '\n')
      if vm['criterion'] <= best[0]:
        best = (vm['criterion'], step)
        torch.save({'net': ema.state_dict(), 'criterion': vm['criterion'], 'val': vm, 'step': step, 'frontend': frontend, 'tag': tag}, BEST)
    if time.time() - lastck > 120: save_ck(); lastck = time.time()
  save_ck()
  print('done; best validation criterion', best[0], 'at step', best[1], flush=True)
