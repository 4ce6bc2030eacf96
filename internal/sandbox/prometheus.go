package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/filelock"
)

// PrometheusModuleVersion is the version of the github.com/prometheus/prometheus
// Go module the sandbox builds its Prometheus server and promtool from
// (module v0.316.0 is Prometheus 3.16.0; the module proxy serves Prometheus
// 3.x under v0.3xx versions). No registry of binaries is reachable here;
// the module proxy is.
const PrometheusModuleVersion = "v0.316.0"

// PrometheusVersion is the Prometheus release of PrometheusModuleVersion,
// stamped into the binaries (`prometheus --version`).
const PrometheusVersion = "3.16.0"

// PrometheusJob is the scrape job of the workers' JMX exporters: the job
// label Prometheus gives their series, the name of the metrics Service in
// examples/kubernetes (a ServiceMonitor's job label is its Service's name).
const PrometheusJob = "mm2-connect-metrics"

// ErrNoPrometheus means no Prometheus could be built: Go is not installed,
// or the build from the module proxy failed.
var ErrNoPrometheus = errors.New("no prometheus")

// PrometheusBinaries returns the paths of prometheus and promtool built
// from the module at PrometheusModuleVersion into cacheDir ("" means the
// default cache), building them on first use under the cache's file lock:
// `go install -tags remove_all_sd` (the service discoveries other than file
// and HTTP are left out), about 4 to 20 minutes on a cold Go build cache on
// 2 busy cores, then nothing. Errors wrap ErrNoPrometheus.
func PrometheusBinaries(ctx context.Context, cacheDir string, log *slog.Logger) (prometheus, promtool string, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", "", fmt.Errorf("%w: no cache directory: %v", ErrNoPrometheus, err)
		}
		cacheDir = filepath.Join(dir, "mm2cutover")
	}
	dir := filepath.Join(cacheDir, "prometheus-"+PrometheusVersion)
	prometheus, promtool = filepath.Join(dir, "prometheus"), filepath.Join(dir, "promtool")
	have := func() bool {
		for _, p := range []string{prometheus, promtool} {
			if _, err := os.Stat(p); err != nil {
				return false
			}
		}
		return true
	}
	if have() {
		return prometheus, promtool, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNoPrometheus, err)
	}
	// A lock of its own, as the Flink and Kubernetes builds have: the build
	// takes minutes to tens of minutes on an empty Go cache, and under the
	// cache's .lock it kept the Kafka jars and the JMX exporter agent from
	// every other test that long (an empty-cache run failed TestImage on it,
	// its 15-minute deadline spent waiting for this lock).
	unlock, err := filelock.Lock(ctx, filepath.Join(cacheDir, ".lock-prometheus"))
	if err != nil {
		return "", "", fmt.Errorf("%w: lock cache: %v", ErrNoPrometheus, err)
	}
	defer unlock()
	if have() { // another process built them while we waited
		return prometheus, promtool, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", "", fmt.Errorf("%w: go is not installed, needed to build prometheus %s", ErrNoPrometheus, PrometheusModuleVersion)
	}
	tmp, err := os.MkdirTemp(cacheDir, "prometheus-build-")
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNoPrometheus, err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	log.Info("building prometheus and promtool from the go module proxy (once per cache)", "module", "github.com/prometheus/prometheus@"+PrometheusModuleVersion)
	const mod = "github.com/prometheus/prometheus/cmd/"
	const v = "github.com/prometheus/common/version."
	cmd := exec.CommandContext(ctx, gobin, "install", "-trimpath", "-tags", "remove_all_sd",
		"-ldflags", "-X "+v+"Version="+PrometheusVersion+" -X "+v+"Revision="+PrometheusModuleVersion+" -X "+v+"Branch=module",
		mod+"prometheus@"+PrometheusModuleVersion, mod+"promtool@"+PrometheusModuleVersion)
	cmd.Dir = tmp // outside any module: go install pkg@version builds the module as published
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(tmp, "bin"), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("%w: go install prometheus %s: %v\n%s", ErrNoPrometheus, PrometheusModuleVersion, err, lastLines(string(out), 20))
	}
	if err := os.Rename(filepath.Join(tmp, "bin"), dir); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNoPrometheus, err)
	}
	log.Info("prometheus built", "dir", dir, "took", time.Since(start).Round(time.Second))
	return prometheus, promtool, nil
}

