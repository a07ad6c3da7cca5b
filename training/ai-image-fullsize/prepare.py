"""Builds the full-size AI-image dataset from the extracted repositories (manifest.json) into
/work/data/ai-fullsize:
  index.json        every selected image: path, label (1 = AI), group (generator family or camera),
                    split (train / val), fold (0-4, for the feature probe's leave-one-out)
  aug.npz           augmented training patches for EVERY image (train and val), 4 patches of 96 px
                    per augmented region, same processing for both classes (common.augment_region)
  valgrid_<c>.npz   fixed-grid patches of each validation image under condition c (common.CONDITIONS)

Usage: /usr/bin/python3 prepare.py [--variants-real 24 --variants-ai 6]
"""
import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
from common import P, CONDITIONS, augment_region, condition, grid_patches, random_patches, to_rgb  # noqa: E402

Image.MAX_IMAGE_PIXELS = 200_000_000
ROOT = '/work/data/ai-fullsize'
SRC = ROOT + '/src'

# ComfyUI_examples folder -> generator family (families merged where models share an architecture
# lineage, so that leaving one out leaves its relatives out too).
COMFY_FAMILY = {
    '2_pass_txt2img': 'sd1x', 'area_composition': 'sd1x', 'controlnet': 'sd1x', 'hypernetworks': 'sd1x',
    'inpaint': 'sd1x', 'noisy_latent_composition': 'sd1x', 'unclip': 'sd1x', 'lcm': 'sd1x',
    'sdxl': 'sdxl', 'sdturbo': 'sdxl', 'edit_models': 'sdxl',
    'flux': 'flux', 'flux2': 'flux', 'chroma': 'flux',
    'sd3': 'sd3',
    'hidream': 'dit-other', 'qwen_image': 'dit-other', 'stable_cascade': 'dit-other', 'aura_flow': 'dit-other',
    'lumina2': 'dit-other', 'hunyuan_dit': 'dit-other', 'cosmos_predict2': 'dit-other', 'omnigen': 'dit-other',
    'z_image': 'dit-other',
}
IMAGEN_FAMILY = {'dal2': 'dall-e-2', 'midj': 'midjourney', 'simu': 'simulacra', 'stab': 'sd1x', 'disco': 'disco-diffusion',
                 'dmin': 'dalle-mini', 'glid3': 'glid-3', 'ldif': 'latent-diffusion', 'mdif': 'latent-diffusion'}
IMAGEN_CAP = 100          # per imagen generator prefix (seeded sample)
CAMERA_CAP = 6            # per camera make/model
VAL_GENERATORS = {'sd3', 'dall-e-2', 'glid-3', 'dit-other'}
REAL_EXCLUDE = re.compile(r'(FLIR|corrupted|PaintTool|Photoshop \(1\)|Issue 600)', re.I)


def comfy_ok(rel, im):
    """Generator outputs only: ComfyUI writes the prompt into the PNG; workflow screenshots are
    wider than 2048 px or named *workflow*; inputs (scribbles, poses, depth maps, photos to
    inpaint) carry no prompt."""
    w, h = im.size
    return (im.format == 'PNG' and 'prompt' in im.info and 'workflow' not in rel and max(w, h) <= 2048
            and max(w, h) / min(w, h) <= 2.0)


