package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
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
	Guard *Guard
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
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	var n int64
	if err := pool.QueryRow(ctx, o.Query, marker).Scan(&n); err != nil {
		if shape := sqlShapeError(err); shape != nil {
			return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, &FieldError{Field: "oracle.sql.query", Err: shape})
		}
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
	dsn, mapped, err := resolveURL(o.DSN, o.Resolve)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	g := o.Guard
	if mapped != "" {
		g = g.trusting(mapped)
	}
	cfg.ConnConfig.LookupFunc = g.lookupFunc
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
	Command []*Template
	// Timeout bounds one command, connecting included (default 10s).
	Timeout time.Duration
	// Guard checks every connection (nil: loopback only, see [Guard]).
	Guard *Guard
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
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, err)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%w %s: %w", ErrOracle, o, &FieldError{Field: "oracle.redis.command",
			Err: fmt.Errorf("%w: the reply is %s, want an integer", ErrOracleShape, describeReply(v))})
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
	u, mapped, err := resolveURL(o.URL, o.Resolve)
	if err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	g := o.Guard
	if mapped != "" {
		g = g.trusting(mapped)
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
		return fmt.Sprintf("the string %q", snippet([]byte(x)))
	case []any:
		return fmt.Sprintf("an array of %s", Plural(len(x), "element"))
	}
	return fmt.Sprintf("a %T", v)
}

// timeoutOr is d, or the default oracle timeout when d is not positive.
func timeoutOr(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultOracleTimeout
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

// resolveURL rewrites the host:port of a URL-shaped DSN with resolve. mapped
// is the new host:port when resolve changed it (one of the run's own
// containers), "" otherwise.
func resolveURL(raw string, resolve func(string) string) (out, mapped string, err error) {
	if resolve == nil {
		return raw, "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("dsn: %w", err)
	}
	hp := u.Host
	if u.Port() == "" {
		switch u.Scheme {
		case "postgres", "postgresql", "redis", "rediss":
			hp = urlHostPort(u)
		}
	}
	r := resolve(hp)
	if r == hp {
		return raw, "", nil
	}
	u.Host = r
	return u.String(), r, nil
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
		return &SQLOracle{DSN: x.DSN, Query: x.Query, Timeout: x.Timeout, Guard: x.Guard, Resolve: resolve}
	case *RedisOracle:
		return &RedisOracle{URL: x.URL, Command: x.Command, Timeout: x.Timeout, Guard: x.Guard, Resolve: resolve}
	}
	return o
}

// GuardOracle returns o with every connection it makes checked by g (see
// [Guard]). Oracles that dial nothing of their own come back unchanged.
func GuardOracle(o Oracle, g *Guard) Oracle {
	switch x := o.(type) {
	case *settled:
		return &settled{o: GuardOracle(x.o, g), settle: x.settle}
	case *HTTPOracle:
		c := *x
		c.Guard = g
		return &c
	case *SQLOracle:
		return &SQLOracle{DSN: x.DSN, Query: x.Query, Timeout: x.Timeout, Guard: g, Resolve: x.Resolve}
	case *RedisOracle:
		return &RedisOracle{URL: x.URL, Command: x.Command, Timeout: x.Timeout, Guard: g, Resolve: x.Resolve}
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

// sqlShapeError returns an ErrOracleShape error when err says the query's
// answer has the wrong shape (no row, or a value that is not an integer), nil
// otherwise.
func sqlShapeError(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: the query returned no row, want one row with the count", ErrOracleShape)
	}
	var se pgx.ScanArgError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: the query's first column is not an integer count: %w", ErrOracleShape, err)
	}
	return nil
}
