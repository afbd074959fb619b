// Package spec reads onceproof's YAML spec ([Load], [Parse]): every field
// validated, every error an [*Error] naming the file, line and field. Each
// entry is a [Tool], which [Tool.Start] builds as the transport it declares
// (HTTP, MCP, a container, with its downstream endpoint) and starts; its
// network targets are checked against the run's guard first
// ([Tool.CheckTargets]). [Write] is the one writer of spec files (onceproof
// discover uses it).
//
// Imports: the standard library, yaml.v3, harness and its transport, oracle
// and lint packages (mcp, container, storeoracle, lint, report).
package spec
