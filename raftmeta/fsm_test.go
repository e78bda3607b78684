package raftmeta

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFSM replays record batches written in a small text form (see
// parseRecord) and prints the delta and image each produces.
// Regenerate the expectations with -rewrite.
func TestFSM(t *testing.T) {
	st := &fsmState{fsm: NewFSM("test-cluster", nil)}
	st.fsm.Subscribe(func(d *Delta, _ *Image) { st.deltas = append(st.deltas, d) })
	datadriven.RunTest(t, "testdata/fsm", func(t *testing.T, td *datadriven.TestData) string {
		return st.cmd(t, td)
	})
}

type fsmState struct {
	fsm    *FSM
	index  uint64
	deltas []*Delta
}

func (st *fsmState) cmd(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "apply":
		var records []Record
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			r, err := parseRecord(line)
			if err != nil {
				td.Fatalf(t, "%s: %v", line, err)
			}
			records = append(records, r)
		}
		st.index++
		before := len(st.deltas)
		// Through raft's entry point, as the quorum applies it.
		res := st.fsm.Apply(&raft.Log{Index: st.index, Type: raft.LogCommand, Data: EncodeBatch(records)})
		if err, ok := res.(error); ok {
			if len(st.deltas) != before {
				td.Fatalf(t, "a dropped batch reached the subscribers")
			}
			return "error: " + err.Error()
		}
		if len(st.deltas) != before+1 {
			td.Fatalf(t, "subscriber saw %d deltas, want 1", len(st.deltas)-before)
		}
		return formatDelta(st.deltas[len(st.deltas)-1]) + formatImage(st.fsm.Image())
	case "image":
		return formatImage(st.fsm.Image())
	case "snapshot":
		// Persist the image as raft would, restore it into a fresh FSM and
		// compare.
		snap, _ := st.fsm.Snapshot()
		sink := &memSink{}
		if err := snap.Persist(sink); err != nil {
			td.Fatalf(t, "persist: %v", err)
		}
		fresh := NewFSM("test-cluster", nil)
		var got *Delta
		fresh.Subscribe(func(d *Delta, _ *Image) { got = d })
		if err := fresh.Restore(sink.reader()); err != nil {
			return "error: " + err.Error()
		}
		if !reflect.DeepEqual(fresh.Image(), st.fsm.Image()) {
			return "restored image differs:\n" + formatImage(fresh.Image())
		}
		return "restored identical image\nrestore " + formatDelta(got)
	}
	td.Fatalf(t, "unknown command %s", td.Cmd)
	return ""
}

