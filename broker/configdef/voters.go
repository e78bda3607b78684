package configdef

import (
	"errors"
	"net"
	"strconv"
)

// validateVoters parses controller.quorum.voters (Kafka's
// QuorumConfig.ControllerQuorumVotersValidator).
func validateVoters(v string) error {
	_, err := ParseVoters(v)
	return err
}

// Voter is one entry of controller.quorum.voters.
type Voter struct {
	ID   int32
	Host string
	Port int
}

// ParseVoters parses controller.quorum.voters: id@host:port entries
// separated by commas (QuorumConfig.parseVoterConnections). An empty value
// is no voters.
func ParseVoters(v string) ([]Voter, error) {
	const form = "Each entry should be in the form `{id}@{host}:{port}`."
	var out []Voter
	seen := map[int32]bool{}
	for _, e := range SplitList(v) {
		id, addr, ok := cutOnce(e, '@')
		if !ok {
			return nil, errors.New("Invalid configuration value for controller.quorum.voters. " + form)
		}
		n, err := strconv.ParseInt(id, 10, 32)
		if err != nil {
			return nil, errors.New("Failed to parse node id " + id + " in entry " + e + " for the configuration controller.quorum.voters. " + form)
		}
		host, port, err := splitHostPort(addr)
		if err != nil {
			return nil, errors.New("Failed to parse host name and port from entry " + e + " for the configuration controller.quorum.voters. " + form)
		}
		if seen[int32(n)] {
			return nil, errors.New("Duplicate voter id " + id + " in controller.quorum.voters.")
		}
		seen[int32(n)] = true
		out = append(out, Voter{ID: int32(n), Host: host, Port: port})
	}
	return out, nil
}

// cutOnce splits s at its only sep; more than one is an error, as Kafka's
// split("@") with a length check.
func cutOnce(s string, sep byte) (before, after string, ok bool) {
	i := -1
	for j := 0; j < len(s); j++ {
		if s[j] == sep {
			if i >= 0 {
				return "", "", false
			}
			i = j
		}
	}
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// splitHostPort splits host:port or [v6]:port; the host may not be empty
// and the port must be 0..65535.
func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		return "", 0, errors.New("empty host")
	}
	return host, int(p), nil
}

func validateHostPortOrEmpty(v string) error {
	if v == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return errors.New("Expected host:port, or empty to disable")
	}
	_ = host // an empty host binds every interface
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return errors.New("Expected host:port with a port in 0..65535")
	}
	return nil
}
