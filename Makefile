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

# Benchmark inputs are cached outside the clone, keyed by size.
CACHE       ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/dsearch
BENCH_N     ?= 650000
BENCH_EXPORT = $(CACHE)/synthetic-$(BENCH_N)

.PHONY: all build test vet fmt demo bench run run-dir clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/searchd ./searchd/cmd/searchd
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/dsearch-bot ./bot/cmd/dsearch-bot
	$(GO) build -o $(BIN)/dsearch-sample ./searchd/cmd/dsearch-sample

vet:
	$(GO) vet $(MODULES)
	@out=$$(gofmt -l searchd shared bot migrations); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

test: vet
	$(GO) test -count=1 $(MODULES)

fmt:
	gofmt -w searchd shared bot migrations

# run/ is the development socket directory; searchd refuses it unless 0700.
run-dir:
	@mkdir -p run && chmod 700 run

# The demo: build, import the sample export, print stats and a segment,
# then serve on the private socket, ask it over the socket, and stop.
demo: build run-dir
	@rm -rf $(DEMO_DATA) && mkdir -p $(BUILD)
	$(BIN)/dsearch-sample -out $(DEMO_SAMPLE)
	$(BIN)/searchd import --data $(DEMO_DATA) $(DEMO_SAMPLE)
	@echo '--- importing again changes nothing:'
	$(BIN)/searchd import --data $(DEMO_DATA) $(DEMO_SAMPLE)
	$(BIN)/searchd stats --data $(DEMO_DATA)
	$(BIN)/searchd segment --data $(DEMO_DATA) 4
	@echo '--- searchd serve on $(SOCKET)'
	@set -e; $(BIN)/searchd serve --data $(DEMO_DATA) --socket $(SOCKET) & pid=$$!; \
	trap 'kill $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 50); do [ -S $(SOCKET) ] && break; sleep 0.1; done; \
	$(BIN)/searchd status --socket $(SOCKET); \
	$(BIN)/dsearch-bot --socket $(SOCKET); \
	echo '--- curl --unix-socket $(SOCKET) http://searchd.sock/v1/segments/1'; \
	curl -sS --fail-with-body --unix-socket $(SOCKET) http://searchd.sock/v1/segments/1 | head -c 600; echo; \
	kill -INT $$pid; wait $$pid; trap - EXIT; \
	[ ! -e $(SOCKET) ] && echo '--- searchd stopped cleanly; socket removed'

# Serve the development database on run/searchd.sock until interrupted.
run: build run-dir
	$(BIN)/searchd serve --data $(BUILD)/data --socket $(SOCKET)

# Benchmarks: Go benchmarks, then the whole import of a synthetic
# 650,000-message export with the blog's gap quantiles (cached).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem $(MODULES)
	@if [ ! -f $(BENCH_EXPORT)/.done ]; then \
		echo "generating $(BENCH_N) messages into $(BENCH_EXPORT)"; \
		$(BIN)/dsearch-sample -synthetic $(BENCH_N) -out $(BENCH_EXPORT) >/dev/null && touch $(BENCH_EXPORT)/.done; fi
	@rm -rf $(BUILD)/bench-data
	/usr/bin/env time -f 'wall %es, max RSS %MKiB' $(BIN)/searchd import --data $(BUILD)/bench-data $(BENCH_EXPORT)
	$(BIN)/searchd stats --data $(BUILD)/bench-data

clean:
	rm -rf $(BIN) $(BUILD)
