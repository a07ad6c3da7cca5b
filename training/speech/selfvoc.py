"""v6 (stop 45): self-vocoded twins of every TRAINING bona fide clip, made without any learned weights, as extra synthetic
training data (train.py SPEECH_SELFVOC).

Why: v1-v5 separate the *sources* they were trained on (speaker, corpus, recording chain) better than they separate synthesis
from recording: an unseen source's bona fide clips get an offset of their own (training/speech/MODEL_CARD.md, v3-v5 "What it
shows"). Here every bona fide training source also appears as synthetic, rendered through the bottleneck all mel-spectrogram
vocoders share, so its source cannot tell the classes apart. This is copy synthesis with a vocoder that needs no weights
(the neural vocoders that Wang & Yamagishi, ICASSP 2023, use to make spoofed training data this way ship in no reachable
package).

The vocoder: magnitude STFT -> mel filterbank (as TTS acoustic models predict it: 80 bands up to 7.6 or 8 kHz, a 512 or
1024-point frame with a hop of a quarter) with small log-domain noise (an acoustic model's prediction error) -> the
filterbank's pseudo-inverse back to a linear magnitude -> phase:
- 'gl' (3 in 4): fast Griffin-Lim (Griffin & Lim, IEEE TASSP 1984; momentum 0.99, Perraudin, Balazs & Sondergaard, WASPAA
  2013), 16-64 iterations from a random phase, the vocoder of Tacotron 1;
- 'mel-phase' (1 in 4): the recording's own phase on the mel-smoothed magnitude, so the fine spectral detail the mel bands
  lose is the only difference from the recording.
Two twins per clip, each with its own draws (seeded per clip); the output keeps the source's length and peak.
Then two codec/resampling copies of each twin, as augment.py makes them for every training clip.
Writes D/selfvoc.npz (audio, offs, src = the bona fide clip's index in meta.json, variant) and D/selfvoc-aug.npz
(augment.py's format; src = the twin's index in selfvoc.npz).
Usage: SPEECH_DATA=<dir> /usr/bin/python3 selfvoc.py [part nparts | merge nparts]"""
import json, math, os, random, sys, numpy as np, torch
from train import split, D, SR
from augment import chain, save, L8
torch.set_num_threads(1)

def mel_filterbank(n_fft, n_mels, fmin, fmax):
  """(n_mels, n_fft // 2 + 1) triangles on the HTK mel scale, each of unit area (Slaney's normalisation)"""
  mel = lambda f: 2595 * np.log10(1 + f / 700); hz = lambda m: 700 * (10 ** (m / 2595) - 1)
  edges = hz(np.linspace(mel(fmin), mel(fmax), n_mels + 2)); freqs = np.linspace(0, SR / 2, n_fft // 2 + 1)
  fb = np.zeros((n_mels, len(freqs)))
  for j in range(n_mels):
    lo, c, hi = edges[j:j + 3]
    fb[j] = np.maximum(0, np.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c))) * 2 / (hi - lo)
  return torch.from_numpy(fb).float()

def vocode(x, rng):
  """one self-vocoded twin of x (float32 16 kHz) and the draws that made it"""
  n_fft = rng.choice([512, 1024]); hop = n_fft // 4; fmax = rng.choice([7600, 8000]); fmin = rng.choice([0, 55])
  variant = 'gl' if rng.random() < 0.75 else 'mel-phase'; iters = rng.choice([16, 32, 64]); sigma = rng.choice([0.0, 0.05, 0.1])
  win = torch.hann_window(n_fft); t = torch.from_numpy(x.astype(np.float32))
  stft = lambda y: torch.stft(y, n_fft, hop, window=win, return_complex=True)
  istft = lambda S: torch.istft(S, n_fft, hop, window=win, length=len(x))
  S = stft(t); mag = S.abs()
  fb = mel_filterbank(n_fft, 80, fmin, fmax)
  logmel = torch.log(torch.clamp(fb @ mag, min=1e-5))
  g = torch.Generator().manual_seed(rng.randrange(1 << 30))
  if sigma: logmel = logmel + sigma * torch.randn(logmel.shape, generator=g)
  lin = torch.clamp(torch.linalg.pinv(fb) @ torch.exp(logmel), min=0)
  if variant == 'mel-phase':
    y = istft(lin * torch.exp(1j * torch.angle(S)))
  else:
    angles = torch.exp(2j * math.pi * torch.rand(lin.shape, generator=g)); tprev = torch.zeros_like(angles); m = 0.99
    for _ in range(iters):
      rebuilt = stft(istft(lin * angles))
      angles = rebuilt - tprev * (m / (1 + m)); angles = angles / (angles.abs() + 1e-16); tprev = rebuilt
    y = istft(lin * angles)
  y = y.numpy().astype(np.float32); pk, pk0 = np.abs(y).max(), np.abs(x).max()
  return (y * (pk0 / pk) if pk > 0 else y), f'{variant}:{n_fft}:{fmin}-{fmax}:{iters if variant == "gl" else 0}:{sigma}'

