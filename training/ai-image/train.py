"""Train the v2 view model: python3 train.py [--minutes 60]. Resumes from ckpt.pt (last state) and
keeps best.pt (highest validation AUC so far, checked every --eval-minutes).
Data: /work/data/ai-image/dataset10000/train (see manifest.json); model selection on
dataset10000/validation (all 1000 + 1000). One thread.
Augmentation (each image, in this order): random crop of 70-100 % of the side resized back to
256 with a random kernel (p 0.5), horizontal flip (p 0.5), resize down to 50-90 % and back up
(p 0.15), JPEG re-compression at quality 60-100 (p 0.5). Both classes come from the same
256x256 Lanczos + JPEG pipeline of the dataset's authors, so neither format nor size separates them."""
import argparse, glob, io, os, random, time
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from sklearn.metrics import roc_auc_score
from common import SIZE, ViewNet

ap = argparse.ArgumentParser()
ap.add_argument('--data', default='/work/data/ai-image/dataset10000')
ap.add_argument('--minutes', type=float, default=60)
ap.add_argument('--lr', type=float, default=2e-3)
ap.add_argument('--batch', type=int, default=32)
ap.add_argument('--eval-minutes', type=float, default=5)
ap.add_argument('--ckpt', default='/work/data/ai-image/ckpt.pt')
ap.add_argument('--best', default='/work/data/ai-image/best.pt')
args = ap.parse_args()
torch.set_num_threads(1)
random.seed(0); np.random.seed(0); torch.manual_seed(0)

def load(split):
    xs, ys = [], []
    for label, cls in ((0, 'real'), (1, 'fake')):
        for f in sorted(glob.glob(f'{args.data}/{split}/{cls}/*.jpg')):
            im = Image.open(f).convert('RGB')
            if im.size != (SIZE, SIZE):
                im = im.resize((SIZE, SIZE), Image.LANCZOS)
            xs.append(np.asarray(im)); ys.append(label)
    return np.stack(xs), np.array(ys, np.float32)

t0 = time.time()
train_x, train_y = load('train')
val_x, val_y = load('validation')
print('loaded', len(train_x), 'train and', len(val_x), 'validation images in', round(time.time() - t0), 's', flush=True)

KERNELS = [Image.LANCZOS, Image.BICUBIC, Image.BILINEAR, Image.BOX, Image.HAMMING]

def augment(a):
    im = Image.fromarray(a)
    if random.random() < 0.5:
        s = int(SIZE * random.uniform(0.7, 1.0))
        x, y = random.randint(0, SIZE - s), random.randint(0, SIZE - s)
        im = im.crop((x, y, x + s, y + s)).resize((SIZE, SIZE), random.choice(KERNELS))
    if random.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    if random.random() < 0.15:
        s = int(SIZE * random.uniform(0.5, 0.9))
        im = im.resize((s, s), random.choice(KERNELS)).resize((SIZE, SIZE), random.choice(KERNELS))
    if random.random() < 0.5:
        buf = io.BytesIO(); im.save(buf, 'JPEG', quality=random.randint(60, 100)); buf.seek(0)
        im = Image.open(buf).convert('RGB')
    return np.asarray(im)

def batch(n):
    idx = np.random.randint(0, len(train_x), n)
    x = np.stack([augment(train_x[i]) for i in idx]).transpose(0, 3, 1, 2)
    return torch.from_numpy(np.ascontiguousarray(x)).float() / 255.0, torch.from_numpy(train_y[idx])

@torch.no_grad()
def val_auc(model):
    model.eval(); out = []
    for i in range(0, len(val_x), 64):
        x = torch.from_numpy(np.ascontiguousarray(val_x[i:i + 64].transpose(0, 3, 1, 2))).float() / 255.0
        out.append(model(x).numpy())
    model.train()
    return float(roc_auc_score(val_y, np.concatenate(out)))

model = ViewNet()
opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
step, elapsed, best_auc, history = 0, 0.0, -1.0, []
if os.path.exists(args.ckpt):
    s = torch.load(args.ckpt)
    model.load_state_dict(s['model']); opt.load_state_dict(s['opt'])
    step, elapsed, best_auc, history = s['step'], s['elapsed'], s['best_auc'], s['history']
    print('resumed at step', step, 'elapsed', round(elapsed), 's, best val AUC', best_auc, flush=True)
print('params', sum(p.numel() for p in model.parameters()), flush=True)

def save():
    torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'step': step, 'elapsed': elapsed,
                'best_auc': best_auc, 'history': history}, args.ckpt)

budget = args.minutes * 60
start = time.time() - elapsed; last_ckpt = time.time(); last_eval = time.time()
run_loss, run_acc = 0.69, 0.5
model.train()
while True:
    elapsed = time.time() - start
    if elapsed >= budget: break
    frac = elapsed / budget
    lr = args.lr * (frac / 0.05 if frac < 0.05 else 0.5 * (1 + np.cos(np.pi * (frac - 0.05) / 0.95)))
    for g in opt.param_groups: g['lr'] = lr
    x, y = batch(args.batch)
    logit = model(x)
    loss = F.binary_cross_entropy_with_logits(logit, y)
    opt.zero_grad(); loss.backward(); opt.step()
    step += 1
    run_loss = 0.98 * run_loss + 0.02 * loss.item()
    run_acc = 0.98 * run_acc + 0.02 * ((logit > 0).float() == y).float().mean().item()
    if step % 25 == 0:
        print(f'step {step} loss {run_loss:.4f} acc {run_acc:.3f} lr {lr:.2e} {elapsed:.0f}s', flush=True)
    if time.time() - last_eval > args.eval_minutes * 60:
        auc = val_auc(model); history.append((step, round(elapsed), round(auc, 4)))
        print(f'== step {step} validation AUC {auc:.4f} (best {max(auc, best_auc):.4f})', flush=True)
        if auc > best_auc:
            best_auc = auc; torch.save({'model': model.state_dict(), 'step': step, 'val_auc': auc}, args.best)
        last_eval = time.time(); save(); last_ckpt = time.time()
    if time.time() - last_ckpt > 180:
        save(); last_ckpt = time.time()
elapsed = budget
auc = val_auc(model); history.append((step, round(elapsed), round(auc, 4)))
print(f'== final step {step} validation AUC {auc:.4f}', flush=True)
if auc > best_auc:
    best_auc = auc; torch.save({'model': model.state_dict(), 'step': step, 'val_auc': auc}, args.best)
save()
print('done', step, 'best validation AUC', best_auc, 'history', history, flush=True)
