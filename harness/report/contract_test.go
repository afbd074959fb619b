package report_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
)

func answer(status int, resultID, body string, headers map[string]string) report.Attempt {
	return report.Attempt{Outcome: report.OK, Status: status, ResultID: resultID, Response: []byte(body), Headers: headers}
}

func TestReplayDiff(t *testing.T) {
	ietf, err := report.Contract{Volatile: []string{"/request_id", "/items/0/at"}}.Resolve()
	require.NoError(t, err)
	latest, err := report.Contract{Profile: report.ProfilePayPal}.Resolve()
	require.NoError(t, err)
	loc := map[string]string{"Location": "/tickets/t-1", "Content-Type": "application/json"}
	const firstBody = `{"id":"t-1","amount":12,"request_id":"r-1","items":[{"at":1,"n":2}]}`
	first := answer(201, "t-1", firstBody, loc)
	tests := []struct {
		reason   string
		contract report.Contract
		replay   report.Attempt
		want     string // "" when the replay repeats the first answer
	}{
		{"the same answer with other volatile values", ietf,
			answer(201, "t-1", `{"amount":12,"id":"t-1","request_id":"r-2","items":[{"n":2,"at":9}]}`, loc), ""},
		{"another status", ietf, answer(200, "t-1", firstBody, loc), "status: 200, want 201"},
		{"another result", ietf, answer(201, "t-2", `{"id":"t-2"}`, loc), `result_id: "t-2", want "t-1"`},
		{"a field that is not volatile", ietf,
			answer(201, "t-1", `{"id":"t-1","amount":13,"request_id":"r-1","items":[{"at":1,"n":2}]}`, loc), "body at /amount: 13, want 12"},
		{"a field added", ietf,
			answer(201, "t-1", `{"id":"t-1","amount":12,"request_id":"r-1","items":[{"at":1,"n":2}],"replayed":true}`, loc), "body at /replayed: true, want absent"},
		{"an array of another length", ietf,
			answer(201, "t-1", `{"id":"t-1","amount":12,"request_id":"r-1","items":[]}`, loc), "body at /items: 0 elements, want 1 elements"},
		{"a body that is not JSON", ietf, answer(201, "t-1", "created", loc), `body: "created", want "{\"id\":\"t-1\",\"amount\":12,\"request_id\":\"r-1\",\"items\":[{\"at\":1,…"`},
		{"a missing Location", ietf,
			answer(201, "t-1", firstBody, map[string]string{"Content-Type": "application/json"}), `header Location: absent, want "/tickets/t-1"`},
		{"latest: another 2xx and another body are the latest state", latest,
			answer(200, "t-1", `{"id":"t-1","status":"COMPLETED"}`, loc), ""},
		{"latest: an error is not the latest state of a success", latest, answer(404, "", `{}`, loc), "status: 404, want a 2xx (the first answer was 201)"},
		{"latest: the result must be the same", latest, answer(200, "t-9", firstBody, loc), `result_id: "t-9", want "t-1"`},
	}
	for _, tc := range tests {
		first := first
		first.Body = string(first.Response)
		tc.replay.Body = string(tc.replay.Response)
		d, ok := tc.contract.ReplayDiff(first, tc.replay)
		if tc.want == "" {
			assert.False(t, ok, "%s: %s", tc.reason, d)
			continue
		}
		if assert.True(t, ok, tc.reason) {
			assert.Equal(t, tc.want, d.String(), tc.reason)
		}
	}
}

func TestContractResolve(t *testing.T) {
	tests := []struct {
		reason string
		in     report.Contract
		want   string // Summary, or the error
	}{
		{"the zero value is the IETF profile", report.Contract{}, "profile ietf (missing key 400, reused key 422, in flight 409, replays byte-for-byte, refusals replayed)"},
		{"stripe", report.Contract{Profile: report.ProfileStripe, Retention: 24 * time.Hour, ReplayedHeader: "idempotent-replayed"},
			"profile stripe (key optional, reused key 400, in flight 409, replays byte-for-byte, 5xx replayed); keys honoured for 24h; replays marked Idempotent-Replayed"},
		{"a predefined profile ignores codes given in code", report.Contract{Profile: report.ProfilePayPal, Codes: report.Codes{Mismatch: 499}},
			"profile paypal (key optional, reused key 422, in flight 409, replays the latest status, errors not replayed)"},
		{"custom codes", report.Contract{Profile: report.ProfileCustom, Codes: report.Codes{Mismatch: 409, InFlight: 429}},
			"profile custom (key optional, reused key 409, in flight 429, replays byte-for-byte, errors not replayed)"},
		{"custom codes out of range", report.Contract{Profile: report.ProfileCustom, Codes: report.Codes{Mismatch: 200, InFlight: 409}}, "bad contract: profile custom: mismatch 200: want a 4xx refusal"},
		{"an unknown profile", report.Contract{Profile: "zuora"}, `bad contract: unknown profile "zuora" (want one of ietf, stripe, paypal, custom)`},
		{"a bad volatile pointer", report.Contract{Volatile: []string{"x"}}, `bad contract: volatile: JSON pointer "x" must start with "/"`},
		{"the replayed header is compared too", report.Contract{ReplayedHeader: "location"}, "bad contract: replayed_header Location is also a replay header: it differs between a first answer and its replays by definition"},
	}
	for _, tc := range tests {
		c, err := tc.in.Resolve()
		if err != nil {
			assert.ErrorIs(t, err, report.ErrContract, tc.reason)
			assert.Equal(t, tc.want, err.Error(), tc.reason)
			continue
		}
		assert.Equal(t, tc.want, c.Summary(), tc.reason)
	}
	c, err := report.Contract{}.Resolve()
	require.NoError(t, err)
	assert.Equal(t, []string{"Location", "Content-Type"}, c.ReplayHeaders)
	assert.True(t, c.KeyRequired())
	assert.True(t, c.Replays(201))
	assert.True(t, c.Replays(400))
	assert.False(t, c.Replays(503))
	c, err = report.Contract{ReplayHeaders: []string{}}.Resolve()
	require.NoError(t, err)
	assert.Empty(t, c.ReplayHeaders, "an empty list compares no header")
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		want   string
		reason string
	}{
		{24 * time.Hour, "24h", "whole hours"},
		{90 * time.Minute, "1h30m", "hours and minutes"},
		{time.Minute, "1m", "whole minutes"},
		{90 * time.Second, "1m30s", "seconds kept"},
		{500 * time.Millisecond, "500ms", "milliseconds"},
	} {
		assert.Equal(t, tc.want, report.FormatDuration(tc.d), tc.reason)
	}
}
