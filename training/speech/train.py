"""Synthetic-speech detector: LFCC front end inside the graph (Sahidullah et al., Interspeech 2015;
Todisco et al., "Constant Q cepstral coefficients", 2017 for the anti-spoofing use of cepstra) computed
with fixed conv1d DFT kernels -> power -> linear triangular filterbank (matmul) -> log -> DCT (matmul),
then a small CNN. Input: 4 s of 16 kHz mono, peak-normalised (the loader's `waveform` input).
Split (v2, the honest protocol of the stop-23 retrain): whole TTS/vocoder systems held out as an untouched
TEST split, scored once by export.py; the checkpoint is chosen on a VALIDATION split of seen systems and
bona fide speakers/sources that training never sees. Usage: /usr/bin/python3 train.py [minutes]"""
import json, math, os, sys, time, random, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1); torch.manual_seed(0); random.seed(0); np.random.seed(0)
D = os.environ.get('SPEECH_DATA', '/work/data/speech')  # train_v3.py sets /work/data/speech-v3
SR, WIN = 16000, 64000
EVAL_EVERY = int(os.environ.get('EVAL_EVERY', 300))
TRAIN_WIN = 32000  # the CNN pools globally: 2 s crops train it, the service feeds 4 s
# Test: every clip of these systems, wherever it comes from. v1's seven, plus (v2) WaveGlow-vocoded TTS,
# WaveRNN, the diffusion vocoders (a family wholly unseen in training) and NaturalSpeech 3 (NaturalSpeech's sibling).
HELD_OUT_V1 = {'waveglow', 'wavenet', 'vits', 'jets', 'naturalspeech', 'naturalspeech2', 'fastdiff'}
HELD_OUT_SYSTEMS = HELD_OUT_V1 | {'glowtts-waveglow', 'tacotron2-waveglow', 'wavernn',
                                  'diffwave', 'wavegrad', 'wavegrad2', 'priorgrad', 'specgrad', 'naturalspeech3'}
# Bona fide of these sources/speakers is test (v1's held-out bona fide first); seen-system clips rendered from them are dropped.
TEST_GROUPS = {'styletts-VCTK', 'styletts-LibriTTS', 'hifigan-ss',
               'vitsdemo-vctk', 'glowdemo-lb', 'specgrad', 'r9y9-jp', 'r9y9-M1', 'sr-ns3-librispeech', 'sr-naturalspeech',
               'bigvgan-noisytedx', 'tortoise-freeman', 'tortoise-william', 'tortoise-train_dotrice'}
# Validation: bona fide speakers/sources and the seen-system clips rendered from them.
VAL_GROUPS = {'pwg-jsut', 'pwg-csmsc', 'r9y9-F2', 'r9y9-bonus-slt', 'r9y9-bonus-rms', 'sr-ns3-ravdess', 'vitsdemo-lj', 'wavegrad',
              'bigvgan-celeb', 'tortoise-halle', 'tortoise-tom', 'tortoise-train_kennard'}

def group_split(g):
  if g in TEST_GROUPS or g.startswith('sr-ns2-'): return 'test'
  if g in VAL_GROUPS: return 'val'
  if g.startswith('librispeech-'):
    k = int(g.split('-')[1]) % 5
    return 'test' if k == 0 else 'val' if k == 1 else 'train'  # a fifth of LibriSpeech speakers each
  if g.startswith('mobilespeech-') and int(g.split('-')[1]) % 4 == 1: return 'val'
  return 'train'

def split(meta, dedupe=True):
  tr, va, te = [], [], []
  drop = duplicates(meta) if dedupe else set()
  for i, m in enumerate(meta):
    if i in drop: continue
    if m['label'] == 1 and m['system'] in HELD_OUT_SYSTEMS: te.append(i); continue
    s = group_split(m['group'])
    if s == 'test':
      if m['label'] == 0: te.append(i)  # seen systems rendered from test sources: dropped
    else: (va if s == 'val' else tr).append(i)
  return tr, va, te

