"""Export the SBI face-forgery model to ONNX (opset 17) with its descriptor (v3.0.0).
The checkpoint with the best unseen-identity validation AUC (best.pt, chosen during training on
a fixed paired validation SBI set; raw or EMA weights, with or without test-time flip averaging,
whichever scored best there) is exported. Platt calibration and thresholds are chosen on
that validation split; the unseen-identity test split is reported (never used for choices).
Run after train.py: /usr/bin/python3 training/face-forgery/export.py
"""
import hashlib, json, os, sys, time
import numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
sys.path.insert(0, os.path.dirname(__file__))
import train
from train import Net, load, fixed_set, v1_fixed_set, scores, WORK, S

torch.set_num_threads(1)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.environ.get('OUT', os.path.join(ROOT, 'server', 'models'))
VERSION = '3.0.0'
best = torch.load(os.path.join(WORK, 'best.pt')); last = torch.load(os.path.join(WORK, 'ckpt.pt'))
train.NORM = best.get('norm', 'bn'); net = Net(); net.load_state_dict(best['net']); net.eval(); net.tta = bool(best.get('tta', False))
net = net.to(memory_format=torch.channels_last)  # faster scoring here; exported contiguous
x, sp = load(); sp = np.array(sp)
va, te = np.where(sp == 'val')[0], np.where(sp == 'test')[0]
Xv, yv = fixed_set(x, va, 1)
Xt, yt = fixed_set(x, te, 2)
lv, lt = scores(net, Xv), scores(net, Xt)
lr = LogisticRegression(C=1e6).fit(lv[:, None], yv); a, b = float(lr.coef_[0][0]), float(lr.intercept_[0])
pv = 1 / (1 + np.exp(-(a * lv + b))); pt = 1 / (1 + np.exp(-(a * lt + b)))
# authentic: at most 5% of validation blends fall below; manipulated: at most 5% of real crops above.
auth = float(np.quantile(pv[yv == 1], 0.05)); manip = float(np.quantile(pv[yv == 0], 0.95))
if auth > manip: auth, manip = manip, auth
def rates(p, y):
    return {'realCalledAuthentic': round(float((p[y == 0] < auth).mean()), 4), 'blendCalledAuthentic': round(float((p[y == 1] < auth).mean()), 4),
            'blendCalledManipulated': round(float((p[y == 1] >= manip).mean()), 4), 'realCalledManipulated': round(float((p[y == 0] >= manip).mean()), 4)}
# v1.0.0's protocol (alternating crops, v1 blends, seed 1 / 2): the like-for-like comparison with 0.6357 / 0.6366.
# V1=0 skips it (v3.0.0: skipped for time on the shared machine; v2.0.0 recorded 0.788 / 0.808).
figs = {'valAuc': round(float(roc_auc_score(yv, lv)), 4), 'testAuc': round(float(roc_auc_score(yt, lt)), 4)}
if os.environ.get('V1', '1') == '1':
    Xv1, yv1 = v1_fixed_set(x, va, 1); Xt1, yt1 = v1_fixed_set(x, te, 2)
    figs['v1Protocol'] = {'valAuc': round(float(roc_auc_score(yv1, scores(net, Xv1))), 4), 'testAuc': round(float(roc_auc_score(yt1, scores(net, Xt1))), 4)}
figs.update({
        'val': {'crops': int(len(va)), 'images': int(len(yv)), **rates(pv, yv)}, 'test': {'crops': int(len(te)), 'images': int(len(yt)), **rates(pt, yt)},
        'bestStep': int(best['step']), 'bestWeights': best.get('weights', 'raw'), 'testTimeFlip': net.tta,
        'historyColumns': ['step', 'seconds', 'valAuc EMA', 'valAuc EMA+flip'], 'history': last.get('hist', [])})
