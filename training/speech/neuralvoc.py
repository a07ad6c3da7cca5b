"""v9 (stop 49): neural vocoders trained HERE, on the training split's bona fide clips only, and copy-synthesis twins of
every training bona fide clip made with them, as extra synthetic training data (train.py SPEECH_TWINS=selfvoc,neuralvoc).

Why: Wang & Yamagishi ("Spoofed training data for speech spoofing countermeasure can be efficiently created using
neural vocoders", ICASSP 2023) train countermeasures on bona fide speech copy-synthesised by several neural vocoders, so
each bona fide source also appears as spoofed and only the vocoder's traces tell the classes apart. Their vocoders ship
in no reachable package; v6's twins (selfvoc.py) use Griffin-Lim instead, which leaves none of the traces a neural
upsampler does. v8 showed the cost of new bona fide sources without synthetic speech of the same sources: the source
became the cue. Here every training source gets neural-vocoder twins of its own.

Two generator families, both mel (80 bands, 0-8 kHz, 1024-point frames, hop 256) to 16 kHz waveform:
- 'hifigan': HiFi-GAN's generator (Kong, Kim & Bae, NeurIPS 2020): transposed-convolution upsampling x8 x8 x4, each
  followed by a multi-receptive-field fusion of dilated residual blocks; small (channels 128-64-32-16).
- 'istft': a Vocos-style generator (Siuzdak, ICLR 2024; iSTFTNet, Kaneko et al., ICASSP 2022): ConvNeXt blocks at the mel
  frame rate predict the log magnitude and phase of a 1024-point STFT, inverted by the iSTFT (no upsampling layers).
Trained without a discriminator (CPU budget) on the multi-resolution STFT loss (Yamamoto, Song & Kim, ICASSP 2020) plus
the mel L1 of HiFi-GAN, 0.5 s segments, batch 8, AdamW 2e-4, one thread.

Usage: SPEECH_DATA=<dir> /usr/bin/python3 neuralvoc.py train <arch> <minutes>
       SPEECH_DATA=<dir> /usr/bin/python3 neuralvoc.py synth <arch>      # D/neuralvoc-<arch>.npz, -aug.npz
       SPEECH_DATA=<dir> /usr/bin/python3 neuralvoc.py merge hifigan istft  # D/neuralvoc.npz, D/neuralvoc-aug.npz
Twins and copies use selfvoc.py's format (audio, offs, src, variant; augment.py's copies), so train.py reads them alike."""
import json, math, os, random, sys, time, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from collections import Counter
from train import split, D
from selfvoc import mel_filterbank, Twins, merge_twins
torch.set_num_threads(1)
N_FFT, HOP, N_MELS, SEG = 1024, 256, 80, 8192
FB = mel_filterbank(N_FFT, N_MELS, 0, 8000)
WIN = torch.hann_window(N_FFT)

def logmel(y):
  """(batch, samples) -> (batch, 80, frames): log of the mel-filtered STFT magnitude, as TTS acoustic models predict it"""
  S = torch.stft(y, N_FFT, HOP, window=WIN, return_complex=True, center=True).abs()
  return torch.log(torch.clamp(FB @ S, min=1e-5))

