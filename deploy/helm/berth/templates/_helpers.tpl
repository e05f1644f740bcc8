{{/* Names ------------------------------------------------------------------------------ */}}

{{- define "berth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "berth.fullname" -}}
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

{{/* A component's name: "<fullname>-web", "-worker", "-beat", "-migrate". */}}
{{- define "berth.componentName" -}}
{{- printf "%s-%s" (include "berth.fullname" .root | trunc 55 | trimSuffix "-") .component }}
{{- end }}

{{- define "berth.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "berth.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Who Berth is to the API server: its ServiceAccount's user name (admission policies). */}}
{{- define "berth.serviceAccountUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "berth.serviceAccountName" .) }}
{{- end }}

{{/* Berth's own namespace (BERTH_NAMESPACE): the release's unless config.berthNamespace says. */}}
{{- define "berth.berthNamespace" -}}
{{- default .Release.Namespace .Values.config.berthNamespace }}
{{- end }}

{{- define "berth.secretName" -}}
{{- default (include "berth.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{- define "berth.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Labels ------------------------------------------------------------------------------ */}}

{{- define "berth.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "berth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ default .Chart.AppVersion .Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: berth
{{- end }}

{{- define "berth.selectorLabels" -}}
app.kubernetes.io/name: {{ include "berth.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "berth.componentLabels" -}}
{{ include "berth.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Settings ---------------------------------------------------------------------------- */}}

{{- define "berth.allowedHosts" -}}
{{- $fullname := include "berth.fullname" . }}
{{- $hosts := list "localhost" $fullname (printf "%s.%s.svc" $fullname .Release.Namespace) (printf "%s.%s.svc.cluster.local" $fullname .Release.Namespace) }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $hosts = append $hosts .host }}
{{- end }}
{{- end }}
{{- concat .Values.config.allowedHosts $hosts | uniq | join "," }}
{{- end }}

{{- define "berth.csrfTrustedOrigins" -}}
{{- $origins := list }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.tls }}
{{- range .hosts }}
{{- $origins = append $origins (printf "https://%s" .) }}
{{- end }}
{{- end }}
{{- end }}
{{- concat .Values.config.csrfTrustedOrigins $origins | uniq | join "," }}
{{- end }}

{{/* Pod parts shared by every component ------------------------------------------------- */}}

{{/* The environment: the ConfigMap and the Secret, plus this pod's own IP among
     ALLOWED_HOSTS (kubelet probes and Prometheus reach a pod by its IP; the bracketed form
     is how an IPv6 address arrives in a Host header). */}}
{{- define "berth.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "berth.fullname" . }}
  - secretRef:
      name: {{ include "berth.secretName" . }}
env:
  - name: POD_IP
    valueFrom:
      fieldRef:
        fieldPath: status.podIP
  - name: ALLOWED_HOSTS
    value: {{ printf "%s,$(POD_IP),[$(POD_IP)]" (include "berth.allowedHosts" .) | quote }}
{{- end }}

{{- define "berth.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: data
    mountPath: /var/lib/berth
{{- end }}

{{- define "berth.volumes" -}}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .Values.tmpSizeLimit }}
  - name: data
    emptyDir:
      sizeLimit: {{ .Values.dataSizeLimit }}
{{- end }}

{{- define "berth.podScheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Rolls the pods when their settings change. */}}
{{- define "berth.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secret.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

