"""Chooses the checkpoint on validation, calibrates there, scores the test ONCE, and exports.

1. The run/checkpoint with the lowest validation criterion recorded by train.py (validation EER; for SPEECH_PAIRS runs the mean
   of it and the left-out family's EER) is chosen from D/best-*.pt; nothing here looks at the test to choose.
2. Validation (8 windows a clip): Platt calibration and the thresholds.
3. Test (train.py `split`: the held-out systems + held-out bona fide): scored once, cached in D/test_scores.json (a rerun reuses
   the cache and refuses another checkpoint); figures to training/speech/<--figures, default figures.json>. Also writes
   D/eval_windows.f32/.json (the exact windows of validation and test; eval_windows2 for the test's pair partners, when
   D/pairs.json exists) so score_onnx.mjs scores any ONNX model (the shipped v1, a candidate) on identical inputs.
4. --compare <scores.json> <descriptor.json> <name>: that model's figures on the same clips (its scores from score_onnx.mjs,
   <scores>-2.json for the partners), Platt and thresholds refitted on validation, and at its own descriptor's thresholds;
   written to figures-<name>-same-clips.json (into D for a name starting with 'candidate', which also checks ONNX against PyTorch).
5. --write [dir]: dir/speech-antispoof.onnx (opset 17, input `waveform` (batch, 64000), output `logit`) and its loader
   descriptor (default dir server/models; give D/candidate for a candidate that is not shipped), version from --version.
Usage: SPEECH_DATA=<dir> /usr/bin/python3 export.py [--figures figures-v4-attempt.json] [--write [dir]] [--version 4.0.0]
       [--compare scores.json descriptor.json name] [--windows-only]"""
import hashlib, json, os, sys, numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import net_from_checkpoint, load_clips, split, v1_test, evaluate, eer, windows, val_metrics, D, WIN, HELD_OUT_SYSTEMS, LEAVE_OUT_FAMILY
torch.set_num_threads(1)
M = '/work/main/server/models'
HERE = os.path.dirname(os.path.abspath(__file__))
def arg(flag, default=None):
  return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv and sys.argv.index(flag) + 1 < len(sys.argv) and not sys.argv[sys.argv.index(flag) + 1].startswith('--') else default
VERSION = arg('--version', '2.0.0')
meta = json.load(open(f'{D}/meta.json'))
pairs = json.load(open(f'{D}/pairs.json')) if os.path.exists(f'{D}/pairs.json') else {}
runs = [torch.load(f'{D}/{f}') for f in sorted(os.listdir(D)) if f.startswith('best-') and f.endswith('.pt')]
crit = lambda r: r.get('criterion', r['eer'])
ck = min(runs, key=crit) if runs else None
LEFT_OUT = bool(ck) and ck.get('pairs') is not None  # SPEECH_PAIRS runs moved a vocoder family into validation
tr, va, te = split(meta, leave_out=LEAVE_OUT_FAMILY if LEFT_OUT else ())
# bona fide partners of aligned synthetic clips that no split scores: used only for the source-free paired accuracy
# (does a vocoded clip score above ITS OWN recording?), never for choosing
vpart = sorted({pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs} - set(va))
tpart = sorted({pairs[str(i)][0] for i in te if meta[i]['label'] == 1 and str(i) in pairs} - set(va) - set(vpart) - set(te))
for name, idx in (('eval_windows', va + vpart + te), ('eval_windows2', tpart)):
  if idx and not os.path.exists(f'{D}/{name}.json'):
    z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']; out, chunks, n = [], [], 0
    for i in idx:
      w = windows(A[O[i]:O[i + 1]]); chunks.append(w.astype(np.float32)); out.append([i, n, len(w)]); n += len(w)
    np.concatenate(chunks).tofile(f'{D}/{name}.f32'); json.dump({'win': WIN, 'clips': out}, open(f'{D}/{name}.json', 'w'))
if '--windows-only' in sys.argv: sys.exit()
for r in runs: print('run', r['tag'], 'step', r['step'], 'n_ceps', r.get('n_ceps'), 'norm', r.get('norm') or 'none', 'frontend', r.get('frontend', 'lfcc'), 'validation (2 windows)', round(crit(r), 4))
net = net_from_checkpoint(ck)
SCORES = f'{D}/test_scores.json'

