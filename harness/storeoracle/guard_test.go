package storeoracle_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
	"github.com/onceproof/onceproof/harness/storeoracle"
)

func TestStoreOraclesDialThroughTheGuard(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close() // not a database: the query fails after the dial
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, o := range []harness.Oracle{
		&storeoracle.SQLOracle{DSN: "postgres://u:p@store.local:" + port + "/db?sslmode=disable", Query: "select $1::int"},
		&storeoracle.RedisOracle{URL: "redis://store.local:" + port + "/0", Command: []*harness.Template{harness.MustTemplate("SCARD"), harness.MustTemplate("{{.Marker}}")}},
	} {
		rec := harnesstest.NewRecorder(map[string]string{"store.local": "127.0.0.1"})
		g := harness.GuardOracle(o, rec.Guard())
		_, err := g.Count(context.Background(), "m")
		harness.CloseOracle(g)
		require.Error(t, err)
		assert.NotErrorIs(t, err, harness.ErrRemoteTarget)
		require.NotEmpty(t, rec.Dialled(), "%s dialled through the guard", o)
		assert.Equal(t, "127.0.0.1:"+port, rec.Dialled()[0], "the hosts-table name was dialled as its literal address")
		rec.OnlyLoopbackDials(t)
	}
}

func TestStoreOraclesRefuseRemoteAddressesWithoutConnecting(t *testing.T) {
	for _, tc := range []struct {
		reason string
		oracle harness.Oracle
	}{
		{"sql oracle at a remote address", &storeoracle.SQLOracle{DSN: "postgres://u:p@10.0.0.1:5432/db", Query: "select $1::int"}},
		{"sql oracle at a name outside the hosts table", &storeoracle.SQLOracle{DSN: "postgres://u:p@db.example/db", Query: "select $1::int"}},
		{"redis oracle at a remote address", &storeoracle.RedisOracle{URL: "redis://10.0.0.1:6379/0", Command: []*harness.Template{harness.MustTemplate("SCARD"), harness.MustTemplate("{{.Marker}}")}}},
		{"redis oracle at a name outside the hosts table", &storeoracle.RedisOracle{URL: "redis://cache.example/0", Command: []*harness.Template{harness.MustTemplate("SCARD"), harness.MustTemplate("{{.Marker}}")}}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rec := harnesstest.NewRecorder(nil)
			o := harness.GuardOracle(tc.oracle, rec.Guard())
			defer harness.CloseOracle(o)
			_, err := o.Count(context.Background(), "m-1")
			require.ErrorIs(t, err, harness.ErrRemoteTarget, tc.reason)
			require.ErrorIs(t, err, harness.ErrOracle)
			assert.Empty(t, rec.Dialled(), "no connection was attempted")
		})
	}
}
