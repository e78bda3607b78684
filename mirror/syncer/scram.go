package syncer

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The SCRAM step (issue 25, opt-in with mirror.scram.sync.enable): the
// source's SCRAM credentials of the users mirror.scram.users.include
// selects and mirror.scram.users.exclude does not are made the
// destination's, keys and all, so that after a failover the clients log in
// with the passwords they have. Kafka has no API that exports a credential
// (DescribeUserScramCredentials hides the salt and keys, KIP-554), so the
// source must be a Strait cluster serving DescribeScramCredentialSecrets
// (key 9412), on an encrypted listener; the writes go to the destination's
// controller (SyncScramCredentials, Config.ScramSync) as the records
// AlterUserScramCredentials appends.

// maxScramChangesPerRound bounds one round's SyncScramCredentials batch;
// more changes continue next round.
const maxScramChangesPerRound = 1000

// scramRecheck is how long a source found unable to export SCRAM
// credentials is left alone before it is asked again (an upgrade to a
// Strait with the RPC, a changed listener): not every round.
const scramRecheck = 10 * time.Minute

// scramSettings are the mirror.scram.* configs.
type scramSettings struct {
	enabled bool
	users   nameFilter
	// protocol is the source connection's security.protocol.
	protocol string
}

func parseScramSettings(cfgs map[string]string) (scramSettings, error) {
	users, err := raftmeta.MirrorScramUsers(cfgs)
	if err != nil {
		return scramSettings{}, err
	}
	return scramSettings{
		enabled:  raftmeta.MirrorSyncsScram(cfgs),
		users:    nameFilter{users},
		protocol: strings.ToUpper(strings.TrimSpace(configValue(cfgs, "security.protocol"))),
	}, nil
}

// scramKey names one credential.
type scramKey struct {
	name      string
	mechanism int8
}

// scramPlan is what a round changes on the destination.
type scramPlan struct {
	upserts []mirrormsg.SyncScramCredentialsRequestUpsertion
	deletes []mirrormsg.SyncScramCredentialsRequestDeletion
}

// planScram compares the source's credentials with the destination's:
// a credential the rules select is upserted when the destination lacks
// it or holds another salt, key or iteration count (a password changed on
// the source); a destination credential the rules select that the source
// does not have is deleted. Ownership is by rule, re-derived every round:
// a destination user the rules do not select (excluded, or never
// included) is never touched, so an operator keeps a local admin by
// excluding it. Unlike an ACL, a credential is keyed by user name only,
// so a user the source deleted while no syncer ran is still deleted.
// Both lists are sorted, deletions first in a batch.
func planScram(users nameFilter, src []mirrormsg.DescribeScramCredentialSecretsResponseCredential, dst map[int8]map[string]raftmeta.ScramCredential) scramPlan {
	var p scramPlan
	want := map[scramKey]bool{}
	for _, c := range src {
		if !users.matches(c.Name) {
			continue
		}
		want[scramKey{c.Name, c.Mechanism}] = true
		have, ok := dst[c.Mechanism][c.Name]
		if ok && have.Iterations == c.Iterations && bytes.Equal(have.Salt, c.Salt) &&
			bytes.Equal(have.StoredKey, c.StoredKey) && bytes.Equal(have.ServerKey, c.ServerKey) {
			continue
		}
		p.upserts = append(p.upserts, mirrormsg.SyncScramCredentialsRequestUpsertion{
			Name: c.Name, Mechanism: c.Mechanism, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations,
		})
	}
	for mech, byUser := range dst {
		for name := range byUser {
			if users.matches(name) && !want[scramKey{name, mech}] {
				p.deletes = append(p.deletes, mirrormsg.SyncScramCredentialsRequestDeletion{Name: name, Mechanism: mech})
			}
		}
	}
	slices.SortFunc(p.upserts, func(a, b mirrormsg.SyncScramCredentialsRequestUpsertion) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Mechanism, b.Mechanism))
	})
	slices.SortFunc(p.deletes, func(a, b mirrormsg.SyncScramCredentialsRequestDeletion) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Mechanism, b.Mechanism))
	})
	return p
}

// limit keeps the first n changes, deletions first.
func (p scramPlan) limit(n int) scramPlan {
	if len(p.deletes) >= n {
		return scramPlan{deletes: p.deletes[:n]}
	}
	n -= len(p.deletes)
	if len(p.upserts) > n {
		p.upserts = p.upserts[:n]
	}
	return p
}

