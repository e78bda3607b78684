// Package bench is Strait's load generator: the workloads behind
// `strait bench` (produce, plain or transactional, consume, e2e, cluster,
// mirror), the side-by-side runs against franz-go's kfake, and the
// reporting of both with their ratio. With --rounds N a produce, consume
// or e2e run does so N times, the brokers alternating, and reports each
// row's median round (rounds.go); make bench runs three.
//
// `strait bench cluster` (RunCluster) starts its own `strait serve`
// children: one node measured with acks=1 and three nodes in KRaft combined
// mode measured with RF=3, min.insync.replicas=2 and acks=all, alternating in
// rounds (the median round's ratio is reported), then the latency at half
// the cluster's rate, against issue 29's targets.
//
// `strait bench mirror` (RunMirror) starts a source and a destination node
// and measures, in one run, the destination's produce rate, the source's
// catch-up fetch rate, a KIP-1279 mirror's catch-up of the same data, and
// the mirror lag while the source takes half the slower of those rates,
// against issue 5's targets.
//
// `strait bench scale` (RunScale) measures one node at growing partition
// counts (--partitions-steps, 10 partitions a topic), each step on a fresh
// `strait serve` child and a fresh kfake: topic creation, idle RSS and open
// file descriptors (/proc/<pid>), Metadata latency for all topics and for
// one from a kgo client, RSS and descriptors with --connections clients that
// each sent ApiVersions and Metadata and stay connected, produce throughput
// to every partition against the same broker's 8-partition run, and for
// Strait a clean shutdown (SIGTERM) and restart: exec until the broker
// answers Metadata with a topic led, the startup= of its ready line, RSS and
// every partition's end offset kept. RESULTS.md judges issue 29's targets at
// 10,000 partitions.
//
// `strait bench produce --transactional` (ProduceConfig.TxnRecords) sends
// each client's records in transactions of --txn-records (100 in `make
// bench`): begin, produce, flush, commit. The client is the same for both
// brokers, and both finalize transaction.version 2 (KIP-890 part 2), so
// kgo speaks it to each: partitions join a transaction implicitly with
// its first Produce, and every EndTxn bumps the producer epoch.
//
// `--tls` (produce, consume, e2e) runs both peers over TLS: the run makes a
// throwaway CA and a broker certificate (ECDSA P-256, in a temporary
// directory removed at the end), appends `--set ssl.keystore.*` and
// `ssl.truststore.*` (PEM) to the --target-cmd, whose listeners say which
// one is SSL, starts kfake with kfake.TLS on the same certificate, and gives
// every kgo client the CA as its only root (ProducerConfig.TLS). RESULTS.md
// then sets each TLS row beside its plaintext twin with the ratios of
// throughput and CPU per GiB (issue 25).
//
// `--profile DIR` (produce, consume, e2e; issue 29) writes each broker's Go
// profiles over each measured workload into DIR as
// <workload>-<broker>-{cpu,allocs,heap}.pb.gz, named in the report's
// results (Result.Profiles), for `go tool pprof`. A --target-cmd broker is
// given `--set metrics.listener=127.0.0.1:<free port> --set
// metrics.pprof.enable=true` (a broker started otherwise needs both set
// and --profile-url http://host:port), kfake-serve --pprof. The CPU
// profile is fetched in windows of --profile-window merged into one, the
// allocations are the workload's (the allocs profile at its end minus the
// one at its start), the heap is its end's (Profiler). Profiling costs the
// broker a little CPU (sampling at 100 Hz, a profile built per window),
// so a row measured with it is not a clean throughput figure.
//
// `strait bench limits` (package limits), printed before every run and in
// RESULTS.md, measures the machine the same minute: appending to a file
// with and without fsync, loopback TCP, sendfile, and writing memory new to
// the process against writing it again. Under a hypervisor with free page
// reporting (a virtio balloon that negotiated it, named in the limits),
// memory the guest frees goes back to the host and its next write waits
// for the host to back it again; a broker's new log data lands in such
// pages, as does a growing heap. What a row pays for it depends on what was
// freed when, so rounds of one row can differ there by more than any change
// of code: compare rows of one run, and repeat a run before reading a
// difference between two.
//
// Every workload is a library call (RunProduce, RunConsume, RunE2E) taking a
// bootstrap address, so tests and `make bench` drive the same code the CLI
// does. The clients are franz-go kgo clients configured identically for every
// broker, so a ratio compares brokers, not client settings.
//
// Units: MiB is 2^20 bytes (Kafka's ProducerPerformance also divides by
// 1024*1024 and calls it MB), GiB is 2^30 bytes; counted bytes are record
// value bytes, as ProducerPerformance counts record size.
//
// Broker cost (CPU seconds per GiB, resident memory) is read from
// /proc/<pid>, so it is only known for a broker running as a separate
// process: a --broker-pid, a --target-cmd child, kfake started as a child
// (the kfake-serve program of bench/cmd/kfake-serve, kept out of the strait
// binary so that a test broker does not ship in it: package kfakepeer),
// or each node of `strait bench cluster` (Result.NodeCosts).
// Timings are measured here and printed; no test asserts one (DESIGN.md §5).
package bench
