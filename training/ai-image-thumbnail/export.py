"""Exports the five fold models of train.py as one ONNX graph (opset 17) that returns the mean of
their flip-averaged logits, to server/models/ai-image-thumbnail.onnx, and writes the descriptor
with sha256, Platt calibration, fusion weight and thresholds from figures.json (all chosen on
out-of-fold scores), the data manifest, and the logits on two generated images that
server/test/image/ai-image-thumbnail-model.test.ts checks.
Usage: /usr/bin/python3 export.py [--work /work/data/ai-image-thumbnail] [--out ../../server/models]"""
import argparse, json, os, sys
import torch
from common import SIZE, Ensemble, ThumbNet
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ai_image_shared import export_onnx, generated_inputs  # noqa: E402

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
inputs, described = generated_inputs(SIZE, levels=32, prime=29, noun='Image')
sha, recorded = export_onnx(model, SIZE, onnx_path, 'images', inputs)
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
                 'recordedOutputs': {'inputs': described, 'logits': recorded}},
}
json.dump(descriptor, open(os.path.join(args.out, 'ai-image-thumbnail.json'), 'w'), indent=1)
print(sha, os.path.getsize(onnx_path), recorded)
