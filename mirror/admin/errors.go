package admin

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Error is a Kafka error a mirror RPC answered with at the request (or
// mirror) level: the error of the code, named by mirrormsg.ErrorForCode,
// and the broker's ErrorMessage. Its text is "NAME: message", the form the
// CLI prints; it unwraps to the *kerr.Error so errors.Is matches the
// mirrormsg and kerr error values.
type Error struct {
	Err     *kerr.Error
	Message string // the broker's ErrorMessage; "" if it sent none
}

func (e *Error) Error() string {
	return e.Err.Message + ": " + e.Detail()
}

// Detail is the broker's message, or the error's description when the
// broker sent none.
func (e *Error) Detail() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Err.Description
}

func (e *Error) Unwrap() error { return e.Err }

// codeError returns the *Error of code and msg, or nil for code 0.
func codeError(code int16, msg *string) error {
	ke := mirrormsg.TypedErrorForCode(code)
	if ke == nil {
		return nil
	}
	e := &Error{Err: ke}
	if msg != nil {
		e.Message = *msg
	}
	return e
}

// kafkaError is mirrormsg.ErrorForCode: nil (an untyped nil, safe to
// compare) for code 0, otherwise a *kerr.Error.
func kafkaError(code int16) error {
	return mirrormsg.ErrorForCode(code)
}

// ErrorName returns the Kafka name of err's Kafka error (e.g.
// "UNKNOWN_CLUSTER_MIRROR"), or "" if err is not one.
func ErrorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return ""
}
