package record

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is a rejection with the Kafka error a client gets for it. It unwraps
// to the kerr value, so errors.Is(err, kerr.CorruptMessage) works.
type Error struct {
	Code *kerr.Error
	Msg  string
	// Records lists per-record problems (ProduceResponse RecordErrors,
	// KIP-467); empty when the whole batch is at fault.
	Records []RecordError
}

// RecordError names one bad record by its index in the batch.
type RecordError struct {
	Index int32
	Msg   string
}

func (e *Error) Error() string { return e.Code.Message + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Code }

// Errorf builds an Error.
func Errorf(code *kerr.Error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func corruptf(format string, args ...any) *Error {
	return Errorf(kerr.CorruptMessage, format, args...)
}

func invalidf(format string, args ...any) *Error {
	return Errorf(kerr.InvalidRecord, format, args...)
}
