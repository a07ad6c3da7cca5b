"""Writes manifest.json (sources, commits, paths, licences, counts per generator / camera and
split) from /work/data/ai-fullsize/index.json, which prepare.py wrote."""
import json
import os
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
items = json.load(open('/work/data/ai-fullsize/index.json'))
SOURCES = {
    'comfyanonymous+ComfyUI_examples': dict(
        repo='comfyanonymous/ComfyUI_examples', commit='f9431bb000ce792094ff345446e22cac1ea6cef3',
        paths='<model folder>/*.png: generator outputs only (PNG with an embedded ComfyUI prompt, long side <= 2048, aspect <= 2; workflow screenshots, control inputs, photos to inpaint and animated WebP videos left out)',
        licence='LICENSE: "Permission to use, copy, modify, and/or distribute these workflows for any purpose with or without fee is hereby granted" (0BSD-style; covers the workflow PNGs)',
        use='AI, training (sd1x, sdxl, flux incl. flux2/chroma) and validation (sd3, dit-other: hidream, qwen_image, stable_cascade, aura_flow, lumina2, hunyuan_dit, cosmos_predict2, omnigen, z_image)'),
    'dcsan+imagen': dict(
        repo='dcsan/imagen', commit='c6f37ebed13ee57a51055235c70621c6ae80521f',
        paths='output/renders/*/<prefix>-*.{png,jpg}, generator from the file prefix; at most 100 per prefix (seeded sample)',
        licence='no licence file in the repository: data not redistributed; used to train a model (ai-image v2 used it only to measure). Flag for the integrator.',
        use='AI, training (midjourney, simulacra, sd1x=stab, disco-diffusion, dalle-mini, latent-diffusion=ldif+mdif) and validation (dall-e-2, glid-3)'),
    'drewnoakes+metadata-extractor-images': dict(
        repo='drewnoakes/metadata-extractor-images', commit='4beba640487802442bc9931fb01274e908102d3a',
        paths='jpg/**/*.jpg with a short side >= 600 px (FLIR thermal, Photoshop test, Issue 600 left out; truncated files skipped); the digicam_corpus submodule is not in the snapshot',
        licence='README: "You are free to use these media files however you wish."', use='real, by camera make/model'),
    'ianare+exif-samples': dict(
        repo='ianare/exif-samples', commit='5332a9cf0220e9c6c93f88a187daa90808051e10',
        paths='jpg/**/*.jpg with a short side >= 600 px (corrupted.jpg, PaintTool_sample left out)',
        licence='no LICENSE file; README.rst: user-contributed images released under CC BY-SA 4.0', use='real, by camera make/model'),
    'immich-app+test-assets': dict(
        repo='immich-app/test-assets', commit='ec56cc6c1d76c45bc9615dc6ea232470a2b0a3a1',
        paths='**/*.jpg with a short side >= 600 px (files >= 4 MiB absent from the snapshot)',
        licence='LICENSE: AGPL-3.0 (repository); data not redistributed', use='real'),
    'openMVG+ImageDataset_SceauxCastle': dict(
        repo='openMVG/ImageDataset_SceauxCastle', commit='fde7f5faba555e3c54700477c304488613346a19',
        paths='images/*.JPG (Kodak Z612, 2832x2128), at most 6', licence='Readme.txt: Copyright 2012 Pierre Moulon, distributed as openMVG sample data; data not redistributed',
        use='real'),
    'alicevision+dataset_monstree': dict(
        repo='alicevision/dataset_monstree', commit='c697b936be47d6b78ce58d7eb4188e6908503ee2',
        paths='full/*.JPG (iPhone 7, 4032x3024; files >= 4 MiB absent from the snapshot), at most 6',
        licence='no licence stated (README: "Images dataset for 3D reconstruction"); data not redistributed', use='real'),
}
by_src = defaultdict(list)
for it in items:
    by_src[it['path'].split('/')[0]].append(it)
out = {'sources': [], 'evaluationOnly': [
    dict(repo='ML72/AI-Image-Classifier-Playground', commit='c256422974a925d4ddb49d438cd5c5679cef829c', paths='public/images/{ai,real}',
         licence='MIT', files={'ai': 50, 'real': 50}, use='evaluation only, scored once at the end; never trained, tuned or thresholded on'),
    dict(path='../shared/data/ai-image/photos', files={'ai': 15, 'real': 15}, use='evaluation only (development half of a reserved source), scored once at the end')],
    'reservedNotUsed': ['declan-wright/Image-Dataset (beyond shared/data)', '2spi/ai-v-real', 'd3x-at/sd-parsers', 'Authenta SDK data_samples']}
for src, its in sorted(by_src.items()):
    meta = dict(SOURCES[src])
    used = [i for i in its if 'skip' not in i]
    meta['files'] = len(used)
    meta['skippedUnreadable'] = [i['path'] for i in its if 'skip' in i]
    meta['bySplit'] = dict(Counter(i['split'] for i in used))
    meta['byGroup'] = {g: dict(Counter(i['split'] for i in used if i['group'] == g)) for g in sorted({i['group'] for i in used})}
    out['sources'].append(meta)
used = [i for i in items if 'skip' not in i]
out['totals'] = {
    'ai': dict(Counter(i['split'] for i in used if i['label'] == 1)),
    'real': dict(Counter(i['split'] for i in used if i['label'] == 0)),
    'aiByGenerator': {g: dict(Counter(i['split'] for i in used if i['group'] == g)) for g in sorted({i['group'] for i in used if i['label'] == 1})},
    'realCameraGroups': dict(Counter(i['split'] for i in {i['group']: i for i in used if i['label'] == 0}.values())),
}
json.dump(out, open(os.path.join(HERE, 'manifest.json'), 'w'), indent=1)
print(json.dumps(out['totals'], indent=1))
