package record

// Codec is a batch's compression codec (attributes bits 0-2).
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// Valid reports whether Kafka defines the codec.
func (c Codec) Valid() bool { return c >= CodecNone && c <= CodecZstd }

func (c Codec) String() string {
	if c.Valid() {
		return codecNames[c]
	}
	return "unknown"
}

// ParseCodec maps a compression.type name (as producers and topic configs
// spell it) to a Codec.
func ParseCodec(name string) (Codec, bool) {
	for i, n := range codecNames {
		if n == name {
			return Codec(i), true
		}
	}
	return 0, false
}
