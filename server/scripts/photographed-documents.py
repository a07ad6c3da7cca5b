#!/usr/bin/env python3
"""Photographs of documents, simulated: each PDF's first page rendered at 200 dpi
(pdftoppm, Debian's poppler-utils), laid on a darker desk and seen at an angle (a random
perspective of up to 60 px per corner), under uneven light (a smooth gain of 0.5-1.0), with
sensor noise (sigma 4), a slight blur, scaled by 0.6 and saved as JPEG at quality 88 (OpenCV).
Writes labels.csv with every photo untouched (label 0), for
`npm run eval -- --task document-intelligence --data <out>`.

    python3 server/scripts/photographed-documents.py <folder of PDFs> <out> [--seed 8]
"""
import argparse
import glob
import os
import random
import subprocess
import tempfile

import cv2
import numpy as np


def photograph(page, rng):
    h, w = page.shape[:2]
    desk = np.full((int(h * 1.25), int(w * 1.25), 3), (60, 70, 80), np.uint8)
    ox, oy = w * 0.12, h * 0.12
    corners = [[ox, oy], [ox + w, oy], [ox + w, oy + h], [ox, oy + h]]
    target = np.float32([[x + rng.uniform(-60, 60), y + rng.uniform(-60, 60)] for x, y in corners])
    warp = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), target)
    seen = cv2.warpPerspective(page, warp, (desk.shape[1], desk.shape[0]), dst=desk.copy(), borderMode=cv2.BORDER_TRANSPARENT)
    yy, xx = np.mgrid[0:seen.shape[0], 0:seen.shape[1]]
    light = 0.75 + 0.25 * np.cos((xx / seen.shape[1] - rng.random()) * 2) * np.cos((yy / seen.shape[0] - rng.random()) * 1.5)
    noisy = seen * light[..., None] + np.random.default_rng(rng.randrange(2**32)).normal(0, 4, seen.shape)
    photo = cv2.GaussianBlur(np.clip(noisy, 0, 255).astype(np.uint8), (3, 3), 0.8)
    return cv2.resize(photo, (int(photo.shape[1] * 0.6), int(photo.shape[0] * 0.6)), interpolation=cv2.INTER_AREA)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('pdfs')
    parser.add_argument('out')
    parser.add_argument('--seed', type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    labels = ['file,label']
    with tempfile.TemporaryDirectory() as scratch:
        for pdf in sorted(glob.glob(os.path.join(args.pdfs, '*.pdf'))):
            name = os.path.splitext(os.path.basename(pdf))[0]
            subprocess.run(['pdftoppm', '-r', '200', '-png', '-f', '1', '-l', '1', '-singlefile', pdf, os.path.join(scratch, name)], check=True)
            page = cv2.imread(os.path.join(scratch, name + '.png'))
            cv2.imwrite(os.path.join(args.out, name + '.jpg'), photograph(page, rng), [cv2.IMWRITE_JPEG_QUALITY, 88])
            labels.append(f'{name}.jpg,0')
    with open(os.path.join(args.out, 'labels.csv'), 'w') as f:
        f.write('\n'.join(labels) + '\n')
    print(f'wrote {len(labels) - 1} photographed documents to {args.out}')


if __name__ == '__main__':
    main()
