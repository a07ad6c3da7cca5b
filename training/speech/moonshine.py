"""v16 (stop 77): a frozen pretrained speech encoder as a branch beside the shipped model (MODEL_CARD.md, "v16 attempt").

Frozen self-supervised or ASR encoders with a linear back end generalise to unseen spoofing systems far better than
networks trained on a small corpus alone (Wang & Yamagishi, "Investigating self-supervised front ends for speech spoofing
countermeasures", Odyssey 2022; Pascu et al., "Towards generalisable and calibrated audio deepfake detection with
self-supervised representations", Interspeech 2024: frozen wav2vec 2.0 + logistic regression). The only large-data speech
encoder that ships inside a reachable package is Moonshine tiny's English ASR encoder (Jeffries et al., arXiv 2410.15608;
`@moonshine-ai/moonshine-js@0.1.29`, MIT; frontends-survey-stop76.md). Branch M is that encoder, frozen, with the mean and
standard deviation over time of the hidden states at one or more of its layers (taps), standardised, and a logistic
regression trained here.

Steps (SPEECH_DATA=<dir>, the data of `attempt.sh data`; the test is read only by `test`, after the candidate is frozen):
  moonshine.py encoder   the encoder from the pinned npm tarball (integrity and sha256 checked) -> D/moonshine/encoder.onnx,
                         and D/moonshine/taps.onnx: the encoder with every tap's pooled statistics as outputs
  moonshine.py windows   (after pairs_v3.py and export.py --windows-only) D/train_windows.f32/.json: up to 2 windows
                         (train.py `windows`) of every training clip, its codec copies, its self-vocoded twins and their
                         copies, with label and sample weight; D/val_windows.json: export.py's windows of validation only
  node moonshine_taps.mjs D/moonshine/taps.onnx D train_windows|val_windows   -> D/moonshine/<prefix>.f32 (per window)
  moonshine.py fit       per candidate (a tap, or all eight joined) and C, a logistic regression on the training windows, chosen by validation clip EER:
                         D/candidate-v16/branch-m.onnx
  node score_onnx.mjs    the shipped model and branch M on val_windows -> D/shipped_val.json, D/branchm_val.json
  moonshine.py fuse      fused with the shipped model as fuse.py fuses (standardised, equal weights); Platt and thresholds
                         on validation; D/candidate-v16/speech-antispoof.onnx + .json (run again after score_onnx.mjs
                         scored the fused file on val_windows -> D/fused16_val.json: checks it against its branches)
  moonshine.py test      the test event, once, after the candidate is frozen: the figures of branch M, the fused
                         candidate and the shipped model from score_onnx.mjs's scores on eval_windows(2)
  moonshine.py frames    (stop 77's probe, after the test event; validation only) D/moonshine/frames.onnx: each tap's frames;
                         node moonshine_taps.mjs D/moonshine/frames.onnx D train_windows|val_windows -> frames-<prefix>.f32
  moonshine.py probe     a frame-level back end trained on them, its validation EER and its fusion with the shipped model
Usage: SPEECH_DATA=/work/data/speech-v16 /usr/bin/python3 moonshine.py encoder|windows|fit|fuse|test|frames|probe"""
import base64, hashlib, json, os, subprocess, sys, tarfile, numpy as np, onnx
from functools import partial
from collections import Counter
from onnx import helper, numpy_helper, TensorProto
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import split, eer, windows, add_copies, D, WIN, equal_fusion, fused_graph, platt_thresholds as platt_thresholds_by

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE, INTEGRITY = '@moonshine-ai/moonshine-js@0.1.29', 'sha512-Gx1B3mJcbM68ihSy/LyJEuEkGq7sYMqTb04zNdcIeidU0URVlSmXP0GyiQOTTAqDZQXlIC7k+bky+FdXk0UPlg=='
ENCODER_PATH, ENCODER_SHA = 'package/dist/model/tiny/quantized/encoder_model.onnx', 'c6fc4b7bc5af75c0591fd157a1f3829b533d18e9769a888fd95a62e470dd4f4a'
MS = f'{D}/moonshine'
# the taps, in the encoder's order: the conv stem's output, each of the six transformer layers' residual stream, the
# final layer norm's output
TAPS = [('stem', '/Transpose_output_0')] + [(f'layer{k}', f'/layers.{k}/Add_1_output_0') for k in range(6)] + [('final', 'last_hidden_state')]
WIDTH = 288
SHIPPED = f'{HERE}/../../server/models/speech-antispoof'
VERSION = os.environ.get('SPEECH_VERSION', '16.0.0'); ATTEMPT = os.environ.get('SPEECH_ATTEMPT', 'v16')
C = f'{D}/candidate-{ATTEMPT}'
CS = [0.001, 0.01, 0.1, 1.0]  # inverse L2 strengths tried per candidate, chosen on validation
CANDIDATES = [[t] for t, _ in TAPS] + [[t for t, _ in TAPS]]  # each tap alone, and all eight joined
TRAIN_WINDOWS = 2

