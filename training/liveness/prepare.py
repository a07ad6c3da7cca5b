"""Builds the presentation-attack (PAD) training set for face-liveness-pad from real faces alone.

Every real photo becomes one *live* sample and one *attack* sample, each a 256x256 luma crop
around the face centre (training takes random 128x128 patches inside it, as inference takes
five fixed patches; see MODEL_CARD.md). Attacks are simulated with the physics of
server/src/eval/presentation-attacks.ts but with much wider randomisation, and one capture
pipeline (resampling, defocus, sensor noise, JPEG at a random quality) is applied to live faces
as well, so "re-captured vs pristine" is never the cue; only the medium's own traces are.

Species (ISO/IEC 30107-3 artefact species; physics after Wen, Han & Jain, TIFS 2015 for prints
and Patel, Han & Jain, ICB 2015 for screens):
  print-am   amplitude-modulated halftone (random period 2.2-7 px, angle, amplitude, per-ink
             screens), paper tint, reduced gamut, tilt/perspective, defocus
  print-fm   inkjet-like stochastic (frequency-modulated) dithering and banding, same paper
  screen     RGB-stripe subpixels with crosstalk and row gaps, display rotated, sampled by the
             camera at 0.5-1.6 camera pixels per display pixel (moire), gamma, glare
  phone      a low-resolution, compressed replay on a phone screen (display pixels 1.7-3.3
             camera pixels wide, visible subpixel grid), dark bezel, strong glare
(the eval simulator has print-am at 45 deg and screen at 0.93-1.03 only; print-fm and phone are
extra species it lacks).

Split: identity = file name minus its _NNNN suffix, lowercased (as the eval simulator). The
first EXCLUDE identities in the simulator's sha1 order (it uses the first --limit of them for
its validation/ and test/ folders) are never used here; of the rest, a sha1 bucket puts 8 % of
identities in our own validation set (model selection, calibration).

Webcam captures (v2, WEBCAM_P of live and attack crops alike): the same media photographed by a
cheap webcam instead: the face 170-270 px, soft, noisy, sharpened by the camera's processing
(halos) and strongly JPEG-compressed, as in 640x480 webcam frames, where v1 rated live faces as
re-captured media (MODEL_CARD.md, NUAA). `box` records each crop's face side in pixels, so
training and validation place patches as inference does for a face of that size.

Run: /usr/bin/python3 training/liveness/prepare.py [k/n]   (one thread; ~10 min; shards resume;
k/n prepares every n-th shard from k, for n parallel processes)
Writes $OUT (default /work/data/pad)/shard-*.npz (x uint8 [n,256,256], y, species, split,
identity index, box).
"""
import glob, hashlib, json, os, re, sys
import cv2, numpy as np

cv2.setNumThreads(1)
DATA = '/work/data/faces/images'
OUT = os.environ.get('OUT', '/work/data/pad')
WEBCAM_P = float(os.environ.get('WEBCAM_P', '0'))  # v1: 0; v2: 0.4
EXCLUDE = 400            # simulator identities never used (its README run uses --limit 160)
VAL_PERCENT = 8
CROP = 256
SHARD = 800
SPECIES = ['live', 'print-am', 'print-fm', 'screen', 'phone']
ATTACK_P = [0.3, 0.2, 0.3, 0.2]  # print-am, print-fm, screen, phone


def identity_of(name):
    return re.sub(r'_\d+$', '', re.sub(r'\.[^.]+$', '', name)).lower()


def sha1(s):
    return hashlib.sha1(s.encode()).hexdigest()


def plan():
    files = sorted(f for f in os.listdir(DATA) if re.search(r'\.(jpe?g|png)$', f, re.I))
    ids = sorted({identity_of(f) for f in files}, key=sha1)
    excluded = set(ids[:EXCLUDE])
    rows = []
    for f in files:
        i = identity_of(f)
        if i in excluded: continue
        split = 'val' if int(sha1('pad-split:' + i)[:8], 16) % 100 < VAL_PERCENT else 'train'
        rows.append((f, i, split))
    return rows, sorted(excluded)


def u(rng, a, b): return float(rng.uniform(a, b))


def jpeg(img, q):
    ok, buf = cv2.imencode('.jpg', np.clip(img, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, int(q)])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR).astype(np.float32)


INTERP = [cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA, cv2.INTER_LANCZOS4]


