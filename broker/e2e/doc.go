// Package e2e holds end-to-end tests that run the strait binary the way a
// user does (DESIGN.md §5, "End-to-end tests start the strait binary"):
// TestMain builds ./cmd/strait once into a temporary directory with the go
// tool that runs the tests, and each test starts it with `strait serve
// --set ...`, talks to it with franz-go over real sockets, and stops it
// with signals (SIGTERM for a graceful stop, SIGKILL for a crash).
//
// The package has no code outside its tests. Longer variants (more
// records, repeated crashes) are behind the "long" build tag.
package e2e