def duplicates(meta):
  """The same recording published on two pages (e.g. LJSpeech ground truth on the StyleTTS 2 and NaturalSpeech pages, one
  Tortoise output in two example folders): same label and system, same length, log-energy envelopes correlating > 0.985.
  (Copy-synthesis pairs also share envelopes but differ in system.) The copy outside the most protected split is dropped:
  test > validation > training. Cached in D/dups.json."""
  path = f'{D}/dups.json'
  if os.path.exists(path): return set(json.load(open(path)))
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']
  tr, va, te = split(meta, dedupe=False); rank = {**{i: 0 for i in tr}, **{i: 1 for i in va}, **{i: 2 for i in te}}
  def env(i):
    x = A[O[i]:O[i + 1]]; n = len(x) // 160
    e = np.log(np.sqrt((x[:n * 160].reshape(n, 160) ** 2).mean(1) + 1e-9)); return (e - e.mean()) / (e.std() + 1e-9)
  envs = {i: env(i) for i in rank}; by_len = {}
  for i in rank: by_len.setdefault(round(meta[i]['seconds'] * 10), []).append(i)
  drop = set()
  for L, items in by_len.items():
    for a in items:
      for b in items + by_len.get(L + 1, []):
        if b <= a or rank[a] == rank[b] or (meta[a]['label'], meta[a]['system']) != (meta[b]['label'], meta[b]['system']): continue
        n = min(len(envs[a]), len(envs[b]))
        if float(np.dot(envs[a][:n], envs[b][:n]) / n) > 0.985: drop.add(a if rank[a] < rank[b] else b)
  json.dump(sorted(drop), open(path, 'w')); return drop

def v1_test(meta, te):
  """the part of the test split that v1's held-out split had (for a like-for-like figure)"""
  v1_groups = {'styletts-VCTK', 'styletts-LibriTTS', 'hifigan-ss'}
  keep = []
  for i in te:
    m = meta[i]
    if m['repo'] not in ('styletts2/styletts2.github.io', 'jik876/hifi-gan-demo', 'resemble-ai/Resemblyzer'): continue
    if m['label'] == 1 or m['group'] in v1_groups or m['group'].startswith('librispeech-'): keep.append(i)
  return keep

class LFCC(nn.Module):
  def __init__(self, n_fft=512, hop=160, n_filt=60, n_ceps=30):  # n_ceps=60 keeps every filter's detail
    super().__init__()
    n = torch.arange(n_fft).float(); k = torch.arange(n_fft // 2 + 1).float()
    win = 0.5 - 0.5 * torch.cos(2 * math.pi * n / n_fft)
    ang = 2 * math.pi * k[:, None] * n[None, :] / n_fft
    self.register_buffer('kern', torch.cat([torch.cos(ang) * win, -torch.sin(ang) * win])[:, None, :])  # (2K,1,N)
    freqs = torch.linspace(0, SR / 2, n_fft // 2 + 1); edges = torch.linspace(0, SR / 2, n_filt + 2)
    fb = torch.zeros(n_fft // 2 + 1, n_filt)
    for j in range(n_filt):
      lo, c, hi = edges[j], edges[j + 1], edges[j + 2]
      fb[:, j] = torch.clamp(torch.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c)), min=0)
    self.register_buffer('fb', fb)
    m = torch.arange(n_filt).float(); q = torch.arange(n_ceps).float()
    self.register_buffer('dct', torch.cos(math.pi / n_filt * (m[:, None] + 0.5) * q[None, :]) * math.sqrt(2 / n_filt))
    self.hop, self.K = hop, n_fft // 2 + 1
  def forward(self, x):  # (B, T)
    s = F.conv1d(x[:, None, :], self.kern, stride=self.hop)  # (B, 2K, frames)
    p = s[:, :self.K] ** 2 + s[:, self.K:] ** 2
    lf = torch.log(torch.matmul(p.transpose(1, 2), self.fb) + 1e-7)  # (B, frames, filt)
    c = torch.matmul(lf, self.dct)  # (B, frames, ceps)
    d = c[:, 2:] - c[:, :-2]  # deltas (central difference)
    c = c[:, 1:-1]
    return torch.cat([c, d], 2).transpose(1, 2)[:, None]  # (B,1,2*ceps,frames)

def block(i, o): return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(2))
class Net(nn.Module):
  def __init__(self, n_ceps=30):
    super().__init__()
    self.fe = LFCC(n_ceps=n_ceps); self.bn = nn.BatchNorm2d(1)
    self.cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2), block(16, 32), block(32, 64), block(64, 96))
    self.head = nn.Sequential(nn.Dropout(0.3), nn.Linear(96 * 2, 1))
  def forward(self, x):
    h = self.cnn(self.bn(self.fe(x)))  # (B,96,f,t)
    h = h.mean(2)
    h = torch.cat([h.mean(2), h.amax(2)], 1)
    return self.head(h)[:, 0]

