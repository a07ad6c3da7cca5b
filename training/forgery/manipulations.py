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


def small_mask(rng, size=SIZE):
    """A small region (about 0.5-3 % of the image): the cases an image-level score misses."""
    mask = np.zeros((size, size), np.uint8)
    centre = (int(rng.integers(20, size - 20)), int(rng.integers(20, size - 20)))
    axes = (int(rng.integers(6, 26)), int(rng.integers(6, 26)))
    cv2.ellipse(mask, centre, axes, float(rng.uniform(0, 180)), 0, 360, 255, -1)
    return mask


def global_processing(rng, image):
    """Edits applied to the whole photo, which are not tampering: the localiser must not flag
    resampling, sharpening, denoising, noise, tone changes or repeated compression that cover
    the image uniformly (the false alarms an untouched camera photo would raise)."""
    kind = rng.integers(6)
    if kind == 0:  # resampled up or down and back (phone galleries, messengers)
        scale = rng.uniform(0.5, 1.6)
        image = cv2.resize(cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC), (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
    elif kind == 1:  # unsharp mask
        blur = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.8, 2.0)))
        image = cv2.addWeighted(image, 1 + float(rng.uniform(0.3, 1.2)), blur, -float(rng.uniform(0.3, 1.2)), 0)
    elif kind == 2:  # sensor-like noise
        image = np.clip(image.astype(np.float32) + rng.normal(0, rng.uniform(1, 5), image.shape), 0, 255).astype(np.uint8)
    elif kind == 3:  # denoising / smoothing
        image = cv2.bilateralFilter(image, 5, float(rng.uniform(10, 40)), 5) if rng.random() < 0.5 else cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.5, 1.2)))
    elif kind == 4:  # tone: gamma, contrast, saturation
        lut = np.clip(255 * (np.arange(256) / 255) ** rng.uniform(0.7, 1.4) * rng.uniform(0.9, 1.1), 0, 255).astype(np.uint8)
        image = cv2.LUT(image, lut)
    else:  # compressed twice or three times at different qualities
        for _ in range(int(rng.integers(2, 4))):
            image = jpeg(image, rng.integers(50, 96))
    return image


def blend(source, base, mask, rng):
    soft = mask.astype(np.float32) / 255
    if rng.random() < 0.5:
        soft = cv2.GaussianBlur(soft, (0, 0), float(rng.uniform(0.8, 2.5)))
    return (source.astype(np.float32) * soft[..., None] + base.astype(np.float32) * (1 - soft[..., None])).round().astype(np.uint8)


def training_sample(rng, base, donor):
    """Training only (validation and test keep `tamper`, v1's distribution, so v1 and v2 are
    measured on the same samples): most samples are `tamper`'s; the rest are untouched photos
    after global processing, small tampered regions, and splices whose pasted region was
    retouched (blurred, noised or recompressed) to hide its seam, as a forger would."""
    r = rng.random()
    if r < 0.6:
        return tamper(rng, base, donor)
    if r < 0.75:
        image = global_processing(rng, base)
        if rng.random() < 0.7:
            image = jpeg(image, rng.integers(60, 99))
        return image, np.zeros(base.shape[:2], np.float32), 'authentic'
    mask = small_mask(rng) if r < 0.87 else random_mask(rng)
    if rng.random() < 0.5:  # splice, retouched
        matrix = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), float(rng.uniform(-15, 15)), rng.uniform(0.6, 1.5))
        matrix[:, 2] += rng.uniform(-60, 60, 2)
        source = cv2.warpAffine(donor, matrix, (SIZE, SIZE), borderMode=cv2.BORDER_REFLECT)
        kind = 'splice'
    else:  # copy-move, pure translation as well
        matrix = np.float32([[1, 0, 0], [0, 1, 0]])
        if rng.random() < 0.5:
            matrix = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), float(rng.uniform(-20, 20)), rng.uniform(0.8, 1.25))
        matrix[:, 2] += rng.uniform(15, 90, 2) * rng.choice([-1, 1], 2)
        source = cv2.warpAffine(base, matrix, (SIZE, SIZE), borderMode=cv2.BORDER_REFLECT)
        kind = 'copy-move'
    retouch = rng.integers(4)
    if retouch == 0:
        source = cv2.GaussianBlur(source, (0, 0), float(rng.uniform(0.5, 1.5)))
    elif retouch == 1:
        source = np.clip(source.astype(np.float32) + rng.normal(0, rng.uniform(1, 4), source.shape), 0, 255).astype(np.uint8)
    elif retouch == 2:
        source = jpeg(source, rng.integers(40, 90))
    image = blend(source, base, mask, rng)
    if rng.random() < 0.3:
        image = global_processing(rng, image)
    if rng.random() < 0.85:
        image = jpeg(image, rng.integers(60, 99))
    return image, (mask > 127).astype(np.float32), kind
