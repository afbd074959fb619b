package scenarios_test

import (
	"context"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/scenarios"
)

// Run certifies a tool outside go test; here the correct fixture passes every
// scenario. (In a _test.go file, scenarios.Certify(t, tool) does the same
// with one subtest per scenario.)
func ExampleRun() {
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	tool, err := srv.HTTPTool("create-ticket", 2*time.Second) // the declared timeout
	if err != nil {
		panic(err)
	}
	rep, err := scenarios.Run(context.Background(), tool, scenarios.Config{Checks: 50})
	if err != nil {
		panic(err)
	}
	for _, s := range rep.Scenarios {
		fmt.Println(s.ID, s.Verdict)
	}
	fmt.Println("agent-ready:", rep.AgentReady)
	// Output:
	// lost-response ok
	// pre-server-error ok
	// concurrent-duplicate ok
	// key-mismatch ok
	// distinct-keys ok
	// replay ok
	// missing-key ok
	// agent-ready: true
}