def sha(path): return hashlib.sha256(open(path, 'rb').read()).hexdigest()

def pooled(nodes, tap, name):
  """mean and standard deviation over time (axis 1) of a (batch, time, 288) tensor -> (batch, 576) named `name`"""
  nodes += [helper.make_node('ReduceMean', [tap], [f'{name}/mean3'], axes=[1], keepdims=1),
            helper.make_node('Sub', [tap, f'{name}/mean3'], [f'{name}/dev']),
            helper.make_node('Mul', [f'{name}/dev', f'{name}/dev'], [f'{name}/sq']),
            helper.make_node('ReduceMean', [f'{name}/sq'], [f'{name}/var'], axes=[1], keepdims=0),
            helper.make_node('Sqrt', [f'{name}/var'], [f'{name}/std']),
            helper.make_node('Squeeze', [f'{name}/mean3', 'ms/axis1'], [f'{name}/mean']),
            helper.make_node('Concat', [f'{name}/mean', f'{name}/std'], [name], axis=1)]

def encoder_model():
  """the pinned encoder, opset raised from 14 to 17 (its operators are unchanged between them) so it joins the shipped graph"""
  m = onnx.load(f'{MS}/encoder.onnx')
  assert [(o.domain, o.version) for o in m.opset_import] == [('', 14)]
  m.opset_import[0].version = 17; m.ir_version = 8
  return m

def taps_model():
  m = encoder_model(); g = m.graph; nodes = list(g.node)
  for name, tap in TAPS: pooled(nodes, tap, f'tap/{name}')
  outs = [helper.make_tensor_value_info(f'tap/{name}', TensorProto.FLOAT, ['batch', 2 * WIDTH]) for name, _ in TAPS]
  inits = list(g.initializer) + [numpy_helper.from_array(np.array([1], np.int64), 'ms/axis1')]
  out = helper.make_model(helper.make_graph(nodes, 'moonshine-taps', list(g.input), outs, inits), opset_imports=m.opset_import)
  out.ir_version = 8; onnx.checker.check_model(out); return out

def frames_model():
  """the encoder with each tap's frames as outputs, channels first and averaged over pairs of frames: (batch, 288, T/2)"""
  m = encoder_model(); g = m.graph; nodes = list(g.node); outs = []
  for name, tap in TAPS:
    nodes += [helper.make_node('Transpose', [tap], [f'frames/{name}/t'], perm=[0, 2, 1]),
              helper.make_node('AveragePool', [f'frames/{name}/t'], [f'frames/{name}'], kernel_shape=[2], strides=[2])]
    outs.append(helper.make_tensor_value_info(f'frames/{name}', TensorProto.FLOAT, ['batch', WIDTH, 'frames']))
  out = helper.make_model(helper.make_graph(nodes, 'moonshine-frames', list(g.input), outs, list(g.initializer)), opset_imports=m.opset_import)
  out.ir_version = 8; onnx.checker.check_model(out); return out

