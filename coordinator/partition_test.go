package coordinator

import "testing"

func TestJavaStringHashCode(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"hello", 99162322},
		{"Aa", 2112},
		{"BB", 2112},
		{"polygenelubricants", -2147483648}, // Integer.MIN_VALUE
		{"\U0001F600", 0xD83D*31 + 0xDE00},  // a surrogate pair: two UTF-16 units
		{"é", 0xE9},                         // one UTF-16 unit, two UTF-8 bytes
	} {
		if got := JavaStringHashCode(tc.s); got != tc.want {
			t.Errorf("hashCode(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		group string
		n     int32
		want  int32
	}{
		{"polygenelubricants", 50, 0}, // Utils.abs(MIN_VALUE) is 0, not negative
		{"hello", 50, 99162322 % 50},
		{"Aa", 7, 2112 % 7},
		{"", 50, 0},
		// "test-group".hashCode() is 627841412 (computed independently over UTF-16).
		{"test-group", 50, 627841412 % 50},
	} {
		if got := PartitionFor(tc.group, tc.n); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.group, tc.n, got, tc.want)
		}
	}
}

func TestJavaLength(t *testing.T) {
	if got := javaLength("a\U0001F600é"); got != 4 {
		t.Fatalf("javaLength = %d, want 4 (1 + surrogate pair + 1)", got)
	}
}

func TestJavaStringHashCodeInvalidUTF8(t *testing.T) {
	// Kafka decodes the group id from UTF-8 with replacement: one U+FFFD
	// per bad byte, as Go's range over a string does.
	if got, want := JavaStringHashCode("a\xffb"), JavaStringHashCode("a\uFFFDb"); got != want {
		t.Fatalf("hash of invalid UTF-8 %d, want %d", got, want)
	}
}

func BenchmarkPartitionFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		PartitionFor("my-consumer-group-\U0001F600", 50)
	}
}
