package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The mirror RPCs (94_create_mirror.go ... 105_bump_leader_epochs.go) are
// registered like every other key, with servesMirror as their served
// condition: a server built without a MirrorService leaves them out of its
// API table, so ApiVersions never lists a mirror key that would not work
// and a request for one is refused as for any unknown key. A source
// cluster that does not advertise ReadMirrorStates is read as having no
// Last Mirrored Epoch record (KIP-1279, PREPARING), which is only true if
// it really cannot answer.

// servesMirror reports whether svc has a MirrorService.
func servesMirror(svc Services) bool { return svc.Mirror != nil }

// mirrorAnswer passes a MirrorService response on. A nil one fails the
// request, which closes the connection and is logged, rather than
// panicking in the encoder and taking the broker down with it.
func mirrorAnswer[R interface {
	comparable
	kmsg.Response
}](resp R) (kmsg.Response, error) {
	var none R
	if resp == none {
		// Key needs no receiver: the generated method ignores it.
		return nil, fmt.Errorf("wire: the mirror service returned no %s response", NameForKey(none.Key()))
	}
	return resp, nil
}
