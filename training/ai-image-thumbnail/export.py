"""Exports the five fold models of train.py as one ONNX graph (opset 17) that returns the mean of
their flip-averaged logits, to server/models/ai-image-thumbnail.onnx, and writes the descriptor
with sha256, Platt calibration, fusion weight and thresholds from figures.json (all chosen on
out-of-fold scores), the data manifest, and the logits on two generated images that
server/test/image/ai-image-thumbnail-model.test.ts checks.
Usage: /usr/bin/python3 export.py [--work /work/data/ai-image-thumbnail] [--out ../../server/models]"""
import argparse, hashlib, json, os
import numpy as np
import torch
from common import SIZE, Ensemble, ThumbNet

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument('--work', default='/work/data/ai-image-thumbnail')
ap.add_argument('--out', default=os.path.join(HERE, '../../server/models'))
args = ap.parse_args()
torch.set_num_threads(1)

nets = []
for k in range(5):
    ck = torch.load(os.path.join(args.work, f'fold{k}.pt'))
    net = ThumbNet(tuple(int(w) for w in ck['widths'].split(',')), ck['blocks']); net.load_state_dict(ck['model']); net.eval()
    nets.append(net)
model = Ensemble(nets).eval()
params = sum(p.numel() for p in nets[0].parameters())
onnx_path = os.path.join(args.out, 'ai-image-thumbnail.onnx')
torch.onnx.export(model, torch.zeros(2, 3, SIZE, SIZE), onnx_path, opset_version=17,
                  input_names=['images'], output_names=['logits'],
                  dynamic_axes={'images': {0: 'n'}, 'logits': {0: 'n'}})


def generated():
    """Image 0: R = x/31, G = y/31, B = ((7x + 13y) mod 32)/31. Image 1: ((x*x + 3y*y + 5xy + 17c) mod 29)/28 in channel c."""
    p = np.zeros((2, 3, SIZE, SIZE), np.float32)
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    p[0, 0], p[0, 1], p[0, 2] = x / 31, y / 31, ((7 * x + 13 * y) % 32) / 31
    for c in range(3):
        p[1, c] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 29) / 28
    return p


with torch.no_grad():
    recorded = model(torch.from_numpy(generated())).numpy().tolist()
sha = hashlib.sha256(open(onnx_path, 'rb').read()).hexdigest()
fig = json.load(open(os.path.join(HERE, 'figures.json')))
manifest = json.load(open(os.path.join(HERE, 'manifest.json')))
descriptor = {
    'name': 'ai-image-thumbnail', 'version': '1', 'taskTypes': ['ai-image-detection'],
    'model': 'ai-image-thumbnail.onnx', 'sha256': sha,
    'input': {'kind': 'tensor', 'name': 'images', 'shape': [1, 3, SIZE, SIZE], 'layout': 'NCHW',
              'preprocessing': 'decoded 8-bit RGB, stored orientation (grey replicated, alpha dropped); scored only when both sides '
                               'are between minSide and maxSide px; exactly 32x32 is taken as it is, other sizes are resized to '
                               '32x32 (Lanczos 3, fill); values / 255, NCHW; the model flip-averages and ensembles inside the graph',
              'minSide': 24, 'maxSide': 48,
              # Thresholds and fusion were validated on native 32x32 images only (CIFAKE).
              'decideSize': [SIZE, SIZE]},
    'output': {'name': 'logits', 'kind': 'logit', 'positiveIndex': 0},
    'weight': fig['fusionWeight'],
    'calibration': {'method': 'platt', 'a': fig['calibration']['a'], 'b': fig['calibration']['b']},
    'thresholds': {'authentic': fig['thresholds']['authentic'], 'manipulated': fig['thresholds']['manipulated']},
    'training': {'data': manifest['sources'],
                 'architecture': f'mean of 5 fold models, each flip-averaged; each a {params}-parameter CIFAR ResNet (3x3 stem, '
                                 f'one basic block per stage at widths {ck["widths"]}, strides 1-2-2, global mean, linear); '
                                 'every fold model never saw its own held-out fold',
                 'fusion': 'fused log-odds = weight * (a * logit + b) + statistics log-odds (ai-image-fusion.json thumbnail regime); '
                           'thresholds on the fused probability',
                 'figures': {k: fig[k] for k in ('protocol', 'outOfFold', 'folds', 'shippedFormOutOfFold', 'resizedInputs') if k in fig},
                 'recordedOutputs': {'inputs': generated.__doc__, 'logits': [round(v, 6) for v in recorded]}},
}
json.dump(descriptor, open(os.path.join(args.out, 'ai-image-thumbnail.json'), 'w'), indent=1)
print(sha, os.path.getsize(onnx_path), recorded)
