package syncer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// planQuotas sets what differs, removes what the source lacks (keys and
// whole entities), and leaves equal entities alone.
func TestPlanQuotas(t *testing.T) {
	alice := raftmeta.QuotaEntity{User: raftmeta.Named("alice")}
	defaults := raftmeta.QuotaEntity{User: raftmeta.DefaultName(), ClientID: raftmeta.DefaultName()}
	local := raftmeta.QuotaEntity{ClientID: raftmeta.Named("local")}
	same := raftmeta.QuotaEntity{User: raftmeta.Named("same")}
	src := kadm.DescribedClientQuotas{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("alice")}}, Values: kadm.ClientQuotaValues{{Key: "producer_byte_rate", Value: 6}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}, {Type: "client-id"}}, Values: kadm.ClientQuotaValues{{Key: "consumer_byte_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("same")}}, Values: kadm.ClientQuotaValues{{Key: "request_percentage", Value: 5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "group", Name: kmsg.StringPtr("g")}}, Values: kadm.ClientQuotaValues{{Key: "x", Value: 1}}},
	}
	dst := map[raftmeta.QuotaEntity]map[string]float64{
		alice:    {"producer_byte_rate": 5, "request_percentage": 10},
		defaults: {"consumer_byte_rate": 1},
		local:    {"producer_byte_rate": 42},
		same:     {"request_percentage": 5},
	}
	var got []string
	for _, e := range planQuotas(src, dst) {
		var ops []string
		for _, o := range e.Ops {
			if o.Remove {
				ops = append(ops, "-"+o.Key)
			} else {
				ops = append(ops, fmt.Sprintf("%s=%g", o.Key, o.Value))
			}
		}
		got = append(got, e.Entity.String()+":"+strings.Join(ops, ","))
	}
	want := "{client-id=local}:-producer_byte_rate {user=alice}:producer_byte_rate=6,-request_percentage"
	if strings.Join(got, " ") != want {
		t.Errorf("plan\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}
