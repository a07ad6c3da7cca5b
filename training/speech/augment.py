"""Codec / resampling copies of every clip (ffmpeg): MP3, AAC, Opus at several bitrates and 8-48 kHz
round trips, so the model cannot key on the container or the sample rate of a demo page.
Writes /work/data/speech/aug.npz (2 random copies per clip, at most 8 s each)."""
import json, os, random, subprocess, numpy as np
FF = '/work/main/node_modules/@ffmpeg-installer/linux-x64/ffmpeg'
D = os.environ.get('SPEECH_DATA', '/work/data/speech')
z = np.load(f'{D}/clips.npz'); audio, offs = z['audio'], z['offs']
meta = json.load(open(f'{D}/meta.json'))
CHAINS = [
  ('mp3', ['-c:a', 'libmp3lame', '-b:a', '{b}k'], [32, 64, 128], 'mp3'),
  ('aac', ['-c:a', 'aac', '-b:a', '{b}k'], [32, 64, 128], 'adts'),
  ('opus', ['-c:a', 'libopus', '-b:a', '{b}k'], [16, 24, 48], 'ogg'),
  ('resample', None, [8000, 11025, 22050, 24000, 44100, 48000], None),
]
def run(args, data):
  r = subprocess.run([FF, '-v', 'error'] + args, input=data, capture_output=True)
  return r.stdout if r.returncode == 0 else None
rng = random.Random(1)
out, out_offs, src, kinds = [], [0], [], []
for i, m in enumerate(meta):
  x = audio[offs[i]:offs[i + 1]]
  for k in range(2):
    if len(x) > 8 * 16000:
      s = rng.randrange(0, len(x) - 8 * 16000); y = x[s:s + 8 * 16000]
    else: y = x
    name, enc, rates, fmt = rng.choice(CHAINS)
    par = rng.choice(rates)
    raw = ['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', 'pipe:0']
    if enc is None:  # round trip through another rate (up/down) back to 16 kHz
      mid = run(raw + ['-ar', str(par), '-f', 'f32le', 'pipe:1'], y.tobytes())
      res = run(['-f', 'f32le', '-ar', str(par), '-ac', '1', '-i', 'pipe:0', '-ar', '16000', '-f', 'f32le', 'pipe:1'], mid) if mid else None
    else:
      pre = ['-ar', '48000'] if name == 'opus' else (['-ar', rng.choice(['16000', '22050', '44100'])])
      enc_b = run(raw + pre + [a.format(b=par) for a in enc] + ['-f', fmt, 'pipe:1'], y.tobytes())
      res = run(['-i', 'pipe:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], enc_b) if enc_b else None
    if not res: continue
    a = np.frombuffer(res, np.float32)
    out.append(a); out_offs.append(out_offs[-1] + len(a)); src.append(i); kinds.append(f'{name}:{par}')
  if i % 100 == 0: print(i, flush=True)
np.savez(f'{D}/aug.npz', audio=np.concatenate(out), offs=np.array(out_offs), src=np.array(src))
json.dump(kinds, open(f'{D}/aug_kinds.json', 'w'))
print('copies', len(src))
