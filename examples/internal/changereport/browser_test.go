package changereport

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumShot is what a headless Chromium made of a page: the screenshot
// of its first 1280x2000 pixels, the DOM as it parsed it, and what it
// logged of the page's console (a blocked load logs there).
type chromiumShot struct {
	img     image.Image
	dom     string
	console []string
}

// chromium opens the HTML file path in Debian's headless Chromium, with
// no network: every request goes to a proxy that refuses (port 9 on the
// loopback, the discard port: nothing listens there) and no host name
// resolves. Without chromium the test is skipped, and fails with CI=true:
// CI installs it (.ci/run).
func chromium(t *testing.T, path string) chromiumShot {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (apt-get install chromium; .ci/run installs it): %v", err)
		}
		t.Skipf("chromium is not installed (apt-get install chromium): %v", err)
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,2000",
		"--screenshot="+shot, "--dump-dom", "file://"+path)
	// Chromium's own files (crash reports, caches) stay in the test's
	// directory, not in the home of whoever runs it.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String()))
	}
	t.Logf("chromium took %v", time.Since(start).Round(time.Millisecond))
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, tail(stderr.String()))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return chromiumShot{img: img, dom: stdout.String(), console: console}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// countColour counts the pixels of img within 6 of colour (#rrggbb) on
// every channel: the line's and the header's own pixels, not their
// anti-aliased edges.
func countColour(img image.Image, colour string) int {
	v, err := strconv.ParseUint(strings.TrimPrefix(colour, "#"), 16, 32)
	if err != nil {
		panic(err)
	}
	want := [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	near := func(a, b int) bool { return a-b <= 6 && b-a <= 6 }
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(int(r>>8), want[0]) && near(int(g>>8), want[1]) && near(int(bl>>8), want[2]) {
				n++
			}
		}
	}
	return n
}

// partitionRows returns the partitions the per-partition table of a DOM
// lists, in order.
var (
	partitionsTable = regexp.MustCompile(`(?s)<table class="partitions" id="partitions">(.*?)</table>`)
	partitionCell   = regexp.MustCompile(`<tr[^>]*><td class="mono nowrap">([^<]*)</td>`)
)

func domPartitions(dom string) []string {
	m := partitionsTable.FindStringSubmatch(dom)
	if m == nil {
		return nil
	}
	var out []string
	for _, c := range partitionCell.FindAllStringSubmatch(m[1], -1) {
		out = append(out, c[1])
	}
	return out
}

// The least the screenshot holds of the chart's line and of the
// per-partition table's header, in pixels of their colours. The demo's
// page at 1280x2000 has about 3,600 (the line with its 11 dots) and
// 32,000 (the header row, 1,108 by 30 pixels less its text); a line along
// the axis alone has about 3,000.
const (
	minChartPixels  = 1500
	minHeaderPixels = 15000
)

// TestBrowser opens the record of the demo's cutover in a real headless
// Chromium with no network (Debian's chromium): it renders, the page
// logs nothing (a load the page's policy blocks would be logged), the
// screenshot shows the lag chart and the per-partition table's header, and
// the DOM holds a row per partition of the plan. A page without chart or
// table that tries to load an image shows the checks fail.
//
// Its cost: two Chromium runs and two 1280x2000 PNGs decoded, 1.6 s of
// CPU in all and 3 to 7 s of wall time on a loaded 2-core machine
// (docs/testing.md).
func TestBrowser(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the browser test skipped by -short, which CI=true does not allow")
		}
		t.Skip("the browser test runs without -short")
	}
	p, entries := readDemo(t)
	r, err := New(p, entries)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, page.String())
	dir := t.TempDir()
	good := filepath.Join(dir, "report.html")
	if err := os.WriteFile(good, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("the demo's record", func(t *testing.T) {
		s := chromium(t, good)
		if len(s.console) > 0 {
			t.Errorf("the page logged to the console (a load was attempted or failed):\n%s", strings.Join(s.console, "\n"))
		}
		if n := countColour(s.img, chartStroke); n < minChartPixels {
			t.Errorf("%d pixels of the chart's line (%s), want at least %d", n, chartStroke, minChartPixels)
		} else {
			t.Logf("%d pixels of the chart's line", n)
		}
		if n := countColour(s.img, partitionsHeader); n < minHeaderPixels {
			t.Errorf("%d pixels of the partition table's header (%s), want at least %d", n, partitionsHeader, minHeaderPixels)
		} else {
			t.Logf("%d pixels of the partition table's header", n)
		}
		var want []string
		for _, e := range p.Entries {
			want = append(want, e.Partition.String())
		}
		if got := domPartitions(s.dom); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the rendered table lists %v, want %v", got, want)
		}
		if !strings.Contains(s.dom, "<h2>PASSED</h2>") {
			t.Errorf("the rendered page has no PASSED verdict")
		}
		if os.Getenv("MM2CUTOVER_KEEP_SCREENSHOT") != "" {
			keep(t, s.img)
		}
	})

	// The same checks on a page that has neither the chart nor the table
	// and tries to load an image: each of them fails.
	t.Run("a page without chart and table", func(t *testing.T) {
		html := partitionsTable.ReplaceAllString(page.String(), "")
		html = regexp.MustCompile(`(?s)<figure id="lag-chart">.*?</figure>`).ReplaceAllString(html, `<img src="https://example.com/chart.png">`)
		if loads(html) == nil {
			t.Fatal("the check of the page's source finds nothing to load")
		}
		bad := filepath.Join(dir, "bad.html")
		if err := os.WriteFile(bad, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		s := chromium(t, bad)
		if len(s.console) == 0 || !strings.Contains(strings.Join(s.console, "\n"), "https://example.com/chart.png") {
			t.Errorf("the blocked load was not logged: %q", s.console)
		}
		if n := countColour(s.img, chartStroke); n >= minChartPixels {
			t.Errorf("%d pixels of the chart's colour without a chart", n)
		} else {
			t.Logf("%d pixels of the chart's colour", n)
		}
		if n := countColour(s.img, partitionsHeader); n >= minHeaderPixels {
			t.Errorf("%d pixels of the header's colour without the table", n)
		} else {
			t.Logf("%d pixels of the header's colour", n)
		}
		if got := domPartitions(s.dom); got != nil {
			t.Errorf("rows %v without the table", got)
		}
	})
}

// keep writes the screenshot to MM2CUTOVER_KEEP_SCREENSHOT, for a person
// to look at.
func keep(t *testing.T, img image.Image) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("MM2CUTOVER_KEEP_SCREENSHOT")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot written to %s", path)
}
