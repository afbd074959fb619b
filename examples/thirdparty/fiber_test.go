package thirdparty_test

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/idempotency"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
	"github.com/onceproof/onceproof/scenarios"
)

// store is a fiber.Storage in a map: the middleware's own default starts a
// garbage-collecting goroutine that nothing can stop.
type store struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *store) Get(key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

func (s *store) Set(key string, val []byte, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = append([]byte(nil), val...)
	return nil
}

func (s *store) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (s *store) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = map[string][]byte{}
	return nil
}

func (s *store) Close() error { return nil }

// tickets is the handler's effect: one ticket per executed request.
type tickets struct {
	mu       sync.Mutex
	subjects []string
}

func (t *tickets) create(c *fiber.Ctx) error {
	var in struct {
		Subject string `json:"subject"`
		Amount  int    `json:"amount"`
	}
	if err := json.Unmarshal(c.Body(), &in); err != nil || in.Amount <= 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"error": "bad ticket"})
	}
	t.mu.Lock()
	t.subjects = append(t.subjects, in.Subject)
	id := "t-" + strconv.Itoa(len(t.subjects))
	t.mu.Unlock()
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"id": id, "subject": in.Subject, "amount": in.Amount})
}

func (t *tickets) count(_ context.Context, marker string) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.subjects {
		if strings.Contains(s, marker) {
			n++
		}
	}
	return n, nil
}

// startFiber serves POST /tickets behind Fiber's idempotency middleware
// (keyed on Idempotency-Key) on a loopback port.
func startFiber(t *testing.T) (string, *tickets) {
	t.Helper()
	tk := &tickets{}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(idempotency.New(idempotency.Config{
		KeyHeader: harness.DefaultKeyHeader,
		Lifetime:  time.Hour,
		Lock:      idempotency.NewMemoryLock(),
		Storage:   &store{m: map[string][]byte{}},
	}))
	app.Post("/tickets", tk.create)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String() + "/tickets", tk
}

// TestFiberIdempotencyMiddleware certifies gofiber/fiber v2's idempotency
// middleware. It locks each key and stores the handler's answer, so lost
// responses, torn or refused requests and concurrent duplicates leave one
// ticket and replays repeat the first answer byte for byte. It does not
// fingerprint the payload, so a reused key with another payload gets the
// first payload's answer instead of 422 (IETF draft), and a request
// without a key is simply executed where the IETF profile requires a key.
func TestFiberIdempotencyMiddleware(t *testing.T) {
	url, tk := startFiber(t)
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{
		Name:     "fiber-idempotency",
		URL:      url,
		Headers:  map[string]string{"Content-Type": "application/json"},
		Body:     fixtures.Body,
		Timeout:  500 * time.Millisecond,
		ResultID: "/id",
		Oracle:   harness.OracleFunc(tk.count),
	})
	require.NoError(t, err)
	rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Checks: 30, MaxBackoff: 10 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, rep.Error)

	want := map[scenarios.ID]struct {
		verdict report.Verdict
		rule    report.Rule
		reason  string
	}{
		scenarios.LostResponse:        {report.Pass, "", "the stored answer is replayed to the retry"},
		scenarios.PreServerError:      {report.Pass, "", "a request that never arrived is executed once, on the retry"},
		scenarios.ConcurrentDuplicate: {report.Pass, "", "the per-key lock makes duplicates wait, then replay"},
		scenarios.KeyMismatch:         {report.Fail, report.RuleStatus, "no payload fingerprint: the first answer comes back, not 422"},
		scenarios.DistinctKeys:        {report.Pass, "", "distinct keys are distinct operations"},
		scenarios.Replay:              {report.Pass, "", "status, body and headers are stored and replayed"},
		scenarios.MissingKey:          {report.Fail, report.RuleKeyRequired, "a request without a key is executed"},
	}
	got := map[scenarios.ID]bool{}
	for _, s := range rep.Scenarios {
		w, ok := want[scenarios.ID(s.ID)]
		if !assert.True(t, ok, "unexpected scenario %s", s.ID) {
			continue
		}
		got[scenarios.ID(s.ID)] = true
		assert.Equal(t, w.verdict, s.Verdict, "%s: %s\n%s\n%v", s.ID, w.reason, s.Reason, s.Counterexample)
		if w.verdict == report.Fail && s.Counterexample != nil {
			assert.Equal(t, w.rule, s.Counterexample.Rule, "%s: %s\n%s", s.ID, w.reason, s.Reason)
			t.Logf("%s:\n%v", s.ID, s.Counterexample)
		}
	}
	assert.Len(t, got, len(want), "every expected scenario ran")
}
