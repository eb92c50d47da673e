package io.queen.e2e;

import java.net.URI;
import java.nio.file.Path;

/**
 * Where the suite finds what its runner installed, e2e/run.sh on Kind or e2e/run-node.sh on the
 * local node (system properties set by e2e/pom.xml). The Kubernetes client reads KUBECONFIG, which
 * the runner points at its cluster.
 *
 * @param brokerUrl  the broker Service's NodePort (on Kind mapped to the host by e2e/kind-config.yaml)
 * @param upgradeTag a second tag of the broker image, loaded into the cluster, for the upgrade scenario
 * @param databaseStop  a shell command that stops the brokers' database, cutting its connections
 *                      (the runner's own: scaling a StatefulSet on Kind, pg_ctl on the local node)
 * @param databaseStart a shell command that brings it back with its data, returning once it serves
 */
record E2eSettings(String namespace, String release, URI brokerUrl, Path chart, String upgradeTag,
                   String databaseStop, String databaseStart) {

    static E2eSettings fromSystemProperties() {
        return new E2eSettings(
                System.getProperty("queen.e2e.namespace", "queen-e2e"),
                System.getProperty("queen.e2e.release", "queen"),
                URI.create(System.getProperty("queen.e2e.brokerUrl", "http://127.0.0.1:30632")),
                Path.of(System.getProperty("queen.e2e.chart", "../charts/queen")).toAbsolutePath().normalize(),
                System.getProperty("queen.e2e.upgradeTag", ""),
                System.getProperty("queen.e2e.databaseStop", ""),
                System.getProperty("queen.e2e.databaseStart", ""));
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
