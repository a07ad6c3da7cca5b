"""Builds the training set of face-liveness-context: a presentation-attack model that sees the
CONTEXT of a face (a square of side S x the face box, S = 2) rather than the face's texture.

Inference geometry (the descriptor's `input`; measured, see MODEL_CARD.md): the box is Human's
face box as server/src/detectors/face/face-analysis.ts analyseFaces reports it; the crop is the
square of side S x max(box w, h) centred on the box centre, shifted (never padded) to lie inside
the image, shrunk to the image's shorter side when it does not fit; resized to 112 x 112; luma
(BT.601). Here the same rule (`context_crop`) cuts every live and every attack sample.

Live samples: real photos of people in their own surroundings (the `real` half of
kushagragupta-23/Dual-Cue-...: ImageNet/COCO-derived photos, 256 x 256), with the box Human
really finds on them (detect-scenes.ts), plus LFW face photos (muxspace/facial_expressions) with
Human's measured box (they are tight face crops: Human's box covers the whole photo, so they carry
no context; 15 % of live samples, so that an LFW face is not itself a cue). Every live photo goes
through the camera model of training/liveness/prepare.py (rescale, defocus, sensor noise, JPEG).

Attack samples: a face photo (a Dual-Cue photo or an LFW photo, never the live photo's own) on a
medium (prepare.py's species: print-am, print-fm, screen, phone, plus `poster`: a large glossy
photo print, continuous tone or very fine halftone, mild gamut reduction, a broad specular glare
band), with a border of its kind (paper margin, dark bezel of 3-10 % of its side, or none 30 % of
the time), as a flat plane in perspective (tilt up to 25 deg), composited into a scene (another
real photo enlarged and defocused, an LFW photo enlarged and defocused, or a blurred plain-ish
surface), sometimes held by fingers / a thumb (skin-toned rounded blobs with shading over an
edge), sometimes with a drop shadow or a second soft shadow; then the same camera. The medium is
placed so that the face's box lands where a live photo's box is: the target box (image size,
position, size) is drawn from the live photos' boxes, so face scale and position are no cue.

Split: LFW identities exactly as training/liveness/prepare.py (the eval simulator's first 400
identities in sha1 order excluded; sha1('pad-split:' + identity) mod 100 < 8 -> validation);
Dual-Cue photos by sha1('ctx-split:' + file name) mod 100 < 8 -> validation. A sample's live
photo, medium photo and background photo all come from its own split.

Run: taskset -c 0 /usr/bin/python3 training/liveness-context/prepare.py [shards]   (one thread; shards resume; ROUNDS=2;
ORDER=reverse on the other core writes the same shards from the last one back)
Writes /work/data/pad2/shard-*.npz (x uint8 [n,112,112], y, species, val).
"""
import hashlib, json, math, os, re, sys
import importlib.util
import cv2, numpy as np

cv2.setNumThreads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
# the species physics and the camera model of face-liveness-pad (training/liveness/prepare.py)
_spec = importlib.util.spec_from_file_location('pad1_prepare', os.path.join(HERE, '..', 'liveness', 'prepare.py'))
pad1 = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(pad1)

WORK = '/work/data/pad2'
LFW = os.path.join(WORK, 'images')
SCENES = os.path.join(WORK, 'scenes')
SIDE = 112                # model input
S = 2.0                   # context scale: crop side = S x max(box w, h)
VAL_PERCENT = 8
SHARD = 400               # scene photos per shard
LIVE_PER_PHOTO = 2        # live samples per scene photo (each with its own camera and box jitter)
ROUNDS = int(os.environ.get('ROUNDS', '2'))  # passes over the photos (shard-0NN, shard-1NN, ...)
SPECIES = ['live', 'print-am', 'print-fm', 'screen', 'phone', 'poster']
ATTACK_P = [0.22, 0.14, 0.22, 0.18, 0.24]
LFW_LIVE_SHARE = 0.15
# Human's box on an LFW photo of this set when the photo is not clipped by the image border
# (measure-unclipped.ts on 48 photos, each placed in a canvas 2.2x its side): side 1.174 +- 0.083
# x the photo side, square, centre at (0.516 +- 0.053, 0.566 +- 0.021) x the photo side.
LFW_BOX_SIDE, LFW_BOX_SIDE_SD = 1.174, 0.083
LFW_BOX_CX, LFW_BOX_CY, LFW_BOX_C_SD = 0.516, 0.566, (0.053, 0.021)
BOX_JITTER = (0.03, 0.04)  # centre (share of side) and size jitter of the box, live and attack alike

