"""The thumbnail network: a small ResNet (He et al., "Deep Residual Learning
for Image Recognition", CVPR 2016, §4.2: the CIFAR-10 variant: 3x3 convolutions at native
32x32, three stages, identity shortcuts, global average pooling), narrowed for 1,280 training
images. Input: [N, 3, 32, 32] RGB in 0..1, as the server feeds it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SIZE = 32


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); self.b2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (x if self.short is None else self.short(x)))


class ThumbNet(nn.Module):
    """Stem 3x3 conv, stages of `blocks` residual blocks at widths `widths` (stride 1, 2, 2),
    global mean, dropout, linear -> one logit (positive = AI-generated)."""

    def __init__(self, widths=(32, 64, 128), blocks=1, dropout=0.2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            for j in range(blocks):
                layers.append(Block(cin, w, 2 if (i > 0 and j == 0) else 1)); cin = w
        self.layers = nn.Sequential(*layers)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(cin, 1)

    def forward(self, x):
        x = self.layers(self.stem((x - 0.5) * 4))
        return self.fc(self.drop(x.mean((2, 3)))).squeeze(1)


class FlipAverage(nn.Module):
    """Mean logit of the image and its mirror image (the test-time view train.py scores with)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return 0.5 * (self.net(x) + self.net(torch.flip(x, dims=[3])))


class Ensemble(nn.Module):
    """Mean of the members' flip-averaged logits: the shipped graph."""

    def __init__(self, nets):
        super().__init__()
        self.members = nn.ModuleList([FlipAverage(n) for n in nets])

    def forward(self, x):
        return torch.stack([m(x) for m in self.members], 0).mean(0)
