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

.PHONY: all build run test test-long bench bench-peer fuzz lint clean check-cc check-kcat check-kafka-python check-shells check-kafkajs

all: build

build:
	$(GO) build -o $(BIN) ./cmd/strait

run: build
	./$(BIN) serve

check-cc:
	@command -v $${CC:-cc} >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || { \
		echo "*** make test: no C compiler found; installing gcc for the race detector ***"; \
		(apt-get update -qq && apt-get install -y -qq gcc) || { echo "*** FAILED to install gcc: go test -race cannot run ***"; exit 1; }; }

# kcat (Debian's package; librdkafka inside) for broker/e2e's librdkafka
# tests. Without it they skip, and this says so.
check-kcat:
	@command -v kcat >/dev/null 2>&1 || { \
		echo "*** make test: kcat not found; installing Debian's kcat for the librdkafka tests ***"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat >/dev/null) || \
		echo "*** make test: could NOT install kcat: the librdkafka tests (broker/e2e TestKcat*) will SKIP ***"; }

# kafka-python (Debian's python3-kafka, into the system python3) for
# broker/e2e's kafka-python tests. Without it they skip, and this says so.
check-kafka-python:
	@/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || { \
		echo "*** make test: kafka-python not found; installing Debian's python3-kafka for the kafka-python tests ***"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-kafka >/dev/null) || \
		echo "*** make test: could NOT install python3-kafka: the kafka-python tests (broker/e2e TestKafkaPython*) will SKIP ***"; }

# zsh and fish (Debian's packages) for cmd/strait/ctl/completion's checks
# of `strait completion zsh|fish`. Without them those checks skip, and this
# says so.
check-shells:
	@command -v zsh >/dev/null 2>&1 && command -v fish >/dev/null 2>&1 || { \
		echo "*** make test: zsh or fish not found; installing Debian's zsh and fish for the completion script checks ***"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh fish >/dev/null) || \
		echo "*** make test: could NOT install zsh and fish: their completion script checks (cmd/strait/ctl/completion) will SKIP ***"; }

# kafkajs comes from the npm registry, which make test may not use; the
# kafkajs tests (broker/e2e TestKafkajs*) run in make test-long, and skip
# loudly wherever it is not installed.
KAFKAJS_DIR ?= $(CURDIR)/.cache/kafkajs
KAFKAJS     := kafkajs@2.2.4

check-kafkajs:
	@test -f $(KAFKAJS_DIR)/node_modules/kafkajs/package.json || { \
		echo "*** make test-long: installing $(KAFKAJS) with npm into $(KAFKAJS_DIR) for the kafkajs tests ***"; \
		(command -v npm >/dev/null 2>&1 && mkdir -p $(KAFKAJS_DIR) && \
		 npm install --prefix $(KAFKAJS_DIR) --no-save --no-audit --no-fund $(KAFKAJS) >/dev/null) || \
		echo "*** make test-long: could NOT install kafkajs (is Node.js installed?): the kafkajs tests will SKIP ***"; }

test: check-cc check-kcat check-kafka-python check-shells
	@test -f $(KAFKAJS_DIR)/node_modules/kafkajs/package.json || \
		echo "*** make test: kafkajs is not installed: the kafkajs tests (broker/e2e TestKafkajs*) SKIP; make test-long installs it with npm ***"
	@test "$$(id -u)" = 0 || \
		echo "*** make test: not root: the disk-failure tests (broker/e2e TestFailedDisk*, TestFailedMetadataDisk*, TestFullDisk*: chattr +i, a tmpfs mount) SKIP ***"
	$(GO) vet $(PKGS)
	@mkdir -p .cache
	@{ $(GO) test -race -count=1 -timeout 8m $(PKGS); echo $$? > .cache/test.rc; } 2>&1 | tee .cache/test.log
	@rc=$$(cat .cache/test.rc); test "$$rc" = 0 || { $(FAILURE_SUMMARY); exit $$rc; }

# A failing run's output ends with a dump of every broker process's log, so
# the lines that say what failed are repeated last, where a log tail shows
# them: failed tests, their t.Fatal/t.Error lines (not the log dumps), panics
# and data races.
FAILURE_SUMMARY = echo "*** make test FAILED; the failures, repeated from above: ***"; \
	grep -E -- '^[[:space:]]*(--- FAIL|FAIL|panic:|WARNING: DATA RACE|[^[:space:]]+_test\.go:[0-9]+: )' .cache/test.log \
	| grep -v -E '_test\.go:[0-9]+: stderr of ' | tail -n 60

