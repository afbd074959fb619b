package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestHTMLFromARealRunInABrowser opens the HTML report of a real demo run
// (naive and check-then-act) in headless Chromium: no console errors, the
// check-then-act cell links to its timeline, and that timeline shows the
// overlapping commits.
func TestHTMLFromARealRunInABrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("this test needs Chromium at %s: apt-get install chromium (%v)", chromium, err)
	}
	files, code, out := demoReport(t)
	require.Equal(t, exitOK, code, out)
	page, err := filepath.Abs(files["html"])
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU)...)
	defer acancel()
	var mu sync.Mutex
	var problems []string
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, "console error")
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		}
	}))
	defer bcancel()

	const id = "fail-check-then-act-concurrent-duplicate"
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS("table.matrix")),
		chromedp.Click(chromedp.CSS(`table.matrix a[href="#`+id+`"]`)),
	))
	target, err := chromedp.Run(bctx, chromedp.Poll[string](`document.querySelector(':target') && document.querySelector(':target').id`,
		chromedp.WithPollingTimeout(5*time.Second)))
	require.NoError(t, err)
	require.Equal(t, id, target, "the failing cell links to its section")

	type bar struct {
		Start  float64 `json:"start"`
		End    float64 `json:"end"`
		Status int     `json:"status"`
		Result string  `json:"result"`
	}
	bars, err := chromedp.Run(bctx, chromedp.Evaluate[[]bar](`[...document.querySelectorAll('#`+id+` svg.timeline rect.bar')].map(r =>
		({start: +r.dataset.startMs, end: +r.dataset.endMs, status: +r.dataset.status, result: r.dataset.resultId}))`))
	require.NoError(t, err)
	var commits []bar
	for _, b := range bars {
		if b.Status/100 == 2 {
			commits = append(commits, b)
		}
	}
	overlap := false
	for i := range commits {
		for j := i + 1; j < len(commits); j++ {
			a, b := commits[i], commits[j]
			if a.Start < b.End && b.Start < a.End && a.Result != b.Result {
				overlap = true
			}
		}
	}
	require.True(t, overlap, "two overlapping 2xx answers with distinct results are drawn: %+v", bars)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, problems)
}
