package replication

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// FetchResult is a Fetch answer whose record data stays in the segment
// files: Slices[i][j] holds the data of Resp.Topics[i].Partitions[j] (whose
// Records field is left nil), so the response writer can send it without
// copying it through Go memory. replication owns it so that it need not
// import wire; wire.FetchResult has the same fields, and broker/ converts
// one into the other without a copy.
type FetchResult struct {
	Resp   *kmsg.FetchResponse
	Slices [][]storage.FileSlice
}
