package storage

import (
	"errors"
)

// The log directory checkpoint files and what each holds. Kafka writes
// them on separate schedules: the high watermarks every
// replica.high.watermark.checkpoint.interval.ms (ReplicaManager, 5 s), the
// recovery points every log.flush.offset.checkpoint.interval.ms and the log
// start offsets every log.flush.start.offset.checkpoint.interval.ms
// (LogManager, 60 s each), the cleaner's after each cleaning.
var (
	highWatermarkCheckpoint  = offsetCheckpoint{ReplicationCheckpointFile, (*Log).HighWatermark}
	recoveryPointCheckpoint  = offsetCheckpoint{RecoveryPointCheckpointFile, (*Log).RecoveryPoint}
	logStartOffsetCheckpoint = offsetCheckpoint{LogStartOffsetCheckpointFile, (*Log).LogStartOffset}
	cleanerOffsetCheckpoint  = offsetCheckpoint{CleanerOffsetCheckpointFile, cleanedUpTo}
)

// offsetCheckpoint is one kind of checkpoint file: its name and the offset
// of a log it records. A log whose offset is 0 or more is listed.
type offsetCheckpoint struct {
	name   string
	offset func(*Log) int64
}

// cleanedUpTo is a log's cleaner checkpoint, or -1 (not listed) for a log
// that was never cleaned.
func cleanedUpTo(l *Log) int64 {
	if cp := l.CleanerCheckpoint(); cp > 0 {
		return cp
	}
	return -1
}

// checkpointWrites remembers, per file and directory, the offsets last
// written, so an unchanged file is not written again: an idle node with
// 10,000 partitions otherwise rewrote and fsynced every file on each pass.
// Guarded by LogManager.checkpointMu.
type checkpointWrites map[string]map[string]map[TopicPartition]int64

// Checkpoint writes every checkpoint file of every log directory: the high
// watermarks, recovery points, log start offsets and cleaner checkpoints.
// Close calls it; the periodic passes write one file each. Failing to
// write is a failure of the log directory, as in Kafka
// (LogManager.checkpointLogRecoveryOffsetsInDir takes the directory
// offline on an IOException): OnFailure hears of it as a StorageError with
// op "checkpoint".
func (m *LogManager) Checkpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.checkpointLocked()
}

// checkpointLocked is Checkpoint with checkpointMu held.
func (m *LogManager) checkpointLocked() error {
	return m.writeCheckpoints(highWatermarkCheckpoint, recoveryPointCheckpoint, logStartOffsetCheckpoint, cleanerOffsetCheckpoint)
}

// CheckpointHighWatermarks writes the high watermark checkpoint of each
// log directory (Kafka's ReplicaManager.checkpointHighWatermarks, every
// replica.high.watermark.checkpoint.interval.ms). A directory whose
// recovery point checkpoint names a point above a log's own (a truncation
// lowered it) has that file written too: recovery after a crash would
// otherwise skip segments the truncation rewrote. Kafka checkpoints the
// recovery points at once on truncation (LogManager.truncateTo); here the
// window is this pass's interval, not log.flush.offset.checkpoint.interval.ms.
func (m *LogManager) CheckpointHighWatermarks() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	groups := m.logsByDir()
	return errors.Join(m.writeCheckpointsOf(groups, highWatermarkCheckpoint), m.writeLoweredRecoveryPoints(groups))
}

// CheckpointRecoveryPoints writes the recovery point checkpoint of each log
// directory (Kafka's kafka-recovery-point-checkpoint task, every
// log.flush.offset.checkpoint.interval.ms). A crash recovers every segment
// from the checkpointed point on, so a late checkpoint costs start-up time,
// never data.
func (m *LogManager) CheckpointRecoveryPoints() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.writeCheckpoints(recoveryPointCheckpoint)
}

