package broker

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/vfs"
)

// MetaPropertiesFile is the file in each log directory naming the cluster
// and node it belongs to, in Kafka's KRaft format (version 1). Kafka writes
// it with `kafka-storage format`; Strait formats an empty directory on its
// first start, so `make run` needs no setup step.
const MetaPropertiesFile = "meta.properties"

// MetaProperties is meta.properties' content.
type MetaProperties struct {
	ClusterID   string
	NodeID      int32
	DirectoryID raftmeta.Uuid
}

func randomUuid() (raftmeta.Uuid, error) {
	var u raftmeta.Uuid
	if _, err := rand.Read(u[:]); err != nil {
		return u, err
	}
	// Kafka's Uuid.randomUuid avoids ids whose base64 starts with '-'
	// (awkward on command lines) and the reserved all-zero id.
	if u.String()[0] == '-' || u.IsZero() {
		return randomUuid()
	}
	return u, nil
}

// readMetaProperties reads dir's meta.properties; ok is false when absent.
func readMetaProperties(fsys vfs.FS, dir string) (mp MetaProperties, ok bool, err error) {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, MetaPropertiesFile))
	if vfs.IsNotExist(err) {
		return mp, false, nil
	}
	if err != nil {
		return mp, false, err
	}
	props, err := config.Parse(strings.NewReader(string(data)))
	if err != nil {
		return mp, false, fmt.Errorf("%s in %s: %w", MetaPropertiesFile, dir, err)
	}
	if v := props["version"]; v != "1" {
		return mp, false, fmt.Errorf("%s in %s: version %q is not the KRaft version 1", MetaPropertiesFile, dir, v)
	}
	mp.ClusterID = props["cluster.id"]
	if mp.ClusterID == "" {
		return mp, false, fmt.Errorf("%s in %s has no cluster.id", MetaPropertiesFile, dir)
	}
	id, err := strconv.ParseInt(props["node.id"], 10, 32)
	if err != nil {
		return mp, false, fmt.Errorf("%s in %s: bad node.id %q", MetaPropertiesFile, dir, props["node.id"])
	}
	mp.NodeID = int32(id)
	if d := props["directory.id"]; d != "" {
		if mp.DirectoryID, err = raftmeta.ParseUuid(d); err != nil {
			return mp, false, fmt.Errorf("%s in %s: %w", MetaPropertiesFile, dir, err)
		}
	}
	return mp, true, nil
}

func writeMetaProperties(fsys vfs.FS, dir string, mp MetaProperties) error {
	content := fmt.Sprintf("#\n#Written by Strait\ncluster.id=%s\ndirectory.id=%s\nnode.id=%d\nversion=1\n",
		mp.ClusterID, mp.DirectoryID, mp.NodeID)
	return vfs.WriteFileAtomic(fsys, dir, MetaPropertiesFile, []byte(content))
}

// formatLogDirs makes sure every directory has a meta.properties for this
// node and that they all name the same cluster, creating them (with a new
// cluster id, or the one already on another directory) when missing. It
// refuses a directory formatted for another node or cluster, as Kafka does.
func formatLogDirs(fsys vfs.FS, dirs []string, nodeID int32, wantClusterID string) (clusterID string, err error) {
	found := map[string]MetaProperties{}
	for _, d := range dirs {
		if err := vfs.MkdirAllDurable(fsys, d); err != nil {
			return "", fmt.Errorf("creating log dir %s: %w", d, err)
		}
		mp, ok, err := readMetaProperties(fsys, d)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if mp.NodeID != nodeID {
			return "", fmt.Errorf("log dir %s belongs to node.id %d, but this broker is node.id %d", d, mp.NodeID, nodeID)
		}
		if clusterID != "" && mp.ClusterID != clusterID {
			return "", fmt.Errorf("log dir %s belongs to cluster %s, others to %s", d, mp.ClusterID, clusterID)
		}
		clusterID = mp.ClusterID
		found[d] = mp
	}
	if clusterID != "" && wantClusterID != "" && clusterID != wantClusterID {
		return "", fmt.Errorf("log dirs %v belong to cluster %s, but this node is configured for cluster %s", dirs, clusterID, wantClusterID)
	}
	if clusterID == "" {
		clusterID = wantClusterID
	}
	if clusterID == "" {
		u, err := randomUuid()
		if err != nil {
			return "", err
		}
		clusterID = u.String()
	}
	for _, d := range dirs {
		if _, ok := found[d]; ok {
			continue
		}
		dirID, err := randomUuid()
		if err != nil {
			return "", err
		}
		if err := writeMetaProperties(fsys, d, MetaProperties{ClusterID: clusterID, NodeID: nodeID, DirectoryID: dirID}); err != nil {
			return "", fmt.Errorf("formatting log dir %s: %w", d, err)
		}
	}
	return clusterID, nil
}

// derivedClusterID is the cluster id nodes formatting empty directories
// agree on without being told one: a hash of controller.quorum.voters
// (sorted), which every node of a cluster shares. Kafka makes the operator
// pass the same id to kafka-storage.sh format on every node; cluster.id
// does that here, and this saves the step when it is not set.
func derivedClusterID(voters []string) string {
	sorted := slices.Sorted(slices.Values(voters))
	sum := sha256.Sum256([]byte("strait-cluster\x00" + strings.Join(sorted, ",")))
	var u raftmeta.Uuid
	copy(u[:], sum[:16])
	if u.String()[0] == '-' {
		u[0] &^= 0xf8 // base64url '-' is 62: clear the top bits of the first character
	}
	return u.String()
}
