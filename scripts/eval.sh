#!/usr/bin/env bash
# Runs `searchd eval retrieval` on every labelled set in ../shared/eval, all
# modes, with the rule-based planner (no Ollama), and prints each set's
# table: scripts/eval.sh [MODEL_DIR] (default build/model). With
# DSEARCH_EVAL_KEEP=DIR each set's embedded scratch database is kept under
# DIR (one per set and model) and reused by the next run, which then
# embeds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-build/model}
eval=${DSEARCH_EVAL:-../shared/eval}
name=$(basename "$(readlink -f "$model")")
for set in locomo-dev ko-sts-dev ko-qa-dev xling-dev korean-dev; do
	keep=()
	if [ -n "${DSEARCH_EVAL_KEEP:-}" ]; then
		keep=(--keep "$DSEARCH_EVAL_KEEP/$set-$name")
	fi
	echo "=== $set ($name)"
	bin/searchd eval retrieval --export "$eval/$set" --queries "$eval/$set/queries.jsonl" --model "$model" --llm=false "${keep[@]}" 2>&1 |
		grep -v '^time=' || true
done
