package connectfake

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// pluginsFile holds, for each MirrorMaker 2 connector, the configuration
// definitions a real Kafka Connect 4.3.1 worker lists in its validate answer,
// without their documentation text. The conformance test writes it from a
// real worker (go test -run Conformance -update).
//
//go:embed plugins-4.3.1.json
var pluginsFile []byte

// pluginDefs is the decoded pluginsFile.
type pluginDefs struct {
	KafkaVersion string      `json:"kafka_version"`
	Plugins      []pluginDef `json:"plugins"`
}

type pluginDef struct {
	Class       string   `json:"class"`
	Groups      []string `json:"groups"`
	Definitions []keyDef `json:"definitions"`
}

// keyDef is one key's definition (ConfigKeyInfo).
type keyDef struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation *string  `json:"documentation,omitempty"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// loadPlugins decodes pluginsFile; each Server does it once.
func loadPlugins() (pluginDefs, error) {
	var p pluginDefs
	dec := json.NewDecoder(bytes.NewReader(pluginsFile))
	dec.DisallowUnknownFields()
	err := dec.Decode(&p)
	return p, err
}

// Converter settings whose sub-configuration the worker adds to the answer.
var converterPrefixes = [...]string{"key.converter", "value.converter", "header.converter"}

// handlePlugins answers GET /connector-plugins: the three MirrorMaker 2
// connectors, as a worker with only connect-mirror on its plugin path lists
// them. (connectorsOnly=false would list converters and transformations on a
// real worker; the fake lists the connectors only.)
func (s *Server) handlePlugins(w http.ResponseWriter, _ *http.Request) {
	type plugin struct {
		Class   string `json:"class"`
		Type    string `json:"type"`
		Version string `json:"version"`
	}
	s.mu.Lock()
	version := s.version
	s.mu.Unlock()
	out := make([]plugin, 0, len(pluginClasses))
	for _, c := range pluginClasses {
		out = append(out, plugin{c, "source", version})
	}
	writeJSON(w, http.StatusOK, out)
}

// The connector plugins of the fake worker, in the order GET
// /connector-plugins lists them.
var pluginClasses = [...]string{
	"org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
	"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
	"org.apache.kafka.connect.mirror.MirrorSourceConnector",
}

// resolveClass finds the plugin a connector.class names: its full class
// name, its simple name, or its alias (the simple name without "Connector").
func resolveClass(name string) (string, bool) {
	for _, c := range pluginClasses {
		simple := c[strings.LastIndexByte(c, '.')+1:]
		if name == c || name == simple || name == strings.TrimSuffix(simple, "Connector") {
			return c, true
		}
	}
	return "", false
}

// noClassMessage is the worker's message for a connector.class it has no
// plugin for. A worker caches the failed lookup: from the second lookup of
// the same name on, the message carries the exception's class.
func (s *Server) noClassMessage(class string) string {
	s.mu.Lock()
	again := s.lookedUp[class]
	if s.lookedUp == nil {
		s.lookedUp = make(map[string]bool)
	}
	s.lookedUp[class] = true
	s.mu.Unlock()
	prefix := ""
	if again {
		prefix = "org.apache.kafka.connect.errors.ConnectException: "
	}
	var descs []string
	for _, c := range pluginClasses {
		descs = append(descs, fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', encodedVersion=%s, type=source, typeName='source', location='classpath'}",
			c, c, s.version, s.version))
	}
	return fmt.Sprintf("%sFailed to find any class that implements Connector and which name matches %s, available connectors are: %s", prefix, class, strings.Join(descs, ", "))
}

// configInfos is the validate answer (ConfigInfos).
type configInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []configInfo `json:"configs"`
}

type configInfo struct {
	Definition keyDef          `json:"definition"`
	Value      configValueInfo `json:"value"`
}

type configValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// errNoType and the other validation outcomes of a configuration, before
// the endpoint turns them into its own answer.
type validation struct {
	class   string       // the plugin's full class name, when found
	noType  bool         // no connector.class
	noClass string       // connector.class names no plugin
	infos   *configInfos // the per-key answer, when the plugin was found
}

// validateConfig validates cfg as AbstractHerder.validateConnectorConfig
// does, within what the fake knows: each key is parsed by its type, required
// keys without a default must be present, tasks.max must be at least 1.
// Validators a real plugin runs beyond these (allowed values, class
// loading, topics lists) are not run.
func (s *Server) validateConfig(cfg value) (validation, error) {
	cls, ok := cfg.get("connector.class")
	if !ok || cls.kind != kString {
		return validation{noType: true}, nil
	}
	full, ok := resolveClass(cls.s)
	if !ok {
		return validation{noClass: cls.s}, nil
	}
	if s.pluginsErr != nil {
		return validation{}, fmt.Errorf("connectfake: embedded plugin definitions: %w", s.pluginsErr)
	}
	var def *pluginDef
	for i := range s.plugins.Plugins {
		if s.plugins.Plugins[i].Class == full {
			def = &s.plugins.Plugins[i]
		}
	}
	if def == nil {
		return validation{}, fmt.Errorf("connectfake: no definitions for %s", full)
	}
	infos := &configInfos{Name: cls.s, Groups: def.Groups, Configs: []configInfo{}}
	for _, d := range def.Definitions {
		if prefix, ok := converterSubKey(d.Name); ok {
			if v, set := cfg.get(prefix); !set || v.kind == kNull {
				continue
			}
		}
		val, errs, visible := checkKey(d, cfg)
		empty := ""
		d.Documentation = &empty
		if d.Dependents == nil {
			d.Dependents = []string{}
		}
		infos.ErrorCount += len(errs)
		infos.Configs = append(infos.Configs, configInfo{Definition: d, Value: configValueInfo{
			Name: d.Name, Value: val, RecommendedValues: []string{}, Errors: errs, Visible: visible,
		}})
	}
	return validation{class: full, infos: infos}, nil
}

// converterSubKey reports whether name is the converter.type key the worker
// adds for a configured converter, and that converter's key.
func converterSubKey(name string) (string, bool) {
	for _, p := range converterPrefixes {
		if name == p+".converter.type" {
			return p, true
		}
	}
	return "", false
}

var listSplit = regexp.MustCompile(`\s*,\s*`)

// checkKey parses one key as ConfigDef.parseType does and returns the value
// the answer shows (nil for null), its errors, and whether it is visible.
func checkKey(d keyDef, cfg value) (*string, []string, bool) {
	errs := []string{}
	visible := true
	for _, p := range converterPrefixes {
		if d.Name == p+".plugin.version" {
			v, set := cfg.get(p)
			visible = set && v.kind != kNull
		}
	}
	if prefix, ok := converterSubKey(d.Name); ok {
		t := strings.TrimSuffix(prefix, ".converter")
		return &t, errs, visible
	}
	raw, present := cfg.get(d.Name)
	if !present || raw.kind == kNull {
		if d.DefaultValue == nil && d.Required {
			errs = append(errs, fmt.Sprintf("Missing required configuration %q which has no default value.", d.Name))
		}
		return d.DefaultValue, errs, visible
	}
	s := raw.s
	t := strings.TrimSpace(s)
	invalid := func(msg string) []string {
		return append(errs, fmt.Sprintf("Invalid value %s for configuration %s: %s", s, d.Name, msg))
	}
	var out string
	switch d.Type {
	case "INT", "SHORT", "LONG":
		bits := map[string]int{"INT": 32, "SHORT": 16, "LONG": 64}[d.Type]
		n, err := strconv.ParseInt(t, 10, bits)
		if err != nil {
			errs = invalid("Not a number of type " + d.Type)
			if d.Name == "tasks.max" { // its Range validator then meets null
				errs = append(errs, "Invalid value null for configuration tasks.max: Value must be non-null")
			}
			return nil, errs, visible
		}
		out = strconv.FormatInt(n, 10)
		if d.Name == "tasks.max" && n < 1 {
			errs = invalid("Value must be at least 1")
		}
	case "DOUBLE":
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, invalid("Not a number of type DOUBLE"), visible
		}
		out = javaDouble(f)
	case "BOOLEAN":
		switch {
		case strings.EqualFold(t, "true"):
			out = "true"
		case strings.EqualFold(t, "false"):
			out = "false"
		default:
			return nil, invalid("Expected value to be either true or false"), visible
		}
	case "LIST":
		if t != "" {
			items := listSplit.Split(t, -1)
			for len(items) > 0 && items[len(items)-1] == "" { // Java's split drops trailing empty strings
				items = items[:len(items)-1]
			}
			out = strings.Join(items, ",")
		}
	case "PASSWORD":
		out = "[hidden]"
	default: // STRING, CLASS
		out = t
		if d.Name == "name" && t == "" {
			errs = invalid("String may not be empty")
		}
	}
	return &out, errs, visible
}

// validateForWrite validates the configuration of a create or an update:
// the class it names, and 0; or the worker's error status and message.
func (s *Server) validateForWrite(cfg value) (class string, status int, msg string) {
	v, err := s.validateConfig(cfg)
	switch {
	case err != nil:
		return "", http.StatusInternalServerError, err.Error()
	case v.noType:
		return "", http.StatusBadRequest, noTypeMessage(cfg)
	case v.noClass != "":
		return "", http.StatusBadRequest, s.noClassMessage(v.noClass)
	case v.infos.ErrorCount > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):\n", v.infos.ErrorCount)
		for _, c := range v.infos.Configs {
			for _, e := range c.Value.Errors {
				b.WriteString(e)
				b.WriteByte('\n')
			}
		}
		b.WriteString("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
		return "", http.StatusBadRequest, b.String()
	}
	return v.class, 0, ""
}

// noTypeMessage is the worker's message for a configuration without
// connector.class; it prints the configuration as ConfigTransformer copied
// it into a new HashMap.
func noTypeMessage(cfg value) string {
	es := inHashOrder(cfg.m, entryHash, copiedTableSize(len(cfg.m)))
	return "Connector config " + value{kind: kMap, m: es}.javaStringInOrder() + " contains no connector type"
}

// javaStringInOrder is javaString for a map whose entries are already in
// the order to print.
func (v value) javaStringInOrder() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range v.m {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.key)
		b.WriteByte('=')
		e.val.writeJava(&b)
	}
	b.WriteByte('}')
	return b.String()
}

// handleValidate answers PUT /connector-plugins/{class}/config/validate.
// Problems the worker finds while validating come back as 500 with the
// exception's class in the message, where create answers 400.
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request, plugin string) {
	cfg, ok := readConfig(w, r)
	if !ok {
		return
	}
	if inc, ok := cfg.get("connector.class"); ok && inc.kind == kString &&
		!strings.HasSuffix(aliasOf(inc.s), aliasOf(plugin)) {
		writeError(w, http.StatusBadRequest, "Included connector type %s does not match request type %s", inc.s, plugin)
		return
	}
	const badRequest = "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: "
	v, err := s.validateConfig(*cfg)
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "%s", err.Error())
	case v.noType:
		writeError(w, http.StatusInternalServerError, "%s", badRequest+noTypeMessage(*cfg))
	case v.noClass != "":
		writeError(w, http.StatusInternalServerError, "%s", badRequest+s.noClassMessage(v.noClass))
	default:
		writeJSON(w, http.StatusOK, v.infos)
	}
}

// aliasOf is ConnectorPluginsResource.normalizedPluginName: a name without
// its "Connector" suffix.
func aliasOf(name string) string {
	if strings.HasSuffix(name, "Connector") && len(name) > len("Connector") {
		return strings.TrimSuffix(name, "Connector")
	}
	return name
}
