package io.queen.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.queen.operator.crd.QueenResources;

import java.util.Map;
import java.util.Objects;

/**
 * Which updates of a Queue or Tenant start a reconcile. Generation-aware processing alone would
 * miss the pause and reconcile-now annotations (metadata changes do not bump the generation), and
 * without any filter every status write would trigger another reconcile and broker call; so: a
 * spec change, one of our annotations, the finalizer, or the start of deletion.
 */
public final class ReconcileTriggers {
    private ReconcileTriggers() {
    }

    public static <R extends HasMetadata> OnUpdateFilter<R> specOrAnnotationChange() {
        return (updated, previous) -> !Objects.equals(updated.getMetadata().getGeneration(), previous.getMetadata().getGeneration())
                || changed(updated, previous, QueenResources.PAUSED_ANNOTATION)
                || changed(updated, previous, QueenResources.RECONCILE_NOW_ANNOTATION)
                || !Objects.equals(updated.getMetadata().getFinalizers(), previous.getMetadata().getFinalizers())
                || (updated.isMarkedForDeletion() && !previous.isMarkedForDeletion());
    }

    /** True when the resource carries {@code queen.io/paused: "true"}. */
    public static boolean paused(HasMetadata resource) {
        return "true".equalsIgnoreCase(annotation(resource, QueenResources.PAUSED_ANNOTATION));
    }

    private static boolean changed(HasMetadata updated, HasMetadata previous, String key) {
        return !Objects.equals(annotation(updated, key), annotation(previous, key));
    }

    private static String annotation(HasMetadata resource, String key) {
        Map<String, String> annotations = resource.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(key);
    }
}
