package broker

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/scramcred"
)

// ParseAddScram turns `--add-scram` arguments into the
// UserScramCredentialRecords a new cluster's metadata log starts with, in
// the syntax of Kafka's `kafka-storage format --add-scram` (its
// ScramParser):
//
//	SCRAM-SHA-512=[name=admin,password=admin-secret]
//	SCRAM-SHA-256=[name=alice,iterations=8192,salt="MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=",saltedpassword="..."]
//
// name and one of password or saltedpassword (base64, with salt) are
// required; salt (base64) defaults to 24 random bytes, iterations to 4096
// (4096..16384). A value may be wrapped in double quotes.
func ParseAddScram(args []string) ([]raftmeta.Record, error) {
	var records []raftmeta.Record
	for _, arg := range args {
		r, err := parseAddScram(arg)
		if err != nil {
			return nil, fmt.Errorf("--add-scram %q: %w", arg, err)
		}
		records = append(records, r)
	}
	return records, nil
}

func parseAddScram(arg string) (*raftmeta.UserScramCredentialRecord, error) {
	mechName, conf, ok := strings.Cut(strings.TrimSpace(arg), "=")
	if !ok {
		return nil, fmt.Errorf("no '=' after the mechanism")
	}
	mech := scramcred.MechanismType(mechName)
	if mech == scramcred.TypeUnknown {
		return nil, fmt.Errorf("the mechanism %s is not supported (SCRAM-SHA-256 or SCRAM-SHA-512)", mechName)
	}
	conf, ok = strings.CutPrefix(conf, "[")
	if !ok {
		return nil, fmt.Errorf("expected the configuration to start with [")
	}
	conf, ok = strings.CutSuffix(conf, "]")
	if !ok {
		return nil, fmt.Errorf("expected the configuration to end with ]")
	}
	kv := map[string]string{}
	for _, c := range strings.Split(conf, ",") {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return nil, fmt.Errorf("no '=' in %q", c)
		}
		if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
			v = v[1 : len(v)-1]
		}
		kv[k] = v
	}
	take := func(k string) (string, bool) {
		v, ok := kv[k]
		delete(kv, k)
		return v, ok
	}
	r := &raftmeta.UserScramCredentialRecord{Mechanism: mech, Iterations: scramcred.DefaultIterations}
	name, ok := take("name")
	if !ok || name == "" {
		return nil, fmt.Errorf("name is required")
	}
	r.Name = name
	if s, ok := take("iterations"); ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("iterations %q is not a number", s)
		}
		if n < scramcred.MinIterations || n > scramcred.MaxIterations {
			return nil, fmt.Errorf("iterations must be within %d..%d for %s, not %d", scramcred.MinIterations, scramcred.MaxIterations, mechName, n)
		}
		r.Iterations = int32(n)
	}
	salt, hasSalt := take("salt")
	if hasSalt {
		b, err := base64.StdEncoding.DecodeString(salt)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("salt %q is not base64", salt)
		}
		r.Salt = b
	} else {
		r.Salt = make([]byte, 24)
		if _, err := rand.Read(r.Salt); err != nil {
			return nil, err
		}
	}
	password, hasPassword := take("password")
	salted, hasSalted := take("saltedpassword")
	var saltedPassword []byte
	switch {
	case hasPassword && hasSalted:
		return nil, fmt.Errorf("give password or saltedpassword, not both")
	case hasPassword:
		sp, err := scramcred.SaltedPassword(mechName, password, r.Salt, int(r.Iterations))
		if err != nil {
			return nil, err
		}
		saltedPassword = sp
	case hasSalted && !hasSalt:
		return nil, fmt.Errorf("saltedpassword needs the salt it was made with")
	case hasSalted:
		b, err := base64.StdEncoding.DecodeString(salted)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("saltedpassword is not base64")
		}
		saltedPassword = b
	default:
		return nil, fmt.Errorf("password or saltedpassword is required")
	}
	if len(kv) > 0 {
		return nil, fmt.Errorf("unknown SCRAM configurations: %s", strings.Join(slices.Sorted(maps.Keys(kv)), ", "))
	}
	var err error
	if r.StoredKey, r.ServerKey, err = scramcred.Keys(mechName, saltedPassword); err != nil {
		return nil, err
	}
	return r, nil
}
