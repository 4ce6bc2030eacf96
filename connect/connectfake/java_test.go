package connectfake

import (
	"strings"
	"testing"
)

// Each case is a map as a request sent it and the text the real Kafka
// Connect 4.3.1 worker printed for it (in an error message or as JSON).
func TestJavaMapString(t *testing.T) {
	for _, tt := range []struct {
		json, want string
	}{
		{`{"cluster":"source","topic":"probe-t","partition":0,"zz":"q","a":true,"b":null}`,
			`{zz=q, cluster=source, a=true, b=null, partition=0, topic=probe-t}`},
		{`{"offset":-3,"zz":1.0,"b":2e20}`, `{zz=1.0, b=2.0E20, offset=-3}`},
		{`{"cluster":"source","topic":"probe-t","partition":"0"}`, `{cluster=source, partition=0, topic=probe-t}`},
		{`{"cluster":"source","topic":"probe-t","partition":1.5}`, `{cluster=source, partition=1.5, topic=probe-t}`},
	} {
		v, err := decodeValue([]byte(tt.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := v.javaString(); got != tt.want {
			t.Errorf("javaString(%s) = %s, want %s", tt.json, got, tt.want)
		}
	}
}

func TestJavaHashOrderOfNames(t *testing.T) {
	// GET /connectors of a worker holding these nine connectors.
	names := []string{"p1", "p2", "p3", "p5", "zeta", "alpha", "Mid", "b-2", "a_1"}
	got := strings.Join(inHashOrder(names, javaStringHash, grownTableSize(len(names))), ",")
	if want := "zeta,p1,p2,a_1,p3,p5,b-2,alpha,Mid"; got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
	// GET /connectors/{n}/config of a 15-key MirrorSourceConnector config.
	cfg := `{"connector.class":"x","source.cluster.alias":"x","target.cluster.alias":"x","source.cluster.bootstrap.servers":"x","target.cluster.bootstrap.servers":"x","topics":"x","tasks.max":"x","replication.policy.class":"x","emit.offset-syncs.enabled":"x","sync.topic.configs.enabled":"x","sync.topic.acls.enabled":"x","replication.factor":"x","key.converter":"x","value.converter":"x","name":"x"}`
	v, _ := decodeValue([]byte(cfg))
	var keys []string
	for _, e := range v.hashOrder() {
		keys = append(keys, e.key)
	}
	want := "connector.class,replication.factor,sync.topic.acls.enabled,topics,tasks.max,replication.policy.class,source.cluster.alias,source.cluster.bootstrap.servers,target.cluster.alias,emit.offset-syncs.enabled,name,target.cluster.bootstrap.servers,value.converter,sync.topic.configs.enabled,key.converter"
	if got := strings.Join(keys, ","); got != want {
		t.Errorf("config order\n got %s\nwant %s", got, want)
	}
}
