package io.queen.operator;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes core/v1 Events about a resource, the way {@code kubectl describe} shows them. An Event is
 * a courtesy: failing to write one is logged and never fails a reconcile.
 */
public class EventRecorder {
    public static final String NORMAL = "Normal";
    public static final String WARNING = "Warning";

    private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
    private static final String COMPONENT = "queen-operator";

    private final KubernetesClient client;
    private final Clock clock;

    public EventRecorder(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    public void normal(HasMetadata about, String reason, String message) {
        record(about, NORMAL, reason, message);
    }

    public void warning(HasMetadata about, String reason, String message) {
        record(about, WARNING, reason, message);
    }

    private void record(HasMetadata about, String type, String reason, String message) {
        String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
        String namespace = about.getMetadata().getNamespace();
        Event event = new EventBuilder()
                .withNewMetadata()
                    .withName(about.getMetadata().getName() + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()))
                    .withNamespace(namespace)
                .endMetadata()
                .withNewInvolvedObject()
                    .withApiVersion(about.getApiVersion()).withKind(about.getKind())
                    .withName(about.getMetadata().getName()).withNamespace(namespace)
                    .withUid(about.getMetadata().getUid()).withResourceVersion(about.getMetadata().getResourceVersion())
                .endInvolvedObject()
                .withType(type).withReason(reason).withMessage(abbreviate(message))
                .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .build();
        try {
            client.v1().events().inNamespace(namespace).resource(event).create();
        } catch (KubernetesClientException e) {
            LOG.warn("could not record event {} {} on {}/{}: {}", type, reason, namespace,
                    about.getMetadata().getName(), e.getMessage());
        }
    }

    private static String abbreviate(String message) {
        // The API server refuses event messages over 1 KiB.
        return message.length() <= 1000 ? message : message.substring(0, 1000) + "...";
    }
}
