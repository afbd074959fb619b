package faultstest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Server builds toxiproxy-server, starts it on a free loopback port for the
// rest of the test and returns its API's URL (http://127.0.0.1:PORT).
func Server(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toxiproxy-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/Shopify/toxiproxy/v2/cmd/server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build toxiproxy-server: %v: %s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "LOG_LEVEL=error")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/version"); err == nil {
			resp.Body.Close()
			return url
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("toxiproxy-server did not come up")
	return ""
}
