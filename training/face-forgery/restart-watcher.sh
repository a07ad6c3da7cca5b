#!/usr/bin/env bash
# Runs train.py (with the environment it is given) until its cycle is done, restarting it from its own checkpoint
# (WORK/ckpt.pt, written every CKPT_SECONDS) when its resident memory grows past a limit. Why: under jemalloc without
# decay (train.py's docstring: the pace) the resident set grows through a cycle (v16: 14 GB at the start, 19 GB within
# the hour; v20, 2 M parameters and no watcher: 22.7 GB and out of memory after 1,150 steps).
# Restart at SOFT_GB within 20 s after a checkpoint (no step lost) or at HARD_GB at once (the steps since the last
# checkpoint are lost and said in the log). Training logs go to LOG, the watcher's lines too.
#   LOG=/work/data/fv21/train.log SOFT_GB=19 HARD_GB=21 <train.py's variables> bash training/face-forgery/restart-watcher.sh
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"; TRAIN="${TRAIN:-$HERE/train.py}"  # TRAIN: another script, to check the watcher itself
LOG="${LOG:?LOG: the training log}"; SOFT_GB="${SOFT_GB:-19}"; HARD_GB="${HARD_GB:-21}"
CK="${WORK:?WORK: the work folder of train.py}/ckpt.pt"
say() { echo "[watcher $(date -u +%H:%M:%S)] $*" >> "$LOG"; }
while true; do
  /usr/bin/python3 "$TRAIN" >> "$LOG" 2>&1 &
  pid=$!; say "started train.py pid $pid"
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    gb=$((rss_kb / 1048576))
    ck_age=$(( $(date +%s) - $(stat -c %Y "$CK" 2>/dev/null || echo 0) ))
    if [ "$gb" -ge "$HARD_GB" ] || { [ "$gb" -ge "$SOFT_GB" ] && [ "$ck_age" -le 20 ]; }; then
      say "restart: ${gb} GB resident, checkpoint ${ck_age} s old"
      kill "$pid"; wait "$pid" 2>/dev/null; continue 2
    fi
  done
  wait "$pid"; rc=$?
  say "train.py exited rc $rc"
  grep -q '^done steps' <(tail -3 "$LOG") && exit 0
  [ "$rc" -eq 137 ] && { say "killed (out of memory?): restarting from the checkpoint"; continue; }
  say "not done: stopping"; exit "$rc"
done
