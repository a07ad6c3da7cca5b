"""Export the SBI face-forgery model to ONNX (opset 17) with its descriptor (v4.0.0).
The checkpoint with the best unseen-identity validation AUC (best.pt, chosen during training; v4:
on the fixed paired H.264 validation set, EMA weights with or without test-time flip) is exported.
Platt calibration and thresholds are chosen on that H.264 validation set (v3: on the still one);
the still validation set and both test sets (still and H.264, unseen identities) are reported,
never used for choices. PREV=<onnx> also scores the previous version on the same four sets.
Run after train.py: /usr/bin/python3 training/face-forgery/export.py
"""
import hashlib, json, os, sys, time
import numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
sys.path.insert(0, os.path.dirname(__file__))
import train
from train import Net, load, fixed_set, fixed_h264_set, v1_fixed_set, scores, load_onnx_init, H264_SETTINGS, WORK, S

torch.set_num_threads(1)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.environ.get('OUT', os.path.join(ROOT, 'server', 'models'))
VERSION = '4.0.0'
PRIOR = {'steps': 5695, 'seconds': 7797}  # v1-v3 before this run (v2.0.0 2,836 steps / 3,022 s, v3.0.0 2,859 / 4,775)
best = torch.load(os.path.join(WORK, 'best.pt')); last = torch.load(os.path.join(WORK, 'ckpt.pt'))
train.NORM = best.get('norm', 'bn'); net = Net(); net.load_state_dict(best['net']); net.eval(); net.tta = bool(best.get('tta', False))
net = net.to(memory_format=torch.channels_last)  # faster scoring here; exported contiguous
x, sp = load(); sp = np.array(sp)
tr, va, te = np.where(sp == 'train')[0], np.where(sp == 'val')[0], np.where(sp == 'test')[0]
Xv, yv = fixed_set(x, va, 1)
Xt, yt = fixed_set(x, te, 2)
Xh, yh = fixed_h264_set(x, va, 1)     # chooses the checkpoint, the calibration and the thresholds
Xht, yht = fixed_h264_set(x, te, 2)
lv, lt, lh, lht = scores(net, Xv), scores(net, Xt), scores(net, Xh), scores(net, Xht)
lr = LogisticRegression(C=1e6).fit(lh[:, None], yh); a, b = float(lr.coef_[0][0]), float(lr.intercept_[0])
cal = lambda l: 1 / (1 + np.exp(-(a * l + b)))
pv, pt, ph, pht = cal(lv), cal(lt), cal(lh), cal(lht)
# authentic: at most 5% of H.264 validation blends fall below; manipulated: at most 5% of its real crops above.
auth = float(np.quantile(ph[yh == 1], 0.05)); manip = float(np.quantile(ph[yh == 0], 0.95))
if auth > manip: auth, manip = manip, auth
def rates(p, y):
    return {'realCalledAuthentic': round(float((p[y == 0] < auth).mean()), 4), 'blendCalledAuthentic': round(float((p[y == 1] < auth).mean()), 4),
            'blendCalledManipulated': round(float((p[y == 1] >= manip).mean()), 4), 'realCalledManipulated': round(float((p[y == 0] >= manip).mean()), 4)}
def auc(y, l): return round(float(roc_auc_score(y, l)), 4)
def by_setting(y, l):  # pair k of the H.264 sets was coded with H264_SETTINGS[k % 4]
    k = np.arange(len(y)) // 2 % len(H264_SETTINGS)
    return {f'crf{c}-{side}px': auc(y[k == g], l[k == g]) for g, (c, side) in enumerate(H264_SETTINGS)}
def four(m):
    return {'h264ValAuc': auc(yh, scores(m, Xh)), 'h264TestAuc': auc(yht, scores(m, Xht)), 'stillValAuc': auc(yv, scores(m, Xv)), 'stillTestAuc': auc(yt, scores(m, Xt))}
# valAuc / testAuc are the H.264 sets' (the detector's 0.85 gate reads valAuc); the still sets as v3 measured them beside.
figs = {'valAuc': auc(yh, lh), 'testAuc': auc(yht, lht), 'validationSet': 'h264', 'stillValAuc': auc(yv, lv), 'stillTestAuc': auc(yt, lt),
        'h264Settings': 'libx264 yuv420p preset medium; a quarter each: CRF 23 / 30 at 128 px, CRF 23 / 30 down-scaled to 88 px and back',
        'h264ValBySetting': by_setting(yh, lh), 'h264TestBySetting': by_setting(yht, lht)}
if os.environ.get('PREV'):  # the previous version (ONNX, BatchNorm un-folded: eval mode reproduces it) on the same four sets
    prev = Net().to(memory_format=torch.channels_last); prev.train(); load_onnx_init(prev, os.environ['PREV'], x, tr, np.random.default_rng(7)); prev.eval()
    pj = json.load(open(os.environ['PREV_JSON'])) if os.environ.get('PREV_JSON') else {}
    figs['previous'] = {'version': pj.get('version'), **four(prev)}
