package raftmeta

import (
	"context"
	"errors"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// The RPCs that move topics in and out of a mirror by writing their topic
// config mirror.name (the seed): StartMirrorTopics sets "<mirror>",
// StopMirrorTopics "<mirror>.removed", PauseMirrorTopics "<mirror>.paused"
// and ResumeMirrorTopics "<mirror>" again (mirrorstate.FormatMirrorName).
//
// The mirror partitions' states are in __mirror_state, which the brokers
// read: the seed has the broker that receives a request validate them
// before forwarding it. The controller validates what the metadata says,
// the state mirror.name asks for, with the same rules
// (mirrorstate.ValidateStart/Stop/Pause/Resume) applied to the state that
// desire ends in (desiredEndState): a topic asked to mirror is judged as
// MIRRORING, to pause as PAUSED, to stop as STOPPED, and one outside any
// mirror as UNKNOWN. Writes are serialized, so two requests cannot both
// pass against the same mirror.name.

// desiredEndState is the partition state the desired state of a topic's
// mirror.name leads to.
func desiredEndState(d mirrorstate.Desired) mirrorstate.State {
	switch d {
	case mirrorstate.DesiredStart:
		return mirrorstate.StateMirroring
	case mirrorstate.DesiredPause:
		return mirrorstate.StatePaused
	case mirrorstate.DesiredStop:
		return mirrorstate.StateStopped
	}
	return mirrorstate.StateUnknown
}

func desiredWord(d mirrorstate.Desired) string {
	switch d {
	case mirrorstate.DesiredStart:
		return "mirroring"
	case mirrorstate.DesiredPause:
		return "paused"
	case mirrorstate.DesiredStop:
		return "stopped"
	}
	return "not mirrored"
}

// mirrorStateError is the error code of a partition validation error.
func mirrorStateError(err error) *kerr.Error {
	switch {
	case errors.Is(err, mirrorstate.ErrMirrorTopicAlreadyPaused):
		return mirrormsg.MirrorTopicAlreadyPaused
	case errors.Is(err, mirrorstate.ErrMirrorTopicNotPaused):
		return mirrormsg.MirrorTopicNotPaused
	case errors.Is(err, mirrorstate.ErrMirrorTopicBeingStopped):
		return mirrormsg.MirrorTopicBeingStopped
	case errors.Is(err, mirrorstate.ErrMirrorTopicNotStopped):
		return mirrormsg.MirrorTopicNotStopped
	case errors.Is(err, mirrorstate.ErrInvalidClusterMirrorStates):
		return mirrormsg.InvalidClusterMirrorStates
	}
	return kerr.UnknownServerError
}

// topicOutcome is one topic of a Start/Stop/Pause/Resume answer.
type topicOutcome struct {
	name string
	err  *apiError
}

// mirrorTopicsResult is what the four RPCs answer before it is put into
// their (identically shaped) responses.
type mirrorTopicsResult struct {
	top    *apiError
	topics []*topicOutcome
}

// finish resolves the write's outcome: a failed write, or one that never
// ran its build, fails every topic that had no error of its own.
func (r *mirrorTopicsResult) finish(err error, built bool) {
	werr := writeError(err)
	if werr == nil && !built {
		werr = errorf(kerr.UnknownServerError, "The request was not processed.")
	}
	if r.top == nil {
		r.top = werr
	}
	for _, t := range r.topics {
		if t.err == nil {
			t.err = r.top
		}
	}
}

func (r *mirrorTopicsResult) fill(code *int16, msg **string, add func(name string, code int16, msg *string)) {
	if r.top != nil {
		*code, *msg = r.top.code, r.top.message()
	}
	for _, t := range r.topics {
		if t.err != nil {
			add(t.name, t.err.code, t.err.message())
		} else {
			add(t.name, 0, nil)
		}
	}
}

// changeMirrorName validates moving topic t of mirror to desired (Stop,
// Pause or Resume) and returns the ConfigRecord that does it.
func changeMirrorName(img *Image, mirror string, t *Topic, desired mirrorstate.Desired, validate func(mirrorstate.State) error) (Record, *apiError) {
	cur, d := img.TopicMirror(t.Name)
	switch {
	case d == mirrorstate.DesiredNone:
		return nil, errorf(mirrormsg.TopicNotInClusterMirror, "Topic '%s' is not in a cluster mirror.", t.Name)
	case cur != mirror:
		return nil, errorf(mirrormsg.TopicNotInClusterMirror, "Topic '%s' belongs to cluster mirror '%s', not '%s'.", t.Name, cur, mirror)
	}
	if err := validate(desiredEndState(d)); err != nil {
		return nil, errorf(mirrorStateError(err), "Topic '%s' is %s in cluster mirror '%s' (%s=%s).", t.Name, desiredWord(d), mirror, MirrorNameConfig, mirrorstate.FormatMirrorName(cur, d))
	}
	return &ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: t.Name, Name: MirrorNameConfig, Value: strp(mirrorstate.FormatMirrorName(mirror, desired))}, nil
}