test-long: check-cc check-kcat check-kafka-python check-shells check-kafkajs
	STRAIT_KAFKAJS_DIR=$(KAFKAJS_DIR) $(GO) test -race -count=1 -tags long -timeout 80m $(PKGS)

BENCH_DATA ?= /tmp/strait-bench-data
BENCH_SERVE = ./$(BIN) serve --set log.dirs=$(BENCH_DATA) --set listeners=PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093 --set controller.quorum.voters=1@127.0.0.1:29093 --set metrics.listener=
# The same node with its client listener SSL; --tls appends the keystore and
# truststore it makes for the run.
BENCH_SERVE_TLS = ./$(BIN) serve --set log.dirs=$(BENCH_DATA) --set listeners=SSL://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093 \
	--set listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT --set inter.broker.listener.name=SSL \
	--set controller.quorum.voters=1@127.0.0.1:29093 --set metrics.listener=

# Storage micro-benchmarks (their go test output kept in $(BENCH_OUT)),
# then the standard matrix, each command writing its --json report into
# $(BENCH_OUT), then `strait bench report` turning all of them into
# bench/RESULTS.md and bench/results.png. The matrix: the machine's
# limits; 1 KiB records in 16 KiB batches, Strait and franz-go's kfake side by
# side, produce with acks=1 and acks=all on 1 and 8 partitions, catch-up and
# tail reads on 1 and 8 partitions (issue 3's figures); produce acks=1 and
# catch-up on 8 partitions again over TLS, both brokers with an SSL listener,
# for what TLS costs beside the plaintext rows (issue 25's); transactional produce,
# 100 records a transaction, acks=all, on 1 and 8 partitions (issue 23's); a
# KIP-848 consumer group of 3 members catching up on 8 partitions (issue
# 24's); one
# node with acks=1 against three nodes (RF=3, min.insync.replicas=2) with
# acks=all, and latency at half the three nodes' rate (issue 4's); mirroring
# between two single nodes, catch-up and lag at half the slower rate (issue
# 5's); produce (RF=3, acks=all) to three nodes of four, steady, then while
# a reassignment moves BENCH_MOVE_BYTES to the fourth node, then while it
# moves them back throttled at BENCH_MOVE_THROTTLE (issue 32's); one node
# at 100, 1,000 and 10,000 partitions with 1,000 connections, Strait and
# kfake, producing to every partition for BENCH_SCALE_SECS against 8, and
# Strait restarted (issue 29's scale rows). The produce and consume rows
# run BENCH_ROUNDS rounds, Strait and kfake alternating, and report each
# row's median round (bench/rounds.go): single runs moved by more than the
# changes measured. BENCH_BYTES
# and BENCH_SECS keep the whole target under 10 minutes on a 2-core machine;
# a failing command is noted in $(BENCH_OUT)/FAILED and the rest still run,
# so the report shows its errors; the target then fails.
BENCH_OUT ?= /tmp/strait-bench-json
BENCH_BYTES ?= 256MiB
BENCH_SECS ?= 10s
BENCH_MOVE_BYTES ?= 1GiB
BENCH_MOVE_THROTTLE ?= 32MiB
BENCH_MOVE_SECS ?= 5s
BENCH_STORAGE_TIME ?= 1s
BENCH_SCALE_SECS ?= 5s
BENCH_LOAD = --record-size 1KiB --batch-bytes 16KiB --limits=false --json
BENCH_ROUNDS ?= 3
BENCH_PEERS = --target 127.0.0.1:29092 --target-cmd "$(BENCH_SERVE)" --peer kfake --rounds $(BENCH_ROUNDS)
BENCH_PEERS_TLS = --tls --target 127.0.0.1:29092 --target-cmd "$(BENCH_SERVE_TLS)" --peer kfake --rounds $(BENCH_ROUNDS)
# The kfake peer is its own program (bench/cmd/kfake-serve) so that kfake
# stays out of the shipped strait binary; --peer kfake finds it beside
# bin/strait.
bench-peer:
	$(GO) build -o bin/kfake-serve ./bench/cmd/kfake-serve

