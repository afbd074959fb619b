package openapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
)

// TestLoadErrors: a document that cannot be used is refused with an error
// naming the file (and the line, where one is known).
func TestLoadErrors(t *testing.T) {
	large := filepath.Join(t.TempDir(), "large.yaml")
	f, err := os.Create(large)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxDocumentBytes+1))
	require.NoError(t, f.Close())
	for _, tc := range []struct {
		file   string
		line   int
		msg    string
		reason string
	}{
		{"testdata/bad/syntax.yaml", 0, "L2.C7", "a YAML syntax error (libopenapi words the line into its message)"},
		{"testdata/bad/missing-ref.yaml", 12, "#/components/schemas/NewTicket", "a $ref to a schema that is not there"},
		{"testdata/bad/swagger.yaml", 1, "Swagger 2.0", "Swagger 2.0"},
		{"testdata/bad/asyncapi.yaml", 1, "not an OpenAPI 3 document", "another kind of document"},
		{"testdata/bad/missing.yaml", 0, "cannot read", "no such file"},
		{large, 0, "larger than", "a file too large to be a document"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := Load(context.Background(), tc.file, Options{})
			require.ErrorIs(t, err, ErrDocument, tc.reason)
			var de *DocumentError
			require.ErrorAs(t, err, &de, tc.reason)
			assert.Equal(t, tc.file, de.Source, tc.reason)
			assert.Equal(t, tc.line, de.Line, "%s: %v", tc.reason, err)
			assert.Contains(t, err.Error(), tc.msg, tc.reason)
		})
	}
}

// TestLoadURL reads documents over HTTP on loopback only, and never follows
// a redirect elsewhere.
func TestLoadURL(t *testing.T) {
	doc, err := os.ReadFile("testdata/async-jobs.json")
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/spec/openapi.json", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(doc) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3/openapi.json", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/openapi.json"
	require.NoError(t, ln.Close())

	d, err := Load(context.Background(), srv.URL+"/spec/openapi.json", Options{})
	require.NoError(t, err)
	draft, err := d.Draft(nil)
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/api/exports", draft.Tools[0].HTTP.URL, "a relative server resolves against the document's URL")

	for _, tc := range []struct {
		url    string
		want   error
		reason string
	}{
		{"http://10.1.2.3/openapi.json", harness.ErrRemoteTarget, "a remote document needs AllowRemote"},
		{srv.URL + "/away", harness.ErrRemoteTarget, "a redirect to a remote host is refused"},
		{srv.URL + "/nope.json", ErrDocument, "a 404"},
		{closed, harness.ErrUnreachable, "nothing listens"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := Load(context.Background(), tc.url, Options{})
			require.Error(t, err, tc.reason)
			assert.True(t, errors.Is(err, tc.want), "%s: %v", tc.reason, err)
			assert.Contains(t, err.Error(), tc.url, tc.reason)
		})
	}
}
