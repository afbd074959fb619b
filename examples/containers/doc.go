// Package containers shows a container certification: tickets.yaml runs the
// fixture tool's image with a real Postgres (or Redis) behind it, and the
// test certifies it from go test the way a CI job with Docker would.
package containers
