package container

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// ErrImageVersion marks a local image substituted for an image of another
// major version (postgres:16 run as a local PostgreSQL 15 build), which
// LocalImages refuses unless the user mapped that image explicitly.
var ErrImageVersion = errors.New("local image of another major version")

// LocalImages substitutes image names with locally built images and refuses
// any image that has no local build: a missing image is a clear error, never
// a pull. Map keys are repositories without a tag ("postgres",
// "ghcr.io/org/tool"); a name not in Map must itself exist locally. A
// default substitute whose tag names another major version than the image
// asked for (postgres:16 → onceproof/postgres:15) is refused with
// ErrImageVersion; one the user chose (Explicit) is run, and Plan names it.
type LocalImages struct {
	Map map[string]string
	// Explicit are the Map keys the user gave (--image NAME=LOCAL): their
	// substitutes run whatever their version.
	Explicit map[string]bool
	Docker   *testcontainers.DockerClient
}

// Substitution is what one image of a spec runs as.
type Substitution struct {
	Image, Local string
	// Note says what differs, e.g. "another major version (16 asked, 15
	// local), as --image asked"; "" when nothing does.
	Note string
}

// Description implements testcontainers.ImageSubstitutor.
func (l LocalImages) Description() string { return "onceproof: local images only" }

// Substitute implements testcontainers.ImageSubstitutor.
func (l LocalImages) Substitute(image string) (string, error) {
	s, err := l.resolve(image)
	if err != nil {
		return "", err
	}
	return s.Local, l.exists(s)
}

// Plan resolves every image before anything starts: what each runs as, or
// the first that cannot run (a missing local build, or ErrImageVersion).
func (l LocalImages) Plan(images []string) ([]Substitution, error) {
	var out []Substitution
	for _, image := range images {
		s, err := l.resolve(image)
		if err == nil {
			err = l.exists(s)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// exists checks that s's local image is built.
func (l LocalImages) exists(s Substitution) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.Docker.ImageInspect(ctx, s.Local); err != nil {
		if s.Local != s.Image {
			return fmt.Errorf("image %s: its local build %s is missing (run: make images): %w", s.Image, s.Local, err)
		}
		return fmt.Errorf("image %s is not built locally and local images only were asked for (run: make images): %w", s.Image, err)
	}
	return nil
}

// resolve says what image runs as, refusing another major version that
// the user did not choose.
func (l LocalImages) resolve(image string) (Substitution, error) {
	s := Substitution{Image: image, Local: image}
	repo := repository(image)
	m, ok := l.Map[repo]
	if !ok {
		return s, nil
	}
	s.Local = m
	want, have := majorOf(tagOf(image)), majorOf(tagOf(m))
	switch {
	case want == "" || have == "" || want == have:
	case l.Explicit[repo]:
		s.Note = fmt.Sprintf("another major version (%s asked, %s local), as --image asked", want, have)
	default:
		return s, fmt.Errorf("%w: image %s would run as the local build %s, major version %s, not %s: build %s locally, or give --image %s=%s to run %s knowingly",
			ErrImageVersion, image, m, have, want, image, repo, m, have)
	}
	if s.Note == "" && want == "" && have != "" {
		s.Note = "no version asked; the local build is " + have
	}
	return s, nil
}

// Images lists the images the environment of s runs: the tool's, its
// dependencies' and, in container mode, Toxiproxy's.
func (s ContainerSpec) Images() []string {
	out := []string{s.Tool.Image}
	for _, d := range s.Dependencies {
		out = append(out, d.Image)
	}
	if s.Toxiproxy == ToxiproxyContainer {
		out = append(out, ToxiproxyImage)
	}
	return out
}

// tagOf is an image name's tag ("" for none, or a digest only).
func tagOf(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		return image[i+1:]
	}
	return ""
}

// majorRE matches a tag that starts with a version: 16, 16.2, v2.5.0,
// 7-alpine.
var majorRE = regexp.MustCompile(`^v?([0-9]+)(?:[.\-_]|$)`)

// majorOf is the major version a tag starts with, "" when it names none
// (latest, dev, alpine).
func majorOf(tag string) string {
	m := majorRE.FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}