type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) reader() *nopCloser {
	return &nopCloser{bytes.NewReader(s.Bytes())}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// testID is a readable uuid: n in the last byte.
func testID(n int) Uuid { return Uuid{15: byte(n)} }

func fmtID(u Uuid) string {
	if u == testID(int(u[15])) {
		return "#" + strconv.Itoa(int(u[15]))
	}
	return u.String()
}

func parseInt32s(s string) []int32 {
	if s == "" {
		return []int32{}
	}
	var out []int32
	for _, f := range strings.Split(s, ",") {
		n, _ := strconv.Atoi(f)
		out = append(out, int32(n))
	}
	return out
}

// parseRecord reads "kind key=value ...":
//
//	register-broker id= epoch= [fenced] [rack=] [endpoint=NAME:host:port] [incarnation=]
//	fence|unfence id= epoch=
//	broker-change id= epoch= [fence|unfence] [shutdown]
//	topic name= id=
//	partition topic= p= replicas=1,2 isr=1,2 leader= [leader-epoch=] [partition-epoch=]
//	change topic= p= [leader=] [isr=] [replicas=] [min-leader-epoch=]
//	remove-topic id=
//	config type=topic|broker|mirror name= key= [value=]
//	producer-ids broker= epoch= next=
//	acl id= type= name= pattern= principal= host= op= perm=
//	remove-acl id=
//	mirror name= id= [time=]
//	remove-mirror id=
func parseRecord(line string) (Record, error) {
	fields := strings.Fields(line)
	kind, args := fields[0], map[string]string{}
	flags := map[string]bool{}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			flags[f] = true
		}
	}
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(args[k], 10, 64)
		return n
	}
	id := func(k string) Uuid { return testID(int(num(k))) }
	switch kind {
	case "register-broker":
		r := &RegisterBrokerRecord{BrokerID: int32(num("id")), BrokerEpoch: num("epoch"), Rack: args["rack"], Fenced: flags["fenced"], IncarnationID: id("incarnation")}
		if ep, ok := args["endpoint"]; ok {
			parts := strings.Split(ep, ":")
			port, _ := strconv.Atoi(parts[2])
			r.EndPoints = []Endpoint{{Listener: parts[0], SecurityProtocol: parts[0], Host: parts[1], Port: int32(port)}}
		}
		return r, nil
	case "broker-change":
		r := &BrokerRegistrationChangeRecord{BrokerID: int32(num("id")), BrokerEpoch: num("epoch")}
		switch {
		case flags["fence"]:
			r.Fenced = FenceChangeFence
		case flags["unfence"]:
			r.Fenced = FenceChangeUnfence
		}
		if flags["shutdown"] {
			r.InControlledShutdown = 1
		}
		return r, nil
	case "fence":
		return &FenceBrokerRecord{ID: int32(num("id")), Epoch: num("epoch")}, nil
	case "unfence":
		return &UnfenceBrokerRecord{ID: int32(num("id")), Epoch: num("epoch")}, nil
	case "topic":
		return &TopicRecord{Name: args["name"], TopicID: id("id")}, nil
	case "partition":
		return &PartitionRecord{
			PartitionID: int32(num("p")), TopicID: id("topic"),
			Replicas: parseInt32s(args["replicas"]), ISR: parseInt32s(args["isr"]),
			Leader: int32(num("leader")), LeaderEpoch: int32(num("leader-epoch")), PartitionEpoch: int32(num("partition-epoch")),
		}, nil
	case "change":
		r := &PartitionChangeRecord{PartitionID: int32(num("p")), TopicID: id("topic"), Leader: NoLeaderChange, MinLeaderEpoch: int32(num("min-leader-epoch"))}
		if _, ok := args["leader"]; ok {
			r.Leader = int32(num("leader"))
		}
		if v, ok := args["isr"]; ok {
			r.ISR = parseInt32s(v)
		}
		if v, ok := args["replicas"]; ok {
			r.Replicas = parseInt32s(v)
		}
		return r, nil
	case "remove-topic":
		return &RemoveTopicRecord{TopicID: id("id")}, nil
	case "config":
		t := ConfigResourceTopic
		switch args["type"] {
		case "broker":
			t = ConfigResourceBroker
		case "mirror":
			t = ConfigResourceMirror
		}
		r := &ConfigRecord{ResourceType: t, ResourceName: args["name"], Name: args["key"]}
		if v, ok := args["value"]; ok {
			r.Value = &v
		}
		return r, nil
	case "producer-ids":
		return &ProducerIdsRecord{BrokerID: int32(num("broker")), BrokerEpoch: num("epoch"), NextProducerID: num("next")}, nil
	case "acl":
		return &AccessControlEntryRecord{ACL: ACLBinding{
			ID: id("id"), ResourceType: int8(num("type")), ResourceName: args["name"], PatternType: int8(num("pattern")),
			Principal: args["principal"], Host: args["host"], Operation: int8(num("op")), PermissionType: int8(num("perm")),
		}}, nil
	case "remove-acl":
		return &RemoveAccessControlEntryRecord{ID: id("id")}, nil
	case "mirror":
		return &MirrorRecord{Name: args["name"], MirrorID: id("id"), CreateTimeMs: num("time")}, nil
	case "remove-mirror":
		return &RemoveMirrorRecord{MirrorID: id("id")}, nil
	}
	return nil, fmt.Errorf("unknown record kind %q", kind)
}

func formatResource(r ConfigResource) string {
	switch r.Type {
	case ConfigResourceTopic:
		return "topic/" + r.Name
	case ConfigResourceBroker:
		return "broker/" + r.Name
	case ConfigResourceMirror:
		return "mirror/" + r.Name
	case ConfigResourceGroup:
		return "group/" + r.Name
	}
	return fmt.Sprintf("%d/%s", r.Type, r.Name)
}

func formatDelta(d *Delta) string {
	var b strings.Builder
	var names []string
	for _, t := range d.CreatedTopics {
		names = append(names, t.Name)
	}
	fmt.Fprintf(&b, "delta: created=%v", names)
	names = nil
	for _, t := range d.DeletedTopics {
		names = append(names, t.Name)
	}
	fmt.Fprintf(&b, " deleted=%v", names)
	names = nil
	for _, p := range d.ChangedPartitions {
		names = append(names, fmt.Sprintf("%s-%d", p.Topic, p.Index))
	}
	fmt.Fprintf(&b, " partitions=%v", names)
	names = nil
	for _, r := range d.ChangedConfigs {
		names = append(names, formatResource(r))
	}
	fmt.Fprintf(&b, " configs=%v brokers=%v acls=%v empty=%v%s\n", names, d.ChangedBrokers, d.ACLsChanged, d.Empty(), formatMirrorDelta(d))
	return b.String()
}

