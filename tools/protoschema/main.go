// protoschema writes the wire schema volcanic's protobuf codec reads
// (python/volcanic/real/protobuf_schema.json): for each Kubernetes type reachable from the
// roots below, its fields with their protobuf number and wire kind and their JSON name and
// omitempty rule, read by reflection from the struct tags of k8s.io/api, the same tags
// Kubernetes' own generated codecs come from. Run it again when the k8s.io/api version in
// go.mod changes: go run . > ../../python/volcanic/real/protobuf_schema.json
package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects volcanic's hot paths send and receive as protobuf.
var roots = []any{corev1.Pod{}, corev1.PodList{}, corev1.Binding{}, corev1.Node{}, corev1.NodeList{},
	metav1.WatchEvent{}, metav1.Status{}}

// Types with a JSON form of their own (a string, a number, a timestamp): the codec knows them by name.
var special = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "quantity",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       "time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  "microtime",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   "duration",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intorstring",
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    "rawextension",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   "fieldsv1",
}

type field struct {
	Number    int    `json:"n"`
	JSON      string `json:"json"`
	Kind      string `json:"k"`
	Type      string `json:"t,omitempty"`
	Repeated  bool   `json:"rep,omitempty"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Pointer   bool   `json:"ptr,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	MapValue  *value `json:"v,omitempty"`
}

// value is a map's value: its kind and, for a message, its type.
type value struct {
	Kind string `json:"k"`
	Type string `json:"t,omitempty"`
}

type schema struct {
	Messages map[string][]field `json:"messages"`
	Roots    map[string]string  `json:"roots"`
}

func name(t reflect.Type) string {
	return strings.TrimPrefix(t.PkgPath(), "k8s.io/") + "." + t.Name()
}

func main() {
	s := schema{Messages: map[string][]field{}, Roots: map[string]string{}}
	for _, r := range roots {
		t := reflect.TypeOf(r)
		s.Roots[t.Name()] = name(t)
		walk(t, s.Messages)
	}
	write(s)
}

// write prints the schema one field to a line: small, and a version's change reads as a diff.
func write(s schema) {
	roots, _ := json.Marshal(s.Roots)
	fmt.Printf("{\"roots\": %s,\n \"messages\": {", roots)
	names := make([]string, 0, len(s.Messages))
	for n := range s.Messages {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		fmt.Printf("%s\n  %q: [", map[bool]string{true: "", false: ","}[i == 0], n)
		for j, f := range s.Messages[n] {
			line, _ := json.Marshal(f)
			fmt.Printf("%s\n   %s", map[bool]string{true: "", false: ","}[j == 0], line)
		}
		fmt.Print("]")
	}
	fmt.Println("}}")
}

func walk(t reflect.Type, messages map[string][]field) {
	if _, ok := messages[name(t)]; ok {
		return
	}
	messages[name(t)] = nil
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("protobuf")
		if !ok {
			continue // TypeMeta and the like: not on the wire (the envelope carries them)
		}
		parts := strings.Split(tag, ",") // wire type, number, opt or rep, name=...
		number, _ := strconv.Atoi(parts[1])
		jsonName, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		// Repeated by the Go type: a few tags say "rep" of a single string (PodStatus.qosClass).
		fd := field{Number: number, JSON: jsonName,
			OmitEmpty: strings.Contains(opts, "omitempty"), OmitZero: strings.Contains(opts, "omitzero"),
			Inline: strings.Contains(opts, "inline")}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			fd.Pointer, ft = true, ft.Elem()
		}
		if ft.Kind() == reflect.Map {
			fd.Kind = "map"
			v := field{}
			describe(&v, ft.Elem(), messages)
			fd.MapValue = &value{Kind: v.Kind, Type: v.Type}
		} else {
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
				fd.Repeated, ft = true, ft.Elem()
			}
			describe(&fd, ft, messages)
		}
		fields = append(fields, fd)
	}
	messages[name(t)] = fields
}

// describe sets the kind (and message type) of a value of Go type t.
func describe(fd *field, t reflect.Type, messages map[string][]field) {
	if kind, ok := special[t.PkgPath()+"."+t.Name()]; ok {
		fd.Kind = kind
		return
	}
	switch t.Kind() {
	case reflect.String:
		fd.Kind = "string"
	case reflect.Bool:
		fd.Kind = "bool"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
		fd.Kind = "int"
	case reflect.Float64:
		fd.Kind = "double"
	case reflect.Slice: // []byte
		fd.Kind = "bytes"
	case reflect.Map:
		// map[string][]string (e.g. UserInfo's extra) is a message of its own in protobuf
		fd.Kind, fd.Type = "message", name(t)
	case reflect.Struct:
		fd.Kind, fd.Type = "message", name(t)
		walk(t, messages)
	default:
		panic(fmt.Sprintf("protoschema: no wire kind for %v", t))
	}
}
