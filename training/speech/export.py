"""Exports the best checkpoint to server/models/speech-antispoof.onnx (opset 17, 4 s of 16 kHz in,
one logit out), fits Platt calibration and chooses thresholds on the held-out-system validation split,
and writes the loader descriptor server/models/speech-antispoof.json."""
import hashlib, json, numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from train import Net, split, evaluate, eer, D, WIN
torch.set_num_threads(1)
M = '/work/main/server/models'
net = Net(); ck = torch.load(f'{D}/best.pt'); net.load_state_dict(ck['net']); net.eval()
z = np.load(f'{D}/clips.npz'); meta = json.load(open(f'{D}/meta.json'))
A, O = z['audio'], z['offs']; clips = [A[O[i]:O[i + 1]] for i in range(len(meta))]
tr, va = split(meta); y = np.array([meta[i]['label'] for i in va]); s = evaluate(net, clips, va)
lr = LogisticRegression(C=1e4).fit(s[:, None], y); a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
p = 1 / (1 + np.exp(-(a * s + b)))
real, fake = np.sort(p[y == 0]), np.sort(p[y == 1])
# manipulated: at most 2 % of held-out bona fide above it; authentic: at most 5 % of held-out-system fakes below it
manip = float(max(0.5, np.quantile(real, 0.98) + 1e-4)); auth = float(min(0.5, np.quantile(fake, 0.05) - 1e-4))
per_sys = {}
for i, sc in zip(va, s):
  if meta[i]['label'] == 1: per_sys.setdefault(meta[i]['system'], []).append(sc)
real_s = s[y == 0]
sys_eer = {k: round(eer(np.concatenate([real_s, v]), np.r_[np.zeros(len(real_s)), np.ones(len(v))]), 4) for k, v in per_sys.items()}
figures = {'heldOutEer': round(eer(s, y), 4), 'heldOutAuc': round(float(roc_auc_score(y, s)), 4), 'perSystemEer': sys_eer,
  'validation': {'bonaFide': int((y == 0).sum()), 'synthetic': int((y == 1).sum())},
  'atThresholds': {'bonaFideCalledSynthetic': round(float((real >= manip).mean()), 4), 'syntheticCalledSynthetic': round(float((fake >= manip).mean()), 4),
                   'syntheticCalledAuthentic': round(float((fake <= auth).mean()), 4), 'bonaFideCalledAuthentic': round(float((real <= auth).mean()), 4)}}
print(json.dumps(figures, indent=1), a, b, auth, manip)
x = torch.zeros(1, WIN)
torch.onnx.export(net, x, f'{M}/speech-antispoof.onnx', opset_version=17, input_names=['waveform'], output_names=['logit'], dynamic_axes={'waveform': {0: 'batch'}, 'logit': {0: 'batch'}})
sha = hashlib.sha256(open(f'{M}/speech-antispoof.onnx', 'rb').read()).hexdigest()
man = json.load(open('/work/main/training/speech/manifest.json'))
desc = {'name': 'speech-antispoof', 'version': '1.0.0', 'taskTypes': ['ai-audio-detection'], 'model': 'speech-antispoof.onnx', 'sha256': sha,
  'input': {'kind': 'waveform', 'name': 'waveform', 'sampleRate': 16000, 'seconds': 4, 'normalise': 'peak'},
  'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': 1,
  'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6)}, 'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
  'training': {'architecture': 'LFCC (conv1d DFT, 60 linear filters, 30 cepstra + deltas) + 4-stage CNN, ' + str(sum(p.numel() for p in net.parameters())) + ' parameters',
    'data': {'bonaFide': man['total']['real'], 'synthetic': man['total']['synthetic'], 'sources': [f"{s['repo']}@{s['commit'][:10]}" for s in man['sources']]},
    'split': 'held out: waveglow, wavenet, vits, jets, naturalspeech, naturalspeech2, fastdiff; bona fide VCTK/LibriTTS/hifigan-ss sources and a fifth of LibriSpeech speakers',
    'figures': figures, 'step': ck['step'], 'card': 'training/speech/MODEL_CARD.md'}}
json.dump(desc, open(f'{M}/speech-antispoof.json', 'w'), indent=2)
json.dump(figures, open('/work/main/training/speech/figures.json', 'w'), indent=1)
print(sha)