print(json.dumps({k: v for k, v in figs.items() if k != 'history'}), flush=True)
# Deterministic ramp recorded for the test: R = x/127, G = y/127, B = ((7x + 13y) mod 128)/127.
yy, xx = np.mgrid[0:S, 0:S]
ramp = np.stack([xx / 127, yy / 127, ((7 * xx + 13 * yy) % 128) / 127]).astype(np.float32)[None]
net = net.to(memory_format=torch.contiguous_format)
with torch.no_grad(): ramp_logit = float(net(torch.from_numpy(ramp))[0, 0])
os.makedirs(OUT, exist_ok=True)
path = os.path.join(OUT, 'face-forgery-sbi.onnx')
torch.onnx.export(net, torch.zeros(1, 3, S, S), path, opset_version=17, input_names=['image'], output_names=['logit'],
                  dynamic_axes={'image': {0: 'n'}, 'logit': {0: 'n'}})
t = time.time(); n = 0
with torch.no_grad():
    while time.time() - t < 5: net(Xv[:1]); n += 1
speed = n / (time.time() - t)
params = sum(p.numel() for n_, p in net.named_parameters() if not n_.startswith('xray.'))  # the X-ray head is training-only
norm = 'BatchNorm (statistics recalibrated on training batches)' if train.NORM == 'bn' else 'GroupNorm'
# v3 ships with weight 0: its still-photo thresholds called every FF++ clip manipulated (MODEL_CARD.md).
# WEIGHT=1 only for a model whose thresholds were validated on video frames.
WEIGHT = float(os.environ.get('WEIGHT', '0'))
NOT_WEIGHED_BECAUSE = ('its thresholds come from still LFW photos and do not carry to video: on seven FaceForensics++ c23 clips '
                       '(evaluation only) every clip, the three originals included, scores over the manipulated threshold (0.78-0.99), so weighed it would call real videos face-swapped')
desc = {'name': 'face-forgery-sbi', 'version': VERSION, 'taskTypes': ['faceswap-detection', 'ekyc-deepfake'],
        'model': 'face-forgery-sbi.onnx', 'sha256': hashlib.sha256(open(path, 'rb').read()).hexdigest(),
        'input': {'kind': 'image', 'name': 'image', 'width': S, 'height': S, 'layout': 'NCHW', 'scale': 1 / 255,
                  'mean': [0, 0, 0], 'std': [1, 1, 1], 'resize': 'fill'},
        'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': WEIGHT,
        'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6)},
        'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
        'training': {'method': 'Self-Blended Images (Shiohara & Yamasaki, CVPR 2022)', **({'notWeighedBecause': NOT_WEIGHED_BECAUSE} if WEIGHT == 0 else {}),
                     'architecture': f'luma (in the model) + 8-layer CNN with {norm}, {params} parameters, 128x128 RGB face crop' + (', mean logit of the crop and its mirror image (test-time flip, in the model)' if net.tta else ''),
                     'initialisedFrom': best.get('init'), 'priorSteps': 2836 if best.get('init') else 0, 'priorTrainSeconds': 3022 if best.get('init') else 0,
                     'crop': 'square of side 0.6 x the larger side of the Human face box, centred on the box (training: central 200x200 of the 350x350 photos, whose Human boxes span ~330 px, with +-10 % scale and +-5 px shift jitter)',
                     'data': {'source': 'muxspace/facial_expressions@5fb9c13afa images/ (LFW-named, greyscale, LFW terms; repo Apache-2.0)',
                              'crops': int(len(x)), 'split': {k: int((sp == k).sum()) for k in ('train', 'val', 'test')}, 'splitBy': 'identity'},
                     'steps': int(last['step']), 'trainSeconds': round(float(last['spent'])), 'figures': figs,
                     'torchCropsPerSecondOneThread': round(speed, 1), 'rampLogit': round(ramp_logit, 5),
                     'card': 'training/face-forgery/MODEL_CARD.md'}}
json.dump(desc, open(os.path.join(OUT, 'face-forgery-sbi.json'), 'w'), indent=2)
print('ramp logit', ramp_logit, 'crops/s', speed, 'size', os.path.getsize(path), flush=True)
