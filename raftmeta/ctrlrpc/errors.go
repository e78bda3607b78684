package ctrlrpc

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// HasErrorCode reports whether any ErrorCode field of resp, at any depth,
// holds code. Kafka's channel checks a response's error counts for
// NOT_CONTROLLER the same way (AbstractResponse.errorCounts), whichever
// level of the response the error sits at.
func HasErrorCode(resp kmsg.Response, code int16) bool {
	if resp == nil {
		return false
	}
	return hasCode(reflect.ValueOf(resp), code)
}

func hasCode(v reflect.Value, code int16) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && hasCode(v.Elem(), code)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() != reflect.Struct && v.Type().Elem().Kind() != reflect.Slice {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if hasCode(v.Index(i), code) {
				return true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
				if int16(v.Field(i).Int()) == code {
					return true
				}
				continue
			}
			if hasCode(v.Field(i), code) {
				return true
			}
		}
	}
	return false
}
