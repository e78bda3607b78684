package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/mirrormsg"
)

// DescribeMirrors: v0 (KIP-1279, key 99; types in wire/mirrormsg)
//
// Behavior:
// * Per mirror, topic and partition: state, source high watermark,
//   destination log end, lag, Last Mirrored Epoch, the last error (tag 0)
//   and the offsets lost to the source's retention (tag 1). Null
//   MirrorNames describes every mirror; an unknown name gets
//   UNKNOWN_CLUSTER_MIRROR in its entry. Any broker answers; source
//   secrets are never returned.
// * The partitions live on the brokers leading them: the broker asked
//   gathers them with the same request, LocalOnly set (request tag 0, a
//   Strait extension), from every other live broker; a LocalOnly request
//   is answered with this broker's own partitions only.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyDescribeMirrors, min: 0, max: 0, served: servesMirror, handle: (*Server).handleDescribeMirrors})
}

func (s *Server) handleDescribeMirrors(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return mirrorAnswer(s.svc.Mirror.DescribeMirrors(ctx, kreq.(*mirrormsg.DescribeMirrorsRequest)))
}
