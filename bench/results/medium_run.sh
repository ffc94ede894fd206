#!/usr/bin/env bash
# The medium set's comparison on the 1.5B, taken up where the committed logs stop (every attempt is kept as it
# ends; --resume makes only the missing ones): served as `local` to every harness, balanced by repeat, then the
# served one-shot, then keel's embedded 1.5B and 0.5B (keel and one-shot). Run from a checkout with .venv holding
# keel's `local`, `local-small` and `test` extras, on a machine with nothing else running:
#   bash bench/results/medium_run.sh /tmp/m29
set -u
work=${1:?give a work folder, e.g. /tmp/m29}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
py=.venv/bin/python
declare -A logs=([served]=served15 [embedded]=embedded15 [embedded05]=embedded05)
for where in "${!logs[@]}"; do  # the committed logs, unless this folder holds newer ones
  mkdir -p "$work/$where"
  kept="$here/small_model_medium_${logs[$where]}.jsonl"
  [ -e "$work/$where/attempts.jsonl" ] || [ ! -e "$kept" ] || cp "$kept" "$work/$where/attempts.jsonl"
done
step() {  # where (served|embedded|embedded05), mode, repeat
  echo "$(date +%T) $1 $2 repeat<=$3" >> "$work/progress.log"
  local serve=() model=keel-local/qwen2.5-coder-1.5b-instruct
  [ "$1" = served ] && serve=(--served-as local)
  [ "$1" = embedded05 ] && model=keel-local/qwen2.5-coder-0.5b-instruct
  $py bench/small_model.py --set medium --repeat "$3" --timeout 1800 --modes "$2" --threads 2 \
    --model "$model" "${serve[@]}" --out "$work/$1" --resume >> "$work/$1.log" 2>&1
}
for r in 1 2 3; do
  for mode in mini-swe-agent keel aider-whole aider-diff; do step served "$mode" "$r"; done
done
step served one-shot 3
for where in embedded embedded05; do
  for r in 1 2 3; do
    for mode in keel one-shot; do step "$where" "$mode" "$r"; done
  done
done
echo "$(date +%T) done" >> "$work/progress.log"
