"""Synthetic-speech detector: LFCC front end inside the graph (Sahidullah et al., Interspeech 2015;
Todisco et al., "Constant Q cepstral coefficients", 2017 for the anti-spoofing use of cepstra) computed
with fixed conv1d DFT kernels -> power -> linear triangular filterbank (matmul) -> log -> DCT (matmul),
then a small CNN. Input: 4 s of 16 kHz mono, peak-normalised (the loader's `waveform` input).
Split (v2, the honest protocol of the stop-23 retrain): whole TTS/vocoder systems held out as an untouched
TEST split, scored once by export.py; the checkpoint is chosen on a VALIDATION split of seen systems and
bona fide speakers/sources that training never sees.
Options (environment; the checkpoint records them, export.py rebuilds the same graph):
- SPEECH_NORM=cmn|cmvn (v4): cepstral mean / mean-variance normalisation over each window (LFCC).
- SPEECH_CHANNEL_AUG=1 (v4): random spectral tilt / EQ and band limits on both classes (channel()).
- SPEECH_FRONTEND=spec (v3 run b): a 128-band log power spectrogram instead of LFCC (LogSpec).
- SPEECH_PAIRS=<free-clip weight> (v3): copy-synthesis PAIR batches (pair_batch()), the flow/IAF family left out of training
  into validation, and the checkpoint chosen on the mean of validation EER and that family's EER.
- SPEECH_SELFVOC=<share> (v6): that share of every batch's synthetic slots drawn from the self-vocoded twins of the training
  bona fide clips (selfvoc.py: D/selfvoc.npz and its codec copies D/selfvoc-aug.npz); validation and test are unchanged.
- SPEECH_TWINS=selfvoc,neuralvoc (v9): the twin files pooled for that share (neuralvoc.py: copy-synthesis by vocoders
  trained here on the training bona fide clips); default selfvoc alone.
- SPEECH_LOSS=ocsoftmax (v11): one-class softmax instead of binary cross-entropy (OneClassHead, Zhang, Jiang and Ni, IEEE
  SPL 2021): bona fide embeddings pulled into a tight cone around one learnt direction, synthetic ones only pushed out of it.
- SPEECH_SOURCE_ADV=<weight> (v12): a source adversary on the bona fide clips (SourceAdversary: the pooled features, through a
  gradient reversal, classify which repository a recording came from), so the features cannot tell corpora apart and a new
  corpus's recordings land where the known ones do. Training only: the exported graph is unchanged.
- SPEECH_MIXSTYLE=<p> (v14): MixStyle (mixstyle()) after the first three stages of the CNN in that share of training batches:
  each clip's per-channel feature statistics are mixed with another clip's of the same class, so a corpus's recording
  style is not a constant the network can learn. Training only: the exported graph is unchanged.
- SPEECH_SWA=<start> (v14): from that share of the time budget on, a running average of the network's weights after every
  step (stochastic weight averaging; SWAD's dense averaging), its BatchNorm statistics re-measured on training batches
  at the end, written as D/swa-<tag>.pt in best-<tag>.pt's format with its validation EER.
- SPEECH_BALANCE=repo (v15): every training repository's bona fide clips drawn equally often (weight 1/n, not 1/sqrt(n)),
  and the self-vocoded twins likewise by their recording's repository, so a few large bona-fide-only corpora (Urdu
  emotional speech, spoken digits, LibriSpeech) no longer stand for the whole bona fide class (group-balanced sampling,
  Idrissi et al., CLeaR 2022). Synthetic clips keep their weights by system.
Usage: SPEECH_DATA=<dir> /usr/bin/python3 train.py [minutes] [tag] [n_ceps]"""
import json, math, os, sys, time, random, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1); torch.manual_seed(0); random.seed(0); np.random.seed(0)
D = os.environ.get('SPEECH_DATA', '/work/data/speech')  # v3: /work/data/speech-v3, v4: /work/data/speech-v4
SR, WIN = 16000, 64000
EVAL_EVERY = int(os.environ.get('EVAL_EVERY', 300))
TRAIN_WIN = 32000  # the CNN pools globally: 2 s crops train it, the service feeds 4 s
# v4 options (environment, read at start; the run's checkpoint records them so export.py rebuilds the same graph):
# SPEECH_NORM=cmn|cmvn normalises the cepstra of each window over time (see LFCC); SPEECH_CHANNEL_AUG=1 adds random
# spectral tilt / EQ and band limits to both classes (see channel()).
NORM = os.environ.get('SPEECH_NORM', '')
CHANNEL_AUG = os.environ.get('SPEECH_CHANNEL_AUG', '') == '1'
FRONTEND = os.environ.get('SPEECH_FRONTEND', 'lfcc')
PAIRS = float(os.environ['SPEECH_PAIRS']) if os.environ.get('SPEECH_PAIRS', '') != '' else None
SELFVOC = float(os.environ.get('SPEECH_SELFVOC', '0') or 0)
TWINS = os.environ.get('SPEECH_TWINS', 'selfvoc').split(',')  # v9: twin files drawn for the SELFVOC share, pooled
LOSS = os.environ.get('SPEECH_LOSS', 'bce')  # v11: 'ocsoftmax' (OneClassHead)
SOURCE_ADV = float(os.environ.get('SPEECH_SOURCE_ADV', '0') or 0)  # v12: the reversal's full strength (SourceAdversary)
MIXSTYLE = float(os.environ.get('SPEECH_MIXSTYLE', '0') or 0)  # v14: share of batches whose feature statistics are mixed
SWA_START = float(os.environ['SPEECH_SWA']) if os.environ.get('SPEECH_SWA', '') != '' else None  # v14: share of the budget
BALANCE = os.environ.get('SPEECH_BALANCE', '')  # v15: 'repo', bona fide repositories (and their twins) drawn equally often
assert BALANCE in ('', 'repo'), 'SPEECH_BALANCE is repo or unset'
# v3: the flow / inverse-autoregressive-flow vocoders, moved out of training into validation wherever published
# (leave-one-family-out validation; one fold, not k-fold)
LEAVE_OUT_FAMILY = {'waveflow', 'clarinet', 'clarinet-gan'}
MIX = 0.3  # v3: share of aligned synthetic pair items replaced by a spliced real/vocoded crop
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