// PrometheusConfig says what a sandbox's Prometheus evaluates.
type PrometheusConfig struct {
	// Binary is the prometheus server to run ("" means PrometheusBinaries'
	// in the sandbox's cache).
	Binary string
	// RuleFiles are Prometheus rule files (groups of alerting and
	// recording rules) to load.
	RuleFiles []string
	// ScrapeInterval is the scrape interval and timeout (0 means 5 s: a
	// worker's exporter can take seconds to answer on a loaded machine, and
	// a timeout shorter than that makes scrapes pile up in the JVM).
	ScrapeInterval time.Duration
	// EvaluationInterval is the rule evaluation interval (0 means 1 s).
	EvaluationInterval time.Duration
	// Labels are added to every worker's target, as a ServiceMonitor adds
	// namespace, pod and service.
	Labels map[string]string
}

// Prometheus is a Prometheus server the sandbox started: it scrapes the
// JMX exporter of each worker the sandbox started with Config.JMXExporter
// (job PrometheusJob, one target per worker at the worker's own address,
// labelled pod "mm2-connect-<i>"), found through file-based service
// discovery, and evaluates the configured rules. Close stops it with the
// sandbox.
type Prometheus struct {
	url    string
	proc   *process
	sdFile string
	labels map[string]string
	client *http.Client
}

// StartPrometheus starts a Prometheus server for the sandbox's workers
// and waits until it is ready (GET /-/ready). It fails when the sandbox
// was started without Config.JMXExporter or is attached. Errors wrap
// ErrNoPrometheus when there is no binary.
func (s *Sandbox) StartPrometheus(ctx context.Context, cfg PrometheusConfig) (*Prometheus, error) {
	if !s.owned {
		return nil, ErrNotOwner
	}
	if s.jmxAgent == "" {
		return nil, errors.New("sandbox: StartPrometheus needs Config.JMXExporter")
	}
	if cfg.Binary == "" {
		var err error
		if cfg.Binary, _, err = PrometheusBinaries(ctx, s.cacheDir, s.log); err != nil {
			return nil, err
		}
	}
	if cfg.ScrapeInterval <= 0 {
		cfg.ScrapeInterval = 5 * time.Second
	}
	if cfg.EvaluationInterval <= 0 {
		cfg.EvaluationInterval = time.Second
	}
	dir, err := os.MkdirTemp(s.workDir, "prometheus-")
	if err != nil {
		return nil, err
	}
	p := &Prometheus{sdFile: filepath.Join(dir, "targets.json"), labels: cfg.Labels, client: &http.Client{Timeout: 30 * time.Second}}
	if err := p.SetTargets(s.workers); err != nil {
		return nil, err
	}
	scrape := cfg.ScrapeInterval.String()
	var conf strings.Builder
	fmt.Fprintf(&conf, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n", scrape, scrape, cfg.EvaluationInterval)
	if len(cfg.RuleFiles) > 0 {
		conf.WriteString("rule_files:\n")
		for _, f := range cfg.RuleFiles {
			fmt.Fprintf(&conf, "  - %s\n", strconv.Quote(f))
		}
	}
	fmt.Fprintf(&conf, "scrape_configs:\n  - job_name: %s\n    file_sd_configs:\n      - files: [%s]\n        refresh_interval: %s\n",
		PrometheusJob, strconv.Quote(p.sdFile), time.Second)
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o644); err != nil {
		return nil, err
	}
	ports, err := freePorts("127.0.0.1", 1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p.url = "http://" + addr
	p.proc = &process{
		name: "prometheus",
		argv: []string{cfg.Binary, "--config.file=" + confPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
			"--storage.tsdb.retention.time=2h", "--web.listen-address=" + addr},
		env: baseEnv(), dir: dir, log: filepath.Join(dir, "prometheus.log"),
	}
	if err := p.proc.start(); err != nil {
		return nil, err
	}
	s.prometheus = append(s.prometheus, p.proc)
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitUntil(ctx, p.proc, func(ctx context.Context) error {
		_, err := getJSON(ctx, p.client, p.url+"/-/ready", User{})
		return err
	}); err != nil {
		return nil, fmt.Errorf("prometheus at %s not ready: %w\n%s", p.url, err, p.proc.tail(40))
	}
	s.log.Info("prometheus ready", "url", p.url, "rules", cfg.RuleFiles)
	return p, nil
}

// URL returns the server's base URL (http://127.0.0.1:port).
func (p *Prometheus) URL() string { return p.url }

// Log returns the path of the server's log.
func (p *Prometheus) Log() string { return p.proc.logPath() }

// SetTargets makes the given workers the scrape targets, as Kubernetes'
// service discovery does for the Pods behind the metrics Service: a worker
// left out vanishes from Prometheus (its series go stale), as a deleted Pod
// does; a listed worker that is down is a target whose `up` is 0.
func (p *Prometheus) SetTargets(workers []*Worker) error {
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := []group{}
	for i, w := range workers {
		if w.metricsURL == "" {
			return fmt.Errorf("sandbox: worker %s has no metrics endpoint", w.url)
		}
		labels := map[string]string{"pod": fmt.Sprintf("mm2-connect-%d", i)}
		for k, v := range p.labels {
			labels[k] = v
		}
		groups = append(groups, group{Targets: []string{w.metricsTarget()}, Labels: labels})
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	return writeFileAtomic(p.sdFile, b)
}

// metricsTarget is the worker's exporter at the worker's own address (the
// agent listens on every address), so that `instance` shares its host with
// the REST URL the worker advertises, as a Pod's IP does.
func (w *Worker) metricsTarget() string {
	u, err := url.Parse(w.metricsURL)
	if err != nil {
		return w.metricsURL
	}
	host := u.Hostname()
	if wu, err := url.Parse(w.url); err == nil {
		host = wu.Hostname()
	}
	return net.JoinHostPort(host, u.Port())
}

// Sample is one series of an instant query's result.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query evaluates an instant PromQL query now and returns its series (a
// scalar result is one sample without labels).
func (p *Prometheus) Query(ctx context.Context, query string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.api(ctx, "/api/v1/query?query="+url.QueryEscape(query), &data); err != nil {
		return nil, fmt.Errorf("query %s: %w", query, err)
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]Sample, 0, len(vec))
		for _, v := range vec {
			f, err := sampleValue(v.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Metric: v.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var sc [2]any
		if err := json.Unmarshal(data.Result, &sc); err != nil {
			return nil, err
		}
		f, err := sampleValue(sc)
		return []Sample{{Value: f}}, err
	}
	return nil, fmt.Errorf("query %s: result type %q", query, data.ResultType)
}

func sampleValue(v [2]any) (float64, error) {
	s, ok := v[1].(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v", v[1])
	}
	return strconv.ParseFloat(s, 64)
}

// Alert is one alert of GET /api/v1/alerts: pending while its expression
// holds for less than the rule's `for`, firing after.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
	Value       string            `json:"value"`
}

// Name returns the alert's alertname.
func (a Alert) Name() string { return a.Labels["alertname"] }

// Alerts returns the pending and firing alerts.
func (p *Prometheus) Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	if err := p.api(ctx, "/api/v1/alerts", &data); err != nil {
		return nil, err
	}
	return data.Alerts, nil
}

