// Package spec reads onceproof's YAML spec ([Load], [Parse]): every field
// validated, every error an [*Error] naming the file, line and field. Each
// entry is a [Tool]: the configuration every tool shares (transport.Common)
// and its transport section, decoded by the transport's row of the
// transport table ([Transports]: http, mcp with a url, mcp with a command;
// see package transport for adding one). [Tool.Start] builds it (a
// container, with its downstream endpoint, for an http tool that has them)
// and starts it; its network targets are checked against the run's guard
// first ([Tool.CheckTargets]). [Spec.Secrets] are the values of the
// environment variables its templates read ({{.Env}}). [Write] is the one
// writer of spec files (onceproof discover uses it).
//
// Imports: the standard library, yaml.v3, harness and its transport, oracle
// and lint packages (transport, mcp, stdio, container, storeoracle, lint,
// report).
package spec
