# Strait — a Kafka-compatible broker with built-in cluster mirroring (KIP-1279).
#
#   make run        build and start a single-node broker on 127.0.0.1:9092, data in ./data
#   make test       the whole test suite (race detector on, fuzz seed corpora included)
#   make test-long  soak and chaos suites (build tag "long")
#   make bench      benchmarks
#   make fuzz       run every fuzz target for FUZZTIME each
#   make lint       gofmt, go vet and the lint tests

GO        ?= go
BIN       := bin/strait
PKGS      := ./...
FUZZTIME  ?= 30s
# The race detector needs cgo and a C compiler.
export CGO_ENABLED := 1

.PHONY: all build run test test-long bench fuzz lint clean check-cc

all: build

build:
	$(GO) build -o $(BIN) ./cmd/strait

run: build
	./$(BIN) serve

check-cc:
	@command -v $${CC:-cc} >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || { \
		echo "*** make test: no C compiler found; installing gcc for the race detector ***"; \
		(apt-get update -qq && apt-get install -y -qq gcc) || { echo "*** FAILED to install gcc: go test -race cannot run ***"; exit 1; }; }

test: check-cc
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 8m $(PKGS)

test-long: check-cc
	$(GO) test -race -count=1 -tags long -timeout 80m $(PKGS)

BENCH_DATA ?= /tmp/strait-bench-data
BENCH_SERVE = ./$(BIN) serve --set log.dirs=$(BENCH_DATA) --set listeners=PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093 --set controller.quorum.voters=1@127.0.0.1:29093 --set metrics.listener=

# Storage micro-benchmarks, then Strait and franz-go's kfake side by side:
# 1 KiB records, 16 KiB batches, acks=1, 8 partitions, 1 GiB produced and
# read back from offset 0 (the figures issue 3 names). Then the same load on
# one node with acks=1 and on three nodes (RF=3, min.insync.replicas=2) with
# acks=all, and latency at half the three nodes' rate (issue 4's figures).
# Then mirroring between two single nodes: the destination's produce rate,
# the source's catch-up fetch rate and a mirror's catch-up of the same 1 GiB,
# and the lag at half the slower rate for 30 s (issue 5's figures).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./storage/...
	rm -rf $(BENCH_DATA)
	./$(BIN) bench produce --target 127.0.0.1:29092 --target-cmd "$(BENCH_SERVE)" --peer kfake \
		--acks 1 --partitions 8 --record-size 1KiB --batch-bytes 16KiB --bytes 1GiB --limits-dir /tmp
	./$(BIN) bench consume --target 127.0.0.1:29092 --target-cmd "$(BENCH_SERVE)" --peer kfake \
		--partitions 8 --bytes 1GiB --limits=false
	rm -rf $(BENCH_DATA)
	./$(BIN) bench cluster --data-dir $(BENCH_DATA) --partitions 8 --record-size 1KiB --batch-bytes 16KiB \
		--bytes 1GiB --latency-duration 30s --limits=false
	rm -rf $(BENCH_DATA)
	./$(BIN) bench mirror --data-dir $(BENCH_DATA) --partitions 8 --record-size 1KiB --batch-bytes 16KiB \
		--bytes 1GiB --steady-duration 30s --limits=false
	rm -rf $(BENCH_DATA)

# Each fuzz target runs on its own: go test allows one -fuzz pattern per package.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -run 'TestLint' $(PKGS)

clean:
	rm -rf bin