// CheckpointLogStartOffsets writes the log start offset checkpoint of each
// log directory (Kafka's kafka-log-start-offset-checkpoint task, every
// log.flush.start.offset.checkpoint.interval.ms). As in Kafka, records that
// DeleteRecords removed within that interval, from a segment not yet
// deleted, are readable again after a crash; nothing acknowledged is lost.
func (m *LogManager) CheckpointLogStartOffsets() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.writeCheckpoints(logStartOffsetCheckpoint)
}

// writeCheckpoints writes each of files in every log directory whose
// offsets changed since they were last written there. checkpointMu held.
func (m *LogManager) writeCheckpoints(files ...offsetCheckpoint) error {
	return m.writeCheckpointsOf(m.logsByDir(), files...)
}

// writeCheckpointsOf is writeCheckpoints over groups, logsByDir's answer.
func (m *LogManager) writeCheckpointsOf(groups map[string][]dirLog, files ...offsetCheckpoint) error {
	var errs []error
	for dir, logs := range groups {
		var dirErrs []error
		for _, f := range files {
			if m.checkpointChanged(dir, f, logs) {
				dirErrs = append(dirErrs, m.writeCheckpoint(dir, f, logs))
			}
		}
		errs = append(errs, m.checkpointFailed(dir, errors.Join(dirErrs...)))
	}
	return joinStorageErrors(errs)
}

// writeLoweredRecoveryPoints writes the recovery point checkpoint of each
// directory where a log's recovery point is now below the one last written
// for it; groups is logsByDir's answer. checkpointMu held.
func (m *LogManager) writeLoweredRecoveryPoints(groups map[string][]dirLog) error {
	var errs []error
	for dir, logs := range groups {
		written := m.checkpointWrites[recoveryPointCheckpoint.name][dir]
		for _, dl := range logs {
			if w, ok := written[dl.tp]; ok && dl.log.RecoveryPoint() < w {
				errs = append(errs, m.checkpointFailed(dir, m.writeCheckpoint(dir, recoveryPointCheckpoint, logs)))
				break
			}
		}
	}
	return joinStorageErrors(errs)
}

// checkpointChanged reports whether f's offsets of logs differ from what
// was last written to f in dir, without building them: the periodic
// passes find most files unchanged. checkpointMu held.
func (m *LogManager) checkpointChanged(dir string, f offsetCheckpoint, logs []dirLog) bool {
	prev, ok := m.checkpointWrites[f.name][dir]
	if !ok {
		return true
	}
	listed := 0
	for _, dl := range logs {
		off := f.offset(dl.log)
		if off < 0 {
			continue
		}
		if w, ok := prev[dl.tp]; !ok || w != off {
			return true
		}
		listed++
	}
	return listed != len(prev)
}

// writeCheckpoint writes f's offsets of logs in dir and remembers them.
// checkpointMu held.
func (m *LogManager) writeCheckpoint(dir string, f offsetCheckpoint, logs []dirLog) error {
	offsets := make(map[TopicPartition]int64, len(logs))
	for _, dl := range logs {
		if off := f.offset(dl.log); off >= 0 {
			offsets[dl.tp] = off
		}
	}
	byDir := m.checkpointWrites[f.name]
	if err := writeOffsetCheckpoint(m.opts.FS, dir, f.name, offsets); err != nil {
		delete(byDir, dir)
		return err
	}
	if byDir == nil {
		byDir = map[string]map[TopicPartition]int64{}
		m.checkpointWrites[f.name] = byDir
	}
	byDir[dir] = offsets
	return nil
}

// checkpointFailed reports a failure to write dir's checkpoints to
// OnFailure, as a StorageError with op "checkpoint"; nil stays nil.
func (m *LogManager) checkpointFailed(dir string, err error) error {
	if err == nil {
		return nil
	}
	se := &StorageError{Dir: dir, Op: "checkpoint", Err: err}
	if m.opts.OnFailure != nil {
		m.opts.OnFailure(se)
	}
	return se
}

// joinStorageErrors joins errs, nils dropped; a single one is returned
// itself, as a caller may compare the StorageError.
func joinStorageErrors(errs []error) error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}
