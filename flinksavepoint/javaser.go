package flinksavepoint

// A reader of the Java object serialization stream (ObjectOutputStream) just
// large enough for what Flink writes after the operator states from metadata
// version 4 on: one CheckpointProperties object. It walks the whole stream,
// so a truncated or damaged one is an error, and keeps the objects' field
// values so that the snapshot type can be read from them. Nothing is
// instantiated; unknown classes are read by their descriptors.

import "fmt"

// The stream's constants (java.io.ObjectStreamConstants).
const (
	jsMagic         = 0xaced
	jsVersion       = 5
	tcNull          = 0x70
	tcReference     = 0x71
	tcClassDesc     = 0x72
	tcObject        = 0x73
	tcString        = 0x74
	tcArray         = 0x75
	tcClass         = 0x76
	tcBlockData     = 0x77
	tcEndBlockData  = 0x78
	tcReset         = 0x79
	tcBlockDataLong = 0x7a
	tcLongString    = 0x7c
	tcProxyDesc     = 0x7d
	tcEnum          = 0x7e
	baseWireHandle  = 0x7e0000

	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scExternalizable = 0x04
	scBlockData      = 0x08
	scEnum           = 0x10

	maxJavaDepth = 16
)

// jclass is a class descriptor.
type jclass struct {
	name   string
	flags  byte
	fields []jfield
	super  *jclass
}

type jfield struct {
	code byte // B C D F I J S Z, L or [
	name string
}

// jobject is a deserialized object: its class and, per field name, the value
// (bool, int64, float bits as int64, string, *jobject, jenum, or nil).
type jobject struct {
	class  *jclass
	fields map[string]any
}

// jenum is an enum constant.
type jenum struct {
	class, name string
}

type javaReader struct {
	d       *decoder
	handles []any
	depth   int
}

// readJavaObject reads a whole serialization stream holding one object.
func readJavaObject(d *decoder) any {
	at := d.off
	if m, v := d.u16("java stream magic"), d.u16("java stream version"); d.err == nil && (m != jsMagic || v != jsVersion) {
		d.fail(at, ErrMalformed, "checkpoint properties: java stream header %04x %04x, want aced 0005", m, v)
		return nil
	}
	jr := &javaReader{d: d}
	return jr.content()
}

func (jr *javaReader) fail(format string, args ...any) {
	jr.d.fail(jr.d.off, ErrMalformed, "checkpoint properties: "+format, args...)
}

func (jr *javaReader) newHandle(v any) int {
	jr.handles = append(jr.handles, v)
	return len(jr.handles) - 1
}

func (jr *javaReader) handle() any {
	h := jr.d.i32("java handle")
	if jr.d.err != nil {
		return nil
	}
	i := int64(h) - baseWireHandle
	if i < 0 || i >= int64(len(jr.handles)) {
		jr.fail("reference to handle %#x of %d", h, len(jr.handles))
		return nil
	}
	return jr.handles[i]
}

// content reads one object, string, enum, array, class, descriptor or null.
func (jr *javaReader) content() any {
	tc := jr.d.u8("java type code")
	return jr.contentOf(tc)
}

// contentOf reads the content whose type code tc was just read.
func (jr *javaReader) contentOf(tc byte) any {
	d := jr.d
	if d.err != nil {
		return nil
	}
	if jr.depth++; jr.depth > maxJavaDepth {
		jr.fail("objects nested deeper than %d", maxJavaDepth)
		return nil
	}
	defer func() { jr.depth-- }()
	switch tc {
	case tcNull:
		return nil
	case tcReference:
		return jr.handle()
	case tcString:
		s := d.utf("java string")
		jr.newHandle(s)
		return s
	case tcLongString:
		n := d.i64("java long string length")
		s := d.modifiedUTF8(n, "java long string")
		jr.newHandle(s)
		return s
	case tcClassDesc, tcProxyDesc:
		return jr.classDescAfter(tc)
	case tcClass:
		c := jr.classDesc()
		jr.newHandle(c)
		return c
	case tcEnum:
		c := jr.classDesc()
		h := jr.newHandle(nil)
		name, ok := jr.content().(string)
		if d.err == nil && !ok {
			jr.fail("enum constant without a name")
		}
		e := jenum{name: name}
		if c != nil {
			e.class = c.name
		}
		if h < len(jr.handles) { // a TC_RESET inside the name dropped it
			jr.handles[h] = e
		}
		return e
	case tcObject:
		return jr.object()
	case tcArray:
		return jr.array()
	case tcReset:
		jr.handles = jr.handles[:0]
		return jr.content()
	case tcBlockData, tcBlockDataLong, tcEndBlockData:
		jr.fail("block data where an object belongs")
		return nil
	default:
		if d.err == nil {
			jr.fail("unknown type code %#x", tc)
		}
		return nil
	}
}

