"""Real webcam print attacks for face-liveness-context 3.0.0: the NUAA Photograph Imposter
Database (Tan et al., "Face Liveness Detection from a Single Image with Sparse Low Rank Bilinear
Discriminative Model", ECCV 2010) as held in imironica/liveness @ 415a750 (db/, research terms).

NUAA's own protocol trains on sessions 1-2 of subjects 1-9 and tests on session 3, whose subjects
partly overlap. The roles here keep people apart as well as sessions:
  fit      train list, subjects 1 2 3 5 6 8 9: fine-tuning crops (every frame)
  select   train list, subjects 4 and 7: thresholds and the checkpoint, never trained on
  test     test list (session 3), evenly spaced frames: 33 per live and 22 per attacked person,
           as the README's NUAA set since stop 37; its people 10-16 are unseen in every role above
           and are the figure that counts (test-unseen)

Run:
  /usr/bin/python3 training/liveness-context/nuaa.py extract <imironica/liveness git dir>
      -> /work/data/nuaa/frames/..., index.json, and eval folders select/, test/, test-unseen/
         (live-*.jpg, realprint-*.jpg, labels.csv: 1 = attack) for npm run eval and choose-fusion.ts
  cd server && node --import tsx ../training/liveness-context/detect-scenes.ts /work/data/nuaa/frames > /work/data/nuaa/faces.jsonl
  /usr/bin/python3 training/liveness-context/nuaa.py crops
      -> /work/data/nuaa/fit.npz: CROPS_PER_FRAME crops of each fit frame (box jitter and resampling
         as prepare.py's live crops; no simulated camera: these frames come from a real one), and
         select.npz: one such crop of each select frame (train.py's SELECT, for the checkpoint)
  /usr/bin/python3 training/liveness-context/nuaa.py patch-crops
      -> fit-patch.npz, select-patch.npz for face-liveness-pad (training/liveness/train.py): the
         256 x 256 luma square around each face at native resolution, as that model's shards hold
         them, with `box` = the face side / 0.97 (its patch offset rule); faces under the 160 px
         the service scores are left out
"""
import importlib.util, json, os, shutil, subprocess, sys
import cv2, numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get('NUAA_OUT', '/work/data/nuaa')
FIT, SELECT = {1, 2, 3, 5, 6, 8, 9}, {4, 7}
TEST_PER_PERSON = {0: 33, 1: 22}  # live, print (stop 37's evaluation set)
CROPS_PER_FRAME = int(os.environ.get('CROPS_PER_FRAME', '4'))
LISTS = {('train', 0): 'client_train_raw', ('train', 1): 'imposter_train_raw', ('test', 0): 'client_test_raw', ('test', 1): 'imposter_test_raw'}
FOLDER = {0: 'ClientRaw', 1: 'ImposterRaw'}


def git(gitdir, *args, text=True):
    return subprocess.run(['git', '--git-dir', gitdir, *args], capture_output=True, check=True, text=text).stdout


def evenly(items, k):
    if len(items) <= k: return items
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def extract(gitdir):
    present = set(git(gitdir, 'ls-tree', '-r', '--name-only', 'HEAD', 'db').split('\n'))
    index = []
    for (split, label), name in LISTS.items():
        listed = [l.strip().replace('\\', '/') for l in git(gitdir, 'show', f'HEAD:db/{name}.txt').split('\n') if l.strip()]
        rows = [p for p in listed if f'db/{FOLDER[label]}/{p}' in present]  # the repository holds part of the lists
        by_person = {}
        for p in rows: by_person.setdefault(int(p.split('/')[0]), []).append(p)
        for person, paths in sorted(by_person.items()):
            if split == 'train':
                role = 'fit' if person in FIT else 'select' if person in SELECT else None
                chosen = paths
            else:
                role = 'test'
                chosen = evenly(sorted(paths, key=lambda p: (p.split('_')[3], int(p.split('_')[4].split('.')[0]))), TEST_PER_PERSON[label])
            for p in chosen:
                index.append({'path': f'{FOLDER[label]}/{p}', 'person': person, 'session': int(p.split('_')[3]), 'label': label, 'role': role,
                              'unseen': role == 'test' and person not in FIT | SELECT})
    for r in index:
        dest = os.path.join(OUT, 'frames', r['path'])
        if not os.path.exists(dest):
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            open(dest, 'wb').write(git(gitdir, 'show', f'HEAD:db/{r["path"]}', text=False))
    json.dump({'source': 'imironica/liveness', 'commit': git(gitdir, 'rev-parse', 'HEAD').strip(), 'frames': index}, open(os.path.join(OUT, 'index.json'), 'w'), indent=0)
    folders = {'select': lambda r: r['role'] == 'select', 'test': lambda r: r['role'] == 'test', 'test-unseen': lambda r: r['unseen']}
    for folder, keep in folders.items():
        d = os.path.join(OUT, folder)
        shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
        lines = ['file,label']
        for r in filter(keep, index):
            # choose-fusion.ts reads the species from the prefix: real prints are their own species
            name = f'{"realprint" if r["label"] else "live"}-{os.path.basename(r["path"])}'
            os.link(os.path.join(OUT, 'frames', r['path']), os.path.join(d, name))
            lines.append(f'{name},{r["label"]}')
        open(os.path.join(d, 'labels.csv'), 'w').write('\n'.join(lines) + '\n')
    for role in ('fit', 'select', 'test'):
        of = [r for r in index if r['role'] == role]
        print(role, 'live', sum(r['label'] == 0 for r in of), 'print', sum(r['label'] == 1 for r in of),
              'people', sorted({(r['person'], r['label']) for r in of}))
    print('test-unseen live', sum(r['unseen'] and r['label'] == 0 for r in index), 'print', sum(r['unseen'] and r['label'] == 1 for r in index))


