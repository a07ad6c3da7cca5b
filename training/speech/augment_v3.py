"""v3: codec / resampling copies (augment.py's chains) of the TRAINING clips only (train_v3.split_v3), two per clip,
8 s each, with copy k of an aligned copy-synthesis pair made IDENTICALLY for both sides: the bona fide clip's chain,
bitrate and crop (shifted by the pair's lag) are reused for every synthetic rendering of it, so a pair still differs
only in its synthesis. Writes D/aug.npz (audio, offs, src, k, start). Usage: augment_v3.py [part nparts] (run the
parts in parallel, then `augment_v3.py merge nparts`)."""
import json, os, random, subprocess, sys, numpy as np
os.environ.setdefault('SPEECH_DATA', '/work/data/speech-v3')
FF = '/work/main/node_modules/@ffmpeg-installer/linux-x64/ffmpeg'
D = os.environ['SPEECH_DATA']
L8 = 8 * 16000
CHAINS = [
  ('mp3', ['-c:a', 'libmp3lame', '-b:a', '{b}k'], [32, 64, 128], 'mp3'),
  ('aac', ['-c:a', 'aac', '-b:a', '{b}k'], [32, 64, 128], 'adts'),
  ('opus', ['-c:a', 'libopus', '-b:a', '{b}k'], [16, 24, 48], 'ogg'),
  ('resample', None, [8000, 11025, 22050, 24000, 44100, 48000], None),
]
def run(args, data):
  r = subprocess.run([FF, '-v', 'error'] + args, input=data, capture_output=True)
  return r.stdout if r.returncode == 0 else None

def chain(y, rng):
  name, enc, rates, fmt = rng.choice(CHAINS); par = rng.choice(rates)
  raw = ['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0']
  if enc is None:
    mid = run(raw + ['-ar', str(par), '-f', 'f32le', 'pipe:1'], y.tobytes())
    res = run(['-f', 'f32le', '-ar', str(par), '-ac', '1', '-i', 'pipe:0', '-ar', '16000', '-f', 'f32le', 'pipe:1'], mid) if mid else None
  else:
    pre = ['-ar', '48000'] if name == 'opus' else ['-ar', rng.choice(['16000', '22050', '44100'])]
    enc_b = run(raw + pre + [a.format(b=par) for a in enc] + ['-f', fmt, 'pipe:1'], y.tobytes())
    res = run(['-i', 'pipe:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], enc_b) if enc_b else None
  return (np.frombuffer(res, np.float32), f'{name}:{par}') if res else (None, None)

if __name__ == '__main__':
  if sys.argv[1:2] == ['merge']:
    n = int(sys.argv[2]); parts = [np.load(f'{D}/aug-part{p}.npz') for p in range(n)]
    audio = np.concatenate([p['audio'] for p in parts]); lens = np.concatenate([np.diff(p['offs']) for p in parts])
    np.savez(f'{D}/aug.npz', audio=audio, offs=np.concatenate([[0], np.cumsum(lens)]), src=np.concatenate([p['src'] for p in parts]),
             k=np.concatenate([p['k'] for p in parts]), start=np.concatenate([p['start'] for p in parts]))
    print('copies', len(lens)); sys.exit()
  part, nparts = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (0, 1)
  from train_v3 import split_v3
  z = np.load(f'{D}/clips.npz'); audio, offs = z['audio'], z['offs']; meta = json.load(open(f'{D}/meta.json'))
  pairs = json.load(open(f'{D}/pairs.json'))
  tr, _, _ = split_v3(meta); trs = set(tr)
  clip = lambda i: audio[offs[i]:offs[i + 1]]
  out, lens, src, ks, starts = [], [], [], [], []
  for n, i in enumerate(tr):
    if n % nparts != part: continue
    x = clip(i)
    anchor = pairs[str(i)][0] if str(i) in pairs and pairs[str(i)][0] in trs else None  # the bona fide partner
    for k in range(2):
      if anchor is None:
        rng = random.Random(i * 2 + k)
        st = rng.randrange(0, len(x) - L8) if len(x) > L8 else 0
      else:  # the partner's draws: same crop (shifted by the lag), same chain
        lag = pairs[str(i)][1]; rng = random.Random(anchor * 2 + k); xr = clip(anchor)
        st_r = rng.randrange(0, len(xr) - L8) if len(xr) > L8 else 0
        st = int(np.clip(st_r + lag, 0, max(0, len(x) - L8)))
      y, kind = chain(x[st:st + L8], rng)
      if y is None: continue
      out.append(y); lens.append(len(y)); src.append(i); ks.append(k); starts.append(st)
    if n % 200 == part: print(n, flush=True)
  np.savez(f'{D}/aug-part{part}.npz', audio=np.concatenate(out), offs=np.concatenate([[0], np.cumsum(lens)]), src=np.array(src), k=np.array(ks), start=np.array(starts))
  print('part', part, 'copies', len(src))
