package harness

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/capture"
)

func TestDownstreamEffects(t *testing.T) {
	ok, lose, reset, unavailable := capture.Answer{Kind: capture.KindOK}, capture.Answer{Kind: capture.KindLose}, capture.Answer{Kind: capture.KindReset}, capture.Answer{Kind: capture.KindStatus, Status: 503}
	call := func(key string, a capture.Answer) Outbound { return Outbound{Key: key, HasKey: key != "", Answer: a} }
	for _, tc := range []struct {
		log    []Outbound
		want   int
		reason string
	}{
		{nil, 0, "no call, no effect"},
		{[]Outbound{call("k", reset), call("k", unavailable)}, 0, "calls the provider did not commit make no effect"},
		{[]Outbound{call("k", lose), call("k", ok)}, 1, "a retry with the same key is deduplicated by the provider"},
		{[]Outbound{call("k1", lose), call("k2", ok)}, 2, "a retry with a new key is a new effect"},
		{[]Outbound{call("", lose), call("", ok)}, 2, "every committed call without a key is an effect"},
		{[]Outbound{call("k", reset), call("k2", ok)}, 1, "a new key after a call that did not commit still makes one effect"},
	} {
		assert.Equal(t, tc.want, DownstreamEffects(tc.log), tc.reason)
	}
}

func postTo(t *testing.T, url, header, key, body string) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(header, key)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestDownstreamAttributesAndAnswers: requests are the operation's whose
// body or URL holds its marker, answered in turn as planned (success after
// the plan), with the configured key header read; others are stray and
// succeed; a key another operation sent first is flagged.
func TestDownstreamAttributesAndAnswers(t *testing.T) {
	d, err := NewDownstream(DownstreamSpec{Name: "payments", KeyHeader: "X-Charge-Key"})
	require.NoError(t, err)
	defer d.Close()
	x := d.Expect("m-0001", []capture.Answer{{Kind: capture.KindLose}, {Kind: capture.KindReset}, {Kind: capture.KindStatus, Status: 503}})
	y := d.Expect("m-0002", nil)

	_, err = postTo(t, d.URL()+"/charges", "X-Charge-Key", "k1", `{"description":"refund m-0001"}`)
	require.Error(t, err, "a lost response")
	_, err = postTo(t, d.URL()+"/charges", "X-Charge-Key", "k1", `{"description":"refund m-0001"}`)
	require.Error(t, err, "a reset")
	status, err := postTo(t, d.URL()+"/charges/m-0001", "X-Charge-Key", "k1", `{}`)
	require.NoError(t, err)
	assert.Equal(t, 503, status, "the marker in the URL counts too")
	status, err = postTo(t, d.URL()+"/charges", "X-Charge-Key", "k1", `{"description":"refund m-0001"}`)
	require.NoError(t, err)
	assert.Equal(t, 201, status, "after the plan, success")
	status, err = postTo(t, d.URL()+"/charges", "X-Charge-Key", "k1", `{"description":"refund m-0002"}`)
	require.NoError(t, err)
	assert.Equal(t, 201, status)
	status, err = postTo(t, d.URL()+"/charges", "", "", `{"description":"someone else"}`)
	require.NoError(t, err)
	assert.Equal(t, 201, status, "a stray call succeeds")

	log := x.All()
	require.Len(t, log, 4)
	for i, o := range log {
		assert.Equal(t, i+1, o.N)
		assert.Equal(t, "k1", o.Key, "the key is read from the configured header")
		assert.Empty(t, o.Reused)
	}
	assert.Equal(t, []capture.Kind{capture.KindLose, capture.KindReset, capture.KindStatus, capture.KindOK},
		[]capture.Kind{log[0].Answer.Kind, log[1].Answer.Kind, log[2].Answer.Kind, log[3].Answer.Kind})
	assert.Equal(t, 1, DownstreamEffects(log))
	assert.Len(t, x.Take(), 4, "Take returns what is new")
	assert.Empty(t, x.Take())
	other := y.All()
	require.Len(t, other, 1)
	assert.Equal(t, "m-0001", other[0].Reused, "the key of another operation is flagged")
	assert.Equal(t, 1, d.Stray())

	x.Close()
	_, err = postTo(t, d.URL()+"/charges", "X-Charge-Key", "k1", `{"description":"refund m-0001"}`)
	require.NoError(t, err)
	assert.Len(t, x.All(), 4, "a closed expectation takes no more calls")
	assert.Equal(t, 2, d.Stray())
}

func TestDownstreamListen(t *testing.T) {
	_, err := NewDownstream(DownstreamSpec{Listen: "10.1.2.3:9100"})
	require.ErrorIs(t, err, ErrDownstream, "a remote listen address is refused")
	require.Contains(t, err.Error(), "loopback")

	// An endpoint closes connections from addresses it does not admit.
	d, err := ListenDownstream(DownstreamSpec{}, "127.0.0.1:0", func(netip.Addr) bool { return false })
	require.NoError(t, err)
	defer d.Close()
	assert.Equal(t, DefaultDownstreamName, d.Name())
	_, err = postTo(t, d.URL()+"/charges", DefaultKeyHeader, "k", `{}`)
	require.Error(t, err, "a connection from outside the network is closed")
}
