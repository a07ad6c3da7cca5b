"""Rebuilds a folder of listed photos (phone-photos-stop67.csv, phone-photos-stop68.csv) from git clones.

    /usr/bin/python3 training/forgery/listed_photos.py <list.csv> <clones folder> <output folder> [split]

`<clones folder>` holds one git clone per repository of the list, named owner+name (as the tool
library's snapshots are), e.g. `git clone https://github.com/Tech4Tracing/CartridgeOCR
clones/Tech4Tracing+CartridgeOCR`. Each listed file is read at its recorded commit (`git show
commit:path`) and written under its listed name; `labels.csv` marks every photo untouched (0), as
`npm run eval` and `server/scripts/fit-missing-noise.ts --untouched` read it. With `split` (fit or
check) only that half of a list with a split column is written. The photos are not redistributed
in this repository; most of their repositories state no licence.
"""
import csv, os, subprocess, sys

lines = [line for line in open(sys.argv[1], encoding='utf-8') if not line.startswith('#')]
clones, out = sys.argv[2], sys.argv[3]
split = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(out, exist_ok=True)
written, missing = [], []
for row in csv.DictReader(lines):
    if split and row.get('split') != split:
        continue
    clone = os.path.join(clones, row['repo'].replace('/', '+'))
    show = subprocess.run(['git', '-C', clone, 'show', f"{row['commit']}:{row['path']}"], capture_output=True)
    if show.returncode != 0 or not show.stdout:
        missing.append(f"{row['repo']} {row['path']}")
        continue
    open(os.path.join(out, row['file']), 'wb').write(show.stdout)
    written.append(row['file'])
open(os.path.join(out, 'labels.csv'), 'w').write('file,label\n' + ''.join(f'{f},0\n' for f in written))
print(f'{len(written)} photos written to {out}; {len(missing)} missing')
for m in missing:
    print('  missing:', m)
