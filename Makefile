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

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./storage/...

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
