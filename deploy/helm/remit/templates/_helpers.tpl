{{/* The chart's name, and the release-qualified name every object carries. */}}
{{- define "remit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "remit.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "remit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "remit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "remit.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "remit.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "remit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "remit.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "remit.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
The environment of `remit serve`: the listen address, the database pool, the plain settings of
.Values.env, and each secret of .Values.secrets whose Secret name is set, read from that existing
Secret (the chart creates none).
*/}}
{{- define "remit.env" -}}
- name: REMIT_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.containerPort) | quote }}
- name: REMIT_DATABASE_MAX_CONNS
  value: {{ .Values.database.maxConns | quote }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- $vars := dict "databaseUrl" "REMIT_DATABASE_URL" "secretKey" "REMIT_SECRET_KEY" "stripeSecretKey" "REMIT_STRIPE_SECRET_KEY" "stripeWebhookSecret" "REMIT_STRIPE_WEBHOOK_SECRET" "stripePublishableKey" "REMIT_STRIPE_PUBLISHABLE_KEY" "redisUrl" "REMIT_REDIS_URL" "smtpUrl" "REMIT_SMTP_URL" "metricsToken" "REMIT_METRICS_TOKEN" }}
{{- range $key := keys $vars | sortAlpha }}
{{- $ref := index $.Values.secrets $key }}
{{- if $ref.name }}
- name: {{ index $vars $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The environment of the migrations Job: the database only (it needs no other secret). */}}
{{- define "remit.migrateEnv" -}}
- name: REMIT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.databaseUrl.name }}
      key: {{ .Values.secrets.databaseUrl.key }}
- name: REMIT_DATABASE_MAX_CONNS
  value: "2"
- name: REMIT_LOG_LEVEL
  value: {{ .Values.env.REMIT_LOG_LEVEL | default "info" | quote }}
{{- end }}
