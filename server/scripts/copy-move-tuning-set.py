"""The set the copy-move rules were chosen on (scripts/choose-copy-move-rules.ts).

    /usr/bin/python3 scripts/copy-move-tuning-set.py [photos folder] [output folder] [seed] [first JPEG quality range, e.g. 70-90] [png]

The 30 photos of shared/data/ai-image/photos scaled to 768 px (untouched, label 0), and from
each a copy-move: an elliptic region (radius 24-70 px) copied at least 2.5 radii + 60 px away,
as it is (even files) or rotated by 5-40 degrees (odd files), edge feathered by 1 px, saved as
JPEG 85-95 (label 1; the mask marks the pasted copy, as CASIA's do). Needs python3-opencv.
Evaluation sets (CASIA, NoSo, ML72) are kept out. The defaults (seed 31, untouched photos saved at
quality 92 and copied before that compression) rebuild the set the region rules were chosen on.
With a quality range, each photo is first saved at a quality drawn from it and the copy is made
in that JPEG (seeds 41-43 chose the recompression threshold); with `png` as well, the forgeries
are saved losslessly (seeds 51-53 chose the grid-alignment thresholds). The pasted-side cues are
in src/detectors/image/forgery/copy-move.ts.
"""
import cv2, numpy as np, os, glob, sys
rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 31)
src = sorted(glob.glob(os.path.join(sys.argv[1] if len(sys.argv) > 1 else '../shared/data/ai-image/photos', '*.jpg')))
out = sys.argv[2] if len(sys.argv) > 2 else '/tmp/copy-move-tuning'
os.makedirs(os.path.join(out, 'masks'), exist_ok=True)
quality = sys.argv[4].split('-') if len(sys.argv) > 4 else None
lossless = len(sys.argv) > 5 and sys.argv[5] == 'png'
rows = ['file,label']
for i, f in enumerate(src):
    im = cv2.imread(f); h, w = im.shape[:2]; s = 768 / max(h, w)
    im = cv2.resize(im, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA); h, w = im.shape[:2]
    first = int(rng.integers(int(quality[0]), int(quality[1]) + 1)) if quality else 92
    name = 'u%02d.jpg' % i; cv2.imwrite(os.path.join(out, name), im, [cv2.IMWRITE_JPEG_QUALITY, first]); rows.append(name + ',0')
    if quality: im = cv2.imread(os.path.join(out, name))  # the copy is made in the compressed photo, as an editor would open it
    r = int(rng.integers(24, 70))
    for attempt in range(100):
        sx, sy = rng.integers(r, w - r), rng.integers(r, h - r)
        tx, ty = rng.integers(r, w - r), rng.integers(r, h - r)
        if np.hypot(tx - sx, ty - sy) > 2.5 * r + 60: break
    mask = np.zeros((h, w), np.uint8)
    axes = (r, int(r * rng.uniform(0.6, 1.0)))
    cv2.ellipse(mask, (int(sx), int(sy)), axes, float(rng.uniform(0, 180)), 0, 360, 255, -1)
    angle = float(rng.uniform(5, 40) * rng.choice([-1, 1])) if i % 2 else 0.0
    M = cv2.getRotationMatrix2D((float(sx), float(sy)), angle, 1.0); M[0, 2] += tx - sx; M[1, 2] += ty - sy
    moved = cv2.warpAffine(im, M, (w, h), flags=cv2.INTER_LINEAR)
    mmask = cv2.warpAffine(mask, M, (w, h), flags=cv2.INTER_NEAREST)
    soft = cv2.GaussianBlur(mmask.astype(np.float32) / 255, (0, 0), 1.0)[..., None]
    forged = (im * (1 - soft) + moved * soft).astype(np.uint8)
    final_quality = int(rng.integers(85, 96))
    name = 'f%02d.%s' % (i, 'png' if lossless else 'jpg')  # png: the forgery saved losslessly, as CASIA's TIFFs
    cv2.imwrite(os.path.join(out, name), forged, [] if lossless else [cv2.IMWRITE_JPEG_QUALITY, final_quality]); rows.append(name + ',1')
    cv2.imwrite(os.path.join(out, 'masks', 'f%02d_gt.png' % i), mmask)
open(os.path.join(out, 'labels.csv'), 'w').write('\n'.join(rows) + '\n')
print(len(rows) - 1)
