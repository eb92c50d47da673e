package io.queen.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/** Entry point: settings from the environment, the in-cluster client, the operator and its HTTP port. */
public final class Main {
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        OperatorSettings settings;
        try {
            settings = OperatorSettings.fromEnvironment();
        } catch (IllegalArgumentException e) {
            LOG.error("configuration error: {}", e.getMessage());
            System.exit(2);
            return;
        }
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(metrics);
        new JvmThreadMetrics().bindTo(metrics);
        KubernetesClient client = new KubernetesClientBuilder().build();
        QueenOperator operator = QueenOperator.create(client, settings, metrics, Clock.systemUTC(), () -> {
            LOG.error("lost the leader Lease {}: exiting, to restart as a standby", settings.leaseName());
            // From a thread of its own: the shutdown hooks stop the operator, which waits for this callback's thread.
            new Thread(() -> System.exit(1), "queen-operator-exit").start();
        });
        HealthServer http = HealthServer.start(settings.httpPort(), operator::alive, operator::ready, metrics);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            operator.close();
            http.close();
            client.close();
        }, "queen-operator-shutdown"));
        LOG.info("Queen operator: broker {}, namespaces {}, resync {}, leader election {}, SSA {}, probes and metrics on :{}",
                settings.brokerUrl(), settings.watchNamespaces().isEmpty() ? "all" : settings.watchNamespaces(),
                settings.timings().resync(), settings.leaderElection(), settings.useSsa(), http.port());
        operator.start();
    }
}
