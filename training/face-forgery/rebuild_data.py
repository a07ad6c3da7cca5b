"""Rebuild the face-forgery training data from repository snapshots, at the commits manifest.json records.

Data preparation only; it never writes into the repository. Needs the snapshots brought by the
tool library's `fetch` (one git directory per repository under MIRRORS, named owner+name).

  clips:  every real talking-face clip of manifest.json videoFaces (sources and v7Sources) as
          <OUT>/src/<id>.mp4 and <OUT>/clips.json, the list video-crops.ts reads (40 frames a clip);
  lfw:    (v12 attempt) the colour LFW photos of umass-vis-lfw/umass-vis-lfw.github.io
          images_deepfunneled/<Name>/<Name>_NNNN.jpg as <OUT>/lfw/<Name>_NNNN.png, enlarged 250 -> 350 px
          (bicubic, as the greyscale copy of earlier versions was) so that train.py's and
          lfw-landmarks.ts's 350 px geometry holds; black-and-white photos (R = G = B) are left out,
          because their self-blends would be the only coloured faces of those photos (v1's colour cue);
  v16:    the 24 clips of v16-clips.json (surveyed in stop 55, trained on since v16.0.0) as <OUT>/src/<id>.<ext> and
          <OUT>/clips-v16.json; its dropCrops go into the listing as "drop", which video-crops.ts leaves out;
  candidates: the surveyed clips of candidate-clips.json (stop 56's survey) as <OUT>/src/<id>.<ext> and
          <OUT>/clips-candidates.json; no shipped version is trained on them yet (the v17 attempt was, and did not ship);
  candidates57: the 14 clips of candidate-clips-stop57.json (stop 57's survey, 14 more people; nothing trained on them)
          as <OUT>/src/<id>.<ext> and <OUT>/clips-candidates57.json;
  candidates58: the 8 clips of candidate-clips-stop58.json (stop 58's survey, 8 more people; nothing trained on them)
          as <OUT>/src/<id>.<ext> and <OUT>/clips-candidates58.json;
  candidates59: the 10 clips of candidate-clips-stop59.json (stop 59's survey, 10 more people; nothing trained on them)
          as <OUT>/src/<id>.<ext> and <OUT>/clips-candidates59.json;
  candidates63: the 3 clips of candidate-clips-stop63.json (stop 63's survey, 3 more people, meant to be held out
          for a larger gate set; nothing trained on them) as <OUT>/src/<id>.<ext> and <OUT>/clips-candidates63.json;
  eval:   the evaluation-only clips (manifest.json evaluationOnly: 7 FaceForensics++, 4 DFDC) as
          <OUT>/eval/{ffpp,dfdc}/<name>.mp4 with labels.csv (1 = manipulated); never trained or tuned on.
  eval66: the 94 evaluation-only clips of evaluation-clips-stop66.json (stop 66's survey: FF++ c40, DFD originals, DFDC,
          DeeperForensics, Celeb-DF montages) by blob id as <OUT>/eval66/<file> with labels.csv; never trained or tuned on.
  val74:  the 53 validation clips of validation-clips-stop74.json (stop 74's survey: 31 real swaps and reenactments, 22 real
          clips, none from an evaluation or training repository) by blob id as <OUT>/val74/<file> with labels.csv; for
          choosing a checkpoint or threshold of the next version, never trained on.
  val77:  the 62 validation clips of validation-clips-stop77.json (stop 77's survey: 27 lip-syncs, swaps and reenactments,
          35 real clips, from 24 repositories in no other list) by blob id as <OUT>/val77/<file> with labels.csv; used
          like val74.

Run: MIRRORS=/work/.mirror OUT=/work/data/fv16 /usr/bin/python3 training/face-forgery/rebuild_data.py [clips] [v16] [candidates] [candidates57] [candidates58] [candidates59] [candidates63] [lfw] [eval] [eval66] [val74] [val77]
"""
import io, json, os, re, subprocess, sys
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
MIRRORS = os.environ.get('MIRRORS', '/work/.mirror')
OUT = os.environ.get('OUT', '/work/data/fv12')
LFW_REPO, LFW_COMMIT = 'umass-vis-lfw/umass-vis-lfw.github.io', '2a620cd8cceb10430f8c7012fe9fa5f0837759e9'
# Clip ids of the first sources (v5), which manifest.json names by folder rule rather than listing.
V5_PREFIX = {'KwaiVGI/LivePortrait': 'liveportrait', 'OpenTalker/video-retalking': 'retalking', 'OpenTalker/SadTalker': 'sadtalker',
             'yoyo-nb/Thin-Plate-Spline-Motion-Model': 'tpsmm', 'ageitgey/face_recognition': 'facerec'}