def split(meta, dedupe=True, leave_out=()):
  """train, validation, test indices; systems in leave_out move from training to validation (v3)"""
  tr, va, te = [], [], []
  drop = duplicates(meta) if dedupe else set()
  for i, m in enumerate(meta):
    if i in drop: continue
    if m.get('extra'):  # v7: prepare.py SPEECH_EXTRA=1 sources train only, so validation and test stay v6's clips
      if not (m['label'] == 1 and m['system'] in HELD_OUT_SYSTEMS): tr.append(i)
      continue
    if m['label'] == 1 and m['system'] in HELD_OUT_SYSTEMS: te.append(i); continue
    s = group_split(m['group'])
    if s == 'test':
      if m['label'] == 0: te.append(i)  # seen systems rendered from test sources: dropped
    else: (va if s == 'val' else tr).append(i)
  fam = [i for i in tr if meta[i]['label'] == 1 and meta[i]['system'] in leave_out]
  return [i for i in tr if i not in set(fam)] if fam else tr, va + fam, te

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
  # v7: an extra source's clip is dropped when it is the same recording as any validation or test clip, whatever its label or
  # system (a page may publish a corpus's recording trimmed or resampled): envelopes correlating > 0.9 at some lag ≤ 0.5 s
  held = [i for i in rank if rank[i] > 0]
  for a in (i for i in rank if meta[i].get('extra')):
    for b in held:
      if abs(len(envs[a]) - len(envs[b])) > 100: continue
      n = min(len(envs[a]), len(envs[b])) - 100
      if n < 100: continue
      c = np.correlate(envs[a][:n + 100], envs[b][50:n + 50], 'valid') / n
      if c.max() > 0.9: drop.add(a); break
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

def dft_kernel(n_fft):
  """Hann-windowed DFT as conv1d kernels, cosines then negated sines: (2K, 1, n_fft), K = n_fft // 2 + 1 (in the graph)."""
  n = torch.arange(n_fft).float(); k = torch.arange(n_fft // 2 + 1).float()
  win = 0.5 - 0.5 * torch.cos(2 * math.pi * n / n_fft)
  ang = 2 * math.pi * k[:, None] * n[None, :] / n_fft
  return torch.cat([torch.cos(ang) * win, -torch.sin(ang) * win])[:, None, :]

def power_spectrum(x, kern, hop):
  """(B, T) waveform to its power spectrum (B, K, frames) with dft_kernel's kernels."""
  s = F.conv1d(x[:, None, :], kern, stride=hop); K = kern.shape[0] // 2
  return s[:, :K] ** 2 + s[:, K:] ** 2

class LFCC(nn.Module):
  """LFCC (Sahidullah et al., Interspeech 2015). norm='cmn' subtracts each cepstrum's mean over the window's frames,
  'cmvn' also divides by its standard deviation (cepstral mean / mean-variance normalisation, Viikki & Laurila, Speech
  Communication 1998): a stationary linear channel (microphone, room colouring, a page's EQ) is an additive constant
  in the cepstral domain, so it cancels and cannot serve as a source cue. Deltas are taken after it."""
  def __init__(self, n_fft=512, hop=160, n_filt=60, n_ceps=30, norm=''):  # n_ceps=60 keeps every filter's detail
    super().__init__()
    assert norm in ('', 'cmn', 'cmvn'), norm
    self.norm = norm
    self.register_buffer('kern', dft_kernel(n_fft))
    freqs = torch.linspace(0, SR / 2, n_fft // 2 + 1); edges = torch.linspace(0, SR / 2, n_filt + 2)
    fb = torch.zeros(n_fft // 2 + 1, n_filt)
    for j in range(n_filt):
      lo, c, hi = edges[j], edges[j + 1], edges[j + 2]
      fb[:, j] = torch.clamp(torch.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c)), min=0)
    self.register_buffer('fb', fb)
    m = torch.arange(n_filt).float(); q = torch.arange(n_ceps).float()
    self.register_buffer('dct', torch.cos(math.pi / n_filt * (m[:, None] + 0.5) * q[None, :]) * math.sqrt(2 / n_filt))
    self.hop = hop
  def forward(self, x):  # (B, T)
    p = power_spectrum(x, self.kern, self.hop)  # (B, K, frames)
    lf = torch.log(torch.matmul(p.transpose(1, 2), self.fb) + 1e-7)  # (B, frames, filt)
    c = torch.matmul(lf, self.dct)  # (B, frames, ceps)
    if self.norm:  # per window, over time; written with mean/sqrt so the ONNX graph needs only ReduceMean
      c = c - c.mean(1, keepdim=True)
      if self.norm == 'cmvn': c = c / torch.sqrt((c * c).mean(1, keepdim=True) + 1e-4)
    d = c[:, 2:] - c[:, :-2]  # deltas (central difference)
    c = c[:, 1:-1]
    return torch.cat([c, d], 2).transpose(1, 2)[:, None]  # (B,1,2*ceps,frames)

def block(i, o): return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(2))
class LogSpec(nn.Module):
  """v3 run b: log power spectrogram in the graph: conv1d DFT (Hann 512, hop 160) -> power -> adjacent bins summed in pairs
  (matmul, 256 -> 128 bands of 31.25 Hz up to 8 kHz; DC dropped) -> log. Higher resolution than 30 cepstra."""
  def __init__(self, n_fft=512, hop=160, bands=128):
    super().__init__()
    self.register_buffer('kern', dft_kernel(n_fft))
    K = n_fft // 2 + 1; per = (K - 1) // bands
    pool = torch.zeros(K, bands)
    for j in range(bands): pool[1 + j * per:1 + (j + 1) * per, j] = 1
    self.register_buffer('pool', pool)
    self.hop = hop
  def forward(self, x):
    p = power_spectrum(x, self.kern, self.hop)
    lf = torch.log(torch.matmul(p.transpose(1, 2), self.pool) + 1e-7)  # (B, frames, bands)
    return lf.transpose(1, 2)[:, None]  # (B,1,bands,frames)

