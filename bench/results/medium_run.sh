#!/usr/bin/env bash
# The medium set's comparison on the 1.5B, taken up where the committed logs stop (every attempt is kept as it
# ends; --resume makes only the missing ones): served as `local` to every harness, balanced by repeat, then the
# served one-shot, then keel's embedded model (keel and one-shot). Run from a checkout with .venv holding keel's
# `local` and `test` extras, on a machine with nothing else running:  bash bench/results/medium_run.sh /tmp/m29
set -u
work=${1:?give a work folder, e.g. /tmp/m29}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
py=.venv/bin/python
mkdir -p "$work/served" "$work/embedded"
[ -e "$work/served/attempts.jsonl" ] || cp "$here/small_model_medium_served15.jsonl" "$work/served/attempts.jsonl"
[ -e "$work/embedded/attempts.jsonl" ] || { [ -e "$here/small_model_medium_embedded15.jsonl" ] &&
  cp "$here/small_model_medium_embedded15.jsonl" "$work/embedded/attempts.jsonl"; }
step() {  # where (served|embedded), mode, repeat
  echo "$(date +%T) $1 $2 repeat<=$3" >> "$work/progress.log"
  local serve=()
  [ "$1" = served ] && serve=(--served-as local)
  $py bench/small_model.py --set medium --repeat "$3" --timeout 1800 --modes "$2" --threads 2 \
    --model keel-local/qwen2.5-coder-1.5b-instruct "${serve[@]}" --out "$work/$1" --resume >> "$work/$1.log" 2>&1
}
for r in 1 2 3; do
  for mode in mini-swe-agent keel aider-whole aider-diff; do step served "$mode" "$r"; done
done
step served one-shot 3
for r in 1 2 3; do
  for mode in keel one-shot; do step embedded "$mode" "$r"; done
done
echo "$(date +%T) done" >> "$work/progress.log"