def crops():
    spec = importlib.util.spec_from_file_location('ctx_prepare', os.path.join(HERE, 'prepare.py'))
    prep = importlib.util.module_from_spec(spec); spec.loader.exec_module(prep)
    index = {r['path']: r for r in json.load(open(os.path.join(OUT, 'index.json')))['frames']}
    rng = np.random.default_rng(37)
    faces = [json.loads(line) for line in open(os.path.join(OUT, 'faces.jsonl'))]
    for role, per_frame in (('fit', CROPS_PER_FRAME), ('select', 1)):
        xs, ys, people, missing = [], [], [], 0
        for f in faces:
            r = index.get(f['file'])
            if r is None or r['role'] != role: continue
            if not f['faces']: missing += 1; continue
            img = cv2.imread(os.path.join(OUT, 'frames', f['file']), cv2.IMREAD_COLOR)
            box = tuple(f['faces'][0][:4])
            for _ in range(per_frame):
                xs.append(prep.to_input(prep.context_crop(img, prep.jitter_box(box, rng)), rng)); ys.append(r['label']); people.append(r['person'])
        y = np.array(ys, np.uint8)
        np.savez(os.path.join(OUT, f'{role}.npz'), x=np.stack(xs), y=y, person=np.array(people, np.uint8))
        print(f'{role}.npz: {len(y)} crops ({int(y.sum())} attacks), {missing} frames without a face')


def training_record(npz, share):
    """What a fine-tuned model's descriptor says of its real captures (both liveness exporters)."""
    data = np.load(npz)
    if 'source' in data:  # stop 44: NUAA's crops and live faces of real video clips (training/liveness/video-faces.py)
        video = data['source'] == 1
        return {'nuaa': {**training_record_nuaa(), 'crops': int((~video).sum())},
                'liveFacesFromVideo': {'source': 'real talking-face clips of face-forgery-sbi manifest videoFaces; roles in training/liveness/video-faces.py',
                                       'crops': int(video.sum())}, 'shareOfEveryBatch': share}
    return {**training_record_nuaa(), 'crops': int(len(data['y'])), 'shareOfEveryBatch': share}


def training_record_nuaa():
    people = lambda ids: ' '.join(str(i) for i in sorted(ids))
    return {'source': 'NUAA Photograph Imposter Database (Tan et al., ECCV 2010) in imironica/liveness@415a750 db/, research terms',
            'used': f'training list (sessions 1-2), subjects {people(FIT)} (nuaa.py fit); subjects {people(SELECT)} chose the checkpoint (select); the test list (session 3) was never trained on'}


PATCH_CROP, PATCH_MIN_FACE, PATCH_MAX_FACE = 256, 160, 512  # face-liveness-pad's stored crop; the smallest face the service
# scores; the largest it scores unscaled


def patch_crops():
    index = {r['path']: r for r in json.load(open(os.path.join(OUT, 'index.json')))['frames']}
    faces = [json.loads(line) for line in open(os.path.join(OUT, 'faces.jsonl'))]
    for role in ('fit', 'select'):
        xs, ys, box, small = [], [], [], 0
        for f in faces:
            r = index.get(f['file'])
            if r is None or r['role'] != role or not f['faces']: continue
            x, y, w, h = f['faces'][0][:4]
            side = max(w, h)
            if side < PATCH_MIN_FACE: small += 1; continue
            img = cv2.imread(os.path.join(OUT, 'frames', f['file']), cv2.IMREAD_COLOR).astype(np.float32)
            if side > PATCH_MAX_FACE:  # the service downscales such faces to 512 px before scoring them
                k = PATCH_MAX_FACE / side
                img = cv2.resize(img, (round(img.shape[1] * k), round(img.shape[0] * k)), interpolation=cv2.INTER_AREA)
                x, y, w, h, side = x * k, y * k, w * k, h * k, PATCH_MAX_FACE
            luma = np.clip(np.round(0.299 * img[..., 2] + 0.587 * img[..., 1] + 0.114 * img[..., 0]), 0, 255).astype(np.uint8)
            pad = PATCH_CROP
            luma = cv2.copyMakeBorder(luma, pad, pad, pad, pad, cv2.BORDER_REFLECT)
            top, left = int(round(y + h / 2)) + pad - PATCH_CROP // 2, int(round(x + w / 2)) + pad - PATCH_CROP // 2
            xs.append(luma[top:top + PATCH_CROP, left:left + PATCH_CROP]); ys.append(r['label']); box.append(round(side / 0.97))
        y = np.array(ys, np.uint8)
        np.savez(os.path.join(OUT, f'{role}-patch.npz'), x=np.stack(xs), y=y, box=np.array(box, np.uint16))
        print(f'{role}-patch.npz: {len(y)} crops ({int(y.sum())} attacks), {small} faces under {PATCH_MIN_FACE} px left out')


if __name__ == '__main__':
    {'extract': lambda: extract(sys.argv[2]), 'crops': crops, 'patch-crops': patch_crops}[sys.argv[1]]()