// classDesc reads a class descriptor, a reference to one, or null.
func (jr *javaReader) classDesc() *jclass {
	d := jr.d
	switch tc := d.u8("java class descriptor"); tc {
	case tcNull:
		return nil
	case tcReference:
		c, ok := jr.handle().(*jclass)
		if d.err == nil && !ok {
			jr.fail("reference to a non-class where a class descriptor belongs")
		}
		return c
	case tcClassDesc, tcProxyDesc:
		return jr.classDescAfter(tc)
	default:
		if d.err == nil {
			jr.fail("type code %#x where a class descriptor belongs", tc)
		}
		return nil
	}
}

func (jr *javaReader) classDescAfter(tc byte) *jclass {
	d := jr.d
	if jr.depth++; jr.depth > maxJavaDepth {
		jr.fail("class descriptors nested deeper than %d", maxJavaDepth)
		return nil
	}
	defer func() { jr.depth-- }()
	c := &jclass{}
	if tc == tcProxyDesc {
		jr.newHandle(c)
		n := d.count("proxy interfaces", 2)
		for range n {
			d.utf("proxy interface")
		}
		c.name, c.flags = "(proxy)", scSerializable
	} else {
		c.name = d.utf("java class name")
		d.i64("serialVersionUID")
		jr.newHandle(c)
		c.flags = d.u8("class flags")
		n := int(d.u16("field count"))
		for range n {
			if d.err != nil {
				return nil
			}
			f := jfield{code: d.u8("field type"), name: d.utf("field name")}
			switch f.code {
			case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
			case 'L', '[':
				if _, ok := jr.content().(string); d.err == nil && !ok {
					jr.fail("field %s without a type name", f.name)
				}
			default:
				if d.err == nil {
					jr.fail("field %s of unknown type %q", f.name, f.code)
				}
			}
			c.fields = append(c.fields, f)
		}
	}
	jr.annotation()
	c.super = jr.classDesc()
	return c
}

// annotation skips a class's or object's annotation: contents up to
// TC_ENDBLOCKDATA.
func (jr *javaReader) annotation() {
	d := jr.d
	for d.err == nil {
		switch tc := d.u8("java annotation"); tc {
		case tcEndBlockData:
			return
		case tcBlockData:
			d.skip(int64(d.u8("block length")), "block data")
		case tcBlockDataLong:
			n := d.i32("block length")
			d.skip(int64(n), "block data")
		default:
			jr.contentOf(tc)
		}
	}
}

func (jr *javaReader) object() any {
	d := jr.d
	c := jr.classDesc()
	o := &jobject{class: c, fields: map[string]any{}}
	jr.newHandle(o)
	if c == nil {
		if d.err == nil {
			jr.fail("object without a class")
		}
		return nil
	}
	var chain []*jclass
	for k := c; k != nil; k = k.super {
		if len(chain) > maxJavaDepth {
			jr.fail("class hierarchy deeper than %d", maxJavaDepth)
			return nil
		}
		chain = append(chain, k)
	}
	for i := len(chain) - 1; i >= 0 && d.err == nil; i-- {
		k := chain[i]
		switch {
		case k.flags&scExternalizable != 0:
			if k.flags&scBlockData == 0 {
				jr.fail("externalizable class %s in the old format", k.name)
				return nil
			}
			jr.annotation()
		case k.flags&scSerializable != 0:
			for _, f := range k.fields {
				o.fields[f.name] = jr.value(f.code)
			}
			if k.flags&scWriteMethod != 0 {
				jr.annotation()
			}
		}
	}
	return o
}