def git_dir(repo):
    d = os.path.join(MIRRORS, repo.replace('/', '+'), 'repo')
    return os.path.join(d, '.git') if os.path.isdir(os.path.join(d, '.git')) else d


def blob(repo, commits, path):
    """The file's bytes at the first commit that holds it as a real blob (not a Git LFS pointer)."""
    for c in commits:
        p = subprocess.run(['git', '--git-dir', git_dir(repo), 'show', f'{c}:{path}'], capture_output=True)
        if p.returncode == 0 and not p.stdout.startswith(b'version https://git-lfs'): return p.stdout
    raise FileNotFoundError(f'{repo}: {path} at none of {commits}')


def expand(pattern):
    """'a/{x,y}.mp4' -> ['a/x.mp4', 'a/y.mp4'] (one brace group, as manifest.json writes them)."""
    m = re.search(r'\{([^}]*)\}', pattern)
    return [pattern[:m.start()] + v + pattern[m.end():] for v in m.group(1).split(',')] if m else [pattern]


def commits_of(source):
    return [source['commit']] + re.findall(r'\b[0-9a-f]{40}\b', source.get('alsoCommit', ''))


def extract_clips(items, listing_name, drops=None):
    """items: (id, repo, commits, path, extension); each clip as <OUT>/src/<id><extension> (kept if already there),
    listed for video-crops.ts (40 frames a clip) in <OUT>/<listing_name>, with drops[id] (false detections) as "drop"."""
    os.makedirs(os.path.join(OUT, 'src'), exist_ok=True); listing = []; drops = drops or {}
    for id_, repo, commits, path, ext in items:
        dst = os.path.join(OUT, 'src', id_ + ext)
        if not os.path.exists(dst): open(dst, 'wb').write(blob(repo, commits, path))
        listing.append({'id': id_, 'path': dst, 'frames': 40})
        if id_ in drops: listing[-1]['drop'] = drops[id_]
    json.dump(listing, open(os.path.join(OUT, listing_name), 'w'), indent=1)
    return len(listing)


def clips():
    vf = json.load(open(os.path.join(HERE, 'manifest.json')))['videoFaces']; items = []
    for s in vf['sources'] + vf['v7Sources']:
        paths = [p for pat in s['paths'] for p in expand(pat)]
        ids = s.get('ids') or [f"{V5_PREFIX[s['repo']]}_{os.path.splitext(os.path.basename(p))[0]}" for p in paths]
        assert len(ids) == len(paths), (s['repo'], ids, paths)
        items += [(id_, s['repo'], commits_of(s), p, '.mp4') for id_, p in zip(ids, paths)]
    print('clips', extract_clips(items, 'clips.json'), flush=True)


# The survey files beside this script, by the part that extracts them: (survey file, listing written for video-crops.ts).
SURVEYS = {'v16': ('v16-clips.json', 'clips-v16.json'), 'candidates': ('candidate-clips.json', 'clips-candidates.json'),
           'candidates57': ('candidate-clips-stop57.json', 'clips-candidates57.json'),
           'candidates58': ('candidate-clips-stop58.json', 'clips-candidates58.json'),
           'candidates59': ('candidate-clips-stop59.json', 'clips-candidates59.json'),
           'candidates63': ('candidate-clips-stop63.json', 'clips-candidates63.json')}


