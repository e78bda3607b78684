package kit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Profiles is the profile file: named sets of settings (the keys -X
// takes) and the one in use, as rpk's profiles:
//
//	current: dev
//	profiles:
//	  dev:
//	    brokers: 127.0.0.1:9092
//	  prod:
//	    brokers: kafka-1:9093,kafka-2:9093
//	    tls.ca: /etc/kafka/ca.pem
//	    sasl.mechanism: SCRAM-SHA-512
//	    user: alice
//	    pass: secret
type Profiles struct {
	Path     string                       `yaml:"-"`
	Current  string                       `yaml:"current,omitempty"`
	Profiles map[string]map[string]string `yaml:"profiles,omitempty"`
}

// ProfilePath is the profile file: explicit, else
// $XDG_CONFIG_HOME/strait/profiles.yaml, else
// $HOME/.config/strait/profiles.yaml.
func ProfilePath(explicit string, env Env) string {
	if explicit != "" {
		return explicit
	}
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "strait", "profiles.yaml")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "strait", "profiles.yaml")
	}
	return ""
}

// LoadProfiles reads the profile file; a missing file is an empty one.
func LoadProfiles(path string) (*Profiles, error) {
	p := &Profiles{Path: path, Profiles: map[string]map[string]string{}}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("profile file: %w", err)
	}
	if err := yaml.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("profile file %s: %w", path, err)
	}
	if p.Profiles == nil {
		p.Profiles = map[string]map[string]string{}
	}
	for name, s := range p.Profiles {
		for k := range s {
			if !isSettingKey(k) {
				return nil, fmt.Errorf("profile file %s: profile %q: unknown setting %q", path, name, k)
			}
		}
	}
	if p.Current != "" && p.Profiles[p.Current] == nil {
		return nil, fmt.Errorf("profile file %s: current profile %q is not defined", path, p.Current)
	}
	return p, nil
}

// Save writes the file (mode 0600: it may hold passwords), creating its
// directory, through a temporary file renamed over it.
func (p *Profiles) Save() error {
	if p.Path == "" {
		return errors.New("no profile file: set --config-file, XDG_CONFIG_HOME or HOME")
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
		return err
	}
	tmp := p.Path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.Path)
}

func isSettingKey(k string) bool {
	for _, s := range settingKeys {
		if s == k {
			return true
		}
	}
	return false
}
