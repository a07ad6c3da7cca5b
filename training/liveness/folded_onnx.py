"""Puts an exported ONNX's weights back into the PyTorch network it was exported from, to score a
shipped version on the same crops in the same run. The exporter folded each BatchNorm into its
convolution, so each BatchNorm becomes the identity plus the folded bias. Shared by
face-liveness-pad (train.py here) and face-liveness-context (training/liveness-context/train.py)."""
import torch


def load_folded(model, blocks, path):
    """model: the network (with a linear `head`); blocks: its (conv, BatchNorm, ...) blocks in
    order; path: the ONNX. Returns the model in eval mode."""
    import onnx
    from onnx import numpy_helper
    weights = [numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer]
    head_w, head_b, convs = weights[0], weights[1], weights[2:]
    with torch.no_grad():
        for block, (w, b) in zip(blocks, zip(convs[0::2], convs[1::2])):
            conv, bn = block[0], block[1]
            conv.weight.copy_(torch.from_numpy(w.copy()))
            bn.weight.fill_(1); bn.bias.copy_(torch.from_numpy(b.copy()))
            bn.running_mean.zero_(); bn.running_var.fill_(1 - bn.eps)
        model.head.weight.copy_(torch.from_numpy(head_w.copy())); model.head.bias.copy_(torch.from_numpy(head_b.copy()))
    return model.eval()


def frozen_norms(model):
    """A model loaded by load_folded trains with its BatchNorms in eval mode: their statistics are
    what makes each one the identity plus the folded bias (fine-tuning a shipped version)."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d): m.eval()
