{{/* Release-scoped base name of every object. */}}
{{- define "queen.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "queen.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Pod names are <statefulset>-<ordinal>; 52 leaves room for the ordinal and the controller-revision label. */}}
{{- define "queen.brokerName" -}}
{{- printf "%s-broker" (include "queen.fullname" .) | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "queen.brokerHeadlessName" -}}
{{- printf "%s-headless" (include "queen.brokerName" .) -}}
{{- end -}}

{{- define "queen.operatorName" -}}
{{- printf "%s-operator" (include "queen.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "queen.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create -}}
{{- default (include "queen.operatorName" .) .Values.operator.serviceAccount.name -}}
{{- else -}}
{{- required "operator.serviceAccount.name is required when operator.serviceAccount.create is false" .Values.operator.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Cluster-scoped names carry the namespace: two releases of the same name must not collide. */}}
{{- define "queen.operatorClusterRoleName" -}}
{{- printf "%s-%s" .Release.Namespace (include "queen.operatorName" .) -}}
{{- end -}}

{{/* The broker Service URL the operator calls (QUEEN_BROKER_URL): https with listener TLS on. */}}
{{- define "queen.brokerUrl" -}}
{{- printf "%s://%s:%v" (ternary "https" "http" (eq (include "queen.tls" .) "true")) (include "queen.brokerHost" .) .Values.broker.service.port -}}
{{- end -}}

{{/* The broker Service's name in the cluster: the host of QUEEN_BROKER_URL, which the certificate must name. */}}
{{- define "queen.brokerHost" -}}
{{- printf "%s.%s.svc" (include "queen.brokerName" .) .Release.Namespace -}}
{{- end -}}

{{/* The namespaces the operator watches in Namespaces scope: the release namespace (where the brokers live) first. */}}
{{- define "queen.watchedNamespaces" -}}
{{- $namespaces := list .Release.Namespace -}}
{{- range .Values.operator.watchNamespaces -}}
{{- $namespaces = append $namespaces . -}}
{{- end -}}
{{- $namespaces | uniq | join "," -}}
{{- end -}}

{{- define "queen.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "queen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: queen
{{- end -}}

{{/* The operator's rollout controller selects part-of=queen,component=broker (BrokerRolloutReconciler.SELECTOR). */}}
{{- define "queen.brokerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "queen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: broker
{{- end -}}

{{- define "queen.operatorSelectorLabels" -}}
app.kubernetes.io/name: {{ include "queen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{/* repository:tag, or repository@digest when a digest is given. */}}
{{- define "queen.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (default .appVersion .image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
Every Kubernetes API call the operator makes, as RBAC rules (least privilege), in two sets. Derived
from operator/src; charts/src/test/.../OperatorRbacTest keeps the table of calls and their sources.
queen.operatorRules: Queues, Tenants and their Events, in every watched namespace.
queen.operatorRolloutRules: broker rollouts, in the release namespace only (where the brokers run),
even when the operator watches Queues cluster-wide. Leases live in a Role of their own there.
*/}}
{{- define "queen.operatorRules" -}}
- apiGroups: ["queen.io"]
  resources: ["queues", "tenants"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["queen.io"]
  resources: ["queues/status", "tenants/status"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end -}}

{{- define "queen.operatorRolloutRules" -}}
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
# Brokers are replaced through the eviction API, which honours their PodDisruptionBudget.
- apiGroups: [""]
  resources: ["pods/eviction"]
  verbs: ["create"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create"]
{{- end -}}

{{- define "queen.operatorSubject" -}}
- kind: ServiceAccount
  name: {{ include "queen.operatorServiceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/*
JVM heap flags of the broker container: broker.heap.percentOfLimit of the memory limit (the rest of
the broker's options are the image's broker/jvm.options). With broker.heap.fixed the whole heap is
also committed and touched at start; MaxHeapFreeRatio=100 keeps the GC from shrinking it again (a
heap sized by percentages has a minimum of 8 MB). MinRAMPercentage is set too because the JVM takes
it, not MaxRAMPercentage, below 512 MB of memory and otherwise never sizes a heap under 128 MB:
25% of a 256Mi limit would be a 126 MB heap, and 15% of 512Mi would be 25% (measured on JDK 25).
*/}}
{{- define "queen.brokerHeapFlags" -}}
{{- $heap := .Values.broker.heap | default dict -}}
{{- $percent := $heap.percentOfLimit | default 20 -}}
-XX:MaxRAMPercentage={{ $percent }}.0 -XX:MinRAMPercentage={{ $percent }}.0
{{- if $heap.fixed }} -XX:InitialRAMPercentage={{ $percent }}.0 -XX:MaxHeapFreeRatio=100 -XX:+AlwaysPreTouch{{ end -}}
{{- end -}}

{{/*
JWT authentication (values: auth). The brokers verify tokens with an HMAC key (JWT_SECRET) when the
algorithm takes HS tokens (HS256/384/512, or auto without a JWKS URL) or an existing Secret is named;
with keys of an identity provider (jwksUrl) otherwise. The chart generates the HMAC key only when
no Secret is named. Each helper answers "true" or "" (include returns a string).
*/}}
{{- define "queen.authHmac" -}}
{{- $auth := .Values.auth -}}
{{- if and $auth.enabled (or $auth.existingSecret (hasPrefix "HS" $auth.algorithm) (and (eq $auth.algorithm "auto") (not $auth.jwksUrl))) -}}
true
{{- end -}}
{{- end -}}

{{- define "queen.authGeneratesSecret" -}}
{{- if and (include "queen.authHmac" .) (not .Values.auth.existingSecret) -}}
true
{{- end -}}
{{- end -}}

{{/* The Secret holding the HMAC key: the one named, else the generated <broker>-jwt. */}}
{{- define "queen.jwtSecretName" -}}
{{- default (printf "%s-jwt" (include "queen.brokerName" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{/* The operator signs its own tokens with the HMAC key unless it is given a token Secret. */}}
{{- define "queen.operatorSigns" -}}
{{- if and (include "queen.authHmac" .) (not .Values.auth.operator.tokenSecret) -}}
true
{{- end -}}
{{- end -}}

{{/* HS256/384/512 as the brokers take them; auto (or an RS/EdDSA setting with an HMAC key too) signs HS256. */}}
{{- define "queen.operatorSigningAlgorithm" -}}
{{- if hasPrefix "HS" .Values.auth.algorithm -}}{{ .Values.auth.algorithm }}{{- else -}}HS256{{- end -}}
{{- end -}}

{{/* Value combinations that could never let a token through stop the render, naming the values. */}}
{{- define "queen.authChecks" -}}
{{- $auth := .Values.auth -}}
{{- if $auth.enabled -}}
{{- if and $auth.jwksUrl (hasPrefix "HS" $auth.algorithm) -}}
{{- fail (printf "auth.jwksUrl verifies RS/EdDSA tokens, but auth.algorithm=%s takes HS tokens only: set auth.algorithm (RS256, EdDSA, auto) or drop auth.jwksUrl" $auth.algorithm) -}}
{{- end -}}
{{- if and (not (include "queen.authHmac" .)) (not $auth.jwksUrl) (not (hasKey (.Values.broker.env | default dict) "JWT_PUBLIC_KEY")) -}}
{{- fail (printf "auth.algorithm=%s needs auth.jwksUrl (or JWT_PUBLIC_KEY in broker.env)" $auth.algorithm) -}}
{{- end -}}
{{- if and (not (include "queen.authHmac" .)) (not $auth.operator.tokenSecret) -}}
{{- fail "auth.operator.tokenSecret is required: with keys from auth.jwksUrl (or a public key) the operator cannot sign its own tokens, so give it an admin token minted by your identity provider" -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/*
Listener TLS (values: tls). "true" or "" as the auth helpers. The brokers read tls.crt and tls.key
from the Secret named by tls.existingSecret or written by cert-manager (Secret <broker>-tls); the
operator checks their certificate with a CA (values: tls.operatorCa) and the Service's host name.
*/}}
{{- define "queen.tls" -}}
{{- if .Values.tls.enabled -}}
true
{{- end -}}
{{- end -}}

{{- define "queen.tlsSecretName" -}}
{{- if .Values.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "queen.brokerName" .) -}}
{{- else -}}
{{- .Values.tls.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* Where the brokers' certificate and key are mounted (QUEEN_TLS_CERT_FILE, QUEEN_TLS_KEY_FILE). */}}
{{- define "queen.tlsMountPath" -}}
/etc/queen/tls
{{- end -}}

{{/* Where the operator's CA bundle is mounted (QUEEN_BROKER_CA_FILE is <this>/ca.crt). */}}
{{- define "queen.operatorCaMountPath" -}}
/var/run/secrets/queen-broker-ca
{{- end -}}

{{/*
The DNS names the brokers' certificate is issued for: the Service in every form a client in the
cluster may write it, and each pod behind the headless Service.
*/}}
{{- define "queen.brokerDnsNames" -}}
{{- $service := include "queen.brokerName" . -}}
{{- $ns := .Release.Namespace -}}
{{- $domain := .Values.tls.certManager.clusterDomain | default "cluster.local" -}}
- {{ $service }}
- {{ printf "%s.%s" $service $ns }}
- {{ printf "%s.%s.svc" $service $ns }}
- {{ printf "%s.%s.svc.%s" $service $ns $domain }}
- {{ printf "*.%s.%s.svc" (include "queen.brokerHeadlessName" .) $ns | quote }}
- {{ printf "*.%s.%s.svc.%s" (include "queen.brokerHeadlessName" .) $ns $domain | quote }}
{{- range .Values.tls.certManager.extraDnsNames }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The CA the operator (and a ServiceMonitor) checks the brokers' certificate with, as a dict: kind
"secret" or "configMap" with name and key, or kind "" for the JDK's default trust store.
*/}}
{{- define "queen.operatorCa" -}}
{{- $ca := .Values.tls.operatorCa -}}
{{- if $ca.systemTrustStore -}}
{{- dict "kind" "" | toJson -}}
{{- else if $ca.configMapName -}}
{{- dict "kind" "configMap" "name" $ca.configMapName "key" ($ca.key | default "ca.crt") | toJson -}}
{{- else -}}
{{- dict "kind" "secret" "name" ($ca.secretName | default (include "queen.tlsSecretName" .)) "key" ($ca.key | default "ca.crt") | toJson -}}
{{- end -}}
{{- end -}}

{{/* The operator's QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS: the value given, else true only while the URL is plain HTTP. */}}
{{- define "queen.operatorAllowsInsecure" -}}
{{- $given := .Values.auth.operator.allowInsecureCredentials -}}
{{- if kindIs "bool" $given -}}
{{- $given -}}
{{- else -}}
{{- not .Values.tls.enabled -}}
{{- end -}}
{{- end -}}

{{/* TLS values that could never serve a certificate stop the render, naming the values. */}}
{{- define "queen.tlsChecks" -}}
{{- $tls := .Values.tls -}}
{{- if $tls.enabled -}}
{{- if and $tls.existingSecret $tls.certManager.enabled -}}
{{- fail "tls.existingSecret and tls.certManager.enabled are alternatives: name an existing Secret, or let cert-manager issue one" -}}
{{- end -}}
{{- if not (or $tls.existingSecret $tls.certManager.enabled) -}}
{{- fail "tls.enabled needs the brokers' certificate: set tls.existingSecret (a kubernetes.io/tls Secret) or tls.certManager.enabled with tls.certManager.issuerRef.name" -}}
{{- end -}}
{{- if and $tls.certManager.enabled (not $tls.certManager.issuerRef.name) -}}
{{- fail "tls.certManager.issuerRef.name is required: the cert-manager Issuer or ClusterIssuer that signs the brokers' certificate" -}}
{{- end -}}
{{- if and $tls.operatorCa.secretName $tls.operatorCa.configMapName -}}
{{- fail "tls.operatorCa.secretName and tls.operatorCa.configMapName are alternatives: name one" -}}
{{- end -}}
{{- end -}}
{{- end -}}
