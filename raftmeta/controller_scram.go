package raftmeta

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/scramcred"
)

// AlterUserScramCredentials: v0 (ScramControlManager.alterCredentials).
//
// Behavior:
//   - A user named twice in the request (in deletions, upsertions or both)
//     is DUPLICATE_RESOURCE, once, and none of its alterations happen.
//   - An empty user name is UNACCEPTABLE_CREDENTIAL, a mechanism other than
//     SCRAM-SHA-256/512 UNSUPPORTED_SASL_MECHANISM, an upsertion with fewer
//     than 4096 or more than 16384 iterations UNACCEPTABLE_CREDENTIAL, the
//     deletion of a credential that does not exist RESOURCE_NOT_FOUND.
//   - An upsertion carries the salt and the salted password; the record
//     keeps StoredKey and ServerKey derived from it, never the salted
//     password.
//   - The valid alterations of the request are one atomic batch; each user
//     gets its own result.
func (c *scramControl) AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	// Kafka's userToDeletion / userToUpsert / userToError, in request order.
	var order []string
	errs := map[string]*apiError{}
	deletions := map[string]kmsg.AlterUserSCRAMCredentialsRequestDeletion{}
	upsertions := map[string]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{}
	seen := func(name string) bool {
		_, d := deletions[name]
		_, u := upsertions[name]
		_, e := errs[name]
		return d || u || e
	}
	duplicate := func(name string) {
		delete(deletions, name)
		delete(upsertions, name)
		errs[name] = errorf(kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
	}
	for _, d := range req.Deletions {
		switch {
		case errs[d.Name] != nil:
		case seen(d.Name):
			duplicate(d.Name)
		default:
			order = append(order, d.Name)
			if e := validateScramUser(d.Name, d.Mechanism); e != nil {
				errs[d.Name] = e
			} else {
				deletions[d.Name] = d
			}
		}
	}
	for _, u := range req.Upsertions {
		switch {
		case errs[u.Name] != nil:
		case seen(u.Name):
			duplicate(u.Name)
		default:
			order = append(order, u.Name)
			if e := validateUpsertion(&u); e != nil {
				errs[u.Name] = e
			} else {
				upsertions[u.Name] = u
			}
		}
	}
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		var records []Record
		for _, name := range order {
			if d, ok := deletions[name]; ok {
				if _, exists := img.ScramCredential(d.Mechanism, name); !exists {
					delete(deletions, name)
					errs[name] = errorf(kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
					continue
				}
				records = append(records, &RemoveUserScramCredentialRecord{Name: name, Mechanism: d.Mechanism})
			}
			if u, ok := upsertions[name]; ok {
				stored, server, err := scramcred.Keys(scramcred.MechanismName(u.Mechanism), u.SaltedPassword)
				if err != nil {
					delete(upsertions, name)
					errs[name] = errorf(kerr.UnknownServerError, "%s", err.Error())
					continue
				}
				records = append(records, &UserScramCredentialRecord{
					Name: name, Mechanism: u.Mechanism, Salt: slices.Clone(u.Salt),
					StoredKey: stored, ServerKey: server, Iterations: u.Iterations,
				})
			}
		}
		return records
	})
	werr := writeError(err)
	for _, name := range order {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = name
		r.ErrorCode, r.ErrorMessage = itemResult(errs[name], werr, built)
		resp.Results = append(resp.Results, r)
	}
	return resp
}

// validateScramUser is ScramControlManager.validateScramUsernameAndMechanism.
func validateScramUser(name string, mechanism int8) *apiError {
	if name == "" {
		return errorf(kerr.UnacceptableCredential, "Username must not be empty")
	}
	if scramcred.MechanismName(mechanism) == "" {
		return errorf(kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
	}
	return nil
}

// validateUpsertion is ScramControlManager.validateUpsertion.
func validateUpsertion(u *kmsg.AlterUserSCRAMCredentialsRequestUpsertion) *apiError {
	if e := validateScramUser(u.Name, u.Mechanism); e != nil {
		return e
	}
	if u.Iterations < scramcred.MinIterations {
		return errorf(kerr.UnacceptableCredential, "Too few iterations")
	}
	if u.Iterations > scramcred.MaxIterations {
		return errorf(kerr.UnacceptableCredential, "Too many iterations")
	}
	return nil
}

// DescribeUserScramCredentials: v0, answered from this node's image as
// Kafka's brokers answer from their metadata cache (ScramImage.describe).
//
// Behavior:
//   - No users (null or empty) describes every user that has a credential.
//   - A named user without credentials is RESOURCE_NOT_FOUND, one named
//     more than once DUPLICATE_RESOURCE (one result each).
//   - Each user's result lists its mechanisms and iterations, never the
//     salt or keys. Results are sorted by user, credentials by mechanism.
func (c *scramControl) DescribeUserScramCredentials(_ context.Context, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	img := c.log.Image()
	duplicated := map[string]bool{}
	if len(req.Users) == 0 {
		for _, users := range img.Scram {
			for name := range users {
				duplicated[name] = false
			}
		}
	} else {
		for _, u := range req.Users {
			_, dup := duplicated[u.Name]
			duplicated[u.Name] = dup
		}
	}
	mechanisms := slices.Sorted(maps.Keys(img.Scram))
	for _, name := range slices.Sorted(maps.Keys(duplicated)) {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = name
		if duplicated[name] {
			r.ErrorCode = kerr.DuplicateResource.Code
			r.ErrorMessage = strp("Cannot describe SCRAM credentials for the same user twice in a single request: " + name)
			resp.Results = append(resp.Results, r)
			continue
		}
		for _, mech := range mechanisms {
			if cred, ok := img.ScramCredential(mech, name); ok {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = mech, cred.Iterations
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
		}
		if len(r.CredentialInfos) == 0 {
			r.ErrorCode = kerr.ResourceNotFound.Code
			r.ErrorMessage = strp("Attempt to describe a user credential that does not exist: " + name)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