def resize(img, w, h, rng):
    return cv2.resize(img, (int(w), int(h)), interpolation=INTERP[rng.integers(len(INTERP))])


def hold(img, rng, background, tilt, perspective, grow):
    """The medium's pose before the lens: a tilt of up to +-tilt degrees and an optional perspective,
    `background` showing round it; `grow` enlarges the canvas to keep the rotated corners."""
    h, w = img.shape[:2]
    if background is None and not tilt and not perspective: return img
    bg = background if background is not None else (0, 0, 0)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), u(rng, -tilt, tilt), 1.0)
    nw, nh = w, h
    if grow:
        c, s = abs(m[0, 0]), abs(m[0, 1])
        nw, nh = int(h * s + w * c), int(h * c + w * s)
        m[0, 2] += nw / 2 - w / 2; m[1, 2] += nh / 2 - h / 2
    if perspective:
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        dst = src + rng.uniform(-perspective, perspective, (4, 2)).astype(np.float32) * w
        img = cv2.warpPerspective(img, cv2.getPerspectiveTransform(src, dst), (w, h), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=bg)
    return cv2.warpAffine(img, m, (nw, nh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=bg)


def camera(img, rng, background=None, tilt=0.0, perspective=0.0):
    """The capturing camera: framing (scale, tilt, perspective), defocus, sensor noise, JPEG."""
    img = hold(img, rng, background, tilt, perspective, grow=True)
    h, w = img.shape[:2]
    f = u(rng, 0.88, 1.15)
    if abs(f - 1) > 0.01: img = resize(img, w * f, h * f, rng)
    if rng.random() < 0.85:
        sigma = u(rng, 0.2, 1.5)
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.random() < 0.9:
        sigma = u(rng, 0.5, 6.0)
        grey = rng.normal(0, sigma, img.shape[:2])[..., None]
        colour = rng.normal(0, sigma * u(rng, 0, 0.6), img.shape)
        img = img + grey + colour
        if rng.random() < 0.3: img = cv2.GaussianBlur(img, (0, 0), 0.5)  # demosaicing smears noise
    return jpeg(img, rng.integers(62, 97))


def webcam(img, rng, background=None, tilt=0.0, perspective=0.0):
    """A cheap webcam (640x480, the face 170-270 px): the scene around the medium is continued,
    the framing as camera(), then downscaling, defocus, strong sensor noise, the camera's own
    sharpening (which also sharpens the noise and rings at edges), JPEG at q35-85."""
    side = img.shape[1]
    pad = int(0.12 * side)
    img = cv2.copyMakeBorder(img, pad, pad, pad, pad, cv2.BORDER_REFLECT)
    img = hold(img, rng, background, tilt, perspective, grow=False)
    h, w = img.shape[:2]
    face = u(rng, 170, 270)
    f = face / side
    img = cv2.resize(img, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA if rng.random() < 0.7 else cv2.INTER_LINEAR)
    if rng.random() < 0.8: img = cv2.GaussianBlur(img, (0, 0), u(rng, 0.3, 1.2))
    sigma = u(rng, 2.0, 8.0)
    img = img + rng.normal(0, sigma, img.shape[:2])[..., None] + rng.normal(0, sigma * u(rng, 0.3, 1.0), img.shape)
    if rng.random() < 0.7:
        img = img + u(rng, 0.4, 1.8) * (img - cv2.GaussianBlur(img, (0, 0), u(rng, 0.8, 2.0)))
    return jpeg(img, rng.integers(35, 86)), face


def paper(img, rng):
    """Paper and ink: less contrast and saturation, a tint, an optional tone curve."""
    grey = img.mean(axis=2, keepdims=True)
    img = grey + u(rng, 0.5, 0.9) * (img - grey)
    black, white = u(rng, 8, 60), u(rng, 190, 250)
    img = black + (white - black) * np.power(np.clip(img / 255, 0, 1), u(rng, 0.8, 1.25))
    tint = np.array([1 + u(rng, -0.02, 0.06), 1.0, 1 - u(rng, 0, 0.12)], np.float32)
    return img * tint


def print_am(img, rng, capture):
    img = paper(img, rng)
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = u(rng, 2.2, 7.0)
    amp = u(rng, 0.05, 0.25)
    base = u(rng, 0, np.pi / 2)
    per_ink = rng.random() < 0.5
    out = np.empty_like(img)
    for c in range(3):
        a = base + (np.deg2rad([15, 75, 0][c]) if per_ink else 0)
        ca, sa = np.cos(a), np.sin(a)
        screen = np.cos(2 * np.pi * (xx * ca + yy * sa) / period) * np.cos(2 * np.pi * (-xx * sa + yy * ca) / period)
        out[..., c] = img[..., c] * (1 + amp * screen)
    bg = tuple(float(v) for v in rng.uniform(150, 245, 3))
    return capture(out, rng, background=bg, tilt=8, perspective=0.04 if rng.random() < 0.5 else 0)


def print_fm(img, rng, capture):
    img = paper(img, rng)
    h, w = img.shape[:2]
    dot = u(rng, 1.0, 2.5)
    field = rng.random((int(h / dot) + 1, int(w / dot) + 1)).astype(np.float32) - 0.5
    field = cv2.resize(field, (w, h), interpolation=cv2.INTER_NEAREST if rng.random() < 0.5 else cv2.INTER_LINEAR)
    # ink coverage: dots are densest in mid-tones
    tone = img.mean(axis=2, keepdims=True) / 255
    img = img * (1 + u(rng, 0.15, 0.5) * field[..., None] * (4 * tone * (1 - tone)))
    if rng.random() < 0.5:  # print-head banding
        yy = np.arange(h, dtype=np.float32)[:, None, None]
        img = img * (1 + u(rng, 0.02, 0.08) * np.sin(2 * np.pi * yy / u(rng, 3, 24) + u(rng, 0, 6.3)))
    bg = tuple(float(v) for v in rng.uniform(150, 245, 3))
    return capture(img, rng, background=bg, tilt=8, perspective=0.04 if rng.random() < 0.5 else 0)


def display(img, rng, pixels_per_display_pixel):
    """An RGB-stripe panel showing img, sampled by a camera: each display pixel is a 3x3 block
    of R, G and B columns (crosstalk between them, optionally a dark row gap), rotated a little
    and resampled to `pixels_per_display_pixel` camera pixels per display pixel."""
    h, w = img.shape[:2]
    k = 3
    hi = cv2.resize(img, (w * k, h * k), interpolation=cv2.INTER_NEAREST)
    cross = u(rng, 0.03, 0.3)
    mask = np.full((k, k, 3), cross, np.float32)
    for s in range(3): mask[:, s, s] = 1.0
    if rng.random() < 0.5: mask[k - 1, :, :] *= u(rng, 0.2, 0.9)  # black matrix between rows
    if rng.random() < 0.3: mask = mask.transpose(1, 0, 2)          # panel rotated 90 degrees
    hi = hi * np.tile(mask, (h, w, 1))
    angle = u(rng, -10, 10) if rng.random() < 0.6 else 0.0
    if angle:
        m = cv2.getRotationMatrix2D((w * k / 2, h * k / 2), angle, 1.0)
        hi = cv2.warpAffine(hi, m, (w * k, h * k), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    f = pixels_per_display_pixel / k
    interp = [cv2.INTER_LINEAR, cv2.INTER_AREA, cv2.INTER_CUBIC][rng.integers(3)]
    out = cv2.resize(hi, (max(8, int(w * k * f)), max(8, int(h * k * f))), interpolation=interp)
    # backlight and exposure restore the light the stripes lose; panel gamma; glare
    out = np.power(np.clip(out / 255, 0, 1), u(rng, 0.85, 1.5)) * 255 * u(rng, 1.6, 2.6)
    oh, ow = out.shape[:2]
    yy, xx = np.mgrid[0:oh, 0:ow].astype(np.float32)
    gx, gy, gs = u(rng, 0, ow), u(rng, 0, oh), u(rng, 0.15, 0.5) * ow
    out = out + u(rng, 0, 70) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * gs * gs))[..., None]
    return out


