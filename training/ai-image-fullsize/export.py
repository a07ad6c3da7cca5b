"""Exports a checkpoint to ONNX (opset 17, input [n, 3, 96, 96], dynamic n) with a descriptor in the
format of server/models/*.json: sha256, input contract (grid of native-resolution tiles),
Platt calibration and thresholds from figures.json (validation), recorded outputs on generated
tiles. Writes to /work/data/ai-fullsize/candidate/ (the integrator copies it into server/models/).
Usage: /usr/bin/python3 export.py [--ckpt /work/data/ai-fullsize/run/best.pt] [--name ai-image-fullsize]
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import GRID_MAX, P, PatchNet  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default='/work/data/ai-fullsize/run/best.pt')
ap.add_argument('--name', default='ai-image-fullsize')
ap.add_argument('--out', default='/work/data/ai-fullsize/candidate')
ap.add_argument('--figures', default=os.path.join(HERE, 'figures.json'))
args = ap.parse_args()
torch.set_num_threads(1)
os.makedirs(args.out, exist_ok=True)
model = PatchNet()
ck = torch.load(args.ckpt)
model.load_state_dict(ck['model'])
model.eval()
onnx_path = os.path.join(args.out, args.name + '.onnx')
torch.onnx.export(model, torch.zeros(2, 3, P, P), onnx_path, opset_version=17, input_names=['patches'],
                  output_names=['logits'], dynamic_axes={'patches': {0: 'n'}, 'logits': {0: 'n'}})


def generated():
    """Tile 0: R = x/95, G = y/95, B = ((7x + 13y) mod 256)/255. Tile 1: ((x*x + 3y*y + 5xy + 17c) mod 251)/250 in channel c (x, y in 0..95)."""
    p = np.zeros((2, 3, P, P), np.float32)
    y, x = np.mgrid[0:P, 0:P]
    p[0, 0], p[0, 1], p[0, 2] = x / 95, y / 95, ((7 * x + 13 * y) % 256) / 255
    for c in range(3):
        p[1, c] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 251) / 250
    return p


with torch.no_grad():
    recorded = model(torch.from_numpy(generated())).numpy().tolist()
sha = hashlib.sha256(open(onnx_path, 'rb').read()).hexdigest()
fig = json.load(open(args.figures))
manifest = json.load(open(os.path.join(HERE, 'manifest.json')))
descriptor = {
    'name': args.name, 'version': '1', 'taskTypes': ['ai-image-detection'],
    'model': args.name + '.onnx', 'sha256': sha,
    'input': {
        'kind': 'tensor', 'name': 'patches', 'shape': [GRID_MAX * GRID_MAX, 3, P, P], 'layout': 'NCHW',
        'preprocessing': (
            'decoded 8-bit RGB, stored orientation (no EXIF rotation), alpha dropped, grey replicated; NO resize '
            f'(native resolution). Tile {P}x{P}: nx = min({GRID_MAX}, floor(W/{P})), ny = min({GRID_MAX}, floor(H/{P})); '
            f'left_i = round(i*(W-{P})/(nx-1)) (0 when nx = 1), top_j = round(j*(H-{P})/(ny-1)) likewise; tiles in row-major '
            f'order (j outer, i inner), values / 255, NCHW float32. Images with a side under {P} px are not scored. '
            'The NPR and high-pass residuals are computed inside the network.'),
        'aggregate': 'mean of tile logits, then calibration',
        'tile': P, 'gridMax': GRID_MAX, 'resize': 'none',
    },
    'output': {'name': 'logits', 'kind': 'logit', 'positiveIndex': 0},
    'weight': 1,
    'calibration': {k: fig['calibration'][k] for k in ('method', 'a', 'b')},
    'thresholds': {k: fig['thresholds'][k] for k in ('authentic', 'manipulated')},
    'training': {
        'data': manifest['sources'], 'evaluationOnly': manifest['evaluationOnly'],
        'figures': {k: fig[k] for k in ('checkpoint', 'validation', 'heldOutGenerators', 'heldOutGeneratorMeanAuc') if k in fig},
        'recordedOutputs': {'inputs': generated.__doc__, 'logits': [round(v, 6) for v in recorded]},
    },
}
json.dump(descriptor, open(os.path.join(args.out, args.name + '.json'), 'w'), indent=1)
np.save(os.path.join(args.out, 'generated-tiles.npy'), generated())
print(sha, os.path.getsize(onnx_path), recorded)
