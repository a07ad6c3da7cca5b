"""v5 (stop 29): v1 and a retrained v4-configuration network fused into ONE ONNX graph (input `waveform` (batch, 64000),
output `logit` (batch), as v1), so the service's loader and speech-model.ts are unchanged. The fusion is linear in the window
logits, z = 0.5·(zA − cA)/sA + 0.5·(zB − cB)/sB, with c (midpoint of the class means) and s (pooled within-class spread) of
each branch's clip logits on the VALIDATION split only; the mean of fused window logits is then the fusion of the clip logits.
Steps (SPEECH_DATA=<dir>; the test is read only by the last two, after the candidate is frozen):
  fuse.py branch   export the chosen train.py checkpoint (lowest validation criterion, as export.py) to D/candidate-v5/branch-v4.onnx
                   and write D/val_windows.json (export.py's eval_windows restricted to validation clips and their pair partners)
  node score_onnx.mjs server/models/speech-antispoof.onnx D D/v1_val.json val_windows      (and branch-v4.onnx -> D/branch_val.json)
  fuse.py fit      standardisation, Platt and thresholds on validation; the secondary logistic-regression weights (a measure only);
                   D/candidate-v5/speech-antispoof.onnx + .json (+ branch-v4.json, the branch's own Platt/thresholds); checks the
                   fused graph against the two branches on the validation windows (D/fused_val.json from score_onnx.mjs)
  fuse.py report   after the test event: the secondary fusion's test figures (figures-v5-secondary-lr.json), from the branches'
                   test scores (D/v1_scores.json, D/cand_scores.json)
  fuse.py ship     copies the candidate to server/models as 5.0.0 with the test figures in its descriptor
Usage: SPEECH_DATA=/work/data/speech-v4 /usr/bin/python3 fuse.py branch|fit|report|ship
v6 (stop 45): SPEECH_VERSION=6.0.0 writes D/candidate-v6 and figures-v6-*.json; branch B then is the SPEECH_SELFVOC run.
v13 (stop 63): SPEECH_ENSEMBLE=shipped,e1,… makes branch B the mean logit of several networks (see ENSEMBLE below)."""
import hashlib, json, os, shutil, sys, numpy as np, onnx, torch
from functools import partial
from onnx import helper, numpy_helper, TensorProto
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import net_from_checkpoint, split, eer, D, WIN, equal_fusion, fused_graph, platt_thresholds as platt_thresholds_by
torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
# branch A: v1 1.0.0 (sha256 fc9c3e3b…). Since 6.0.0 ships, server/models holds the fused model, so v7 (stop 47) reads v1 from
# SPEECH_V1 (`git show 783ff4a:server/models/speech-antispoof.onnx`).
V1 = os.environ.get('SPEECH_V1', '/work/main/server/models/speech-antispoof.onnx')
VERSION = os.environ.get('SPEECH_VERSION', '5.0.0'); MAJOR = VERSION.split('.')[0]  # v6 (stop 45): SPEECH_VERSION=6.0.0
ATTEMPT = os.environ.get('SPEECH_ATTEMPT', f'v{MAJOR}')  # stop 51: names the candidate folder and figure files (r7: replicates)
C = f'{D}/candidate-{ATTEMPT}'
SHIPPED = f'{HERE}/../../server/models/speech-antispoof'  # the shipped model (.onnx, .json); an ensemble may hold its branch B
meta = json.load(open(f'{D}/meta.json'))
tr, va, te = split(meta)
yva = np.array([meta[i]['label'] for i in va]); yte = np.array([meta[i]['label'] for i in te])
platt_thresholds = partial(platt_thresholds_by, y=yva)  # on validation (train.py)
step = sys.argv[1]

def chosen():
  runs = [torch.load(f'{D}/{f}') for f in sorted(os.listdir(D)) if f.startswith('best-') and f.endswith('.pt')]
  return min(runs, key=lambda r: r.get('criterion', r['eer']))

# v13 (stop 63): SPEECH_ENSEMBLE=shipped,e1,e2 makes branch B a deep ensemble (Lakshminarayanan, Pritzel & Blundell,
# NeurIPS 2017): the mean logit of several independently trained branch-B networks, one graph. A member is a run's tag
# (its own best-<tag>.pt: lowest validation criterion of that run) or `shipped`, the branch B inside the shipped model.
ENSEMBLE = [m for m in os.environ.get('SPEECH_ENSEMBLE', '').split(',') if m]

