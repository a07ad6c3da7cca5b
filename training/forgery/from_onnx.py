"""Rebuilds v1's PyTorch localiser from its ONNX file (its checkpoints were lost), so v2 can
continue from its weights.

/usr/bin/python3 training/forgery/from_onnx.py --onnx server/models/forgery-localiser.onnx --data /work/data/forgery-src/dataset10000 --out /work/data/forgery-work-v2/v1.pt

The export folded each BatchNorm into the convolution before it (W' = g/s W, b' = beta - g m/s).
Loading W' as the convolution's weight and choosing the BatchNorm as running mean m and
deviation s = the channel's statistics of W'x over training crops, with gamma = s and
beta = m + b', gives exactly W'x + b' in evaluation mode and nearly the same in training mode,
so training can go on with batch statistics where v1 left off.
"""
import argparse
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from model import Localiser
from train import batch_of, load

torch.set_num_threads(1)
# The convolutions whose BatchNorm was folded, in the order the exported graph uses them.
FOLDED = ['stem.0', 'down1.0', 'down1.3', 'down2.0', 'down2.3', 'down3.0', 'down3.3', 'up.0', 'up.3']


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--onnx', required=True)
    parser.add_argument('--data', required=True)
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    graph = onnx.load(args.onnx).graph
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer}
    # Conv nodes in graph order with their weight and bias names.
    convs = [(n.input[1], n.input[2] if len(n.input) > 2 else None) for n in graph.node if n.op_type == 'Conv']
    folded = [c for c in convs if c[0].startswith('onnx::')]
    assert len(folded) == len(FOLDED), (len(folded), convs)

    model = Localiser()
    modules = dict(model.named_modules())
    state = model.state_dict()
    for name in ['srm', 'constrained.weight', 'context.0.weight', 'context.0.bias', 'head.weight', 'head.bias']:
        state[name] = weights[name]
    biases = {}
    for prefix, (w, b) in zip(FOLDED, folded):
        assert tuple(weights[w].shape) == tuple(state[prefix + '.weight'].shape), prefix
        state[prefix + '.weight'] = weights[w]
        biases[prefix] = weights[b]
    model.load_state_dict(state)

    # Per-channel statistics of each folded convolution's output on training crops.
    stats = {p: [] for p in FOLDED}
    hooks = [modules[p].register_forward_hook(lambda m, i, o, p=p: stats[p].append(o.detach())) for p in FOLDED]
    rng = np.random.default_rng(7)
    images = load(os.path.join(args.data, 'train/real'))
    bn_of = lambda p: modules[p.rsplit('.', 1)[0] + '.' + str(int(p.rsplit('.', 1)[1]) + 1)]
    # BatchNorms first set to the identity plus the folded bias, so each layer's input is v1's.
    for p in FOLDED:
        bn = bn_of(p)
        bn.running_mean.zero_(); bn.running_var.fill_(1 - bn.eps); bn.weight.data.fill_(1); bn.bias.data.copy_(biases[p])
    model.eval()
    with torch.no_grad():
        for _ in range(8):
            x, _, _ = batch_of(rng, images, 16, crop=128)
            model(x)
    for h in hooks:
        h.remove()
    for p in FOLDED:
        out = torch.cat(stats[p])
        mean, var = out.mean(dim=(0, 2, 3)), out.var(dim=(0, 2, 3))
        bn = bn_of(p)
        bn.running_mean.copy_(mean); bn.running_var.copy_(var)
        bn.weight.data.copy_((var + bn.eps).sqrt()); bn.bias.data.copy_(mean + biases[p])
    torch.save(model.state_dict(), args.out)

    # Check: the ramp the descriptor records, and a random input against onnxruntime if present.
    ramp = torch.zeros(1, 3, 64, 64)
    ys, xs = torch.meshgrid(torch.arange(64), torch.arange(64), indexing='ij')
    ramp[0, 0], ramp[0, 1], ramp[0, 2] = xs / 63, ys / 63, ((xs * 7 + ys * 13) % 64) / 63
    with torch.no_grad():
        print('ramp first logits', [round(v, 5) for v in model(ramp)[0, 0].flatten()[:8].tolist()])


if __name__ == '__main__':
    main()
