"""Rebuilds a folder of listed photos (phone-photos-stop67.csv, phone-photos-stop68.csv) from git clones.

    /usr/bin/python3 training/forgery/listed_photos.py <list.csv>... <clones folder> <output folder> [split] [--make M | --not-make M]

`<clones folder>` holds one git clone per repository of the list, named owner+name (as the tool
library's snapshots are), e.g. `git clone https://github.com/Tech4Tracing/CartridgeOCR
clones/Tech4Tracing+CartridgeOCR`. Each listed file is read at its recorded commit (`git show
commit:path`) and written under its listed name; `labels.csv` marks every photo untouched (0), as
`npm run eval` and `server/scripts/fit-missing-noise.ts --untouched` read it. With `split` (fit or
check) only that half of a list with a split column is written; with `--make M` only the photos whose
EXIF make is M (any case), with `--not-make M` all others (stop 69 fits its rule per brand). Several
lists may be given; they are written into one folder. The photos are not redistributed
in this repository; most of their repositories state no licence.
"""
import csv, os, subprocess, sys

args = sys.argv[1:]
make_filter = None
for flag in ('--make', '--not-make'):
    if flag in args:
        at = args.index(flag)
        make_filter = (flag == '--make', args[at + 1].lower())
        del args[at:at + 2]
lists = [a for a in args if a.endswith('.csv')]
clones, out, *rest = [a for a in args if not a.endswith('.csv')]
split = rest[0] if rest else None
rows = []
for listed in lists:
    # Lines end at \n only: phone-photos-stop67.csv has a stray \r inside its height column.
    text = open(listed, encoding='utf-8', newline='').read().replace('\r', '')
    rows += csv.DictReader([line for line in text.split('\n') if line and not line.startswith('#')])
os.makedirs(out, exist_ok=True)
written, missing = [], []
for row in rows:
    if split and row.get('split') != split:
        continue
    if make_filter and (row['make'].strip().lower() == make_filter[1]) != make_filter[0]:
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
