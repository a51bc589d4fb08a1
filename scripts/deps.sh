#!/usr/bin/env bash
# Fetches or builds what hugot's ONNX Runtime backend needs, into a cache
# outside the clone keyed by version, and reuses it when present:
#   - libonnxruntime (>= 1.23), taken from the npm package onnxruntime-node,
#     which ships it for Linux and macOS (x64, arm64);
#   - libtokenizers.a, built with cargo from the Rust sources of the
#     github.com/daulet/tokenizers module version that hugot requires.
# Then writes build/deps.mk for the Makefile.
set -euo pipefail
cd "$(dirname "$0")/.."

ORT_VERSION=1.23.2
CACHE=${DSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsearch}
TOK_VERSION=$(cd searchd && go list -m -f '{{.Version}}' github.com/daulet/tokenizers)

case "$(uname -s)-$(uname -m)" in
Linux-x86_64)  plat=linux/x64;    lib=libonnxruntime.so.1; name=libonnxruntime.so ;;
Linux-aarch64) plat=linux/arm64;  lib=libonnxruntime.so.1; name=libonnxruntime.so ;;
Darwin-arm64)  plat=darwin/arm64; lib=libonnxruntime.$ORT_VERSION.dylib; name=libonnxruntime.dylib ;;
Darwin-x86_64) plat=darwin/x64;   lib=libonnxruntime.$ORT_VERSION.dylib; name=libonnxruntime.dylib ;;
*) echo "deps: no ONNX Runtime build for $(uname -sm); use the pure-Go backend (--embed-backend go)" >&2; exit 1 ;;
esac

ort_dir=$CACHE/onnxruntime-$ORT_VERSION
tok_dir=$CACHE/tokenizers-$TOK_VERSION

if [ ! -f "$ort_dir/$name" ]; then
	echo "deps: fetching ONNX Runtime $ORT_VERSION (npm onnxruntime-node)"
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack "onnxruntime-node@$ORT_VERSION" --silent >/dev/null &&
		tar xzf "onnxruntime-node-$ORT_VERSION.tgz" "package/bin/napi-v6/$plat/$lib")
	mkdir -p "$ort_dir"
	cp "$tmp/package/bin/napi-v6/$plat/$lib" "$ort_dir/$name.tmp" && mv "$ort_dir/$name.tmp" "$ort_dir/$name"
	rm -rf "$tmp"
fi

if [ ! -f "$tok_dir/libtokenizers.a" ]; then
	echo "deps: building libtokenizers.a $TOK_VERSION with cargo (a few minutes)"
	src=$(cd searchd && go mod download -json "github.com/daulet/tokenizers@$TOK_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	tmp=$(mktemp -d)
	cp -R "$src/." "$tmp/"
	chmod -R u+w "$tmp"
	# The crate pins tiktoken-rs to a git branch; only crates.io is
	# reachable here, and its 0.7.0 release builds the same C API.
	sed -i.orig 's|^tiktoken-rs = .*|tiktoken-rs = "=0.7.0"|' "$tmp/Cargo.toml"
	rm -f "$tmp/Cargo.lock"
	(cd "$tmp" && cargo build --release --quiet)
	mkdir -p "$tok_dir"
	cp "$tmp/target/release/libtokenizers.a" "$tok_dir/libtokenizers.a.tmp" && mv "$tok_dir/libtokenizers.a.tmp" "$tok_dir/libtokenizers.a"
	rm -rf "$tmp"
fi

mkdir -p build
cat > build/deps.mk <<MK
# Written by scripts/deps.sh.
ORT_LIB_DIR := $ort_dir
TOKENIZERS_LIB_DIR := $tok_dir
MK
echo "deps: ONNX Runtime in $ort_dir, libtokenizers.a in $tok_dir"