def branch_model(taps, mu, sd, w, b):
  """branch M: waveform (batch, 64000) -> the encoder up to its last tap in `taps`, each tap pooled, the pools joined,
  standardised, one logit (batch)"""
  m = encoder_model(); g = m.graph
  names = [dict(TAPS)[t] for t in taps]
  # keep only the nodes the taps need: later layers are not run
  need, keep = set(names), []
  for n in reversed(list(g.node)):
    if any(o in need for o in n.output): keep.append(n); need |= set(n.input)
  nodes = [helper.make_node('Identity', ['waveform'], ['input_values'])] + list(reversed(keep))
  const = lambda n, v: numpy_helper.from_array(np.asarray(v, np.float32), n)
  for k, name in enumerate(names): pooled(nodes, name, f'm/pooled{k}')
  nodes += [helper.make_node('Concat', [f'm/pooled{k}' for k in range(len(names))], ['m/pooled'], axis=1),
            helper.make_node('Sub', ['m/pooled', 'm/mu'], ['m/c']), helper.make_node('Div', ['m/c', 'm/sd'], ['m/z']),
            helper.make_node('MatMul', ['m/z', 'm/w'], ['m/dot']), helper.make_node('Add', ['m/dot', 'm/b'], ['logit'])]
  inits = [t for t in g.initializer if t.name in need] + [numpy_helper.from_array(np.array([1], np.int64), 'ms/axis1'),
           const('m/mu', mu), const('m/sd', sd), const('m/w', w), const('m/b', [b])]
  gr = helper.make_graph(nodes, 'speech-branch-moonshine', [helper.make_tensor_value_info('waveform', TensorProto.FLOAT, ['batch', WIN])],
                         [helper.make_tensor_value_info('logit', TensorProto.FLOAT, ['batch'])], inits)
  out = helper.make_model(gr, opset_imports=[helper.make_opsetid('', 17)], producer_name='mediaproof training/speech/moonshine.py')
  out.ir_version = 8; onnx.checker.check_model(out, full_check=True); return out

def window_features(prefix):
  """per-window tap features from moonshine_taps.mjs (the index's rows in order, contiguous), and the index with its
  rows' first window renumbered into that file (val_windows' rows point into eval_windows.f32)"""
  idx = json.load(open(f'{D}/{prefix}.json')); n, rows = 0, []
  for r in idx['clips']: rows.append([r[0], n, *r[2:]]); n += r[2]
  X = np.fromfile(f'{MS}/{prefix}.f32', np.float32).reshape(n, len(TAPS), 2 * WIDTH)
  return X, {**idx, 'clips': rows}

def clip_logits(z, idx, keep=None):
  """clip index -> mean window logit (the service's and score_onnx.mjs's clip score)"""
  return {r[0]: float(z[r[1]:r[1] + r[2]].mean()) for r in idx['clips'] if keep is None or r[0] in keep}

meta = json.load(open(f'{D}/meta.json'))
tr, va, te = split(meta)
yva = np.array([meta[i]['label'] for i in va]); yte = np.array([meta[i]['label'] for i in te])
platt_thresholds = partial(platt_thresholds_by, y=yva)  # on validation (train.py)
step = sys.argv[1] if len(sys.argv) > 1 else ''