class Twins:
  """twins as they are made, each with two of augment.py's codec/resampling copies, in the format train.py reads
  (D/<name>.npz: audio, offs, src = the bona fide clip's index in meta.json, variant; D/<name>-aug.npz: augment.py's)"""
  def __init__(self): self.audio, self.src, self.variants, self.copies, self.copy_src, self.ks, self.starts = [], [], [], [], [], [], []
  def add(self, y, i, variant, rng):
    j = len(self.audio); self.audio.append(y); self.src.append(i); self.variants.append(variant)
    for k in range(2):  # with augment.py's 8 s crop rule
      st = rng.randrange(0, len(y) - L8) if len(y) > L8 else 0
      c, _ = chain(y[st:st + L8], rng)
      if c is not None: self.copies.append(c); self.copy_src.append(j); self.ks.append(k); self.starts.append(st)
  def save(self, path, aug_path):
    np.savez(path, audio=np.concatenate(self.audio), offs=np.concatenate([[0], np.cumsum([len(a) for a in self.audio])]), src=np.array(self.src), variant=np.array(self.variants))
    save(aug_path, self.copies, self.copy_src, self.ks, self.starts)
    print('twins', len(self.audio), 'copies', len(self.copies))

def merge_twins(parts, path, aug_path):
  """[(twins .npz, copies .npz)] written separately -> one pair; each copy's src moves with its twin's new index"""
  tw = [np.load(a) for a, _ in parts]; ag = [np.load(b) for _, b in parts]
  base = np.cumsum([0] + [len(p['src']) for p in tw])[:-1]
  lens = np.concatenate([np.diff(p['offs']) for p in tw])
  np.savez(path, audio=np.concatenate([p['audio'] for p in tw]), offs=np.concatenate([[0], np.cumsum(lens)]),
           src=np.concatenate([p['src'] for p in tw]), variant=np.concatenate([p['variant'] for p in tw]))
  alens = np.concatenate([np.diff(p['offs']) for p in ag])
  np.savez(aug_path, audio=np.concatenate([p['audio'] for p in ag]), offs=np.concatenate([[0], np.cumsum(alens)]),
           src=np.concatenate([p['src'] + b for p, b in zip(ag, base)]), k=np.concatenate([p['k'] for p in ag]), start=np.concatenate([p['start'] for p in ag]))
  print('twins', len(lens), 'copies', len(alens))

if __name__ == '__main__':
  if sys.argv[1:2] == ['merge']:
    n = int(sys.argv[2]); merge_twins([(f'{D}/selfvoc-part{p}.npz', f'{D}/selfvoc-aug-part{p}.npz') for p in range(n)], f'{D}/selfvoc.npz', f'{D}/selfvoc-aug.npz')
    sys.exit()
  part, nparts = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (0, 1)
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; meta = json.load(open(f'{D}/meta.json'))
  tr = split(meta)[0]
  real = [i for i in tr if meta[i]['label'] == 0]
  made = Twins()
  for n, i in enumerate(real):
    if n % nparts != part: continue
    x = A[O[i]:O[i + 1]]
    for t in range(2):
      rng = random.Random(i * 2 + t)
      y, v = vocode(x, rng)
      made.add(y, i, v, rng)
    if n % 50 == part: print(n, len(real), flush=True)
  suffix = f'-part{part}' if nparts > 1 else ''
  made.save(f'{D}/selfvoc{suffix}.npz', f'{D}/selfvoc-aug{suffix}.npz')