class ResBlock(nn.Module):
  def __init__(self, ch, k, dil):
    super().__init__()
    self.convs = nn.ModuleList([nn.Conv1d(ch, ch, k, dilation=d, padding=d * (k - 1) // 2) for d in dil])
  def forward(self, x):
    for c in self.convs: x = x + c(F.leaky_relu(x, 0.1))
    return x

class HiFiGAN(nn.Module):
  def __init__(self, ch=128, rates=(8, 8, 4), kernels=(3, 5), dil=(1, 3)):
    super().__init__()
    self.pre = nn.Conv1d(N_MELS, ch, 7, padding=3); self.ups = nn.ModuleList(); self.mrf = nn.ModuleList()
    for r in rates:
      self.ups.append(nn.ConvTranspose1d(ch, ch // 2, 2 * r, r, padding=r // 2)); ch //= 2
      self.mrf.append(nn.ModuleList([ResBlock(ch, k, dil) for k in kernels]))
    self.post = nn.Conv1d(ch, 1, 7, padding=3)
  def forward(self, m):
    x = self.pre(m)
    for up, blocks in zip(self.ups, self.mrf):
      x = up(F.leaky_relu(x, 0.1)); x = sum(b(x) for b in blocks) / len(blocks)
    return torch.tanh(self.post(F.leaky_relu(x, 0.1)))[:, 0]

class ConvNeXt(nn.Module):
  def __init__(self, ch, hidden):
    super().__init__()
    self.dw = nn.Conv1d(ch, ch, 7, padding=3, groups=ch); self.norm = nn.LayerNorm(ch)
    self.pw1 = nn.Linear(ch, hidden); self.pw2 = nn.Linear(hidden, ch)
  def forward(self, x):
    h = self.norm(self.dw(x).transpose(1, 2)); return x + self.pw2(F.gelu(self.pw1(h))).transpose(1, 2)

class ISTFTNet(nn.Module):
  def __init__(self, ch=256, blocks=6):
    super().__init__()
    self.pre = nn.Conv1d(N_MELS, ch, 7, padding=3); self.blocks = nn.Sequential(*[ConvNeXt(ch, 3 * ch) for _ in range(blocks)])
    self.norm = nn.LayerNorm(ch); self.head = nn.Linear(ch, N_FFT + 2)
  def forward(self, m):
    h = self.norm(self.blocks(self.pre(m)).transpose(1, 2)); o = self.head(h).transpose(1, 2)
    mag, ph = torch.exp(torch.clamp(o[:, :N_FFT // 2 + 1], max=6)), o[:, N_FFT // 2 + 1:]
    S = torch.complex(mag * torch.cos(ph), mag * torch.sin(ph))
    return torch.istft(S, N_FFT, HOP, window=WIN, center=True)

ARCHS = {'hifigan': HiFiGAN, 'istft': ISTFTNet}

def mr_stft_loss(y, t):
  """spectral convergence + log magnitude L1 at three resolutions (Yamamoto et al. 2020), scaled to 16 kHz"""
  loss = 0
  for n, h in ((256, 64), (512, 128), (1024, 256)):
    w = torch.hann_window(n); Y = torch.stft(y, n, h, window=w, return_complex=True).abs() + 1e-7
    T = torch.stft(t, n, h, window=w, return_complex=True).abs() + 1e-7
    loss = loss + torch.norm(T - Y) / torch.norm(T) + F.l1_loss(torch.log(Y), torch.log(T))
  return loss / 3

def bona_fide_training(meta):
  return [i for i in split(meta)[0] if meta[i]['label'] == 0]

def train(arch, minutes):
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; meta = json.load(open(f'{D}/meta.json'))
  idx = [i for i in bona_fide_training(meta) if O[i + 1] - O[i] > SEG]; real = [A[O[i]:O[i + 1]] for i in idx]
  # each source weighs 1/sqrt(its clips), as in train.py's sampling, so LibriSpeech or Tortoise do not make the vocoder theirs
  n = Counter(meta[i]['repo'] for i in idx); w = [1 / math.sqrt(n[meta[i]['repo']]) for i in idx]
  torch.manual_seed(1); rng = random.Random(1)
  net = ARCHS[arch](); opt = torch.optim.AdamW(net.parameters(), 2e-4, betas=(0.8, 0.99))
  print(arch, 'params', sum(p.numel() for p in net.parameters()), 'clips', len(real), flush=True)
  CK = f'{D}/neuralvoc-{arch}.pt'; step, spent = 0, 0.0
  if os.path.exists(CK): ck = torch.load(CK); net.load_state_dict(ck['net']); opt.load_state_dict(ck['opt']); step, spent = ck['step'], ck['spent']
  t0 = time.time(); last = t0
  save_ck = lambda: torch.save({'net': net.state_dict(), 'opt': opt.state_dict(), 'step': step, 'spent': spent + time.time() - t0}, CK)
  while spent + time.time() - t0 < minutes * 60:
    xs = []
    for x in rng.choices(real, w, k=8):
      s = rng.randrange(0, len(x) - SEG); y = x[s:s + SEG]; pk = np.abs(y).max(); xs.append(y / pk * rng.uniform(0.3, 0.95) if pk > 0 else y)
    t = torch.from_numpy(np.stack(xs).astype(np.float32)); m = logmel(t)
    y = net(m)[:, :SEG]; y = F.pad(y, (0, SEG - y.shape[1]))
    loss = mr_stft_loss(y, t) + 2 * F.l1_loss(logmel(y), m)
    opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(net.parameters(), 10); opt.step(); step += 1
    if step % 100 == 0: print(json.dumps({'step': step, 't': round(spent + time.time() - t0), 'loss': round(loss.item(), 4)}), flush=True)
    if time.time() - last > 120: save_ck(); last = time.time()
  save_ck()
  print('done', step, 'steps', flush=True)

def synth(arch):
  """one twin per training bona fide clip (the whole clip, mel with an acoustic model's error drawn per clip), then two
  codec/resampling copies of each twin, as selfvoc.py makes them"""
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; meta = json.load(open(f'{D}/meta.json'))
  net = ARCHS[arch](); net.load_state_dict(torch.load(f'{D}/neuralvoc-{arch}.pt')['net']); net.eval()
  made = Twins(); real = bona_fide_training(meta)
  for n, i in enumerate(real):
    x = A[O[i]:O[i + 1]].astype(np.float32); rng = random.Random(7919 * i + len(arch))
    sigma = rng.choice([0.0, 0.0, 0.05, 0.1])
    with torch.no_grad():
      pk0 = np.abs(x).max(); m = logmel(torch.from_numpy(x / pk0 if pk0 > 0 else x)[None])
      if sigma: m = m + sigma * torch.randn(m.shape, generator=torch.Generator().manual_seed(rng.randrange(1 << 30)))
      y = net(m)[0].numpy()[:len(x)]
    y = np.pad(y, (0, len(x) - len(y))).astype(np.float32); pk = np.abs(y).max(); y = y * (pk0 / pk) if pk > 0 else y
    made.add(y, i, f'{arch}:{sigma}', rng)
    if n % 100 == 0: print(n, len(real), flush=True)
  made.save(f'{D}/neuralvoc-{arch}.npz', f'{D}/neuralvoc-{arch}-aug.npz')

if __name__ == '__main__':
  cmd = sys.argv[1]
  if cmd == 'train': train(sys.argv[2], float(sys.argv[3]))
  elif cmd == 'synth': synth(sys.argv[2])
  elif cmd == 'merge': merge_twins([(f'{D}/neuralvoc-{a}.npz', f'{D}/neuralvoc-{a}-aug.npz') for a in sys.argv[2:]], f'{D}/neuralvoc.npz', f'{D}/neuralvoc-aug.npz')
