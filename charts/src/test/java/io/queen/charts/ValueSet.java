package io.queen.charts;

import java.nio.file.Path;
import java.util.Optional;

/** The value sets every chart test renders: the defaults and the overrides users are expected to write. */
enum ValueSet {
    DEFAULTS(null),
    NAMESPACED_RBAC("charts/src/test/resources/values/namespaced-rbac.yaml"),
    CRDS_SKIPPED("charts/src/test/resources/values/crds-skipped.yaml"),
    SERVICE_MONITOR("charts/src/test/resources/values/service-monitor.yaml"),
    /** JWT on with the generated HMAC key; the operator signs its own tokens. */
    AUTH_SIGNED("charts/src/test/resources/values/auth-signed.yaml"),
    /** JWT on with an identity provider's keys; the operator's token from a Secret. */
    AUTH_JWKS("charts/src/test/resources/values/auth-jwks.yaml"),
    /** Listener TLS issued by cert-manager, auth with the generated key, a ServiceMonitor over https. */
    TLS_CERT_MANAGER("charts/src/test/resources/values/tls-cert-manager.yaml"),
    /** Listener TLS from an existing Secret; the operator's CA from a ConfigMap. */
    TLS_EXISTING_SECRET("charts/src/test/resources/values/tls-existing-secret.yaml"),
    /** The Kind suite's values: they must render and pass the schema here, where no cluster is. */
    KIND_E2E("e2e/values-kind.yaml");

    private final String file;

    ValueSet(String file) {
        this.file = file;
    }

    /** The override file, relative to the repository root; empty for the chart's own values.yaml alone. */
    Optional<Path> file() {
        return Optional.ofNullable(file).map(f -> RepositoryPaths.root().resolve(f));
    }
}
