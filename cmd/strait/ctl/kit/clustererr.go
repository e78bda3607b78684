package kit

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// WithMessage is a per-resource Kafka error (kadm's Err) with the
// broker's ErrorMessage, which says more than the code's generic
// description and so replaces it: "INVALID_REQUEST: Unexpected broker id,
// expected 1". Nil when err is nil.
func WithMessage(err error, msg string) error {
	if err == nil {
		return nil
	}
	if msg == "" || msg == err.Error() {
		return err
	}
	line := err.Error() + ": " + msg
	var ke *kerr.Error
	if errors.As(err, &ke) {
		line = ke.Message + ": " + msg
	}
	return &messageErr{line: line, err: err}
}

type messageErr struct {
	line string
	err  error
}

// Error is the whole line; Fail prints it as is (it does not unwrap to
// the kerr.Error, whose description alone would drop the message).
func (e *messageErr) Error() string { return e.line }

// ErrName is err's Kafka error name for a table's ERROR column
// (TOPIC_AUTHORIZATION_FAILED), "" for nil, else the error's text.
func ErrName(err error) string {
	if err == nil {
		return ""
	}
	var ke *kerr.Error
	var me *messageErr
	switch {
	case errors.As(err, &me):
		return ErrName(me.err)
	case errors.As(err, &ke):
		return ke.Message
	}
	return err.Error()
}

// JSONThen prints v as --json and returns code: a command that printed
// per-item errors exits 1 after its output.
func (c *Ctx) JSONThen(v any, code int) int {
	if rc := c.JSON(v); rc != ExitOK {
		return rc
	}
	return code
}

// ItemFailed prints one item's error as one line ("strait user delete:
// ghost: RESOURCE_NOT_FOUND: ...") and returns ExitFailed.
func (c *Ctx) ItemFailed(item string, err error) int {
	fmt.Fprintf(c.Stderr, "strait %s: %s: %s\n", c.Cmd, item, Describe(err, c.conn, c.Globals.Timeout))
	return ExitFailed
}