if os.environ.get('V1', '1') == '1':
    Xv1, yv1 = v1_fixed_set(x, va, 1); Xt1, yt1 = v1_fixed_set(x, te, 2)
    figs['v1Protocol'] = {'valAuc': auc(yv1, scores(net, Xv1)), 'testAuc': auc(yt1, scores(net, Xt1))}
figs.update({
        'h264Val': {'crops': int(len(va)), 'images': int(len(yh)), **rates(ph, yh)}, 'h264Test': {'crops': int(len(te)), 'images': int(len(yht)), **rates(pht, yht)},
        'stillVal': {'crops': int(len(va)), 'images': int(len(yv)), **rates(pv, yv)}, 'stillTest': {'crops': int(len(te)), 'images': int(len(yt)), **rates(pt, yt)},
        'bestStep': int(best['step']), 'bestWeights': best.get('weights', 'raw'), 'testTimeFlip': net.tta,
        'historyColumns': ['step', 'seconds', 'h264 valAuc EMA+flip', 'still valAuc EMA+flip'], 'history': last.get('hist', [])})
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
# Weight 0 by default with the recorded reason (MODEL_CARD.md); WEIGHT=... only for a model whose
# thresholds hold on real video (v4: checked on the FF++ clips; OUT=<scratch dir> for a trial pack).
WEIGHT = float(os.environ.get('WEIGHT', '0'))
NOT_WEIGHED_BECAUSE = ('its thresholds come from still LFW photos (since v4 passed through H.264, not real video) and do not yet carry to video: '
                       'on seven FaceForensics++ c23 clips (evaluation only) v4 orders 11 of 12 original-fake pairs right (own AUC 0.917) but two of the three originals '
                       'score over its manipulated threshold (0.80, 0.84 vs 0.71), so weighed it would call real videos face-swapped')
desc = {'name': 'face-forgery-sbi', 'version': VERSION, 'taskTypes': ['faceswap-detection', 'ekyc-deepfake'],
        'model': 'face-forgery-sbi.onnx', 'sha256': hashlib.sha256(open(path, 'rb').read()).hexdigest(),
        'input': {'kind': 'image', 'name': 'image', 'width': S, 'height': S, 'layout': 'NCHW', 'scale': 1 / 255,
                  'mean': [0, 0, 0], 'std': [1, 1, 1], 'resize': 'fill'},
        'output': {'name': 'logit', 'kind': 'logit', 'positiveIndex': 0}, 'weight': WEIGHT,
        'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6)},
        'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
        'training': {'method': 'Self-Blended Images (Shiohara & Yamasaki, CVPR 2022)', **({'notWeighedBecause': NOT_WEIGHED_BECAUSE} if WEIGHT == 0 else {}),
                     'architecture': f'luma (in the model) + 8-layer CNN with {norm}, {params} parameters, 128x128 RGB face crop' + (', mean logit of the crop and its mirror image (test-time flip, in the model)' if net.tta else ''),
                     'initialisedFrom': best.get('init'), 'priorSteps': PRIOR['steps'] if best.get('init') else 0, 'priorTrainSeconds': PRIOR['seconds'] if best.get('init') else 0,
                     'augmentation': f'JPEG q50-95 or (p = {train.H264_P}) an H.264 round trip of both images of a pair (libx264 yuv420p CRF 20-38, half the batches down-scaled to 64-126 px and back)',
                     'crop': 'square of side 0.6 x the larger side of the Human face box, centred on the box (training: central 200x200 of the 350x350 photos, whose Human boxes span ~330 px, with +-10 % scale and +-5 px shift jitter)',
                     'data': {'source': 'muxspace/facial_expressions@5fb9c13afa images/ (LFW-named, greyscale, LFW terms; repo Apache-2.0)',
                              'crops': int(len(x)), 'split': {k: int((sp == k).sum()) for k in ('train', 'val', 'test')}, 'splitBy': 'identity'},
                     'thresholdsFrom': 'the H.264 validation set (Platt calibration too)',
                     'steps': int(last['step']), 'trainSeconds': round(float(last['spent'])), 'figures': figs,
                     'torchCropsPerSecondOneThread': round(speed, 1), 'rampLogit': round(ramp_logit, 5),
                     'card': 'training/face-forgery/MODEL_CARD.md'}}
json.dump(desc, open(os.path.join(OUT, 'face-forgery-sbi.json'), 'w'), indent=2)
print('ramp logit', ramp_logit, 'crops/s', speed, 'size', os.path.getsize(path), flush=True)