def shipped_branch():
  """the shipped fused model's branch B alone (its 'v4/' nodes and weights), input `waveform`, output `logit`"""
  m = onnx.load(f'{SHIPPED}.onnx')
  nodes = [n for n in m.graph.node if all(o.startswith('v4/') for o in n.output)]
  assert nodes[0].op_type == 'Identity' and list(nodes[0].input) == ['waveform'], 'the shipped graph has no v4/ branch'
  nodes.append(helper.make_node('Identity', ['v4/logit'], ['logit']))
  g = helper.make_graph(nodes, 'shipped-branch-b', [helper.make_tensor_value_info('waveform', TensorProto.FLOAT, ['batch', WIN])],
                        [helper.make_tensor_value_info('logit', TensorProto.FLOAT, ['batch'])],
                        [t for t in m.graph.initializer if t.name.startswith('v4/')])
  out = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); out.ir_version = 8
  onnx.checker.check_model(out, full_check=True); return out

def ensemble_graph(paths):
  """one graph: each member under 'm<i>/', one shared input, logit = the members' mean logit"""
  parts = [onnx.compose.add_prefix(onnx.load(p), f'm{i}/') for i, p in enumerate(paths)]
  nodes = [helper.make_node('Identity', ['waveform'], [f'm{i}/waveform']) for i in range(len(parts))]
  for part in parts: nodes += list(part.graph.node)
  nodes += [helper.make_node('Sum', [f'm{i}/logit' for i in range(len(parts))], ['ens/sum']),
            helper.make_node('Mul', ['ens/sum', 'ens/k'], ['logit'])]
  g = helper.make_graph(nodes, 'branch-b-ensemble', [helper.make_tensor_value_info('waveform', TensorProto.FLOAT, ['batch', WIN])],
                        [helper.make_tensor_value_info('logit', TensorProto.FLOAT, ['batch'])],
                        [t for part in parts for t in part.graph.initializer] + [numpy_helper.from_array(np.array(1 / len(parts), np.float32), 'ens/k')],
                        value_info=[v for part in parts for v in part.graph.value_info])
  m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='mediaproof training/speech/fuse.py')
  m.ir_version = 8; onnx.checker.check_model(m, full_check=True); return m

def export_branch(net, path):
  torch.onnx.export(net, torch.zeros(1, WIN), path, opset_version=17, input_names=['waveform'], output_names=['logit'],
                    dynamic_axes={'waveform': {0: 'batch'}, 'logit': {0: 'batch'}})

def branch_record():
  """what branch B is, for fit.json: the one chosen run, or the ensemble's members"""
  if ENSEMBLE: return {'ensemble': json.load(open(f'{C}/members.json'))}
  ck = chosen(); return {'run': ck['tag'], 'step': ck['step'], **({'weightAverage': ck['swa']} if 'swa' in ck else {})}  # v14: SWA

def load_scores(path):
  return {int(k): v for k, v in json.load(open(path)).items()}

def sha(path): return hashlib.sha256(open(path, 'rb').read()).hexdigest()

def descriptor(version, platt, th, training):
  return {'name': 'speech-antispoof', 'version': version, 'taskTypes': ['ai-audio-detection'], 'model': 'speech-antispoof.onnx',
          'sha256': sha(f'{C}/speech-antispoof.onnx'),
          'input': {'kind': 'waveform', 'name': 'waveform', 'sampleRate': 16000, 'seconds': 4, 'normalise': 'peak'},
          'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': 1,
          'calibration': {'method': 'platt', **platt}, 'thresholds': th, 'training': training}

if step == 'branch':
  os.makedirs(C, exist_ok=True)
  if ENSEMBLE:
    members = []
    for tag in ENSEMBLE:
      path = f'{C}/member-{tag}.onnx'
      if tag == 'shipped':
        onnx.save(shipped_branch(), path); members.append({'member': 'shipped', 'version': json.load(open(f'{SHIPPED}.json'))['version']})
      else:
        ck = torch.load(f'{D}/best-{tag}.pt'); export_branch(net_from_checkpoint(ck), path)
        members.append({'member': tag, 'step': ck['step'], 'validationEer2Windows': ck['eer']})
      members[-1]['sha256'] = sha(path); print('member', members[-1])
    onnx.save(ensemble_graph([f'{C}/member-{tag}.onnx' for tag in ENSEMBLE]), f'{C}/branch-v4.onnx')
    json.dump(members, open(f'{C}/members.json', 'w'), indent=1)
  else:
    ck = chosen(); print('chosen run', ck['tag'], 'step', ck['step'], 'validation (2 windows)', ck['eer'], 'norm', ck.get('norm'), 'channelAug', ck.get('channelAug'))
    export_branch(net_from_checkpoint(ck), f'{C}/branch-v4.onnx')
  idx = json.load(open(f'{D}/eval_windows.json'))
  pairs = json.load(open(f'{D}/pairs.json')) if os.path.exists(f'{D}/pairs.json') else {}
  keep = set(va) | {pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs}  # export.py's vpart
  rows = [r for r in idx['clips'] if r[0] in keep]; assert not {r[0] for r in rows} & set(te), 'no test clip in the validation index'
  json.dump({'win': idx['win'], 'clips': rows}, open(f'{D}/val_windows.json', 'w'))
  if not os.path.exists(f'{D}/val_windows.f32'): os.symlink(f'{D}/eval_windows.f32', f'{D}/val_windows.f32')
  print('validation index', len(rows), 'clips (validation', len(va), '+ pair partners)'); sys.exit()

