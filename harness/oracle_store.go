package harness

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// SQLOracle counts effects with a PostgreSQL query that takes the marker as
// $1 and returns one integer, e.g.
// `select count(*) from tickets where position($1 in subject) > 0`.
type SQLOracle struct {
	DSN   string
	Query string
	// Resolve maps the DSN's host:port (a container alias) to where this
	// host reaches it; nil leaves it as written.
	Resolve func(hostport string) string

	mu   sync.Mutex
	pool *pgxpool.Pool
}

// String implements Oracle.
func (o *SQLOracle) String() string { return "sql " + redactDSN(o.DSN) + " " + o.Query }

// Count implements Oracle.
func (o *SQLOracle) Count(ctx context.Context, marker string) (int, error) {
	pool, err := o.connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	var n int64
	if err := pool.QueryRow(ctx, o.Query, marker).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w %s: count %d is negative", ErrOracle, o, n)
	}
	return int(n), nil
}

func (o *SQLOracle) connect(ctx context.Context) (*pgxpool.Pool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pool != nil {
		return o.pool, nil
	}
	dsn, err := resolveURL(o.DSN, o.Resolve)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o.pool = pool
	return pool, nil
}

// Close releases the oracle's connections.
func (o *SQLOracle) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pool != nil {
		o.pool.Close()
		o.pool = nil
	}
	return nil
}

// RedisOracle counts effects with a Redis command whose integer reply is the
// count; its arguments are templates over the marker, e.g.
// [EVAL, <script>, 1, tickets, "{{.Marker}}"] or [SCARD, "done:{{.Marker}}"].
type RedisOracle struct {
	URL     string
	Command []*Template
	// Resolve maps the URL's host:port (a container alias) to where this host
	// reaches it; nil leaves it as written.
	Resolve func(hostport string) string

	mu     sync.Mutex
	client *redis.Client
}

// String implements Oracle.
func (o *RedisOracle) String() string {
	var parts []string
	for _, c := range o.Command {
		s := c.String()
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		parts = append(parts, s)
	}
	return "redis " + redactDSN(o.URL) + " " + strings.Join(parts, " ")
}

// Count implements Oracle.
func (o *RedisOracle) Count(ctx context.Context, marker string) (int, error) {
	c, err := o.connect()
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	args := make([]any, len(o.Command))
	for i, t := range o.Command {
		s, err := t.Render(Operation{Marker: marker})
		if err != nil {
			return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
		}
		args[i] = s
	}
	n, err := c.Do(ctx, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w %s: count %d is negative", ErrOracle, o, n)
	}
	return int(n), nil
}

func (o *RedisOracle) connect() (*redis.Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client != nil {
		return o.client, nil
	}
	u, err := resolveURL(o.URL, o.Resolve)
	if err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	opts.MaxRetries = -1 // count once; the harness decides about retries
	o.client = redis.NewClient(opts)
	return o.client, nil
}

// Close releases the oracle's connection.
func (o *RedisOracle) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client != nil {
		err := o.client.Close()
		o.client = nil
		return err
	}
	return nil
}

// resolveURL rewrites the host:port of a URL-shaped DSN with resolve.
func resolveURL(raw string, resolve func(string) string) (string, error) {
	if resolve == nil {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("dsn: %w", err)
	}
	hp := u.Host
	if u.Port() == "" {
		switch u.Scheme {
		case "postgres", "postgresql":
			hp = net.JoinHostPort(u.Hostname(), "5432")
		case "redis":
			hp = net.JoinHostPort(u.Hostname(), "6379")
		}
	}
	u.Host = resolve(hp)
	return u.String(), nil
}

// redactDSN hides a DSN's password.
func redactDSN(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// WithResolver returns o with every address it dials mapped through resolve
// (used for oracles that name container aliases). Oracles that dial nothing
// of their own come back unchanged.
func WithResolver(o Oracle, resolve func(string) string) Oracle {
	switch x := o.(type) {
	case *settled:
		return &settled{o: WithResolver(x.o, resolve), settle: x.settle}
	case *HTTPOracle:
		c := *x
		c.Resolve = resolve
		return &c
	case *SQLOracle:
		return &SQLOracle{DSN: x.DSN, Query: x.Query, Resolve: resolve}
	case *RedisOracle:
		return &RedisOracle{URL: x.URL, Command: x.Command, Resolve: resolve}
	}
	return o
}

// closeOracle releases an oracle's connections if it holds any.
func closeOracle(o Oracle) {
	switch x := o.(type) {
	case *settled:
		closeOracle(x.o)
	case interface{ Close() error }:
		_ = x.Close()
	}
}
