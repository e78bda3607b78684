package mirrormsg_test

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestErrors checks the codes and names of the digest §2.3, and that the
// lookup answers them before kerr (which has other errors at 134-136).
func TestErrors(t *testing.T) {
	want := map[int16]string{
		134: "READ_ONLY_TOPIC",
		136: "CLUSTER_MIRROR_ALREADY_EXISTS",
		137: "UNKNOWN_CLUSTER_MIRROR",
		138: "TOPIC_ALREADY_IN_CLUSTER_MIRROR",
		139: "TOPIC_NOT_IN_CLUSTER_MIRROR",
		140: "MIRROR_TOPIC_ALREADY_PAUSED",
		141: "MIRROR_TOPIC_NOT_PAUSED",
		142: "MIRROR_TOPIC_BEING_STOPPED",
		143: "CLUSTER_MIRROR_NOT_EMPTY",
		144: "CLUSTER_MIRROR_AUTHORIZATION_FAILED",
		145: "INVALID_CLUSTER_MIRROR_STATES",
		146: "MIRROR_TOPIC_NOT_STOPPED",
	}
	found := 0
	for code := int16(134); code <= 146; code++ {
		name, ok := want[code]
		if !ok {
			if got, std := mirrormsg.ErrorForCode(code), kerr.ErrorForCode(code); got != std {
				t.Errorf("code %d: %v, want kerr's %v", code, got, std)
			}
			continue
		}
		err := mirrormsg.ErrorForCode(code)
		var ke *kerr.Error
		if !errors.As(err, &ke) || ke.Code != code || ke.Message != name || ke.Description == "" || ke.Retriable {
			t.Errorf("code %d: %#v, want %s", code, err, name)
			continue
		}
		if typed := mirrormsg.TypedErrorForCode(code); typed != ke {
			t.Errorf("code %d: TypedErrorForCode %v", code, typed)
		}
		found++
	}
	if found != len(want) {
		t.Fatalf("%d mirror errors, want %d", found, len(want))
	}
	if !errors.Is(mirrormsg.ErrorForCode(134), mirrormsg.ReadOnlyTopic) {
		t.Error("ErrorForCode(134) is not ReadOnlyTopic")
	}
	if mirrormsg.ErrorForCode(0) != nil || mirrormsg.TypedErrorForCode(0) != nil {
		t.Error("code 0 is not nil")
	}
	if mirrormsg.ErrorForCode(3) != kerr.UnknownTopicOrPartition || mirrormsg.ErrorForCode(9999) != kerr.UnknownServerError {
		t.Error("codes outside 134-146 do not fall back to kerr")
	}
	if got := mirrormsg.ReadOnlyTopic.Error(); got != "READ_ONLY_TOPIC: The topic is read-only." {
		t.Errorf("ReadOnlyTopic.Error() = %q", got)
	}
}
