package raftmeta

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/scramcred"
)

// The SCRAM user sync of a mirror (issue 25). Kafka has no way to copy a
// credential: DescribeUserScramCredentials hides the salt and keys
// (KIP-554) and AlterUserScramCredentials takes a salted password, which
// a cluster does not keep (RFC 5802 keeps only StoredKey and ServerKey).
// So a Strait source exports its credentials (DescribeScramCredentialSecrets)
// and the destination's syncer writes them as they are
// (SyncScramCredentials), as the same UserScramCredentialRecord and
// RemoveUserScramCredentialRecord key 51 appends: replay, image, snapshots
// and the SCRAM mechanism need nothing new.

// DescribeScramCredentialSecrets: v0, answered from this node's image (as
// DescribeUserScramCredentials). The wire server asks only for a request
// that came on an encrypted listener.
//
// Behavior:
//   - Users null or empty: every user; else the named ones (an unknown name
//     is skipped: the syncer wants what exists). Mechanisms null or empty:
//     both; else the named ones.
//   - Credentials sorted by user, then mechanism.
func DescribeScramCredentialSecrets(img *Image, req *mirrormsg.DescribeScramCredentialSecretsRequest) *mirrormsg.DescribeScramCredentialSecretsResponse {
	resp := req.ResponseKind().(*mirrormsg.DescribeScramCredentialSecretsResponse)
	users := map[string]bool{}
	for _, u := range req.Users {
		users[u] = true
	}
	mechs := map[int8]bool{}
	for _, m := range req.Mechanisms {
		mechs[m] = true
	}
	for _, mech := range slices.Sorted(maps.Keys(img.Scram)) {
		if len(mechs) > 0 && !mechs[mech] {
			continue
		}
		for name, c := range img.Scram[mech] {
			if len(users) > 0 && !users[name] {
				continue
			}
			resp.Credentials = append(resp.Credentials, mirrormsg.DescribeScramCredentialSecretsResponseCredential{
				Name: name, Mechanism: mech, Salt: slices.Clone(c.Salt), StoredKey: slices.Clone(c.StoredKey),
				ServerKey: slices.Clone(c.ServerKey), Iterations: c.Iterations,
			})
		}
	}
	slices.SortFunc(resp.Credentials, func(a, b mirrormsg.DescribeScramCredentialSecretsResponseCredential) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Mechanism, b.Mechanism))
	})
	return resp
}

// SyncScramCredentials: v0, internal (sent by a mirror's syncer over the
// controller channel, never by a client).
//
// Behavior:
//   - Refused with UNKNOWN_CLUSTER_MIRROR for a mirror that does not
//     exist, CLUSTER_AUTHORIZATION_FAILED for one without
//     mirror.scram.sync.enable=true, and POLICY_VIOLATION when it names a
//     user the mirror's mirror.scram.users rules do not select: a syncer
//     that planned before the configs changed cannot write.
//   - Each upsertion is checked as AlterUserScramCredentials checks one
//     (name non-empty, SCRAM-SHA-256/512, 4096..16384 iterations), and its
//     StoredKey and ServerKey must be the size of the mechanism's hash and
//     its salt non-empty: UNACCEPTABLE_CREDENTIAL (or
//     UNSUPPORTED_SASL_MECHANISM), naming the user. A user named twice is
//     DUPLICATE_RESOURCE. A deletion of a credential that is not there is
//     skipped (the destination already has what the syncer wanted).
//   - The request is one atomic batch of at most maxRecordsPerOp records
//     (POLICY_VIOLATION beyond): all of it is written, or none of it.
func (c *scramControl) SyncScramCredentials(ctx context.Context, req *mirrormsg.SyncScramCredentialsRequest) *mirrormsg.SyncScramCredentialsResponse {
	resp := req.ResponseKind().(*mirrormsg.SyncScramCredentialsResponse)
	e := validateScramSync(req)
	built := false
	var err error
	if e == nil {
		err = c.write(ctx, func(img *Image) []Record {
			built = true
			if _, ok := img.Mirrors[req.MirrorName]; !ok {
				e = errorf(mirrormsg.UnknownClusterMirror, "Cluster mirror '%s' does not exist.", req.MirrorName)
				return nil
			}
			cfgs := img.MirrorConfig(req.MirrorName)
			if !MirrorSyncsScram(cfgs) {
				e = errorf(kerr.ClusterAuthorizationFailed, "Cluster mirror '%s' does not sync SCRAM credentials (%s is not true).", req.MirrorName, MirrorScramSyncEnableConfig)
				return nil
			}
			if e = checkScramUsersSelected(req, cfgs); e != nil {
				return nil
			}
			var records []Record
			for _, d := range req.Deletions {
				if _, ok := img.ScramCredential(d.Mechanism, d.Name); ok {
					records = append(records, &RemoveUserScramCredentialRecord{Name: d.Name, Mechanism: d.Mechanism})
				}
			}
			for _, u := range req.Upsertions {
				records = append(records, &UserScramCredentialRecord{
					Name: u.Name, Mechanism: u.Mechanism, Salt: slices.Clone(u.Salt),
					StoredKey: slices.Clone(u.StoredKey), ServerKey: slices.Clone(u.ServerKey), Iterations: u.Iterations,
				})
			}
			return records
		})
	}
	if e == nil && (err != nil || !built) {
		e = writeError(err)
	}
	if e != nil {
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
	}
	return resp
}

