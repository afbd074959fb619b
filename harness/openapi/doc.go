// Package openapi drafts onceproof specs from OpenAPI 3.0 and 3.1 documents,
// for onceproof discover --openapi.
//
// [Load] reads a document from a file or a loopback URL and lists its
// [Operation]s, each with a [Class]:
//
//   - read: GET, HEAD, OPTIONS, TRACE and QUERY, and a POST named like a
//     search (search, query, lookup, find, list, filter, validate, preview,
//     estimate, count); nothing to certify.
//   - long-running: a write that may answer 202 Accepted (a Location,
//     Operation-Location or Azure-AsyncOperation header, a response link, a
//     status URL in the body, or none of these), or that is marked
//     x-ms-long-running-operation. Its effect may land after the response,
//     so the oracle needs a settle time.
//   - write: any other POST, and a PUT, PATCH or DELETE that declares an
//     idempotency key (the API itself says a retry must not repeat it).
//   - unknown: a PUT, PATCH or DELETE without a key. PUT and DELETE are
//     idempotent by HTTP's definition and PATCH may be; what an oracle
//     should count for them is for the user to say, so they are written
//     only when asked for by name.
//
// [Document.Draft] turns operations into a [spec.Draft]: the URL from
// the servers (variables at their defaults), the idempotency-key header the
// document declares (on the operation, its path item, or through
// components/parameters), a body template built from the request schema
// (JSON or form-encoded, {{.Marker}} in a descriptive string field), a
// result_id from the 2xx response ([Document.ResultID]: the document's
// structure — links, the resource's own GET, Location — before names), and
// the oracle given in [Options] or a placeholder. Every value the document
// did not state is noted as guessed.
//
// The package may import the standard library, package harness,
// harness/spec, and github.com/pb33f/libopenapi with its YAML package;
// nothing from scenarios or the CLI.
package openapi