if step == 'encoder':
  os.makedirs(MS, exist_ok=True)
  tgz = subprocess.run(['npm', 'pack', PACKAGE, '--silent'], cwd=MS, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
  digest = 'sha512-' + base64.b64encode(hashlib.sha512(open(f'{MS}/{tgz}', 'rb').read()).digest()).decode()
  assert digest == INTEGRITY, f'{tgz}: integrity {digest}, expected {INTEGRITY}'
  with tarfile.open(f'{MS}/{tgz}') as t: open(f'{MS}/encoder.onnx', 'wb').write(t.extractfile(ENCODER_PATH).read())
  assert sha(f'{MS}/encoder.onnx') == ENCODER_SHA
  onnx.save(taps_model(), f'{MS}/taps.onnx'); print('encoder', ENCODER_SHA, '-> taps.onnx', [n for n, _ in TAPS]); sys.exit()

if step == 'frames':  # the stop-77 probe's graph: moonshine_taps.mjs on it writes D/moonshine/frames-<prefix>.f32
  onnx.save(frames_model(), f'{MS}/frames.onnx'); print('frames.onnx', [n for n, _ in TAPS]); sys.exit()

if step == 'windows':  # every training item's windows; validation and test windows are export.py's eval_windows
  z = np.load(f'{D}/clips.npz'); A, O = z['audio'], z['offs']
  clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
  aug = add_copies({}, f'{D}/aug.npz')
  sv = np.load(f'{D}/selfvoc.npz'); base = len(clips); VA, VO = sv['audio'], sv['offs']
  twin_src = sv['src'].tolist(); clips += [VA[VO[j]:VO[j + 1]] for j in range(len(twin_src))]
  add_copies(aug, f'{D}/selfvoc-aug.npz', base)
  # train.py's weights: within a class, 1/sqrt(clips of the system or bona fide repository); twins weigh as their recording
  group_of = lambda i: (meta[i]['label'], meta[i]['system'] if meta[i]['label'] else meta[i]['repo'])
  count = Counter(group_of(i) for i in tr)
  weight = lambda i: count[group_of(i)] ** -0.5
  trs = set(tr); items = []  # (item index into clips, label, group: the training clip it comes from, weight before class balance)
  for i in tr: items.append((i, meta[i]['label'], i, weight(i)))
  for j, s in enumerate(twin_src):
    assert s in trs and meta[s]['label'] == 0, 'twins of training bona fide only'
    items.append((base + j, 1, s, weight(s)))
  out, chunks, n = [], [], 0
  for item, label, group, w in items:
    variants = [clips[item]] + [x for _, (x, _) in sorted(aug.get(item, {}).items())]
    wv = w / len(variants)  # a clip and its copies weigh as one clip
    for x in variants:
      win = windows(x, max_windows=TRAIN_WINDOWS); chunks.append(win.astype(np.float32))
      out.append([item, n, len(win), label, group, wv]); n += len(win)
  np.concatenate(chunks).tofile(f'{D}/train_windows.f32'); json.dump({'win': WIN, 'clips': out}, open(f'{D}/train_windows.json', 'w'))
  idx = json.load(open(f'{D}/eval_windows.json')); pairs = json.load(open(f'{D}/pairs.json'))
  keep = set(va) | {pairs[str(i)][0] for i in va if meta[i]['label'] == 1 and str(i) in pairs}  # fuse.py's validation index
  rows = [r for r in idx['clips'] if r[0] in keep]; assert not {r[0] for r in rows} & set(te), 'no test clip in the validation index'
  json.dump({'win': idx['win'], 'clips': rows}, open(f'{D}/val_windows.json', 'w'))
  if not os.path.exists(f'{D}/val_windows.f32'): os.symlink(f'{D}/eval_windows.f32', f'{D}/val_windows.f32')
  print('training windows', n, 'from', len(out), 'items (', len(tr), 'clips,', len(twin_src), 'twins, and their codec copies)'); sys.exit()

if step == 'fit':
  Xtr, itr = window_features('train_windows'); Xev, iev = window_features('val_windows')
  rows = itr['clips']
  ytr = np.concatenate([[r[3]] * r[2] for r in rows]).astype(int)
  wtr = np.concatenate([[r[5] / r[2]] * r[2] for r in rows])
  for c in (0, 1): wtr[ytr == c] *= len(wtr) / 2 / wtr[ytr == c].sum()  # the classes weigh alike
  vaset = set(va); results = []
  for taps in CANDIDATES:
    cols = [k for k, (t, _) in enumerate(TAPS) if t in taps]
    x = Xtr[:, cols].reshape(len(Xtr), -1).astype(np.float64); mu = x.mean(0); sd = x.std(0) + 1e-6; xs = (x - mu) / sd
    xe = (Xev[:, cols].reshape(len(Xev), -1) - mu) / sd
    for c in CS:
      lr = LogisticRegression(C=c, max_iter=3000).fit(xs, ytr, sample_weight=wtr)
      z = lr.decision_function(xe); cl = clip_logits(z, iev, vaset); s = np.array([cl[i] for i in va])
      results.append({'taps': taps, 'C': c, 'validationEer': round(eer(s, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, s)), 4),
                      'trainAccuracy': round(float(lr.score(xs, ytr)), 4)})
      print(json.dumps(results[-1]), flush=True)
      if min(results, key=lambda r: (r['validationEer'], -r['validationAuc'])) is results[-1]: best = (taps, c, mu, sd, lr)
  taps, c, mu, sd, lr = best
  print('chosen', taps, 'C', c)
  os.makedirs(C, exist_ok=True)
  onnx.save(branch_model(taps, mu, sd, lr.coef_[0], float(lr.intercept_[0])), f'{C}/branch-m.onnx')
  json.dump({'candidates': results, 'chosen': {'taps': taps, 'C': c}}, open(f'{C}/branch-m-choice.json', 'w'), indent=1)
  print('next: node moonshine_taps.mjs score (branch M and the shipped model on the validation windows), then moonshine.py fuse'); sys.exit()