camera = pad1.camera
u = pad1.u


def sha1(s): return hashlib.sha1(s.encode()).hexdigest()


def lfw_rows():
    pad1.DATA = LFW
    rows, _ = pad1.plan()
    # LFW-named photos only (images/ also holds ~900 small non-LFW photos); the split is pad1's
    return [r for r in rows if re.search(r'_\d{4}\.jpe?g$', r[0], re.I)]  # (file, identity, split)


def scene_rows():
    out = []
    for line in open(os.path.join(WORK, 'scene-faces.jsonl')):
        r = json.loads(line)
        r['val'] = int(sha1('ctx-split:' + os.path.basename(r['file']))[:8], 16) % 100 < VAL_PERCENT
        out.append(r)
    return out


# ---------------------------------------------------------------- geometry (as at inference)

def context_crop(img, box, s=S):
    """The inference rule: square of side s x max(w, h) centred on the box centre, shifted into the
    image, shrunk to the shorter image side if larger. Returns the crop (not resized)."""
    h, w = img.shape[:2]
    x, y, bw, bh = box
    side = s * max(bw, bh)
    side = int(round(min(side, w, h)))
    cx, cy = x + bw / 2, y + bh / 2
    left = int(round(cx - side / 2)); top = int(round(cy - side / 2))
    left = min(max(left, 0), w - side); top = min(max(top, 0), h - side)
    return img[top:top + side, left:left + side]


def to_input(crop, rng):
    interp = [cv2.INTER_AREA, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_LANCZOS4][rng.integers(4)]
    small = cv2.resize(crop, (SIDE, SIDE), interpolation=interp)
    if small.ndim == 3:
        small = 0.299 * small[..., 2] + 0.587 * small[..., 1] + 0.114 * small[..., 0]
    return np.clip(np.round(small), 0, 255).astype(np.uint8)


def jitter_box(box, rng):
    x, y, w, h = box
    side = max(w, h)
    dx, dy = rng.normal(0, BOX_JITTER[0], 2) * side
    k = math.exp(rng.normal(0, BOX_JITTER[1]))
    nw, nh = w * k, h * k
    return (x + w / 2 + dx - nw / 2, y + h / 2 + dy - nh / 2, nw, nh)


def capture(img, box, rng):
    """The camera of face-liveness-pad (rescale 0.88-1.15, defocus, noise, JPEG); the box follows the rescale."""
    h, w = img.shape[:2]
    out = camera(img, rng)
    f = out.shape[1] / w
    return out, tuple(v * f for v in box)


# ---------------------------------------------------------------- live

def lfw_live_box(rng):
    """Human's box on an LFW photo of this set (350 x 350): the unclipped box, clipped to the image."""
    side = 350 * (LFW_BOX_SIDE + rng.normal(0, LFW_BOX_SIDE_SD))
    cx = 350 * (LFW_BOX_CX + rng.normal(0, LFW_BOX_C_SD[0])); cy = 350 * (LFW_BOX_CY + rng.normal(0, LFW_BOX_C_SD[1]))
    x0, y0 = max(0, cx - side / 2), max(0, cy - side / 2)
    x1, y1 = min(350, cx + side / 2), min(350, cy + side / 2)
    return (x0, y0, x1 - x0, y1 - y0)


