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


def composite(source, base, soft):
    """`source` over `base` with the 0..1 matte `soft`."""
    return (source.astype(np.float32) * soft[..., None] + base.astype(np.float32) * (1 - soft[..., None])).round().astype(np.uint8)


def travel(rng, image):
    """The way images travel: sometimes resized (30 %), usually recompressed (85 %, quality 60-98)."""
    if rng.random() < 0.3:
        scale = rng.uniform(0.6, 0.95)
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        image = cv2.resize(small, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.85:
        image = jpeg(image, rng.integers(60, 99))
    return image


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
        image = composite(source, base, soft)
    return travel(rng, image), (mask > 127).astype(np.float32), kind


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
    return composite(source, base, soft)


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


# ---------------------------------------------------------------------------------------------
# v3: realistic splices. The manipulations above cut ellipses, polygons and blobs, and a splice's
# donor comes from a photo of the same dataset with the same history, so the only trace is the
# seam. A real splice (CASIA v2, Dong et al. 2013; the forgeries of Columbia and NIST) moves an
# object: the region follows the object's edges, and the pasted pixels come from another camera
# and another processing chain (colour balance, exposure, noise level, sharpness, resampling,
# JPEG history), which is what noise-residual localisers pick up (Zhou et al. 2018; Huh et al.
# 2018, "Fighting fake news: image splice detection via learned self-consistency").

def _largest_component(mask):
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, 8)
    if count <= 1:
        return mask
    keep = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return (labels == keep).astype(np.uint8) * 255


def object_mask(rng, donor):
    """An object-shaped region of the donor photo, following its edges: GrabCut (Rother et al.
    2004) seeded with a random rectangle, or a flood fill of a mean-shift-filtered copy
    (Comaniciu & Meer 2002) from one to three seeds, i.e. a union of colour segments. Computed at
    half resolution for speed; 255 inside. Falls back to a smooth blob when the region is too
    small or too large (about 1.5-35 % of the image is kept)."""
    small = cv2.resize(donor, (SIZE // 2, SIZE // 2), interpolation=cv2.INTER_AREA)
    h = SIZE // 2
    for _ in range(3):
        if rng.random() < 0.5:
            w_, h_ = int(rng.integers(24, 90)), int(rng.integers(24, 90))
            x0, y0 = int(rng.integers(2, h - w_ - 1)), int(rng.integers(2, h - h_ - 1))
            gc = np.zeros((h, h), np.uint8)
            bg, fg = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
            try:
                cv2.grabCut(small, gc, (x0, y0, w_, h_), bg, fg, 2, cv2.GC_INIT_WITH_RECT)
            except cv2.error:
                continue
            m = np.where((gc == cv2.GC_FGD) | (gc == cv2.GC_PR_FGD), 255, 0).astype(np.uint8)
        else:
            shifted = cv2.pyrMeanShiftFiltering(small, float(rng.uniform(6, 12)), float(rng.uniform(14, 30)))
            m = np.zeros((h, h), np.uint8)
            cy, cx = rng.integers(20, h - 20, 2)
            diff = float(rng.uniform(4, 12))
            for _ in range(int(rng.integers(1, 4))):
                sy, sx = int(np.clip(cy + rng.integers(-18, 19), 0, h - 1)), int(np.clip(cx + rng.integers(-18, 19), 0, h - 1))
                flood = np.zeros((h + 2, h + 2), np.uint8)
                cv2.floodFill(shifted.copy(), flood, (sx, sy), 0, (diff,) * 3, (diff,) * 3, cv2.FLOODFILL_MASK_ONLY | 4 | (255 << 8))
                m |= flood[1:-1, 1:-1]
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        m = _largest_component(m)
        m = cv2.resize(m, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
        m = (cv2.GaussianBlur(m, (0, 0), 1.0) > 127).astype(np.uint8) * 255  # smooth the upscaled edge
        area = (m > 0).mean()
        if 0.015 <= area <= 0.35:
            return m
    return random_mask(rng)


def camera_shift(rng, image):
    """Makes the donor look like it came from another camera and processing chain: white balance
    and exposure, noise level or denoising, sharpening or blur, and a different JPEG history."""
    out = image.astype(np.float32)
    if rng.random() < 0.7:  # white balance (per-channel gains) and exposure / gamma
        out = out * rng.uniform(0.85, 1.15, 3)[None, None] * rng.uniform(0.8, 1.2)
        out = 255 * (np.clip(out, 0, 255) / 255) ** rng.uniform(0.8, 1.25)
    if rng.random() < 0.3:  # saturation
        grey = out.mean(2, keepdims=True)
        out = grey + (out - grey) * rng.uniform(0.7, 1.3)
    out = np.clip(out, 0, 255).astype(np.uint8)
    k = rng.integers(5)
    if k == 0:
        out = np.clip(out.astype(np.float32) + rng.normal(0, rng.uniform(1.5, 7), out.shape), 0, 255).astype(np.uint8)
    elif k == 1:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.5, 1.6)))
    elif k == 2:
        blur = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.8, 2.0)))
        amount = float(rng.uniform(0.3, 1.2))
        out = cv2.addWeighted(out, 1 + amount, blur, -amount, 0)
    elif k == 3:
        out = cv2.bilateralFilter(out, 5, float(rng.uniform(15, 45)), 5)
    if rng.random() < 0.6:  # another JPEG history, sometimes at another grid
        if rng.random() < 0.3:
            dy, dx = rng.integers(1, 8, 2)
            shifted = jpeg(np.pad(out, ((dy, 0), (dx, 0), (0, 0)), mode='reflect'), rng.integers(45, 96))
            out = shifted[dy:, dx:]
        else:
            out = jpeg(out, rng.integers(45, 96))
    return out


