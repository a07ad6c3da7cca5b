"""Exports a checkpoint to ONNX (opset 17, input [n, 3, 96, 96], dynamic n) with a descriptor in the
format of server/models/*.json: sha256, input contract (grid of native-resolution tiles),
Platt calibration and thresholds from figures.json (validation), recorded outputs on generated
tiles. Writes to /work/data/ai-fullsize/candidate/ (the integrator copies it into server/models/).
Usage: /usr/bin/python3 export.py [--ckpt /work/data/ai-fullsize/run/best.pt] [--name ai-image-fullsize]
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, '..')]
from ai_image_shared import export_onnx, generated_inputs  # noqa: E402
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
onnx_path = os.path.join(args.out, args.name + '.onnx')
inputs, described = generated_inputs(P, noun='Tile')
sha, recorded = export_onnx(model, P, onnx_path, 'patches', inputs)
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
        'recordedOutputs': {'inputs': described, 'logits': recorded},
    },
}
json.dump(descriptor, open(os.path.join(args.out, args.name + '.json'), 'w'), indent=1)
np.save(os.path.join(args.out, 'generated-tiles.npy'), inputs)
print(sha, os.path.getsize(onnx_path), recorded)
