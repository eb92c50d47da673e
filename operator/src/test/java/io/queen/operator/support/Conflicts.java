package io.queen.operator.support;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A test's edit of an object the operator also writes. Fabric8's {@code edit} sends the
 * resourceVersion it read, so an annotation or status write by the operator between that read and
 * the patch is answered 409; a user's {@code kubectl} would read again and retry, and so does this.
 */
public final class Conflicts {
    private static final int ATTEMPTS = 10;

    private Conflicts() {
    }

    /** Runs {@code edit} (which must read the object afresh) until no write of another races it. */
    public static void retrying(Runnable edit) {
        for (int attempt = 1; ; attempt++) {
            try {
                edit.run();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == ATTEMPTS) {
                    throw e;
                }
            }
        }
    }
}
