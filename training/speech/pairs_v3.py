"""v3 (issue 19): find copy-synthesis PAIRS, i.e. a synthetic clip that renders the SAME recording as a bona fide clip
of the same demo page (vocoder analysis-synthesis, codec resynthesis, or TTS with ground-truth durations), time-aligned.

Within one repository, a synthetic clip s is paired with the bona fide clip r whose log-energy envelope (5 ms hop,
standardised) correlates best with s's over lags of +-300 ms, if that correlation is >= PAIR_CORR and the durations
differ by at most max(0.3 s, 8 %). The lag is refined on a 1.25 ms envelope. TTS renderings of the same text with
their own timing correlate far lower and are not paired (train.py with SPEECH_PAIRS pairs them only by group, unaligned).
Writes D/pairs.json: {synthetic index: [bona fide index, lag in samples (syn[t + lag] ~ real[t]), correlation]}.
Usage: SPEECH_DATA=/work/data/speech-v3 /usr/bin/python3 pairs_v3.py"""
import json, os, numpy as np
D = os.environ.get('SPEECH_DATA', '/work/data/speech-v3')
PAIR_CORR = 0.9

def envelope(x, hop):
  n = len(x) // hop
  e = np.log(np.sqrt((x[:n * hop].reshape(n, hop) ** 2).mean(1) + 1e-8))
  return (e - e.mean()) / (e.std() + 1e-9)

def corr_at(a, b, L):
  """Pearson correlation of b shifted by L against a (b[t + L] ~ a[t]) over their overlap, and the overlap length"""
  if L >= 0: x, y = a, b[L:]
  else: x, y = a[-L:], b
  n = min(len(x), len(y))
  if n < 20: return -1.0, n
  x, y = x[:n], y[:n]
  return float(np.dot(x - x.mean(), y - y.mean()) / (n * (x.std() + 1e-9) * (y.std() + 1e-9))), n

def best_lag(a, b, lags):
  """coarse search with one np.correlate (globally standardised envelopes), exact correlation at the 3 best lags;
  needs >= 50 % overlap"""
  full = np.correlate(b, a, 'full')  # index k <-> lag k - (len(a) - 1)
  lags = [L for L in lags if -(len(a) - 1) <= L <= len(b) - 1]
  if not lags: return -1.0, 0
  idx = np.array(lags) + len(a) - 1
  ov = np.array([min(len(a), len(b) - L) if L >= 0 else min(len(a) + L, len(b)) for L in lags], float)
  approx = full[idx] / np.maximum(ov, 1)
  approx[ov < 0.5 * min(len(a), len(b))] = -9
  best = (-1.0, 0)
  for k in np.argsort(-approx)[:3]:
    c, n = corr_at(a, b, lags[k])
    if n >= 0.5 * min(len(a), len(b)) and c > best[0]: best = (c, lags[k])
  return best

if __name__ == '__main__':
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; meta = json.load(open(f'{D}/meta.json'))
  clip = lambda i: A[O[i]:O[i + 1]]
  by_repo = {}
  for i, m in enumerate(meta): by_repo.setdefault(m['repo'], ([], []))[m['label']].append(i)
  pairs = {}; hop = 80
  env = {i: envelope(clip(i), hop) for i in range(len(meta))}
  for repo, (reals, syns) in by_repo.items():
    found = 0
    for s in syns:
      ls = len(clip(s)); best = (-1.0, None, 0)
      for r in reals:
        lr = len(clip(r))
        if abs(ls - lr) > max(0.3 * 16000, 0.08 * lr): continue
        c, L = best_lag(env[r], env[s], range(-60, 61))
        if c > best[0]: best = (c, r, L)
      if best[1] is None or best[0] < PAIR_CORR: continue
      r = best[1]; fine_hop = 20
      c2, L2 = best_lag(envelope(clip(r), fine_hop), envelope(clip(s), fine_hop), range(best[2] * 4 - 8, best[2] * 4 + 9))
      pairs[str(s)] = [r, int(L2 * fine_hop), round(best[0], 4)]; found += 1
    print(repo, 'synthetic', len(syns), 'paired', found, flush=True)
  json.dump(pairs, open(f'{D}/pairs.json', 'w'))
  sysc = {}
  for s in pairs: sysc[meta[int(s)]['system']] = sysc.get(meta[int(s)]['system'], 0) + 1
  print(len(pairs), 'pairs;', dict(sorted(sysc.items(), key=lambda kv: -kv[1])))