def make_live(img, box, rng):
    out, b = capture(img, box, rng)
    return to_input(context_crop(out, jitter_box(b, rng)), rng)


# ---------------------------------------------------------------- media

def no_camera(img, rng, **framing):
    """The capture a face-liveness-pad species function is given here: none, the medium itself
    (the scene and the camera come later, in make_attack)."""
    return img


def poster(img, rng):
    """A large glossy photo print: continuous tone or a very fine halftone, mild gamut reduction,
    a broad specular glare band across it."""
    grey = img.mean(axis=2, keepdims=True)
    img = grey + u(rng, 0.75, 1.0) * (img - grey)
    black, white = u(rng, 4, 30), u(rng, 215, 252)
    img = black + (white - black) * np.power(np.clip(img / 255, 0, 1), u(rng, 0.85, 1.2))
    h, w = img.shape[:2]
    if rng.random() < 0.4:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        period, a = u(rng, 1.2, 2.2), u(rng, 0, np.pi / 2)
        scr = np.cos(2 * np.pi * (xx * np.cos(a) + yy * np.sin(a)) / period) * np.cos(2 * np.pi * (-xx * np.sin(a) + yy * np.cos(a)) / period)
        img = img * (1 + u(rng, 0.03, 0.1) * scr[..., None])
    return img + glare_band(h, w, rng, strength=u(rng, 40, 140))[..., None]


def glare_band(h, w, rng, strength):
    """A specular band: a line across the medium with a Gaussian profile."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = u(rng, 0, np.pi)
    d = (xx - u(rng, 0, w)) * np.cos(a) + (yy - u(rng, 0, h)) * np.sin(a)
    width = u(rng, 0.05, 0.3) * max(h, w)
    return strength * np.exp(-d * d / (2 * width * width))


def medium(content, species, rng):
    """The content image shown on / printed on the medium (same size as content), no border yet."""
    h, w = content.shape[:2]
    if species == 'poster':
        out = poster(content, rng)
    elif species in ('print-am', 'print-fm'):
        out = (pad1.print_am if species == 'print-am' else pad1.print_fm)(content, rng, no_camera)
        if rng.random() < 0.4: out = out + glare_band(h, w, rng, u(rng, 15, 70))[..., None]
    else:
        out = (pad1.screen if species == 'screen' else pad1.phone)(content, rng, no_camera)
    if out.shape[:2] != (h, w):
        out = cv2.resize(out, (w, h), interpolation=cv2.INTER_AREA if out.shape[1] > w else cv2.INTER_LINEAR)
    return out.astype(np.float32)


def add_border(med, species, rng):
    """Paper margin / dark bezel of 3-10 % of the medium's side (or none). Returns image and the
    content's offset inside it."""
    h, w = med.shape[:2]
    m = int(round(u(rng, 0.03, 0.10) * max(h, w)))
    if species in ('screen', 'phone'):
        v = u(rng, 3, 45)
        colour = (v, v, v)
        out = cv2.copyMakeBorder(med, m, m, m, m, cv2.BORDER_CONSTANT, value=colour)
        if rng.random() < 0.5:  # a thin highlight on the bezel's outer edge
            cv2.rectangle(out, (0, 0), (out.shape[1] - 1, out.shape[0] - 1), (v + u(rng, 20, 80),) * 3, max(1, m // 8))
        if species == 'phone' and rng.random() < 0.6:  # a much wider top/bottom bezel
            extra = int(u(rng, 0.05, 0.15) * h)
            out = cv2.copyMakeBorder(out, extra, extra, 0, 0, cv2.BORDER_CONSTANT, value=colour)
            return out, (m, m + extra)
        return out, (m, m)
    v = u(rng, 185, 250)
    tint = (v * (1 - u(rng, 0, 0.08)), v, v * (1 + u(rng, -0.02, 0.04)))
    out = cv2.copyMakeBorder(med, m, m, m, m, cv2.BORDER_CONSTANT, value=tint)
    return out, (m, m)


# ---------------------------------------------------------------- scene

def plain_surface(n, rng):
    base = u(rng, 40, 220)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n
    img = base + u(rng, -60, 60) * (xx - 0.5) + u(rng, -60, 60) * (yy - 0.5)
    low = cv2.resize(rng.normal(0, 1, (6, 6)).astype(np.float32), (n, n), interpolation=cv2.INTER_CUBIC)
    img = img + u(rng, 0, 25) * low + rng.normal(0, u(rng, 0, 6), (n, n))
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), u(rng, 0.5, 3))
    tint = np.array([1 + u(rng, -0.1, 0.1), 1, 1 + u(rng, -0.1, 0.1)], np.float32)
    return np.clip(img[..., None] * tint, 0, 255)


