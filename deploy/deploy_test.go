// Package deploy_test checks the packaging in deploy/ without a container runtime: the Dockerfile
// statically (its stages, user, health check and build command), the compose file's wiring, the
// systemd units with systemd-analyze, and that every REMIT_* variable the files set is one the
// README documents. The Helm chart is checked by deploy/kubecheck and deploy/helm/check.sh.
package deploy_test

import (
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd, Args string
	Line      int
}

func parseDockerfile(t *testing.T, path string) (stages [][]instruction) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cur string
	start := 0
	for i, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur == "" {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur += trimmed
		cmd, args, _ := strings.Cut(cur, " ")
		in := instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start}
		if in.Cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
		cur = ""
	}
	return stages
}

func find(stage []instruction, cmd string) []instruction {
	var out []instruction
	for _, in := range stage {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// The Dockerfile builds the binary with deploy/build.sh (the script CI builds it with) on the
// module's Go version, and runs it from an empty base as a non-root user, with CA certificates
// and time zone data, a HEALTHCHECK through `remit healthcheck` (GET /healthz) and serve listening
// on the exposed port.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	if len(stages) != 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	build, image := stages[0], stages[len(stages)-1]

	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	raw, _ := os.ReadFile("Dockerfile")
	if goVersion == nil || !strings.Contains(string(raw), "ARG GO_VERSION="+string(goVersion[1])+"\n") {
		t.Errorf("the Dockerfile's GO_VERSION is not go.mod's go %s", goVersion[1])
	}
	runsBuild := false
	for _, in := range find(build, "RUN") {
		runsBuild = runsBuild || strings.HasPrefix(in.Args, "deploy/build.sh ")
	}
	if !runsBuild {
		t.Error("the build stage does not RUN deploy/build.sh")
	}
	script, err := os.ReadFile("build.sh")
	if err != nil || !strings.Contains(string(script), "CGO_ENABLED=0 go build") {
		t.Errorf("deploy/build.sh does not build with CGO_ENABLED=0: %v", err)
	}
	for _, caller := range []string{"../test/lib.sh", "../.ci/run"} {
		b, err := os.ReadFile(caller)
		if err != nil || !strings.Contains(string(b), "deploy/build.sh") {
			t.Errorf("%s does not build the binary with deploy/build.sh: %v", caller, err)
		}
	}

	if from := image[0].Args; from != "scratch" {
		t.Errorf("the image is FROM %s; want scratch (a static binary needs nothing else)", from)
	}
	users := find(image, "USER")
	if len(users) != 1 {
		t.Fatalf("%d USER instructions in the image", len(users))
	}
	uid, _, _ := strings.Cut(users[0].Args, ":")
	if uid == "" || uid == "0" || uid == "root" || strings.Trim(uid, "0123456789") != "" {
		t.Errorf("USER %s: want a numeric non-root UID (Kubernetes' runAsNonRoot checks it)", users[0].Args)
	}
	var copies []string
	for _, in := range find(image, "COPY") {
		copies = append(copies, in.Args)
	}
	for _, want := range []string{"/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt", "/usr/share/zoneinfo /usr/share/zoneinfo",
		"/out/remit /usr/local/bin/remit", "/out/passwd /etc/passwd"} {
		if !slices.ContainsFunc(copies, func(c string) bool { return strings.HasSuffix(c, want) }) {
			t.Errorf("the image does not COPY %s", want)
		}
	}
	hc := find(image, "HEALTHCHECK")
	if len(hc) != 1 || !strings.Contains(hc[0].Args, `CMD ["/usr/local/bin/remit", "healthcheck"]`) {
		t.Errorf("HEALTHCHECK %v: want CMD [\"/usr/local/bin/remit\", \"healthcheck\"]", hc)
	}
	env := strings.Join(argsOf(find(image, "ENV")), " ")
	expose := argsOf(find(image, "EXPOSE"))
	if !strings.Contains(env, "REMIT_ADDR=0.0.0.0:8080") || !slices.Equal(expose, []string{"8080"}) {
		t.Errorf("serve must listen on 0.0.0.0 and the exposed port: ENV %s, EXPOSE %v", env, expose)
	}
	if e := find(image, "ENTRYPOINT"); len(e) != 1 || e[0].Args != `["/usr/local/bin/remit"]` {
		t.Errorf("ENTRYPOINT %v", e)
	}
	if c := find(image, "CMD"); len(c) != 1 || c[0].Args != `["serve"]` {
		t.Errorf("CMD %v", c)
	}
}

func argsOf(ins []instruction) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Args)
	}
	return out
}