class OneClassHead(nn.Module):
  """One-class softmax (Zhang, Jiang and Ni, "One-class learning towards synthetic voice spoofing detection", IEEE SPL 2021):
  a 128-d embedding and a learnt bona fide direction w, both unit length; s = cos(w, x). The loss asks s > M_REAL of bona
  fide and only s < M_FAKE of synthetic speech, so bona fide is compact and any unseen attack falling outside the cone
  scores as synthetic. The graph outputs z = ALPHA·(mid − s), a logit-like score rising with synthesis; the loss is then
  softplus(ALPHA·(M_REAL − mid) + z) for bona fide and softplus(ALPHA·(mid − M_FAKE) − z) for synthetic (ocsoftmax_loss)."""
  ALPHA, M_REAL, M_FAKE = 20.0, 0.9, 0.2  # the paper's values
  def __init__(self, d_in, d_emb=128):
    super().__init__()
    self.emb = nn.Sequential(nn.Dropout(0.3), nn.Linear(d_in, d_emb)); self.w = nn.Parameter(torch.randn(d_emb) * 0.25)
  def forward(self, h):
    s = F.normalize(self.emb(h), dim=1) @ F.normalize(self.w, dim=0)
    return self.ALPHA * (0.5 * (self.M_REAL + self.M_FAKE) - s)[:, None]

def ocsoftmax_loss(z, y):
  a, mid = OneClassHead.ALPHA, 0.5 * (OneClassHead.M_REAL + OneClassHead.M_FAKE)
  return torch.where(y > 0.5, F.softplus(a * (mid - OneClassHead.M_FAKE) - z), F.softplus(a * (OneClassHead.M_REAL - mid) + z)).mean()

class GradientReversal(torch.autograd.Function):
  @staticmethod
  def forward(ctx, h, lam): ctx.lam = lam; return h.view_as(h)
  @staticmethod
  def backward(ctx, g): return -ctx.lam * g, None

class SourceAdversary(nn.Module):
  """Domain-adversarial training (Ganin et al., "Domain-adversarial training of neural networks", JMLR 2016; as a channel
  adversary for spoofing countermeasures, Chen et al., "UR channel-robust synthetic speech detection system for ASVspoof
  2021", ASVspoof 2021 workshop). It classifies a bona fide clip's repository from the network's pooled features; the
  reversed gradient trains the network to make that impossible. v8, v10 and v11 moved recordings of unseen corpora
  towards synthetic: the features were telling corpora apart, and a new corpus fell outside the known ones."""
  def __init__(self, d_in, n_sources):
    super().__init__(); self.mlp = nn.Sequential(nn.Linear(d_in, 128), nn.ReLU(), nn.Linear(128, n_sources))
  def forward(self, h, lam): return self.mlp(GradientReversal.apply(h, lam))

def mixstyle(h, labels, alpha=0.1, eps=1e-6):
  """MixStyle (Zhou, Yang, Qiao & Xiang, "Domain Generalization with MixStyle", ICLR 2021): a feature map's per-channel
  mean and standard deviation over frequency and time carry its recording's style; each clip's are replaced by a Beta(0.1,
  0.1) mix of its own and another clip's. The partner is drawn from the same class (bona fide with bona fide, synthetic
  with synthetic), so a vocoder's stationary traces stay with its class while the corpora's styles are blended."""
  mu = h.mean((2, 3), keepdim=True); sig = (h.var((2, 3), keepdim=True) + eps).sqrt()
  mu, sig = mu.detach(), sig.detach(); normed = (h - mu) / sig
  perm = torch.arange(len(h))
  for cls in (0.0, 1.0):
    idx = (labels == cls).nonzero()[:, 0]
    perm[idx] = idx[torch.randperm(len(idx))]
  lam = torch.distributions.Beta(alpha, alpha).sample((len(h), 1, 1, 1))
  return normed * (lam * sig + (1 - lam) * sig[perm]) + lam * mu + (1 - lam) * mu[perm]

SWA_BN_BATCHES = 100  # v14: training batches (32 crops each) that re-measure the averaged network's BatchNorm statistics
MIXSTYLE_AFTER = (3, 4, 5)  # the CNN's first three stages (stem + pool, 32-, 64-channel blocks); not the last, as in the paper

def reversal_strength(progress):  # Ganin et al.'s schedule: 0 at the start, rising to 1 as training goes on
  return 2 / (1 + math.exp(-10 * progress)) - 1

