"""Manipulations made from real photos, with exact masks (the training and validation data of
the forgery localiser). Each sample: a real photo (already JPEG once), optionally tampered by a
splice from another photo, a copy-move within itself or a removal by inpainting, then resized
and JPEG-compressed again the way images travel. Masks mark the tampered pixels.

Splices and copy-moves follow the CASIA v2 and Christlein et al. (2012) settings; removals use
OpenCV's inpainting (Telea 2004; Bertalmio et al. 2001); the double compression is what
Bianchi & Piva (2012) analyse. Regions are random ellipses, polygons and smooth blobs.
"""
import cv2
import numpy as np

SIZE = 256


def random_mask(rng, size=SIZE):
    """A random region covering about 2-25 % of the image."""
    mask = np.zeros((size, size), np.uint8)
    kind = rng.integers(3)
    if kind == 0:
        centre = (int(rng.integers(30, size - 30)), int(rng.integers(30, size - 30)))
        axes = (int(rng.integers(12, 70)), int(rng.integers(12, 70)))
        cv2.ellipse(mask, centre, axes, float(rng.uniform(0, 180)), 0, 360, 255, -1)
    elif kind == 1:
        cx, cy = rng.integers(40, size - 40, 2)
        radius = rng.uniform(15, 70)
        n = int(rng.integers(4, 9))
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        points = np.stack([cx + radius * rng.uniform(0.5, 1.2, n) * np.cos(angles), cy + radius * rng.uniform(0.5, 1.2, n) * np.sin(angles)], 1)
        cv2.fillPoly(mask, [points.astype(np.int32)], 255)
    else:
        noise = cv2.GaussianBlur(rng.standard_normal((size, size)).astype(np.float32), (0, 0), float(rng.uniform(10, 20)))
        threshold = np.quantile(noise, 1 - rng.uniform(0.03, 0.2))
        mask = (noise > threshold).astype(np.uint8) * 255
    return mask


def jpeg(image, quality):
    ok, data = cv2.imencode('.jpg', image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def tamper(rng, base, donor):
    """Returns (image, mask 0/1 float32, kind)."""
    kind = ['authentic', 'splice', 'copy-move', 'removal'][rng.choice(4, p=[0.3, 0.3, 0.2, 0.2])]
    mask = np.zeros(base.shape[:2], np.uint8)
    image = base.copy()
    if kind != 'authentic':
        mask = random_mask(rng)
        soft = mask.astype(np.float32) / 255
        if rng.random() < 0.5:  # feathered edges hide the seam from the eye, not from noise analysis
            soft = cv2.GaussianBlur(soft, (0, 0), float(rng.uniform(0.8, 2.5)))
        if kind == 'splice':
            scale = rng.uniform(0.7, 1.4)
            matrix = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), float(rng.uniform(-15, 15)), scale)
            matrix[:, 2] += rng.uniform(-40, 40, 2)
            source = cv2.warpAffine(donor, matrix, (SIZE, SIZE), borderMode=cv2.BORDER_REFLECT)
            if rng.random() < 0.5:
                source = np.clip(source.astype(np.float32) * rng.uniform(0.85, 1.15) + rng.uniform(-15, 15), 0, 255)
        elif kind == 'copy-move':
            shift = rng.uniform(25, 90, 2) * rng.choice([-1, 1], 2)
            matrix = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), float(rng.uniform(-10, 10)), rng.uniform(0.9, 1.1))
            matrix[:, 2] += shift
            source = cv2.warpAffine(base, matrix, (SIZE, SIZE), borderMode=cv2.BORDER_REFLECT)
        else:
            method = cv2.INPAINT_TELEA if rng.random() < 0.5 else cv2.INPAINT_NS
            source = cv2.inpaint(base, cv2.dilate(mask, np.ones((3, 3), np.uint8)), 5, method)
        image = (source.astype(np.float32) * soft[..., None] + base.astype(np.float32) * (1 - soft[..., None])).round().astype(np.uint8)
    # The way images travel: sometimes resized, usually recompressed.
    if rng.random() < 0.3:
        scale = rng.uniform(0.6, 0.95)
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        image = cv2.resize(small, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.85:
        image = jpeg(image, rng.integers(60, 99))
    return image, (mask > 127).astype(np.float32), kind
