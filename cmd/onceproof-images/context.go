package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A build context is described before it is written: the files it would
// hold (copied from the host, or generated), their modes and the Dockerfile.
// Its hash, over all of that, decides whether the image must be rebuilt; only
// then is it written to a temporary directory and sent to `docker build`.

// contextFormat is mixed into every hash; bump it when the way contexts are
// laid out changes in a way the entries do not show.
const contextFormat = "onceproof-images context v1"

// Context trees: files under rootTree are COPYed owned by root, files under
// ownedTree with --chown to the image's service user.
const (
	rootTree  = "rootfs"
	ownedTree = "owned"
)

// entryKind is the type of a context entry.
type entryKind int

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
)

// entry is one file, directory or symbolic link of a build context.
type entry struct {
	kind entryKind
	src  string      // kindFile: the host file to copy (symlinks followed); empty when data is set
	data []byte      // kindFile: generated contents
	link string      // kindSymlink: the link's target, as written
	mode fs.FileMode // permission bits plus os.ModeSticky/ModeSetgid
}

// buildContext is a docker build context: entries by slash-separated path
// relative to the context directory, and the Dockerfile.
type buildContext struct {
	entries    map[string]entry
	dockerfile string
}

func newBuildContext() *buildContext {
	return &buildContext{entries: map[string]entry{}}
}

// addFile adds the host file src (following symlinks) at dst.
func (c *buildContext) addFile(dst, src string, mode fs.FileMode) {
	c.entries[clean(dst)] = entry{kind: kindFile, src: src, mode: mode}
}

// addHostFile adds the host file at the same absolute path under tree,
// keeping its permission bits.
func (c *buildContext) addHostFile(tree, hostPath string) error {
	st, err := os.Stat(hostPath)
	if err != nil {
		return err
	}
	c.addFile(path.Join(tree, hostPath), hostPath, st.Mode().Perm())
	return nil
}

// addData adds generated contents at dst.
func (c *buildContext) addData(dst string, data []byte, mode fs.FileMode) {
	c.entries[clean(dst)] = entry{kind: kindFile, data: data, mode: mode}
}

// addDir adds a directory at dst with mode (which may hold the sticky and
// setgid bits).
func (c *buildContext) addDir(dst string, mode fs.FileMode) {
	c.entries[clean(dst)] = entry{kind: kindDir, mode: mode}
}

// addSymlink adds a symbolic link at dst pointing to target.
func (c *buildContext) addSymlink(dst, target string) {
	c.entries[clean(dst)] = entry{kind: kindSymlink, link: target, mode: 0o777}
}

// addHostTree adds the host directory root, recursively, at the same path
// under tree. Symbolic links that stay inside root are kept as links; others
// are replaced by what they point to. skip, if not nil, leaves out paths (and
// whole directories) for which it returns true.
func (c *buildContext) addHostTree(tree, root string, skip func(hostPath string) bool) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != nil && skip(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := path.Join(tree, filepath.ToSlash(p))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			c.addDir(dst, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			abs := target
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(filepath.Dir(p), target)
			}
			if within(abs, root) {
				if _, err := os.Stat(p); err != nil {
					return nil // a dangling link: leave it out
				}
				c.addSymlink(dst, target)
				return nil
			}
			st, err := os.Stat(p)
			if err != nil {
				return nil
			}
			if st.IsDir() {
				return c.addHostTreeAt(path.Join(tree, p), abs, skip)
			}
			c.addFile(dst, p, st.Mode().Perm())
		case info.Mode().IsRegular():
			c.addFile(dst, p, info.Mode().Perm())
		}
		return nil
	})
}

// addHostTreeAt adds the host directory src at dst (for a linked directory
// outside the tree being added).
func (c *buildContext) addHostTreeAt(dst, src string, skip func(string) bool) error {
	sub := newBuildContext()
	if err := sub.addHostTree("", src, skip); err != nil {
		return err
	}
	prefix := clean(filepath.ToSlash(src))
	for p, e := range sub.entries {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
		c.entries[clean(path.Join(dst, rel))] = e
	}
	return nil
}

// within reports whether p is root or lies under it.
func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func clean(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// hash returns the hex SHA-256 of everything that makes up the context: the
// format, the Dockerfile, and every entry's path, kind, mode and contents.
func (c *buildContext) hash() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00dockerfile\x00%d\x00%s\x00", contextFormat, len(c.dockerfile), c.dockerfile)
	for _, p := range c.paths() {
		e := c.entries[p]
		fmt.Fprintf(h, "%s\x00%d\x00%o\x00", p, e.kind, e.mode)
		switch e.kind {
		case kindSymlink:
			fmt.Fprintf(h, "%s\x00", e.link)
		case kindFile:
			sum, err := e.contentHash()
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s\x00", sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// contentHash returns the hex SHA-256 of a file entry's contents.
func (e entry) contentHash() (string, error) {
	h := sha256.New()
	if e.src == "" {
		h.Write(e.data)
	} else {
		f, err := os.Open(e.src)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", e.src, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// paths returns the entries' paths in order.
func (c *buildContext) paths() []string {
	ps := make([]string, 0, len(c.entries))
	for p := range c.entries {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// write lays the context out in dir (which must exist): the Dockerfile and
// every entry, with parent directories that have no entry of their own
// created 0755.
func (c *buildContext) write(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(c.dockerfile), 0o644); err != nil {
		return err
	}
	// Both trees must exist for the Dockerfile's COPY lines.
	for _, t := range []string{rootTree, ownedTree} {
		if err := os.MkdirAll(filepath.Join(dir, t), 0o755); err != nil {
			return err
		}
	}
	paths := c.paths()
	for _, p := range paths {
		e := c.entries[p]
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch e.kind {
		case kindDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case kindSymlink:
			if err := os.Symlink(e.link, dst); err != nil {
				return err
			}
		case kindFile:
			if err := e.writeFile(dst); err != nil {
				return err
			}
		}
	}
	// Modes last, deepest first, so that directories stay writable while
	// they are filled.
	for i := len(paths) - 1; i >= 0; i-- {
		e := c.entries[paths[i]]
		if e.kind == kindSymlink {
			continue
		}
		if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(paths[i])), e.mode); err != nil {
			return err
		}
	}
	return nil
}

func (e entry) writeFile(dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if e.src == "" {
		_, err = out.Write(e.data)
	} else {
		var in *os.File
		in, err = os.Open(e.src)
		if err == nil {
			_, err = io.Copy(out, in)
			in.Close()
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
