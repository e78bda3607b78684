package vfs

import (
	"os"
	"sort"
	"syscall"
)

// OS is the real filesystem.
type OS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (OS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) OpenReadWrite(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Remove(name string) error             { return os.Remove(name) }
func (OS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (OS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (OS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }

func (OS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (OS) Stat(name string) (FileInfo, error) {
	st, err := os.Stat(name)
	if err != nil {
		return FileInfo{}, err
	}
	fi := FileInfo{Size: st.Size(), IsDir: st.IsDir(), Links: 1}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		fi.Links = int(sys.Nlink)
	}
	return fi, nil
}

func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// Link makes newname a hard link to oldname (see Linker).
func (OS) Link(oldname, newname string) error { return os.Link(oldname, newname) }
