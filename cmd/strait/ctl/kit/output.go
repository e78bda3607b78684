package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kerr"
)

// NewTable is the table writer every command prints with: columns two
// spaces apart, headers in capitals, "-" for nothing.
func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
}

// JSON prints v as indented JSON and returns ExitOK (ExitFailed if it
// cannot be encoded).
func (c *Ctx) JSON(v any) int {
	enc := json.NewEncoder(c.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return c.Fail(err)
	}
	return ExitOK
}

// Fail prints err as one line and returns ExitFailed. A Kafka error is
// "NAME: description" (UNKNOWN_TOPIC_OR_PARTITION: ...); an unreachable
// cluster says so and names the brokers tried.
func (c *Ctx) Fail(err error) int {
	fmt.Fprintf(c.Stderr, "strait %s: %s\n", c.Cmd, Describe(err, c.conn, c.Globals.Timeout))
	return ExitFailed
}

// Describe is err in words for one line of stderr.
func Describe(err error, conn *Conn, timeout any) string {
	var ke *kerr.Error
	var ne net.Error
	switch {
	case errors.As(err, &ke):
		return fmt.Sprintf("%s: %s", ke.Message, ke.Description)
	case errors.Is(err, context.DeadlineExceeded) && conn != nil:
		return fmt.Sprintf("no answer from %v within --timeout %v", conn.Brokers, timeout)
	case errors.As(err, &ne) && conn != nil:
		return fmt.Sprintf("cannot reach the cluster at %v: %v", conn.Brokers, err)
	}
	return err.Error()
}

// ErrorName is a Kafka error code's name ("NONE" for 0), for tables and
// --json.
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return fmt.Sprintf("ERROR_%d", code)
}