// syncScram is the SCRAM step; it returns the number of failed operations.
// A condition that will not change by itself (a PLAINTEXT source link, a
// source that cannot export) is logged and counted once, and the source
// that cannot export is asked again only after scramRecheck.
func (s *Syncer) syncScram(ctx context.Context, v *mirrorView) int {
	set := v.set.scram
	if !set.enabled {
		s.setScramStatus("")
		return 0
	}
	if set.protocol != "SSL" && set.protocol != "SASL_SSL" {
		return s.scramPersistentError(fmt.Sprintf("the mirror's source connection uses security.protocol=%s; SCRAM credentials are synced only over SSL or SASL_SSL", cmp.Or(set.protocol, "PLAINTEXT")))
	}
	if s.cfg.ScramSync == nil {
		return s.scramPersistentError("this broker cannot write synced SCRAM credentials")
	}
	if until := s.scramUnsupportedUntil; !until.IsZero() && time.Now().Before(until) {
		return 0
	}
	ok, err := s.sourceExportsScram(ctx)
	if err != nil {
		s.logger.Warn("could not ask the source whether it exports SCRAM credentials", "err", err)
		return 1
	}
	if !ok {
		s.scramUnsupportedUntil = time.Now().Add(scramRecheck)
		return s.scramPersistentError("the source cannot export SCRAM credentials (it does not serve DescribeScramCredentialSecrets: not a Strait cluster)")
	}
	s.scramUnsupportedUntil = time.Time{}
	resp, err := mirrormsg.NewPtrDescribeScramCredentialSecretsRequest().RequestWith(ctx, s.cfg.Source)
	if err != nil {
		s.logger.Warn("could not read the source's SCRAM credentials", "err", err)
		return 1
	}
	if err := codeErr(resp.ErrorCode, resp.ErrorMessage); err != nil {
		// CLUSTER_AUTHORIZATION_FAILED: no ALTER on CLUSTER, or a source
		// listener that is not encrypted.
		return s.scramPersistentError(fmt.Sprintf("the source refused to export its SCRAM credentials: %v", err))
	}
	plan := planScram(set.users, resp.Credentials, v.img.Scram).limit(maxScramChangesPerRound)
	s.setScramStatus("")
	if len(plan.upserts) == 0 && len(plan.deletes) == 0 {
		return 0
	}
	req := mirrormsg.NewPtrSyncScramCredentialsRequest()
	req.MirrorName, req.Upsertions, req.Deletions = s.cfg.Mirror, plan.upserts, plan.deletes
	wresp, err := s.cfg.ScramSync(ctx, req)
	if err == nil {
		err = codeErr(wresp.ErrorCode, wresp.ErrorMessage)
	}
	if err != nil {
		s.logger.Warn("could not write the source's SCRAM credentials on the destination", "upserts", len(plan.upserts), "deletes", len(plan.deletes), "err", err)
		return 1
	}
	s.c.scramUpserted.Add(int64(len(plan.upserts)))
	s.c.scramDeleted.Add(int64(len(plan.deletes)))
	s.logger.Info("synced the source's SCRAM credentials", "upserted", scramNames(plan.upserts), "deleted", len(plan.deletes))
	return 0
}

// scramNames lists the users of upserts for a log line (never their keys).
func scramNames(ups []mirrormsg.SyncScramCredentialsRequestUpsertion) string {
	names := make([]string, 0, len(ups))
	for _, u := range ups {
		names = append(names, u.Name)
	}
	return listSome(names, 10)
}

func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ","), len(names)-n)
}

// scramPersistentError reports a condition a retry will not fix: logged
// and counted when it first appears (or changes), silent after.
func (s *Syncer) scramPersistentError(msg string) int {
	if s.setScramStatus(msg) {
		s.logger.Warn("mirror SCRAM sync: "+msg, "config", raftmeta.MirrorScramSyncEnableConfig)
		return 1
	}
	return 0
}

// setScramStatus records the SCRAM step's standing error ("" for none)
// and reports whether it changed.
func (s *Syncer) setScramStatus(msg string) bool {
	s.scramMu.Lock()
	defer s.scramMu.Unlock()
	changed := s.scramStatus != msg
	s.scramStatus = msg
	return changed
}

// ScramSyncStatus is the SCRAM step's standing error, "" when it syncs
// (or is disabled): what the mirror's describe shows.
func (s *Syncer) ScramSyncStatus() string {
	s.scramMu.Lock()
	defer s.scramMu.Unlock()
	return s.scramStatus
}

// sourceExportsScram reports whether the source's brokers advertise
// DescribeScramCredentialSecrets (an Apache Kafka cluster does not: it
// has no such API).
func (s *Syncer) sourceExportsScram(ctx context.Context) (bool, error) {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, s.cfg.Source)
	if err != nil {
		return false, err
	}
	if err := codeErr(resp.ErrorCode, nil); err != nil {
		return false, err
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == mirrormsg.KeyDescribeScramCredentialSecrets {
			return k.MinVersion <= 0 && k.MaxVersion >= 0, nil
		}
	}
	return false, nil
}
