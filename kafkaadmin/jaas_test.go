package kafkaadmin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jaasCases are read by Kafka's own JaasConfig (kafka-clients 3.7.2,
// 3.8.1, 3.9.1 and 4.3.1 gave the same) as want says: the options of its one
// entry, or an error (wantErr). The module is org.a.M throughout.
var jaasCases = []struct {
	in      string
	want    map[string]string
	wantErr bool
}{
	{`org.a.M required username='u' password='p w';`, map[string]string{"username": "u", "password": "p w"}, false},
	{"/* app user */ org.a.M required // a note\n username=\"u\" password=\"p\";", map[string]string{"username": "u", "password": "p"}, false},
	{"org.a.M required username=u password=a/b;", nil, true},                                                    // '/' starts a comment: no ';'
	{"org.a.M required username=u password=a/b\n;", map[string]string{"username": "u", "password": "a"}, false}, // ... to the end of its line
	{`org.a.M required username="a\"b" password="x\ny\tz\qw";`, map[string]string{"username": `a"b`, "password": "x\ny\tzqw"}, false},
	{`org.a.M required username='it\'s' password="it's";`, map[string]string{"username": "it's", "password": "it's"}, false},
	{`org.a.M required "username"="u" 'password'='p';`, map[string]string{"username": "u", "password": "p"}, false},
	{`org.a.M required username=u username=v password=p;`, map[string]string{"username": "v", "password": "p"}, false},
	{`org.a.M REQUIRED username=u password=p;`, map[string]string{"username": "u", "password": "p"}, false},
	{`"org.a.M" 'required' username=u password=p;`, map[string]string{"username": "u", "password": "p"}, false},
	{`org.a.M required username=u password=p`, nil, true},
	{`org.a.M required username=u password="\101\60";`, map[string]string{"username": "u", "password": "A0"}, false},
	{`org.a.M required username=u password=\101;`, nil, true},
	{`org.a.M required username=u password=p /* unterminated`, nil, true},
	{`org.a.M required username=u password="";`, map[string]string{"username": "u", "password": ""}, false},
	{`org.a.M required username=u password=;`, nil, true},
	{`org.a.M required username==u;`, nil, true},
	{"org.a.M required username=p\u00e9\u4e2d;", map[string]string{"username": "p\u00e9\u4e2d"}, false},
	{`org.a.M required username = u ;`, map[string]string{"username": "u"}, false},
	{``, nil, true},
	{"org.a.M required a=\"x\" /c;\n;", map[string]string{"a": "x"}, false},
	{`org.a.M required a=b*;`, nil, true},
	{`org.a.M required a=1;`, nil, true},
	{`org.a.M required a=-1.5;`, nil, true},
	{`org.a.M required a=x.y-z_$;`, map[string]string{"a": "x.y-z_$"}, false},
	{`org.a.M required a=x y;`, nil, true},
	{"org.a.M required a=\u00a0x;", map[string]string{"a": "\u00a0x"}, false},
	{"org.a.M required username=\"u\" password=\"unclosed\n;", map[string]string{"username": "u", "password": "unclosed"}, false},
	{`org.a.M required username="u" password="unclosed;`, nil, true},
	{"org.a.M required username=u\u0085 password=p;", nil, true},
}

// TestF9JAASAsKafkaReadsIt: the parser read only double quotes (a single
// quoted value kept its quotes, which Kafka strips) and refused comments
// Kafka accepts; it now reads sasl.jaas.config as Kafka's JaasConfig does,
// case by case.
func TestF9JAASAsKafkaReadsIt(t *testing.T) {
	for _, tc := range jaasCases {
		module, opts, err := parseJAAS(tc.in)
		switch {
		case tc.wantErr && err == nil:
			t.Errorf("%q: %q %q, want an error as Kafka gives", tc.in, module, opts)
		case !tc.wantErr && err != nil:
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		case !tc.wantErr && (module != "org.a.M" || !cmp.Equal(opts, tc.want)):
			t.Errorf("%q: module %q, options %q; want %q", tc.in, module, opts, tc.want)
		}
	}
}

// TestF9JAASSecretNeverShown: a secret pasted where the login module or
// the control flag belongs, or as an option without a value, is never
// named by the error (Kafka's JaasConfig names all three).
func TestF9JAASSecretNeverShown(t *testing.T) {
	const secret = "hunter2Secret"
	for _, in := range []string{
		secret + ` required;`,
		secret + ` required username="u" password="p";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule ` + secret + ` username="u";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" ` + secret + `;`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password=` + secret,
		`org.apache.kafka.common.security.plain.PlainLoginModule required ` + secret + `=;`,
		`org.` + secret + ` required username="u" password="org.` + secret + `";`,
	} {
		_, _, err := parseJAAS(in)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("%q: %v, want an error without the secret", in, err)
		}
		_, _, err = ConfigFromProperties(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": in})
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("properties %q: %v, want an error without the secret", in, err)
		}
	}
}
