"""What the three AI-image trainings (ai-image, ai-image-thumbnail, ai-image-fullsize) share at
export and evaluation: the generated inputs whose outputs each descriptor records for its model
test, the ONNX export with its sha256, and the validation thresholds that only decide where
validation supports it. Each script puts training/ on sys.path to import it."""
import hashlib

import numpy as np
import torch


def generated_inputs(size, levels=256, prime=251, noun='View'):
    """Two deterministic RGB inputs of size x size in 0..1: a ramp with a diagonal pattern, and a
    quadratic residue pattern. Returns (array [2, 3, size, size], its description for the descriptor)."""
    p = np.zeros((2, 3, size, size), np.float32)
    y, x = np.mgrid[0:size, 0:size]
    p[0, 0], p[0, 1], p[0, 2] = x / (size - 1), y / (size - 1), ((7 * x + 13 * y) % levels) / (levels - 1)
    for c in range(3):
        p[1, c] = ((x * x + 3 * y * y + 5 * x * y + 17 * c) % prime) / (prime - 1)
    described = (f'{noun} 0: R = x/{size - 1}, G = y/{size - 1}, B = ((7x + 13y) mod {levels})/{levels - 1}. '
                 f'{noun} 1: ((x*x + 3y*y + 5xy + 17c) mod {prime})/{prime - 1} in channel c (x, y in 0..{size - 1}).')
    return p, described


def export_onnx(model, size, path, input_name, inputs):
    """Exports `model` (eval mode) with a dynamic batch axis, opset 17; returns (sha256, the
    model's logits on `inputs`, rounded as the descriptors record them)."""
    model.eval()
    torch.onnx.export(model, torch.zeros(2, 3, size, size), path, opset_version=17,
                      input_names=[input_name], output_names=['logits'],
                      dynamic_axes={input_name: {0: 'n'}, 'logits': {0: 'n'}})
    with torch.no_grad():
        recorded = model(torch.from_numpy(inputs)).numpy().reshape(-1).tolist()
    sha = hashlib.sha256(open(path, 'rb').read()).hexdigest()
    return sha, [round(v, 6) for v in recorded]


def lowest_pure(p, wrong, max_wrong=0.01, min_count=20):
    """The lowest score above which at most `max_wrong` of the items are wrong and at least
    `min_count` items fall; None where no such score exists."""
    order = np.argsort(-p)
    best, bad = None, 0
    for i, j in enumerate(order, 1):
        bad += wrong[j]
        if i >= min_count and bad / i <= max_wrong:
            best = float(p[j])
    return best


def validation_thresholds(p, y, max_wrong=0.01, min_count=20):
    """(authentic, manipulated) on calibrated probabilities `p` with labels `y` (1 = AI): decide
    only where validation supports it; where it does not, that verdict is never given (0 and 1)."""
    manipulated = lowest_pure(p, y == 0, max_wrong, min_count)
    authentic = lowest_pure(-p, y == 1, max_wrong, min_count)
    manipulated = 1.0 if manipulated is None else manipulated
    authentic = 0.0 if authentic is None else -authentic
    return (0.0, 1.0) if authentic > manipulated else (authentic, manipulated)
