package io.queen.e2e;

import java.net.URI;
import java.nio.file.Path;

/**
 * Where the suite finds what e2e/run.sh installed (system properties set by e2e/pom.xml). The
 * Kubernetes client reads KUBECONFIG, which run.sh points at the Kind cluster.
 *
 * @param brokerUrl  the broker Service's NodePort, mapped to the host by e2e/kind-config.yaml
 * @param upgradeTag a second tag of the broker image, loaded into the cluster, for the upgrade scenario
 */
record E2eSettings(String namespace, String release, URI brokerUrl, Path chart, String upgradeTag) {

    static E2eSettings fromSystemProperties() {
        return new E2eSettings(
                System.getProperty("queen.e2e.namespace", "queen-e2e"),
                System.getProperty("queen.e2e.release", "queen"),
                URI.create(System.getProperty("queen.e2e.brokerUrl", "http://127.0.0.1:30632")),
                Path.of(System.getProperty("queen.e2e.chart", "../charts/queen")).toAbsolutePath().normalize(),
                System.getProperty("queen.e2e.upgradeTag", ""));
    }

    /** The chart's fullname: the release name when it contains "queen" (charts/queen/templates/_helpers.tpl). */
    String fullname() {
        return release.contains("queen") ? release : release + "-queen";
    }

    String brokerStatefulSet() {
        return fullname() + "-broker";
    }

    String operatorDeployment() {
        return fullname() + "-operator";
    }
}