class Net(nn.Module):
  def __init__(self, n_ceps=30, norm='', frontend='lfcc', loss='bce'):
    super().__init__()
    self.fe = LFCC(n_ceps=n_ceps, norm=norm) if frontend == 'lfcc' else LogSpec(); self.bn = nn.BatchNorm2d(1)
    self.cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2), block(16, 32), block(32, 64), block(64, 96))
    self.head = OneClassHead(96 * 2) if loss == 'ocsoftmax' else nn.Sequential(nn.Dropout(0.3), nn.Linear(96 * 2, 1))
  def features(self, x, mix_labels=None):  # the pooled features the head reads (and v12's source adversary)
    if mix_labels is None: h = self.cnn(self.bn(self.fe(x)))  # (B,96,f,t)
    else:  # v14, training only: MixStyle after the first stages, within class (mix_labels: the batch's labels)
      h = self.bn(self.fe(x))
      for k, layer in enumerate(self.cnn):
        h = layer(h)
        if k in MIXSTYLE_AFTER: h = mixstyle(h, mix_labels)
    h = h.mean(2)
    return torch.cat([h.mean(2), h.amax(2)], 1)
  def forward(self, x):
    return self.head(self.features(x))[:, 0]

def net_from_checkpoint(ck):
  """The evaluation-mode network a best-*.pt checkpoint describes: its options (recorded by train.py) rebuild the same graph."""
  net = Net(ck.get('n_ceps', 30), ck.get('norm', ''), ck.get('frontend', 'lfcc'), ck.get('loss', 'bce')); net.load_state_dict(ck['net'])
  return net.eval()

def load_clips(meta):
  """prepare.py's clips as one array per clip of meta. The npz's arrays are read once each: an npz reads an array from
  disk at every access, so indexing z['audio'] per clip would read the whole corpus per clip."""
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']
  return [A[O[i]:O[i + 1]] for i in range(len(meta))]

def crop(x, rng, n=WIN):
  if len(x) < n: x = np.tile(x, int(np.ceil(n / len(x))))
  s = rng.randrange(0, len(x) - n + 1); y = x[s:s + n].copy()
  pk = np.abs(y).max(); return y / pk if pk > 0 else y

def eer(scores, labels):
  from sklearn.metrics import roc_curve
  fpr, tpr, thr = roc_curve(labels, scores); fnr = 1 - tpr; i = np.nanargmin(np.abs(fnr - fpr))
  return float((fpr[i] + fnr[i]) / 2)

def standardise(s, y):
  """a branch's centre and spread for a fusion (fuse.py, moonshine.py): midpoint of the class means and pooled
  within-class SD of its validation clip logits `s` (labels `y`)"""
  r, f = s[y == 0], s[y == 1]
  return float(0.5 * (r.mean() + f.mean())), float(np.sqrt(0.5 * (r.var() + f.var())))

def equal_fusion(sA, sB, y):
  """the fusion of two branches since v5 (fuse.py, moonshine.py): z = 0.5·(zA − cA)/dA + 0.5·(zB − cB)/dB = kA·zA + kB·zB + k0,
  each branch standardised on its validation clip logits; returns (cA, dA), (cB, dB), (kA, kB, k0)"""
  (cA, dA), (cB, dB) = standardise(sA, y), standardise(sB, y)
  return (cA, dA), (cB, dB), (0.5 / dA, 0.5 / dB, -0.5 * cA / dA - 0.5 * cB / dB)

def fused_graph(path_a, path_b, prefixes, letters, ks, name, producer):
  """two waveform -> logit models in one ONNX graph (fuse.py, moonshine.py): each under its prefix, one shared input
  `waveform`, logit = kA·zA + kB·zB + k0 (`ks`); `letters` name the branches' weights and products (fuse/k<X>, fuse/<x>)"""
  import onnx
  from onnx import helper, numpy_helper, TensorProto
  (pa, pb), (la, lb) = prefixes, letters
  a, b = onnx.compose.add_prefix(onnx.load(path_a), pa), onnx.compose.add_prefix(onnx.load(path_b), pb)
  const = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
  ka, kb, xa, xb, xab = f'fuse/k{la}', f'fuse/k{lb}', f'fuse/{la.lower()}', f'fuse/{lb.lower()}', f'fuse/{la.lower()}{lb.lower()}'
  nodes = [helper.make_node('Identity', ['waveform'], [f'{pa}waveform']), helper.make_node('Identity', ['waveform'], [f'{pb}waveform'])]
  nodes += list(a.graph.node) + list(b.graph.node)
  nodes += [helper.make_node('Mul', [f'{pa}logit', ka], [xa]), helper.make_node('Mul', [f'{pb}logit', kb], [xb]),
            helper.make_node('Add', [xa, xb], [xab]), helper.make_node('Add', [xab, 'fuse/k0'], ['logit'])]
  g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('waveform', TensorProto.FLOAT, ['batch', WIN])],
                        [helper.make_tensor_value_info('logit', TensorProto.FLOAT, ['batch'])],
                        list(a.graph.initializer) + list(b.graph.initializer) + [const(ka, ks[0]), const(kb, ks[1]), const('fuse/k0', ks[2])],
                        value_info=list(a.graph.value_info) + list(b.graph.value_info))
  m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name=producer)
  m.ir_version = 8; onnx.checker.check_model(m, full_check=True); return m