def select():
    rng = random.Random(1)
    items = []
    survey = [l.rstrip('\n').split('\t') for l in open(ROOT + '/survey.tsv')]
    by = {r[0]: r for r in survey}
    # AI: ComfyUI_examples
    for rel, r in sorted(by.items()):
        if not rel.startswith('comfyanonymous+ComfyUI_examples/'):
            continue
        folder = rel.split('/')[1]
        if folder not in COMFY_FAMILY:
            continue
        im = Image.open(os.path.join(SRC, rel))
        if comfy_ok(rel, im):
            items.append(dict(path=rel, label=1, group=COMFY_FAMILY[folder], source='comfy:' + folder))
    # AI: dcsan/imagen renders
    imagen = defaultdict(list)
    for rel in sorted(by):
        if rel.startswith('dcsan+imagen/output/renders/'):
            pref = re.split(r'[-_.]', os.path.basename(rel))[0]
            if pref in IMAGEN_FAMILY:
                imagen[pref].append(rel)
    for pref, rels in sorted(imagen.items()):
        rng.shuffle(rels)
        for rel in sorted(rels[:IMAGEN_CAP]):
            items.append(dict(path=rel, label=1, group=IMAGEN_FAMILY[pref], source='imagen:' + pref))
    # Real: camera photos with a short side of at least 600 px
    cams = defaultdict(list)
    for rel, r in sorted(by.items()):
        if rel.split('/')[0] in ('comfyanonymous+ComfyUI_examples', 'dcsan+imagen', 'ML72+AI-Image-Classifier-Playground'):
            continue
        if r[1] != 'JPEG' or min(int(r[3]), int(r[4])) < 600 or REAL_EXCLUDE.search(rel):
            continue
        make, model = r[6].strip(), r[7].strip()
        cam = (make + '|' + model).lower() if (make or model) else 'noexif:' + rel
        cams[cam].append(rel)
    for cam, rels in sorted(cams.items()):
        rng.shuffle(rels)
        for rel in sorted(rels[:CAMERA_CAP]):
            items.append(dict(path=rel, label=0, group='cam:' + cam, source=rel.split('/')[0]))
    # splits: generators by VAL_GENERATORS; cameras: a seeded 25 % of camera groups
    camgroups = sorted({it['group'] for it in items if it['label'] == 0})
    rng2 = random.Random(7)
    rng2.shuffle(camgroups)
    valcams = set(camgroups[: len(camgroups) // 4])
    cam_fold = {g: i % 5 for i, g in enumerate(camgroups)}
    gens = sorted({it['group'] for it in items if it['label'] == 1})
    for it in items:
        if it['label'] == 1:
            it['split'] = 'val' if it['group'] in VAL_GENERATORS else 'train'
            it['fold'] = gens.index(it['group'])
        else:
            it['split'] = 'val' if it['group'] in valcams else 'train'
            it['fold'] = cam_fold[it['group']]
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--variants-real', type=int, default=24)
    ap.add_argument('--variants-ai', type=int, default=6)
    ap.add_argument('--per-region', type=int, default=4)
    args = ap.parse_args()
    items = select()
    json.dump(items, open(ROOT + '/index.json', 'w'), indent=0)
    c = Counter((it['label'], it['split']) for it in items)
    print('images', len(items), dict(c), flush=True)
    print('generators', Counter(it['group'] for it in items if it['label'] == 1))
    rng = random.Random(11)
    patches, img_idx, infos = [], [], []
    grids = {k: ([], []) for k in CONDITIONS}
    t0 = time.time()
    for i, it in enumerate(items):
        try:
            im = to_rgb(Image.open(os.path.join(SRC, it['path'])))
        except Exception as e:  # truncated or undecodable file: left out
            it['skip'] = str(e)
            print('skip', it['path'], e, flush=True)
            continue
        it['size'] = im.size
        v = args.variants_real if it['label'] == 0 else args.variants_ai
        for _ in range(v):
            arr, info = augment_region(im, rng)
            for p in random_patches(arr, rng, args.per_region):
                patches.append(p); img_idx.append(i); infos.append((info['scale'], info['q']))
        if it['split'] == 'val':
            for cond in CONDITIONS:
                g = grid_patches(np.asarray(condition(im, cond)))
                grids[cond][0].append(g); grids[cond][1].extend([i] * len(g))
        if i % 50 == 0:
            print(i, len(patches), f'{time.time() - t0:.0f}s', flush=True)
    np.savez(ROOT + '/aug.npz', x=np.stack(patches), img=np.array(img_idx, np.int32), info=np.array(infos, np.float32))
    for cond, (gs, idx) in grids.items():
        np.savez(ROOT + f'/valgrid_{cond}.npz', x=np.concatenate(gs), img=np.array(idx, np.int32))
    json.dump(items, open(ROOT + '/index.json', 'w'), indent=0)
    print('done', len(patches), f'{time.time() - t0:.0f}s')


if __name__ == '__main__':
    main()
