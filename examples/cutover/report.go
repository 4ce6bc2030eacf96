package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mm2cutover/mm2cutover/examples/internal/changereport"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// reportOutput is what the report step prints.
type reportOutput struct {
	Connector   string               `json:"connector"`
	Fingerprint string               `json:"plan_fingerprint"`
	HTML        string               `json:"html"`
	Markdown    string               `json:"markdown"`
	Verdict     changereport.Verdict `json:"verdict"`
}

// writeReport is the report step: the change record of the plan's cutover,
// from the plan and the audit file, written as an HTML page (-report-out,
// default the plan file with .report.html) and as Markdown beside it. It
// reads no cluster and writes nothing else. An audit file that holds no
// entry of the plan is a settings error: the plan and the audit are not of
// one cutover.
func (c *cli) writeReport() error {
	p, err := c.readPlan()
	if err != nil {
		return err
	}
	f, err := os.Open(c.o.auditPath)
	if err != nil {
		return fmt.Errorf("read the audit file: %w (pass -audit)", err)
	}
	entries, err := changereport.ReadAudit(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("audit file %s: %w", c.o.auditPath, err)
	}
	if mine, _ := changereport.Select(p, entries); len(mine) == 0 {
		return fmt.Errorf("%w: the audit file %s holds no entry of plan %s: pass the plan and the audit file of one cutover (-plan, -audit)",
			settings.ErrSettings, c.o.auditPath, p.Fingerprint)
	}
	rep, err := changereport.New(p, entries)
	if err != nil {
		return fmt.Errorf("audit file %s: %w", c.o.auditPath, err)
	}
	htmlPath := c.o.reportOut
	if htmlPath == "" {
		htmlPath = strings.TrimSuffix(c.o.planPath, ".json") + ".report.html"
	}
	mdPath := strings.TrimSuffix(htmlPath, ".html") + ".md"
	var page, text bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(&text); err != nil {
		return err
	}
	if err := writeFileAtomic(htmlPath, page.Bytes()); err != nil {
		return err
	}
	if err := writeFileAtomic(mdPath, text.Bytes()); err != nil {
		return err
	}
	out := reportOutput{Connector: p.ConnectorName, Fingerprint: p.Fingerprint, HTML: htmlPath, Markdown: mdPath, Verdict: rep.Verdict()}
	c.emit("report", out, func(w io.Writer) {
		fmt.Fprintf(w, "change record\t%s\n", out.HTML)
		fmt.Fprintf(w, "as Markdown\t%s\n", out.Markdown)
		fmt.Fprintf(w, "verdict\t%s\n", strings.ToUpper(string(out.Verdict.Outcome)))
		for _, why := range out.Verdict.Reasons {
			fmt.Fprintf(w, "\t%s\n", why)
		}
	})
	return nil
}