def platt_thresholds(s, y):
  """export.py's rule on validation clip logits `s` (labels `y`): Platt calibration; manipulated where at most 2 % of
  bona fide lie above, authentic where at most 5 % of synthetic lie below"""
  from sklearn.linear_model import LogisticRegression
  lr = LogisticRegression(C=1e4).fit(s[:, None], y); a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
  p = 1 / (1 + np.exp(-(a * s + b)))
  manip = float(max(0.5, np.quantile(p[y == 0], 0.98) + 1e-4)); auth = float(min(0.5, np.quantile(p[y == 1], 0.05) - 1e-4))
  return {'a': round(a, 6), 'b': round(b, 6)}, {'authentic': round(auth, 4), 'manipulated': round(manip, 4)}

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

def channel(y, rng):
  """v4 option: a recording chain drawn independently of the label, so its colouring cannot tell the classes apart (linear
  filtering as channel augmentation, cf. RawBoost, Tak et al., ICASSP 2022).
  Half the crops get a spectral tilt of -3..+3 dB per octave about 1 kHz on top of the 8-point EQ; a fifth are band-limited
  by a low-pass at 3.5-7.5 kHz (as telephone, 8-16 kHz sources and codecs do), raised-cosine edge of 500 Hz."""
  Y = np.fft.rfft(y); f = np.linspace(0, SR / 2, len(Y)); g = np.zeros(len(Y))
  if rng.random() < 0.5:
    g += rng.uniform(-3, 3) * np.log2(np.maximum(f, 62.5) / 1000)
    g += np.interp(np.linspace(0, 7, len(Y)), np.arange(8), [rng.uniform(-6, 6) for _ in range(8)])
  Y = Y * 10 ** (g / 20)
  if rng.random() < 0.2:
    fc = rng.uniform(3500, 7500); Y = Y * np.clip(0.5 + 0.5 * np.cos(np.pi * np.clip((f - fc) / 500, 0, 1)), 0, 1)
  return np.fft.irfft(Y, len(y)).astype(np.float32)

def augment(y, rng, nrng=None):
  """nrng: a numpy Generator for the noise, so two sides of a pair get identical draws (v3); else numpy's global one"""
  if CHANNEL_AUG: y = channel(y, rng)
  r = rng.random()
  if r < 0.3:  # noise at 30-80 dB below peak
    y = y + (nrng.standard_normal(len(y)) if nrng is not None else np.random.randn(len(y))).astype(np.float32) * 10 ** rng.uniform(-4, -1.5)
  elif r < 0.4: y = np.clip(y * rng.uniform(1.2, 3), -1, 1)  # clipping
  if rng.random() < 0.3: y = eq(y, rng)
  if rng.random() < 0.15:  # a band of 0.3-1.5 kHz cut by 20-40 dB (RawBoost-like), so no single band decides
    Y = np.fft.rfft(y); lo = rng.randrange(0, len(Y)); w = int(len(Y) * rng.uniform(0.04, 0.19))
    Y[lo:lo + w] *= 10 ** (-rng.uniform(20, 40) / 20); y = np.fft.irfft(Y, len(y)).astype(np.float32)
  pk = np.abs(y).max(); return y / pk if pk > 0 else y

def cut(x, start, n=TRAIN_WIN):
  """n samples of x from start (tiled if x is short, zero where start runs off either end)"""
  if len(x) < n: x = np.tile(x, int(np.ceil(n / len(x))) + 1)
  y = np.zeros(n, np.float32); a = max(0, start); b = min(len(x), start + n)
  if b > a: y[a - start:b - start] = x[a:b]
  return y

def peak(y):
  pk = np.abs(y).max(); return (y / pk).astype(np.float32) if pk > 0 else y

