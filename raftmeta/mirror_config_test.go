package raftmeta

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testPEM returns a self-signed certificate and its unencrypted key.
func testPEM(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "source"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

func TestValidateMirrorConfigs(t *testing.T) {
	cert, key := testPEM(t)
	plain := `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
	scram := `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`
	cfg := func(kv ...string) map[string]string {
		m := map[string]string{"bootstrap.servers": "src:9092"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		err  string // "" for valid
	}{
		{"minimal", cfg(), ""},
		{"several servers", cfg("bootstrap.servers", "a:1, b:2,[::1]:3"), ""},
		{"mirror keys", cfg("mirror.topics.include", "orders.*,pay", "mirror.topics.exclude", "__.*,tmp-.*",
			"mirror.groups.include", ".*", "mirror.groups.exclude", "", "mirror.acl.include", "TOPIC;orders.*, *;*;*;*;User:alice,GROUP;g;READ;ALLOW",
			"mirror.topic.properties.exclude", "retention.ms", "mirror.support.unclean.leader.election", "TRUE"), ""},
		{"sasl plain", cfg("security.protocol", "SASL_PLAINTEXT", "sasl.jaas.config", plain), ""},
		{"sasl scram over tls", cfg("security.protocol", "sasl_ssl", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scram,
			"ssl.truststore.type", "PEM", "ssl.truststore.certificates", cert, "ssl.endpoint.identification.algorithm", ""), ""},
		{"mutual tls", cfg("security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.key", key, "ssl.keystore.certificate.chain", cert,
			"ssl.enabled.protocols", "TLSv1.2,TLSv1.3", "ssl.protocol", "TLSv1.3", "ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"), ""},

		{"no bootstrap", map[string]string{"security.protocol": "SSL"}, "Missing required mirror config bootstrap.servers"},
		{"blank bootstrap", cfg("bootstrap.servers", " , "), "Invalid value \" , \" for mirror config bootstrap.servers: no host:port"},
		{"bootstrap without port", cfg("bootstrap.servers", "src"), `"src" is not host:port`},
		{"bootstrap bad port", cfg("bootstrap.servers", "src:0"), `"src:0" has no valid port`},
		{"bootstrap no host", cfg("bootstrap.servers", ":9092"), `":9092" has no host`},
		{"unknown key", cfg("client.id", "x"), "Unknown mirror config name: client.id"},
		{"class", cfg("sasl.login.class", "x.Y"), "Invalid mirror config sasl.login.class: class names are not accepted"},
		{"engine factory", cfg("ssl.engine.factory.class", "x.Y"), "class names are not accepted"},
		{"providers", cfg("security.providers", "x.Y"), "class names are not accepted"},
		{"truststore file", cfg("ssl.truststore.location", "/etc/ssl/ts.jks"), "Invalid value for mirror config ssl.truststore.location: file paths are not accepted"},
		{"keystore file", cfg("ssl.keystore.location", "/k.p12"), "file paths are not accepted"},
		{"key password", cfg("ssl.key.password", "pw"), "encrypted keys are not supported"},
		{"kerberos", cfg("sasl.kerberos.service.name", "kafka"), "GSSAPI is not supported"},
		{"bad protocol", cfg("security.protocol", "TLS"), "not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{"bad mechanism", cfg("security.protocol", "SASL_SSL", "sasl.mechanism", "GSSAPI", "sasl.jaas.config", plain), "sasl.mechanism: not one of PLAIN"},
		{"sasl without sasl protocol", cfg("sasl.jaas.config", plain), "SASL settings need security.protocol SASL_PLAINTEXT or SASL_SSL, not PLAINTEXT"},
		{"tls without tls protocol", cfg("security.protocol", "SASL_PLAINTEXT", "sasl.jaas.config", plain, "ssl.truststore.certificates", cert), "TLS settings need security.protocol SSL or SASL_SSL, not SASL_PLAINTEXT"},
		{"sasl without jaas", cfg("security.protocol", "SASL_SSL"), "Missing mirror config sasl.jaas.config"},
		{"jaas module mismatch", cfg("security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", plain), "needs the login module org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"jaas other module", cfg("security.protocol", "SASL_SSL", "sasl.jaas.config", `com.evil.Login required username="u" password="p";`), "login module com.evil.Login is not accepted"},
		{"jaas option", cfg("security.protocol", "SASL_SSL", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p" keyTab="/etc/k";`), "option keyTab is not accepted"},
		{"jaas optional", cfg("security.protocol", "SASL_SSL", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule optional username="u" password="p";`), "control flag optional is not accepted"},
		{"jaas no password", cfg("security.protocol", "SASL_SSL", "sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u";`), "username and password are required"},
		{"jaas garbage", cfg("security.protocol", "SASL_SSL", "sasl.jaas.config", "user=x"), "Invalid value (hidden) for mirror config sasl.jaas.config"},
		{"truststore not pem", cfg("security.protocol", "SSL", "ssl.truststore.certificates", "abc"), "no PEM certificate"},
		{"truststore jks", cfg("security.protocol", "SSL", "ssl.truststore.type", "JKS"), "not one of PEM"},
		{"key is not a key", cfg("security.protocol", "SSL", "ssl.keystore.key", cert, "ssl.keystore.certificate.chain", cert), "PEM block CERTIFICATE is not an unencrypted private key"},
		{"key without chain", cfg("security.protocol", "SSL", "ssl.keystore.key", key), "it needs ssl.keystore.certificate.chain"},
		{"old tls", cfg("security.protocol", "SSL", "ssl.enabled.protocols", "TLSv1.1"), `"TLSv1.1": not one of TLSv1.2, TLSv1.3`},
		{"bad cipher", cfg("security.protocol", "SSL", "ssl.cipher.suites", "TLS_RSA_WITH_RC4_128_SHA"), "not a secure cipher suite"},
		{"bad regex", cfg("mirror.topics.include", "orders(,x"), "mirror config mirror.topics.include: \"orders(\": error parsing regexp"},
		{"bad acl type", cfg("mirror.acl.include", "TABLE;x"), "resource type"},
		{"bad acl op", cfg("mirror.acl.include", "TOPIC;x;EAT"), "operation"},
		{"bad acl fields", cfg("mirror.acl.include", "*;*;*;*;*;*"), "more than 5 fields"},
		{"bad bool", cfg("mirror.support.unclean.leader.election", "yes"), "not true or false"},
		{"refresh interval", cfg("mirror.metadata.refresh.interval.ms", "300"), ""},
		{"zero refresh interval", cfg("mirror.metadata.refresh.interval.ms", "0"), "at least 1"},
		{"bad refresh interval", cfg("mirror.metadata.refresh.interval.ms", "1m"), "at least 1"},
		{"failover lag bound", cfg("mirror.failover.max.lag.ms", "5000"), ""},
		{"offsets skip", cfg("mirror.offsets.skip.enable", "true"), ""},
		{"offsets skip not a bool", cfg("mirror.offsets.skip.enable", "yes"), "mirror.offsets.skip.enable"},
		{"failover lag bound zero", cfg("mirror.failover.max.lag.ms", "0"), ""},
		{"no failover lag bound", cfg("mirror.failover.max.lag.ms", "-1"), ""},
		{"failover lag bound below -1", cfg("mirror.failover.max.lag.ms", "-2"), "at least 0, or -1"},
		{"failover lag bound not a number", cfg("mirror.failover.max.lag.ms", "5s"), "at least 0, or -1"},
		{"scram sync", cfg("mirror.scram.sync.enable", "true", "mirror.scram.users.include", "app-.*,ops", "mirror.scram.users.exclude", "admin"), ""},
		{"scram sync not a bool", cfg("mirror.scram.sync.enable", "on"), "not true or false"},
		{"client quota sync", cfg("mirror.client.quotas.sync.enable", "true"), ""},
		{"client quota sync not a bool", cfg("mirror.client.quotas.sync.enable", "yes"), "not true or false"},
		{"scram users bad regex", cfg("mirror.scram.users.exclude", "a(b"), "mirror config mirror.scram.users.exclude: \"a(b\": error parsing regexp"},
	} {
		err := ValidateMirrorConfigs(tc.cfg)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		case err != nil && (strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), `password="p"`)):
			t.Errorf("%s: the error shows a secret: %v", tc.name, err)
		}
	}
}

