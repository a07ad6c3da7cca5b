"""The sets the grid-misalignment map was tuned and checked on (src/detectors/image/forgery/grid-alignment.ts).

    /usr/bin/python3 scripts/splice-tuning-set.py [photos folder] [output folder] [seed]

Splices saved losslessly after a JPEG life, as CASIA's TIFFs were: each of the 30 photos of
shared/data/ai-image/photos, scaled to 768 px and saved as JPEG at quality 70-92, is the host
(untouched: that JPEG decoded and saved as PNG, label 0). A region is cut from another photo
saved at its own quality 65-95 (an object-like polygon of radius 30-110 px; in half of the
files the donor is rescaled by 0.7-1.3, in a quarter also rotated by up to 20 degrees), pasted
anywhere in the decoded host with a 1 px feathered edge, and the result saved as PNG (label 1;
the mask marks the pasted region). Needs python3-opencv. Evaluation sets (CASIA, NoSo, ML72)
are kept out. Seeds 61-62 chose the map's settings; seed 63 only measured them. With `never` as
a fourth argument it writes only the 30 photos scaled to 768 px and saved as PNG without a JPEG
life (the scaling resamples away the source's grid): the map must find nothing there.
"""
import cv2, numpy as np, os, glob, sys
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 61)
src = sorted(glob.glob(os.path.join(sys.argv[1] if len(sys.argv) > 1 else '../shared/data/ai-image/photos', '*.jpg')))
out = sys.argv[2] if len(sys.argv) > 2 else '/tmp/splice-tuning'
os.makedirs(os.path.join(out, 'masks'), exist_ok=True)


def jpeg_life(image, quality):
    ok, data = cv2.imencode('.jpg', image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def scaled(path):
    im = cv2.imread(path); h, w = im.shape[:2]; s = 768 / max(h, w)
    return cv2.resize(im, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)


def polygon(radius):
    # An object-like outline: vertices at sorted angles, each at 60-100 % of the radius.
    angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(7, 13))))
    reach = radius * rng.uniform(0.6, 1.0, len(angles))
    return np.stack([reach * np.cos(angles), reach * np.sin(angles)], 1)


rows = ['file,label']
if len(sys.argv) > 4 and sys.argv[4] == 'never':
    for i, f in enumerate(src):
        name = 'n%02d.png' % i; cv2.imwrite(os.path.join(out, name), scaled(f)); rows.append(name + ',0')
    open(os.path.join(out, 'labels.csv'), 'w').write('\n'.join(rows) + '\n')
    sys.exit(0)
for i, f in enumerate(src):
    host = jpeg_life(scaled(f), rng.integers(70, 93)); h, w = host.shape[:2]
    name = 'u%02d.png' % i; cv2.imwrite(os.path.join(out, name), host); rows.append(name + ',0')
    donor_path = src[(i + 1 + int(rng.integers(0, len(src) - 1))) % len(src)]
    donor = jpeg_life(scaled(donor_path), rng.integers(65, 96)); dh, dw = donor.shape[:2]
    r = int(rng.integers(30, 111))
    outline = polygon(r)
    scale = float(rng.uniform(0.7, 1.3)) if i % 2 else 1.0
    angle = float(rng.uniform(-20, 20)) if i % 4 == 3 else 0.0
    reach = int(np.ceil(r * max(1.0, scale))) + 2
    sx, sy = rng.integers(r + 1, dw - r - 1), rng.integers(r + 1, dh - r - 1)  # centre of the cut in the donor
    tx, ty = rng.integers(reach, w - reach), rng.integers(reach, h - reach)  # centre of the paste in the host
    cut = np.zeros((dh, dw), np.uint8)
    cv2.fillPoly(cut, [np.round(outline + [sx, sy]).astype(np.int32)], 255)
    M = cv2.getRotationMatrix2D((float(sx), float(sy)), angle, scale); M[0, 2] += tx - sx; M[1, 2] += ty - sy
    moved = cv2.warpAffine(donor, M, (w, h), flags=cv2.INTER_LINEAR if scale != 1.0 or angle else cv2.INTER_NEAREST)
    mask = cv2.warpAffine(cut, M, (w, h), flags=cv2.INTER_NEAREST)
    soft = cv2.GaussianBlur(mask.astype(np.float32) / 255, (0, 0), 1.0)[..., None]
    forged = np.round(host * (1 - soft) + moved * soft).astype(np.uint8)
    name = 'f%02d.png' % i
    cv2.imwrite(os.path.join(out, name), forged); rows.append(name + ',1')
    cv2.imwrite(os.path.join(out, 'masks', 'f%02d_gt.png' % i), mask)
open(os.path.join(out, 'labels.csv'), 'w').write('\n'.join(rows) + '\n')
print(len(rows) - 1)
