package io.queen.broker.engine.auth;

import io.queen.broker.config.AuthSettings;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;

/**
 * A verified token's caller: its {@code sub} (null when the token has none) and the access levels
 * its roles grant. A role counts when it is the single-value roles claim or one entry of the array
 * claim; admin grants every level, read-write every level but admin, read-only and write-only
 * their own one.
 */
public record Identity(String subject, Set<AccessLevel> granted) {
    public Identity {
        granted = Set.copyOf(granted);
    }

    public boolean allows(AccessLevel level) {
        return level == AccessLevel.PUBLIC || granted.contains(level);
    }

    static Identity of(String subject, String role, Collection<String> roles, AuthSettings.RoleNames names) {
        EnumSet<AccessLevel> granted = EnumSet.noneOf(AccessLevel.class);
        if (holds(names.admin(), role, roles)) {
            granted.addAll(EnumSet.of(AccessLevel.ADMIN, AccessLevel.READ_WRITE, AccessLevel.READ_ONLY,
                    AccessLevel.WRITE_ONLY));
        }
        if (holds(names.readWrite(), role, roles)) {
            granted.addAll(EnumSet.of(AccessLevel.READ_WRITE, AccessLevel.READ_ONLY, AccessLevel.WRITE_ONLY));
        }
        if (holds(names.readOnly(), role, roles)) {
            granted.add(AccessLevel.READ_ONLY);
        }
        if (holds(names.writeOnly(), role, roles)) {
            granted.add(AccessLevel.WRITE_ONLY);
        }
        return new Identity(subject == null || subject.isEmpty() ? null : subject, granted);
    }

    private static boolean holds(String name, String role, Collection<String> roles) {
        return name.equals(role) || roles.contains(name);
    }
}
