"""Exports the checkpoint to server/models/ai-image-patches.onnx (opset 17, dynamic patch count)
and writes the descriptor with sha256, calibration and thresholds from figures.json, and the
outputs on two generated patches that server/test/image/ai-image-model.test.ts checks."""
import hashlib, json, os
import numpy as np
import torch
from common import PATCH, MAX_PATCHES, PatchNet

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '../../server/models')
os.makedirs(OUT, exist_ok=True)
model = PatchNet(); model.load_state_dict(torch.load('/work/data/ai-image/ckpt.pt')['model']); model.eval()
onnx_path = os.path.join(OUT, 'ai-image-patches.onnx')
torch.onnx.export(model, torch.zeros(2, 3, PATCH, PATCH), onnx_path, opset_version=17,
                  input_names=['patches'], output_names=['logits'],
                  dynamic_axes={'patches': {0: 'n'}, 'logits': {0: 'n'}})

def generated():
    """Patch 0: R = x/63, G = y/63, B = ((7x + 13y) mod 64)/63. Patch 1: ((x*x + 3y*y + 5xy) mod 251)/250 per channel offset."""
    p = np.zeros((2, 3, PATCH, PATCH), np.float32)
    y, x = np.mgrid[0:PATCH, 0:PATCH]
    p[0, 0], p[0, 1], p[0, 2] = x / 63, y / 63, ((7 * x + 13 * y) % 64) / 63
    for c in range(3):
        p[1, c] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % 251) / 250
    return p
with torch.no_grad():
    recorded = model(torch.from_numpy(generated())).numpy().tolist()
sha = hashlib.sha256(open(onnx_path, 'rb').read()).hexdigest()
fig = json.load(open(os.path.join(HERE, 'figures.json')))
manifest = json.load(open(os.path.join(HERE, 'manifest.json')))
descriptor = {
    'name': 'ai-image-patches', 'version': '1', 'taskTypes': ['ai-image-detection'],
    'model': 'ai-image-patches.onnx', 'sha256': sha,
    'input': {'kind': 'tensor', 'name': 'patches', 'shape': [MAX_PATCHES, 3, PATCH, PATCH], 'layout': 'NCHW',
              'preprocessing': 'stored-orientation 8-bit RGB at native resolution (never resized); non-overlapping 64x64 grid from the top-left corner; '
                               'tile texture = sum over the tile of |s(x,y)-s(x-1,y)| + |s(x,y)-s(x,y-1)| with s = R+G+B (0 outside the image edge); '
                               f'the {MAX_PATCHES} most textured tiles (ties in raster order), values / 255, NCHW; the NPR residual is computed inside the network',
              'aggregate': 'trimmed mean of patch logits (12.5% cut at each end), then calibration'},
    'output': {'name': 'logits', 'kind': 'logit', 'positiveIndex': 0},
    'weight': 1,
    'calibration': fig['calibration'],
    'thresholds': fig['thresholds'],
    'training': {'data': manifest['sources'], 'figures': {k: fig[k] for k in ('validation', 'test', 'unseenGenerators', 'unseenGeneratorMeanAuc') if k in fig},
                 'recordedOutputs': {'inputs': generated.__doc__, 'logits': [round(v, 6) for v in recorded]}},
}
json.dump(descriptor, open(os.path.join(OUT, 'ai-image-patches.json'), 'w'), indent=1)
print(sha, os.path.getsize(onnx_path), recorded)