bench: build bench-peer
	rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT)
	{ $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCH_STORAGE_TIME) -timeout 30m ./storage/... 2>&1 \
		|| echo 05-storage-bench >> $(BENCH_OUT)/FAILED; } | tee $(BENCH_OUT)/05-storage-bench.txt
	mkdir -p $(BENCH_DATA)
	./$(BIN) bench limits --dir $(BENCH_DATA) --time 500ms --json > $(BENCH_OUT)/00-limits.json \
		|| echo 00-limits >> $(BENCH_OUT)/FAILED
	for acks in 1 all; do for p in 1 8; do \
		rm -rf $(BENCH_DATA); \
		./$(BIN) bench produce $(BENCH_PEERS) $(BENCH_LOAD) --acks $$acks --partitions $$p \
			--bytes $(BENCH_BYTES) > $(BENCH_OUT)/10-produce-acks$$acks-p$$p.json \
			|| echo 10-produce-acks$$acks-p$$p >> $(BENCH_OUT)/FAILED; \
	done; done
	rm -rf $(BENCH_DATA)
	./$(BIN) bench produce $(BENCH_PEERS_TLS) $(BENCH_LOAD) --acks 1 --partitions 8 \
		--bytes $(BENCH_BYTES) > $(BENCH_OUT)/12-produce-tls-acks1-p8.json \
		|| echo 12-produce-tls-acks1-p8 >> $(BENCH_OUT)/FAILED
	for p in 1 8; do \
		rm -rf $(BENCH_DATA); \
		./$(BIN) bench produce $(BENCH_PEERS) $(BENCH_LOAD) --transactional --txn-records 100 --acks all --partitions $$p \
			--bytes $(BENCH_BYTES) > $(BENCH_OUT)/15-produce-txn-p$$p.json \
			|| echo 15-produce-txn-p$$p >> $(BENCH_OUT)/FAILED; \
	done
	for p in 1 8; do \
		rm -rf $(BENCH_DATA); \
		./$(BIN) bench consume $(BENCH_PEERS) $(BENCH_LOAD) --partitions $$p \
			--bytes $(BENCH_BYTES) --tail-duration 3s > $(BENCH_OUT)/20-consume-p$$p.json \
			|| echo 20-consume-p$$p >> $(BENCH_OUT)/FAILED; \
	done
	rm -rf $(BENCH_DATA)
	./$(BIN) bench consume $(BENCH_PEERS_TLS) $(BENCH_LOAD) --partitions 8 \
		--bytes $(BENCH_BYTES) --tail-duration 0 > $(BENCH_OUT)/22-consume-tls-p8.json \
		|| echo 22-consume-tls-p8 >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench consume $(BENCH_PEERS) $(BENCH_LOAD) --partitions 8 --bytes $(BENCH_BYTES) --tail-duration 0 \
		--group-members 3 --group-protocol consumer > $(BENCH_OUT)/25-consume-group848-p8.json \
		|| echo 25-consume-group848-p8 >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench cluster --data-dir $(BENCH_DATA) $(BENCH_LOAD) --partitions 8 \
		--bytes $(BENCH_BYTES) --latency-duration $(BENCH_SECS) > $(BENCH_OUT)/30-cluster.json \
		|| echo 30-cluster >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench mirror --data-dir $(BENCH_DATA) $(BENCH_LOAD) --partitions 8 \
		--bytes $(BENCH_BYTES) --steady-duration $(BENCH_SECS) > $(BENCH_OUT)/40-mirror.json \
		|| echo 40-mirror >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench reassign --data-dir $(BENCH_DATA) $(BENCH_LOAD) --partitions 8 \
		--move-bytes $(BENCH_MOVE_BYTES) --throttle $(BENCH_MOVE_THROTTLE) --duration $(BENCH_MOVE_SECS) > $(BENCH_OUT)/45-reassign.json \
		|| echo 45-reassign >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench scale --data-dir $(BENCH_DATA) $(BENCH_LOAD) --peer kfake --produce-duration $(BENCH_SCALE_SECS) \
		> $(BENCH_OUT)/50-scale.json || echo 50-scale >> $(BENCH_OUT)/FAILED
	rm -rf $(BENCH_DATA)
	./$(BIN) bench report --out bench/RESULTS.md --chart bench/results.png $(BENCH_OUT)/*.json $(BENCH_OUT)/*.txt
	@if [ -e $(BENCH_OUT)/FAILED ]; then echo "bench: failed:" $$(cat $(BENCH_OUT)/FAILED) "(reports in $(BENCH_OUT))"; exit 1; fi

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