def load_scores(path): return {int(k): v for k, v in json.load(open(path)).items()}

if step == 'fuse':
  S, M = load_scores(f'{D}/shipped_val.json'), load_scores(f'{D}/branchm_val.json')
  sS, sM = np.array([S[i] for i in va]), np.array([M[i] for i in va])
  (cS, dS), (cM, dM), (kS, kM, k0) = equal_fusion(sS, sM, yva)
  fused = kS * sS + kM * sM + k0
  platt, th = platt_thresholds(fused); pM, thM = platt_thresholds(sM)
  onnx.save(fused_graph(f'{SHIPPED}.onnx', f'{C}/branch-m.onnx', ('s/', 'mm/'), 'SM', (kS, kM, k0), f'speech-antispoof-v{VERSION.split(".")[0]}',
                       'mediaproof training/speech/moonshine.py'), f'{C}/speech-antispoof.onnx')  # the shipped model, then branch M
  shipped = json.load(open(f'{SHIPPED}.json')); choice = json.load(open(f'{C}/branch-m-choice.json'))['chosen']
  fit = {'shipped': {'version': shipped['version'], 'sha256': sha(f'{SHIPPED}.onnx'), 'centre': cS, 'spread': dS,
                     'validationEer': round(eer(sS, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, sS)), 4)},
         'branchM': {**choice, 'encoder': {'package': PACKAGE, 'integrity': INTEGRITY, 'path': ENCODER_PATH, 'sha256': ENCODER_SHA},
                     'sha256': sha(f'{C}/branch-m.onnx'), 'centre': cM, 'spread': dM, 'validationEer': round(eer(sM, yva), 4),
                     'validationAuc': round(float(roc_auc_score(yva, sM)), 4), 'platt': pM, 'thresholds': thM},
         'fusion': {'kS': kS, 'kM': kM, 'k0': k0, 'validationEer': round(eer(fused, yva), 4), 'validationAuc': round(float(roc_auc_score(yva, fused)), 4),
                    'platt': platt, 'thresholds': th, 'sha256': sha(f'{C}/speech-antispoof.onnx')}}
  json.dump(fit, open(f'{C}/fit.json', 'w'), indent=1)
  training = {'architecture': f'two branches in one graph, fused per window as 0.5·(zS − cS)/sS + 0.5·(zM − cM)/sM (constants from validation): '
              f'S = speech-antispoof {shipped["version"]} (itself two LFCC CNN branches); M = Moonshine tiny\'s English ASR encoder '
              f'({PACKAGE}, MIT, frozen, int8): the mean and standard deviation over time of the 288 features of its {"+".join(choice["taps"])} output, '
              f'and a logistic regression (C {choice["C"]}) trained here on the training clips, their codec copies and self-vocoded twins',
              'card': 'training/speech/MODEL_CARD.md'}
  desc = {**shipped, 'version': VERSION, 'sha256': sha(f'{C}/speech-antispoof.onnx'), 'calibration': {'method': 'platt', **platt},
          'thresholds': th, 'training': training}
  for k in ('codecThresholds', 'narrowbandThresholds', 'figures'): desc.pop(k, None)  # chosen again on validation if it ships
  json.dump(desc, open(f'{C}/speech-antispoof.json', 'w'), indent=2)
  json.dump({'calibration': {'method': 'platt', **pM}, 'thresholds': thM}, open(f'{C}/branch-m.json', 'w'), indent=2)
  print(json.dumps(fit, indent=1))
  if os.path.exists(f'{D}/fused16_val.json'):  # after score_onnx.mjs ran the fused file on the validation windows
    F = load_scores(f'{D}/fused16_val.json'); d = max(abs(F[i] - (kS * S[i] + kM * M[i] + k0)) for i in F)
    print('fused ONNX vs the fusion of its branches on validation windows: max |diff|', d); assert d < 1e-3
  sys.exit()

