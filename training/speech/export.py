"""Scores the chosen checkpoint (best validation EER, EMA weights) and, with --write, exports it.

1. Validation split (seen systems + bona fide sources training never read): Platt calibration and the thresholds.
2. Test split (held-out systems + held-out bona fide, train.py `split`): scored once, figures written to
   training/speech/figures.json and the scores to /work/data/speech/test_scores.json. Nothing is chosen on it.
3. --write: server/models/speech-antispoof.onnx (opset 17, 4 s of 16 kHz in, one logit out) and the loader
   descriptor server/models/speech-antispoof.json, from the figures of step 2 (no re-scoring).
Usage: /usr/bin/python3 export.py [--write]"""
import hashlib, json, os, sys, numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import Net, split, v1_test, evaluate, eer, D, WIN, HELD_OUT_SYSTEMS
torch.set_num_threads(1)
M = '/work/main/server/models'
HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = '2.0.0'
# the run with the lower validation EER (train.py runs one per core) is the one exported; the test never chooses
runs = [torch.load(f'{D}/{f}') for f in sorted(os.listdir(D)) if f.startswith('best-') and f.endswith('.pt')]
for r in runs: print('run', r['tag'], 'n_ceps', r['n_ceps'], 'step', r['step'], 'validation EER (2 windows)', round(r['eer'], 4))
ck = min(runs, key=lambda r: r['eer'])
net = Net(ck['n_ceps']); net.load_state_dict(ck['net']); net.eval()
meta = json.load(open(f'{D}/meta.json'))
tr, va, te = split(meta)
SCORES = f'{D}/test_scores.json'

if not os.path.exists(SCORES):
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  sva = evaluate(net, clips, va); ste = evaluate(net, clips, te)  # the test split's one scoring
  json.dump({'step': ck['step'], 'tag': ck['tag'], 'val': dict(zip(map(str, va), map(float, sva))), 'test': dict(zip(map(str, te), map(float, ste)))}, open(SCORES, 'w'))
saved = json.load(open(SCORES)); assert (saved['step'], saved['tag']) == (ck['step'], ck['tag']), 'test scores belong to another checkpoint'
sva = np.array([saved['val'][str(i)] for i in va]); ste = np.array([saved['test'][str(i)] for i in te])
yva = np.array([meta[i]['label'] for i in va]); yte = np.array([meta[i]['label'] for i in te])

lr = LogisticRegression(C=1e4).fit(sva[:, None], yva); a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
cal = lambda s: 1 / (1 + np.exp(-(a * s + b)))
pva, pte = cal(sva), cal(ste)
# manipulated: at most 2 % of validation bona fide above it; authentic: at most 5 % of validation synthetic below it
manip = float(max(0.5, np.quantile(pva[yva == 0], 0.98) + 1e-4)); auth = float(min(0.5, np.quantile(pva[yva == 1], 0.05) - 1e-4))

def at_thresholds(p, y):
  real, fake = p[y == 0], p[y == 1]
  return {'bonaFideCalledSynthetic': round(float((real >= manip).mean()), 4), 'syntheticCalledSynthetic': round(float((fake >= manip).mean()), 4),
          'syntheticCalledAuthentic': round(float((fake <= auth).mean()), 4), 'bonaFideCalledAuthentic': round(float((real <= auth).mean()), 4)}

def per_system(idx, s, y):
  real = s[y == 0]; out = {}
  for sysname in sorted({meta[i]['system'] for i, l in zip(idx, y) if l == 1}):
    v = np.array([sc for i, sc, l in zip(idx, s, y) if l == 1 and meta[i]['system'] == sysname])
    out[sysname] = {'clips': len(v), 'eer': round(eer(np.r_[real, v], np.r_[np.zeros(len(real)), np.ones(len(v))]), 4)}
  return out

def block(idx, s, y, p):
  return {'clips': {'bonaFide': int((y == 0).sum()), 'synthetic': int((y == 1).sum())}, 'eer': round(eer(s, y), 4),
          'auc': round(float(roc_auc_score(y, s)), 4), 'perSystem': per_system(idx, s, y), 'atValidationThresholds': at_thresholds(p, y)}

v1 = v1_test(meta, te); pos = {i: k for k, i in enumerate(te)}; k1 = [pos[i] for i in v1]
figures = {
  'step': ck['step'], 'run': ck['tag'], 'nCeps': ck['n_ceps'],
  'validation': block(va, sva, yva, pva),
  'test': block(te, ste, yte, pte),
  'testV1Subset': block(v1, ste[k1], yte[k1], pte[k1]),
  'platt': {'a': round(a, 6), 'b': round(b, 6)}, 'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
}
figures['test']['meanSystemEer'] = round(float(np.mean([v['eer'] for v in figures['test']['perSystem'].values()])), 4)
json.dump(figures, open(f'{HERE}/figures.json', 'w'), indent=1)
print(json.dumps({k: figures[k] for k in ('platt', 'thresholds')}), flush=True)
for k in ('validation', 'test', 'testV1Subset'):
  f = figures[k]; print(k, f['clips'], 'EER', f['eer'], 'AUC', f['auc'], f['atValidationThresholds'])
  print('   ', {s: v['eer'] for s, v in f['perSystem'].items()})

if '--write' in sys.argv:
  x = torch.zeros(1, WIN)
  torch.onnx.export(net, x, f'{M}/speech-antispoof.onnx', opset_version=17, input_names=['waveform'], output_names=['logit'], dynamic_axes={'waveform': {0: 'batch'}, 'logit': {0: 'batch'}})
  sha = hashlib.sha256(open(f'{M}/speech-antispoof.onnx', 'rb').read()).hexdigest()
  man = json.load(open(f'{HERE}/manifest.json'))
  t = figures['test']
  desc = {'name': 'speech-antispoof', 'version': VERSION, 'taskTypes': ['ai-audio-detection'], 'model': 'speech-antispoof.onnx', 'sha256': sha,
    'input': {'kind': 'waveform', 'name': 'waveform', 'sampleRate': 16000, 'seconds': 4, 'normalise': 'peak'},
    'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': 1,
    'calibration': {'method': 'platt', **figures['platt']}, 'thresholds': figures['thresholds'],
    'training': {'architecture': 'LFCC (conv1d DFT, 60 linear filters, 30 cepstra + deltas) + 4-stage CNN, ' + str(sum(p.numel() for p in net.parameters())) + ' parameters',
      'data': {'bonaFide': man['total']['real'], 'synthetic': man['total']['synthetic'], 'sources': [f"{s['repo']}@{s['commit'][:10]}" for s in man['sources']]},
      'split': 'test (scored once): systems ' + ', '.join(sorted(HELD_OUT_SYSTEMS)) + ' and held-out bona fide sources; '
               'calibration, thresholds and checkpoint from a validation split of seen systems and other bona fide speakers',
      'figures': {'heldOutEer': t['eer'], 'heldOutAuc': t['auc'], 'perSystemEer': {s: v['eer'] for s, v in t['perSystem'].items()},
                  'test': t['clips'], 'atThresholds': t['atValidationThresholds'],
                  'v1TestSubset': {'eer': figures['testV1Subset']['eer'], 'auc': figures['testV1Subset']['auc']},
                  'validation': {'eer': figures['validation']['eer'], **figures['validation']['clips']}},
      'step': ck['step'], 'card': 'training/speech/MODEL_CARD.md'}}
  json.dump(desc, open(f'{M}/speech-antispoof.json', 'w'), indent=2)
  print(sha)
