package capture

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func startCapture(t *testing.T) *Server {
	t.Helper()
	c, err := New()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// freshClient opens a new connection per request, as the reference wrapper
// does.
func freshClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func capturePost(client *http.Client, url, key string, withKey bool, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if withKey {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

func TestCaptureAnswers(t *testing.T) {
	c := startCapture(t)
	client := freshClient(t)
	url := "http://" + c.Addr() + "/tickets"
	for _, tc := range []struct {
		answer    Answer
		status    int
		body      string
		header    string // Retry-After
		committed bool
		reason    string
	}{
		{Answer{Kind: KindOK}, 201, `{"id":"c-1"}`, "", true, "ok commits and answers 201 with an id"},
		{Answer{Kind: KindStatus, Status: 503, RetryAfter: 1}, 503, `"error"`, "1", false, "a 503 carries Retry-After in seconds"},
		{Answer{Kind: KindStatus, Status: 429}, 429, "rate limited", "", false, "a 429 without Retry-After"},
		{Answer{Kind: KindStatus, Status: 422}, 422, "unprocessable", "", false, "a final 4xx"},
		{Answer{Kind: KindLose}, 0, "", "", true, "lose commits and sends nothing back"},
		{Answer{Kind: KindReset}, 0, "", "", false, "reset commits nothing and sends nothing back"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			c.SetAnswerer(func(*Record) Answer { return tc.answer })
			c.Take()
			resp, body, err := capturePost(client, url, "k-1", true, `{"subject":"x"}`)
			if tc.status == 0 {
				require.Error(t, err, "%s: the client must get no response", tc.reason)
			} else {
				require.NoError(t, err, tc.reason)
				require.Equal(t, tc.status, resp.StatusCode, tc.reason)
				require.Contains(t, string(body), tc.body, tc.reason)
				require.Equal(t, tc.header, resp.Header.Get("Retry-After"), tc.reason)
			}
			log := c.Take()
			require.Len(t, log, 1, tc.reason)
			got := log[0]
			require.Equal(t, tc.answer, got.Answer, tc.reason)
			require.Equal(t, tc.committed, got.Committed(), tc.reason)
			require.Equal(t, tc.committed, got.ResultID != "", tc.reason)
			require.False(t, got.Answered.Before(got.Received), tc.reason)
		})
	}
}

func TestCaptureRecordsRequests(t *testing.T) {
	c := startCapture(t)
	url := "http://" + c.Addr()
	var asked []int
	c.SetAnswerer(func(r *Record) Answer {
		asked = append(asked, r.N)
		r.Op = 7
		return Answer{Kind: KindOK}
	})
	fresh := freshClient(t)
	_, _, err := capturePost(fresh, url+"/tickets?x=1", "key-a", true, `{"a":"b"}`)
	require.NoError(t, err)
	_, _, err = capturePost(fresh, url+"/other", "", true, ``)
	require.NoError(t, err)
	_, _, err = capturePost(fresh, url+"/none", "", false, `x`)
	require.NoError(t, err)
	resp, err := fresh.Get(url + "/status")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	// Two requests on one keep-alive connection share its name.
	keep := &http.Client{Transport: &http.Transport{}}
	defer keep.Transport.(*http.Transport).CloseIdleConnections()
	for range 2 {
		_, _, err = capturePost(keep, url+"/kept", "key-b", true, `{}`)
		require.NoError(t, err)
	}

	log := c.Take()
	require.Len(t, log, 6)
	require.Equal(t, []int{1, 2, 3, 5, 6}, asked, "reads are answered without the answerer")
	for _, tc := range []struct {
		i                 int
		method, path, key string
		hasKey, write     bool
		body, conn        string
		op                int
		reason            string
	}{
		{0, "POST", "/tickets?x=1", "key-a", true, true, `{"a":"b"}`, "c1", 7, "the key, body, path and query are recorded"},
		{1, "POST", "/other", "", true, true, "", "c2", 7, "an empty key header is present but empty"},
		{2, "POST", "/none", "", false, true, "x", "c3", 7, "no key header at all"},
		{3, "GET", "/status", "", false, false, "", "c4", 0, "a read is recorded but not a write"},
		{4, "POST", "/kept", "key-b", true, true, "{}", "c5", 7, "a keep-alive connection gets one name"},
		{5, "POST", "/kept", "key-b", true, true, "{}", "c5", 7, "the same connection again"},
	} {
		got := log[tc.i]
		require.Equal(t, tc.i+1, got.N, tc.reason)
		require.Equal(t, tc.method, got.Method, tc.reason)
		require.Equal(t, tc.path, got.Path, tc.reason)
		require.Equal(t, tc.key, got.Key, tc.reason)
		require.Equal(t, tc.hasKey, got.HasKey, tc.reason)
		require.Equal(t, tc.write, got.Write, tc.reason)
		require.Equal(t, tc.body, string(got.Body), tc.reason)
		require.Equal(t, tc.conn, got.Conn, tc.reason)
		require.Equal(t, tc.op, got.Op, tc.reason)
	}
	require.Empty(t, c.Take(), "Take starts a new log")
	_, _, err = capturePost(fresh, url+"/again", "k", true, `{}`)
	require.NoError(t, err)
	again := c.Snapshot()
	require.Len(t, again, 1)
	require.Equal(t, 1, again[0].N, "numbering restarts after Take")
	require.Equal(t, "c1", again[0].Conn, "connection names restart after Take")
}

func TestCaptureDefaultsTo503(t *testing.T) {
	c := startCapture(t)
	resp, _, err := capturePost(freshClient(t), "http://"+c.Addr()+"/x", "k", true, `{}`)
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode, "without an answerer every write is refused, never committed")
	require.False(t, c.Take()[0].Committed())
}

func TestCaptureTornRequestIsNotCommitted(t *testing.T) {
	c := startCapture(t)
	called := false
	c.SetAnswerer(func(*Record) Answer { called = true; return Answer{Kind: KindOK} })
	conn, err := net.Dial("tcp", c.Addr())
	require.NoError(t, err)
	_, err = io.WriteString(conn, "POST /t HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k\r\nContent-Length: 100\r\n\r\n{\"sub")
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	_, _ = io.Copy(io.Discard, conn)
	conn.Close()
	require.Eventually(t, func() bool { return len(c.Snapshot()) == 1 }, 5*time.Second, 5*time.Millisecond)
	got := c.Take()[0]
	require.False(t, called, "a torn request is not offered to the answerer")
	require.NotEmpty(t, got.ReadError)
	require.Equal(t, KindReset, got.Answer.Kind)
	require.False(t, got.Committed())
}

func TestCaptureAnswerString(t *testing.T) {
	for _, tc := range []struct {
		a      Answer
		want   string
		reason string
	}{
		{Answer{Kind: KindOK}, "ok", "success"},
		{Answer{Kind: KindLose}, "lose", "lost response"},
		{Answer{Kind: KindReset}, "reset", "reset"},
		{Answer{Kind: KindStatus, Status: 409}, "409", "a bare status"},
		{Answer{Kind: KindStatus, Status: 503, RetryAfter: 1}, "503 retry-after=1s", "a status with Retry-After"},
		{Answer{}, "-", "no answer (a read)"},
	} {
		require.Equal(t, tc.want, tc.a.String(), tc.reason)
	}
}

func TestCaptureClosed(t *testing.T) {
	c, err := New()
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, _, err = capturePost(freshClient(t), "http://"+c.Addr()+"/x", "k", true, `{}`)
	require.Error(t, err, "a closed endpoint accepts nothing")
}