def listed_clips(list_name, listing_name):
    """The clips of a survey file beside this script (one of SURVEYS) as <OUT>/src/<id>.<ext> and <OUT>/<listing_name>."""
    survey = json.load(open(os.path.join(HERE, list_name)))
    items = [(c['id'], c['repo'], [c['commit']], c['path'], os.path.splitext(c['path'])[1]) for c in survey['clips']]
    drops = {k: v for k, v in survey.get('dropCrops', {}).items() if k != 'why'}  # video-crops.ts leaves these out
    print(list_name, 'clips', extract_clips(items, listing_name, drops), flush=True)


def lfw():
    d = os.path.join(OUT, 'lfw'); os.makedirs(d, exist_ok=True)
    names = subprocess.run(['git', '--git-dir', git_dir(LFW_REPO), 'ls-tree', '-r', '--name-only', LFW_COMMIT, 'images_deepfunneled/'],
                           capture_output=True, text=True, check=True).stdout.split()
    names = [n for n in names if n.endswith('.jpg')]
    kept = grey = 0
    for n in names:
        im = Image.open(io.BytesIO(blob(LFW_REPO, [LFW_COMMIT], n))).convert('RGB'); a = np.asarray(im).astype(np.int16)
        if np.abs(a[..., 0] - a[..., 1]).max() <= 8 and np.abs(a[..., 1] - a[..., 2]).max() <= 8: grey += 1; continue  # black-and-white (JPEG chroma noise allowed)
        im.resize((350, 350), Image.BICUBIC).save(os.path.join(d, os.path.basename(n)[:-4] + '.png'), compress_level=1); kept += 1
    print('lfw photos', len(names), 'kept (colour)', kept, 'black-and-white left out', grey, flush=True)


def evaluation():
    e = json.load(open(os.path.join(HERE, 'manifest.json')))['evaluationOnly']
    for folder, source in (('ffpp', e), ('dfdc', e['dfdc'])):
        d = os.path.join(OUT, 'eval', folder); os.makedirs(d, exist_ok=True); rows = []
        for p in (q for pat in source['paths'] for q in expand(pat)):
            parts = p.split('/')  # FF++: <method>_<clip>.mp4 or original_<clip>.mp4, as the model card names them
            name = (('original' if 'original_sequences' in p else parts[-4].lower()) + '_' if folder == 'ffpp' else '') + parts[-1]
            open(os.path.join(d, name), 'wb').write(blob(source['repo'], [source['commit']], p))
            fake = 'manipulated_sequences' in p if folder == 'ffpp' else not p.endswith('lynaeydofd.mp4')
            rows.append(f'{name},{int(fake)}')
        open(os.path.join(d, 'labels.csv'), 'w').write('file,label\n' + '\n'.join(rows) + '\n')
        print(folder, len(rows), flush=True)


def clips_by_blob(listing, folder):
    """The clips of a survey file, by blob id (each survey checked its blobs against their paths at the commit)."""
    survey = json.load(open(os.path.join(HERE, listing)))
    d = os.path.join(OUT, folder); os.makedirs(d, exist_ok=True)
    for c in survey['clips']:
        data = subprocess.run(['git', '--git-dir', git_dir(c['repo']), 'cat-file', 'blob', c['blob']], capture_output=True, check=True).stdout
        assert len(data) == c['bytes'], (c['file'], len(data), c['bytes'])
        open(os.path.join(d, c['file']), 'wb').write(data)
    rows = [f"{c['file']},{c['label']}" for c in survey['clips']]
    open(os.path.join(d, 'labels.csv'), 'w').write('file,label\n' + '\n'.join(rows) + '\n')
    print(folder, len(rows), flush=True)


if __name__ == '__main__':
    parts = sys.argv[1:] or ['clips', 'v16', 'lfw', 'eval']
    for part in parts:
        if part in SURVEYS: listed_clips(*SURVEYS[part])
        else: {'clips': clips, 'lfw': lfw, 'eval': evaluation,
         'eval66': lambda: clips_by_blob('evaluation-clips-stop66.json', 'eval66'),
         'val74': lambda: clips_by_blob('validation-clips-stop74.json', 'val74'),
         'val77': lambda: clips_by_blob('validation-clips-stop77.json', 'val77')}[part]()