def screen(img, rng, capture):
    out = display(img, rng, u(rng, 0.5, 1.6))
    return capture(out, rng, background=tuple(float(v) for v in rng.uniform(0, 30, 3)), tilt=6)


def phone(img, rng, capture):
    h, w = img.shape[:2]
    d = u(rng, 0.3, 0.6)  # display pixels per source pixel: a low-resolution replay
    small = jpeg(resize(img, w * d, h * d, rng), rng.integers(35, 85))
    out = display(small, rng, 1 / d)
    return capture(out, rng, background=tuple(float(v) for v in rng.uniform(0, 25, 3)), tilt=6)


def live(img, rng, capture):
    if capture is webcam or rng.random() < 0.8: return capture(img, rng, tilt=4 if rng.random() < 0.3 else 0)
    return jpeg(img, rng.integers(70, 97)), min(img.shape[:2])


def studio(img, rng, **framing):
    """camera() with the face side it leaves (~ the captured image's side), as webcam() returns."""
    out = camera(img, rng, **framing)
    return out, min(out.shape[:2])


ATTACKS = {'print-am': print_am, 'print-fm': print_fm, 'screen': screen, 'phone': phone}
MAX_SIDE = 528  # inference downscales images whose face box exceeds 512 px (box ~ 0.97 x side here)


