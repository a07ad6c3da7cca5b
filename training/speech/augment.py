"""Codec / resampling copies of every clip (ffmpeg): MP3, AAC, Opus at several bitrates and 8-48 kHz
round trips, so the model cannot key on the container or the sample rate of a demo page.
Writes D/aug.npz (2 random copies per clip, at most 8 s each; arrays audio, offs, src, k = copy number, start = the
copy's first sample in the clip). Options (environment):
- SPEECH_AUG_ONLY=train: only the training split's clips get copies (train.py reads no others; v4 used it to halve the
  ffmpeg time).
- SPEECH_PAIRS=1 (v3): training clips only (the left-out family excluded, as train.py's pair runs split), and copy k of an
  aligned copy-synthesis pair (D/pairs.json from pairs_v3.py) is made IDENTICALLY for both sides: the bona fide clip's chain,
  bitrate and crop (shifted by the pair's lag) are reused for every synthetic rendering of it, so a pair still differs only
  in its synthesis. Draws are seeded per clip, so the work splits into parts run in parallel:
  `augment.py 0 2 & augment.py 1 2; wait; augment.py merge 2`.
Usage: SPEECH_DATA=<dir> /usr/bin/python3 augment.py [part nparts | merge nparts]"""
import json, os, random, subprocess, sys, numpy as np
FF = '/work/main/node_modules/@ffmpeg-installer/linux-x64/ffmpeg'
D = os.environ.get('SPEECH_DATA', '/work/data/speech')
PAIRS = os.environ.get('SPEECH_PAIRS', '') != ''  # as train.py: any value (the free-clip weight) selects the pair runs' split
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
  """y through one random chain and back to 16 kHz float32, and the chain's name"""
  name, enc, rates, fmt = rng.choice(CHAINS); par = rng.choice(rates)
  raw = ['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0']
  if enc is None:  # round trip through another rate (up/down) back to 16 kHz
    mid = run(raw + ['-ar', str(par), '-f', 'f32le', 'pipe:1'], y.tobytes())
    res = run(['-f', 'f32le', '-ar', str(par), '-ac', '1', '-i', 'pipe:0', '-ar', '16000', '-f', 'f32le', 'pipe:1'], mid) if mid else None
  else:
    pre = ['-ar', '48000'] if name == 'opus' else ['-ar', rng.choice(['16000', '22050', '44100'])]
    enc_b = run(raw + pre + [a.format(b=par) for a in enc] + ['-f', fmt, 'pipe:1'], y.tobytes())
    res = run(['-i', 'pipe:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], enc_b) if enc_b else None
  return (np.frombuffer(res, np.float32), f'{name}:{par}') if res else (None, None)

def save(path, out, src, ks, starts):
  np.savez(path, audio=np.concatenate(out), offs=np.concatenate([[0], np.cumsum([len(a) for a in out])]), src=np.array(src), k=np.array(ks), start=np.array(starts))

if __name__ == '__main__':
  if sys.argv[1:2] == ['merge']:
    n = int(sys.argv[2]); parts = [np.load(f'{D}/aug-part{p}.npz') for p in range(n)]
    lens = np.concatenate([np.diff(p['offs']) for p in parts])
    np.savez(f'{D}/aug.npz', audio=np.concatenate([p['audio'] for p in parts]), offs=np.concatenate([[0], np.cumsum(lens)]),
             **{k: np.concatenate([p[k] for p in parts]) for k in ('src', 'k', 'start')})
    print('copies', len(lens)); sys.exit()
  part, nparts = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (0, 1)
  z = np.load(f'{D}/clips.npz'); audio, offs = z['audio'], z['offs']
  meta = json.load(open(f'{D}/meta.json'))
  clip = lambda i: audio[offs[i]:offs[i + 1]]
  if PAIRS or os.environ.get('SPEECH_AUG_ONLY') == 'train':
    from train import split, LEAVE_OUT_FAMILY
    todo = split(meta, leave_out=LEAVE_OUT_FAMILY if PAIRS else ())[0]
  else: todo = list(range(len(meta)))
  pairs = json.load(open(f'{D}/pairs.json')) if PAIRS else {}; keep = set(todo)
  seq = random.Random(1)  # without pairs: one sequence of draws over the clips, as v1 and v2 made them
  out, src, ks, starts, kinds = [], [], [], [], []
  for n, i in enumerate(todo):
    if n % nparts != part: continue
    x = clip(i)
    anchor = pairs[str(i)][0] if str(i) in pairs and pairs[str(i)][0] in keep else None  # the bona fide partner
    for k in range(2):
      if not PAIRS: rng = seq; st = rng.randrange(0, len(x) - L8) if len(x) > L8 else 0
      elif anchor is None:
        rng = random.Random(i * 2 + k); st = rng.randrange(0, len(x) - L8) if len(x) > L8 else 0
      else:  # the partner's draws: same crop (shifted by the lag), same chain
        lag = pairs[str(i)][1]; rng = random.Random(anchor * 2 + k); xr = clip(anchor)
        st_r = rng.randrange(0, len(xr) - L8) if len(xr) > L8 else 0
        st = int(np.clip(st_r + lag, 0, max(0, len(x) - L8)))
      y, kind = chain(x[st:st + L8], rng)
      if y is None: continue
      out.append(y); src.append(i); ks.append(k); starts.append(st); kinds.append(kind)
    if n % 100 == part: print(n, flush=True)
  if nparts > 1: save(f'{D}/aug-part{part}.npz', out, src, ks, starts); print('part', part, 'copies', len(src)); sys.exit()
  save(f'{D}/aug.npz', out, src, ks, starts)
  json.dump(kinds, open(f'{D}/aug_kinds.json', 'w'))
  print('copies', len(src))