// knownMirror fails the whole request for an unknown mirror.
func knownMirror(img *Image, mirror string) *apiError {
	if _, ok := img.Mirrors[mirror]; !ok {
		return errorf(mirrormsg.UnknownClusterMirror, "Cluster mirror '%s' does not exist.", mirror)
	}
	return nil
}

// topicRef is a topic a Stop, Pause or Resume request names: by name, by
// id, or both (then they must agree).
type topicRef struct {
	name string
	id   Uuid
}

// resolveTopicRef finds a referenced topic: an unknown name is
// UNKNOWN_TOPIC_OR_PARTITION, an unknown id or one that is not the named
// topic's UNKNOWN_TOPIC_ID (as DeleteTopics answers).
func resolveTopicRef(img *Image, ref topicRef) (*Topic, *apiError) {
	switch {
	case ref.name != "":
		t := img.Topics[ref.name]
		if t == nil {
			return nil, errorf(kerr.UnknownTopicOrPartition, "Topic '%s' does not exist.", ref.name)
		}
		if !ref.id.IsZero() && ref.id != t.ID {
			return nil, errorf(kerr.UnknownTopicID, "Topic '%s' has topic id %s, not %s.", ref.name, t.ID, ref.id)
		}
		return t, nil
	case !ref.id.IsZero():
		t := img.TopicsByID[ref.id]
		if t == nil {
			return nil, errorf(kerr.UnknownTopicID, "No topic has topic id %s.", ref.id)
		}
		return t, nil
	}
	return nil, errorf(kerr.InvalidRequest, "Neither topic name nor id were specified.")
}

// changeTopics is Stop, Pause and Resume: each named topic's mirror.name
// moves to desired when validate accepts its current desired state.
// Duplicates are INVALID_REQUEST; an unknown name is
// UNKNOWN_TOPIC_OR_PARTITION, an unknown or mismatched id
// UNKNOWN_TOPIC_ID. extra, if set, adds topics found in the image.
func (c *mirrorControl) changeTopics(ctx context.Context, mirror string, refs []topicRef, desired mirrorstate.Desired,
	validate func(mirrorstate.State) error, extra func(img *Image) []topicRef) *mirrorTopicsResult {
	r := &mirrorTopicsResult{}
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		r.top, r.topics = nil, nil
		if r.top = knownMirror(img, mirror); r.top != nil {
			for _, ref := range refs {
				r.topics = append(r.topics, &topicOutcome{name: ref.name})
			}
			return nil
		}
		all := refs
		if extra != nil {
			all = append(slices.Clone(refs), extra(img)...)
		}
		// Resolve every reference first, so that a topic named twice
		// fails both times: which one the caller meant is unclear.
		resolved := make([]*Topic, len(all))
		seen := map[string]int{}
		for i, ref := range all {
			o := &topicOutcome{name: ref.name}
			r.topics = append(r.topics, o)
			t, e := resolveTopicRef(img, ref)
			if e != nil {
				o.err = e
				continue
			}
			o.name, resolved[i] = t.Name, t
			seen[t.Name]++
		}
		var records []Record
		for i, o := range r.topics {
			t := resolved[i]
			switch {
			case o.err != nil:
				continue
			case seen[t.Name] > 1:
				o.err = errorf(kerr.InvalidRequest, "Topic '%s' is named more than once.", t.Name)
				continue
			}
			rec, e := changeMirrorName(img, mirror, t, desired, validate)
			if e != nil {
				o.err = e
				continue
			}
			records = append(records, rec)
		}
		return records
	})
	r.finish(err, built)
	return r
}

