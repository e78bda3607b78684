package broker

import "github.com/strait-io/strait/raftmeta"

// logDirIDs are the directory ids (meta.properties directory.id) of the
// log directories, in log.dirs order, for the broker registration. The
// first also holds the metadata log (__cluster_metadata, unless
// metadata.log.dir moves it), so its id is this node's directory id in
// the quorum (KIP-853). formatLogDirs wrote them before the node started;
// one that cannot be read is left out (a registration without it still
// works, only DescribeQuorum shows a zero id).
func (n *Node) logDirIDs() []raftmeta.Uuid {
	var ids []raftmeta.Uuid
	for _, d := range n.cfg.LogDirs {
		mp, ok, err := readMetaProperties(n.fs, d)
		if err != nil || !ok || mp.DirectoryID.IsZero() {
			n.logger.Warn("no directory id for a log directory", "dir", d, "err", err)
			continue
		}
		ids = append(ids, mp.DirectoryID)
	}
	return ids
}