// checkScramUsersSelected refuses a batch that names a user the mirror's
// mirror.scram.users rules do not select, with POLICY_VIOLATION: a syncer
// that planned with the rules before they changed cannot create an
// excluded user, nor delete one (a destination's own admin).
func checkScramUsersSelected(req *mirrormsg.SyncScramCredentialsRequest, cfgs map[string]string) *apiError {
	users, err := MirrorScramUsers(cfgs)
	if err != nil {
		return errorf(kerr.InvalidConfig, "Cluster mirror '%s': %v", req.MirrorName, err)
	}
	names := make([]string, 0, len(req.Upsertions)+len(req.Deletions))
	for _, u := range req.Upsertions {
		names = append(names, u.Name)
	}
	for _, d := range req.Deletions {
		names = append(names, d.Name)
	}
	for _, name := range names {
		if !users.Matches(name) {
			return errorf(kerr.PolicyViolation, "User '%s' is not selected by cluster mirror '%s''s mirror.scram.users.include and .exclude.", name, req.MirrorName)
		}
	}
	return nil
}

// validateScramSync checks a SyncScramCredentials request before the write.
func validateScramSync(req *mirrormsg.SyncScramCredentialsRequest) *apiError {
	if n := len(req.Upsertions) + len(req.Deletions); n > maxRecordsPerOp {
		return errorf(kerr.PolicyViolation, "%d SCRAM credential changes in one request, at most %d.", n, maxRecordsPerOp)
	}
	type key struct {
		name string
		mech int8
	}
	seen := map[key]bool{}
	once := func(name string, mech int8) *apiError {
		if seen[key{name, mech}] {
			return errorf(kerr.DuplicateResource, "The %s credential of user '%s' is changed twice in the request.", scramcred.MechanismName(mech), name)
		}
		seen[key{name, mech}] = true
		return nil
	}
	for _, d := range req.Deletions {
		if e := validateScramUser(d.Name, d.Mechanism); e != nil {
			return e
		}
		if e := once(d.Name, d.Mechanism); e != nil {
			return e
		}
	}
	for _, u := range req.Upsertions {
		if e := validateScramUser(u.Name, u.Mechanism); e != nil {
			return e
		}
		if e := once(u.Name, u.Mechanism); e != nil {
			return e
		}
		size := scramKeySize(u.Mechanism)
		switch {
		case u.Iterations < scramcred.MinIterations || u.Iterations > scramcred.MaxIterations:
			return errorf(kerr.UnacceptableCredential, "User '%s': %d iterations, not within %d..%d.", u.Name, u.Iterations, scramcred.MinIterations, scramcred.MaxIterations)
		case len(u.Salt) == 0:
			return errorf(kerr.UnacceptableCredential, "User '%s': an empty salt.", u.Name)
		case len(u.StoredKey) != size || len(u.ServerKey) != size:
			return errorf(kerr.UnacceptableCredential, "User '%s': %s keys are %d bytes, got a %d-byte StoredKey and a %d-byte ServerKey.",
				u.Name, scramcred.MechanismName(u.Mechanism), size, len(u.StoredKey), len(u.ServerKey))
		}
	}
	return nil
}

// scramKeySize is the size of a mechanism's StoredKey and ServerKey: its
// hash's (SHA-256: 32 bytes, SHA-512: 64).
func scramKeySize(mechanism int8) int {
	if mechanism == scramcred.TypeSHA512 {
		return 64
	}
	return 32
}
