"""Synthetic-speech detector: LFCC front end inside the graph (Sahidullah et al., Interspeech 2015;
Todisco et al., "Constant Q cepstral coefficients", 2017 for the anti-spoofing use of cepstra) computed
with fixed conv1d DFT kernels -> power -> linear triangular filterbank (matmul) -> log -> DCT (matmul),
then a small CNN. Input: 4 s of 16 kHz mono, peak-normalised (the loader's `waveform` input).
Split: whole TTS/vocoder families held out for validation (EER measured only on them), bona fide
speakers/sources apart. Usage: /usr/bin/python3 train.py [minutes]"""
import json, math, os, sys, time, random, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1); torch.manual_seed(0); random.seed(0); np.random.seed(0)
D = '/work/data/speech'; CK = f'{D}/ckpt.pt'
SR, WIN = 16000, 64000
TRAIN_WIN = 32000  # the CNN pools globally: 2 s crops train it, the service feeds 4 s
HELD_OUT_FAMILIES = {'autoregressive-flow', 'e2e', 'diffusion'}  # waveglow, wavenet | vits, jets, naturalspeech | naturalspeech2, fastdiff
VAL_GROUPS = {'styletts-VCTK', 'styletts-LibriTTS', 'hifigan-ss'}

def is_val_group(g):
  if g in VAL_GROUPS: return True
  return g.startswith('librispeech-') and int(g.split('-')[1]) % 5 == 0  # a fifth of LibriSpeech speakers

def split(meta):
  tr, va = [], []
  for i, m in enumerate(meta):
    if m['label'] == 1 and m['family'] in HELD_OUT_FAMILIES: va.append(i)
    elif is_val_group(m['group']): (va if m['label'] == 0 else []).append(i)  # seen systems on val sources: dropped
    else: tr.append(i)
  return tr, va

class LFCC(nn.Module):
  def __init__(self, n_fft=512, hop=160, n_filt=60, n_ceps=30):
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
  def __init__(self):
    super().__init__()
    self.fe = LFCC(); self.bn = nn.BatchNorm2d(1)
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

def windows(x, n=WIN):  # deterministic evaluation windows like the service: up to 8 windows
  if len(x) < n: x = np.concatenate([x, np.zeros(n - len(x), np.float32)])
  c = max(1, min(8, len(x) // n)); st = (len(x) - n) / (c - 1) if c > 1 else 0
  out = []
  for w in range(c):
    y = x[int(round(w * st)):int(round(w * st)) + n].copy(); pk = np.abs(y).max(); out.append(y / pk if pk > 0 else y)
  return np.stack(out)

def evaluate(net, clips, idx):
  net.eval(); sc = []
  with torch.no_grad():
    for i in idx: sc.append(float(net(torch.from_numpy(windows(clips[i]))).mean()))
  net.train(); return np.array(sc)

if __name__ == '__main__':
  minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 12
  z = np.load(f'{D}/clips.npz'); meta = json.load(open(f'{D}/meta.json'))
  A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  a = np.load(f'{D}/aug.npz'); aug = {}; AA, AO = a['audio'], a['offs']
  for j, s in enumerate(a['src']): aug.setdefault(int(s), []).append(AA[AO[j]:AO[j + 1]])
  tr, va = split(meta); ytr = np.array([meta[i]['label'] for i in tr]); yva = np.array([meta[i]['label'] for i in va])
  print('train', len(tr), 'real', int((ytr == 0).sum()), '| val', len(va), 'real', int((yva == 0).sum()), flush=True)
  net = Net(); print('params', sum(p.numel() for p in net.parameters() if p.requires_grad))
  opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=1e-3)
  rng = random.Random(0); step = 0; best = (1.0, None); t0 = time.time(); spent = 0.0
  if os.path.exists(CK):
    ck = torch.load(CK); net.load_state_dict(ck['net']); opt.load_state_dict(ck['opt']); step = ck['step']; best = ck['best']; spent = ck['spent']
  pos = [i for i in tr if meta[i]['label'] == 1]; neg = [i for i in tr if meta[i]['label'] == 0]
  lastck = time.time()
  while spent + (time.time() - t0) < minutes * 60:
    batch = [rng.choice(pos) for _ in range(16)] + [rng.choice(neg) for _ in range(16)]  # balanced
    xs = []
    for i in batch:
      src = clips[i] if (i not in aug or rng.random() < 0.4) else rng.choice(aug[i])
      y = crop(src, rng, TRAIN_WIN)
      r = rng.random()
      if r < 0.3: y = y + np.random.randn(len(y)).astype(np.float32) * 10 ** rng.uniform(-4, -1.5)  # noise at 30-80 dB below peak
      elif r < 0.4: y = np.clip(y * rng.uniform(1.2, 3), -1, 1)  # clipping
      pk = np.abs(y).max(); y = y / pk if pk > 0 else y
      xs.append(y)
    x = torch.from_numpy(np.stack(xs).astype(np.float32)); yb = torch.tensor([float(meta[i]['label']) for i in batch])
    loss = F.binary_cross_entropy_with_logits(net(x), yb)
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 50 == 0:
      sc = evaluate(net, clips, va); e = eer(sc, yva)
      print(f'step {step} t {spent + time.time() - t0:.0f}s loss {loss.item():.3f} val-EER {e:.3f}', flush=True)
      if e <= best[0]: best = (e, {k: v.clone() for k, v in net.state_dict().items()}); torch.save({'net': best[1], 'eer': e, 'step': step}, f'{D}/best.pt')
    if time.time() - lastck > 120:
      torch.save({'net': net.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0}, CK); lastck = time.time()
  torch.save({'net': net.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0}, CK)
  print('done; best held-out EER', best[0])
