package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The images are built with the docker CLI: simpler than the API, and it
// sends the context and reads ~/.docker/config.json the usual way.

// Image labels.
const (
	labelImage = "org.onceproof.image"
	labelHash  = "org.onceproof.context-hash"
)

// Docker errors: an engine that does not answer, or no CLI to ask it with.
var (
	errDockerUnreachable = errors.New("the Docker engine is not reachable")
	errNoDockerCLI       = errors.New("the docker CLI is not installed")
)

// docker runs the docker CLI and returns its stdout; the error carries
// stderr.
func docker(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = os.Environ()
	if args[0] == "build" && os.Getenv("DOCKER_BUILDKIT") == "" {
		// The classic builder: it needs no buildx plugin and no BuildKit
		// image (there is no registry to pull one from).
		cmd.Env = append(cmd.Env, "DOCKER_BUILDKIT=0")
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return stdout.String(), fmt.Errorf("docker %s: %v: %s", args[0], err, msg)
	}
	return stdout.String(), nil
}

// checkDocker verifies that the CLI exists and the engine answers.
func checkDocker(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("%w (apt-get install docker.io)", errNoDockerCLI)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := docker(ctx, "version", "--format", "{{.Server.Version}}")
	if err != nil || strings.TrimSpace(out) == "" {
		return fmt.Errorf("%w (is it running, and is DOCKER_HOST right?): %v", errDockerUnreachable, err)
	}
	return nil
}

// imageInfo returns the image's ID and labels, or ok false when there is no
// such image.
func imageInfo(ctx context.Context, name string) (id string, labels map[string]string, ok bool, err error) {
	out, err := docker(ctx, "image", "inspect", "--format", "{{json .Id}} {{json .Config.Labels}}", name)
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "no such image") {
			return "", nil, false, nil
		}
		return "", nil, false, err
	}
	idJSON, labelsJSON, _ := strings.Cut(strings.TrimSpace(out), " ")
	if err := json.Unmarshal([]byte(idJSON), &id); err != nil {
		return "", nil, false, fmt.Errorf("docker image inspect %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(labelsJSON), &labels); err != nil {
		return "", nil, false, fmt.Errorf("docker image inspect %s: %w", name, err)
	}
	return id, labels, true, nil
}

// buildImage runs docker build on the context directory dir, tagging the
// image name and labelling it with the context hash.
func buildImage(ctx context.Context, name, dir, hash string) error {
	_, err := docker(ctx, "build", "-q",
		"--label", labelImage+"=true",
		"--label", labelHash+"="+hash,
		"-t", name,
		"-f", dir+"/Dockerfile",
		dir)
	return err
}