func TestParseMirrorJAAS(t *testing.T) {
	got, err := ParseMirrorJAAS(` org.apache.kafka.common.security.plain.PlainLoginModule required  password="p\"w\\d" username = "alice" ; `)
	if err != nil || got != (MirrorJAAS{Module: jaasPlainModule, Username: "alice", Password: `p"w\d`}) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ParseMirrorJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" username="b" password="p";`); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("duplicate option: %v", err)
	}
}

func TestMirrorConfigDefaultsAndSecrets(t *testing.T) {
	for key, want := range map[string]string{
		"security.protocol": "PLAINTEXT", "mirror.topics.exclude": "__.*", "mirror.groups.include": ".*",
		"mirror.acl.include": "*", "mirror.support.unclean.leader.election": "false",
		"mirror.scram.sync.enable": "false", "mirror.scram.users.include": ".*", "mirror.scram.users.exclude": "",
		"mirror.client.quotas.sync.enable": "false",
	} {
		if v, ok := MirrorConfigDefault(key); !ok || v != want {
			t.Errorf("default %s = %q %v, want %q", key, v, ok, want)
		}
	}
	if _, ok := MirrorConfigDefault("bootstrap.servers"); ok {
		t.Error("bootstrap.servers has a default")
	}
	if v, _ := MirrorConfigDefault("mirror.topic.properties.exclude"); !strings.HasSuffix(v, ",mirror.name") {
		t.Errorf("mirror.topic.properties.exclude default %q", v)
	}
	for key, want := range map[string]bool{
		"sasl.jaas.config": true, "ssl.keystore.key": true, "some.future.key": true,
		"bootstrap.servers": false, "ssl.truststore.certificates": false, "sasl.mechanism": false,
	} {
		if IsMirrorConfigSensitive(key) != want {
			t.Errorf("sensitive %s != %v", key, want)
		}
	}
}

func TestValidateMirrorName(t *testing.T) {
	for name, want := range map[string]string{
		"east": "", "east-1.prod_a": "", "a.pausedx": "",
		"": "the empty string is not allowed", ".": "'.' is not allowed", "..": "'..' is not allowed",
		strings.Repeat("m", 250): "longer than the max allowed length 249",
		"a:b":                    "characters other than ASCII alphanumerics",
		"east.paused":            "ends in '.paused'", "east.removed": "ends in '.removed'",
	} {
		err := ValidateMirrorName(name)
		if (want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "Mirror name is invalid: "))) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
}
