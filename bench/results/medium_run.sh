#!/usr/bin/env bash
# The small-model comparisons of issue 29, taken up where the committed logs stop (every attempt is kept as it ends;
# --resume makes only the missing ones): keel first on both sets served as `local` (its rows are the ones a strategy
# change drops), then keel's first repeat on the embedded 0.5B and 1.5B, the quick peers (aider, mini-swe-agent:
# minutes an attempt) on the small set, the served one-shot, the quick peers on the medium set, mini-textbased's first
# repeat on the small set, keel's repeats on the embedded models (under a minute an attempt), one-shot's on the embedded
# models' small set, mini-textbased's first repeat on the medium set, one-shot's repeats on the embedded models' medium
# set (a task's in a row: its prompt, the whole repository, read once), then mini-textbased's repeats 2 and 3 (minutes
# an attempt: it runs to its step limit): the slowest last, so that a run cut short leaves every harness measured.
# Run from a checkout with .venv holding keel's `local`, `local-small` and `test` extras, on a machine with nothing
# else running:
#   bash bench/results/medium_run.sh /tmp/m29
set -u
work=${1:?give a work folder, e.g. /tmp/m29}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
py=.venv/bin/python
declare -A logs=([small]=small_served15 [served]=medium_served15 [small_embedded]=small_embedded15
  [embedded]=medium_embedded15 [small_embedded05]=small_embedded05 [embedded05]=medium_embedded05)
for where in "${!logs[@]}"; do  # the committed logs, unless this folder holds newer ones
  mkdir -p "$work/$where"
  kept="$here/small_model_${logs[$where]}.jsonl"
  [ -e "$work/$where/attempts.jsonl" ] || [ ! -e "$kept" ] || cp "$kept" "$work/$where/attempts.jsonl"
done
step() {  # where (a key of logs), mode, repeat
  echo "$(date +%T) $1 $2 repeat<=$3" >> "$work/progress.log"
  local serve=() set=medium model=keel-local/qwen2.5-coder-1.5b-instruct
  case $1 in small | served) serve=(--served-as local) ;; esac
  case $1 in small*) set=small ;; esac
  case $1 in *05) model=keel-local/qwen2.5-coder-0.5b-instruct ;; esac
  $py bench/small_model.py --set "$set" --repeat "$3" --timeout 1800 --modes "$2" --threads 2 \
    --model "$model" "${serve[@]}" --out "$work/$1" --resume >> "$work/$1.log" 2>&1
}
for r in 1 2 3; do step small keel "$r"; step served keel "$r"; done
for where in small_embedded05 embedded05 small_embedded embedded; do step "$where" keel 1; done
for mode in aider-diff mini-swe-agent; do step small "$mode" 3; done
step served one-shot 3
for r in 1 2 3; do
  for mode in aider-whole aider-diff mini-swe-agent; do step served "$mode" "$r"; done
done
step small mini-textbased 1
for where in small_embedded05 small_embedded embedded05 embedded; do step "$where" keel 3; done
for where in small_embedded05 small_embedded; do step "$where" one-shot 3; done
step served mini-textbased 1
for where in embedded05 embedded; do step "$where" one-shot 3; done
for r in 2 3; do step small mini-textbased "$r"; step served mini-textbased "$r"; done
echo "$(date +%T) done" >> "$work/progress.log"
