package examples_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThirdPartyIsItsOwnModule: the third-party middlewares examples/thirdparty
// certifies are its module's dependencies, not onceproof's, and make test
// runs its tests.
func TestThirdPartyIsItsOwnModule(t *testing.T) {
	sub, err := os.ReadFile("thirdparty/go.mod")
	require.NoError(t, err)
	require.Contains(t, string(sub), "module github.com/onceproof/onceproof/examples/thirdparty\n")
	require.Contains(t, string(sub), "replace github.com/onceproof/onceproof => ../..", "it certifies this checkout")
	for _, f := range []string{"../go.mod", "../go.sum"} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range []string{"github.com/gofiber/", "github.com/valyala/fasthttp", "github.com/hashicorp/go-retryablehttp"} {
			require.NotContains(t, string(data), m, "%s names %s: only examples/thirdparty needs it", f, m)
			require.Contains(t, string(sub), m, "examples/thirdparty requires %s", m)
		}
	}
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	test := string(mk)[strings.Index(string(mk), "\ntest:"):]
	test = test[:strings.Index(test, "\n\n")]
	require.Contains(t, test, "cd examples/thirdparty && $(GO) test -race", "make test runs the module's tests")
}
