-- The two roles of a production install, on an empty server, run by a superuser with psql:
--   psql -v ON_ERROR_STOP=1 -v owner_password=... -v app_password=... -f queen-roles.sql
--   queen_owner  owns the database and the queen schema: the operator's schema Job applies DDL as it;
--   queen_app    DML and EXECUTE only, no DDL: what brokers run as.
-- Used by both end-to-end suites: the Kind one (postgres-init.sh in the PostgreSQL pod) and the
-- local node's (e2e/run-node.sh, on the host's server).
CREATE ROLE queen_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE queen_app LOGIN PASSWORD :'app_password';
CREATE DATABASE queen OWNER queen_owner;
\connect queen
-- The schema exists before the first apply so that its grants can be set here; the applier's
-- CREATE SCHEMA IF NOT EXISTS leaves it as it is.
CREATE SCHEMA queen AUTHORIZATION queen_owner;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA queen TO queen_app;
-- Whatever queen_owner creates later (tables, sequences, functions, in any schema) is usable,
-- never alterable, by queen_app.
ALTER DEFAULT PRIVILEGES FOR ROLE queen_owner GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO queen_app;
ALTER DEFAULT PRIVILEGES FOR ROLE queen_owner GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO queen_app;
ALTER DEFAULT PRIVILEGES FOR ROLE queen_owner GRANT EXECUTE ON FUNCTIONS TO queen_app;
ALTER DEFAULT PRIVILEGES FOR ROLE queen_owner GRANT USAGE ON SCHEMAS TO queen_app;