if not os.path.exists(SCORES):
  clips = load_clips(meta)
  sva = evaluate(net, clips, va + vpart); ste = evaluate(net, clips, te + tpart)  # the test split's one scoring
  json.dump({'step': ck['step'], 'tag': ck['tag'], 'val': dict(zip(map(str, va + vpart), map(float, sva))), 'test': dict(zip(map(str, te + tpart), map(float, ste)))}, open(SCORES, 'w'))
saved = json.load(open(SCORES)); assert (saved['step'], saved['tag']) == (ck['step'], ck['tag']), 'test scores belong to another checkpoint'

def figures_for(score_of, name):
  """every figure for one model given clip -> mean window logit; Platt and thresholds fitted on validation"""
  sva = np.array([score_of[i] for i in va]); ste = np.array([score_of[i] for i in te])
  yva = np.array([meta[i]['label'] for i in va]); yte = np.array([meta[i]['label'] for i in te])
  lr = LogisticRegression(C=1e4).fit(sva[:, None], yva); a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
  cal = lambda s: 1 / (1 + np.exp(-(a * s + b)))
  pva, pte = cal(sva), cal(ste)
  # manipulated: at most 2 % of validation bona fide above it; authentic: at most 5 % of validation synthetic below it
  manip = float(max(0.5, np.quantile(pva[yva == 0], 0.98) + 1e-4)); auth = float(min(0.5, np.quantile(pva[yva == 1], 0.05) - 1e-4))
  def at(p, y):
    real, fake = p[y == 0], p[y == 1]
    return {'bonaFideCalledSynthetic': round(float((real >= manip).mean()), 4), 'syntheticCalledSynthetic': round(float((fake >= manip).mean()), 4),
            'syntheticCalledAuthentic': round(float((fake <= auth).mean()), 4), 'bonaFideCalledAuthentic': round(float((real <= auth).mean()), 4)}
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
  f = {'model': name, 'validation': blk(va, sva, yva, pva), 'test': blk(te, ste, yte, pte), 'testV1Subset': blk(v1, ste[k1], yte[k1], pte[k1]),
       'platt': {'a': round(a, 6), 'b': round(b, 6)}, 'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)}}
  f['test']['meanSystemEer'] = round(float(np.mean([v['eer'] for v in f['test']['perSystem'].values()])), 4)
  if pairs:  # validation's paired accuracy; and for SPEECH_PAIRS runs the EER of the family they left out of training
    psc = {i: score_of[i] for i in vpart if i in score_of}; psc.update({i: score_of[i] for i in va if meta[i]['label'] == 0})
    vm = val_metrics(meta, va, sva, pairs, psc)
    f['validation'].update({'pairedAccuracy': vm.get('pairedAccuracy'), 'pairs': vm.get('pairs')})
    if LEFT_OUT: f['validation']['eerLeftOutFamily'] = round(vm['eerFamily'], 4)  # source-free measure on the test systems: share of aligned copy-synthesis clips scored above their own recording
    pa = {}
    for i in te:
      if meta[i]['label'] == 1 and str(i) in pairs and pairs[str(i)][0] in score_of:
        pa.setdefault(meta[i]['system'], []).append(float(score_of[i] > score_of[pairs[str(i)][0]]))
    f['test']['pairedAccuracy'] = {s: {'pairs': len(v), 'accuracy': round(float(np.mean(v)), 4)} for s, v in sorted(pa.items())}
    f['test']['pairedAccuracyAll'] = round(float(np.mean([x for v in pa.values() for x in v])), 4) if pa else None
  return f

def show(f, extra=()):
  for k in ('validation', 'test', 'testV1Subset'):
    print(f['model'], k, f[k]['clips'], 'EER', f[k]['eer'], 'AUC', f[k]['auc'], f[k]['atValidationThresholds'], {kk: f[k][kk] for kk in extra if kk in f[k]})
    print('   ', {s: v['eer'] for s, v in f[k]['perSystem'].items()})
  if 'pairedAccuracyAll' in f['test']: print(f['model'], 'test paired accuracy', f['test']['pairedAccuracyAll'], f['test']['pairedAccuracy'])

score_of = {int(k): v for k, v in {**saved['val'], **saved['test']}.items()}  # includes the partners
figures = {'step': ck['step'], 'run': ck['tag'], 'nCeps': ck.get('n_ceps', 30), 'norm': ck.get('norm') or 'none', 'frontend': ck.get('frontend', 'lfcc'),
           'channelAugmentation': bool(ck.get('channelAug')), 'runs': [{'tag': r['tag'], 'step': r['step'], 'validation2Windows': round(crit(r), 4)} for r in runs],
           **figures_for(score_of, 'chosen')}
json.dump(figures, open(f"{HERE}/{arg('--figures', 'figures.json')}", 'w'), indent=1)
print(json.dumps({k: figures[k] for k in ('platt', 'thresholds')}), flush=True)
show(figures, ('eerLeftOutFamily', 'pairedAccuracy', 'pairs'))

if '--compare' in sys.argv:  # another model (e.g. the shipped v1 through score_onnx.mjs) on the same clips
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
  if name.startswith('candidate') and not os.environ.get('SPEECH_ENSEMBLE'):  # the exported ONNX must reproduce the PyTorch scores (an ensemble is not one checkpoint)
    d = max(abs(other[i] - score_of[i]) for i in other); f['maxAbsDiffVsTorch'] = d; print('candidate ONNX vs torch: max |diff| of clip logits', d)
  json.dump(f, open(f"{D if name.startswith('candidate') else HERE}/figures-{name}-same-clips.json", 'w'), indent=1)  # a candidate's check stays beside it
  show(f, ('atOwnDescriptorThresholds',))

if '--write' in sys.argv:
  out = arg('--write', M); os.makedirs(out, exist_ok=True)
  torch.onnx.export(net, torch.zeros(1, WIN), f'{out}/speech-antispoof.onnx', opset_version=17, input_names=['waveform'], output_names=['logit'], dynamic_axes={'waveform': {0: 'batch'}, 'logit': {0: 'batch'}})
  sha = hashlib.sha256(open(f'{out}/speech-antispoof.onnx', 'rb').read()).hexdigest()
  man = json.load(open(f'{HERE}/manifest.json')); t = figures['test']
  fe = ('LFCC (conv1d DFT, 60 linear filters, ' + str(ck.get('n_ceps', 30)) + ' cepstra' + {'cmn': ', mean-normalised over each window', 'cmvn': ', mean- and variance-normalised over each window (CMVN)'}.get(ck.get('norm'), '') + ' + deltas)'
        if ck.get('frontend', 'lfcc') == 'lfcc' else 'log power spectrogram (conv1d DFT 512, 128 linear bands of 31.25 Hz to 8 kHz)')
  desc = {'name': 'speech-antispoof', 'version': VERSION, 'taskTypes': ['ai-audio-detection'], 'model': 'speech-antispoof.onnx', 'sha256': sha,
    'input': {'kind': 'waveform', 'name': 'waveform', 'sampleRate': 16000, 'seconds': 4, 'normalise': 'peak'},
    'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': 1,
    'calibration': {'method': 'platt', **figures['platt']}, 'thresholds': figures['thresholds'],
    'training': {'architecture': fe + ' + 4-stage CNN, ' + str(sum(p.numel() for p in net.parameters())) + ' parameters'
                 + ('; trained on copy-synthesis pairs with segment mixing' if LEFT_OUT else '')
                 + ('; random spectral tilt/EQ and band-limit augmentation on both classes' if ck.get('channelAug') else ''),
      'data': {'bonaFide': man['total']['real'], 'synthetic': man['total']['synthetic'], 'sources': [f"{s['repo']}@{s['commit'][:10]}" for s in man['sources']]},
      'split': 'test (scored once): systems ' + ', '.join(sorted(HELD_OUT_SYSTEMS)) + ' and held-out bona fide sources; '
               'calibration, thresholds and checkpoint from a validation split of seen systems and other bona fide speakers'
               + (' plus the ' + ', '.join(sorted(LEAVE_OUT_FAMILY)) + ' family left out of training' if LEFT_OUT else ''),
      'figures': {'heldOutEer': t['eer'], 'heldOutAuc': t['auc'], 'perSystemEer': {s: v['eer'] for s, v in t['perSystem'].items()},
                  'test': t['clips'], 'atThresholds': t['atValidationThresholds'],
                  'v1TestSubset': {'eer': figures['testV1Subset']['eer'], 'auc': figures['testV1Subset']['auc']},
                  'validation': {'eer': figures['validation']['eer'], **figures['validation']['clips']}},
      'step': ck['step'], 'card': 'training/speech/MODEL_CARD.md'}}
  json.dump(desc, open(f'{out}/speech-antispoof.json', 'w'), indent=2)
  print(sha)
