// Command kubecheck checks rendered Kubernetes manifests (the output of `helm template`) by
// decoding each document strictly into its Go type: k8s.io/api for the built-in kinds (through
// client-go's scheme, the types the API server itself decodes into) and the Prometheus Operator's
// for ServiceMonitor. A field the type does not have, a field given twice, a value of the wrong
// type or a kind that is not registered fails, as `kubectl apply --validate=strict` (server-side
// strict field validation) would. It reads the manifests from standard input, prints one line per
// object and exits 1 naming each problem:
//
//	go tool helm template remit deploy/helm/remit | go run ./deploy/kubecheck
//
// It stands in for kubeconform -strict, which validates against JSON schemas it downloads from
// the internet: those are not reachable where CI runs, and no copy of them ships with a Go module
// (deploy/helm/check.sh, docs/operations.md).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	objs, err := Decode(os.Stdin)
	for _, o := range objs {
		fmt.Printf("ok  %s %s\n", o.GVK.GroupVersion(), o.Name())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintf(os.Stderr, "kubecheck: %d object(s) strictly decoded; problems above\n", len(objs))
		os.Exit(1)
	}
	if len(objs) == 0 {
		fmt.Fprintln(os.Stderr, "kubecheck: no object on standard input")
		os.Exit(1)
	}
	fmt.Printf("kubecheck: %d object(s) strictly decoded, 0 problems\n", len(objs))
}

// Object is one decoded manifest.
type Object struct {
	GVK    schema.GroupVersionKind
	Object runtime.Object
	Source string // helm's "# Source:" comment, when there is one
}

// Name is Kind/name.
func (o Object) Name() string {
	name := ""
	if m, ok := o.Object.(interface{ GetName() string }); ok {
		name = m.GetName()
	}
	return o.GVK.Kind + "/" + name
}

// Decode strictly decodes every YAML document of r. It returns the objects that decoded and
// every problem, each naming its document.
func Decode(r io.Reader) ([]Object, error) {
	sch := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(sch), monitoringv1.AddToScheme(sch)); err != nil {
		return nil, err
	}
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, sch, sch, json.SerializerOptions{Yaml: true, Strict: true})
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objs []Object
	var problems []error
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return objs, errors.Join(append(problems, fmt.Errorf("document %d: %w", n, err))...)
		}
		source := sourceOf(doc)
		if isEmpty(doc) {
			continue
		}
		where := fmt.Sprintf("document %d", n)
		if source != "" {
			where += " (" + source + ")"
		}
		obj, gvk, err := codec.Decode(doc, nil, nil)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", where, err))
			continue
		}
		objs = append(objs, Object{GVK: *gvk, Object: obj, Source: source})
	}
	return objs, errors.Join(problems...)
}

// sourceOf is the template a document came from, from helm's "# Source: remit/templates/x.yaml".
func sourceOf(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if s, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("# Source: ")); ok {
			return string(s)
		}
	}
	return ""
}

// isEmpty reports whether a document holds nothing but comments and blank lines.
func isEmpty(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			return false
		}
	}
	return true
}
