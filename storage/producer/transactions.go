package producer

// FirstUnstableOffset is the smallest first offset of the transactions that
// are ongoing, or completed with a marker not yet below the high watermark;
// the Log's last stable offset cannot pass it
// (ProducerStateManager.firstUnstableOffset).
func (m *Manager) FirstUnstableOffset() (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, uok := m.unreplicated.first()
	o, ook := m.ongoing.first()
	switch {
	case !uok && !ook:
		return 0, false
	case !uok:
		return o.FirstOffset, true
	case !ook:
		return u.FirstOffset, true
	}
	return min(o.FirstOffset, u.FirstOffset), true
}

// FirstUndecidedOffset is the first offset of the oldest ongoing
// transaction, ignoring replication.
func (m *Manager) FirstUndecidedOffset() (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.ongoing.first()
	return o.FirstOffset, ok
}

// OnHighWatermarkUpdated forgets completed transactions whose markers are
// now below the high watermark, letting the first unstable offset advance.
func (m *Manager) OnHighWatermarkUpdated(hw int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeUnreplicatedLocked(hw)
}

// OngoingTxns returns the open transactions by first offset.
func (m *Manager) OngoingTxns() []TxnMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]TxnMetadata(nil), m.ongoing...)
}

// UnreplicatedTxns returns the completed transactions still above the high
// watermark, by first offset.
func (m *Manager) UnreplicatedTxns() []TxnMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]TxnMetadata(nil), m.unreplicated...)
}

// removeUnreplicatedLocked drops completed transactions whose marker is
// below offset. mu must be held.
func (m *Manager) removeUnreplicatedLocked(offset int64) {
	kept := m.unreplicated[:0]
	for _, t := range m.unreplicated {
		if t.LastOffset >= offset {
			kept = append(kept, t)
		}
	}
	m.unreplicated = kept
}

// lastStableOffsetLocked is the LSO to record with c: the first offset of
// the oldest transaction still open by another producer, or the offset after
// c's marker (ProducerStateManager.lastStableOffset). mu must be held.
func (m *Manager) lastStableOffsetLocked(c CompletedTxn) int64 {
	for _, t := range m.ongoing {
		if t.ProducerID != c.ProducerID {
			return t.FirstOffset
		}
	}
	return c.LastOffset + 1
}

// completeTxnLocked moves c from ongoing to unreplicated. Kafka throws if c
// was never started; that cannot happen here because an Update records a
// completion only for a transaction its entry shows open, and entries and
// ongoing transactions change together. mu must be held.
func (m *Manager) completeTxnLocked(c CompletedTxn) {
	m.ongoing.remove(c.FirstOffset)
	m.unreplicated.put(TxnMetadata{ProducerID: c.ProducerID, FirstOffset: c.FirstOffset, LastOffset: c.LastOffset})
}
