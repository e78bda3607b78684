package raftmeta

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
)

// A snapshot is the image written as the records that rebuild it, the way
// KRaft writes its snapshots (MetadataImage.write):
//
//	magic "SMS" version:int8 offset:uvarint clusterID:string batch
//
// where batch is EncodeBatch of ImageRecords(img).

var snapshotMagic = []byte("SMS")

const snapshotVersion int8 = 0

// maxSnapshotBytes bounds what Restore reads into memory.
const maxSnapshotBytes = 1 << 30

func writeSnapshot(w io.Writer, img *Image) error {
	b := append([]byte(nil), snapshotMagic...)
	b = append(b, byte(snapshotVersion))
	b = binary.AppendUvarint(b, img.Offset)
	b = appendString(b, img.ClusterID)
	b = append(b, EncodeBatch(ImageRecords(img))...)
	_, err := w.Write(b)
	return err
}

func readSnapshot(r io.Reader) (*Image, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSnapshotBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSnapshotBytes {
		return nil, fmt.Errorf("snapshot larger than %d bytes", maxSnapshotBytes)
	}
	if !bytes.HasPrefix(data, snapshotMagic) {
		return nil, fmt.Errorf("%w: not a metadata snapshot", ErrCorruptBatch)
	}
	d := decoder{b: data[len(snapshotMagic):]}
	if v := d.int8raw(); d.err == nil && v != snapshotVersion {
		return nil, fmt.Errorf("%w: snapshot version %d not supported (max %d)", ErrCorruptBatch, v, snapshotVersion)
	}
	offset := d.uvarint()
	clusterID := d.string()
	if d.err != nil {
		return nil, d.err
	}
	records, err := DecodeBatch(d.b)
	if err != nil {
		return nil, err
	}
	empty := EmptyImage()
	empty.ClusterID = clusterID
	b := newBuilder(empty, offset)
	if err := b.replay(records); err != nil {
		return nil, err
	}
	b.next.Offset = offset
	return b.next, nil
}

// ImageRecords returns records that rebuild img from the empty image, in a
// fixed order: brokers by id (with their controlled shutdown), topics by name each followed by its
// partitions, mirrors by name, configs by resource and key, ACLs as stored,
// SCRAM credentials by mechanism and user, the forwarded requests' answers
// by broker, and the producer id counter.
func ImageRecords(img *Image) []Record {
	var out []Record
	for _, id := range slices.Sorted(maps.Keys(img.Brokers)) {
		br := img.Brokers[id]
		out = append(out, &RegisterBrokerRecord{
			BrokerID:      br.ID,
			IncarnationID: br.IncarnationID,
			BrokerEpoch:   br.Epoch,
			EndPoints:     br.Endpoints,
			Rack:          br.Rack,
			Fenced:        br.Fenced,
			LogDirs:       br.LogDirs,
		})
		if br.InControlledShutdown {
			out = append(out, &BrokerRegistrationChangeRecord{BrokerID: br.ID, BrokerEpoch: br.Epoch, InControlledShutdown: 1})
		}
	}
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		out = append(out, &TopicRecord{Name: t.Name, TopicID: t.ID})
		for _, p := range t.Partitions {
			out = append(out, &PartitionRecord{
				PartitionID:      p.Index,
				TopicID:          t.ID,
				Replicas:         p.Replicas,
				ISR:              p.ISR,
				Leader:           p.Leader,
				LeaderEpoch:      p.LeaderEpoch,
				PartitionEpoch:   p.PartitionEpoch,
				AddingReplicas:   p.AddingReplicas,
				RemovingReplicas: p.RemovingReplicas,
			})
		}
	}
	// Mirrors before the configs: a MIRROR config needs its mirror.
	out = appendMirrorRecords(out, img)
	resources := slices.SortedFunc(maps.Keys(img.Configs), compareResources)
	for _, res := range resources {
		for _, k := range slices.Sorted(maps.Keys(img.Configs[res])) {
			v := img.Configs[res][k]
			out = append(out, &ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k, Value: &v})
		}
	}
	for _, a := range img.ACLs {
		out = append(out, &AccessControlEntryRecord{ACL: a})
	}
	out = appendScramRecords(out, img)
	out = appendClientQuotaRecords(out, img)
	out = appendForwardedRecords(out, img)
	out = appendFeatureRecords(out, img)
	if img.NextProducerID > 0 {
		out = append(out, &ProducerIdsRecord{BrokerID: -1, BrokerEpoch: -1, NextProducerID: img.NextProducerID})
	}
	return out
}

func compareResources(a, b ConfigResource) int {
	return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Name, b.Name))
}

// diffImages is the delta that takes a subscriber from prev to next when
// next did not come from replaying records on prev (a restored snapshot).
func diffImages(prev, next *Image) *Delta {
	d := &Delta{ACLsChanged: !slices.Equal(prev.ACLs, next.ACLs), ScramChanged: scramDiffers(prev, next), ClientQuotasChanged: clientQuotasDiffer(prev, next)}
	for id, t := range next.TopicsByID {
		old, ok := prev.TopicsByID[id]
		if !ok {
			d.CreatedTopics = append(d.CreatedTopics, t)
		}
		for i, p := range t.Partitions {
			if !ok || i >= len(old.Partitions) || !reflect.DeepEqual(*old.Partitions[i], *p) {
				d.ChangedPartitions = append(d.ChangedPartitions, p)
			}
		}
	}
	for id, t := range prev.TopicsByID {
		if _, ok := next.TopicsByID[id]; !ok {
			d.DeletedTopics = append(d.DeletedTopics, t)
		}
	}
	for res, m := range next.Configs {
		if !maps.Equal(prev.Configs[res], m) {
			d.ChangedConfigs = append(d.ChangedConfigs, res)
		}
	}
	for res := range prev.Configs {
		if _, ok := next.Configs[res]; !ok {
			d.ChangedConfigs = append(d.ChangedConfigs, res)
		}
	}
	for id, br := range next.Brokers {
		if old, ok := prev.Brokers[id]; !ok || !reflect.DeepEqual(*old, *br) {
			d.ChangedBrokers = append(d.ChangedBrokers, id)
		}
	}
	for id := range prev.Brokers {
		if _, ok := next.Brokers[id]; !ok {
			d.ChangedBrokers = append(d.ChangedBrokers, id)
		}
	}
	diffMirrors(d, prev, next)
	byName := func(a, b *Topic) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(d.CreatedTopics, byName)
	slices.SortFunc(d.DeletedTopics, byName)
	slices.SortFunc(d.ChangedPartitions, func(a, b *Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Index, b.Index))
	})
	slices.SortFunc(d.ChangedConfigs, compareResources)
	slices.Sort(d.ChangedBrokers)
	return d
}
