"""Real screen replays for evaluation only (stop 44, condition 7): Eyashita/VisageTrack @ 475a0e2 (MIT).

`Dataset/Fake` holds a television showing a TV series, photographed by a 640 x 480 webcam; `Dataset/Real` holds live
frames of one person by the same webcam. Every fourth frame of each (consecutive frames are near-duplicates) goes to
an eval folder: realreplay-*.jpg (label 1) and live-*.jpg (label 0), with labels.csv, for `npm run eval` and
choose-fusion.ts. Never trained on; it chooses nothing.

Run: /usr/bin/python3 training/liveness/visagetrack.py <Eyashita/VisageTrack git dir>   -> /work/data/visagetrack/test
"""
import os, subprocess, sys

COMMIT = '475a0e2b9aa50849ac7ded86562f2f8c4c37fe93'
OUT = os.environ.get('VISAGETRACK_OUT', '/work/data/visagetrack/test')
FOLDERS = {'Dataset/Fake': ('realreplay', 1), 'Dataset/Real': ('live', 0)}
EVERY = 4


def git(gitdir, *args):
    return subprocess.run(['git', '--git-dir', gitdir, *args], capture_output=True, check=True).stdout


def main(gitdir):
    os.makedirs(OUT, exist_ok=True)
    lines = ['file,label']
    for folder, (prefix, label) in FOLDERS.items():
        paths = [p for p in git(gitdir, 'ls-tree', '-r', '--name-only', COMMIT, folder).decode().split('\n') if p.endswith('.jpg')]
        for path in paths[::EVERY]:
            name = f'{prefix}-{os.path.basename(path)}'
            open(os.path.join(OUT, name), 'wb').write(git(gitdir, 'show', f'{COMMIT}:{path}'))
            lines.append(f'{name},{label}')
        print(folder, len(paths), 'frames,', len(paths[::EVERY]), 'kept')
    open(os.path.join(OUT, 'labels.csv'), 'w').write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main(sys.argv[1])
