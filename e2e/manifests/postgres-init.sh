#!/bin/bash
# Run once by the postgres image on an empty data directory (mounted from the ConfigMap
# postgres-init, which e2e/run.sh makes from this file and queen-roles.sql).
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner_password="$QUEEN_OWNER_PASSWORD" -v app_password="$QUEEN_APP_PASSWORD" \
  -f /docker-entrypoint-initdb.d/queen-roles.psql