if step == 'fit':
  assert sha(V1).startswith('fc9c3e3b'), f'branch A must be v1 1.0.0 (sha256 fc9c3e3b…), not {V1}: set SPEECH_V1'
  A, B = load_scores(f'{D}/v1_val.json'), load_scores(f'{D}/branch_val.json')
  sA, sB = np.array([A[i] for i in va]), np.array([B[i] for i in va])
  (cA, dA), (cB, dB), (kA, kB, k0) = equal_fusion(sA, sB, yva)
  fused = kA * sA + kB * sB + k0
  platt, th = platt_thresholds(fused); pB, thB = platt_thresholds(sB)
  lr = LogisticRegression(C=1e4).fit(np.c_[sA, sB], yva)  # the secondary fusion: a measure only
  secondary = {'wA': float(lr.coef_[0, 0]), 'wB': float(lr.coef_[0, 1]), 'b': float(lr.intercept_[0])}
  onnx.save(fused_graph(V1, f'{C}/branch-v4.onnx', ('v1/', 'v4/'), 'AB', (kA, kB, k0), f'speech-antispoof-v{MAJOR}',  # v1 under 'v1/', B under 'v4/'
                        'mediaproof training/speech/fuse.py'), f'{C}/speech-antispoof.onnx')
  ck = chosen() if not ENSEMBLE else torch.load(f'{D}/best-{next(t for t in ENSEMBLE if t != "shipped")}.pt')  # the runs' options
  fit = {'branchA': {'model': 'v1 1.0.0', 'sha256': sha(V1), 'centre': cA, 'spread': dA, 'validationEer': round(eer(sA, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, sA)), 4)},
         'branchB': {**branch_record(), 'sha256': sha(f'{C}/branch-v4.onnx'), 'centre': cB, 'spread': dB,
                     'validationEer': round(eer(sB, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, sB)), 4), 'platt': pB, 'thresholds': thB},
         'fusion': {'kA': kA, 'kB': kB, 'k0': k0, 'validationEer': round(eer(fused, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, fused)), 4),
                    'platt': platt, 'thresholds': th, 'sha256': sha(f'{C}/speech-antispoof.onnx')},
         'secondaryLogisticRegression': {**secondary, 'validationEer': round(eer(lr.decision_function(np.c_[sA, sB]), yva), 4)}}
  json.dump(fit, open(f'{C}/fit.json', 'w'), indent=1)
  twin_kinds = {'selfvoc': 'Griffin-Lim (selfvoc.py)', 'neuralvoc': 'two neural vocoders trained here (neuralvoc.py)'}
  twins_used = (f', and {ck["selfvoc"]:.0%} of its synthetic training slots copy-synthesis twins of the training bona fide clips by '
             + ' and '.join(twin_kinds[t] for t in ck.get('twins', ['selfvoc']))) if ck.get('selfvoc') else ''
  training = {'architecture': 'two branches in one graph, fused per window as 0.5·(zA − cA)/sA + 0.5·(zB − cB)/sB (constants from validation): '
              'A = v1 (LFCC, 60 linear filters, 30 cepstra + deltas, 4-stage CNN, 208499 parameters); B = the same architecture with '
              'per-window CMVN of the cepstra, trained with random spectral tilt/EQ and band-limit augmentation on both classes (208499 parameters)' + twins_used
              + (f'; B is the mean logit of {len(ENSEMBLE)} such networks trained independently (a deep ensemble: ' + ', '.join(ENSEMBLE) + ')' if ENSEMBLE else '')
              + (f', with MixStyle in {ck["mixstyle"]:.0%} of its training batches' if ck.get('mixstyle') else '')
              + (', with every bona fide source repository (and its twins) drawn equally often' if ck.get('balance') == 'repo' else '')
              + (f'; its weights are the running mean of the network over training from {ck["swa"]["start"]:.0%} of its time budget on (SWA)' if 'swa' in ck else ''),
              'card': 'training/speech/MODEL_CARD.md'}
  json.dump(descriptor(VERSION, platt, th, training), open(f'{C}/speech-antispoof.json', 'w'), indent=2)
  json.dump({'calibration': {'method': 'platt', **pB}, 'thresholds': thB}, open(f'{C}/branch-v4.json', 'w'), indent=2)
  print(json.dumps(fit, indent=1))
  if os.path.exists(f'{D}/fused_val.json'):  # second call, after score_onnx.mjs ran the fused file on the validation windows
    Fz = load_scores(f'{D}/fused_val.json'); d = max(abs(Fz[i] - (kA * A[i] + kB * B[i] + k0)) for i in Fz)
    print('fused ONNX vs the fusion of its branches on validation windows: max |diff|', d); assert d < 1e-4
  sys.exit()

