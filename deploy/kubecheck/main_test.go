package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The checker fails on what the API server's strict field validation refuses, naming the document.
func TestDecodeRejects(t *testing.T) {
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 2\n"
	if objs, err := Decode(strings.NewReader("---\n# Source: x.yaml\n" + deployment)); err != nil || len(objs) != 1 || objs[0].Source != "x.yaml" {
		t.Fatalf("a valid Deployment: %v %v", objs, err)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"unknown field", strings.Replace(deployment, "replicas: 2", "replica: 2", 1), `unknown field "spec.replica"`},
		{"wrong type", strings.Replace(deployment, "replicas: 2", `replicas: "two"`, 1), "replicas"},
		{"field twice", deployment + "  replicas: 3\n", `key "replicas" already set`},
		{"unknown kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: x\n", "no kind"},
		{"ServiceMonitor field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: x\nspec:\n  endpoints:\n  - port: http\n    bearerTokenFile2: x\n", "unknown field"},
	} {
		_, err := Decode(strings.NewReader("# Source: good.yaml\n" + deployment + "---\n# Source: bad.yaml\n" + c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "document 2 (bad.yaml)") {
			t.Errorf("%s: %v, want an error on document 2 naming %q", c.name, err, c.want)
		}
	}
}

// helm is the pinned helm's binary (a Go tool of the module), built once.
var helm = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "helm").Output()
	return strings.TrimSpace(string(out)), err
})

// helmTemplate renders the chart with the pinned helm and decodes it.
func helmTemplate(t *testing.T, args ...string) ([]Object, error) {
	t.Helper()
	bin, err := helm()
	if err != nil {
		t.Fatalf("go tool -n helm: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"template", "remit", "../helm/remit", "--kube-version", "1.30.0"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, &helmError{err: err, stderr: errb.String()}
	}
	return Decode(&out)
}

type helmError struct {
	err    error
	stderr string
}

func (e *helmError) Error() string { return e.err.Error() + ": " + e.stderr }

// byKind returns the one object of kind K, failing unless there is exactly one.
func byKind[K any](t *testing.T, objs []Object) K {
	t.Helper()
	var found []K
	for _, o := range objs {
		if k, ok := o.Object.(K); ok {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		var zero K
		t.Fatalf("%d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func countKind[K any](objs []Object) int {
	n := 0
	for _, o := range objs {
		if _, ok := o.Object.(K); ok {
			n++
		}
	}
	return n
}

// The chart, on its defaults and on the production-like values CI renders: a Deployment of N
// replicas whose probes are /readyz and /healthz, every secret from an existing Secret (the chart
// makes none), a migrations Job hooked before install and upgrade, a PodDisruptionBudget and a
// Service over the same pods, and a ServiceMonitor only when asked for.
func TestChart(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		replicas  int32
		monitored bool
	}{
		{"defaults", nil, 2, false},
		{"production", []string{"-f", "../helm/remit/ci/production-values.yaml"}, 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, err := helmTemplate(t, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if n := countKind[*corev1.Secret](objs); n != 0 {
				t.Errorf("the chart renders %d Secret(s); it must only read existing ones", n)
			}
			d := byKind[*appsv1.Deployment](t, objs)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != c.replicas {
				t.Errorf("replicas %v, want %d", d.Spec.Replicas, c.replicas)
			}
			pod := d.Spec.Template
			serve := pod.Spec.Containers[0]
			checkServe(t, serve)
			if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
				t.Error("the pod may run as root")
			}
			if s := d.Spec.Strategy.RollingUpdate; s == nil || s.MaxUnavailable.IntValue() != 0 {
				t.Errorf("a rolling update may take pods down before new ones are ready: %+v", s)
			}
			podLabels := labels.Set(pod.Labels)

			job := byKind[*batchv1.Job](t, objs)
			hooks := strings.Split(job.Annotations["helm.sh/hook"], ",")
			if !slices.Contains(hooks, "pre-install") || !slices.Contains(hooks, "pre-upgrade") {
				t.Errorf("the migrations Job's hooks are %v", hooks)
			}
			migrate := job.Spec.Template.Spec.Containers[0]
			if !slices.Equal(migrate.Args, []string{"migrate"}) || migrate.Image != serve.Image || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("the migrations Job runs %v of %s (restart %s)", migrate.Args, migrate.Image, job.Spec.Template.Spec.RestartPolicy)
			}
			for _, e := range migrate.Env {
				if e.ValueFrom != nil && e.Name != "REMIT_DATABASE_URL" {
					t.Errorf("the migrations Job reads the secret %s, which it does not need", e.Name)
				}
			}

			pdb := byKind[*policyv1.PodDisruptionBudget](t, objs)
			if sel := pdb.Spec.Selector; sel == nil || !labels.SelectorFromSet(sel.MatchLabels).Matches(podLabels) || pdb.Spec.MaxUnavailable == nil {
				t.Errorf("the PodDisruptionBudget does not cover the pods: %+v", pdb.Spec)
			}
			svc := byKind[*corev1.Service](t, objs)
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || svc.Spec.Ports[0].TargetPort.String() != "http" {
				t.Errorf("the Service does not reach the pods' http port: %+v", svc.Spec)
			}

			if n := countKind[*monitoringv1.ServiceMonitor](objs); !c.monitored {
				if n != 0 {
					t.Errorf("%d ServiceMonitor(s) on the defaults: it is optional", n)
				}
				return
			}
			sm := byKind[*monitoringv1.ServiceMonitor](t, objs)
			ep := sm.Spec.Endpoints[0]
			if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) || ep.Port != "http" || ep.Path != "/metrics" {
				t.Errorf("the ServiceMonitor does not scrape the Service's /metrics: %+v", sm.Spec)
			}
			if a := ep.Authorization; a == nil || a.Credentials == nil || a.Credentials.Name != secretOf(serve, "REMIT_METRICS_TOKEN") {
				t.Errorf("the ServiceMonitor does not send the metrics token the pods ask for: %+v", ep.Authorization)
			}
		})
	}
}

