package io.queen.operator.reconcile;

import io.queen.operator.crd.QueenResources;
import io.queen.operator.crd.Tenant;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Which broker tenant id a Tenant resource stands for: its {@code spec.tenantId}, or a name-based
 * UUID of namespace/name, which stays the same when the resource is deleted and re-created (a
 * metadata.uid would not, and the data would be orphaned under the old id).
 */
public final class TenantIds {
    private static final Pattern UUID_TEXT =
            Pattern.compile("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");

    /** The id, or why there is none. */
    public sealed interface Resolution {
    }

    public record Valid(String tenantId) implements Resolution {
    }

    public record Invalid(String reason) implements Resolution {
    }

    private TenantIds() {
    }

    public static Resolution resolve(Tenant tenant) {
        String declared = tenant.getSpec() == null ? null : tenant.getSpec().getTenantId();
        String id = declared == null || declared.isBlank()
                ? derived(tenant.getMetadata().getNamespace(), tenant.getMetadata().getName())
                : declared.trim().toLowerCase(Locale.ROOT);
        if (!UUID_TEXT.matcher(id).matches()) {
            return new Invalid("spec.tenantId \"" + declared + "\" is not a UUID (8-4-4-4-12 hex)");
        }
        if (id.equals(QueenResources.DEFAULT_TENANT_ID)) {
            return new Invalid("tenant id " + id + " is the broker's default tenant; it holds every untenanted queue"
                    + " and cannot be managed (or purged) through a Tenant resource");
        }
        return new Valid(id);
    }

    /** A version-3 (name-based) UUID of {@code queen.io/tenant/<namespace>/<name>}. */
    public static String derived(String namespace, String name) {
        return UUID.nameUUIDFromBytes(("queen.io/tenant/" + namespace + "/" + name).getBytes(StandardCharsets.UTF_8))
                .toString();
    }
}