def figures(score_of, name, pairs):
  """export.py's figures for one model from clip logits: validation and test EER/AUC, per-system EER, the source-free paired
  accuracy, and the shares called at thresholds fitted on validation by its rule"""
  sva, ste = np.array([score_of[i] for i in va]), np.array([score_of[i] for i in te])
  platt, th = platt_thresholds(sva); cal = lambda z: 1 / (1 + np.exp(-(platt['a'] * z + platt['b'])))
  def block(idx, z, y):
    p = cal(z); real = z[y == 0]; systems = {}
    for sysname in sorted({meta[i]['system'] for i, l in zip(idx, y) if l == 1}):
      v = np.array([sc for i, sc, l in zip(idx, z, y) if l == 1 and meta[i]['system'] == sysname])
      systems[sysname] = round(eer(np.r_[real, v], np.r_[np.zeros(len(real)), np.ones(len(v))]), 4)
    return {'clips': {'bonaFide': int((y == 0).sum()), 'synthetic': int((y == 1).sum())}, 'eer': round(eer(z, y), 4),
            'auc': round(float(roc_auc_score(y, z)), 4), 'perSystemEer': systems, 'meanSystemEer': round(float(np.mean(list(systems.values()))), 4),
            'bonaFideCalledSynthetic': round(float((p[y == 0] >= th['manipulated']).mean()), 4),
            'syntheticCalledSynthetic': round(float((p[y == 1] >= th['manipulated']).mean()), 4),
            'syntheticCalledAuthentic': round(float((p[y == 1] <= th['authentic']).mean()), 4)}
  f = {'model': name, 'validation': block(va, sva, yva), 'test': block(te, ste, yte), 'platt': platt, 'thresholds': th}
  hits = [float(score_of[i] > score_of[pairs[str(i)][0]]) for i in te
          if meta[i]['label'] == 1 and str(i) in pairs and pairs[str(i)][0] in score_of]
  f['test']['pairedAccuracy'] = {'pairs': len(hits), 'accuracy': round(float(np.mean(hits)), 4) if hits else None}
  return f

def frame_probe_net():
  """stop 77's probe (validation only): a softmax-weighted sum of the taps' frames (SUPERB, Yang et al., Interspeech
  2021), two 1-D convolutions and attentive statistics pooling (Okabe et al., Interspeech 2018) -> one logit"""
  import torch, torch.nn as nn

  class FrameProbe(nn.Module):
    def __init__(self):
      super().__init__()
      self.mix = nn.Parameter(torch.zeros(len(TAPS))); self.norm = nn.BatchNorm1d(WIDTH)
      self.convs = nn.Sequential(nn.Conv1d(WIDTH, 128, 3, padding=1), nn.ReLU(), nn.Dropout(0.3), nn.Conv1d(128, 128, 3, padding=1), nn.ReLU())
      self.attention = nn.Conv1d(128, 1, 1); self.out = nn.Sequential(nn.Dropout(0.3), nn.Linear(256, 1))

    def forward(self, x):  # x: (batch, taps, 288, frames)
      h = self.convs(self.norm((torch.softmax(self.mix, 0)[None, :, None, None] * x).sum(1)))
      a = torch.softmax(self.attention(h), -1); mean = (a * h).sum(-1)
      std = ((a * (h - mean[..., None]) ** 2).sum(-1) + 1e-6).sqrt()
      return self.out(torch.cat([mean, std], 1))[:, 0]
  return FrameProbe()

def frame_features(prefix):
  """moonshine_taps.mjs's output of frames.onnx for a windows file, as float16 (windows, taps, 288, frames), and the index
  renumbered as window_features does"""
  idx = json.load(open(f'{D}/{prefix}.json')); n, rows = 0, []
  for r in idx['clips']: rows.append([r[0], n, *r[2:]]); n += r[2]
  raw = np.memmap(f'{MS}/frames-{prefix}.f32', np.float32, 'r'); T = raw.size // (n * len(TAPS) * WIDTH)
  raw = raw.reshape(n, len(TAPS), WIDTH, T); X = np.empty(raw.shape, np.float16)
  for a in range(0, n, 1000): X[a:a + 1000] = raw[a:a + 1000]
  return X, {**idx, 'clips': rows}

