"""v3: scores the chosen checkpoint and, with --write, exports a CANDIDATE (never into server/).

1. The run/checkpoint with the lowest validation criterion (0.5 * (validation EER + EER of the left-out flow/IAF
   family vs validation bona fide), recorded by train_v3.py) is chosen; nothing here looks at the test to choose.
2. Validation (8 windows a clip): Platt calibration and thresholds (export.py's rules).
3. Test (train.py `split`, v2's 16 held-out systems + held-out bona fide): scored ONCE, cached in
   D/v3_test_scores.json (a rerun reuses the cache and refuses another checkpoint); figures to
   training/speech/figures-v3-attempt.json. Also writes D/eval_windows.f32 + eval_windows.json (the exact windows of
   validation and test) so score_onnx.mjs can score the shipped v1 ONNX and the candidate on identical inputs.
4. --write: D/candidate/speech-antispoof.onnx (opset 17, input `waveform` (batch, 64000), output `logit`) and
   D/candidate/speech-antispoof.json in export.py's descriptor format.
Usage: SPEECH_DATA=/work/data/speech-v3 /usr/bin/python3 export_v3.py [--write]"""
import hashlib, json, os, sys, numpy as np, torch
os.environ.setdefault('SPEECH_DATA', '/work/data/speech-v3')
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import v1_test, eer, windows, D, WIN, HELD_OUT_SYSTEMS
from train_v3 import NetV3, split_v3, evaluate, val_metrics, VAL_FAMILY
torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = '3.0.0'
meta = json.load(open(f'{D}/meta.json')); pairs = json.load(open(f'{D}/pairs.json'))
tr, va, te = split_v3(meta)
vpart = sorted({pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs} - set(va))
if not os.path.exists(f'{D}/eval_windows.json'):  # the same windows for the ONNX comparisons (v1 and the candidate) in score_onnx.mjs
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']
  idx, chunks, n = [], [], 0
  for i in va + vpart + te:
    w = windows(A[O[i]:O[i + 1]]); chunks.append(w.astype(np.float32)); idx.append([i, n, len(w)]); n += len(w)
  np.concatenate(chunks).tofile(f'{D}/eval_windows.f32'); json.dump({'win': WIN, 'clips': idx}, open(f'{D}/eval_windows.json', 'w'))
# bona fide partners of aligned test synthetic clips that no split above scores: scored with the test, used only for
# the source-free paired accuracy (does the synthetic clip score above ITS OWN recording?), never for choosing
tpart = sorted({pairs[str(i)][0] for i in te if meta[i]['label'] == 1 and str(i) in pairs} - set(va) - set(vpart) - set(te))
if not os.path.exists(f'{D}/eval_windows2.json'):
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']
  idx, chunks, n = [], [], 0
  for i in tpart:
    w = windows(A[O[i]:O[i + 1]]); chunks.append(w.astype(np.float32)); idx.append([i, n, len(w)]); n += len(w)
  np.concatenate(chunks).tofile(f'{D}/eval_windows2.f32'); json.dump({'win': WIN, 'clips': idx}, open(f'{D}/eval_windows2.json', 'w'))
if '--windows-only' in sys.argv: sys.exit()
runs = [torch.load(f'{D}/{f}') for f in sorted(os.listdir(D)) if f.startswith('v3best-') and f.endswith('.pt')]
for r in runs: print('run', r['tag'], r['frontend'], 'step', r['step'], 'validation (2 windows)', json.dumps(r['val']))
ck = min(runs, key=lambda r: r['criterion'])
net = NetV3(ck['frontend']); net.load_state_dict(ck['net']); net.eval()
SCORES = f'{D}/v3_test_scores.json'

if not os.path.exists(SCORES):
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  sva = evaluate(net, clips, va + vpart); ste = evaluate(net, clips, te + tpart)  # the test split's one scoring
  json.dump({'step': ck['step'], 'tag': ck['tag'], 'val': dict(zip(map(str, va + vpart), map(float, sva))), 'test': dict(zip(map(str, te + tpart), map(float, ste)))}, open(SCORES, 'w'))
saved = json.load(open(SCORES)); assert (saved['step'], saved['tag']) == (ck['step'], ck['tag']), 'test scores belong to another checkpoint'

