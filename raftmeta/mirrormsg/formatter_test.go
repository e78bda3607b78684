package mirrormsg_test

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestRequestFormatter frames every request with kmsg's RequestFormatter,
// the code kgo writes requests with, and reads the frame back the way the
// wire server does: size, request header v2 (key, version, correlation id,
// int16-length client id, tagged fields: flexible requests get the flexible
// header), then the body with the request type RequestForKey returns.
func TestRequestFormatter(t *testing.T) {
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("strait-test"))
	for i, a := range mirrormsg.APIs {
		req := a.NewRequest()
		req.SetVersion(a.Max)
		(&filler{t: t, rng: rand.New(rand.NewPCG(9, uint64(i))), full: true}).fillMessage(req)
		corr := int32(1000 + i)
		frame := formatter.AppendRequest(nil, req, corr)

		if size := int(binary.BigEndian.Uint32(frame)); size != len(frame)-4 {
			t.Fatalf("%s: size %d, frame holds %d", a.Name, size, len(frame)-4)
		}
		h := frame[4:]
		key, version := int16(binary.BigEndian.Uint16(h)), int16(binary.BigEndian.Uint16(h[2:]))
		gotCorr := int32(binary.BigEndian.Uint32(h[4:]))
		idLen := int(binary.BigEndian.Uint16(h[8:]))
		clientID := string(h[10 : 10+idLen])
		h = h[10+idLen:]
		if key != a.Key || version != a.Max || gotCorr != corr || clientID != "strait-test" {
			t.Fatalf("%s: header key %d v%d corr %d client %q", a.Name, key, version, gotCorr, clientID)
		}
		if !req.IsFlexible() {
			t.Fatalf("%s v%d: not flexible", a.Name, version)
		}
		if h[0] != 0 { // no header tags
			t.Fatalf("%s: header tagged fields % x", a.Name, h[0])
		}
		body := h[1:]

		got := mirrormsg.RequestForKey(key)
		got.SetVersion(version)
		if err := got.ReadFrom(body); err != nil {
			t.Fatalf("%s: decode the framed body: %v", a.Name, err)
		}
		if !reflect.DeepEqual(got, req) {
			t.Fatalf("%s: framed and decoded\ngot  %+v\nwant %+v", a.Name, got, req)
		}
	}
}
