package config

import (
	"reflect"
	"testing"
)

// authorizer.class.name turns ACL enforcement on only for Kafka's KRaft
// StandardAuthorizer; super.users splits on semicolons (a certificate DN
// has commas); bad values are refused naming the key.
func TestAuthorizerConfig(t *testing.T) {
	c, err := New(map[string]string{})
	if err != nil || c.Authorizer.Enabled || c.Authorizer.AllowEveryoneIfNoACL || c.Authorizer.SuperUsers != nil {
		t.Fatalf("default: %+v %v", c.Authorizer, err)
	}
	c, err = New(map[string]string{
		"authorizer.class.name":          StandardAuthorizerClass,
		"super.users":                    "User:admin; User:CN=broker,OU=ops,O=Strait ;",
		"allow.everyone.if.no.acl.found": "true",
	})
	want := Authorizer{Enabled: true, SuperUsers: []string{"User:admin", "User:CN=broker,OU=ops,O=Strait"}, AllowEveryoneIfNoACL: true}
	if err != nil || !reflect.DeepEqual(c.Authorizer, want) {
		t.Fatalf("got %+v %v, want %+v", c.Authorizer, err, want)
	}
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"},
			"authorizer.class.name: kafka.security.authorizer.AclAuthorizer is ZooKeeper's authorizer, removed in Kafka 4.0; use " + StandardAuthorizerClass},
		{map[string]string{"authorizer.class.name": "com.example.MyAuthorizer"},
			"authorizer.class.name: class com.example.MyAuthorizer is not available; the only authorizer is " + StandardAuthorizerClass},
		{map[string]string{"super.users": "admin"},
			`super.users: "admin" is not a principal of the form User:name (principals are separated by semicolons)`},
		{map[string]string{"super.users": "User:"},
			`super.users: "User:" is not a principal of the form User:name (principals are separated by semicolons)`},
	} {
		if _, err := New(tc.props); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
	if _, err := New(map[string]string{"allow.everyone.if.no.acl.found": "maybe"}); err == nil {
		t.Error("allow.everyone.if.no.acl.found=maybe accepted")
	} else {
		t.Log(err)
	}
}