def figures_for(score_of, name):
  """all figures for one model given clip -> mean window logit; Platt and thresholds fitted on validation"""
  sva = np.array([score_of[i] for i in va]); ste = np.array([score_of[i] for i in te])
  yva = np.array([meta[i]['label'] for i in va]); yte = np.array([meta[i]['label'] for i in te])
  lr = LogisticRegression(C=1e4).fit(sva[:, None], yva); a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
  cal = lambda s: 1 / (1 + np.exp(-(a * s + b)))
  pva, pte = cal(sva), cal(ste)
  manip = float(max(0.5, np.quantile(pva[yva == 0], 0.98) + 1e-4)); auth = float(min(0.5, np.quantile(pva[yva == 1], 0.05) - 1e-4))
  def at(p, y, m=manip, au=auth):
    real, fake = p[y == 0], p[y == 1]
    return {'bonaFideCalledSynthetic': round(float((real >= m).mean()), 4), 'syntheticCalledSynthetic': round(float((fake >= m).mean()), 4),
            'syntheticCalledAuthentic': round(float((fake <= au).mean()), 4), 'bonaFideCalledAuthentic': round(float((real <= au).mean()), 4)}
  def per_system(idx, s, y):
    real = s[y == 0]; out = {}
    for sysname in sorted({meta[i]['system'] for i, l in zip(idx, y) if l == 1}):
      v = np.array([sc for i, sc, l in zip(idx, s, y) if l == 1 and meta[i]['system'] == sysname])
      out[sysname] = {'clips': len(v), 'eer': round(eer(np.r_[real, v], np.r_[np.zeros(len(real)), np.ones(len(v))]), 4)}
    return out
  def blk(idx, s, y, p):
    return {'clips': {'bonaFide': int((y == 0).sum()), 'synthetic': int((y == 1).sum())}, 'eer': round(eer(s, y), 4),
            'auc': round(float(roc_auc_score(y, s)), 4), 'perSystem': per_system(idx, s, y), 'atValidationThresholds': at(p, y)}
  v1 = v1_test(meta, te); pos = {i: k for k, i in enumerate(te)}; k1 = [pos[i] for i in v1]
  psc = {i: score_of[i] for i in vpart if i in score_of}; psc.update({i: score_of[i] for i in va if meta[i]['label'] == 0})
  vm = val_metrics(meta, va, sva, pairs, psc)
  f = {'model': name, 'validation': {**blk(va, sva, yva, pva), 'eerLeftOutFamily': round(vm['eerFamily'], 4), 'pairedAccuracy': vm.get('pairedAccuracy'), 'pairs': vm.get('pairs')},
       'test': blk(te, ste, yte, pte), 'testV1Subset': blk(v1, ste[k1], yte[k1], pte[k1]),
       'platt': {'a': round(a, 6), 'b': round(b, 6)}, 'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)}}
  f['test']['meanSystemEer'] = round(float(np.mean([v['eer'] for v in f['test']['perSystem'].values()])), 4)
  # source-free measure on the test systems: share of aligned copy-synthesis clips scored above their own recording
  pa = {}
  for i in te:
    if meta[i]['label'] == 1 and str(i) in pairs and pairs[str(i)][0] in score_of:
      pa.setdefault(meta[i]['system'], []).append(float(score_of[i] > score_of[pairs[str(i)][0]]))
  f['test']['pairedAccuracy'] = {s: {'pairs': len(v), 'accuracy': round(float(np.mean(v)), 4)} for s, v in sorted(pa.items())}
  f['test']['pairedAccuracyAll'] = round(float(np.mean([x for v in pa.values() for x in v])), 4) if pa else None
  return f

if __name__ == '__main__':
  score_of = {int(k): v for k, v in {**saved['val'], **saved['test']}.items()}  # includes the partners
  figures = {'step': ck['step'], 'run': ck['tag'], 'frontend': ck['frontend'], 'runs': [{'tag': r['tag'], 'frontend': r['frontend'], 'step': r['step'], 'val2win': r['val']} for r in runs],
             **figures_for(score_of, 'v3')}
  json.dump(figures, open(f'{HERE}/figures-v3-attempt.json', 'w'), indent=1)
  print(json.dumps({k: figures[k] for k in ('platt', 'thresholds')}), flush=True)
  for k in ('validation', 'test', 'testV1Subset'):
    f = figures[k]; print(k, f['clips'], 'EER', f['eer'], 'AUC', f['auc'], f['atValidationThresholds'], {kk: f[kk] for kk in ('eerLeftOutFamily', 'pairedAccuracy', 'pairs') if kk in f})
    print('   ', {s: v['eer'] for s, v in f['perSystem'].items()})
  print('test paired accuracy', figures['test']['pairedAccuracyAll'], figures['test']['pairedAccuracy'])
  if '--compare' in sys.argv:  # --compare <scores.json from score_onnx.mjs> <descriptor.json> <name>: another model on the same clips
    j = sys.argv.index('--compare'); sc_path, desc_path, name = sys.argv[j + 1:j + 4]
    other = {int(k): v for k, v in json.load(open(sc_path)).items()}; desc = json.load(open(desc_path))
    if os.path.exists(sc_path.replace('.json', '-2.json')): other.update({int(k): v for k, v in json.load(open(sc_path.replace('.json', '-2.json'))).items()})
    f = figures_for(other, name)
    a, b = desc['calibration']['a'], desc['calibration']['b']; th = desc['thresholds']
    for k, idx in (('validation', va), ('test', te), ('testV1Subset', v1_test(meta, te))):
      p_ = 1 / (1 + np.exp(-(a * np.array([other[i] for i in idx]) + b))); y = np.array([meta[i]['label'] for i in idx])
      f[k]['atOwnDescriptorThresholds'] = {'bonaFideCalledSynthetic': round(float((p_[y == 0] >= th['manipulated']).mean()), 4),
        'syntheticCalledSynthetic': round(float((p_[y == 1] >= th['manipulated']).mean()), 4), 'syntheticCalledAuthentic': round(float((p_[y == 1] <= th['authentic']).mean()), 4),
        'bonaFideCalledAuthentic': round(float((p_[y == 0] <= th['authentic']).mean()), 4)}
    if name == 'candidate':  # the exported ONNX must reproduce the PyTorch scores
      d = max(abs(other[i] - score_of[i]) for i in other); f['maxAbsDiffVsTorch'] = d; print('candidate ONNX vs torch: max |diff| of clip logits', d)
    json.dump(f, open(f'{HERE}/figures-{name}-same-clips.json', 'w'), indent=1)
    print(name, 'test paired accuracy', f['test']['pairedAccuracyAll'], f['test']['pairedAccuracy'])
    for k in ('validation', 'test', 'testV1Subset'):
      print(name, k, f[k]['clips'], 'EER', f[k]['eer'], 'AUC', f[k]['auc'], 'own thresholds', f[k]['atOwnDescriptorThresholds'])
      print('   ', {s: v['eer'] for s, v in f[k]['perSystem'].items()})
  if '--write' in sys.argv:
    out = f'{D}/candidate'; os.makedirs(out, exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, WIN), f'{out}/speech-antispoof.onnx', opset_version=17, input_names=['waveform'], output_names=['logit'], dynamic_axes={'waveform': {0: 'batch'}, 'logit': {0: 'batch'}})
    sha = hashlib.sha256(open(f'{out}/speech-antispoof.onnx', 'rb').read()).hexdigest()
    man = json.load(open(f'{HERE}/manifest.json')); t = figures['test']
    fe = 'LFCC (conv1d DFT, 60 linear filters, 30 cepstra + deltas)' if ck['frontend'] == 'lfcc' else 'log power spectrogram (conv1d DFT 512, 128 linear bands of 31.25 Hz to 8 kHz)'
    desc = {'name': 'speech-antispoof', 'version': VERSION, 'taskTypes': ['ai-audio-detection'], 'model': 'speech-antispoof.onnx', 'sha256': sha,
      'input': {'kind': 'waveform', 'name': 'waveform', 'sampleRate': 16000, 'seconds': 4, 'normalise': 'peak'},
      'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': 1,
      'calibration': {'method': 'platt', **figures['platt']}, 'thresholds': figures['thresholds'],
      'training': {'architecture': fe + ' + 4-stage CNN, ' + str(sum(p.numel() for p in net.parameters())) + ' parameters; trained on copy-synthesis pairs with segment mixing (v3)',
        'data': {'bonaFide': man['total']['real'], 'synthetic': man['total']['synthetic'], 'sources': [f"{s['repo']}@{s['commit'][:10]}" for s in man['sources']]},
        'split': 'test (scored once): systems ' + ', '.join(sorted(HELD_OUT_SYSTEMS)) + ' and held-out bona fide sources; '
                 'calibration, thresholds and checkpoint from a validation split of seen systems on other bona fide speakers plus the flow/IAF vocoder family (' + ', '.join(sorted(VAL_FAMILY)) + ') left out of training',
        'figures': {'heldOutEer': t['eer'], 'heldOutAuc': t['auc'], 'perSystemEer': {s: v['eer'] for s, v in t['perSystem'].items()},
                    'test': t['clips'], 'atThresholds': t['atValidationThresholds'],
                    'v1TestSubset': {'eer': figures['testV1Subset']['eer'], 'auc': figures['testV1Subset']['auc']},
                    'validation': {'eer': figures['validation']['eer'], **figures['validation']['clips']}},
        'step': ck['step'], 'card': 'training/speech/MODEL_CARD.md'}}
    json.dump(desc, open(f'{out}/speech-antispoof.json', 'w'), indent=2)
    print(sha)
