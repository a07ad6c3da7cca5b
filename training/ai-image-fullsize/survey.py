"""Lists every image under /work/data/ai-fullsize/src with size, format, EXIF make/model.
Writes /work/data/ai-fullsize/survey.tsv. Used to pick full-size real photos and generator outputs."""
import os, sys
from PIL import Image
ROOT = '/work/data/ai-fullsize/src'
out = open('/work/data/ai-fullsize/survey.tsv', 'w')
for dp, dn, fn in os.walk(ROOT):
    for f in sorted(fn):
        p = os.path.join(dp, f)
        try:
            im = Image.open(p)
            ex = im.getexif() if hasattr(im, 'getexif') else {}
            make = str(ex.get(271, '')).strip().replace('\t', ' ').replace('\x00', '')
            model = str(ex.get(272, '')).strip().replace('\t', ' ').replace('\x00', '')
            sw = str(ex.get(305, '')).strip().replace('\t', ' ').replace('\x00', '')[:40]
            out.write(f"{os.path.relpath(p, ROOT)}\t{im.format}\t{im.mode}\t{im.size[0]}\t{im.size[1]}\t{os.path.getsize(p)}\t{make}\t{model}\t{sw}\n")
        except Exception as e:
            pass
