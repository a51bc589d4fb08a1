#!/usr/bin/env bash
# Runs `searchd eval retrieval` on every labelled set in ../shared/eval, all
# modes, with the rule-based planner (no Ollama), and prints each set's
# table: scripts/eval.sh [MODEL_DIR] (default build/model).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-build/model}
eval=${DSEARCH_EVAL:-../shared/eval}
for set in locomo-dev ko-sts-dev ko-qa-dev xling-dev korean-dev; do
	echo "=== $set ($(basename "$(readlink -f "$model")"))"
	bin/searchd eval retrieval --export "$eval/$set" --queries "$eval/$set/queries.jsonl" --model "$model" --llm=false 2>&1 |
		grep -v '^time=' || true
done