// StopMirrorTopics: v0 (the seed's Stop: mirror.name=<mirror>.removed, a
// failover).
//
// Behavior:
//   - An unknown mirror is UNKNOWN_CLUSTER_MIRROR, for the request and
//     every topic.
//   - Topics by name; Patterns (tag 0) add the mirror's topics not yet
//     stopped whose whole name matches one of them (Go regexp; a bad one
//     is INVALID_REGULAR_EXPRESSION for the request). The controller does
//     not edit mirror.topics.include/exclude.
//   - Per topic: unknown is UNKNOWN_TOPIC_OR_PARTITION, outside this
//     mirror TOPIC_NOT_IN_CLUSTER_MIRROR, named twice INVALID_REQUEST;
//     then mirrorstate.ValidateStop of its desired end state: mirroring and
//     paused topics stop, a stopped one is INVALID_CLUSTER_MIRROR_STATES.
//   - StateOffset is not checked: the brokers validate partition states.
func (c *mirrorControl) StopMirrorTopics(ctx context.Context, req *mirrormsg.StopMirrorTopicsRequest) *mirrormsg.StopMirrorTopicsResponse {
	resp := req.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
	resp.MirrorName = req.MirrorName
	var refs []topicRef
	for _, t := range req.Topics {
		refs = append(refs, topicRef{name: t.TopicName})
	}
	var extra func(*Image) []topicRef
	if len(req.Patterns) > 0 {
		if _, err := StopPatternTopics(nil, "", req.Patterns, nil); err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			resp.ErrorMessage = strp(err.Error())
			return resp
		}
		var named []string
		for _, r := range refs {
			named = append(named, r.name)
		}
		extra = func(img *Image) []topicRef {
			var out []topicRef
			names, _ := StopPatternTopics(img, req.MirrorName, req.Patterns, named)
			for _, n := range names {
				out = append(out, topicRef{name: n})
			}
			return out
		}
	}
	r := c.changeTopics(ctx, req.MirrorName, refs, mirrorstate.DesiredStop, mirrorstate.ValidateStop, extra)
	r.fill(&resp.ErrorCode, &resp.ErrorMessage, func(name string, code int16, msg *string) {
		t := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
		t.Name, t.ErrorCode, t.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

// StopPatternTopics returns the topics StopMirrorTopics' Patterns select
// in img: mirror's topics not stopped, not among named, whose whole name
// matches one of patterns (Go regexp), sorted by name. The error names a
// pattern that does not compile. With a nil img it only checks patterns.
func StopPatternTopics(img *Image, mirror string, patterns, named []string) ([]string, error) {
	var res []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, errors.New("Invalid pattern '" + p + "': " + err.Error())
		}
		res = append(res, re)
	}
	if img == nil {
		return nil, nil
	}
	var out []string
	for _, mt := range img.MirrorTopics(mirror) {
		if mt.Desired == mirrorstate.DesiredStop || slices.Contains(named, mt.Topic.Name) {
			continue
		}
		if slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(mt.Topic.Name) }) {
			out = append(out, mt.Topic.Name)
		}
	}
	return out, nil
}

