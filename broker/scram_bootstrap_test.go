package broker

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/scramcred"
)

// TestParseAddScram checks the records of kafka-storage format's
// --add-scram syntax: the keys derive from the password and the salt
// given (or a random one), and a salted password given as is.
func TestParseAddScram(t *testing.T) {
	salt := []byte("saltsalt")
	sp, _ := scramcred.SaltedPassword(scramcred.SHA256, "pw", salt, 8192)
	stored, server, _ := scramcred.Keys(scramcred.SHA256, sp)
	records, err := ParseAddScram([]string{
		`SCRAM-SHA-256=[name=alice,iterations=8192,salt="` + base64.StdEncoding.EncodeToString(salt) + `",password="pw"]`,
		"SCRAM-SHA-256=[name=bob,iterations=8192,salt=" + base64.StdEncoding.EncodeToString(salt) + ",saltedpassword=" + base64.StdEncoding.EncodeToString(sp) + "]",
		" SCRAM-SHA-512=[name=admin,password=admin-secret]",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"alice", "bob"} {
		r := records[i].(*raftmeta.UserScramCredentialRecord)
		if r.Name != name || r.Mechanism != scramcred.TypeSHA256 || r.Iterations != 8192 || !bytes.Equal(r.Salt, salt) ||
			!bytes.Equal(r.StoredKey, stored) || !bytes.Equal(r.ServerKey, server) {
			t.Errorf("%s: %+v", name, r)
		}
	}
	admin := records[2].(*raftmeta.UserScramCredentialRecord)
	if admin.Name != "admin" || admin.Mechanism != scramcred.TypeSHA512 || admin.Iterations != 4096 || len(admin.Salt) != 24 || len(admin.StoredKey) != 64 {
		t.Errorf("admin: %+v", admin)
	}
}
