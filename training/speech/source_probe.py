"""How much a checkpoint's pooled features tell recordings' repositories apart (v12's reading; decides nothing).
A linear probe (logistic regression on standardised features, 5-fold stratified cross-validation) predicts each bona fide
clip's repository from the features the head reads (mean of up to 2 evaluation windows), once over the training split's
bona fide clips (what the source adversary saw) and once over the validation and test splits' (clips it never saw).
Balanced accuracy: chance is 1 / repositories.
Usage: SPEECH_DATA=<dir> /usr/bin/python3 source_probe.py <best-*.pt> [more checkpoints]"""
import json, sys, numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.metrics import balanced_accuracy_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from train import D, load_clips, split, windows, net_from_checkpoint

def features(net, clips, idx):
  with torch.no_grad():
    return np.stack([net.features(torch.from_numpy(windows(clips[i], max_windows=2))).mean(0).numpy() for i in idx])

def probe(X, repos):
  keep = [k for k, r in enumerate(repos) if repos.count(r) >= 5]  # a repository needs a clip in every fold
  X, y = X[keep], [repos[k] for k in keep]
  pred = cross_val_predict(make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=0.1)), X, y,
                           cv=StratifiedKFold(5, shuffle=True, random_state=0))
  return {'clips': len(y), 'repositories': len(set(y)), 'balancedAccuracy': round(balanced_accuracy_score(y, pred), 4),
          'chance': round(1 / len(set(y)), 4)}

if __name__ == '__main__':
  meta = json.load(open(f'{D}/meta.json')); clips = load_clips(meta)
  tr, va, te = split(meta)
  sets = {'train bona fide': [i for i in tr if meta[i]['label'] == 0], 'validation+test bona fide': [i for i in va + te if meta[i]['label'] == 0]}
  for path in sys.argv[1:]:
    ck = torch.load(path); net = net_from_checkpoint(ck)
    out = {name: probe(features(net, clips, idx), [meta[i]['repo'] for i in idx]) for name, idx in sets.items()}
    print(json.dumps({'checkpoint': path, 'tag': ck.get('tag'), 'step': ck.get('step'), 'sourceAdversary': ck.get('sourceAdversary', 0), **out}), flush=True)
