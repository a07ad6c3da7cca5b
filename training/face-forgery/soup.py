"""v22 attempt: weight-space interpolation of a fine-tuned run with its own start (WiSE-FT).

Wortsman et al., "Robust fine-tuning of zero-shot models", CVPR 2022: the weights
theta(alpha) = (1 - alpha) * theta_start + alpha * theta_tuned of a network and its fine-tuned copy
often beat both ends on data unlike the fine-tuning's own, because the two lie in one basin. Here
the start is v16.0.0 widened by Net2Net (train.py's WORK/start.pt, the same function as v16) and the
tuned end is the run's kept checkpoint (WORK/best.pt, chosen on the landmark-hull set as always).
BatchNorm running statistics do not interpolate (Jordan et al., "REPAIR", ICLR 2023), so after mixing
the parameters they are measured again on training batches, as train.py does before every evaluation.

  soup.py ALPHA OUTWORK   writes OUTWORK/best.pt (the mix at ALPHA, recalibrated) and OUTWORK/ckpt.pt
                          (the run's own, for export.py's training record); export.py then runs with
                          WORK=OUTWORK like for any run
  soup.py curve A,B,...   the hull / no-coding / polygon H.264 AUCs of each mix (a measurement only)
The run's own train.py variables (DATA, WORK, VIDEO, LANDMARKS, COLOUR, LUMA_JITTER_P, SHARE, SIZE, LFW_BOX, LFW_DY, ...):
the recalibration draws training batches as the run did, and at alpha 1 it reproduces the run's own evaluation exactly.
"""
import json, os, shutil, sys
import numpy as np, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train
from sklearn.metrics import roc_auc_score

torch.set_num_threads(int(os.environ.get('THREADS', '1')))


def data():
    """train.py's pools and its three video validation sets, built by its own functions and seeds."""
    x, sp = train.load(); sp = np.array(sp); tr = np.where(sp == 'train')[0]
    n_lfw = len(x); x, _, vtr, vva = train.pool_video(x)
    train.MESH = train.load_meshes(n_lfw)
    sets = {'hull': train.fixed_h264_set(x, vva, 1, tag='-video-hull', hulls=True),
            'noCoding': train.fixed_raw_set(x, vva, 1),
            'polygon': train.fixed_h264_set(x, vva, 1, tag='-video')}
    return x, train.drawer(tr, vtr), sets


def mix(start, tuned, alpha):
    """Parameters and BatchNorm affine weights mixed linearly; running statistics left to recalibrate."""
    out = {}
    for k, v in tuned.items():
        out[k] = (1 - alpha) * start[k] + alpha * v if v.is_floating_point() else v
    return out


def build(alpha, start, best, x, draw):
    net = train.make_net().to(memory_format=train.CL)
    net.load_state_dict(mix(start['net'], best['net'], alpha))
    train.recalibrate(net, x, draw, np.random.default_rng(int(best['step'])))
    net.tta = True; return net


if __name__ == '__main__':
    work = train.WORK
    start, best = torch.load(os.path.join(work, 'start.pt')), torch.load(os.path.join(work, 'best.pt'))
    assert start['widths'] == best['widths'] and start['colour'] == best['colour'], 'the two ends must be one network'
    train.NORM, train.ARCH, train.COLOUR, train.WIDTHS = best['norm'], best['arch'], best['colour'], best['widths']
    x, draw, sets = data()
    if sys.argv[1] == 'curve':
        for alpha in (float(a) for a in sys.argv[2].split(',')):
            net = build(alpha, start, best, x, draw)
            row = {name: round(float(roc_auc_score(y, train.scores(net, X, True))), 4) for name, (X, y) in sets.items()}
            print(json.dumps({'alpha': alpha, **row}), flush=True)
    else:
        alpha, out = float(sys.argv[1]), sys.argv[2]; os.makedirs(out, exist_ok=True)
        net = build(alpha, start, best, x, draw)
        hull = float(roc_auc_score(sets['hull'][1], train.scores(net, sets['hull'][0], True)))
        torch.save({**best, 'net': net.state_dict(), 'valAuc': hull, 'tta': True,
                    'weights': f'WiSE-FT mix, alpha {alpha}: (1 - alpha) x start (v16.0.0 widened) + alpha x the run\'s kept EMA '
                               f'checkpoint (step {best["step"]}), BatchNorm statistics recalibrated'}, os.path.join(out, 'best.pt'))
        shutil.copy(os.path.join(work, 'ckpt.pt'), os.path.join(out, 'ckpt.pt'))
        for f in os.listdir(work):  # the run's cached crops and fixed sets, so export.py scores the same images
            if f.endswith('.npz') and not os.path.exists(os.path.join(out, f)): os.symlink(os.path.join(work, f), os.path.join(out, f))
        print('wrote', out, 'alpha', alpha, 'hull H.264 (flip)', round(hull, 4), flush=True)
