package harnesstest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
)

// Recorder is a guard's hosts table and dialer for tests: it records every
// name looked up and every address dialled, and dials for real (loopback
// only ever reaches it).
type Recorder struct {
	mu      sync.Mutex
	lookups []string
	dials   []string
	table   map[string][]netip.Addr
}

// NewRecorder returns a Recorder whose hosts table maps each name to the
// space-separated addresses given.
func NewRecorder(table map[string]string) *Recorder {
	r := &Recorder{table: map[string][]netip.Addr{}}
	for name, addrs := range table {
		for _, a := range strings.Fields(addrs) {
			r.table[name] = append(r.table[name], netip.MustParseAddr(a))
		}
	}
	return r
}

// Guard is a guard that looks names up in the recorder's table and dials
// loopback only, recording both.
func (r *Recorder) Guard() *harness.Guard {
	return &harness.Guard{
		Hosts: func(name string) []netip.Addr {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.lookups = append(r.lookups, name)
			return r.table[name]
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			r.mu.Lock()
			r.dials = append(r.dials, addr)
			r.mu.Unlock()
			return (&net.Dialer{Control: harness.LoopbackOnly}).DialContext(ctx, network, addr)
		},
	}
}

// OnlyLoopbackDials fails unless every dialled address is a literal
// loopback address: no name ever reached a resolver, no connection left the
// machine.
func (r *Recorder) OnlyLoopbackDials(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.dials {
		ap, err := netip.ParseAddrPort(d)
		require.NoError(t, err, "dialled %q: not a literal address", d)
		require.True(t, ap.Addr().Unmap().IsLoopback(), "dialled %s", d)
	}
}

// Dialled lists the addresses dialled.
func (r *Recorder) Dialled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dials...)
}
