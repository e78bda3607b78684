package record

// WholeBatches cuts a trailing partial batch off fetched data: a read may
// end inside a batch when its size limit or a concurrent truncation cuts
// one, and Kafka's clients drop it the same way.
func WholeBatches(buf []byte) []byte {
	pos := 0
	for len(buf)-pos >= LogOverhead {
		size := LogOverhead + int(Batch(buf[pos:]).BatchLength())
		if size <= LogOverhead || len(buf)-pos < size {
			break
		}
		pos += size
	}
	return buf[:pos]
}