func (jr *javaReader) value(code byte) any {
	d := jr.d
	switch code {
	case 'B':
		return int64(int8(d.u8("byte field")))
	case 'C', 'S':
		return int64(d.u16("char or short field"))
	case 'I', 'F':
		return int64(d.i32("int field"))
	case 'J', 'D':
		return d.i64("long field")
	case 'Z':
		return d.boolean("boolean field")
	default:
		return jr.content()
	}
}

func (jr *javaReader) array() any {
	d := jr.d
	c := jr.classDesc()
	jr.newHandle(nil)
	n := d.count("array length", 1)
	if c == nil || len(c.name) < 2 || c.name[0] != '[' {
		if d.err == nil {
			jr.fail("array of class %v", c)
		}
		return nil
	}
	code := c.name[1]
	for range n {
		if d.err != nil {
			return nil
		}
		jr.value(code)
	}
	return nil
}

// Properties is what a savepoint's metadata says of the snapshot (metadata
// version 4 and later; zero for version 3): whether it is a savepoint or a
// checkpoint, and for a savepoint what Flink did after it.
type Properties struct {
	// Savepoint is true for a savepoint, false for a checkpoint.
	Savepoint bool
	// Type is the snapshot type's name: "Savepoint", "Suspend Savepoint"
	// (flink stop), "Terminate Savepoint" (flink stop --drain), or a
	// checkpoint's ("Checkpoint", "Full Checkpoint").
	Type string
	// PostCheckpointAction is what the job did right after a savepoint:
	// "NONE" (it ran on), "SUSPEND" (stop-with-savepoint: the sources stopped
	// and the job finished) or "TERMINATE" (the same after draining). Empty
	// for a checkpoint.
	PostCheckpointAction string
	// Format is a savepoint's format: "CANONICAL" or "NATIVE".
	Format string
}

// Stopped reports whether the snapshot is the savepoint of a
// stop-with-savepoint (flink stop): the job's sources stopped right after it.
func (p Properties) Stopped() bool {
	return p.Savepoint && (p.PostCheckpointAction == "SUSPEND" || p.PostCheckpointAction == "TERMINATE")
}

const (
	checkpointPropertiesClass = "org.apache.flink.runtime.checkpoint.CheckpointProperties"
	savepointTypeClass        = "org.apache.flink.runtime.checkpoint.SavepointType"
	checkpointTypeClass       = "org.apache.flink.runtime.checkpoint.CheckpointType"
)

// properties reads the CheckpointProperties object of metadata version 4+.
func properties(d *decoder) Properties {
	at := d.off
	v := readJavaObject(d)
	if d.err != nil {
		return Properties{}
	}
	bad := func(format string, args ...any) Properties {
		d.fail(at, ErrMalformed, "checkpoint properties: "+format, args...)
		return Properties{}
	}
	o, ok := v.(*jobject)
	if !ok || o.class.name != checkpointPropertiesClass {
		return bad("want a %s, got %s", checkpointPropertiesClass, describeJava(v))
	}
	t, ok := o.fields["checkpointType"].(*jobject)
	if !ok {
		return bad("no snapshot type")
	}
	name, _ := t.fields["name"].(string)
	switch t.class.name {
	case savepointTypeClass:
		action, _ := t.fields["postCheckpointAction"].(jenum)
		format, _ := t.fields["formatType"].(jenum)
		if action.name == "" || format.name == "" {
			return bad("a savepoint type without its post-checkpoint action or format")
		}
		return Properties{Savepoint: true, Type: name, PostCheckpointAction: action.name, Format: format.name}
	case checkpointTypeClass:
		return Properties{Type: name}
	default:
		return bad("unknown snapshot type %s", t.class.name)
	}
}

func describeJava(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case *jobject:
		return "a " + v.class.name
	default:
		return fmt.Sprintf("%T", v)
	}
}