// PauseMirrorTopics: v0 (mirror.name=<mirror>.paused). As Stop, by name
// and/or id (UNKNOWN_TOPIC_ID for an unknown or mismatched id), with
// mirrorstate.ValidatePause: a mirroring topic pauses, a paused one is
// MIRROR_TOPIC_ALREADY_PAUSED, a stopped one
// INVALID_CLUSTER_MIRROR_STATES.
func (c *mirrorControl) PauseMirrorTopics(ctx context.Context, req *mirrormsg.PauseMirrorTopicsRequest) *mirrormsg.PauseMirrorTopicsResponse {
	resp := req.ResponseKind().(*mirrormsg.PauseMirrorTopicsResponse)
	resp.MirrorName = req.MirrorName
	var refs []topicRef
	for _, t := range req.Topics {
		refs = append(refs, topicRef{name: t.TopicName, id: t.TopicID})
	}
	r := c.changeTopics(ctx, req.MirrorName, refs, mirrorstate.DesiredPause, mirrorstate.ValidatePause, nil)
	r.fill(&resp.ErrorCode, &resp.ErrorMessage, func(name string, code int16, msg *string) {
		t := mirrormsg.NewPauseMirrorTopicsResponseTopicResult()
		t.Name, t.ErrorCode, t.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

// ResumeMirrorTopics: v0 (mirror.name=<mirror> again). As Pause, with
// mirrorstate.ValidateResume: a paused topic resumes, a mirroring or stopped
// one is MIRROR_TOPIC_NOT_PAUSED.
func (c *mirrorControl) ResumeMirrorTopics(ctx context.Context, req *mirrormsg.ResumeMirrorTopicsRequest) *mirrormsg.ResumeMirrorTopicsResponse {
	resp := req.ResponseKind().(*mirrormsg.ResumeMirrorTopicsResponse)
	resp.MirrorName = req.MirrorName
	var refs []topicRef
	for _, t := range req.Topics {
		refs = append(refs, topicRef{name: t.TopicName, id: t.TopicID})
	}
	r := c.changeTopics(ctx, req.MirrorName, refs, mirrorstate.DesiredStart, mirrorstate.ValidateResume, nil)
	r.fill(&resp.ErrorCode, &resp.ErrorMessage, func(name string, code int16, msg *string) {
		t := mirrormsg.NewResumeMirrorTopicsResponseTopicResult()
		t.Name, t.ErrorCode, t.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

// StartMirrorTopics: v0 (the seed's Start: mirror.name=<mirror>).
//
// The controller cannot reach the source, so the broker that receives the
// request resolves IncludePatterns and ExcludePatterns against the source
// and forwards it with Topics (tag 1): each source topic's name, topic id
// and partition count. The controller acts on Topics alone.
//
// Behavior:
//   - No Topics is INVALID_REQUEST for the request (patterns that reached
//     the controller unresolved, or nothing asked); an unknown mirror
//     UNKNOWN_CLUSTER_MIRROR for the request and every topic.
//   - Per topic: an internal topic (__consumer_offsets, __mirror_state,
//     ...) or an invalid name is INVALID_TOPIC_EXCEPTION; a zero topic id
//     or a name or id given twice INVALID_REQUEST; a partition count below
//     1 INVALID_PARTITIONS.
//   - A missing topic is created with the source's topic id and partition
//     count and the default replication factor (CreateTopics' checks;
//     TOPIC_ALREADY_EXISTS when another topic has that id), with
//     mirror.name=<mirror> among its configs.
//   - An existing topic must have the source's topic id
//     (TOPIC_ALREADY_EXISTS otherwise: it is another topic of that name);
//     one in another mirror that is not stopped is
//     TOPIC_ALREADY_IN_CLUSTER_MIRROR; otherwise
//     mirrorstate.ValidateStart of its desired end state: a topic in no
//     mirror or stopped (in any mirror: failback, migration) starts, one
//     mirroring or paused in this mirror is MIRROR_TOPIC_NOT_STOPPED. A
//     topic with more partitions than the source is INVALID_PARTITIONS; one
//     with fewer gets the missing ones, placed as CreatePartitions does.
//   - The controller does not edit mirror.topics.include/exclude.
//   - TimeoutMs > 0 bounds the wait for the write (REQUEST_TIMED_OUT).
func (c *mirrorControl) StartMirrorTopics(ctx context.Context, req *mirrormsg.StartMirrorTopicsRequest) *mirrormsg.StartMirrorTopicsResponse {
	resp := req.ResponseKind().(*mirrormsg.StartMirrorTopicsResponse)
	resp.MirrorName = req.MirrorName
	if len(req.Topics) == 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		if len(req.IncludePatterns) > 0 {
			resp.ErrorMessage = strp("StartMirrorTopics reached the controller without resolved Topics: the broker that receives it resolves the patterns against the source cluster.")
		} else {
			resp.ErrorMessage = strp("StartMirrorTopics names no topics.")
		}
		return resp
	}
	ctx, cancel := withTimeout(ctx, req.TimeoutMs)
	defer cancel()

	r := &mirrorTopicsResult{}
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		r.top, r.topics = nil, nil
		for _, st := range req.Topics {
			r.topics = append(r.topics, &topicOutcome{name: st.Name})
		}
		if r.top = knownMirror(img, req.MirrorName); r.top != nil {
			return nil
		}
		names, ids := map[string]int{}, map[Uuid]int{}
		for _, st := range req.Topics {
			names[st.Name]++
			ids[Uuid(st.TopicID)]++
		}
		created := map[string]string{}
		var records []Record
		for i, st := range req.Topics {
			o := r.topics[i]
			switch {
			case names[st.Name] > 1:
				o.err = errorf(kerr.InvalidRequest, "Topic '%s' is named more than once.", st.Name)
				continue
			case ids[Uuid(st.TopicID)] > 1:
				o.err = errorf(kerr.InvalidRequest, "Source topic id %s is given for more than one topic.", Uuid(st.TopicID))
				continue
			}
			recs, e := c.startMirrorTopic(img, req.MirrorName, &st, created)
			if e == nil && len(records)+len(recs) > maxRecordsPerOp {
				e = errorf(kerr.InvalidPartitions, "Starting topic '%s' would append more than %d metadata records in one request.", st.Name, maxRecordsPerOp)
			}
			if e != nil {
				o.err = e
				continue
			}
			records = append(records, recs...)
		}
		return records
	})
	r.finish(err, built)
	r.fill(&resp.ErrorCode, &resp.ErrorMessage, func(name string, code int16, msg *string) {
		t := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		t.Name, t.ErrorCode, t.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, t)
	})
	return resp
}

// startMirrorTopic validates one source topic and returns the records that
// make its destination topic a mirror topic of mirror.
func (c *mirrorControl) startMirrorTopic(img *Image, mirror string, st *mirrormsg.StartMirrorTopicsRequestSourceTopic, created map[string]string) ([]Record, *apiError) {
	name, id := st.Name, Uuid(st.TopicID)
	if IsUnmirrorable(name) {
		return nil, errorf(kerr.InvalidTopicException, "Internal topic '%s' cannot be mirrored.", name)
	}
	if err := ValidateTopicName(name); err != nil {
		return nil, errorf(kerr.InvalidTopicException, "%s", err.Error())
	}
	if id.IsZero() {
		return nil, errorf(kerr.InvalidRequest, "Topic '%s' has no source topic id.", name)
	}
	if st.NumPartitions < 1 {
		return nil, errorf(kerr.InvalidPartitions, "Source topic '%s' has %d partitions.", name, st.NumPartitions)
	}
	setName := &ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: name, Name: MirrorNameConfig, Value: strp(mirror)}

	t, exists := img.Topics[name]
	if !exists {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, st.NumPartitions, -1
		recs, e := c.replication.createTopicWithID(img, &rt, created, id)
		if e != nil {
			return nil, e
		}
		created[unifyCollisionChars(name)] = name
		// mirror.name goes with the topic's configs, after its
		// TopicRecord and before its PartitionRecords.
		return slices.Insert(recs, 1, Record(setName)), nil
	}
	if t.ID != id {
		return nil, errorf(kerr.TopicAlreadyExists, "Topic '%s' exists with topic id %s, not the source topic's %s.", name, t.ID, id)
	}
	cur, d := img.TopicMirror(name)
	if cur != mirror && d != mirrorstate.DesiredNone && d != mirrorstate.DesiredStop {
		return nil, errorf(mirrormsg.TopicAlreadyInClusterMirror, "Topic '%s' is %s in cluster mirror '%s'.", name, desiredWord(d), cur)
	}
	if err := mirrorstate.ValidateStart(desiredEndState(d)); err != nil {
		return nil, errorf(mirrorStateError(err), "Topic '%s' is %s in cluster mirror '%s' (%s=%s).", name, desiredWord(d), cur, MirrorNameConfig, mirrorstate.FormatMirrorName(cur, d))
	}
	records := []Record{setName}
	have := int32(len(t.Partitions))
	switch {
	case have > st.NumPartitions:
		return nil, errorf(kerr.InvalidPartitions, "Topic '%s' has %d partitions, more than the source topic's %d.", name, have, st.NumPartitions)
	case have < st.NumPartitions:
		placed, e := placeOnBrokers(img, name, have, st.NumPartitions-have, int16(len(t.Partitions[0].Replicas)))
		if e != nil {
			return nil, e
		}
		for i, replicas := range placed {
			records = append(records, newPartitionRecord(t.ID, have+int32(i), replicas, activeReplicas(img, replicas)))
		}
	}
	return records, nil
}
