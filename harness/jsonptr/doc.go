// Package jsonptr parses JSON pointers (RFC 6901) and applies them to
// decoded JSON documents: Lookup finds a value, Remove drops one. It imports
// only the standard library.
package jsonptr