// checkServe checks the serve container: its command, address, probes, secrets and confinement.
func checkServe(t *testing.T, c corev1.Container) {
	t.Helper()
	if !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("serve container args %v", c.Args)
	}
	if r := c.ReadinessProbe; r == nil || r.HTTPGet == nil || r.HTTPGet.Path != "/readyz" || r.HTTPGet.Port.String() != "http" {
		t.Errorf("readiness probe %+v, want GET /readyz", r)
	}
	if l := c.LivenessProbe; l == nil || l.HTTPGet == nil || l.HTTPGet.Path != "/healthz" || l.HTTPGet.Port.String() != "http" {
		t.Errorf("liveness probe %+v, want GET /healthz", l)
	}
	secrets := map[string]bool{"REMIT_DATABASE_URL": true, "REMIT_SECRET_KEY": true, "REMIT_STRIPE_SECRET_KEY": true,
		"REMIT_STRIPE_WEBHOOK_SECRET": true, "REMIT_REDIS_URL": true, "REMIT_SMTP_URL": true, "REMIT_METRICS_TOKEN": true}
	for _, e := range c.Env {
		if secrets[e.Name] && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("%s is not read from a Secret", e.Name)
		}
		if e.Name == "REMIT_ADDR" && e.Value != "0.0.0.0:8080" {
			t.Errorf("REMIT_ADDR %q: serve must listen on the pod's address", e.Value)
		}
	}
	if secretOf(c, "REMIT_DATABASE_URL") == "" {
		t.Error("REMIT_DATABASE_URL is not set")
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("serve container security context %+v", sc)
	}
}

// secretOf is the Secret the container reads the variable from ("" when none).
func secretOf(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Name
		}
	}
	return ""
}

// The values schema refuses values the chart cannot run with, before anything renders.
func TestChartRefusesBadValues(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"secrets.databaseUrl.name=", "databaseUrl"},
		{"replicaCount=0", "replicaCount"},
		{"replicas=3", "replicas"},
		{"env.REMIT_DATABASE_URL=postgres://inline", "REMIT_DATABASE_URL"},
	} {
		_, err := helmTemplate(t, "--set", c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %s: %v, want a refusal naming %s", c.set, err, c.want)
		}
	}
}
