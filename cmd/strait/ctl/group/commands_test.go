package group

import (
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func matches(t *testing.T, r ctltest.Result, res ...string) {
	t.Helper()
	for _, re := range res {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Fatalf("output lacks %s\n%s", re, r)
		}
	}
}

// busyAndIdle makes a Stable group busy-app (a member committed 1 on
// orders/0) and an Empty group idle-app (2 committed by an admin).
func busyAndIdle(t *testing.T, tg ctltest.Target) {
	t.Helper()
	produce(t, tg, "orders", time.Now(), 2)
	activeMember(t, tg, "busy-app", "orders", "busy", false, map[int32]int64{0: 1})
	adminCommit(t, tg, "idle-app", "orders", map[int32]int64{0: 2})
}

// TestList: every group with its type and state; --states filters in any
// case; an unknown state is a usage error.
func TestList(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			busyAndIdle(t, tg)

			r := ctltest.Must(t, tg, "", "group", "list")
			matches(t, r, `(?m)^BROKER\s+GROUP\s+TYPE\s+STATE$`, `(?m)^\d+\s+busy-app\s+\S+\s+Stable$`, `(?m)^\d+\s+idle-app\s+\S+\s+Empty$`)

			r = ctltest.Must(t, tg, "", "group", "list", "--states", "empty", "--json")
			var got []listedJSON
			decode(t, r, &got)
			if len(got) != 1 || got[0].Group != "idle-app" || got[0].State != "Empty" || got[0].ProtocolType != "" && got[0].ProtocolType != "consumer" {
				t.Fatalf("%+v\n%s", got, r)
			}
			r = ctltest.Must(t, tg, "", "group", "list", "--json")
			decode(t, r, &got)
			if len(got) != 2 || got[0].Group != "busy-app" || got[0].State != "Stable" || got[0].ProtocolType != "consumer" {
				t.Fatalf("%+v\n%s", got, r)
			}
			oneLine(t, ctltest.Run(t, tg, "", "group", "list", "--states", "Sleeping"), 2, `unknown state "Sleeping"`)
		})
	}
}

// TestDelete: an Empty group goes; one with members is refused
// (NON_EMPTY_GROUP) and a missing one is GROUP_ID_NOT_FOUND, each named on
// its own line, exit 1.
func TestDelete(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			busyAndIdle(t, tg)
			adminCommit(t, tg, "idle-too", "orders", map[int32]int64{0: 2})

			r := ctltest.Must(t, tg, "", "group", "delete", "idle-too")
			matches(t, r, `(?m)^GROUP\s+STATUS$`, `(?m)^idle-too\s+OK$`)

			r = ctltest.Run(t, tg, "", "group", "delete", "idle-app", "busy-app", "nosuch", "--json")
			var got []deletedJSON
			decode(t, r, &got)
			if r.Code != 1 || len(got) != 3 || got[0].Error != "" || !strings.HasPrefix(got[1].Error, "NON_EMPTY_GROUP") ||
				!strings.HasPrefix(got[2].Error, "GROUP_ID_NOT_FOUND") {
				t.Fatalf("%+v\n%s", got, r)
			}
			if !strings.Contains(r.Stderr, "strait group delete: busy-app: NON_EMPTY_GROUP") ||
				!strings.Contains(r.Stderr, "strait group delete: nosuch: GROUP_ID_NOT_FOUND") || strings.Count(r.Stderr, "\n") != 2 {
				t.Fatalf("%s", r)
			}
			listed, err := admin(t, tg).ListGroups(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := listed["idle-app"]; ok || len(listed) != 1 {
				t.Fatalf("groups after delete: %v", listed.Groups())
			}
		})
	}
}

