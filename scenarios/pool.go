package scenarios

import (
	"context"
	"sync"

	"github.com/onceproof/onceproof/harness"
)

// sessionPool hands out a tool's sessions, one per trial in flight: each
// has its own fault proxy, reused by the trials that follow (no proxy, and
// no listening port, per trial). New sessions are forked from the first as
// trials overlap, up to limit (0: no limit but the run's slots).
type sessionPool struct {
	root  *harness.Session
	limit int
	free  chan *harness.Session

	mu    sync.Mutex
	all   []*harness.Session
	count int // sessions made or being made
	seq   int // names forks' proxies
}

func newSessionPool(root *harness.Session, limit int) *sessionPool {
	p := &sessionPool{root: root, limit: limit, free: make(chan *harness.Session, 1024), all: []*harness.Session{root}, count: 1}
	p.free <- root
	return p
}

// get returns a free session, forking a new one when none is free and the
// limit allows, else waiting for one.
func (p *sessionPool) get(ctx context.Context) (*harness.Session, error) {
	select {
	case s := <-p.free:
		return s, nil
	default:
	}
	p.mu.Lock()
	grow := (p.limit <= 0 || p.count < p.limit) && p.count < cap(p.free)
	if grow {
		p.count++
		p.seq++
	}
	seq := p.seq
	p.mu.Unlock()
	if grow {
		s, err := p.root.Fork(ctx, seq)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.count--
			return nil, err
		}
		p.all = append(p.all, s)
		return s, nil
	}
	select {
	case s := <-p.free:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tryGet is get that returns nil instead of waiting for a session.
func (p *sessionPool) tryGet(ctx context.Context) *harness.Session {
	select {
	case s := <-p.free:
		return s
	default:
	}
	p.mu.Lock()
	grow := p.limit <= 0 || p.count < p.limit
	p.mu.Unlock()
	if !grow {
		return nil
	}
	s, err := p.get(ctx)
	if err != nil {
		return nil
	}
	return s
}

func (p *sessionPool) put(s *harness.Session) { p.free <- s }

// repoint points every session's proxy at where the tool listens now
// (after a restart).
func (p *sessionPool) repoint(ctx context.Context) error {
	p.mu.Lock()
	all := append([]*harness.Session(nil), p.all...)
	p.mu.Unlock()
	for _, s := range all {
		if s == nil {
			continue
		}
		if err := s.Repoint(ctx); err != nil {
			return err
		}
	}
	return nil
}

// close closes every session, the first last (it owns the oracle).
func (p *sessionPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.all) - 1; i >= 0; i-- {
		if s := p.all[i]; s != nil {
			_ = s.Close(context.Background())
		}
	}
	p.all = nil
}
