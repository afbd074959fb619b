// Package container starts a tool's Docker environment ([StartEnv]): its
// network, the tool (and its replicas), its dependencies and, when asked, a
// Toxiproxy container in front of them; [ContainerTool] is the HTTP tool
// inside it, able to crash and restart. Everything it starts is labelled
// and removed ([Env.Close], [Sweep]).
//
// Imports: the standard library, testcontainers-go, the Docker client,
// faults and harness.
package container
