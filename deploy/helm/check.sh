#!/usr/bin/env bash
# CI for the Helm chart (deploy/helm/remit): `helm lint --strict` and `helm template | kubecheck`
# on the default values and on the production-like ci/production-values.yaml, with the helm pinned
# as a Go tool of the module. kubecheck (deploy/kubecheck) decodes every rendered object strictly
# into its Kubernetes Go type, in place of kubeconform -strict, whose JSON schemas are downloaded
# from the internet and cannot be here. The chart's content (probes, hooks, secrets, selectors) is
# tested by deploy/kubecheck's TestChart, in the test step.
set -euo pipefail
cd "$(dirname "$0")/../.."

helm=$(go tool -n helm)
"$helm" version --short
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/kubecheck" ./deploy/kubecheck

for values in "" deploy/helm/remit/ci/production-values.yaml; do
  args=()
  [[ -n $values ]] && args=(-f "$values")
  echo "-- values: ${values:-the defaults}"
  "$helm" lint --strict deploy/helm/remit "${args[@]}"
  # 1.30: the oldest Kubernetes the chart supports (Chart.yaml kubeVersion).
  "$helm" template remit deploy/helm/remit --kube-version 1.30.0 "${args[@]}" | "$bin/kubecheck"
done
