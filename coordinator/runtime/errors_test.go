package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A failed append reaches the client as a coordinator error when the
// client would not retry the append's own error correctly.
func TestAppendErrorCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want *kerr.Error
	}{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable},
		{fmt.Errorf("append: %w", kerr.RequestTimedOut), kerr.CoordinatorNotAvailable},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator},
		{kerr.KafkaStorageError, kerr.NotCoordinator},
		{kerr.RecordListTooLarge, kerr.UnknownServerError},
		{kerr.NetworkException, kerr.CoordinatorLoadInProgress},
		{kerr.InvalidProducerEpoch, kerr.InvalidProducerEpoch},
		{context.DeadlineExceeded, kerr.CoordinatorNotAvailable},
		{errors.New("disk on fire"), kerr.UnknownServerError},
	} {
		if got := AppendErrorCode(c.err); got != c.want.Code {
			t.Errorf("AppendErrorCode(%v) = %d, want %d (%s)", c.err, got, c.want.Code, c.want.Message)
		}
	}
	if got := AppendErrorCode(nil); got != 0 {
		t.Errorf("AppendErrorCode(nil) = %d, want 0", got)
	}
}