// TestSeek: an Empty group's commits moved to the start, the end, an
// offset (kept within the log), a time in ms and @RFC3339; a new topic
// only with --allow-new-topics; a group with members is refused and its
// commits stay.
func TestSeek(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			base := time.UnixMilli(1_700_000_000_000)
			produce(t, tg, "orders", base, 10, 6)
			produce(t, tg, "audit", base, 4)
			adminCommit(t, tg, "app", "orders", map[int32]int64{0: 5, 1: 2})

			seek := func(want map[int32]int64, args ...string) ctltest.Result {
				t.Helper()
				r := ctltest.Must(t, tg, "", append([]string{"group", "seek", "app"}, args...)...)
				if got := commits(t, tg, "app", "orders"); !maps.Equal(got, want) {
					t.Fatalf("commits %v, want %v\n%s", got, want, r)
				}
				return r
			}
			r := seek(map[int32]int64{0: 0, 1: 0}, "--to", "start")
			matches(t, r, `(?m)^TOPIC\s+PARTITION\s+PRIOR-OFFSET\s+NEW-OFFSET$`, `(?m)^orders\s+0\s+5\s+0$`, `(?m)^orders\s+1\s+2\s+0$`)
			r = seek(map[int32]int64{0: 10, 1: 6}, "--to", "end", "--json")
			var got []seekedJSON
			decode(t, r, &got)
			if len(got) != 2 || *got[0].PriorOffset != 0 || got[0].NewOffset != 10 || got[1].NewOffset != 6 {
				t.Fatalf("%+v\n%s", got, r)
			}
			seek(map[int32]int64{0: 7, 1: 6}, "--to-offset", "7")
			seek(map[int32]int64{0: 3, 1: 3}, "--to", strconv.FormatInt(base.Add(3*time.Second).UnixMilli(), 10))
			seek(map[int32]int64{0: 8, 1: 6}, "--to", "@"+base.Add(7500*time.Millisecond).UTC().Format(time.RFC3339Nano))
			seek(map[int32]int64{0: 3, 1: 3}, "--to", "@"+strconv.FormatInt(base.Add(3*time.Second).UnixMilli(), 10)) // consume -o's form

			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app", "--to", "start", "--topics", "audit"), 1, `no commits on topic "audit"`, "--allow-new-topics")
			ctltest.Must(t, tg, "", "group", "seek", "app", "--to", "end", "--topics", "audit", "--allow-new-topics")
			if got := commits(t, tg, "app", "audit"); !maps.Equal(got, map[int32]int64{0: 4}) {
				t.Fatalf("audit commits %v", got)
			}
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app", "--to", "start", "--topics", "ghost", "--allow-new-topics"), 1, "topic ghost: UNKNOWN_TOPIC_OR_PARTITION")
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app", "--to", "yesterday"), 2, `--to "yesterday" is not`)
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app"), 2, "one of --to or --to-offset is required")
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app", "--to-offset", "-1"), 2, `"-1" is not an offset`)
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "app", "--to", "end", "--to-offset", "1"), 2, "cannot both be given")

			// A KIP-848 group whose member has left is Empty: seekable.
			gone := activeMember(t, tg, "next-app", "orders", "gone", true, map[int32]int64{0: 9, 1: 5})
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "next-app", "--to", "start"), 1, "NON_EMPTY_GROUP")
			gone.Close()
			waitState(t, tg, "next-app", "Empty")
			ctltest.Must(t, tg, "", "group", "seek", "next-app", "--to-offset", "4")
			if got := commits(t, tg, "next-app", "orders"); !maps.Equal(got, map[int32]int64{0: 4, 1: 4}) {
				t.Fatalf("next-app commits %v", got)
			}

			activeMember(t, tg, "busy-app", "orders", "busy", false, map[int32]int64{0: 1, 1: 1})
			oneLine(t, ctltest.Run(t, tg, "", "group", "seek", "busy-app", "--to", "end"), 1,
				"strait group seek: NON_EMPTY_GROUP", `group "busy-app" is inactive`, "Stable")
			if got := commits(t, tg, "busy-app", "orders"); !maps.Equal(got, map[int32]int64{0: 1, 1: 1}) {
				t.Fatalf("the active group's commits changed: %v", got)
			}
		})
	}
}