def crop(x, rng, n=WIN):
  if len(x) < n: x = np.tile(x, int(np.ceil(n / len(x))))
  s = rng.randrange(0, len(x) - n + 1); y = x[s:s + n].copy()
  pk = np.abs(y).max(); return y / pk if pk > 0 else y

def eer(scores, labels):
  from sklearn.metrics import roc_curve
  fpr, tpr, thr = roc_curve(labels, scores); fnr = 1 - tpr; i = np.nanargmin(np.abs(fnr - fpr))
  return float((fpr[i] + fnr[i]) / 2)

def windows(x, n=WIN, max_windows=8):  # deterministic evaluation windows like the service: up to 8 windows
  if len(x) < n: x = np.concatenate([x, np.zeros(n - len(x), np.float32)])
  c = max(1, min(max_windows, len(x) // n)); st = (len(x) - n) / (c - 1) if c > 1 else 0
  out = []
  for w in range(c):
    y = x[int(round(w * st)):int(round(w * st)) + n].copy(); pk = np.abs(y).max(); out.append(y / pk if pk > 0 else y)
  return np.stack(out)

def evaluate(net, clips, idx, max_windows=8):
  net.eval(); sc = []
  with torch.no_grad():
    for i in idx: sc.append(float(net(torch.from_numpy(windows(clips[i], max_windows=max_windows))).mean()))
  net.train(); return np.array(sc)

def eq(y, rng):
  """random smooth spectral tilt/EQ (+-6 dB at 8 points), applied to both classes alike"""
  Y = np.fft.rfft(y); pts = np.array([rng.uniform(-6, 6) for _ in range(8)])
  curve = np.interp(np.linspace(0, 7, len(Y)), np.arange(8), pts)
  return np.fft.irfft(Y * 10 ** (curve / 20), len(y)).astype(np.float32)

def augment(y, rng):
  r = rng.random()
  if r < 0.3: y = y + np.random.randn(len(y)).astype(np.float32) * 10 ** rng.uniform(-4, -1.5)  # noise at 30-80 dB below peak
  elif r < 0.4: y = np.clip(y * rng.uniform(1.2, 3), -1, 1)  # clipping
  if rng.random() < 0.3: y = eq(y, rng)
  if rng.random() < 0.15:  # a band of 0.3-1.5 kHz cut by 20-40 dB (RawBoost-like), so no single band decides
    Y = np.fft.rfft(y); lo = rng.randrange(0, len(Y)); w = int(len(Y) * rng.uniform(0.04, 0.19))
    Y[lo:lo + w] *= 10 ** (-rng.uniform(20, 40) / 20); y = np.fft.irfft(Y, len(y)).astype(np.float32)
  pk = np.abs(y).max(); return y / pk if pk > 0 else y

if __name__ == '__main__':
  minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 12
  tag = sys.argv[2] if len(sys.argv) > 2 else 'a'  # one run per core: train.py 40 a 30 & train.py 40 b 60
  n_ceps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
  CK, BEST = f'{D}/ckpt-{tag}.pt', f'{D}/best-{tag}.pt'
  torch.manual_seed(int.from_bytes(tag.encode(), 'little') % 1000)
  z = np.load(f'{D}/clips.npz'); meta = json.load(open(f'{D}/meta.json'))
  A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  a = np.load(f'{D}/aug.npz'); aug = {}; AA, AO = a['audio'], a['offs']
  for j, s in enumerate(a['src']): aug.setdefault(int(s), []).append(AA[AO[j]:AO[j + 1]])
  tr, va, te = split(meta); ytr = np.array([meta[i]['label'] for i in tr]); yva = np.array([meta[i]['label'] for i in va])
  print('train', len(tr), 'real', int((ytr == 0).sum()), '| val', len(va), 'real', int((yva == 0).sum()), '| test (not read here)', len(te), flush=True)
  net = Net(n_ceps); print('params', sum(p.numel() for p in net.parameters() if p.requires_grad))
  ema = Net(n_ceps); ema.load_state_dict(net.state_dict()); [p.requires_grad_(False) for p in ema.parameters()]
  opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=1e-3)
  rng = random.Random(0); step = 0; best = (1.0, None); t0 = time.time(); spent = 0.0
  if os.path.exists(CK):
    ck = torch.load(CK); net.load_state_dict(ck['net']); ema.load_state_dict(ck['ema']); opt.load_state_dict(ck['opt']); step = ck['step']; best = ck['best']; spent = ck['spent']
  # balanced batches; within a class a clip's weight is 1/sqrt(clips of its system or bona fide source), so 425 Tortoise
  # clips or 251 LibriSpeech files count like sqrt(n) rather than n
  def weighted(idx, key):
    n = {}
    for i in idx: n[key(meta[i])] = n.get(key(meta[i]), 0) + 1
    return idx, [1 / math.sqrt(n[key(meta[i])]) for i in idx]
  pos, wpos = weighted([i for i in tr if meta[i]['label'] == 1], lambda m: m['system'])
  neg, wneg = weighted([i for i in tr if meta[i]['label'] == 0], lambda m: m['repo'])
  va_eval = va  # validation clips, scored with up to 2 windows during training (export.py scores 8)
  lastck = time.time()
  while spent + (time.time() - t0) < minutes * 60:
    lr = 1e-3 * 0.5 * (1 + math.cos(math.pi * min(1.0, (spent + time.time() - t0) / (minutes * 60))))  # cosine over the budget
    for gparam in opt.param_groups: gparam['lr'] = max(lr, 2e-5)
    batch = rng.choices(pos, wpos, k=16) + rng.choices(neg, wneg, k=16)
    xs = []
    for i in batch:
      src = clips[i] if (i not in aug or rng.random() < 0.4) else rng.choice(aug[i])
      xs.append(augment(crop(src, rng, TRAIN_WIN), rng))
    x = torch.from_numpy(np.stack(xs).astype(np.float32)); yb = torch.tensor([float(meta[i]['label']) for i in batch])
    loss = F.binary_cross_entropy_with_logits(net(x), yb)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    with torch.no_grad():
      d = min(0.995, (1 + step) / (10 + step))
      for pe, pn in zip(ema.state_dict().values(), net.state_dict().values()):
        if pe.dtype.is_floating_point: pe.mul_(d).add_(pn, alpha=1 - d)
        else: pe.copy_(pn)
    if step % EVAL_EVERY == 0:
      sc = evaluate(ema, clips, va_eval, max_windows=2); e = eer(sc, yva)
      print(f'step {step} t {spent + time.time() - t0:.0f}s loss {loss.item():.3f} val-EER {e:.3f}', flush=True)
      if e <= best[0]: best = (e, step); torch.save({'net': ema.state_dict(), 'eer': e, 'step': step, 'n_ceps': n_ceps, 'tag': tag}, BEST)
    if time.time() - lastck > 120:
      torch.save({'net': net.state_dict(), 'ema': ema.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0}, CK); lastck = time.time()
  torch.save({'net': net.state_dict(), 'ema': ema.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0}, CK)
  print('done; best validation EER', best[0], 'at step', best[1])
