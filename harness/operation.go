package harness

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"
)

// KeyFormat is how an idempotency key is spelled. Keys are derived from the
// operation id alone, so they are stable across retries and carry no personal
// data.
type KeyFormat string

const (
	// KeyUUID renders keys as UUIDs (the default: many APIs require one).
	KeyUUID KeyFormat = "uuid"
	// KeyHex renders keys as 32 lowercase hex digits.
	KeyHex KeyFormat = "hex"
)

// ParseKeyFormat accepts "", "uuid" or "hex" ("" means uuid).
func ParseKeyFormat(s string) (KeyFormat, error) {
	switch KeyFormat(s) {
	case "", KeyUUID:
		return KeyUUID, nil
	case KeyHex:
		return KeyHex, nil
	}
	return "", fmt.Errorf("key format %q: want uuid or hex", s)
}

// keyNamespace scopes onceproof's name-based UUIDs.
var keyNamespace = uuid.MustParse("6f6e6365-7072-4f6f-a600-000000000001")

// Key derives the idempotency key of operation id opID.
func (f KeyFormat) Key(opID string) string {
	switch f {
	case KeyHex:
		sum := sha256.Sum256([]byte("onceproof-key:" + opID))
		return hex.EncodeToString(sum[:16])
	default:
		return uuid.NewSHA1(keyNamespace, []byte(opID)).String()
	}
}

// Operation is one logical intent of the caller: every attempt of it carries
// the same Key, and its Marker, rendered into the request, lets an oracle
// attribute effects to it.
type Operation struct {
	// ID is the stable operation id, unique within a run.
	ID string
	// Key is the idempotency key derived from ID.
	Key string
	// Marker is a unique token rendered into the request.
	Marker string
	// Seed drives the template helpers (.Int, .Pick): the same seed renders
	// the same payload.
	Seed uint64
}

// WithPayload returns op with a different payload (another seed and marker)
// but the same ID and Key: a reused key with a changed request.
func (op Operation) WithPayload(seed uint64, marker string) Operation {
	op.Seed, op.Marker = seed, marker
	return op
}

// Ops mints operations for one run. Ids and markers include a random run
// nonce, so a tool that keeps state across runs never sees an old key again.
type Ops struct {
	nonce  string
	format KeyFormat
	seq    atomic.Int64
}

// NewOps returns a minter with a fresh random nonce.
func NewOps(format KeyFormat) *Ops {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("harness: crypto/rand: %v", err))
	}
	return &Ops{nonce: hex.EncodeToString(b[:]), format: format}
}

// Next mints a new operation whose payload draws come from seed.
func (o *Ops) Next(seed uint64) Operation {
	id := fmt.Sprintf("op-%s-%08d", o.nonce, o.seq.Add(1))
	return Operation{ID: id, Key: o.format.Key(id), Marker: o.Marker(), Seed: seed}
}

// Marker mints a marker not used before in this run. Markers have a fixed
// width, so none is a substring of another.
func (o *Ops) Marker() string {
	return fmt.Sprintf("onceproof-%s-m%08d", o.nonce, o.seq.Add(1))
}