// TestOffsetDelete: commits deleted for named partitions, or a whole
// topic; a topic the group's members consume is refused per partition
// (GROUP_SUBSCRIBED_TO_TOPIC) and a missing topic is named, exit 1.
func TestOffsetDelete(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			produce(t, tg, "orders", time.Now(), 3, 3, 3)
			produce(t, tg, "audit", time.Now(), 3, 3)
			adminCommit(t, tg, "app", "orders", map[int32]int64{0: 1, 1: 2, 2: 3})
			adminCommit(t, tg, "app", "audit", map[int32]int64{0: 1, 1: 1})

			r := ctltest.Must(t, tg, "", "group", "offset-delete", "app", "--topic", "orders:0,2")
			matches(t, r, `(?m)^TOPIC\s+PARTITION\s+STATUS$`, `(?m)^orders\s+0\s+OK$`, `(?m)^orders\s+2\s+OK$`)
			if got := commits(t, tg, "app", "orders"); !maps.Equal(got, map[int32]int64{1: 2}) {
				t.Fatalf("orders commits %v", got)
			}
			r = ctltest.Run(t, tg, "", "group", "offset-delete", "app", "--topic", "audit", "--topic", "ghost", "--json")
			var got []offsetDeletedJSON
			decode(t, r, &got)
			if r.Code != 1 || len(got) != 3 || got[0].Topic != "audit" || got[0].Error != "" || got[1].Error != "" ||
				got[2].Topic != "ghost" || !strings.HasPrefix(got[2].Error, "UNKNOWN_TOPIC_OR_PARTITION") {
				t.Fatalf("%+v\n%s", got, r)
			}
			oneLine(t, r, 1, "strait group offset-delete: topic ghost: UNKNOWN_TOPIC_OR_PARTITION")
			if got := commits(t, tg, "app", "audit"); len(got) != 0 {
				t.Fatalf("audit commits %v", got)
			}

			activeMember(t, tg, "busy-app", "orders", "busy", false, map[int32]int64{0: 1})
			oneLine(t, ctltest.Run(t, tg, "", "group", "offset-delete", "busy-app", "--topic", "orders:0"), 1,
				"strait group offset-delete: orders/0: GROUP_SUBSCRIBED_TO_TOPIC")
			if got := commits(t, tg, "busy-app", "orders"); !maps.Equal(got, map[int32]int64{0: 1}) {
				t.Fatalf("busy-app commits %v", got)
			}
			oneLine(t, ctltest.Run(t, tg, "", "group", "offset-delete", "app", "--topic", "orders:x"), 2, `partition "x" is not a number`)
			oneLine(t, ctltest.Run(t, tg, "", "group", "offset-delete", "app"), 2, "--topic is required")
		})
	}
}

// TestUnreachableAndUsage: each subcommand against no cluster is one line
// naming the brokers tried, exit 1; a bad flag and a missing argument are
// usage errors, exit 2.
func TestUnreachableAndUsage(t *testing.T) {
	none := ctltest.Target{Name: "none", Brokers: "127.0.0.1:1"}
	for _, args := range [][]string{
		{"list"}, {"describe", "g"}, {"delete", "g"}, {"seek", "g", "--to", "start"}, {"offset-delete", "g", "--topic", "t:0"},
	} {
		r := ctltest.Run(t, none, "", append(append([]string{"group"}, args...), "--timeout", "3s")...)
		oneLine(t, r, 1, "strait group "+args[0]+": ", "127.0.0.1:1")
	}
	oneLine(t, ctltest.Run(t, none, "", "group", "describe", "g", "--bogus"), 2, "flag provided but not defined: -bogus")
	oneLine(t, ctltest.Run(t, none, "", "group", "describe"), 2, "missing argument")
	if r := ctltest.Run(t, none, "", "group", "seek", "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "--allow-new-topics") ||
		!strings.Contains(r.Stdout, "strait group seek orders-app --to start") {
		t.Fatalf("%s", r)
	}
}