if step == 'probe':
  import torch
  torch.manual_seed(77); torch.set_num_threads(2); rng = np.random.default_rng(77)
  Xtr, itr = frame_features('train_windows'); Xva, iva = frame_features('val_windows')
  rows = itr['clips']
  ytr = np.concatenate([[r[3]] * r[2] for r in rows]).astype(np.float32)
  wtr = np.concatenate([[r[5] / r[2]] * r[2] for r in rows]).astype(np.float32)
  for c in (0, 1): wtr[ytr == c] *= len(wtr) / 2 / wtr[ytr == c].sum()
  net = frame_probe_net(); opt = torch.optim.AdamW(net.parameters(), 1e-3, weight_decay=1e-2)
  S = load_scores(f'{D}/shipped_val.json'); sS = np.array([S[i] for i in va]); vaset = set(va); log = []
  def validate():
    net.eval(); z = []
    with torch.no_grad():
      for a in range(0, len(Xva), 256): z.append(net(torch.from_numpy(Xva[a:a + 256].astype(np.float32))).numpy())
    cl = clip_logits(np.concatenate(z), iva, vaset); return np.array([cl[i] for i in va])
  for epoch in range(8):
    net.train(); order = rng.permutation(len(Xtr))
    for a in range(0, len(order), 128):
      b = np.sort(order[a:a + 128]); x = torch.from_numpy(Xtr[b].astype(np.float32))
      loss = (torch.nn.functional.binary_cross_entropy_with_logits(net(x), torch.from_numpy(ytr[b]), reduction='none') * torch.from_numpy(wtr[b])).mean()
      opt.zero_grad(); loss.backward(); opt.step()
    sP = validate(); _, _, (kS, kP, k0) = equal_fusion(sS, sP, yva); fused = kS * sS + kP * sP + k0
    log.append({'epoch': epoch + 1, 'branchEer': round(eer(sP, yva), 4), 'branchAuc': round(float(roc_auc_score(yva, sP)), 4),
                'fusedEer': round(eer(fused, yva), 4), 'fusedAuc': round(float(roc_auc_score(yva, fused)), 4),
                'tapWeights': [round(float(w), 3) for w in torch.softmax(net.mix, 0)]})
    print(json.dumps(log[-1]), flush=True)
  best = min(log, key=lambda r: (r['branchEer'], -r['branchAuc']))
  json.dump({'epochs': log, 'kept': best, 'lead': best['fusedEer'] <= 0.168}, open(f'{HERE}/figures-stop77-frame-probe.json', 'w'), indent=1)
  print('kept', best, 'lead' if best['fusedEer'] <= 0.168 else 'no lead'); sys.exit()

if step == 'test':  # once, after the candidate's sha256 is recorded and committed
  pairs = json.load(open(f'{D}/pairs.json')); out = {}
  for key, path in (('shipped', 'shipped_scores'), ('branchM', 'branchm_scores'), ('fused', 'fused16_scores')):
    sc = load_scores(f'{D}/{path}.json'); sc.update(load_scores(f'{D}/{path}-2.json'))
    out[key] = figures(sc, key, pairs)
    print(key, 'validation', out[key]['validation']['eer'], out[key]['validation']['auc'], '| test EER', out[key]['test']['eer'],
          'AUC', out[key]['test']['auc'], 'mean system EER', out[key]['test']['meanSystemEer'], 'paired', out[key]['test']['pairedAccuracy'],
          'bona fide called synthetic', out[key]['test']['bonaFideCalledSynthetic'], flush=True)
  out['candidate'] = {'fit': json.load(open(f'{C}/fit.json')), 'sha256': sha(f'{C}/speech-antispoof.onnx')}
  json.dump(out, open(f'{HERE}/figures-{ATTEMPT}-moonshine.json', 'w'), indent=1); sys.exit()

print(__doc__); sys.exit(2)