if step == 'report':  # the secondary fusion on the test (a measure; the decision is the declared fusion's)
  fit = json.load(open(f'{C}/fit.json')); s = fit['secondaryLogisticRegression']
  A, B = load_scores(f'{D}/v1_scores.json'), load_scores(f'{D}/cand_scores.json')
  z = lambda idx: np.array([s['wA'] * A[i] + s['wB'] * B[i] + s['b'] for i in idx])
  zva, zte = z(va), z(te); platt, th = platt_thresholds(zva)
  p = 1 / (1 + np.exp(-(platt['a'] * zte + platt['b'])))
  out = {'model': 'secondary: logistic regression on validation clip logits (measure only)', 'weights': s,
         'validation': {'eer': round(eer(zva, yva), 4), 'auc': round(float(roc_auc_score(yva, zva)), 4)},
         'test': {'eer': round(eer(zte, yte), 4), 'auc': round(float(roc_auc_score(yte, zte)), 4),
                  'bonaFideCalledSynthetic': round(float((p[yte == 0] >= th['manipulated']).mean()), 4),
                  'syntheticCalledSynthetic': round(float((p[yte == 1] >= th['manipulated']).mean()), 4)},
         'platt': platt, 'thresholds': th}
  json.dump(out, open(f'{HERE}/figures-{ATTEMPT}-secondary-lr.json', 'w'), indent=1); print(json.dumps(out, indent=1)); sys.exit()

if step == 'ship':  # only after the ship rule held: the candidate with its test figures, into server/models
  f = json.load(open(f'{HERE}/figures-{ATTEMPT}-fused-same-clips.json'))
  man = json.load(open(f'{HERE}/manifest-v{MAJOR}.json' if os.path.exists(f'{HERE}/manifest-v{MAJOR}.json') else f'{HERE}/manifest.json'))  # v7: more sources
  d = json.load(open(f'{C}/speech-antispoof.json')); t = f['test']
  assert d['sha256'] == sha(f'{C}/speech-antispoof.onnx') and d['calibration']['a'] == f['platt']['a'] and d['thresholds'] == f['thresholds']
  d['training'] = {'architecture': d['training']['architecture'],
    'data': {'bonaFide': man['total']['real'], 'synthetic': man['total']['synthetic'], 'sources': [f"{s['repo']}@{s['commit'][:10]}" for s in man['sources']]},
    'split': 'test (scored once): 16 held-out TTS/vocoder systems and held-out bona fide sources; branch B checkpoint, fusion constants, '
             'calibration and thresholds from a validation split of seen systems and other bona fide speakers',
    'figures': {'heldOutEer': t['eer'], 'heldOutAuc': t['auc'], 'perSystemEer': {s: v['eer'] for s, v in t['perSystem'].items()},
                'test': t['clips'], 'atThresholds': t['atValidationThresholds'],
                'v1TestSubset': {'eer': f['testV1Subset']['eer'], 'auc': f['testV1Subset']['auc']},
                'validation': {'eer': f['validation']['eer'], **f['validation']['clips']}},
    **{k: v for k, v in json.load(open(f'{C}/fit.json'))['branchB'].items() if k in ('step', 'ensemble')}, 'card': 'training/speech/MODEL_CARD.md'}
  shutil.copyfile(f'{C}/speech-antispoof.onnx', '/work/main/server/models/speech-antispoof.onnx')
  json.dump(d, open('/work/main/server/models/speech-antispoof.json', 'w'), indent=2); print('shipped', d['version'], d['sha256'])
