package mirrormsg

import "fmt"

// The SCRAM credentials DescribeScramCredentialSecrets exports and
// SyncScramCredentials writes are secrets: the StoredKey and one captured
// exchange give the ClientKey (ClientProof XOR HMAC(StoredKey,
// AuthMessage)), that is a login. Their String and GoString hide the salt
// and keys, as Kafka's ScramCredential.toString does, so printing a
// message with %v, %+v or %#v (a log line, a test failure) never shows
// them.

func (c DescribeScramCredentialSecretsResponseCredential) String() string {
	return redactedScram(c.Name, c.Mechanism, c.Iterations, c.Salt, c.StoredKey, c.ServerKey)
}

// GoString is String, for %#v.
func (c DescribeScramCredentialSecretsResponseCredential) GoString() string { return c.String() }

func (u SyncScramCredentialsRequestUpsertion) String() string {
	return redactedScram(u.Name, u.Mechanism, u.Iterations, u.Salt, u.StoredKey, u.ServerKey)
}

// GoString is String, for %#v.
func (u SyncScramCredentialsRequestUpsertion) GoString() string { return u.String() }

func redactedScram(name string, mechanism int8, iterations int32, salt, stored, server []byte) string {
	return fmt.Sprintf("{Name:%s Mechanism:%d Iterations:%d Salt:[%d bytes redacted] StoredKey:[%d bytes redacted] ServerKey:[%d bytes redacted]}",
		name, mechanism, iterations, len(salt), len(stored), len(server))
}