def realistic_splice(rng, base, donor, authentic=0.3, region=None):
    """v3: returns (image, mask 0/1 float32, kind) with kind 'authentic' or 'splice'. An object cut
    from the donor along its edges, moved there after a camera shift and a resampling (scale
    0.6-1.5, small rotation, the donor sometimes resampled down and up first), pasted with a hard,
    feathered or slightly eroded/dilated edge; then the whole image resized (30 %) and
    JPEG-recompressed (85 %, quality 60-98) as `tamper` does. Untouched photos go through the same
    final steps, so the image-level label is not given away by them."""
    if rng.random() < authentic:
        image, mask, kind = base.copy(), np.zeros(base.shape[:2], np.uint8), 'authentic'
    else:
        kind = 'splice'
        region = object_mask(rng, donor) if region is None else region
        source = camera_shift(rng, donor)
        if rng.random() < 0.4:  # resampled before the paste (a donor of another resolution)
            s = rng.uniform(0.4, 0.9)
            source = cv2.resize(cv2.resize(source, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), (SIZE, SIZE), interpolation=[cv2.INTER_LINEAR, cv2.INTER_CUBIC][rng.integers(2)])
        # Move the object: scale, small rotation, and a translation that keeps most of it inside.
        ys, xs = np.nonzero(region)
        cy, cx = ys.mean(), xs.mean()
        scale = float(rng.uniform(0.6, 1.5))
        matrix = cv2.getRotationMatrix2D((float(cx), float(cy)), float(rng.uniform(-12, 12)), scale)
        matrix[:, 2] += np.array([rng.uniform(40, SIZE - 40) - cx, rng.uniform(40, SIZE - 40) - cy])
        interp = [cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA][rng.integers(3)]
        source = cv2.warpAffine(source, matrix, (SIZE, SIZE), flags=interp, borderMode=cv2.BORDER_REFLECT)
        mask = (cv2.warpAffine(region, matrix, (SIZE, SIZE), flags=cv2.INTER_LINEAR) > 127).astype(np.uint8) * 255
        if (mask > 0).mean() < 0.005:  # moved mostly outside: paste it where it was, unscaled
            source = camera_shift(rng, donor)
            mask = region
        soft = mask.astype(np.float32) / 255
        edge = rng.integers(4)
        if edge == 1:    # feathered
            soft = cv2.GaussianBlur(soft, (0, 0), float(rng.uniform(0.7, 2.5)))
        elif edge == 2:  # a careless cut: a little of the donor's background comes along
            soft = cv2.dilate(soft, np.ones((3, 3), np.uint8), iterations=int(rng.integers(1, 3)))
        elif edge == 3:  # a tight cut, then softened
            soft = cv2.GaussianBlur(cv2.erode(soft, np.ones((3, 3), np.uint8)), (0, 0), 0.8)
        mask = ((soft > 0.5) * 255).astype(np.uint8)
        image = composite(source, base, soft)
    return travel(rng, image), (mask > 127).astype(np.float32), kind


_REGIONS = {}


def training_sample_v3(rng, base, donor, share=0.45):
    """v3 training: `share` realistic splices (a quarter of them untouched; v3 45 %, v3b 25 %),
    the rest v2's mix. Object regions cost about 90 ms each, so up to four per donor photo are
    kept and reused 70 % of the time (the move, scale, rotation, camera shift and edges still
    change every time)."""
    if rng.random() < share:
        bank = _REGIONS.setdefault(id(donor), [])
        if len(bank) < 4 and rng.random() < 0.3 or not bank:
            bank.append(object_mask(rng, donor))
            region = bank[-1]
        else:
            region = bank[rng.integers(len(bank))]
        return realistic_splice(rng, base, donor, authentic=0.25, region=region)
    return training_sample(rng, base, donor)
