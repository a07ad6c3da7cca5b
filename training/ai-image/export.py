"""Exports the selected checkpoint (best.pt: highest validation AUC) to
server/models/ai-image-patches.onnx (opset 17, dynamic view count) and writes the descriptor with
sha256, calibration and thresholds from figures.json, and the outputs on two generated views that
server/test/image/ai-image-model.test.ts checks.
Usage: python3 export.py [--ckpt /work/data/ai-image/best.pt] [--out ../../server/models]"""
import argparse, json, os, sys
import torch
from common import SIZE, MAX_VIEWS, MIN_SIDE, ViewNet
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ai_image_shared import export_onnx, generated_inputs  # noqa: E402

DECIDE_MAX_SHORT_SIDE = 512

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default='/work/data/ai-image/best.pt')
ap.add_argument('--out', default=os.path.join(HERE, '../../server/models'))
args = ap.parse_args()
torch.set_num_threads(1)
os.makedirs(args.out, exist_ok=True)
model = ViewNet(); model.load_state_dict(torch.load(args.ckpt)['model'])
onnx_path = os.path.join(args.out, 'ai-image-patches.onnx')
inputs, described = generated_inputs(SIZE, noun='View')
sha, recorded = export_onnx(model, SIZE, onnx_path, 'views', inputs)
fig = json.load(open(os.path.join(HERE, 'figures.json')))
manifest = json.load(open(os.path.join(HERE, 'manifest.json')))
descriptor = {
    'name': 'ai-image-patches', 'version': '2', 'taskTypes': ['ai-image-detection'],
    'model': 'ai-image-patches.onnx', 'sha256': sha,
    'input': {'kind': 'tensor', 'name': 'views', 'shape': [MAX_VIEWS, 3, SIZE, SIZE], 'layout': 'NCHW',
              'preprocessing': 'decoded 8-bit RGB, stored orientation; images whose short side is under '
                               f'{MIN_SIDE} px are not scored; n = min({MAX_VIEWS}, ceil(long/short - 0.01)) squares of side short, '
                               'evenly spaced along the long side (offset round(i*(long-short)/(n-1))), each resized to '
                               f'{SIZE}x{SIZE} with Lanczos 3 (skipped when already {SIZE}), values / 255, NCHW; '
                               'the high-pass residual is computed inside the network',
              'aggregate': 'mean of view logits, then calibration',
              # Decides only on images of the training domain: dataset10000 holds ImageNet/COCO-sized
              # originals (short side <= ~500 px) resized to 256; larger images (camera photos) are
              # scored and reported with weight 0 (ai-image-model.ts).
              'decideMaxShortSide': DECIDE_MAX_SHORT_SIDE},
    'output': {'name': 'logits', 'kind': 'logit', 'positiveIndex': 0},
    'weight': 1,
    'calibration': fig['calibration'],
    'thresholds': fig['thresholds'],
    'training': {'data': manifest['sources'],
                 'figures': {k: fig[k] for k in ('checkpoint', 'validation', 'test', 'unseenGenerators', 'unseenGeneratorMeanAuc',
                                                 'unseenGeneratorsDatasetPipeline', 'unseenGeneratorMeanAucDatasetPipeline') if k in fig},
                 'recordedOutputs': {'inputs': described, 'logits': recorded}},
}
json.dump(descriptor, open(os.path.join(args.out, 'ai-image-patches.json'), 'w'), indent=1)
print(sha, os.path.getsize(onnx_path), recorded)