func formatImage(img *Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "offset=%d cluster=%s next-producer-id=%d\n", img.Offset, img.ClusterID, img.NextProducerID)
	for _, id := range slices.Sorted(maps.Keys(img.Brokers)) {
		br := img.Brokers[id]
		var eps []string
		for _, e := range br.Endpoints {
			eps = append(eps, fmt.Sprintf("%s://%s:%d", e.Listener, e.Host, e.Port))
		}
		cs := ""
		if br.InControlledShutdown {
			cs = " in-controlled-shutdown"
		}
		fmt.Fprintf(&b, "broker %d epoch=%d fenced=%v%s rack=%q incarnation=%s endpoints=%v\n", id, br.Epoch, br.Fenced, cs, br.Rack, fmtID(br.IncarnationID), eps)
	}
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		if img.TopicsByID[t.ID] != t {
			fmt.Fprintf(&b, "!! topic %s missing from TopicsByID\n", name)
		}
		fmt.Fprintf(&b, "topic %s id=%s\n", name, fmtID(t.ID))
		for _, p := range t.Partitions {
			fmt.Fprintf(&b, "  p%d replicas=%v isr=%v leader=%d leader-epoch=%d partition-epoch=%d\n",
				p.Index, p.Replicas, p.ISR, p.Leader, p.LeaderEpoch, p.PartitionEpoch)
		}
	}
	if len(img.TopicsByID) != len(img.Topics) {
		fmt.Fprintf(&b, "!! %d topics by id, %d by name\n", len(img.TopicsByID), len(img.Topics))
	}
	for _, res := range slices.SortedFunc(maps.Keys(img.Configs), compareResources) {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(img.Configs[res])) {
			kv = append(kv, k+"="+img.Configs[res][k])
		}
		fmt.Fprintf(&b, "config %s: %s\n", formatResource(res), strings.Join(kv, " "))
	}
	for _, a := range img.ACLs {
		fmt.Fprintf(&b, "acl %s %s %s %s %s %s %s %s\n", fmtID(a.ID), kmsg.ACLResourceType(a.ResourceType), a.ResourceName,
			kmsg.ACLResourcePatternType(a.PatternType), a.Principal, a.Host, kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.PermissionType))
	}
	b.WriteString(formatMirrors(img))
	return b.String()
}

// TestFSMDoesNotMutatePublishedImages applies batches touching every part
// of the image and checks that an image taken before each is unchanged.
func TestFSMDoesNotMutatePublishedImages(t *testing.T) {
	f := NewFSM("c", nil)
	batches := [][]string{
		{"register-broker id=1 epoch=1 endpoint=PLAINTEXT:h:1", "topic name=a id=1", "partition topic=1 p=0 replicas=1 isr=1 leader=1",
			"config type=topic name=a key=k value=v", "acl id=1 type=2 name=a pattern=3 principal=User:x host=* op=3 perm=3"},
		{"fence id=1 epoch=1", "change topic=1 p=0 leader=-1 isr=", "config type=topic name=a key=k2 value=v2",
			"partition topic=1 p=1 replicas=1 isr=1 leader=1", "acl id=2 type=2 name=b pattern=3 principal=User:x host=* op=3 perm=3"},
		{"unfence id=1 epoch=1", "broker-change id=1 epoch=1 shutdown", "remove-acl id=1", "config type=topic name=a key=k", "producer-ids broker=1 epoch=1 next=1000"},
		{"remove-topic id=1"},
	}
	for i, lines := range batches {
		var records []Record
		for _, l := range lines {
			r, err := parseRecord(l)
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, r)
		}
		before := f.Image()
		frozen := formatImage(before)
		var deep bytes.Buffer
		_ = writeSnapshot(&deep, before)
		if err := f.applyRecords(uint64(i+1), records); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		var again bytes.Buffer
		_ = writeSnapshot(&again, before)
		if got := formatImage(before); got != frozen || !bytes.Equal(deep.Bytes(), again.Bytes()) {
			t.Fatalf("batch %d mutated the previous image:\nbefore %s\nafter %s", i, frozen, got)
		}
	}
}