// RuleInfo is one loaded rule, as GET /api/v1/rules reports it.
type RuleInfo struct {
	Group    string
	Name     string
	Type     string        // "alerting" or "recording"
	Duration time.Duration // an alerting rule's `for`
	Health   string        // "ok", "err" or "unknown" (not evaluated yet)
	Error    string        // the last evaluation's error
}

// Rules returns the rules the server loaded.
func (p *Prometheus) Rules(ctx context.Context) ([]RuleInfo, error) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name      string  `json:"name"`
				Type      string  `json:"type"`
				Duration  float64 `json:"duration"`
				Health    string  `json:"health"`
				LastError string  `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := p.api(ctx, "/api/v1/rules", &data); err != nil {
		return nil, err
	}
	var out []RuleInfo
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			out = append(out, RuleInfo{Group: g.Name, Name: r.Name, Type: r.Type,
				Duration: time.Duration(r.Duration * float64(time.Second)), Health: r.Health, Error: r.LastError})
		}
	}
	return out, nil
}

// Target is one active scrape target, as GET /api/v1/targets reports it.
type Target struct {
	Labels       map[string]string // after relabelling: instance, job, ...
	Health       string            // "up", "down" or "unknown"
	LastError    string            // why the last scrape failed
	LastScrape   time.Time
	LastDuration time.Duration
}

// Targets returns the active scrape targets and how their last scrape went.
func (p *Prometheus) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		Active []struct {
			Labels             map[string]string `json:"labels"`
			Health             string            `json:"health"`
			LastError          string            `json:"lastError"`
			LastScrape         time.Time         `json:"lastScrape"`
			LastScrapeDuration float64           `json:"lastScrapeDuration"`
		} `json:"activeTargets"`
	}
	if err := p.api(ctx, "/api/v1/targets?state=active", &data); err != nil {
		return nil, err
	}
	out := make([]Target, 0, len(data.Active))
	for _, a := range data.Active {
		out = append(out, Target{Labels: a.Labels, Health: a.Health, LastError: a.LastError, LastScrape: a.LastScrape,
			LastDuration: time.Duration(a.LastScrapeDuration * float64(time.Second))})
	}
	return out, nil
}

// api GETs a Prometheus HTTP API path and decodes its data field.
func (p *Prometheus) api(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: %s: %w", path, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so that a reader (Prometheus' file discovery) never sees
// half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