// The compose file runs the image built by deploy/Dockerfile on its PostgreSQL, Redis and mailpit,
// each reached by its service name, and starts Remit once PostgreSQL and Redis are healthy.
func TestCompose(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Build *struct {
			Context    string `json:"context"`
			Dockerfile string `json:"dockerfile"`
		} `json:"build"`
		Image       string                       `json:"image"`
		Command     []string                     `json:"command"`
		Ports       []string                     `json:"ports"`
		Environment map[string]string            `json:"environment"`
		DependsOn   map[string]map[string]string `json:"depends_on"`
		Volumes     []string                     `json:"volumes"`
		Healthcheck map[string]any               `json:"healthcheck"`
		Restart     string                       `json:"restart"`
	}
	var doc struct {
		Name     string             `json:"name"`
		Services map[string]service `json:"services"`
		Volumes  map[string]any     `json:"volumes"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	remit := doc.Services["remit"]
	if remit.Build == nil || filepath.Join(remit.Build.Context, remit.Build.Dockerfile) != "../deploy/Dockerfile" {
		t.Errorf("remit is not built from deploy/Dockerfile with the repository as context: %+v", remit.Build)
	}
	for variable, want := range map[string]string{"REMIT_DATABASE_URL": "postgres", "REMIT_REDIS_URL": "redis", "REMIT_SMTP_URL": "mailpit"} {
		u, err := url.Parse(remit.Environment[variable])
		if err != nil || u.Hostname() != want {
			t.Errorf("%s=%q does not reach the %s service", variable, remit.Environment[variable], want)
			continue
		}
		if _, ok := doc.Services[want]; !ok {
			t.Errorf("no %s service", want)
		}
	}
	for _, dep := range []string{"postgres", "redis"} {
		if remit.DependsOn[dep]["condition"] != "service_healthy" || doc.Services[dep].Healthcheck == nil {
			t.Errorf("remit does not wait for %s to be healthy", dep)
		}
	}
	if u, _ := url.Parse(remit.Environment["REMIT_SMTP_URL"]); u.Port() != "1025" {
		t.Errorf("REMIT_SMTP_URL %s: mailpit takes SMTP on 1025", u)
	}
	if !strings.HasSuffix(remit.Environment["REMIT_ADDR"], ":8080") || !slices.Contains(remit.Ports, "127.0.0.1:8080:8080") {
		t.Errorf("remit listens on %s, published %v", remit.Environment["REMIT_ADDR"], remit.Ports)
	}
	checkDocumented(t, "docker-compose.yml", keys(remit.Environment))
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkDocumented fails for each REMIT_* variable that the README's configuration table lacks.
func checkDocumented(t *testing.T, file string, vars []string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vars {
		if strings.HasPrefix(v, "REMIT_") && !strings.Contains(string(readme), "| `"+v+"` |") {
			t.Errorf("%s sets %s, which the README's configuration table does not document", file, v)
		}
	}
}

// Every REMIT_* variable the systemd environment file and the chart's production values set is
// a documented one (a misspelt variable is silently ignored by serve).
func TestDeployVariablesAreDocumented(t *testing.T) {
	re := regexp.MustCompile(`(?m)^#?\s*(REMIT_[A-Z0-9_]+)=`)
	env, err := os.ReadFile("systemd/remit.env")
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, m := range re.FindAllStringSubmatch(string(env), -1) {
		vars = append(vars, m[1])
	}
	if len(vars) < 3 {
		t.Fatalf("found %d variables in systemd/remit.env", len(vars))
	}
	checkDocumented(t, "systemd/remit.env", vars)
	for _, f := range []string{"helm/remit/values.yaml", "helm/remit/ci/production-values.yaml", "helm/remit/templates/_helpers.tpl"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkDocumented(t, f, regexp.MustCompile(`REMIT_[A-Z0-9_]+`).FindAllString(string(raw), -1))
	}
}

// systemd-analyze verify accepts the units (a misspelt key fails it) and rates the service's
// confinement; the units run in a scratch root holding the system's units and stand-in binaries.
func TestSystemdUnits(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("REMIT_CI") != "" {
			t.Fatal("systemd-analyze is missing (Debian package systemd)")
		}
		t.Skip("systemd-analyze is not installed (Debian package systemd)")
	}
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "usr/lib/systemd/system"), os.DirFS("/usr/lib/systemd/system")); err != nil {
		t.Fatalf("copy the system's units: %v", err)
	}
	units, _ := filepath.Glob("systemd/*.service")
	timers, _ := filepath.Glob("systemd/*.timer")
	var paths []string
	for _, u := range append(units, timers...) {
		dst := filepath.Join(root, "etc/systemd/system", filepath.Base(u))
		copyFile(t, u, dst)
		paths = append(paths, "/etc/systemd/system/"+filepath.Base(u))
	}
	for _, exe := range []string{"usr/local/bin/remit", "bin/sh"} {
		copyFile(t, "build.sh", filepath.Join(root, exe)) // any executable: verify checks that one is there
	}
	copyFile(t, "systemd/remit.env", filepath.Join(root, "etc/remit/remit.env"))
	out, err := exec.Command(analyze, append([]string{"verify", "--root=" + root, "--recursive-errors=no"}, paths...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Replace a key by a misspelt one: verify must fail, or the check above proves nothing.
	bad := filepath.Join(root, "etc/systemd/system/remit.service")
	raw, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, []byte(strings.Replace(string(raw), "ProtectHome=", "ProtectHme=", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", "--root="+root, "--recursive-errors=no", "/etc/systemd/system/remit.service").CombinedOutput(); err == nil || !strings.Contains(string(out), "ProtectHme") {
		t.Fatalf("systemd-analyze verify passed a misspelt key:\n%s", out)
	}
	copyFile(t, "systemd/remit.service", bad)
	for _, u := range units {
		out, err := exec.Command(analyze, "security", "--offline=yes", "--root="+root, "--threshold=20", "/etc/systemd/system/"+filepath.Base(u)).CombinedOutput()
		m := regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d)`).FindSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("systemd-analyze security %s: %v\n%s", u, err, out)
		}
		// 0 is fully confined, 10 not at all; systemd calls under 2 "OK".
		if score, _ := strconv.ParseFloat(string(m[1]), 64); score >= 2 {
			t.Errorf("%s: exposure %s, want under 2.0\n%s", u, m[1], out)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(src); err == nil && st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, raw, mode); err != nil {
		t.Fatal(err)
	}
}
