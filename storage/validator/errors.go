package validator

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

var (
	// ErrBadNextOffset is returned when the caller's next offset is negative
	// or the append would run past the largest offset. It is a caller bug,
	// not a client error, so it carries no Kafka error code.
	ErrBadNextOffset = errors.New("validator: offsets cannot be assigned")
	// ErrWrongOrigin is returned when a replicated append is sent down the
	// leader path, which would reassign the offsets it carries.
	ErrWrongOrigin = errors.New("validator: replicated appends must use ValidateReplicated")
)

// maxRecordErrors bounds how many per-record errors one rejection keeps.
// Kafka keeps them all, but a compressed batch can hold tens of millions of
// records and every one of them could be bad; the response would then be
// larger than anything a client should receive. The total is still counted.
const maxRecordErrors = 1000

func invalidRecord(format string, args ...any) *record.Error {
	return record.Errorf(kerr.InvalidRecord, format, args...)
}

func corrupt(format string, args ...any) *record.Error {
	return record.Errorf(kerr.CorruptMessage, format, args...)
}

// recordErrors collects the per-record problems of one batch (KIP-467).
type recordErrors struct {
	list       []record.RecordError
	total      int
	timestamps bool // some problem is a timestamp one
}

func (r *recordErrors) add(index int32, timestamp bool, format string, args ...any) {
	r.total++
	r.timestamps = r.timestamps || timestamp
	if len(r.list) < maxRecordErrors {
		r.list = append(r.list, record.RecordError{Index: index, Msg: fmt.Sprintf(format, args...)})
	}
}

// err turns the collected problems into one batch rejection, or nil. As
// LogValidator.processRecordErrors does, any timestamp problem makes the
// whole batch INVALID_TIMESTAMP; otherwise it is INVALID_RECORD.
func (r *recordErrors) err() error {
	if r.total == 0 {
		return nil
	}
	if r.timestamps {
		return &record.Error{
			Code:    kerr.InvalidTimestamp,
			Msg:     "One or more records have been rejected due to invalid timestamp",
			Records: r.list,
		}
	}
	shown := r.list[:min(3, len(r.list))]
	msg := fmt.Sprintf("One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", r.total)
	for i, e := range shown {
		if i > 0 {
			msg += ", "
		}
		msg += fmt.Sprintf("record %d: %s", e.Index, e.Msg)
	}
	return &record.Error{Code: kerr.InvalidRecord, Msg: msg + "]", Records: r.list}
}
