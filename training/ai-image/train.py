"""Train the patch model: python3 train.py [--minutes 20]. Resumes from ckpt.pt.
Data: /work/data/ai-image/dataset10000/train (see manifest.json). Augmentation before patch
extraction: resize 0.5-1.5x (random interpolation) then JPEG re-compression at quality 60-100,
each with probability 0.5, so the model cannot key on one compression or scale."""
import argparse, glob, os, random, time
import cv2
import numpy as np
import torch
import torch.nn.functional as F
from common import PATCH, PatchNet

ap = argparse.ArgumentParser()
ap.add_argument('--data', default='/work/data/ai-image/dataset10000')
ap.add_argument('--minutes', type=float, default=20)
ap.add_argument('--ckpt', default='/work/data/ai-image/ckpt.pt')
args = ap.parse_args()
torch.set_num_threads(1)
cv2.setNumThreads(1)
random.seed(0); np.random.seed(0); torch.manual_seed(0)

def load(split):
    items = []
    for label, cls in ((0, 'real'), (1, 'fake')):
        for f in sorted(glob.glob(f'{args.data}/{split}/{cls}/*.jpg')):
            im = cv2.imread(f, cv2.IMREAD_COLOR)
            if im is None or min(im.shape[:2]) < PATCH:
                continue
            items.append((cv2.cvtColor(im, cv2.COLOR_BGR2RGB), label))
    return items

t0 = time.time()
train = load('train')
print('loaded', len(train), 'train images in', round(time.time() - t0), 's', flush=True)

def augment(img):
    if random.random() < 0.5:
        f = random.uniform(0.5, 1.5)
        h, w = img.shape[:2]
        nh, nw = max(PATCH, int(h * f)), max(PATCH, int(w * f))
        interp = random.choice([cv2.INTER_AREA, cv2.INTER_LINEAR, cv2.INTER_CUBIC])
        img = cv2.resize(img, (nw, nh), interpolation=interp)
    if random.random() < 0.5:
        q = random.randint(60, 100)
        ok, buf = cv2.imencode('.jpg', cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
        img = cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    if random.random() < 0.5:
        img = img[:, ::-1]
    return img

def batch(n_images=16, per_image=4):
    xs, ys = [], []
    for img, label in random.sample(train, n_images):
        a = augment(img)
        h, w = a.shape[:2]
        for _ in range(per_image):
            # odd offsets too: the server's grid does not align with the generator's 2x2 blocks
            y, x = random.randint(0, h - PATCH), random.randint(0, w - PATCH)
            xs.append(a[y:y + PATCH, x:x + PATCH]); ys.append(label)
    x = torch.from_numpy(np.ascontiguousarray(np.stack(xs).transpose(0, 3, 1, 2))).float() / 255.0
    return x, torch.tensor(ys, dtype=torch.float32)

model = PatchNet()
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
step = 0
if os.path.exists(args.ckpt):
    s = torch.load(args.ckpt)
    model.load_state_dict(s['model']); opt.load_state_dict(s['opt']); step = s['step']
    print('resumed at step', step, flush=True)
print('params', sum(p.numel() for p in model.parameters()), flush=True)
start = time.time(); last_ckpt = start; run_loss = 0.0; run_acc = 0.0
model.train()
while time.time() - start < args.minutes * 60:
    frac = (time.time() - start) / (args.minutes * 60)
    for g in opt.param_groups:
        g['lr'] = 1e-3 * 0.5 * (1 + np.cos(np.pi * min(frac, 1.0)))  # cosine over the time budget
    x, y = batch()
    logit = model(x)
    loss = F.binary_cross_entropy_with_logits(logit, y)
    opt.zero_grad(); loss.backward(); opt.step()
    step += 1
    run_loss = 0.98 * run_loss + 0.02 * loss.item()
    run_acc = 0.98 * run_acc + 0.02 * ((logit > 0).float() == y).float().mean().item()
    if step % 25 == 0:
        print(f'step {step} loss {run_loss:.4f} acc {run_acc:.3f} {time.time() - start:.0f}s', flush=True)
    if time.time() - last_ckpt > 180:
        torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'step': step}, args.ckpt)
        last_ckpt = time.time()
torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'step': step}, args.ckpt)
print('done', step, flush=True)
