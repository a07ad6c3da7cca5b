#!/bin/bash
# One attempt at the speech model, stage by stage, as every attempt since v7 ran it (MODEL_CARD.md, "v7 attempt").
#
#   SPEECH_DATA=/work/data/speech-vN SPEECH_VERSION=N.0.0 SPEECH_V1=/work/data/v1/speech-antispoof.onnx \
#     bash training/speech/attempt.sh data|train|phase-a|test
#
#   data     prepare.py (SPEECH_EXTRA as set: 1 for v7's 30 sources), augment.py and selfvoc.py in two parts each
#   train    two runs side by side, one thread each, TRAIN_MINUTES (50) with v7's options; TAGS ("v4 v7", v7's seeds);
#            any other option (SPEECH_LOSS, SPEECH_TWINS, …) is passed through from the environment
#            (SPEECH_ENSEMBLE=shipped,e1,… for phase-a and test: branch B is those members' mean logit, fuse.py)
#   phase-a  choose branch B on validation, fuse with v1 1.0.0, calibrate and freeze D/candidate-vN (reads no test clip)
#   test     the test event: v1, branch B, the fused candidate and the shipped model scored on export.py's windows, the
#            figures written to figures-<name>-*.json and figures-{v1,vS}-<name>-same-clips.json (name: SPEECH_ATTEMPT,
#            default vN; vS: the shipped model's major version). Run it once, after the
#            candidate's sha256 is recorded and committed.
# SPEECH_V1 is v1 1.0.0, branch A of every fused model: `git show 783ff4a:server/models/speech-antispoof.onnx` (and .json).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${SPEECH_DATA:?set SPEECH_DATA}" "${SPEECH_VERSION:?set SPEECH_VERSION, e.g. 12.0.0}"
export SPEECH_DATA SPEECH_VERSION
D=$SPEECH_DATA; N=${SPEECH_VERSION%%.*}
NAME=${SPEECH_ATTEMPT:-v$N}; C=$D/candidate-$NAME  # SPEECH_ATTEMPT names the candidate folder and figure files (fuse.py too)
SHIPPED=$HERE/../../server/models/speech-antispoof
SHIPPED_MAJOR=$(node -p "require('$SHIPPED.json').version.split('.')[0]")
PY=/usr/bin/python3
cd "$HERE"

case "${1:-}" in
  data)
    $PY prepare.py
    for script in augment selfvoc; do
      extra=(); [ $script = augment ] && extra=(env SPEECH_AUG_ONLY=train)
      "${extra[@]}" $PY $script.py 0 2 & "${extra[@]}" $PY $script.py 1 2; wait
      "${extra[@]}" $PY $script.py merge 2
    done ;;
  train)
    export SPEECH_NORM=cmvn SPEECH_CHANNEL_AUG=1 EVAL_EVERY=300 SPEECH_SELFVOC=${SPEECH_SELFVOC:-0.25}
    for tag in ${TAGS:-v4 v7}; do $PY train.py "${TRAIN_MINUTES:-50}" "$tag" 30 > "$D/train-$tag.log" 2>&1 & done
    wait ;;
  phase-a)
    : "${SPEECH_V1:?set SPEECH_V1 to v1 1.0.0}"
    $PY pairs_v3.py
    $PY export.py --windows-only
    $PY fuse.py branch
    node score_onnx.mjs "$SPEECH_V1" "$D" "$D/v1_val.json" val_windows
    node score_onnx.mjs "$C/branch-v4.onnx" "$D" "$D/branch_val.json" val_windows
    $PY fuse.py fit
    node score_onnx.mjs "$C/speech-antispoof.onnx" "$D" "$D/fused_val.json" val_windows
    $PY fuse.py fit
    sha256sum "$C"/* ;;
  test)
    : "${SPEECH_V1:?set SPEECH_V1 to v1 1.0.0}"
    for windows in eval_windows eval_windows2; do
      suffix=; [ $windows = eval_windows2 ] && suffix=-2
      node score_onnx.mjs "$SPEECH_V1" "$D" "$D/v1_scores$suffix.json" $windows
      node score_onnx.mjs "$C/branch-v4.onnx" "$D" "$D/cand_scores$suffix.json" $windows
      node score_onnx.mjs "$C/speech-antispoof.onnx" "$D" "$D/fused_scores$suffix.json" $windows
      node score_onnx.mjs "$SHIPPED.onnx" "$D" "$D/shipped_scores$suffix.json" $windows
    done
    figures=(--figures "figures-$NAME-branch.json")
    $PY export.py "${figures[@]}" --compare "$D/v1_scores.json" "${SPEECH_V1%.onnx}.json" "v1-$NAME"
    $PY export.py "${figures[@]}" --compare "$D/cand_scores.json" "$C/branch-v4.json" "candidate-$NAME"
    $PY export.py "${figures[@]}" --compare "$D/fused_scores.json" "$C/speech-antispoof.json" "$NAME-fused"
    $PY export.py "${figures[@]}" --compare "$D/shipped_scores.json" "$SHIPPED.json" "v$SHIPPED_MAJOR-$NAME"
    # an ensemble's branch B is not export.py's chosen checkpoint: its own figures (the ONNX ensemble's scores) are the branch's
    if [ -n "${SPEECH_ENSEMBLE:-}" ]; then cp "$D/figures-candidate-$NAME-same-clips.json" "figures-$NAME-branch.json"; fi
    $PY fuse.py report ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