def photo_background(src, n, rng):
    """Another photo, enlarged (a part of it fills the scene) and defocused."""
    h, w = src.shape[:2]
    z = u(rng, 1.0, 2.5)
    crop = max(8, int(min(h, w) / z))
    t, l = rng.integers(0, h - crop + 1), rng.integers(0, w - crop + 1)
    img = cv2.resize(src[t:t + crop, l:l + crop], (n, n), interpolation=cv2.INTER_CUBIC)
    if rng.random() < 0.85: img = cv2.GaussianBlur(img, (0, 0), u(rng, 0.5, 5) * n / 256)
    return img * u(rng, 0.6, 1.2) + u(rng, -20, 20)


def plane_homography(w, h, rng, max_tilt=25):
    """Homography of a w x h plane rotated in 3-D (yaw, pitch up to max_tilt, roll) and projected."""
    yaw, pitch = np.deg2rad(rng.uniform(-max_tilt, max_tilt, 2) * (rng.random() ** 0.5))
    roll = np.deg2rad(u(rng, -12, 12))
    cy_, sy_, cp, sp, cr, sr = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch), math.cos(roll), math.sin(roll)
    ry = np.array([[cy_, 0, sy_], [0, 1, 0], [-sy_, 0, cy_]]); rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    rz = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    r = rz @ rx @ ry
    f = max(w, h) * u(rng, 1.2, 3.0)
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    pts = np.c_[src - [w / 2, h / 2], np.zeros(4)] @ r.T
    dst = (pts[:, :2] * f / (f + pts[:, 2:3])).astype(np.float32)
    return cv2.getPerspectiveTransform(src, dst)


def transform_points(hm, pts):
    p = np.c_[pts, np.ones(len(pts))] @ hm.T
    return p[:, :2] / p[:, 2:3]


def fingers(canvas, quad, rng, scale):
    """Fingers or a thumb holding the medium: skin-toned rounded blobs with shading over an edge."""
    n = canvas.shape[0]
    k = rng.integers(4)
    a, b = quad[k], quad[(k + 1) % 4]
    t = u(rng, 0.15, 0.85)
    p = a + t * (b - a)
    edge = (b - a) / (np.linalg.norm(b - a) + 1e-6)
    centre = quad.mean(0)
    normal = np.array([-edge[1], edge[0]])
    if np.dot(centre - p, normal) < 0: normal = -normal  # normal points into the medium
    thumb = rng.random() < 0.4
    count = 1 if thumb else int(rng.integers(2, 5))
    width = scale * (u(rng, 0.09, 0.14) if thumb else u(rng, 0.05, 0.08))
    length = width * (u(rng, 2.0, 3.0) if thumb else u(rng, 2.5, 4.0))
    skin = u(rng, 95, 205)
    mask = np.zeros((n, n), np.float32); shade = np.zeros((n, n), np.float32)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    ang = math.degrees(math.atan2(normal[1], normal[0])) + u(rng, -15, 15)
    for i in range(count):
        c = p + edge * (i - (count - 1) / 2) * width * 1.05 + normal * u(rng, 0.0, 0.5) * length * 0.5
        m = np.zeros((n, n), np.float32)
        cv2.ellipse(m, (int(c[0]), int(c[1])), (int(length / 2), int(width / 2)), ang, 0, 360, 1.0, -1, cv2.LINE_AA)
        # shading: brighter along the finger's axis, darker at its sides
        d = np.abs((xx - c[0]) * -math.sin(math.radians(ang)) + (yy - c[1]) * math.cos(math.radians(ang))) / (width / 2 + 1e-6)
        shade = np.where(m > 0, 1 - 0.35 * np.clip(d, 0, 1) ** 2, shade)
        mask = np.maximum(mask, m)
    mask = cv2.GaussianBlur(mask, (0, 0), max(0.6, scale * 0.004))
    light = skin * shade * u(rng, 0.85, 1.1) + rng.normal(0, 2, (n, n))
    tone = np.stack([light * 0.85, light * 0.95, light * 1.08], -1)  # BGR, warm
    # contact shadow around the fingers
    sh = cv2.GaussianBlur(mask, (0, 0), max(1.0, width * 0.25))
    canvas = canvas * (1 - 0.35 * np.clip(sh - mask, 0, 1))[..., None]
    return canvas * (1 - mask[..., None]) + tone * mask[..., None]