def splice(real, syn, rng):
  """v3 segment mixing (as Self-Blended Images blend a face with itself, Shiohara & Yamasaki, CVPR 2022): the real crop with
  0.3-1.2 s of the aligned synthetic crop spliced in where the real one has speech energy, gain-matched, 10 ms crossfades"""
  n = len(real); L = int(rng.uniform(0.3, 1.2) * SR)
  fr = np.sqrt((real[:n // 160 * 160].reshape(-1, 160) ** 2).mean(1)); loud = np.where(fr > np.median(fr))[0]
  c = int(rng.choice(list(loud))) * 160 if len(loud) else rng.randrange(0, n)
  a = int(np.clip(c - L // 2, 0, n - L)); b = a + L
  g = math.sqrt((real[a:b] ** 2).mean() + 1e-10) / math.sqrt((syn[a:b] ** 2).mean() + 1e-10)
  w = np.zeros(n, np.float32); w[a:b] = 1; f = 160
  w[a:a + f] = np.linspace(0, 1, f); w[b - f:b] = np.linspace(1, 0, f)
  return (real * (1 - w) + syn * g * w).astype(np.float32)

def val_metrics(meta, va, sc, pairs, partner_scores=None):
  """v3's criterion: mean of validation EER and the left-out family's EER against validation bona fide; with partner scores
  also the source-free paired accuracy (a synthetic clip scored above its own aligned recording)"""
  y = np.array([meta[i]['label'] for i in va]); s = np.asarray(sc)
  fam = np.array([meta[i]['label'] == 1 and meta[i]['system'] in LEAVE_OUT_FAMILY for i in va])
  real = y == 0
  e_all = eer(s, y); e_fam = eer(np.r_[s[real], s[fam]], np.r_[np.zeros(real.sum()), np.ones(fam.sum())])
  out = {'eer': e_all, 'eerFamily': e_fam, 'criterion': 0.5 * (e_all + e_fam)}
  if partner_scores is not None:
    wins = [float(s[k] > partner_scores[pairs[str(i)][0]]) for k, i in enumerate(va) if y[k] == 1 and str(i) in pairs and pairs[str(i)][0] in partner_scores]
    out['pairedAccuracy'] = float(np.mean(wins)) if wins else None; out['pairs'] = len(wins)
  return out

def add_copies(aug, path, base=0):
  """augment.py's codec copies from `path` into aug: clip (its index + base) -> {copy k: (samples, first sample in the clip)}.
  augment.py before v3 wrote neither k nor start. Each array is read from the npz once (it reads an array at every access)."""
  z = np.load(path); A, O, S = z['audio'], z['offs'], z['src']
  K = z['k'] if 'k' in z.files else None; ST = z['start'] if 'start' in z.files else None
  for j, s in enumerate(S):
    d = aug.setdefault(base + int(s), {}); d[int(K[j]) if K is not None else len(d)] = (A[O[j]:O[j + 1]], int(ST[j]) if ST is not None else 0)
  return aug

class PairSampler:
  """v3 batches (32): 12 synthetic clips each with a bona fide partner of the same source -- 6 with the aligned recording
  (copy-synthesis pair from pairs.json: same crop, same codec copy, same noise/EQ/clipping, so only the synthesis differs;
  with probability MIX the synthetic side is the real crop with a vocoded segment spliced in), 6 (mostly TTS pages) with a
  bona fide clip of the same group (speaker/case) -- plus 8 FREE clips (v2's weighted sampling), weighted free_w in the loss.
  In a pair, source identity carries no label."""
  def __init__(self, meta, tr, clips, aug, pairs, pos, neg, free_w):
    trs = set(tr); self.meta, self.clips, self.aug, self.pos, self.neg, self.free_w = meta, clips, aug, pos, neg, free_w
    self.real_by_group = {}
    for i in tr:
      if meta[i]['label'] == 0: self.real_by_group.setdefault(meta[i]['group'], []).append(i)
    self.aligned = {i: pairs[str(i)] for i in tr if meta[i]['label'] == 1 and str(i) in pairs and pairs[str(i)][0] in trs}
    pairable = [i for i in tr if meta[i]['label'] == 1 and (i in self.aligned or meta[i]['group'] in self.real_by_group)]
    # half of the pair slots go to aligned pairs, half to group pairs; each weighted 1/sqrt(clips of its system) in its half
    self.al = [i for i in pairable if i in self.aligned]; self.gr = [i for i in pairable if i not in self.aligned]
    self.w_al, self.w_gr = self.sysw(self.al), self.sysw(self.gr)
    print(f'pairable synthetic {len(pairable)}, aligned {len(self.aligned)} ({len({v[0] for v in self.aligned.values()})} recordings)', flush=True)
    print('aligned pairs by system', json.dumps({s: sum(1 for i in self.aligned if meta[i]['system'] == s) for s in sorted({meta[i]['system'] for i in self.aligned})}), flush=True)
  def sysw(self, idx):
    n = {}
    for i in idx: n[self.meta[i]['system']] = n.get(self.meta[i]['system'], 0) + 1
    return [1 / math.sqrt(n[self.meta[i]['system']]) for i in idx]
  def src(self, i, k):  # the clip or its codec copy k, and the copy's start in the clip
    return self.aug[i][k] if k is not None and k in self.aug.get(i, {}) else (self.clips[i], 0)
  def batch(self, rng):
    xs, ys, wts, aug = [], [], [], self.aug
    def add(x, sd): xs.append(augment(peak(x), random.Random(sd), np.random.default_rng(sd)))
    for s in rng.choices(self.al, self.w_al, k=6) + rng.choices(self.gr, self.w_gr, k=6):
      k = None if rng.random() < 0.4 else rng.randrange(2)
      sd = rng.randrange(1 << 30)
      if s in self.aligned:
        r, lag, _ = self.aligned[s]
        if k is not None and k in aug.get(s, {}) and k in aug.get(r, {}): (xr, str_), (xsy, sts) = aug[r][k], aug[s][k]  # same codec chain
        else: (xr, str_), (xsy, sts) = (self.clips[r], 0), (self.clips[s], 0)
        rel = lag + str_ - sts  # syn_copy[u + rel] ~ real_copy[u]
        o = rng.randrange(0, max(1, len(xr) - TRAIN_WIN + 1))
        cr, cs = cut(xr, o), cut(xsy, o + rel)
        if rng.random() < MIX: cs = splice(cr, cs, rng)
      else:
        r = rng.choice(self.real_by_group[self.meta[s]['group']])
        xr, _ = self.src(r, k); xsy, _ = self.src(s, k)
        cr = cut(xr, rng.randrange(0, max(1, len(xr) - TRAIN_WIN + 1))); cs = cut(xsy, rng.randrange(0, max(1, len(xsy) - TRAIN_WIN + 1)))
      add(cr, sd); add(cs, sd); ys += [0.0, 1.0]; wts += [1.0, 1.0]
    for i in rng.choices(*self.pos, k=4) + rng.choices(*self.neg, k=4):
      k = None if rng.random() < 0.4 else rng.randrange(2)
      x, _ = self.src(i, k); sd = rng.randrange(1 << 30)
      add(cut(x, rng.randrange(0, max(1, len(x) - TRAIN_WIN + 1))), sd); ys.append(float(self.meta[i]['label'])); wts.append(self.free_w)
    return torch.from_numpy(np.stack(xs)), torch.tensor(ys), torch.tensor(wts)

if __name__ == '__main__':
  minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 12
  tag = sys.argv[2] if len(sys.argv) > 2 else 'a'  # one run per core: train.py 40 a 30 & train.py 40 b 60
  n_ceps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
  print('options: norm', NORM or 'none', '| channel augmentation', CHANNEL_AUG, '| front end', FRONTEND, '| pairs', PAIRS, '| self-vocoded share', SELFVOC, '| loss', LOSS, '| source adversary', SOURCE_ADV, '| mixstyle', MIXSTYLE, '| swa from', SWA_START, '| balance', BALANCE or 'sqrt', flush=True)
  CK, BEST, LOG = f'{D}/ckpt-{tag}.pt', f'{D}/best-{tag}.pt', f'{D}/log-{tag}.jsonl'
  seed = int.from_bytes(tag.encode(), 'little') % 1000; torch.manual_seed(seed)
  meta = json.load(open(f'{D}/meta.json')); clips = load_clips(meta)
  aug = add_copies({}, f'{D}/aug.npz')
  pairs = json.load(open(f'{D}/pairs.json')) if PAIRS is not None else {}
  tr, va, te = split(meta, leave_out=LEAVE_OUT_FAMILY if PAIRS is not None else ())
  ytr = np.array([meta[i]['label'] for i in tr]); yva = np.array([meta[i]['label'] for i in va])
  print('train', len(tr), 'real', int((ytr == 0).sum()), '| val', len(va), 'real', int((yva == 0).sum()), '| test (not read here)', len(te), flush=True)
  net = Net(n_ceps, NORM, FRONTEND, LOSS); print('params', sum(p.numel() for p in net.parameters() if p.requires_grad))
  ema = Net(n_ceps, NORM, FRONTEND, LOSS); ema.load_state_dict(net.state_dict()); [p.requires_grad_(False) for p in ema.parameters()]
  bona_sources = sorted({meta[i]['repo'] for i in tr if meta[i]['label'] == 0})
  adversary = SourceAdversary(96 * 2, len(bona_sources)) if SOURCE_ADV else None
  if adversary: print('source adversary over', len(bona_sources), 'bona fide repositories', flush=True)
  opt = torch.optim.AdamW(list(net.parameters()) + (list(adversary.parameters()) if adversary else []), 1e-3, weight_decay=1e-3)
  rng = random.Random(seed if PAIRS is not None else 0); step = 0; best = (9.0, None); t0 = time.time(); spent = 0.0
  adv_hits = []  # the adversary's accuracy on recent batches' bona fide clips (chance: about 1 / sources)
  swa = None  # v14: the running weight average (torch.optim.swa_utils.AveragedModel), from SWA_START of the budget on
  if os.path.exists(CK):
    ck = torch.load(CK); net.load_state_dict(ck['net']); ema.load_state_dict(ck['ema']); opt.load_state_dict(ck['opt']); step = ck['step']; best = ck['best']; spent = ck['spent']
    if adversary: adversary.load_state_dict(ck['adversary'])
    if SWA_START is not None and 'swa' in ck: swa = torch.optim.swa_utils.AveragedModel(net); swa.load_state_dict(ck['swa'])
    if PAIRS is not None: rng = random.Random(seed + step)
  # balanced batches; within a class a clip's weight is 1/sqrt(clips of its system or bona fide source), so 425 Tortoise
  # clips or 251 LibriSpeech files count like sqrt(n) rather than n; SPEECH_BALANCE=repo (v15) weighs bona fide 1/n per source
  def weighted(idx, key, balanced=False):
    n = {}
    for i in idx: n[key(meta[i])] = n.get(key(meta[i]), 0) + 1
    return idx, [1 / n[key(meta[i])] if balanced else 1 / math.sqrt(n[key(meta[i])]) for i in idx]
  pos, wpos = weighted([i for i in tr if meta[i]['label'] == 1], lambda m: m['system'])
  twins, twin_src = [], []  # v6: indices (after meta's) of the self-vocoded twins, drawn for SELFVOC of the synthetic slots
  for name in (TWINS if SELFVOC else []):  # v9: the twin files pooled (selfvoc: Griffin-Lim, neuralvoc: vocoders trained here)
    sv = np.load(f'{D}/{name}.npz')
    assert set(sv['src'].tolist()) <= {i for i in tr if meta[i]['label'] == 0}, 'twins of training bona fide only'
    base = len(clips); VA, VO = sv['audio'], sv['offs']
    clips += [VA[VO[j]:VO[j + 1]] for j in range(len(sv['src']))]; twins += list(range(base, len(clips))); twin_src += sv['src'].tolist()
    add_copies(aug, f'{D}/{name}-aug.npz', base)
    print(name, 'twins', len(sv['src']), 'of', len(set(sv['src'].tolist())), 'training bona fide clips', flush=True)
  n_twins = round(16 * SELFVOC)
  neg, wneg = weighted([i for i in tr if meta[i]['label'] == 0], lambda m: m['repo'], BALANCE == 'repo')
  wtwins = None  # twins drawn uniformly, or (v15) each weighing what its recording weighs, so every repository's twins equally
  if BALANCE == 'repo':
    _, wtwins = weighted(twin_src, lambda m: m['repo'], True)
    print('balanced over', len({meta[i]['repo'] for i in twin_src}), 'bona fide repositories (twins too)', flush=True)
  sampler = PairSampler(meta, tr, clips, aug, pairs, (pos, wpos), (neg, wneg), PAIRS) if PAIRS is not None else None
  # validation clips (scored with up to 2 windows during training; export.py scores 8), and for pair runs the aligned bona
  # fide partners of its synthetic clips (for the paired accuracy)
  vpart = sorted({pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs} - set(va))
  def draw_batch(rng):  # 16 synthetic (twins among them) and 16 bona fide training crops, augmented; their labels
    batch = rng.choices(pos, wpos, k=16 - n_twins) + rng.choices(twins, wtwins, k=n_twins) + rng.choices(neg, wneg, k=16)
    xs = []
    for i in batch:
      src = clips[i] if (i not in aug or rng.random() < 0.4) else rng.choice(list(aug[i].values()))[0]
      xs.append(augment(crop(src, rng, TRAIN_WIN), rng))
    return batch, torch.from_numpy(np.stack(xs).astype(np.float32)), torch.tensor([1.0 if i >= len(meta) else float(meta[i]['label']) for i in batch])
  lastck = time.time()
  save_ck = lambda: torch.save({'net': net.state_dict(), 'ema': ema.state_dict(), 'opt': opt.state_dict(), 'step': step, 'best': best, 'spent': spent + time.time() - t0,
                                **({'adversary': adversary.state_dict()} if adversary else {}), **({'swa': swa.state_dict()} if swa else {})}, CK)
  options = {'n_ceps': n_ceps, 'norm': NORM, 'channelAug': CHANNEL_AUG, 'frontend': FRONTEND, 'pairs': PAIRS, 'selfvoc': SELFVOC, 'twins': TWINS,
              'loss': LOSS, 'sourceAdversary': SOURCE_ADV, 'mixstyle': MIXSTYLE, 'balance': BALANCE, 'tag': tag}  # what a checkpoint records of the run
  while spent + (time.time() - t0) < minutes * 60:
    progress = min(1.0, (spent + time.time() - t0) / (minutes * 60))  # share of the time budget used
    lr = 1e-3 * 0.5 * (1 + math.cos(math.pi * progress))  # cosine over the budget
    for gparam in opt.param_groups: gparam['lr'] = max(lr, 2e-5)
    if sampler:
      x, yb, wb = sampler.batch(rng); zb = net(x)
      bce = (F.binary_cross_entropy_with_logits(zb, yb, reduction='none') * wb).sum() / wb.sum()
      loss = bce + 0.5 * F.softplus(1 - (zb[1:24:2] - zb[0:24:2])).mean()  # each pair's synthetic side above its bona fide side
    else:
      batch, x, yb = draw_batch(rng)
      h = net.features(x, yb if MIXSTYLE and float(torch.rand(())) < MIXSTYLE else None); zb = net.head(h)[:, 0]
      loss = ocsoftmax_loss(zb, yb) if LOSS == 'ocsoftmax' else F.binary_cross_entropy_with_logits(zb, yb)
      if adversary:
        bona = [k for k, i in enumerate(batch) if i < len(meta) and meta[i]['label'] == 0]
        repo_labels = torch.tensor([bona_sources.index(meta[batch[k]]['repo']) for k in bona])
        lam = SOURCE_ADV * reversal_strength(progress)
        logits = adversary(h[bona], lam); loss = loss + F.cross_entropy(logits, repo_labels)
        adv_hits = (adv_hits + [float((logits.argmax(1) == repo_labels).float().mean())])[-EVAL_EVERY:]
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if SWA_START is not None and progress >= SWA_START:
      if swa is None: swa = torch.optim.swa_utils.AveragedModel(net)
      swa.update_parameters(net)
    with torch.no_grad():
      d = min(0.995, (1 + step) / (10 + step))
      for pe, pn in zip(ema.state_dict().values(), net.state_dict().values()):
        if pe.dtype.is_floating_point: pe.mul_(d).add_(pn, alpha=1 - d)
        else: pe.copy_(pn)
    if step % EVAL_EVERY == 0:
      sc = evaluate(ema, clips, va + vpart, max_windows=2)
      if sampler:
        psc = {i: float(v) for i, v in zip(vpart, sc[len(va):])}; psc.update({i: float(v) for i, v in zip(va, sc[:len(va)]) if meta[i]['label'] == 0})
        vm = val_metrics(meta, va, sc[:len(va)], pairs, psc)
      else: vm = {'eer': eer(sc, yva)}; vm['criterion'] = vm['eer']
      rec = {'step': step, 't': round(spent + time.time() - t0), 'loss': round(loss.item(), 4), **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in vm.items()}}
      if adversary: rec['sourceAccuracy'] = round(float(np.mean(adv_hits)), 4)
      print(json.dumps(rec), flush=True); open(LOG, 'a').write(json.dumps(rec) + '\n')
      if vm['criterion'] <= best[0]:
        best = (vm['criterion'], step)
        torch.save({'net': ema.state_dict(), 'eer': vm['eer'], 'criterion': vm['criterion'], 'val': vm, 'step': step, **options}, BEST)
    if time.time() - lastck > 120: save_ck(); lastck = time.time()
  save_ck()
  print('done; best validation criterion', best[0], 'at step', best[1], flush=True)
  if swa is not None:  # v14: averaged weights have no BatchNorm statistics of their own; measure them on training batches
    bn_rng = random.Random(seed + 1); avg = swa.module
    torch.optim.swa_utils.update_bn([draw_batch(bn_rng)[1] for _ in range(SWA_BN_BATCHES)], avg)
    sc = evaluate(avg, clips, va, max_windows=2); e = eer(sc, yva)
    torch.save({'net': avg.state_dict(), 'eer': e, 'criterion': e, 'val': {'eer': e, 'criterion': e}, 'step': step, **options,
                'swa': {'start': SWA_START, 'averaged': int(swa.n_averaged), 'bnBatches': SWA_BN_BATCHES}}, f'{D}/swa-{tag}.pt')
    print(json.dumps({'swa': True, 'step': step, 'averaged': int(swa.n_averaged), 'eer': round(e, 4)}), flush=True)
