package storeoracle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// SQLOracle counts effects with a PostgreSQL query that takes the marker as
// $1 and returns one integer, e.g.
// `select count(*) from tickets where position($1 in subject) > 0`.
type SQLOracle struct {
	DSN   string
	Query string
	// Timeout bounds one query, connecting included (default 10s).
	Timeout time.Duration
	// Guard checks every connection (nil: loopback only, see [Guard]).
	Guard *harness.Guard
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
	ctx, cancel := context.WithTimeout(ctx, timeoutOr(o.Timeout))
	defer cancel()
	pool, err := o.connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, err)
	}
	var n int64
	if err := pool.QueryRow(ctx, o.Query, marker).Scan(&n); err != nil {
		if shape := sqlShapeError(err); shape != nil {
			return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, &harness.FieldError{Field: "oracle.sql.query", Err: shape})
		}
		return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w %s: count %d is negative", harness.ErrOracle, o, n)
	}
	return int(n), nil
}

func (o *SQLOracle) connect(ctx context.Context) (*pgxpool.Pool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pool != nil {
		return o.pool, nil
	}
	dsn, mapped, err := harness.ResolveURL(o.DSN, o.Resolve)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	g := o.Guard
	if mapped != "" {
		g = g.Trusting(mapped)
	}
	cfg.ConnConfig.LookupFunc = g.LookupHost
	cfg.ConnConfig.DialFunc = g.DialContext
	cfg.ConnConfig.ConnectTimeout = timeoutOr(o.Timeout)
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
	Command []*harness.Template
	// Timeout bounds one command, connecting included (default 10s).
	Timeout time.Duration
	// Guard checks every connection (nil: loopback only, see [Guard]).
	Guard *harness.Guard
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
	ctx, cancel := context.WithTimeout(ctx, timeoutOr(o.Timeout))
	defer cancel()
	c, err := o.connect()
	if err != nil {
		return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, err)
	}
	args := make([]any, len(o.Command))
	for i, t := range o.Command {
		s, err := t.Render(harness.Operation{Marker: marker})
		if err != nil {
			return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, err)
		}
		args[i] = s
	}
	// go-redis bounds a command by the context's deadline, not by its
	// cancellation: a cancelled query closes the client (the next query
	// reconnects).
	stop := context.AfterFunc(ctx, func() { o.drop(c) })
	defer stop()
	v, err := c.Do(ctx, args...).Result()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, err)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%w %s: %w", harness.ErrOracle, o, &harness.FieldError{Field: "oracle.redis.command",
			Err: fmt.Errorf("%w: the reply is %s, want an integer", harness.ErrOracleShape, describeReply(v))})
	}
	if n < 0 {
		return 0, fmt.Errorf("%w %s: count %d is negative", harness.ErrOracle, o, n)
	}
	return int(n), nil
}

func (o *RedisOracle) connect() (*redis.Client, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client != nil {
		return o.client, nil
	}
	u, mapped, err := harness.ResolveURL(o.URL, o.Resolve)
	if err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	g := o.Guard
	if mapped != "" {
		g = g.Trusting(mapped)
	}
	if err := g.Check(opts.Addr); err != nil {
		return nil, err // before go-redis dials (and retries, and logs)
	}
	opts.Dialer = g.DialContext
	opts.DialerRetries = 1
	opts.MaxRetries = -1 // count once; the harness decides about retries
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = timeoutOr(o.Timeout)
	o.client = redis.NewClient(opts)
	return o.client, nil
}

// drop closes c and forgets it if it is still the oracle's client.
func (o *RedisOracle) drop(c *redis.Client) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.client == c {
		o.client = nil
	}
	_ = c.Close()
}

// describeReply names a Redis reply's type for an error message.
func describeReply(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return fmt.Sprintf("the string %q", harness.Snippet([]byte(x)))
	case []any:
		return fmt.Sprintf("an array of %s", report.Plural(len(x), "element"))
	}
	return fmt.Sprintf("a %T", v)
}

// timeoutOr is d, or the default oracle timeout when d is not positive.
func timeoutOr(d time.Duration) time.Duration {
	if d <= 0 {
		return harness.DefaultOracleTimeout
	}
	return d
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

// redactDSN hides a DSN's password.
func redactDSN(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// sqlShapeError returns an ErrOracleShape error when err says the query's
// answer has the wrong shape (no row, or a value that is not an integer), nil
// otherwise.
func sqlShapeError(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: the query returned no row, want one row with the count", harness.ErrOracleShape)
	}
	var se pgx.ScanArgError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: the query's first column is not an integer count: %w", harness.ErrOracleShape, err)
	}
	return nil
}

// WithResolver implements [harness.Resolvable]: a copy of o that maps the
// address it dials through resolve (a container alias to its mapped port).
func (o *SQLOracle) WithResolver(resolve func(string) string) harness.Oracle {
	return &SQLOracle{DSN: o.DSN, Query: o.Query, Timeout: o.Timeout, Guard: o.Guard, Resolve: resolve}
}

// WithGuard implements [harness.Guardable]: a copy of o whose connections g
// checks.
func (o *SQLOracle) WithGuard(g *harness.Guard) harness.Oracle {
	return &SQLOracle{DSN: o.DSN, Query: o.Query, Timeout: o.Timeout, Guard: g, Resolve: o.Resolve}
}

// Targets implements [harness.Targeted]: the database o connects to.
func (o *SQLOracle) Targets() []harness.Target {
	return []harness.Target{{Field: "oracle.sql.dsn", URL: o.DSN}}
}

// WithResolver implements [harness.Resolvable].
func (o *RedisOracle) WithResolver(resolve func(string) string) harness.Oracle {
	return &RedisOracle{URL: o.URL, Command: o.Command, Timeout: o.Timeout, Guard: o.Guard, Resolve: resolve}
}

// WithGuard implements [harness.Guardable].
func (o *RedisOracle) WithGuard(g *harness.Guard) harness.Oracle {
	return &RedisOracle{URL: o.URL, Command: o.Command, Timeout: o.Timeout, Guard: g, Resolve: o.Resolve}
}

// Targets implements [harness.Targeted]: the server o connects to.
func (o *RedisOracle) Targets() []harness.Target {
	return []harness.Target{{Field: "oracle.redis.url", URL: o.URL}}
}

// The capabilities the harness asks store oracles for.
var (
	_ harness.Resolvable = (*SQLOracle)(nil)
	_ harness.Guardable  = (*SQLOracle)(nil)
	_ harness.Targeted   = (*SQLOracle)(nil)
	_ io.Closer          = (*SQLOracle)(nil)
	_ harness.Resolvable = (*RedisOracle)(nil)
	_ harness.Guardable  = (*RedisOracle)(nil)
	_ harness.Targeted   = (*RedisOracle)(nil)
	_ io.Closer          = (*RedisOracle)(nil)
)
