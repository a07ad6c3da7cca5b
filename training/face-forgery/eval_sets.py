"""Per-set figures of one `npm run eval --json` run over the stop-66 evaluation clips (evaluation-clips-stop66.json).

The README's and the model card's stop-66 tables come from this: per dataset, FaceForensics++ per method against its
originals, the full-frame clips (all but the Celeb-DF montages) and all 94; for each, the detector's AUC, the model
signal's own AUC (`--signal model:face-forgery-sbi`), fakes called manipulated / authentic and real clips called
authentic / manipulated. It reads the labels from the survey file, so a relabelled labels.csv cannot change a row.

  npm run -s eval -- --task faceswap-detection --data <OUT>/eval66 --signal model:face-forgery-sbi --json > run.json
  /usr/bin/python3 training/face-forgery/eval_sets.py run.json [groups.json]
"""
import json, os, sys
from sklearn.metrics import roc_auc_score

HERE = os.path.dirname(os.path.abspath(__file__))


def auc(positives, negatives):
    """ROC AUC as train.py and export.py compute it (sklearn); None without both classes."""
    if not positives or not negatives: return None
    return round(float(roc_auc_score([1] * len(positives) + [0] * len(negatives), positives + negatives)), 3)


def figures(rows):
    fakes = [r for r in rows if r['label'] == 1]; reals = [r for r in rows if r['label'] == 0]
    scores = lambda group, key: [r[key] for r in group if r.get(key) is not None]
    count = lambda group, verdict: sum(r['verdict'] == verdict for r in group)
    return {'fake': len(fakes), 'real': len(reals), 'auc': auc(scores(fakes, 'score'), scores(reals, 'score')),
            'modelAuc': auc(scores(fakes, 'signalScore'), scores(reals, 'signalScore')),
            'fakesManipulated': count(fakes, 'manipulated'), 'fakesAuthentic': count(fakes, 'authentic'),
            'realsAuthentic': count(reals, 'authentic'), 'realsManipulated': count(reals, 'manipulated'),
            'errors': count(rows, 'error')}


def main():
    run = json.load(open(sys.argv[1]))
    clips = {c['file']: c for c in json.load(open(os.path.join(HERE, 'evaluation-clips-stop66.json')))['clips']}
    rows = [dict(r, label=clips[r['file']]['label']) for r in run['rows'] if r['file'] in clips]
    dataset = lambda r: clips[r['file']]['dataset'].split(' (')[0]
    groups = {'all': figures(rows), 'full-frame (no Celeb-DF montages)': figures([r for r in rows if dataset(r) != 'Celeb-DF v2'])}
    for name in sorted({dataset(r) for r in rows}):
        groups[name] = figures([r for r in rows if dataset(r) == name])
    ffpp = [r for r in rows if dataset(r) == 'FaceForensics++']
    for method in ('Deepfakes', 'Face2Face', 'FaceSwap', 'NeuralTextures'):
        groups[f'FaceForensics++ {method} vs originals'] = figures([r for r in ffpp if clips[r['file']]['method'] in (method, 'original')])
    groups['FaceForensics++ fakes vs FF++ and DFD originals'] = figures([r for r in rows if dataset(r) in ('FaceForensics++', 'DeepFakeDetection')])
    for name, g in groups.items(): print(f'{name}: {json.dumps(g)}')
    if len(sys.argv) > 2: json.dump(groups, open(sys.argv[2], 'w'), indent=1)


if __name__ == '__main__':
    main()