def to_crop(img, rng):
    h, w = img.shape[:2]
    if max(h, w) > MAX_SIDE:
        f = MAX_SIDE / max(h, w); img = cv2.resize(img, (round(w * f), round(h * f)), interpolation=cv2.INTER_AREA)
    y = 0.299 * img[..., 2] + 0.587 * img[..., 1] + 0.114 * img[..., 0]  # BGR from cv2
    y = np.clip(np.round(y), 0, 255).astype(np.uint8)
    h, w = y.shape
    if min(h, w) < CROP:
        p = (CROP - min(h, w)) // 2 + 1
        y = cv2.copyMakeBorder(y, p, p, p, p, cv2.BORDER_REFLECT); h, w = y.shape
    t, l = (h - CROP) // 2, (w - CROP) // 2
    return y[t:t + CROP, l:l + CROP]


def make(path, rng, species):
    """-> (256x256 luma crop, the face's side in pixels after capture)."""
    src = cv2.imread(path, cv2.IMREAD_COLOR).astype(np.float32)
    side = int(rng.integers(320, 561))
    img = resize(src, side, side, rng)
    capture = webcam if WEBCAM_P and rng.random() < WEBCAM_P else studio
    out, face = live(img, rng, capture) if species == 'live' else ATTACKS[species](img, rng, capture)
    return to_crop(out, rng), round(min(face, MAX_SIDE))


def main(part='0/1'):
    k, n = (int(v) for v in part.split('/'))
    os.makedirs(OUT, exist_ok=True)
    rows, excluded = plan()
    ids = sorted({r[1] for r in rows}); index = {i: k for k, i in enumerate(ids)}
    json.dump({'excludedSimulatorIdentities': EXCLUDE, 'files': len(rows), 'identities': len(ids),
               'train': sum(r[2] == 'train' for r in rows), 'val': sum(r[2] == 'val' for r in rows)},
              open(os.path.join(OUT, 'plan.json'), 'w'), indent=1)
    print(f'{len(rows)} photos of {len(ids)} identities (excluded {len(excluded)} simulator identities)', flush=True)
    for s in range(k * SHARD, len(rows), n * SHARD):
        name = os.path.join(OUT, f'shard-{s // SHARD:03d}.npz')
        if os.path.exists(name): continue
        rng = np.random.default_rng(1000 + s // SHARD)
        xs, ys, sp, spl, idn, box = [], [], [], [], [], []
        for f, i, split in rows[s:s + SHARD]:
            attack = list(ATTACKS)[rng.choice(len(ATTACKS), p=ATTACK_P)]
            for species in ('live', attack):
                crop, face = make(os.path.join(DATA, f), rng, species)
                xs.append(crop); box.append(face); ys.append(0 if species == 'live' else 1)
                sp.append(SPECIES.index(species)); spl.append(split == 'val'); idn.append(index[i])
        np.savez(name + '.tmp.npz', x=np.stack(xs), y=np.array(ys, np.uint8), species=np.array(sp, np.uint8),
                 val=np.array(spl, bool), identity=np.array(idn, np.int32), box=np.array(box, np.uint16))
        os.replace(name + '.tmp.npz', name)
        print(f'{name}: {len(xs)} crops', flush=True)


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'preview':  # writes a few full-size examples to look at
        rng = np.random.default_rng(7)
        rows, _ = plan()
        for k, species in enumerate(SPECIES):
            for j in range(3):
                crop, face = make(os.path.join(DATA, rows[k * 37 + j][0]), rng, species)
                cv2.imwrite(f'/tmp/pad-preview-{species}-{j}-{face}.png', crop)
    else:
        main(*sys.argv[1:2])
