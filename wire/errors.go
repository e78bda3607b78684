package wire

import "errors"

// Why the server closed a connection or refused to start. Protocol-level
// failures inside a request are Kafka error codes in its response; these
// are the failures Kafka answers by closing the connection.
var (
	// ErrInvalidConfig wraps every configuration error.
	ErrInvalidConfig = errors.New("wire: invalid config")
	// ErrServerClosed is returned by Start after Shutdown, and by a second Start.
	ErrServerClosed = errors.New("wire: server closed")
	// ErrInvalidFrameSize is a negative size prefix (Kafka's
	// InvalidReceiveException "Invalid receive (size = -1)").
	ErrInvalidFrameSize = errors.New("wire: invalid request size")
	// ErrFrameTooLarge is a size prefix above socket.request.max.bytes.
	ErrFrameTooLarge = errors.New("wire: request larger than socket.request.max.bytes")
	// ErrInvalidHeader is a request header that cannot be parsed.
	ErrInvalidHeader = errors.New("wire: invalid request header")
	// ErrUnknownAPIKey is an API key this broker does not serve.
	ErrUnknownAPIKey = errors.New("wire: unknown api key")
	// ErrUnsupportedVersion is a version outside the range registered for
	// the key (ApiVersions excepted: it falls back to v0).
	ErrUnsupportedVersion = errors.New("wire: unsupported api version")
	// ErrInvalidRequest is a request body kmsg cannot decode.
	ErrInvalidRequest = errors.New("wire: invalid request body")
)