def make_attack(content, cbox, geo, background, species, rng, border_mode):
    """content: medium photo (float BGR), cbox its face box; geo = (img side n, target box)."""
    n, tbox = geo
    R = 1.5                      # render at 1.5x, then downscale (antialiased edges)
    N = int(round(n * R))
    tb = [v * R for v in tbox]
    # the content at the scale where its box matches the target box (before perspective)
    k = max(tb[2], tb[3]) / max(cbox[2], cbox[3])
    ch, cw = content.shape[:2]
    cw2, ch2 = max(8, int(round(cw * k))), max(8, int(round(ch * k)))
    cap = 640
    work = cv2.resize(content, (min(cw2, cap), min(ch2, cap)), interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC)
    med = medium(work, species, rng)
    if med.shape[1] != cw2 or med.shape[0] != ch2: med = cv2.resize(med, (cw2, ch2), interpolation=cv2.INTER_LINEAR)
    box_in = np.array([cbox[0] * k, cbox[1] * k, cbox[2] * k, cbox[3] * k])
    if border_mode:
        med, (ox, oy) = add_border(med, species, rng)
        box_in[:2] += (ox, oy)
    mh, mw = med.shape[:2]
    hm = plane_homography(mw, mh, rng)
    corners = np.array([[box_in[0], box_in[1]], [box_in[0] + box_in[2], box_in[1]], [box_in[0] + box_in[2], box_in[1] + box_in[3]], [box_in[0], box_in[1] + box_in[3]]])
    fc = transform_points(hm, corners)
    fw, fh = fc[:, 0].ptp(), fc[:, 1].ptp()
    # scale and shift so the projected face box has the target box's side and centre
    s = max(tb[2], tb[3]) / max(fw, fh)
    tx = tb[0] + tb[2] / 2 - s * fc[:, 0].mean(); ty = tb[1] + tb[3] / 2 - s * fc[:, 1].mean()
    full = np.array([[s, 0, tx], [0, s, ty], [0, 0, 1]]) @ hm
    warped = cv2.warpPerspective(med, full, (N, N), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    mask = cv2.warpPerspective(np.ones((mh, mw), np.float32), full, (N, N), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    quad = transform_points(full, np.array([[0, 0], [mw, 0], [mw, mh], [0, mh]], float))
    bg = background
    if rng.random() < 0.5:  # the medium's drop shadow on the scene
        off = rng.normal(0, 0.03 * N, 2)
        sh = cv2.warpAffine(mask, np.float32([[1, 0, off[0]], [0, 1, off[1]]]), (N, N))
        sh = cv2.GaussianBlur(sh, (0, 0), u(rng, 0.005, 0.03) * N)
        bg = bg * (1 - u(rng, 0.2, 0.6) * sh)[..., None]
    out = bg * (1 - mask[..., None]) + warped * mask[..., None]
    if rng.random() < 0.3:  # a second soft shadow (a hand, the phone holding the camera...)
        yy, xx = np.mgrid[0:N, 0:N].astype(np.float32)
        a = u(rng, 0, np.pi); d = (xx - u(rng, 0, N)) * np.cos(a) + (yy - u(rng, 0, N)) * np.sin(a)
        out = out * (1 - u(rng, 0.15, 0.45) / (1 + np.exp(-d / (u(rng, 0.01, 0.08) * N))))[..., None]
    if rng.random() < 0.35:
        out = fingers(out, quad, rng, max(tb[2], tb[3]) * 1.3)
    out = cv2.resize(out.astype(np.float32), (n, n), interpolation=cv2.INTER_AREA)
    img, b = capture(out, tbox, rng)
    return to_input(context_crop(img, jitter_box(b, rng)), rng)


# ---------------------------------------------------------------- plan and shards

def load_bgr(path):
    return cv2.imread(path, cv2.IMREAD_COLOR).astype(np.float32)


def load_lfw(name):
    """An LFW photo at 350 x 350 (the size Human's box was measured on; the rare other sizes are resized)."""
    img = load_bgr(os.path.join(LFW, name))
    if img.shape[:2] != (350, 350): img = cv2.resize(img, (350, 350), interpolation=cv2.INTER_AREA if img.shape[0] > 350 else cv2.INTER_CUBIC)
    return img


def main():
    only = int(sys.argv[1]) if len(sys.argv) > 1 else None
    os.makedirs(WORK, exist_ok=True)
    scenes = scene_rows()
    lfw = lfw_rows()
    live_scenes = [r for r in scenes if r['faces']]
    by_split = {v: [r for r in live_scenes if r['val'] == v] for v in (False, True)}
    lfw_split = {v: [r for r in lfw if (r[2] == 'val') == v] for v in (False, True)}
    bg_split = {v: [r for r in scenes if r['val'] == v] for v in (False, True)}
    json.dump({'sceneFiles': len(scenes), 'sceneFilesWithFace': len(live_scenes),
               'sceneTrain': len(by_split[False]), 'sceneVal': len(by_split[True]),
               'lfwTrain': len(lfw_split[False]), 'lfwVal': len(lfw_split[True])}, open(os.path.join(WORK, 'plan.json'), 'w'), indent=1)
    print(json.dumps(json.load(open(os.path.join(WORK, 'plan.json')))), flush=True)
    total = (len(live_scenes) + SHARD - 1) // SHARD
    # ROUNDS passes over the photos; each pass draws new cameras, jitter, media, scenes
    jobs = [(r, si) for r in range(ROUNDS) for si in range(total if only is None else min(total, only))]
    if os.environ.get('ORDER') == 'reverse': jobs.reverse()  # a second process on the other core meets the first in the middle
    for rd, si in jobs:
        name = os.path.join(WORK, f'shard-{rd * 100 + si:03d}.npz')
        if os.path.exists(name): continue
        rng = np.random.default_rng(5000 + rd * 100 + si)
        xs, ys, sp, vs = [], [], [], []
        for r in live_scenes[si * SHARD:(si + 1) * SHARD]:
            val = r['val']
            img = load_bgr(os.path.join(SCENES, r['file']))
            box = tuple(r['faces'][0][:4])
            # LIVE_PER_PHOTO live samples per photo and, with probability
            # LFW_LIVE_SHARE / (1 - LFW_LIVE_SHARE) per sample, an LFW live photo
            before = len(ys)
            for _ in range(LIVE_PER_PHOTO):
                xs.append(make_live(img, box, rng)); ys.append(0); sp.append(0); vs.append(val)
                if rng.random() < LFW_LIVE_SHARE / (1 - LFW_LIVE_SHARE):
                    f = lfw_split[val][rng.integers(len(lfw_split[val]))][0]
                    xs.append(make_live(load_lfw(f), lfw_live_box(rng), rng)); ys.append(0); sp.append(0); vs.append(val)
            # as many attacks as live samples, each with a live sample's geometry
            for _ in range(len(ys) - before):
                g_live = rng.random() < LFW_LIVE_SHARE
                if g_live:
                    geo = (350, lfw_live_box(rng))
                else:
                    gr = by_split[val][rng.integers(len(by_split[val]))]
                    geo = (gr['width'], tuple(gr['faces'][0][:4]))
                border = rng.random() >= 0.3
                # the medium's photo: a Dual-Cue photo (not this live one) or an LFW photo; without a
                # border mostly a Dual-Cue photo, whose surroundings often fill the whole crop
                if rng.random() < (0.8 if not border else 0.5):
                    cr = by_split[val][rng.integers(len(by_split[val]))]
                    while cr['file'] == r['file']: cr = by_split[val][rng.integers(len(by_split[val]))]
                    content = load_bgr(os.path.join(SCENES, cr['file'])); cbox = tuple(cr['faces'][0][:4])
                else:
                    f = lfw_split[val][rng.integers(len(lfw_split[val]))][0]
                    content = load_lfw(f)
                    side = 350 * LFW_BOX_SIDE
                    cbox = (350 * LFW_BOX_CX - side / 2, 350 * LFW_BOX_CY - side / 2, side, side)
                nbg = int(round(geo[0] * 1.5))
                q = rng.random()
                if q < 0.45:
                    b = bg_split[val][rng.integers(len(bg_split[val]))]
                    bg = photo_background(load_bgr(os.path.join(SCENES, b['file'])), nbg, rng)
                elif q < 0.7:
                    f = lfw_split[val][rng.integers(len(lfw_split[val]))][0]
                    bg = photo_background(load_lfw(f), nbg, rng)
                else:
                    bg = plain_surface(nbg, rng)
                species = SPECIES[1 + rng.choice(len(ATTACK_P), p=ATTACK_P)]
                xs.append(make_attack(content, cbox, geo, bg, species, rng, border)); ys.append(1); sp.append(SPECIES.index(species)); vs.append(val)
        np.savez(name + '.tmp.npz', x=np.stack(xs), y=np.array(ys, np.uint8), species=np.array(sp, np.uint8), val=np.array(vs, bool))
        os.replace(name + '.tmp.npz', name)
        print(f'{name}: {len(xs)} crops ({sum(ys)} attacks)', flush=True)


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'preview':
        rng = np.random.default_rng(3)
        scenes = [r for r in scene_rows() if r['faces']]
        lfw = lfw_rows()
        tiles = []
        for i in range(24):
            r = scenes[i * 7]
            if i < 6:
                tiles.append(make_live(load_bgr(os.path.join(SCENES, r['file'])), tuple(r['faces'][0][:4]), rng))
                continue
            cr = scenes[i * 7 + 3]
            content = load_bgr(os.path.join(SCENES, cr['file'])) if i % 2 else load_lfw(lfw[i * 11][0])
            side = 350 * LFW_BOX_SIDE
            cbox = tuple(cr['faces'][0][:4]) if i % 2 else (350 * LFW_BOX_CX - side / 2, 350 * LFW_BOX_CY - side / 2, side, side)
            bg = photo_background(load_bgr(os.path.join(SCENES, scenes[i * 5 + 1]['file'])), 384, rng) if i % 3 else plain_surface(384, rng)
            species = SPECIES[1 + i % 5]
            tiles.append(make_attack(content, cbox, (r['width'], tuple(r['faces'][0][:4])), bg, species, rng, i % 4 != 0))
        grid = np.vstack([np.hstack(tiles[k:k + 6]) for k in range(0, 24, 6)])
        cv2.imwrite('/tmp/ctx-preview.png', grid)
    else:
        main()
