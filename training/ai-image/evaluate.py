"""Scores images the way the server does (256x256 Lanczos square views, mean of view logits),
fits Platt calibration and thresholds on the validation split (all 1000 + 1000), and reports AUCs:
test split (held out), and each dcsan/imagen generator (none of them trained on) against the
test split's real images, twice: the renders as they are (server path) and after the dataset's
own pipeline (256x256 Lanczos, JPEG quality 95, like every dataset10000 image), so that neither
format nor size can carry the figure. Writes figures.json beside this file.
Usage: python3 evaluate.py [--ckpt /work/data/ai-image/best.pt]"""
import argparse, glob, io, json, os, re, sys
from collections import defaultdict
import numpy as np
import torch
from PIL import Image
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from common import SIZE, ViewNet, select_views
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ai_image_shared import validation_thresholds  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('--ckpt', default='/work/data/ai-image/best.pt')
ap.add_argument('--data', default='/work/data/ai-image')
ap.add_argument('--max-per-generator', type=int, default=60)
args = ap.parse_args()
torch.set_num_threads(1)
model = ViewNet(); ck = torch.load(args.ckpt); model.load_state_dict(ck['model']); model.eval()
print('checkpoint step', ck.get('step'), 'val AUC at selection', ck.get('val_auc'), flush=True)

def read_rgb(path):
    try:
        return np.asarray(Image.open(path).convert('RGB'))  # 8-bit RGB, alpha dropped, like the server's decoder
    except Exception:
        return None

def dataset_pipeline(img):
    im = Image.fromarray(img).resize((SIZE, SIZE), Image.LANCZOS)
    buf = io.BytesIO(); im.save(buf, 'JPEG', quality=95); buf.seek(0)
    return np.asarray(Image.open(buf).convert('RGB'))

@torch.no_grad()
def score_img(img):
    if img is None: return None
    v = select_views(img)
    if len(v) == 0: return None
    return float(model(torch.from_numpy(v)).numpy().mean())

def score(path, pipeline=False):
    img = read_rgb(path)
    if img is not None and pipeline: img = dataset_pipeline(img)
    return score_img(img)

def split(name):
    out = []
    for label, cls in ((0, 'real'), (1, 'fake')):
        for f in sorted(glob.glob(f'{args.data}/dataset10000/{name}/{cls}/*.jpg')):
            s = score(f)
            if s is not None: out.append((s, label))
    return np.array(out)

val = split('validation'); print('validation', len(val), flush=True)
test = split('test'); print('test', len(test), flush=True)
lr = LogisticRegression(C=1e4).fit(val[:, :1], val[:, 1])
a, b = float(lr.coef_[0, 0]), float(lr.intercept_[0])
cal = lambda s: 1 / (1 + np.exp(-(a * s + b)))
pv = cal(val[:, 0]); yv = val[:, 1]
# Thresholds on validation: decide only where validation supports it. 'manipulated' is the
# lowest score above which at most 1% of the validation images are real (and at least 20
# images fall); 'authentic' likewise for generated images below it. Where no such score
# exists the model never decides that way (1 and 0): it stays a reported signal.
auth, manip = validation_thresholds(pv, yv)
def rates(p, y):
    called_ai, called_real = p >= manip, p <= auth
    decided = called_ai | called_real
    wrong = (called_ai & (y == 0)) | (called_real & (y == 1))
    return {'auc': round(float(roc_auc_score(y, p)), 4),
            'accuracyAt0.5': round(float(((p > 0.5) == y).mean()), 4),
            'realCalledAi': round(float(called_ai[y == 0].mean()), 4),
            'aiCalledReal': round(float(called_real[y == 1].mean()), 4),
            'decided': round(float(decided.mean()), 4),
            'calledAi': round(float(called_ai.mean()), 4), 'calledReal': round(float(called_real.mean()), 4),
            'wrongAmongDecided': round(float(wrong.sum() / max(1, decided.sum())), 4), 'n': int(len(y))}
figures = {'checkpoint': {'step': ck.get('step'), 'selectedOnValidationAuc': round(float(ck.get('val_auc', 0)), 4)},
           'calibration': {'method': 'platt', 'a': round(a, 6), 'b': round(b, 6)},
           'thresholds': {'authentic': round(auth, 4), 'manipulated': round(manip, 4)},
           'validation': rates(pv, yv), 'test': rates(cal(test[:, 0]), test[:, 1])}
print(json.dumps(figures, indent=1), flush=True)

# Unseen generators: dcsan/imagen renders, generator from the file prefix.
PREFIX = {'ldif': 'latent-diffusion', 'dmin': 'dalle-mini', 'glid': 'glid-3', 'midj': 'midjourney',
          'disco': 'disco-diffusion', 'simu': 'simulacra', 'stab': 'stable-diffusion', 'dal2': 'dall-e-2',
          'mdif': 'majesty-diffusion'}
by_gen = defaultdict(list)
for f in sorted(glob.glob(f'{args.data}/output/renders/*/*')):
    m = re.match(r'([a-z]+\d?)', os.path.basename(f))
    key = m.group(1) if m else ''
    key = key if key in PREFIX else re.sub(r'\d$', '', key)
    if key in PREFIX: by_gen[PREFIX[key]].append(f)
reals = test[test[:, 1] == 0, 0]
for variant, pipeline in (('unseenGenerators', False), ('unseenGeneratorsDatasetPipeline', True)):
    gens = {}
    rng = np.random.default_rng(0)
    for gen, files in sorted(by_gen.items()):
        files = [files[i] for i in sorted(rng.choice(len(files), min(len(files), args.max_per_generator), replace=False))]
        s = [x for x in (score(f, pipeline) for f in files) if x is not None]
        y = np.r_[np.zeros(len(reals)), np.ones(len(s))]
        p = cal(np.r_[reals, s])
        gens[gen] = {'auc': round(float(roc_auc_score(y, p)), 4), 'n': len(s), 'calledAi': round(float((cal(np.array(s)) >= manip).mean()), 4),
                     'calledReal': round(float((cal(np.array(s)) <= auth).mean()), 4)}
        print(variant, gen, gens[gen], flush=True)
    figures[variant] = gens
    mean_key = {'unseenGenerators': 'unseenGeneratorMeanAuc', 'unseenGeneratorsDatasetPipeline': 'unseenGeneratorMeanAucDatasetPipeline'}[variant]
    figures[mean_key] = round(float(np.mean([g['auc'] for g in gens.values()])), 4)
json.dump(figures, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'figures.json'), 'w'), indent=1)
print('mean unseen-generator AUC', figures['unseenGeneratorMeanAuc'], 'dataset pipeline', figures['unseenGeneratorMeanAucDatasetPipeline'])
