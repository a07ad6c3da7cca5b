"""Forgeries made in full-size camera photos, as a user edits one and saves it again.

    /usr/bin/python3 scripts/camera-forgery-set.py <camera photos folder> <output folder> [seed]

The other tuning sets scale every photo to 768 px first; a platform receives camera photos at
their own size, with their own camera's JPEG tables. Here each camera JPEG of the folder gives
three files at its stored size and orientation:
  uNN.jpg  the camera's file, byte for byte (untouched, label 0);
  rNN.jpg  the same pixels saved again at JPEG quality 85-95 (re-saved, untouched, label 0);
  fNN.jpg  a forgery saved at quality 85-95 (label 1; masks/fNN_gt.png marks the changed pixels):
           by turns a splice (an object-like polygon from another photo of the folder, radius
           4-12 % of the long side, rescaled to the host's scale by 0.7-1.3 and feathered 1 px),
           a copy-move (an elliptic region, radius 3-9 %, moved at least 2.5 radii away, rotated
           by 5-40 degrees every second time) and a removal (an elliptic region, radius 2-6 %,
           filled by OpenCV's Telea or Navier-Stokes inpainting).
Needs python3-opencv. scripts/select-camera-photos.ts chooses the photos (one per camera model)
and splits the camera models into a fitting half and a check half.
"""
import cv2, numpy as np, os, glob, shutil, sys

rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 71)
src = sorted(glob.glob(os.path.join(sys.argv[1], '*.jpg')))
out = sys.argv[2]
os.makedirs(os.path.join(out, 'masks'), exist_ok=True)
READ = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION  # the stored orientation: the mask is drawn on it


def polygon(radius):
    # An object-like outline: vertices at sorted angles, each at 60-100 % of the radius.
    angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(7, 13))))
    reach = radius * rng.uniform(0.6, 1.0, len(angles))
    return np.stack([reach * np.cos(angles), reach * np.sin(angles)], 1)


def feathered(mask):
    return cv2.GaussianBlur(mask.astype(np.float32) / 255, (3, 3), 0.8)[..., None]


def centre(radius, w, h):
    return int(rng.integers(radius, w - radius)), int(rng.integers(radius, h - radius))


def splice(host, donor):
    h, w = host.shape[:2]; long_side = max(h, w)
    scale = long_side / max(donor.shape[:2]) * rng.uniform(0.7, 1.3)
    donor = cv2.resize(donor, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    radius = int(long_side * rng.uniform(0.04, 0.12))
    radius = min(radius, min(h, w, *donor.shape[:2]) // 2 - 2)
    outline = polygon(radius)
    dx, dy = centre(radius, donor.shape[1], donor.shape[0]); tx, ty = centre(radius, w, h)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillPoly(mask, [np.round(outline + (tx, ty)).astype(np.int32)], 255)
    M = np.float32([[1, 0, tx - dx], [0, 1, ty - dy]])
    shifted = cv2.warpAffine(donor, M, (w, h), flags=cv2.INTER_NEAREST)
    alpha = feathered(mask)
    return (host * (1 - alpha) + shifted * alpha).round().astype(np.uint8), mask


def copy_move(host, rotate):
    h, w = host.shape[:2]; r = int(max(h, w) * rng.uniform(0.03, 0.09))
    for _ in range(100):
        (sx, sy), (tx, ty) = centre(r, w, h), centre(r, w, h)
        if np.hypot(tx - sx, ty - sy) > 2.5 * r: break
    source = np.zeros((h, w), np.uint8)
    cv2.ellipse(source, (sx, sy), (r, int(r * rng.uniform(0.6, 1.0))), float(rng.uniform(0, 180)), 0, 360, 255, -1)
    angle = float(rng.uniform(5, 40) * rng.choice([-1, 1])) if rotate else 0.0
    M = cv2.getRotationMatrix2D((float(sx), float(sy)), angle, 1.0); M[0, 2] += tx - sx; M[1, 2] += ty - sy
    moved = cv2.warpAffine(host, M, (w, h), flags=cv2.INTER_LINEAR)
    mask = cv2.warpAffine(source, M, (w, h), flags=cv2.INTER_NEAREST)
    alpha = feathered(mask)
    return (host * (1 - alpha) + moved * alpha).round().astype(np.uint8), mask


def removal(host):
    h, w = host.shape[:2]; r = int(max(h, w) * rng.uniform(0.02, 0.06))
    mask = np.zeros((h, w), np.uint8)
    cv2.ellipse(mask, centre(r, w, h), (r, int(r * rng.uniform(0.5, 1.0))), float(rng.uniform(0, 180)), 0, 360, 255, -1)
    method = cv2.INPAINT_TELEA if rng.random() < 0.5 else cv2.INPAINT_NS
    return cv2.inpaint(host, mask, 5, method), mask


rows = ['file,label']
for i, path in enumerate(src):
    host = cv2.imread(path, READ)
    shutil.copyfile(path, os.path.join(out, 'u%02d.jpg' % i)); rows.append('u%02d.jpg,0' % i)
    cv2.imwrite(os.path.join(out, 'r%02d.jpg' % i), host, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(85, 96))]); rows.append('r%02d.jpg,0' % i)
    kind = i % 3
    if kind == 0:
        donor = cv2.imread(src[(i + 1 + int(rng.integers(0, len(src) - 1))) % len(src)], READ)
        forged, mask = splice(host, donor)
    elif kind == 1:
        forged, mask = copy_move(host, rotate=(i // 3) % 2 == 1)
    else:
        forged, mask = removal(host)
    cv2.imwrite(os.path.join(out, 'f%02d.jpg' % i), forged, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(85, 96))]); rows.append('f%02d.jpg,1' % i)
    cv2.imwrite(os.path.join(out, 'masks', 'f%02d_gt.png' % i), mask)
open(os.path.join(out, 'labels.csv'), 'w').write('\n'.join(rows) + '\n')
print(f'{len(src)} photos -> {3 * len(src)} files in {out}')
