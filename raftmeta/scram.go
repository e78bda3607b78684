package raftmeta

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/strait-io/strait/raftmeta/scramcred"
)

// ScramCredential is what the metadata log keeps of a user's SCRAM
// password for one mechanism (UserScramCredentialRecord): never the
// password or the salted password, only what a server needs to check a
// client's proof and sign its answer (RFC 5802 section 3).
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramCredential looks up a user's credential for a mechanism type code
// (scramcred.TypeSHA256, scramcred.TypeSHA512), as Kafka's ScramImage.
func (img *Image) ScramCredential(mechanism int8, user string) (ScramCredential, bool) {
	c, ok := img.Scram[mechanism][user]
	return c, ok
}

// UserScramCredentialRecord sets a user's credential for a mechanism,
// creating or replacing it (Kafka's record of the same name, apiKey 11).
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  int8
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// RemoveUserScramCredentialRecord removes a user's credential for a
// mechanism (apiKey 22).
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism int8
}

func (*UserScramCredentialRecord) Type() RecordType { return UserScramCredentialRecordType }
func (*RemoveUserScramCredentialRecord) Type() RecordType {
	return RemoveUserScramCredentialRecordType
}
func (*UserScramCredentialRecord) Version() int8       { return 0 }
func (*RemoveUserScramCredentialRecord) Version() int8 { return 0 }

func (r *UserScramCredentialRecord) appendTo(b []byte) []byte {
	b = appendString(b, r.Name)
	b = appendInt(b, int64(r.Mechanism))
	b = appendBytes(b, r.Salt)
	b = appendBytes(b, r.StoredKey)
	b = appendBytes(b, r.ServerKey)
	return appendInt(b, int64(r.Iterations))
}

func (r *RemoveUserScramCredentialRecord) appendTo(b []byte) []byte {
	return appendInt(appendString(b, r.Name), int64(r.Mechanism))
}

func decodeScramFields(t RecordType, d *decoder) Record {
	if t == RemoveUserScramCredentialRecordType {
		return &RemoveUserScramCredentialRecord{Name: d.string(), Mechanism: d.int8()}
	}
	return &UserScramCredentialRecord{
		Name:       d.string(),
		Mechanism:  d.int8(),
		Salt:       d.byteSlice(),
		StoredKey:  d.byteSlice(),
		ServerKey:  d.byteSlice(),
		Iterations: d.int32(),
	}
}

// --- replay (ScramControlManager.replay) ---

func checkScramKey(name string, mechanism int8) error {
	if name == "" {
		return fmt.Errorf("scram credential with an empty user name")
	}
	if scramcred.MechanismName(mechanism) == "" {
		return fmt.Errorf("scram credential of user %q: unknown mechanism %d", name, mechanism)
	}
	return nil
}

// scramUsers returns the mechanism's user map of the next image, copied on
// first write (the outer map too).
func (b *builder) scramUsers(mechanism int8) map[string]ScramCredential {
	if !b.scramCopied {
		b.next.Scram = maps.Clone(b.next.Scram)
		if b.next.Scram == nil {
			b.next.Scram = map[int8]map[string]ScramCredential{}
		}
		b.scramCopied = true
		b.scramMechCopied = map[int8]bool{}
	}
	if !b.scramMechCopied[mechanism] {
		b.next.Scram[mechanism] = maps.Clone(b.next.Scram[mechanism])
		if b.next.Scram[mechanism] == nil {
			b.next.Scram[mechanism] = map[string]ScramCredential{}
		}
		b.scramMechCopied[mechanism] = true
	}
	return b.next.Scram[mechanism]
}

func (b *builder) putScram(r *UserScramCredentialRecord) error {
	if err := checkScramKey(r.Name, r.Mechanism); err != nil {
		return err
	}
	b.scramUsers(r.Mechanism)[r.Name] = ScramCredential{
		Salt:       slices.Clone(r.Salt),
		StoredKey:  slices.Clone(r.StoredKey),
		ServerKey:  slices.Clone(r.ServerKey),
		Iterations: r.Iterations,
	}
	b.scramChanged = true
	return nil
}

func (b *builder) removeScram(r *RemoveUserScramCredentialRecord) error {
	if _, ok := b.next.ScramCredential(r.Mechanism, r.Name); !ok {
		return fmt.Errorf("no %s credential of user %q to remove", scramcred.MechanismName(r.Mechanism), r.Name)
	}
	users := b.scramUsers(r.Mechanism)
	delete(users, r.Name)
	if len(users) == 0 {
		delete(b.next.Scram, r.Mechanism)
		delete(b.scramMechCopied, r.Mechanism)
	}
	b.scramChanged = true
	return nil
}

// appendScramRecords appends a UserScramCredentialRecord per credential,
// by mechanism and user.
func appendScramRecords(out []Record, img *Image) []Record {
	for _, mech := range slices.Sorted(maps.Keys(img.Scram)) {
		users := img.Scram[mech]
		for _, name := range slices.Sorted(maps.Keys(users)) {
			c := users[name]
			out = append(out, &UserScramCredentialRecord{
				Name: name, Mechanism: mech, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations,
			})
		}
	}
	return out
}

func scramDiffers(prev, next *Image) bool {
	return !reflect.DeepEqual(prev.Scram, next.Scram) && (len(prev.Scram) > 0 || len(next.Scram) > 0)
}
