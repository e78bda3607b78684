package oauthbearer

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func baseProps() map[string]string {
	return map[string]string{
		"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class": ValidatorCallbackHandler,
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config":                   LoginModule + " required ;",
		"sasl.oauthbearer.jwks.endpoint.url":                                    "https://idp.example/jwks",
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig("SASL_SSL", baseProps())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		JWKSURL:             "https://idp.example/jwks",
		JWKSRefresh:         time.Hour,
		JWKSRetryBackoff:    100 * time.Millisecond,
		JWKSRetryBackoffMax: 10 * time.Second,
		Claims:              ClaimRules{SubClaim: "sub", ScopeClaim: "scope", ClockSkew: 30 * time.Second},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestParseConfigReadsEveryKeyAndListenerOverrides(t *testing.T) {
	p := baseProps()
	p["listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class"] = "  " + validatorCallbackHandlerOld + " "
	p["listener.name.sasl_ssl.oauthbearer.sasl.jaas.config"] = LoginModule + ` required unsecuredLoginStringClaim_sub="x";`
	p["sasl.oauthbearer.jwks.endpoint.url"] = "https://broker-wide/jwks"
	p["listener.name.sasl_ssl.sasl.oauthbearer.jwks.endpoint.url"] = "file:///etc/strait/jwks.json"
	p["listener.name.other.sasl.oauthbearer.expected.issuer"] = "https://not-this-listener"
	p["sasl.oauthbearer.jwks.endpoint.refresh.ms"] = "60000"
	p["sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"] = "0"
	p["sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"] = "2000"
	p["sasl.oauthbearer.expected.audience"] = " kafka, ,strait "
	p["sasl.oauthbearer.expected.issuer"] = "https://idp.example"
	p["sasl.oauthbearer.sub.claim.name"] = "client_id"
	p["listener.name.sasl_ssl.sasl.oauthbearer.scope.claim.name"] = "scp"
	p["sasl.oauthbearer.clock.skew.seconds"] = "0"
	c, err := ParseConfig("SASL_SSL", p)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		JWKSURL:             "file:///etc/strait/jwks.json",
		JWKSRefresh:         time.Minute,
		JWKSRetryBackoff:    0,
		JWKSRetryBackoffMax: 2 * time.Second,
		Claims: ClaimRules{
			ExpectedAudience: []string{"kafka", "strait"},
			ExpectedIssuer:   "https://idp.example",
			SubClaim:         "client_id",
			ScopeClaim:       "scp",
			ClockSkew:        0,
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	for k := range p {
		if k == "listener.name.other.sasl.oauthbearer.expected.issuer" {
			continue
		}
		found := false
		for _, known := range ConfigKeys("SASL_SSL") {
			found = found || known == k
		}
		if !found {
			t.Errorf("ConfigKeys does not list %s, which ParseConfig read", k)
		}
	}
}

func TestParseConfigRefusals(t *testing.T) {
	const handler = "listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class"
	const jaas = "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config"
	for name, tc := range map[string]struct {
		set  map[string]string
		want string
	}{
		"no handler": {map[string]string{handler: ""}, "unsecured handler, which accepts unsigned tokens"},
		"unsecured handler": {map[string]string{handler: unsecuredCallbackHandler},
			"needs " + handler + "=" + ValidatorCallbackHandler},
		"custom handler":       {map[string]string{handler: "com.example.MyHandler"}, "cannot load a callback handler class"},
		"no JAAS":              {map[string]string{jaas: ""}, jaas},
		"JAAS of another":      {map[string]string{jaas: "org.apache.kafka.common.security.plain.PlainLoginModule required;"}, "OAUTHBEARER takes " + LoginModule},
		"JAAS optional":        {map[string]string{jaas: LoginModule + " optional;"}, "only required"},
		"JAAS without ;":       {map[string]string{jaas: LoginModule + " required"}, "expected"},
		"JAAS with TLS option": {map[string]string{jaas: LoginModule + ` required ssl.truststore.location="/x";`}, "ssl.truststore.location"},
		"no JWKS URL":          {map[string]string{"sasl.oauthbearer.jwks.endpoint.url": ""}, "needs sasl.oauthbearer.jwks.endpoint.url"},
		"JWKS URL ftp":         {map[string]string{"sasl.oauthbearer.jwks.endpoint.url": "ftp://x/jwks"}, "sasl.oauthbearer.jwks.endpoint.url=ftp://x/jwks"},
		"refresh 0":            {map[string]string{"sasl.oauthbearer.jwks.endpoint.refresh.ms": "0"}, "sasl.oauthbearer.jwks.endpoint.refresh.ms=0"},
		"refresh not a number": {map[string]string{"listener.name.sasl_ssl.sasl.oauthbearer.jwks.endpoint.refresh.ms": "1h"}, "listener.name.sasl_ssl.sasl.oauthbearer.jwks.endpoint.refresh.ms=1h"},
		"negative backoff":     {map[string]string{"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": "-1"}, "retry.backoff.ms=-1"},
		"negative skew":        {map[string]string{"sasl.oauthbearer.clock.skew.seconds": "-5"}, "clock.skew.seconds=-5"},
		"empty sub claim":      {map[string]string{"sasl.oauthbearer.sub.claim.name": " "}, "sasl.oauthbearer.sub.claim.name must not be empty"},
		"empty scope claim":    {map[string]string{"sasl.oauthbearer.scope.claim.name": ""}, "sasl.oauthbearer.scope.claim.name must not be empty"},
	} {
		t.Run(name, func(t *testing.T) {
			p := baseProps()
			for k, v := range tc.set {
				p[k] = v
			}
			_, err := ParseConfig("SASL_SSL", p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want one saying %q", err, tc.want)
			}
		})
	}
}
